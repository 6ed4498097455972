/* SPDX-License-Identifier: MIT */
/*
 * The runtime directory shared by amdsmid, the CLI and the library: per-GPU change locks and
 * the record of pending memory-mode requests (both last until reboot, as /run does). And the
 * state directory: the state file, the history of changes and the intent records.
 */
#pragma once

#include <stddef.h>

/* $RUNTIME_DIRECTORY (its first entry when systemd lists several, ':'-separated), else
 * /run/amdsmi. Writes it into buf; -ENAMETOOLONG if it does not fit. */
int runtime_dir(char *buf, size_t size);

/* $STATE_DIRECTORY (its first entry when systemd lists several), else LOCALSTATEDIR
 * "/lib/amdsmi". Writes it into buf; -ENAMETOOLONG if it does not fit. */
int state_dir(char *buf, size_t size);

/* Makes the directory (and missing parents) with mode 0755; 0 if it exists. */
int runtime_dir_mkdir(const char *path);
