/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/printbuf.h>

#include "exit-codes.h"
#include "macro.h"
#include "output.h"

/* Splits the first segment of @path: name [@name, @name_end), an optional bracket
 * [@br, @br_end) (contents without the brackets; @br NULL if none) and the rest. */
static int path_split(const char *path, const char **name_end, const char **br, const char **br_end,
                      const char **rest) {
        const char *p = path;

        while (*p && *p != '.' && *p != '[')
                p++;
        *name_end = p;
        *br = *br_end = NULL;
        if (*p == '[') {
                const char *close = strchr(p, ']');

                if (!close)
                        return -EINVAL;
                *br = p + 1;
                *br_end = close;
                p = close + 1;
        }
        if (*p == '.')
                p++;
        else if (*p != '\0')
                return -EINVAL;
        *rest = p;
        return 0;
}

static bool cell_equals(json_object *v, const char *s, size_t len) {
        char *c = output_cell(v, OUTPUT_CSV, 0);
        bool eq = c && strlen(c) == len && memcmp(c, s, len) == 0;

        free(c);
        return eq;
}

json_object *json_path_get(json_object *root, const char *path) {
        const char *name_end, *br, *br_end, *rest;
        json_object *child;
        char key[128];
        size_t klen;

        if (!root || json_object_get_type(root) == json_type_null)
                return NULL;
        if (!path || !*path)
                return json_object_get(root);
        if (path_split(path, &name_end, &br, &br_end, &rest) < 0)
                return NULL;

        klen = (size_t) (name_end - path);
        if (klen == 0) {
                child = root;
        } else {
                if (klen >= sizeof(key) || !json_object_is_type(root, json_type_object))
                        return NULL;
                memcpy(key, path, klen);
                key[klen] = '\0';
                if (!json_object_object_get_ex(root, key, &child))
                        return NULL;
        }
        if (!child || json_object_get_type(child) == json_type_null)
                return NULL;

        if (!br)
                return json_path_get(child, rest);

        if (!json_object_is_type(child, json_type_array))
                return NULL;

        if (br == br_end) {
                /* "[]": map the rest over the elements */
                json_object *out = json_object_new_array();
                size_t n = json_object_array_length(child);

                if (!out)
                        return NULL;
                for (size_t i = 0; i < n; i++) {
                        json_object *e = json_path_get(json_object_array_get_idx(child, i), rest);

                        json_object_array_add(out, e);
                }
                return out;
        } else {
                /* "[key=value]": the first element whose key renders as value */
                const char *eq = memchr(br, '=', (size_t) (br_end - br));
                size_t n = json_object_array_length(child);

                if (!eq || (size_t) (eq - br) >= sizeof(key))
                        return NULL;
                memcpy(key, br, (size_t) (eq - br));
                key[eq - br] = '\0';
                for (size_t i = 0; i < n; i++) {
                        json_object *e = json_object_array_get_idx(child, i), *k;
                        bool match;

                        if (!e || !json_object_is_type(e, json_type_object))
                                continue;
                        k = json_path_get(e, key);
                        match = k && cell_equals(k, eq + 1, (size_t) (br_end - eq - 1));
                        json_object_put(k);
                        if (match)
                                return json_path_get(e, rest);
                }
                return NULL;
        }
}

/* A growable string. */
struct buf {
        char *s;
        size_t len, cap;
        bool oom;
};

static void buf_add(struct buf *b, const char *s, size_t n) {
        if (b->oom)
                return;
        if (b->len + n + 1 > b->cap) {
                size_t cap = b->cap ? b->cap : 64;
                char *p;

                while (cap < b->len + n + 1)
                        cap *= 2;
                p = realloc(b->s, cap);
                if (!p) {
                        b->oom = true;
                        return;
                }
                b->s = p;
                b->cap = cap;
        }
        memcpy(b->s + b->len, s, n);
        b->len += n;
        b->s[b->len] = '\0';
}

static void buf_adds(struct buf *b, const char *s) {
        buf_add(b, s, strlen(s));
}

static char *buf_take(struct buf *b) {
        if (b->oom) {
                free(b->s);
                return NULL;
        }
        if (!b->s)
                return strdup("");
        return b->s;
}

char *output_cell(json_object *v, enum output_format format, unsigned flags) {
        char tmp[48];

        if (!v)
                return NULL;

        switch (json_object_get_type(v)) {
        case json_type_null:
                return NULL;

        case json_type_boolean:
                if (format == OUTPUT_TABLE)
                        return strdup(json_object_get_boolean(v) ? "yes" : "no");
                return strdup(json_object_get_boolean(v) ? "true" : "false");

        case json_type_int:
                if (format == OUTPUT_TABLE && (flags & COLUMN_HEX)) {
                        snprintf(tmp, sizeof(tmp), "0x%" PRIx64, json_object_get_uint64(v));
                        return strdup(tmp);
                }
                if (format == OUTPUT_TABLE && (flags & COLUMN_MIB)) {
                        snprintf(tmp, sizeof(tmp), "%" PRIu64,
                                 json_object_get_uint64(v) / (UINT64_C(1) << 20));
                        return strdup(tmp);
                }
                return strdup(json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN));

        case json_type_double: {
                char *c = strdup(json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN));

                if (c && format == OUTPUT_TABLE && (flags & COLUMN_WHOLE)) {
                        char *dot = strchr(c, '.');

                        if (dot)
                                *dot = '\0';
                        if (strcmp(c, "-0") == 0)
                                strcpy(c, "0");
                }
                return c;
        }

        case json_type_string:
                return strdup(json_object_get_string(v));

        case json_type_array: {
                struct buf b = {};
                size_t n = json_object_array_length(v);

                for (size_t i = 0; i < n; i++) {
                        char *c = output_cell(json_object_array_get_idx(v, i), format, flags);

                        if (i > 0)
                                buf_adds(&b, format == OUTPUT_TABLE ? "," : ";");
                        if (c)
                                buf_adds(&b, c);
                        else if (format == OUTPUT_TABLE)
                                buf_adds(&b, "N/A");
                        free(c);
                }
                if (n == 0)
                        return format == OUTPUT_TABLE ? strdup("-") : strdup("");
                return buf_take(&b);
        }

        case json_type_object:
                return strdup(json_object_to_json_string_ext(
                        v, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
        }
        return NULL;
}

char *csv_quote(const char *s) {
        struct buf b = {};
        size_t len;

        if (!s)
                return strdup("");
        len = strlen(s);
        if (!strpbrk(s, ",\"\r\n") && (len == 0 || (s[0] != ' ' && s[len - 1] != ' ')))
                return strdup(s);

        buf_adds(&b, "\"");
        for (const char *p = s; *p; p++) {
                if (*p == '"')
                        buf_adds(&b, "\"\"");
                else
                        buf_add(&b, p, 1);
        }
        buf_adds(&b, "\"");
        return buf_take(&b);
}

static char *xstrdup_or_null(const char *s) {
        return s ? strdup(s) : NULL;
}

int columns_add(struct columns *c, const char *name, const char *header, const char *path,
                unsigned flags) {
        struct column *v;

        v = realloc(c->v, (c->n + 1) * sizeof(*c->v));
        if (!v)
                return -ENOMEM;
        c->v = v;
        v = &c->v[c->n];
        *v = (struct column){
                .name = xstrdup_or_null(name),
                .header = xstrdup_or_null(header),
                .path = xstrdup_or_null(path),
                .flags = flags,
        };
        if ((name && !v->name) || (header && !v->header) || (path && !v->path)) {
                free(v->name);
                free(v->header);
                free(v->path);
                return -ENOMEM;
        }
        c->n++;
        return 0;
}

int columns_add_defs(struct columns *c, const struct column_def *defs, size_t n) {
        for (size_t i = 0; i < n; i++) {
                int r = columns_add(c, defs[i].name, defs[i].header, defs[i].path, defs[i].flags);

                if (r < 0)
                        return r;
        }
        return 0;
}

bool columns_has(const struct columns *c, const char *name) {
        for (size_t i = 0; i < c->n; i++)
                if (c->v[i].name && strcmp(c->v[i].name, name) == 0)
                        return true;
        return false;
}

void columns_free(struct columns *c) {
        for (size_t i = 0; i < c->n; i++) {
                free(c->v[i].name);
                free(c->v[i].header);
                free(c->v[i].path);
        }
        free(c->v);
        c->v = NULL;
        c->n = 0;
}

/* Display width of UTF-8 text: code points, not bytes. */
static size_t text_width(const char *s) {
        size_t w = 0;

        for (; *s; s++)
                if (((unsigned char) *s & 0xc0) != 0x80)
                        w++;
        return w;
}

/* A table cell: "N/A" for null ("-" with COLUMN_NONE), control characters replaced. */
static char *table_cell(json_object *row, const struct column *col) {
        json_object *v = json_path_get(row, col->path);
        char *c = output_cell(v, OUTPUT_TABLE, col->flags);

        json_object_put(v);
        if (!c)
                return strdup(col->flags & COLUMN_NONE ? "-" : "N/A");
        for (char *p = c; *p; p++)
                if ((unsigned char) *p < 0x20 || *p == 0x7f)
                        *p = '?';
        return c;
}

static bool is_numeric_cell(json_object *row, const struct column *col) {
        json_object *v = json_path_get(row, col->path);
        bool numeric = !v || json_object_is_type(v, json_type_int) ||
                       json_object_is_type(v, json_type_double);

        json_object_put(v);
        return numeric;
}

static void print_padded(FILE *f, const char *s, size_t width, bool right, bool last) {
        size_t w = text_width(s);

        if (right)
                fprintf(f, "%*s%s", (int) (width > w ? width - w : 0), "", s);
        else if (last)
                fputs(s, f);
        else
                fprintf(f, "%s%*s", s, (int) (width > w ? width - w : 0), "");
}

const char *output_state_marker(json_object *row) {
        json_object *v = NULL;
        const char *s;

        if (!json_object_object_get_ex(row, "state", &v) ||
            !json_object_is_type(v, json_type_string))
                return NULL;
        s = json_object_get_string(v);
        if (strcmp(s, "resetting") == 0)
                return "RESET";
        if (strcmp(s, "no_driver") == 0)
                return "NO DRIVER";
        return NULL;
}

/* The columns a GPU without values keeps: who it is. */
static bool is_identity_path(const char *path) {
        static const char *const keys[] = { "gpu", "bdf", "product", "role", "driver", "state" };

        for (size_t i = 0; i < ELEMENTSOF(keys); i++)
                if (strcmp(path, keys[i]) == 0)
                        return true;
        return false;
}

static int print_table(FILE *f, const struct columns *cols, json_object *rows, const char *indent,
                       bool header) {
        size_t n_rows = rows ? json_object_array_length(rows) : 0;
        size_t *width = NULL, n_cols = 0, *idx = NULL;
        bool *right = NULL, *marker_shown = NULL;
        char **cells = NULL;
        int r = -ENOMEM;

        idx = calloc(cols->n + 1, sizeof(*idx));
        width = calloc(cols->n + 1, sizeof(*width));
        right = calloc(cols->n + 1, sizeof(*right));
        if (!idx || !width || !right)
                goto finish;
        for (size_t c = 0; c < cols->n; c++)
                if (cols->v[c].header)
                        idx[n_cols++] = c;

        cells = calloc(n_rows * n_cols + 1, sizeof(*cells));
        marker_shown = calloc(n_rows + 1, sizeof(*marker_shown));
        if (!cells || !marker_shown)
                goto finish;

        for (size_t j = 0; j < n_cols; j++) {
                const struct column *col = &cols->v[idx[j]];

                width[j] = text_width(col->header);
                right[j] = n_rows > 0;
                for (size_t i = 0; i < n_rows; i++) {
                        json_object *row = json_object_array_get_idx(rows, i);
                        const char *marker = output_state_marker(row);
                        char *c;

                        /* a GPU in reset or without a driver: its state once, in place of
                         * the values */
                        if (marker && !is_identity_path(col->path)) {
                                c = strdup(marker_shown[i] ? "" : marker);
                                marker_shown[i] = true;
                        } else
                                c = table_cell(row, col);

                        if (!c)
                                goto finish;
                        cells[i * n_cols + j] = c;
                        if (text_width(c) > width[j])
                                width[j] = text_width(c);
                        if (!is_numeric_cell(row, col))
                                right[j] = false;
                }
        }

        for (size_t j = 0; header && j < n_cols; j++) {
                fputs(j > 0 ? "  " : indent, f);
                print_padded(f, cols->v[idx[j]].header, width[j], right[j], j + 1 == n_cols);
        }
        if (header)
                fputc('\n', f);
        for (size_t i = 0; i < n_rows; i++) {
                fputs(indent, f);
                for (size_t j = 0; j < n_cols; j++) {
                        if (j > 0)
                                fputs("  ", f);
                        print_padded(f, cells[i * n_cols + j], width[j], right[j], j + 1 == n_cols);
                }
                fputc('\n', f);
        }
        r = 0;

finish:
        if (cells)
                for (size_t i = 0; i < n_rows * n_cols; i++)
                        free(cells[i]);
        free(cells);
        free(marker_shown);
        free(idx);
        free(width);
        free(right);
        return r;
}

int output_table(FILE *f, const struct columns *cols, json_object *rows, const char *indent) {
        return print_table(f, cols, rows, indent, true);
}

int output_table_rows(FILE *f, const struct columns *cols, json_object *rows, bool header) {
        return print_table(f, cols, rows, "", header);
}

int output_kv(FILE *f, const struct columns *cols, json_object *row, const char *indent) {
        size_t width = 0;

        for (size_t c = 0; c < cols->n; c++)
                if (cols->v[c].header && text_width(cols->v[c].header) > width)
                        width = text_width(cols->v[c].header);

        for (size_t c = 0; c < cols->n; c++) {
                char *cell;

                if (!cols->v[c].header)
                        continue;
                cell = table_cell(row, &cols->v[c]);
                if (!cell)
                        return -ENOMEM;
                fputs(indent, f);
                print_padded(f, cols->v[c].header, width, false, false);
                fprintf(f, "  %s\n", cell);
                free(cell);
        }
        return 0;
}

int output_csv_header(FILE *f, const struct columns *cols) {
        bool first = true;

        for (size_t c = 0; c < cols->n; c++) {
                char *q;

                if (!cols->v[c].name)
                        continue;
                q = csv_quote(cols->v[c].name);
                if (!q)
                        return -ENOMEM;
                fprintf(f, "%s%s", first ? "" : ",", q);
                free(q);
                first = false;
        }
        fputc('\n', f);
        return 0;
}

int output_csv_rows(FILE *f, const struct columns *cols, json_object *rows) {
        size_t n_rows = rows ? json_object_array_length(rows) : 0;

        for (size_t i = 0; i < n_rows; i++) {
                json_object *row = json_object_array_get_idx(rows, i);
                bool first = true;

                for (size_t c = 0; c < cols->n; c++) {
                        json_object *v;
                        char *cell, *q;

                        if (!cols->v[c].name)
                                continue;
                        v = json_path_get(row, cols->v[c].path);
                        cell = output_cell(v, OUTPUT_CSV, cols->v[c].flags);
                        json_object_put(v);
                        q = csv_quote(cell ? cell : "");
                        free(cell);
                        if (!q)
                                return -ENOMEM;
                        fprintf(f, "%s%s", first ? "" : ",", q);
                        free(q);
                        first = false;
                }
                fputc('\n', f);
        }
        return 0;
}

int output_json(FILE *f, json_object *doc, bool compact) {
        const char *s = json_document_text(doc, compact);

        if (!s)
                return -ENOMEM;
        fputs(s, f);
        fputc('\n', f);
        return 0;
}

static int render(const struct columns *cols, json_object *rows, const char *indent,
                  char **ret) {
        char *text = NULL;
        size_t size = 0;
        FILE *f;
        int r;

        f = open_memstream(&text, &size);
        if (!f)
                return -ENOMEM;
        r = output_table(f, cols, rows, indent);
        if (fclose(f) != 0 && r >= 0)
                r = -ENOMEM;
        if (r < 0) {
                free(text);
                return r;
        }
        *ret = text;
        return 0;
}

/* Splits @text in place into at most @max lines. */
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

int output_nested_table(FILE *f, const struct columns *pcols, json_object *prows,
                        const struct columns *ccols, json_object *crows, const size_t *counts,
                        const char *indent) {
        _cleanup_free_ char *ptext = NULL, *ctext = NULL;
        _cleanup_free_ char **plines = NULL, **clines = NULL;
        size_t n = json_object_array_length(prows), nc = json_object_array_length(crows);
        size_t np, ncl, cl = 1;
        int r;

        r = render(pcols, prows, "", &ptext);
        if (r >= 0)
                r = render(ccols, crows, indent, &ctext);
        if (r < 0)
                return r;
        plines = calloc(n + 2, sizeof(char *));
        clines = calloc(nc + 2, sizeof(char *));
        if (!plines || !clines)
                return -ENOMEM;
        np = split_lines(ptext, plines, n + 1);
        ncl = split_lines(ctext, clines, nc + 1);
        if (np > 0)
                fprintf(f, "%s\n", plines[0]);
        for (size_t i = 0; i < n && i + 1 < np; i++) {
                fprintf(f, "%s\n", plines[i + 1]);
                if (counts[i] == 0)
                        continue;
                if (ncl > 0)
                        fprintf(f, "%s\n", clines[0]);
                for (size_t j = 0; j < counts[i] && cl < ncl; j++)
                        fprintf(f, "%s\n", clines[cl++]);
        }
        return ferror(f) ? -EIO : 0;
}

static int print_nested(FILE *f, json_object *parents, const char *child_key,
                        const struct columns *pcols, const struct columns *ccols,
                        output_row_fn row_fn) {
        size_t n = json_object_array_length(parents);
        json_object *prows = json_object_new_array(), *crows = json_object_new_array();
        size_t *counts = calloc(n ? n : 1, sizeof(*counts));
        int r = -ENOMEM;

        if (!prows || !crows || !counts)
                goto finish;
        for (size_t i = 0; i < n; i++) {
                json_object *p = json_object_array_get_idx(parents, i), *children = NULL;

                json_object_array_add(prows, row_fn(p, NULL, true));
                json_object_object_get_ex(p, child_key, &children);
                /* a GPU in reset or without a driver: its state alone */
                counts[i] = children && !output_state_marker(p) ? json_object_array_length(children)
                                                                : 0;
                for (size_t k = 0; k < counts[i]; k++)
                        json_object_array_add(
                                crows, row_fn(p, json_object_array_get_idx(children, k), true));
        }
        r = output_nested_table(f, pcols, prows, ccols, crows, counts, "      ");
finish:
        json_object_put(prows);
        json_object_put(crows);
        free(counts);
        return r;
}

static int print_flat(FILE *f, json_object *parents, const char *child_key,
                      const struct columns *cols, output_row_fn row_fn,
                      const struct output_watch *w) {
        json_object *rows = json_object_new_array();
        int r;

        if (!rows)
                return -ENOMEM;
        for (size_t i = 0; i < json_object_array_length(parents); i++) {
                json_object *p = json_object_array_get_idx(parents, i), *children = NULL;
                size_t k;

                json_object_object_get_ex(p, child_key, &children);
                k = children ? json_object_array_length(children) : 0;
                if (k == 0) /* no children (or unknown): one line with empty cells */
                        json_object_array_add(rows, row_fn(p, NULL, false));
                for (size_t j = 0; j < k; j++)
                        json_object_array_add(
                                rows, row_fn(p, json_object_array_get_idx(children, j), false));
        }
        if (w && w->stamp)
                for (size_t i = 0; i < json_object_array_length(rows); i++)
                        json_set(json_object_array_get_idx(rows, i), "timestamp",
                                 json_object_new_string(w->stamp));
        r = !w || w->header ? output_csv_header(f, cols) : 0;
        if (r >= 0)
                r = output_csv_rows(f, cols, rows);
        json_object_put(rows);
        return r;
}

int output_parents_children(FILE *f, json_object *parents, const char *child_key,
                            const struct column_def *pdefs, size_t n_pdefs,
                            const struct column_def *cdefs, size_t n_cdefs,
                            output_row_fn row_fn, bool table, const struct output_watch *w) {
        struct columns pcols = {}, ccols = {};
        int r = 0;

        if (table && w && !w->header)
                fputc('\n', f);
        if (!table && w && w->stamp)
                r = columns_add(&pcols, "timestamp", NULL, "timestamp", 0);
        if (r >= 0)
                r = columns_add_defs(&pcols, pdefs, n_pdefs);
        /* in CSV the children's columns follow the parent's in one header */
        if (r >= 0)
                r = columns_add_defs(table ? &ccols : &pcols, cdefs, n_cdefs);
        if (r >= 0)
                r = table ? print_nested(f, parents, child_key, &pcols, &ccols, row_fn)
                          : print_flat(f, parents, child_key, &pcols, row_fn, w);
        columns_free(&pcols);
        columns_free(&ccols);
        return r;
}
