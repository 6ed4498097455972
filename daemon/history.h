/* SPDX-License-Identifier: MIT */
/* The audit trail of changes (/var/lib/amdsmi/history.jsonl) and the intent records written
 * before each change (/var/lib/amdsmi/intent/). Shared by amdsmid and amdsmi(1) (--direct
 * changes are recorded too, and amdsmi history reads the file when amdsmid does not run). */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>
#include <sys/types.h>

#include <json-c/json.h>

/* One change, as recorded. Strings may be NULL (null in JSON). */
struct history_entry {
        uint64_t time_usec;         /* CLOCK_REALTIME; 0: now */
        const char *via;            /* "amdsmid" or "direct" */
        uid_t uid;                  /* the caller */
        pid_t pid;                  /* the caller, 0 unknown */
        const char *sender;         /* D-Bus unique name, NULL for direct */
        const char *gpu;            /* BDF */
        const char *change;         /* "compute_mode", "memory_mode", "reload_driver",
                                       "power_source", "num_vfs", "bind_vf", "release_vf",
                                       "recovery", ... */
        const char *old_value;
        const char *new_value;
        int result;                 /* 0 or a negative errno */
        const char *message;        /* one line, what happened */
};

/* $STATE_DIRECTORY/history.jsonl, else LOCALSTATEDIR/lib/amdsmi/history.jsonl. */
int history_path(char *buf, size_t size);

/*
 * Appends one JSON line, under a lock on the file, and rotates first when the file would grow
 * past @max_bytes (0: the default, 1 MiB): history.jsonl becomes history.jsonl.1 (the one
 * older generation kept). Creates the state directory (0755) and the file (0640) if needed.
 */
int history_append(const struct history_entry *e, uint64_t max_bytes);

/*
 * The last @max entries (0: all), oldest first, of history.jsonl.1 and history.jsonl, as a
 * new JSON array of objects (keys: time (ISO 8601 UTC with ms), via, uid, pid, sender, gpu,
 * change, old, new, result ("ok" or the errno name), errno (negative number or 0), message).
 * Malformed lines are skipped and counted in *ret_skipped (may be NULL). An absent file is an
 * empty array.
 */
int history_read(unsigned max, json_object **ret, unsigned *ret_skipped);

/* Intent records: one file per change in progress, written (fsync'd) before the change and
 * removed after it, so that a restart finds the changes a crash interrupted. */
struct intent {
        char id[40];                /* unique: "<usec>-<pid>-<n>" */
        uint64_t time_usec;
        char gpu[16];
        char change[32];
        char *old_value;
        char *new_value;
        char *detail;               /* JSON text the caller may keep (flags, sources), or NULL */
        pid_t pid;                  /* the process that wrote it */
};

/* $STATE_DIRECTORY/intent, else LOCALSTATEDIR/lib/amdsmi/intent. */
int intent_dir(char *buf, size_t size);

/* Writes an intent (fills in id, time_usec and pid) durably. */
int intent_begin(struct intent *i);
/* Removes it (0 also when already gone). */
int intent_end(const struct intent *i);
/* Every intent on disk, oldest first; malformed files are skipped (and logged by the caller
 * through *ret_skipped names, a strv, may be NULL). Free with intent_list_free(). */
int intent_list(struct intent **ret, size_t *ret_n, char ***ret_skipped);
void intent_list_free(struct intent *l, size_t n);
