/* SPDX-License-Identifier: MIT */
/**
 * @file amdsmi-partition.h
 * Compute (SPX/DPX/TPX/QPX/CPX) and memory (NPS) partition modes: what the hardware supports,
 * what is available now, the engine shares of the current mode, and the plan of a change.
 *
 * Mode sets are bit masks: bit (1u << mode) for each enum amdsmi_compute_mode or
 * enum amdsmi_memory_mode value (AMDSMI_COMPUTE_MODE_BIT(), AMDSMI_MEMORY_MODE_BIT()).
 * Nothing here writes to the GPU; in particular the compute_partition_config/xcp_config view
 * selector is never written.
 */
#pragma once

#if !defined(__AMDSMI_H_INSIDE__)
#error "Only <amdsmi/amdsmi.h> can be included directly."
#endif

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** The bit of a compute mode in a mode set (mode must be SPX .. CPX). */
#define AMDSMI_COMPUTE_MODE_BIT(mode) (1u << (unsigned) (mode))
/** The bit of a memory mode in a mode set (mode must be NPS1 .. NPS8). */
#define AMDSMI_MEMORY_MODE_BIT(mode) (1u << (unsigned) (mode))

/**
 * The compute modes the hardware supports, whatever the memory mode:
 * compute_partition_config/supported_xcp_configs when the kernel has it, else derived from
 * the XCC count (KFD num_xcc summed over the GPU's partitions): 8 → SPX, DPX, QPX, CPX;
 * 6 → SPX, TPX, CPX; 4 → SPX, DPX, CPX; 2 or 1 → SPX, CPX.
 * @return 0, -ENODATA if the GPU has no partition support (or no known XCC count),
 * -EBADMSG for an unparsable list (logged with the file name), or a negative errno.
 * @since 0.1
 */
int amdsmi_gpu_get_supported_compute_modes(struct amdsmi_gpu *gpu, uint32_t *ret_mask)
        AMDSMI_WARN_UNUSED AMDSMI_NONNULL(1, 2);

/**
 * Reads available_compute_partition now: the compute modes valid under the current memory
 * mode. "Not supported" is the empty set (0).
 * @return 0, -ENODATA if the file is absent (no partition support, or an SR-IOV VF that
 * cannot switch), -EBUSY during a reset, -EBADMSG for an unknown token, or a negative errno.
 * @since 0.1
 */
int amdsmi_gpu_read_available_compute_modes(struct amdsmi_gpu *gpu, uint32_t *ret_mask)
        AMDSMI_WARN_UNUSED AMDSMI_NONNULL(1, 2);

/**
 * Reads available_memory_partition now: the NPS modes that can be requested. When the file is
 * absent (one supported mode: APUs, VFs, some firmware) the set is the current mode only and
 * it cannot be changed.
 * @return 1 if the memory mode can be changed, 0 if not (the set is the current mode),
 * -ENODATA if the GPU has no memory partition support, -EBUSY during a reset, -EBADMSG for an
 * unknown token, or a negative errno.
 * @since 0.1
 */
int amdsmi_gpu_read_available_memory_modes(struct amdsmi_gpu *gpu, uint32_t *ret_mask)
        AMDSMI_WARN_UNUSED AMDSMI_NONNULL(1, 2);

/**
 * Formats a compute mode set as the kernel does, "SPX, DPX, QPX, CPX" (enum order), or ""
 * for the empty set.
 * @return the length (as snprintf), or -EINVAL for bits that name no mode.
 * @since 0.1
 */
int amdsmi_compute_mode_mask_to_string(uint32_t mask, char *buf, size_t size);
/** As amdsmi_compute_mode_mask_to_string(), for NPS modes: "NPS1, NPS2, NPS4". @since 0.1 */
int amdsmi_memory_mode_mask_to_string(uint32_t mask, char *buf, size_t size);

/** How many engines of one kind a partition has, and by how many partitions each is shared. */
struct amdsmi_engine_share {
        uint64_t num_inst;   /**< instances per partition, AMDSMI_NA if unknown */
        uint64_t num_shared; /**< partitions sharing one instance, AMDSMI_NA if unknown */
};

/** Per-partition engine shares of one compute mode (compute_partition_config/). */
struct amdsmi_engine_shares {
        enum amdsmi_compute_mode mode; /**< the mode they describe */
        struct amdsmi_engine_share xcc;
        struct amdsmi_engine_share dma;
        struct amdsmi_engine_share dec;
        struct amdsmi_engine_share jpeg;
};

/**
 * Reads the per-partition engine shares of the current compute mode from
 * compute_partition_config/{xcc,dma,dec,jpeg}/{num_inst,num_shared}. Those files are readable
 * by root only: an unreadable one (-EACCES) leaves its fields AMDSMI_NA. When the view
 * selector xcp_config shows another mode than the current one (somebody selected it), every
 * field is AMDSMI_NA: the selector is never written.
 * @return 0 (fields may be AMDSMI_NA), -ENODATA without compute_partition_config/, -EBUSY
 * during a reset, or a negative errno.
 * @since 0.1
 */
int amdsmi_gpu_read_engine_shares(struct amdsmi_gpu *gpu, struct amdsmi_engine_shares *ret)
        AMDSMI_WARN_UNUSED AMDSMI_NONNULL(1, 2);

/**
 * Why a planned partition change is invalid, and what a valid one entails. The first group
 * blocks the change (amdsmi_partition_plan.reason), the second describes it
 * (amdsmi_partition_plan.notes, a mask of (1u << note)).
 */
enum amdsmi_plan_reason {
        AMDSMI_PLAN_OK = 0,                /**< "ok" */
        AMDSMI_PLAN_NOT_SUPPORTED,         /**< "not-supported": no partition support */
        AMDSMI_PLAN_NOT_SWITCHABLE,        /**< "not-switchable": an SR-IOV VF */
        AMDSMI_PLAN_COMPUTE_NOT_SUPPORTED, /**< "compute-not-supported": not in the hw set */
        AMDSMI_PLAN_MEMORY_NOT_SUPPORTED,  /**< "memory-not-supported": not an available NPS */
        AMDSMI_PLAN_MEMORY_NOT_CHANGEABLE, /**< "memory-not-changeable": one NPS mode only */
        AMDSMI_PLAN_INCOMPATIBLE,          /**< "incompatible": compute mode not valid under
                                                the memory mode (kernel generation rule) */
        AMDSMI_PLAN_NO_CHANGE = 16,        /**< note "no-change": already in these modes */
        AMDSMI_PLAN_RELOAD_REQUIRED,       /**< note "reload-required": memory mode change */
        AMDSMI_PLAN_HIVE_WIDE,             /**< note "hive-wide": every GPU of the hive */
        AMDSMI_PLAN_COMPUTE_AFTER_RELOAD,  /**< note "compute-after-reload": the compute mode
                                                is set after the reload (the driver boots in
                                                its AUTO choice first) */
};

/** "ok", "not-supported", ... as listed at enum amdsmi_plan_reason. @since 0.1 */
const char *amdsmi_plan_reason_to_string(enum amdsmi_plan_reason reason);

/** Which compatibility rule of the kernel the plan used (spec amdgpu-sysfs §2.3). */
enum amdsmi_partition_rules {
        AMDSMI_RULES_AUTO = 0,  /**< "auto": detect (input of amdsmi_gpu_plan_partition) */
        AMDSMI_RULES_NPS_SETS,  /**< "nps-sets": newer kernels, compatible NPS sets */
        AMDSMI_RULES_NPS_COUNT, /**< "nps-count": older kernels, number of memory partitions */
};

/** "auto", "nps-sets", "nps-count". @since 0.1 */
const char *amdsmi_partition_rules_to_string(enum amdsmi_partition_rules rules);

/** Largest XGMI hive and partition count a plan describes. */
#define AMDSMI_PLAN_MAX_HIVE 16
#define AMDSMI_PLAN_MAX_PARTITIONS 8

/**
 * The plan of a (compute, memory) change. The caller sets size = sizeof(struct
 * amdsmi_partition_plan) (smaller is -EINVAL); later versions only append fields, so a caller
 * built against this version keeps working.
 */
struct amdsmi_partition_plan {
        uint32_t size;                     /**< in: sizeof(struct amdsmi_partition_plan) */
        enum amdsmi_plan_reason reason;    /**< AMDSMI_PLAN_OK, or why it is invalid */
        uint32_t notes;                    /**< mask of (1u << note) */
        enum amdsmi_partition_rules rules; /**< the rule used for a different NPS mode */
        enum amdsmi_compute_mode compute_before, compute_after;
        enum amdsmi_memory_mode memory_before, memory_after;
        uint32_t supported_compute; /**< hardware set */
        uint32_t valid_compute;     /**< compute modes valid under memory_after */
        unsigned partitions_before, partitions_after;
        unsigned xcc_per_partition_after;
        uint64_t memory_per_partition_after; /**< bytes, page aligned; AMDSMI_NA if unknown */
        /** render minors of partitions that stop existing (from KFD) */
        int invalidated_render_minors[AMDSMI_PLAN_MAX_PARTITIONS];
        unsigned n_invalidated_render_minors;
        /** GPUs the change applies to: this one first, with a memory change its whole hive */
        char affected_bdfs[AMDSMI_PLAN_MAX_HIVE][16];
        unsigned n_affected_bdfs;
};

/** amdsmi_gpu_plan_partition() flags: force one compatibility rule instead of detecting it. */
#define AMDSMI_PLAN_FLAG_RULES_NPS_SETS (UINT64_C(1) << 1)
#define AMDSMI_PLAN_FLAG_RULES_NPS_COUNT (UINT64_C(1) << 2)

/**
 * Plans changing the GPU to (@p compute, @p memory) without changing anything.
 * AMDSMI_COMPUTE_UNKNOWN / AMDSMI_MEMORY_UNKNOWN keep the current mode.
 *
 * Which compute modes are valid: under the current memory mode, available_compute_partition
 * is the ground truth. For another memory mode the kernel's rule decides, and kernels have
 * two (spec §2.3): newer ones check a compatible-NPS set per mode, older ones the number of
 * memory partitions. The rule is detected by comparing available_compute_partition with what
 * each rule gives for the current memory mode; if both or neither match, the newer rule is
 * used. The flags force one rule, which then also decides for the current memory mode.
 *
 * @return 0 with the plan in @p ret_plan (check its reason: an invalid plan is not an
 * error), -EINVAL for a bad size, mode or flag, or a negative errno when the current state
 * cannot be read.
 * @since 0.1
 */
int amdsmi_gpu_plan_partition(struct amdsmi_gpu *gpu, enum amdsmi_compute_mode compute,
                              enum amdsmi_memory_mode memory, uint64_t flags,
                              struct amdsmi_partition_plan *ret_plan)
        AMDSMI_WARN_UNUSED AMDSMI_NONNULL(1, 5);

#ifdef __cplusplus
}
#endif
