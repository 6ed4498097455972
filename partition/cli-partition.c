/* SPDX-License-Identifier: MIT */
/*
 * The partition slice's part of amdsmi(1):
 *
 *   amdsmi partition [-g SEL]                     modes, what is available, the partitions
 *   amdsmi partition set -g SEL --compute MODE [--memory MODE] [--dry-run] [--force]
 *   amdsmi set -g SEL -C MODE | -M MODE [--dry-run] [--force]
 *   amdsmi reset -g SEL --reload-driver [--dry-run]
 *
 * Changes: plan first (amdsmi_gpu_plan_partition), refuse an invalid plan with the valid
 * modes, then take the per-GPU lock (lib/util/gpu-lock.h; every GPU of the hive for memory
 * requests and driver reloads, once per hive) and call the library. Until amdsmid exists a
 * change runs in-process and needs root.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "exit-codes.h"
#include "gpu-lock.h"

/* ---- helpers ---------------------------------------------------------------------------- */

static const char *compute_name(enum amdsmi_compute_mode m) {
        return m == AMDSMI_COMPUTE_UNKNOWN ? NULL : amdsmi_compute_mode_to_string(m);
}

static const char *memory_name(enum amdsmi_memory_mode m) {
        return m == AMDSMI_MEMORY_UNKNOWN ? NULL : amdsmi_memory_mode_to_string(m);
}

static json_object *compute_array(uint32_t mask) {
        json_object *a = json_object_new_array();

        for (int m = AMDSMI_COMPUTE_SPX; a && m <= AMDSMI_COMPUTE_CPX; m++)
                if (mask & AMDSMI_COMPUTE_MODE_BIT(m))
                        json_object_array_add(a, json_object_new_string(
                                                         amdsmi_compute_mode_to_string(m)));
        return a;
}

static json_object *memory_array(uint32_t mask) {
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

static int gpu_index_of_bdf(struct cli *c, const char *bdf) {
        for (size_t i = 0; i < c->n_gpus; i++) {
                struct amdsmi_gpu *g = amdsmi_ctx_get_gpu(c->ctx, i);

                if (g && strcmp(amdsmi_gpu_get_bdf(g), bdf) == 0)
                        return (int) i;
        }
        return -1;
}

/* ---- amdsmi partition ------------------------------------------------------------------- */

static json_object *share_object(const struct amdsmi_engine_share *s) {
        json_object *o = json_object_new_object();

        if (!o)
                return NULL;
        json_set(o, "num_inst", json_u64_or_null(s->num_inst));
        json_set(o, "num_shared", json_u64_or_null(s->num_shared));
        return o;
}

static json_object *partition_partitions(struct cli *c, size_t index, struct amdsmi_gpu *gpu) {
        size_t n = amdsmi_gpu_get_partition_count(gpu);
        json_object *a;

        if (amdsmi_gpu_get_partitions_error(gpu) < 0)
                return NULL; /* unknown, reported with partition_count */
        a = json_object_new_array();
        for (size_t k = 0; a && k < n; k++) {
                struct amdsmi_partition *p = amdsmi_gpu_get_partition(gpu, k);
                json_object *e;
                unsigned pi;
                int minor;

                if (!p)
                        continue;
                pi = amdsmi_partition_get_index(p);
                if (!select_match_partition(&c->matches[index], pi))
                        continue;
                e = json_object_new_object();
                if (!e)
                        break;
                json_set(e, "partition", json_object_new_uint64(pi));
                json_set(e, "xcc_count", json_object_new_uint64(amdsmi_partition_get_xcc_count(p)));
                json_set(e, "compute_units",
                         json_object_new_uint64(amdsmi_partition_get_compute_units(p)));
                json_set(e, "memory_bytes", json_u64_or_null(amdsmi_partition_get_memory_bytes(p)));
                minor = amdsmi_partition_get_render_minor(p);
                json_set(e, "render_minor", minor < 0 ? NULL : json_object_new_int(minor));
                json_set(e, "kfd_gpu_id",
                         json_object_new_uint64(amdsmi_partition_get_kfd_gpu_id(p)));
                json_object_array_add(a, e);
        }
        return a;
}

static json_object *partition_gpu(struct cli *c, size_t index, struct amdsmi_gpu *gpu) {
        json_object *o = json_object_new_object();
        enum amdsmi_compute_mode cm;
        enum amdsmi_memory_mode mm, pending;
        struct amdsmi_engine_shares es;
        uint32_t mask;
        uint64_t hive;
        int idx = (int) index, r;

        if (!o)
                return NULL;
        json_set(o, "gpu", json_object_new_uint64(index));
        json_set(o, "bdf", json_object_new_string(amdsmi_gpu_get_bdf(gpu)));
        json_set(o, "product", json_object_new_string(amdsmi_gpu_get_product(gpu)));
        json_set(o, "role",
                 json_object_new_string(amdsmi_role_to_string(amdsmi_gpu_get_role(gpu))));
        json_set(o, "driver",
                 json_object_new_string(amdsmi_driver_to_string(amdsmi_gpu_get_driver(gpu))));

        r = amdsmi_gpu_read_compute_mode(gpu, &cm);
        if (r < 0 && r != -ENODATA)
                cli_field_error(c, idx, "compute_mode", r);
        json_set(o, "compute_mode", r < 0 ? NULL : json_string_or_null(compute_name(cm)));

        r = amdsmi_gpu_read_memory_mode(gpu, &mm);
        if (r < 0 && r != -ENODATA)
                cli_field_error(c, idx, "memory_mode", r);
        json_set(o, "memory_mode", r < 0 ? NULL : json_string_or_null(memory_name(mm)));

        r = amdsmi_gpu_read_pending_memory_mode(gpu, &pending);
        if (r < 0 && r != -ENODATA && r != -EOPNOTSUPP)
                cli_field_error(c, idx, "memory_pending", r);
        json_set(o, "memory_pending", r < 0 ? NULL : json_string_or_null(memory_name(pending)));

        r = amdsmi_gpu_get_supported_compute_modes(gpu, &mask);
        if (r < 0 && r != -ENODATA)
                cli_field_error(c, idx, "supported_compute_modes", r);
        json_set(o, "supported_compute_modes", r < 0 ? NULL : compute_array(mask));

        r = amdsmi_gpu_read_available_compute_modes(gpu, &mask);
        if (r < 0 && r != -ENODATA)
                cli_field_error(c, idx, "available_compute_modes", r);
        json_set(o, "available_compute_modes", r < 0 ? NULL : compute_array(mask));

        r = amdsmi_gpu_read_available_memory_modes(gpu, &mask);
        if (r < 0 && r != -ENODATA)
                cli_field_error(c, idx, "available_memory_modes", r);
        json_set(o, "available_memory_modes", r < 0 ? NULL : memory_array(mask));
        json_set(o, "memory_changeable", r < 0 ? NULL : json_object_new_boolean(r > 0));

        hive = amdsmi_gpu_get_hive_id(gpu);
        json_set(o, "hive_id", hive == 0 ? NULL : json_hex(hive, 16));

        /* gim hosts: the VFs a change tears down and makes again (the plan knows them). */
        if (amdsmi_gpu_get_driver(gpu) == AMDSMI_DRIVER_GIM) {
                struct amdsmi_partition_plan plan = { .size = sizeof(plan) };

                r = amdsmi_gpu_plan_partition(gpu, AMDSMI_COMPUTE_UNKNOWN, AMDSMI_MEMORY_UNKNOWN,
                                              0, &plan);
                if (r < 0)
                        cli_field_error(c, idx, "vf_count", r);
                json_set(o, "vf_count", r < 0 ? NULL : json_object_new_uint64(plan.vfs_before));
        } else
                json_set(o, "vf_count", NULL);

        r = amdsmi_gpu_read_engine_shares(gpu, &es);
        if (r < 0 && r != -ENODATA)
                cli_field_error(c, idx, "engine_shares", r);
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

        json_set(o, "partition_count", cli_partition_count(c, idx, gpu));
        json_set(o, "partitions", partition_partitions(c, index, gpu));
        return o;
}

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

/* Reads a whole memstream buffer as lines. */
static size_t split_lines(char *text, char **lines, size_t max) {
        size_t n = 0;

        for (char *p = text; p && *p && n < max;) {
                char *nl = strchr(p, '\n');

                lines[n++] = p;
                if (!nl)
                        break;
                *nl = '\0';
                p = nl + 1;
        }
        return n;
}

/* One line per GPU, its partitions indented below it; columns aligned over all GPUs. */
static int print_partition_table(json_object *gpus) {
        _cleanup_free_ char *gtext = NULL, *ptext = NULL;
        _cleanup_free_ char **glines = NULL, **plines = NULL;
        struct columns gcols = {}, pcols = {};
        json_object *grows = json_object_new_array(), *prows = json_object_new_array();
        size_t n = json_object_array_length(gpus), gsize = 0, psize = 0, ng, np, pl = 1;
        FILE *f;
        int r;

        r = columns_add_defs(&gcols, partition_gpu_columns, ELEMENTSOF(partition_gpu_columns));
        if (r >= 0)
                r = columns_add_defs(&pcols, partition_part_columns,
                                     ELEMENTSOF(partition_part_columns));
        if (r < 0 || !grows || !prows) {
                r = -ENOMEM;
                goto finish;
        }
        for (size_t i = 0; i < n; i++) {
                json_object *g = json_object_array_get_idx(gpus, i);
                json_object *parts = NULL;

                json_object_array_add(grows, flat_row(g, NULL, true));
                json_object_object_get_ex(g, "partitions", &parts);
                for (size_t k = 0; parts && k < json_object_array_length(parts); k++)
                        json_object_array_add(
                                prows, flat_row(g, json_object_array_get_idx(parts, k), true));
        }

        f = open_memstream(&gtext, &gsize);
        if (!f) {
                r = -errno;
                goto finish;
        }
        r = output_table(f, &gcols, grows, "");
        if (fclose(f) != 0 && r >= 0)
                r = -errno;
        if (r < 0)
                goto finish;
        f = open_memstream(&ptext, &psize);
        if (!f) {
                r = -errno;
                goto finish;
        }
        r = output_table(f, &pcols, prows, "      ");
        if (fclose(f) != 0 && r >= 0)
                r = -errno;
        if (r < 0)
                goto finish;

        glines = calloc(n + 2, sizeof(char *));
        plines = calloc(json_object_array_length(prows) + 2, sizeof(char *));
        if (!glines || !plines) {
                r = -ENOMEM;
                goto finish;
        }
        ng = split_lines(gtext, glines, n + 1);
        np = split_lines(ptext, plines, json_object_array_length(prows) + 1);

        if (ng > 0)
                printf("%s\n", glines[0]);
        for (size_t i = 0; i < n && i + 1 < ng; i++) {
                json_object *g = json_object_array_get_idx(gpus, i), *parts = NULL;
                size_t k;

                printf("%s\n", glines[i + 1]);
                json_object_object_get_ex(g, "partitions", &parts);
                k = parts ? json_object_array_length(parts) : 0;
                if (k == 0)
                        continue;
                if (np > 0)
                        printf("%s\n", plines[0]);
                for (size_t j = 0; j < k && pl < np; j++)
                        printf("%s\n", plines[pl++]);
        }
        r = 0;
finish:
        json_object_put(grows);
        json_object_put(prows);
        columns_free(&gcols);
        columns_free(&pcols);
        return r;
}

static int print_partition_csv(json_object *gpus) {
        struct columns cols = {};
        json_object *rows = json_object_new_array();
        int r;

        r = columns_add_defs(&cols, partition_gpu_columns, ELEMENTSOF(partition_gpu_columns));
        if (r >= 0)
                r = columns_add_defs(&cols, partition_part_columns,
                                     ELEMENTSOF(partition_part_columns));
        if (r < 0 || !rows) {
                r = -ENOMEM;
                goto finish;
        }
        for (size_t i = 0; i < json_object_array_length(gpus); i++) {
                json_object *g = json_object_array_get_idx(gpus, i), *parts = NULL;
                size_t k;

                json_object_object_get_ex(g, "partitions", &parts);
                k = parts ? json_object_array_length(parts) : 0;
                if (k == 0) /* no partitions (or unknown): one line with empty cells */
                        json_object_array_add(rows, flat_row(g, NULL, false));
                for (size_t j = 0; j < k; j++)
                        json_object_array_add(
                                rows, flat_row(g, json_object_array_get_idx(parts, j), false));
        }
        r = output_csv_header(stdout, &cols);
        if (r >= 0)
                r = output_csv_rows(stdout, &cols, rows);
finish:
        json_object_put(rows);
        columns_free(&cols);
        return r;
}

static int partition_sample(struct cli *c) {
        json_object *gpus, *doc;
        int r;

        r = cli_collect_gpus(c, partition_gpu, &gpus);
        if (r != 0)
                return r;

        switch (c->format) {
        case OUTPUT_JSON:
                doc = cli_document(c, gpus);
                r = cli_print_json(c, doc);
                json_object_put(doc);
                return r;
        case OUTPUT_CSV:
                r = print_partition_csv(gpus);
                break;
        case OUTPUT_TABLE:
                r = print_partition_table(gpus);
                break;
        }
        json_object_put(gpus);
        json_object_put(c->errors); /* already on stderr */
        c->errors = NULL;
        if (r < 0)
                return cli_fail(c, r, "cannot format the output: %s", strerror(-r));
        return 0;
}

int verb_partition(struct cli *c) {
        int r = cli_open(c);

        if (r < 0)
                return r;
        return cli_run(c, partition_sample);
}

/* ---- changes: shared ---------------------------------------------------------------------- */

struct change_run {
        struct cli *c;
        json_object *gpus;      /* the document's "gpus" */
        int result;             /* the first failure */
        bool reload_pending;    /* a memory request waits for a reload after the command */
        char (*covered)[16];    /* BDFs a hive operation already handled */
        int *covered_by;        /* ... by the selected GPU of this index */
        size_t n_covered;
};

static int covered_by(struct change_run *run, const char *bdf) {
        for (size_t i = 0; i < run->n_covered; i++)
                if (strcmp(run->covered[i], bdf) == 0)
                        return run->covered_by[i];
        return -1;
}

static void cover(struct change_run *run, const char *bdf, int by) {
        if (covered_by(run, bdf) >= 0 || run->n_covered >= run->c->n_gpus + AMDSMI_PLAN_MAX_HIVE)
                return;
        snprintf(run->covered[run->n_covered], sizeof(run->covered[0]), "%s", bdf);
        run->covered_by[run->n_covered++] = by;
}

/* Records a failure: the first one decides the exit status. */
static int run_fail(struct change_run *run, int r) {
        if (run->result == 0)
                run->result = r;
        return r;
}

static int lock_gpus(struct cli *c, struct gpu_lock *locks, const char *const *bdfs, size_t n) {
        char busy[16] = "";
        pid_t holder = 0;
        int r;

        if (c->dry_run)
                return 0;
        r = gpu_locks_acquire(locks, bdfs, n, busy, &holder);
        if (r == -EBUSY) {
                if (holder > 0)
                        return cli_fail(c, r, "GPU %s is being changed by PID %ld", busy,
                                        (long) holder);
                return cli_fail(c, r, "GPU %s is being changed by another process", busy);
        }
        if (r < 0)
                return cli_fail(c, r, "cannot take the change lock of GPU %s: %s", bdfs[0],
                                strerror(-r));
        return 0;
}

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
        json_set(o, "supported_compute_modes", compute_array(p->supported_compute));
        json_set(o, "valid_compute_modes", compute_array(p->valid_compute));
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
        json_set(o, "error", cli_errno_json(ch->error));
        json_set(o, "message", json_object_new_string(ch->message));
        json_set(o, "changed", json_object_new_boolean(ch->changed));
        json_set(o, "reload_required", json_object_new_boolean(ch->reload_required));
        json_set(o, "rolled_back", json_object_new_boolean(ch->rolled_back));
        json_set(o, "rollback_error", cli_errno_json(ch->rollback_error));
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
                json_set(e, "error", cli_errno_json(m->error));
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

/* A text line for the operator: stdout in table mode, the entry's "notes" always. */
/* Prints what the library reported about a failure: its message, who blocks, the rollback. */
static void report_failure(struct change_run *run, int index, json_object *entry, int r,
                           const struct amdsmi_partition_change *ch, const char *what) {
        struct cli *c = run->c;

        cli_fail(c, r, "GPU %d: %s failed: %s", index, what,
                 ch->message[0] ? ch->message : strerror(-r));
        for (unsigned i = 0; i < ch->n_blockers && i < AMDSMI_CHANGE_MAX_PROCESSES; i++) {
                const struct amdsmi_kfd_process *p = &ch->blockers[i];
                char vram[32] = "N/A";

                if (p->vram_bytes != AMDSMI_NA)
                        snprintf(vram, sizeof(vram), "%" PRIu64 " MiB", p->vram_bytes >> 20);
                fprintf(stderr, "amdsmi:   PID %d (%s) uses GPU %s, VRAM %s\n", p->pid,
                        p->comm[0] ? p->comm : "?", p->bdf, vram);
        }
        if (ch->n_blockers > AMDSMI_CHANGE_MAX_PROCESSES)
                fprintf(stderr, "amdsmi:   ... and %u more processes\n",
                        ch->n_blockers - AMDSMI_CHANGE_MAX_PROCESSES);
        if (ch->rolled_back)
                fprintf(stderr, "amdsmi:   the previous mode %s was restored\n",
                        compute_name(ch->compute_before) ? compute_name(ch->compute_before)
                                                         : "");
        else if (ch->rollback_error)
                fprintf(stderr, "amdsmi:   restoring the previous mode failed too: %s\n",
                        strerror(ch->rollback_error < 0 ? -ch->rollback_error
                                                        : ch->rollback_error));
        if (ch->kfd_lost)
                fprintf(stderr,
                        "amdsmi:   the GPU has no KFD nodes now: amdsmi reset -g %d "
                        "--reload-driver brings them back\n",
                        index);
        (void) entry;
        run_fail(run, r);
}

static json_object *entry_new(size_t index, struct amdsmi_gpu *gpu) {
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

static void entry_result(json_object *e, int r) {
        json_set(e, "result", cli_errno_json(r));
}

/* The reason of an invalid plan as an errno and a message with the valid modes. */
static int plan_error(struct cli *c, int index, struct amdsmi_gpu *gpu,
                      const struct amdsmi_partition_plan *p) {
        const char *bdf = amdsmi_gpu_get_bdf(gpu), *product = amdsmi_gpu_get_product(gpu);
        char list[128];
        uint32_t mask = 0;

        switch (p->reason) {
        case AMDSMI_PLAN_OK:
                break;
        case AMDSMI_PLAN_NOT_SUPPORTED:
                return cli_fail(c, -EOPNOTSUPP, "GPU %d (%s, %s) has no partition support",
                                index, bdf, product);
        case AMDSMI_PLAN_NOT_SWITCHABLE:
                return cli_fail(c, -EOPNOTSUPP,
                                "GPU %d (%s, %s) is an SR-IOV VF: its partition modes are set "
                                "on the host",
                                index, bdf, product);
        case AMDSMI_PLAN_COMPUTE_NOT_SUPPORTED:
                compute_list(p->supported_compute, list, sizeof(list));
                return cli_fail(c, -EOPNOTSUPP,
                                "GPU %d (%s, %s) does not support compute mode %s (supported: %s)",
                                index, bdf, product, compute_name(p->compute_after), list);
        case AMDSMI_PLAN_MEMORY_NOT_CHANGEABLE:
                return cli_fail(c, -EOPNOTSUPP,
                                "GPU %d (%s, %s) has one memory mode only (%s): it cannot be "
                                "changed",
                                index, bdf, product,
                                memory_name(p->memory_before) ? memory_name(p->memory_before)
                                                              : "unknown");
        case AMDSMI_PLAN_MEMORY_NOT_SUPPORTED:
                if (amdsmi_gpu_read_available_memory_modes(gpu, &mask) < 0)
                        mask = 0;
                memory_list(mask, list, sizeof(list));
                return cli_fail(c, -EOPNOTSUPP,
                                "GPU %d (%s, %s) does not support memory mode %s (available: "
                                "%s)",
                                index, bdf, product, memory_name(p->memory_after), list);
        case AMDSMI_PLAN_INCOMPATIBLE:
                compute_list(p->valid_compute, list, sizeof(list));
                return cli_fail(c, -ERANGE,
                                "GPU %d (%s, %s): compute mode %s is not valid under memory "
                                "mode %s (valid: %s)",
                                index, bdf, product, compute_name(p->compute_after),
                                memory_name(p->memory_after) ? memory_name(p->memory_after)
                                                             : "unknown",
                                list);
        case AMDSMI_PLAN_NO_PATH:
                return cli_fail(c, -ERANGE,
                                "GPU %d (%s, %s): gim changes one mode at a time and both "
                                "orders pass a pair it refuses (%s/%s or %s/%s): change "
                                "through an intermediate mode",
                                index, bdf, product, compute_name(p->compute_after),
                                memory_name(p->memory_before), compute_name(p->compute_before),
                                memory_name(p->memory_after));
        default:
                return cli_fail(c, -EINVAL, "GPU %d (%s): invalid plan (%s)", index, bdf,
                                amdsmi_plan_reason_to_string(p->reason));
        }
        return 0;
}

/* "before -> after" lines of a plan. */
static void say_plan(struct change_run *run, json_object *entry, int index,
                     struct amdsmi_gpu *gpu, const struct amdsmi_partition_plan *p) {
        char minors[128] = "", mem[32] = "N/A";
        size_t n = 0;

        cli_say(run->c, entry, "GPU %d (%s, %s): compute %s -> %s, memory %s -> %s%s", index,
            amdsmi_gpu_get_bdf(gpu), amdsmi_gpu_get_product(gpu),
            compute_name(p->compute_before) ?: "N/A", compute_name(p->compute_after) ?: "N/A",
            memory_name(p->memory_before) ?: "N/A", memory_name(p->memory_after) ?: "N/A",
            p->notes & (1u << AMDSMI_PLAN_NO_CHANGE) ? " (no change)" : "");
        if (p->memory_per_partition_after != AMDSMI_NA)
                snprintf(mem, sizeof(mem), "%" PRIu64 " MiB", p->memory_per_partition_after >> 20);
        if (p->partitions_after > 0)
                cli_say(run->c, entry,
                    "  partitions %u -> %u, %u XCC%s per partition, memory %s per partition",
                    p->partitions_before, p->partitions_after, p->xcc_per_partition_after,
                    p->xcc_per_partition_after == 1 ? "" : "s", mem);
        for (unsigned i = 0; i < p->n_invalidated_render_minors && n < sizeof(minors); i++)
                n += (size_t) snprintf(minors + n, sizeof(minors) - n, "%srenderD%d",
                                       i ? " " : "", p->invalidated_render_minors[i]);
        if (n > 0)
                cli_say(run->c, entry, "  render nodes that stop existing: %s", minors);
        if (p->n_affected_bdfs > 1) {
                char bdfs[AMDSMI_PLAN_MAX_HIVE * 17] = "";

                n = 0;
                for (unsigned i = 0; i < p->n_affected_bdfs && n < sizeof(bdfs); i++)
                        n += (size_t) snprintf(bdfs + n, sizeof(bdfs) - n, "%s%s", i ? " " : "",
                                               p->affected_bdfs[i]);
                cli_say(run->c, entry, "  GPUs affected: %s", bdfs);
        }
        if (p->vfs_before || p->vfs_after)
                cli_say(run->c, entry, "  VFs %u -> %u (torn down and made again)", p->vfs_before,
                    p->vfs_after);
}

static int emit_change_document(struct change_run *run) {
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
        struct cli *c = run->c;
        size_t n = json_object_array_length(run->gpus);
        int r = run->result;

        if (r == 0 && run->reload_pending)
                r = -ERELOAD_REQUIRED;
        /* CSV rows say whether it was a dry run; the JSON says it once, at the top */
        for (size_t i = 0; c->format == OUTPUT_CSV && i < n; i++)
                json_set(json_object_array_get_idx(run->gpus, i), "dry_run",
                         json_object_new_boolean(c->dry_run));
        r = cli_emit_change(c, run->gpus, r, csv, ELEMENTSOF(csv));
        for (size_t i = 0; c->format == OUTPUT_CSV && i < n; i++)
                json_object_object_del(json_object_array_get_idx(run->gpus, i), "dry_run");
        return r;
}

static int change_begin(struct cli *c, struct change_run *run) {
        int r;

        r = cli_check_change_selection(c, "partition modes are changed for a whole GPU");
        if (r < 0)
                return r;
        r = cli_authorise_change(c);
        if (r < 0)
                return r;
        r = cli_open(c);
        if (r < 0)
                return r;
        cli_begin_sample(c);
        *run = (struct change_run){ .c = c };
        run->gpus = json_object_new_array();
        run->covered = calloc(c->n_gpus + AMDSMI_PLAN_MAX_HIVE, sizeof(*run->covered));
        run->covered_by = calloc(c->n_gpus + AMDSMI_PLAN_MAX_HIVE, sizeof(int));
        if (!run->gpus || !run->covered || !run->covered_by)
                return cli_fail(c, -ENOMEM, "out of memory");
        return 0;
}

static int change_end(struct change_run *run) {
        int r = emit_change_document(run);

        json_object_put(run->gpus);
        free(run->covered);
        free(run->covered_by);
        return r;
}

/* ---- set: compute and memory modes ----------------------------------------------------- */

static uint64_t change_flags(struct cli *c) {
        return (c->dry_run ? AMDSMI_CHANGE_DRY_RUN : 0) | (c->force ? AMDSMI_CHANGE_FORCE : 0);
}

/* The memory request of @gpu's hive. @return 1 when it waits for a reload, 0, or < 0. */
static int do_memory(struct change_run *run, size_t index, struct amdsmi_gpu *gpu,
                     json_object *entry, const struct amdsmi_partition_plan *p) {
        struct cli *c = run->c;
        struct gpu_lock locks[AMDSMI_PLAN_MAX_HIVE];
        const char *bdfs[AMDSMI_PLAN_MAX_HIVE];
        struct amdsmi_partition_change ch = { .size = sizeof(ch) };
        json_object *reports = NULL;
        int r;

        for (size_t i = 0; i < AMDSMI_PLAN_MAX_HIVE; i++)
                locks[i] = (struct gpu_lock) GPU_LOCK_INIT;
        for (unsigned i = 0; i < p->n_affected_bdfs; i++)
                bdfs[i] = p->affected_bdfs[i];

        if (p->n_affected_bdfs > 1) {
                char list[AMDSMI_PLAN_MAX_HIVE * 24] = "";
                size_t n = 0;

                for (unsigned i = 0; i < p->n_affected_bdfs && n < sizeof(list); i++) {
                        int k = gpu_index_of_bdf(c, bdfs[i]);

                        n += (size_t) snprintf(list + n, sizeof(list) - n, "%s%d (%s)",
                                               i ? ", " : "", k, bdfs[i]);
                }
                fprintf(stderr,
                        "amdsmi: warning: memory mode %s applies to the whole XGMI hive: GPUs "
                        "%s\n",
                        memory_name(p->memory_after), list);
        }

        r = lock_gpus(c, locks, bdfs, p->n_affected_bdfs);
        if (r < 0)
                return run_fail(run, r);
        r = amdsmi_gpu_set_memory_mode(gpu, c->memory, change_flags(c), &ch);
        gpu_locks_release(locks, AMDSMI_PLAN_MAX_HIVE);
        if (json_object_object_get_ex(entry, "reports", &reports))
                json_object_array_add(reports, report_object("memory", &ch));
        if (r < 0) {
                report_failure(run, (int) index, entry, r, &ch, "the memory mode request");
                return r;
        }
        for (unsigned i = 0; i < p->n_affected_bdfs; i++)
                cover(run, bdfs[i], (int) index);
        return r > 0 ? 1 : 0;
}

static int do_compute(struct change_run *run, size_t index, struct amdsmi_gpu *gpu,
                      json_object *entry) {
        struct cli *c = run->c;
        struct gpu_lock lock = GPU_LOCK_INIT;
        const char *bdf = amdsmi_gpu_get_bdf(gpu);
        struct amdsmi_partition_change ch = { .size = sizeof(ch) };
        json_object *reports = NULL;
        int r;

        r = lock_gpus(c, &lock, &bdf, 1);
        if (r < 0)
                return run_fail(run, r);
        r = amdsmi_gpu_set_compute_mode(gpu, c->compute, change_flags(c), c->timeout_ms, &ch);
        gpu_lock_release(&lock);
        if (json_object_object_get_ex(entry, "reports", &reports))
                json_object_array_add(reports, report_object("compute", &ch));
        if (r < 0) {
                report_failure(run, (int) index, entry, r, &ch, "the compute mode switch");
                return r;
        }
        if (c->dry_run)
                cli_say(run->c, entry, "  dry run: the switch to %s is possible now",
                    compute_name(c->compute));
        else if (ch.changed)
                cli_say(run->c, entry, "  done: %s with %u partition%s (%u ms)",
                    compute_name(ch.compute_after) ?: "N/A", ch.partitions_after,
                    ch.partitions_after == 1 ? "" : "s", ch.elapsed_ms);
        return 0;
}

static int set_one(struct change_run *run, size_t index, struct amdsmi_gpu *gpu,
                   json_object *entry) {
        struct cli *c = run->c;
        struct amdsmi_partition_plan p = { .size = sizeof(p) };
        enum amdsmi_memory_mode pending = AMDSMI_MEMORY_UNKNOWN;
        bool memory_change, compute_change, gim;
        int r, by;

        r = amdsmi_gpu_plan_partition(gpu, c->compute, c->memory, 0, &p);
        if (r < 0)
                return run_fail(run, cli_fail(c, r, "GPU %zu: cannot plan the change: %s", index,
                                              strerror(-r)));
        gim = amdsmi_gpu_get_driver(gpu) == AMDSMI_DRIVER_GIM;
        json_set(entry, "plan", plan_object(&p));
        say_plan(run, entry, (int) index, gpu, &p);
        r = plan_error(c, (int) index, gpu, &p);
        if (r < 0)
                return run_fail(run, r);

        if (gim && p.vfs_before > 0 && !c->force && !(p.notes & (1u << AMDSMI_PLAN_NO_CHANGE)))
                return run_fail(run, cli_fail(c, -EBUSY,
                                              "GPU %zu (%s): the change tears down its %u VFs "
                                              "(stop their VMs first); give --force to do it",
                                              index, amdsmi_gpu_get_bdf(gpu), p.vfs_before));

        if (amdsmi_gpu_read_pending_memory_mode(gpu, &pending) < 0)
                pending = AMDSMI_MEMORY_UNKNOWN;
        memory_change = c->memory != AMDSMI_MEMORY_UNKNOWN &&
                        (p.memory_after != p.memory_before ||
                         (pending != AMDSMI_MEMORY_UNKNOWN && pending != c->memory));
        compute_change = c->compute != AMDSMI_COMPUTE_UNKNOWN &&
                         p.compute_after != p.compute_before;

        if (memory_change) {
                by = covered_by(run, amdsmi_gpu_get_bdf(gpu));
                if (by >= 0) {
                        json_set(entry, "same_operation_as", json_object_new_int(by));
                        cli_say(run->c, entry, "  memory mode %s: requested with GPU %d (same hive)",
                            memory_name(c->memory), by);
                        r = 1;
                } else {
                        r = do_memory(run, index, gpu, entry, &p);
                        if (r < 0)
                                return r;
                }
                if (r > 0) {
                        /* bare metal: waits for the reload; the driver picks the compute
                         * mode then */
                        if (!c->dry_run)
                                run->reload_pending = true;
                        cli_say(run->c, entry,
                            "  %s memory mode %s %s for a driver reload of the hive; next: "
                            "amdsmi reset -g %zu --reload-driver",
                            c->dry_run ? "dry run: the" : "the",
                            memory_name(c->memory), c->dry_run ? "would wait" : "waits",
                            index);
                        if (c->compute != AMDSMI_COMPUTE_UNKNOWN &&
                            p.notes & (1u << AMDSMI_PLAN_COMPUTE_AFTER_RELOAD))
                                cli_say(run->c, entry,
                                    "  the driver picks the compute mode at the reload; then: "
                                    "amdsmi partition set -g %zu --compute %s",
                                    index, compute_name(c->compute));
                        else if (c->compute == AMDSMI_COMPUTE_UNKNOWN &&
                                 p.notes & (1u << AMDSMI_PLAN_COMPUTE_AFTER_RELOAD))
                                cli_say(run->c, entry,
                                    "  the driver picks the compute mode for %s at the reload "
                                    "(not %s)",
                                    memory_name(c->memory), compute_name(p.compute_before));
                        return 0;
                }
                if (!c->dry_run)
                        cli_say(run->c, entry, "  done: memory mode %s", memory_name(c->memory));
        }
        if (compute_change)
                return do_compute(run, index, gpu, entry);
        if (!memory_change)
                cli_say(run->c, entry, "  nothing to do: already %s / %s",
                    compute_name(p.compute_before) ?: "N/A", memory_name(p.memory_before) ?: "N/A");
        return 0;
}

/* Starts a change and runs @one for every selected GPU, each with its JSON entry. @return
 * 0, or the failure of change_begin() (then nothing is left to free). */
typedef int (*change_one_fn)(struct change_run *run, size_t index, struct amdsmi_gpu *gpu,
                             json_object *entry);
static int run_each_gpu(struct cli *c, struct change_run *run, change_one_fn one) {
        int r = change_begin(c, run);

        if (r < 0) {
                json_object_put(run->gpus);
                free(run->covered);
                free(run->covered_by);
                return r;
        }
        FOREACH_SELECTED_GPU(c, i, gpu) {
                json_object *entry = entry_new(i, gpu);

                if (!entry) {
                        run_fail(run, cli_fail(c, -ENOMEM, "out of memory"));
                        break;
                }
                r = one(run, i, gpu, entry);
                entry_result(entry, r < 0 ? r : 0);
                json_object_array_add(run->gpus, entry);
        }
        return 0;
}

int partition_cli_set(struct cli *c) {
        struct change_run run = {};
        int r;

        if (c->compute == AMDSMI_COMPUTE_UNKNOWN && c->memory == AMDSMI_MEMORY_UNKNOWN)
                return cli_fail(c, -EINVAL, "nothing to change: give --compute MODE and/or "
                                            "--memory MODE");
        r = run_each_gpu(c, &run, set_one);
        if (r < 0)
                return r;
        if (run.result == 0 && run.reload_pending)
                cli_fail(c, -ERELOAD_REQUIRED,
                         "the memory mode request waits for a driver reload (amdsmi reset -g N "
                         "--reload-driver)");
        return change_end(&run);
}

int verb_partition_set(struct cli *c) {
        if (c->compute == AMDSMI_COMPUTE_UNKNOWN)
                return cli_fail(c, -EINVAL, "partition set needs --compute MODE (and "
                                            "optionally --memory MODE)");
        return partition_cli_set(c);
}

/* ---- reset --reload-driver -------------------------------------------------------------- */

static int reset_one(struct change_run *run, size_t index, struct amdsmi_gpu *gpu,
                     json_object *entry) {
        struct cli *c = run->c;
        struct gpu_lock locks[AMDSMI_PLAN_MAX_HIVE];
        const char *bdfs[AMDSMI_PLAN_MAX_HIVE];
        struct amdsmi_partition_change ch = { .size = sizeof(ch) };
        uint64_t hive = amdsmi_gpu_get_hive_id(gpu);
        json_object *reports = NULL;
        size_t n = 0;
        int r, by;

        by = covered_by(run, amdsmi_gpu_get_bdf(gpu));
        if (by >= 0) {
                json_set(entry, "same_operation_as", json_object_new_int(by));
                cli_say(run->c, entry, "GPU %zu (%s): reloaded with GPU %d (same hive)", index,
                    amdsmi_gpu_get_bdf(gpu), by);
                return 0;
        }

        for (size_t i = 0; i < AMDSMI_PLAN_MAX_HIVE; i++)
                locks[i] = (struct gpu_lock) GPU_LOCK_INIT;
        bdfs[n++] = amdsmi_gpu_get_bdf(gpu);
        for (size_t i = 0; hive != 0 && i < c->n_gpus && n < AMDSMI_PLAN_MAX_HIVE; i++) {
                struct amdsmi_gpu *o = amdsmi_ctx_get_gpu(c->ctx, i);

                if (o && o != gpu && amdsmi_gpu_get_hive_id(o) == hive)
                        bdfs[n++] = amdsmi_gpu_get_bdf(o);
        }
        if (n > 1)
                fprintf(stderr,
                        "amdsmi: warning: the driver reload applies to the whole XGMI hive: "
                        "%zu GPUs\n",
                        n);

        r = lock_gpus(c, locks, bdfs, n);
        if (r < 0)
                return run_fail(run, r);
        r = amdsmi_gpu_reload_driver(gpu, c->dry_run ? AMDSMI_CHANGE_DRY_RUN : 0, c->timeout_ms,
                                     &ch);
        gpu_locks_release(locks, AMDSMI_PLAN_MAX_HIVE);
        if (json_object_object_get_ex(entry, "reports", &reports))
                json_object_array_add(reports, report_object("reload", &ch));
        for (size_t i = 0; i < n; i++)
                cover(run, bdfs[i], (int) index);
        if (r < 0) {
                report_failure(run, (int) index, entry, r, &ch, "the driver reload");
                return r;
        }
        if (c->dry_run) {
                cli_say(run->c, entry, "GPU %zu (%s): dry run: the driver reload of %zu GPU%s is "
                                "possible now",
                    index, amdsmi_gpu_get_bdf(gpu), n, n == 1 ? "" : "s");
                return 0;
        }
        cli_say(run->c, entry, "GPU %zu (%s): driver reloaded on %u GPU%s (%u ms)", index,
            amdsmi_gpu_get_bdf(gpu), ch.n_gpus, ch.n_gpus == 1 ? "" : "s", ch.elapsed_ms);
        for (unsigned i = 0; i < ch.n_gpus && i < AMDSMI_PLAN_MAX_HIVE; i++) {
                const struct amdsmi_gpu_modes *m = &ch.gpus[i];

                if (m->error)
                        cli_say(run->c, entry, "  %s  did not come back: %s", m->bdf,
                            strerror(m->error < 0 ? -m->error : m->error));
                else
                        cli_say(run->c, entry, "  %s  %s  %s  %u partition%s", m->bdf,
                            compute_name(m->compute) ?: "N/A", memory_name(m->memory) ?: "N/A",
                            m->partitions, m->partitions == 1 ? "" : "s");
        }
        return 0;
}

int partition_cli_reset(struct cli *c) {
        struct change_run run = {};
        int r;

        r = run_each_gpu(c, &run, reset_one);
        if (r < 0)
                return r;
        /* the context describes the old driver instance now */
        if (!c->dry_run && amdsmi_ctx_enumerate(c->ctx) < 0)
                fprintf(stderr, "amdsmi: cannot enumerate the GPUs again after the reload\n");
        return change_end(&run);
}
