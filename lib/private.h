/* SPDX-License-Identifier: MIT */
/* Definitions behind the opaque handles. Not installed. */
#pragma once

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>

#include <amdsmi/amdsmi.h>

#include "macro.h"

struct amdsmi_partition {
        struct amdsmi_gpu *gpu;
        unsigned index;
        unsigned kfd_node;
        uint32_t kfd_gpu_id;
        int render_minor;
        unsigned simd_count;
        unsigned simd_per_cu;
        unsigned num_xcc;
        uint64_t memory_bytes;
        bool memory_loaded;     /* memory_bytes read (lazily: only static output needs it) */
        uint32_t gfx_target_version;
        uint64_t unique_id;
        uint64_t location_id;
        uint64_t generation;   /* KFD generation_id at enumeration */
        bool stale;            /* replaced by a later enumeration at another generation */
};

struct amdsmi_gpu {
        unsigned n_ref;
        struct amdsmi_ctx *ctx; /* not a reference: a GPU must not outlive its context */
        unsigned index;
        char bdf[16];
        char *syspath;          /* "bus/pci/devices/<bdf>" relative to the root */
        uint16_t vendor, device, subsystem_vendor, subsystem_device;
        uint8_t revision;
        uint32_t pci_class;
        int numa_node;
        bool pci_extra_loaded;  /* subsystem ids, revision (and the NUMA node) */
        bool numa_loaded;       /* numa_node */
        enum amdsmi_driver driver;
        char *driver_name;
        bool role_loaded;       /* physfn_bdf, is_vf, role */
        char *physfn_bdf;
        bool is_vf;
        enum amdsmi_role role;
        char *product;          /* from the ID table or FRU */
        char *strings[_AMDSMI_STRING_MAX];
        bool strings_loaded;
        bool drm_loaded;        /* card_minor, render_minor */
        int card_minor;
        int render_minor;
        char *hwmon_path;       /* relative path of the amdgpu hwmon dir, NULL if none */
        char **hwmon_names;     /* its listing, sorted; read once per GPU object (telemetry.c) */
        bool hwmon_cap_writable;
        bool hwmon_listing_stale; /* a listed file went away: list again */
        bool hwmon_fixed_loaded;  /* hwmon_fixed holds what does not move (telemetry.c) */
        struct amdsmi_hwmon hwmon_fixed;
        char hwmon_sclk_attr[32], hwmon_mclk_attr[32], hwmon_vddboard_attr[32];
        bool memory_fixed_loaded; /* the memory sizes (gpu.c) */
        uint64_t vram_total, vis_vram_total, gtt_total;
        bool power_range_loaded; /* power1_cap_min/_max, read once per driver instance */
        uint64_t power_cap_min_uw, power_cap_max_uw; /* AMDSMI_NA when unknown */
        uint64_t hive_id;

        struct amdsmi_partition *partitions;
        size_t n_partitions;
        int partitions_error;   /* < 0: the KFD topology of this GPU is unreadable */

        bool fw_loaded;
        struct amdsmi_firmware *fw;
        size_t n_fw;
        char **fw_names;
};

/* An attribute file kept open by the _live reads of sysfs.c. */
struct sysfs_kept {
        char *path; /* NULL: a free slot */
        int fd;
};

struct amdsmi_ctx {
        unsigned n_ref;
        char *sysfs_root;
        char *dev_root;         /* NULL: never open device nodes */
        int root_fd;            /* O_PATH directory fd of sysfs_root, -1 until first use */
        struct sysfs_kept *kept; /* open-addressing table of kept attribute files (sysfs.c) */
        size_t kept_size, n_kept;
        amdsmi_log_fn log_fn;
        void *log_userdata;
        int log_priority;

        struct amdsmi_gpu **gpus;
        size_t n_gpus;
        uint64_t pci_listing_hash; /* of bus/pci/devices at the last enumeration */
        uint64_t kfd_generation;
        bool kfd_present;       /* the topology directory exists */
        bool kfd_loaded;        /* partitions mapped since the last enumeration */
        /* Partition arrays replaced by kfd_enumerate(): kept until the context goes, so that
         * a caller's old handle stays valid memory and answers -ESTALE. */
        struct amdsmi_partition **retired;
        size_t n_retired;
};

void amdsmi_log(struct amdsmi_ctx *ctx, int priority, const char *fmt, ...) _printf_(3, 4);
#define log_debug(ctx, ...) amdsmi_log(ctx, AMDSMI_LOG_DEBUG, __VA_ARGS__)
#define log_info(ctx, ...) amdsmi_log(ctx, AMDSMI_LOG_INFO, __VA_ARGS__)
#define log_warning(ctx, ...) amdsmi_log(ctx, AMDSMI_LOG_WARNING, __VA_ARGS__)
#define log_error(ctx, ...) amdsmi_log(ctx, AMDSMI_LOG_ERR, __VA_ARGS__)

/* gpu.c */
struct amdsmi_gpu *gpu_new(struct amdsmi_ctx *ctx, const char *bdf);
int gpu_probe(struct amdsmi_gpu *gpu);
bool device_is_vf(uint16_t device);
void gpu_load_drm(struct amdsmi_gpu *gpu);
/* Reads a partition/pm text attribute of the GPU with the driver's errno turned into the
 * domain's: absent → -ENODATA, EPERM (a reset in progress, not a permission) → -EBUSY. */
int gpu_read_partition_attr(struct amdsmi_gpu *gpu, const char *attr, char *buf, size_t size);
const char *product_from_device_id(uint16_t device);

/* kfd.c: maps KFD topology nodes to the context's GPUs, once per enumeration (lazily). */
int kfd_enumerate(struct amdsmi_ctx *ctx);
void kfd_ensure_loaded(struct amdsmi_ctx *ctx);
int kfd_read_generation(struct amdsmi_ctx *ctx, uint64_t *ret);
/* Maps the KFD nodes again if generation_id moved since the last mapping (or none was made):
 * the GPU objects get their new partitions in place, the old handles turn stale. */
int kfd_refresh(struct amdsmi_ctx *ctx);
/* Frees the retired partition arrays of gpu (all of them with gpu NULL). */
void kfd_free_retired(struct amdsmi_ctx *ctx, struct amdsmi_gpu *gpu);

/* firmware.c / drm-ioctl.c */
void gpu_free_firmware(struct amdsmi_gpu *gpu);
int drm_query_firmware(struct amdsmi_ctx *ctx, int render_minor, uint32_t fw_type,
                       uint32_t *ret_version, uint32_t *ret_feature);
/* drm-ioctl.c: the fd of dri/renderD<minor> below the device root (-ENODEV without one),
 * and one AMDGPU_INFO_FW_VERSION query on it, so several queries share one open. */
int drm_open_render(struct amdsmi_ctx *ctx, int render_minor);
int drm_query_firmware_fd(struct amdsmi_ctx *ctx, int fd, uint32_t fw_type,
                          uint32_t *ret_version, uint32_t *ret_feature);
/* drm-ioctl.c: <dev root>/kfd (O_RDWR), its AMDKFD_IOC_GET_VERSION, and AMDKFD_IOC_SMI_EVENTS
 * for one KFD gpu_id, which returns the event fd. */
int kfd_open(struct amdsmi_ctx *ctx);
int kfd_get_version(struct amdsmi_ctx *ctx, int fd, uint32_t *ret_major, uint32_t *ret_minor);
int kfd_smi_events_fd(struct amdsmi_ctx *ctx, int fd, uint32_t gpu_id);
