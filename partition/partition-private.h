/* SPDX-License-Identifier: MIT */
/*
 * Internal interface between the files of the partition slice (not installed):
 *   partition.c         reads of the modes (bare metal and gim dispatch), the plan
 *   partition-set.c     compute-mode switch, KFD users, change reports
 *   partition-memory.c  memory-mode request, its pending record, the driver reload
 *   partition-gim.c     the same on a gim virtualization host, through gim's PF files
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "partition-rules.h"
#include "private.h"

/* A PF bound to gim: partitions go through gim's PF files, not amdgpu's. */
static inline bool gpu_is_gim_host(struct amdsmi_gpu *gpu) {
        return gpu->driver == AMDSMI_DRIVER_GIM;
}

/* partition.c */
/* The GPUs of gpu's XGMI hive in context (BDF) order, gpu included; gpu alone without a hive.
 * @return how many were stored (at most max). */
unsigned partition_hive_members(struct amdsmi_gpu *gpu, struct amdsmi_gpu **ret, unsigned max);

/* partition-set.c */
/* Zeroes a report (keeping size) and sets every mode to unknown. -EINVAL for a bad size. */
int change_init(struct amdsmi_partition_change *c);
/* Ends a report: error and stage, and the return value r. */
int change_finish(struct amdsmi_partition_change *c, int r, enum amdsmi_change_stage stage);
/* Adds the KFD users of @gpu to the report's blockers. The preflight leaves this process out
 * (@include_self false): a process changing partitions lets go of its own KFD descriptors
 * first (amdsmid closes its event stream), and what class/kfd/kfd/proc still shows of it then
 * is not what blocks the change; a refused write lists it too, in case the driver still
 * counts it. @return how many it has, or a negative errno. */
int change_add_blockers(struct amdsmi_partition_change *c, struct amdsmi_gpu *gpu,
                        bool include_self);

/* partition-gim.c: gim hosts. Same returns as the public functions they stand in for. */
int gim_read_compute_mode(struct amdsmi_gpu *gpu, enum amdsmi_compute_mode *ret);
int gim_read_memory_mode(struct amdsmi_gpu *gpu, enum amdsmi_memory_mode *ret);
int gim_supported_compute_modes(struct amdsmi_gpu *gpu, uint32_t *ret_mask);
int gim_available_compute_modes(struct amdsmi_gpu *gpu, uint32_t *ret_mask);
int gim_available_memory_modes(struct amdsmi_gpu *gpu, uint32_t *ret_mask);
/* The PF's enabled VF count (sriov_numvfs). */
int gim_vf_count(struct amdsmi_gpu *gpu, unsigned *ret);
/* Fills the gim parts of a plan state and plan (VFs before/after, notes). */
int gim_plan(struct amdsmi_gpu *gpu, enum amdsmi_compute_mode compute,
             enum amdsmi_memory_mode memory, uint64_t flags, struct amdsmi_partition_plan *plan);
int gim_set_compute_mode(struct amdsmi_gpu *gpu, enum amdsmi_compute_mode mode, uint64_t flags,
                         struct amdsmi_partition_change *c);
int gim_set_memory_mode(struct amdsmi_gpu *gpu, enum amdsmi_memory_mode mode, uint64_t flags,
                        struct amdsmi_partition_change *c);
