/* SPDX-License-Identifier: MIT */
/**
 * @file amdsmi-reset.h
 * GPU reset: which mechanism a GPU has, which GPUs a reset takes, the driver's reset
 * capabilities, and the reset itself with a deadline.
 *
 * Mechanisms (spec health-and-control.md §4.1): on a bare-metal PF bound to amdgpu, a read
 * of the debugfs file `kernel/debug/dri/<PCI address or card minor>/amdgpu_gpu_recover`
 * (root; the read runs amdgpu_device_gpu_recover() with a full reset, blocks until it is
 * done and returns its result); on a gim host's PF, a read of gim's `reset_gpu` PF file
 * (root). A VF is reset by its host: no mechanism. amdgpu and gim reset the whole XGMI hive
 * of the GPU (the recovery takes the hive's device list), so a reset of one GPU of a hive
 * resets all of its GPUs.
 */
#pragma once

#if !defined(__AMDSMI_H_INSIDE__)
#error "Only <amdsmi/amdsmi.h> can be included directly."
#endif

#include <stdint.h>

#include <amdsmi/amdsmi-common.h>
#include <amdsmi/amdsmi-partition.h>

/** How a GPU is reset. */
enum amdsmi_reset_mechanism {
        AMDSMI_RESET_MECHANISM_NONE = 0,       /**< "none": a VF, or no driver that resets it */
        AMDSMI_RESET_MECHANISM_AMDGPU_RECOVER, /**< "amdgpu-debugfs-recover" */
        AMDSMI_RESET_MECHANISM_GIM_RESET_GPU,  /**< "gim-reset-gpu" */
};

/** "none", "amdgpu-debugfs-recover", "gim-reset-gpu"; NULL if out of range. @since 0.2 */
const char *amdsmi_reset_mechanism_to_string(enum amdsmi_reset_mechanism m);

/**
 * The mechanism that resets @p gpu.
 * @return 0 with the mechanism, -EOPNOTSUPP (with AMDSMI_RESET_MECHANISM_NONE) for a VF (a
 * VF is reset by its host) or a GPU that neither amdgpu nor gim drives.
 * @since 0.2
 */
int amdsmi_gpu_get_reset_mechanism(struct amdsmi_gpu *gpu, enum amdsmi_reset_mechanism *ret)
        AMDSMI_NONNULL(1, 2);

/**
 * The GPUs a reset of @p gpu takes: its XGMI hive in context (PCI address) order, @p gpu
 * included; @p gpu alone without a hive.
 * @return how many there are (at most @p max are stored).
 * @since 0.2
 */
unsigned amdsmi_gpu_get_reset_hive(struct amdsmi_gpu *gpu, struct amdsmi_gpu **ret, unsigned max)
        AMDSMI_NONNULL(1);

/** The reset types of a ring's reset mask (spec health-and-control.md §4.2). */
#define AMDSMI_RESET_TYPE_SOFT (1u << 0)  /**< "soft" or "soft_recovery" */
#define AMDSMI_RESET_TYPE_QUEUE (1u << 1) /**< "queue" */
#define AMDSMI_RESET_TYPE_PIPE (1u << 2)  /**< "pipe" */
#define AMDSMI_RESET_TYPE_FULL (1u << 3)  /**< "full" */

/** The rings that have a `<ring>_reset_mask` file. */
enum amdsmi_reset_ring {
        AMDSMI_RESET_RING_GFX,     /**< "gfx" */
        AMDSMI_RESET_RING_COMPUTE, /**< "compute" */
        AMDSMI_RESET_RING_SDMA,    /**< "sdma" */
        AMDSMI_RESET_RING_VCN,     /**< "vcn" */
        AMDSMI_RESET_RING_JPEG,    /**< "jpeg" */
        _AMDSMI_RESET_RING_MAX,
};

/** "gfx", "compute", ...; NULL if out of range. @since 0.2 */
const char *amdsmi_reset_ring_to_string(enum amdsmi_reset_ring ring);

/**
 * Parses a reset mask file's text: space-separated tokens ("soft" or "soft_recovery",
 * "queue", "pipe", "full"), then an optional newline. An empty text is an empty mask.
 * @return 0 with the AMDSMI_RESET_TYPE_* bits, -EBADMSG for an unknown or repeated token,
 * control characters, or text after the newline.
 * @since 0.2
 */
int amdsmi_reset_mask_parse(const char *text, uint32_t *ret_mask) AMDSMI_NONNULL(1, 2);

/** The reset masks of a GPU's rings. */
struct amdsmi_reset_masks {
        uint32_t present;                      /**< 1 << ring: the ring has a mask file */
        uint32_t mask[_AMDSMI_RESET_RING_MAX]; /**< AMDSMI_RESET_TYPE_* bits, 0 if absent */
};

/**
 * Reads `<dev>/<ring>_reset_mask` of every ring (0444; present only while GPU recovery is
 * enabled and the ring exists).
 * @return 0 (also when no file is there: present is 0), -EBADMSG (a file does not parse), or
 * another negative errno.
 * @since 0.2
 */
int amdsmi_gpu_read_reset_masks(struct amdsmi_gpu *gpu, struct amdsmi_reset_masks *ret)
        AMDSMI_NONNULL(1, 2);

/** Where a reset stopped (amdsmi_reset_report.stage). */
enum amdsmi_reset_stage {
        AMDSMI_RESET_STAGE_DONE = 0,  /**< "done" */
        AMDSMI_RESET_STAGE_PREFLIGHT, /**< "preflight": nothing was done */
        AMDSMI_RESET_STAGE_RESET,     /**< "reset": the reset failed or did not end in time */
        AMDSMI_RESET_STAGE_WAIT,      /**< "wait": the GPUs did not come back in time */
};

/** "done", "preflight", "reset", "wait"; NULL if out of range. @since 0.2 */
const char *amdsmi_reset_stage_to_string(enum amdsmi_reset_stage stage);

/** One GPU of a reset. */
struct amdsmi_reset_gpu {
        char bdf[16];
        int answers; /**< 1: the driver answers (pm reads succeed), 0: it does not */
        unsigned kfd_nodes_before, kfd_nodes_after; /**< its KFD nodes (compute partitions) */
        int back; /**< 1: answers and every KFD node it had is there again */
};

/**
 * The report of a reset: filled whenever @p size is valid, on success and on failure. The
 * caller sets size = sizeof(struct amdsmi_reset_report); later versions only append.
 */
struct amdsmi_reset_report {
        uint32_t size;
        int error; /**< the function's return value */
        enum amdsmi_reset_stage stage;
        enum amdsmi_reset_mechanism mechanism;
        int hive_wide;     /**< 1: the reset takes more than this GPU */
        int reset_done;    /**< 1: the mechanism's read returned */
        int64_t reset_res; /**< amdgpu_gpu_recover's result (0 = success) */
        int hung;          /**< 1: the read had not returned at the deadline */
        uint32_t reset_ms; /**< how long the read blocked (to the deadline) */
        uint32_t wait_ms;  /**< from its return until every GPU was back */
        uint64_t generation_before, generation_after;       /**< KFD generation_id */
        struct amdsmi_reset_gpu gpus[AMDSMI_PLAN_MAX_HIVE]; /**< the hive, in BDF order */
        unsigned n_gpus;
        char message[256]; /**< what happened and what to do, "" on success */
};

/** Flags of amdsmi_gpu_reset(). */
#define AMDSMI_RESET_DRY_RUN (UINT64_C(1) << 0) /**< fill mechanism and hive, reset nothing */

/**
 * Resets @p gpu (and its hive) through its mechanism, then waits until every GPU of the reset
 * is back: the driver answers (amdsmi_gpu_check_ready()) and the KFD topology, re-read, has
 * as many nodes of each GPU as before (generation_id re-read). The read that resets blocks in
 * the kernel; it runs in a thread of its own, so that a reset that does not end by the
 * deadline is reported (-ETIMEDOUT, hung) while the read goes on in the background. The whole
 * call, reset and wait, takes at most @p timeout_ms. Refuses nothing else: who uses the GPUs
 * is the caller's preflight. Afterwards re-read the context (amdsmi_ctx_enumerate()) for
 * anything but KFD nodes.
 * @param timeout_ms 0 for the default (60 s)
 * @return 0, -EOPNOTSUPP (no mechanism: a VF, another driver), -EACCES (not root: debugfs or
 * reset_gpu unreadable), -ENODATA (no debugfs: not mounted), -EIO (the reset failed:
 * reset_res in the report; or the read's own errno), -ETIMEDOUT (the reset or the wait did
 * not end in time), or another negative errno. The report says which GPUs answer.
 * @since 0.2
 */
int amdsmi_gpu_reset(struct amdsmi_gpu *gpu, uint64_t flags, unsigned timeout_ms,
                     struct amdsmi_reset_report *ret_report) AMDSMI_NONNULL(1, 4);
