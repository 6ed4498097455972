/* SPDX-License-Identifier: MIT */
/*
 * amdsmi-sim: SR-IOV (spec amdgpu-sysfs.md §7, §9 rule 7; virtualization.md §1, §2).
 *
 * The PCI core's files on every PF with the SR-IOV capability, whatever its driver:
 * sriov_totalvfs, sriov_numvfs, sriov_offset, sriov_stride, sriov_vf_device (%x),
 * sriov_drivers_autoprobe and sriov_vf_total_msix (0: no driver here reports one). A write of
 * sriov_numvfs runs sriov_numvfs_store()'s checks in its order: kstrtou16 (any failure EINVAL),
 * above TotalVFs ERANGE, the current count (success, nothing happens), no driver bound ENOENT,
 * a driver without sriov_configure ENOENT (amdgpu and gim), 0 disables, a second enable while
 * VFs exist EBUSY, then the driver's sriov_configure. Drivers with one: vfio-pci (ENOENT from
 * its callback unless the machine loads it with enable_sriov) and, on the SYNTHETIC
 * mi300x-sriov machine (kernel.amdgpu_sriov_configure), amdgpu.
 *
 * Enabling makes VF i at PF devfn + 16 + i (offset 16, stride 1, on the PF's bus), with the PCI
 * core's files (config space as a VF: 0xffff IDs, zero BARs, no SR-IOV capability), its own
 * IOMMU group (the lowest free number; one device per group, so vfio-pci always finds it
 * viable), bus/pci/devices, physfn and the PF's virtfnN, and the write-only
 * sriov_vf_msix_count (EOPNOTSUPP: no PF driver here sets MSI-X counts). Each VF is then
 * probed like any new device, if the PF's sriov_drivers_autoprobe allows it (read at probe
 * time: with 0 a VF binds only through driver_override, also through bind and drivers_probe).
 * There is no VF driver on the host side: amdgpu does not claim host VFs (it is blacklisted
 * on SR-IOV hosts), so a VF binds to vfio-pci through vfio-pci.ids (kernel.vfio_pci_ids, or an
 * ID written to new_id) or driver_override, and stays unbound otherwise. VFs of a PF bound to
 * vfio-pci get driver_override "vfio-pci" when they appear, as vfio-pci's bus notifier does.
 *
 * Disabling removes every VF, unbinding its driver first, also vfio-pci: a VM holding the vfio
 * device is not modelled (the kernel would block the write until the VM lets the device go).
 * Every PF driver here disables SR-IOV in its remove (unbind), as vfio-pci and gim do.
 *
 * gim (host-pf GPUs): at probe it enables its vf_num VFs itself (the compute mode has one
 * partition per VF) and adds its files to the PF: self_switch 0600, reset_gpu 0400 (a read
 * "resets" the GPU), psp_vbflash_status 0444, accelerator_partition_profile 0600,
 * memory_partition_mode 0600, spatial_partition_mode, accelerator_partition_profile_config,
 * memory_partition_config and spatial_partition_caps 0400; self_switch, force_hot_reset and
 * live_update 0600 are attributes of the driver (bus/pci/drivers/gim/). Stores fail with
 * EINVAL only on unparsable input. A new accelerator profile (an index of
 * accelerator_partition_profile_config) or memory mode, when compatible (§2.3), tears every VF
 * down and enables one per partition again; anything else is a firmware failure that gim logs:
 * the write succeeds and nothing changes (read back). gim binds again in its vf_num mode.
 * module/gim/parameters/{vf_num,enabled_devices} show how it was loaded.
 */
#include <strings.h>

#include "parse.h"
#include "tree.h"

enum sriov_attr {
        SRIOV_TOTALVFS,
        SRIOV_NUMVFS,
        SRIOV_OFFSET,
        SRIOV_STRIDE,
        SRIOV_VF_DEVICE,
        SRIOV_AUTOPROBE,
        SRIOV_VF_TOTAL_MSIX,
        SRIOV_VF_MSIX_COUNT,
};

/* Host VF resources: the framebuffer BAR in a window of 1 TiB per GPU, then the doorbells;
 * the register BAR below 4 GiB (the PFs' take 0xc0000000 and up). */
#define VF_BAR_WINDOW 0x400000000000ULL
#define VF_BAR_WINDOW_SIZE (1ULL << 40)
#define VF_DOORBELLS (512ULL << 30)
#define VF_REGS 0x80000000ULL
#define VF_REGS_SIZE (256ULL << 10)

static bool sriov_configurable(const struct sim_func *pf) {
        switch (pf->driver) {
        case SIM_DRV_VFIO_PCI:
                return true; /* its callback refuses without enable_sriov */
        case SIM_DRV_AMDGPU:
                return pf->m->kernel.amdgpu_sriov_configure;
        default:
                return false;
        }
}

/* The PF driver's sriov_configure (vfio_pci_sriov_configure(), or the synthetic amdgpu's). */
static int sriov_configure(struct sim_func *pf, unsigned n) {
        if (pf->driver == SIM_DRV_VFIO_PCI && !pf->m->kernel.vfio_pci_enable_sriov)
                return -ENOENT;
        if (n == 0) {
                sim_sriov_disable(pf);
                return 0;
        }
        return sim_sriov_enable(pf, n);
}

static int sriov_show(struct sim_node *n, const struct sim_caller *c, char *buf) {
        struct sim_func *f = sim_node_obj(n);
        const struct sim_sriov *s = f->sriov;

        switch (sim_node_arg(n)) {
        case SRIOV_TOTALVFS:
                return sim_emit(buf, "%u\n", s->total_vfs);
        case SRIOV_NUMVFS:
                return sim_emit(buf, "%u\n", s->num_vfs);
        case SRIOV_OFFSET:
                return sim_emit(buf, "%u\n", s->offset);
        case SRIOV_STRIDE:
                return sim_emit(buf, "%u\n", s->stride);
        case SRIOV_VF_DEVICE:
                return sim_emit(buf, "%x\n", s->vf_device);
        case SRIOV_AUTOPROBE:
                return sim_emit(buf, "%u\n", s->drivers_autoprobe);
        case SRIOV_VF_TOTAL_MSIX:
                return sim_emit(buf, "0\n");
        }
        return -EIO;
}

static int sriov_store(struct sim_node *n, const struct sim_caller *c, const char *buf,
                       size_t len) {
        struct sim_func *f = sim_node_obj(n);
        uint16_t num;
        bool on;
        int v;

        switch (sim_node_arg(n)) {
        case SRIOV_NUMVFS:
                if (kstrtou16(buf, 0, &num) < 0)
                        return -EINVAL;
                if (num > f->sriov->total_vfs)
                        return -ERANGE;
                if (num == f->sriov->num_vfs)
                        return 0;
                if (f->driver == SIM_DRV_NONE)
                        return -ENOENT; /* "no driver bound to device; cannot configure SR-IOV" */
                if (!sriov_configurable(f))
                        return -ENOENT; /* "driver does not support SR-IOV configuration ..." */
                if (num == 0)
                        return sriov_configure(f, 0);
                if (f->sriov->num_vfs)
                        return -EBUSY; /* "%d VFs already enabled. Disable before enabling" */
                return sriov_configure(f, num);
        case SRIOV_AUTOPROBE:
                if (kstrtobool(buf, &on) < 0)
                        return -EINVAL;
                f->sriov->drivers_autoprobe = on;
                return 0;
        case SRIOV_VF_MSIX_COUNT: /* on a VF */
                if (kstrtoint(buf, 0, &v) < 0 || v < 0)
                        return -EINVAL;
                return -EOPNOTSUPP; /* no PF driver here has sriov_set_msix_vec_count */
        }
        return -EIO;
}

static const struct sim_attr_ops sriov_ro_ops = { .show = sriov_show };
static const struct sim_attr_ops sriov_rw_ops = { .show = sriov_show, .store = sriov_store };
static const struct sim_attr_ops sriov_wo_ops = { .store = sriov_store };

void sim_sriov_build_pf(struct sim_func *pf) {
        struct sim_node *d = sim_lookup(pf->m->fs, pf->path);

        if (!pf->sriov)
                return;
        sim_attr(d, "sriov_totalvfs", 0444, &sriov_ro_ops, pf, SRIOV_TOTALVFS);
        sim_attr(d, "sriov_numvfs", 0644, &sriov_rw_ops, pf, SRIOV_NUMVFS);
        sim_attr(d, "sriov_offset", 0444, &sriov_ro_ops, pf, SRIOV_OFFSET);
        sim_attr(d, "sriov_stride", 0444, &sriov_ro_ops, pf, SRIOV_STRIDE);
        sim_attr(d, "sriov_vf_device", 0444, &sriov_ro_ops, pf, SRIOV_VF_DEVICE);
        sim_attr(d, "sriov_drivers_autoprobe", 0644, &sriov_rw_ops, pf, SRIOV_AUTOPROBE);
        sim_attr(d, "sriov_vf_total_msix", 0444, &sriov_ro_ops, pf, SRIOV_VF_TOTAL_MSIX);
}

bool sim_sriov_can_probe(const struct sim_func *f) {
        return !f->physfn || f->physfn->sriov->drivers_autoprobe || f->driver_override;
}

/* The lowest IOMMU group number no function holds (also an unplugged one, which keeps its). */
static unsigned free_iommu_group(const struct sim_machine *m) {
        for (unsigned g = 0;; g++) {
                bool used = false;

                for (size_t i = 0; i < m->n_funcs && !used; i++)
                        used = m->funcs[i]->iommu_group == g;
                if (!used)
                        return g;
        }
}

static uint64_t pow2_at_least(uint64_t v) {
        uint64_t p = 1;

        while (p < v)
                p <<= 1;
        return p;
}

/* pci_iov_add_virtfn(): the VF, its files and links; not probed yet. */
static int vf_add(struct sim_func *pf, unsigned i, struct sim_func **ret) {
        struct sim_machine *m = pf->m;
        const struct sim_sriov *s = pf->sriov;
        unsigned devfn = (unsigned) (pf->dev << 3 | pf->fn) + s->offset + s->stride * i;
        const char *slash = strrchr(pf->path, '/');
        struct sim_func *vf = calloc(1, sizeof(*vf));
        uint64_t fb, base;
        char link[320];
        int r;

        if (!vf)
                return -ENOMEM;
        vf->m = m;
        vf->kind = SIM_FUNC_VF;
        vf->domain = pf->domain;
        vf->bus = (uint8_t) (pf->bus + (devfn >> 8));
        vf->dev = (uint8_t) ((devfn >> 3) & 0x1f);
        vf->fn = (uint8_t) (devfn & 7);
        snprintf(vf->bdf, sizeof(vf->bdf), "%04x:%02x:%02x.%x", vf->domain, vf->bus, vf->dev,
                 vf->fn);
        vf->upstream = pf->upstream;
        vf->path = strdupf("%.*s/%s", (int) (slash - pf->path), pf->path, vf->bdf);
        vf->vendor = pf->vendor;
        vf->device = s->vf_device;
        vf->subsystem_vendor = pf->subsystem_vendor;
        vf->subsystem_device = pf->subsystem_device;
        vf->revision = pf->revision;
        vf->class_code = pf->class_code;
        /* the Link Status of a VF is reserved (zero): "Unknown", width 0 */
        vf->pcie = true;
        vf->link_speed = "Unknown";
        vf->link_width = 0;
        vf->link_speed_max = pf->link_speed_max;
        vf->link_width_max = pf->link_width_max;
        vf->numa_node = pf->numa_node;
        vf->driver = SIM_DRV_NONE;
        vf->iommu_group = free_iommu_group(m);
        vf->irq = 0; /* no INTx */
        vf->hwmon = -1;
        vf->card = -1;
        vf->physfn = pf;
        vf->vf_index = i;
        fb = pf->gpu ? pow2_at_least(sim_vf_vram_bytes(pf->gpu->prod, s->num_vfs)) : 1ULL << 30;
        base = VF_BAR_WINDOW + (pf->gpu ? pf->gpu->index : 0) * VF_BAR_WINDOW_SIZE;
        vf->bar_start[0] = base + fb * i;
        vf->bar_size[0] = fb;
        vf->bar_start[2] = base + VF_DOORBELLS + (2ULL << 20) * i;
        vf->bar_size[2] = 2ULL << 20;
        vf->bar_start[5] = VF_REGS + ((pf->gpu ? pf->gpu->index : 0) * 64 + i) * VF_REGS_SIZE;
        vf->bar_size[5] = VF_REGS_SIZE;
        if (!vf->path) {
                free(vf);
                return -ENOMEM;
        }
        r = sim_machine_add_func(m, vf);
        if (r < 0) {
                sim_func_free(vf);
                return r;
        }
        sim_bus_add_func(vf);
        snprintf(link, sizeof(link), "%s/virtfn%u", pf->path, i);
        sim_link(m->fs, link, vf->path);
        snprintf(link, sizeof(link), "%s/physfn", vf->path);
        sim_link(m->fs, link, pf->path);
        sim_attr(sim_lookup(m->fs, vf->path), "sriov_vf_msix_count", 0200, &sriov_wo_ops, vf,
                 SRIOV_VF_MSIX_COUNT);
        *ret = vf;
        return 0;
}

/* pci_iov_remove_virtfn(): the driver lets go, the VF and its links go. */
static void vf_remove(struct sim_func *vf) {
        struct sim_machine *m = vf->m;
        char link[320];

        sim_bus_remove(vf);
        snprintf(link, sizeof(link), "%s/virtfn%u", vf->physfn->path, vf->vf_index);
        sim_remove(sim_lookup(m->fs, link));
        sim_bus_del_func(vf);
        sim_machine_del_func(m, vf);
        sim_func_free(vf);
}

int sim_sriov_enable(struct sim_func *pf, unsigned n) {
        struct sim_sriov *s = pf->sriov;

        if (!s || n > s->total_vfs || s->num_vfs)
                return -EINVAL;
        if (n == 0)
                return 0;
        s->vfs = calloc(n, sizeof(*s->vfs));
        if (!s->vfs)
                return -ENOMEM;
        /* NumVFs first (the VF BARs are sized by it), then VF Enable */
        s->num_vfs = (uint16_t) n;
        for (unsigned i = 0; i < n; i++) {
                struct sim_func *vf;
                int r = vf_add(pf, i, &vf);

                if (r < 0) {
                        s->num_vfs = (uint16_t) i;
                        sim_sriov_disable(pf);
                        return r;
                }
                s->vfs[i] = vf;
                if (pf->driver == SIM_DRV_VFIO_PCI && !vf->driver_override)
                        vf->driver_override = strdup("vfio-pci"); /* its bus notifier */
                sim_bus_attach(vf);
        }
        return 0;
}

void sim_sriov_disable(struct sim_func *pf) {
        struct sim_sriov *s = pf->sriov;

        if (!s || !s->vfs)
                return;
        for (unsigned i = 0; i < s->num_vfs; i++)
                vf_remove(s->vfs[i]);
        free(s->vfs);
        s->vfs = NULL;
        s->num_vfs = 0;
}

/* ---------------------------------------------------------------------------------------- */
/* gim */

enum gim_attr {
        GIM_SELF_SWITCH,
        GIM_RESET_GPU,
        GIM_VBFLASH_STATUS,
        GIM_PROFILE,
        GIM_MEMORY_MODE,
        GIM_SPATIAL_MODE,
        GIM_PROFILE_CONFIG,
        GIM_MEMORY_CONFIG,
        GIM_SPATIAL_CAPS,
};

static const struct {
        const char *name;
        unsigned mode;
} gim_files[] = {
        [GIM_SELF_SWITCH] = { "self_switch", 0600 },
        [GIM_RESET_GPU] = { "reset_gpu", 0400 },
        [GIM_VBFLASH_STATUS] = { "psp_vbflash_status", 0444 },
        [GIM_PROFILE] = { "accelerator_partition_profile", 0600 },
        [GIM_MEMORY_MODE] = { "memory_partition_mode", 0600 },
        [GIM_SPATIAL_MODE] = { "spatial_partition_mode", 0400 },
        [GIM_PROFILE_CONFIG] = { "accelerator_partition_profile_config", 0400 },
        [GIM_MEMORY_CONFIG] = { "memory_partition_config", 0400 },
        [GIM_SPATIAL_CAPS] = { "spatial_partition_caps", 0400 },
};

enum {
        RES_XCC,
        RES_DMA,
        RES_DECODER,
        RES_JPEG,
        _RES_MAX
};
static const char *const res_names[_RES_MAX] = { "XCC", "DMA", "DECODER", "JPEG" };

/* gim's profiles: the GPU's compute modes among SPX, DPX, QPX, CPX with at most TotalVFs
 * partitions, in that order; returns their count. */
static unsigned gim_profiles(const struct sim_gpu *g, enum sim_compute modes[_SIM_COMPUTE_MAX]) {
        static const enum sim_compute order[] = { SIM_SPX, SIM_DPX, SIM_QPX, SIM_CPX };
        unsigned hw = sim_compute_supported(g->prod->xcc), n = 0;

        for (size_t i = 0; i < ELEMENTSOF(order); i++)
                if ((hw & (1u << order[i])) &&
                    sim_compute_parts(order[i], g->prod->xcc) <= g->func->sriov->total_vfs)
                        modes[n++] = order[i];
        return n;
}

/* A partition's share of a resource: how many it has, and how many partitions share one. */
static void res_share(const struct sim_gpu *g, int res, unsigned parts, unsigned *inst,
                      unsigned *shared) {
        const struct sim_product *p = g->prod;
        unsigned total = res == RES_XCC    ? p->xcc
                         : res == RES_DMA  ? p->sdma_engines
                         : res == RES_JPEG ? p->vcn * p->jpeg_per_vcn
                                           : p->vcn;

        if (total >= parts) {
                *inst = total / parts;
                *shared = 1;
        } else {
                *inst = 1;
                *shared = parts / total;
        }
}

/* "%-20u%-20s%-20u..." then "[[0 1 2 3 ][...]]": a profile's resources per partition. */
static void profile_resources(unsigned profile, unsigned parts, char *buf, size_t *len) {
        bprintf(buf, SIM_PAGE_SIZE, len, "[");
        for (unsigned p = 0; p < parts; p++) {
                bprintf(buf, SIM_PAGE_SIZE, len, "[");
                for (int r = 0; r < _RES_MAX; r++)
                        bprintf(buf, SIM_PAGE_SIZE, len, "%u ", profile * _RES_MAX + (unsigned) r);
                bprintf(buf, SIM_PAGE_SIZE, len, "]");
        }
        bprintf(buf, SIM_PAGE_SIZE, len, "]\n");
}

static int gim_show(struct sim_node *n, const struct sim_caller *c, char *buf) {
        struct sim_func *f = sim_node_obj(n);
        struct sim_gpu *g = f->gpu;
        enum sim_compute modes[_SIM_COMPUTE_MAX];
        unsigned nprof = gim_profiles(g, modes), parts = sim_gpu_parts(g);
        size_t len = 0;

        switch (sim_node_arg(n)) {
        case GIM_SELF_SWITCH:
                return sim_emit(buf, "%d\n", g->self_switch);
        case GIM_RESET_GPU: {
                /* gim's recovery of the adapter (rule-reset.c); a failed one fails the read */
                int err;
                long long res = sim_reset_run(g, &err);

                if (err)
                        return -err;
                if (res < 0)
                        return (int) res;
                return sim_emit(buf, "dev(%s) reset completed\n", f->bdf);
        }
        case GIM_VBFLASH_STATUS:
                return sim_emit(buf, "0x0\n");
        case GIM_PROFILE:
                for (unsigned i = 0; i < nprof; i++) {
                        if (modes[i] != g->compute)
                                continue;
                        bprintf(buf, SIM_PAGE_SIZE, &len, "%-20s%-20s%-20s%-20s%-20s\n",
                                "profile_index", "profile_type", "num_of_partitions",
                                "num_of_resources", "resource_index_in_resource_profiles");
                        bprintf(buf, SIM_PAGE_SIZE, &len, "%-20u%-20s%-20u%-20u", i,
                                sim_compute_names[modes[i]], parts, (unsigned) _RES_MAX);
                        profile_resources(i, parts, buf, &len);
                        return len > SIM_PAGE_SIZE ? -ENOSPC : (int) len;
                }
                return sim_emit(buf, "failed to get current accelerator partition profile\n");
        case GIM_MEMORY_MODE: {
                unsigned nmem = sim_nps_mem_parts(g, g->nps_current);
                uint64_t size = g->prod->vram_bytes / nmem;

                bprintf(buf, SIM_PAGE_SIZE, &len, "memory_partition_mode: NPS%u\nnuma_count: %u\n",
                        g->nps_current, nmem);
                for (unsigned i = 0; i < nmem; i++)
                        bprintf(buf, SIM_PAGE_SIZE, &len,
                                "NUMA%u type=0 start=0x%016llx end=0x%016llx\n", i,
                                (unsigned long long) (size * i),
                                (unsigned long long) (size * (i + 1) - 1));
                return len > SIM_PAGE_SIZE ? -ENOSPC : (int) len;
        }
        case GIM_SPATIAL_MODE:
                return sim_emit(buf, "%s\n",
                                parts == 1   ? "SPX"
                                : parts == 2 ? "DPX"
                                : parts == 4 ? "QPX"
                                : parts == 8 ? "CPX"
                                             : "UNKNOWN");
        case GIM_PROFILE_CONFIG:
                bprintf(buf, SIM_PAGE_SIZE, &len, "resource_profiles:\n%-20s%-20s%-20s%-20s\n",
                        "resource_index", "resource_type", "resource_in_partition",
                        "num_partitions_share_resource");
                for (unsigned i = 0; i < nprof; i++)
                        for (int r = 0; r < _RES_MAX; r++) {
                                unsigned inst, shared;

                                res_share(g, r, sim_compute_parts(modes[i], g->prod->xcc), &inst,
                                          &shared);
                                bprintf(buf, SIM_PAGE_SIZE, &len, "%-20u%-20s%-20u%-20u\n",
                                        i * _RES_MAX + (unsigned) r, res_names[r], inst, shared);
                        }
                bprintf(buf, SIM_PAGE_SIZE, &len, "profiles:\n%-20s%-20s%-20s%-20s%-20s%-20s\n",
                        "profile_index", "profile_type", "num_of_partitions", "memory_caps",
                        "num_of_resources", "resource_index");
                for (unsigned i = 0; i < nprof; i++) {
                        unsigned np = sim_compute_parts(modes[i], g->prod->xcc);
                        char caps[32] = "";
                        size_t cl = 0;

                        for (unsigned nps = 1; nps <= 8; nps *= 2)
                                if ((g->nps_supported & SIM_NPS_BIT(nps)) &&
                                    (sim_compute_available(g, nps) & (1u << modes[i])))
                                        bprintf(caps, sizeof(caps), &cl, "NPS%u%s", nps,
                                                nps == 8 ? "" : " "); /* gim's spacing */
                        bprintf(buf, SIM_PAGE_SIZE, &len, "%-20u%-20s%-20u%-20s%-20u", i,
                                sim_compute_names[modes[i]], np, caps, (unsigned) _RES_MAX);
                        profile_resources(i, np, buf, &len);
                }
                return len > SIM_PAGE_SIZE ? -ENOSPC : (int) len;
        case GIM_MEMORY_CONFIG:
                for (unsigned nps = 1; nps <= 8; nps *= 2)
                        if (g->nps_supported & SIM_NPS_BIT(nps))
                                bprintf(buf, SIM_PAGE_SIZE, &len, "NPS%u ", nps);
                bprintf(buf, SIM_PAGE_SIZE, &len, "\n");
                return len > SIM_PAGE_SIZE ? -ENOSPC : (int) len;
        case GIM_SPATIAL_CAPS:
                return sim_emit(buf, "num_xcc=%u num_sdma=%u num_vcn=%u num_jpeg=%u\n",
                                g->prod->xcc, g->prod->sdma_engines, g->prod->vcn,
                                g->prod->vcn * g->prod->jpeg_per_vcn);
        }
        return -EIO;
}

/* sscanf("%u"): blanks, then at least one digit (what follows is ignored). */
static int scan_uint(const char *buf, unsigned *ret) {
        unsigned long v;
        char *end;

        while (*buf == ' ' || *buf == '\t' || *buf == '\n')
                buf++;
        if (*buf < '0' || *buf > '9')
                return -EINVAL;
        v = strtoul(buf, &end, 10);
        *ret = (unsigned) v;
        return 0;
}

/* A new partition layout: gim tears the VFs down and enables one per partition. */
static void gim_relayout(struct sim_func *f, enum sim_compute mode, unsigned nps) {
        struct sim_gpu *g = f->gpu;

        sim_sriov_disable(f);
        g->compute = mode;
        g->nps_current = nps;
        (void) sim_sriov_enable(f, sim_gpu_parts(g));
}

static int gim_store(struct sim_node *n, const struct sim_caller *c, const char *buf, size_t len) {
        struct sim_func *f = sim_node_obj(n);
        struct sim_gpu *g = f->gpu;
        enum sim_compute modes[_SIM_COMPUTE_MAX];
        unsigned v, nprof = gim_profiles(g, modes);

        switch (sim_node_arg(n)) {
        case GIM_SELF_SWITCH:
                if (scan_uint(buf, &v) < 0)
                        return -EINVAL;
                g->self_switch = v != 0;
                return 0;
        case GIM_PROFILE:
                if (scan_uint(buf, &v) < 0)
                        return -EINVAL;
                /* an unknown index or an incompatible mode fails in the firmware: logged */
                if (v < nprof && modes[v] != g->compute &&
                    (sim_compute_available(g, g->nps_current) & (1u << modes[v])))
                        gim_relayout(f, modes[v], g->nps_current);
                return 0;
        case GIM_MEMORY_MODE: {
                static const unsigned nps_of[] = { 1, 2, 4, 4 }; /* this gim maps NPS8 to NPS4 */
                char word[5] = "";

                if (sscanf(buf, "%4s", word) != 1)
                        return -EINVAL;
                for (unsigned i = 0; i < ELEMENTSOF(nps_of); i++) {
                        char name[8];
                        unsigned nps = nps_of[i];

                        snprintf(name, sizeof(name), "NPS%u", 1u << i);
                        if (strncasecmp(name, word, strlen(name)) != 0)
                                continue;
                        if (nps != g->nps_current && (g->nps_supported & SIM_NPS_BIT(nps)) &&
                            (sim_compute_available(g, nps) & (1u << g->compute)))
                                gim_relayout(f, g->compute, nps);
                        return 0;
                }
                return -EINVAL;
        }
        }
        return -EIO;
}

static const struct sim_attr_ops gim_ro_ops = { .show = gim_show };
static const struct sim_attr_ops gim_rw_ops = { .show = gim_show, .store = gim_store };

int sim_gim_probe(struct sim_func *f) {
        struct sim_gpu *g = f->gpu;
        struct sim_node *d = sim_lookup(f->m->fs, f->path);
        int r;

        if (!g || g->role != SIM_ROLE_HOST_PF || !f->sriov)
                return -ENODEV; /* not among gim's enabled_devices */
        /* gim sets the partitions up for its vf_num VFs */
        g->compute = sim_compute_of_parts(g->vf_num, g->prod->xcc);
        for (size_t i = 0; i < ELEMENTSOF(gim_files); i++)
                sim_attr(d, gim_files[i].name, gim_files[i].mode,
                         gim_files[i].mode & 0200 ? &gim_rw_ops : &gim_ro_ops, f, (intptr_t) i);
        r = sim_sriov_enable(f, g->vf_num);
        if (r < 0)
                sim_gim_remove(f);
        return r;
}

void sim_gim_remove(struct sim_func *f) {
        struct sim_node *d = sim_lookup(f->m->fs, f->path);

        sim_sriov_disable(f);
        for (size_t i = 0; i < ELEMENTSOF(gim_files); i++)
                sim_remove(sim_child(d, gim_files[i].name));
}

/* The driver's attributes: one line per PF gim has bound. */
enum {
        GIM_DRV_SELF_SWITCH,
        GIM_DRV_FORCE_RESET,
        GIM_DRV_LIVE_UPDATE,
};

static int gim_drv_show(struct sim_node *n, const struct sim_caller *c, char *buf) {
        struct sim_machine *m = sim_node_obj(n);
        size_t len = 0;

        for (size_t i = 0; i < m->n_gpus; i++) {
                const struct sim_gpu *g = m->gpus[i];

                if (g->func->driver != SIM_DRV_GIM)
                        continue;
                switch (sim_node_arg(n)) {
                case GIM_DRV_SELF_SWITCH:
                        bprintf(buf, SIM_PAGE_SIZE, &len, "Adapter[%s] : %d\n", g->func->bdf,
                                g->self_switch);
                        break;
                case GIM_DRV_FORCE_RESET:
                        bprintf(buf, SIM_PAGE_SIZE, &len, "Adapter[%s] : %d\n", g->func->bdf,
                                g->force_reset);
                        break;
                default:
                        bprintf(buf, SIM_PAGE_SIZE, &len, "Adapter[%s] live_update: disabled\n",
                                g->func->bdf);
                        break;
                }
        }
        return len > SIM_PAGE_SIZE ? -ENOSPC : (int) len;
}

static int gim_drv_store(struct sim_node *n, const struct sim_caller *c, const char *buf,
                         size_t len) {
        struct sim_machine *m = sim_node_obj(n);
        int attr = (int) sim_node_arg(n), sv = 0;
        unsigned v = 0;

        if (attr == GIM_DRV_FORCE_RESET ? sscanf(buf, "%d", &sv) != 1 : scan_uint(buf, &v) < 0)
                return -EINVAL;
        if (attr == GIM_DRV_LIVE_UPDATE)
                return -EINVAL; /* "live update cannot be used": not configured at load */
        for (size_t i = 0; i < m->n_gpus; i++) {
                struct sim_gpu *g = m->gpus[i];

                if (g->func->driver != SIM_DRV_GIM)
                        continue;
                if (attr == GIM_DRV_SELF_SWITCH)
                        g->self_switch = v != 0;
                else
                        g->force_reset = sv != 0;
        }
        return 0;
}

static const struct sim_attr_ops gim_drv_ops = { .show = gim_drv_show, .store = gim_drv_store };

void sim_gim_driver_build(struct sim_machine *m, struct sim_node *drv) {
        if (!m->gim_host)
                return;
        sim_attr(drv, "self_switch", 0600, &gim_drv_ops, m, GIM_DRV_SELF_SWITCH);
        sim_attr(drv, "force_hot_reset", 0600, &gim_drv_ops, m, GIM_DRV_FORCE_RESET);
        sim_attr(drv, "live_update", 0600, &gim_drv_ops, m, GIM_DRV_LIVE_UPDATE);
}

void sim_sriov_modules_build(struct sim_machine *m) {
        struct sim_node *root = sim_fs_root(m->fs), *p;
        char vf_num[256] = "", devices[SIM_PAGE_SIZE / 2] = "";
        size_t vl = 0, dl = 0;

        if (m->host.vfio_pci) {
                p = sim_mkdir(root, "module/vfio_pci/parameters");
                sim_text(p, "enable_sriov", 0444, "%c",
                         m->kernel.vfio_pci_enable_sriov ? 'Y' : 'N');
        }
        if (!m->gim_host)
                return;
        for (size_t i = 0; i < m->n_gpus; i++) {
                const struct sim_gpu *g = m->gpus[i];

                bprintf(vf_num, sizeof(vf_num), &vl, "%s%u", vl ? "," : "", g->vf_num);
                bprintf(devices, sizeof(devices), &dl, "%s%s", dl ? ";" : "", g->func->bdf);
        }
        p = sim_mkdir(root, "module/gim/parameters");
        sim_text(p, "vf_num", 0444, "%s", vf_num);
        sim_text(p, "enabled_devices", 0444, "%s", devices);
}
