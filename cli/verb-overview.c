/* SPDX-License-Identifier: MIT */
/*
 * amdsmi with no argument: the GPUs of this machine at a glance (modes, power, VFs), whether
 * amdsmid runs, and the verbs. Made of the read documents (core/documents.h, the SR-IOV
 * slice's PF object); for people only: scripts use `amdsmi list --json` and friends, and
 * any option without a verb stays a usage error.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "documents.h"
#include "help.h"
#include "sriov-json.h"

static const struct column_def overview_columns[] = {
        { "gpu", "GPU", "gpu", 0 },
        { "bdf", "BDF", "bdf", 0 },
        { "product", "PRODUCT", "product", 0 },
        { "compute_mode", "COMPUTE", "compute_mode", 0 },
        { "memory_mode", "MEMORY", "memory_mode", 0 },
        { "power_w", "POWER (W)", "power.power_w", COLUMN_WHOLE },
        { "cap_w", "CAP (W)", "power.cap_w", COLUMN_WHOLE },
        { "num_vfs", "VFS", "num_vfs", COLUMN_NONE },
};

/* One row: the list object of the GPU, with the power object of its metric object and, for a
 * PF that can do SR-IOV, its VF count. NULL on -ENOMEM. */
static json_object *overview_gpu(struct cli *c, const struct doc_query *q, size_t i,
                                 struct amdsmi_gpu *gpu) {
        enum amdsmi_role role = amdsmi_gpu_get_role(gpu);
        json_object *row, *metric, *power = NULL, *pf, *num_vfs = NULL;

        row = list_gpu(q, i, gpu);
        if (!row)
                return NULL;
        metric = metric_gpu(q, i, gpu);
        if (metric && json_object_object_get_ex(metric, "power", &power))
                json_set(row, "power", json_object_get(power));
        json_object_put(metric);
        if (role == AMDSMI_ROLE_BAREMETAL || role == AMDSMI_ROLE_HOST_PF) {
                pf = sriov_pf_json(&c->report, &c->set, i, gpu, false);
                if (pf && json_object_object_get_ex(pf, "num_vfs", &num_vfs))
                        json_set(row, "num_vfs", json_object_get(num_vfs));
                json_object_put(pf);
        }
        return row;
}

/* The element of @gpus (a document's) whose "bdf" is @bdf, or NULL. */
static json_object *find_bdf(json_object *gpus, json_object *bdf) {
        for (size_t i = 0; bdf && i < json_object_array_length(gpus); i++) {
                json_object *g = json_object_array_get_idx(gpus, i), *b;

                if (json_object_object_get_ex(g, "bdf", &b) &&
                    strcmp(json_object_get_string(b), json_object_get_string(bdf)) == 0)
                        return g;
        }
        return NULL;
}

/* The rows from amdsmid's documents (list, metric, sriov), as overview_gpu() makes them
 * in-process. @return 1 (*ret set), 0 when amdsmid cannot answer (the GPUs are enumerated
 * here then), or a negative errno (reported). */
static int rows_from_daemon(struct cli *c, json_object **ret) {
        json_object *list = NULL, *metric = NULL, *sriov = NULL, *rows;
        int r;

        r = cli_read_document(c, "list", &list);
        if (r > 0)
                r = cli_read_document(c, "metric", &metric);
        if (r > 0)
                r = cli_read_document(c, "sriov", &sriov);
        if (r <= 0) {
                json_object_put(list);
                json_object_put(metric);
                json_object_put(sriov);
                return r;
        }
        rows = json_object_new_array();
        for (size_t i = 0; rows && i < json_object_array_length(list); i++) {
                json_object *g = json_object_array_get_idx(list, i), *role, *bdf = NULL, *o, *v;

                /* a host's VFs: counted in their PF's row */
                if (json_object_object_get_ex(g, "role", &role) &&
                    strcmp(json_object_get_string(role), "vf") == 0)
                        continue;
                json_object_object_get_ex(g, "bdf", &bdf);
                o = find_bdf(metric, bdf);
                if (o && json_object_object_get_ex(o, "power", &v))
                        json_set(g, "power", json_object_get(v));
                o = find_bdf(sriov, bdf);
                if (o && json_object_object_get_ex(o, "num_vfs", &v))
                        json_set(g, "num_vfs", json_object_get(v));
                json_object_array_add(rows, json_object_get(g));
        }
        json_object_put(list);
        json_object_put(metric);
        json_object_put(sriov);
        if (!rows)
                return cli_fail(c, -ENOMEM, "out of memory");
        *ret = rows;
        return 1;
}

/* "Verbs: list, static, ..." wrapped at 78 columns. */
static void print_verbs(FILE *f) {
        size_t col = fprintf(f, "Verbs:");

        for (size_t i = 0; i < cli_n_verbs; i++) {
                const char *name = cli_verbs[i].name;
                bool last = true;

                if (cli_verbs[i].sub)
                        continue;
                for (size_t k = i + 1; k < cli_n_verbs; k++)
                        if (!cli_verbs[k].sub)
                                last = false;
                if (col + 1 + strlen(name) + 1 > 78) {
                        fprintf(f, "\n      ");
                        col = 6;
                }
                col += fprintf(f, " %s%s", name, last ? "" : ",");
        }
        fprintf(f, "\n");
}

int verb_overview(struct cli *c) {
        void (*print)(struct report *r, enum report_line kind, const char *text);
        struct columns cols = {};
        json_object *rows = NULL;
        struct doc_query q;
        bool daemon, other_roots;
        size_t n = 0;
        int r;

        /* no GPU is an answer here, not an error */
        print = c->report.print;
        c->report.print = NULL;
        daemon = !c->direct && cli_daemon_may_run(&other_roots) && cli_daemon_running(c);
        /* amdsmid's documents when it runs (and reads the roots named here): the overview
         * reads nothing itself */
        c->read_daemon = daemon && !other_roots;
        r = c->read_daemon ? rows_from_daemon(c, &rows) : 0;
        if (r == 0 && !c->set.ctx)
                r = cli_open(c);
        c->report.print = print;
        if (r > 0) {
                n = json_object_array_length(rows);
                if (n == 0) {
                        json_object_put(rows);
                        rows = NULL;
                        printf("No AMD GPU found (amdsmid).\n");
                }
        } else if (r == -ENODEV || r == -ENOENT)
                printf("No AMD GPU found under %s.\n", amdsmi_ctx_get_sysfs_root(c->set.ctx));
        else if (r < 0) {
                fprintf(stderr, "amdsmi: %s\n", c->report.error_message);
                return r;
        } else {
                cli_doc_query(c, &q);
                report_begin_sample(&c->report);
                rows = json_object_new_array();
                if (!rows)
                        return cli_fail(c, -ENOMEM, "out of memory");
                FOREACH_SELECTED_GPU(c, i, gpu) {
                        json_object *row;

                        /* a host's VFs: counted in their PF's row */
                        if (amdsmi_gpu_get_role(gpu) == AMDSMI_ROLE_VF)
                                continue;
                        row = overview_gpu(c, &q, i, gpu);
                        if (!row) {
                                json_object_put(rows);
                                return cli_fail(c, -ENOMEM, "out of memory");
                        }
                        json_object_array_add(rows, row);
                        n++;
                }
        }
        if (rows) {
                printf("%zu GPU%s:\n\n", n, n == 1 ? "" : "s");
                r = columns_add_defs(&cols, overview_columns, ELEMENTSOF(overview_columns));
                if (r >= 0)
                        r = output_table(stdout, &cols, rows, "");
                columns_free(&cols);
                json_object_put(rows);
                json_object_put(c->report.errors);
                c->report.errors = NULL;
                if (r < 0)
                        return cli_fail(c, r, "cannot format the output: %s", strerror(-r));
        }
        free(c->report.error_message);
        c->report.error_message = NULL;

        /* whether amdsmid runs: learnt above (its PID file, then NameHasOwner, which never
         * starts it) */
        printf("\namdsmid %s.\n\n",
               !daemon        ? "is not running: root changes in-process"
               : other_roots ? "is running on other GPUs than these: changes are refused here"
                             : "is running: changes go through it");
        print_verbs(stdout);
        printf("\nSee 'amdsmi help VERB' for the help of a verb, 'amdsmi --help' for all.\n");
        return 0;
}
