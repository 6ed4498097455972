/* SPDX-License-Identifier: MIT */
/*
 * amdsmi-sim: the PCI bus. Every function's PCI core files (spec amdgpu-sysfs.md §1.1,
 * virtualization.md §2.1), bus/pci/devices, IOMMU groups, and the driver model:
 * bus/pci/drivers/<drv>/{bind,unbind,new_id,remove_id}, bus/pci/drivers_probe and
 * driver_override with the driver core's semantics (§7.1). SR-IOV is rule-sriov.c's: the PFs'
 * sriov_* files, VFs made and removed, gim. A gim host has no amdgpu driver (blacklisted);
 * a VM has no IOMMU groups (no virtual IOMMU).
 */
#include <strings.h>

#include "parse.h"
#include "pci.h"
#include "tree.h"

enum pci_attr {
        PCI_NUMA_NODE,
        PCI_LOCAL_CPULIST,
        PCI_DRIVER_OVERRIDE,
        PCI_CONFIG,
        PCI_RESOURCE,
        PCI_MODALIAS,
        PCI_UEVENT,
        PCI_ENABLE,
        PCI_CUR_LINK_SPEED,
        PCI_CUR_LINK_WIDTH,
};

enum drv_attr {
        DRV_BIND,
        DRV_UNBIND,
        DRV_NEW_ID,
        DRV_REMOVE_ID,
};

static uint8_t speed_code(const char *s) {
        static const char *const speeds[] = { "2.5 ", "5.0 ", "8.0 ", "16.0 ", "32.0 ", "64.0 " };

        for (size_t i = 0; s && i < ELEMENTSOF(speeds); i++)
                if (strncmp(s, speeds[i], strlen(speeds[i])) == 0)
                        return (uint8_t) (i + 1);
        return 0;
}

static bool is_bridge(const struct sim_func *f) {
        return (f->class_code >> 8) == 0x0604;
}

static void pci_func_of(const struct sim_func *f, struct sim_pci_func *p) {
        *p = (struct sim_pci_func){
                .vendor = f->vendor,
                .device = f->device,
                .subsystem_vendor = f->subsystem_vendor,
                .subsystem_device = f->subsystem_device,
                .revision = f->revision,
                .class_code = f->class_code,
                .header_type = is_bridge(f) ? 1 : 0,
                .pcie = f->pcie,
                .link_speed_cur = speed_code(f->link_speed),
                .link_speed_max = speed_code(f->link_speed_max),
                .link_width_cur = (uint8_t) f->link_width,
                .link_width_max = (uint8_t) f->link_width_max,
                .irq = f->irq,
                .driver = f->driver >= 0 ? sim_driver_names[f->driver] : NULL,
                .slot_name = f->bdf,
                .is_vf = f->physfn != NULL,
                .sriov = f->sriov != NULL,
        };
        if (f->sriov) {
                p->sriov_total_vfs = f->sriov->total_vfs;
                p->sriov_num_vfs = f->sriov->num_vfs;
                p->sriov_offset = f->sriov->offset;
                p->sriov_stride = f->sriov->stride;
                p->sriov_vf_device = f->sriov->vf_device;
        }
        memcpy(p->bar_start, f->bar_start, sizeof(p->bar_start));
        memcpy(p->bar_size, f->bar_size, sizeof(p->bar_size));
}

static int pci_show(struct sim_node *n, const struct sim_caller *c, char *buf) {
        struct sim_func *f = sim_node_obj(n);
        struct sim_pci_func p;
        char cpus[128];
        int r;

        switch (sim_node_arg(n)) {
        case PCI_NUMA_NODE:
                return sim_emit(buf, "%d\n", f->numa_node);
        /* what the link trained to (a control retrains it narrower or slower) */
        case PCI_CUR_LINK_SPEED:
                return sim_emit(buf, "%s\n", f->link_speed);
        case PCI_CUR_LINK_WIDTH:
                return sim_emit(buf, "%u\n", f->link_width);
        case PCI_LOCAL_CPULIST:
                sim_cpulist(f->m, f->numa_node, cpus, sizeof(cpus));
                return sim_emit(buf, "%s\n", cpus);
        case PCI_DRIVER_OVERRIDE:
                return sim_emit(buf, "%s\n", f->driver_override ? f->driver_override : "(null)");
        case PCI_CONFIG: {
                uint8_t cfg[SIM_PAGE_SIZE];
                int size = c->uid != 0 ? 64 : f->pcie ? 4096 : 256;

                pci_func_of(f, &p);
                sim_pci_config(&p, cfg);
                memcpy(buf, cfg, (size_t) size);
                return size;
        }
        case PCI_RESOURCE:
                pci_func_of(f, &p);
                return sim_pci_resource(&p, buf, SIM_PAGE_SIZE);
        case PCI_MODALIAS:
                pci_func_of(f, &p);
                r = sim_pci_modalias(&p, buf, SIM_PAGE_SIZE - 1);
                if (r < 0)
                        return r;
                buf[r++] = '\n';
                return r;
        case PCI_UEVENT:
                pci_func_of(f, &p);
                return sim_pci_uevent(&p, buf, SIM_PAGE_SIZE);
        case PCI_ENABLE:
                return sim_emit(buf, "%u\n", f->enable_cnt);
        }
        return -EIO;
}

static int pci_store(struct sim_node *n, const struct sim_caller *c, const char *buf, size_t len) {
        struct sim_func *f = sim_node_obj(n);
        unsigned long long v;
        int node, r;

        switch (sim_node_arg(n)) {
        case PCI_NUMA_NODE:
                if (c->uid != 0)
                        return -EACCES;
                r = kstrtoint(buf, 0, &node);
                if (r < 0)
                        return r;
                if (node < -1 || node >= (int) f->m->cpu.sockets)
                        return -EINVAL;
                f->numa_node = node;
                return 0;
        case PCI_DRIVER_OVERRIDE: {
                const char *nl = memchr(buf, '\n', len);
                size_t l = nl ? (size_t) (nl - buf) : len;
                char *s = NULL;

                if (len >= SIM_PAGE_SIZE - 1)
                        return -EINVAL;
                if (l > 0 && !(s = strndup(buf, l)))
                        return -ENOMEM;
                free(f->driver_override);
                f->driver_override = s;
                return 0;
        }
        case PCI_CONFIG:
                return 0; /* config space writes are accepted and change nothing here */
        case PCI_UEVENT: {
                static const char *const actions[] = { "add",    "remove",  "change", "move",
                                                       "online", "offline", "bind",   "unbind" };

                for (size_t i = 0; i < ELEMENTSOF(actions); i++) {
                        size_t al = strlen(actions[i]);

                        if (strncmp(buf, actions[i], al) == 0 &&
                            (buf[al] == '\0' || buf[al] == '\n' || buf[al] == ' '))
                                return 0;
                }
                return -EINVAL;
        }
        case PCI_ENABLE:
                if (kstrtoull(buf, 0, &v) < 0)
                        return -EINVAL;
                if (c->uid != 0)
                        return -EPERM;
                if (f->driver != SIM_DRV_NONE)
                        return -EBUSY;
                if (v)
                        f->enable_cnt++;
                else if (f->enable_cnt > 0)
                        f->enable_cnt--;
                else
                        return -EIO;
                return 0;
        }
        return -EIO;
}

static const struct sim_attr_ops pci_ro_ops = { .show = pci_show };
static const struct sim_attr_ops pci_rw_ops = { .show = pci_show, .store = pci_store };

/* ---------------------------------------------------------------------------------------- */
/* Drivers */

static bool driver_registered(const struct sim_machine *m, int drv) {
        if (drv == SIM_DRV_AMDGPU)
                return !m->gim_host;
        if (drv == SIM_DRV_VFIO_PCI)
                return m->host.vfio_pci;
        return drv != SIM_DRV_AST || m->bmc_vga;
}

static bool driver_match(const struct sim_func *f, int drv) {
        const struct sim_machine *m = f->m;

        if (!driver_registered(m, drv))
                return false;
        if (f->driver_override)
                return streq(f->driver_override, sim_driver_names[drv]);
        for (unsigned i = 0; i < m->n_dynids[drv]; i++)
                if (m->dynids[drv][i].vendor == f->vendor && m->dynids[drv][i].device == f->device)
                        return true;
        switch (drv) {
        case SIM_DRV_AMDGPU:
                return f->gpu != NULL;
        case SIM_DRV_PCIEPORT:
                return f->kind == SIM_FUNC_ROOT_PORT || f->kind == SIM_FUNC_SWITCH_UP ||
                       f->kind == SIM_FUNC_SWITCH_DOWN;
        case SIM_DRV_K10TEMP:
                return f->kind == SIM_FUNC_DF;
        case SIM_DRV_AST:
                return f->kind == SIM_FUNC_BMC_VGA;
        default:
                return false; /* gim and vfio-pci have no static ID table */
        }
}

/* k10temp's hwmon under the data fabric function. */
static int k10temp_probe(struct sim_func *f) {
        struct sim_machine *m = f->m;
        char path[256], target[320];
        struct sim_node *h;
        int idx = sim_bitmap_alloc(m->hwmon_used, 256, 0);

        if (idx < 0)
                return idx;
        f->hwmon = idx;
        h = sim_mkdirf(sim_fs_root(m->fs), "%s/hwmon/hwmon%d", f->path, idx);
        sim_text(h, "name", 0444, "k10temp");
        sim_text(h, "temp1_input", 0444, "%u", 33125 + 1250 * (unsigned) (f->dev - 0x18));
        sim_text(h, "temp1_label", 0444, "Tctl");
        snprintf(path, sizeof(path), "%s/hwmon/hwmon%d", f->path, idx);
        snprintf(target, sizeof(target), "%s/device", path);
        sim_link(m->fs, target, f->path);
        snprintf(target, sizeof(target), "%s/subsystem", path);
        sim_link(m->fs, target, "class/hwmon");
        snprintf(target, sizeof(target), "class/hwmon/hwmon%d", idx);
        sim_link(m->fs, target, path);
        return 0;
}

static void k10temp_remove(struct sim_func *f) {
        char path[64];

        sim_remove(sim_child(sim_lookup(f->m->fs, f->path), "hwmon"));
        snprintf(path, sizeof(path), "class/hwmon/hwmon%d", f->hwmon);
        sim_remove(sim_lookup(f->m->fs, path));
        sim_bitmap_free(f->m->hwmon_used, f->hwmon);
        f->hwmon = -1;
}

static int connector_store(struct sim_node *n, const struct sim_caller *c, const char *buf,
                           size_t len) {
        static const char *const words[] = { "detect", "on", "on-digital", "off" };

        for (size_t i = 0; i < ELEMENTSOF(words); i++)
                if (sysfs_streq(words[i], buf))
                        return 0;
        return -EINVAL;
}

static int connector_show(struct sim_node *n, const struct sim_caller *c, char *buf) {
        return sim_emit(buf, "connected\n");
}

static const struct sim_attr_ops connector_status_ops = { .show = connector_show,
                                                          .store = connector_store };

/* ast: the BMC's VGA, a DRM card without a render node, with one connector. */
static int ast_probe(struct sim_func *f) {
        struct sim_machine *m = f->m;
        char dir[256], link[320];
        struct sim_node *d, *conn;
        int card = sim_bitmap_alloc(m->card_used, 64, 0);

        if (card < 0)
                return card;
        f->card = card;
        snprintf(dir, sizeof(dir), "%s/drm/card%d", f->path, card);
        d = sim_mkdir(sim_fs_root(m->fs), dir);
        sim_text(d, "dev", 0444, "226:%d", card);
        snprintf(link, sizeof(link), "%s/device", dir);
        sim_link(m->fs, link, f->path);
        snprintf(link, sizeof(link), "%s/subsystem", dir);
        sim_link(m->fs, link, "class/drm");
        snprintf(link, sizeof(link), "class/drm/card%d", card);
        sim_link(m->fs, link, dir);
        conn = sim_mkdirf(d, "card%d-VGA-1", card);
        sim_attr(conn, "status", 0644, &connector_status_ops, f, 0);
        sim_text(conn, "enabled", 0444, "enabled");
        sim_text(conn, "dpms", 0444, "On");
        snprintf(link, sizeof(link), "%s/card%d-VGA-1/subsystem", dir, card);
        sim_link(m->fs, link, "class/drm");
        snprintf(dir, sizeof(dir), "%s/drm/card%d/card%d-VGA-1", f->path, card, card);
        snprintf(link, sizeof(link), "class/drm/card%d-VGA-1", card);
        sim_link(m->fs, link, dir);
        return 0;
}

static void ast_remove(struct sim_func *f) {
        struct sim_node *d = sim_lookup(f->m->fs, f->path);
        char path[64];

        sim_remove(sim_child(d, "drm"));
        snprintf(path, sizeof(path), "class/drm/card%d", f->card);
        sim_remove(sim_lookup(f->m->fs, path));
        snprintf(path, sizeof(path), "class/drm/card%d-VGA-1", f->card);
        sim_remove(sim_lookup(f->m->fs, path));
        sim_bitmap_free(f->m->card_used, f->card);
        f->card = -1;
}

static void driver_links(struct sim_func *f, int drv, bool add) {
        struct sim_fs *fs = f->m->fs;
        char link[256], target[64];

        snprintf(link, sizeof(link), "%s/driver", f->path);
        snprintf(target, sizeof(target), "bus/pci/drivers/%s", sim_driver_names[drv]);
        if (add)
                sim_link(fs, link, target);
        else
                sim_remove(sim_lookup(fs, link));
        snprintf(link, sizeof(link), "bus/pci/drivers/%s/%s", sim_driver_names[drv], f->bdf);
        if (add)
                sim_link(fs, link, f->path);
        else
                sim_remove(sim_lookup(fs, link));
}

int sim_bus_probe(struct sim_func *f, int drv) {
        int r = 0;

        if (f->unplugged)
                return -ENODEV;
        if (!sim_sriov_can_probe(f))
                return -ENODEV; /* a VF without autoprobe nor driver_override */
        switch (drv) {
        case SIM_DRV_AMDGPU:
                if (!f->gpu || f->gpu->role == SIM_ROLE_HOST_PF)
                        return -ENODEV;
                break;
        case SIM_DRV_GIM:
                if (!f->gpu || f->gpu->role != SIM_ROLE_HOST_PF)
                        return -ENODEV; /* not among gim's enabled_devices */
                break;
        case SIM_DRV_VFIO_PCI:
                if (is_bridge(f))
                        return -EINVAL;
                if (f->sriov && f->sriov->num_vfs)
                        return -EBUSY; /* "Cannot bind to PF with SR-IOV enabled" */
                break;
        case SIM_DRV_PCIEPORT:
                if (!is_bridge(f))
                        return -ENODEV;
                break;
        case SIM_DRV_K10TEMP:
                if (f->kind != SIM_FUNC_DF)
                        return -ENODEV;
                break;
        case SIM_DRV_AST:
                if (f->kind != SIM_FUNC_BMC_VGA)
                        return -ENODEV;
                break;
        default:
                return -ENODEV;
        }
        f->driver = drv;
        if (drv != SIM_DRV_VFIO_PCI)
                f->enable_cnt++;
        driver_links(f, drv, true);
        if (drv == SIM_DRV_AMDGPU)
                r = sim_gpu_attach(f->gpu);
        else if (drv == SIM_DRV_GIM)
                r = sim_gim_probe(f);
        else if (drv == SIM_DRV_K10TEMP)
                r = k10temp_probe(f);
        else if (drv == SIM_DRV_AST)
                r = ast_probe(f);
        if (r < 0) {
                driver_links(f, drv, false);
                if (drv != SIM_DRV_VFIO_PCI && f->enable_cnt > 0)
                        f->enable_cnt--;
                f->driver = SIM_DRV_NONE;
        }
        return r;
}

void sim_bus_remove(struct sim_func *f) {
        int drv = f->driver;

        if (drv == SIM_DRV_NONE)
                return;
        sim_sriov_disable(f); /* every PF driver here disables its VFs in its remove */
        if (drv == SIM_DRV_AMDGPU)
                sim_gpu_detach(f->gpu);
        else if (drv == SIM_DRV_GIM)
                sim_gim_remove(f);
        else if (drv == SIM_DRV_K10TEMP)
                k10temp_remove(f);
        else if (drv == SIM_DRV_AST)
                ast_remove(f);
        driver_links(f, drv, false);
        if (drv != SIM_DRV_VFIO_PCI && f->enable_cnt > 0)
                f->enable_cnt--;
        f->driver = SIM_DRV_NONE;
}

/* device_attach(): the first matching driver that probes successfully. */
void sim_bus_attach(struct sim_func *f) {
        if (f->driver != SIM_DRV_NONE)
                return;
        for (int drv = 0; drv < _SIM_DRV_MAX; drv++)
                if (driver_match(f, drv) && sim_bus_probe(f, drv) == 0)
                        return;
}

static int drv_store(struct sim_node *n, const struct sim_caller *c, const char *buf, size_t len) {
        struct sim_machine *m = sim_node_obj(n);
        int drv = (int) (sim_node_arg(n) >> 8);
        struct sim_func *f;
        unsigned vendor, device, sv, sd, cls, mask;
        unsigned long data;
        int fields;

        switch (sim_node_arg(n) & 0xff) {
        case DRV_BIND:
                f = sim_machine_func(m, buf);
                if (!f || !driver_match(f, drv))
                        return -ENODEV;
                if (f->driver != SIM_DRV_NONE)
                        return -EBUSY;
                return sim_bus_probe(f, drv);
        case DRV_UNBIND:
                f = sim_machine_func(m, buf);
                if (!f || f->driver != drv)
                        return -ENODEV;
                sim_bus_remove(f);
                return 0;
        case DRV_NEW_ID: {
                fields = sscanf(buf, "%x %x %x %x %x %x %lx", &vendor, &device, &sv, &sd, &cls,
                                &mask, &data);
                if (fields < 2 || vendor > 0xffff || device > 0xffff)
                        return -EINVAL;
                if (fields != 7) {
                        /* an ID the driver matches already */
                        for (size_t i = 0; i < m->n_funcs; i++) {
                                struct sim_func *o = m->funcs[i];

                                if (o->vendor == vendor && o->device == device &&
                                    !o->driver_override && driver_match(o, drv))
                                        return -EEXIST;
                        }
                        for (unsigned i = 0; i < m->n_dynids[drv]; i++)
                                if (m->dynids[drv][i].vendor == vendor &&
                                    m->dynids[drv][i].device == device)
                                        return -EEXIST;
                }
                if (m->n_dynids[drv] == ELEMENTSOF(m->dynids[drv]))
                        return -ENOMEM;
                m->dynids[drv][m->n_dynids[drv]].vendor = (uint16_t) vendor;
                m->dynids[drv][m->n_dynids[drv]].device = (uint16_t) device;
                m->n_dynids[drv]++;
                /* driver_attach(): probe every unbound function that matches now */
                for (size_t i = 0; i < m->n_funcs; i++)
                        if (m->funcs[i]->driver == SIM_DRV_NONE && driver_match(m->funcs[i], drv))
                                (void) sim_bus_probe(m->funcs[i], drv);
                return 0;
        }
        case DRV_REMOVE_ID:
                fields = sscanf(buf, "%x %x", &vendor, &device);
                if (fields < 2)
                        return -EINVAL;
                for (unsigned i = 0; i < m->n_dynids[drv]; i++)
                        if (m->dynids[drv][i].vendor == vendor &&
                            m->dynids[drv][i].device == device) {
                                m->dynids[drv][i] = m->dynids[drv][--m->n_dynids[drv]];
                                return 0;
                        }
                return -ENODEV;
        }
        return -EIO;
}

static const struct sim_attr_ops drv_ops = { .store = drv_store };

static int drivers_probe_store(struct sim_node *n, const struct sim_caller *c, const char *buf,
                               size_t len) {
        struct sim_func *f = sim_machine_func(sim_node_obj(n), buf);

        if (!f)
                return -ENODEV;
        sim_bus_attach(f);
        return 0;
}

static const struct sim_attr_ops drivers_probe_ops = { .store = drivers_probe_store };

static int rescan_store(struct sim_node *n, const struct sim_caller *c, const char *buf,
                        size_t len) {
        unsigned long long v;

        if (kstrtoull(buf, 0, &v) < 0)
                return -EINVAL;
        return 0; /* no hidden functions to find */
}

static const struct sim_attr_ops rescan_ops = { .store = rescan_store };

/* ---------------------------------------------------------------------------------------- */

static void build_func(struct sim_machine *m, struct sim_func *f) {
        struct sim_fs *fs = m->fs;
        struct sim_node *d = sim_mkdir(sim_fs_root(fs), f->path);
        char link[256], target[64];

        sim_text(d, "vendor", 0444, "0x%04x", f->vendor);
        sim_text(d, "device", 0444, "0x%04x", f->device);
        sim_text(d, "subsystem_vendor", 0444, "0x%04x", f->subsystem_vendor);
        sim_text(d, "subsystem_device", 0444, "0x%04x", f->subsystem_device);
        sim_text(d, "revision", 0444, "0x%02x", f->revision);
        sim_text(d, "class", 0444, "0x%06x", f->class_code);
        sim_text(d, "irq", 0444, "%u", f->irq);
        sim_attr(d, "numa_node", 0644, &pci_rw_ops, f, PCI_NUMA_NODE);
        sim_attr(d, "local_cpulist", 0444, &pci_ro_ops, f, PCI_LOCAL_CPULIST);
        sim_attr(d, "driver_override", 0644, &pci_rw_ops, f, PCI_DRIVER_OVERRIDE);
        sim_attr(d, "config", 0644, &pci_rw_ops, f, PCI_CONFIG);
        sim_attr(d, "resource", 0444, &pci_ro_ops, f, PCI_RESOURCE);
        sim_attr(d, "modalias", 0444, &pci_ro_ops, f, PCI_MODALIAS);
        sim_attr(d, "uevent", 0644, &pci_rw_ops, f, PCI_UEVENT);
        sim_attr(d, "enable", 0644, &pci_rw_ops, f, PCI_ENABLE);
        if (f->pcie) {
                sim_attr(d, "current_link_speed", 0444, &pci_ro_ops, f, PCI_CUR_LINK_SPEED);
                sim_attr(d, "current_link_width", 0444, &pci_ro_ops, f, PCI_CUR_LINK_WIDTH);
                sim_text(d, "max_link_speed", 0444, "%s", f->link_speed_max);
                sim_text(d, "max_link_width", 0444, "%u", f->link_width_max);
        }
        snprintf(link, sizeof(link), "%s/subsystem", f->path);
        sim_link(fs, link, "bus/pci");
        snprintf(link, sizeof(link), "bus/pci/devices/%s", f->bdf);
        sim_link(fs, link, f->path);
        sim_sriov_build_pf(f);
        if (m->vm || !m->host.iommu)
                return; /* no virtual IOMMU; or the host's is off */
        snprintf(link, sizeof(link), "kernel/iommu_groups/%u/devices/%s", f->iommu_group, f->bdf);
        sim_link(fs, link, f->path);
        snprintf(link, sizeof(link), "%s/iommu_group", f->path);
        snprintf(target, sizeof(target), "kernel/iommu_groups/%u", f->iommu_group);
        sim_link(fs, link, target);
}

void sim_bus_build(struct sim_machine *m) {
        struct sim_node *root = sim_fs_root(m->fs), *pci = sim_mkdir(root, "bus/pci");

        sim_mkdir(pci, "devices");
        sim_attr(pci, "drivers_probe", 0200, &drivers_probe_ops, m, 0);
        sim_attr(pci, "rescan", 0200, &rescan_ops, m, 0);
        for (int drv = 0; drv < _SIM_DRV_MAX; drv++) {
                struct sim_node *d;

                if (!driver_registered(m, drv))
                        continue;
                d = sim_mkdirf(pci, "drivers/%s", sim_driver_names[drv]);
                sim_attr(d, "bind", 0200, &drv_ops, m, (intptr_t) drv << 8 | DRV_BIND);
                sim_attr(d, "unbind", 0200, &drv_ops, m, (intptr_t) drv << 8 | DRV_UNBIND);
                sim_attr(d, "new_id", 0200, &drv_ops, m, (intptr_t) drv << 8 | DRV_NEW_ID);
                sim_attr(d, "remove_id", 0200, &drv_ops, m, (intptr_t) drv << 8 | DRV_REMOVE_ID);
                if (drv == SIM_DRV_GIM)
                        sim_gim_driver_build(m, d);
        }
        sim_sriov_modules_build(m);
        for (size_t i = 0; i < m->n_funcs; i++)
                build_func(m, m->funcs[i]);
}

/* Hot-plug (the control socket's replug): the function's PCI core files and links again. */
void sim_bus_add_func(struct sim_func *f) {
        build_func(f->m, f);
}

/* A VF gone (rule-sriov.c): its directory and the links to it; its IOMMU group (its own). */
void sim_bus_del_func(struct sim_func *f) {
        struct sim_fs *fs = f->m->fs;
        char path[128];

        sim_remove(sim_lookup(fs, f->path));
        snprintf(path, sizeof(path), "bus/pci/devices/%s", f->bdf);
        sim_remove(sim_lookup(fs, path));
        snprintf(path, sizeof(path), "kernel/iommu_groups/%u", f->iommu_group);
        sim_remove(sim_lookup(fs, path));
}
