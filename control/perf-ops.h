/* SPDX-License-Identifier: MIT */
/*
 * The performance controls for both front ends (core/): the "performance" document of a GPU
 * (level, soft limits, ranges, DPM levels, policies) and the changes of the level,
 * determinism, clock limits and PM policies, each validated, planned, applied, verified by
 * reading back and, on failure, undone (the previous level and limits put back).
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#include <amdsmi/amdsmi.h>

#include "report.h"

/* How long a change waits for another change of the GPU (its lock). */
#define PERF_LOCK_WAIT_MS 5000

enum perf_change_kind {
        PERF_CHANGE_LEVEL,             /* set -l LEVEL */
        PERF_CHANGE_DETERMINISM,       /* set -d SCLK_MHZ */
        PERF_CHANGE_CLK_LIMIT,         /* set -L sclk|mclk min|max MHZ */
        PERF_CHANGE_RESET_CLOCKS,      /* reset -c: r, c, level auto */
        PERF_CHANGE_RESET_DETERMINISM, /* reset -d: level auto */
        PERF_CHANGE_POLICY,            /* set -p / -x POLICY */
        _PERF_CHANGE_MAX,
};

struct perf_change {
        enum perf_change_kind kind;
        enum amdsmi_perf_level level;      /* LEVEL */
        uint32_t mhz;                      /* DETERMINISM, CLK_LIMIT */
        enum amdsmi_clk_domain clk;        /* CLK_LIMIT: sclk or mclk */
        bool max;                          /* CLK_LIMIT: the max (else the min) */
        enum amdsmi_pm_policy_kind policy; /* POLICY */
        char policy_value[32];             /* POLICY: an id or a name as the file prints it */
        bool lock;                         /* take the GPU's change lock (in-process) */
};

/* What the history records of one GPU's change. */
struct perf_outcome {
        char old_value[96], new_value[96], message[512];
};

/* "perf_level", "perf_determinism", "clock_limit", "reset_clocks", "pm_policy": the history's
 * change names. */
const char *perf_change_name(enum perf_change_kind k);

/* The "performance" object of @gpu: null members where the GPU has no such file. Errors of
 * files that exist go to @rep as field errors of GPU @index ("performance.level", ...). */
json_object *perf_document(struct report *rep, size_t index, struct amdsmi_gpu *gpu);

/* The performance level alone, as a string ("auto"), or NULL. */
json_object *perf_level_json(struct amdsmi_gpu *gpu);

/*
 * One GPU's change: validates against what the GPU reads now (refused before anything is
 * written, naming the valid values), plans (said on @rep and in @entry's "plan"), and unless
 * @rep->dry_run applies, verifies and on failure restores the previous level and limits.
 * @entry gets "before", "after", "plan". @return 0 or a negative errno (reported).
 */
int perf_change_gpu(struct report *rep, const struct perf_change *ch, size_t index,
                    struct amdsmi_gpu *gpu, json_object *entry, struct perf_outcome *out);

/* A JSON object for one GPU's change (gpu, bdf, product, change, dry_run). */
json_object *perf_change_entry_new(const struct perf_change *ch, size_t index, const char *bdf,
                                   const char *product, bool dry_run);

/* The desired performance state of a GPU (amdsmid.conf, a profile, or what an operator set
 * through amdsmid), to apply after a start, reset or reload. 0 / NULL members: not asked. */
struct perf_desired {
        enum amdsmi_perf_level level; /* UNKNOWN: not asked */
        uint32_t determinism_sclk_mhz;
        uint32_t sclk_min_mhz, sclk_max_mhz, mclk_max_mhz;
        char soc_pstate[32], xgmi_plpd[32];
};

/* Whether @d asks for anything. */
bool perf_desired_empty(const struct perf_desired *d);
