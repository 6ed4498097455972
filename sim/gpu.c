/* SPDX-License-Identifier: MIT */
/*
 * amdsmi-sim: what amdgpu creates when it binds a GPU (spec amdgpu-sysfs.md §1.3, §1.4, §2.1,
 * §2.5, §3.1, §4.2, §4.4), and removes again when it unbinds: identity and FRU files, partition
 * files, pm attributes, fw_version/, the eight DRM devices (partition 0 on the PCI function,
 * partitions 1..7 on amdgpu_xcp_K platform devices), hwmon, and the GPU's KFD nodes.
 * Inside a VF (§7.2): no FRU (the VF's product has none), partition files without a write bit
 * and without available_*; one-VF mode keeps hwmon and the ONEVF pm attributes with every
 * write bit of hwmon and pp_dpm_* removed; multi-VF mode has no hwmon and no pm attributes.
 */
#include <inttypes.h>
#include <strings.h>

#include "parse.h"
#include "tree.h"

struct sim_node *sim_gpu_own(struct sim_gpu *g, struct sim_node *n) {
        struct sim_node **v;

        if (!n)
                return NULL;
        if (g->n_owned == g->cap_owned) {
                size_t cap = g->cap_owned ? g->cap_owned * 2 : 64;

                v = realloc(g->owned, cap * sizeof(*v));
                if (!v) {
                        sim_remove(n);
                        return NULL;
                }
                g->owned = v;
                g->cap_owned = cap;
        }
        g->owned[g->n_owned++] = n;
        return n;
}

int sim_gpu_pm_check(const struct sim_gpu *g) {
        return g->in_reset ? -EBUSY : 0;
}

/* ---------------------------------------------------------------------------------------- */
/* pm attributes (§4.4) */

enum pm_attr {
        PM_DPM_LEVEL,
        PM_DPM_SCLK,
        PM_DPM_MCLK,
        PM_DPM_SOCCLK,
        PM_DPM_FCLK,
        PM_DPM_VCLK,
        PM_DPM_DCLK,
        PM_THROTTLING_LOGGING,
        PM_VRAM_USED,
};

static const struct sim_levels *dpm_levels(const struct sim_gpu *g, int attr) {
        switch (attr) {
        case PM_DPM_SCLK:
                return &g->prod->sclk;
        case PM_DPM_MCLK:
                return &g->prod->mclk;
        case PM_DPM_SOCCLK:
                return &g->prod->socclk;
        case PM_DPM_FCLK:
                return &g->prod->fclk;
        case PM_DPM_VCLK:
                return &g->prod->vclk;
        default:
                return &g->prod->dclk;
        }
}

/* Below this a clock is in deep sleep (SMU_13_0_6_DSCLK_THRESHOLD; UNVERIFIED value). */
#define DSCLK_THRESHOLD_MHZ 140

static int show_levels(const struct sim_gpu *g, int attr, char *buf) {
        const struct sim_levels *l = dpm_levels(g, attr);
        size_t len = 0;
        unsigned now = attr == PM_DPM_SCLK   ? g->tel.sclk_mhz
                       : attr == PM_DPM_MCLK ? g->tel.mclk_mhz
                                             : l->mhz[g->index % l->n];

        /* after a fatal RAS interrupt every clock file reads this */
        if (g->perf.unavailable)
                return sim_emit(buf, "unavailable\n");
        if ((attr == PM_DPM_SCLK || attr == PM_DPM_MCLK) && now < DSCLK_THRESHOLD_MHZ) {
                /* smu_v13_0_6_print_clks(): deep sleep first, the default levels unmarked */
                bprintf(buf, SIM_PAGE_SIZE, &len, "S: %uMhz *\n", now);
                for (unsigned i = 0; i < l->n; i++)
                        bprintf(buf, SIM_PAGE_SIZE, &len, "%u: %uMhz\n", i, l->mhz[i]);
                return len > SIM_PAGE_SIZE ? -ENOSPC : (int) len;
        }
        if (attr == PM_DPM_SCLK) {
                /* gfxclk: min, the current clock between them, max */
                unsigned cur = g->tel.sclk_mhz, lo = l->mhz[0], hi = l->mhz[l->n - 1];

                if (cur <= lo)
                        bprintf(buf, SIM_PAGE_SIZE, &len, "0: %uMhz *\n1: %uMhz\n", lo, hi);
                else if (cur >= hi)
                        bprintf(buf, SIM_PAGE_SIZE, &len, "0: %uMhz\n1: %uMhz *\n", lo, hi);
                else
                        bprintf(buf, SIM_PAGE_SIZE, &len, "0: %uMhz\n1: %uMhz *\n2: %uMhz\n", lo,
                                cur, hi);
        } else {
                unsigned cur = attr == PM_DPM_MCLK ? g->tel.mclk_mhz : l->mhz[g->index % l->n];

                for (unsigned i = 0; i < l->n; i++)
                        bprintf(buf, SIM_PAGE_SIZE, &len, "%u: %uMhz%s\n", i, l->mhz[i],
                                l->mhz[i] == cur ? " *" : "");
        }
        return len > SIM_PAGE_SIZE ? -ENOSPC : (int) len;
}

static int pm_show(struct sim_node *n, const struct sim_caller *c, char *buf) {
        struct sim_gpu *g = sim_node_obj(n);
        int attr = (int) sim_node_arg(n), r;

        /* the baseline (the sensor vram_used_bytes) and what the KFD processes hold */
        if (attr == PM_VRAM_USED)
                return sim_emit(buf, "%" PRIu64 "\n",
                                g->sensors.vram_used_bytes + sim_kfd_vram_used(g, -1));
        r = sim_gpu_pm_check(g);
        if (r < 0)
                return r;
        sim_telemetry_sync(g->m);
        switch (attr) {
        case PM_DPM_LEVEL:
                return sim_emit(buf, "%s\n", g->perf_level);
        case PM_THROTTLING_LOGGING:
                return sim_emit(buf,
                                "%s: thermal throttling logging %s, with interval %u seconds\n",
                                g->func->bdf, g->throttling_interval_s ? "enabled" : "disabled",
                                g->throttling_interval_s ? g->throttling_interval_s : 60);
        default:
                return show_levels(g, attr, buf);
        }
}

static int pm_store(struct sim_node *n, const struct sim_caller *c, const char *buf, size_t len) {
        static const char *const levels[] = { "auto",
                                              "low",
                                              "high",
                                              "manual",
                                              "profile_exit",
                                              "profile_standard",
                                              "profile_min_sclk",
                                              "profile_min_mclk",
                                              "profile_peak",
                                              "perf_determinism" };
        struct sim_gpu *g = sim_node_obj(n);
        int attr = (int) sim_node_arg(n), r;
        long v;

        r = sim_gpu_pm_check(g);
        if (r < 0)
                return r;
        switch (attr) {
        case PM_DPM_LEVEL:
                for (size_t i = 0; i < ELEMENTSOF(levels); i++)
                        if (sysfs_streq(levels[i], buf)) {
                                /* SMU 13.0.6 takes these three only */
                                if (!streq(levels[i], "auto") && !streq(levels[i], "manual") &&
                                    !streq(levels[i], "perf_determinism"))
                                        return -EINVAL;
                                sim_perf_level_changed(g, g->perf_level, levels[i]);
                                snprintf(g->perf_level, sizeof(g->perf_level), "%s", levels[i]);
                                return 0;
                        }
                return -EINVAL;
        case PM_THROTTLING_LOGGING:
                r = kstrtol(buf, 0, &v);
                if (r < 0)
                        return r;
                if (v > 3600)
                        return -EINVAL;
                g->throttling_interval_s = v > 0 ? (unsigned) v : 0;
                return 0;
        default: {
                /* a mask of levels ("0 2"): only in manual mode */
                const struct sim_levels *l = dpm_levels(g, attr);
                const char *p = buf;
                bool any = false;

                while (*p) {
                        char *end;
                        unsigned long lv;

                        while (*p == ' ' || *p == '\n')
                                p++;
                        if (!*p)
                                break;
                        errno = 0;
                        lv = strtoul(p, &end, 10);
                        if (end == p || errno || lv >= l->n)
                                return -EINVAL;
                        any = true;
                        p = end;
                }
                if (!any || !streq(g->perf_level, "manual"))
                        return -EINVAL;
                return 0;
        }
        }
}

static const struct sim_attr_ops pm_ops = { .show = pm_show, .store = pm_store };
static const struct sim_attr_ops pm_ro_ops = { .show = pm_show };

/* ---------------------------------------------------------------------------------------- */

static bool guest(const struct sim_gpu *g) {
        return g->role == SIM_ROLE_GUEST_1VF || g->role == SIM_ROLE_GUEST_MULTIVF;
}

static void build_identity(struct sim_gpu *g, struct sim_node *d) {
        const struct sim_product *p = g->prod;

        if (g->role == SIM_ROLE_GUEST_MULTIVF)
                ; /* unique_id is a pm attribute */
        else if (g->unique_id)
                sim_gpu_own(g, sim_text(d, "unique_id", 0444, "%016" PRIx64, g->unique_id));
        else
                sim_gpu_own(g, sim_raw(d, "unique_id", 0444, NULL, 0));
        if (p->fru) {
                sim_gpu_own(g, sim_text(d, "serial_number", 0444, "%s", g->serial));
                sim_gpu_own(g, sim_text(d, "product_name", 0444, "%s", p->fru_product_name));
                sim_gpu_own(g, sim_text(d, "product_number", 0444, "%s", p->fru_product_number));
                sim_gpu_own(g, sim_text(d, "fru_id", 0444, "%s", p->fru_id));
                sim_gpu_own(g, sim_text(d, "manufacturer", 0444, "%s", p->fru_manufacturer));
        }
        sim_gpu_own(g, sim_text(d, "vbios_version", 0444, "%s", p->vbios_version));
        if (g->m->kernel.partition_config && p->vbios_build)
                sim_gpu_own(g, sim_text(d, "vbios_build", 0444, "%s", p->vbios_build));
        sim_gpu_own(g, sim_text(d, "mem_info_vram_total", 0444, "%" PRIu64, p->vram_bytes));
        sim_gpu_own(g, sim_attr(d, "mem_info_vram_used", 0444, &pm_ro_ops, g, PM_VRAM_USED));
        sim_gpu_own(g, sim_text(d, "mem_info_vis_vram_total", 0444, "%" PRIu64, p->vram_bytes));
        sim_gpu_own(g, sim_text(d, "mem_info_gtt_total", 0444, "%" PRIu64, p->gtt_bytes));
}

static void build_partition_files(struct sim_gpu *g, struct sim_node *d) {
        struct sim_machine *m = g->m;
        unsigned nps_count = (unsigned) __builtin_popcount(g->nps_supported);

        /* a VF cannot switch: no write bit, no available modes */
        sim_gpu_own(g, sim_attr(d, "current_compute_partition", guest(g) ? 0444 : 0644,
                                &sim_compute_current_ops, g, 0));
        if (!guest(g))
                sim_gpu_own(g, sim_attr(d, "available_compute_partition", 0444,
                                        &sim_compute_available_ops, g, 0));
        sim_gpu_own(g, sim_attr(d, "current_memory_partition", nps_count > 1 ? 0644 : 0444,
                                &sim_memory_current_ops, g, 0));
        if (nps_count > 1) {
                char list[64];
                size_t len = 0;

                for (unsigned n = 1; n <= 8; n++)
                        if (g->nps_supported & SIM_NPS_BIT(n))
                                bprintf(list, sizeof(list), &len, "%sNPS%u", len ? ", " : "", n);
                sim_gpu_own(g, sim_text(d, "available_memory_partition", 0444, "%s", list));
        }
        sim_gpu_own(g, sim_attr(d, "enforce_isolation", 0644, &sim_enforce_isolation_ops, g, 0));
        sim_gpu_own(g, sim_attr(d, "run_cleaner_shader", 0200, &sim_cleaner_shader_ops, g, 0));
        if (m->kernel.dkms)
                sim_gpu_own(g, sim_attr(d, "compute_partition_mem_alloc_mode", 0644,
                                        &sim_mem_alloc_mode_ops, g, 0));
        if (m->kernel.partition_config && !guest(g)) {
                static const char *const res[] = { "xcc", "dma", "dec", "jpeg" };
                unsigned hw = sim_compute_supported(g->prod->xcc);
                struct sim_node *cpc = sim_gpu_own(g, sim_mkdir(d, "compute_partition_config"));
                char list[64];
                size_t len = 0;

                for (int mode = 0; mode < _SIM_COMPUTE_MAX; mode++)
                        if (hw & (1u << mode))
                                bprintf(list, sizeof(list), &len, "%s%s", len ? ", " : "",
                                        sim_compute_names[mode]);
                sim_text(cpc, "supported_xcp_configs", 0444, "%s", list);
                if (g->nps_supported)
                        sim_attr(cpc, "supported_nps_configs", 0444, &sim_xcp_nps_configs_ops, g,
                                 0);
                sim_attr(cpc, "xcp_config", 0644, &sim_xcp_config_ops, g, 0);
                for (int r = 0; r < 4; r++) {
                        struct sim_node *sub = sim_mkdir(cpc, res[r]);

                        sim_attr(sub, "num_inst", 0400, &sim_xcp_resource_ops, g,
                                 SIM_XCP_RES_ARG(r, 0));
                        sim_attr(sub, "num_shared", 0400, &sim_xcp_resource_ops, g,
                                 SIM_XCP_RES_ARG(r, 1));
                }
        }
}

static void build_pm(struct sim_gpu *g, struct sim_node *d) {
        static const char *const clocks[] = { "pp_dpm_sclk", "pp_dpm_mclk", "pp_dpm_socclk",
                                              "pp_dpm_fclk", "pp_dpm_vclk", "pp_dpm_dclk" };
        unsigned dpm_mode = g->role == SIM_ROLE_GUEST_1VF ? 0444 : 0644;

        if (g->role == SIM_ROLE_GUEST_MULTIVF) {
                sim_perf_defaults(g);
                return;
        }
        sim_gpu_own(g, sim_attr(d, "gpu_metrics", 0444, &sim_gpu_metrics_ops, g, 0));
        sim_gpu_own(g, sim_attr(d, "gpu_busy_percent", 0444, &sim_busy_ops, g, 0));
        sim_gpu_own(g, sim_attr(d, "mem_busy_percent", 0444, &sim_busy_ops, g, 1));
        sim_gpu_own(g, sim_attr(d, "power_dpm_force_performance_level", 0644, &pm_ops, g,
                                PM_DPM_LEVEL));
        for (size_t i = 0; i < ELEMENTSOF(clocks); i++)
                sim_gpu_own(g, sim_attr(d, clocks[i], dpm_mode,
                                        dpm_mode & 0200 ? &pm_ops : &pm_ro_ops, g,
                                        PM_DPM_SCLK + (int) i));
        sim_gpu_own(g, sim_attr(d, "thermal_throttling_logging", 0644, &pm_ops, g,
                                PM_THROTTLING_LOGGING));
        sim_perf_build(g, d);
}

/* ---------------------------------------------------------------------------------------- */
/* XGMI (health-and-control.md §3.1; amdgpu_xgmi.c amdgpu_xgmi_sysfs_add_dev_info() and the
 * amdgpu_xgmi_show_*() of Linux 6.x): on a PF amdgpu drives whose GPU is in a hive. */

enum link_attr {
        LINK_XGMI_DEVICE_ID,
        LINK_XGMI_PHYSICAL_ID,
        LINK_XGMI_ERROR,
        LINK_XGMI_NUM_HOPS,
        LINK_XGMI_NUM_LINKS,
        LINK_PCIE_REPLAY,
};

static bool xgmi_member(const struct sim_gpu *g) {
        return g->hive_id && g->role == SIM_ROLE_BAREMETAL && g->attached && !g->func->unplugged;
}

/* The hive's devices as the PSP's topology lists them (top_info.nodes: hive->device_list, the
 * order they joined), @g among them; how many. */
static size_t hive_list(const struct sim_gpu *g, const struct sim_gpu **out) {
        size_t n = 0;

        for (size_t i = 0; i < g->m->n_gpus; i++) {
                const struct sim_gpu *o = g->m->gpus[i];
                size_t j;

                if (o->hive_id != g->hive_id || (!xgmi_member(o) && o != g))
                        continue;
                for (j = n; j > 0 && out[j - 1]->xgmi_join > o->xgmi_join; j--)
                        out[j] = out[j - 1];
                out[j] = o;
                n++;
        }
        return n;
}

/* The PSP's node id of a GPU (xgmi_device_id, "%llu"): a 64-bit number of the device. */
static uint64_t xgmi_node_id(const struct sim_gpu *g) {
        return sim_hash3(g->unique_id, g->hive_id, 0x786e6f6465ULL);
}

/* physical_node_id: the GPU's place on the board, 0..n-1 (here: BDF order in the hive). */
static unsigned xgmi_physical_id(const struct sim_gpu *g) {
        unsigned id = 0;

        for (size_t i = 0; i < g->m->n_gpus && g->m->gpus[i] != g; i++)
                if (g->m->gpus[i]->hive_id == g->hive_id)
                        id++;
        return id;
}

/* num_hops: bits 2:0 hops, 7:6 link type (1: xGMI3, the x16 links of GFX 9.4 and 9.5; which
 * value the PSP of a real board reports is not verified); every peer of these boards is one hop
 * away. The device itself: 0. */
static int xgmi_table_show(const struct sim_gpu *g, bool hops, char *buf) {
        const struct sim_gpu *list[SIM_MAX_GPUS];
        size_t n = hive_list(g, list), len = 0;

        for (size_t i = 0; i < n; i++) {
                unsigned v = list[i] == g ? 0 : hops ? 0x40 | 1 : sim_xgmi_links_per_peer(g);

                len += (size_t) snprintf(buf + len, SIM_PAGE_SIZE - len, "%02x ", v);
        }
        return sim_emit(buf + len, "\n") + (int) len;
}

static int link_show(struct sim_node *n, const struct sim_caller *c, char *buf) {
        struct sim_gpu *g = sim_node_obj(n);
        unsigned v;

        switch ((enum link_attr) sim_node_arg(n)) {
        case LINK_XGMI_DEVICE_ID:
                return sim_emit(buf, "%" PRIu64 "\n", xgmi_node_id(g));
        case LINK_XGMI_PHYSICAL_ID:
                return sim_emit(buf, "%u\n", xgmi_physical_id(g));
        case LINK_XGMI_ERROR:
                /* without the DF's get_fica/set_fica: -EINVAL; a read clears the status */
                if (!g->prod->xgmi_error_counter)
                        return -EINVAL;
                v = g->xgmi_error;
                g->xgmi_error = 0;
                return sim_emit(buf, "%u\n", v);
        case LINK_XGMI_NUM_HOPS:
        case LINK_XGMI_NUM_LINKS:
                return xgmi_table_show(g, sim_node_arg(n) == LINK_XGMI_NUM_HOPS, buf);
        case LINK_PCIE_REPLAY:
                return sim_emit(buf, "%" PRIu64 "\n", g->pcie_replays);
        }
        return -EINVAL;
}

static const struct sim_attr_ops link_ops = { .show = link_show };

/* The device whose directory holds the hive's kobject, NULL if the hive has none yet. */
static struct sim_gpu *hive_owner(const struct sim_gpu *g) {
        for (size_t i = 0; i < g->m->n_gpus; i++)
                if (g->m->gpus[i]->hive_id == g->hive_id && g->m->gpus[i]->hive_kobj)
                        return g->m->gpus[i];
        return NULL;
}

static size_t hive_count(const struct sim_gpu *g) {
        const struct sim_gpu *list[SIM_MAX_GPUS];

        return hive_list(g, list);
}

/* amdgpu_xgmi_add_device(): the device files; the hive's kobject xgmi_hive_info/ (with
 * xgmi_hive_id, "%llu") in the directory of the first device of the hive, a link to it in the
 * others'; node<K> in it to the device, K the hive's device count once it joined (from 1). No
 * xgmi_port_num: only with the XGMI TA's EXTEND_PEER_LINK_INFO capability, a firmware feature
 * not modelled. */
static void build_xgmi(struct sim_gpu *g, struct sim_node *d) {
        static const char *const names[] = { "xgmi_device_id", "xgmi_physical_id", "xgmi_error",
                                             "xgmi_num_hops", "xgmi_num_links" };
        struct sim_fs *fs = g->m->fs;
        struct sim_gpu *owner;
        char path[300], target[300];

        if (!g->hive_id || g->role != SIM_ROLE_BAREMETAL)
                return;
        g->xgmi_join = ++g->m->xgmi_joins;
        for (size_t i = 0; i < ELEMENTSOF(names); i++)
                sim_gpu_own(g, sim_attr(d, names[i], 0444, &link_ops, g, (intptr_t) i));
        owner = hive_owner(g);
        if (owner) {
                snprintf(path, sizeof(path), "%s/xgmi_hive_info", owner->func->path);
                if (!sim_lookup(fs, path)) {
                        /* its directory went with a device unplugged: the kobject is made
                         * again here, with the links of the devices still in the hive */
                        owner->hive_kobj = false;
                        owner = NULL;
                }
        }
        if (!owner) {
                const struct sim_gpu *list[SIM_MAX_GPUS];
                size_t n = hive_list(g, list);
                struct sim_node *h = sim_mkdir(d, "xgmi_hive_info");

                sim_text(h, "xgmi_hive_id", 0444, "%" PRIu64, g->hive_id);
                g->hive_kobj = true;
                for (size_t i = 0; i < n; i++) {
                        snprintf(path, sizeof(path), "%s/xgmi_hive_info/node%zu", g->func->path,
                                 i + 1);
                        sim_link(fs, path, list[i]->func->path);
                }
                return;
        }
        /* the holder of the kobject bound again: the directory stayed */
        if (owner != g) {
                snprintf(path, sizeof(path), "%s/xgmi_hive_info", g->func->path);
                snprintf(target, sizeof(target), "%s/xgmi_hive_info", owner->func->path);
                sim_gpu_own(g, sim_link(fs, path, target));
        }
        /* the count includes this device once it is attached (xgmi_member()) */
        snprintf(path, sizeof(path), "%s/xgmi_hive_info/node%zu", owner->func->path, hive_count(g));
        if (!sim_lookup(fs, path))
                sim_link(fs, path, g->func->path);
}

/* amdgpu_xgmi_remove_device(): node<K> of the count before it leaves (the kernel's name, even
 * if another device's), and the hive's kobject with the last device. */
static void unbuild_xgmi(struct sim_gpu *g) {
        struct sim_fs *fs = g->m->fs;
        struct sim_gpu *owner;
        char path[300];
        size_t count;

        if (!g->hive_id || g->role != SIM_ROLE_BAREMETAL || !(owner = hive_owner(g)))
                return;
        count = hive_count(g); /* g still counted */
        snprintf(path, sizeof(path), "%s/xgmi_hive_info/node%zu", owner->func->path, count);
        sim_remove(sim_lookup(fs, path));
        if (count <= 1) {
                snprintf(path, sizeof(path), "%s/xgmi_hive_info", owner->func->path);
                sim_remove(sim_lookup(fs, path));
                owner->hive_kobj = false;
        }
}

/*
 * health-and-control.md §3.2, §4.2: pcie_replay_count (not on a VF; the NAKs sent and received,
 * which gpu_metrics reports as 0 too) and compute_reset_mask (amdgpu's gpu_recovery is on by
 * default: "full"; the compute ring's soft recovery, not on SR-IOV; queue and pipe resets with
 * MEC firmware 155 or later). On the PF amdgpu drives (a VF is left out here).
 */
static void build_reset_files(struct sim_gpu *g, struct sim_node *d) {
        bool queue = g->fw[SIM_FW_MEC] >= 155;

        if (guest(g))
                return;
        sim_gpu_own(g, sim_attr(d, "pcie_replay_count", 0444, &link_ops, g, LINK_PCIE_REPLAY));
        sim_gpu_own(g, sim_text(d, "compute_reset_mask", 0444, "soft %sfull",
                                queue ? "queue pipe " : ""));
}

static void build_firmware(struct sim_gpu *g, struct sim_node *d) {
        struct sim_node *fw = sim_gpu_own(g, sim_mkdir(d, "fw_version"));

        for (size_t i = 0; i < _SIM_FW_MAX; i++) {
                char name[32];

                snprintf(name, sizeof(name), "%s_fw_version", sim_fw_names[i]);
                sim_text(fw, name, 0444, "0x%08x", g->fw[i]);
        }
}

/* One DRM device under @parent: its card and render node, and the class/drm links. */
static void build_drm_node(struct sim_gpu *g, const char *parent, const char *name, int minor) {
        struct sim_fs *fs = g->m->fs;
        char dir[256], link[300];
        struct sim_node *d;

        snprintf(dir, sizeof(dir), "%s/drm/%s", parent, name);
        d = sim_mkdir(sim_fs_root(fs), dir);
        sim_text(d, "dev", 0444, "226:%d", minor);
        snprintf(link, sizeof(link), "%s/device", dir);
        sim_link(fs, link, parent);
        snprintf(link, sizeof(link), "%s/subsystem", dir);
        sim_link(fs, link, "class/drm");
        snprintf(link, sizeof(link), "class/drm/%s", name);
        sim_gpu_own(g, sim_link(fs, link, dir));
}

/* §1.3: eight DRM devices per GPU, minors render first, lowest free. A partition whose render
 * minor cannot be had is skipped (as "Skip xcp node #%d when out of drm node resource"). */
static void build_drm(struct sim_gpu *g) {
        struct sim_machine *m = g->m;
        struct sim_node *root = sim_fs_root(m->fs);

        for (int p = 0; p < SIM_MAX_XCP; p++) {
                char parent[256], name[32];
                int render = sim_bitmap_alloc(m->render_used, 64, 0), card, xcp = -1;

                if (render < 0)
                        break;
                card = sim_bitmap_alloc(m->card_used, 256, 0);
                if (card < 0) {
                        sim_bitmap_free(m->render_used, render);
                        break;
                }
                if (p > 0) {
                        xcp = sim_bitmap_alloc(m->xcp_used, 64, 0);
                        if (xcp < 0) {
                                sim_bitmap_free(m->render_used, render);
                                sim_bitmap_free(m->card_used, card);
                                break;
                        }
                }
                g->render[p] = 128 + render;
                g->card[p] = card;
                g->xcp[p] = xcp;
                if (p == 0) {
                        snprintf(parent, sizeof(parent), "%s", g->func->path);
                        sim_gpu_own(g, sim_mkdir(sim_lookup(m->fs, parent), "drm"));
                } else {
                        char link[300];

                        snprintf(parent, sizeof(parent), "devices/platform/amdgpu_xcp_%d", xcp);
                        sim_gpu_own(g, sim_mkdir(root, parent));
                        snprintf(link, sizeof(link), "%s/subsystem", parent);
                        sim_link(m->fs, link, "bus/platform");
                        snprintf(link, sizeof(link), "bus/platform/devices/amdgpu_xcp_%d", xcp);
                        sim_gpu_own(g, sim_link(m->fs, link, parent));
                }
                snprintf(name, sizeof(name), "card%d", card);
                build_drm_node(g, parent, name, card);
                snprintf(name, sizeof(name), "renderD%d", 128 + render);
                build_drm_node(g, parent, name, 128 + render);
        }
}

static void build_hwmon(struct sim_gpu *g) {
        struct sim_machine *m = g->m;
        const struct sim_product *p = g->prod;
        char dir[256], link[300];
        struct sim_node *h;
        int idx;

        if (g->role == SIM_ROLE_GUEST_MULTIVF)
                return; /* "under multi-vf mode, the hwmon attributes are all not supported" */
        idx = sim_bitmap_alloc(m->hwmon_used, 256, 0);
        if (idx < 0)
                return;
        g->hwmon = idx;
        snprintf(dir, sizeof(dir), "%s/hwmon/hwmon%d", g->func->path, idx);
        sim_gpu_own(g, sim_mkdir(sim_lookup(m->fs, g->func->path), "hwmon"));
        h = sim_mkdir(sim_fs_root(m->fs), dir);
        for (int a = 0; a < _SIM_HW_MAX; a++) {
                /* one-VF guests: every write bit removed, unless the host granted power-limit
                 * control (newer kernels set power1_cap 0644 again) */
                bool rw = (a == SIM_HW_POWER1_CAP || a == SIM_HW_POWER2_CAP) &&
                          (!guest(g) || (a == SIM_HW_POWER1_CAP && m->kernel.vf_power_limit));

                if (a >= SIM_HW_POWER2_CAP && a <= SIM_HW_POWER2_LABEL && !p->ppt1)
                        continue;
                if ((a == SIM_HW_TEMP2_CRIT_HYST && !p->junction_crit_hyst_c) ||
                    (a == SIM_HW_TEMP3_CRIT_HYST && !p->mem_crit_hyst_c))
                        continue;
                sim_attr(h, sim_hwmon_names[a], rw ? 0644 : 0444, &sim_hwmon_ops, g, a);
        }
        snprintf(link, sizeof(link), "%s/device", dir);
        sim_link(m->fs, link, g->func->path);
        snprintf(link, sizeof(link), "%s/subsystem", dir);
        sim_link(m->fs, link, "class/hwmon");
        snprintf(link, sizeof(link), "class/hwmon/hwmon%d", idx);
        sim_gpu_own(g, sim_link(m->fs, link, dir));
}

int sim_gpu_attach(struct sim_gpu *g) {
        struct sim_node *d = sim_lookup(g->m->fs, g->func->path);

        if (!d)
                return -ENOENT;
        sim_memory_on_probe(g);
        g->xcp_config_view = g->compute;
        for (int p = 0; p < SIM_MAX_XCP; p++)
                g->enforce_isolation[p] = 0;
        build_identity(g, d);
        build_partition_files(g, d);
        build_pm(g, d);
        build_firmware(g, d);
        build_reset_files(g, d);
        build_drm(g);
        sim_ras_attach(g);
        sim_xcp_metrics_refresh(g, true);
        build_hwmon(g);
        g->attached = true;
        build_xgmi(g, d);
        g->kfd_lost = false;
        sim_topology_add_gpu(g);
        sim_topology_refresh(g->m);
        return 0;
}

void sim_gpu_detach(struct sim_gpu *g) {
        struct sim_machine *m = g->m;

        if (!g->attached)
                return;
        sim_smi_forget_gpu(g);
        unbuild_xgmi(g);
        sim_topology_remove_gpu(g);
        sim_topology_refresh(m);
        sim_xcp_metrics_refresh(g, false);
        for (size_t i = g->n_owned; i > 0; i--)
                sim_remove(g->owned[i - 1]);
        g->n_owned = 0;
        for (int p = 0; p < SIM_MAX_XCP; p++) {
                if (g->render[p] >= 0)
                        sim_bitmap_free(m->render_used, g->render[p] - 128);
                sim_bitmap_free(m->card_used, g->card[p]);
                sim_bitmap_free(m->xcp_used, g->xcp[p]);
                g->card[p] = g->render[p] = g->xcp[p] = -1;
        }
        sim_bitmap_free(m->hwmon_used, g->hwmon);
        g->hwmon = -1;
        g->attached = false;
        sim_memory_on_remove(g);
}
