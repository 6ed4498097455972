/* SPDX-License-Identifier: MIT */
/*
 * amdsmi-sim: machine descriptions in JSON (json-c), read and written with one table of
 * fields per object, so that what `dump-machine` writes is exactly what the loader reads.
 *
 * A description:
 *   { "name", "description",
 *     "kernel": { "gpu_metrics_revision" (3..9),
 *                 "gpu_metrics_layout": "6.19"|"7.0"|"7.1" (revision 9's; default 7.1),
 *                 "nps_compat": "newer"|"older", "dkms",
 *                 "partition_config", "amdgpu_sriov_configure" (synthetic),
 *                 "vfio_pci_enable_sriov", "vfio_pci_ids": "1002:74b5,..." or null,
 *                 "vf_power_limit" (a one-VF guest's power1_cap is writable),
 *                 "ras_enable" (false: amdgpu.ras_enable=0, no RAS context),
 *                 "ras_aca" (aca_<block> files and the CPER ring; else <block>_err_count),
 *                 "ras_blocks": ["umc", ...] or null (the product's), "cper_ring_bytes"
 *                 (a power of two), "bad_page_threshold" (0: no bad-page table),
 *                 "reset_ms" (how long a GPU reset takes, 0..600000), "reset_keeps_cap",
 *                 "reset_keeps_perf" (else a reset takes them to their defaults),
 *                 "reset_kfd_down_ms" (KFD nodes gone that long after a reset; 0: kept) },
 *     "cpu": { "sockets", "cores_per_socket", "threads_per_core", "memory_bytes_per_socket",
 *              "max_clock_mhz" },
 *     "bmc_vga": bool,
 *     "host": { "cmdline", "iommu", "interrupt_remapping", "vfio_pci", "render_members",
 *               "video_members", "kfd_mode", "kfd_group" } (host.c: what amdsmi doctor reads),
 *     "products": { NAME: { fields of struct sim_product, over the built-in NAME or "base" } },
 *     "gpu_defaults": { any GPU field but "bdf" },
 *     "gpus": [ { "bdf", "product", ...,
 *                 "ras": { "counts": { BLOCK: { "ue", "ce", "de" } },
 *                          "bad_pages": [ { "pfn": "0x...", "status": "R"|"P"|"F" } ],
 *                          "cper": [ "fatal"|"corrected"|"uncorrected"|"bad-page-threshold" ] },
 *                 "firmware": { "sos": "0x...", ... } (over the product's),
 *                 "iommu_group_with": "BDF" (shares that function's IOMMU group) or null
 *               } ] }
 * SR-IOV: "role" makes a bare-metal host ("baremetal"), a gim host ("host-pf": all of its GPUs,
 * "driver" gim or none, "vf_num" VFs made at load, 1 by default) or a VM ("vf-guest-1vf",
 * "vf-guest-multi": all of its GPUs, "vf_num" the host's VF count, 8 by default for multi-VF).
 * Every key is checked: an unknown key, a wrong type or a value out of range is an error that
 * names the field ("gpus[3].power_cap_w: ...").
 */
#include <inttypes.h>
#include <limits.h>
#include <sys/stat.h>

#include <json-c/json.h>

#include "machine-private.h"

enum ftype {
        F_UINT, /* unsigned in [min, max] */
        F_INT,  /* int in [min, max] */
        F_U8,
        F_U16, /* uint16_t; integer or "0x..." string */
        F_U32,
        F_U64,   /* uint64_t, a JSON integer */
        F_HEX64, /* uint64_t as a "0x..." string */
        F_BOOL,
        F_STR,        /* char *, owned */
        F_STR_NULL,   /* char *, NULL as null */
        F_NPS,        /* unsigned NPS count from "NPS1".."NPS8" */
        F_NPS_NULL,   /* ... or null (0) */
        F_NPS_SET,    /* unsigned mask from ["NPS1", ...] */
        F_COMPUTE,    /* enum sim_compute from "SPX".. */
        F_LEVELS,     /* struct sim_levels from [MHz, ...] */
        F_LIMITS,     /* struct sim_limits_w from { "min", "max", "default" } */
        F_GC,         /* unsigned[3] from "9.4.3" */
        F_FW,         /* uint32_t[_SIM_FW_MAX] from { "mec": "0x9b", ... } */
        F_WATTS_NULL, /* int64_t watts, -1 as null */
        F_ROLE,
        F_DRIVER,
        F_NPS_COMPAT, /* bool: "newer" (true) or "older" */
        F_LINK_SPEED, /* const char * from the table of link speeds */
        F_LAYOUT,     /* unsigned enum sim_metrics_layout from "6.19", "7.0", "7.1" */
        F_RAS_BLOCKS, /* uint32_t mask of enum sim_ras_block from ["umc", ...], null: 0 */
        F_RAS,        /* struct sim_ras_preset from { "counts", "bad_pages", "cper" } */
        F_OBJ,        /* nested object of fields of the same struct */
};

struct field {
        const char *key;
        enum ftype type;
        size_t off;
        int64_t min, max;
        const struct field *sub;
        bool hex; /* integers written as "0x..." */
};

#define FLD(k, t, s, m) \
        { .key = k, .type = t, .off = offsetof(s, m) }
#define RNG(k, t, s, m, lo, hi) \
        { .key = k, .type = t, .off = offsetof(s, m), .min = lo, .max = hi }
#define HEX(k, t, s, m) \
        { .key = k, .type = t, .off = offsetof(s, m), .hex = true }
#define OBJ(k, f) \
        { .key = k, .type = F_OBJ, .sub = f }
#define END \
        { .key = NULL }

static const char *const link_speeds[] = {
        "2.5 GT/s PCIe",  "5.0 GT/s PCIe",  "8.0 GT/s PCIe",
        "16.0 GT/s PCIe", "32.0 GT/s PCIe", "64.0 GT/s PCIe",
};

static const struct field fields_cap[] = {
        RNG("min", F_UINT, struct sim_limits_w, min, 0, 4294),
        RNG("max", F_UINT, struct sim_limits_w, max, 0, 4294),
        RNG("default", F_UINT, struct sim_limits_w, def, 0, 4294),
        END,
};

static const struct field fields_product_temps[] = {
        RNG("junction_crit", F_INT, struct sim_product, junction_crit_c, 1, 200),
        RNG("junction_crit_hyst", F_INT, struct sim_product, junction_crit_hyst_c, 0, 200),
        RNG("junction_emergency", F_INT, struct sim_product, junction_emergency_c, 1, 200),
        RNG("mem_crit", F_INT, struct sim_product, mem_crit_c, 1, 200),
        RNG("mem_crit_hyst", F_INT, struct sim_product, mem_crit_hyst_c, 0, 200),
        RNG("mem_emergency", F_INT, struct sim_product, mem_emergency_c, 1, 200),
        END,
};

static const struct field fields_product_fru[] = {
        FLD("present", F_BOOL, struct sim_product, fru),
        FLD("product_name", F_STR_NULL, struct sim_product, fru_product_name),
        FLD("product_number", F_STR_NULL, struct sim_product, fru_product_number),
        FLD("manufacturer", F_STR_NULL, struct sim_product, fru_manufacturer),
        FLD("fru_id", F_STR_NULL, struct sim_product, fru_id),
        FLD("serial_prefix", F_STR_NULL, struct sim_product, serial_prefix),
        END,
};

static const struct field fields_product_clocks[] = {
        FLD("sclk", F_LEVELS, struct sim_product, sclk),
        FLD("mclk", F_LEVELS, struct sim_product, mclk),
        FLD("socclk", F_LEVELS, struct sim_product, socclk),
        FLD("fclk", F_LEVELS, struct sim_product, fclk),
        FLD("vclk", F_LEVELS, struct sim_product, vclk),
        FLD("dclk", F_LEVELS, struct sim_product, dclk),
        END,
};

/* the performance controls (rule-perf.c): the PM policies offered, OD_MCLK */
static const struct field fields_product_pm[] = {
        FLD("od_mclk", F_BOOL, struct sim_product, od_mclk),
        FLD("soc_pstate", F_BOOL, struct sim_product, soc_pstate),
        FLD("xgmi_plpd", F_BOOL, struct sim_product, xgmi_plpd),
        END,
};

static const struct field fields_product_kfd[] = {
        HEX("capability", F_U32, struct sim_product, kfd_capability),
        HEX("capability2", F_U32, struct sim_product, kfd_capability2),
        RNG("max_engine_clk_mhz", F_UINT, struct sim_product, max_engine_clk_mhz, 1, 10000),
        END,
};

static const struct field fields_product[] = {
        HEX("device_id", F_U16, struct sim_product, device_id),
        HEX("vf_device_id", F_U16, struct sim_product, vf_device_id),
        HEX("subsystem_vendor", F_U16, struct sim_product, subsystem_vendor),
        HEX("subsystem_device", F_U16, struct sim_product, subsystem_device),
        HEX("revision", F_U8, struct sim_product, revision),
        { .key = "class",
          .type = F_U32,
          .off = offsetof(struct sim_product, pci_class),
          .min = 0,
          .max = 0xffffff,
          .hex = true },
        RNG("xcc", F_UINT, struct sim_product, xcc, 1, 8),
        RNG("cu_per_xcc", F_UINT, struct sim_product, cu_per_xcc, 1, 64),
        FLD("apu", F_BOOL, struct sim_product, apu),
        RNG("xgmi_links_per_peer", F_UINT, struct sim_product, xgmi_links_per_peer, 0, 8),
        FLD("xgmi_error_counter", F_BOOL, struct sim_product, xgmi_error_counter),
        FLD("gc_version", F_GC, struct sim_product, gc),
        RNG("gfx_target_version", F_UINT, struct sim_product, gfx_target_version, 1, 999999),
        RNG("vram_bytes", F_U64, struct sim_product, vram_bytes, 1, INT64_MAX),
        RNG("gtt_bytes", F_U64, struct sim_product, gtt_bytes, 1, INT64_MAX),
        RNG("kfd_memory_bytes", F_U64, struct sim_product, kfd_memory_bytes, 4096, INT64_MAX),
        FLD("nps_supported", F_NPS_SET, struct sim_product, nps_supported),
        FLD("power_cap_w", F_LIMITS, struct sim_product, power_cap_w),
        FLD("ppt1", F_BOOL, struct sim_product, ppt1),
        FLD("ppt1_w", F_LIMITS, struct sim_product, ppt1_w),
        RNG("sdma_engines", F_UINT, struct sim_product, sdma_engines, 1, 64),
        RNG("vcn", F_UINT, struct sim_product, vcn, 1, 4),
        RNG("jpeg_per_vcn", F_UINT, struct sim_product, jpeg_per_vcn, 1, 10),
        OBJ("clocks_mhz", fields_product_clocks),
        OBJ("pm", fields_product_pm),
        OBJ("temp_limits_c", fields_product_temps),
        FLD("vbios_version", F_STR, struct sim_product, vbios_version),
        FLD("vbios_build", F_STR_NULL, struct sim_product, vbios_build),
        OBJ("fru", fields_product_fru),
        FLD("firmware", F_FW, struct sim_product, fw),
        RNG("idle_power_w", F_UINT, struct sim_product, idle_power_w, 1, 4294),
        RNG("mem_max_bandwidth_gbs", F_UINT, struct sim_product, mem_max_bandwidth_gbs, 1, 65535),
        RNG("hbm_width", F_UINT, struct sim_product, hbm_width, 1, 65535),
        OBJ("kfd", fields_product_kfd),
        RNG("total_vfs", F_U16, struct sim_product, total_vfs, 0, 64),
        END,
};

static const struct field fields_kernel[] = {
        RNG("gpu_metrics_revision", F_UINT, struct sim_kernel, gpu_metrics_revision, 3, 9),
        FLD("gpu_metrics_layout", F_LAYOUT, struct sim_kernel, gpu_metrics_layout),
        FLD("nps_compat", F_NPS_COMPAT, struct sim_kernel, nps_compat_newer),
        FLD("dkms", F_BOOL, struct sim_kernel, dkms),
        FLD("partition_config", F_BOOL, struct sim_kernel, partition_config),
        FLD("amdgpu_sriov_configure", F_BOOL, struct sim_kernel, amdgpu_sriov_configure),
        FLD("vfio_pci_enable_sriov", F_BOOL, struct sim_kernel, vfio_pci_enable_sriov),
        FLD("vfio_pci_ids", F_STR_NULL, struct sim_kernel, vfio_pci_ids),
        FLD("vf_power_limit", F_BOOL, struct sim_kernel, vf_power_limit),
        FLD("ras_aca", F_BOOL, struct sim_kernel, ras_aca),
        FLD("ras_enable", F_BOOL, struct sim_kernel, ras_enable),
        FLD("ras_blocks", F_RAS_BLOCKS, struct sim_kernel, ras_blocks),
        RNG("cper_ring_bytes", F_U32, struct sim_kernel, cper_ring_bytes, 4096, 64 << 20),
        FLD("bad_page_threshold", F_U32, struct sim_kernel, bad_page_threshold),
        RNG("reset_ms", F_U32, struct sim_kernel, reset_ms, 0, 600000),
        FLD("reset_keeps_cap", F_BOOL, struct sim_kernel, reset_keeps_cap),
        FLD("reset_keeps_perf", F_BOOL, struct sim_kernel, reset_keeps_perf),
        RNG("reset_kfd_down_ms", F_U32, struct sim_kernel, reset_kfd_down_ms, 0, 600000),
        END,
};

static const struct field fields_host[] = {
        FLD("cmdline", F_STR, struct sim_host, cmdline),
        FLD("iommu", F_BOOL, struct sim_host, iommu),
        FLD("interrupt_remapping", F_BOOL, struct sim_host, interrupt_remapping),
        FLD("vfio_pci", F_BOOL, struct sim_host, vfio_pci),
        FLD("render_members", F_STR, struct sim_host, render_members),
        FLD("video_members", F_STR, struct sim_host, video_members),
        FLD("kfd_mode", F_STR, struct sim_host, kfd_mode),
        FLD("kfd_group", F_STR, struct sim_host, kfd_group),
        END,
};

static const struct field fields_cpu[] = {
        RNG("sockets", F_UINT, struct sim_cpu, sockets, 1, 8),
        RNG("cores_per_socket", F_UINT, struct sim_cpu, cores_per_socket, 1, 256),
        RNG("threads_per_core", F_UINT, struct sim_cpu, threads_per_core, 1, 2),
        RNG("memory_bytes_per_socket", F_U64, struct sim_cpu, memory_bytes_per_socket, 1 << 20,
            INT64_MAX),
        RNG("max_clock_mhz", F_UINT, struct sim_cpu, max_clock_mhz, 1, 10000),
        END,
};

static const struct field fields_gpu_link[] = {
        FLD("current_speed", F_LINK_SPEED, struct sim_gpu_desc, link_speed),
        RNG("current_width", F_UINT, struct sim_gpu_desc, link_width, 1, 32),
        FLD("max_speed", F_LINK_SPEED, struct sim_gpu_desc, link_speed_max),
        RNG("max_width", F_UINT, struct sim_gpu_desc, link_width_max, 1, 32),
        END,
};

static const struct field fields_gpu_sensors[] = {
        RNG("power_w", F_UINT, struct sim_gpu_desc, sensors.power_w, 0, 4294),
        RNG("junction_c", F_UINT, struct sim_gpu_desc, sensors.junction_c, 0, 150),
        RNG("mem_c", F_UINT, struct sim_gpu_desc, sensors.mem_c, 0, 150),
        RNG("sclk_mhz", F_UINT, struct sim_gpu_desc, sensors.sclk_mhz, 1, 10000),
        RNG("mclk_mhz", F_UINT, struct sim_gpu_desc, sensors.mclk_mhz, 1, 10000),
        RNG("gpu_busy_percent", F_UINT, struct sim_gpu_desc, sensors.gpu_busy_percent, 0, 100),
        RNG("mem_busy_percent", F_UINT, struct sim_gpu_desc, sensors.mem_busy_percent, 0, 100),
        RNG("vram_used_bytes", F_U64, struct sim_gpu_desc, sensors.vram_used_bytes, 0, INT64_MAX),
        END,
};

/* "bdf" and "product" are read by the loader itself, before these. */
static const struct field fields_gpu[] = {
        RNG("numa_node", F_INT, struct sim_gpu_desc, numa_node, -1, 7),
        FLD("driver", F_DRIVER, struct sim_gpu_desc, driver),
        FLD("role", F_ROLE, struct sim_gpu_desc, role),
        HEX("hive_id", F_HEX64, struct sim_gpu_desc, hive_id),
        HEX("unique_id", F_HEX64, struct sim_gpu_desc, unique_id),
        FLD("serial_number", F_STR, struct sim_gpu_desc, serial),
        FLD("nps_supported", F_NPS_SET, struct sim_gpu_desc, nps_supported),
        FLD("memory_partition", F_NPS, struct sim_gpu_desc, nps_current),
        FLD("memory_partition_requested", F_NPS_NULL, struct sim_gpu_desc, nps_requested),
        FLD("compute_partition", F_COMPUTE, struct sim_gpu_desc, compute),
        RNG("kfd_users", F_UINT, struct sim_gpu_desc, kfd_users, 0, 1 << 20),
        FLD("in_reset", F_BOOL, struct sim_gpu_desc, in_reset),
        FLD("power_cap_limits_w", F_LIMITS, struct sim_gpu_desc, cap_limits_w),
        RNG("power_cap_w", F_UINT, struct sim_gpu_desc, cap_w, 0, 4294),
        FLD("ppt1_limits_w", F_LIMITS, struct sim_gpu_desc, ppt1_limits_w),
        RNG("ppt1_cap_w", F_UINT, struct sim_gpu_desc, ppt1_cap_w, 0, 4294),
        FLD("platform_limit_w", F_WATTS_NULL, struct sim_gpu_desc, platform_limit_w),
        RNG("gpu_metrics_revision", F_UINT, struct sim_gpu_desc, metrics_rev, 3, 9),
        FLD("gpu_metrics_layout", F_LAYOUT, struct sim_gpu_desc, metrics_layout),
        RNG("vf_num", F_UINT, struct sim_gpu_desc, vf_num, 0, 64),
        OBJ("link", fields_gpu_link),
        OBJ("sensors", fields_gpu_sensors),
        FLD("ras", F_RAS, struct sim_gpu_desc, ras),
        FLD("firmware", F_FW, struct sim_gpu_desc, fw),
        FLD("iommu_group_with", F_STR_NULL, struct sim_gpu_desc, iommu_group_with),
        END,
};

/* ---------------------------------------------------------------------------------------- */
/* Parsing */

/* Paths of fields in messages: "gpus[3].sensors.power_w". */
#define PATH_SIZE 320

_printf_(3, 4) static void pathf(char *dst, const char *path, const char *fmt, ...) {
        size_t n = strnlen(path, PATH_SIZE - 1);
        va_list ap;

        memcpy(dst, path, n);
        va_start(ap, fmt);
        vsnprintf(dst + n, PATH_SIZE - n, fmt, ap);
        va_end(ap);
}

struct jctx {
        const char *origin;
        struct sim_machine *m;
};

_printf_(3, 4) static int fail(struct jctx *c, const char *path, const char *fmt, ...) {
        va_list ap;

        fprintf(stderr, "amdsmi-sim: %s: %s%s", c->origin, path, *path ? ": " : "");
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
        fputc('\n', stderr);
        return -EINVAL;
}

static const char *type_name(json_object *j) {
        return json_type_to_name(json_object_get_type(j));
}

static int get_int(struct jctx *c, const char *path, json_object *j, bool allow_hex, int64_t lo,
                   int64_t hi, int64_t *ret) {
        int64_t v;

        if (allow_hex && json_object_is_type(j, json_type_string)) {
                const char *s = json_object_get_string(j);
                char *end;
                unsigned long long u;

                if (strncmp(s, "0x", 2) != 0 || !s[2])
                        return fail(c, path, "\"%s\" is not a hexadecimal number (\"0x...\")", s);
                errno = 0;
                u = strtoull(s + 2, &end, 16);
                if (*end || errno || u > (unsigned long long) INT64_MAX)
                        return fail(c, path, "\"%s\" is not a hexadecimal number in range", s);
                v = (int64_t) u;
        } else if (json_object_is_type(j, json_type_int)) {
                errno = 0;
                v = json_object_get_int64(j);
                if (errno)
                        return fail(c, path, "integer out of range");
        } else
                return fail(c, path, "expected an integer, got %s", type_name(j));
        if (v < lo || v > hi)
                return fail(c, path, "%" PRId64 " is out of range [%" PRId64 ", %" PRId64 "]", v,
                            lo, hi);
        *ret = v;
        return 0;
}

static int get_string(struct jctx *c, const char *path, json_object *j, const char **ret) {
        if (!json_object_is_type(j, json_type_string))
                return fail(c, path, "expected a string, got %s", type_name(j));
        *ret = json_object_get_string(j);
        return 0;
}

static int parse_nps(struct jctx *c, const char *path, json_object *j, unsigned *ret) {
        const char *s;
        int r = get_string(c, path, j, &s);

        if (r < 0)
                return r;
        for (unsigned n = 1; n <= 8; n++) {
                char name[8];

                snprintf(name, sizeof(name), "NPS%u", n);
                if (streq(s, name) && (SIM_NPS_VALID_MASK & SIM_NPS_BIT(n))) {
                        *ret = n;
                        return 0;
                }
        }
        return fail(c, path, "\"%s\" is not a memory partition mode (NPS1, NPS2, NPS4, NPS8)", s);
}

static int parse_enum(struct jctx *c, const char *path, json_object *j, const char *const *names,
                      size_t n, int *ret) {
        const char *s;
        int r = get_string(c, path, j, &s);

        if (r < 0)
                return r;
        for (size_t i = 0; i < n; i++)
                if (names[i] && streq(s, names[i])) {
                        *ret = (int) i;
                        return 0;
                }
        fprintf(stderr, "amdsmi-sim: %s: %s: \"%s\" is not one of", c->origin, path, s);
        for (size_t i = 0; i < n; i++)
                if (names[i])
                        fprintf(stderr, " %s", names[i]);
        fputc('\n', stderr);
        return -EINVAL;
}

static int parse_fields_skip(struct jctx *c, const char *path, json_object *obj,
                             const struct field *fields, void *base, const char *skip1,
                             const char *skip2);

static int parse_fields(struct jctx *c, const char *path, json_object *obj,
                        const struct field *fields, void *base) {
        return parse_fields_skip(c, path, obj, fields, base, NULL, NULL);
}

/* A GPU's "ras" preset: counts per block, bad pages, CPER records written at load. */
static int parse_ras(struct jctx *c, const char *path, json_object *j, struct sim_ras_preset *ret) {
        struct sim_ras_preset p = { 0 };
        char sub[PATH_SIZE];
        int64_t v;
        int r, e;

        if (!json_object_is_type(j, json_type_object))
                return fail(c, path, "expected an object, got %s", type_name(j));
        json_object_object_foreach(j, key, val) {
                pathf(sub, path, ".%s", key);
                if (streq(key, "counts")) {
                        if (!json_object_is_type(val, json_type_object)) {
                                r = fail(c, sub, "expected an object, got %s", type_name(val));
                                goto fail;
                        }
                        json_object_object_foreach(val, block, errs) {
                                char bsub[PATH_SIZE];
                                int b;

                                pathf(bsub, sub, ".%s", block);
                                for (b = 0; b < _SIM_RAS_BLOCK_MAX; b++)
                                        if (streq(block, sim_ras_block_names[b]))
                                                break;
                                if (b == _SIM_RAS_BLOCK_MAX) {
                                        r = fail(c, bsub, "not a RAS block");
                                        goto fail;
                                }
                                if (!json_object_is_type(errs, json_type_object)) {
                                        r = fail(c, bsub, "expected {\"ue\", \"ce\", \"de\"}");
                                        goto fail;
                                }
                                json_object_object_foreach(errs, ename, n) {
                                        char esub[PATH_SIZE];

                                        pathf(esub, bsub, ".%s", ename);
                                        for (e = 0; e < _SIM_RAS_ERR_MAX; e++)
                                                if (streq(ename, sim_ras_err_names[e]))
                                                        break;
                                        if (e == _SIM_RAS_ERR_MAX) {
                                                r = fail(c, esub, "unknown key (ue, ce, de)");
                                                goto fail;
                                        }
                                        r = get_int(c, esub, n, false, 0, INT64_MAX, &v);
                                        if (r < 0)
                                                goto fail;
                                        p.counts[b][e] = (uint64_t) v;
                                }
                        }
                } else if (streq(key, "bad_pages")) {
                        size_t n;

                        if (!json_object_is_type(val, json_type_array)) {
                                r = fail(c, sub, "expected an array, got %s", type_name(val));
                                goto fail;
                        }
                        n = json_object_array_length(val);
                        if (n > 100000) {
                                r = fail(c, sub, "at most 100000 pages");
                                goto fail;
                        }
                        free(p.pages);
                        p.pages = n ? calloc(n, sizeof(*p.pages)) : NULL;
                        p.n_pages = 0;
                        if (n && !p.pages) {
                                r = -ENOMEM;
                                goto fail;
                        }
                        for (size_t i = 0; i < n; i++) {
                                json_object *o = json_object_array_get_idx(val, i), *x;
                                char psub[PATH_SIZE], fsub[PATH_SIZE];
                                const char *st;

                                pathf(psub, sub, "[%zu]", i);
                                if (!json_object_is_type(o, json_type_object) ||
                                    json_object_object_length(o) != 2 ||
                                    !json_object_object_get_ex(o, "pfn", &x)) {
                                        r = fail(c, psub, "expected {\"pfn\", \"status\"}");
                                        goto fail;
                                }
                                pathf(fsub, psub, ".pfn");
                                r = get_int(c, fsub, x, true, 0, UINT32_MAX, &v);
                                if (r < 0)
                                        goto fail;
                                pathf(fsub, psub, ".status");
                                if (!json_object_object_get_ex(o, "status", &x)) {
                                        r = fail(c, psub, "expected {\"pfn\", \"status\"}");
                                        goto fail;
                                }
                                r = get_string(c, fsub, x, &st);
                                if (r < 0)
                                        goto fail;
                                if (!streq(st, "R") && !streq(st, "P") && !streq(st, "F")) {
                                        r = fail(c, fsub, "\"%s\" is not R, P or F", st);
                                        goto fail;
                                }
                                for (size_t k = 0; k < p.n_pages; k++)
                                        if (p.pages[k].pfn == (uint32_t) v) {
                                                r = fail(c, fsub,
                                                         "page 0x%08" PRIx64 " is listed twice", v);
                                                goto fail;
                                        }
                                p.pages[p.n_pages++] = (struct sim_bad_page){ (uint32_t) v, st[0] };
                        }
                } else if (streq(key, "cper")) {
                        size_t n;

                        if (!json_object_is_type(val, json_type_array)) {
                                r = fail(c, sub, "expected an array, got %s", type_name(val));
                                goto fail;
                        }
                        n = json_object_array_length(val);
                        if (n > 10000) {
                                r = fail(c, sub, "at most 10000 records");
                                goto fail;
                        }
                        free(p.cper);
                        p.cper = n ? malloc(n) : NULL;
                        p.n_cper = 0;
                        if (n && !p.cper) {
                                r = -ENOMEM;
                                goto fail;
                        }
                        for (size_t i = 0; i < n; i++) {
                                char csub[PATH_SIZE];

                                pathf(csub, sub, "[%zu]", i);
                                r = parse_enum(c, csub, json_object_array_get_idx(val, i),
                                               sim_cper_kind_names, _SIM_CPER_KIND_MAX, &e);
                                if (r < 0)
                                        goto fail;
                                p.cper[p.n_cper++] = (uint8_t) e;
                        }
                } else {
                        r = fail(c, sub, "unknown key (counts, bad_pages, cper)");
                        goto fail;
                }
        }
        sim_ras_preset_done(ret);
        *ret = p;
        return 0;
fail:
        sim_ras_preset_done(&p);
        return r;
}

static json_object *dump_ras(const struct sim_ras_preset *p) {
        json_object *o = json_object_new_object(), *a;
        char buf[16];

        a = json_object_new_object();
        for (int b = 0; a && b < _SIM_RAS_BLOCK_MAX; b++) {
                json_object *e;

                if (!p->counts[b][0] && !p->counts[b][1] && !p->counts[b][2])
                        continue;
                e = json_object_new_object();
                for (int k = 0; e && k < _SIM_RAS_ERR_MAX; k++)
                        json_object_object_add(e, sim_ras_err_names[k],
                                               json_object_new_int64((int64_t) p->counts[b][k]));
                json_object_object_add(a, sim_ras_block_names[b], e);
        }
        json_object_object_add(o, "counts", a);
        a = json_object_new_array();
        for (size_t i = 0; a && i < p->n_pages; i++) {
                json_object *e = json_object_new_object();

                snprintf(buf, sizeof(buf), "0x%08" PRIx32, p->pages[i].pfn);
                json_object_object_add(e, "pfn", json_object_new_string(buf));
                buf[0] = p->pages[i].status;
                buf[1] = '\0';
                json_object_object_add(e, "status", json_object_new_string(buf));
                json_object_array_add(a, e);
        }
        json_object_object_add(o, "bad_pages", a);
        a = json_object_new_array();
        for (size_t i = 0; a && i < p->n_cper; i++)
                json_object_array_add(a, json_object_new_string(sim_cper_kind_names[p->cper[i]]));
        json_object_object_add(o, "cper", a);
        return o;
}

static int parse_value(struct jctx *c, const char *path, json_object *j, const struct field *f,
                       void *base) {
        void *dst = (char *) base + f->off;
        int64_t v;
        int r, e;

        switch (f->type) {
        case F_UINT:
        case F_INT:
        case F_U8:
        case F_U16:
        case F_U32:
        case F_U64: {
                int64_t lo = f->min, hi = f->max;

                if (lo == 0 && hi == 0) {
                        hi = f->type == F_U8    ? UINT8_MAX
                             : f->type == F_U16 ? UINT16_MAX
                             : f->type == F_U64 ? INT64_MAX
                             : f->type == F_INT ? INT_MAX
                                                : UINT32_MAX;
                }
                r = get_int(c, path, j, f->hex, lo, hi, &v);
                if (r < 0)
                        return r;
                if (f->type == F_INT)
                        *(int *) dst = (int) v;
                else if (f->type == F_U8)
                        *(uint8_t *) dst = (uint8_t) v;
                else if (f->type == F_U16)
                        *(uint16_t *) dst = (uint16_t) v;
                else if (f->type == F_U64)
                        *(uint64_t *) dst = (uint64_t) v;
                else
                        *(uint32_t *) dst = (uint32_t) v;
                return 0;
        }
        case F_HEX64: {
                const char *s;
                char *end;

                r = get_string(c, path, j, &s);
                if (r < 0)
                        return r;
                errno = 0;
                if (strncmp(s, "0x", 2) != 0 || !s[2] || strlen(s) > 18)
                        return fail(c, path,
                                    "\"%s\" is not a 64-bit hexadecimal number (\"0x...\")", s);
                *(uint64_t *) dst = strtoull(s + 2, &end, 16);
                if (*end || errno)
                        return fail(c, path, "\"%s\" is not a 64-bit hexadecimal number", s);
                return 0;
        }
        case F_BOOL:
                if (!json_object_is_type(j, json_type_boolean))
                        return fail(c, path, "expected true or false, got %s", type_name(j));
                *(bool *) dst = json_object_get_boolean(j);
                return 0;
        case F_STR:
        case F_STR_NULL: {
                const char *s;
                char *copy;

                if (f->type == F_STR_NULL && json_object_is_type(j, json_type_null)) {
                        free(*(char **) dst);
                        *(char **) dst = NULL;
                        return 0;
                }
                r = get_string(c, path, j, &s);
                if (r < 0)
                        return r;
                if (strlen(s) > 200 || strchr(s, '\n'))
                        return fail(c, path, "strings are one line of at most 200 bytes");
                copy = strdup(s);
                if (!copy)
                        return -ENOMEM;
                free(*(char **) dst);
                *(char **) dst = copy;
                return 0;
        }
        case F_NPS:
                return parse_nps(c, path, j, (unsigned *) dst);
        case F_NPS_NULL:
                if (json_object_is_type(j, json_type_null)) {
                        *(unsigned *) dst = 0;
                        return 0;
                }
                return parse_nps(c, path, j, (unsigned *) dst);
        case F_NPS_SET: {
                unsigned mask = 0;

                if (!json_object_is_type(j, json_type_array))
                        return fail(c, path, "expected an array of NPS modes, got %s",
                                    type_name(j));
                for (size_t i = 0; i < json_object_array_length(j); i++) {
                        char sub[PATH_SIZE];
                        unsigned n;

                        pathf(sub, path, "[%zu]", i);
                        r = parse_nps(c, sub, json_object_array_get_idx(j, i), &n);
                        if (r < 0)
                                return r;
                        if (mask & SIM_NPS_BIT(n))
                                return fail(c, sub, "NPS%u is listed twice", n);
                        mask |= SIM_NPS_BIT(n);
                }
                *(unsigned *) dst = mask;
                return 0;
        }
        case F_COMPUTE:
                r = parse_enum(c, path, j, sim_compute_names, _SIM_COMPUTE_MAX, &e);
                if (r < 0)
                        return r;
                *(enum sim_compute *) dst = (enum sim_compute) e;
                return 0;
        case F_ROLE:
                r = parse_enum(c, path, j, sim_role_names, _SIM_ROLE_MAX, &e);
                if (r < 0)
                        return r;
                *(enum sim_role *) dst = (enum sim_role) e;
                return 0;
        case F_DRIVER: {
                static const char *const names[] = { "none", "amdgpu", "gim", "vfio-pci" };

                r = parse_enum(c, path, j, names, ELEMENTSOF(names), &e);
                if (r < 0)
                        return r;
                *(int *) dst = e - 1; /* SIM_DRV_NONE, AMDGPU, GIM, VFIO_PCI */
                return 0;
        }
        case F_NPS_COMPAT: {
                static const char *const names[] = { "older", "newer" };

                r = parse_enum(c, path, j, names, ELEMENTSOF(names), &e);
                if (r < 0)
                        return r;
                *(bool *) dst = e == 1;
                return 0;
        }
        case F_LAYOUT:
                /* names from index 1: SIM_LAYOUT_UNSET has none */
                r = parse_enum(c, path, j, sim_metrics_layout_names + 1, _SIM_LAYOUT_MAX - 1, &e);
                if (r < 0)
                        return r;
                *(unsigned *) dst = (unsigned) e + 1;
                return 0;
        case F_LINK_SPEED:
                r = parse_enum(c, path, j, link_speeds, ELEMENTSOF(link_speeds), &e);
                if (r < 0)
                        return r;
                *(const char **) dst = link_speeds[e];
                return 0;
        case F_LEVELS: {
                struct sim_levels *l = dst;
                size_t n;

                if (!json_object_is_type(j, json_type_array))
                        return fail(c, path, "expected an array of MHz, got %s", type_name(j));
                n = json_object_array_length(j);
                if (n < 1 || n > SIM_MAX_LEVELS)
                        return fail(c, path, "expected 1 to %d levels", SIM_MAX_LEVELS);
                for (size_t i = 0; i < n; i++) {
                        char sub[PATH_SIZE];

                        pathf(sub, path, "[%zu]", i);
                        r = get_int(c, sub, json_object_array_get_idx(j, i), false, 1, 65535, &v);
                        if (r < 0)
                                return r;
                        if (i > 0 && (unsigned) v <= l->mhz[i - 1])
                                return fail(c, sub, "levels must be increasing");
                        l->mhz[i] = (unsigned) v;
                }
                l->n = (unsigned) n;
                return 0;
        }
        case F_LIMITS:
                return parse_fields(c, path, j, fields_cap, dst);
        case F_GC: {
                unsigned *gc = dst, a, b, d;
                const char *s;
                char tail;

                r = get_string(c, path, j, &s);
                if (r < 0)
                        return r;
                if (sscanf(s, "%u.%u.%u%c", &a, &b, &d, &tail) != 3 || a > 99 || b > 99 || d > 99)
                        return fail(c, path, "\"%s\" is not a GC version like \"9.4.3\"", s);
                gc[0] = a;
                gc[1] = b;
                gc[2] = d;
                return 0;
        }
        case F_FW: {
                uint32_t *fw = dst;

                if (!json_object_is_type(j, json_type_object))
                        return fail(c, path, "expected an object, got %s", type_name(j));
                json_object_object_foreach(j, key, val) {
                        char sub[PATH_SIZE];
                        size_t i;

                        pathf(sub, path, ".%s", key);
                        for (i = 0; i < _SIM_FW_MAX; i++)
                                if (streq(sim_fw_names[i], key))
                                        break;
                        if (i == _SIM_FW_MAX)
                                return fail(c, sub, "unknown firmware");
                        r = get_int(c, sub, val, true, 0, UINT32_MAX, &v);
                        if (r < 0)
                                return r;
                        fw[i] = (uint32_t) v;
                }
                return 0;
        }
        case F_WATTS_NULL:
                if (json_object_is_type(j, json_type_null)) {
                        *(int64_t *) dst = -1;
                        return 0;
                }
                r = get_int(c, path, j, false, 0, 4294, &v);
                if (r < 0)
                        return r;
                *(int64_t *) dst = v;
                return 0;
        case F_RAS_BLOCKS: {
                uint32_t mask = 0;

                if (json_object_is_type(j, json_type_null)) {
                        *(uint32_t *) dst = 0;
                        return 0;
                }
                if (!json_object_is_type(j, json_type_array) || !json_object_array_length(j))
                        return fail(c, path, "expected an array of RAS blocks or null, got %s",
                                    json_object_is_type(j, json_type_array) ? "[]" : type_name(j));
                for (size_t i = 0; i < json_object_array_length(j); i++) {
                        char sub[PATH_SIZE];

                        pathf(sub, path, "[%zu]", i);
                        r = parse_enum(c, sub, json_object_array_get_idx(j, i), sim_ras_block_names,
                                       _SIM_RAS_BLOCK_MAX, &e);
                        if (r < 0)
                                return r;
                        if (mask & (1u << e))
                                return fail(c, sub, "%s is listed twice", sim_ras_block_names[e]);
                        mask |= 1u << e;
                }
                *(uint32_t *) dst = mask;
                return 0;
        }
        case F_RAS:
                return parse_ras(c, path, j, dst);
        case F_OBJ:
                return parse_fields(c, path, j, f->sub, base);
        }
        return -EINVAL;
}

/* Reads every key of @obj into @base, but the keys @skip1 and @skip2 (read by the caller). */
static int parse_fields_skip(struct jctx *c, const char *path, json_object *obj,
                             const struct field *fields, void *base, const char *skip1,
                             const char *skip2) {
        if (!json_object_is_type(obj, json_type_object))
                return fail(c, path, "expected an object, got %s", type_name(obj));
        json_object_object_foreach(obj, key, val) {
                const struct field *f;
                char sub[PATH_SIZE];
                int r;

                if ((skip1 && streq(key, skip1)) || (skip2 && streq(key, skip2)))
                        continue;

                pathf(sub, path, "%s%s", *path ? "." : "", key);
                for (f = fields; f->key; f++)
                        if (streq(f->key, key))
                                break;
                if (!f->key)
                        return fail(c, sub, "unknown key");
                r = parse_value(c, sub, val, f, base);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* ---------------------------------------------------------------------------------------- */
/* Writing */

/* "0x%0*x": @digits wide (sysfs prints IDs so: 0x74a1, 0x00, 0x120000). */
static json_object *hex_string(uint64_t v, int digits) {
        char buf[24];

        snprintf(buf, sizeof(buf), "0x%0*" PRIx64, digits, v);
        return json_object_new_string(buf);
}

static json_object *nps_string(unsigned n) {
        char buf[16];

        snprintf(buf, sizeof(buf), "NPS%u", n);
        return json_object_new_string(buf);
}

static json_object *dump_fields(const struct field *fields, const void *base);

static json_object *dump_value(const struct field *f, const void *base) {
        const void *src = (const char *) base + f->off;
        json_object *a;

        switch (f->type) {
        case F_UINT:
        case F_U32:
                if (f->hex)
                        return hex_string(*(const uint32_t *) src, f->max == 0xffffff ? 6 : 8);
                return json_object_new_int64(*(const uint32_t *) src);
        case F_INT:
                return json_object_new_int(*(const int *) src);
        case F_U8:
                return f->hex ? hex_string(*(const uint8_t *) src, 2)
                              : json_object_new_int(*(const uint8_t *) src);
        case F_U16:
                return f->hex ? hex_string(*(const uint16_t *) src, 4)
                              : json_object_new_int(*(const uint16_t *) src);
        case F_U64:
                return json_object_new_int64((int64_t) * (const uint64_t *) src);
        case F_HEX64:
                return hex_string(*(const uint64_t *) src, 16);
        case F_BOOL:
                return json_object_new_boolean(*(const bool *) src);
        case F_STR:
        case F_STR_NULL:
                return *(char *const *) src ? json_object_new_string(*(char *const *) src) : NULL;
        case F_NPS:
                return nps_string(*(const unsigned *) src);
        case F_NPS_NULL:
                return *(const unsigned *) src ? nps_string(*(const unsigned *) src) : NULL;
        case F_NPS_SET:
                a = json_object_new_array();
                for (unsigned n = 1; a && n <= 8; n++)
                        if (*(const unsigned *) src & SIM_NPS_BIT(n))
                                json_object_array_add(a, nps_string(n));
                return a;
        case F_COMPUTE:
                return json_object_new_string(sim_compute_names[*(const enum sim_compute *) src]);
        case F_ROLE:
                return json_object_new_string(sim_role_names[*(const enum sim_role *) src]);
        case F_DRIVER: {
                int d = *(const int *) src;

                return json_object_new_string(d < 0 ? "none" : sim_driver_names[d]);
        }
        case F_NPS_COMPAT:
                return json_object_new_string(*(const bool *) src ? "newer" : "older");
        case F_LINK_SPEED:
                return json_object_new_string(*(const char *const *) src);
        case F_LAYOUT: {
                unsigned l = *(const unsigned *) src;

                return l > SIM_LAYOUT_UNSET && l < _SIM_LAYOUT_MAX
                               ? json_object_new_string(sim_metrics_layout_names[l])
                               : NULL;
        }
        case F_LEVELS: {
                const struct sim_levels *l = src;

                a = json_object_new_array();
                for (unsigned i = 0; a && i < l->n; i++)
                        json_object_array_add(a, json_object_new_int((int) l->mhz[i]));
                return a;
        }
        case F_LIMITS:
                return dump_fields(fields_cap, src);
        case F_GC: {
                const unsigned *gc = src;
                char buf[16];

                snprintf(buf, sizeof(buf), "%u.%u.%u", gc[0], gc[1], gc[2]);
                return json_object_new_string(buf);
        }
        case F_FW: {
                const uint32_t *fw = src;

                a = json_object_new_object();
                for (size_t i = 0; a && i < _SIM_FW_MAX; i++)
                        if (fw[i] != UINT32_MAX) /* a GPU's: the product's */
                                json_object_object_add(a, sim_fw_names[i], hex_string(fw[i], 8));
                return a;
        }
        case F_WATTS_NULL:
                return *(const int64_t *) src < 0 ? NULL
                                                  : json_object_new_int64(*(const int64_t *) src);
        case F_RAS_BLOCKS: {
                uint32_t mask = *(const uint32_t *) src;

                if (!mask)
                        return NULL;
                a = json_object_new_array();
                for (int b = 0; a && b < _SIM_RAS_BLOCK_MAX; b++)
                        if (mask & (1u << b))
                                json_object_array_add(
                                        a, json_object_new_string(sim_ras_block_names[b]));
                return a;
        }
        case F_RAS:
                return dump_ras(src);
        case F_OBJ:
                return dump_fields(f->sub, base);
        }
        return NULL;
}

static json_object *dump_fields(const struct field *fields, const void *base) {
        json_object *o = json_object_new_object();

        for (const struct field *f = fields; o && f->key; f++)
                json_object_object_add(o, f->key, dump_value(f, base));
        return o;
}

/* ---------------------------------------------------------------------------------------- */
/* Machines */

static int parse_products(struct jctx *c, json_object *obj, struct sim_product ***products,
                          size_t *n_products) {
        if (!json_object_is_type(obj, json_type_object))
                return fail(c, "products", "expected an object, got %s", type_name(obj));
        json_object_object_foreach(obj, name, val) {
                char path[PATH_SIZE];
                json_object *base_j = NULL;
                const struct sim_product *base = NULL;
                struct sim_product *p, **arr;
                const char *base_name = name;
                int r;

                pathf(path, "products.", "%s", name);
                if (strlen(name) == 0 || strlen(name) > 31)
                        return fail(c, path, "product names have 1 to 31 characters");
                if (json_object_is_type(val, json_type_object) &&
                    json_object_object_get_ex(val, "base", &base_j)) {
                        char sub[PATH_SIZE];

                        pathf(sub, path, ".base");
                        r = get_string(c, sub, base_j, &base_name);
                        if (r < 0)
                                return r;
                }
                for (size_t i = 0; i < *n_products; i++)
                        if (streq((*products)[i]->name, name))
                                return fail(c, path, "defined twice");
                for (size_t i = 0; i < sim_n_builtin_products; i++)
                        if (streq(sim_builtin_products[i].name, base_name))
                                base = &sim_builtin_products[i];
                if (!base)
                        return fail(c, path,
                                    "\"%s\" is not a built-in product; name one as \"base\"",
                                    base_name);
                r = sim_product_copy(base, name, &p);
                if (r < 0)
                        return r;
                if (!streq(base_name, name) && !(p->base = strdup(base_name))) {
                        sim_product_free(p);
                        return -ENOMEM;
                }
                arr = realloc(*products, (*n_products + 1) * sizeof(*arr));
                if (!arr) {
                        sim_product_free(p);
                        return -ENOMEM;
                }
                *products = arr;
                arr[(*n_products)++] = p;
                r = parse_fields_skip(c, path, val, fields_product, p, "base", NULL);
                if (r < 0)
                        return r;
                r = sim_product_check(p, c->origin, path);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int parse_gpu(struct jctx *c, const char *path, json_object *obj, struct sim_gpu_desc *d) {
        json_object *j;
        const char *s;
        int r;

        if (!json_object_is_type(obj, json_type_object))
                return fail(c, path, "expected an object, got %s", type_name(obj));
        if (json_object_object_get_ex(obj, "bdf", &j)) {
                char sub[PATH_SIZE];
                unsigned dom, bus, dev, fn;
                char tail;

                pathf(sub, path, ".bdf");
                r = get_string(c, sub, j, &s);
                if (r < 0)
                        return r;
                if (strlen(s) != 12 ||
                    sscanf(s, "%4x:%2x:%2x.%1x%c", &dom, &bus, &dev, &fn, &tail) != 4 || dev > 31 ||
                    fn > 7)
                        return fail(c, sub, "\"%s\" is not a PCI address like \"0000:05:00.0\"", s);
                snprintf(d->bdf, sizeof(d->bdf), "%04x:%02x:%02x.%x", dom, bus, dev, fn);
                if (!streq(d->bdf, s))
                        return fail(c, sub, "\"%s\": write PCI addresses in lower case", s);
        }
        if (json_object_object_get_ex(obj, "product", &j)) {
                char sub[PATH_SIZE];

                pathf(sub, path, ".product");
                r = get_string(c, sub, j, &s);
                if (r < 0)
                        return r;
                if (strlen(s) >= sizeof(d->product))
                        return fail(c, sub, "\"%s\" is not a product", s);
                snprintf(d->product, sizeof(d->product), "%s", s);
        }
        return parse_fields_skip(c, path, obj, fields_gpu, d, "bdf", "product");
}

int sim_machine_load_json(const char *text, const char *origin, struct sim_machine **ret) {
        struct jctx c = { .origin = origin };
        json_tokener *tok = json_tokener_new();
        json_object *root = NULL, *defaults = NULL, *gpus = NULL;
        struct sim_machine_desc md = { 0 };
        size_t end;
        int r;

        if (!tok)
                return -ENOMEM;
        root = json_tokener_parse_ex(tok, text, (int) strlen(text));
        end = json_tokener_get_parse_end(tok);
        if (root)
                end += strspn(text + end, " \t\r\n");
        if (!root || json_tokener_get_error(tok) != json_tokener_success || text[end]) {
                enum json_tokener_error e = json_tokener_get_error(tok);

                fprintf(stderr, "amdsmi-sim: %s: not valid JSON at byte %zu: %s\n", origin, end,
                        e == json_tokener_continue  ? "the text ends too early"
                        : e == json_tokener_success ? "trailing text"
                                                    : json_tokener_error_desc(e));
                json_object_put(root);
                json_tokener_free(tok);
                return -EINVAL;
        }
        json_tokener_free(tok);

        sim_machine_desc_init(&md);
        if (!json_object_is_type(root, json_type_object)) {
                r = fail(&c, "", "a machine description is a JSON object");
                goto out;
        }
        /* products first: GPUs name them */
        {
                json_object *p;

                if (json_object_object_get_ex(root, "products", &p)) {
                        r = parse_products(&c, p, &md.products, &md.n_products);
                        if (r < 0)
                                goto out;
                }
        }
        json_object_object_foreach(root, key, val) {
                r = 0;
                if (streq(key, "products"))
                        continue;
                if (streq(key, "name") || streq(key, "description")) {
                        const char *s;

                        r = get_string(&c, key, val, &s);
                        if (r < 0)
                                goto out;
                        if (strlen(s) > 200 || strchr(s, '\n')) {
                                r = fail(&c, key, "one line of at most 200 bytes");
                                goto out;
                        }
                        if (streq(key, "name") &&
                            (strlen(s) == 0 ||
                             strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789-_.") != strlen(s))) {
                                r = fail(&c, key,
                                         "\"%s\": use lower-case letters, digits, -, _ and .", s);
                                goto out;
                        }
                        free(streq(key, "name") ? md.name : md.description);
                        if (streq(key, "name"))
                                md.name = strdup(s);
                        else
                                md.description = strdup(s);
                } else if (streq(key, "kernel"))
                        r = parse_fields(&c, key, val, fields_kernel, &md.kernel);
                else if (streq(key, "cpu"))
                        r = parse_fields(&c, key, val, fields_cpu, &md.cpu);
                else if (streq(key, "host"))
                        r = parse_fields(&c, key, val, fields_host, &md.host);
                else if (streq(key, "bmc_vga")) {
                        if (!json_object_is_type(val, json_type_boolean))
                                r = fail(&c, key, "expected true or false, got %s", type_name(val));
                        else
                                md.bmc_vga = json_object_get_boolean(val);
                } else if (streq(key, "gpu_defaults")) {
                        if (json_object_is_type(val, json_type_object) &&
                            json_object_object_get_ex(val, "bdf", NULL))
                                r = fail(&c, "gpu_defaults.bdf", "each GPU has its own address");
                        defaults = val;
                } else if (streq(key, "gpus"))
                        gpus = val;
                else
                        r = fail(&c, key, "unknown key");
                if (r < 0)
                        goto out;
        }
        if (!gpus || !json_object_is_type(gpus, json_type_array) ||
            json_object_array_length(gpus) == 0 || json_object_array_length(gpus) > SIM_MAX_GPUS) {
                r = fail(&c, "gpus", "expected an array of 1 to %d GPUs", SIM_MAX_GPUS);
                goto out;
        }
        md.n_gpus = json_object_array_length(gpus);
        md.gpus = calloc(md.n_gpus, sizeof(*md.gpus));
        if (!md.gpus) {
                r = -ENOMEM;
                goto out;
        }
        for (size_t i = 0; i < md.n_gpus; i++) {
                char path[PATH_SIZE];

                sim_gpu_desc_init(&md.gpus[i]);
                snprintf(path, sizeof(path), "gpus[%zu]", i);
                if (defaults) {
                        r = parse_gpu(&c, "gpu_defaults", defaults, &md.gpus[i]);
                        if (r < 0)
                                goto out;
                }
                r = parse_gpu(&c, path, json_object_array_get_idx(gpus, i), &md.gpus[i]);
                if (r < 0)
                        goto out;
        }
        r = sim_machine_build(&md, origin, ret);
out:
        sim_machine_desc_done(&md);
        json_object_put(root);
        return r;
}

int sim_machine_load(const char *name_or_file, struct sim_machine **ret) {
        const struct sim_preset *p = sim_preset_find(name_or_file);
        _cleanup_free_ char *text = NULL;
        _cleanup_fclose_ FILE *f = NULL;
        struct stat st;
        size_t n;

        if (p) {
                text = strdup(p->json);
                if (!text)
                        return -ENOMEM;
                for (char *s = text; *s; s++)
                        if (*s == '\'')
                                *s = '"';
                return sim_machine_load_json(text, name_or_file, ret);
        }
        if (!strchr(name_or_file, '/') && !strstr(name_or_file, ".json")) {
                fprintf(stderr,
                        "amdsmi-sim: %s: no such machine (see --list-machines), and not "
                        "a FILE.json\n",
                        name_or_file);
                return -ENOENT;
        }
        f = fopen(name_or_file, "re");
        if (!f || fstat(fileno(f), &st) < 0) {
                int e = errno;

                fprintf(stderr, "amdsmi-sim: %s: %s\n", name_or_file, strerror(e));
                return -e;
        }
        if (st.st_size > (16 << 20)) {
                fprintf(stderr, "amdsmi-sim: %s: too large for a machine description\n",
                        name_or_file);
                return -EFBIG;
        }
        text = malloc((size_t) st.st_size + 1);
        if (!text)
                return -ENOMEM;
        n = fread(text, 1, (size_t) st.st_size, f);
        text[n] = '\0';
        if (strlen(text) != n) {
                fprintf(stderr, "amdsmi-sim: %s: contains a NUL byte\n", name_or_file);
                return -EINVAL;
        }
        return sim_machine_load_json(text, name_or_file, ret);
}

int sim_machine_dump(const struct sim_machine *m, char **ret_json) {
        json_object *root = json_object_new_object(), *products, *gpus, *kernel, *cpu;
        char *s;

        if (!root)
                return -ENOMEM;
        json_object_object_add(root, "name", json_object_new_string(m->name));
        json_object_object_add(root, "description", json_object_new_string(m->description));
        kernel = dump_fields(fields_kernel, &m->kernel);
        json_object_object_add(root, "kernel", kernel);
        cpu = dump_fields(fields_cpu, &m->cpu);
        json_object_object_add(root, "cpu", cpu);
        json_object_object_add(root, "host", dump_fields(fields_host, &m->host));
        json_object_object_add(root, "bmc_vga", json_object_new_boolean(m->bmc_vga));
        products = json_object_new_object();
        json_object_object_add(root, "products", products);
        for (size_t i = 0; products && i < m->n_products; i++) {
                const struct sim_product *p = m->products[i];
                json_object *o = json_object_new_object(), *rest = dump_fields(fields_product, p);

                if (p->base)
                        json_object_object_add(o, "base", json_object_new_string(p->base));
                json_object_object_foreach(rest, key, val)
                        json_object_object_add(o, key, json_object_get(val));
                json_object_put(rest);
                json_object_object_add(products, p->name, o);
        }
        gpus = json_object_new_array();
        json_object_object_add(root, "gpus", gpus);
        for (size_t i = 0; gpus && i < m->n_gpus; i++) {
                struct sim_gpu_desc d;
                json_object *g = json_object_new_object(), *rest;

                sim_gpu_desc_from_gpu(m->gpus[i], &d);
                json_object_object_add(g, "bdf", json_object_new_string(d.bdf));
                json_object_object_add(g, "product", json_object_new_string(d.product));
                rest = dump_fields(fields_gpu, &d);
                json_object_object_foreach(rest, key, val)
                        json_object_object_add(g, key, json_object_get(val));
                json_object_put(rest);
                json_object_array_add(gpus, g);
        }
        s = strdup(json_object_to_json_string_ext(root, JSON_C_TO_STRING_PRETTY |
                                                                JSON_C_TO_STRING_SPACED |
                                                                JSON_C_TO_STRING_NOSLASHESCAPE));
        json_object_put(root);
        if (!s)
                return -ENOMEM;
        *ret_json = s;
        return 0;
}
