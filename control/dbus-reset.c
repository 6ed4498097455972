/* SPDX-License-Identifier: MIT */
/*
 * amdsmid: the GPU reset on org.amdsmi1.Gpu (the GPU objects' own interface):
 *
 *   Reset(t flags) -> s                          org.amdsmi1.gpu.reset; a job that holds every
 *   ResetWithTimeout(u timeout_ms, t flags) -> s GPU of the hive (the reset takes it); flags:
 *                                                0x1 dry run (the plan and the preflight),
 *                                                0x2 force (KFD users are named, not refused)
 *
 * The reply is the GPU's element of the change document (control/reset-run.h); a failure is
 * an org.amdsmi1.Error with the element after its message. The reset runs on the job's worker
 * thread, so the event loop goes on serving meanwhile (reads answer from the cached
 * properties; other changes of the hive wait for the job). Afterwards, on the main thread, the
 * GPUs are recorded as reset for the health verdict, and the desired state of each GPU of the
 * hive is applied again (manager_apply_desired(): every slice's, the power caps the reset
 * returned to their defaults among them); the framework's rescan emits PropertiesChanged, and
 * the KFD event stream, when followed, the Health.Event signals of GPU_PRE_RESET and
 * GPU_POST_RESET. Each GPU of the hive gets a history record ("gpu_reset").
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>

#include "amdsmid.h"
#include "gpu-set.h"
#include "report.h"
#include "reset-run.h"

struct rjob {
        char bdf[16];
        unsigned timeout_ms;
};

/* The reset's re-application runs on the main thread after the job (finish): here the entry
 * only says so. */
static int reapply_later(void *userdata, struct report *rep, struct amdsmi_gpu *gpu,
                         json_object *entry) {
        report_say(rep, entry, "%s: amdsmid applies its desired state again",
                   amdsmi_gpu_get_bdf(gpu));
        return 0;
}

/* The last line of the element's messages (malloc'd), NULL if none. */
static char *summary(json_object *entry) {
        json_object *lines = NULL;
        size_t n;

        if (!json_object_object_get_ex(entry, "messages", &lines) ||
            !json_object_is_type(lines, json_type_array))
                return NULL;
        n = json_object_array_length(lines);
        for (size_t i = 0; i < n; i++) {
                const char *s = json_object_get_string(json_object_array_get_idx(lines, i));

                if (s && strstr(s, " reset through "))
                        return strdup(s);
        }
        return n ? strdup(json_object_get_string(json_object_array_get_idx(lines, n - 1))) : NULL;
}

static int job_run(struct job *j, struct amdsmi_ctx *ctx) {
        struct rjob *rj = j->userdata;
        struct report rep = {
                .command = "reset",
                .keep_field_errors = true,
                .dry_run = !!(j->flags & AMDSMI_BUS_FLAG_DRY_RUN),
        };
        struct reset_options o = {
                .force = !!(j->flags & AMDSMI_BUS_FLAG_FORCE),
                .timeout_ms = rj->timeout_ms,
                .lock = false, /* the job holds the hive */
                .reapply = reapply_later,
        };
        struct gpu_set set = {};
        json_object *entry = NULL;
        int r;

        r = gpu_set_attach(&set, ctx, rj->bdf);
        if (r < 0) {
                (void) asprintf(&j->message, "GPU %s is gone", rj->bdf);
                return r == -ENOENT ? -ENODEV : r;
        }
        r = -ENODEV;
        FOREACH_GPU_IN_SET(&set, i, gpu) {
                json_object_put(entry);
                entry = NULL;
                r = reset_gpu_run(&rep, ctx, i, gpu, &o, &entry);
        }
        if (r < 0)
                j->message = rep.error_message ? strdup(rep.error_message) : NULL;
        else if (entry)
                j->message = summary(entry);
        j->reply = entry;
        gpu_set_clear(&set);
        report_clear(&rep);
        if (r < 0 && !j->message)
                (void) asprintf(&j->message, "%s", strerror(-r));
        return r;
}

static void job_finish(struct job *j) {
        struct daemon *d = j->d;
        bool dry_run = j->flags & AMDSMI_BUS_FLAG_DRY_RUN;
        json_object *res = NULL;
        bool reset_ran = false;

        if (dry_run)
                return;
        /* the reset ran (even a failed one may have changed the GPUs): the health verdict's
         * window, and the desired state applied again where the GPUs answer */
        reset_ran = j->reply && json_object_object_get_ex(j->reply, "state", &res) && res;
        for (char **b = j->bdfs; reset_ran && b && *b; b++) {
                struct dgpu *o = manager_find_gpu(d, *b);

                if (!o)
                        continue;
                health_daemon_reset_seen(o, now_usec(CLOCK_BOOTTIME), "amdsmi reset");
                log_full(j->r < 0 ? LOG_WARNING : LOG_NOTICE, o->bdf, RESET_CHANGE,
                         "GPU %u reset %s%s%s", o->index, j->r < 0 ? "failed" : "done",
                         j->message ? ": " : "", j->message ? j->message : "");
                if (j->r >= 0)
                        manager_apply_desired(d, o, false, NULL);
        }
}

static int submit(sd_bus_message *m, struct dgpu *g, const char *name, uint32_t timeout_ms,
                  uint64_t flags, sd_bus_error *error) {
        _cleanup_strv_free_ char **bdfs = NULL;
        struct rjob *rj;
        struct job *j;
        int r;

        if (flags & ~AMDSMI_BUS_FLAGS_ALL)
                return bus_error_errno(error, -EINVAL,
                                       "unknown flags 0x%llx (known: 0x1 dry run, 0x2 force)",
                                       (unsigned long long) (flags & ~AMDSMI_BUS_FLAGS_ALL));
        if (timeout_ms > AMDSMI_BUS_TIMEOUT_MS_MAX)
                return bus_error_errno(error, -EINVAL,
                                       "timeout %u ms is above %u ms (0: the default)", timeout_ms,
                                       AMDSMI_BUS_TIMEOUT_MS_MAX);
        if (manager_hive_bdfs(g, &bdfs) < 0)
                return bus_error_errno(error, -ENOMEM, "out of memory");
        rj = calloc(1, sizeof(*rj));
        if (!rj)
                return bus_error_errno(error, -ENOMEM, "out of memory");
        snprintf(rj->bdf, sizeof(rj->bdf), "%s", g->bdf);
        rj->timeout_ms = timeout_ms;
        j = job_new(g->d, m, name, (const char *const *) bdfs, strv_length(bdfs), flags);
        if (!j) {
                free(rj);
                return bus_error_errno(error, -ENOMEM, "out of memory");
        }
        j->run = job_run;
        j->finish = job_finish;
        j->userdata = rj;
        j->free_userdata = free;
        r = job_set_change(j, RESET_CHANGE, NULL, "reset");
        if (r < 0) {
                job_free(j);
                return bus_error_errno(error, r, "out of memory");
        }
        r = job_authorise_and_submit(j, "org.amdsmi1.gpu.reset");
        if (r < 0)
                return bus_error_errno(error, r, "cannot queue %s: %s", name, strerror(-r));
        return r;
}

static int method_reset(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        uint64_t flags;
        int r;

        r = sd_bus_message_read(m, "t", &flags);
        if (r < 0)
                return r;
        return submit(m, userdata, "Reset", 0, flags, error);
}

static int method_reset_with_timeout(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        uint32_t timeout_ms;
        uint64_t flags;
        int r;

        r = sd_bus_message_read(m, "ut", &timeout_ms, &flags);
        if (r < 0)
                return r;
        return submit(m, userdata, "ResetWithTimeout", timeout_ms, flags, error);
}

const sd_bus_vtable reset_gpu_vtable[] = {
        SD_BUS_VTABLE_START(0),
        SD_BUS_METHOD_WITH_ARGS("Reset", SD_BUS_ARGS("t", flags), SD_BUS_RESULT("s", json),
                                method_reset, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("ResetWithTimeout", SD_BUS_ARGS("u", timeout_ms, "t", flags),
                                SD_BUS_RESULT("s", json), method_reset_with_timeout,
                                SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_VTABLE_END,
};
