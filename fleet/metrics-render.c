/* SPDX-License-Identifier: MIT */
/*
 * The families of metrics-families.c rendered as Prometheus text 0.0.4 or OpenMetrics 1.0:
 * a family's HELP, TYPE (and UNIT) only when it has samples, label values escaped, values as
 * the shortest decimal that reads back the same, no timestamps.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "metrics-private.h"

struct buf {
        char *p;
        size_t n, cap;
        bool oom;
};

struct metrics_emit {
        struct buf samples; /* the family's samples so far */
        const struct metrics_family *f;
        enum metrics_format fmt;
        size_t count;
        /* the host's VFs (their "bdf"s), left out */
        const char **vfs;
        size_t n_vfs;
};

static void buf_reserve(struct buf *b, size_t more) {
        size_t cap;
        char *p;

        if (b->oom || b->n + more + 1 <= b->cap)
                return;
        cap = b->cap ? b->cap : 4096;
        while (cap < b->n + more + 1)
                cap *= 2;
        p = realloc(b->p, cap);
        if (!p) {
                b->oom = true;
                return;
        }
        b->p = p;
        b->cap = cap;
}

static void buf_add(struct buf *b, const char *s, size_t n) {
        buf_reserve(b, n);
        if (b->oom)
                return;
        memcpy(b->p + b->n, s, n);
        b->n += n;
        b->p[b->n] = 0;
}

static void buf_str(struct buf *b, const char *s) {
        buf_add(b, s, strlen(s));
}

static void buf_char(struct buf *b, char c) {
        buf_add(b, &c, 1);
}

/* Text with \ and newline escaped (and " in label values and OpenMetrics help). */
static void buf_escaped(struct buf *b, const char *s, bool quote) {
        const char *run = s;

        for (; *s; s++) {
                const char *esc = *s == '\\'           ? "\\\\"
                                  : *s == '\n'         ? "\\n"
                                  : quote && *s == '"' ? "\\\""
                                                       : NULL;
                if (!esc)
                        continue;
                buf_add(b, run, (size_t) (s - run));
                buf_str(b, esc);
                run = s + 1;
        }
        buf_add(b, run, (size_t) (s - run));
}

/* The shortest decimal that reads back as @v; whole numbers without exponent up to 1e15. */
static void buf_value(struct buf *b, double v) {
        char s[40];

        if (isnan(v))
                strcpy(s, "NaN");
        else if (isinf(v))
                strcpy(s, v > 0 ? "+Inf" : "-Inf");
        else if (v == floor(v) && fabs(v) < 1e15)
                snprintf(s, sizeof(s), "%.0f", v);
        else
                for (int prec = 15; prec <= 17; prec++) {
                        snprintf(s, sizeof(s), "%.*g", prec, v);
                        if (strtod(s, NULL) == v)
                                break;
                }
        buf_str(b, s);
}

json_object *metrics_get(json_object *o, const char *key) {
        json_object *v;

        if (!o || !json_object_is_type(o, json_type_object) ||
            !json_object_object_get_ex(o, key, &v))
                return NULL;
        return v;
}

const char *metrics_get_string(json_object *o, const char *key) {
        json_object *v = metrics_get(o, key);

        return v && json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
}

json_object *metrics_gpus(json_object *doc) {
        json_object *g;

        if (doc && json_object_is_type(doc, json_type_array))
                return doc;
        g = metrics_get(doc, "gpus");
        return g && json_object_is_type(g, json_type_array) ? g : NULL;
}

bool metrics_gpu_is_host_vf(const struct metrics_emit *e, json_object *g) {
        const char *bdf = metrics_get_string(g, "bdf"), *role = metrics_get_string(g, "role");

        if (role)
                return strcmp(role, "vf") == 0;
        for (size_t i = 0; bdf && e && i < e->n_vfs; i++)
                if (strcmp(e->vfs[i], bdf) == 0)
                        return true;
        return false;
}

/* The host's VFs of the list and static documents. */
static int find_vfs(struct metrics_emit *e, const struct metrics_input *in) {
        json_object *docs[] = { in->list, in->static_doc };

        for (size_t d = 0; d < 2; d++)
                for (size_t i = 0;
                     metrics_gpus(docs[d]) && i < json_object_array_length(metrics_gpus(docs[d]));
                     i++) {
                        json_object *g = json_object_array_get_idx(metrics_gpus(docs[d]), i);
                        const char *role = metrics_get_string(g, "role");
                        const char *bdf = metrics_get_string(g, "bdf");
                        const char **v;

                        if (!role || !bdf || strcmp(role, "vf") != 0)
                                continue;
                        v = realloc(e->vfs, (e->n_vfs + 1) * sizeof(*v));
                        if (!v)
                                return -ENOMEM;
                        e->vfs = v;
                        e->vfs[e->n_vfs++] = bdf;
                }
        return 0;
}

json_object *metrics_gpu_by_bdf(json_object *doc, const char *bdf) {
        if (!bdf)
                return NULL;
        FOREACH_METRICS_GPU(NULL, doc, g) {
                const char *b = metrics_get_string(g, "bdf");

                if (b && strcmp(b, bdf) == 0)
                        return g;
        }
        return NULL;
}

void metrics_sample_d(struct metrics_emit *e, const char *const *labels, double v) {
        struct buf *b = &e->samples;
        bool first = true;

        /* every label value must be there (a GPU without a PCI address is no GPU here) */
        if (labels[0] && strcmp(labels[0], "gpu") == 0 && !labels[1])
                return;
        buf_str(b, e->f->name);
        for (size_t i = 0; labels[i]; i += 2) {
                if (!labels[i + 1])
                        continue;
                buf_char(b, first ? '{' : ',');
                first = false;
                buf_str(b, labels[i]);
                buf_str(b, "=\"");
                buf_escaped(b, labels[i + 1], true);
                buf_char(b, '"');
        }
        if (!first)
                buf_char(b, '}');
        buf_char(b, ' ');
        buf_value(b, v);
        buf_char(b, '\n');
        e->count++;
}

void metrics_sample(struct metrics_emit *e, const char *const *labels, json_object *v,
                    double scale) {
        double d;

        if (!v)
                return;
        switch (json_object_get_type(v)) {
        case json_type_int:
                /* json-c keeps u64 beyond INT64_MAX apart */
                d = json_object_get_int64(v) == INT64_MAX ? (double) json_object_get_uint64(v)
                                                          : (double) json_object_get_int64(v);
                break;
        case json_type_double:
                d = json_object_get_double(v);
                break;
        default:
                return; /* a string, a boolean, an object: no number, no sample */
        }
        if (!isfinite(d))
                return;
        metrics_sample_d(e, labels, d * scale);
}

/* The family name of the metadata lines: OpenMetrics names a counter without _total and an
 * info without _info. */
static void family_name(struct buf *b, const struct metrics_family *f, enum metrics_format fmt) {
        size_t n = strlen(f->name);

        if (fmt == METRICS_FORMAT_OPENMETRICS && f->type == METRICS_COUNTER)
                n -= strlen("_total");
        else if (fmt == METRICS_FORMAT_OPENMETRICS && f->type == METRICS_INFO)
                n -= strlen("_info");
        buf_add(b, f->name, n);
}

static const char *type_name(const struct metrics_family *f, enum metrics_format fmt) {
        switch (f->type) {
        case METRICS_COUNTER:
                return "counter";
        case METRICS_INFO:
                return fmt == METRICS_FORMAT_OPENMETRICS ? "info" : "gauge";
        case METRICS_GAUGE:
        default:
                return "gauge";
        }
}

int metrics_render(const struct metrics_input *in, enum metrics_format fmt, char **ret,
                   size_t *ret_size) {
        struct buf out = {};
        struct metrics_emit e = { .fmt = fmt };

        buf_reserve(&out, 64 * 1024);
        if (find_vfs(&e, in) < 0)
                out.oom = true;
        for (size_t i = 0; !out.oom && i < metrics_n_families; i++) {
                const struct metrics_family *f = &metrics_families[i];

                e.f = f;
                e.count = 0;
                e.samples.n = 0;
                if (e.samples.p)
                        e.samples.p[0] = 0;
                f->render(&e, in);
                if (e.count == 0)
                        continue;
                buf_str(&out, "# HELP ");
                family_name(&out, f, fmt);
                buf_char(&out, ' ');
                buf_escaped(&out, f->help, fmt == METRICS_FORMAT_OPENMETRICS);
                buf_str(&out, "\n# TYPE ");
                family_name(&out, f, fmt);
                buf_char(&out, ' ');
                buf_str(&out, type_name(f, fmt));
                buf_char(&out, '\n');
                if (fmt == METRICS_FORMAT_OPENMETRICS && f->unit) {
                        buf_str(&out, "# UNIT ");
                        family_name(&out, f, fmt);
                        buf_char(&out, ' ');
                        buf_str(&out, f->unit);
                        buf_char(&out, '\n');
                }
                buf_add(&out, e.samples.p, e.samples.n);
        }
        if (fmt == METRICS_FORMAT_OPENMETRICS)
                buf_str(&out, "# EOF\n");
        free(e.samples.p);
        free(e.vfs);
        if (out.oom || e.samples.oom || !out.p) {
                free(out.p);
                return -ENOMEM;
        }
        *ret = out.p;
        if (ret_size)
                *ret_size = out.n;
        return 0;
}

const char *metrics_content_type(enum metrics_format f) {
        return f == METRICS_FORMAT_OPENMETRICS
                       ? "application/openmetrics-text; version=1.0.0; charset=utf-8"
                       : "text/plain; version=0.0.4; charset=utf-8";
}

/* ---- Accept ----------------------------------------------------------------------------- */

static const char *skip_blanks(const char *s, const char *end) {
        while (s < end && (*s == ' ' || *s == '\t'))
                s++;
        return s;
}

static const char *trim_end(const char *s, const char *end) {
        while (end > s && (end[-1] == ' ' || end[-1] == '\t'))
                end--;
        return end;
}

static bool token_is(const char *s, const char *end, const char *t) {
        size_t n = strlen(t);

        return (size_t) (end - s) == n && strncasecmp(s, t, n) == 0;
}

/* The q of a media range's parameters ("q=0.5"; none: 1; malformed: 0). Its version
 * parameter, if any, in @version (quotes removed). */
static double parse_params(const char *s, const char *end, char *version, size_t vsize) {
        double q = 1;

        version[0] = 0;
        while (s < end) {
                const char *semi = memchr(s, ';', (size_t) (end - s)), *p_end, *eq;

                p_end = semi ? semi : end;
                s = skip_blanks(s, p_end);
                eq = memchr(s, '=', (size_t) (p_end - s));
                if (eq) {
                        const char *k_end = trim_end(s, eq), *v = skip_blanks(eq + 1, p_end);
                        const char *v_end = trim_end(v, p_end);

                        if (v_end - v >= 2 && *v == '"' && v_end[-1] == '"') {
                                v++;
                                v_end--;
                        }
                        if (token_is(s, k_end, "q")) {
                                char num[16], *e;
                                size_t n = (size_t) (v_end - v);

                                if (n == 0 || n >= sizeof(num))
                                        return 0;
                                memcpy(num, v, n);
                                num[n] = 0;
                                q = strtod(num, &e);
                                if (*e || !(q >= 0 && q <= 1))
                                        return 0;
                        } else if (token_is(s, k_end, "version") && (size_t) (v_end - v) < vsize) {
                                memcpy(version, v, (size_t) (v_end - v));
                                version[v_end - v] = 0;
                        }
                }
                s = semi ? semi + 1 : end;
        }
        return q;
}

enum metrics_format metrics_format_from_accept(const char *accept) {
        double q_om = -1, q_text = -1;
        const char *s = accept;

        if (!accept)
                return METRICS_FORMAT_TEXT;
        while (*s) {
                const char *comma = strchr(s, ','), *end = comma ? comma : s + strlen(s);
                const char *semi = memchr(s, ';', (size_t) (end - s));
                const char *type = skip_blanks(s, end),
                           *type_end = trim_end(type, semi ? semi : end);
                char version[32];
                double q = parse_params(semi ? semi + 1 : end, end, version, sizeof(version));

                if (token_is(type, type_end, "application/openmetrics-text")) {
                        /* 1.0.0 (or no version) is what we write; 0.0.1 the draft before it */
                        if ((!version[0] || strcmp(version, "1.0.0") == 0) && q > q_om)
                                q_om = q;
                } else if (token_is(type, type_end, "text/plain") ||
                           token_is(type, type_end, "text/*") || token_is(type, type_end, "*/*")) {
                        if (q > q_text)
                                q_text = q;
                }
                s = comma ? comma + 1 : end;
        }
        return q_om > 0 && q_om > q_text ? METRICS_FORMAT_OPENMETRICS : METRICS_FORMAT_TEXT;
}
