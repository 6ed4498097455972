/* SPDX-License-Identifier: MIT */
/*
 * The partition slice's part of amdsmi(1):
 *
 *   amdsmi partition [-g SEL]                     modes, what is available, the partitions
 *   amdsmi partition set -g SEL --compute MODE [--memory MODE] [--dry-run] [--force]
 *   amdsmi set -g SEL -C MODE | -M MODE [--dry-run] [--force]
 *   amdsmi reset -g SEL --reload-driver [--dry-run]
 *
 * Changes go through amdsmid when it runs (org.amdsmi1.Partition, one call per selected GPU,
 * in GPU order): it plans, authorises the caller with polkit, runs the change and answers
 * with that GPU's element of the change document, which is printed as if the change had run
 * here. Otherwise (no amdsmid, or --direct) they run in-process with the same code
 * (partition-json.c): plan first, refuse an invalid plan with the valid modes, then take the
 * per-GPU lock (lib/util/gpu-lock.h; every GPU of the hive for memory requests and driver
 * reloads, once per hive) and call the library; each change goes to the history as amdsmid's
 * do.
 */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <systemd/sd-bus.h>

#include "amdsmid-conf.h"
#include "bus-errors.h"
#include "cli.h"
#include "documents.h"
#include "exit-codes.h"
#include "change.h"
#include "history.h"
#include "partition-json.h"

#define compute_name partition_compute_name
#define memory_name partition_memory_name
#define compute_array partition_compute_array
#define memory_array partition_memory_array

/* ---- helpers ---------------------------------------------------------------------------- */

/* The elements of a JSON array of strings joined with spaces ("" for none, NULL for null). */
static json_object *joined(json_object *array, bool table) {
        char buf[256];
        size_t n = 0;

        if (!array || !json_object_is_type(array, json_type_array))
                return NULL;
        buf[0] = '\0';
        for (size_t i = 0; i < json_object_array_length(array) && n < sizeof(buf); i++)
                n += (size_t) snprintf(buf + n, sizeof(buf) - n, "%s%s", i ? " " : "",
                                       json_object_get_string(
                                               json_object_array_get_idx(array, i)));
        if (table && buf[0] == '\0')
                return json_object_new_string("-");
        return json_object_new_string(buf);
}
/* ---- amdsmi partition ------------------------------------------------------------------- */

/* The GPU columns, repeated on every partition line in CSV. Lists become "A B C". */
static const struct column_def partition_gpu_columns[] = {
        { "gpu", "GPU", "gpu", 0 },
        { "bdf", "BDF", "bdf", 0 },
        { "product", "PRODUCT", "product", 0 },
        { "role", "ROLE", "role", 0 },
        { "driver", NULL, "driver", 0 },
        { "compute_mode", "COMPUTE", "compute_mode", 0 },
        { "memory_mode", "MEMORY", "memory_mode", 0 },
        { "memory_pending", "PENDING", "memory_pending", COLUMN_NONE },
        { "supported_compute_modes", "SUPPORTED", "supported_compute_modes", 0 },
        { "available_compute_modes", "AVAILABLE", "available_compute_modes", 0 },
        { "available_memory_modes", "AVAILABLE NPS", "available_memory_modes", 0 },
        { "memory_changeable", NULL, "memory_changeable", 0 },
        { "hive_id", NULL, "hive_id", 0 },
        { "vf_count", NULL, "vf_count", 0 },
        { "xcc_num_inst", NULL, "engine_shares.xcc.num_inst", 0 },
        { "xcc_num_shared", NULL, "engine_shares.xcc.num_shared", 0 },
        { "dma_num_inst", NULL, "engine_shares.dma.num_inst", 0 },
        { "dma_num_shared", NULL, "engine_shares.dma.num_shared", 0 },
        { "dec_num_inst", NULL, "engine_shares.dec.num_inst", 0 },
        { "dec_num_shared", NULL, "engine_shares.dec.num_shared", 0 },
        { "jpeg_num_inst", NULL, "engine_shares.jpeg.num_inst", 0 },
        { "jpeg_num_shared", NULL, "engine_shares.jpeg.num_shared", 0 },
        { "partition_count", "PARTITIONS", "partition_count", 0 },
};

static const struct column_def partition_part_columns[] = {
        { "partition", "PARTITION", "p.partition", 0 },
        { "partition_xcc_count", "XCCS", "p.xcc_count", 0 },
        { "partition_compute_units", "CUS", "p.compute_units", 0 },
        { "partition_memory_bytes", "MEMORY (MiB)", "p.memory_bytes", COLUMN_MIB },
        { "partition_render_minor", "RENDER MINOR", "p.render_minor", 0 },
        { "partition_kfd_gpu_id", "KFD GPU ID", "p.kfd_gpu_id", 0 },
};

static const char *const list_keys[] = {
        "supported_compute_modes",
        "available_compute_modes",
        "available_memory_modes",
};

/* A copy of the GPU object's scalar fields with the lists joined, and @part as "p". */
static json_object *flat_row(json_object *g, json_object *part, bool table) {
        json_object *row = json_object_new_object();

        if (!row)
                return NULL;
        json_object_object_foreach(g, key, val) {
                bool list = false;

                if (strcmp(key, "partitions") == 0)
                        continue;
                for (size_t i = 0; i < ELEMENTSOF(list_keys); i++)
                        if (strcmp(key, list_keys[i]) == 0)
                                list = true;
                json_set(row, key, list ? joined(val, table) : json_object_get(val));
        }
        json_set(row, "p", json_object_get(part));
        return row;
}

/* One line per GPU, its partitions indented below it (columns aligned over all GPUs); in CSV
 * one row per partition. */
static int print_partitions(struct cli *c, json_object *gpus, bool table) {
        struct output_watch w;
        char stamp[40];

        return output_parents_children(stdout, gpus, "partitions", partition_gpu_columns,
                                       ELEMENTSOF(partition_gpu_columns), partition_part_columns,
                                       ELEMENTSOF(partition_part_columns), flat_row, table,
                                       cli_output_watch(c, &w, stamp));
}

static int partition_sample(struct cli *c) {
        json_object *gpus;
        int r;

        r = cli_print_daemon_text(c, "partition");
        if (r != 0)
                return r < 0 ? r : 0;
        r = cli_collect_document(c, "partition", partition_gpu, &gpus);
        if (r != 0)
                return r;

        switch (c->format) {
        case OUTPUT_JSON:
                return cli_print_document(c, gpus);
        case OUTPUT_CSV:
                r = print_partitions(c, gpus, false);
                break;
        case OUTPUT_TABLE:
                r = print_partitions(c, gpus, true);
                break;
        }
        return cli_sample_done(c, gpus, r);
}

int partition_cli_collect(struct cli *c, json_object **ret) {
        return cli_collect_document(c, "partition", partition_gpu, ret);
}

int verb_partition(struct cli *c) {
        return cli_open_run(c, partition_sample);
}

/* ---- changes ---------------------------------------------------------------------------- */

static int emit_change_document(struct partition_run *run) {
        static const struct column_def csv[] = {
                { "gpu", NULL, "gpu", 0 },
                { "bdf", NULL, "bdf", 0 },
                { "dry_run", NULL, "dry_run", 0 },
                { "plan_reason", NULL, "plan.reason", 0 },
                { "compute_before", NULL, "plan.compute_before", 0 },
                { "compute_after", NULL, "plan.compute_after", 0 },
                { "memory_before", NULL, "plan.memory_before", 0 },
                { "memory_after", NULL, "plan.memory_after", 0 },
                { "partitions_before", NULL, "plan.partitions_before", 0 },
                { "partitions_after", NULL, "plan.partitions_after", 0 },
                { "same_operation_as", NULL, "same_operation_as", 0 },
                { "operations", NULL, "reports[].operation", 0 },
                { "stages", NULL, "reports[].stage", 0 },
                { "result", NULL, "result", 0 },
        };
        struct cli *c = cli_of_report(run->report);
        size_t n = json_object_array_length(run->gpus);
        int r = run->result;

        if (r == 0 && run->reload_pending)
                r = -ERELOAD_REQUIRED;
        /* CSV rows say whether it was a dry run; the JSON says it once, at the top */
        for (size_t i = 0; c->format == OUTPUT_CSV && i < n; i++)
                json_set(json_object_array_get_idx(run->gpus, i), "dry_run",
                         json_object_new_boolean(c->report.dry_run));
        r = cli_emit_change(c, run->gpus, r, csv, ELEMENTSOF(csv));
        for (size_t i = 0; c->format == OUTPUT_CSV && i < n; i++)
                json_object_object_del(json_object_array_get_idx(run->gpus, i), "dry_run");
        return r;
}

/* In-process changes are recorded in the history as amdsmid records its own, rotated at
 * the bound amdsmid.conf sets. */
static void record_direct(struct partition_run *run, const char *change,
                          const char *const *bdfs, size_t n_bdfs, const char *old_value,
                          const char *new_value, int r, const char *message) {
        struct cli *c = run->userdata;

        for (size_t i = 0; i < n_bdfs; i++)
                (void) change_journal_record(&c->journal, (struct history_entry){
                                                                  .gpu = bdfs[i],
                                                                  .change = change,
                                                                  .old_value = old_value,
                                                                  .new_value = new_value,
                                                                  .result = r,
                                                                  .message = message,
                                                          });
}

static int change_begin(struct cli *c, struct partition_run *run) {
        int r, route;

        route = cli_change_begin(c, "partition modes are changed for a whole GPU");
        if (route < 0)
                return route;
        r = partition_run_init(run, &c->report, &c->set,
                               &(struct partition_change){ .compute = c->partition.compute,
                                                           .memory = c->partition.memory,
                                                           .force = c->force,
                                                           .timeout_ms = c->timeout_ms });
        if (r < 0)
                return cli_fail(c, r, "out of memory");
        run->remote = route == CLI_ROUTE_DAEMON;
        if (!run->remote) {
                run->record = record_direct;
                run->userdata = c;
        }
        return 0;
}

/* ---- through amdsmid -------------------------------------------------------------------- */

/*
 * Calls @member of org.amdsmi1.Partition on the object of @bdf. A change that failed still
 * gives the GPU's element of the document as amdsmid would have answered it in *ret (NULL
 * when the error has none, as for a denial). The change may wait for others of the GPU: ten
 * minutes more than the driver. @return 0 or the errno of the error name (message in
 * *ret_message).
 */
#define daemon_call(c, bdf, member, ret, ret_message, ...)                                   \
        cli_bus_call(c, NULL, bdf, AMDSMI_BUS_IFACE_PARTITION, member,                       \
                     (c)->timeout_ms + 10 * 60 * 1000, ret, ret_message, __VA_ARGS__)

/* Takes @key out of @o (a new reference, or NULL). */
static json_object *take_key(json_object *o, const char *key) {
        json_object *v = NULL;

        if (!json_object_object_get_ex(o, key, &v))
                return NULL;
        json_object_get(v);
        json_object_object_del(o, key);
        return v;
}

/* Prints amdsmid's answer as the in-process change would have printed it and adds the GPU's
 * element to the document. */
static void daemon_entry(struct partition_run *run, size_t index, json_object *entry, int r) {
        struct cli *c = cli_of_report(run->report);
        json_object *diag = take_key(entry, PARTITION_REPLY_DIAGNOSTICS);
        json_object *pending = take_key(entry, PARTITION_REPLY_RELOAD_PENDING);
        json_object *covered = take_key(entry, PARTITION_REPLY_COVERED);
        json_object *lines = NULL;
        bool reported = false;

        if (c->format == OUTPUT_TABLE && json_object_object_get_ex(entry, "messages", &lines))
                for (size_t i = 0; i < json_object_array_length(lines); i++)
                        printf("%s\n", json_object_get_string(json_object_array_get_idx(lines, i)));
        for (size_t i = 0; diag && i < json_object_array_length(diag); i++) {
                const char *s = json_object_get_string(json_object_array_get_idx(diag, i));

                if (!s)
                        continue;
                /* the failure itself (not a warning, nor an indented detail) is the message
                 * of the document's result, as cli_fail() keeps it in-process */
                if (r < 0 && !reported && s[0] != ' ' && strncmp(s, "warning:", 8) != 0) {
                        cli_fail(c, r, "%s", s);
                        reported = true;
                } else
                        fprintf(stderr, "amdsmi: %s\n", s);
        }
        if (r < 0 && !reported)
                cli_fail(c, r, "GPU %zu: %s", index, strerror(-r));
        if (r < 0)
                partition_run_fail(run, r);
        if (pending && json_object_get_boolean(pending) && !c->report.dry_run)
                run->reload_pending = true;
        for (size_t i = 0; covered && i < json_object_array_length(covered); i++) {
                const char *s = json_object_get_string(json_object_array_get_idx(covered, i));

                if (s)
                        partition_cover(run, s, (int) index);
        }
        /* amdsmid numbers the GPUs as we do; the document's index is ours in any case */
        json_set(entry, "gpu", json_object_new_uint64(index));
        json_object_array_add(run->gpus, json_object_get(entry));
        json_object_put(diag);
        json_object_put(pending);
        json_object_put(covered);
}

/* The change of one GPU through amdsmid. @return 0 or a negative errno; *ret_abort when the
 * whole command stops (amdsmid refused the caller, as in-process changes refuse non-root). */
static int daemon_one(struct partition_run *run, size_t index, struct amdsmi_gpu *gpu,
                      bool reset, bool *ret_abort) {
        struct cli *c = cli_of_report(run->report);
        const char *bdf = amdsmi_gpu_get_bdf(gpu);
        const char *compute = compute_name(c->partition.compute) ?: "";
        const char *memory = memory_name(c->partition.memory) ?: "";
        uint64_t flags = (c->report.dry_run ? AMDSMI_BUS_FLAG_DRY_RUN : 0) |
                         (c->force ? AMDSMI_BUS_FLAG_FORCE : 0);
        _cleanup_free_ char *message = NULL;
        json_object *reply = NULL, *entry;
        int r;

        *ret_abort = false;
        /* a GPU an earlier hive-wide operation of this command covered: nothing runs for
         * it, and what is said about it comes from reads (as in-process) */
        if ((reset || c->partition.memory != AMDSMI_MEMORY_UNKNOWN) &&
            partition_covered_by(run, bdf) >= 0) {
                entry = partition_entry_new(index, gpu);
                if (!entry)
                        return partition_run_fail(run, cli_fail(c, -ENOMEM, "out of memory"));
                r = reset ? partition_reset_one(run, index, gpu, entry)
                          : partition_set_one(run, index, gpu, entry);
                partition_entry_result(entry, r < 0 ? r : 0);
                json_object_array_add(run->gpus, entry);
                return r;
        }

        if (reset && c->timeout_ms > 0)
                r = daemon_call(c, bdf, "ReloadDriverWithTimeout", &reply, &message, "ut",
                                c->timeout_ms, flags);
        else if (reset)
                r = daemon_call(c, bdf, "ReloadDriver", &reply, &message, "t", flags);
        else if (c->timeout_ms == 0 && c->partition.memory == AMDSMI_MEMORY_UNKNOWN)
                r = daemon_call(c, bdf, "SetComputeMode", &reply, &message, "st", compute, flags);
        else if (c->timeout_ms == 0 && c->partition.compute == AMDSMI_COMPUTE_UNKNOWN)
                r = daemon_call(c, bdf, "SetMemoryMode", &reply, &message, "st", memory, flags);
        else
                r = daemon_call(c, bdf, "SetModes", &reply, &message, "ssut", compute, memory,
                                c->timeout_ms, flags);

        if (reply && json_object_is_type(reply, json_type_object)) {
                daemon_entry(run, index, reply, r);
                json_object_put(reply);
                return r;
        }
        json_object_put(reply);
        if (r >= 0)
                r = -EBADMSG;
        if (r == -EACCES || r == -EPERM) {
                *ret_abort = true;
                return cli_fail(c, r, "%s", message ? message : strerror(-r));
        }
        /* no document (amdsmid failed before the change): what it said, and an element
         * without a plan */
        partition_run_fail(run, cli_fail(c, r, "GPU %zu: %s", index,
                                         message ? message : strerror(-r)));
        entry = partition_entry_new(index, gpu);
        if (entry) {
                partition_entry_result(entry, r);
                json_object_array_add(run->gpus, entry);
        }
        return r;
}

/* Starts a change and runs it for every selected GPU, in GPU order. @return 0, or the
 * failure that stopped the command (then nothing is left to free). */
static int run_each_gpu(struct cli *c, struct partition_run *run, bool reset) {
        int r = change_begin(c, run);

        if (r < 0) {
                partition_run_done(run);
                return r;
        }
        FOREACH_SELECTED_GPU(c, i, gpu) {
                json_object *entry;

                if (run->remote) {
                        bool stop;

                        r = daemon_one(run, i, gpu, reset, &stop);
                        if (stop) {
                                partition_run_done(run);
                                return r;
                        }
                        continue;
                }
                entry = partition_entry_new(i, gpu);
                if (!entry) {
                        partition_run_fail(run, cli_fail(c, -ENOMEM, "out of memory"));
                        break;
                }
                r = reset ? partition_reset_one(run, i, gpu, entry)
                          : partition_set_one(run, i, gpu, entry);
                partition_entry_result(entry, r < 0 ? r : 0);
                json_object_array_add(run->gpus, entry);
        }
        return 0;
}

static int change_end(struct partition_run *run) {
        int r = emit_change_document(run);

        partition_run_done(run);
        return r;
}

/* ---- set: compute and memory modes ----------------------------------------------------- */

int partition_cli_set(struct cli *c) {
        struct partition_run run = {};
        int r;

        if (c->partition.compute == AMDSMI_COMPUTE_UNKNOWN && c->partition.memory == AMDSMI_MEMORY_UNKNOWN)
                return cli_fail(c, -EINVAL, "nothing to change: give --compute MODE and/or "
                                            "--memory MODE");
        r = run_each_gpu(c, &run, false);
        if (r < 0)
                return r;
        if (run.result == 0 && run.reload_pending)
                cli_fail(c, -ERELOAD_REQUIRED,
                         "the memory mode request waits for a driver reload (amdsmi reset -g N "
                         "--reload-driver)");
        return change_end(&run);
}

int verb_partition_set(struct cli *c) {
        /* --memory alone works as set -M: the plan shows the compute mode the driver's AUTO
         * rule picks for every GPU of the hive */
        return partition_cli_set(c);
}

/* ---- reset --reload-driver -------------------------------------------------------------- */

int partition_cli_reset(struct cli *c) {
        struct partition_run run = {};
        int r;

        r = run_each_gpu(c, &run, true);
        if (r < 0)
                return r;
        /* the context describes the old driver instance now */
        if (!c->report.dry_run && amdsmi_ctx_enumerate(c->set.ctx) < 0)
                fprintf(stderr, "amdsmi: cannot enumerate the GPUs again after the reload\n");
        return change_end(&run);
}
