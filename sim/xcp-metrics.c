/* SPDX-License-Identifier: MIT */
/*
 * amdsmi-sim: the partition metrics file xcp/xcp_metrics (spec amdgpu-sysfs.md §5.5, §1.3):
 * struct amdgpu_partition_metrics_v1_0 (488 bytes, header format 1 content 0) of one compute
 * partition, or v1.1 (attribute-encoded, format 1 content 1, spec gpu-metrics-v1.9.md §3) where
 * the GPU serves gpu_metrics v1.9, in the same kernel's layout. Under the partition's DRM
 * parent: the kernel adds the xcp kobject under xcp->ddev->dev, the primary device's for
 * partition 0 (<pci>/xcp/) and the amdgpu_xcp_K platform device's for the others
 * (devices/platform/amdgpu_xcp_K/xcp/), where each partition's renderD<minor>/device leads.
 * Newer kernels only (the machine's partition_config generation, or a GPU serving v1.9), where
 * the GPU has gpu_metrics, and only while the partition is valid: what is visible follows a
 * successful partition switch (not a failed one).
 *
 * The values are the partition's share of the GPU's gpu_metrics: the clocks of its XCCs (the
 * shared SOC, VCN and memory clocks), and its xcp_stats entry.
 */
#include "metrics.h"
#include "tree.h"

#define PARTITION_METRICS_SIZE 488

static void put(uint8_t *buf, size_t off, size_t width, uint64_t v) {
        if (v == SIM_METRICS_NA)
                v = UINT64_MAX; /* all-ones of the field's width */
        for (size_t i = 0; i < width; i++)
                buf[off + i] = (uint8_t) (v >> (8 * i));
}

static void put_array(uint8_t *buf, size_t off, size_t width, const uint64_t *v, size_t n) {
        for (size_t i = 0; i < n; i++)
                put(buf, off + i * width, width, v[i]);
}

static int xcp_metrics_show(struct sim_node *n, const struct sim_caller *c, char *out) {
        struct sim_gpu *g = sim_node_obj(n);
        unsigned part = (unsigned) sim_node_arg(n), parts = sim_gpu_parts(g);
        unsigned xcc_pp = g->prod->xcc / MAX(parts, 1u);
        const struct sim_xcp_stats *x;
        uint8_t *buf = (uint8_t *) out;
        uint64_t gfxclk[8];
        struct sim_metrics mt;
        int r = sim_gpu_pm_check(g);

        if (r < 0)
                return r;
        if (part >= parts || part >= 8)
                return -ENODEV;
        sim_telemetry_sync(g->m);
        sim_telemetry_metrics(g, &mt);
        x = &mt.xcp_stats[part];
        for (unsigned j = 0; j < 8; j++)
                gfxclk[j] = j < xcc_pp && part * xcc_pp + j < 8
                                    ? mt.current_gfxclk[part * xcc_pp + j]
                                    : SIM_METRICS_NA;
        if (g->metrics_rev == 9)
                return sim_xcp_metrics_v11_emit(&mt, gfxclk, x, g->metrics_layout, out,
                                                SIM_PAGE_SIZE - 1);
        memset(buf, 0xff, PARTITION_METRICS_SIZE); /* what the firmware does not fill */
        put(buf, 0, 2, PARTITION_METRICS_SIZE); /* structure_size */
        put(buf, 2, 1, 1);                      /* format_revision */
        put(buf, 3, 1, 0);                      /* content_revision */
        put_array(buf, 4, 2, gfxclk, 8);
        put_array(buf, 20, 2, mt.current_socclk, 4);
        put_array(buf, 28, 2, mt.current_vclk0, 4);
        put_array(buf, 36, 2, mt.current_dclk0, 4);
        put(buf, 44, 2, mt.current_uclk);
        put_array(buf, 48, 4, x->gfx_busy_inst, 8);
        put_array(buf, 80, 2, x->jpeg_busy, 40);
        put_array(buf, 160, 2, x->vcn_busy, 4);
        put_array(buf, 168, 8, x->gfx_busy_acc, 8);
        put_array(buf, 232, 8, x->gfx_below_host_limit_ppt_acc, 8);
        put_array(buf, 296, 8, x->gfx_below_host_limit_thm_acc, 8);
        put_array(buf, 360, 8, x->gfx_low_utilization_acc, 8);
        put_array(buf, 424, 8, x->gfx_below_host_limit_total_acc, 8);
        return PARTITION_METRICS_SIZE;
}

static const struct sim_attr_ops xcp_metrics_ops = { .show = xcp_metrics_show };

void sim_xcp_metrics_refresh(struct sim_gpu *g, bool present) {
        struct sim_fs *fs = g->m->fs;
        struct sim_node *pci = sim_lookup(fs, g->func->path);
        unsigned parts = sim_gpu_parts(g);
        bool newer = (g->m->kernel.partition_config || g->metrics_rev == 9) &&
                     sim_child(pci, "gpu_metrics");

        for (unsigned p = 0; p < SIM_MAX_XCP; p++) {
                struct sim_node *parent = pci, *xcp;
                bool want = present && newer && p < parts && g->render[p] >= 0;

                if (p > 0) {
                        char path[64];

                        snprintf(path, sizeof(path), "devices/platform/amdgpu_xcp_%d", g->xcp[p]);
                        parent = g->xcp[p] >= 0 ? sim_lookup(fs, path) : NULL;
                }
                if (!parent)
                        continue;
                xcp = sim_child(parent, "xcp");
                if (want && !xcp)
                        sim_attr(sim_mkdir(parent, "xcp"), "xcp_metrics", 0444, &xcp_metrics_ops, g,
                                 (intptr_t) p);
                else if (!want && xcp)
                        sim_remove(xcp);
        }
}
