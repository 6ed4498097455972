/* SPDX-License-Identifier: MIT */
/*
 * The persistent state file (ARCHITECTURE §2): <state dir>/state.json, the state dir being
 * $STATE_DIRECTORY (its first entry when systemd lists several, ':'-separated) or
 * /var/lib/amdsmi. Today it holds the power sources of every GPU; amdsmid adds its own
 * sections later, so every key this code does not know is kept as it is.
 *
 * Concurrency: every access holds a flock on <state dir>/state.lock (never removed): shared
 * for reading, exclusive for a read-modify-write. Writes are atomic: <state dir>/.state.json.tmp
 * (a fixed name: only the exclusive holder writes it), fsync, rename over state.json, fsync of
 * the directory. A process killed at any point leaves either the old or the new file.
 *
 * Damage: a state.json that is not JSON, has the wrong shape or an invalid entry is "corrupt":
 * an exclusive opener renames it to state.json.corrupt-<UTC YYYYmmddTHHMMSSZ> and starts from an
 * empty state; a shared opener leaves it in place and reads an empty state. Both say so in
 * state_warning(). A file of a newer version (written by a newer amdsmi) is never touched:
 * it reads as empty and state_commit() refuses with -EPROTONOSUPPORT.
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
 * Checked on load: "version" a positive integer; "gpus" an object keyed by BDFs written
 * dddd:bb:dd.f in lower case (function 0-7); "uw" and "set_usec"/"usec" integers, "uw" a
 * valid cap (power_validate()); "key" non-empty, unique per GPU, strings within the sizes of
 * power-arbitration.h, "vf_bdf" empty or a BDF; at most POWER_VM_MAX VMs.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "power-arbitration.h"
#include "runtime-dir.h" /* state_dir() */

#define STATE_VERSION 1

struct state_store;

enum state_mode {
        STATE_READ,  /* shared lock; state_commit() refused (-EBADF) */
        STATE_WRITE, /* exclusive lock; creates the directory (0755) if needed */
};

/*
 * Locks and loads the state. Waits for the lock up to @timeout_ms (0: do not wait), then
 * -EBUSY. STATE_READ on a directory or lock file it cannot open (unprivileged, no state yet)
 * reads without the lock (the file is only ever replaced by rename) or, without a file, an
 * empty state. A missing state.json is an empty state, not an error.
 * @return 0, -ENOMEM, -EBUSY, the errno of the directory / lock file (STATE_WRITE), or the
 * errno of reading state.json when it exists but cannot be read (never "corrupt" then).
 */
int state_open(enum state_mode mode, unsigned timeout_ms, struct state_store **ret);

/* Unlocks and frees (NULL is fine). Uncommitted changes are dropped. */
void state_close(struct state_store *s);

/* What was wrong with the file as loaded ("state.json is corrupt (...): kept as ...,
 * starting empty"), or NULL. Valid until state_close(). */
const char *state_warning(const struct state_store *s);

/* The file's path (for messages). */
const char *state_path(const struct state_store *s);

/* The message for @r, an error of state_open() or state_commit(): "locked by another
 * process", the state file, its lock or directory named with what is wrong with it
 * ("<dir>/state.lock is a FIFO, not a regular file: refused"), else strerror().
 * @return @buf. */
const char *state_open_error(int r, char *buf, size_t size);

/* The power sources recorded for @bdf (an empty set when none). @return 0, -EINVAL (bdf). */
int state_get_power(const struct state_store *s, const char *bdf, struct power_sources *ret);

/* Replaces the power sources of @bdf (in memory; state_commit() writes them). The applied
 * record is kept, and so are unknown keys of entries that remain. @src is checked as a loaded
 * file is (anything the loader would call corrupt is -EINVAL). Nothing changes on failure.
 * @return 0, -EINVAL, -ENOMEM. */
int state_set_power(struct state_store *s, const char *bdf, const struct power_sources *src);

/* The cap last applied to @bdf by amdsmi and when: -ENOENT when none is recorded. */
int state_get_applied(const struct state_store *s, const char *bdf, uint64_t *ret_uw,
                      uint64_t *ret_usec);
/* Records (uw != POWER_UW_UNKNOWN) or removes (POWER_UW_UNKNOWN) the applied cap of @bdf.
 * @return 0, -EINVAL (bdf, or a uw power_validate() refuses), -ENOMEM. */
int state_set_applied(struct state_store *s, const char *bdf, uint64_t uw, uint64_t usec);

/* The BDFs that have a power record (a source or an applied cap), sorted; a NULL-terminated
 * strv the caller frees (each string and the array). @return the count or -ENOMEM. */
int state_list_gpus(const struct state_store *s, char ***ret);

/* Another owner's top-level section of the state (amdsmid's VM reservations: "vms"), which
 * this file keeps as it is: borrowed, NULL when absent. The owner checks its shape. */
struct json_object *state_get_section(const struct state_store *s, const char *name);
/* Replaces (takes @value over) or removes (NULL) such a section. -EINVAL for the sections of
 * this file ("version", "gpus"), -ENOMEM. */
int state_set_section(struct state_store *s, const char *name, struct json_object *value);

/* What state_commit() would fail with before writing anything: 0, -EBADF (STATE_READ),
 * -EPROTONOSUPPORT (a newer file) or the errno of keeping a corrupt file aside. */
int state_can_commit(const struct state_store *s);

/* Writes the state atomically (see above). -EBADF when opened STATE_READ,
 * -EPROTONOSUPPORT for a newer file, the errno of the rename when a corrupt file could not be
 * kept aside (it is never overwritten), or the errno of the write. */
int state_commit(struct state_store *s);
