/* SPDX-License-Identifier: MIT */
/* Per-GPU identity: PCI IDs, product, driver, role, DRM minors, hwmon location. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "parse-util.h"
#include "private.h"
#include "sysfs.h"

static const struct {
        uint16_t device;
        const char *product;
        bool vf;
} product_table[] = {
        /* clang-format off */
        { 0x74a0, "MI300A", false },
        { 0x74a1, "MI300X", false },
        { 0x74a2, "MI308X", false },
        { 0x74a5, "MI325X", false },
        { 0x74a8, "MI308X", false },
        { 0x74a9, "MI300X HF", false },
        { 0x74b5, "MI300X VF", true },
        { 0x74b6, "MI308X VF", true },
        { 0x74b9, "MI325X VF", true },
        { 0x74bc, "MI308X VF", true },
        { 0x74bd, "MI300X HF VF", true },
        { 0x75a0, "MI350X", false },
        { 0x75a3, "MI355X", false },
        { 0x75a8, "MI350P", false },
        /* clang-format on */
};

const char *product_from_device_id(uint16_t device) {
        for (size_t i = 0; i < ELEMENTSOF(product_table); i++)
                if (product_table[i].device == device)
                        return product_table[i].product;
        return NULL;
}

bool device_is_vf(uint16_t device) {
        for (size_t i = 0; i < ELEMENTSOF(product_table); i++)
                if (product_table[i].device == device)
                        return product_table[i].vf;
        return false;
}

static const char *const string_files[_AMDSMI_STRING_MAX] = {
        [AMDSMI_STRING_UNIQUE_ID] = "unique_id",
        [AMDSMI_STRING_SERIAL] = "serial_number",
        [AMDSMI_STRING_PRODUCT_NAME] = "product_name",
        [AMDSMI_STRING_PRODUCT_NUMBER] = "product_number",
        [AMDSMI_STRING_MANUFACTURER] = "manufacturer",
        [AMDSMI_STRING_FRU_ID] = "fru_id",
        [AMDSMI_STRING_VBIOS_VERSION] = "vbios_version",
        [AMDSMI_STRING_VBIOS_BUILD] = "vbios_build",
};

struct amdsmi_gpu *gpu_new(struct amdsmi_ctx *ctx, const char *bdf) {
        struct amdsmi_gpu *gpu = calloc(1, sizeof(*gpu));

        if (!gpu)
                return NULL;
        gpu->n_ref = 1;
        gpu->ctx = ctx;
        gpu->numa_node = -1;
        gpu->card_minor = -1;
        gpu->render_minor = -1;
        snprintf(gpu->bdf, sizeof(gpu->bdf), "%s", bdf);
        if (asprintf(&gpu->syspath, "bus/pci/devices/%s", bdf) < 0) {
                free(gpu);
                return NULL;
        }
        return gpu;
}

static int gpu_path(struct amdsmi_gpu *gpu, const char *attr, char *buf, size_t size) {
        int n = snprintf(buf, size, "%s/%s", gpu->syspath, attr);
        return (n < 0 || (size_t) n >= size) ? -ENAMETOOLONG : 0;
}

static int read_attr_u64(struct amdsmi_gpu *gpu, const char *attr, int base, uint64_t *ret) {
        char path[256];
        int r = gpu_path(gpu, attr, path, sizeof(path));

        return r < 0 ? r : sysfs_read_u64(gpu->ctx, path, base, ret);
}

static int read_id(struct amdsmi_gpu *gpu, const char *attr, uint64_t max, uint64_t *ret) {
        int r = read_attr_u64(gpu, attr, 16, ret);

        if (r < 0)
                return r;
        if (*ret > max) {
                log_warning(gpu->ctx, "%s/%s/%s: value 0x%llx out of range", gpu->ctx->sysfs_root,
                            gpu->syspath, attr, (unsigned long long) *ret);
                return -EBADMSG;
        }
        return 0;
}

static int probe_drm(struct amdsmi_gpu *gpu) {
        _cleanup_strv_free_ char **names = NULL;
        char path[256];
        int n, r;

        r = gpu_path(gpu, "drm", path, sizeof(path));
        if (r < 0)
                return r;
        n = sysfs_list_dir(gpu->ctx, path, NULL, &names);
        if (n == -ENOENT)
                return 0;
        if (n < 0)
                return n;
        for (int i = 0; i < n; i++) {
                int minor;

                if (strncmp(names[i], "renderD", 7) == 0 && parse_int(names[i] + 7, &minor) == 0)
                        gpu->render_minor = minor;
                else if (strncmp(names[i], "card", 4) == 0 && parse_int(names[i] + 4, &minor) == 0)
                        gpu->card_minor = minor;
        }
        return 0;
}

static int probe_hwmon(struct amdsmi_gpu *gpu) {
        _cleanup_strv_free_ char **names = NULL;
        char path[256];
        int n, r;

        r = gpu_path(gpu, "hwmon", path, sizeof(path));
        if (r < 0)
                return r;
        n = sysfs_list_dir(gpu->ctx, path, "hwmon", &names);
        if (n == -ENOENT)
                return 0;
        if (n < 0)
                return n;
        for (int i = 0; i < n; i++) {
                char name_path[320], name[64];

                snprintf(name_path, sizeof(name_path), "%s/%s/name", path, names[i]);
                if (sysfs_read_text(gpu->ctx, name_path, name, sizeof(name)) < 0)
                        continue;
                if (strcmp(name, "amdgpu") != 0)
                        continue;
                if (asprintf(&gpu->hwmon_path, "%s/%s", path, names[i]) < 0)
                        return -ENOMEM;
                break;
        }
        return 0;
}

static enum amdsmi_driver driver_from_name(const char *name) {
        if (!name)
                return AMDSMI_DRIVER_NONE;
        if (strcmp(name, "amdgpu") == 0)
                return AMDSMI_DRIVER_AMDGPU;
        if (strcmp(name, "gim") == 0)
                return AMDSMI_DRIVER_GIM;
        if (strcmp(name, "vfio-pci") == 0)
                return AMDSMI_DRIVER_VFIO_PCI;
        return AMDSMI_DRIVER_OTHER;
}

static enum amdsmi_role probe_role(struct amdsmi_gpu *gpu) {
        uint64_t numvfs;

        if (gpu->physfn_bdf)
                return AMDSMI_ROLE_VF;
        if (gpu->is_vf)
                return gpu->hwmon_path ? AMDSMI_ROLE_VF_GUEST_1VF : AMDSMI_ROLE_VF_GUEST_MULTI;
        if (gpu->driver == AMDSMI_DRIVER_GIM)
                return AMDSMI_ROLE_HOST_PF;
        if (read_attr_u64(gpu, "sriov_numvfs", 10, &numvfs) == 0 && numvfs > 0)
                return AMDSMI_ROLE_HOST_PF;
        return AMDSMI_ROLE_BAREMETAL;
}

/* The NUMA node, read on first use (alone: topology needs it without the identity). */
static void gpu_load_numa(struct amdsmi_gpu *gpu) {
        char path[256];
        int64_t numa;

        if (gpu->numa_loaded)
                return;
        gpu->numa_loaded = true;
        gpu_path(gpu, "numa_node", path, sizeof(path));
        if (sysfs_read_i64(gpu->ctx, path, &numa) == 0 && numa >= -1 && numa < 65536)
                gpu->numa_node = (int) numa;
}

/* Identity files only static output needs, read on first use. */
static void gpu_load_pci_extra(struct amdsmi_gpu *gpu) {
        uint64_t v;

        if (gpu->pci_extra_loaded)
                return;
        gpu->pci_extra_loaded = true;
        if (read_id(gpu, "subsystem_vendor", UINT16_MAX, &v) == 0)
                gpu->subsystem_vendor = (uint16_t) v;
        if (read_id(gpu, "subsystem_device", UINT16_MAX, &v) == 0)
                gpu->subsystem_device = (uint16_t) v;
        if (read_id(gpu, "revision", UINT8_MAX, &v) == 0)
                gpu->revision = (uint8_t) v;
        gpu_load_numa(gpu);
}

/* vendor, device and class are set by the caller (discovery read them already). Only what
 * every verb needs is read here: the driver and the hwmon directory. DRM minors and the SR-IOV
 * role are read on first use (gpu_load_drm(), gpu_load_role()). */
int gpu_probe(struct amdsmi_gpu *gpu) {
        char path[256];
        int r;

        gpu_path(gpu, "driver", path, sizeof(path));
        r = sysfs_readlink_basename(gpu->ctx, path, &gpu->driver_name);
        if (r < 0 && r != -ENOENT)
                return r;
        gpu->driver = driver_from_name(gpu->driver_name);
        return probe_hwmon(gpu);
}

void gpu_load_drm(struct amdsmi_gpu *gpu) {
        int r;

        if (gpu->drm_loaded)
                return;
        gpu->drm_loaded = true;
        r = probe_drm(gpu);
        if (r < 0)
                log_warning(gpu->ctx, "%s/%s/drm: %s", gpu->ctx->sysfs_root, gpu->syspath,
                            strerror(-r));
}

static void gpu_load_role(struct amdsmi_gpu *gpu) {
        char path[256];
        int r;

        if (gpu->role_loaded)
                return;
        gpu->role_loaded = true;
        gpu_path(gpu, "physfn", path, sizeof(path));
        r = sysfs_readlink_basename(gpu->ctx, path, &gpu->physfn_bdf);
        if (r < 0 && r != -ENOENT)
                log_warning(gpu->ctx, "%s/%s: %s", gpu->ctx->sysfs_root, path, strerror(-r));
        gpu->is_vf = gpu->physfn_bdf || device_is_vf(gpu->device);
        gpu->role = probe_role(gpu);
}

static void gpu_load_strings(struct amdsmi_gpu *gpu) {
        if (gpu->strings_loaded)
                return;
        gpu->strings_loaded = true;
        for (int i = 0; i < _AMDSMI_STRING_MAX; i++) {
                char path[256];
                char *s = NULL;
                int r;

                gpu_path(gpu, string_files[i], path, sizeof(path));
                r = sysfs_read_string(gpu->ctx, path, &s);
                if (r < 0) {
                        if (r != -ENOENT)
                                log_warning(gpu->ctx, "%s/%s: %s", gpu->ctx->sysfs_root, path,
                                            strerror(-r));
                        continue;
                }
                if (!*s) {
                        free(s);
                        continue;
                }
                gpu->strings[i] = s;
        }
}

_public_ struct amdsmi_gpu *amdsmi_gpu_ref(struct amdsmi_gpu *gpu) {
        if (gpu)
                gpu->n_ref++;
        return gpu;
}

_public_ struct amdsmi_gpu *amdsmi_gpu_unref(struct amdsmi_gpu *gpu) {
        if (!gpu || --gpu->n_ref > 0)
                return NULL;
        gpu_free_firmware(gpu);
        for (int i = 0; i < _AMDSMI_STRING_MAX; i++)
                free(gpu->strings[i]);
        free(gpu->partitions);
        free(gpu->syspath);
        free(gpu->driver_name);
        free(gpu->physfn_bdf);
        free(gpu->product);
        free(gpu->hwmon_path);
        strv_free(gpu->hwmon_names);
        free(gpu);
        return NULL;
}

/* "0000:c1:00.0" or "c1:00.0" (domain 0), hex digits in either case, nothing else. */
static int normalize_bdf(const char *in, char out[static 16]) {
        unsigned dom = 0, bus, dev, fn;
        int n = -1;

        if (!in || strspn(in, "0123456789abcdefABCDEF:.") != strlen(in))
                return -EINVAL;
        if (strlen(in) == 12)
                (void) sscanf(in, "%4x:%2x:%2x.%1x%n", &dom, &bus, &dev, &fn, &n);
        else if (strlen(in) == 7)
                (void) sscanf(in, "%2x:%2x.%1x%n", &bus, &dev, &fn, &n);
        if (n != (int) strlen(in) || dev > 0x1f || fn > 7)
                return -EINVAL;
        snprintf(out, 16, "%04x:%02x:%02x.%x", dom, bus, dev, fn);
        return 0;
}

_public_ int amdsmi_ctx_find_gpu(struct amdsmi_ctx *ctx, const char *bdf,
                                 struct amdsmi_gpu **ret_gpu) {
        char norm[16];
        int r = normalize_bdf(bdf, norm);

        if (r < 0)
                return r;
        for (size_t i = 0; i < ctx->n_gpus; i++)
                if (strcmp(ctx->gpus[i]->bdf, norm) == 0) {
                        *ret_gpu = ctx->gpus[i];
                        return 0;
                }
        return -ENODEV;
}

_public_ unsigned amdsmi_gpu_get_index(struct amdsmi_gpu *gpu) {
        return gpu->index;
}

_public_ const char *amdsmi_gpu_get_bdf(struct amdsmi_gpu *gpu) {
        return gpu->bdf;
}

_public_ uint16_t amdsmi_gpu_get_vendor_id(struct amdsmi_gpu *gpu) {
        return gpu->vendor;
}

_public_ uint16_t amdsmi_gpu_get_device_id(struct amdsmi_gpu *gpu) {
        return gpu->device;
}

_public_ uint16_t amdsmi_gpu_get_subsystem_vendor_id(struct amdsmi_gpu *gpu) {
        gpu_load_pci_extra(gpu);
        return gpu->subsystem_vendor;
}

_public_ uint16_t amdsmi_gpu_get_subsystem_device_id(struct amdsmi_gpu *gpu) {
        gpu_load_pci_extra(gpu);
        return gpu->subsystem_device;
}

_public_ uint8_t amdsmi_gpu_get_revision(struct amdsmi_gpu *gpu) {
        gpu_load_pci_extra(gpu);
        return gpu->revision;
}

_public_ uint32_t amdsmi_gpu_get_class(struct amdsmi_gpu *gpu) {
        return gpu->pci_class;
}

_public_ const char *amdsmi_gpu_get_product(struct amdsmi_gpu *gpu) {
        const char *p = product_from_device_id(gpu->device);

        if (p)
                return p;
        if (!gpu->product) {
                const char *fru = amdsmi_gpu_get_string(gpu, AMDSMI_STRING_PRODUCT_NAME);
                if (fru)
                        gpu->product = strdup(fru);
                else if (asprintf(&gpu->product, "AMD GPU 0x%04x", gpu->device) < 0)
                        gpu->product = NULL;
        }
        return gpu->product ? gpu->product : "AMD GPU";
}

_public_ int amdsmi_gpu_is_vf(struct amdsmi_gpu *gpu) {
        gpu_load_role(gpu);
        return gpu->is_vf;
}

_public_ enum amdsmi_driver amdsmi_gpu_get_driver(struct amdsmi_gpu *gpu) {
        return gpu->driver;
}

_public_ const char *amdsmi_gpu_get_driver_name(struct amdsmi_gpu *gpu) {
        return gpu->driver_name;
}

_public_ enum amdsmi_role amdsmi_gpu_get_role(struct amdsmi_gpu *gpu) {
        gpu_load_role(gpu);
        return gpu->role;
}

_public_ const char *amdsmi_gpu_get_physfn_bdf(struct amdsmi_gpu *gpu) {
        gpu_load_role(gpu);
        return gpu->physfn_bdf;
}

_public_ int amdsmi_gpu_get_numa_node(struct amdsmi_gpu *gpu) {
        gpu_load_numa(gpu);
        return gpu->numa_node;
}

_public_ int amdsmi_gpu_get_card_minor(struct amdsmi_gpu *gpu) {
        gpu_load_drm(gpu);
        return gpu->card_minor;
}

_public_ int amdsmi_gpu_get_render_minor(struct amdsmi_gpu *gpu) {
        gpu_load_drm(gpu);
        return gpu->render_minor;
}

_public_ const char *amdsmi_gpu_get_string(struct amdsmi_gpu *gpu, enum amdsmi_gpu_string which) {
        if ((unsigned) which >= _AMDSMI_STRING_MAX)
                return NULL;
        gpu_load_strings(gpu);
        return gpu->strings[which];
}

/* "32.0 GT/s PCIe" → 32000 MT/s; "Unknown" or garbage → NA. */
static uint64_t parse_link_speed(const char *s) {
        char *end;
        double gts;

        errno = 0;
        gts = strtod(s, &end);
        if (errno || end == s || gts <= 0 || gts > 1000 || strncmp(end, " GT/s", 5) != 0)
                return AMDSMI_NA;
        return (uint64_t) (gts * 1000.0 + 0.5);
}

_public_ int amdsmi_gpu_read_pcie_link(struct amdsmi_gpu *gpu, struct amdsmi_pcie_link *ret_link) {
        static const char *const speed_files[] = { "current_link_speed", "max_link_speed" };
        static const char *const width_files[] = { "current_link_width", "max_link_width" };
        uint64_t speeds[2], widths[2];

        for (int i = 0; i < 2; i++) {
                char path[256], buf[64];

                gpu_path(gpu, speed_files[i], path, sizeof(path));
                speeds[i] = sysfs_read_text(gpu->ctx, path, buf, sizeof(buf)) == 0
                                    ? parse_link_speed(buf)
                                    : AMDSMI_NA;
                if (read_attr_u64(gpu, width_files[i], 10, &widths[i]) < 0 || widths[i] == 0 ||
                    widths[i] > 32)
                        widths[i] = AMDSMI_NA;
        }
        *ret_link = (struct amdsmi_pcie_link){
                .current_speed_mts = speeds[0],
                .current_width = widths[0],
                .max_speed_mts = speeds[1],
                .max_width = widths[1],
        };
        return 0;
}

_public_ int amdsmi_gpu_read_pcie_replay_count(struct amdsmi_gpu *gpu, uint64_t *ret_count) {
        return read_attr_u64(gpu, "pcie_replay_count", 10, ret_count);
}

static uint64_t read_memory_attr(struct amdsmi_gpu *gpu, const char *attr) {
        char path[256];
        uint64_t v;

        if (gpu_path(gpu, attr, path, sizeof(path)) < 0 ||
            sysfs_read_u64_live(gpu->ctx, path, 10, &v) < 0)
                return AMDSMI_NA;
        return v;
}

/* The sizes do not change while the driver is bound: read once per GPU object (each
 * enumeration makes new ones) once all three read; the used VRAM every time. */
_public_ int amdsmi_gpu_read_memory_info(struct amdsmi_gpu *gpu,
                                         struct amdsmi_memory_info *ret_info) {
        uint64_t used = read_memory_attr(gpu, "mem_info_vram_used");

        if (!gpu->memory_fixed_loaded) {
                gpu->vram_total = read_memory_attr(gpu, "mem_info_vram_total");
                gpu->vis_vram_total = read_memory_attr(gpu, "mem_info_vis_vram_total");
                gpu->gtt_total = read_memory_attr(gpu, "mem_info_gtt_total");
                gpu->memory_fixed_loaded = gpu->vram_total != AMDSMI_NA &&
                                           gpu->vis_vram_total != AMDSMI_NA &&
                                           gpu->gtt_total != AMDSMI_NA;
        }
        *ret_info = (struct amdsmi_memory_info){
                .vram_total = gpu->vram_total,
                .vram_used = used,
                .vis_vram_total = gpu->vis_vram_total,
                .gtt_total = gpu->gtt_total,
        };
        return 0;
}

/* One pm file: the driver answers EBUSY (reset, partial init, suspend) or EPERM (runtime
 * suspend, or a reset on DKMS) before any SMU access, so one read says it for them all. */
_public_ int amdsmi_gpu_check_ready(struct amdsmi_gpu *gpu) {
        char path[256], buf[64];
        int r;

        if (!gpu)
                return -EINVAL;
        if (gpu->driver != AMDSMI_DRIVER_AMDGPU)
                return -ENODATA;
        r = gpu_path(gpu, "power_dpm_force_performance_level", path, sizeof(path));
        if (r < 0)
                return r;
        r = sysfs_read_text(gpu->ctx, path, buf, sizeof(buf));
        if (r == -ENOENT)
                return -ENODATA;
        if (r == -EPERM)
                return -EBUSY;
        return r < 0 ? r : 0;
}

/* Partition files: EPERM from the driver means a reset is in progress, not a permission. */
int gpu_read_partition_attr(struct amdsmi_gpu *gpu, const char *attr, char *buf, size_t size) {
        char path[256];
        int r;

        gpu_path(gpu, attr, path, sizeof(path));
        r = sysfs_read_text(gpu->ctx, path, buf, size);
        if (r == -ENOENT)
                return -ENODATA;
        if (r == -EPERM)
                return -EBUSY;
        return r;
}
