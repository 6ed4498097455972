/* SPDX-License-Identifier: MIT */
#pragma once

#if !defined(__AMDSMI_H_INSIDE__)
#error "Only <amdsmi/amdsmi.h> can be included directly."
#endif

#ifdef __cplusplus
extern "C" {
#endif

/** One AMD PCI function (a physical GPU, a PF under gim, or a VF). */
struct amdsmi_gpu;

/** One compute partition of a GPU, as seen in KFD topology (one KFD node). */
struct amdsmi_partition;

/** The kernel driver a PCI function is bound to. */
enum amdsmi_driver {
        AMDSMI_DRIVER_NONE = 0, /**< bound to nothing */
        AMDSMI_DRIVER_AMDGPU,
        AMDSMI_DRIVER_GIM,
        AMDSMI_DRIVER_VFIO_PCI,
        AMDSMI_DRIVER_OTHER,
};

/** What a PCI function is, seen from this operating system. */
enum amdsmi_role {
        AMDSMI_ROLE_UNKNOWN = 0,
        AMDSMI_ROLE_BAREMETAL,      /**< "baremetal": a PF used directly */
        AMDSMI_ROLE_HOST_PF,        /**< "host-pf": a PF serving VFs (gim, or VFs enabled) */
        AMDSMI_ROLE_VF_GUEST_1VF,   /**< "vf-guest-1vf": a VF in a guest, one-VF mode */
        AMDSMI_ROLE_VF_GUEST_MULTI, /**< "vf-guest-multi": a VF in a guest, multi-VF mode */
        AMDSMI_ROLE_VF,             /**< "vf": a VF seen on the host (has a physfn) */
};

/** Compute partition modes; the numbers are the kernel's. */
enum amdsmi_compute_mode {
        AMDSMI_COMPUTE_UNKNOWN = -1,
        AMDSMI_COMPUTE_SPX = 0,
        AMDSMI_COMPUTE_DPX = 1,
        AMDSMI_COMPUTE_TPX = 2,
        AMDSMI_COMPUTE_QPX = 3,
        AMDSMI_COMPUTE_CPX = 4,
};

/** Memory partition (NPS) modes; the numbers are the kernel's. */
enum amdsmi_memory_mode {
        AMDSMI_MEMORY_UNKNOWN = 0,
        AMDSMI_MEMORY_NPS1 = 1,
        AMDSMI_MEMORY_NPS2 = 2,
        AMDSMI_MEMORY_NPS3 = 3,
        AMDSMI_MEMORY_NPS4 = 4,
        AMDSMI_MEMORY_NPS6 = 6,
        AMDSMI_MEMORY_NPS8 = 8,
};

/** "none", "amdgpu", "gim", "vfio-pci", "other". @since 0.1 */
const char *amdsmi_driver_to_string(enum amdsmi_driver driver);
/** "unknown", "baremetal", "host-pf", "vf-guest-1vf", "vf-guest-multi", "vf". @since 0.1 */
const char *amdsmi_role_to_string(enum amdsmi_role role);
/** "SPX" ... "CPX", "UNKNOWN". @since 0.1 */
const char *amdsmi_compute_mode_to_string(enum amdsmi_compute_mode mode);
/**
 * Parses a compute mode name (exact, case-insensitive, e.g. "cpx").
 * @return 0 or -EINVAL.
 * @since 0.1
 */
int amdsmi_compute_mode_from_string(const char *s, enum amdsmi_compute_mode *ret_mode);
/** "NPS1" ... "NPS8", "UNKNOWN". @since 0.1 */
const char *amdsmi_memory_mode_to_string(enum amdsmi_memory_mode mode);
/** Parses "NPS4" (case-insensitive). @return 0 or -EINVAL. @since 0.1 */
int amdsmi_memory_mode_from_string(const char *s, enum amdsmi_memory_mode *ret_mode);

/** @return the number of GPUs found by the last enumeration. @since 0.1 */
size_t amdsmi_ctx_get_gpu_count(struct amdsmi_ctx *ctx);

/**
 * @return GPU @p index (0-based: physical functions, then VFs, each in BDF order) of the last
 * enumeration, borrowed from the
 * context, or NULL if out of range.
 * @since 0.1
 */
struct amdsmi_gpu *amdsmi_ctx_get_gpu(struct amdsmi_ctx *ctx, size_t index);

/**
 * Finds a GPU by PCI address, "0000:c1:00.0" or "c1:00.0" (domain 0), case-insensitive.
 * @return 0 and a borrowed handle, -EINVAL for a malformed address, -ENODEV if none matches.
 * @since 0.1
 */
int amdsmi_ctx_find_gpu(struct amdsmi_ctx *ctx, const char *bdf, struct amdsmi_gpu **ret_gpu);

/** Takes a reference (handles stay valid across enumerations). Accepts NULL. @since 0.1 */
struct amdsmi_gpu *amdsmi_gpu_ref(struct amdsmi_gpu *gpu);
/** Drops a reference. Accepts NULL; returns NULL. @since 0.1 */
struct amdsmi_gpu *amdsmi_gpu_unref(struct amdsmi_gpu *gpu);

/** @return the GPU's index in its enumeration. @since 0.1 */
unsigned amdsmi_gpu_get_index(struct amdsmi_gpu *gpu);
/** @return the PCI address, "0000:c1:00.0". @since 0.1 */
const char *amdsmi_gpu_get_bdf(struct amdsmi_gpu *gpu);
/** @return the PCI vendor ID (0x1002). @since 0.1 */
uint16_t amdsmi_gpu_get_vendor_id(struct amdsmi_gpu *gpu);
/** @return the PCI device ID, e.g. 0x74a1. @since 0.1 */
uint16_t amdsmi_gpu_get_device_id(struct amdsmi_gpu *gpu);
/** @return the PCI subsystem vendor ID. @since 0.1 */
uint16_t amdsmi_gpu_get_subsystem_vendor_id(struct amdsmi_gpu *gpu);
/** @return the PCI subsystem device ID. @since 0.1 */
uint16_t amdsmi_gpu_get_subsystem_device_id(struct amdsmi_gpu *gpu);
/** @return the PCI revision. @since 0.1 */
uint8_t amdsmi_gpu_get_revision(struct amdsmi_gpu *gpu);
/** @return the 24-bit PCI class code, e.g. 0x120000. @since 0.1 */
uint32_t amdsmi_gpu_get_class(struct amdsmi_gpu *gpu);
/**
 * @return the product: from the device ID table ("MI300X", "MI300X VF", ...), else the FRU
 * product name, else "AMD GPU 0x<device>". Never NULL.
 * @since 0.1
 */
const char *amdsmi_gpu_get_product(struct amdsmi_gpu *gpu);
/** @return whether this function is an SR-IOV VF (by device ID or a physfn link). @since 0.1 */
int amdsmi_gpu_is_vf(struct amdsmi_gpu *gpu);
/** @return the driver the function was bound to at enumeration. @since 0.1 */
enum amdsmi_driver amdsmi_gpu_get_driver(struct amdsmi_gpu *gpu);
/** @return the bound driver's name ("amdgpu", "ast", ...), or NULL if unbound. @since 0.1 */
const char *amdsmi_gpu_get_driver_name(struct amdsmi_gpu *gpu);
/** @return bare metal, host PF, VF guest (1VF / multi-VF) or host-side VF. @since 0.1 */
enum amdsmi_role amdsmi_gpu_get_role(struct amdsmi_gpu *gpu);
/** @return the PF's address for a host-side VF, else NULL. @since 0.1 */
const char *amdsmi_gpu_get_physfn_bdf(struct amdsmi_gpu *gpu);
/** @return the NUMA node, or -1 if none or unknown. @since 0.1 */
int amdsmi_gpu_get_numa_node(struct amdsmi_gpu *gpu);
/** @return the DRM primary card minor (cardN), or -1 if none. @since 0.1 */
int amdsmi_gpu_get_card_minor(struct amdsmi_gpu *gpu);
/** @return the DRM render minor (renderDN) of the PCI function, or -1 if none. @since 0.1 */
int amdsmi_gpu_get_render_minor(struct amdsmi_gpu *gpu);
/**
 * @return the XGMI hive id (from KFD), 0 if the GPU is in no hive or has no KFD node.
 * @since 0.1
 */
uint64_t amdsmi_gpu_get_hive_id(struct amdsmi_gpu *gpu);

/** Identity strings read at enumeration; each may be absent. */
enum amdsmi_gpu_string {
        AMDSMI_STRING_UNIQUE_ID = 0, /**< unique_id, 16 hex digits */
        AMDSMI_STRING_SERIAL,        /**< serial_number (FRU) */
        AMDSMI_STRING_PRODUCT_NAME,  /**< product_name (FRU) */
        AMDSMI_STRING_PRODUCT_NUMBER,/**< product_number (FRU) */
        AMDSMI_STRING_MANUFACTURER,  /**< manufacturer (FRU) */
        AMDSMI_STRING_FRU_ID,        /**< fru_id (FRU) */
        AMDSMI_STRING_VBIOS_VERSION, /**< vbios_version: the VBIOS part number */
        AMDSMI_STRING_VBIOS_BUILD,   /**< vbios_build (newer kernels) */
        _AMDSMI_STRING_MAX,
};

/**
 * @return an identity string, or NULL if the file is absent, empty or unreadable (the reason
 * is logged).
 * @since 0.1
 */
const char *amdsmi_gpu_get_string(struct amdsmi_gpu *gpu, enum amdsmi_gpu_string which);

/** PCIe link state; speeds in megatransfers per second (32 GT/s = 32000). */
struct amdsmi_pcie_link {
        uint64_t current_speed_mts; /**< AMDSMI_NA if unknown */
        uint64_t current_width;     /**< lanes, AMDSMI_NA if unknown */
        uint64_t max_speed_mts;
        uint64_t max_width;
};

/**
 * Reads the PCIe link files now.
 * @return 0 (fields the kernel does not show are AMDSMI_NA) or a negative errno.
 * @since 0.1
 */
int amdsmi_gpu_read_pcie_link(struct amdsmi_gpu *gpu, struct amdsmi_pcie_link *ret_link);

/**
 * Reads pcie_replay_count: the PCIe replays (NAKs sent and received) since the driver loaded.
 * Not on an SR-IOV VF.
 * @return 0, -ENOENT where the file does not exist, or another negative errno.
 * @since 0.2
 */
int amdsmi_gpu_read_pcie_replay_count(struct amdsmi_gpu *gpu, uint64_t *ret_count)
        AMDSMI_WARN_UNUSED AMDSMI_NONNULL(1, 2);

/** VRAM and GTT sizes in bytes (AMDSMI_NA where absent). */
struct amdsmi_memory_info {
        uint64_t vram_total;
        uint64_t vram_used;
        uint64_t vis_vram_total;
        uint64_t gtt_total;
};

/** Reads the mem_info_* files now. @return 0 or a negative errno. @since 0.1 */
int amdsmi_gpu_read_memory_info(struct amdsmi_gpu *gpu, struct amdsmi_memory_info *ret_info);

/**
 * Reads current_compute_partition now (this can wake the GPU).
 * @return 0, -ENODATA if the GPU has no partition support, or a negative errno (-EPERM from
 * the kernel means a reset is in progress and is returned as -EBUSY).
 * @since 0.1
 */
int amdsmi_gpu_read_compute_mode(struct amdsmi_gpu *gpu, enum amdsmi_compute_mode *ret_mode);

/**
 * Derives the compute partition mode from the KFD topology (the number of partitions and
 * their XCCs) without touching the GPU's partition files, so it never wakes the GPU.
 * @return 0, or -ENODATA if the GPU has no known KFD partitions.
 * @since 0.1
 */
int amdsmi_gpu_get_topology_compute_mode(struct amdsmi_gpu *gpu,
                                         enum amdsmi_compute_mode *ret_mode);

/** Reads current_memory_partition now. Same returns as the compute mode. @since 0.1 */
int amdsmi_gpu_read_memory_mode(struct amdsmi_gpu *gpu, enum amdsmi_memory_mode *ret_mode);

/**
 * Whether the driver answers now: reads one pm file (power_dpm_force_performance_level) of an
 * amdgpu-bound GPU, which the driver refuses while a reset is in progress or the GPU is
 * suspended. One call per GPU tells whether its other pm and partition reads can succeed.
 * @return 0 (it answers), -EBUSY (reset in progress or suspended; the kernel's EPERM is
 * returned as -EBUSY), -ENODATA (not bound to amdgpu, or no pm files: nothing to check), or
 * another negative errno.
 * @since 0.2
 */
int amdsmi_gpu_check_ready(struct amdsmi_gpu *gpu);

/** A firmware version. */
struct amdsmi_firmware {
        const char *name;  /**< e.g. "mec", "sos", "smc", "psp_toc" */
        uint64_t version;  /**< as the kernel reports it */
        int from_ioctl;    /**< 1 if read through the DRM render node, 0 if from sysfs */
};

/**
 * Reads firmware versions: sysfs fw_version/ first, then the amdgpu INFO ioctl on the render
 * node (under the device root) for the ones sysfs lacks. Loaded once and cached.
 * @return the number of entries (0 if none), or a negative errno.
 * @since 0.1
 */
int amdsmi_gpu_get_firmware(struct amdsmi_gpu *gpu, const struct amdsmi_firmware **ret_fw);

/**
 * @return the number of compute partitions (KFD nodes) of this GPU; 0 if it has none or if
 * they are unknown (see amdsmi_gpu_get_partitions_error()).
 * @since 0.1
 */
size_t amdsmi_gpu_get_partition_count(struct amdsmi_gpu *gpu);
/**
 * Tells whether the partition list is known. A GPU without KFD nodes (no amdgpu, a gim PF)
 * has a known, empty list.
 * @return 0, or the negative errno that made this GPU's KFD topology unreadable (-EBADMSG for
 * a malformed node, or the read error); its partition count is then 0.
 * @since 0.1
 */
int amdsmi_gpu_get_partitions_error(struct amdsmi_gpu *gpu);

/** @return partition @p index (borrowed), or NULL. @since 0.1 */
struct amdsmi_partition *amdsmi_gpu_get_partition(struct amdsmi_gpu *gpu, size_t index);

/** @return the GPU owning the partition. @since 0.1 */
struct amdsmi_gpu *amdsmi_partition_get_gpu(struct amdsmi_partition *part);
/** @return the partition index within its GPU (0..7). @since 0.1 */
unsigned amdsmi_partition_get_index(struct amdsmi_partition *part);
/** @return the KFD topology node number. @since 0.1 */
unsigned amdsmi_partition_get_kfd_node(struct amdsmi_partition *part);
/** @return the KFD gpu_id. @since 0.1 */
uint32_t amdsmi_partition_get_kfd_gpu_id(struct amdsmi_partition *part);
/** @return the render minor of this partition's DRM node. @since 0.1 */
int amdsmi_partition_get_render_minor(struct amdsmi_partition *part);
/** @return compute units (simd_count / simd_per_cu). @since 0.1 */
unsigned amdsmi_partition_get_compute_units(struct amdsmi_partition *part);
/** @return SIMDs (KFD simd_count). @since 0.1 */
unsigned amdsmi_partition_get_simd_count(struct amdsmi_partition *part);
/** @return XCCs in this partition. @since 0.1 */
unsigned amdsmi_partition_get_xcc_count(struct amdsmi_partition *part);
/** @return memory of this partition in bytes (KFD mem_banks), AMDSMI_NA if unknown. @since 0.1 */
uint64_t amdsmi_partition_get_memory_bytes(struct amdsmi_partition *part);
/** @return the KFD gfx_target_version, e.g. 90402. @since 0.1 */
uint32_t amdsmi_partition_get_gfx_target_version(struct amdsmi_partition *part);
/** @return the KFD unique_id of this partition, 0 if none. @since 0.1 */
uint64_t amdsmi_partition_get_unique_id(struct amdsmi_partition *part);
/**
 * Checks that the partition still exists as enumerated.
 * @return 0, or -ESTALE if the KFD topology changed since (enumerate again).
 * @since 0.1
 */
int amdsmi_partition_check(struct amdsmi_partition *part);

#ifdef __cplusplus
}
#endif
