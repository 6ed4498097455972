/* SPDX-License-Identifier: MIT */
/*
 * Changes as jobs: one change at a time per GPU, several GPUs in parallel. A job waits in a
 * FIFO until none of its GPUs is held; it then runs on a thread of its own with a library
 * context of its own, under the GPU locks that in-process changes (amdsmi --direct) take too.
 * The thread hands the finished job back through a pipe, and the main thread records it,
 * refreshes the GPUs and answers the call.
 */

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include "amdsmid.h"
#include "change.h"
#include "gpu-lock.h"
#include "time-util.h"
#include "amdsmid-conf.h"
#include "exit-codes.h"
#include "history.h"

#include <systemd/sd-daemon.h>

/* How long a job waits for a GPU lock an in-process change holds. */
#define JSON_FLAGS (JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE)
#define JOB_LOCK_TIMEOUT_MS 10000

struct job *job_new(struct daemon *d, sd_bus_message *call, const char *name,
                    const char *const *bdfs, size_t n_bdfs, uint64_t flags) {
        struct job *j = calloc(1, sizeof(*j));

        if (!j)
                return NULL;
        j->d = d;
        j->flags = flags;
        j->record = !(flags & AMDSMI_BUS_FLAG_DRY_RUN);
        j->uid = (uid_t) -1;
        j->name = strdup(name);
        if (!j->name)
                return job_free(j);
        for (size_t i = 0; i < n_bdfs; i++)
                if (strv_extend(&j->bdfs, bdfs[i]) < 0)
                        return job_free(j);
        if (call) {
                sd_bus_creds *creds = NULL;
                const char *sender = sd_bus_message_get_sender(call);

                j->call = sd_bus_message_ref(call);
                if (sender) {
                        j->sender = strdup(sender);
                        if (!j->sender)
                                return job_free(j);
                }
                if (sd_bus_query_sender_creds(call, SD_BUS_CREDS_EUID | SD_BUS_CREDS_PID |
                                              SD_BUS_CREDS_AUGMENT, &creds) >= 0) {
                        (void) sd_bus_creds_get_euid(creds, &j->uid);
                        (void) sd_bus_creds_get_pid(creds, &j->pid);
                        sd_bus_creds_unref(creds);
                }
        } else {
                j->uid = getuid();
                j->pid = getpid();
        }
        return j;
}

struct job *job_free(struct job *j) {
        if (!j)
                return NULL;
        sd_bus_message_unref(j->call);
        free(j->name);
        strv_free(j->bdfs);
        free(j->change);
        free(j->old_value);
        free(j->new_value);
        free(j->sender);
        if (j->free_userdata)
                j->free_userdata(j->userdata);
        json_object_put(j->reply);
        free(j->message);
        free(j);
        return NULL;
}

static int dup_or_null(const char *s, char **ret) {
        char *c = NULL;

        if (s) {
                c = strdup(s);
                if (!c)
                        return -ENOMEM;
        }
        free(*ret);
        *ret = c;
        return 0;
}

int job_set_change(struct job *j, const char *change, const char *old_value,
                   const char *new_value) {
        if (dup_or_null(change, &j->change) < 0 || dup_or_null(old_value, &j->old_value) < 0 ||
            dup_or_null(new_value, &j->new_value) < 0)
                return -ENOMEM;
        return 0;
}

static bool job_holds(const struct job *j, const char *bdf) {
        for (char **b = j->bdfs; b && *b; b++)
                if (strcmp(*b, bdf) == 0)
                        return true;
        return false;
}

bool jobs_pending_for(struct daemon *d, const char *bdf) {
        for (struct job *j = d->queue_head; j; j = j->next)
                if (job_holds(j, bdf))
                        return true;
        return false;
}

static void set_changing(struct daemon *d, const struct job *j) {
        for (char **b = j->bdfs; b && *b; b++) {
                struct dgpu *g = manager_find_gpu(d, *b);
                bool changing;

                if (!g)
                        continue;
                changing = jobs_pending_for(d, g->bdf);
                if (changing != g->changing) {
                        g->changing = changing;
                        dgpu_emit_changed(g, AMDSMI_BUS_IFACE_GPU, (char *[]){ (char *) "Changing", NULL });
                        manager_invalidate(d);
                }
        }
}

static void *job_thread(void *userdata) {
        struct job *j = userdata;
        struct amdsmi_ctx *ctx = NULL;
        struct gpu_lock *locks = NULL;
        size_t n = strv_length(j->bdfs);
        char msg[4600];
        ssize_t k;
        int r;

        locks = calloc(n ? n : 1, sizeof(*locks));
        if (!locks) {
                j->r = -ENOMEM;
                goto out;
        }
        for (size_t i = 0; i < n; i++)
                locks[i] = (struct gpu_lock) GPU_LOCK_INIT;
        r = amdsmi_ctx_new(&ctx);
        if (r >= 0)
                r = amdsmi_ctx_enumerate(ctx);
        if (r == 0)
                r = -ENODEV;
        if (r < 0) {
                j->r = r;
                (void) asprintf(&j->message, "cannot enumerate the GPUs: %s", strerror(-r));
                goto out;
        }
        /* an in-process change (amdsmi --direct) may hold a GPU: wait for it a while; a dry
         * run changes nothing and takes no lock */
        r = change_lock(&(struct change_lock){ .bdfs = (const char *const *) j->bdfs,
                                               .n = n,
                                               .wait_ms = JOB_LOCK_TIMEOUT_MS,
                                               .held = j->flags & AMDSMI_BUS_FLAG_DRY_RUN },
                        locks, msg, sizeof(msg));
        if (r < 0) {
                j->r = r;
                j->message = strdup(msg);
                goto out;
        }
        j->r = j->run(j, ctx);
        change_unlock(locks, n);
out:
        free(locks);
        amdsmi_ctx_unref(ctx);
        do
                k = write(j->d->job_pipe[1], &j, sizeof(j));
        while (k < 0 && errno == EINTR);
        /* a pipe write of a pointer is atomic; it cannot be short */
        return NULL;
}

static struct intent *job_intent(struct job *j) {
        struct intent *i = calloc(1, sizeof(*i));

        if (!i)
                return NULL;
        snprintf(i->gpu, sizeof(i->gpu), "%s", j->bdfs && j->bdfs[0] ? j->bdfs[0] : "");
        snprintf(i->change, sizeof(i->change), "%s", j->change ? j->change : j->name);
        /* borrowed: intent_begin() only reads them */
        i->old_value = (char *) j->old_value;
        i->new_value = (char *) j->new_value;
        return i;
}

static int job_start(struct daemon *d, struct job *j) {
        pthread_attr_t attr;
        pthread_t thread;
        sigset_t all, old;
        int r;

        if (j->record && j->change && !(j->flags & AMDSMI_BUS_FLAG_DRY_RUN)) {
                /* the intent record: a crash from here on is found at the next start. A change
                 * whose intent cannot be recorded does not begin (ARCHITECTURE §4). */
                _cleanup_free_ struct intent *i = job_intent(j);
                char dir[4096] = "";

                r = i ? intent_begin(i) : -ENOMEM;
                if (r < 0) {
                        (void) intent_dir(dir, sizeof(dir));
                        free(j->message);
                        if (asprintf(&j->message,
                                     "cannot record the intent of the change in %s (%s): "
                                     "nothing was changed",
                                     dir, strerror(-r)) < 0)
                                j->message = NULL;
                        log_gpu(LOG_WARNING, j->bdfs && j->bdfs[0] ? j->bdfs[0] : NULL, "%s: %s",
                                j->name, j->message ? j->message : strerror(-r));
                        return r;
                }
                j->has_intent = true;
                snprintf(j->intent_id, sizeof(j->intent_id), "%s", i->id);
        }
        /* amdsmid's own KFD event fds would make it a KFD user of the GPUs it changes: closed
         * before the change begins, opened again when it ends (on_job_done()). A dry run
         * changes nothing, and its preflight does not count amdsmid itself (libamdsmi). */
        if (j->kfd_exclusive && !(j->flags & AMDSMI_BUS_FLAG_DRY_RUN)) {
                char reason[96];

                snprintf(reason, sizeof(reason), "%s of %s", j->name,
                         j->bdfs && j->bdfs[0] ? j->bdfs[0] : "the GPUs");
                health_events_pause(d, reason);
        }
        j->running = true;
        j->start_usec = now_usec(CLOCK_MONOTONIC);
        for (char **b = j->bdfs; b && *b; b++) {
                struct dgpu *g = manager_find_gpu(d, *b);

                if (g)
                        g->busy++;
        }
        d->n_running++;
        (void) pthread_attr_init(&attr);
        (void) pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        /* the worker takes no signal: sd-event handles them on the main thread */
        sigfillset(&all);
        pthread_sigmask(SIG_SETMASK, &all, &old);
        r = -pthread_create(&thread, &attr, job_thread, j);
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        (void) pthread_attr_destroy(&attr);
        return r;
}

/* Starts every waiting job whose GPUs are free and not wanted by an earlier waiting job (so
 * that each GPU's changes run in the order they came). */
static void jobs_schedule(struct daemon *d) {
        _cleanup_strv_free_ char **claimed = NULL;
        struct job **pp = &d->queue_head;

        if (d->exiting)
                return; /* what waits is answered by jobs_done() */

        d->queue_tail = NULL;
        bool kfd_busy = false, kfd_claimed = false;

        for (struct job *q = d->queue_head; q; q = q->next)
                if (q->running && q->kfd_exclusive)
                        kfd_busy = true;
        while (*pp) {
                struct job *j = *pp;
                bool free_ = !j->running;

                for (char **b = j->bdfs; free_ && b && *b; b++) {
                        struct dgpu *g = manager_find_gpu(d, *b);

                        if ((g && g->busy > 0) || strv_contains(claimed, *b))
                                free_ = false;
                }
                if (free_ && j->kfd_exclusive && (kfd_busy || kfd_claimed))
                        free_ = false;
                if (!j->running) {
                        for (char **b = j->bdfs; b && *b; b++)
                                (void) strv_extend(&claimed, *b);
                        if (j->kfd_exclusive)
                                kfd_claimed = true;
                }
                if (free_) {
                        int r;

                        if (j->kfd_exclusive)
                                kfd_busy = true;
                        r = job_start(d, j);

                        if (r < 0) {
                                /* not running: refused before it began (logged) */
                                if (j->running) {
                                        log_error("cannot start a thread for %s: %s", j->name,
                                                  strerror(-r));
                                        d->n_running--;
                                        for (char **b = j->bdfs; b && *b; b++) {
                                                struct dgpu *g = manager_find_gpu(d, *b);

                                                if (g && g->busy > 0)
                                                        g->busy--;
                                        }
                                }
                                j->r = r;
                                if (j->running && j->kfd_exclusive &&
                                    !(j->flags & AMDSMI_BUS_FLAG_DRY_RUN))
                                        health_events_resume(d);
                                j->running = false;
                                /* handled like a finished job, from the main loop */
                                (void) write(d->job_pipe[1], &j, sizeof(j));
                        }
                }
                d->queue_tail = j;
                pp = &j->next;
        }
}

int job_submit(struct job *j) {
        struct daemon *d = j->d;

        if (d->exiting) {
                job_free(j);
                return -ESHUTDOWN;
        }
        j->next = NULL;
        if (d->queue_tail)
                d->queue_tail->next = j;
        else
                d->queue_head = j;
        d->queue_tail = j;
        set_changing(d, j);
        jobs_schedule(d);
        return 0;
}

static void job_record(struct job *j) {
        char gpus[256] = "";
        char buf[32];

        for (char **b = j->bdfs; b && *b; b++)
                snprintf(gpus + strlen(gpus), sizeof(gpus) - strlen(gpus), "%s%s",
                         b == j->bdfs ? "" : ",", *b);
        if (j->r < 0)
                log_full(LOG_WARNING, gpus, j->change, "%s by uid %d failed: %s%s%s", j->name,
                         (int) j->uid, errno_name(j->r, buf, sizeof(buf)),
                         j->message ? ": " : "", j->message ? j->message : "");
        else
                log_full(LOG_INFO, gpus, j->change, "%s by uid %d%s%s%s", j->name, (int) j->uid,
                         j->flags & AMDSMI_BUS_FLAG_DRY_RUN ? " (dry run)" : "",
                         j->message ? ": " : "", j->message ? j->message : "");
        if (!j->record || !j->change)
                return;
        /* one record per GPU; a change of no GPU (a state record) gets one too */
        size_t n_gpus = 0;

        while (j->bdfs && j->bdfs[n_gpus])
                n_gpus++;
        for (size_t k = 0; k < n_gpus || (k == 0 && n_gpus == 0); k++) {
                struct history_entry e = {
                        .via = "amdsmid",
                        .uid = j->uid,
                        .pid = j->pid,
                        .sender = j->sender,
                        .gpu = n_gpus ? j->bdfs[k] : NULL,
                        .change = j->change,
                        .old_value = j->old_value,
                        .new_value = j->new_value,
                        .result = j->r,
                        .message = j->message,
                };
                int r = history_append(&e, j->d->config ? j->d->config->history_max_bytes : 0);

                if (r < 0)
                        log_gpu(LOG_WARNING, e.gpu, "cannot append to the history: %s",
                                history_error(r, (char[512]){}, 512));
        }
        if (j->has_intent) {
                struct intent i = {};
                int r;

                snprintf(i.id, sizeof(i.id), "%s", j->intent_id);
                r = intent_end(&i);
                if (r < 0)
                        log_warning("cannot remove the intent record %s: %s", i.id,
                                    strerror(-r));
        }
}

static void job_reply(struct job *j) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        int r;

        if (!j->call)
                return;
        if (j->r < 0) {
                _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;

                /* a failed change answers with the error; when run() left the GPU's document
                 * (what failed, and where), it follows the message as a second string, so
                 * clients can print what an in-process change would have */
                bus_error_errno(&error, j->r, "%s", j->message ? j->message : strerror(-j->r));
                r = sd_bus_message_new_method_error(j->call, &m, &error);
                if (r >= 0 && j->reply)
                        r = sd_bus_message_append(m, "s",
                                                  json_object_to_json_string_ext(j->reply, JSON_FLAGS));
                if (r >= 0)
                        r = sd_bus_send(NULL, m, NULL);
                if (r < 0) /* at least the error itself */
                        r = sd_bus_reply_method_error(j->call, &error);
        } else
                r = sd_bus_reply_method_return(
                        j->call, "s",
                        j->reply ? json_object_to_json_string_ext(j->reply, JSON_FLAGS) : "{}");
        if (r < 0)
                log_debug("cannot answer %s: %s", j->name, strerror(-r));
}

static int on_job_done(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        struct daemon *d = userdata;
        struct job *j;
        ssize_t n;

        n = read(fd, &j, sizeof(j));
        if (n != (ssize_t) sizeof(j))
                return 0;
        /* out of the queue */
        for (struct job **pp = &d->queue_head; *pp; pp = &(*pp)->next)
                if (*pp == j) {
                        *pp = j->next;
                        break;
                }
        d->queue_tail = NULL;
        for (struct job *q = d->queue_head; q; q = q->next)
                d->queue_tail = q;
        bool resume = j->running && j->kfd_exclusive && !(j->flags & AMDSMI_BUS_FLAG_DRY_RUN);

        if (j->running) {
                d->n_running--;
                for (char **b = j->bdfs; b && *b; b++) {
                        struct dgpu *g = manager_find_gpu(d, *b);

                        if (g && g->busy > 0)
                                g->busy--;
                }
        }
        job_record(j);
        if (j->finish)
                j->finish(j);
        /* what the change did shows in the objects and properties before the caller hears
         * back */
        if (!(j->flags & AMDSMI_BUS_FLAG_DRY_RUN)) {
                (void) manager_rescan(d);
                fleet_daemon_sync_update(d);
        }
        /* the KFD event fds again, of the partitions there are now (success or not) */
        if (resume)
                health_events_resume(d);
        /* Changing goes down before the caller hears back, as the properties do */
        set_changing(d, j);
        job_reply(j);
        job_free(j);
        jobs_schedule(d);
        jobs_ready_check(d);
        if (d->exiting)
                (void) jobs_exit_when_idle(d);
        return 0;
}

int jobs_init(struct daemon *d) {
        int r;

        if (pipe2(d->job_pipe, O_CLOEXEC) < 0)
                return -errno;
        r = sd_event_add_io(d->event, &d->job_source, d->job_pipe[0], EPOLLIN, on_job_done, d);
        if (r < 0)
                return r;
        /* before anything else: a finished change is answered before new calls are read */
        return sd_event_source_set_priority(d->job_source, SD_EVENT_PRIORITY_IMPORTANT);
}

/* Stopping: the changes that wait are answered now, before the loop ends (sd-bus closes the
 * connection when it does); they changed nothing. */
static void jobs_refuse_waiting(struct daemon *d) {
        for (struct job *j = d->queue_head; j; j = j->next) {
                _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;

                if (j->running || !j->call)
                        continue;
                bus_error_errno(&error, -EBUSY, "%s: amdsmid is stopping; nothing was changed",
                                j->name);
                (void) sd_bus_reply_method_error(j->call, &error);
                j->call = sd_bus_message_unref(j->call);
        }
}

int jobs_exit_when_idle(struct daemon *d) {
        if (d->n_running > 0)
                return 0;
        jobs_refuse_waiting(d);
        return sd_event_exit(d->event, 0);
}

void jobs_done(struct daemon *d) {
        /* running threads still hold their jobs; only waiting ones are freed */
        struct job **pp = &d->queue_head;

        while (*pp) {
                struct job *j = *pp;

                if (j->running) {
                        pp = &j->next;
                        continue;
                }
                *pp = j->next;
                job_free(j);
        }
        d->job_source = sd_event_source_unref(d->job_source);
}

/* READY=1 once the desired state is applied: no job left from the start. */
void jobs_ready_check(struct daemon *d) {
        if (d->ready || d->queue_head)
                return;
        d->ready = true;
        (void) sd_notify(false, "READY=1\nSTATUS=Managing the GPUs");
        log_info("ready");
}

static void authorised(sd_bus_message *call, int r, const char *why, void *userdata) {
        struct job *j = userdata;
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;

        if (r > 0) {
                r = job_submit(j);
                if (r >= 0)
                        return;
                bus_error_errno(&error, r, "cannot queue the change: %s", strerror(-r));
        } else {
                char buf[32];

                if (r == 0)
                        bus_error_errno(&error, -EACCES, "%s: %s", j->name, why);
                else
                        bus_error_errno(&error, r, "%s: cannot check the authorisation: %s",
                                        j->name, errno_name(r, buf, sizeof(buf)));
                log_full(LOG_NOTICE, j->bdfs && j->bdfs[0] ? j->bdfs[0] : NULL, j->change,
                         "%s by uid %d refused: %s", j->name, (int) j->uid,
                         error.message ? error.message : "denied");
                job_free(j);
        }
        (void) sd_bus_reply_method_error(call, &error);
}

int job_authorise_and_submit(struct job *j, const char *action) {
        int r;

        if (j->flags & AMDSMI_BUS_FLAG_DRY_RUN)
                r = job_submit(j);
        else
                r = polkit_check(j->d, j->call, action, authorised, j, NULL);
        if (r < 0) {
                if (!(j->flags & AMDSMI_BUS_FLAG_DRY_RUN))
                        job_free(j);
                return r;
        }
        return 1;
}
