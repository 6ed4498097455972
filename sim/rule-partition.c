/* SPDX-License-Identifier: MIT */
/*
 * amdsmi-sim: compute partitions (spec amdgpu-sysfs.md §2, §9 rule 2).
 *
 * A write of current_compute_partition runs the kernel's checks in its order: an odd XCC count,
 * the token and its XCC rule (EINVAL), a reset in progress (EPERM, DKMS kernels), the same mode
 * (success, nothing happens), the memory mode (EINVAL), KFD users (EBUSY), then the switch:
 * the GPU's KFD nodes are removed and the new partitions' nodes appended (generation_id moves
 * by one per node removed and one per node added).
 *
 * A switch holds the partition mutex while it runs (switch_ms, set by the control socket):
 * reads of current_compute_partition and other writes of that GPU wait for its end, without
 * the fs lock, so that every other file is served meanwhile (the reads are parked and hold no
 * worker; the writer, and another writer of that GPU, do).
 *
 * An injected EIO (KFD re-init failure, ctl switch-error) leaves the state the kernel leaves
 * (amdgpu_xcp_switch_partition_mode(): on failure "get whatever mode it's at now"): the
 * hardware switched, so current_compute_partition shows the new mode; KFD init failed, so the
 * GPU has no KFD nodes; available_compute_partition is not recomputed. KFD stays down until the
 * driver is loaded again (unbind and bind, or replug): later switches skip KFD as the kernel
 * does without kfd.init_complete, so they succeed (no EBUSY check) and change the mode, but
 * bring no nodes back.
 */
#include <strings.h>

#include "parse.h"
#include "tree.h"

static int compute_show(struct sim_node *n, const struct sim_caller *c, char *buf) {
        struct sim_gpu *g = sim_node_obj(n);

        if (g->m->kernel.dkms && g->in_reset)
                return -EPERM;
        if (g->switching)
                return SIM_SHOW_LATER; /* the partition mutex: read again after the switch */
        return sim_emit(buf, "%s\n", sim_compute_names[g->compute]);
}

/* The token, prefix and case-insensitive, with the XCC rule of each mode (check 2). */
static int parse_mode(const struct sim_gpu *g, const char *buf, enum sim_compute *ret) {
        unsigned xcc = g->prod->xcc;

        for (int mode = 0; mode < _SIM_COMPUTE_MAX; mode++) {
                if (strncasecmp(sim_compute_names[mode], buf, 3) != 0)
                        continue;
                if ((mode == SIM_DPX && xcc % 4 != 0) || (mode == SIM_TPX && xcc != 6) ||
                    (mode == SIM_QPX && xcc != 8))
                        return -EINVAL;
                *ret = (enum sim_compute) mode;
                return 0;
        }
        return -EINVAL;
}

static int partition_switch(struct sim_gpu *g, enum sim_compute mode) {
        int err = g->switch_error;

        if (err && !g->switch_error_always)
                g->switch_error = 0;
        if (err && err != EIO)
                return -err; /* refused before anything happened */

        sim_topology_remove_gpu(g);
        if (g->switch_ms > 0) {
                /* KFD is down; the hardware switch and the KFD re-init take their time */
                sim_topology_refresh(g->m);
                g->switching = true;
                sim_fs_sleep(g->m->fs, g->switch_ms);
        }
        if (g->attached) { /* (the driver may have gone meanwhile) */
                g->compute = mode;
                g->xcp_config_view = mode;
                for (int p = 0; p < SIM_MAX_XCP; p++)
                        g->enforce_isolation[p] = 0;
                if (err == EIO)
                        g->kfd_lost = true;
                if (!g->kfd_lost)
                        sim_topology_add_gpu(g);
                sim_topology_refresh(g->m);
                if (!err) /* the xcp sysfs entries follow a successful switch only */
                        sim_xcp_metrics_refresh(g, true);
        }
        if (g->switching) {
                /* the partition mutex is released: readers and writers waiting go on */
                g->switching = false;
                sim_fs_wake(g->m->fs);
        }
        if (!g->attached)
                return -ENODEV;
        return err ? -err : 0;
}

static int compute_store(struct sim_node *n, const struct sim_caller *c, const char *buf,
                         size_t len) {
        struct sim_gpu *g = sim_node_obj(n);
        enum sim_compute mode;
        int r;

        if (g->prod->xcc % 2 != 0)
                return -EINVAL;
        r = parse_mode(g, buf, &mode);
        if (r < 0)
                return r;
        if (g->m->kernel.dkms && g->in_reset)
                return -EPERM;
        while (g->switching) /* another switch of this GPU runs: the partition mutex */
                sim_fs_wait(g->m->fs);
        if (!g->attached)
                return -ENODEV;
        if (mode == g->compute)
                return 0;
        if (!(sim_compute_available(g, g->nps_current) & (1u << mode)))
                return -EINVAL;
        /* without KFD (its init failed) the kernel neither checks nor re-inits it */
        if (!g->kfd_lost && sim_kfd_users_of(g) > 0)
                return -EBUSY;
        return partition_switch(g, mode);
}

const struct sim_attr_ops sim_compute_current_ops = { .show = compute_show,
                                                      .store = compute_store };

static int mode_list(unsigned mask, char *buf) {
        size_t len = 0;

        for (int mode = 0; mode < _SIM_COMPUTE_MAX; mode++)
                if (mask & (1u << mode))
                        bprintf(buf, SIM_PAGE_SIZE, &len, "%s%s", len ? ", " : "",
                                sim_compute_names[mode]);
        if (len == 0)
                bprintf(buf, SIM_PAGE_SIZE, &len, "Not supported");
        bprintf(buf, SIM_PAGE_SIZE, &len, "\n");
        return len > SIM_PAGE_SIZE ? -ENOSPC : (int) len;
}

static int available_show(struct sim_node *n, const struct sim_caller *c, char *buf) {
        struct sim_gpu *g = sim_node_obj(n);

        return mode_list(sim_compute_available(g, g->nps_current), buf);
}

const struct sim_attr_ops sim_compute_available_ops = { .show = available_show };

/* enforce_isolation (§2.6): one value per partition. */
static int isolation_show(struct sim_node *n, const struct sim_caller *c, char *buf) {
        struct sim_gpu *g = sim_node_obj(n);
        unsigned parts = sim_gpu_parts(g);
        size_t len = 0;

        for (unsigned p = 0; p < parts && p < SIM_MAX_XCP; p++)
                bprintf(buf, SIM_PAGE_SIZE, &len, "%s%u", p ? " " : "", g->enforce_isolation[p]);
        bprintf(buf, SIM_PAGE_SIZE, &len, "\n");
        return len > SIM_PAGE_SIZE ? -ENOSPC : (int) len;
}

static int isolation_store(struct sim_node *n, const struct sim_caller *c, const char *buf,
                           size_t len) {
        struct sim_gpu *g = sim_node_obj(n);
        unsigned parts = sim_gpu_parts(g), values[SIM_MAX_XCP], count = 0;
        unsigned max = g->m->kernel.dkms ? 3 : 1;
        const char *p = buf;

        for (;;) {
                char *end;
                unsigned long v;

                while (*p == ' ' || *p == '\n')
                        p++;
                if (!*p)
                        break;
                errno = 0;
                v = strtoul(p, &end, 10);
                if (end == p || errno || count == SIM_MAX_XCP || v > max)
                        return -EINVAL;
                values[count++] = (unsigned) v;
                p = end;
        }
        if (count != parts)
                return -EINVAL;
        memcpy(g->enforce_isolation, values, count * sizeof(values[0]));
        return 0;
}

const struct sim_attr_ops sim_enforce_isolation_ops = { .show = isolation_show,
                                                        .store = isolation_store };

static int cleaner_store(struct sim_node *n, const struct sim_caller *c, const char *buf,
                         size_t len) {
        struct sim_gpu *g = sim_node_obj(n);
        long idx;
        int r;

        if (g->in_reset)
                return -EPERM;
        r = kstrtol(buf, 0, &idx);
        if (r < 0)
                return r;
        if (idx < 0 || (unsigned long) idx >= sim_gpu_parts(g))
                return -EINVAL;
        return 0;
}

const struct sim_attr_ops sim_cleaner_shader_ops = { .store = cleaner_store };

/* compute_partition_mem_alloc_mode (DKMS, §2.6). */
static int alloc_mode_show(struct sim_node *n, const struct sim_caller *c, char *buf) {
        struct sim_gpu *g = sim_node_obj(n);

        return sim_emit(buf, "%s\n", g->mem_alloc_all ? "ALL" : "CAPPING");
}

static int alloc_mode_store(struct sim_node *n, const struct sim_caller *c, const char *buf,
                            size_t len) {
        struct sim_gpu *g = sim_node_obj(n);

        if (strncasecmp("CAPPING", buf, 7) == 0)
                g->mem_alloc_all = false;
        else if (strncasecmp("ALL", buf, 3) == 0)
                g->mem_alloc_all = true;
        else
                return -EINVAL;
        return 0;
}

const struct sim_attr_ops sim_mem_alloc_mode_ops = { .show = alloc_mode_show,
                                                     .store = alloc_mode_store };

/* compute_partition_config/ (§2.5): a view of one mode, selected by xcp_config. */
static int xcp_config_show(struct sim_node *n, const struct sim_caller *c, char *buf) {
        struct sim_gpu *g = sim_node_obj(n);

        return sim_emit(buf, "%s\n", sim_compute_names[g->xcp_config_view]);
}

static int xcp_config_store(struct sim_node *n, const struct sim_caller *c, const char *buf,
                            size_t len) {
        struct sim_gpu *g = sim_node_obj(n);

        for (int mode = 0; mode < _SIM_COMPUTE_MAX; mode++)
                if (strncasecmp(sim_compute_names[mode], buf, 3) == 0) {
                        if (!(sim_compute_supported(g->prod->xcc) & (1u << mode)))
                                return -EINVAL;
                        g->xcp_config_view = (enum sim_compute) mode;
                        return 0;
                }
        return -EINVAL;
}

const struct sim_attr_ops sim_xcp_config_ops = { .show = xcp_config_show,
                                                 .store = xcp_config_store };

static int xcp_nps_show(struct sim_node *n, const struct sim_caller *c, char *buf) {
        struct sim_gpu *g = sim_node_obj(n);
        size_t len = 0;

        for (unsigned nps = 1; nps <= 8; nps++)
                if ((g->nps_supported & SIM_NPS_BIT(nps)) &&
                    (sim_compute_available(g, nps) & (1u << g->xcp_config_view)))
                        bprintf(buf, SIM_PAGE_SIZE, &len, "%sNPS%u", len ? ", " : "", nps);
        bprintf(buf, SIM_PAGE_SIZE, &len, "\n");
        return len > SIM_PAGE_SIZE ? -ENOSPC : (int) len;
}

const struct sim_attr_ops sim_xcp_nps_configs_ops = { .show = xcp_nps_show };

static int xcp_resource_show(struct sim_node *n, const struct sim_caller *c, char *buf) {
        struct sim_gpu *g = sim_node_obj(n);
        intptr_t arg = sim_node_arg(n);
        int res = (int) (arg / 2);
        bool shared = arg % 2;
        unsigned parts = sim_compute_parts(g->xcp_config_view, g->prod->xcc), r, inst, sh;

        r = res == SIM_XCP_RES_XCC   ? g->prod->xcc
            : res == SIM_XCP_RES_DMA ? g->prod->sdma_engines
                                     : g->prod->vcn;
        if (r < parts) {
                inst = 1;
                sh = parts / r;
        } else {
                inst = r / parts;
                sh = 1;
        }
        if (res == SIM_XCP_RES_JPEG)
                inst *= g->prod->jpeg_per_vcn;
        return sim_emit(buf, "%u\n", shared ? sh : inst);
}

const struct sim_attr_ops sim_xcp_resource_ops = { .show = xcp_resource_show };
