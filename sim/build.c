/* SPDX-License-Identifier: MIT */
/*
 * amdsmi-sim: the tree at load (spec amdgpu-sysfs.md §9 rule 1): the machine's own devices
 * (thermal zone, CPU data fabric with k10temp, the BMC's VGA), the PCI bus with its drivers,
 * the KFD topology, then every bound driver's probe in PCI order. A VM has no thermal zone; a
 * gim host has no amdgpu module (so no KFD); VFs come from their PF's driver (rule-sriov.c).
 */
#include "tree.h"

int sim_emit(char *buf, const char *fmt, ...) {
        va_list ap;
        int r;

        va_start(ap, fmt);
        r = vsnprintf(buf, SIM_PAGE_SIZE, fmt, ap);
        va_end(ap);
        if (r < 0 || r >= SIM_PAGE_SIZE)
                return -ENOSPC;
        return r;
}

int sim_bitmap_alloc(uint64_t *bits, unsigned nbits, unsigned from) {
        for (unsigned i = from; i < nbits; i++)
                if (!(bits[i / 64] & (1ULL << (i % 64)))) {
                        bits[i / 64] |= 1ULL << (i % 64);
                        return (int) i;
                }
        return -ENOSPC;
}

void sim_bitmap_free(uint64_t *bits, int idx) {
        if (idx >= 0)
                bits[idx / 64] &= ~(1ULL << (idx % 64));
}

void sim_cpulist(const struct sim_machine *m, int node, char *buf, size_t size) {
        unsigned cores = m->cpu.cores_per_socket, all = cores * m->cpu.sockets;
        size_t len = 0;

        if (node < 0) {
                snprintf(buf, size, "0-%u", all * m->cpu.threads_per_core - 1);
                return;
        }
        for (unsigned t = 0; t < m->cpu.threads_per_core; t++) {
                unsigned first = t * all + (unsigned) node * cores;

                bprintf(buf, size, &len, "%s%u-%u", t ? "," : "", first, first + cores - 1);
        }
}

/* An ACPI thermal zone with its hwmon0, as bare-metal servers have. */
static void build_thermal_zone(struct sim_machine *m) {
        struct sim_node *root = sim_fs_root(m->fs);
        struct sim_node *tz = sim_mkdir(root, "devices/virtual/thermal/thermal_zone0"), *h;

        sim_text(tz, "type", 0444, "acpitz");
        sim_text(tz, "temp", 0444, "27800");
        sim_link(m->fs, "devices/virtual/thermal/thermal_zone0/subsystem", "class/thermal");
        sim_link(m->fs, "class/thermal/thermal_zone0", "devices/virtual/thermal/thermal_zone0");
        h = sim_mkdir(tz, "hwmon0");
        sim_text(h, "name", 0444, "acpitz");
        sim_text(h, "temp1_input", 0444, "27800");
        sim_text(h, "temp1_crit", 0444, "105000");
        sim_link(m->fs, "devices/virtual/thermal/thermal_zone0/hwmon0/device",
                 "devices/virtual/thermal/thermal_zone0");
        sim_link(m->fs, "devices/virtual/thermal/thermal_zone0/hwmon0/subsystem", "class/hwmon");
        sim_link(m->fs, "class/hwmon/hwmon0", "devices/virtual/thermal/thermal_zone0/hwmon0");
        m->hwmon_used[0] |= 1;
}

int sim_tree_build(struct sim_machine *m, struct sim_fs *fs) {
        struct sim_node *root = sim_fs_root(fs);
        int r;

        m->fs = fs;
        for (size_t i = 0; i < m->n_gpus; i++) {
                struct sim_gpu *g = m->gpus[i];

                for (int p = 0; p < SIM_MAX_XCP; p++)
                        g->card[p] = g->render[p] = g->xcp[p] = -1;
                g->hwmon = -1;
                g->throttling_interval_s = 60;
                snprintf(g->perf_level, sizeof(g->perf_level), "auto");
                g->xcp_config_view = g->compute;
        }
        sim_telemetry_init(m);

        sim_mkdir(root, "block");
        sim_mkdir(root, "bus/platform/devices");
        sim_mkdir(root, "class/drm");
        sim_mkdir(root, "class/hwmon");
        sim_mkdir(root, "devices/platform");
        sim_mkdir(root, "devices/system/node");
        sim_mkdir(root, "firmware");
        sim_mkdir(root, "fs");
        sim_mkdir(root, "kernel/iommu_groups");
        sim_host_build(m);
        sim_text(sim_mkdir(root, "class/drm"), "version", 0444, "drm 1.1.0 20060810");
        if (!m->gim_host)
                sim_text(sim_mkdir(root, "module/amdgpu"), "initstate", 0444, "live");
        for (unsigned n = 0; n < m->cpu.sockets; n++) {
                char cpus[128];
                struct sim_node *d = sim_mkdirf(root, "devices/system/node/node%u", n);

                sim_cpulist(m, (int) n, cpus, sizeof(cpus));
                sim_text(d, "cpulist", 0444, "%s", cpus);
        }
        {
                char cpus[128];

                sim_cpulist(m, -1, cpus, sizeof(cpus));
                sim_text(sim_mkdir(root, "devices/system/node"), "online", 0444, "0-%u",
                         m->cpu.sockets - 1);
                sim_text(sim_mkdir(root, "devices/system/cpu"), "online", 0444, "%s", cpus);
        }
        if (!m->vm)
                build_thermal_zone(m);
        if (!m->gim_host)
                sim_topology_build(m);
        sim_bus_build(m);
        r = sim_fs_error(fs);
        if (r < 0)
                return r;

        /* probe in PCI order, as the kernel does at boot */
        for (size_t i = 0; i < m->n_funcs; i++) {
                struct sim_func *f = m->funcs[i];
                int drv = f->driver;

                if (drv == SIM_DRV_NONE || f->physfn)
                        continue; /* VFs were probed when their PF's driver made them */
                f->driver = SIM_DRV_NONE;
                f->enable_cnt = 0;
                r = sim_bus_probe(f, drv);
                if (r < 0) {
                        fprintf(stderr, "amdsmi-sim: %s: %s probe failed: %s\n", f->bdf,
                                sim_driver_names[drv], strerror(-r));
                        return r;
                }
        }
        if (!m->gim_host)
                sim_topology_refresh(m);
        return sim_fs_error(fs);
}
