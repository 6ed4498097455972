/* SPDX-License-Identifier: MIT */
/*
 * Partition changes of one GPU and their part of the change document, shared by amdsmi(1)
 * and amdsmid (partition-json.h). The CLI runs them in-process under the per-GPU locks it
 * takes here; amdsmid runs them on a job's thread, whose GPU locks the job framework holds,
 * and collects what the CLI would print on standard error for its reply.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "documents.h"
#include "gpu-set.h"
#include "report.h"
#include "exit-codes.h"
#include "change.h"
#include "partition-json.h"

/* ---- helpers ---------------------------------------------------------------------------- */

const char *partition_compute_name(enum amdsmi_compute_mode m) {
        return m == AMDSMI_COMPUTE_UNKNOWN ? NULL : amdsmi_compute_mode_to_string(m);
}

const char *partition_memory_name(enum amdsmi_memory_mode m) {
        return m == AMDSMI_MEMORY_UNKNOWN ? NULL : amdsmi_memory_mode_to_string(m);
}

#define compute_name partition_compute_name
#define memory_name partition_memory_name

json_object *partition_compute_array(uint32_t mask) {
        json_object *a = json_object_new_array();

        for (int m = AMDSMI_COMPUTE_SPX; a && m <= AMDSMI_COMPUTE_CPX; m++)
                if (mask & AMDSMI_COMPUTE_MODE_BIT(m))
                        json_object_array_add(a, json_object_new_string(
                                                         amdsmi_compute_mode_to_string(m)));
        return a;
}

json_object *partition_memory_array(uint32_t mask) {
        json_object *a = json_object_new_array();

        for (int m = AMDSMI_MEMORY_NPS1; a && m <= AMDSMI_MEMORY_NPS8; m++)
                if (mask & AMDSMI_MEMORY_MODE_BIT(m) && strcmp(amdsmi_memory_mode_to_string(m),
                                                              "UNKNOWN") != 0)
                        json_object_array_add(a, json_object_new_string(
                                                         amdsmi_memory_mode_to_string(m)));
        return a;
}

static void compute_list(uint32_t mask, char *buf, size_t len) {
        if (mask == 0 || amdsmi_compute_mode_mask_to_string(mask, buf, len) < 0)
                snprintf(buf, len, "none");
}

static void memory_list(uint32_t mask, char *buf, size_t len) {
        if (mask == 0 || amdsmi_memory_mode_mask_to_string(mask, buf, len) < 0)
                snprintf(buf, len, "none");
}

static int gpu_index_of_bdf(const struct gpu_set *set, const char *bdf) {
        for (size_t i = 0; i < set->n_gpus; i++) {
                struct amdsmi_gpu *g = amdsmi_ctx_get_gpu(set->ctx, i);

                if (g && strcmp(amdsmi_gpu_get_bdf(g), bdf) == 0)
                        return (int) i;
        }
        return -1;
}

/* ---- the run ---------------------------------------------------------------------------- */

int partition_run_init(struct partition_run *run, struct report *report, const struct gpu_set *set,
                       const struct partition_change *ch) {
        *run = (struct partition_run){ .report = report, .set = set, .ch = *ch };
        run->max_covered = set->n_gpus + AMDSMI_PLAN_MAX_HIVE;
        run->gpus = json_object_new_array();
        run->covered = calloc(run->max_covered, sizeof(*run->covered));
        run->covered_by = calloc(run->max_covered, sizeof(int));
        if (!run->gpus || !run->covered || !run->covered_by) {
                partition_run_done(run);
                return -ENOMEM;
        }
        return 0;
}

void partition_run_done(struct partition_run *run) {
        json_object_put(run->gpus);
        json_object_put(run->diagnostics);
        free(run->covered);
        free(run->covered_by);
        free(run->last_error);
        run->gpus = run->diagnostics = NULL;
        run->covered = NULL;
        run->covered_by = NULL;
        run->last_error = NULL;
}

int partition_run_fail(struct partition_run *run, int r) {
        if (run->result == 0)
                run->result = r;
        return r;
}

static void collect(struct partition_run *run, const char *line) {
        if (!run->diagnostics)
                run->diagnostics = json_object_new_array();
        if (run->diagnostics)
                json_object_array_add(run->diagnostics, json_object_new_string(line));
}

int partition_fail(struct partition_run *run, int r, const char *format, ...) {
        char *msg = NULL;
        va_list ap;

        va_start(ap, format);
        if (vasprintf(&msg, format, ap) < 0)
                msg = NULL;
        va_end(ap);
        report_fail(run->report, r, "%s", msg ? msg : strerror(r < 0 ? -r : r));
        if (msg) {
                if (run->in_daemon)
                        collect(run, msg);
                free(run->last_error);
                run->last_error = msg;
        }
        return r;
}

void partition_diag(struct partition_run *run, const char *format, ...) {
        char *msg = NULL;
        va_list ap;

        va_start(ap, format);
        if (vasprintf(&msg, format, ap) < 0)
                msg = NULL;
        va_end(ap);
        if (!msg)
                return;
        if (run->in_daemon)
                collect(run, msg);
        else
                report_note(run->report, "%s", msg);
        free(msg);
}

int partition_covered_by(struct partition_run *run, const char *bdf) {
        for (size_t i = 0; i < run->n_covered; i++)
                if (strcmp(run->covered[i], bdf) == 0)
                        return run->covered_by[i];
        return -1;
}

void partition_cover(struct partition_run *run, const char *bdf, int by) {
        if (partition_covered_by(run, bdf) >= 0 || run->n_covered >= run->max_covered)
                return;
        snprintf(run->covered[run->n_covered], sizeof(run->covered[0]), "%s", bdf);
        run->covered_by[run->n_covered++] = by;
}

/* One partition operation for change_run(): what it changes, and what the library said. */
enum partition_op { PARTITION_OP_COMPUTE, PARTITION_OP_MEMORY, PARTITION_OP_RELOAD };

struct partition_apply {
        struct partition_run *run;
        struct amdsmi_gpu *gpu;
        enum partition_op op;
        uint64_t flags;
        bool started; /* the locks were taken: @ch says what the library did */
        struct amdsmi_partition_change ch;
};

static int apply_op(void *userdata) {
        struct partition_apply *a = userdata;
        const struct partition_change *pc = &a->run->ch;

        a->started = true;
        switch (a->op) {
        case PARTITION_OP_COMPUTE:
                return amdsmi_gpu_set_compute_mode(a->gpu, pc->compute, a->flags, pc->timeout_ms,
                                                   &a->ch);
        case PARTITION_OP_MEMORY:
                return amdsmi_gpu_set_memory_mode(a->gpu, pc->memory, a->flags, &a->ch);
        case PARTITION_OP_RELOAD:
                return amdsmi_gpu_reload_driver(a->gpu, a->flags, pc->timeout_ms, &a->ch);
        }
        return -EINVAL;
}

static int apply_lock_failed(void *userdata, int r, const char *message) {
        struct partition_apply *a = userdata;

        return partition_run_fail(a->run, partition_fail(a->run, r, "%s", message));
}

/*
 * Runs @a under the change locks of @bdfs (amdsmid's job holds them already; a dry run takes
 * none). @return what the library returned, with a->started set; or the lock's failure
 * (reported), with a->started false.
 */
static int run_op(struct partition_apply *a, const char *const *bdfs, size_t n) {
        a->ch = (struct amdsmi_partition_change){ .size = sizeof(a->ch) };
        return change_run(&(struct change_lock){ .bdfs = bdfs,
                                                 .n = n,
                                                 .held = a->run->report->dry_run ||
                                                         a->run->in_daemon },
                          &(const struct change_ops){ .apply = apply_op,
                                                      .lock_failed = apply_lock_failed },
                          a);
}

/* ---- amdsmi partition: a GPU's modes and partitions ------------------------------------ */

static json_object *share_object(const struct amdsmi_engine_share *s) {
        json_object *o = json_object_new_object();

        if (!o)
                return NULL;
        json_set(o, "num_inst", json_u64_or_null(s->num_inst));
        json_set(o, "num_shared", json_u64_or_null(s->num_shared));
        return o;
}

static json_object *partition_entry(struct amdsmi_partition *p, unsigned pi) {
        json_object *e = json_object_new_object();
        int minor;

        if (!e)
                return NULL;
        json_set(e, "partition", json_object_new_uint64(pi));
        json_set(e, "xcc_count", json_object_new_uint64(amdsmi_partition_get_xcc_count(p)));
        json_set(e, "compute_units", json_object_new_uint64(amdsmi_partition_get_compute_units(p)));
        json_set(e, "memory_bytes", json_u64_or_null(amdsmi_partition_get_memory_bytes(p)));
        minor = amdsmi_partition_get_render_minor(p);
        json_set(e, "render_minor", minor < 0 ? NULL : json_object_new_int(minor));
        json_set(e, "kfd_gpu_id", json_object_new_uint64(amdsmi_partition_get_kfd_gpu_id(p)));
        return e;
}

json_object *partition_gpu(const struct doc_query *q, size_t index, struct amdsmi_gpu *gpu) {
        json_object *o = doc_gpu_new(index, gpu);
        enum amdsmi_compute_mode cm;
        enum amdsmi_memory_mode mm, pending;
        struct amdsmi_engine_shares es;
        uint32_t mask;
        uint64_t hive;
        int idx = (int) index, r;

        if (!o)
                return NULL;

        r = amdsmi_gpu_read_compute_mode(gpu, &cm);
        if (r < 0 && r != -ENODATA)
                report_field_error(q->report, idx, "compute_mode", r);
        json_set(o, "compute_mode", r < 0 ? NULL : json_string_or_null(partition_compute_name(cm)));

        r = amdsmi_gpu_read_memory_mode(gpu, &mm);
        if (r < 0 && r != -ENODATA)
                report_field_error(q->report, idx, "memory_mode", r);
        json_set(o, "memory_mode", r < 0 ? NULL : json_string_or_null(partition_memory_name(mm)));

        r = amdsmi_gpu_read_pending_memory_mode(gpu, &pending);
        if (r < 0 && r != -ENODATA && r != -EOPNOTSUPP)
                report_field_error(q->report, idx, "memory_pending", r);
        json_set(o, "memory_pending", r < 0 ? NULL : json_string_or_null(partition_memory_name(pending)));

        r = amdsmi_gpu_get_supported_compute_modes(gpu, &mask);
        if (r < 0 && r != -ENODATA)
                report_field_error(q->report, idx, "supported_compute_modes", r);
        json_set(o, "supported_compute_modes", r < 0 ? NULL : partition_compute_array(mask));

        r = amdsmi_gpu_read_available_compute_modes(gpu, &mask);
        if (r < 0 && r != -ENODATA)
                report_field_error(q->report, idx, "available_compute_modes", r);
        json_set(o, "available_compute_modes", r < 0 ? NULL : partition_compute_array(mask));

        r = amdsmi_gpu_read_available_memory_modes(gpu, &mask);
        if (r < 0 && r != -ENODATA)
                report_field_error(q->report, idx, "available_memory_modes", r);
        json_set(o, "available_memory_modes", r < 0 ? NULL : partition_memory_array(mask));
        json_set(o, "memory_changeable", r < 0 ? NULL : json_object_new_boolean(r > 0));

        hive = amdsmi_gpu_get_hive_id(gpu);
        json_set(o, "hive_id", hive == 0 ? NULL : json_hex(hive, 16));

        /* gim hosts: the VFs a change tears down and makes again (the plan knows them). */
        if (amdsmi_gpu_get_driver(gpu) == AMDSMI_DRIVER_GIM) {
                struct amdsmi_partition_plan plan = { .size = sizeof(plan) };

                r = amdsmi_gpu_plan_partition(gpu, AMDSMI_COMPUTE_UNKNOWN, AMDSMI_MEMORY_UNKNOWN,
                                              0, &plan);
                if (r < 0)
                        report_field_error(q->report, idx, "vf_count", r);
                json_set(o, "vf_count", r < 0 ? NULL : json_object_new_uint64(plan.vfs_before));
        } else
                json_set(o, "vf_count", NULL);

        r = amdsmi_gpu_read_engine_shares(gpu, &es);
        if (r < 0 && r != -ENODATA)
                report_field_error(q->report, idx, "engine_shares", r);
        if (r < 0)
                json_set(o, "engine_shares", NULL);
        else {
                json_object *s = json_object_new_object();

                if (s) {
                        json_set(s, "xcc", share_object(&es.xcc));
                        json_set(s, "dma", share_object(&es.dma));
                        json_set(s, "dec", share_object(&es.dec));
                        json_set(s, "jpeg", share_object(&es.jpeg));
                }
                json_set(o, "engine_shares", s);
        }

        json_set(o, "partition_count", gpu_partition_count(q->report, idx, gpu));
        json_set(o, "partitions", doc_partitions(q, index, gpu, partition_entry));
        return o;
}

/* ---- the document's parts --------------------------------------------------------------- */

static json_object *plan_object(const struct amdsmi_partition_plan *p) {
        json_object *o = json_object_new_object(), *notes, *minors, *bdfs;

        if (!o)
                return NULL;
        json_set(o, "reason",
                 json_string_or_null(amdsmi_plan_reason_to_string(p->reason)));
        notes = json_object_new_array();
        for (int n = AMDSMI_PLAN_NO_CHANGE; notes && n <= AMDSMI_PLAN_MEMORY_FIRST; n++)
                if (p->notes & (1u << n) && amdsmi_plan_reason_to_string(n))
                        json_object_array_add(notes, json_object_new_string(
                                                             amdsmi_plan_reason_to_string(n)));
        json_set(o, "notes", notes);
        json_set(o, "rules", json_string_or_null(amdsmi_partition_rules_to_string(p->rules)));
        json_set(o, "compute_before", json_string_or_null(compute_name(p->compute_before)));
        json_set(o, "compute_after", json_string_or_null(compute_name(p->compute_after)));
        json_set(o, "memory_before", json_string_or_null(memory_name(p->memory_before)));
        json_set(o, "memory_after", json_string_or_null(memory_name(p->memory_after)));
        json_set(o, "supported_compute_modes", partition_compute_array(p->supported_compute));
        json_set(o, "valid_compute_modes", partition_compute_array(p->valid_compute));
        json_set(o, "partitions_before", json_object_new_uint64(p->partitions_before));
        json_set(o, "partitions_after", json_object_new_uint64(p->partitions_after));
        json_set(o, "xcc_per_partition_after", json_object_new_uint64(p->xcc_per_partition_after));
        json_set(o, "memory_per_partition_after_bytes",
                 json_u64_or_null(p->memory_per_partition_after));
        minors = json_object_new_array();
        for (unsigned i = 0; minors && i < p->n_invalidated_render_minors; i++)
                json_object_array_add(minors,
                                      json_object_new_int(p->invalidated_render_minors[i]));
        json_set(o, "invalidated_render_minors", minors);
        bdfs = json_object_new_array();
        for (unsigned i = 0; bdfs && i < p->n_affected_bdfs; i++)
                json_object_array_add(bdfs, json_object_new_string(p->affected_bdfs[i]));
        json_set(o, "affected_bdfs", bdfs);
        json_set(o, "vfs_before", json_object_new_uint64(p->vfs_before));
        json_set(o, "vfs_after", json_object_new_uint64(p->vfs_after));
        return o;
}

static json_object *report_object(const char *operation, const struct amdsmi_partition_change *ch) {
        json_object *o = json_object_new_object(), *bl, *gpus;

        if (!o)
                return NULL;
        json_set(o, "operation", json_object_new_string(operation));
        json_set(o, "stage", json_string_or_null(amdsmi_change_stage_to_string(ch->stage)));
        json_set(o, "error", report_errno_json(ch->error));
        json_set(o, "message", json_object_new_string(ch->message));
        json_set(o, "changed", json_object_new_boolean(ch->changed));
        json_set(o, "reload_required", json_object_new_boolean(ch->reload_required));
        json_set(o, "rolled_back", json_object_new_boolean(ch->rolled_back));
        json_set(o, "rollback_error", report_errno_json(ch->rollback_error));
        json_set(o, "kfd_lost", json_object_new_boolean(ch->kfd_lost));
        json_set(o, "compute_before", json_string_or_null(compute_name(ch->compute_before)));
        json_set(o, "compute_after", json_string_or_null(compute_name(ch->compute_after)));
        json_set(o, "memory_before", json_string_or_null(memory_name(ch->memory_before)));
        json_set(o, "memory_after", json_string_or_null(memory_name(ch->memory_after)));
        json_set(o, "memory_pending", json_string_or_null(memory_name(ch->memory_pending)));
        json_set(o, "partitions_before", json_object_new_uint64(ch->partitions_before));
        json_set(o, "partitions_after", json_object_new_uint64(ch->partitions_after));
        json_set(o, "vfs_before", json_object_new_uint64(ch->vfs_before));
        json_set(o, "vfs_after", json_object_new_uint64(ch->vfs_after));
        json_set(o, "elapsed_ms", json_object_new_uint64(ch->elapsed_ms));
        bl = json_object_new_array();
        for (unsigned i = 0; bl && i < ch->n_blockers && i < AMDSMI_CHANGE_MAX_PROCESSES; i++) {
                const struct amdsmi_kfd_process *p = &ch->blockers[i];
                json_object *e = json_object_new_object();

                if (!e)
                        break;
                json_set(e, "pid", json_object_new_int(p->pid));
                json_set(e, "comm", p->comm[0] ? json_object_new_string(p->comm) : NULL);
                json_set(e, "bdf", json_object_new_string(p->bdf));
                json_set(e, "vram_bytes", json_u64_or_null(p->vram_bytes));
                json_object_array_add(bl, e);
        }
        json_set(o, "blockers", bl);
        json_set(o, "n_blockers", json_object_new_uint64(ch->n_blockers));
        gpus = json_object_new_array();
        for (unsigned i = 0; gpus && i < ch->n_gpus && i < AMDSMI_PLAN_MAX_HIVE; i++) {
                const struct amdsmi_gpu_modes *m = &ch->gpus[i];
                json_object *e = json_object_new_object();

                if (!e)
                        break;
                json_set(e, "bdf", json_object_new_string(m->bdf));
                json_set(e, "error", report_errno_json(m->error));
                json_set(e, "compute_mode",
                         m->error ? NULL : json_string_or_null(compute_name(m->compute)));
                json_set(e, "memory_mode",
                         m->error ? NULL : json_string_or_null(memory_name(m->memory)));
                json_set(e, "partitions", m->error ? NULL : json_object_new_uint64(m->partitions));
                json_object_array_add(gpus, e);
        }
        json_set(o, "gpus", gpus);
        return o;
}

/* What the library reported about a failure: its message, who blocks, the rollback. */
static void report_failure(struct partition_run *run, int index, int r,
                           const struct amdsmi_partition_change *ch, const char *what) {
        partition_fail(run, r, "GPU %d: %s failed: %s", index, what,
                       ch->message[0] ? ch->message : strerror(-r));
        for (unsigned i = 0; i < ch->n_blockers && i < AMDSMI_CHANGE_MAX_PROCESSES; i++) {
                const struct amdsmi_kfd_process *p = &ch->blockers[i];
                char vram[32] = "N/A";

                if (p->vram_bytes != AMDSMI_NA)
                        snprintf(vram, sizeof(vram), "%" PRIu64 " MiB", p->vram_bytes >> 20);
                partition_diag(run, "  PID %d (%s) uses GPU %s, VRAM %s", p->pid,
                               p->comm[0] ? p->comm : "?", p->bdf, vram);
        }
        if (ch->n_blockers > AMDSMI_CHANGE_MAX_PROCESSES)
                partition_diag(run, "  ... and %u more processes",
                               ch->n_blockers - AMDSMI_CHANGE_MAX_PROCESSES);
        if (ch->rolled_back)
                partition_diag(run, "  the previous mode %s was restored",
                               compute_name(ch->compute_before) ? compute_name(ch->compute_before)
                                                                : "");
        else if (ch->rollback_error)
                partition_diag(run, "  restoring the previous mode failed too: %s",
                               strerror(ch->rollback_error < 0 ? -ch->rollback_error
                                                               : ch->rollback_error));
        if (ch->kfd_lost)
                partition_diag(run,
                               "  the GPU has no KFD nodes now: amdsmi reset -g %d "
                               "--reload-driver brings them back",
                               index);
        partition_run_fail(run, r);
}

json_object *partition_entry_new(size_t index, struct amdsmi_gpu *gpu) {
        json_object *e = json_object_new_object();

        if (!e)
                return NULL;
        json_set(e, "gpu", json_object_new_uint64(index));
        json_set(e, "bdf", json_object_new_string(amdsmi_gpu_get_bdf(gpu)));
        json_set(e, "product", json_object_new_string(amdsmi_gpu_get_product(gpu)));
        json_set(e, "plan", NULL);
        json_set(e, "reports", json_object_new_array());
        json_set(e, "same_operation_as", NULL);
        json_set(e, "result", NULL);
        json_set(e, "messages", json_object_new_array());
        return e;
}

void partition_entry_result(json_object *e, int r) {
        json_set(e, "result", report_errno_json(r));
}

char *partition_entry_summary(json_object *entry, bool reload) {
        json_object *lines = NULL;
        const char *s;
        size_t n;

        if (!json_object_object_get_ex(entry, "messages", &lines) ||
            !json_object_is_type(lines, json_type_array))
                return NULL;
        n = json_object_array_length(lines);
        if (n == 0)
                return NULL;
        s = json_object_get_string(json_object_array_get_idx(lines, reload ? 0 : n - 1));
        if (!s)
                return NULL;
        s += strspn(s, " ");
        return strdup(s);
}

/* The reason of an invalid plan as an errno and a message with the valid modes. */
static int plan_error(struct partition_run *run, int index, struct amdsmi_gpu *gpu,
                      const struct amdsmi_partition_plan *p) {
        const char *bdf = amdsmi_gpu_get_bdf(gpu), *product = amdsmi_gpu_get_product(gpu);
        char list[128];
        uint32_t mask = 0;

        switch (p->reason) {
        case AMDSMI_PLAN_OK:
                break;
        case AMDSMI_PLAN_NOT_SUPPORTED:
                return partition_fail(run, -EOPNOTSUPP, "GPU %d (%s, %s) has no partition support",
                                      index, bdf, product);
        case AMDSMI_PLAN_NOT_SWITCHABLE:
                return partition_fail(run, -EOPNOTSUPP,
                                      "GPU %d (%s, %s) is an SR-IOV VF: its partition modes are "
                                      "set on the host",
                                      index, bdf, product);
        case AMDSMI_PLAN_COMPUTE_NOT_SUPPORTED:
                compute_list(p->supported_compute, list, sizeof(list));
                return partition_fail(run, -EOPNOTSUPP,
                                      "GPU %d (%s, %s) does not support compute mode %s "
                                      "(supported: %s)",
                                      index, bdf, product, compute_name(p->compute_after), list);
        case AMDSMI_PLAN_MEMORY_NOT_CHANGEABLE:
                return partition_fail(run, -EOPNOTSUPP,
                                      "GPU %d (%s, %s) has one memory mode only (%s): it cannot "
                                      "be changed",
                                      index, bdf, product,
                                      memory_name(p->memory_before) ? memory_name(p->memory_before)
                                                                    : "unknown");
        case AMDSMI_PLAN_MEMORY_NOT_SUPPORTED:
                if (amdsmi_gpu_read_available_memory_modes(gpu, &mask) < 0)
                        mask = 0;
                memory_list(mask, list, sizeof(list));
                return partition_fail(run, -EOPNOTSUPP,
                                      "GPU %d (%s, %s) does not support memory mode %s "
                                      "(available: %s)",
                                      index, bdf, product, memory_name(p->memory_after), list);
        case AMDSMI_PLAN_INCOMPATIBLE:
                compute_list(p->valid_compute, list, sizeof(list));
                return partition_fail(run, -ERANGE,
                                      "GPU %d (%s, %s): compute mode %s is not valid under "
                                      "memory mode %s (valid: %s)",
                                      index, bdf, product, compute_name(p->compute_after),
                                      memory_name(p->memory_after) ? memory_name(p->memory_after)
                                                                   : "unknown",
                                      list);
        case AMDSMI_PLAN_NO_PATH:
                return partition_fail(run, -ERANGE,
                                      "GPU %d (%s, %s): gim changes one mode at a time and both "
                                      "orders pass a pair it refuses (%s/%s or %s/%s): change "
                                      "through an intermediate mode",
                                      index, bdf, product, compute_name(p->compute_after),
                                      memory_name(p->memory_before),
                                      compute_name(p->compute_before),
                                      memory_name(p->memory_after));
        default:
                return partition_fail(run, -EINVAL, "GPU %d (%s): invalid plan (%s)", index, bdf,
                                      amdsmi_plan_reason_to_string(p->reason));
        }
        return 0;
}

/* A memory change without --compute: at the reload the driver picks each hive GPU's compute
 * mode by its AUTO rule. Says so for @gpu and for every other GPU of the hive it changes. */
static void say_auto_modes(struct partition_run *run, json_object *entry, struct amdsmi_gpu *gpu,
                           const struct amdsmi_partition_plan *p) {
        const char *memory = memory_name(p->memory_after) ?: "N/A";

        if (amdsmi_gpu_get_driver(gpu) == AMDSMI_DRIVER_GIM)
                return; /* gim keeps the compute mode; no AUTO pick */
        if (p->compute_after != p->compute_before)
                report_say(run->report, entry,
                           "  compute %s -> %s: under %s the driver picks %s at the reload (its "
                           "AUTO rule); give --compute to choose another",
                           compute_name(p->compute_before) ?: "N/A",
                           compute_name(p->compute_after) ?: "N/A", memory,
                           compute_name(p->compute_after) ?: "N/A");
        for (unsigned i = 0; i < p->n_affected_bdfs; i++) {
                struct amdsmi_partition_plan other = { .size = sizeof(other) };
                int k = gpu_index_of_bdf(run->set, p->affected_bdfs[i]);
                struct amdsmi_gpu *g;

                if (k < 0 || strcmp(p->affected_bdfs[i], amdsmi_gpu_get_bdf(gpu)) == 0)
                        continue;
                g = amdsmi_ctx_get_gpu(run->set->ctx, (size_t) k);
                if (!g || amdsmi_gpu_plan_partition(g, AMDSMI_COMPUTE_UNKNOWN, p->memory_after, 0,
                                                    &other) < 0 ||
                    other.compute_after == other.compute_before)
                        continue;
                report_say(run->report, entry,
                           "  GPU %d (%s): compute %s -> %s at the reload (AUTO rule under %s)",
                           k, p->affected_bdfs[i], compute_name(other.compute_before) ?: "N/A",
                           compute_name(other.compute_after) ?: "N/A", memory);
        }
}

/* "before -> after" lines of a plan. */
static void say_plan(struct partition_run *run, json_object *entry, int index,
                     struct amdsmi_gpu *gpu, const struct amdsmi_partition_plan *p) {
        char minors[128] = "", mem[32] = "N/A";
        size_t n = 0;

        report_say(run->report, entry, "GPU %d (%s, %s): compute %s -> %s, memory %s -> %s%s", index,
                amdsmi_gpu_get_bdf(gpu), amdsmi_gpu_get_product(gpu),
                compute_name(p->compute_before) ?: "N/A", compute_name(p->compute_after) ?: "N/A",
                memory_name(p->memory_before) ?: "N/A", memory_name(p->memory_after) ?: "N/A",
                p->notes & (1u << AMDSMI_PLAN_NO_CHANGE) ? " (no change)" : "");
        if (p->memory_per_partition_after != AMDSMI_NA)
                snprintf(mem, sizeof(mem), "%" PRIu64 " MiB", p->memory_per_partition_after >> 20);
        if (p->partitions_after > 0)
                report_say(run->report, entry,
                        "  partitions %u -> %u, %u XCC%s per partition, memory %s per partition",
                        p->partitions_before, p->partitions_after, p->xcc_per_partition_after,
                        p->xcc_per_partition_after == 1 ? "" : "s", mem);
        for (unsigned i = 0; i < p->n_invalidated_render_minors && n < sizeof(minors); i++)
                n += (size_t) snprintf(minors + n, sizeof(minors) - n, "%srenderD%d",
                                       i ? " " : "", p->invalidated_render_minors[i]);
        if (n > 0)
                report_say(run->report, entry, "  render nodes that stop existing: %s", minors);
        if (p->n_affected_bdfs > 1) {
                char bdfs[AMDSMI_PLAN_MAX_HIVE * 17] = "";

                n = 0;
                for (unsigned i = 0; i < p->n_affected_bdfs && n < sizeof(bdfs); i++)
                        n += (size_t) snprintf(bdfs + n, sizeof(bdfs) - n, "%s%s", i ? " " : "",
                                               p->affected_bdfs[i]);
                report_say(run->report, entry, "  GPUs affected: %s", bdfs);
        }
        if (p->vfs_before || p->vfs_after)
                report_say(run->report, entry, "  VFs %u -> %u (torn down and made again)", p->vfs_before,
                        p->vfs_after);
        if (run->ch.compute == AMDSMI_COMPUTE_UNKNOWN && p->memory_after != p->memory_before)
                say_auto_modes(run, entry, gpu, p);
}

/* A change that would run here although amdsmid makes them (see struct partition_run). */
static int refuse_local(struct partition_run *run, size_t index) {
        return partition_run_fail(run, partition_fail(run, -EPROTO,
                                                      "GPU %zu: the change belongs to amdsmid",
                                                      index));
}

/* ---- set: compute and memory modes ----------------------------------------------------- */

static uint64_t change_flags(const struct partition_run *run) {
        return (run->report->dry_run ? AMDSMI_CHANGE_DRY_RUN : 0) | (run->ch.force ? AMDSMI_CHANGE_FORCE : 0);
}

/* The memory request of @gpu's hive. @return 1 when it waits for a reload, 0, or < 0. */
static int do_memory(struct partition_run *run, size_t index, struct amdsmi_gpu *gpu,
                     json_object *entry, const struct amdsmi_partition_plan *p) {
        struct partition_apply a = { .run = run,
                                     .gpu = gpu,
                                     .op = PARTITION_OP_MEMORY,
                                     .flags = change_flags(run) };
        const char *bdfs[AMDSMI_PLAN_MAX_HIVE];
        json_object *reports = NULL;
        int r;

        if (run->remote)
                return refuse_local(run, index);
        for (unsigned i = 0; i < p->n_affected_bdfs; i++)
                bdfs[i] = p->affected_bdfs[i];

        if (p->n_affected_bdfs > 1) {
                char list[AMDSMI_PLAN_MAX_HIVE * 24] = "";
                size_t n = 0;

                for (unsigned i = 0; i < p->n_affected_bdfs && n < sizeof(list); i++) {
                        int k = gpu_index_of_bdf(run->set, bdfs[i]);

                        n += (size_t) snprintf(list + n, sizeof(list) - n, "%s%d (%s)",
                                               i ? ", " : "", k, bdfs[i]);
                }
                partition_diag(run,
                               "warning: memory mode %s applies to the whole XGMI hive: GPUs %s",
                               memory_name(p->memory_after), list);
        }

        r = run_op(&a, bdfs, p->n_affected_bdfs);
        if (!a.started)
                return r;
        if (json_object_object_get_ex(entry, "reports", &reports))
                json_object_array_add(reports, report_object("memory", &a.ch));
        if (r < 0) {
                report_failure(run, (int) index, r, &a.ch, "the memory mode request");
                return r;
        }
        for (unsigned i = 0; i < p->n_affected_bdfs; i++)
                partition_cover(run, bdfs[i], (int) index);
        return r > 0 ? 1 : 0;
}

static int do_compute(struct partition_run *run, size_t index, struct amdsmi_gpu *gpu,
                      json_object *entry) {
        struct partition_apply a = { .run = run,
                                     .gpu = gpu,
                                     .op = PARTITION_OP_COMPUTE,
                                     .flags = change_flags(run) };
        const char *bdf = amdsmi_gpu_get_bdf(gpu);
        const struct amdsmi_partition_change *ch = &a.ch;
        json_object *reports = NULL;
        int r;

        if (run->remote)
                return refuse_local(run, index);
        r = run_op(&a, &bdf, 1);
        if (!a.started)
                return r;
        if (json_object_object_get_ex(entry, "reports", &reports))
                json_object_array_add(reports, report_object("compute", ch));
        if (r < 0) {
                report_failure(run, (int) index, r, ch, "the compute mode switch");
                return r;
        }
        if (run->report->dry_run)
                report_say(run->report, entry, "  dry run: the switch to %s is possible now",
                        compute_name(run->ch.compute));
        else if (ch->changed)
                report_say(run->report, entry, "  done: %s with %u partition%s (%u ms)",
                        compute_name(ch->compute_after) ?: "N/A", ch->partitions_after,
                        ch->partitions_after == 1 ? "" : "s", ch->elapsed_ms);
        return 0;
}

/* What set_one() learnt before the change, for the history. */
struct set_info {
        bool planned;
        struct amdsmi_partition_plan plan;
        enum amdsmi_memory_mode pending;
};

static int set_one(struct partition_run *run, size_t index, struct amdsmi_gpu *gpu,
                   json_object *entry, struct set_info *info) {
        struct amdsmi_partition_plan *p = &info->plan;
        enum amdsmi_memory_mode pending = AMDSMI_MEMORY_UNKNOWN;
        bool memory_change, compute_change, gim;
        char why[256];
        int r, by;

        /* a GPU in reset or without a driver: refused before anything is read or planned */
        r = gpu_state_refusal(index, gpu, why, sizeof(why));
        if (r < 0)
                return partition_run_fail(run, partition_fail(run, r, "%s", why));

        *p = (struct amdsmi_partition_plan){ .size = sizeof(*p) };
        r = amdsmi_gpu_plan_partition(gpu, run->ch.compute, run->ch.memory, 0, p);
        if (r < 0)
                return partition_run_fail(run, partition_fail(run, r,
                                                              "GPU %zu: cannot plan the change: "
                                                              "%s",
                                                              index, strerror(-r)));
        info->planned = true;
        if (amdsmi_gpu_read_pending_memory_mode(gpu, &pending) < 0)
                pending = AMDSMI_MEMORY_UNKNOWN;
        info->pending = pending;
        gim = amdsmi_gpu_get_driver(gpu) == AMDSMI_DRIVER_GIM;
        json_set(entry, "plan", plan_object(p));
        say_plan(run, entry, (int) index, gpu, p);
        r = plan_error(run, (int) index, gpu, p);
        if (r < 0)
                return partition_run_fail(run, r);

        if (gim && p->vfs_before > 0 && !run->ch.force && !(p->notes & (1u << AMDSMI_PLAN_NO_CHANGE)))
                return partition_run_fail(
                        run, partition_fail(run, -EBUSY,
                                            "GPU %zu (%s): the change tears down its %u VFs "
                                            "(stop their VMs first); give --force to do it",
                                            index, amdsmi_gpu_get_bdf(gpu), p->vfs_before));

        memory_change = run->ch.memory != AMDSMI_MEMORY_UNKNOWN &&
                        (p->memory_after != p->memory_before ||
                         (pending != AMDSMI_MEMORY_UNKNOWN && pending != run->ch.memory));
        compute_change = run->ch.compute != AMDSMI_COMPUTE_UNKNOWN &&
                         p->compute_after != p->compute_before;

        if (memory_change) {
                by = partition_covered_by(run, amdsmi_gpu_get_bdf(gpu));
                if (by >= 0) {
                        json_set(entry, "same_operation_as", json_object_new_int(by));
                        report_say(run->report, entry, "  memory mode %s: requested with GPU %d (same hive)",
                                memory_name(run->ch.memory), by);
                        r = 1;
                } else {
                        r = do_memory(run, index, gpu, entry, p);
                        if (r < 0)
                                return r;
                }
                if (r > 0) {
                        /* bare metal: waits for the reload; the driver picks the compute
                         * mode then */
                        if (!run->report->dry_run)
                                run->reload_pending = true;
                        report_say(run->report, entry,
                                "  %s memory mode %s %s for a driver reload of the hive; next: "
                                "amdsmi reset -g %zu --reload-driver",
                                run->report->dry_run ? "dry run: the" : "the", memory_name(run->ch.memory),
                                run->report->dry_run ? "would wait" : "waits", index);
                        if (run->ch.compute != AMDSMI_COMPUTE_UNKNOWN &&
                            p->notes & (1u << AMDSMI_PLAN_COMPUTE_AFTER_RELOAD))
                                report_say(run->report, entry,
                                        "  the driver picks the compute mode at the reload; "
                                        "then: amdsmi partition set -g %zu --compute %s",
                                        index, compute_name(run->ch.compute));
                        else if (run->ch.compute == AMDSMI_COMPUTE_UNKNOWN &&
                                 p->notes & (1u << AMDSMI_PLAN_COMPUTE_AFTER_RELOAD))
                                report_say(run->report, entry,
                                        "  the driver picks the compute mode for %s at the "
                                        "reload (not %s)",
                                        memory_name(run->ch.memory), compute_name(p->compute_before));
                        return 0;
                }
                if (!run->report->dry_run)
                        report_say(run->report, entry, "  done: memory mode %s", memory_name(run->ch.memory));
        }
        if (compute_change)
                return do_compute(run, index, gpu, entry);
        if (!memory_change)
                report_say(run->report, entry, "  nothing to do: already %s / %s",
                        compute_name(p->compute_before) ?: "N/A",
                        memory_name(p->memory_before) ?: "N/A");
        return 0;
}

static bool entry_covered(json_object *entry) {
        json_object *v = NULL;

        return json_object_object_get_ex(entry, "same_operation_as", &v) && v;
}

static char *record_message(struct partition_run *run, json_object *entry, int r, bool reload) {
        if (r < 0)
                return strdup(run->last_error ? run->last_error : strerror(-r));
        return partition_entry_summary(entry, reload);
}

int partition_set_one(struct partition_run *run, size_t index, struct amdsmi_gpu *gpu,
                      json_object *entry) {
        struct set_info info = { .pending = AMDSMI_MEMORY_UNKNOWN };
        const char *bdfs[AMDSMI_PLAN_MAX_HIVE] = { amdsmi_gpu_get_bdf(gpu) };
        const char *change, *old_value, *new_value;
        char old_buf[32], new_buf[32];
        enum amdsmi_memory_mode mem_before;
        _cleanup_free_ char *message = NULL;
        size_t n = 1;
        int r;

        r = set_one(run, index, gpu, entry, &info);
        if (!run->record || run->report->dry_run || entry_covered(entry))
                return r;

        mem_before = info.pending != AMDSMI_MEMORY_UNKNOWN ? info.pending
                                                           : info.plan.memory_before;
        if (run->ch.memory != AMDSMI_MEMORY_UNKNOWN && info.planned && info.plan.n_affected_bdfs > 0) {
                n = 0;
                for (unsigned i = 0; i < info.plan.n_affected_bdfs; i++)
                        bdfs[n++] = info.plan.affected_bdfs[i];
        }
        if (run->ch.compute != AMDSMI_COMPUTE_UNKNOWN && run->ch.memory != AMDSMI_MEMORY_UNKNOWN) {
                change = PARTITION_CHANGE_MODES;
                snprintf(old_buf, sizeof(old_buf), "%s/%s",
                         info.planned ? compute_name(info.plan.compute_before) ?: "" : "",
                         info.planned ? memory_name(mem_before) ?: "" : "");
                snprintf(new_buf, sizeof(new_buf), "%s/%s", compute_name(run->ch.compute),
                         memory_name(run->ch.memory));
                old_value = info.planned ? old_buf : NULL;
                new_value = new_buf;
        } else if (run->ch.compute != AMDSMI_COMPUTE_UNKNOWN) {
                change = PARTITION_CHANGE_COMPUTE;
                old_value = info.planned ? compute_name(info.plan.compute_before) : NULL;
                new_value = compute_name(run->ch.compute);
        } else {
                change = PARTITION_CHANGE_MEMORY;
                old_value = info.planned ? memory_name(mem_before) : NULL;
                new_value = memory_name(run->ch.memory);
        }
        message = record_message(run, entry, r, false);
        run->record(run, change, bdfs, n, old_value, new_value, r, message);
        return r;
}

/* ---- reset --reload-driver -------------------------------------------------------------- */

static int reset_one(struct partition_run *run, size_t index, struct amdsmi_gpu *gpu,
                     json_object *entry, const char **bdfs, size_t *ret_n) {
        struct partition_apply a = { .run = run,
                                     .gpu = gpu,
                                     .op = PARTITION_OP_RELOAD,
                                     .flags = run->report->dry_run ? AMDSMI_CHANGE_DRY_RUN : 0 };
        const struct amdsmi_partition_change *ch = &a.ch;
        uint64_t hive = amdsmi_gpu_get_hive_id(gpu);
        /* a GPU a failed reload (or an admin) left without a driver is only bound */
        bool unbound = amdsmi_gpu_get_driver(gpu) == AMDSMI_DRIVER_NONE;
        json_object *reports = NULL;
        size_t n = 0;
        int r, by;

        by = partition_covered_by(run, amdsmi_gpu_get_bdf(gpu));
        if (by >= 0) {
                json_set(entry, "same_operation_as", json_object_new_int(by));
                report_say(run->report, entry, "GPU %zu (%s): reloaded with GPU %d (same hive)", index,
                        amdsmi_gpu_get_bdf(gpu), by);
                return 0;
        }
        if (run->remote)
                return refuse_local(run, index);

        bdfs[n++] = amdsmi_gpu_get_bdf(gpu);
        for (size_t i = 0; hive != 0 && i < run->set->n_gpus && n < AMDSMI_PLAN_MAX_HIVE; i++) {
                struct amdsmi_gpu *o = amdsmi_ctx_get_gpu(run->set->ctx, i);

                if (o && o != gpu && amdsmi_gpu_get_hive_id(o) == hive)
                        bdfs[n++] = amdsmi_gpu_get_bdf(o);
        }
        *ret_n = n;
        if (n > 1)
                partition_diag(run,
                               "warning: the driver reload applies to the whole XGMI hive: "
                               "%zu GPUs",
                               n);

        r = run_op(&a, bdfs, n);
        if (!a.started)
                return r;
        if (json_object_object_get_ex(entry, "reports", &reports))
                json_object_array_add(reports, report_object("reload", ch));
        for (size_t i = 0; i < n; i++)
                partition_cover(run, bdfs[i], (int) index);
        if (r < 0) {
                report_failure(run, (int) index, r, ch, "the driver reload");
                return r;
        }
        if (run->report->dry_run) {
                report_say(run->report, entry,
                        "GPU %zu (%s): dry run: the driver reload of %zu GPU%s is possible now",
                        index, amdsmi_gpu_get_bdf(gpu), n, n == 1 ? "" : "s");
                return 0;
        }
        if (unbound)
                report_say(run->report, entry, "GPU %zu (%s): bound to amdgpu (it had no driver) (%u ms)", index,
                        amdsmi_gpu_get_bdf(gpu), ch->elapsed_ms);
        else
                report_say(run->report, entry, "GPU %zu (%s): driver reloaded on %u GPU%s (%u ms)", index,
                        amdsmi_gpu_get_bdf(gpu), ch->n_gpus, ch->n_gpus == 1 ? "" : "s",
                        ch->elapsed_ms);
        for (unsigned i = 0; i < ch->n_gpus && i < AMDSMI_PLAN_MAX_HIVE; i++) {
                const struct amdsmi_gpu_modes *m = &ch->gpus[i];

                if (m->error)
                        report_say(run->report, entry, "  %s  did not come back: %s", m->bdf,
                                strerror(m->error < 0 ? -m->error : m->error));
                else
                        report_say(run->report, entry, "  %s  %s  %s  %u partition%s", m->bdf,
                                compute_name(m->compute) ?: "N/A",
                                memory_name(m->memory) ?: "N/A", m->partitions,
                                m->partitions == 1 ? "" : "s");
        }
        return 0;
}

int partition_reset_one(struct partition_run *run, size_t index, struct amdsmi_gpu *gpu,
                        json_object *entry) {
        const char *bdfs[AMDSMI_PLAN_MAX_HIVE];
        enum amdsmi_memory_mode before = AMDSMI_MEMORY_UNKNOWN, pending = AMDSMI_MEMORY_UNKNOWN;
        _cleanup_free_ char *message = NULL;
        bool record = run->record && !run->report->dry_run &&
                      partition_covered_by(run, amdsmi_gpu_get_bdf(gpu)) < 0;
        size_t n = 0;
        int r;

        if (record) {
                /* what the reload is to bring: the pending request, else the mode in force */
                if (amdsmi_gpu_read_memory_mode(gpu, &before) < 0)
                        before = AMDSMI_MEMORY_UNKNOWN;
                if (amdsmi_gpu_read_pending_memory_mode(gpu, &pending) < 0 ||
                    pending == AMDSMI_MEMORY_UNKNOWN)
                        pending = before;
        }
        r = reset_one(run, index, gpu, entry, bdfs, &n);
        if (!record || entry_covered(entry))
                return r;
        if (n == 0) {
                bdfs[0] = amdsmi_gpu_get_bdf(gpu);
                n = 1;
        }
        message = record_message(run, entry, r, true);
        run->record(run, PARTITION_CHANGE_RELOAD, bdfs, n, memory_name(before),
                    memory_name(pending), r, message);
        return r;
}
