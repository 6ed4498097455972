/* SPDX-License-Identifier: MIT */
/*
 * amdsmi history: the changes recorded in the state directory's history.jsonl (core/history.h),
 * read from the file. -g filters by GPU: PCI addresses match the recorded ones directly (also
 * of GPUs that are gone); indexes are resolved against this machine's GPUs, and a partition
 * selector stands for its GPU (changes are recorded per GPU). -n keeps the last N entries
 * (of those selected).
 *
 *   {"schema": "amdsmi/1", "timestamp": ..., "hostname": ..., "command": "history",
 *    "entries": [{"time", "time_usec", "via", "uid", "pid", "sender", "gpu", "change", "old",
 *                 "new", "result", "errno", "message"}, ...],
 *    "skipped": <malformed lines>, "errors": []}
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "bus-errors.h"
#include "cli.h"
#include "history.h"

static const struct column_def history_columns[] = {
        { "time", "TIME", "time", 0 },
        { "time_usec", NULL, "time_usec", 0 },
        { "via", "VIA", "via", 0 },
        { "uid", "UID", "uid", 0 },
        { "pid", NULL, "pid", 0 },
        { "sender", NULL, "sender", 0 },
        { "gpu", "GPU", "gpu", 0 },
        { "change", "CHANGE", "change", 0 },
        { "old", "OLD", "old", COLUMN_NONE },
        { "new", "NEW", "new", COLUMN_NONE },
        { "result", "RESULT", "result", 0 },
        { "errno", NULL, "errno", 0 },
        { "message", "MESSAGE", "message", COLUMN_NONE },
};

/* The GPUs -g selects, as PCI addresses (NULL-terminated), or NULL for all. Index selectors
 * are resolved against this machine (cli_open()); PCI addresses are taken as they are. */
static int selected_bdfs(struct cli *c, char ***ret) {
        struct selection indexes = {}, saved;
        _cleanup_strv_free_ char **l = NULL;
        size_t n = 0;
        int r;

        if (c->selection.n_items == 0) {
                *ret = NULL;
                return 0;
        }
        l = calloc(c->selection.n_items + 1, sizeof(char *));
        indexes.items = calloc(c->selection.n_items, sizeof(struct selector));
        if (!l || !indexes.items) {
                free(indexes.items);
                return cli_fail(c, -ENOMEM, "out of memory");
        }
        for (size_t i = 0; i < c->selection.n_items; i++) {
                const struct selector *s = &c->selection.items[i];

                switch (s->kind) {
                case SELECTOR_ALL:
                        free(indexes.items);
                        *ret = NULL;
                        return 0;
                case SELECTOR_BDF:
                        l[n] = strdup(s->bdf);
                        if (!l[n++]) {
                                free(indexes.items);
                                return cli_fail(c, -ENOMEM, "out of memory");
                        }
                        break;
                case SELECTOR_INDEX:
                case SELECTOR_UNIQUE_ID: /* both need this machine's GPUs */
                        indexes.items[indexes.n_items] = *s;
                        indexes.items[indexes.n_items++].partition = SELECT_NO_PARTITION;
                        break;
                }
        }

        if (indexes.n_items > 0) {
                char **nl;

                /* only indexes and unique ids need this machine: a recorded GPU may be gone */
                saved = c->selection;
                c->selection = indexes;
                r = cli_open(c);
                c->selection = saved;
                free(indexes.items);
                if (r < 0)
                        return r;
                nl = reallocarray(l, n + c->set.n_gpus + 1, sizeof(char *));
                if (!nl)
                        return cli_fail(c, -ENOMEM, "out of memory");
                l = nl;
                FOREACH_SELECTED_GPU(c, i, gpu) {
                        l[n] = strdup(amdsmi_gpu_get_bdf(gpu));
                        if (!l[n++])
                                return cli_fail(c, -ENOMEM, "out of memory");
                }
                l[n] = NULL;
        } else
                free(indexes.items);

        *ret = TAKE_PTR(l);
        return 0;
}

static bool entry_selected(json_object *entry, char **bdfs) {
        json_object *v;
        const char *gpu;

        if (!bdfs)
                return true;
        if (!json_object_object_get_ex(entry, "gpu", &v) ||
            !json_object_is_type(v, json_type_string))
                return false;
        gpu = json_object_get_string(v);
        for (char **b = bdfs; *b; b++)
                if (strcasecmp(*b, gpu) == 0)
                        return true;
        return false;
}

/* The last @max entries of @all (0: all) that @bdfs selects, oldest first. */
static json_object *select_entries(json_object *all, char **bdfs, uint64_t max) {
        size_t n = json_object_array_length(all), first = 0, kept = 0;
        json_object *out = json_object_new_array();

        if (!out)
                return NULL;
        /* walk back to the first entry of the last @max selected */
        for (size_t i = n; i-- > 0;) {
                if (!entry_selected(json_object_array_get_idx(all, i), bdfs))
                        continue;
                if (max > 0 && kept == max)
                        break;
                kept++;
                first = i;
        }
        for (size_t i = first; kept > 0 && i < n; i++) {
                json_object *e = json_object_array_get_idx(all, i);

                if (entry_selected(e, bdfs) && json_object_array_add(out, json_object_get(e)) < 0) {
                        json_object_put(e);
                        json_object_put(out);
                        return NULL;
                }
        }
        return out;
}

/* @s with control characters written as \n, \t, \xNN: one table line per entry, and nothing
 * in a recorded value can drive the terminal. */
static char *escape_controls(const char *s) {
        size_t n = 0;
        char *out, *o;

        for (const char *p = s; *p; p++)
                n += (unsigned char) *p < 0x20 || *p == 0x7f ? 4 : 1;
        out = o = malloc(n + 1);
        if (!out)
                return NULL;
        for (const unsigned char *p = (const unsigned char *) s; *p; p++) {
                if (*p == '\n')
                        o += sprintf(o, "\\n");
                else if (*p == '\t')
                        o += sprintf(o, "\\t");
                else if (*p < 0x20 || *p == 0x7f)
                        o += sprintf(o, "\\x%02x", *p);
                else
                        *o++ = (char) *p;
        }
        *o = '\0';
        return out;
}

/* The rows of the table: copies of the entries with their strings escaped. */
static json_object *table_rows(json_object *entries) {
        json_object *rows = json_object_new_array();

        if (!rows)
                return NULL;
        for (size_t i = 0; i < json_object_array_length(entries); i++) {
                json_object *row = json_object_new_object();

                if (!row || json_object_array_add(rows, row) < 0) {
                        json_object_put(row);
                        json_object_put(rows);
                        return NULL;
                }
                json_object_object_foreach(json_object_array_get_idx(entries, i), k, v) {
                        json_object *copy;

                        if (json_object_is_type(v, json_type_string)) {
                                _cleanup_free_ char *e = escape_controls(json_object_get_string(v));

                                copy = e ? json_object_new_string(e) : NULL;
                                if (!copy) {
                                        json_object_put(rows);
                                        return NULL;
                                }
                        } else
                                copy = json_object_get(v);
                        json_set(row, k, copy);
                }
        }
        return rows;
}

static int emit(struct cli *c, json_object *entries, unsigned skipped, const char *path) {
        struct columns cols = {};
        json_object *doc, *rows;
        int r;

        if (c->format == OUTPUT_JSON) {
                doc = document_new(c->report.command, &c->report.sample_time, c->report.hostname);
                if (!doc)
                        return cli_fail(c, -ENOMEM, "out of memory");
                json_set(doc, "entries", json_object_get(entries));
                json_set(doc, "skipped", json_object_new_uint64(skipped));
                json_set(doc, "errors", c->report.errors ? c->report.errors : json_object_new_array());
                c->report.errors = NULL;
                r = cli_print_json(c, doc);
                json_object_put(doc);
                return r;
        }

        if (skipped > 0)
                fprintf(stderr, "amdsmi: %s: %u malformed line%s skipped\n", path, skipped,
                        skipped == 1 ? "" : "s");
        if (c->format == OUTPUT_TABLE && json_object_array_length(entries) == 0) {
                fprintf(stderr, "amdsmi: no change recorded%s in %s\n",
                        c->selection.n_items > 0 ? " for the selected GPUs" : "", path);
                return 0;
        }
        r = columns_add_defs(&cols, history_columns, ELEMENTSOF(history_columns));
        if (r < 0) {
                columns_free(&cols);
                return cli_fail(c, r, "out of memory");
        }
        if (c->format == OUTPUT_CSV) {
                r = output_csv_header(stdout, &cols);
                if (r >= 0)
                        r = output_csv_rows(stdout, &cols, entries);
        } else {
                rows = table_rows(entries);
                r = rows ? output_table(stdout, &cols, rows, "") : -ENOMEM;
                json_object_put(rows);
        }
        columns_free(&cols);
        if (r < 0)
                return cli_fail(c, r, "cannot format the output: %s", strerror(-r));
        return 0;
}

int verb_history(struct cli *c) {
        _cleanup_strv_free_ char **bdfs = NULL;
        json_object *all = NULL, *entries;
        unsigned skipped = 0, max;
        char path[PATH_MAX];
        int r;

        cli_begin_sample(c);
        r = history_path(path, sizeof(path));
        if (r < 0)
                return cli_fail(c, r, "cannot name the history file: %s", strerror(-r));

        /* with a filter, the last N are counted among the selected entries */
        max = c->selection.n_items > 0 || c->count > UINT_MAX ? 0 : (unsigned) c->count;
        r = -ENOTCONN;
        if (!c->direct && cli_daemon_running(c)) {
                /* amdsmid reads the file for everyone (it is 0640, root's) */
                json_object *doc = NULL, *v;

                r = cli_bus_call(c, AMDSMI_BUS_PATH, NULL, AMDSMI_BUS_IFACE_MANAGER, "GetHistory",
                                 0, &doc, NULL, "u", (uint32_t) max);
                if (r >= 0 && json_object_object_get_ex(doc, "entries", &v) &&
                    json_object_is_type(v, json_type_array)) {
                        all = json_object_get(v);
                        if (json_object_object_get_ex(doc, "skipped", &v))
                                skipped = (unsigned) json_object_get_uint64(v);
                } else if (r >= 0)
                        r = -EBADMSG;
                json_object_put(doc);
        }
        if (r < 0)
                r = history_read(max, &all, &skipped);
        if (r == -EACCES || r == -EPERM)
                return cli_fail(c, r,
                                "cannot read %s: %s (amdsmid answers 'amdsmi history' for "
                                "everyone when it runs)",
                                path, strerror(-r));
        if (r < 0)
                return cli_fail(c, r, "cannot read %s: %s", path,
                                history_error(r, (char[512]){}, 512));

        r = selected_bdfs(c, &bdfs);
        if (r < 0) {
                json_object_put(all);
                return r;
        }
        entries = select_entries(all, bdfs, c->count);
        json_object_put(all);
        if (!entries)
                return cli_fail(c, -ENOMEM, "out of memory");

        r = emit(c, entries, skipped, path);
        json_object_put(entries);
        if (r < 0)
                return r;
        errno = 0;
        if (fflush(stdout) != 0 || ferror(stdout)) {
                r = errno > 0 ? -errno : -EPIPE;
                return cli_fail(c, r, "cannot write to standard output: %s", strerror(-r));
        }
        return 0;
}
