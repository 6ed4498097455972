/* SPDX-License-Identifier: MIT */
/*
 * The power records of the persistent state file: gpus.<BDF>.power. The store itself (the
 * lock, the loader, damaged records, other owners' sections, the atomic commit) is core's:
 * core/state.h, included here so that every user of the state file includes only this.
 *
 * The power records are checked on load by state_record_power (listed in power/meson.build):
 * a source, a VM's source, the applied record or the power object that does not check is a
 * damaged record of its GPU (state_damage_*()); the readers here skip it, and
 * state_set_power() and state_set_applied() answer -EUCLEAN until state_drop_damaged() drops
 * it: a cap is never recomputed without a source that could not be read.
 *
 * Format (version 1; values in µW, times in µs since the epoch):
 *
 *   { "version": 1,
 *     "gpus": {
 *       "0000:c1:00.0": {
 *         "power": {
 *           "host": { "uw": 600000000, "setter": "uid 0 (amdsmi)", "set_usec": 1764... },
 *           "apml": { ... },
 *           "vms": [ { "key": "vm1", "vf_bdf": "0000:c1:02.0", "uw": ..., "setter": ...,
 *                      "set_usec": ... } ],
 *           "applied": { "uw": 450000000, "usec": 1764... } } } } }
 *
 * "host", "apml", "vms", "applied" are optional; "vf_bdf" and "setter" may be absent (""). A
 * GPU whose power object ends up with no source and no applied record is removed (unless it
 * holds keys this code does not know, which are kept).
 *
 * Checked on load (the envelope, "version" and "gpus", by core/state.c): "power" an object;
 * "uw" and "set_usec"/"usec" integers, "uw" a
 * valid cap (power_validate()); "key" non-empty, unique per GPU, strings within the sizes of
 * power-arbitration.h, "vf_bdf" empty or a BDF; at most POWER_VM_MAX VMs.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "power-arbitration.h"
#include "state.h"

/* The power record's checker, for the store's loader (see core/state.h). */
extern const struct state_record state_record_power;

/* The power sources recorded for @bdf (an empty set when none). @return 0, -EINVAL (bdf). */
int state_get_power(const struct state_store *s, const char *bdf, struct power_sources *ret);

/* Replaces the power sources of @bdf (in memory; state_commit() writes them). The applied
 * record is kept, and so are unknown keys of entries that remain. @src is checked as a loaded
 * file is (anything the loader would call damaged is -EINVAL). Nothing changes on failure.
 * @return 0, -EINVAL, -EUCLEAN (a damaged record concerns @bdf), -ENOMEM. */
int state_set_power(struct state_store *s, const char *bdf, const struct power_sources *src);

/* The cap last applied to @bdf by amdsmi and when: -ENOENT when none is recorded. */
int state_get_applied(const struct state_store *s, const char *bdf, uint64_t *ret_uw,
                      uint64_t *ret_usec);
/* Records (uw != POWER_UW_UNKNOWN) or removes (POWER_UW_UNKNOWN) the applied cap of @bdf.
 * @return 0, -EINVAL (bdf, or a uw power_validate() refuses), -EUCLEAN, -ENOMEM. */
int state_set_applied(struct state_store *s, const char *bdf, uint64_t uw, uint64_t usec);

/* The BDFs that have a power record (a source or an applied cap), sorted; a NULL-terminated
 * strv the caller frees (each string and the array). @return the count or -ENOMEM. */
int state_list_gpus(const struct state_store *s, char ***ret);
