/* SPDX-License-Identifier: MIT */
/*
 * The last two gpu_metrics samples of each GPU, and what they say about why the GPU was slow:
 * the "limiters" of `amdsmi metric` (and the limiter line of `amdsmi power`).
 *
 * A limiter needs two samples. amdsmi(1) keeps them across the samples of a watch (and takes
 * a first one 100 ms early for --throttle); amdsmid keeps them in its sampler and answers from
 * them. Without two samples every share is unknown (null).
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include <json-c/json.h>

#include <amdsmi/amdsmi.h>

struct sample {
        bool valid;
        uint64_t usec; /* CLOCK_MONOTONIC when read */
        struct amdsmi_gpu_metrics_ext m;
};

struct sample_pair {
        char bdf[16];
        struct sample prev, cur;
        int error;          /* of the last read (0: cur is it) */
        char reason[160];   /* of an invalid table */
        /* the seconds each limiter held the GPU over every pair of samples measured so far
         * (the share of each pair's interval; a gap between samples is one long pair): a
         * counter that starts with the samples kept (amdsmid's start, a watch's start) */
        bool throttle_known;
        double throttle_s[5]; /* the order of limiters_json()'s shares */
};

struct samples {
        struct sample_pair *pairs;
        size_t n;
};

/* The pair of @bdf (created empty); NULL on -ENOMEM. */
struct sample_pair *samples_get(struct samples *s, const char *bdf);
/* Forgets every pair. */
void samples_clear(struct samples *s);

/*
 * Makes @p's current sample of @gpu at most @max_age_usec old (0: read now): reads
 * gpu_metrics and shifts the previous current sample to prev. A failed read leaves both
 * samples as they were and is returned (and kept in p->error, p->reason).
 */
int sample_pair_update(struct sample_pair *p, struct amdsmi_gpu *gpu, uint64_t max_age_usec);

/* What the power limiter ran against: the source that set the cap ("host", "vm", "apml",
 * "default", "external", ...), the VM's key for vm, and the cap. */
struct power_limit {
        char source[32];
        char key[128];
        uint64_t cap_uw; /* AMDSMI_NA: unknown */
};

/*
 * The "limiters" object of a GPU from its pair: "status" ("measured", "one_sample",
 * "not_available" for tables without residency counters, "restarted", "too_close"),
 * "interval_s", "ticks", the shares in percent (power_pct, socket_thermal_pct,
 * hbm_thermal_pct, vr_thermal_pct, prochot_pct), "power_limit" (@limit, NULL: null),
 * "xcc" (one entry per XCC with below_host_limit_{ppt,thm,total}_pct and
 * low_utilization_pct) and "throttle_seconds_total" ({power, socket_thermal, hbm_thermal,
 * vr_thermal, prochot}: p->throttle_s, null before a first pair was measured), null where
 * unknown. NULL on -ENOMEM.
 */
json_object *limiters_json(const struct sample_pair *p, const struct power_limit *limit);

/* The THROTTLE cell of a "limiters" object: "power 87%" (the limiter that held the GPU
 * longest, at least 1 %), "none", or "-" when unknown. */
void limiters_text(json_object *limiters, char *buf, size_t size);

/* The sentence of `amdsmi power` when the power limiter held the GPU for at least 1 % of the
 * interval: "87 % of the last 5 s at the 450 W cap set by vm web1"; "" otherwise. */
void limiters_power_sentence(json_object *limiters, char *buf, size_t size);
