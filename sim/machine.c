/* SPDX-License-Identifier: MIT */
/*
 * amdsmi-sim: the machine model: partition rules of spec amdgpu-sysfs.md §2.2 and §2.3, and
 * the machine made from a checked description (its PCI functions and GPUs).
 */
#include <inttypes.h>
#include <limits.h>

#include "machine-private.h"
#include "metrics.h"

const char *const sim_compute_names[_SIM_COMPUTE_MAX] = { "SPX", "DPX", "TPX", "QPX", "CPX" };
const char *const sim_role_names[_SIM_ROLE_MAX] = {
        [SIM_ROLE_BAREMETAL] = "baremetal",
        [SIM_ROLE_HOST_PF] = "host-pf",
        [SIM_ROLE_GUEST_1VF] = "vf-guest-1vf",
        [SIM_ROLE_GUEST_MULTIVF] = "vf-guest-multi",
};
const char *const sim_driver_names[_SIM_DRV_MAX] = {
        [SIM_DRV_AMDGPU] = "amdgpu",     [SIM_DRV_GIM] = "gim",
        [SIM_DRV_VFIO_PCI] = "vfio-pci", [SIM_DRV_PCIEPORT] = "pcieport",
        [SIM_DRV_K10TEMP] = "k10temp",   [SIM_DRV_AST] = "ast",
};
const char *const sim_fw_names[_SIM_FW_MAX] = {
        "vce",      "uvd",      "mc",    "me",   "pfp",  "ce",  "rlc",    "rlc_srlc",
        "rlc_srlg", "rlc_srls", "mec",   "mec2", "sos",  "asd", "ta_ras", "ta_xgmi",
        "smc",      "sdma",     "sdma2", "vcn",  "dmcu", "imu",
};

/* ---------------------------------------------------------------------------------------- */
/* Partition rules */

unsigned sim_compute_parts(enum sim_compute mode, unsigned xcc) {
        switch (mode) {
        case SIM_SPX:
                return 1;
        case SIM_DPX:
                return 2;
        case SIM_TPX:
                return 3;
        case SIM_QPX:
                return 4;
        case SIM_CPX:
                return xcc;
        default:
                return 1;
        }
}

unsigned sim_compute_supported(unsigned xcc) {
        switch (xcc) {
        case 8:
                return 1u << SIM_SPX | 1u << SIM_DPX | 1u << SIM_QPX | 1u << SIM_CPX;
        case 6:
                return 1u << SIM_SPX | 1u << SIM_TPX | 1u << SIM_CPX;
        case 4:
                return 1u << SIM_SPX | 1u << SIM_DPX | 1u << SIM_CPX;
        default:
                return 1u << SIM_SPX | 1u << SIM_CPX;
        }
}

/* NPS4 on an APU means three memory partitions (§2.3). */
unsigned sim_nps_mem_parts(const struct sim_gpu *g, unsigned nps) {
        return g->prod->apu && nps == 4 ? 3 : nps;
}

static bool xcc_rule(enum sim_compute mode, unsigned xcc) {
        switch (mode) {
        case SIM_SPX:
                return xcc > 0;
        case SIM_DPX:
                return xcc % 4 == 0;
        case SIM_TPX:
                return xcc % 3 == 0;
        case SIM_QPX:
                return xcc / 4 >= 2;
        case SIM_CPX:
                return xcc > 1;
        default:
                return false;
        }
}

static bool nps_compatible(const struct sim_gpu *g, enum sim_compute mode, unsigned nps) {
        bool gc950 = g->prod->gc[0] == 9 && g->prod->gc[1] == 5 && g->prod->gc[2] == 0;
        bool vf = g->role == SIM_ROLE_GUEST_1VF || g->role == SIM_ROLE_GUEST_MULTIVF;
        unsigned nmem = sim_nps_mem_parts(g, nps), xcc = g->prod->xcc;

        if (g->m->kernel.nps_compat_newer) {
                switch (mode) {
                case SIM_SPX:
                        return nps == 1;
                case SIM_DPX:
                        return nps == 1 || nps == 2;
                case SIM_TPX:
                        return nps == 1 || nps == 4;
                case SIM_QPX:
                        return nps == 1 || nps == 4 || (nps == 2 && gc950);
                case SIM_CPX:
                        return nps == 1 || nps == 4 || (nps == 2 && (gc950 || vf));
                default:
                        return false;
                }
        }
        switch (mode) {
        case SIM_SPX:
                return nmem == 1;
        case SIM_DPX:
                return nmem <= 2;
        case SIM_TPX:
                return nmem == 1 || nmem == 3;
        case SIM_QPX:
                return nmem == 1 || nmem == 4;
        case SIM_CPX:
                return nmem > 0 && xcc % nmem == 0;
        default:
                return false;
        }
}

unsigned sim_compute_available(const struct sim_gpu *g, unsigned nps) {
        unsigned hw = sim_compute_supported(g->prod->xcc), mask = 0;

        for (int mode = 0; mode < _SIM_COMPUTE_MAX; mode++)
                if ((hw & (1u << mode)) && xcc_rule((enum sim_compute) mode, g->prod->xcc) &&
                    nps_compatible(g, (enum sim_compute) mode, nps))
                        mask |= 1u << mode;
        return mask;
}

/* The boot-time choice (amdgpu.user_partt_mode=-2, §2.3). */
enum sim_compute sim_compute_auto(const struct sim_gpu *g, unsigned nps) {
        unsigned nmem = sim_nps_mem_parts(g, nps), xcc = g->prod->xcc;

        if (nmem == 1)
                return SIM_SPX;
        if (nmem == xcc)
                return SIM_CPX;
        if (nmem == xcc / 2)
                return g->prod->apu ? SIM_TPX : SIM_CPX;
        if (nmem == 2 && !g->prod->apu)
                return SIM_DPX;
        return SIM_COMPUTE_UNKNOWN;
}

unsigned sim_gpu_parts(const struct sim_gpu *g) {
        return sim_compute_parts(g->compute, g->prod->xcc);
}

bool sim_same_hive(const struct sim_gpu *a, const struct sim_gpu *b) {
        return a == b || (a->hive_id != 0 && a->hive_id == b->hive_id);
}

size_t sim_hive_peers(const struct sim_gpu *g, struct sim_gpu **out) {
        size_t n = 0;

        for (size_t i = 0; g->hive_id && i < g->m->n_gpus && n < SIM_MAX_GPUS; i++)
                if (g->m->gpus[i] != g && g->m->gpus[i]->hive_id == g->hive_id)
                        out[n++] = g->m->gpus[i];
        return n;
}

/* An MI300X OAM board links each of its 8 GPUs to the 7 others with one x16 link; the 4 MI300A
 * APUs of a node are linked pairwise with two (SYNTHETIC: the board's wiring, which the driver
 * reads from the PSP, is not in any public source). */
unsigned sim_xgmi_links_per_peer(const struct sim_gpu *g) {
        if (g->prod->xgmi_links_per_peer)
                return g->prod->xgmi_links_per_peer;
        return g->prod->apu ? 2 : 1;
}

uint32_t sim_gpu_effective_cap_w(const struct sim_gpu *g) {
        if (g->platform_limit_w >= 0 && (uint64_t) g->platform_limit_w < g->cap_w)
                return (uint32_t) g->platform_limit_w;
        return g->cap_w;
}

/* ---------------------------------------------------------------------------------------- */
/* Products */

#define PRODUCT_STRINGS(p)                                                                        \
        {                                                                                         \
                &(p)->name, &(p)->base, &(p)->vbios_version, &(p)->vbios_build,                   \
                        &(p)->fru_product_name, &(p)->fru_product_number, &(p)->fru_manufacturer, \
                        &(p)->fru_id, &(p)->serial_prefix                                         \
        }

struct sim_product *sim_product_free(struct sim_product *p) {
        if (!p)
                return NULL;
        char **strs[] = PRODUCT_STRINGS(p);
        for (size_t i = 0; i < ELEMENTSOF(strs); i++)
                free(*strs[i]);
        free(p);
        return NULL;
}

int sim_product_copy(const struct sim_product *src, const char *name, struct sim_product **ret) {
        struct sim_product *p = malloc(sizeof(*p));

        if (!p)
                return -ENOMEM;
        *p = *src;
        p->name = (char *) name;
        char **strs[] = PRODUCT_STRINGS(p);
        for (size_t i = 0; i < ELEMENTSOF(strs); i++)
                if (*strs[i] && !(*strs[i] = strdup(*strs[i]))) {
                        for (size_t j = 0; j < i; j++)
                                free(*strs[j]);
                        for (size_t j = i + 1; j < ELEMENTSOF(strs); j++)
                                *strs[j] = NULL;
                        free(p);
                        return -ENOMEM;
                }
        *ret = p;
        return 0;
}

_printf_(3, 4) static int desc_fail(const char *origin, const char *path, const char *fmt, ...) {
        va_list ap;

        fprintf(stderr, "amdsmi-sim: %s: %s: ", origin, path);
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
        fputc('\n', stderr);
        return -EINVAL;
}

static int check_limits(const struct sim_limits_w *l, const char *origin, const char *path) {
        if (l->min > l->def || l->def > l->max)
                return desc_fail(origin, path, "needs min <= default <= max (%u, %u, %u)", l->min,
                                 l->def, l->max);
        if (l->max == 0)
                return desc_fail(origin, path, "max must be at least 1 W");
        return 0;
}

int sim_product_check(const struct sim_product *p, const char *origin, const char *path) {
        char sub[300];
        int r;

        snprintf(sub, sizeof(sub), "%s.xcc", path);
        if (p->xcc != 1 && p->xcc % 2 != 0)
                return desc_fail(origin, sub, "%u XCCs: products have 1 or an even count", p->xcc);
        if (p->xcc * p->cu_per_xcc * 4 > 4096)
                return desc_fail(origin, sub, "too many compute units");
        snprintf(sub, sizeof(sub), "%s.power_cap_w", path);
        r = check_limits(&p->power_cap_w, origin, sub);
        if (r < 0)
                return r;
        if (p->ppt1) {
                snprintf(sub, sizeof(sub), "%s.ppt1_w", path);
                r = check_limits(&p->ppt1_w, origin, sub);
                if (r < 0)
                        return r;
        }
        snprintf(sub, sizeof(sub), "%s.nps_supported", path);
        if (p->apu && p->nps_supported)
                return desc_fail(origin, sub, "an APU has its NPS mode fixed by the BIOS: []");
        snprintf(sub, sizeof(sub), "%s.clocks_mhz.sclk", path);
        if (p->sclk.n < 2)
                return desc_fail(origin, sub, "give at least the minimum and maximum");
        snprintf(sub, sizeof(sub), "%s.fru", path);
        if (p->fru && p->apu)
                return desc_fail(origin, sub, "APUs have no FRU files (present: false)");
        if (p->fru && (!p->fru_product_name || !p->fru_product_number || !p->fru_manufacturer ||
                       !p->fru_id || !p->serial_prefix))
                return desc_fail(origin, sub, "a FRU needs all of its strings");
        if (p->sdma_engines < 1)
                return desc_fail(origin, path, "no SDMA engines");
        return 0;
}

/* ---------------------------------------------------------------------------------------- */
/* Descriptions */

void sim_gpu_desc_init(struct sim_gpu_desc *d) {
        *d = (struct sim_gpu_desc){
                .numa_node = INT_MIN,
                .driver = SIM_DRV_AMDGPU,
                .role = SIM_ROLE_BAREMETAL,
                .unique_id = UINT64_MAX,
                .nps_supported = UINT_MAX,
                .compute = SIM_COMPUTE_UNKNOWN,
                .cap_limits_w = { UINT32_MAX, UINT32_MAX, UINT32_MAX },
                .cap_w = UINT32_MAX,
                .ppt1_limits_w = { UINT32_MAX, UINT32_MAX, UINT32_MAX },
                .ppt1_cap_w = UINT32_MAX,
                .platform_limit_w = -1,
                .sensors = { UINT_MAX, UINT_MAX, UINT_MAX, UINT_MAX, UINT_MAX, UINT_MAX, UINT_MAX,
                             UINT64_MAX },
        };
        memset(d->fw, 0xff, sizeof(d->fw)); /* the product's */
}

void sim_machine_desc_init(struct sim_machine_desc *md) {
        *md = (struct sim_machine_desc){
                .kernel = { .gpu_metrics_revision = 7,
                            .gpu_metrics_layout = SIM_LAYOUT_7_1,
                            .nps_compat_newer = true,
                            .dkms = true,
                            .ras_aca = true,
                            .ras_enable = true,
                            .cper_ring_bytes = 0x100000, /* CPER_MAX_RING_SIZE */
                            .bad_page_threshold = 128,
                            .reset_ms = 50 },
                .host = { .iommu = true, .interrupt_remapping = true, .vfio_pci = true },
                .cpu = { .sockets = 2,
                         .cores_per_socket = 64,
                         .threads_per_core = 2,
                         .memory_bytes_per_socket = 1008ULL << 30,
                         .max_clock_mhz = 3700 },
        };
}

/* ---- the host (host.c) ----------------------------------------------------------------- */

#define HOST_CMDLINE_DEFAULT \
        "BOOT_IMAGE=/boot/vmlinuz-6.8.0-amdsmi-sim root=/dev/nvme0n1p2 ro amd_iommu=on iommu=pt"

static void host_done(struct sim_host *h) {
        free(h->cmdline);
        free(h->render_members);
        free(h->video_members);
        free(h->kfd_mode);
        free(h->kfd_group);
        *h = (struct sim_host){};
}

/* @src's values (taken), the defaults where it has none. */
static int host_take(struct sim_host *src, struct sim_host *dst) {
        *dst = *src;
        *src = (struct sim_host){};
        if (!dst->cmdline)
                dst->cmdline = strdup(HOST_CMDLINE_DEFAULT);
        if (!dst->render_members)
                dst->render_members = strdup("gpuuser");
        if (!dst->video_members)
                dst->video_members = strdup("gpuuser");
        if (!dst->kfd_mode)
                dst->kfd_mode = strdup("0666");
        if (!dst->kfd_group)
                dst->kfd_group = strdup("render");
        if (!dst->cmdline || !dst->render_members || !dst->video_members || !dst->kfd_mode ||
            !dst->kfd_group)
                return -ENOMEM;
        return 0;
}

static bool member_list_ok(const char *l) {
        for (const char *p = l; *p; p++)
                if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
                      (*p >= '0' && *p <= '9') || *p == '_' || *p == '-' || *p == '.' ||
                      (*p == ',' && p != l && p[1] && p[1] != ',')))
                        return false;
        return true;
}

/* The host's facts against the machine: vfio-pci missing with devices meant for it, a group
 * shared with a function the machine does not have; then the shared groups. */
static int host_check(struct sim_machine *m, const char *origin) {
        const struct sim_host *h = &m->host;
        char *end;
        unsigned long mode;

        if (strchr(h->cmdline, '\n') || strlen(h->cmdline) >= 4000)
                return desc_fail(origin, "host.cmdline", "one line, shorter than 4000 bytes");
        errno = 0;
        mode = strtoul(h->kfd_mode, &end, 8);
        if (!*h->kfd_mode || *end || errno || mode > 07777)
                return desc_fail(origin, "host.kfd_mode",
                                 "\"%s\" is not an octal mode like \"0660\"", h->kfd_mode);
        if (!streq(h->kfd_group, "render") && !streq(h->kfd_group, "video") &&
            !streq(h->kfd_group, "root"))
                return desc_fail(origin, "host.kfd_group", "\"%s\": render, video or root",
                                 h->kfd_group);
        if (!member_list_ok(h->render_members))
                return desc_fail(origin, "host.render_members", "user names, comma-separated");
        if (!member_list_ok(h->video_members))
                return desc_fail(origin, "host.video_members", "user names, comma-separated");
        if (!h->vfio_pci && m->kernel.vfio_pci_ids)
                return desc_fail(origin, "host.vfio_pci",
                                 "false, but kernel.vfio_pci_ids gives it devices");
        for (size_t i = 0; i < m->n_gpus; i++) {
                struct sim_gpu *g = m->gpus[i];
                struct sim_func *other = NULL;
                char path[64];

                snprintf(path, sizeof(path), "gpus[%zu]", i);
                if (!h->vfio_pci && g->func->driver == SIM_DRV_VFIO_PCI)
                        return desc_fail(origin, path,
                                         "driver vfio-pci, but host.vfio_pci is false");
                if (!g->iommu_group_with)
                        continue;
                snprintf(path, sizeof(path), "gpus[%zu].iommu_group_with", i);
                for (size_t k = 0; k < m->n_funcs; k++)
                        if (streq(m->funcs[k]->bdf, g->iommu_group_with))
                                other = m->funcs[k];
                if (!other || other == g->func)
                        return desc_fail(origin, path,
                                         "\"%s\" is no other PCI function of the machine",
                                         g->iommu_group_with);
                if (other->gpu && other->gpu->iommu_group_with)
                        return desc_fail(origin, path,
                                         "%s shares another's group itself: name "
                                         "that one",
                                         other->bdf);
                g->func->iommu_group = other->iommu_group;
        }
        return 0;
}

void sim_machine_desc_done(struct sim_machine_desc *md) {
        free(md->name);
        free(md->description);
        free(md->kernel.vfio_pci_ids);
        host_done(&md->host);
        for (size_t i = 0; i < md->n_products; i++)
                sim_product_free(md->products[i]);
        free(md->products);
        for (size_t i = 0; i < md->n_gpus; i++) {
                free(md->gpus[i].serial);
                free(md->gpus[i].iommu_group_with);
                sim_ras_preset_done(&md->gpus[i].ras);
        }
        free(md->gpus);
        *md = (struct sim_machine_desc){ 0 };
}

void sim_gpu_desc_from_gpu(const struct sim_gpu *g, struct sim_gpu_desc *d) {
        const struct sim_func *f = g->func;

        *d = (struct sim_gpu_desc){
                .numa_node = f->numa_node,
                .driver = f->driver,
                .role = g->role,
                .hive_id = g->hive_id,
                .unique_id = g->unique_id,
                .serial = g->serial,
                .nps_supported = g->nps_supported,
                .nps_current = g->nps_current,
                .nps_requested = g->nps_requested,
                .compute = g->compute,
                .kfd_users = g->kfd_users,
                .in_reset = g->in_reset,
                .cap_limits_w = g->cap_limits_w,
                .cap_w = g->cap_w,
                .ppt1_limits_w = g->ppt1_limits_w,
                .ppt1_cap_w = g->ppt1_cap_w,
                .platform_limit_w = g->platform_limit_w,
                .metrics_rev = g->metrics_rev,
                .metrics_layout = g->metrics_layout,
                .link_speed = f->link_speed,
                .link_speed_max = f->link_speed_max,
                .link_width = f->link_width,
                .link_width_max = f->link_width_max,
                .sensors = g->sensors,
                .vf_num = g->vf_num,
                .ras = g->ras_preset,
                .iommu_group_with = g->iommu_group_with,
        };
        for (size_t i = 0; i < _SIM_FW_MAX; i++)
                d->fw[i] = g->fw[i] == g->prod->fw[i] ? UINT32_MAX : g->fw[i];
        snprintf(d->bdf, sizeof(d->bdf), "%s", f->bdf);
        /* a VM's GPU is described by the product its VF was made of */
        snprintf(d->product, sizeof(d->product), "%s",
                 (g->host_prod ? g->host_prod : g->prod)->name);
}

/* ---------------------------------------------------------------------------------------- */
/* Building the machine */

static int bdf_parse(const char *s, struct sim_func *f) {
        unsigned dom, bus, dev, fn;

        if (sscanf(s, "%x:%x:%x.%x", &dom, &bus, &dev, &fn) != 4)
                return -EINVAL;
        f->domain = dom;
        f->bus = (uint8_t) bus;
        f->dev = (uint8_t) dev;
        f->fn = (uint8_t) fn;
        snprintf(f->bdf, sizeof(f->bdf), "%04x:%02x:%02x.%x", dom, bus, dev, fn);
        return 0;
}

static int bdf_cmp(const struct sim_func *a, const struct sim_func *b) {
        if (a->domain != b->domain)
                return a->domain < b->domain ? -1 : 1;
        if (a->bus != b->bus)
                return a->bus < b->bus ? -1 : 1;
        if (a->dev != b->dev)
                return a->dev < b->dev ? -1 : 1;
        return a->fn < b->fn ? -1 : a->fn > b->fn;
}

static int func_cmp(const void *a, const void *b) {
        return bdf_cmp(*(struct sim_func *const *) a, *(struct sim_func *const *) b);
}

struct sim_func *sim_machine_func(struct sim_machine *m, const char *bdf) {
        for (size_t i = 0; i < m->n_funcs; i++)
                if (!m->funcs[i]->unplugged && sysfs_streq(m->funcs[i]->bdf, bdf))
                        return m->funcs[i];
        return NULL;
}

struct sim_gpu *sim_machine_gpu(struct sim_machine *m, const char *bdf) {
        struct sim_func *f = sim_machine_func(m, bdf);

        return f ? f->gpu : NULL;
}

struct func_template {
        enum sim_func_kind kind;
        uint16_t vendor, device, subsystem_vendor, subsystem_device;
        uint8_t revision;
        uint32_t class_code;
        int driver;
        const char *speed;
        unsigned width;
};

static const struct func_template tmpl_root_port = {
        SIM_FUNC_ROOT_PORT, 0x1022,           0x14ab,           0x1022, 0x1453, 0x00,
        0x060400,           SIM_DRV_PCIEPORT, "32.0 GT/s PCIe", 16,
};
static const struct func_template tmpl_switch_up = {
        SIM_FUNC_SWITCH_UP, 0x1000,           0xc030,           0x1000, 0x100b, 0xb0,
        0x060400,           SIM_DRV_PCIEPORT, "32.0 GT/s PCIe", 16,
};
static const struct func_template tmpl_switch_down = {
        SIM_FUNC_SWITCH_DOWN, 0x1000,           0xc030, 0x1000, 0x100b, 0xb0, 0x060400,
        SIM_DRV_PCIEPORT,     "32.0 GT/s PCIe", 16,
};
static const struct func_template tmpl_df = {
        SIM_FUNC_DF, 0x1022, 0x14f3, 0x1022, 0x14f3, 0x00, 0x060000, SIM_DRV_K10TEMP, NULL, 0,
};
static const struct func_template tmpl_bmc_port = {
        SIM_FUNC_ROOT_PORT, 0x1022,           0x14a7,          0x1022, 0x1453, 0x00,
        0x060400,           SIM_DRV_PCIEPORT, "8.0 GT/s PCIe", 1,
};
static const struct func_template tmpl_bmc_bridge = {
        SIM_FUNC_BMC_BRIDGE, 0x1a03,          0x1150, 0x1a03, 0x1150, 0x06, 0x060400,
        SIM_DRV_NONE,        "5.0 GT/s PCIe", 1,
};
/* QEMU's pcie-root-port, in front of each device a VM is given (4.0 and later: 16 GT/s x32) */
static const struct func_template tmpl_qemu_root_port = {
        SIM_FUNC_ROOT_PORT, 0x1b36,           0x000c,           0x1af4, 0x1100, 0x00,
        0x060400,           SIM_DRV_PCIEPORT, "16.0 GT/s PCIe", 32,
};
static const struct func_template tmpl_bmc_vga = {
        SIM_FUNC_BMC_VGA, 0x1a03, 0x2000, 0x1a03, 0x2000, 0x52, 0x030000, SIM_DRV_AST, NULL, 0,
};

/* Adds a function; a root port already there (shared by GPUs) is returned again. */
static int add_func(struct sim_machine *m, const struct func_template *t, const char *bdf,
                    struct sim_func *upstream, int numa, const char *origin, const char *path,
                    struct sim_func **ret) {
        struct sim_func probe = { 0 }, *f, **arr;

        if (bdf_parse(bdf, &probe) < 0)
                return -EINVAL;
        f = sim_machine_func(m, probe.bdf);
        if (f) {
                if (f->kind == t->kind && f->kind == SIM_FUNC_ROOT_PORT &&
                    f->upstream == upstream) {
                        *ret = f;
                        return 0;
                }
                return desc_fail(origin, path, "PCI address %s is taken (by a %s)", probe.bdf,
                                 f->gpu ? "GPU" : "bridge or another device");
        }
        f = calloc(1, sizeof(*f));
        arr = realloc(m->funcs, (m->n_funcs + 1) * sizeof(*arr));
        if (!f || !arr) {
                free(f);
                if (arr)
                        m->funcs = arr;
                return -ENOMEM;
        }
        m->funcs = arr;
        *f = probe;
        f->m = m;
        f->kind = t->kind;
        f->upstream = upstream;
        f->vendor = t->vendor;
        f->device = t->device;
        f->subsystem_vendor = t->subsystem_vendor;
        f->subsystem_device = t->subsystem_device;
        f->revision = t->revision;
        f->class_code = t->class_code;
        f->driver = t->driver;
        f->pcie = t->speed != NULL;
        f->link_speed = f->link_speed_max = t->speed;
        f->link_width = f->link_width_max = t->width;
        f->numa_node = numa;
        f->enable_cnt = t->driver != SIM_DRV_NONE;
        f->hwmon = -1;
        f->card = -1;
        m->funcs[m->n_funcs++] = f;
        *ret = f;
        return 0;
}

static int func_path(struct sim_func *f) {
        if (f->path)
                return 0;
        if (f->upstream) {
                int r = func_path(f->upstream);

                if (r < 0)
                        return r;
                f->path = strdupf("%s/%s", f->upstream->path, f->bdf);
        } else
                f->path = strdupf("devices/pci%04x:%02x/%s", f->domain, f->bus, f->bdf);
        return f->path ? 0 : -ENOMEM;
}

static uint64_t pow2_at_least(uint64_t v) {
        uint64_t p = 1;

        while (p < v)
                p <<= 1;
        return p;
}

static const struct sim_product *machine_product(struct sim_machine *m, const char *name,
                                                 int *err) {
        struct sim_product *p, **arr;

        *err = 0;
        for (size_t i = 0; i < m->n_products; i++)
                if (streq(m->products[i]->name, name))
                        return m->products[i];
        for (size_t i = 0; i < sim_n_builtin_products; i++) {
                if (!streq(sim_builtin_products[i].name, name))
                        continue;
                arr = realloc(m->products, (m->n_products + 1) * sizeof(*arr));
                if (!arr) {
                        *err = -ENOMEM;
                        return NULL;
                }
                m->products = arr;
                *err = sim_product_copy(&sim_builtin_products[i], name, &p);
                if (*err < 0)
                        return NULL;
                m->products[m->n_products++] = p;
                return p;
        }
        return NULL;
}

/* ---------------------------------------------------------------------------------------- */
/* SR-IOV roles (rule-sriov.c has the behaviour) */

/* The PF's SR-IOV capability: VF i at devfn PF + 16 + i (offset 16, stride 1: the gim CLI's
 * example places VF0 of PF 0c:00.0 at 0c:02.0; the stride is unverified). */
#define VF_OFFSET 16
#define VF_STRIDE 1
/* gim keeps up to 1 GiB of the framebuffer for the PF (pf_fb_size at most); a VF's share is
 * aligned down to 512 MiB. */
#define PF_FB_RESERVED (1ULL << 30)
#define VF_FB_ALIGN (512ULL << 20)
/* KFD capability: per-queue reset, cleared inside a VF (§7.2) */
#define KFD_CAP_PER_QUEUE_RESET 0x80000000u

uint64_t sim_vf_vram_bytes(const struct sim_product *p, unsigned vf_num) {
        if (p->vram_bytes <= 2 * PF_FB_RESERVED)
                return p->vram_bytes / MAX(vf_num, 1u) & ~4095ULL;
        return (p->vram_bytes - PF_FB_RESERVED) / MAX(vf_num, 1u) & ~(VF_FB_ALIGN - 1);
}

enum sim_compute sim_compute_of_parts(unsigned parts, unsigned xcc) {
        unsigned hw = sim_compute_supported(xcc);

        for (int mode = 0; mode < _SIM_COMPUTE_MAX; mode++)
                if ((hw & (1u << mode)) && sim_compute_parts((enum sim_compute) mode, xcc) == parts)
                        return (enum sim_compute) mode;
        return SIM_COMPUTE_UNKNOWN;
}

static bool role_guest(enum sim_role role) {
        return role == SIM_ROLE_GUEST_1VF || role == SIM_ROLE_GUEST_MULTIVF;
}

/* The role against the machine, the driver and the product; the VF count it implies. */
static int check_role(const struct sim_machine *m, const struct sim_gpu_desc *d,
                      const struct sim_product *prod, const char *path, const char *origin,
                      unsigned *ret_vf_num) {
        bool guest = role_guest(d->role);
        unsigned vf_num = d->vf_num;
        char sub[96];

        snprintf(sub, sizeof(sub), "%s.role", path);
        if (m->gim_host != (d->role == SIM_ROLE_HOST_PF))
                return desc_fail(origin, sub,
                                 "a gim host has host-pf GPUs only (amdgpu is not loaded there)");
        if (m->vm != guest)
                return desc_fail(origin, sub,
                                 "a VM has guest GPUs only (vf-guest-1vf, vf-guest-multi)");
        if (d->role != SIM_ROLE_BAREMETAL && (!prod->total_vfs || !prod->vf_device_id))
                return desc_fail(origin, sub, "a %s has no SR-IOV capability (total_vfs)",
                                 prod->name);
        snprintf(sub, sizeof(sub), "%s.driver", path);
        if (d->role == SIM_ROLE_BAREMETAL && d->driver == SIM_DRV_GIM)
                return desc_fail(origin, sub, "gim binds PFs of the host-pf role only");
        if (d->role == SIM_ROLE_HOST_PF && d->driver != SIM_DRV_GIM && d->driver != SIM_DRV_NONE)
                return desc_fail(origin, sub, "a host-pf GPU is bound to gim or to none");
        if (guest && d->driver != SIM_DRV_AMDGPU && d->driver != SIM_DRV_NONE)
                return desc_fail(origin, sub, "a VF in a VM is bound to amdgpu or to none");

        snprintf(sub, sizeof(sub), "%s.vf_num", path);
        switch (d->role) {
        case SIM_ROLE_BAREMETAL:
                if (vf_num)
                        return desc_fail(origin, sub,
                                         "gim's VF count is for host-pf and guest GPUs (a "
                                         "bare-metal PF takes sriov_numvfs)");
                *ret_vf_num = 0;
                return 0;
        case SIM_ROLE_GUEST_1VF:
                if (vf_num > 1)
                        return desc_fail(origin, sub, "one-VF mode means the host made 1 VF");
                vf_num = 1;
                break;
        case SIM_ROLE_GUEST_MULTIVF:
                if (!vf_num)
                        vf_num = prod->xcc;
                if (vf_num < 2)
                        return desc_fail(origin, sub, "multi-VF mode means 2 VFs or more");
                break;
        default:
                if (!vf_num)
                        vf_num = 1;
                break;
        }
        if (vf_num > prod->total_vfs || prod->xcc % vf_num != 0 ||
            sim_compute_of_parts(vf_num, prod->xcc) == SIM_COMPUTE_UNKNOWN)
                return desc_fail(origin, sub,
                                 "%u VFs: gim makes one VF per compute partition of a %s "
                                 "(at most %u)",
                                 vf_num, prod->name, MIN((unsigned) prod->total_vfs, prod->xcc));
        *ret_vf_num = vf_num;
        return 0;
}

/* What a VM sees of a GPU the host made @vf_num VFs of: the VF ID, its share of the XCCs,
 * engines and memory, no FRU, a fixed NPS1, no per-queue reset (§7.2). */
static int vf_product(const struct sim_machine *m, const struct sim_product *host, unsigned vf_num,
                      struct sim_product **ret) {
        uint64_t ram = m->cpu.memory_bytes_per_socket * m->cpu.sockets;
        struct sim_product *p;
        int r = sim_product_copy(host, host->name, &p);

        if (r < 0)
                return r;
        p->device_id = host->vf_device_id;
        p->vf_device_id = 0;
        p->total_vfs = 0;
        p->xcc = host->xcc / vf_num;
        p->vram_bytes = p->kfd_memory_bytes = sim_vf_vram_bytes(host, vf_num);
        p->gtt_bytes = MIN(host->gtt_bytes, ram / 2); /* TTM's default: half the RAM */
        p->nps_supported = 0;
        p->fru = false;
        p->sdma_engines = MAX(host->sdma_engines / vf_num, 1u);
        p->vcn = MAX(host->vcn / vf_num, 1u);
        p->kfd_capability &= ~KFD_CAP_PER_QUEUE_RESET;
        *ret = p;
        return 0;
}

static int build_gpu(struct sim_machine *m, struct sim_gpu_desc *d, size_t idx,
                     const char *origin) {
        char path[64], sub[96];
        const struct sim_product *prod;
        struct sim_func *up = NULL, *f;
        struct sim_gpu *g;
        enum sim_compute fixed = SIM_COMPUTE_UNKNOWN;
        unsigned vf_num = 0;
        int r, numa;

        snprintf(path, sizeof(path), "gpus[%zu]", idx);
        if (!d->bdf[0])
                return desc_fail(origin, path, "\"bdf\" is missing");
        if (!d->product[0])
                return desc_fail(origin, path, "\"product\" is missing (here or in gpu_defaults)");
        prod = machine_product(m, d->product, &r);
        if (r < 0)
                return r;
        snprintf(sub, sizeof(sub), "%s.product", path);
        if (!prod)
                return desc_fail(origin, sub, "\"%s\" is not a product (built-in or in products)",
                                 d->product);
        r = check_role(m, d, prod, path, origin, &vf_num);
        if (r < 0)
                return r;
        numa = d->numa_node != INT_MIN ? d->numa_node
               : m->vm                 ? -1
                                       : (int) (idx * m->cpu.sockets / m->n_gpus);
        snprintf(sub, sizeof(sub), "%s.numa_node", path);
        if (numa >= (int) m->cpu.sockets)
                return desc_fail(origin, sub, "%d, but the machine has %u NUMA nodes", numa,
                                 m->cpu.sockets);

        /* the PCIe path: root port -> switch -> GPU (dGPU), root port -> GPU (APU) */
        {
                struct sim_func probe;
                char bdf[16];

                bdf_parse(d->bdf, &probe);
                snprintf(sub, sizeof(sub), "%s.bdf", path);
                if (sim_machine_func(m, probe.bdf))
                        return desc_fail(origin, sub,
                                         "%s is taken (a GPU or a bridge in front of one)",
                                         probe.bdf);
                if (m->vm) {
                        /* libvirt's layout: bus 01 behind 00:02.0, bus 02 behind 00:02.1... */
                        unsigned port = 0x10 + probe.bus - 1u;

                        if (probe.bus == 0 || port > 0xff)
                                return desc_fail(origin, sub,
                                                 "a VM's device sits behind a root port, on "
                                                 "bus 01 to f0");
                        snprintf(bdf, sizeof(bdf), "%04x:00:%02x.%x", probe.domain, port >> 3,
                                 port & 7);
                        r = add_func(m, &tmpl_qemu_root_port, bdf, NULL, numa, origin, sub, &up);
                } else if (prod->apu) {
                        snprintf(bdf, sizeof(bdf), "%04x:00:01.1", probe.domain);
                        if (probe.bus == 0)
                                return desc_fail(origin, sub,
                                                 "an APU sits behind a root port on "
                                                 "a bus above 00");
                        r = add_func(m, &tmpl_root_port, bdf, NULL, numa, origin, sub, &up);
                } else {
                        if (probe.bus < 3 || (probe.bus & 0xf0) + 2 >= probe.bus)
                                return desc_fail(origin, sub,
                                                 "bus %02x leaves no room for the root "
                                                 "port and PCIe switch in front of it",
                                                 probe.bus);
                        snprintf(bdf, sizeof(bdf), "%04x:%02x:01.1", probe.domain,
                                 probe.bus & 0xf0);
                        r = add_func(m, &tmpl_root_port, bdf, NULL, numa, origin, sub, &up);
                        if (r >= 0) {
                                snprintf(bdf, sizeof(bdf), "%04x:%02x:00.0", probe.domain,
                                         probe.bus - 2);
                                r = add_func(m, &tmpl_switch_up, bdf, up, numa, origin, sub, &up);
                        }
                        if (r >= 0) {
                                snprintf(bdf, sizeof(bdf), "%04x:%02x:00.0", probe.domain,
                                         probe.bus - 1);
                                r = add_func(m, &tmpl_switch_down, bdf, up, numa, origin, sub, &up);
                        }
                }
                if (r < 0)
                        return r;
        }
        {
                struct func_template t = {
                        SIM_FUNC_GPU,           0x1002,
                        prod->device_id,        prod->subsystem_vendor,
                        prod->subsystem_device, prod->revision,
                        prod->pci_class,        d->driver,
                        "32.0 GT/s PCIe",       16,
                };

                r = add_func(m, &t, d->bdf, up, numa, origin, sub, &f);
                if (r < 0)
                        return r;
        }
        if (d->link_speed)
                f->link_speed = d->link_speed;
        if (d->link_speed_max)
                f->link_speed_max = d->link_speed_max;
        if (d->link_width)
                f->link_width = d->link_width;
        if (d->link_width_max)
                f->link_width_max = d->link_width_max;

        g = calloc(1, sizeof(*g));
        if (!g)
                return -ENOMEM;
        f->gpu = g;
        g->m = m;
        g->func = f;
        g->prod = prod;
        g->role = d->role;
        g->vf_num = vf_num;
        g->self_switch = vf_num > 1; /* gim: world switch off for 1 VF (the VF's PP one-VF mode) */
        if (role_guest(d->role)) {
                struct sim_product *vp;

                r = vf_product(m, prod, vf_num, &vp);
                if (r < 0)
                        return r;
                g->host_prod = prod;
                g->prod = prod = vp;
                f->device = vp->device_id;
                /* the VF is one partition: named by its XCCs per partition (SPX, CPX for 1) */
                fixed = vp->xcc == 1 ? SIM_CPX : SIM_SPX;
        } else if (d->role == SIM_ROLE_HOST_PF)
                fixed = sim_compute_of_parts(vf_num, prod->xcc);
        /* the firmware it runs: the product's, with the machine's per-GPU override */
        for (size_t i = 0; i < _SIM_FW_MAX; i++)
                g->fw[i] = d->fw[i] != UINT32_MAX ? d->fw[i] : prod->fw[i];
        if (d->iommu_group_with) {
                g->iommu_group_with = strdup(d->iommu_group_with);
                if (!g->iommu_group_with)
                        return -ENOMEM;
        }
        if (prod->total_vfs && !g->host_prod) {
                f->sriov = calloc(1, sizeof(*f->sriov));
                if (!f->sriov)
                        return -ENOMEM;
                *f->sriov = (struct sim_sriov){
                        .total_vfs = prod->total_vfs,
                        .offset = VF_OFFSET,
                        .stride = VF_STRIDE,
                        .vf_device = prod->vf_device_id,
                        .drivers_autoprobe = true,
                };
        }
        g->hive_id = d->hive_id;
        g->unique_id =
                d->unique_id != UINT64_MAX
                        ? d->unique_id
                        : sim_hash3(0x756e697175650000ULL, idx, m->n_gpus) & 0x7fffffffffffffffULL;
        if (d->serial)
                g->serial = strdup(d->serial);
        else if (prod->fru && prod->serial_prefix)
                g->serial = strdupf("%s%02zu", prod->serial_prefix, idx);
        else
                g->serial = strdupf("%" PRIx64, g->unique_id);
        if (!g->serial)
                return -ENOMEM;

        /* memory and compute partitions */
        g->nps_supported = d->nps_supported != UINT_MAX ? d->nps_supported : prod->nps_supported;
        snprintf(sub, sizeof(sub), "%s.nps_supported", path);
        if (prod->apu && g->nps_supported)
                return desc_fail(origin, sub, "an APU has its NPS mode fixed by the BIOS: []");
        if (g->host_prod && g->nps_supported)
                return desc_fail(origin, sub, "a VF sees one memory range, NPS1: []");
        g->nps_current = d->nps_current ? d->nps_current : 1;
        /* gim's pairs: 1 VF SPX-NPS1, 8 VFs CPX-NPS4 */
        if (!d->nps_current && d->role == SIM_ROLE_HOST_PF && fixed == SIM_CPX &&
            (g->nps_supported & SIM_NPS_BIT(4)))
                g->nps_current = 4;
        snprintf(sub, sizeof(sub), "%s.memory_partition", path);
        if (g->nps_supported ? !(g->nps_supported & SIM_NPS_BIT(g->nps_current))
                             : g->nps_current != 1)
                return desc_fail(origin, sub, "NPS%u is not among the supported modes",
                                 g->nps_current);
        g->nps_requested = d->nps_requested;
        snprintf(sub, sizeof(sub), "%s.memory_partition_requested", path);
        if (g->nps_requested && !(g->nps_supported & SIM_NPS_BIT(g->nps_requested)))
                return desc_fail(origin, sub, "NPS%u is not among the supported modes",
                                 g->nps_requested);
        if (g->nps_requested == g->nps_current && g->nps_requested)
                return desc_fail(origin, sub, "NPS%u is the current mode already",
                                 g->nps_requested);
        if (g->nps_requested && d->role != SIM_ROLE_BAREMETAL)
                return desc_fail(origin, sub, "a request is amdgpu's: bare metal only");
        g->compute = d->compute != SIM_COMPUTE_UNKNOWN ? d->compute
                                                       : sim_compute_auto(g, g->nps_current);
        snprintf(sub, sizeof(sub), "%s.compute_partition", path);
        if (fixed != SIM_COMPUTE_UNKNOWN) {
                if (d->compute != SIM_COMPUTE_UNKNOWN && d->compute != fixed)
                        return desc_fail(origin, sub, "%s follows from %u VFs: leave it out",
                                         sim_compute_names[fixed], vf_num);
                g->compute = fixed;
        }
        if (g->compute == SIM_COMPUTE_UNKNOWN)
                return desc_fail(origin, sub, "no compute mode follows from NPS%u; name one",
                                 g->nps_current);
        if (!g->host_prod && !(sim_compute_available(g, g->nps_current) & (1u << g->compute)))
                return desc_fail(origin, sub, "%s is not available with NPS%u on a %s",
                                 sim_compute_names[g->compute], g->nps_current, prod->name);
        g->kfd_users = d->kfd_users;
        g->in_reset = d->in_reset;

        /* RAS: counts of blocks with RAS, pages within VRAM */
        r = sim_ras_preset_copy(&d->ras, &g->ras_preset);
        if (r < 0)
                return r;
        for (int b = 0; b < _SIM_RAS_BLOCK_MAX; b++)
                if ((g->ras_preset.counts[b][0] || g->ras_preset.counts[b][1] ||
                     g->ras_preset.counts[b][2]) &&
                    !(sim_ras_blocks(g) & (1u << b))) {
                        snprintf(sub, sizeof(sub), "%s.ras.counts.%s", path,
                                 sim_ras_block_names[b]);
                        return desc_fail(origin, sub, "this GPU has no RAS on %s",
                                         sim_ras_block_names[b]);
                }
        for (size_t i = 0; i < g->ras_preset.n_pages; i++)
                if ((uint64_t) g->ras_preset.pages[i].pfn >= prod->vram_bytes / 4096) {
                        snprintf(sub, sizeof(sub), "%.40s.ras.bad_pages[%zu].pfn", path,
                                 i % 100000);
                        return desc_fail(origin, sub, "page 0x%08x is beyond the VRAM",
                                         g->ras_preset.pages[i].pfn);
                }

        /* power */
        g->cap_limits_w = prod->power_cap_w;
        if (d->cap_limits_w.min != UINT32_MAX)
                g->cap_limits_w.min = d->cap_limits_w.min;
        if (d->cap_limits_w.max != UINT32_MAX)
                g->cap_limits_w.max = d->cap_limits_w.max;
        if (d->cap_limits_w.def != UINT32_MAX)
                g->cap_limits_w.def = d->cap_limits_w.def;
        snprintf(sub, sizeof(sub), "%s.power_cap_limits_w", path);
        r = check_limits(&g->cap_limits_w, origin, sub);
        if (r < 0)
                return r;
        g->cap_w = d->cap_w != UINT32_MAX ? d->cap_w : g->cap_limits_w.def;
        snprintf(sub, sizeof(sub), "%s.power_cap_w", path);
        if (g->cap_w < MAX(g->cap_limits_w.min, 1u) || g->cap_w > g->cap_limits_w.max)
                return desc_fail(origin, sub, "%u W is out of range [%u, %u]", g->cap_w,
                                 MAX(g->cap_limits_w.min, 1u), g->cap_limits_w.max);
        if (prod->ppt1) {
                g->ppt1_limits_w = prod->ppt1_w;
                if (d->ppt1_limits_w.min != UINT32_MAX)
                        g->ppt1_limits_w.min = d->ppt1_limits_w.min;
                if (d->ppt1_limits_w.max != UINT32_MAX)
                        g->ppt1_limits_w.max = d->ppt1_limits_w.max;
                if (d->ppt1_limits_w.def != UINT32_MAX)
                        g->ppt1_limits_w.def = d->ppt1_limits_w.def;
                snprintf(sub, sizeof(sub), "%s.ppt1_limits_w", path);
                r = check_limits(&g->ppt1_limits_w, origin, sub);
                if (r < 0)
                        return r;
                g->ppt1_cap_w = d->ppt1_cap_w != UINT32_MAX ? d->ppt1_cap_w : g->ppt1_limits_w.def;
                snprintf(sub, sizeof(sub), "%s.ppt1_cap_w", path);
                if (g->ppt1_cap_w < MAX(g->ppt1_limits_w.min, 1u) ||
                    g->ppt1_cap_w > g->ppt1_limits_w.max)
                        return desc_fail(origin, sub, "%u W is out of range [%u, %u]",
                                         g->ppt1_cap_w, MAX(g->ppt1_limits_w.min, 1u),
                                         g->ppt1_limits_w.max);
        } else {
                bool zero_limits = (d->ppt1_limits_w.min == UINT32_MAX || !d->ppt1_limits_w.min) &&
                                   (d->ppt1_limits_w.max == UINT32_MAX || !d->ppt1_limits_w.max) &&
                                   (d->ppt1_limits_w.def == UINT32_MAX || !d->ppt1_limits_w.def);

                snprintf(sub, sizeof(sub), "%s.ppt1_cap_w", path);
                if ((d->ppt1_cap_w != UINT32_MAX && d->ppt1_cap_w) || !zero_limits)
                        return desc_fail(origin, sub, "a %s has no PPT1 limit (leave it 0)",
                                         prod->name);
        }
        g->platform_limit_w = d->platform_limit_w;
        snprintf(sub, sizeof(sub), "%s.platform_limit_w", path);
        if (g->platform_limit_w == 0)
                return desc_fail(origin, sub, "0 W: use null for no platform limit");
        g->metrics_rev = d->metrics_rev ? d->metrics_rev : m->kernel.gpu_metrics_revision;
        snprintf(sub, sizeof(sub), "%s.gpu_metrics_revision", path);
        if (g->metrics_rev != 9 && sim_metrics_size(g->metrics_rev) == 0)
                return desc_fail(origin, sub, "revision 1.%u is not emitted", g->metrics_rev);
        /* the layout of revision 9's kernel (kept, unused, for the older revisions) */
        g->metrics_layout = d->metrics_layout ? d->metrics_layout : m->kernel.gpu_metrics_layout;

        /* sensors at step 0 */
        g->sensors = d->sensors;
        if (g->sensors.power_w == UINT_MAX)
                g->sensors.power_w =
                        MIN(prod->idle_power_w + 13 * (unsigned) idx, sim_gpu_effective_cap_w(g));
        if (g->sensors.junction_c == UINT_MAX)
                g->sensors.junction_c = 38 + 3 * (unsigned) idx % 30;
        if (g->sensors.mem_c == UINT_MAX)
                g->sensors.mem_c = g->sensors.junction_c + 1;
        if (g->sensors.sclk_mhz == UINT_MAX)
                g->sensors.sclk_mhz = CLAMP(1200 + 37 * (unsigned) idx, prod->sclk.mhz[0],
                                            prod->sclk.mhz[prod->sclk.n - 1]);
        if (g->sensors.mclk_mhz == UINT_MAX)
                g->sensors.mclk_mhz = prod->mclk.mhz[(idx + 2) % prod->mclk.n];
        if (g->sensors.gpu_busy_percent == UINT_MAX)
                g->sensors.gpu_busy_percent = (5 + 11 * (unsigned) idx) % 100;
        if (g->sensors.mem_busy_percent == UINT_MAX)
                g->sensors.mem_busy_percent = (2 + 7 * (unsigned) idx) % 100;
        if (g->sensors.vram_used_bytes == UINT64_MAX)
                g->sensors.vram_used_bytes = (300ULL + 17 * idx) << 20;
        snprintf(sub, sizeof(sub), "%s.sensors.vram_used_bytes", path);
        if (g->sensors.vram_used_bytes > prod->vram_bytes && !prod->apu)
                return desc_fail(origin, sub, "more than the VRAM");
        return 0;
}

static int build_platform(struct sim_machine *m, const char *origin) {
        struct sim_func *f;
        int r;

        if (m->vm && m->bmc_vga)
                return desc_fail(origin, "bmc_vga", "a VM has no BMC");
        for (unsigned s = 0; s < m->cpu.sockets && !m->vm; s++) {
                char bdf[16];

                snprintf(bdf, sizeof(bdf), "0000:00:%02x.3", 0x18 + s);
                r = add_func(m, &tmpl_df, bdf, NULL, (int) s, origin, "cpu.sockets", &f);
                if (r < 0)
                        return r;
        }
        if (m->bmc_vga) {
                struct sim_func *port, *bridge;

                r = add_func(m, &tmpl_bmc_port, "0000:00:07.1", NULL, 0, origin, "bmc_vga", &port);
                if (r >= 0)
                        r = add_func(m, &tmpl_bmc_bridge, "0000:01:00.0", port, 0, origin,
                                     "bmc_vga", &bridge);
                if (r >= 0)
                        r = add_func(m, &tmpl_bmc_vga, "0000:02:00.0", bridge, 0, origin, "bmc_vga",
                                     &f);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int add_dynid(struct sim_machine *m, int drv, unsigned vendor, unsigned device) {
        for (unsigned i = 0; i < m->n_dynids[drv]; i++)
                if (m->dynids[drv][i].vendor == vendor && m->dynids[drv][i].device == device)
                        return 0;
        if (m->n_dynids[drv] == ELEMENTSOF(m->dynids[drv]))
                return -ENOSPC;
        m->dynids[drv][m->n_dynids[drv]].vendor = (uint16_t) vendor;
        m->dynids[drv][m->n_dynids[drv]].device = (uint16_t) device;
        m->n_dynids[drv]++;
        return 0;
}

/* What SR-IOV needs of the machine: room for every PF's VFs, vfio-pci's IDs, gim's IDs. */
static int check_sriov(struct sim_machine *m, const struct sim_machine_desc *md,
                       const char *origin) {
        const char *ids = m->kernel.vfio_pci_ids;

        for (size_t i = 0; i < md->n_gpus; i++) {
                struct sim_func *f = sim_machine_func(m, md->gpus[i].bdf);
                char path[64];

                if (!f || !f->sriov)
                        continue;
                snprintf(path, sizeof(path), "gpus[%zu].bdf", i);
                for (unsigned v = 0; v < f->sriov->total_vfs; v++) {
                        unsigned devfn = (unsigned) (f->dev << 3 | f->fn) + f->sriov->offset +
                                         f->sriov->stride * v;
                        char bdf[32];

                        snprintf(bdf, sizeof(bdf), "%04x:%02x:%02x.%x", f->domain & 0xffff,
                                 (f->bus + (devfn >> 8)) & 0x1ff, (devfn >> 3) & 0x1f, devfn & 7);
                        if (f->bus + (devfn >> 8) > 0xff || sim_machine_func(m, bdf))
                                return desc_fail(origin, path,
                                                 "VF %u of %s would be at %s, which is taken", v,
                                                 f->bdf, bdf);
                }
                if (f->gpu->role == SIM_ROLE_HOST_PF &&
                    add_dynid(m, SIM_DRV_GIM, f->vendor, f->device) < 0)
                        return desc_fail(origin, path, "too many GPU IDs for gim");
        }
        /* the CPER ring's pointers are masks of its dword count */
        if (m->kernel.cper_ring_bytes & (m->kernel.cper_ring_bytes - 1))
                return desc_fail(origin, "kernel.cper_ring_bytes", "%u is not a power of two",
                                 m->kernel.cper_ring_bytes);
        /* vfio-pci.ids: the IDs vfio-pci claims from its load on (dynamic IDs) */
        while (ids && *ids) {
                unsigned vendor, device;
                int n = 0;

                if (sscanf(ids, "%4x:%4x%n", &vendor, &device, &n) != 2 ||
                    (ids[n] && ids[n] != ','))
                        return desc_fail(origin, "kernel.vfio_pci_ids",
                                         "\"%s\" is not VENDOR:DEVICE[,VENDOR:DEVICE...] in "
                                         "hexadecimal",
                                         m->kernel.vfio_pci_ids);
                if (add_dynid(m, SIM_DRV_VFIO_PCI, vendor, device) < 0)
                        return desc_fail(origin, "kernel.vfio_pci_ids", "16 IDs at most");
                ids += n + (ids[n] == ',');
        }
        return 0;
}

int sim_machine_build(struct sim_machine_desc *md, const char *origin, struct sim_machine **ret) {
        struct sim_machine *m = calloc(1, sizeof(*m));
        uint64_t high = 0x100000000000ULL;
        size_t n_gpus = 0;
        int r;

        if (!m)
                return -ENOMEM;
        m->name = md->name ? TAKE_PTR(md->name) : strdup("custom");
        m->description = md->description ? TAKE_PTR(md->description) : strdup("");
        m->kernel = md->kernel;
        md->kernel.vfio_pci_ids = NULL;
        m->cpu = md->cpu;
        r = host_take(&md->host, &m->host);
        if (r < 0)
                goto fail;
        m->bmc_vga = md->bmc_vga;
        m->products = TAKE_PTR(md->products);
        m->n_products = md->n_products;
        md->n_products = 0;
        m->n_gpus = md->n_gpus;
        m->gpus = calloc(md->n_gpus, sizeof(*m->gpus));
        clock_gettime(CLOCK_MONOTONIC, &m->start);
        if (!m->name || !m->description || !m->gpus) {
                r = -ENOMEM;
                goto fail;
        }

        for (size_t i = 0; i < md->n_gpus; i++) {
                m->gim_host |= md->gpus[i].role == SIM_ROLE_HOST_PF;
                m->vm |= role_guest(md->gpus[i].role);
        }

        /* The platform's own functions first: a GPU that collides with them is named. */
        r = build_platform(m, origin);
        if (r < 0)
                goto fail;
        for (size_t i = 0; i < md->n_gpus; i++) {
                for (size_t j = 0; j < i; j++)
                        if (streq(md->gpus[i].bdf, md->gpus[j].bdf)) {
                                char path[64];

                                snprintf(path, sizeof(path), "gpus[%zu].bdf", i);
                                r = desc_fail(origin, path, "%s is also gpus[%zu]", md->gpus[i].bdf,
                                              j);
                                goto fail;
                        }
                r = build_gpu(m, &md->gpus[i], i, origin);
                if (r < 0)
                        goto fail;
        }
        qsort(m->funcs, m->n_funcs, sizeof(*m->funcs), func_cmp);
        r = check_sriov(m, md, origin);
        if (r < 0)
                goto fail;

        /* GPUs in probe order; the hive's pending request is one for all of it */
        for (size_t i = 0; i < m->n_funcs; i++)
                if (m->funcs[i]->gpu) {
                        m->gpus[n_gpus] = m->funcs[i]->gpu;
                        m->gpus[n_gpus]->index = (unsigned) n_gpus;
                        n_gpus++;
                }
        for (size_t i = 0; i < m->n_gpus; i++)
                for (size_t j = 0; j < i; j++) {
                        struct sim_gpu *a = m->gpus[i], *b = m->gpus[j];

                        if (a->hive_id && a->hive_id == b->hive_id &&
                            a->nps_requested != b->nps_requested) {
                                r = desc_fail(origin, "gpus",
                                              "%s and %s share XGMI hive 0x%016" PRIx64
                                              " but not memory_partition_requested (the request "
                                              "is hive-wide)",
                                              b->func->bdf, a->func->bdf, a->hive_id);
                                goto fail;
                        }
                }

        for (size_t i = 0; i < m->n_funcs; i++) {
                struct sim_func *f = m->funcs[i];

                r = func_path(f);
                if (r < 0)
                        goto fail;
                f->iommu_group = (unsigned) i;
                f->irq = 24 + (unsigned) i;
                if (f->gpu && f->gpu->iommu_group_with)
                        continue; /* below: the group of the function it names */
                if (f->gpu) {
                        uint64_t fb = pow2_at_least(f->gpu->prod->vram_bytes);

                        f->bar_start[0] = high;
                        f->bar_size[0] = fb;
                        f->bar_start[2] = high + fb;
                        f->bar_size[2] = 2ULL << 20;
                        f->bar_start[5] = 0xc0000000ULL + (uint64_t) f->gpu->index * 0x100000;
                        f->bar_size[5] = 512ULL << 10;
                        high += fb * 2;
                } else if (f->kind == SIM_FUNC_BMC_VGA) {
                        f->bar_start[0] = 0xe0000000ULL;
                        f->bar_size[0] = 64ULL << 20;
                        f->bar_start[1] = 0xe4000000ULL;
                        f->bar_size[1] = 256ULL << 10;
                }
        }
        r = host_check(m, origin);
        if (r < 0)
                goto fail;
        *ret = m;
        return 0;

fail:
        sim_machine_free(m);
        return r;
}

void sim_func_free(struct sim_func *f) {
        if (!f)
                return;
        if (f->gpu) {
                if (f->gpu->host_prod)
                        sim_product_free((struct sim_product *) f->gpu->prod);
                free(f->gpu->owned);
                free(f->gpu->serial);
                free(f->gpu->iommu_group_with);
                sim_ras_free(f->gpu);
                free(f->gpu);
        }
        if (f->sriov)
                free(f->sriov->vfs);
        free(f->sriov);
        free(f->driver_override);
        free(f->path);
        free(f);
}

int sim_machine_add_func(struct sim_machine *m, struct sim_func *f) {
        struct sim_func **arr = realloc(m->funcs, (m->n_funcs + 1) * sizeof(*arr));
        size_t at = m->n_funcs;

        if (!arr)
                return -ENOMEM;
        m->funcs = arr;
        while (at > 0 && bdf_cmp(arr[at - 1], f) > 0)
                at--;
        memmove(arr + at + 1, arr + at, (m->n_funcs - at) * sizeof(*arr));
        arr[at] = f;
        m->n_funcs++;
        return 0;
}

void sim_machine_del_func(struct sim_machine *m, struct sim_func *f) {
        for (size_t i = 0; i < m->n_funcs; i++)
                if (m->funcs[i] == f) {
                        memmove(m->funcs + i, m->funcs + i + 1,
                                (m->n_funcs - i - 1) * sizeof(*m->funcs));
                        m->n_funcs--;
                        return;
                }
}

struct sim_machine *sim_machine_free(struct sim_machine *m) {
        if (!m)
                return NULL;
        for (size_t i = 0; i < m->n_funcs; i++)
                sim_func_free(m->funcs[i]);
        free(m->funcs);
        free(m->kernel.vfio_pci_ids);
        host_done(&m->host);
        free(m->gpus);
        for (size_t i = 0; i < m->n_products; i++)
                sim_product_free(m->products[i]);
        free(m->products);
        free(m->name);
        free(m->description);
        free(m);
        return NULL;
}
