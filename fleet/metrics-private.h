/* SPDX-License-Identifier: MIT */
/* The family table (metrics-families.c) and what its renderers write with (metrics-render.c). */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "metrics.h"

enum metrics_type {
        METRICS_GAUGE,
        METRICS_COUNTER, /* the name ends in _total */
        METRICS_INFO,    /* the name ends in _info; every sample is 1 */
};

struct metrics_emit;

struct metrics_family {
        const char *name; /* as the samples carry it (with _total, _info) */
        enum metrics_type type;
        const char *unit;   /* the base unit the name ends with (OpenMetrics # UNIT), or NULL */
        const char *labels; /* documentation: the labels besides gpu */
        const char *source; /* documentation: the amdsmi/1 document and its keys */
        const char *help;
        void (*render)(struct metrics_emit *e, const struct metrics_input *in);
};

extern const struct metrics_family metrics_families[];
extern const size_t metrics_n_families;

/*
 * One sample of the family being rendered: @labels are name/value pairs ended by a NULL name;
 * a pair whose value is NULL is left out (never an empty label). A NULL @v (a JSON null, a
 * missing key) or a value that is no number leaves the sample out: unavailable values are
 * omitted, never a sentinel. @scale multiplies the value (percent to ratio: 0.01).
 */
void metrics_sample(struct metrics_emit *e, const char *const *labels, json_object *v,
                    double scale);
void metrics_sample_d(struct metrics_emit *e, const char *const *labels, double v);

/* The "gpus" array of a document (or @doc itself when it is an array); NULL if none. */
json_object *metrics_gpus(json_object *doc);
/* The GPU of @doc whose "bdf" is @bdf, or NULL. */
json_object *metrics_gpu_by_bdf(json_object *doc, const char *bdf);
/* @o's @key, or NULL (missing, null, or @o is no object). */
json_object *metrics_get(json_object *o, const char *key);
/* @o's @key as a string, NULL if it is none. */
const char *metrics_get_string(json_object *o, const char *key);

/* Whether @g is a VF of a host's PF (role "vf" in the list or static document): its PF has
 * the series; a VF is a GPU of its own only in the guest that holds it. */
bool metrics_gpu_is_host_vf(const struct metrics_emit *e, json_object *g);

/* The GPUs of @doc, the host's VFs left out. */
#define FOREACH_METRICS_GPU(e, doc, g)                                                        \
        for (size_t _i = 0,                                                                   \
                    _n = metrics_gpus(doc) ? json_object_array_length(metrics_gpus(doc)) : 0; \
             _i < _n; _i++)                                                                   \
                for (json_object *g = json_object_array_get_idx(metrics_gpus(doc), _i);       \
                     g && !metrics_gpu_is_host_vf((e), g); g = NULL)
