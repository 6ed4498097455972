/* SPDX-License-Identifier: MIT */
/*
 * The process slice's part of amdsmi(1):
 *
 *   amdsmi process [-g SEL] [-w SECONDS [-n COUNT]]   the KFD processes of each GPU and
 *                                                    partition
 *
 * Through amdsmid when it runs (GetDocument("process"): what polkit lets the caller see of
 * other users' processes), else read here (what the kernel shows this user).
 *
 * The table has one row per partition a process uses (VRAM or queues there); a process that
 * only holds a GPU (a ROCm process opens every GPU it can see) has one row for it, with "-"
 * for what it does not use. JSON has every entry, used or not.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "documents.h"
#include "json-util.h"
#include "macro.h"
#include "output.h"
#include "process-json.h"

static const struct column_def process_columns[] = {
        { "gpu", "GPU", "gpu", 0 },
        { "pid", "PID", "pid", 0 },
        { "name", "NAME", "name", 0 },
        { "user", "USER", "user", 0 },
        { "vram_bytes", "VRAM (MiB)", "vram_bytes", COLUMN_MIB | COLUMN_NONE },
        { "queues", "QUEUES", "queues", COLUMN_NONE },
        { "cu_occupancy", "CU", "cu_occupancy", COLUMN_NONE },
        { "sdma_usec", "SDMA (us)", "sdma_usec", COLUMN_NONE },
        { "evicted_ms", "EVICTED (ms)", "evicted_ms", COLUMN_NONE },
        { "faults", "FAULTS", "faults", COLUMN_NONE },
        { "container", "CONTAINER", "container", COLUMN_NONE },
        { "cgroup", NULL, "cgroup", 0 },
};

static json_object *get(json_object *o, const char *key) {
        json_object *v = NULL;

        return json_object_object_get_ex(o, key, &v) ? v : NULL;
}

/* A table row of entry @e of GPU @g ("N", or "N.P" on a partitioned GPU; @whole: the GPU, for
 * a process that uses none of its partitions). */
static json_object *row_new(json_object *g, json_object *e, bool whole) {
        json_object *row = json_object_new_object(), *ct = get(e, "container");
        int64_t parts = json_object_get_int64(get(g, "partition_count"));
        char gpu[32];

        if (!row)
                return NULL;
        if (!whole && parts > 1 && get(e, "partition"))
                snprintf(gpu, sizeof(gpu), "%" PRId64 ".%" PRId64,
                         json_object_get_int64(get(g, "gpu")),
                         json_object_get_int64(get(e, "partition")));
        else
                snprintf(gpu, sizeof(gpu), "%" PRId64, json_object_get_int64(get(g, "gpu")));
        json_set(row, "gpu", json_object_new_string(gpu));
        json_object_object_foreach(e, key, val) {
                if (strcmp(key, "container") == 0)
                        continue;
                if (whole && strcmp(key, "pid") != 0 && strcmp(key, "name") != 0 &&
                    strcmp(key, "user") != 0 && strcmp(key, "cgroup") != 0)
                        continue; /* holds the GPU, uses nothing: "-" */
                json_set(row, key, json_object_get(val));
        }
        if (ct) {
                char s[96];

                snprintf(s, sizeof(s), "%s:%.12s", json_object_get_string(get(ct, "runtime")),
                         json_object_get_string(get(ct, "id")));
                json_set(row, "container", json_object_new_string(s));
        }
        return row;
}

/* The rows of the table and CSV: per GPU, the entries in use; a process with none on that GPU
 * once, as holding it. */
static json_object *process_rows(json_object *gpus) {
        json_object *rows = json_object_new_array();

        for (size_t i = 0; rows && i < json_object_array_length(gpus); i++) {
                json_object *g = json_object_array_get_idx(gpus, i);
                json_object *procs = get(g, "processes");
                size_t n = procs ? json_object_array_length(procs) : 0;

                for (size_t k = 0; k < n;) {
                        json_object *first = json_object_array_get_idx(procs, k);
                        int64_t pid = json_object_get_int64(get(first, "pid"));
                        bool any = false;
                        size_t end = k;

                        /* one process's entries follow each other */
                        for (; end < n; end++) {
                                json_object *e = json_object_array_get_idx(procs, end);

                                if (json_object_get_int64(get(e, "pid")) != pid)
                                        break;
                                if (json_object_get_boolean(get(e, "in_use"))) {
                                        json_object_array_add(rows, row_new(g, e, false));
                                        any = true;
                                }
                        }
                        if (!any)
                                json_object_array_add(rows, row_new(g, first, true));
                        k = end;
                }
        }
        return rows;
}

int process_cli_collect(struct cli *c, json_object **ret) {
        struct amdsmi_process_list *list = NULL;
        struct doc_query q;
        int r;

        r = cli_read_document(c, "process", ret);
        if (r != 0)
                return r < 0 ? r : 0;
        r = process_read(&c->report, c->set.ctx, &list);
        if (r < 0)
                return r;
        cli_doc_query(c, &q);
        q.processes = list;
        r = doc_collect(&q, process_gpu, ret);
        amdsmi_process_list_free(list);
        return r;
}

static int process_sample(struct cli *c) {
        struct columns cols = {};
        json_object *gpus, *rows;
        int r;

        r = cli_print_daemon_text(c, "process");
        if (r != 0)
                return r < 0 ? r : 0;
        r = process_cli_collect(c, &gpus);
        if (r != 0)
                return r;
        if (c->format == OUTPUT_JSON)
                return cli_print_document(c, gpus);
        rows = process_rows(gpus);
        r = rows ? columns_add_defs(&cols, process_columns, ELEMENTSOF(process_columns)) : -ENOMEM;
        if (r >= 0) {
                if (c->format == OUTPUT_CSV) {
                        r = output_csv_header(stdout, &cols);
                        if (r >= 0)
                                r = output_csv_rows(stdout, &cols, rows);
                } else if (json_object_array_length(rows) == 0)
                        printf("No KFD process uses the selected GPUs.\n");
                else
                        r = output_table(stdout, &cols, rows, "");
        }
        columns_free(&cols);
        json_object_put(rows);
        return cli_sample_done(c, gpus, r);
}

int verb_process(struct cli *c) {
        return cli_open_run(c, process_sample);
}
