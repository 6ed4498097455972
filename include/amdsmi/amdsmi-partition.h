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
        AMDSMI_PLAN_NO_PATH,               /**< "no-path": a gim host changes one mode at a
                                                time, and either order passes a pair gim
                                                refuses: go through an intermediate mode */
        AMDSMI_PLAN_NO_CHANGE = 16,        /**< note "no-change": already in these modes */
        AMDSMI_PLAN_RELOAD_REQUIRED,       /**< note "reload-required": memory mode change */
        AMDSMI_PLAN_HIVE_WIDE,             /**< note "hive-wide": every GPU of the hive */
        AMDSMI_PLAN_COMPUTE_AFTER_RELOAD,  /**< note "compute-after-reload": the compute mode
                                                is set after the reload (the driver boots in
                                                its AUTO choice first) */
        AMDSMI_PLAN_DESTROYS_VFS,          /**< note "destroys-vfs": a gim host tears every
                                                VF of the GPU down and makes vfs_after new
                                                ones (refused without
                                                AMDSMI_CHANGE_FORCE while VFs exist) */
        AMDSMI_PLAN_MEMORY_FIRST,          /**< note "memory-first": on a gim host the memory
                                                mode changes before the compute mode (the
                                                other order passes an invalid pair) */
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
        /** gim hosts: VFs now and after the change (one per partition); 0 elsewhere */
        unsigned vfs_before, vfs_after;
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

/**
 * Reads the memory mode requested through amdsmi that waits for a driver reload. The kernel
 * keeps such a request without showing it anywhere (current_memory_partition goes on showing
 * the mode the hardware runs in), so amdsmi_gpu_set_memory_mode() records it under the runtime
 * directory ($RUNTIME_DIRECTORY, else /run/amdsmi; cleared by a reboot, as the request is). A
 * record that the hardware has reached, or made for another sysfs root, does not count.
 * Requests written to the kernel by other tools are not known.
 * @return 0 with the requested mode, or AMDSMI_MEMORY_UNKNOWN when none is pending; or a
 * negative errno.
 * @since 0.1
 */
int amdsmi_gpu_read_pending_memory_mode(struct amdsmi_gpu *gpu, enum amdsmi_memory_mode *ret_mode)
        AMDSMI_WARN_UNUSED AMDSMI_NONNULL(1, 2);

/** A process that uses a GPU through KFD: it blocks compute switches and the driver reload. */
struct amdsmi_kfd_process {
        int32_t pid;         /**< as class/kfd/kfd/proc/ names it */
        char comm[32];       /**< /proc/PID/comm, control characters as '?'; "" if unknown
                                  (the process ended, or hidden) */
        char bdf[16];        /**< the GPU it uses */
        uint64_t vram_bytes; /**< its VRAM on that GPU (all partitions), AMDSMI_NA if unknown */
};

/**
 * Lists the processes that use the GPU through KFD: those with a class/kfd/kfd/proc/PID/
 * vram_GPUID file for one of the GPU's partitions (KFD gpu_ids). Processes that only opened a
 * render node (DRM users) do not block a switch and are not listed.
 * @return the number of processes (which may exceed @p max; only @p max are stored), 0 when
 * the GPU has no KFD nodes, or a negative errno.
 * @since 0.1
 */
int amdsmi_gpu_list_kfd_processes(struct amdsmi_gpu *gpu, struct amdsmi_kfd_process *ret,
                                  size_t max) AMDSMI_WARN_UNUSED AMDSMI_NONNULL(1);

/** Where a change stopped (amdsmi_partition_change.stage). */
enum amdsmi_change_stage {
        AMDSMI_STAGE_DONE = 0,  /**< "done": nothing failed */
        AMDSMI_STAGE_PREFLIGHT, /**< "preflight": refused before anything was written */
        AMDSMI_STAGE_WRITE,     /**< "write": the driver refused or failed the write */
        AMDSMI_STAGE_SETTLE,    /**< "settle": KFD topology did not settle in time */
        AMDSMI_STAGE_VERIFY,    /**< "verify": the device reads back another mode */
        AMDSMI_STAGE_UNBIND,    /**< "unbind": a driver reload could not unbind a GPU */
        AMDSMI_STAGE_BIND,      /**< "bind": a driver reload could not bind a GPU again */
};

/** "done", "preflight", ... as listed at enum amdsmi_change_stage. @since 0.1 */
const char *amdsmi_change_stage_to_string(enum amdsmi_change_stage stage);

/** Flags of the change functions. */
#define AMDSMI_CHANGE_DRY_RUN (UINT64_C(1) << 0) /**< preflight only: nothing is written */
#define AMDSMI_CHANGE_FORCE (UINT64_C(1) << 1)   /**< gim: change although VFs exist */

/** Most processes a change report names, GPUs it describes. */
#define AMDSMI_CHANGE_MAX_PROCESSES 32

/** The modes of one GPU after a driver reload. */
struct amdsmi_gpu_modes {
        char bdf[16];
        int error; /**< 0, or why this GPU did not come back (then the modes are unknown) */
        enum amdsmi_compute_mode compute;
        enum amdsmi_memory_mode memory;
        unsigned partitions;
};

/**
 * The report of a change: filled by the change functions whenever @p size is valid, on
 * success and on failure alike (it says why a change failed). The caller sets size =
 * sizeof(struct amdsmi_partition_change); later versions only append fields.
 */
struct amdsmi_partition_change {
        uint32_t size;                   /**< in: sizeof(struct amdsmi_partition_change) */
        int error;                       /**< the function's return value */
        enum amdsmi_change_stage stage;  /**< where it failed, AMDSMI_STAGE_DONE if it did not */
        int rollback_error;              /**< 0, or why restoring the previous mode failed */
        int rolled_back;                 /**< 1: the previous mode was restored and verified */
        int kfd_lost;                    /**< 1: the GPU has no KFD nodes after a failed
                                              switch: only a driver reload brings them back */
        int changed;                     /**< 1: the hardware changed (0: no-op or refused) */
        int reload_required;             /**< 1: a memory request now waits for a reload */
        enum amdsmi_compute_mode compute_before, compute_after; /**< after: read back */
        enum amdsmi_memory_mode memory_before, memory_after;
        enum amdsmi_memory_mode memory_pending; /**< AMDSMI_MEMORY_UNKNOWN: none */
        unsigned partitions_before, partitions_after;           /**< KFD nodes of the GPU */
        unsigned vfs_before, vfs_after;                         /**< gim hosts */
        uint64_t generation_before, generation_after;           /**< KFD generation_id */
        uint32_t elapsed_ms;             /**< from the first write to the end */
        /** processes that blocked the change (-EBUSY) */
        struct amdsmi_kfd_process blockers[AMDSMI_CHANGE_MAX_PROCESSES];
        unsigned n_blockers;             /**< may exceed AMDSMI_CHANGE_MAX_PROCESSES */
        /** driver reload: every GPU of the hive, in BDF order */
        struct amdsmi_gpu_modes gpus[AMDSMI_PLAN_MAX_HIVE];
        unsigned n_gpus;
        /** one line for the operator saying what happened and what to do, "" on success */
        char message[256];
};

/**
 * Switches the compute partition mode. Bare metal (amdgpu): checks the mode against
 * available_compute_partition and the KFD users of the GPU (-EBUSY with the processes in
 * the report), writes current_compute_partition, waits up to @p timeout_ms until the KFD
 * topology has settled (generation_id stable and one node per new partition), reads the mode
 * back, and re-reads the context's KFD topology: the GPU's partitions are the new ones, and
 * handles to the old ones answer -ESTALE (amdsmi_partition_check()). On a failure after the
 * write it restores the previous mode and reports both errors. gim host: writes the
 * accelerator profile of that mode; refused with -EBUSY while VFs exist unless
 * AMDSMI_CHANGE_FORCE (the VFs are torn down and made again, one per partition).
 * The caller serialises changes of one GPU (amdsmid, or the per-GPU lock of the CLI).
 *
 * @param timeout_ms 0 for the default (30 s)
 * @return 0 (also when the GPU is in that mode already: change.changed is 0), or -EINVAL (a
 * mode not in the hardware's set, or not valid under the memory mode), -EBUSY (KFD users, a
 * reset in progress, VFs on a gim host), -EOPNOTSUPP (no partition support, a VF), -EIO (the
 * driver failed the switch, or the device reads back another mode), -ETIMEDOUT, -ENODEV (the
 * GPU went away), -EACCES (not root), or another negative errno. The report says more.
 * @since 0.1
 */
int amdsmi_gpu_set_compute_mode(struct amdsmi_gpu *gpu, enum amdsmi_compute_mode mode,
                                uint64_t flags, unsigned timeout_ms,
                                struct amdsmi_partition_change *ret_change)
        AMDSMI_WARN_UNUSED AMDSMI_NONNULL(1, 5);

/**
 * Requests a memory partition (NPS) mode. Bare metal: writes current_memory_partition, which
 * the kernel only records for the whole XGMI hive; the request is kept (see
 * amdsmi_gpu_read_pending_memory_mode()) and takes effect with amdsmi_gpu_reload_driver().
 * gim host: writes memory_partition_mode, which takes effect at once (VFs are made again;
 * refused while VFs exist unless AMDSMI_CHANGE_FORCE), and reads it back.
 * @return 1 when the request waits for a driver reload (change.reload_required), 0 when done
 * or nothing to do, or a negative errno as amdsmi_gpu_set_compute_mode().
 * @since 0.1
 */
int amdsmi_gpu_set_memory_mode(struct amdsmi_gpu *gpu, enum amdsmi_memory_mode mode,
                               uint64_t flags, struct amdsmi_partition_change *ret_change)
        AMDSMI_WARN_UNUSED AMDSMI_NONNULL(1, 4);

/**
 * Reloads amdgpu on every GPU of the XGMI hive of @p gpu (the GPU alone without a hive) so
 * that a pending memory mode takes effect: refuses (-EBUSY, processes in the report) while
 * any of them has KFD users, unbinds them all through bus/pci/drivers/amdgpu/unbind, binds
 * them again through .../bind, waits up to @p timeout_ms until each is back with its KFD
 * nodes, and reports every GPU's new modes (the driver picks the compute mode from the memory
 * mode). It never runs modprobe. A GPU that fails to unbind makes the others bind again.
 * A bind that fails with EIO, EBUSY, EAGAIN or ETIMEDOUT is tried again, four writes in all,
 * 100, 200 and 400 ms apart (never after ENODEV: the function is gone). A GPU that still has
 * no driver is named in the report's message with how to recover, and recorded (see
 * amdsmi_gpu_is_left_unbound()). A GPU with no driver at all is accepted and only bound
 * (with the wait for its KFD nodes); one bound to another driver (vfio-pci, ...) is refused.
 * Afterwards the context's GPU objects describe the old driver instance: call
 * amdsmi_ctx_enumerate().
 * @param timeout_ms 0 for the default (120 s)
 * @return 0, -EBUSY, -EOPNOTSUPP (not amdgpu's: a gim host, a VF, another driver),
 * -ETIMEDOUT, -EACCES, the bind's errno (stage "bind": a GPU has no driver now), or another
 * negative errno.
 * @since 0.1
 */
int amdsmi_gpu_reload_driver(struct amdsmi_gpu *gpu, uint64_t flags, unsigned timeout_ms,
                             struct amdsmi_partition_change *ret_change)
        AMDSMI_WARN_UNUSED AMDSMI_NONNULL(1, 4);

/**
 * Whether a driver reload of amdsmi (amdsmi_gpu_reload_driver(), from any process using the
 * same runtime directory and sysfs root) unbound this GPU from amdgpu and could not bind it
 * again, and it still has no driver. A GPU an administrator unbound or handed to another
 * driver is not. A record whose GPU has a driver again is removed.
 * @return 1 if so, 0 if not, or a negative errno (the record is unreadable).
 * @since 0.1
 */
int amdsmi_gpu_is_left_unbound(struct amdsmi_gpu *gpu) AMDSMI_WARN_UNUSED AMDSMI_NONNULL(1);

#ifdef __cplusplus
}
#endif
