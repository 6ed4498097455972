/* SPDX-License-Identifier: MIT */
/*
 * The persistent state file (ARCHITECTURE §2): <state dir>/state.json, the state dir being
 * $STATE_DIRECTORY (its first entry when systemd lists several, ':'-separated) or
 * /var/lib/amdsmi. This is the store: the lock, the loader, the damaged records, the commit.
 * What a record means stays in its slice: the power sources and applied cap of a GPU
 * (gpus.<BDF>.power) in power/power-state.h, amdsmid's VM reservations (the "vms" section) in
 * sriov/vm-state.h. Every key no owner knows is kept as it is.
 *
 * Concurrency: every access holds a flock on <state dir>/state.lock (never removed): shared
 * for reading, exclusive for a read-modify-write. Writes are atomic: <state dir>/.state.json.tmp
 * (a fixed name: only the exclusive holder writes it), fsync, rename over state.json, fsync of
 * the directory. A process killed at any point leaves either the old or the new file.
 *
 * Damage is handled per record (a part of a GPU's record, a GPU's record, a GPU's object): a
 * record that does not check is damaged. It is named in state_warning() and state_damage_*(),
 * skipped by the readers, and kept in the document exactly as it was read, so every commit
 * writes it back verbatim; nothing that could not be read is ever lost. The records of a GPU
 * with a damaged record cannot be changed (state_set_gpu_record() answers -EUCLEAN) until
 * state_drop_damaged() drops the damage: a cap is never recomputed without a source that could
 * not be read. A record whose GPU cannot be told (a key of "gpus" that is not a BDF, "gpus" not
 * an object) concerns every GPU.
 * A file that cannot be read at all (not JSON, not an object, no valid version, larger than
 * 16 MiB) is damaged as a whole: it reads as an empty state, it is never written over
 * (state_commit() answers -EUCLEAN), and state_drop_damaged() renames it to
 * state.json.corrupt-<UTC YYYYmmddTHHMMSSZ> (an exclusive opener's only) and starts empty.
 * A file of a newer version (written by a newer amdsmi) is never touched: it reads as empty
 * and state_commit() refuses with -EPROTONOSUPPORT.
 *
 * The envelope (version 1):
 *
 *   { "version": 1,
 *     "gpus": { "0000:c1:00.0": { "power": { ... } } },
 *     "vms": { ... } }
 *
 * Checked on load: "version" a positive integer; "gpus" an object keyed by BDFs written
 * dddd:bb:dd.f in lower case (function 0-7), each an object; each GPU's records by their
 * slice's checker (below). Other top-level sections ("vms") are their owners' to check.
 *
 * How the loader learns the records of the slices: a slice that keeps a record under
 * gpus.<BDF>.<name> defines `const struct state_record state_record_<name>` (its name and
 * its checker) and names it in its meson.build (`state_records += 'power'`); the build writes
 * the list into state-records.h (an X-macro, STATE_RECORDS), which state.c walks. Why a list
 * made by the build rather than a registration call at run time: every opener of the store
 * (the power verbs, amdsmid's VM reservations, `amdsmi apply`, the tests, the fuzzers) must
 * see the same damage, so the checkers must be known before the first state_open() whatever
 * code the program calls first; a registration call depends on being made in time by every
 * program, and a constructor on the linker keeping its object, while the list is linked with
 * state.c itself. It is also the one place that says which records the file has, and core/
 * names no slice in its code: it calls what the build listed, as it does with core_sources.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "runtime-dir.h" /* state_dir() */

#define STATE_VERSION 1

struct json_object;
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

/* ---- the records of the GPUs (gpus.<BDF>.<name>) ------------------------------------------ */

/* The record @name of @bdf as read or last set (borrowed), NULL when absent (or when @bdf is
 * not a BDF). A damaged record is returned too: the reader checks what it reads, as the
 * loader did, and skips what does not check. */
struct json_object *state_get_gpu_record(const struct state_store *s, const char *bdf,
                                         const char *name);

/* Replaces (takes @value over, also on failure) or removes (NULL) the record @name of @bdf,
 * in memory (state_commit() writes it). "gpus" is made when absent; a GPU object left with no
 * member is removed; its other members are kept. The owner checks @value first.
 * @return 0, -EINVAL (bdf), -EUCLEAN (a damaged record concerns @bdf), -ENOMEM. */
int state_set_gpu_record(struct state_store *s, const char *bdf, const char *name,
                         struct json_object *value);

/* The BDFs that have a record @name for which @keep (NULL: any) says true, sorted; a
 * NULL-terminated strv the caller frees (each string and the array). Keys of "gpus" that
 * are not BDFs are damaged records, never listed. @return the count, -EINVAL or -ENOMEM. */
int state_list_gpu_records(const struct state_store *s, const char *name,
                           bool (*keep)(const struct json_object *record), char ***ret);

/* ---- checking records (for the slices' checkers) ------------------------------------------ */

/* Why a record does not check, with where it is: "gpus.0000:c1:00.0.power.host.uw: not an
 * integer (string)". */
struct state_error {
        char msg[512];
};

/* Sets @e to "<where>: <what>" (only <what> when @where is NULL or ""). @return -EINVAL. */
__attribute__((format(printf, 3, 4))) int state_fail(struct state_error *e, const char *where,
                                                     const char *fmt, ...);

/* The JSON type of @o for messages: "string", "null"... */
const char *state_json_type(const struct json_object *o);

/* Where the loader collects damaged records; a checker given NULL is reading records again
 * (they were checked when loaded) and collects nothing. */
struct state_check;

/* Reports a damaged part of a record: @e the problem (its leading @where is left out of the
 * damaged record's problem), @where its path ("gpus.<BDF>.power.vms[1]"), and how to drop
 * it: member @key of object @parent, or element @index of array @parent (@key NULL).
 * @return 0 or -ENOMEM when collecting; -EINVAL when @c is NULL (not collecting). */
int state_check_damaged(struct state_check *c, const struct state_error *e, const char *where,
                        struct json_object *parent, const char *key, int index);

/* A slice's record of a GPU: gpus.<BDF>.<name>. */
struct state_record {
        const char *name;
        /* Checks @value at @where ("gpus.<BDF>.<name>"), reporting each damaged part with
         * state_check_damaged(@c, ...). @return 0, -ENOMEM, or -EINVAL with @e set when the
         * record as a whole is damaged (the loader then reports the whole record). */
        int (*check)(struct state_check *c, struct state_error *e, const char *where,
                     struct json_object *value);
};

/* ---- other owners' sections --------------------------------------------------------------- */

/* Another owner's top-level section of the state (amdsmid's VM reservations: "vms"), which
 * this file keeps as it is: borrowed, NULL when absent. The owner checks its shape. */
struct json_object *state_get_section(const struct state_store *s, const char *name);
/* Replaces (takes @value over) or removes (NULL) such a section. -EINVAL for the sections of
 * this file ("version", "gpus"), -ENOMEM. */
int state_set_section(struct state_store *s, const char *name, struct json_object *value);

/* ---- damaged records ---------------------------------------------------------------------- */

/* A damaged record of the file (see above). */
struct state_damage {
        char where[256];           /* "gpus.0000:c1:00.0.power.vms[1]"; "" for the whole file */
        char problem[384];         /* "uw: not an integer (string)" */
        char bdf[16];              /* the GPU it belongs to; "" when it concerns every GPU */
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

/* ---- commit ------------------------------------------------------------------------------- */

/* What state_commit() would fail with before writing anything: 0, -EBADF (STATE_READ),
 * -EPROTONOSUPPORT (a newer file) or -EUCLEAN (a file damaged as a whole, not yet dropped). */
int state_can_commit(const struct state_store *s);

/* Writes the state atomically (see above), damaged records as they were read. -EBADF when
 * opened STATE_READ, -EPROTONOSUPPORT for a newer file, -EUCLEAN for a file damaged as a
 * whole, or the errno of the write. */
int state_commit(struct state_store *s);
