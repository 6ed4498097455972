/* SPDX-License-Identifier: MIT */
/*
 * The performance settings an operator made through amdsmid, kept in the state file
 * (gpus.<BDF>.performance) so that amdsmid applies them again when the GPU comes back from a
 * reset, a driver reload or a re-plug, and at its start; and the desired state of amdsmid.conf
 * in the same form (struct perf_desired, perf-ops.h).
 *
 *   "performance": { "version": 1, "level": "manual", "determinism_sclk_mhz": 0,
 *                    "sclk_min_mhz": 0, "sclk_max_mhz": 1500, "mclk_max_mhz": 0,
 *                    "soc_pstate": "2", "xgmi_plpd": "" }
 *
 * 0 and "" are "not set"; "level" is "", "auto", "manual" or "perf_determinism". The store's
 * loader checks the record (state_record_performance, listed in control/meson.build).
 */
#pragma once

#include <stddef.h>

#include "perf-ops.h"

#define PERF_STATE_VERSION 1

struct config_gpu;

/* The desired state a configuration section gives. */
void perf_desired_from_config(const struct config_gpu *c, struct perf_desired *ret);
/* Lays what @top sets over @base (an operator's over the configuration): a level of @top
 * other than manual drops @base's soft limits (auto and determinism restore the defaults). */
void perf_desired_merge(struct perf_desired *base, const struct perf_desired *top);
/* "level manual, sclk max 1500 MHz, soc_pstate 2", or "none". */
void perf_desired_describe(const struct perf_desired *d, char *buf, size_t size);
/* What @ch leaves desired on top of @d (the change an operator made). */
void perf_desired_apply_change(struct perf_desired *d, const struct perf_change *ch);

/* The most changes perf_desired_steps() gives. */
#define PERF_DESIRED_STEPS_MAX 6
/* The changes that bring a GPU to @d, in order: the level (determinism with its ceiling), the
 * soft limits (manual; the max first, so that a min above the default max is not inverted),
 * the policies. @return how many (0: nothing asked). */
size_t perf_desired_steps(const struct perf_desired *d,
                          struct perf_change ret[PERF_DESIRED_STEPS_MAX]);

/* The record of @bdf (empty when none or damaged). @return 0 or a negative errno. */
int perf_state_load(const char *bdf, struct perf_desired *ret);
/* Records the change @ch of @bdf on top of its record (the state file's write lock).
 * @return 0 or a negative errno. */
int perf_state_remember(const char *bdf, const struct perf_change *ch);
