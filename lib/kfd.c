/* SPDX-License-Identifier: MIT */
/*
 * KFD topology: one node per compute partition. A node is tied to its physical GPU by
 * domain + location_id ((bus << 8) | devfn, ORed with the partition index when the GPU has
 * more than one partition).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parse-util.h"
#include "private.h"
#include "sysfs.h"

#define TOPOLOGY "class/kfd/kfd/topology"

int kfd_read_generation(struct amdsmi_ctx *ctx, uint64_t *ret) {
        return sysfs_read_u64(ctx, TOPOLOGY "/generation_id", 10, ret);
}

struct kfd_node {
        unsigned node;
        uint32_t gpu_id;
        uint64_t domain, location_id, render_minor, simd_count, simd_per_cu, num_xcc;
        uint64_t gfx_target_version, unique_id, hive_id;
        struct amdsmi_gpu *gpu;
        unsigned index;
};

/* @max: the largest value the partition keeps of it (the narrower fields of struct
 * amdsmi_partition); a larger one is a bad value, not a silently truncated one (simd_per_cu
 * 2^32 would have become a divisor of 0). */
static const struct {
        const char *key;
        size_t offset;
        uint64_t max;
} node_keys[] = {
        { "domain", offsetof(struct kfd_node, domain), UINT64_MAX },
        { "location_id", offsetof(struct kfd_node, location_id), UINT64_MAX },
        { "drm_render_minor", offsetof(struct kfd_node, render_minor), INT_MAX },
        { "simd_count", offsetof(struct kfd_node, simd_count), UINT_MAX },
        { "simd_per_cu", offsetof(struct kfd_node, simd_per_cu), UINT_MAX },
        { "num_xcc", offsetof(struct kfd_node, num_xcc), UINT_MAX },
        { "gfx_target_version", offsetof(struct kfd_node, gfx_target_version), UINT32_MAX },
        { "unique_id", offsetof(struct kfd_node, unique_id), UINT64_MAX },
        { "hive_id", offsetof(struct kfd_node, hive_id), UINT64_MAX },
};

/* Parses "key value\n" lines; unknown keys are ignored. A known key with a bad value makes
 * the result -EBADMSG, but the other keys are still parsed, so that a broken node can still be
 * tied to its GPU by location_id and domain. */
static int parse_properties(struct amdsmi_ctx *ctx, const char *path, char *text,
                            struct kfd_node *n) {
        char *saveptr = NULL;
        int ret = 0;

        for (size_t i = 0; i < ELEMENTSOF(node_keys); i++)
                *(uint64_t *) ((char *) n + node_keys[i].offset) = AMDSMI_NA;
        for (char *line = strtok_r(text, "\n", &saveptr); line;
             line = strtok_r(NULL, "\n", &saveptr)) {
                char *sp = strchr(line, ' ');
                if (!sp)
                        continue;
                *sp = '\0';
                for (size_t i = 0; i < ELEMENTSOF(node_keys); i++) {
                        uint64_t v;
                        if (strcmp(line, node_keys[i].key) != 0)
                                continue;
                        if (parse_u64(sp + 1, 10, &v) < 0 ||
                            (v > node_keys[i].max && v != AMDSMI_NA)) {
                                log_warning(ctx, "%s/%s: bad value \"%s\" for %s", ctx->sysfs_root,
                                            path, sp + 1, line);
                                ret = -EBADMSG;
                                continue;
                        }
                        *(uint64_t *) ((char *) n + node_keys[i].offset) = v;
                }
        }
        if (n->location_id == AMDSMI_NA || n->domain == AMDSMI_NA) {
                log_warning(ctx, "%s/%s: no location_id/domain", ctx->sysfs_root, path);
                return -EBADMSG;
        }
        return ret;
}

/* Sum of the frame-buffer heaps (heap_type 1 public, 2 private) of a node. */
static uint64_t node_memory(struct amdsmi_ctx *ctx, unsigned node) {
        _cleanup_strv_free_ char **banks = NULL;
        char path[256];
        uint64_t total = 0;
        bool found = false;
        int n;

        snprintf(path, sizeof(path), TOPOLOGY "/nodes/%u/mem_banks", node);
        n = sysfs_list_dir(ctx, path, NULL, &banks);
        for (int i = 0; i < n; i++) {
                char text[SYSFS_TEXT_MAX + 1], ppath[320], *saveptr = NULL;
                uint64_t heap = AMDSMI_NA, size = AMDSMI_NA;

                snprintf(ppath, sizeof(ppath), "%s/%s/properties", path, banks[i]);
                if (sysfs_read_text(ctx, ppath, text, sizeof(text)) < 0)
                        continue;
                for (char *line = strtok_r(text, "\n", &saveptr); line;
                     line = strtok_r(NULL, "\n", &saveptr)) {
                        if (strncmp(line, "heap_type ", 10) == 0)
                                (void) parse_u64(line + 10, 10, &heap);
                        else if (strncmp(line, "size_in_bytes ", 14) == 0)
                                (void) parse_u64(line + 14, 10, &size);
                }
                if ((heap == 1 || heap == 2) && size != AMDSMI_NA) {
                        total += size;
                        found = true;
                }
        }
        return found ? total : AMDSMI_NA;
}

static uint64_t gpu_pci_id(struct amdsmi_gpu *gpu, unsigned *ret_domain) {
        unsigned dom, bus, dev, fn;

        if (sscanf(gpu->bdf, "%x:%x:%x.%x", &dom, &bus, &dev, &fn) != 4)
                return AMDSMI_NA;
        *ret_domain = dom;
        return ((uint64_t) bus << 8) | (dev << 3) | fn;
}

static struct amdsmi_gpu *match_gpu(struct amdsmi_ctx *ctx, const struct kfd_node *n) {
        struct amdsmi_gpu *loose = NULL;

        for (size_t i = 0; i < ctx->n_gpus; i++) {
                unsigned dom;
                uint64_t id = gpu_pci_id(ctx->gpus[i], &dom);

                if (id == AMDSMI_NA || dom != n->domain)
                        continue;
                if (id == n->location_id)
                        return ctx->gpus[i];
                if ((id & ~7ULL) == (n->location_id & ~7ULL) && !loose)
                        loose = ctx->gpus[i];
        }
        return loose;
}

static int cmp_node(const void *a, const void *b) {
        const struct kfd_node *x = a, *y = b;

        if (x->gpu != y->gpu)
                return x->gpu->index < y->gpu->index ? -1 : 1;
        if (x->index != y->index)
                return x->index < y->index ? -1 : 1;
        return x->node < y->node ? -1 : (x->node > y->node);
}

static int cmp_uint(const void *a, const void *b) {
        unsigned x = *(const unsigned *) a, y = *(const unsigned *) b;
        return x < y ? -1 : (x > y);
}

static int retire_partitions(struct amdsmi_ctx *ctx, struct amdsmi_gpu *gpu, uint64_t generation,
                             bool no_kfd) {
        struct amdsmi_partition **l;

        if (!gpu->partitions)
                return 0;
        l = realloc(ctx->retired, (ctx->n_retired + 1) * sizeof(*l));
        if (!l)
                return -ENOMEM;
        ctx->retired = l;
        for (size_t k = 0; k < gpu->n_partitions; k++)
                if (no_kfd || gpu->partitions[k].generation != generation)
                        gpu->partitions[k].stale = true;
        ctx->retired[ctx->n_retired++] = TAKE_PTR(gpu->partitions);
        gpu->n_partitions = 0;
        return 0;
}

void kfd_free_retired(struct amdsmi_ctx *ctx, struct amdsmi_gpu *gpu) {
        size_t kept = 0;

        for (size_t i = 0; i < ctx->n_retired; i++) {
                if (!gpu || ctx->retired[i][0].gpu == gpu)
                        free(ctx->retired[i]);
                else
                        ctx->retired[kept++] = ctx->retired[i];
        }
        ctx->n_retired = kept;
        if (kept == 0) {
                free(ctx->retired);
                ctx->retired = NULL;
        }
}

int kfd_enumerate(struct amdsmi_ctx *ctx) {
        _cleanup_strv_free_ char **names = NULL;
        _cleanup_free_ struct kfd_node *nodes = NULL;
        _cleanup_free_ unsigned *ids = NULL;
        uint64_t generation = 0;
        size_t n_nodes = 0;
        int count, r, orphan_error = 0;

        r = kfd_read_generation(ctx, &generation);
        /* The old partitions stay valid memory for the handles callers hold; at another
         * generation (or without a readable KFD) they are stale and never describe a node
         * again. */
        for (size_t i = 0; i < ctx->n_gpus; i++) {
                struct amdsmi_gpu *gpu = ctx->gpus[i];
                int k = retire_partitions(ctx, gpu, r < 0 ? 0 : generation, r < 0);

                if (k < 0)
                        return k;
                gpu->partitions_error = 0;
        }
        if (r < 0 && r != -ENOENT)
                return r;
        if (r == -ENOENT) {
                ctx->kfd_present = false; /* no KFD: no partitions */
                return 0;
        }

        count = sysfs_list_dir(ctx, TOPOLOGY "/nodes", NULL, &names);
        if (count < 0)
                return count;
        ids = calloc((size_t) count + 1, sizeof(unsigned));
        nodes = calloc((size_t) count + 1, sizeof(struct kfd_node));
        if (!ids || !nodes)
                return -ENOMEM;
        for (int i = 0; i < count; i++)
                if (parse_u32(names[i], 10, &ids[i]) < 0)
                        return -EBADMSG;
        qsort(ids, (size_t) count, sizeof(unsigned), cmp_uint);

        /* One broken node costs only its own GPU its partitions (marked unknown, with the
         * reason); a node that cannot even be tied to a GPU is skipped with a warning. */
        for (int i = 0; i < count; i++) {
                char path[256], text[SYSFS_TEXT_MAX + 1];
                struct kfd_node *n = &nodes[n_nodes];
                uint64_t gpu_id;

                snprintf(path, sizeof(path), TOPOLOGY "/nodes/%u/gpu_id", ids[i]);
                r = sysfs_read_u64(ctx, path, 10, &gpu_id);
                if (r == -EPERM || r == -EACCES)
                        continue; /* a node this caller may not use (device cgroup) */
                if (r == 0 && gpu_id > UINT32_MAX)
                        r = -EBADMSG;
                if (r < 0) {
                        log_warning(ctx, "%s/%s: %s; node skipped", ctx->sysfs_root, path,
                                    strerror(-r));
                        orphan_error = r;
                        continue;
                }
                if (gpu_id == 0)
                        continue; /* CPU node */
                snprintf(path, sizeof(path), TOPOLOGY "/nodes/%u/properties", ids[i]);
                r = sysfs_read_text(ctx, path, text, sizeof(text));
                if (r < 0) {
                        log_warning(ctx, "%s/%s: %s; node skipped", ctx->sysfs_root, path,
                                    strerror(-r));
                        orphan_error = r;
                        continue;
                }
                r = parse_properties(ctx, path, text, n);
                if (r < 0 && (n->location_id == AMDSMI_NA || n->domain == AMDSMI_NA)) {
                        orphan_error = r;
                        continue;
                }
                n->node = ids[i];
                n->gpu_id = (uint32_t) gpu_id;
                n->gpu = match_gpu(ctx, n);
                if (!n->gpu) {
                        log_debug(ctx, "KFD node %u (location_id %llu) has no PCI function", ids[i],
                                  (unsigned long long) n->location_id);
                        continue;
                }
                if (r < 0) {
                        n->gpu->partitions_error = r;
                        continue;
                }
                n_nodes++;
        }

        /* Drop every node of a GPU whose topology is partly broken: a partial list would
         * read as a different partition mode. */
        /* A GPU node that could not be tied to its GPU belongs to one of the amdgpu-bound GPUs
         * that got no node at all (amdgpu always gives a GPU at least one): those are unknown,
         * not partition-less. */
        if (orphan_error < 0)
                for (size_t g = 0; g < ctx->n_gpus; g++) {
                        struct amdsmi_gpu *gpu = ctx->gpus[g];
                        bool has_node = false;

                        for (size_t i = 0; i < n_nodes; i++)
                                has_node = has_node || nodes[i].gpu == gpu;
                        if (!has_node && gpu->driver == AMDSMI_DRIVER_AMDGPU &&
                            gpu->partitions_error == 0)
                                gpu->partitions_error = orphan_error;
                }

        size_t kept = 0;
        for (size_t i = 0; i < n_nodes; i++)
                if (nodes[i].gpu->partitions_error == 0)
                        nodes[kept++] = nodes[i];
        n_nodes = kept;

        /* Partition index: the location_id low bits when a GPU has several nodes. */
        for (size_t i = 0; i < n_nodes; i++) {
                struct amdsmi_gpu *gpu = nodes[i].gpu;
                unsigned dom;
                size_t same = 0;

                for (size_t j = 0; j < n_nodes; j++)
                        same += nodes[j].gpu == gpu;
                nodes[i].index = same > 1 ? (unsigned) (nodes[i].location_id -
                                                        (gpu_pci_id(gpu, &dom) & ~7ULL))
                                          : 0;
        }
        qsort(nodes, n_nodes, sizeof(struct kfd_node), cmp_node);

        for (size_t i = 0; i < n_nodes;) {
                struct amdsmi_gpu *gpu = nodes[i].gpu;
                size_t j = i;

                while (j < n_nodes && nodes[j].gpu == gpu)
                        j++;
                gpu->partitions = calloc(j - i, sizeof(struct amdsmi_partition));
                if (!gpu->partitions)
                        return -ENOMEM;
                gpu->n_partitions = j - i;
                gpu->hive_id = nodes[i].hive_id == AMDSMI_NA ? 0 : nodes[i].hive_id;
                for (size_t k = i; k < j; k++) {
                        const struct kfd_node *n = &nodes[k];
                        gpu->partitions[k - i] = (struct amdsmi_partition){
                                .gpu = gpu,
                                .index = n->index,
                                .kfd_node = n->node,
                                .kfd_gpu_id = n->gpu_id,
                                .render_minor =
                                        n->render_minor == AMDSMI_NA ? -1 : (int) n->render_minor,
                                .simd_count =
                                        n->simd_count == AMDSMI_NA ? 0 : (unsigned) n->simd_count,
                                .simd_per_cu = n->simd_per_cu == AMDSMI_NA || n->simd_per_cu == 0
                                                       ? 4
                                                       : (unsigned) n->simd_per_cu,
                                .num_xcc = n->num_xcc == AMDSMI_NA ? 0 : (unsigned) n->num_xcc,
                                .memory_bytes = AMDSMI_NA, /* read on first use */
                                .gfx_target_version = n->gfx_target_version == AMDSMI_NA
                                                              ? 0
                                                              : (uint32_t) n->gfx_target_version,
                                .unique_id = n->unique_id == AMDSMI_NA ? 0 : n->unique_id,
                                .location_id = n->location_id,
                                .generation = generation,
                        };
                }
                i = j;
        }
        ctx->kfd_generation = generation;
        ctx->kfd_present = true;
        return 0;
}

static int kfd_load(struct amdsmi_ctx *ctx) {
        int r;

        ctx->kfd_loaded = true;
        r = kfd_enumerate(ctx);
        if (r < 0) {
                log_warning(ctx, "%s/" TOPOLOGY ": unreadable, partitions unknown: %s",
                            ctx->sysfs_root, strerror(-r));
                for (size_t i = 0; i < ctx->n_gpus; i++)
                        ctx->gpus[i]->partitions_error = r;
        }
        return r;
}

void kfd_ensure_loaded(struct amdsmi_ctx *ctx) {
        if (!ctx->kfd_loaded)
                (void) kfd_load(ctx);
}

int kfd_refresh(struct amdsmi_ctx *ctx) {
        uint64_t gen;
        int r;

        if (ctx->kfd_loaded) {
                r = kfd_read_generation(ctx, &gen);
                if (r == -ENOENT && !ctx->kfd_present)
                        return 0;
                if (r == 0 && ctx->kfd_present && gen == ctx->kfd_generation)
                        return 0;
        }
        return kfd_load(ctx);
}

_public_ int amdsmi_gpu_get_partitions_error(struct amdsmi_gpu *gpu) {
        kfd_ensure_loaded(gpu->ctx);
        return gpu->partitions_error;
}

_public_ uint64_t amdsmi_gpu_get_hive_id(struct amdsmi_gpu *gpu) {
        kfd_ensure_loaded(gpu->ctx);
        return gpu->hive_id;
}

_public_ size_t amdsmi_gpu_get_partition_count(struct amdsmi_gpu *gpu) {
        kfd_ensure_loaded(gpu->ctx);
        return gpu->n_partitions;
}

_public_ struct amdsmi_partition *amdsmi_gpu_get_partition(struct amdsmi_gpu *gpu, size_t index) {
        kfd_ensure_loaded(gpu->ctx);
        return index < gpu->n_partitions ? &gpu->partitions[index] : NULL;
}

_public_ struct amdsmi_gpu *amdsmi_partition_get_gpu(struct amdsmi_partition *part) {
        return part->gpu;
}

_public_ unsigned amdsmi_partition_get_index(struct amdsmi_partition *part) {
        return part->index;
}

_public_ unsigned amdsmi_partition_get_kfd_node(struct amdsmi_partition *part) {
        return part->kfd_node;
}

_public_ uint32_t amdsmi_partition_get_kfd_gpu_id(struct amdsmi_partition *part) {
        return part->kfd_gpu_id;
}

_public_ int amdsmi_partition_get_render_minor(struct amdsmi_partition *part) {
        return part->render_minor;
}

_public_ unsigned amdsmi_partition_get_compute_units(struct amdsmi_partition *part) {
        return part->simd_count / part->simd_per_cu;
}

_public_ unsigned amdsmi_partition_get_simd_count(struct amdsmi_partition *part) {
        return part->simd_count;
}

_public_ unsigned amdsmi_partition_get_xcc_count(struct amdsmi_partition *part) {
        return part->num_xcc;
}

/* KFD renumbers nodes when partitions change: a node number is only this partition's while the
 * generation is the one of the enumeration, so it is checked before and after the read. */
_public_ uint64_t amdsmi_partition_get_memory_bytes(struct amdsmi_partition *part) {
        struct amdsmi_ctx *ctx = part->gpu->ctx;
        uint64_t gen, bytes;

        if (part->memory_loaded)
                return part->memory_bytes;
        if (part->stale)
                return AMDSMI_NA;
        if (kfd_read_generation(ctx, &gen) < 0 || gen != part->generation)
                return AMDSMI_NA;
        bytes = node_memory(ctx, part->kfd_node);
        if (kfd_read_generation(ctx, &gen) < 0 || gen != part->generation)
                return AMDSMI_NA;
        part->memory_loaded = true;
        part->memory_bytes = bytes;
        return bytes;
}

_public_ uint32_t amdsmi_partition_get_gfx_target_version(struct amdsmi_partition *part) {
        return part->gfx_target_version;
}

_public_ uint64_t amdsmi_partition_get_unique_id(struct amdsmi_partition *part) {
        return part->unique_id;
}

_public_ int amdsmi_partition_check(struct amdsmi_partition *part) {
        uint64_t gen;
        int r;

        if (part->stale)
                return -ESTALE;
        r = kfd_read_generation(part->gpu->ctx, &gen);

        if (r == -ENOENT)
                return -ESTALE;
        if (r < 0)
                return r;
        return gen == part->generation ? 0 : -ESTALE;
}

/* As the driver derives it: one XCC per partition is CPX (even a VF that sees a single XCC),
 * otherwise the partition count names the mode (SPX 1, DPX 2, TPX 3, QPX 4). */
_public_ int amdsmi_gpu_get_topology_compute_mode(struct amdsmi_gpu *gpu,
                                                  enum amdsmi_compute_mode *ret_mode) {
        size_t n;

        kfd_ensure_loaded(gpu->ctx);
        n = gpu->n_partitions;
        if (n == 0 || gpu->partitions_error < 0)
                return -ENODATA;
        if (gpu->partitions[0].num_xcc == 1)
                *ret_mode = AMDSMI_COMPUTE_CPX;
        else if (n == 1)
                *ret_mode = AMDSMI_COMPUTE_SPX;
        else if (n == 2)
                *ret_mode = AMDSMI_COMPUTE_DPX;
        else if (n == 3)
                *ret_mode = AMDSMI_COMPUTE_TPX;
        else if (n == 4)
                *ret_mode = AMDSMI_COMPUTE_QPX;
        else
                *ret_mode = AMDSMI_COMPUTE_UNKNOWN;
        return 0;
}
