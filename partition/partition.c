/* SPDX-License-Identifier: MIT */
/*
 * Partition modes of a GPU read from sysfs (spec amdgpu-sysfs §2, §3) and the plan of a
 * change. Reads only: compute_partition_config/xcp_config, a view selector, is never written.
 * Every partition read of the library is here; on a gim host each goes to partition-gim.c.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "partition-private.h"
#include "partition-rules.h"
#include "private.h"
#include "sysfs.h"

static void attr_path(struct amdsmi_gpu *gpu, const char *attr, char *buf, size_t size) {
        snprintf(buf, size, "%s/%s", gpu->syspath, attr);
}

static int read_list(struct amdsmi_gpu *gpu, const char *attr, bool compute, uint32_t *ret) {
        char buf[256];
        uint32_t mask;
        int r;

        r = gpu_read_partition_attr(gpu, attr, buf, sizeof(buf));
        if (r < 0)
                return r;
        r = compute ? partition_parse_compute_list(buf, &mask)
                    : partition_parse_memory_list(buf, &mask);
        if (r < 0) {
                log_warning(gpu->ctx, "%s/%s/%s: unexpected mode list \"%s\"", gpu->ctx->sysfs_root,
                            gpu->syspath, attr, buf);
                return r;
        }
        *ret = mask;
        return 0;
}

static unsigned gpu_xcc_count(struct amdsmi_gpu *gpu) {
        size_t n = amdsmi_gpu_get_partition_count(gpu);
        unsigned xcc = 0;

        for (size_t i = 0; i < n; i++)
                xcc += amdsmi_partition_get_xcc_count(amdsmi_gpu_get_partition(gpu, i));
        return xcc;
}

_public_ int amdsmi_gpu_read_compute_mode(struct amdsmi_gpu *gpu,
                                          enum amdsmi_compute_mode *ret_mode) {
        enum amdsmi_compute_mode m;
        char buf[32];
        int r;

        if (gpu_is_gim_host(gpu))
                return gim_read_compute_mode(gpu, ret_mode);
        r = gpu_read_partition_attr(gpu, "current_compute_partition", buf, sizeof(buf));
        if (r < 0)
                return r;
        if (amdsmi_compute_mode_from_string(buf, &m) < 0) {
                log_warning(gpu->ctx, "%s/%s/current_compute_partition: unexpected value \"%s\"",
                            gpu->ctx->sysfs_root, gpu->syspath, buf);
                return -EBADMSG;
        }
        *ret_mode = m;
        return 0;
}

_public_ int amdsmi_gpu_read_memory_mode(struct amdsmi_gpu *gpu,
                                         enum amdsmi_memory_mode *ret_mode) {
        enum amdsmi_memory_mode m;
        char buf[32];
        int r;

        if (gpu_is_gim_host(gpu))
                return gim_read_memory_mode(gpu, ret_mode);
        r = gpu_read_partition_attr(gpu, "current_memory_partition", buf, sizeof(buf));
        if (r < 0)
                return r;
        if (amdsmi_memory_mode_from_string(buf, &m) < 0) {
                log_warning(gpu->ctx, "%s/%s/current_memory_partition: unexpected value \"%s\"",
                            gpu->ctx->sysfs_root, gpu->syspath, buf);
                return -EBADMSG;
        }
        *ret_mode = m;
        return 0;
}

_public_ int amdsmi_gpu_get_supported_compute_modes(struct amdsmi_gpu *gpu, uint32_t *ret_mask) {
        char path[256];
        uint32_t mask;
        int r;

        if (gpu_is_gim_host(gpu))
                return gim_supported_compute_modes(gpu, ret_mask);
        r = read_list(gpu, "compute_partition_config/supported_xcp_configs", true, &mask);
        if (r != -ENODATA) {
                if (r == 0)
                        *ret_mask = mask;
                return r;
        }
        /* Older kernels: by XCC count, for GPUs that have partition support at all. */
        attr_path(gpu, "current_compute_partition", path, sizeof(path));
        r = sysfs_exists(gpu->ctx, path);
        if (r == -ENOENT)
                return -ENODATA;
        if (r < 0)
                return r;
        mask = partition_supported_by_xcc(gpu_xcc_count(gpu));
        if (mask == 0)
                return -ENODATA;
        *ret_mask = mask;
        return 0;
}

_public_ int amdsmi_gpu_read_available_compute_modes(struct amdsmi_gpu *gpu, uint32_t *ret_mask) {
        if (gpu_is_gim_host(gpu))
                return gim_available_compute_modes(gpu, ret_mask);
        return read_list(gpu, "available_compute_partition", true, ret_mask);
}

_public_ int amdsmi_gpu_read_available_memory_modes(struct amdsmi_gpu *gpu, uint32_t *ret_mask) {
        enum amdsmi_memory_mode cur;
        uint32_t mask;
        int r;

        if (gpu_is_gim_host(gpu))
                return gim_available_memory_modes(gpu, ret_mask);
        r = read_list(gpu, "available_memory_partition", false, &mask);
        if (r == 0) {
                *ret_mask = mask;
                return 1;
        }
        if (r != -ENODATA)
                return r;
        r = amdsmi_gpu_read_memory_mode(gpu, &cur);
        if (r < 0)
                return r;
        *ret_mask = cur == AMDSMI_MEMORY_UNKNOWN ? 0 : AMDSMI_MEMORY_MODE_BIT(cur);
        return 0;
}

static void read_share(struct amdsmi_gpu *gpu, const char *engine, const char *file,
                       uint64_t *ret) {
        char attr[128], path[256];
        uint64_t v;
        int r;

        snprintf(attr, sizeof(attr), "compute_partition_config/%s/%s", engine, file);
        attr_path(gpu, attr, path, sizeof(path));
        r = sysfs_read_u64(gpu->ctx, path, 10, &v);
        if (r < 0) {
                /* root-only files: -EACCES for everybody else is "unknown", not a failure */
                if (r != -EACCES && r != -ENOENT)
                        log_debug(gpu->ctx, "%s/%s: %s", gpu->ctx->sysfs_root, path, strerror(-r));
                *ret = AMDSMI_NA;
                return;
        }
        *ret = v;
}

_public_ int amdsmi_gpu_read_engine_shares(struct amdsmi_gpu *gpu,
                                           struct amdsmi_engine_shares *ret) {
        struct amdsmi_engine_shares s = {
                .xcc = { AMDSMI_NA, AMDSMI_NA },
                .dma = { AMDSMI_NA, AMDSMI_NA },
                .dec = { AMDSMI_NA, AMDSMI_NA },
                .jpeg = { AMDSMI_NA, AMDSMI_NA },
        };
        enum amdsmi_compute_mode view, cur;
        char buf[32];
        int r;

        r = gpu_read_partition_attr(gpu, "compute_partition_config/xcp_config", buf, sizeof(buf));
        if (r < 0)
                return r;
        if (amdsmi_compute_mode_from_string(buf, &view) < 0) {
                log_warning(gpu->ctx,
                            "%s/%s/compute_partition_config/xcp_config: unexpected "
                            "value \"%s\"",
                            gpu->ctx->sysfs_root, gpu->syspath, buf);
                return -EBADMSG;
        }
        r = amdsmi_gpu_read_compute_mode(gpu, &cur);
        if (r < 0)
                return r;
        s.mode = cur;
        if (view != cur) {
                log_debug(gpu->ctx,
                          "%s/%s/compute_partition_config/xcp_config shows %s, not the "
                          "current %s: engine shares unknown",
                          gpu->ctx->sysfs_root, gpu->syspath, amdsmi_compute_mode_to_string(view),
                          amdsmi_compute_mode_to_string(cur));
                *ret = s;
                return 0;
        }
        read_share(gpu, "xcc", "num_inst", &s.xcc.num_inst);
        read_share(gpu, "xcc", "num_shared", &s.xcc.num_shared);
        read_share(gpu, "dma", "num_inst", &s.dma.num_inst);
        read_share(gpu, "dma", "num_shared", &s.dma.num_shared);
        read_share(gpu, "dec", "num_inst", &s.dec.num_inst);
        read_share(gpu, "dec", "num_shared", &s.dec.num_shared);
        read_share(gpu, "jpeg", "num_inst", &s.jpeg.num_inst);
        read_share(gpu, "jpeg", "num_shared", &s.jpeg.num_shared);
        *ret = s;
        return 0;
}

/* Gathers what the plan needs. Partition support is required; everything else degrades. */
static int read_state(struct amdsmi_gpu *gpu, struct partition_state *s) {
        struct amdsmi_gpu *hive[AMDSMI_PLAN_MAX_HIVE];
        struct amdsmi_memory_info mi;
        unsigned n_hive;
        size_t n;
        int r;

        *s = (struct partition_state){ .vram_bytes = AMDSMI_NA };
        snprintf(s->bdf, sizeof(s->bdf), "%s", gpu->bdf);
        s->vf = amdsmi_gpu_is_vf(gpu);
        s->apu = strncmp(amdsmi_gpu_get_product(gpu), "MI300A", 6) == 0;
        s->xcc = gpu_xcc_count(gpu);
        n = amdsmi_gpu_get_partition_count(gpu);
        if (n > 0) {
                uint32_t gfx =
                        amdsmi_partition_get_gfx_target_version(amdsmi_gpu_get_partition(gpu, 0));
                s->gc950 = gfx / 100 == 905;
        }
        s->n_partitions = (unsigned) n;
        for (size_t i = 0; i < n && i < AMDSMI_PLAN_MAX_PARTITIONS; i++)
                s->render_minors[i] =
                        amdsmi_partition_get_render_minor(amdsmi_gpu_get_partition(gpu, i));

        r = amdsmi_gpu_read_compute_mode(gpu, &s->compute);
        if (r == -ENODATA) {
                s->compute = AMDSMI_COMPUTE_UNKNOWN;
                return 0; /* no partition support: the plan says so */
        }
        if (r < 0)
                return r;
        r = amdsmi_gpu_get_supported_compute_modes(gpu, &s->supported);
        if (r == -ENODATA)
                s->supported = 0;
        else if (r < 0)
                return r;
        if (s->xcc == 0 || (partition_supported_by_xcc(s->xcc) == 0 && s->supported != 0)) {
                /* no KFD (driver without compute): take the XCC count from the mode table */
                if (s->supported & AMDSMI_COMPUTE_MODE_BIT(AMDSMI_COMPUTE_TPX))
                        s->xcc = 6;
                else if (s->supported & AMDSMI_COMPUTE_MODE_BIT(AMDSMI_COMPUTE_QPX))
                        s->xcc = 8;
        }
        r = amdsmi_gpu_read_available_compute_modes(gpu, &s->available);
        if (r == 0)
                s->available_known = true;
        else if (r != -ENODATA)
                return r;
        r = amdsmi_gpu_read_memory_mode(gpu, &s->memory);
        if (r == -ENODATA)
                s->memory = AMDSMI_MEMORY_UNKNOWN;
        else if (r < 0)
                return r;
        r = amdsmi_gpu_read_available_memory_modes(gpu, &s->memory_available);
        if (r >= 0)
                s->memory_changeable = r > 0;
        else if (r != -ENODATA)
                return r;
        /* The memory the partitions share: KFD's, as the partitions see it (on an APU it is
         * not the VRAM carve-out); mem_info_vram_total when KFD does not say. */
        for (size_t i = 0; i < n; i++) {
                uint64_t b = amdsmi_partition_get_memory_bytes(amdsmi_gpu_get_partition(gpu, i));

                if (b == AMDSMI_NA) {
                        s->vram_bytes = AMDSMI_NA;
                        break;
                }
                s->vram_bytes = (s->vram_bytes == AMDSMI_NA ? 0 : s->vram_bytes) + b;
        }
        if (s->vram_bytes == AMDSMI_NA && amdsmi_gpu_read_memory_info(gpu, &mi) == 0)
                s->vram_bytes = mi.vram_total;

        n_hive = partition_hive_members(gpu, hive, AMDSMI_PLAN_MAX_HIVE);
        for (unsigned i = 0; i < n_hive && s->n_hive < AMDSMI_PLAN_MAX_HIVE - 1; i++)
                if (hive[i] != gpu)
                        snprintf(s->hive_bdfs[s->n_hive++], sizeof(s->hive_bdfs[0]), "%s",
                                 hive[i]->bdf);
        return 0;
}

unsigned partition_hive_members(struct amdsmi_gpu *gpu, struct amdsmi_gpu **ret, unsigned max) {
        uint64_t id = amdsmi_gpu_get_hive_id(gpu);
        struct amdsmi_ctx *ctx = gpu->ctx;
        unsigned n = 0;

        if (id == 0 || max == 0) {
                if (max > 0)
                        ret[n++] = gpu;
                return n;
        }
        for (size_t i = 0; i < ctx->n_gpus && n < max; i++)
                if (ctx->gpus[i] == gpu || amdsmi_gpu_get_hive_id(ctx->gpus[i]) == id)
                        ret[n++] = ctx->gpus[i];
        return n;
}

_public_ int amdsmi_gpu_plan_partition(struct amdsmi_gpu *gpu, enum amdsmi_compute_mode compute,
                                       enum amdsmi_memory_mode memory, uint64_t flags,
                                       struct amdsmi_partition_plan *ret_plan) {
        struct amdsmi_partition_plan plan;
        struct partition_state s;
        int r;

        if (ret_plan->size < sizeof(struct amdsmi_partition_plan))
                return -EINVAL;
        r = read_state(gpu, &s);
        if (r < 0)
                return r;
        s.gim = gpu_is_gim_host(gpu);
        r = partition_plan(&s, compute, memory, flags, &plan);
        if (r < 0)
                return r;
        if (gpu_is_gim_host(gpu)) {
                r = gim_plan(gpu, compute, memory, flags, &plan);
                if (r < 0)
                        return r;
        }
        *ret_plan = plan;
        return 0;
}
