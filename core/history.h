/* SPDX-License-Identifier: MIT */
/*
 * The audit trail of changes (/var/lib/amdsmi/history.jsonl) and the intent records written
 * before each change (/var/lib/amdsmi/intent/). Shared by amdsmid and amdsmi(1) (--direct
 * changes are recorded too, and amdsmi history reads the file when amdsmid does not run).
 * Both live in the state directory: $STATE_DIRECTORY (its first entry), else
 * LOCALSTATEDIR/lib/amdsmi (state_dir() of lib/util/runtime-dir.h).
 *
 * history.jsonl: one JSON object per line ("\n"-terminated), oldest first:
 *
 *   {"time":"2026-12-03T06:12:01.123Z","time_usec":1796278321123456,"via":"amdsmid",
 *    "uid":0,"pid":4242,"sender":":1.42","gpu":"0000:c1:00.0","change":"compute_mode",
 *    "old":"SPX","new":"CPX","result":"ok","errno":0,"message":"..."}
 *
 * "time" is ISO 8601 UTC with milliseconds, "time_usec" the same instant in µs since the
 * epoch; "result" is "ok" or the errno's name ("EBUSY"), "errno" 0 or the negative errno;
 * absent strings are null. Each string is valid UTF-8 (invalid bytes become U+FFFD) of at
 * most HISTORY_FIELD_MAX bytes: a longer one is cut at a character boundary and ends in
 * HISTORY_TRUNCATED. The file is 0640 (the values may name VMs and users), the directory 0755.
 *
 * Concurrency: every append holds flock(LOCK_EX) on history.jsonl itself (after checking that
 * the file it locked is still the one at that name, since a rotation may have renamed it) and
 * writes its line with one write(2) on an O_APPEND descriptor, so the daemon and CLI
 * processes never interleave or lose lines. When the line would take the file past its
 * bound, the writer renames history.jsonl to history.jsonl.1 (replacing the older one) under
 * the same lock and appends to a new history.jsonl. A line cut short by a crash stays one
 * malformed line: the next append starts on a new line. Readers hold LOCK_SH on
 * history.jsonl while they read both generations, so they never see a rotation halfway.
 *
 * intent/<id>.json: one file per change in progress (see struct intent), written to a
 * temporary file, fsync'd, renamed into place and the directory fsync'd; removed (and the
 * directory fsync'd) when the change has been recorded in the history.
 *
 *   {"id":"1796278321123456-4242-0","time":"2026-12-03T06:12:01.123Z",
 *    "time_usec":1796278321123456,"pid":4242,"gpu":"0000:c1:00.0","change":"compute_mode",
 *    "old":"SPX","new":"CPX","detail":{"flags":0}}
 *
 * Nothing here logs: errors are negative errno values for the caller to report.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>
#include <sys/types.h>

#include <json-c/json.h>

/* The bound of history.jsonl when history_append() is given 0 (1 MiB). */
#define HISTORY_MAX_BYTES_DEFAULT (UINT64_C(1) << 20)
/* The most bytes of one string field, HISTORY_TRUNCATED included when it was cut. */
#define HISTORY_FIELD_MAX 1024u
#define HISTORY_TRUNCATED "[truncated]"
/* history_read() examines at most this much of the files, newest data first: both
 * generations of the default bound (2 MiB, some 8000 entries) and more; amdsmid.conf allows
 * larger files, of which "all" means the newest 4 MiB (an entry takes ~2 KiB as json-c
 * objects, so memory stays below ~80 MiB even for the shortest lines). */
#define HISTORY_READ_BYTES_MAX (UINT64_C(4) << 20)

/* One change, as recorded. Strings may be NULL (null in JSON). */
struct history_entry {
        uint64_t time_usec;         /* CLOCK_REALTIME; 0: now */
        const char *via;            /* "amdsmid" or "direct" */
        uid_t uid;                  /* the caller */
        pid_t pid;                  /* the caller, 0 unknown */
        const char *sender;         /* D-Bus unique name, NULL for direct */
        const char *gpu;            /* BDF */
        const char *change;         /* "compute_mode", "memory_mode", "reload_driver",
                                       "power_source", "power_apply", "power_enforce",
                                       "num_vfs", "bind_vf", "release_vf", "recovery", ...
                                       (required) */
        const char *old_value;
        const char *new_value;
        int result;                 /* 0 or a negative errno */
        const char *message;        /* one line, what happened */
};

/* $STATE_DIRECTORY/history.jsonl, else LOCALSTATEDIR/lib/amdsmi/history.jsonl.
 * @return 0 or -ENAMETOOLONG. */
int history_path(char *buf, size_t size);

/* The message for @r, an error of history_append() or history_read(): names history.jsonl or
 * history.jsonl.1 and what it is when the error is a refusal of safe-open.h ("... is a FIFO,
 * not a regular file: refused"), else strerror(). @return @buf. */
const char *history_error(int r, char *buf, size_t size);

/*
 * Appends one JSON line, under a lock on the file, and rotates first when the file would grow
 * past @max_bytes (0: HISTORY_MAX_BYTES_DEFAULT): history.jsonl becomes history.jsonl.1 (the
 * one older generation kept). A line alone longer than @max_bytes is still written, to an
 * empty file. Creates the state directory (0755) and the file (0640) if needed. The line is
 * fdatasync'd before the lock is released.
 * @return 0, -EINVAL (@e->change NULL, @e->result positive), -ENOMEM, or the errno of the
 * directory or file (-EACCES when the caller may not write it, -ENOSPC, ...).
 */
int history_append(const struct history_entry *e, uint64_t max_bytes);

/*
 * The last @max entries (0: all), oldest first, of history.jsonl.1 and history.jsonl, as a
 * new JSON array of objects with exactly the keys time (ISO 8601 UTC with ms, from
 * time_usec), time_usec, via, uid, pid, sender, gpu, change, old, new, result ("ok" or the
 * errno name), errno (negative number or 0) and message; a value of the wrong type in the
 * file reads as null. A line that is not a JSON object with an integer time_usec >= 0 and a
 * string change is malformed: skipped and counted in *ret_skipped (may be NULL) - so is a
 * last line cut short by a crash. Reads backwards from the end of the files, no more than
 * @max entries need and never more than HISTORY_READ_BYTES_MAX. An absent file is an empty
 * array.
 * @return 0, -ENOMEM, or the errno of opening or reading the files (-EACCES for callers who
 * may not read them).
 */
int history_read(unsigned max, json_object **ret, unsigned *ret_skipped);

/* Intent records: one file per change in progress, written (fsync'd) before the change and
 * removed after it, so that a restart finds the changes a crash interrupted. */
struct intent {
        char id[40];                /* unique: "<usec>-<pid>-<n>" */
        uint64_t time_usec;
        char gpu[16];               /* BDF, or "" */
        char change[32];
        char *old_value;            /* NULL: unknown */
        char *new_value;
        char *detail;               /* JSON text the caller may keep (flags, sources), or NULL */
        pid_t pid;                  /* the process that wrote it */
};

/* $STATE_DIRECTORY/intent, else LOCALSTATEDIR/lib/amdsmi/intent.
 * @return 0 or -ENAMETOOLONG. */
int intent_dir(char *buf, size_t size);

/*
 * Writes an intent durably (fills in id, time_usec and pid; reads gpu, change, old_value,
 * new_value and detail, which it does not keep). Creates the directory (0755); the file is
 * 0640. Values longer than HISTORY_FIELD_MAX are cut as in the history.
 * @return 0, -EINVAL (change empty, gpu or change not NUL-terminated, detail not JSON),
 * -ENOMEM, or the errno of the directory or file.
 */
int intent_begin(struct intent *i);
/* Removes it (0 also when already gone). Reads only @i->id.
 * @return 0, -EINVAL (an id that cannot name a record) or the errno of unlink(). */
int intent_end(const struct intent *i);
/*
 * Every intent on disk, oldest first (time_usec, then pid and sequence number of the id).
 * Files that are not a record of this format (not JSON, a missing or mistyped key, an id
 * that differs from the file name, a gpu or change too long for the struct, larger than
 * 1 MiB) are skipped; their full paths are returned in *ret_skipped (a NULL-terminated strv,
 * free with strv_free(); may be NULL, NULL when none) for the caller to log. They stay on
 * disk. Temporary files of a writer that died before its rename are ignored.
 * An absent directory is an empty list (*ret NULL, *ret_n 0).
 * Free the list with intent_list_free().
 * @return 0, -ENOMEM, or the errno of reading the directory.
 */
int intent_list(struct intent **ret, size_t *ret_n, char ***ret_skipped);
void intent_list_free(struct intent *l, size_t n);
