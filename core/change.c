/* SPDX-License-Identifier: MIT */
/* The change runner (change.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "amdsmid-conf.h"
#include "change.h"

int change_lock(const struct change_lock *l, struct gpu_lock *locks, char *msg, size_t size) {
        char busy[16] = "", who[64];
        const char *bdf;
        pid_t holder = 0;
        int r;

        if (msg && size)
                msg[0] = '\0';
        if (l->held || l->n == 0)
                return 0;
        if (l->n == 1)
                r = gpu_lock_acquire_wait(&locks[0], l->bdfs[0], l->wait_ms, &holder);
        else
                r = gpu_locks_acquire_wait(locks, l->bdfs, l->n, l->wait_ms, busy, &holder);
        if (r >= 0)
                return 0;

        bdf = busy[0] ? busy : l->bdfs[0];
        if (r == -EBUSY) {
                if (!l->who)
                        snprintf(who, sizeof(who), "GPU %s", bdf);
                if (holder > 0)
                        snprintf(msg, size, "%s is being changed by PID %ld",
                                 l->who ? l->who : who, (long) holder);
                else
                        snprintf(msg, size, "%s is being changed by another process",
                                 l->who ? l->who : who);
        } else if (l->what)
                snprintf(msg, size, "cannot take %s: %s", l->what,
                         gpu_lock_error(bdf, r, (char[4400]){}, 4400));
        else
                snprintf(msg, size, "cannot take the change lock of GPU %s: %s", bdf,
                         gpu_lock_error(bdf, r, (char[4400]){}, 4400));
        return r;
}

void change_unlock(struct gpu_lock *locks, size_t n) {
        gpu_locks_release(locks, n);
}

int change_run(const struct change_lock *l, const struct change_ops *ops, void *userdata) {
        struct gpu_lock locks[CHANGE_MAX_GPUS];
        char msg[4600];
        int r;

        if (l->n > CHANGE_MAX_GPUS) {
                snprintf(msg, sizeof(msg), "a change of %zu GPUs cannot be locked (at most %d)",
                         l->n, CHANGE_MAX_GPUS);
                return ops->lock_failed ? ops->lock_failed(userdata, -EINVAL, msg) : -EINVAL;
        }
        for (size_t i = 0; i < CHANGE_MAX_GPUS; i++)
                locks[i] = (struct gpu_lock) GPU_LOCK_INIT;
        r = change_lock(l, locks, msg, sizeof(msg));
        if (r < 0)
                return ops->lock_failed ? ops->lock_failed(userdata, r, msg) : r;
        r = ops->apply(userdata);
        change_unlock(locks, l->n);
        return r;
}

int change_journal_record(struct change_journal *j, struct history_entry e) {
        int k;

        if (!j->loaded) {
                struct config *conf = NULL;

                j->loaded = true;
                if (config_load(NULL, &conf, NULL, 0) >= 0)
                        j->max_bytes = conf->history_max_bytes;
                config_free(conf);
        }
        e.via = "direct";
        e.uid = getuid();
        e.pid = getpid();
        k = history_append(&e, j->max_bytes);
        if (k < 0 && !j->warned) {
                j->warned = true;
                report_note(j->report, "warning: cannot append to the history: %s",
                            history_error(k, (char[512]){}, 512));
        }
        return k;
}
