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
 * Damage is handled per record (a source, a VM's source, the applied record, a GPU's object):
 * a record that does not check is damaged. It is named in state_warning() and
 * state_damage_*(), skipped by the readers, and kept in the document exactly as it was read,
 * so every commit writes it back verbatim; nothing that could not be read is ever lost. The
 * records of a GPU with a damaged record cannot be changed (state_set_power() and
 * state_set_applied() answer -EUCLEAN) until state_drop_damaged() drops the damage: a cap is
 * never recomputed without a source that could not be read. A record whose GPU cannot be told
 * (a key of "gpus" that is not a BDF, "gpus" not an object) concerns every GPU.
 * A file that cannot be read at all (not JSON, not an object, no valid version, larger than
 * 16 MiB) is damaged as a whole: it reads as an empty state, it is never written over
 * (state_commit() answers -EUCLEAN), and state_drop_damaged() renames it to
 * state.json.corrupt-<UTC YYYYmmddTHHMMSSZ> (an exclusive opener's only) and starts empty.
 * A file of a newer version (written by a newer amdsmi) is never touched: it reads as empty
 * and state_commit() refuses with -EPROTONOSUPPORT.
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

/* What was wrong with the file as loaded (the first damaged record, or the file damaged as a
 * whole), or NULL. Valid until state_close(). */
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

/* Another owner's top-level section of the state (amdsmid's VM reservations: "vms"), which
 * this file keeps as it is: borrowed, NULL when absent. The owner checks its shape. */
struct json_object *state_get_section(const struct state_store *s, const char *name);
/* Replaces (takes @value over) or removes (NULL) such a section. -EINVAL for the sections of
 * this file ("version", "gpus"), -ENOMEM. */
int state_set_section(struct state_store *s, const char *name, struct json_object *value);

/* A damaged record of the file (see above). */
struct state_damage {
        char where[256];    /* "gpus.0000:c1:00.0.power.vms[1]"; "" for the whole file */
        char problem[384];  /* "uw: not an integer (string)" */
        char bdf[16];       /* the GPU it belongs to; "" when it concerns every GPU */
        struct json_object *value; /* the record as read (borrowed); NULL for the whole file */
};

/* Whether the file as a whole could not be read, so that what it holds is unknown (its other
 * owners' sections too): 0, or -EUCLEAN (damaged as a whole), -EPROTONOSUPPORT (a newer
 * version), -ELOOP / -EISDIR / -EBADFD (not a regular file); the reason is state_warning(). */
int state_unreadable(const struct state_store *s);

size_t state_damage_count(const struct state_store *s);
const struct state_damage *state_damage_get(const struct state_store *s, size_t i);
/* The first damaged record that concerns @bdf (NULL: any GPU), or NULL when none does. */
const struct state_damage *state_damage_find(const struct state_store *s, const char *bdf);
/* Drops every damaged record that concerns @bdf (NULL: all) from the document (STATE_WRITE;
 * the caller commits); a file damaged as a whole is renamed aside first. With STATE_READ
 * nothing changes: a dry run. What is (or would be) dropped goes to @ret_dropped (may be
 * NULL): a new JSON array of { record, gpu_bdf, problem, value, kept_as }.
 * @return the count, -EINVAL (bdf), -ENOMEM, or the errno of renaming the file aside. */
int state_drop_damaged(struct state_store *s, const char *bdf, struct json_object **ret_dropped);

/* What state_commit() would fail with before writing anything: 0, -EBADF (STATE_READ),
 * -EPROTONOSUPPORT (a newer file) or -EUCLEAN (a file damaged as a whole, not yet dropped). */
int state_can_commit(const struct state_store *s);

/* Writes the state atomically (see above), damaged records as they were read. -EBADF when
 * opened STATE_READ, -EPROTONOSUPPORT for a newer file, -EUCLEAN for a file damaged as a
 * whole, or the errno of the write. */
int state_commit(struct state_store *s);
