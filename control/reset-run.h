/* SPDX-License-Identifier: MIT */
/*
 * GPU resets as amdsmi(1) and amdsmid run them (core/): the plan (the mechanism, whether the
 * reset takes the GPU's XGMI hive and which GPUs), the preflight, the reset, the wait for the
 * GPUs to come back, the verification against what they were, the re-application of the
 * desired state, and the GPU's element of the change document with each stage's time. Not
 * part of libamdsmi.
 *
 * Preflight (nothing is done when it refuses):
 *   - processes using the hive's GPUs through KFD (amdsmi_ctx_read_processes()): refused
 *     (-EBUSY) unless forced: the reset takes their queues;
 *   - VFs in use by VMs: a VF whose vfio group a process holds, or that a VM reservation of
 *     amdsmid's state names: always refused (-EBUSY);
 *   - a change in flight on a GPU of the hive (a partition switch, an NPS request, a driver
 *     reload, another reset): in-process, the per-GPU change locks (taken, all or none, for
 *     the reset); in amdsmid, its job on every GPU of the hive.
 *
 * The element ("gpus"[i] of the change document):
 *   gpu, bdf, mechanism, hive_wide, gpus_reset [BDF...], preflight {kfd_processes [{pid,
 *   comm, bdf}], vfs_in_use [{vf, pf, by}], forced}, reset_masks {RING: [TYPE...]} (of the
 *   GPU; null when it has none), before [{bdf, compute_mode, memory_mode, power_cap_w,
 *   vf_count, kfd_nodes}], after (same; null before the reset ended), differences [{bdf,
 *   field, before, after}], reapplied [{bdf, result, message}], reset_res, hung, state
 *   [{bdf, answers, kfd_nodes_before, kfd_nodes_present}] (null before the reset), recovery
 *   (what to do when it failed; null), stages_ms {preflight, reset, wait, verify, reapply,
 *   total}, overhead_ms (total - reset - wait: the tool's own time), messages, result.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include <json-c/json.h>

#include <amdsmi/amdsmi.h>

struct report;

/* The change name of the history. */
#define RESET_CHANGE "gpu_reset"

struct reset_options {
        bool force;          /* KFD users are named, not refused */
        unsigned timeout_ms; /* reset and wait; 0: the library's default (60 s) */
        bool lock;           /* take the hive's change locks (in-process; amdsmid's job holds
                                them) */
        /* Re-applies the desired state of @gpu after the reset (amdsmid: every slice's, through
         * manager_apply_desired()); says what it did with report_say(@entry). NULL: the
         * arbitrated power cap of the state file (power_change_gpu(), as `power apply`).
         * @return 0 or a negative errno. */
        int (*reapply)(void *userdata, struct report *rep, struct amdsmi_gpu *gpu,
                       json_object *entry);
        void *userdata;
};

/*
 * Plans and (unless the report's dry_run) runs the reset of @gpu's hive, reporting through
 * @rep (report_fail() for the failure, report_say() lines in the entry). *@ret_entry is the
 * GPU's element (NULL only on -ENOMEM). @index numbers the GPU in the document.
 * @return 0, -EBUSY (preflight), -EOPNOTSUPP (a VF, no mechanism), -EACCES, -EIO (the reset
 * failed), -ETIMEDOUT, or another negative errno.
 */
int reset_gpu_run(struct report *rep, struct amdsmi_ctx *ctx, size_t index, struct amdsmi_gpu *gpu,
                  const struct reset_options *o, json_object **ret_entry);

/* The GPUs an element says were (to be) reset, borrowed from @entry; how many (at most @max
 * stored). */
size_t reset_entry_bdfs(json_object *entry, const char **bdfs, size_t max);

/* Pure parts, for the unit tests. */

/* One GPU's state before or after. */
struct reset_snapshot {
        char bdf[16];
        enum amdsmi_compute_mode compute;
        enum amdsmi_memory_mode memory;
        uint64_t cap_uw; /* AMDSMI_NA: unknown */
        int vf_count;    /* -1: no SR-IOV, or unknown */
        int kfd_nodes;   /* -1: unknown */
};

/* The differences between @before and @after as [{bdf, field, before, after}] (the KFD node
 * count is not compared: the state says it). */
json_object *reset_differences(const struct reset_snapshot *before,
                               const struct reset_snapshot *after, size_t n);

/* What to do after a reset that failed, from what the library reported. */
const char *reset_recovery_advice(const struct amdsmi_reset_report *rep);

/* The preflight's verdict: -EBUSY (KFD users unless @force, VFs in use always, a change in
 * flight) or 0, with the reason in @msg. */
int reset_preflight_verdict(unsigned n_kfd_processes, unsigned n_vfs_in_use, bool force, char *msg,
                            size_t size);
