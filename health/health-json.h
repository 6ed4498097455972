/* SPDX-License-Identifier: MIT */
/*
 * The health slice's core part, for both front ends (amdsmi(1) and amdsmid): the documents of
 * `amdsmi ras`, `amdsmi ras --cper`, `amdsmi bad-pages` and `amdsmi health` (one JSON object per
 * GPU, doc_gpu_fn-style so that amdsmid can serve them unchanged), and the verdict: a GPU's
 * health state with the reasons that made it, from a struct health_input that the caller fills
 * (health_input_read() reads one from the GPU) and thresholds from amdsmid.conf [health].
 * Not part of libamdsmi.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#include <amdsmi/amdsmi.h>

struct config;
struct doc_query;

/* The defaults of the thresholds are amdsmid.conf's (CONFIG_HEALTH_*, amdsmid-conf.h). */

/* What "needs root" says for the debugfs files (CPER ring, bad-page threshold). */
#define HEALTH_NEEDS_ROOT "needs root (debugfs)"

/* The thresholds of the verdict ([health] of amdsmid.conf). */
struct health_thresholds {
        uint64_t ce_rate_warning_per_hour;  /* warning above this many CEs per hour */
        unsigned bad_pages_warning_percent; /* warning at this share of the threshold (1..100) */
        unsigned reset_window_minutes;      /* warning for a reset this recent */
};

/* The defaults above. */
void health_thresholds_default(struct health_thresholds *t);
/* [health] of @c (NULL: the defaults). */
void health_thresholds_from_config(const struct config *c, struct health_thresholds *t);

/* A GPU's health state; the order is the severity (health_state_worst()). */
enum health_state {
        HEALTH_OK,
        HEALTH_WARNING,
        HEALTH_CRITICAL,
        HEALTH_UNKNOWN,
};

/* "ok", "warning", "critical", "unknown". */
const char *health_state_to_string(enum health_state s);
/* The state that wins over a set of GPUs: critical > warning > unknown > ok (a critical GPU is
 * never hidden by one that cannot be read). */
enum health_state health_state_worst(enum health_state a, enum health_state b);
/* The monitoring-plugin exit status of a state: 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN. */
int health_exit_status(enum health_state s);

/* The severity of one reason: a note (info) changes nothing. */
enum health_severity {
        HEALTH_SEVERITY_INFO,
        HEALTH_SEVERITY_WARNING,
        HEALTH_SEVERITY_CRITICAL,
        HEALTH_SEVERITY_UNKNOWN,
};

const char *health_severity_to_string(enum health_severity s);

/* One RAS reading and when it was taken (CLOCK_BOOTTIME microseconds: comparable across
 * samples of one boot). */
struct health_sample {
        int error; /* 0, or the negative errno of amdsmi_gpu_read_ras() */
        struct amdsmi_ras_info ras;
        uint64_t usec;
};

/* Reads @gpu's RAS state into @ret now. @return ret->error. */
int health_sample_read(struct amdsmi_gpu *gpu, struct health_sample *ret);

/* A GPU's links as gpu_metrics and its PCI device show them (health_links_read()). Unknown
 * values are AMDSMI_NA. */
struct health_links {
        int error;             /* 0, or the negative errno of the gpu_metrics read (-ENODATA:
                                  none, a VF) */
        unsigned xgmi_known;   /* bit i: XGMI link i has a status, up or down (not n/a) */
        unsigned xgmi_down;    /* bit i: XGMI link i is down */
        uint64_t pcie_width, pcie_max_width;
        uint64_t pcie_speed_mts, pcie_max_speed_mts;
        uint64_t pcie_replays;    /* gpu_metrics' replay count, else pcie_replay_count */
        uint64_t pcie_recoveries; /* L0 to recovery transitions (gpu_metrics) */
        uint64_t usec;            /* CLOCK_BOOTTIME */
};

/* Reads @gpu's links now: the PCI link files and pcie_replay_count, and with @metrics one
 * gpu_metrics read (the XGMI links' status; else *ret's XGMI masks and error are kept, as a
 * previous read left them). @return ret->error. */
int health_links_read(struct amdsmi_gpu *gpu, bool metrics, struct health_links *ret);

/* Everything the verdict looks at. Each part has its error: 0 (read), -ENODATA (the GPU has
 * none: not judged), -EACCES (needs root: "not evaluated"), another (cannot be read). */
struct health_input {
        struct health_sample now;
        /* an earlier sample of the same GPU (amdsmid passes its last one; NULL: the CE rate
         * is not evaluated) */
        const struct health_sample *previous;

        int bad_pages_error;
        size_t n_bad_pages;
        size_t n_pending, n_unreservable; /* by status */
        int threshold_error;
        uint32_t threshold;

        int cper_error;
        size_t n_cper_fatal;   /* records of fatal severity held in the ring */
        char cper_fatal_id[9]; /* the record id of the last one */

        /* resets: amdsmid knows them (KFD events); false: "not evaluated" */
        bool resets_known;
        uint64_t last_reset_age_usec; /* how long ago the last one was; UINT64_MAX: none */

        /* links: XGMI links down and a PCIe link narrower than it can be, now; errors that
         * grew within the reset window: amdsmid compares its checks (replays) and reads
         * xgmi_error, which clears when read (false: "not evaluated") */
        struct health_links links;
        bool link_errors_known;
        uint64_t last_replays_age_usec;    /* since replays last grew; UINT64_MAX: not seen */
        uint64_t replays_in_window;        /* how many then */
        uint64_t last_xgmi_error_age_usec; /* since xgmi_error last said errors; UINT64_MAX */
        uint64_t xgmi_errors_total;        /* counted by amdsmid since it started */
        bool xgmi_errors_counted;          /* the GPU has the counter (not MI300, MI350) */
};

/* Reads everything but the previous sample and the resets from @gpu. Never fails: each part
 * says its error. */
void health_input_read(struct amdsmi_gpu *gpu, struct health_input *ret);

#define HEALTH_REASONS_MAX 24

struct health_reason {
        const char *code; /* "uncorrectable_errors", ... (static) */
        enum health_severity severity;
        char text[192];
};

struct health_verdict {
        enum health_state state;
        size_t n_reasons;
        struct health_reason reasons[HEALTH_REASONS_MAX];
};

/* The verdict of @in under @t (NULL: the defaults). */
void health_judge(const struct health_thresholds *t, const struct health_input *in,
                  struct health_verdict *ret);

/* {"state": ..., "reasons": [{"code", "severity", "text"}]} (NULL on -ENOMEM). */
json_object *health_verdict_json(const struct health_verdict *v);

/*
 * The GPU objects of the documents (doc_gpu_fn): doc_gpu_new() with
 *   ras_gpu:       "ras" {features, features_mask, socket_id, blocks[{block, source, ue, ce,
 *                  de}]} and "ecc" {uncorrectable_total, correctable_total, deferred_total}
 *   bad_pages_gpu: "bad_pages" {count, pending, unreservable, threshold, threshold_error,
 *                  pages[{pfn, address, size, status}]}
 *   cper_gpu:      "cper" {error, lost, skipped, records[health_cper_record_json()]}
 *   health_gpu:    "health" (health_verdict_json()) with the default thresholds, no previous
 *                  sample, resets not known (amdsmid calls health_gpu_with())
 * A -g N.P selection reads the whole GPU's counts: "partitions_selected" lists the partitions
 * and a note says the counts are the GPU's.
 */
json_object *ras_gpu(const struct doc_query *q, size_t index, struct amdsmi_gpu *gpu);
json_object *bad_pages_gpu(const struct doc_query *q, size_t index, struct amdsmi_gpu *gpu);
json_object *cper_gpu(const struct doc_query *q, size_t index, struct amdsmi_gpu *gpu);
json_object *health_gpu(const struct doc_query *q, size_t index, struct amdsmi_gpu *gpu);
json_object *health_gpu_with(const struct doc_query *q, size_t index, struct amdsmi_gpu *gpu,
                             const struct health_thresholds *t, const struct health_input *in);

/* `amdsmi metric -e`: metric_gpu()'s object with "ecc" (health_ecc_json(), null without RAS)
 * after it: GetDocument("metric-ecc") of amdsmid and the in-process reading. */
json_object *metric_ecc_gpu(const struct doc_query *q, size_t index, struct amdsmi_gpu *gpu);

/* The "ecc" object of a RAS reading (totals over the readable blocks; null when none is). */
json_object *health_ecc_json(const struct amdsmi_ras_info *ras);

/* One CPER record: {record_id, sequence, severity, timestamp (RFC 3339 or null), notify,
 * platform_id, creator_id, revision, sections[{type, severity, fru, length}], size} */
json_object *health_cper_record_json(const struct amdsmi_cper_record *rec);

/* One KFD event as an NDJSON line's object: {gpu, bdf, partition, kind, id, text, ...}. */
json_object *health_event_json(int gpu, const char *bdf, const struct amdsmi_event *ev);
