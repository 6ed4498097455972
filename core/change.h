/* SPDX-License-Identifier: MIT */
/*
 * What every change does besides its own work, for the slices' change code and both front
 * ends: the record of a change made in-process (amdsmi --direct, or no amdsmid running) in the
 * history amdsmid keeps for its jobs (history.h).
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "history.h"
#include "report.h"

/*
 * Appends @e, a change this process made, to history.jsonl as amdsmid records its own jobs:
 * via "direct", with this process's uid and pid (the fields of @e other than these are the
 * caller's). The file rotates at @max_bytes (0: the default bound). A failure is a warning
 * note on @r ("warning: cannot append to the history: ..."): every time, or only the first
 * time while *@warned is false. @return 0 or the negative errno of history_append().
 */
int change_record_direct(struct report *r, struct history_entry e, uint64_t max_bytes,
                         bool *warned);
