/* SPDX-License-Identifier: MIT */
/*
 * The Prometheus families of amdsmi (amdsmid(8) METRICS): one table, one renderer, for both
 * front ends. The renderer is a pure function of amdsmi/1 documents (the ones `amdsmi VERB
 * --json` prints and amdsmid's GetDocument answers), so `amdsmi metric --prometheus`, amdsmid's
 * /metrics and its textfile say the same thing from the same data.
 *
 * Rules (the Prometheus naming guide): base units (watts, joules, celsius, hertz, bytes,
 * seconds, ratios 0..1), one unit per family, counters end in _total, identity in *_info
 * gauges of value 1, no hostname label; a value a document gives as null (or leaves out) is
 * left out, never a sentinel. `gpu` is the PF's PCI address.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include <json-c/json.h>

enum metrics_format {
        METRICS_FORMAT_TEXT,        /* Prometheus text format 0.0.4 (what node_exporter reads) */
        METRICS_FORMAT_OPENMETRICS, /* OpenMetrics 1.0 text: # UNIT, # EOF */
};

/* What the families are rendered from: amdsmi/1 documents (their whole object, with "gpus";
 * any may be NULL: its families are left out). Owned by the caller. */
struct metrics_input {
        json_object *list;        /* `amdsmi list`: identity (product, unique_id, hive) */
        json_object *static_doc;  /* `amdsmi static`: serial, vbios, driver */
        json_object *metric;      /* `amdsmi metric`: power, energy, temperatures, clocks, busy,
                                   * VRAM, throttle residency, PCIe, XGMI, per-partition busy */
        json_object *ras;         /* `amdsmi ras`: ECC error counts per RAS block */
        json_object *power;       /* `amdsmi power`: caps, sources and which binds */
        json_object *partition;   /* `amdsmi partition`: compute/memory modes, pending */
        json_object *health;      /* `amdsmi health`: the verdict */
        json_object *sriov;       /* `amdsmi sriov`: VF counts */
        json_object *apply;       /* `amdsmi apply --check`: the desired state's keys in sync */
        bool identity;            /* serial and unique_id labels on amdsmi_gpu_info */
        bool up;                  /* amdsmi_up: the documents could be built */
        double scrape_duration_s; /* amdsmi_scrape_duration_seconds; < 0: left out */
};

/* The format a scraper's Accept header asks for: OpenMetrics when it lists
 * application/openmetrics-text (version 1.0.0 or none) with a q above that of text/plain,
 * else the text format. NULL: the text format. */
enum metrics_format metrics_format_from_accept(const char *accept);

/* The Content-Type of a rendering in @f. */
const char *metrics_content_type(enum metrics_format f);

/* Renders every family @in has data for, in @f: a new NUL-terminated string in *ret (its
 * length in *ret_size, may be NULL), no timestamps, one HELP and TYPE per family.
 * @return 0, or -ENOMEM (*ret untouched). Malformed documents lose only what is malformed. */
int metrics_render(const struct metrics_input *in, enum metrics_format f, char **ret,
                   size_t *ret_size);
