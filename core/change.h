/* SPDX-License-Identifier: MIT */
/*
 * The change runner: what every change does besides its own work, for the slices' change code
 * and both front ends (docs/architecture.md). A change goes
 *
 *   lock     change_lock(): the per-GPU change locks (gpu-lock.h) of the GPUs it touches,
 *            with one wording of "GPU ... is being changed by PID ..." for every slice; none
 *            when amdsmid's job holds them already, or for a dry run;
 *   plan, apply, verify
 *            the slice's own work (libamdsmi plans, writes, reads back), run by change_run()
 *            between lock and unlock;
 *   record   one history record per GPU: amdsmid's jobs record theirs (daemon/job.c); a change
 *            made in-process (amdsmi --direct, or no amdsmid running) goes through a
 *            change_journal, via "direct";
 *   outcome  the report's (report.h): the first failure decides the errno and exit status.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gpu-lock.h"
#include "history.h"
#include "report.h"

/* The most GPUs one change locks (a hive, or every GPU under gim). */
#define CHANGE_MAX_GPUS 64

/* What a change locks. */
struct change_lock {
        const char *const *bdfs; /* the GPUs (any order; taken in BDF order, all or none) */
        size_t n;                /* change_run(): at most CHANGE_MAX_GPUS; 0: nothing to lock */
        unsigned wait_ms;        /* wait up to this long for the holders; 0: fail at once */
        /* how the refusal names the GPU: "<who> is being changed by PID 123"; NULL: "GPU <BDF>"
         * (the BDF found taken) */
        const char *who;
        /* what the failure to take a lock names: "cannot take <what>: <why>"; NULL: "the change
         * lock of GPU <BDF>" */
        const char *what;
        /* nothing to take: amdsmid's job holds the locks already, or a dry run changes nothing */
        bool held;
};

/*
 * Takes the locks @l names into @locks (@l->n entries, GPU_LOCK_INIT), all or none.
 * @return 0 (release with change_unlock()), or the negative errno of gpu-lock.h with the
 * message in @msg: -EBUSY "GPU 0000:05:00.0 is being changed by PID 123" (or "by another
 * process" when the holder is unknown), else "cannot take the change lock of GPU ...: <the
 * lock file's problem>".
 */
int change_lock(const struct change_lock *l, struct gpu_lock *locks, char *msg, size_t size);
void change_unlock(struct gpu_lock *locks, size_t n);

/* The steps of one change that the slice supplies. */
struct change_ops {
        /* plan, apply and verify, under the locks. @return 0 or a negative errno. */
        int (*apply)(void *userdata);
        /* reports a lock that could not be taken, in the slice's way (its failure keeps the
         * message for the outcome). @return @r. */
        int (*lock_failed)(void *userdata, int r, const char *message);
};

/* Locks what @l names, runs @ops->apply(@userdata), unlocks. @return what apply returned, or
 * what lock_failed returned. */
int change_run(const struct change_lock *l, const struct change_ops *ops, void *userdata);

/*
 * The record of changes made in-process: history.jsonl, as amdsmid records its own jobs, but
 * via "direct" with this process's uid and pid. The file rotates at amdsmid.conf's
 * history_max_bytes, read once (the default bound when the file cannot be read). A record
 * that cannot be appended is a warning note on @report, once per journal.
 */
struct change_journal {
        struct report *report;
        uint64_t max_bytes;
        bool loaded, warned;
};
#define CHANGE_JOURNAL_INIT(r) ((struct change_journal){ .report = (r) })

/* Appends @e (its via, uid and pid are the journal's). @return 0 or the negative errno of
 * history_append(). */
int change_journal_record(struct change_journal *j, struct history_entry e);
