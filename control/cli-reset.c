/* SPDX-License-Identifier: MIT */
/*
 * The GPU reset's part of amdsmi(1):
 *
 *   amdsmi reset -g SEL -G|--gpureset [--dry-run] [--force] [--timeout SECONDS]
 *
 * Through amdsmid when it runs (org.amdsmi1.Gpu.Reset / ResetWithTimeout, one call per
 * selected GPU, in GPU order): it authorises the caller (org.amdsmi1.gpu.reset), runs the
 * reset as a job holding every GPU of the hive, re-applies its desired state and answers with
 * the GPU's element of the change document. Otherwise (no amdsmid, or --direct, as root) the
 * same code runs here (reset-run.c) under the hive's change locks; the re-applied state is then
 * the arbitrated power cap of the state file, and the reset goes to the history. A GPU whose
 * hive an earlier GPU's reset took is not reset again: its element says "same_operation_as".
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bus-errors.h"
#include "bus.h"
#include "change.h"
#include "cli.h"
#include "history.h"
#include "reset-run.h"

static const struct column_def reset_csv[] = {
        { "gpu", NULL, "gpu", 0 },
        { "bdf", NULL, "bdf", 0 },
        { "mechanism", NULL, "mechanism", 0 },
        { "hive_wide", NULL, "hive_wide", 0 },
        { "same_operation_as", NULL, "same_operation_as", 0 },
        { "reset_res", NULL, "reset_res", 0 },
        { "hung", NULL, "hung", 0 },
        { "preflight_ms", NULL, "stages_ms.preflight", 0 },
        { "reset_ms", NULL, "stages_ms.reset", 0 },
        { "wait_ms", NULL, "stages_ms.wait", 0 },
        { "verify_ms", NULL, "stages_ms.verify", 0 },
        { "reapply_ms", NULL, "stages_ms.reapply", 0 },
        { "total_ms", NULL, "stages_ms.total", 0 },
        { "result", NULL, "result", 0 },
};

/* The index of the earlier element whose reset took @bdf, -1 if none. */
static int covered_by(json_object *gpus, const char *bdf) {
        for (size_t i = 0; i < json_object_array_length(gpus); i++) {
                json_object *e = json_object_array_get_idx(gpus, i), *g = NULL;
                const char *bdfs[AMDSMI_PLAN_MAX_HIVE];
                size_t n = reset_entry_bdfs(e, bdfs, AMDSMI_PLAN_MAX_HIVE);

                if (json_object_object_get_ex(e, "same_operation_as", &g) && g)
                        continue;
                for (size_t k = 0; k < n && k < AMDSMI_PLAN_MAX_HIVE; k++)
                        if (bdfs[k] && strcmp(bdfs[k], bdf) == 0) {
                                json_object *idx = NULL;

                                if (json_object_object_get_ex(e, "gpu", &idx))
                                        return json_object_get_int(idx);
                                return (int) i;
                        }
        }
        return -1;
}

static json_object *covered_entry(size_t index, struct amdsmi_gpu *gpu, int by) {
        json_object *e = json_object_new_object();

        json_set(e, "gpu", json_object_new_uint64(index));
        json_set(e, "bdf", json_object_new_string(amdsmi_gpu_get_bdf(gpu)));
        json_set(e, "same_operation_as", json_object_new_int(by));
        json_set(e, "messages", json_object_new_array());
        json_set(e, "result", NULL);
        return e;
}

/* The last line the element says (for the history), borrowed; NULL if none. */
static const char *last_message(json_object *e) {
        json_object *lines = NULL;
        size_t n;

        if (!json_object_object_get_ex(e, "messages", &lines) ||
            !json_object_is_type(lines, json_type_array))
                return NULL;
        n = json_object_array_length(lines);
        return n ? json_object_get_string(json_object_array_get_idx(lines, n - 1)) : NULL;
}

static void record_direct(struct cli *c, json_object *e, int r) {
        const char *bdfs[AMDSMI_PLAN_MAX_HIVE], *mech = NULL;
        size_t n = reset_entry_bdfs(e, bdfs, AMDSMI_PLAN_MAX_HIVE);
        json_object *m = NULL;

        if (json_object_object_get_ex(e, "mechanism", &m))
                mech = json_object_get_string(m);
        for (size_t i = 0; i < n && i < AMDSMI_PLAN_MAX_HIVE; i++)
                (void) change_journal_record(
                        &c->journal,
                        (struct history_entry){
                                .gpu = bdfs[i],
                                .change = RESET_CHANGE,
                                .old_value = NULL,
                                .new_value = mech,
                                .result = r,
                                .message = r < 0 ? c->report.error_message : last_message(e),
                        });
}

/* The reset of one GPU through amdsmid; its element (or one without a plan) into @gpus.
 * *@stop when amdsmid refused the caller. */
static int daemon_one(struct cli *c, size_t index, struct amdsmi_gpu *gpu, json_object *gpus,
                      bool *stop) {
        const char *bdf = amdsmi_gpu_get_bdf(gpu);
        uint64_t flags = (c->report.dry_run ? AMDSMI_BUS_FLAG_DRY_RUN : 0) |
                         (c->force ? AMDSMI_BUS_FLAG_FORCE : 0);
        unsigned wait = (c->timeout_ms ? c->timeout_ms : 60000) + 10 * 60 * 1000;
        _cleanup_free_ char *message = NULL;
        json_object *reply = NULL, *lines = NULL;
        int r;

        *stop = false;
        if (c->timeout_ms > 0)
                r = cli_bus_call(c, NULL, bdf, AMDSMI_BUS_IFACE_GPU, "ResetWithTimeout", wait,
                                 &reply, &message, "ut", c->timeout_ms, flags);
        else
                r = cli_bus_call(c, NULL, bdf, AMDSMI_BUS_IFACE_GPU, "Reset", wait, &reply,
                                 &message, "t", flags);
        if (reply && json_object_is_type(reply, json_type_object)) {
                if (c->format == OUTPUT_TABLE &&
                    json_object_object_get_ex(reply, "messages", &lines))
                        for (size_t i = 0; i < json_object_array_length(lines); i++)
                                printf("%s\n",
                                       json_object_get_string(json_object_array_get_idx(lines, i)));
                if (r < 0)
                        cli_fail(c, r, "%s", message ? message : strerror(-r));
                json_set(reply, "gpu", json_object_new_uint64(index));
                json_object_array_add(gpus, reply);
                return r;
        }
        json_object_put(reply);
        if (r >= 0)
                r = -EBADMSG;
        if (r == -EACCES || r == -EPERM)
                *stop = true;
        cli_fail(c, r, "%s", message ? message : strerror(-r));
        reply = covered_entry(index, gpu, -1);
        if (reply) {
                json_object_object_del(reply, "same_operation_as");
                json_set(reply, "result", cli_errno_json(r));
                json_object_array_add(gpus, reply);
        }
        return r;
}

int reset_cli_gpu_reset(struct cli *c) {
        struct reset_options o = { .force = c->force, .timeout_ms = c->timeout_ms, .lock = true };
        json_object *gpus = json_object_new_array();
        int route, result = 0, r;

        if (!gpus)
                return cli_fail(c, -ENOMEM, "out of memory");
        route = cli_change_begin(c, "a GPU reset takes a whole GPU");
        if (route < 0) {
                json_object_put(gpus);
                return route;
        }
        FOREACH_SELECTED_GPU(c, i, gpu) {
                json_object *e = NULL;
                int by = covered_by(gpus, amdsmi_gpu_get_bdf(gpu));

                if (by >= 0) {
                        e = covered_entry(i, gpu, by);
                        if (e) {
                                report_say(&c->report, e, "%s: reset with GPU %d (same hive)",
                                           amdsmi_gpu_get_bdf(gpu), by);
                                json_object_array_add(gpus, e);
                        }
                        continue;
                }
                if (route == CLI_ROUTE_DAEMON) {
                        bool stop;

                        r = daemon_one(c, i, gpu, gpus, &stop);
                        if (r < 0 && result == 0)
                                result = r;
                        if (stop)
                                break;
                        continue;
                }
                r = reset_gpu_run(&c->report, c->set.ctx, i, gpu, &o, &e);
                if (r < 0 && result == 0)
                        result = r;
                if (!e)
                        break;
                if (!c->report.dry_run && r != -EOPNOTSUPP)
                        record_direct(c, e, r);
                json_object_array_add(gpus, e);
        }
        /* the GPU objects describe the driver state before the reset */
        if (!c->report.dry_run && route == CLI_ROUTE_DIRECT && amdsmi_ctx_enumerate(c->set.ctx) < 0)
                fprintf(stderr, "amdsmi: cannot enumerate the GPUs again after the reset\n");
        r = cli_emit_change(c, gpus, result, reset_csv, ELEMENTSOF(reset_csv));
        json_object_put(gpus);
        return r;
}
