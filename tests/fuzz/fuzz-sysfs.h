/* SPDX-License-Identifier: MIT */
/*
 * A tiny sysfs tree for the fuzz targets of the library's sysfs parsers: one MI300X function
 * 0000:05:00.0 bound to amdgpu, with its identity files, fw_version/, an amdgpu hwmon
 * directory, and a KFD topology of a CPU node and one GPU node. It is made once per process
 * under the fuzz temporary directory; a target replaces one file with its input
 * (fuzz_sysfs_set()), reads through the public API on a fresh context (fuzz_sysfs_ctx()), and
 * puts the file back (fuzz_sysfs_reset()).
 *
 * Also a model of what the library makes of a file's bytes (fuzz_sysfs_text()): the text up
 * to a size, a NUL byte refused, one trailing newline removed.
 */
#pragma once

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <amdsmi/amdsmi.h>

#include "fuzz-util.h"
#include "parse-util.h"

#define FUZZ_DEV "devices/pci0000:00/0000:05:00.0/"
#define FUZZ_HWMON FUZZ_DEV "hwmon/hwmon4/"
#define FUZZ_TOPO "class/kfd/kfd/topology/"
#define FUZZ_NODE FUZZ_TOPO "nodes/1/"
/* the longest text attribute the library reads (SYSFS_TEXT_MAX of lib/sysfs.h) */
#define FUZZ_SYSFS_TEXT_MAX 4096

struct fuzz_sysfs_file {
        const char *rel;
        const char *content;
};

static const struct fuzz_sysfs_file fuzz_sysfs_base[] = {
        { FUZZ_DEV "vendor", "0x1002\n" },
        { FUZZ_DEV "device", "0x74a1\n" },
        { FUZZ_DEV "class", "0x120000\n" },
        { FUZZ_DEV "subsystem_vendor", "0x1002\n" },
        { FUZZ_DEV "subsystem_device", "0x74a1\n" },
        { FUZZ_DEV "revision", "0x00\n" },
        { FUZZ_DEV "numa_node", "0\n" },
        { FUZZ_DEV "unique_id", "3c0fa94521fecbba\n" },
        { FUZZ_DEV "serial_number", "692247000123\n" },
        { FUZZ_DEV "product_name", "AMD Instinct MI300X OAM\n" },
        { FUZZ_DEV "product_number", "102-G30211-00\n" },
        { FUZZ_DEV "manufacturer", "AMD\n" },
        { FUZZ_DEV "fru_id", "\n" },
        { FUZZ_DEV "vbios_version", "113-M3000100-102\n" },
        { FUZZ_DEV "fw_version/mec_fw_version", "0x00000099\n" },
        { FUZZ_DEV "fw_version/sos_fw_version", "0x00270082\n" },
        { FUZZ_DEV "fw_version/smc_fw_version", "0x00557300\n" },
        { FUZZ_DEV "gpu_busy_percent", "7\n" },
        { FUZZ_DEV "mem_busy_percent", "3\n" },
        { FUZZ_DEV "current_compute_partition", "SPX\n" },
        { FUZZ_DEV "current_memory_partition", "NPS1\n" },
        { FUZZ_DEV "hwmon/hwmon2/name", "k10temp\n" },
        { FUZZ_HWMON "name", "amdgpu\n" },
        { FUZZ_HWMON "power1_input", "139000000\n" },
        { FUZZ_HWMON "power1_cap", "750000000\n" },
        { FUZZ_HWMON "power1_cap_min", "0\n" },
        { FUZZ_HWMON "power1_cap_max", "750000000\n" },
        { FUZZ_HWMON "power1_cap_default", "750000000\n" },
        { FUZZ_HWMON "temp2_input", "41000\n" },
        { FUZZ_HWMON "temp2_label", "junction\n" },
        { FUZZ_HWMON "temp2_crit", "110000\n" },
        { FUZZ_HWMON "temp3_input", "38000\n" },
        { FUZZ_HWMON "temp3_label", "mem\n" },
        { FUZZ_HWMON "freq1_input", "132000000\n" },
        { FUZZ_HWMON "freq1_label", "sclk\n" },
        { FUZZ_HWMON "freq2_input", "900000000\n" },
        { FUZZ_HWMON "freq2_label", "mclk\n" },
        { FUZZ_HWMON "in0_input", "825\n" },
        { FUZZ_HWMON "in0_label", "vddboard\n" },
        { FUZZ_TOPO "generation_id", "3\n" },
        { FUZZ_TOPO "nodes/0/gpu_id", "0\n" },
        { FUZZ_TOPO "nodes/0/properties", "cpu_cores_count 96\nsimd_count 0\n" },
        { FUZZ_NODE "gpu_id", "48879\n" },
        { FUZZ_NODE "properties",
          "simd_count 1216\nsimd_per_cu 4\nlocation_id 1280\ndomain 0\ndrm_render_minor 128\n"
          "hive_id 77\nnum_xcc 8\ngfx_target_version 90402\nunique_id 4327613504040537018\n" },
        { FUZZ_NODE "mem_banks/0/properties", "heap_type 1\nsize_in_bytes 206158430208\nflags 0\n" },
};

static inline const char *fuzz_sysfs_root(void) {
        static char root[PATH_MAX];

        if (!root[0])
                FUZZ_PRINT(root, "%s/sys", fuzz_tmpdir());
        return root;
}

static inline void fuzz_sysfs_link(const char *rel, const char *target) {
        char path[PATH_MAX], dir[PATH_MAX], *slash;

        FUZZ_PRINT(dir, "sys/%s", rel);
        slash = strrchr(dir, '/');
        *slash = '\0';
        fuzz_mkdirs(dir);
        FUZZ_PRINT(path, "%s/%s", fuzz_sysfs_root(), rel);
        if (symlink(target, path) < 0 && errno != EEXIST)
                abort();
}

/* Makes the tree (once). */
static inline void fuzz_sysfs_setup(void) {
        static bool done;
        char rel[PATH_MAX];

        if (done)
                return;
        done = true;
        for (size_t i = 0; i < sizeof(fuzz_sysfs_base) / sizeof(fuzz_sysfs_base[0]); i++) {
                FUZZ_PRINT(rel, "sys/%s", fuzz_sysfs_base[i].rel);
                fuzz_write(rel, fuzz_sysfs_base[i].content, strlen(fuzz_sysfs_base[i].content));
        }
        fuzz_mkdirs("sys/bus/pci/drivers/amdgpu");
        fuzz_sysfs_link("bus/pci/devices/0000:05:00.0", "../../../devices/pci0000:00/0000:05:00.0");
        fuzz_sysfs_link(FUZZ_DEV "driver", "../../../bus/pci/drivers/amdgpu");
}

/* Replaces @rel (relative to the sysfs root) with the input. */
static inline void fuzz_sysfs_set(const char *rel, const void *data, size_t size) {
        char path[PATH_MAX];

        fuzz_sysfs_setup();
        FUZZ_PRINT(path, "sys/%s", rel);
        fuzz_write(path, data, size);
}

/* The input of a target that fuzzes one of @n files: its first byte picks the file (index in
 * *ret_which), the rest is the file's content (in *data, *size). @return false when there is no
 * input to use (empty, or larger than 8 KiB). */
static inline bool fuzz_sysfs_pick(const uint8_t **data, size_t *size, size_t n,
                                   size_t *ret_which) {
        if (*size < 1 || *size > 8192 || n == 0)
                return false;
        *ret_which = (*data)[0] % n;
        (*data)++;
        (*size)--;
        return true;
}

/* Puts @rel back as the base tree has it (removes it when the base has no such file). */
static inline void fuzz_sysfs_reset(const char *rel) {
        char path[PATH_MAX];

        FUZZ_PRINT(path, "sys/%s", rel);
        for (size_t i = 0; i < sizeof(fuzz_sysfs_base) / sizeof(fuzz_sysfs_base[0]); i++)
                if (strcmp(fuzz_sysfs_base[i].rel, rel) == 0) {
                        fuzz_write(path, fuzz_sysfs_base[i].content,
                                   strlen(fuzz_sysfs_base[i].content));
                        return;
                }
        (void) unlink(fuzz_path(path));
}

static void fuzz_sysfs_no_log(struct amdsmi_ctx *ctx, int priority, const char *format,
                              va_list ap, void *userdata) {
        (void) ctx;
        (void) priority;
        (void) format;
        (void) ap;
        (void) userdata;
}

/* A context on the tree, enumerated: its only GPU in *ret_gpu (NULL when discovery did not
 * find it). */
static inline struct amdsmi_ctx *fuzz_sysfs_ctx(struct amdsmi_gpu **ret_gpu) {
        struct amdsmi_ctx *ctx = NULL;
        int n;

        if (amdsmi_ctx_new_with_roots(fuzz_sysfs_root(), NULL, &ctx) < 0)
                abort();
        if (!getenv("FUZZ_VERBOSE"))
                amdsmi_ctx_set_log_fn(ctx, fuzz_sysfs_no_log, NULL);
        n = amdsmi_ctx_enumerate(ctx);
        if (n < 0 && n != -ENOMEM)
                abort(); /* one file's content never fails the whole enumeration */
        if (n > 1)
                abort();
        *ret_gpu = n == 1 ? amdsmi_ctx_get_gpu(ctx, 0) : NULL;
        return ctx;
}

/*
 * What the library's text reads make of @size bytes in a file read into a buffer of
 * @buf_size: 0 and the text (NUL-terminated, one trailing newline removed) in @buf, -EMSGSIZE
 * when it does not fit, -EBADMSG when it holds a NUL byte.
 */
static inline int fuzz_sysfs_text(const uint8_t *data, size_t size, char *buf, size_t buf_size) {
        if (size > buf_size - 1)
                return -EMSGSIZE;
        if (memchr(data, '\0', size))
                return -EBADMSG;
        memcpy(buf, data, size);
        buf[size] = '\0';
        strip_newline(buf, size);
        return 0;
}

/* What a number file reads as (sysfs_read_i64()/sysfs_read_u64(): a 64-byte buffer). */
static inline int fuzz_sysfs_i64(const uint8_t *data, size_t size, int64_t *ret) {
        char buf[64];
        int r = fuzz_sysfs_text(data, size, buf, sizeof(buf));

        if (r < 0)
                return -EBADMSG;
        r = parse_i64(buf, ret);
        if (r < 0)
                return buf[0] == '\0' ? -ENOMSG : r == -ERANGE ? -ERANGE : -EBADMSG;
        return 0;
}

static inline int fuzz_sysfs_u64(const uint8_t *data, size_t size, int base, uint64_t *ret) {
        char buf[64];
        int r = fuzz_sysfs_text(data, size, buf, sizeof(buf));

        if (r < 0)
                return -EBADMSG;
        r = parse_u64(buf, base, ret);
        if (r < 0)
                return buf[0] == '\0' ? -ENOMSG : r == -ERANGE ? -ERANGE : -EBADMSG;
        return 0;
}
