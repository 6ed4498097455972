/* SPDX-License-Identifier: MIT */
/*
 * amdsmi topology: the "topology" document (topology-json.h), through amdsmid when it runs.
 *
 *   table  the GPUs (NUMA node, local CPUs, hive, XGMI ids), then one matrix per property of
 *          the GPU pairs, as amd-smi prints them: LINK TYPE, HOPS, WEIGHT, XGMI LINKS,
 *          BANDWIDTH (MB/s, min-max); the partition pairs' matrices follow when -g names
 *          partitions or there are at most PARTITION_TABLE_MAX of them
 *   CSV    one row per pair: level (gpu, partition), from, to and the pair's values (the
 *          partition matrices' cells too)
 *   JSON   the document
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "documents.h"
#include "json-util.h"
#include "macro.h"
#include "parse-util.h"
#include "topology-json.h"

/* Beyond this many partitions, their matrices are for --json and --csv (or a -g N.P). */
#define PARTITION_TABLE_MAX 16

static const struct column_def gpu_columns[] = {
        { "gpu", "GPU", "gpu", 0 },
        { "bdf", "BDF", "bdf", 0 },
        { "numa_node", "NUMA", "numa_node", 0 },
        { "cpu_affinity", "CPUS", "cpu_affinity", 0 },
        { "hive_id", "HIVE ID", "hive_id", 0 },
        { "xgmi_physical_id", "XGMI ID", "xgmi_physical_id", 0 },
};

static const struct column_def pair_columns[] = {
        { "level", NULL, "level", 0 },
        { "from", NULL, "from", 0 },
        { "to", NULL, "to", 0 },
        { "type", NULL, "type", 0 },
        { "hops", NULL, "hops", 0 },
        { "weight", NULL, "weight", 0 },
        { "xgmi_links", NULL, "xgmi_links", 0 },
        { "min_bandwidth_mbps", NULL, "min_bandwidth_mbps", 0 },
        { "max_bandwidth_mbps", NULL, "max_bandwidth_mbps", 0 },
};

static json_object *get(json_object *o, const char *key) {
        json_object *v = NULL;

        if (!json_object_is_type(o, json_type_object) || !json_object_object_get_ex(o, key, &v))
                return NULL;
        return v;
}

static const char *str(json_object *o, const char *key) {
        json_object *v = get(o, key);

        return json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
}

/* A cell of a matrix: the value of @key, or "min-max" for the bandwidth ("N/A": null). */
static void cell(json_object *pair, const char *key, char *buf, size_t size) {
        json_object *v;

        if (strcmp(key, "bandwidth") == 0) {
                json_object *lo = get(pair, "min_bandwidth_mbps"),
                            *hi = get(pair, "max_bandwidth_mbps");

                if (lo && hi)
                        snprintf(buf, size, "%s-%s", json_object_get_string(lo),
                                 json_object_get_string(hi));
                else
                        snprintf(buf, size, "N/A");
                return;
        }
        v = get(pair, key);
        snprintf(buf, size, "%s", v ? json_object_get_string(v) : "N/A");
}

static const char *const matrix_keys[] = {
        "type", "hops", "weight", "xgmi_links", "min_bandwidth_mbps", "max_bandwidth_mbps"
};

/* Whether "partition_links" has the shape read here: "ends" and, per key, an array of rows of
 * as many values (json-c asserts the type of what it indexes). */
static bool matrix_usable(json_object *m) {
        json_object *ends = get(m, "ends");
        size_t n;

        if (!json_object_is_type(ends, json_type_array))
                return false;
        n = json_object_array_length(ends);
        for (size_t i = 0; i < n; i++)
                if (!json_object_is_type(json_object_array_get_idx(ends, i), json_type_string))
                        return false;
        for (size_t k = 0; k < ELEMENTSOF(matrix_keys); k++) {
                json_object *rows = get(m, matrix_keys[k]);

                if (!json_object_is_type(rows, json_type_array) ||
                    json_object_array_length(rows) != n)
                        return false;
                for (size_t i = 0; i < n; i++) {
                        json_object *row = json_object_array_get_idx(rows, i);

                        if (!json_object_is_type(row, json_type_array) ||
                            json_object_array_length(row) != n)
                                return false;
                }
        }
        return n > 0;
}

/* The value of @key from ends[i] to ends[j] (NULL: null) of a usable matrix. */
static json_object *matrix_at(json_object *m, const char *key, size_t i, size_t j) {
        return json_object_array_get_idx(json_object_array_get_idx(get(m, key), i), j);
}

static void matrix_cell(json_object *m, const char *key, size_t i, size_t j, char *buf,
                        size_t size) {
        json_object *v;

        if (strcmp(key, "bandwidth") == 0) {
                json_object *lo = matrix_at(m, "min_bandwidth_mbps", i, j),
                            *hi = matrix_at(m, "max_bandwidth_mbps", i, j);

                if (lo && hi)
                        snprintf(buf, size, "%s-%s", json_object_get_string(lo),
                                 json_object_get_string(hi));
                else
                        snprintf(buf, size, "N/A");
                return;
        }
        v = matrix_at(m, key, i, j);
        snprintf(buf, size, "%s", v ? json_object_get_string(v) : "N/A");
}

/* The ends the pairs name, in order of first appearance ("0", "1", ... or "0.0", ...). */
static int pair_labels(json_object *pairs, char ***ret) {
        _cleanup_strv_free_ char **l = NULL;

        for (size_t i = 0; i < json_object_array_length(pairs); i++) {
                const char *from = str(json_object_array_get_idx(pairs, i), "from");
                bool seen = false;
                int r;

                if (!from)
                        continue;
                for (char **s = l; s && *s && !seen; s++)
                        seen = strcmp(*s, from) == 0;
                if (seen)
                        continue;
                r = strv_extend(&l, from);
                if (r < 0)
                        return r;
        }
        *ret = TAKE_PTR(l);
        return 0;
}

/* One matrix: a row per "from", a column per "to", the cell of @key; GPU ends named GPU<n>. */
static int print_matrix(json_object *pairs, char **labels, const char *title, const char *key) {
        size_t n = strv_length(labels), width = 4;
        char buf[64];

        for (size_t i = 0; i < json_object_array_length(pairs); i++) {
                cell(json_object_array_get_idx(pairs, i), key, buf, sizeof(buf));
                width = width > strlen(buf) ? width : strlen(buf);
        }
        for (size_t i = 0; i < n; i++)
                width = width > strlen(labels[i]) + 3 ? width : strlen(labels[i]) + 3;
        printf("%s\n%-*s", title, (int) width, "");
        for (size_t j = 0; j < n; j++) {
                snprintf(buf, sizeof(buf), "GPU%s", labels[j]);
                printf("  %-*s", j + 1 < n ? (int) width : 0, buf);
        }
        fputc('\n', stdout);
        for (size_t i = 0; i < n; i++) {
                snprintf(buf, sizeof(buf), "GPU%s", labels[i]);
                printf("%-*s", (int) width, buf);
                for (size_t j = 0; j < n; j++) {
                        json_object *pair = NULL;

                        /* the pairs come row by row: (i, j) is at i * n + j when complete */
                        if (i * n + j < json_object_array_length(pairs)) {
                                json_object *p = json_object_array_get_idx(pairs, i * n + j);
                                const char *f = str(p, "from"), *t = str(p, "to");

                                if (f && t && strcmp(f, labels[i]) == 0 &&
                                    strcmp(t, labels[j]) == 0)
                                        pair = p;
                        }
                        for (size_t k = 0; !pair && k < json_object_array_length(pairs); k++) {
                                json_object *p = json_object_array_get_idx(pairs, k);
                                const char *f = str(p, "from"), *t = str(p, "to");

                                if (f && t && strcmp(f, labels[i]) == 0 &&
                                    strcmp(t, labels[j]) == 0)
                                        pair = p;
                        }
                        if (pair)
                                cell(pair, key, buf, sizeof(buf));
                        else
                                snprintf(buf, sizeof(buf), "N/A");
                        printf("  %-*s", j + 1 < n ? (int) width : 0, buf);
                }
                fputc('\n', stdout);
        }
        return ferror(stdout) ? -EIO : 0;
}

/* The matrices of a table, one per property. */
static const struct {
        const char *title, *key;
} props[] = {
        { "LINK TYPE", "type" },
        { "HOPS", "hops" },
        { "WEIGHT", "weight" },
        { "XGMI LINKS", "xgmi_links" },
        { "BANDWIDTH (MB/s, min-max)", "bandwidth" },
};

static int print_matrices(json_object *pairs, const char *what) {
        _cleanup_strv_free_ char **labels = NULL;
        int r;

        r = pair_labels(pairs, &labels);
        for (size_t i = 0; r >= 0 && i < ELEMENTSOF(props); i++) {
                char title[96];

                snprintf(title, sizeof(title), "\n%s%s", props[i].title, what);
                r = print_matrix(pairs, labels, title, props[i].key);
        }
        return r;
}

/* One matrix of the partition pairs: @key's rows of the "partition_links" matrices. */
static int print_partition_matrix(json_object *plinks, const char *title, const char *key) {
        json_object *ends = get(plinks, "ends");
        size_t n = json_object_array_length(ends), width = 4;
        char buf[64];

        for (size_t i = 0; i < n; i++)
                for (size_t j = 0; j < n; j++) {
                        matrix_cell(plinks, key, i, j, buf, sizeof(buf));
                        width = width > strlen(buf) ? width : strlen(buf);
                }
        for (size_t i = 0; i < n; i++) {
                const char *e = json_object_get_string(json_object_array_get_idx(ends, i));

                width = width > strlen(e) + 3 ? width : strlen(e) + 3;
        }
        printf("%s\n%-*s", title, (int) width, "");
        for (size_t j = 0; j < n; j++) {
                snprintf(buf, sizeof(buf), "GPU%s",
                         json_object_get_string(json_object_array_get_idx(ends, j)));
                printf("  %-*s", j + 1 < n ? (int) width : 0, buf);
        }
        fputc('\n', stdout);
        for (size_t i = 0; i < n; i++) {
                snprintf(buf, sizeof(buf), "GPU%s",
                         json_object_get_string(json_object_array_get_idx(ends, i)));
                printf("%-*s", (int) width, buf);
                for (size_t j = 0; j < n; j++) {
                        matrix_cell(plinks, key, i, j, buf, sizeof(buf));
                        printf("  %-*s", j + 1 < n ? (int) width : 0, buf);
                }
                fputc('\n', stdout);
        }
        return ferror(stdout) ? -EIO : 0;
}

static bool selection_names_partitions(const struct cli *c) {
        for (size_t i = 0; i < c->selection.n_items; i++)
                if (c->selection.items[i].partition != SELECT_NO_PARTITION)
                        return true;
        return false;
}

static int print_table(struct cli *c, json_object *doc) {
        struct columns cols = {};
        json_object *plinks = get(doc, "partition_links");
        size_t n_parts;
        int r;

        r = columns_add_defs(&cols, gpu_columns, ELEMENTSOF(gpu_columns));
        if (r >= 0)
                r = output_table(stdout, &cols, get(doc, "gpus"), "");
        columns_free(&cols);
        if (r >= 0 && json_object_is_type(get(doc, "links"), json_type_array))
                r = print_matrices(get(doc, "links"), "");
        if (r < 0 || !matrix_usable(plinks))
                return r;
        n_parts = json_object_array_length(get(plinks, "ends"));
        if (n_parts <= PARTITION_TABLE_MAX || selection_names_partitions(c)) {
                for (size_t i = 0; r >= 0 && i < ELEMENTSOF(props); i++) {
                        char title[96];

                        snprintf(title, sizeof(title), "\n%s (partitions)", props[i].title);
                        r = print_partition_matrix(plinks, title, props[i].key);
                }
                return r;
        }
        printf("\n%zu partitions: their pairs are in --json and --csv (or select some with "
               "-g N.P)\n",
               n_parts);
        return ferror(stdout) ? -EIO : 0;
}

/* A CSV cell of a matrix value, after a comma: the value, empty for null; a string quoted
 * as RFC 4180 wants it (the document may be amdsmid's). */
static void csv_value(json_object *v) {
        fputc(',', stdout);
        if (json_object_is_type(v, json_type_string)) {
                char *q = csv_quote(json_object_get_string(v));

                fputs(q ? q : "", stdout);
                free(q);
        } else if (v) {
                fputs(json_object_get_string(v), stdout);
        }
}

static int print_csv(json_object *doc) {
        struct columns cols = {};
        json_object *rows = json_object_new_array(), *plinks = get(doc, "partition_links"),
                    *links = get(doc, "links");
        int r = rows ? 0 : -ENOMEM;

        for (size_t i = 0; r >= 0 && json_object_is_type(links, json_type_array) &&
                           i < json_object_array_length(links);
             i++) {
                json_object *p = json_object_array_get_idx(links, i);

                if (!json_object_is_type(p, json_type_object))
                        continue;
                json_set(p, "level", json_object_new_string("gpu"));
                r = json_object_array_add(rows, json_object_get(p));
        }
        if (r >= 0)
                r = columns_add_defs(&cols, pair_columns, ELEMENTSOF(pair_columns));
        if (r >= 0)
                r = output_csv_header(stdout, &cols);
        if (r >= 0)
                r = output_csv_rows(stdout, &cols, rows);
        columns_free(&cols);
        json_object_put(rows);
        /* the partition pairs, straight from the matrices (4096 rows for 64 partitions: one
         * JSON object per row was most of the time) in pair_columns' order */
        if (r >= 0 && matrix_usable(plinks)) {
                json_object *ends = get(plinks, "ends");
                size_t n = json_object_array_length(ends);

                for (size_t i = 0; i < n; i++)
                        for (size_t j = 0; j < n; j++) {
                                fputs("partition", stdout);
                                csv_value(json_object_array_get_idx(ends, i));
                                csv_value(json_object_array_get_idx(ends, j));
                                for (size_t k = 0; k < ELEMENTSOF(matrix_keys); k++)
                                        csv_value(matrix_at(plinks, matrix_keys[k], i, j));
                                fputc('\n', stdout);
                        }
                r = ferror(stdout) ? -EIO : 0;
        }
        return r;
}

/* amdsmid's "errors" and "notes" as the in-process reading reports them. */
static void replay(struct cli *c, json_object *doc) {
        json_object *a = get(doc, "errors");

        if (json_object_is_type(a, json_type_array))
                for (size_t i = 0; i < json_object_array_length(a); i++)
                        report_replay_error(&c->report, json_object_array_get_idx(a, i));
        a = get(doc, "notes");
        if (json_object_is_type(a, json_type_array))
                for (size_t i = 0; i < json_object_array_length(a); i++)
                        report_note(&c->report, "%s",
                                    json_object_get_string(json_object_array_get_idx(a, i)));
        json_object_object_del(doc, "notes");
}

static int topology_sample(struct cli *c) {
        json_object *doc = NULL;
        int r;

        r = cli_print_daemon_text(c, "topology");
        if (r != 0)
                return r < 0 ? r : 0;
        r = cli_read_daemon_document(c, "topology", &doc);
        if (r < 0)
                return cli_fail(c, r, "%s", strerror(-r));
        if (r > 0) {
                replay(c, doc);
                if (c->format == OUTPUT_JSON) {
                        /* the errors replayed: the document says them again */
                        json_object_put(c->report.errors);
                        c->report.errors = NULL;
                }
        } else {
                struct doc_query q;

                cli_doc_query(c, &q);
                doc = topology_document(&q);
                if (!doc) /* out of memory (reported, or to report) */
                        return c->report.error_message ? -ENOMEM
                                                       : cli_fail(c, -ENOMEM, "out of memory");
        }
        switch (c->format) {
        case OUTPUT_JSON:
                r = cli_print_json(c, doc);
                break;
        case OUTPUT_CSV:
                r = print_csv(doc);
                break;
        case OUTPUT_TABLE:
                r = print_table(c, doc);
                break;
        }
        json_object_put(doc);
        return cli_sample_done(c, NULL, r);
}

int verb_topology(struct cli *c) {
        return cli_open_run(c, topology_sample);
}
