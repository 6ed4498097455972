/* SPDX-License-Identifier: MIT */
/*
 * amdsmi-sim: the machine model. The state of a simulated server (spec amdgpu-sysfs.md §9):
 * its PCI functions, the AMD GPUs among them with their product, driver, partition modes,
 * power limits and sensors, and the kernel generation that decides where kernels differ.
 * The sysfs tree is built from this state (build.c) and the rules change it (rule-*.c).
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "metrics.h"
#include "util.h"

struct sim_control;
struct sim_fs;
struct sim_node;

/* Compute partition modes in the kernel's enum order (§2.1). */
enum sim_compute {
        SIM_SPX,
        SIM_DPX,
        SIM_TPX,
        SIM_QPX,
        SIM_CPX,
        _SIM_COMPUTE_MAX,
        SIM_COMPUTE_UNKNOWN = -1,
};

/* NPS modes are their partition count (1, 2, 4, 8; 3 and 6 exist in the kernel's table);
 * a set of them is a bit mask of 1 << n. */
#define SIM_NPS_BIT(n) (1u << (n))
#define SIM_NPS_VALID_MASK (SIM_NPS_BIT(1) | SIM_NPS_BIT(2) | SIM_NPS_BIT(4) | SIM_NPS_BIT(8))

/* What the guest or host sees of a GPU function (§7.2, §7.3, virtualization.md §1, §2). A
 * machine is a bare-metal host, a gim host (host-pf GPUs only) or a VM (guest GPUs only). */
enum sim_role {
        SIM_ROLE_BAREMETAL, /* amdgpu on the PF (mi300x-sriov: also VFs, see rule-sriov.c) */
        SIM_ROLE_HOST_PF,   /* PF under gim: no DRM, hwmon or KFD; VFs below it */
        SIM_ROLE_GUEST_1VF, /* a VF inside a VM, one-VF mode (the host's vf_num is 1) */
        SIM_ROLE_GUEST_MULTIVF,
        _SIM_ROLE_MAX,
};

enum sim_driver_id {
        SIM_DRV_NONE = -1,
        SIM_DRV_AMDGPU,
        SIM_DRV_GIM,
        SIM_DRV_VFIO_PCI,
        SIM_DRV_PCIEPORT,
        SIM_DRV_K10TEMP,
        SIM_DRV_AST,
        _SIM_DRV_MAX,
};

enum sim_func_kind {
        SIM_FUNC_GPU,
        SIM_FUNC_ROOT_PORT,
        SIM_FUNC_SWITCH_UP,
        SIM_FUNC_SWITCH_DOWN,
        SIM_FUNC_BMC_BRIDGE,
        SIM_FUNC_BMC_VGA,
        SIM_FUNC_DF, /* CPU data fabric function (k10temp) */
        SIM_FUNC_VF, /* an SR-IOV VF on the host, made by its PF (rule-sriov.c) */
};

#define SIM_MAX_LEVELS 8
#define SIM_MAX_XCP 8 /* partitions per GPU (MAX_XCP) */
#define SIM_MAX_GPUS 64

struct sim_levels {
        unsigned n;
        unsigned mhz[SIM_MAX_LEVELS];
};

struct sim_limits_w {
        uint32_t min, max, def;
};

enum {
        SIM_FW_VCE,
        SIM_FW_UVD,
        SIM_FW_MC,
        SIM_FW_ME,
        SIM_FW_PFP,
        SIM_FW_CE,
        SIM_FW_RLC,
        SIM_FW_RLC_SRLC,
        SIM_FW_RLC_SRLG,
        SIM_FW_RLC_SRLS,
        SIM_FW_MEC,
        SIM_FW_MEC2,
        SIM_FW_SOS,
        SIM_FW_ASD,
        SIM_FW_TA_RAS,
        SIM_FW_TA_XGMI,
        SIM_FW_SMC,
        SIM_FW_SDMA,
        SIM_FW_SDMA2,
        SIM_FW_VCN,
        SIM_FW_DMCU,
        SIM_FW_IMU,
        _SIM_FW_MAX,
};
extern const char *const sim_fw_names[_SIM_FW_MAX];

/* A product: what every GPU of that kind shares. */
struct sim_product {
        char *name; /* "MI300X" */
        char *base; /* the built-in product it derives from, if another */
        uint16_t device_id, vf_device_id, subsystem_vendor, subsystem_device;
        uint8_t revision;
        uint32_t pci_class;
        unsigned xcc, cu_per_xcc;
        bool apu;
        unsigned gc[3]; /* 9.4.3 */
        uint32_t gfx_target_version;
        uint64_t vram_bytes, gtt_bytes, kfd_memory_bytes;
        unsigned nps_supported; /* SIM_NPS_BIT set; empty: fixed NPS1 (APU, VF) */
        struct sim_limits_w power_cap_w;
        bool ppt1;
        struct sim_limits_w ppt1_w;
        unsigned sdma_engines, vcn, jpeg_per_vcn;
        struct sim_levels sclk, mclk, socclk, fclk, vclk, dclk;
        int junction_crit_c, junction_crit_hyst_c, junction_emergency_c; /* hyst 0: none */
        int mem_crit_c, mem_crit_hyst_c, mem_emergency_c;
        char *vbios_version, *vbios_build; /* build: NULL if none */
        bool fru;
        char *fru_product_name, *fru_product_number, *fru_manufacturer, *fru_id;
        char *serial_prefix;
        uint32_t fw[_SIM_FW_MAX];
        unsigned idle_power_w, mem_max_bandwidth_gbs, hbm_width, max_engine_clk_mhz;
        /* performance (rule-perf.c): the PM policies the SMU offers (pm_policy/soc_pstate,
         * pm_policy/xgmi_plpd, the latter in an XGMI hive only) and whether it can set the
         * UCLK max (OD_MCLK in pp_od_clk_voltage) */
        bool soc_pstate, xgmi_plpd, od_mclk;
        uint32_t kfd_capability, kfd_capability2;
        uint16_t total_vfs; /* SR-IOV capability's TotalVFs (needs vf_device_id); 0: none */
        /* XGMI (health-and-control.md §3.1): links to each peer of the hive (0: 1, or 2 on an
         * APU); whether the data fabric has the FICA registers xgmi_error reads (DF 3.6, MI100
         * and MI200; the DF 4.3 and 4.6.2 of MI300 and MI350 have none: xgmi_error is EINVAL) */
        unsigned xgmi_links_per_peer;
        bool xgmi_error_counter;
};

/* Where kernels differ, the machine picks (§2.3, §5.2, §2.5, §2.1). */
struct sim_kernel {
        unsigned gpu_metrics_revision; /* default of each GPU */
        unsigned gpu_metrics_layout;   /* enum sim_metrics_layout of revision 9, default of
                                          each GPU (SIM_LAYOUT_UNSET: 7.1) */
        bool nps_compat_newer;         /* compatible-NPS sets (newer) or partition counts */
        bool dkms;                     /* ROCm/amdgpu: EPERM on partition files in reset */
        bool partition_config;         /* compute_partition_config/, vbios_build */
        /* SR-IOV (rule-sriov.c): the modules' parameters where they matter */
        bool amdgpu_sriov_configure; /* SYNTHETIC: amdgpu implements sriov_configure */
        bool vfio_pci_enable_sriov;  /* vfio-pci.enable_sriov */
        char *vfio_pci_ids;          /* vfio-pci.ids "1002:74b5,..." (NULL: none) */
        bool vf_power_limit;         /* the host grants one-VF guests power-limit control
                                        (AMDGPU_VIRT_CAP_POWER_LIMIT): power1_cap 0644 */
        /* RAS (ras.c): ACA (aca_<block>, the CPER ring) or the legacy <block>_err_count; the
         * blocks with RAS (1 << enum sim_ras_block; 0: the product's default); the CPER ring's
         * size in bytes; the bad-page threshold (debugfs bad_page_cnt_threshold; 0: no
         * retirement, no gpu_vram_bad_pages) */
        bool ras_aca;
        bool ras_enable; /* amdgpu.ras_enable: false, RAS off (no ras/, no bad-page table) */
        uint32_t ras_blocks;
        uint32_t cper_ring_bytes;
        uint32_t bad_page_threshold;
        /* GPU reset (rule-reset.c): how long a recovery takes; whether the power caps and the
         * performance level keep their values across it (else: the defaults, auto); how long
         * the KFD nodes of the GPUs reset are gone after it (0: they persist) */
        uint32_t reset_ms;
        bool reset_keeps_cap, reset_keeps_perf;
        uint32_t reset_kfd_down_ms;
};

/* RAS (health-and-control.md §1, §2; ras.c). Blocks in the kernel's ras_block_string order. */
enum sim_ras_block {
        SIM_RAS_UMC,
        SIM_RAS_SDMA,
        SIM_RAS_GFX,
        SIM_RAS_MMHUB,
        SIM_RAS_ATHUB,
        SIM_RAS_PCIE_BIF,
        SIM_RAS_HDP,
        SIM_RAS_XGMI_WAFL,
        SIM_RAS_DF,
        SIM_RAS_SMN,
        SIM_RAS_SEM,
        SIM_RAS_MP0,
        SIM_RAS_MP1,
        SIM_RAS_FUSE,
        SIM_RAS_MCA,
        SIM_RAS_VCN,
        SIM_RAS_JPEG,
        _SIM_RAS_BLOCK_MAX,
};
extern const char *const sim_ras_block_names[_SIM_RAS_BLOCK_MAX];

enum sim_ras_err {
        SIM_RAS_UE,
        SIM_RAS_CE,
        SIM_RAS_DE,
        _SIM_RAS_ERR_MAX,
};
extern const char *const sim_ras_err_names[_SIM_RAS_ERR_MAX];

/* A CPER record the driver writes: fatal (a UE's crash dump), corrected, uncorrected (poison,
 * deferred), or the bad-page-threshold record (fatal, RMA). */
enum sim_cper_kind {
        SIM_CPER_FATAL,
        SIM_CPER_CORRECTED,
        SIM_CPER_UNCORRECTED,
        SIM_CPER_BAD_PAGE_THRESHOLD,
        _SIM_CPER_KIND_MAX,
};
extern const char *const sim_cper_kind_names[_SIM_CPER_KIND_MAX];

struct sim_bad_page {
        uint32_t pfn;
        char status; /* 'R' reserved, 'P' pending, 'F' cannot be reserved */
};

/* What a description presets (machine JSON "ras"): counts since driver load, retired pages
 * (in the EEPROM: they survive a driver reload), CPER records written at load. */
struct sim_ras_preset {
        uint64_t counts[_SIM_RAS_BLOCK_MAX][_SIM_RAS_ERR_MAX];
        struct sim_bad_page *pages;
        size_t n_pages;
        uint8_t *cper; /* enum sim_cper_kind each */
        size_t n_cper;
};
void sim_ras_preset_done(struct sim_ras_preset *p);
int sim_ras_preset_copy(const struct sim_ras_preset *src, struct sim_ras_preset *dst);

/* The driver's RAS state of a GPU (ras.c). */
struct sim_ras_rec {
        uint32_t start_dw, len_dw;
};
struct sim_ras {
        bool loaded; /* the driver loaded once: a later load starts from zero counts */
        uint64_t counts[_SIM_RAS_BLOCK_MAX][_SIM_RAS_ERR_MAX];
        struct sim_bad_page *pages;
        size_t n_pages;
        /* event_state: seqno and per event (fatal, poison creation, poison consumption) */
        uint64_t seqno, ev_count[3], ev_last[3];
        /* the CPER ring: bytes, read and write pointers in dwords, records in ring order */
        uint8_t *ring;
        uint32_t ring_bytes, rptr, wptr;
        struct sim_ras_rec *recs;
        size_t n_recs, cap_recs;
        uint32_t cper_id; /* the per-device record counter ("%d:%X") */
};

struct sim_cpu {
        unsigned sockets, cores_per_socket, threads_per_core;
        uint64_t memory_bytes_per_socket;
        unsigned max_clock_mhz;
};

/* Initial sensor values (the state at step 0 of the telemetry). */
struct sim_sensors {
        unsigned power_w, junction_c, mem_c, sclk_mhz, mclk_mhz;
        unsigned gpu_busy_percent, mem_busy_percent;
        uint64_t vram_used_bytes;
};

/* Living telemetry (telemetry.c). The accumulation counter advances this many ticks per step
 * of 100 ms (1 kHz); the residency and activity accumulators count in the same ticks. */
#define SIM_ACC_TICKS_PER_STEP 100

/* Limiters whose residency a share set through the control socket drives (sim_set_limit()). */
enum sim_limiter {
        SIM_LIMITER_PPT,
        SIM_LIMITER_SOCKET_THERMAL,
        SIM_LIMITER_HBM_THERMAL,
        SIM_LIMITER_VR_THERMAL,
        SIM_LIMITER_PROCHOT,
        _SIM_LIMITER_MAX,
};
extern const char *const sim_limiter_names[_SIM_LIMITER_MAX];

struct sim_telemetry {
        uint64_t step;
        unsigned power_w, junction_c, mem_c, vrsoc_c, sclk_mhz, mclk_mhz;
        unsigned gpu_busy, mem_busy;
        uint64_t energy_acc; /* 15.259 µJ units */
        uint64_t gfx_activity_acc, mem_activity_acc, accumulation_counter;
        uint64_t prochot_residency_acc, ppt_residency_acc, socket_thm_residency_acc;
        uint64_t vr_thm_residency_acc, hbm_thm_residency_acc;
        uint64_t pcie_bandwidth_acc, pcie_bandwidth_inst;
        uint64_t xgmi_read_acc[8], xgmi_write_acc[8];
        uint64_t gfx_busy_acc[SIM_MAX_XCP * 8];             /* per XCC, in GPU XCC order */
        uint64_t gfx_below_host_limit_acc[SIM_MAX_XCP * 8]; /* either limit (TOTAL) */
        uint64_t gfx_below_ppt_acc[SIM_MAX_XCP * 8], gfx_below_thm_acc[SIM_MAX_XCP * 8];
};

struct sim_machine;
struct sim_gpu;

/* The SR-IOV capability of a PF and its state (virtualization.md §2.1 to §2.3). */
struct sim_sriov {
        uint16_t total_vfs, num_vfs, offset, stride, vf_device;
        bool drivers_autoprobe;
        struct sim_func **vfs; /* VF i at [i], num_vfs of them */
};

struct sim_func {
        struct sim_machine *m;
        enum sim_func_kind kind;
        char bdf[16];
        uint32_t domain;
        uint8_t bus, dev, fn;
        struct sim_func *upstream; /* the bridge above; NULL on a root bus */
        char *path;                /* "devices/pci0000:00/0000:00:01.1/..." */
        uint16_t vendor, device, subsystem_vendor, subsystem_device;
        uint8_t revision;
        uint32_t class_code;
        bool pcie;
        const char *link_speed, *link_speed_max; /* "32.0 GT/s PCIe" */
        unsigned link_width, link_width_max;
        int numa_node;
        int driver;            /* enum sim_driver_id, SIM_DRV_NONE when unbound */
        char *driver_override; /* NULL: "(null)" */
        unsigned enable_cnt;
        unsigned iommu_group, irq;
        uint64_t bar_start[6], bar_size[6];
        struct sim_gpu *gpu;     /* SIM_FUNC_GPU */
        int hwmon;               /* k10temp's hwmon index, -1 */
        int card;                /* BMC VGA's DRM card, -1 */
        struct sim_sriov *sriov; /* a PF with the SR-IOV capability, else NULL */
        struct sim_func *physfn; /* a VF on the host: its PF, else NULL */
        unsigned vf_index;       /* a VF: its index at the PF */
        bool unplugged;          /* hot-unplugged (control socket): not on the bus */
};

struct sim_gpu {
        struct sim_machine *m;
        struct sim_func *func;
        unsigned index; /* among the GPUs, in probe (BDF) order */
        const struct sim_product *prod;
        uint32_t fw[_SIM_FW_MAX]; /* the firmware it runs: the product's, or the machine's
                                     per-GPU override ("firmware") */
        char *iommu_group_with;   /* the PCI address whose IOMMU group it shares (no ACS); NULL:
                                     its own */
        enum sim_role role;
        unsigned nps_supported;
        unsigned nps_current, nps_requested; /* requested 0: none */
        bool nps_armed;                      /* the hive went down with a request: apply at probe */
        enum sim_compute compute;
        unsigned kfd_users;
        bool in_reset;
        uint32_t cap_w;
        struct sim_limits_w cap_limits_w;
        uint32_t ppt1_cap_w;
        struct sim_limits_w ppt1_limits_w;
        int64_t platform_limit_w; /* the BMC's out-of-band limit, -1: none */
        uint64_t hive_id, unique_id;
        char *serial;
        unsigned metrics_rev;
        unsigned metrics_layout; /* enum sim_metrics_layout, of revision 9 */
        struct sim_sensors sensors;
        /* SR-IOV: host-pf: the VFs gim enables (its vf_num); guests: the host's VF count of
         * the GPU, which decides the VF's share (prod is then the VF's view of host_prod) */
        unsigned vf_num;
        const struct sim_product *host_prod;
        bool self_switch, force_reset; /* gim's world switch and force_hot_reset flags */

        struct sim_ras_preset ras_preset; /* the description's (ras.c) */

        /* runtime state, not part of the description */
        struct sim_ras ras;
        unsigned reset_seq; /* KFD's reset_seq_num of its nodes (GPU_PRE_RESET) */
        struct sim_telemetry tel;
        char perf_level[24];
        /* rule-perf.c: the committed gfx soft limits and UCLK max (curr), those being edited
         * in pp_od_clk_voltage before 'c' (custom), the PM policies' current levels, and the
         * clock files reading "unavailable" (after a fatal RAS interrupt) */
        struct {
                unsigned sclk_min, sclk_max, mclk_max;
                unsigned custom_sclk_min, custom_sclk_max, custom_mclk_max;
                unsigned soc_pstate, xgmi_plpd;
                bool unavailable;
        } perf;
        unsigned enforce_isolation[SIM_MAX_XCP];
        int switch_error; /* injected errno of the next partition switch(es) */
        bool switch_error_always;
        bool kfd_lost; /* KFD re-init failed (EIO): no KFD nodes */
        bool attached; /* amdgpu bound: driver files present */
        int card[SIM_MAX_XCP], render[SIM_MAX_XCP], xcp[SIM_MAX_XCP]; /* -1 none */
        int hwmon;
        unsigned throttling_interval_s;   /* thermal_throttling_logging, 0: disabled */
        enum sim_compute xcp_config_view; /* compute_partition_config/xcp_config */
        bool mem_alloc_all;               /* compute_partition_mem_alloc_mode: ALL (else CAPPING) */
        /* out-of-band controls (control.c) */
        unsigned switch_ms; /* how long a compute partition switch takes */
        bool switching;     /* a switch runs: the partition mutex is held */
        unsigned pinned;    /* 1 << enum sim_sensor: held at the value in @pin */
        struct sim_sensors pin;
        unsigned limit_pct[_SIM_LIMITER_MAX]; /* share of each step a limiter holds, 0: none */
        /* links (controls, control.c): the XGMI error status xgmi_error shows (and a read
         * clears), gpu_metrics XGMI links down (1 << link index), PCIe replays (NAKs received
         * and replayed) and recoveries (L0 to recovery) since load */
        unsigned xgmi_error;
        uint8_t xgmi_down;
        uint64_t pcie_replays, pcie_recoveries;
        /* XGMI hive membership (gpu.c): the order of joining, and whether the hive's kobject
         * (xgmi_hive_info/) is in this device's directory */
        uint64_t xgmi_join;
        bool hive_kobj;
        /* GPU reset (rule-reset.c, out-of-band controls): resets this GPU went through (its
         * own or its hive's); the next reset's failure (reset_res = -errno, or the read fails
         * with it; wedged: the GPU stays in reset) and hang (ms, -1: until reset-release) */
        struct {
                unsigned count;
                int fail;
                bool fail_read, fail_wedged, fail_always;
                int hang_ms;
                bool running, released;
                uint64_t kfd_back_token;
        } reset;
        /* nodes the driver created (removed at unbind) */
        struct sim_node **owned;
        size_t n_owned, cap_owned;
};

struct sim_kfd_entry {
        struct sim_gpu *gpu;
        unsigned part;
        uint16_t gpu_id;
};

/* The host around the GPUs (host.c): what `amdsmi doctor` reads besides the GPUs. The files
 * outside /sys (/proc/cmdline, /proc/modules, /proc/interrupts, /etc/group) are given to
 * `amdsmi-sim run`'s command by bind mounts in its private mount namespace. */
struct sim_host {
        char *cmdline;            /* /proc/cmdline without its newline */
        bool iommu;               /* IOMMU units (class/iommu/ivhdN) and IOMMU groups */
        bool interrupt_remapping; /* /proc/interrupts: IR-PCI-MSI chips, else PCI-MSI */
        bool vfio_pci;            /* vfio-pci loaded (bus/pci/drivers/vfio-pci, module) */
        char *render_members;     /* /etc/group's render members, comma-separated ("" none) */
        char *video_members;      /* the same for video */
        char *kfd_mode;           /* /dev/kfd's mode in octal ("0660") */
        char *kfd_group;          /* /dev/kfd's group: "render", "video" or "root" */
};

struct sim_machine {
        char *name, *description;
        struct sim_kernel kernel;
        struct sim_cpu cpu;
        bool bmc_vga;
        bool gim_host; /* host-pf GPUs: gim is loaded, amdgpu is not (blacklisted) */
        bool vm;       /* guest GPUs: a VM (no CPU functions, no thermal zone, no IOMMU) */
        struct sim_host host;

        struct sim_product **products;
        size_t n_products;
        struct sim_func **funcs; /* sorted by BDF */
        size_t n_funcs;
        struct sim_gpu **gpus; /* BDF order */
        size_t n_gpus;

        /* KFD topology: GPU partition nodes in list order (after the CPU nodes) */
        uint64_t kfd_generation;
        struct sim_kfd_entry kfd[SIM_MAX_GPUS * SIM_MAX_XCP];
        size_t n_kfd;

        /* allocators (lowest free, as the kernel's IDAs) */
        uint64_t card_used[4], render_used[1], xcp_used[1], hwmon_used[4];
        uint64_t xgmi_joins; /* GPUs that joined an XGMI hive so far (gpu.c) */

        /* dynamic IDs added through new_id, per driver */
        struct {
                uint16_t vendor, device;
        } dynids[_SIM_DRV_MAX][16];
        unsigned n_dynids[_SIM_DRV_MAX];

        /* telemetry */
        uint64_t seed;
        bool frozen;
        struct timespec start;

        struct sim_fs *fs;
        struct sim_control *control; /* control.c: KFD processes, the state at load */
        struct sim_smi *smi;         /* smi.c: SMI event clients */
};

extern const char *const sim_compute_names[_SIM_COMPUTE_MAX];
extern const char *const sim_role_names[_SIM_ROLE_MAX];
extern const char *const sim_driver_names[_SIM_DRV_MAX];

/* Partition rules (§2.2, §2.3). */
unsigned sim_compute_parts(enum sim_compute mode, unsigned xcc);
unsigned sim_compute_supported(unsigned xcc); /* mask of 1 << mode */
unsigned sim_compute_available(const struct sim_gpu *g, unsigned nps);
enum sim_compute sim_compute_auto(const struct sim_gpu *g, unsigned nps);
unsigned sim_nps_mem_parts(const struct sim_gpu *g, unsigned nps);
unsigned sim_gpu_parts(const struct sim_gpu *g);
/* The mode of @parts partitions (gim: one VF per partition), SIM_COMPUTE_UNKNOWN if none. */
enum sim_compute sim_compute_of_parts(unsigned parts, unsigned xcc);
/* True for GPUs in one XGMI hive (a GPU without one is its own). */
bool sim_same_hive(const struct sim_gpu *a, const struct sim_gpu *b);
/* The other GPUs of @g's XGMI hive (none without one), in BDF order, into @out (SIM_MAX_GPUS
 * of them); how many. gpu_metrics link l of @g leads to peer l / links-per-peer. */
size_t sim_hive_peers(const struct sim_gpu *g, struct sim_gpu **out);
unsigned sim_xgmi_links_per_peer(const struct sim_gpu *g);
/* The power limit the device enforces and reports: min(cap, platform limit). */
uint32_t sim_gpu_effective_cap_w(const struct sim_gpu *g);

/* Loading and describing. Errors are printed to stderr, naming the field at fault. */
int sim_machine_load(const char *name_or_file, struct sim_machine **ret);
int sim_machine_load_json(const char *text, const char *origin, struct sim_machine **ret);
struct sim_machine *sim_machine_free(struct sim_machine *m);
/* The full description, which loads back into the same machine. */
int sim_machine_dump(const struct sim_machine *m, char **ret_json);

struct sim_func *sim_machine_func(struct sim_machine *m, const char *bdf);
struct sim_gpu *sim_machine_gpu(struct sim_machine *m, const char *bdf);
/* SR-IOV VFs come and go: into the BDF-sorted list of functions, and out again (not freed). */
int sim_machine_add_func(struct sim_machine *m, struct sim_func *f);
void sim_machine_del_func(struct sim_machine *m, struct sim_func *f);
void sim_func_free(struct sim_func *f);
/* The VF share of a GPU's memory when the host made @vf_num VFs of it. */
uint64_t sim_vf_vram_bytes(const struct sim_product *p, unsigned vf_num);

/* Presets (presets.c). */
struct sim_preset {
        const char *name, *json;
};
extern const struct sim_preset sim_presets[];
extern const size_t sim_n_presets;
const struct sim_preset *sim_preset_find(const char *name);
/* The built-in products (copied into a machine that uses them). */
extern const struct sim_product sim_builtin_products[];
extern const size_t sim_n_builtin_products;

/*
 * Out-of-band controls (control.c): what the control socket (ctl.c) and the command-line test
 * options change. Each takes the fs lock itself and returns once the kernel was told of the
 * changes to the tree (so never from a FUSE worker). -ENODEV: no such GPU (or function).
 */
int sim_set_platform_limit(struct sim_machine *m, const char *bdf, int64_t watts);
/* Users without a process (the description's and --kfd-users' count). */
int sim_set_kfd_users(struct sim_machine *m, const char *bdf, unsigned users);
int sim_set_in_reset(struct sim_machine *m, const char *bdf, bool in_reset);
/* rule-perf.c through control.c: the SMU's performance state back to its defaults (level auto,
 * default clock limits and policies: what a GPU reset or SMU re-init does); the clock files
 * reading "unavailable" (a fatal RAS interrupt) or not. */
int sim_perf_ctl_defaults(struct sim_machine *m, const char *bdf);
int sim_perf_ctl_unavailable(struct sim_machine *m, const char *bdf, bool on);
int sim_inject_switch_error(struct sim_machine *m, const char *bdf, int err, bool always);
int sim_set_switch_time(struct sim_machine *m, const char *bdf, unsigned ms);
/* GPU reset (rule-reset.c): the next reset of the GPU fails (@err a positive errno: reset_res
 * -@err, or with @read the read of amdgpu_gpu_recover fails with it; @wedged: the GPU stays in
 * reset; @always: every reset; 0 clears); hangs @ms (-1: until sim_reset_release()); the
 * effects of a reset on the machine (kernel.reset_*). */
int sim_reset_set_fail(struct sim_machine *m, const char *bdf, int err, bool read, bool wedged,
                       bool always);
int sim_reset_set_hang(struct sim_machine *m, const char *bdf, int ms);
int sim_reset_release(struct sim_machine *m, const char *bdf);
int sim_reset_config(struct sim_machine *m, const char *key, uint64_t value);

/*
 * Links (health-and-control.md §3). The XGMI error status xgmi_error shows (0 none, 1 one, 2
 * several; -ERANGE above; -EOPNOTSUPP not in a hive). gpu_metrics link @link (0..7) of @g
 * down or up, and with it the other end's link at the peer (link l leads to the l / links-per-
 * peer-th other GPU of the hive in BDF order; -ERANGE: no such link). The PCIe link retrained
 * to @width lanes at @speed ("16.0" or "16.0 GT/s PCIe"; -EINVAL not a speed or width, -ERANGE
 * above the device's maximum), both ends of it. PCIe replays and recoveries added.
 */
int sim_set_xgmi_error(struct sim_machine *m, const char *bdf, unsigned status);
int sim_set_xgmi_link(struct sim_machine *m, const char *bdf, unsigned link, bool up);
int sim_set_pcie_link(struct sim_machine *m, const char *bdf, unsigned width, const char *speed);
int sim_pcie_replay(struct sim_machine *m, const char *bdf, uint64_t replays, uint64_t recoveries);

/* Sensors that can be set (held at the value until set to auto), in the control's names. */
enum sim_sensor {
        SIM_SENSOR_POWER_W,
        SIM_SENSOR_TEMP_JUNCTION_C,
        SIM_SENSOR_TEMP_MEM_C,
        SIM_SENSOR_GFX_BUSY_PCT,
        SIM_SENSOR_MEM_BUSY_PCT,
        SIM_SENSOR_SCLK_MHZ,
        SIM_SENSOR_MCLK_MHZ,
        SIM_SENSOR_VRAM_USED_BYTES,
        _SIM_SENSOR_MAX,
};
extern const char *const sim_sensor_names[_SIM_SENSOR_MAX];
/* -ERANGE: out of the sensor's range (sim_sensor_max()); @automatic lets it live again. */
int sim_set_sensor(struct sim_machine *m, const char *bdf, enum sim_sensor s, uint64_t value,
                   bool automatic);
uint64_t sim_sensor_max(const struct sim_gpu *g, enum sim_sensor s);
/* From now on the limiter's residency counter (and for ppt and the thermal ones the per-XCC
 * below-host-limit accumulators) advance by @pct % of the accumulation ticks; 0 gives them back
 * to the rules of telemetry.c. -ERANGE: @pct over 100. */
int sim_set_limit(struct sim_machine *m, const char *bdf, enum sim_limiter l, unsigned pct);
/* Sets the accumulation counter's value (it goes on from there). */
int sim_set_accumulation_counter(struct sim_machine *m, const char *bdf, uint64_t value);
/* telemetry.c: writes the held sensors over what a step computed. */
void sim_sensors_apply_pins(struct sim_gpu *g);

/*
 * KFD users by process (spec §6, class/kfd/kfd/proc/<pid>/): @pid names the process in the
 * requester's PID namespace (the name of its proc entry), @pidfd (taken over; -1 to open one
 * here) tells when it exits. A process has a process device (the kernel's pdd, with
 * vram_<gpu_id>, sdma_<gpu_id>, stats_<gpu_id>/ and counters_<gpu_id>/) on each KFD node its
 * device cgroup lets it open: kfd_init_apertures() makes one for every such node when the
 * process opens /dev/kfd. An add names the GPU (@part -1: every node of it, what it does on
 * the first) or one partition of it (@part); with @all_nodes the process gets a pdd on every
 * node of every GPU (a ROCr process without a device cgroup), each a KFD user then.
 * Adds of one PID on other GPUs or partitions accumulate into one entry.
 * -ESRCH: no such process; -EEXIST: already a user of that node; -ENXIO: no such partition;
 * -ERANGE: more VRAM than the GPU has; -ENOSPC: more VRAM than the GPU has left; -ENOENT (remove):
 * not a user of it; -ENODEV also when the GPU has no KFD nodes.
 */
struct sim_kfd_usage {
        uint64_t vram, sdma, evicted_ms, faults, page_in, page_out;
        unsigned queues, cu_occupancy;
};
int sim_kfd_user_add(struct sim_machine *m, const char *bdf, int part, pid_t pid, int pidfd,
                     const struct sim_kfd_usage *u, bool all_nodes);
/* An entry for @gpu_id, which need not be any node's (bad input for tests): the files of a pdd
 * with @u's values, and @u->queues queues naming it. It makes the process a user of no GPU. */
int sim_kfd_user_add_raw(struct sim_machine *m, uint32_t gpu_id, pid_t pid, int pidfd,
                         const struct sim_kfd_usage *u);
int sim_kfd_user_remove(struct sim_machine *m, const char *bdf, int part, pid_t pid);
/* The lock held: the VRAM the processes hold on @g (@part -1: on all of its nodes). */
uint64_t sim_kfd_vram_used(const struct sim_gpu *g, int part);
/* Drops the users whose process exited; true if some users remain. */
bool sim_kfd_users_prune(struct sim_machine *m);
/* The lock held (partition switch, EBUSY): every KFD user of @g, those of exited processes
 * dropped first. */
unsigned sim_kfd_users_of(struct sim_gpu *g);
/* The lock held (topology.c): the GPU's KFD nodes go, and with them its users. */
void sim_kfd_users_forget_gpu(struct sim_gpu *g);
/* A GPU reset: the processes' queues on the GPU go (rule-reset.c). */
void sim_kfd_users_drop_queues(struct sim_gpu *g);

/* Hot-unplug (the function and all of it leave the tree; -EBUSY: a PF with VFs enabled,
 * -EOPNOTSUPP: a VF) and re-plug (back as at load; -EEXIST: plugged in). */
int sim_gpu_unplug(struct sim_machine *m, const char *bdf);
int sim_gpu_replug(struct sim_machine *m, const char *bdf);

/* The whole state as JSON (machine, GPUs, KFD processes, faults); users of exited processes
 * are dropped first. */
int sim_state_dump(struct sim_machine *m, char **ret_json);
/* KFD users, one line each: "BDF PID PASID COMM", "BDF - - (N without a process)". */
int sim_kfd_users_list(struct sim_machine *m, char **ret_text);

/* The state at load (for replug); NULL-safe free. */
int sim_control_init(struct sim_machine *m);
void sim_control_free(struct sim_machine *m);

/*
 * RAS (ras.c), with the lock held by the callers of control.c's functions below.
 * sim_ras_attach(): what amdgpu's probe creates (ras/, gpu_vram_bad_pages, the debugfs
 * directory of its primary DRM minor); counts since driver load start at the description's the
 * first time, at zero at every later load; retired pages are kept (EEPROM).
 */
void sim_ras_attach(struct sim_gpu *g);
void sim_ras_free(struct sim_gpu *g);
/* The blocks with RAS of @g (1 << enum sim_ras_block), and whether they are ACA files. */
uint32_t sim_ras_blocks(const struct sim_gpu *g);
bool sim_ras_aca(const struct sim_gpu *g);
/* Out-of-band (control socket): -ENODEV no GPU or no driver, -EOPNOTSUPP the GPU has no such
 * block (or no bad-page table, no CPER ring), -ERANGE a page frame beyond VRAM. */
int sim_ras_inject(struct sim_machine *m, const char *bdf, enum sim_ras_block b, enum sim_ras_err e,
                   uint64_t n);
int sim_ras_retire_page(struct sim_machine *m, const char *bdf, uint32_t pfn, char status);
int sim_ras_cper(struct sim_machine *m, const char *bdf, enum sim_cper_kind kind);
/* Builds one CPER record as amdgpu does (bytes into @buf of @size; returns the length). */
int sim_cper_record(const struct sim_gpu *g, enum sim_cper_kind kind, uint32_t id, time_t now,
                    uint8_t *buf, size_t size);

/*
 * KFD SMI events (smi.c). A client is one SMI_EVENTS file: the simulator's end of a socket
 * pair, the client's end (kept: its unread bytes are the kernel's kfifo), the owner's PID.
 * sim_smi_open() makes one for the KFD node @gpu_id (-EINVAL: no such node, as the kernel)
 * and returns the descriptor to hand over. sim_smi_event() queues one event line for the
 * clients of the GPU's nodes (@part -1: all of them) whose mask takes it, dropping it for a
 * client whose 1024-byte fifo has no room; @pid 0: an event of no process (every client).
 */
int sim_smi_open(struct sim_machine *m, uint32_t gpu_id, pid_t pid, bool suser, int *ret_fd);
void sim_smi_event(struct sim_gpu *g, int part, unsigned event, pid_t pid, const char *fmt, ...)
        _printf_(5, 6);
/* GPU_PRE_RESET (the reset's seqno counted; cause "user trigger", a reset of the control
 * socket) or GPU_POST_RESET (no cause: kgd2kfd_post_reset() has no reset context) on every
 * node of @g. */
void sim_smi_gpu_reset(struct sim_gpu *g, bool post);
/* Clients of live processes (they hold /dev/kfd: KFD users of every GPU). */
unsigned sim_smi_clients(struct sim_machine *m);
void sim_smi_forget_gpu(struct sim_gpu *g);
void sim_smi_free(struct sim_machine *m);
/* The event ids (kfd_ioctl.h) and names of `kfd-event`. */
#define SIM_SMI_EVENT_MAX 13
extern const char *const sim_smi_event_names[SIM_SMI_EVENT_MAX + 1];
/* Raises @event (1..13) as the driver would: @payload as given, or the event's own line. */
int sim_kfd_event(struct sim_machine *m, const char *bdf, int part, unsigned event, pid_t pid,
                  const char *payload);

/* Errno names ("EIO") both ways. */
int sim_errno_parse(const char *s, int *ret);
const char *sim_errno_name(int err);
