/* SPDX-License-Identifier: MIT */
/*
 * amdsmid: the org.amdsmi1.Partition interface of the GPU objects.
 *
 * Properties (cached, refreshed on the main thread; "" when unknown or not supported):
 *   ComputeMode s, MemoryMode s, PendingMemoryMode s, AvailableComputeModes as
 * Methods (each answers with the GPU's element of the change document of amdsmi partition
 * set / reset --reload-driver, as JSON, see partition-json.h):
 *   Plan(s compute, s memory) -> s           the plan and the dry run of a change ("" for a
 *                                            mode: unchanged); an invalid plan is no error:
 *                                            "result" says what the change would fail with
 *   SetComputeMode(s mode, t flags) -> s     org.amdsmi1.partition.configure
 *   SetMemoryMode(s mode, t flags) -> s      a request that waits for a driver reload is a
 *                                            success ("reload_pending": true)
 *   SetModes(s compute, s memory, u timeout_ms, t flags) -> s
 *                                            both at once, planned together (as partition
 *                                            set --compute --memory); timeout_ms 0: the
 *                                            library's default, at most 3600000
 *   ReloadDriver(t flags) -> s               org.amdsmi1.driver.reload; holds every GPU of
 *                                            the XGMI hive
 *   ReloadDriverWithTimeout(u timeout_ms, t flags) -> s
 * flags: AMDSMI_BUS_FLAG_DRY_RUN, AMDSMI_BUS_FLAG_FORCE (a gim host's VFs are torn down).
 * Modes are matched case-insensitively. A change that fails answers org.amdsmi1.Error.<Name>
 * with the explanation (what amdsmi prints on standard error) and, as a second argument, the
 * GPU's element of the document.
 *
 * The desired state of amdsmid.conf: compute_mode is switched to (retried while KFD users
 * block it), memory_mode is requested and waits for the admin's driver reload.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "amdsmid-conf.h"
#include "amdsmid.h"
#include "documents.h"
#include "gpu-set.h"
#include "history.h"
#include "partition-json.h"
#include "report.h"

/* A desired compute mode that KFD users block is tried again at most this often. */
#define RETRY_USEC (30ULL * 1000 * 1000)
/* A GPU a failed reload left without a driver: bound again at the next periodic check, then
 * after 2, 4, 8 check intervals (at most REBIND_MAX_DELAY_USEC); after REBIND_TRIES failed
 * jobs (each tries the bind four times) amdsmid gives up and says so. */
#define REBIND_TRIES 5u
#define REBIND_MAX_DELAY_USEC (5ULL * 60 * 1000 * 1000)
#define JSON_FLAGS (JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE)
/* The longest --timeout of amdsmi. */

enum pjob_kind {
        PJOB_SET,
        PJOB_RELOAD,
        PJOB_PLAN,
};

enum pjob_purpose {
        PJOB_CALLER,   /* a method call */
        PJOB_DESIRED,  /* amdsmid.conf */
        PJOB_RECOVERY, /* rolling back a change a crash interrupted */
        PJOB_REBIND,   /* binding a GPU a failed reload left without a driver */
};

/* A job's data: set by the creator, the results by run() (the job's own, read by finish()
 * on the main thread once the worker is done). */
struct pjob {
        enum pjob_kind kind;
        enum pjob_purpose purpose;
        char bdf[16];
        enum amdsmi_compute_mode compute;
        enum amdsmi_memory_mode memory;
        unsigned timeout_ms;
        /* results */
        bool reload_pending;
        char blockers[512]; /* "PID 4242 (python3) on 0000:05:00.0, ..." */
        bool needs_force;   /* refused before anything ran: a gim host's VFs */
};

static const char *compute_name_or_empty(enum amdsmi_compute_mode m) {
        return partition_compute_name(m) ?: "";
}

static const char *memory_name_or_empty(enum amdsmi_memory_mode m) {
        return partition_memory_name(m) ?: "";
}

static bool streq_ptr(const char *a, const char *b) {
        return strcmp(a ? a : "", b ? b : "") == 0;
}

static const char *nonempty(const char *s) {
        return s && s[0] ? s : NULL;
}

/* ---- the job body (a worker thread) ------------------------------------------------------ */

/* The explanation of a failure: the diagnostics, the failure first and the warnings that
 * preceded it last (the document keeps them in the order amdsmi prints them). */
static char *join_lines(json_object *lines) {
        char *buf = NULL;
        size_t size = 0, n = 0;
        FILE *f = open_memstream(&buf, &size);

        if (!f)
                return NULL;
        for (int warnings = 0; warnings <= 1; warnings++)
                for (size_t i = 0; lines && i < json_object_array_length(lines); i++) {
                        const char *s = json_object_get_string(json_object_array_get_idx(lines, i));

                        if (!s || (strncmp(s, "warning:", 8) == 0) != warnings)
                                continue;
                        fprintf(f, "%s%s", n++ ? "\n" : "", s);
                }
        if (fclose(f) != 0) {
                free(buf);
                return NULL;
        }
        return buf;
}

/* The processes the reports name, for the log of a desired change; whether the change was
 * refused for the VFs it would tear down (nothing to try again until somebody forces it). */
static void note_blockers(struct pjob *pj, json_object *entry, int r) {
        json_object *reports = NULL, *plan = NULL, *vfs = NULL;
        size_t n = 0;

        pj->blockers[0] = '\0';
        if (!json_object_object_get_ex(entry, "reports", &reports))
                return;
        pj->needs_force = r == -EBUSY && json_object_array_length(reports) == 0 &&
                          json_object_object_get_ex(entry, "plan", &plan) && plan &&
                          json_object_object_get_ex(plan, "vfs_before", &vfs) &&
                          json_object_get_int64(vfs) > 0;
        for (size_t i = 0; i < json_object_array_length(reports); i++) {
                json_object *rep = json_object_array_get_idx(reports, i), *bl = NULL;

                if (!json_object_object_get_ex(rep, "blockers", &bl))
                        continue;
                for (size_t k = 0; k < json_object_array_length(bl) && n < sizeof(pj->blockers);
                     k++) {
                        json_object *p = json_object_array_get_idx(bl, k), *v;
                        const char *comm = NULL, *bdf = NULL;
                        int pid = 0;

                        if (json_object_object_get_ex(p, "pid", &v))
                                pid = json_object_get_int(v);
                        if (json_object_object_get_ex(p, "comm", &v))
                                comm = json_object_get_string(v);
                        if (json_object_object_get_ex(p, "bdf", &v))
                                bdf = json_object_get_string(v);
                        n += (size_t) snprintf(pj->blockers + n, sizeof(pj->blockers) - n,
                                               "%sPID %d (%s) on %s", n ? ", " : "", pid,
                                               comm ? comm : "?", bdf ? bdf : "?");
                }
        }
}

static int job_run(struct job *j, struct amdsmi_ctx *ctx) {
        struct pjob *pj = j->userdata;
        struct report rep = {
                .command = pj->kind == PJOB_RELOAD ? "reset" : "partition set",
                .keep_field_errors = true,
                .dry_run = !!(j->flags & AMDSMI_BUS_FLAG_DRY_RUN),
        };
        struct partition_change ch = {
                .compute = pj->compute,
                .memory = pj->memory,
                .force = !!(j->flags & AMDSMI_BUS_FLAG_FORCE),
                .timeout_ms = pj->timeout_ms,
        };
        struct gpu_set set = {};
        struct partition_run run = {};
        json_object *entry = NULL, *covered;
        int r;

        r = gpu_set_attach(&set, ctx, pj->bdf);
        if (r < 0) {
                (void) asprintf(&j->message, "GPU %s is gone", pj->bdf);
                return r == -ENOENT ? -ENODEV : r;
        }
        r = partition_run_init(&run, &rep, &set, &ch);
        if (r < 0)
                goto finish;
        run.in_daemon = true;
        FOREACH_GPU_IN_SET(&set, i, gpu) {
                entry = partition_entry_new(i, gpu);
                if (!entry) {
                        r = -ENOMEM;
                        goto finish;
                }
                r = pj->kind == PJOB_RELOAD ? partition_reset_one(&run, i, gpu, entry)
                                            : partition_set_one(&run, i, gpu, entry);
                partition_entry_result(entry, r < 0 ? r : 0);
        }
        if (!entry) {
                r = -ENODEV;
                goto finish;
        }
        r = run.result < 0 ? run.result : 0;

        json_object_object_add(entry, PARTITION_REPLY_DIAGNOSTICS,
                               run.diagnostics ? json_object_get(run.diagnostics)
                                               : json_object_new_array());
        json_object_object_add(entry, PARTITION_REPLY_RELOAD_PENDING,
                               json_object_new_boolean(run.reload_pending));
        covered = json_object_new_array();
        for (size_t i = 0; covered && i < run.n_covered; i++)
                json_object_array_add(covered, json_object_new_string(run.covered[i]));
        json_object_object_add(entry, PARTITION_REPLY_COVERED, covered);
        pj->reload_pending = run.reload_pending;
        note_blockers(pj, entry, r);
        if (r < 0)
                j->message = run.diagnostics ? join_lines(run.diagnostics) : NULL;
        else
                j->message = partition_entry_summary(entry, pj->kind == PJOB_RELOAD);
        j->reply = TAKE_PTR(entry);
finish:
        json_object_put(entry);
        partition_run_done(&run);
        gpu_set_clear(&set); /* (the context is the job's) */
        report_clear(&rep);
        if (r < 0 && !j->message)
                (void) asprintf(&j->message, "%s", strerror(-r));
        /* a plan that the change would refuse is still an answer */
        return pj->kind == PJOB_PLAN && j->reply ? 0 : r;
}

/* ---- after the job (the main thread) ----------------------------------------------------- */

static void queue_desired_compute(struct dgpu *g, enum amdsmi_compute_mode mode);

static void desired_finish(struct job *j, struct pjob *pj, struct dgpu *g) {
        const char *mode;

        if (pj->kind == PJOB_SET && pj->compute != AMDSMI_COMPUTE_UNKNOWN) {
                mode = compute_name_or_empty(pj->compute);
                if (!g)
                        return;
                if (j->r >= 0) {
                        g->partition_retry = false;
                        g->partition_retry_warned = false;
                        log_full(LOG_NOTICE, g->bdf, PARTITION_CHANGE_COMPUTE,
                                 "desired compute mode %s applied", mode);
                } else if (j->r == -EBUSY && !pj->needs_force) {
                        /* KFD users, a reset, another change holding the lock: again later */
                        g->partition_retry = true;
                        g->partition_retry_usec = now_usec(CLOCK_MONOTONIC);
                        log_full(g->partition_retry_warned ? LOG_DEBUG : LOG_WARNING, g->bdf,
                                 PARTITION_CHANGE_COMPUTE,
                                 "desired compute mode %s not applied: %s%s%s; trying again "
                                 "(every 30 s at most)",
                                 mode, pj->blockers[0] ? "the GPU is in use through KFD by " : "",
                                 pj->blockers[0] ? pj->blockers : "",
                                 pj->blockers[0] ? "" : (j->message ? j->message : "busy"));
                        g->partition_retry_warned = true;
                } else {
                        g->partition_retry = false;
                        g->partition_retry_warned = false;
                        log_full(LOG_WARNING, g->bdf, PARTITION_CHANGE_COMPUTE,
                                 "desired compute mode %s cannot be applied: %s", mode,
                                 j->message ? j->message : strerror(-j->r));
                }
                return;
        }
        if (pj->kind == PJOB_SET && pj->memory != AMDSMI_MEMORY_UNKNOWN) {
                mode = memory_name_or_empty(pj->memory);
                if (j->r < 0)
                        log_full(LOG_WARNING, pj->bdf, PARTITION_CHANGE_MEMORY,
                                 "desired memory mode %s cannot be requested: %s", mode,
                                 j->message ? j->message : strerror(-j->r));
                else if (pj->reload_pending)
                        log_full(LOG_NOTICE, pj->bdf, PARTITION_CHANGE_MEMORY,
                                 "desired memory mode %s requested: it takes effect with "
                                 "'amdsmi reset -g %u --reload-driver' (amdsmid never reloads "
                                 "the driver on its own)",
                                 mode, g ? g->index : 0);
                else
                        log_full(LOG_NOTICE, pj->bdf, PARTITION_CHANGE_MEMORY,
                                 "desired memory mode %s applied", mode);
        }
}

/* The delay before the next try after @failures failed ones: 2^failures check intervals. */
static uint64_t rebind_delay(struct dgpu *g, unsigned failures) {
        uint64_t usec = (uint64_t) (g->d->config ? g->d->config->poll_interval_ms : 2000) * 1000;

        for (unsigned i = 0; i < failures && usec < REBIND_MAX_DELAY_USEC; i++)
                usec *= 2;
        return usec < REBIND_MAX_DELAY_USEC ? usec : REBIND_MAX_DELAY_USEC;
}

static void rebind_finish(struct job *j, struct dgpu *g) {
        uint64_t delay;

        if (!g)
                return;
        if (j->r >= 0) {
                log_full(LOG_NOTICE, g->bdf, PARTITION_CHANGE_BIND,
                         "GPU %u bound to amdgpu again after %u failed tr%s", g->index,
                         g->rebind_failures, g->rebind_failures == 1 ? "y" : "ies");
                g->rebind_failures = 0;
                return;
        }
        g->rebind_failures++;
        if (g->rebind_failures >= REBIND_TRIES) {
                log_full(LOG_ERR, g->bdf, PARTITION_CHANGE_BIND,
                         "GPU %u still has no driver: binding amdgpu failed %u times (%s); "
                         "amdsmid gives up: bind it by hand with 'amdsmi reset -g %u "
                         "--reload-driver' or 'echo %s > %s/bus/pci/drivers/amdgpu/bind'",
                         g->index, g->rebind_failures, strerror(-j->r), g->index, g->bdf,
                         amdsmi_ctx_get_sysfs_root(g->d->ctx));
                return;
        }
        delay = rebind_delay(g, g->rebind_failures);
        g->rebind_usec = now_usec(CLOCK_MONOTONIC) + delay;
        /* the job's own line has the library's explanation */
        log_full(LOG_INFO, g->bdf, PARTITION_CHANGE_BIND,
                 "binding amdgpu to GPU %u failed (%u of %u tries: %s); trying again in %llu ms",
                 g->index, g->rebind_failures, REBIND_TRIES, strerror(-j->r),
                 (unsigned long long) (delay / 1000));
}

static void job_finish(struct job *j) {
        struct pjob *pj = j->userdata;
        struct daemon *d = j->d;
        struct dgpu *g = manager_find_gpu(d, pj->bdf);
        bool dry_run = j->flags & AMDSMI_BUS_FLAG_DRY_RUN;

        if (pj->kind == PJOB_SET && pj->memory != AMDSMI_MEMORY_UNKNOWN)
                for (char **b = j->bdfs; b && *b; b++) {
                        struct dgpu *o = manager_find_gpu(d, *b);

                        if (o && pj->purpose == PJOB_DESIRED)
                                o->partition_memory_queued = false;
                }
        if (!dry_run && j->r >= 0 && pj->kind == PJOB_RELOAD)
                /* the driver probed the GPUs again (the SMU's defaults: performance level,
                 * clock limits, policies): the desired state is applied again, as for a GPU
                 * that comes back after a reset */
                for (char **b = j->bdfs; b && *b; b++) {
                        struct dgpu *o = manager_find_gpu(d, *b);

                        if (o)
                                o->desired_pending = true;
                }
        if (!dry_run && j->r >= 0 && pj->kind == PJOB_RELOAD && d->config)
                /* the driver picked the compute modes: the desired ones are applied again */
                for (char **b = j->bdfs; b && *b; b++) {
                        struct dgpu *o = manager_find_gpu(d, *b);
                        struct config_gpu want;

                        if (o && config_desired(d->config, o->bdf, &want) &&
                            want.compute != AMDSMI_COMPUTE_UNKNOWN) {
                                o->partition_retry = true;
                                o->partition_retry_usec = 0;
                        }
                }
        if (pj->purpose == PJOB_DESIRED)
                desired_finish(j, pj, g);
        else if (pj->purpose == PJOB_REBIND)
                rebind_finish(j, g);
        else if (pj->purpose == PJOB_RECOVERY)
                log_full(j->r < 0 ? LOG_WARNING : LOG_NOTICE, pj->bdf, j->change,
                         "recovery: restoring compute mode %s %s%s%s",
                         compute_name_or_empty(pj->compute), j->r < 0 ? "failed" : "done",
                         j->r < 0 && j->message ? ": " : "",
                         j->r < 0 && j->message ? j->message : "");
        /* the framework then rescans (the properties show what the change did) and answers,
         * a failure with the GPU's element of the document after the message */
}

/* ---- creating jobs ---------------------------------------------------------------------- */

/* The mode the GPU would run in after a reload: the pending request, else the current one. */
static const char *memory_target(struct dgpu *g) {
        return nonempty(g->pending_memory_mode) ?: nonempty(g->memory_mode);
}

/* A new job for @g (the hive for memory requests and reloads), with its audit record from
 * the cached modes. @return the job or NULL (-ENOMEM). */
static struct job *pjob_new(struct dgpu *g, sd_bus_message *call, const char *name,
                            enum pjob_kind kind, enum pjob_purpose purpose,
                            enum amdsmi_compute_mode compute, enum amdsmi_memory_mode memory,
                            unsigned timeout_ms, uint64_t flags) {
        _cleanup_strv_free_ char **bdfs = NULL;
        struct pjob *pj;
        struct job *j;
        char old_value[32], new_value[32];
        int r;

        /* a GPU without a driver has no hive now: a reload only binds it */
        if ((kind == PJOB_RELOAD && !streq_ptr(g->driver, "none")) ||
            memory != AMDSMI_MEMORY_UNKNOWN)
                r = manager_hive_bdfs(g, &bdfs);
        else
                r = strv_extend(&bdfs, g->bdf);
        if (r < 0)
                return NULL;
        pj = calloc(1, sizeof(*pj));
        if (!pj)
                return NULL;
        *pj = (struct pjob){
                .kind = kind,
                .purpose = purpose,
                .compute = compute,
                .memory = memory,
                .timeout_ms = timeout_ms,
        };
        snprintf(pj->bdf, sizeof(pj->bdf), "%s", g->bdf);
        j = job_new(g->d, call, name, (const char *const *) bdfs, strv_length(bdfs), flags);
        /* the KFD topology is one for the machine: while one GPU switches, the nodes of the
         * others are renumbered, so partition changes run one at a time */
        if (j)
                j->kfd_exclusive = true;
        if (!j) {
                free(pj);
                return NULL;
        }
        j->run = job_run;
        j->finish = job_finish;
        j->userdata = pj;
        j->free_userdata = free;

        if (purpose == PJOB_REBIND)
                r = job_set_change(j, PARTITION_CHANGE_BIND, "none", "amdgpu");
        else if (kind == PJOB_RELOAD)
                r = job_set_change(j, PARTITION_CHANGE_RELOAD, nonempty(g->memory_mode),
                                   memory_target(g));
        else if (kind == PJOB_PLAN)
                r = 0;
        else if (compute != AMDSMI_COMPUTE_UNKNOWN && memory != AMDSMI_MEMORY_UNKNOWN) {
                snprintf(old_value, sizeof(old_value), "%s/%s", g->compute_mode ?: "",
                         memory_target(g) ?: "");
                snprintf(new_value, sizeof(new_value), "%s/%s", compute_name_or_empty(compute),
                         memory_name_or_empty(memory));
                r = job_set_change(j, PARTITION_CHANGE_MODES, old_value, new_value);
        } else if (compute != AMDSMI_COMPUTE_UNKNOWN)
                r = job_set_change(j, PARTITION_CHANGE_COMPUTE, nonempty(g->compute_mode),
                                   partition_compute_name(compute));
        else
                r = job_set_change(j, PARTITION_CHANGE_MEMORY, memory_target(g),
                                   partition_memory_name(memory));
        if (r < 0)
                return job_free(j);
        return j;
}

/* ---- methods ---------------------------------------------------------------------------- */

static int parse_compute(const char *s, bool empty_ok, enum amdsmi_compute_mode *ret,
                         sd_bus_error *error) {
        enum amdsmi_compute_mode m;

        if (empty_ok && s[0] == '\0') {
                *ret = AMDSMI_COMPUTE_UNKNOWN;
                return 0;
        }
        if (amdsmi_compute_mode_from_string(s, &m) < 0 || m == AMDSMI_COMPUTE_UNKNOWN)
                return bus_error_errno(error, -EINVAL,
                                       "invalid compute partition mode '%.32s%s' (modes: SPX, "
                                       "DPX, TPX, QPX, CPX)",
                                       s, strlen(s) > 32 ? "..." : "");
        *ret = m;
        return 0;
}

static int parse_memory(const char *s, bool empty_ok, enum amdsmi_memory_mode *ret,
                        sd_bus_error *error) {
        enum amdsmi_memory_mode m;

        if (empty_ok && s[0] == '\0') {
                *ret = AMDSMI_MEMORY_UNKNOWN;
                return 0;
        }
        if (amdsmi_memory_mode_from_string(s, &m) < 0 || m == AMDSMI_MEMORY_UNKNOWN)
                return bus_error_errno(error, -EINVAL,
                                       "invalid memory partition mode '%.32s%s' (modes: NPS1, "
                                       "NPS2, NPS3, NPS4, NPS6, NPS8)",
                                       s, strlen(s) > 32 ? "..." : "");
        *ret = m;
        return 0;
}

static int check_flags(uint64_t flags, sd_bus_error *error) {
        if (flags & ~AMDSMI_BUS_FLAGS_ALL)
                return bus_error_errno(error, -EINVAL,
                                       "unknown flags 0x%llx (known: 0x1 dry run, 0x2 force)",
                                       (unsigned long long) (flags & ~AMDSMI_BUS_FLAGS_ALL));
        return 0;
}

static int check_timeout(uint32_t timeout_ms, sd_bus_error *error) {
        if (timeout_ms > AMDSMI_BUS_TIMEOUT_MS_MAX)
                return bus_error_errno(error, -EINVAL,
                                       "timeout %u ms is above %u ms (0: the default)", timeout_ms,
                                       AMDSMI_BUS_TIMEOUT_MS_MAX);
        return 0;
}

static int submit(sd_bus_message *m, struct dgpu *g, const char *name, enum pjob_kind kind,
                  enum amdsmi_compute_mode compute, enum amdsmi_memory_mode memory,
                  unsigned timeout_ms, uint64_t flags, sd_bus_error *error) {
        struct job *j;
        int r;

        j = pjob_new(g, m, name, kind, PJOB_CALLER, compute, memory, timeout_ms, flags);
        if (!j)
                return bus_error_errno(error, -ENOMEM, "out of memory");
        r = job_authorise_and_submit(j, kind == PJOB_RELOAD ? "org.amdsmi1.driver.reload"
                                                            : "org.amdsmi1.partition.configure");
        if (r < 0)
                return bus_error_errno(error, r, "cannot queue %s: %s", name, strerror(-r));
        return r;
}

static int method_plan(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        struct dgpu *g = userdata;
        enum amdsmi_compute_mode compute;
        enum amdsmi_memory_mode memory;
        const char *cs, *ms;
        int r;

        r = sd_bus_message_read(m, "ss", &cs, &ms);
        if (r < 0)
                return r;
        r = parse_compute(cs, true, &compute, error);
        if (r < 0)
                return r;
        r = parse_memory(ms, true, &memory, error);
        if (r < 0)
                return r;
        return submit(m, g, "Plan", PJOB_PLAN, compute, memory, 0, AMDSMI_BUS_FLAG_DRY_RUN, error);
}

static int method_set_compute_mode(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        struct dgpu *g = userdata;
        enum amdsmi_compute_mode compute;
        const char *s;
        uint64_t flags;
        int r;

        r = sd_bus_message_read(m, "st", &s, &flags);
        if (r < 0)
                return r;
        r = check_flags(flags, error);
        if (r >= 0)
                r = parse_compute(s, false, &compute, error);
        if (r < 0)
                return r;
        return submit(m, g, "SetComputeMode", PJOB_SET, compute, AMDSMI_MEMORY_UNKNOWN, 0, flags,
                      error);
}

static int method_set_memory_mode(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        struct dgpu *g = userdata;
        enum amdsmi_memory_mode memory;
        const char *s;
        uint64_t flags;
        int r;

        r = sd_bus_message_read(m, "st", &s, &flags);
        if (r < 0)
                return r;
        r = check_flags(flags, error);
        if (r >= 0)
                r = parse_memory(s, false, &memory, error);
        if (r < 0)
                return r;
        return submit(m, g, "SetMemoryMode", PJOB_SET, AMDSMI_COMPUTE_UNKNOWN, memory, 0, flags,
                      error);
}

static int method_set_modes(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        struct dgpu *g = userdata;
        enum amdsmi_compute_mode compute;
        enum amdsmi_memory_mode memory;
        const char *cs, *ms;
        uint32_t timeout_ms;
        uint64_t flags;
        int r;

        r = sd_bus_message_read(m, "ssut", &cs, &ms, &timeout_ms, &flags);
        if (r < 0)
                return r;
        r = check_flags(flags, error);
        if (r >= 0)
                r = check_timeout(timeout_ms, error);
        if (r >= 0)
                r = parse_compute(cs, true, &compute, error);
        if (r >= 0)
                r = parse_memory(ms, true, &memory, error);
        if (r < 0)
                return r;
        if (compute == AMDSMI_COMPUTE_UNKNOWN && memory == AMDSMI_MEMORY_UNKNOWN)
                return bus_error_errno(error, -EINVAL,
                                       "nothing to change: give a compute and/or a memory mode");
        return submit(m, g, "SetModes", PJOB_SET, compute, memory, timeout_ms, flags, error);
}

static int reload(sd_bus_message *m, struct dgpu *g, uint32_t timeout_ms, uint64_t flags,
                  sd_bus_error *error) {
        int r;

        r = check_flags(flags, error);
        if (r >= 0)
                r = check_timeout(timeout_ms, error);
        if (r < 0)
                return r;
        return submit(m, g, "ReloadDriver", PJOB_RELOAD, AMDSMI_COMPUTE_UNKNOWN,
                      AMDSMI_MEMORY_UNKNOWN, timeout_ms, flags, error);
}

static int method_reload_driver(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        uint64_t flags;
        int r;

        r = sd_bus_message_read(m, "t", &flags);
        if (r < 0)
                return r;
        return reload(m, userdata, 0, flags, error);
}

static int method_reload_driver_with_timeout(sd_bus_message *m, void *userdata,
                                             sd_bus_error *error) {
        uint32_t timeout_ms;
        uint64_t flags;
        int r;

        r = sd_bus_message_read(m, "ut", &timeout_ms, &flags);
        if (r < 0)
                return r;
        return reload(m, userdata, timeout_ms, flags, error);
}

/* ---- properties ------------------------------------------------------------------------- */

static int property_compute_mode(sd_bus *bus, const char *path, const char *interface,
                                 const char *property, sd_bus_message *reply, void *userdata,
                                 sd_bus_error *error) {
        struct dgpu *g = userdata;

        return sd_bus_message_append(reply, "s", g->compute_mode ?: "");
}

static int property_memory_mode(sd_bus *bus, const char *path, const char *interface,
                                const char *property, sd_bus_message *reply, void *userdata,
                                sd_bus_error *error) {
        struct dgpu *g = userdata;

        return sd_bus_message_append(reply, "s", g->memory_mode ?: "");
}

static int property_pending_memory_mode(sd_bus *bus, const char *path, const char *interface,
                                        const char *property, sd_bus_message *reply, void *userdata,
                                        sd_bus_error *error) {
        struct dgpu *g = userdata;

        return sd_bus_message_append(reply, "s", g->pending_memory_mode ?: "");
}

static int property_available_compute_modes(sd_bus *bus, const char *path, const char *interface,
                                            const char *property, sd_bus_message *reply,
                                            void *userdata, sd_bus_error *error) {
        struct dgpu *g = userdata;
        char *empty[] = { NULL };

        return sd_bus_message_append_strv(reply, g->available_compute_modes ?: empty);
}

static const sd_bus_vtable partition_vtable[] = {
        SD_BUS_VTABLE_START(0),
        SD_BUS_PROPERTY("ComputeMode", "s", property_compute_mode, 0,
                        SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("MemoryMode", "s", property_memory_mode, 0,
                        SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("PendingMemoryMode", "s", property_pending_memory_mode, 0,
                        SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("AvailableComputeModes", "as", property_available_compute_modes, 0,
                        SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_METHOD_WITH_ARGS("Plan", SD_BUS_ARGS("s", compute, "s", memory),
                                SD_BUS_RESULT("s", json), method_plan, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("SetComputeMode", SD_BUS_ARGS("s", mode, "t", flags),
                                SD_BUS_RESULT("s", json), method_set_compute_mode,
                                SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("SetMemoryMode", SD_BUS_ARGS("s", mode, "t", flags),
                                SD_BUS_RESULT("s", json), method_set_memory_mode,
                                SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("ReloadDriver", SD_BUS_ARGS("t", flags), SD_BUS_RESULT("s", json),
                                method_reload_driver, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS(
                "SetModes", SD_BUS_ARGS("s", compute, "s", memory, "u", timeout_ms, "t", flags),
                SD_BUS_RESULT("s", json), method_set_modes, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("ReloadDriverWithTimeout", SD_BUS_ARGS("u", timeout_ms, "t", flags),
                                SD_BUS_RESULT("s", json), method_reload_driver_with_timeout,
                                SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_VTABLE_END,
};

/* ---- the cache and the desired state ---------------------------------------------------- */

static void queue_desired_compute(struct dgpu *g, enum amdsmi_compute_mode mode) {
        struct job *j;
        int r;

        g->partition_retry_usec = now_usec(CLOCK_MONOTONIC);
        j = pjob_new(g, NULL, "SetComputeMode", PJOB_SET, PJOB_DESIRED, mode, AMDSMI_MEMORY_UNKNOWN,
                     0, 0);
        if (!j) {
                log_gpu(LOG_ERR, g->bdf, "cannot queue the desired compute mode: %s",
                        strerror(ENOMEM));
                return;
        }
        r = job_submit(j);
        if (r < 0)
                log_gpu(LOG_ERR, g->bdf, "cannot queue the desired compute mode: %s", strerror(-r));
}

/* A desired compute mode KFD users blocked: again when 30 s passed (or at once after a
 * driver reload), unless the configuration no longer wants it or the GPU has it now. While
 * KFD users are still there nothing is tried (nor recorded): only looked at again later. */
static void retry_desired(struct dgpu *g, struct amdsmi_gpu *gpu) {
        struct daemon *d = g->d;
        struct config_gpu want;
        uint64_t now = now_usec(CLOCK_MONOTONIC);

        if (!g->partition_retry || jobs_pending_for(d, g->bdf) || !d->config)
                return;
        if (g->partition_retry_usec != 0 && now - g->partition_retry_usec < RETRY_USEC)
                return;
        if (g->partition_retry_usec != 0 && amdsmi_gpu_list_kfd_processes(gpu, NULL, 0) > 0) {
                g->partition_retry_usec = now;
                return;
        }
        if (!config_desired(d->config, g->bdf, &want) || want.compute == AMDSMI_COMPUTE_UNKNOWN ||
            streq_ptr(g->compute_mode, partition_compute_name(want.compute))) {
                g->partition_retry = false;
                g->partition_retry_warned = false;
                return;
        }
        log_gpu(LOG_INFO, g->bdf, "trying the desired compute mode %s again",
                partition_compute_name(want.compute));
        queue_desired_compute(g, want.compute);
}

/* The periodic check: a GPU that a failed driver reload of amdsmi left without a driver
 * (the library's record says so; never one an admin unbound or gave to another driver) is
 * bound again, with a backoff, REBIND_TRIES times at most. */
static void partition_check(struct dgpu *g, struct amdsmi_gpu *gpu) {
        struct job *j;
        int r;

        if (!streq_ptr(g->driver, "none")) {
                g->rebind_failures = 0;
                g->rebind_usec = 0;
                return;
        }
        if (g->changing || g->rebind_failures >= REBIND_TRIES ||
            now_usec(CLOCK_MONOTONIC) < g->rebind_usec || jobs_pending_for(g->d, g->bdf))
                return;
        r = amdsmi_gpu_is_left_unbound(gpu);
        if (r < 0)
                log_gpu(LOG_DEBUG, g->bdf, "cannot tell whether a reload left it unbound: %s",
                        strerror(-r));
        if (r <= 0)
                return;
        log_full(LOG_INFO, g->bdf, PARTITION_CHANGE_BIND,
                 "binding amdgpu to GPU %u again (a driver reload left it without a driver)",
                 g->index);
        j = pjob_new(g, NULL, "BindDriver", PJOB_RELOAD, PJOB_REBIND, AMDSMI_COMPUTE_UNKNOWN,
                     AMDSMI_MEMORY_UNKNOWN, 0, 0);
        r = j ? job_submit(j) : -ENOMEM;
        if (r < 0)
                log_gpu(LOG_ERR, g->bdf, "cannot queue binding amdgpu: %s", strerror(-r));
}

static char **partition_refresh(struct dgpu *g, struct amdsmi_gpu *gpu) {
        _cleanup_strv_free_ char **changed = NULL, **avail = NULL;
        enum amdsmi_compute_mode cm;
        enum amdsmi_memory_mode mm;
        uint32_t mask;
        int r;

        /* while a change runs its files may block until it ends: the cache stays */
        if (g->busy > 0)
                return NULL;
        /* from KFD: a GPU without KFD nodes (under change, KFD lost) keeps the one it had */
        if (amdsmi_gpu_get_hive_id(gpu) != 0)
                g->partition_hive_id = amdsmi_gpu_get_hive_id(gpu);

        /* from the KFD topology, which never wakes the GPU; the partition file only when the
         * topology does not tell (gim hosts have no KFD) */
        r = amdsmi_gpu_get_topology_compute_mode(gpu, &cm);
        if (r == -ENODATA)
                r = amdsmi_gpu_read_compute_mode(gpu, &cm);
        if (free_and_strdup(&g->compute_mode, r < 0 ? "" : compute_name_or_empty(cm)) > 0)
                (void) strv_extend(&changed, "ComputeMode");

        r = amdsmi_gpu_read_memory_mode(gpu, &mm);
        if (free_and_strdup(&g->memory_mode, r < 0 ? "" : memory_name_or_empty(mm)) > 0)
                (void) strv_extend(&changed, "MemoryMode");

        r = amdsmi_gpu_read_pending_memory_mode(gpu, &mm);
        if (free_and_strdup(&g->pending_memory_mode, r < 0 ? "" : memory_name_or_empty(mm)) > 0)
                (void) strv_extend(&changed, "PendingMemoryMode");

        r = amdsmi_gpu_read_available_compute_modes(gpu, &mask);
        for (int m = AMDSMI_COMPUTE_SPX; r >= 0 && m <= AMDSMI_COMPUTE_CPX; m++)
                if (mask & AMDSMI_COMPUTE_MODE_BIT(m))
                        (void) strv_extend(&avail, amdsmi_compute_mode_to_string(m));
        if (!strv_equal(avail, g->available_compute_modes)) {
                strv_free(g->available_compute_modes);
                g->available_compute_modes = TAKE_PTR(avail);
                (void) strv_extend(&changed, "AvailableComputeModes");
        }

        retry_desired(g, gpu);
        return TAKE_PTR(changed);
}

static void desired_memory(struct dgpu *g, enum amdsmi_memory_mode memory) {
        _cleanup_strv_free_ char **hive = NULL;
        const char *mode = memory_name_or_empty(memory);
        bool gim = streq_ptr(g->driver, "gim");
        struct job *j;
        int r;

        if (streq_ptr(g->pending_memory_mode, mode)) {
                log_full(LOG_NOTICE, g->bdf, PARTITION_CHANGE_MEMORY,
                         "desired memory mode %s is requested and waits for a driver reload: "
                         "'amdsmi reset -g %u --reload-driver' applies it",
                         mode, g->index);
                return;
        }
        if (streq_ptr(g->memory_mode, mode) && !nonempty(g->pending_memory_mode))
                return;
        if (manager_hive_bdfs(g, &hive) < 0)
                return;
        for (char **b = hive; *b; b++) {
                struct dgpu *o = manager_find_gpu(g->d, *b);

                if (o && o->partition_memory_queued)
                        return; /* requested for the hive already */
        }
        if (gim)
                log_full(LOG_NOTICE, g->bdf, PARTITION_CHANGE_MEMORY,
                         "desired memory mode %s differs from %s: changing it", mode,
                         nonempty(g->memory_mode) ?: "unknown");
        else
                log_full(LOG_NOTICE, g->bdf, PARTITION_CHANGE_MEMORY,
                         "desired memory mode %s differs from %s: requesting it; it takes "
                         "effect with 'amdsmi reset -g %u --reload-driver'",
                         mode, memory_target(g) ?: "unknown", g->index);
        j = pjob_new(g, NULL, "SetMemoryMode", PJOB_SET, PJOB_DESIRED, AMDSMI_COMPUTE_UNKNOWN,
                     memory, 0, 0);
        if (!j) {
                log_gpu(LOG_ERR, g->bdf, "cannot queue the desired memory mode: %s",
                        strerror(ENOMEM));
                return;
        }
        r = job_submit(j);
        if (r < 0) {
                log_gpu(LOG_ERR, g->bdf, "cannot queue the desired memory mode: %s", strerror(-r));
                return;
        }
        for (char **b = hive; *b; b++) {
                struct dgpu *o = manager_find_gpu(g->d, *b);

                if (o)
                        o->partition_memory_queued = true;
        }
}

static void partition_apply_desired(struct dgpu *g, const struct config_gpu *want,
                                    const struct config_gpu *old) {
        if (!old || old->compute != want->compute) {
                g->partition_retry = false;
                g->partition_retry_warned = false;
                if (want->compute != AMDSMI_COMPUTE_UNKNOWN) {
                        const char *mode = partition_compute_name(want->compute);

                        if (streq_ptr(g->compute_mode, mode))
                                log_gpu(LOG_DEBUG, g->bdf, "compute mode %s as desired", mode);
                        else {
                                log_full(LOG_INFO, g->bdf, PARTITION_CHANGE_COMPUTE,
                                         "desired compute mode %s differs from %s: switching", mode,
                                         nonempty(g->compute_mode) ?: "unknown");
                                queue_desired_compute(g, want->compute);
                        }
                }
        }
        if (want->memory != AMDSMI_MEMORY_UNKNOWN && (!old || old->memory != want->memory))
                desired_memory(g, want->memory);
}

/* ---- recovery of an interrupted change -------------------------------------------------- */

static void split_modes(const char *s, enum amdsmi_compute_mode *ret_c,
                        enum amdsmi_memory_mode *ret_m) {
        char buf[32];
        char *slash;

        *ret_c = AMDSMI_COMPUTE_UNKNOWN;
        *ret_m = AMDSMI_MEMORY_UNKNOWN;
        if (!s)
                return;
        snprintf(buf, sizeof(buf), "%s", s);
        slash = strchr(buf, '/');
        if (slash) {
                *slash = '\0';
                if (amdsmi_memory_mode_from_string(slash + 1, ret_m) < 0)
                        *ret_m = AMDSMI_MEMORY_UNKNOWN;
        }
        if (amdsmi_compute_mode_from_string(buf, ret_c) < 0)
                *ret_c = AMDSMI_COMPUTE_UNKNOWN;
}

static enum amdsmi_memory_mode parse_memory_value(const char *s) {
        enum amdsmi_memory_mode m;

        return s && amdsmi_memory_mode_from_string(s, &m) >= 0 ? m : AMDSMI_MEMORY_UNKNOWN;
}

static void recover_compute(struct dgpu *g, struct amdsmi_gpu *h, const struct intent *i,
                            enum amdsmi_compute_mode old, enum amdsmi_compute_mode new) {
        enum amdsmi_compute_mode cur;
        struct job *j;
        int r;

        r = amdsmi_gpu_read_compute_mode(h, &cur);
        if (r < 0 && amdsmi_gpu_get_topology_compute_mode(h, &cur) < 0)
                cur = AMDSMI_COMPUTE_UNKNOWN;
        if (new != AMDSMI_COMPUTE_UNKNOWN && cur == new) {
                log_full(LOG_NOTICE, g->bdf, i->change,
                         "interrupted change of the compute mode to %s completed: the GPU is "
                         "in %s",
                         compute_name_or_empty(new), compute_name_or_empty(cur));
                return;
        }
        if (old == AMDSMI_COMPUTE_UNKNOWN) {
                log_full(LOG_WARNING, g->bdf, i->change,
                         "interrupted change of the compute mode to %s rolled back: the GPU is "
                         "in %s (the previous mode is not known)",
                         compute_name_or_empty(new), partition_compute_name(cur) ?: "unknown");
                return;
        }
        if (cur == old) {
                log_full(LOG_NOTICE, g->bdf, i->change,
                         "interrupted change of the compute mode to %s rolled back: the GPU is "
                         "still in %s",
                         compute_name_or_empty(new), compute_name_or_empty(old));
                return;
        }
        log_full(LOG_NOTICE, g->bdf, i->change,
                 "interrupted change of the compute mode to %s rolled back: restoring %s (the "
                 "GPU is in %s)",
                 compute_name_or_empty(new), compute_name_or_empty(old),
                 partition_compute_name(cur) ?: "an unknown mode");
        j = pjob_new(g, NULL, "SetComputeMode", PJOB_SET, PJOB_RECOVERY, old, AMDSMI_MEMORY_UNKNOWN,
                     0, 0);
        r = j ? job_submit(j) : -ENOMEM;
        if (r < 0)
                log_gpu(LOG_ERR, g->bdf, "cannot queue the restoring of %s: %s",
                        compute_name_or_empty(old), strerror(-r));
}

static void recover_memory(struct dgpu *g, struct amdsmi_gpu *h, const struct intent *i,
                           enum amdsmi_memory_mode new) {
        enum amdsmi_memory_mode cur, pending;

        if (amdsmi_gpu_read_memory_mode(h, &cur) < 0)
                cur = AMDSMI_MEMORY_UNKNOWN;
        if (amdsmi_gpu_read_pending_memory_mode(h, &pending) < 0)
                pending = AMDSMI_MEMORY_UNKNOWN;
        if (new != AMDSMI_MEMORY_UNKNOWN && cur == new)
                log_full(LOG_NOTICE, g->bdf, i->change,
                         "interrupted request of memory mode %s completed: the GPU is in %s",
                         memory_name_or_empty(new), memory_name_or_empty(cur));
        else if (new != AMDSMI_MEMORY_UNKNOWN && pending == new)
                log_full(LOG_NOTICE, g->bdf, i->change,
                         "interrupted request of memory mode %s completed: the request is "
                         "recorded and kept; 'amdsmi reset -g %u --reload-driver' applies it",
                         memory_name_or_empty(new), g->index);
        else
                log_full(LOG_NOTICE, g->bdf, i->change,
                         "interrupted request of memory mode %s rolled back: no request of it "
                         "is recorded (the GPU is in %s%s%s)",
                         partition_memory_name(new) ?: "?", partition_memory_name(cur) ?: "unknown",
                         pending != AMDSMI_MEMORY_UNKNOWN ? ", pending " : "",
                         pending != AMDSMI_MEMORY_UNKNOWN ? memory_name_or_empty(pending) : "");
}

static void recover_reload(struct dgpu *g, struct amdsmi_gpu *h, const struct intent *i) {
        enum amdsmi_memory_mode cur, new = parse_memory_value(i->new_value);
        char list[512] = "";
        unsigned n = 0;

        /* the reload unbinds the whole hive: the GPUs it left without a driver are recorded,
         * and the periodic check binds them again */
        for (size_t k = 0; k < g->d->n_gpus; k++) {
                struct amdsmi_gpu *o = dgpu_handle(g->d->gpus[k]);

                if (o && amdsmi_gpu_is_left_unbound(o) > 0 && n++ < 8)
                        snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s",
                                 list[0] ? ", " : "", g->d->gpus[k]->bdf);
        }
        if (n > 0) {
                log_full(LOG_WARNING, g->bdf, i->change,
                         "interrupted driver reload left %u GPU%s without a driver (%s%s): "
                         "amdsmid binds %s to amdgpu again",
                         n, n == 1 ? "" : "s", list, n > 8 ? ", ..." : "", n == 1 ? "it" : "them");
                return;
        }
        if (amdsmi_gpu_get_driver(h) != AMDSMI_DRIVER_AMDGPU) {
                log_full(LOG_ERR, g->bdf, i->change,
                         "interrupted driver reload: the GPU is not bound to amdgpu; bind it "
                         "again (its address to amdgpu's bind file in sysfs) or reboot");
                return;
        }
        if (amdsmi_gpu_read_memory_mode(h, &cur) < 0)
                cur = AMDSMI_MEMORY_UNKNOWN;
        if (new != AMDSMI_MEMORY_UNKNOWN && cur == new)
                log_full(LOG_NOTICE, g->bdf, i->change,
                         "interrupted driver reload completed: the GPU is back in %s",
                         memory_name_or_empty(cur));
        else
                log_full(LOG_NOTICE, g->bdf, i->change,
                         "interrupted driver reload rolled back: the GPU is in %s; 'amdsmi "
                         "reset -g %u --reload-driver' applies a pending request",
                         partition_memory_name(cur) ?: "an unknown memory mode", g->index);
}

static int partition_recover(struct daemon *d, const struct intent *i) {
        enum amdsmi_compute_mode old_c, new_c;
        enum amdsmi_memory_mode old_m, new_m;
        struct amdsmi_gpu *h;
        struct dgpu *g;

        if (!streq_ptr(i->change, PARTITION_CHANGE_COMPUTE) &&
            !streq_ptr(i->change, PARTITION_CHANGE_MEMORY) &&
            !streq_ptr(i->change, PARTITION_CHANGE_MODES) &&
            !streq_ptr(i->change, PARTITION_CHANGE_RELOAD) &&
            !streq_ptr(i->change, PARTITION_CHANGE_BIND))
                return 0;
        g = manager_find_gpu(d, i->gpu);
        h = g ? dgpu_handle(g) : NULL;
        if (!h) {
                log_full(LOG_WARNING, i->gpu, i->change, "interrupted %s change: the GPU is gone%s",
                         i->change,
                         streq_ptr(i->change, PARTITION_CHANGE_RELOAD)
                                 ? " (a driver reload may have left it unbound: bind it to "
                                   "amdgpu again or reboot)"
                                 : "");
                return 1;
        }
        if (streq_ptr(i->change, PARTITION_CHANGE_RELOAD)) {
                recover_reload(g, h, i);
                return 1;
        }
        if (streq_ptr(i->change, PARTITION_CHANGE_BIND)) {
                /* the periodic check binds it again if it is still without a driver */
                log_full(LOG_NOTICE, g->bdf, i->change,
                         "interrupted binding of amdgpu: the GPU has %s",
                         amdsmi_gpu_get_driver(h) == AMDSMI_DRIVER_NONE ? "no driver"
                                                                        : "a driver now");
                return 1;
        }
        if (streq_ptr(i->change, PARTITION_CHANGE_COMPUTE)) {
                split_modes(i->old_value, &old_c, &old_m);
                split_modes(i->new_value, &new_c, &new_m);
                recover_compute(g, h, i, old_c, new_c);
        } else if (streq_ptr(i->change, PARTITION_CHANGE_MEMORY))
                recover_memory(g, h, i, parse_memory_value(i->new_value));
        else {
                split_modes(i->old_value, &old_c, &old_m);
                split_modes(i->new_value, &new_c, &new_m);
                recover_memory(g, h, i, new_m);
                recover_compute(g, h, i, old_c, new_c);
        }
        return 1;
}

int partition_daemon_document(struct daemon *d, const struct doc_query *q, json_object **ret) {
        return doc_collect(q, partition_gpu, ret);
}

const struct slice partition_slice = {
        .interface = AMDSMI_BUS_IFACE_PARTITION,
        .vtable = partition_vtable,
        .refresh = partition_refresh,
        .check = partition_check,
        .apply_desired = partition_apply_desired,
        .recover = partition_recover,
        .document_gpus = partition_daemon_document,
};
