/* SPDX-License-Identifier: MIT */
/*
 * The topology slice's library part: KFD io_links and p2p_links of a partition's node, the
 * XGMI hive files of a GPU (spec health-and-control §3.1, §3.3) and the GPU's local CPUs.
 * Every read goes through lib/sysfs.c; nothing here prints.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parse-util.h"
#include "private.h"
#include "sysfs.h"
#include "topology-private.h"

#define TOPOLOGY "class/kfd/kfd/topology"

_public_ const char *amdsmi_io_link_type_to_string(unsigned type) {
        switch (type) {
        case AMDSMI_IO_LINK_TYPE_UNDEFINED:
                return "undefined";
        case AMDSMI_IO_LINK_TYPE_HYPERTRANSPORT:
                return "hypertransport";
        case AMDSMI_IO_LINK_TYPE_PCIE:
                return "pcie";
        case AMDSMI_IO_LINK_TYPE_XGMI:
                return "xgmi";
        default:
                return "other";
        }
}

/* The keys of iolink_show() kept in struct amdsmi_io_link; @max: the largest valid value. */
enum {
        K_TYPE,
        K_FROM,
        K_TO,
        K_WEIGHT,
        K_MIN_LAT,
        K_MAX_LAT,
        K_MIN_BW,
        K_MAX_BW,
        K_FLAGS,
        K_N
};
static const struct {
        const char *key;
        uint64_t max;
} link_keys[K_N] = {
        [K_TYPE] = { "type", UINT_MAX },
        [K_FROM] = { "node_from", UINT_MAX },
        [K_TO] = { "node_to", UINT_MAX },
        [K_WEIGHT] = { "weight", UINT64_MAX - 1 },
        [K_MIN_LAT] = { "min_latency", UINT64_MAX - 1 },
        [K_MAX_LAT] = { "max_latency", UINT64_MAX - 1 },
        [K_MIN_BW] = { "min_bandwidth", UINT64_MAX - 1 },
        [K_MAX_BW] = { "max_bandwidth", UINT64_MAX - 1 },
        [K_FLAGS] = { "flags", UINT64_MAX - 1 },
};

_public_ int amdsmi_io_link_parse(const char *text, struct amdsmi_io_link *ret_link) {
        uint64_t v[K_N];
        bool seen[K_N] = { false };
        const char *p = text;

        for (size_t k = 0; k < K_N; k++)
                v[k] = AMDSMI_NA;
        if (*p == '\0')
                return -EBADMSG;
        while (*p) {
                const char *eol = strchr(p, '\n'), *sp;
                size_t len = eol ? (size_t) (eol - p) : strlen(p);
                char value[32];

                sp = memchr(p, ' ', len);
                if (!sp || sp == p)
                        return -EBADMSG; /* a line that is no "key value" */
                for (size_t k = 0; k < K_N; k++) {
                        size_t klen = strlen(link_keys[k].key), vlen = len - (size_t) (sp - p) - 1;
                        uint64_t n;

                        if ((size_t) (sp - p) != klen || memcmp(p, link_keys[k].key, klen) != 0)
                                continue;
                        if (seen[k] || vlen == 0 || vlen >= sizeof(value))
                                return -EBADMSG;
                        memcpy(value, sp + 1, vlen);
                        value[vlen] = '\0';
                        if (parse_u64(value, 10, &n) < 0 || n > link_keys[k].max)
                                return -EBADMSG;
                        seen[k] = true;
                        v[k] = n;
                }
                if (!eol)
                        break;
                p = eol + 1;
        }
        if (!seen[K_TYPE] || !seen[K_FROM] || !seen[K_TO])
                return -EBADMSG;
        *ret_link = (struct amdsmi_io_link){
                .type = (unsigned) v[K_TYPE],
                .node_from = (unsigned) v[K_FROM],
                .node_to = (unsigned) v[K_TO],
                .weight = v[K_WEIGHT],
                .min_latency = v[K_MIN_LAT],
                .max_latency = v[K_MAX_LAT],
                .min_bandwidth = v[K_MIN_BW],
                .max_bandwidth = v[K_MAX_BW],
                .flags = v[K_FLAGS],
        };
        return 0;
}

/* The partition of the context whose KFD node is @node, NULL if none (a CPU node, a node of a
 * GPU the context does not have). */
static struct amdsmi_partition *partition_of_node(struct amdsmi_ctx *ctx, unsigned node) {
        for (size_t i = 0; i < ctx->n_gpus; i++) {
                struct amdsmi_gpu *g = ctx->gpus[i];

                for (size_t p = 0; p < g->n_partitions; p++)
                        if (g->partitions[p].kfd_node == node && !g->partitions[p].stale)
                                return &g->partitions[p];
        }
        return NULL;
}

/* Directory names that are numbers, in numeric order (shorter first, then as strings). */
static int cmp_number_names(const void *a, const void *b) {
        const char *x = *(const char *const *) a, *y = *(const char *const *) b;
        size_t lx = strlen(x), ly = strlen(y);

        if (lx != ly)
                return lx < ly ? -1 : 1;
        return strcmp(x, y);
}

/* Appends the links of @dir ("io_links" or "p2p_links") of @node to *links. */
static int read_link_dir(struct amdsmi_ctx *ctx, unsigned node, const char *dir, bool p2p,
                         struct amdsmi_io_link **links, size_t *n) {
        _cleanup_strv_free_ char **names = NULL;
        char path[128];
        int count;

        snprintf(path, sizeof(path), TOPOLOGY "/nodes/%u/%s", node, dir);
        count = sysfs_list_dir(ctx, path, NULL, &names);
        if (count <= 0)
                return count;
        /* the kernel's order: by link number, not by name ("10" after "9") */
        qsort(names, (size_t) count, sizeof(*names), cmp_number_names);
        for (int i = 0; i < count; i++) {
                char ppath[192], text[SYSFS_TEXT_MAX + 1];
                struct amdsmi_io_link l, *grown;
                uint64_t num;
                int r;

                if (parse_u64(names[i], 10, &num) < 0 || num > INT_MAX)
                        continue;
                snprintf(ppath, sizeof(ppath), "%s/%s/properties", path, names[i]);
                r = sysfs_read_text(ctx, ppath, text, sizeof(text));
                if (r >= 0)
                        r = amdsmi_io_link_parse(text, &l);
                if (r < 0) {
                        log_debug(ctx, "%s/%s: %s, link left out", ctx->sysfs_root, ppath,
                                  strerror(-r));
                        continue;
                }
                l.p2p = p2p;
                l.peer = partition_of_node(ctx, l.node_to);
                grown = realloc(*links, (*n + 1) * sizeof(**links));
                if (!grown)
                        return -ENOMEM;
                *links = grown;
                (*links)[(*n)++] = l;
        }
        return 0;
}

int topology_read_node_links(struct amdsmi_ctx *ctx, unsigned node, struct amdsmi_io_link **ret,
                             size_t *ret_n) {
        struct amdsmi_io_link *links = NULL;
        size_t n = 0;
        int r, r2;

        r = read_link_dir(ctx, node, "io_links", false, &links, &n);
        if (r == -ENOMEM)
                goto fail;
        r2 = read_link_dir(ctx, node, "p2p_links", true, &links, &n);
        if (r2 == -ENOMEM) {
                r = r2;
                goto fail;
        }
        if (r < 0 && n == 0)
                goto fail;
        *ret = links;
        *ret_n = n;
        return 0;
fail:
        free(links);
        return r;
}

_public_ int amdsmi_partition_read_io_links(struct amdsmi_partition *part,
                                            struct amdsmi_io_link **ret_links, size_t *ret_n) {
        struct amdsmi_ctx *ctx = part->gpu->ctx;
        struct amdsmi_io_link *links = NULL;
        size_t n = 0;
        int r;

        /* node numbers are this partition's only at the generation of the enumeration */
        r = amdsmi_partition_check(part);
        if (r < 0)
                return r;
        r = topology_read_node_links(ctx, part->kfd_node, &links, &n);
        if (r < 0)
                return r;
        r = amdsmi_partition_check(part);
        if (r < 0) {
                free(links);
                return r;
        }
        *ret_links = links;
        *ret_n = n;
        return 0;
}

_public_ int amdsmi_ctx_read_kfd_node_io_links(struct amdsmi_ctx *ctx, unsigned node,
                                               struct amdsmi_io_link **ret_links, size_t *ret_n) {
        kfd_ensure_loaded(ctx);
        return topology_read_node_links(ctx, node, ret_links, ret_n);
}

/* Reads link @m of @dir of @node. */
static int read_link(struct amdsmi_ctx *ctx, unsigned node, const char *dir, const char *m,
                     struct amdsmi_io_link *ret) {
        char path[192], text[SYSFS_TEXT_MAX + 1];
        int r;

        snprintf(path, sizeof(path), TOPOLOGY "/nodes/%u/%s/%s/properties", node, dir, m);
        r = sysfs_read_text(ctx, path, text, sizeof(text));
        if (r < 0)
                return r;
        return amdsmi_io_link_parse(text, ret);
}

/* Whether @l leads from node @from to @to (NULL: to a CPU node, by PCIe). */
static bool link_is(struct amdsmi_ctx *ctx, const struct amdsmi_io_link *l, unsigned from,
                    const struct amdsmi_partition *to) {
        if (l->node_from != from)
                return false;
        if (to)
                return l->node_to == to->kfd_node;
        return l->type == AMDSMI_IO_LINK_TYPE_PCIE && !partition_of_node(ctx, l->node_to);
}

/* Where the kernel puts the link from @from to @to: 0 for the CPU, else 1 + the rank of @to's
 * node among the nodes @from links to by XGMI (its own GPU's and its hive's, itself left
 * out). */
static unsigned predicted_index(const struct amdsmi_partition *from,
                                const struct amdsmi_partition *to) {
        struct amdsmi_ctx *ctx = from->gpu->ctx;
        uint64_t hive = from->gpu->hive_id;
        unsigned rank = 1;

        if (!to)
                return 0;
        for (size_t i = 0; i < ctx->n_gpus; i++) {
                struct amdsmi_gpu *g = ctx->gpus[i];

                if (g != from->gpu && (hive == 0 || g->hive_id != hive))
                        continue;
                for (size_t p = 0; p < g->n_partitions; p++) {
                        unsigned n = g->partitions[p].kfd_node;

                        if (n != from->kfd_node && n < to->kfd_node)
                                rank++;
                }
        }
        return rank;
}

_public_ int amdsmi_partition_find_io_link(struct amdsmi_partition *from,
                                           struct amdsmi_partition *to,
                                           struct amdsmi_io_link *ret_link) {
        struct amdsmi_ctx *ctx = from->gpu->ctx;
        static const char *const dirs[] = { "io_links", "p2p_links" };
        struct amdsmi_io_link l;
        char m[16];
        int r;

        if (from->stale || (to && to->stale))
                return -ESTALE;
        snprintf(m, sizeof(m), "%u", predicted_index(from, to));
        r = read_link(ctx, from->kfd_node, "io_links", m, &l);
        if (r == 0 && link_is(ctx, &l, from->kfd_node, to))
                goto found;
        for (size_t d = 0; d < ELEMENTSOF(dirs); d++) {
                _cleanup_strv_free_ char **names = NULL;
                char path[128];
                int count;

                snprintf(path, sizeof(path), TOPOLOGY "/nodes/%u/%s", from->kfd_node, dirs[d]);
                count = sysfs_list_dir(ctx, path, NULL, &names);
                if (count < 0 && count != -ENOENT)
                        return count;
                if (count > 0)
                        qsort(names, (size_t) count, sizeof(*names), cmp_number_names);
                for (int i = 0; i < count; i++) {
                        if (d == 0 && strcmp(names[i], m) == 0)
                                continue; /* read above */
                        if (read_link(ctx, from->kfd_node, dirs[d], names[i], &l) == 0 &&
                            link_is(ctx, &l, from->kfd_node, to)) {
                                l.p2p = d == 1;
                                goto found;
                        }
                }
        }
        return -ENOENT;
found:
        l.peer = partition_of_node(ctx, l.node_to);
        *ret_link = l;
        return 0;
}

/* ---- XGMI ------------------------------------------------------------------------------- */

_public_ unsigned amdsmi_xgmi_hops(uint8_t raw) {
        return raw & 0x7;
}

_public_ unsigned amdsmi_xgmi_link_type(uint8_t raw) {
        return (raw >> 6) & 0x3;
}

_public_ int amdsmi_xgmi_parse_bytes(const char *text, uint8_t *ret_bytes, size_t max,
                                     size_t *ret_n) {
        uint8_t bytes[AMDSMI_XGMI_MAX_NODES];
        size_t n = 0;
        const char *p = text;

        while (*p && *p != '\n') {
                int hi = unhexchar(p[0]), lo = hi < 0 ? -1 : unhexchar(p[1]);

                if (hi < 0 || lo < 0 || p[2] != ' ')
                        return -EBADMSG;
                if (n >= max || n >= ELEMENTSOF(bytes))
                        return -E2BIG;
                bytes[n++] = (uint8_t) (hi << 4 | lo);
                p += 3;
        }
        if (*p == '\n')
                p++;
        if (*p != '\0' || n == 0)
                return -EBADMSG;
        memcpy(ret_bytes, bytes, n);
        *ret_n = n;
        return 0;
}

static int gpu_file(struct amdsmi_gpu *gpu, const char *attr, char *buf, size_t size) {
        int n = snprintf(buf, size, "%s/%s", gpu->syspath, attr);

        return n < 0 || (size_t) n >= size ? -ENAMETOOLONG : 0;
}

/* xgmi_num_hops / xgmi_num_links into @bytes. @return 0 or a negative errno. */
static int read_bytes(struct amdsmi_gpu *gpu, const char *attr, uint8_t *bytes, size_t *n) {
        char path[256], text[SYSFS_TEXT_MAX + 1];
        int r;

        r = gpu_file(gpu, attr, path, sizeof(path));
        if (r >= 0)
                r = sysfs_read_text(gpu->ctx, path, text, sizeof(text));
        if (r >= 0)
                r = amdsmi_xgmi_parse_bytes(text, bytes, AMDSMI_XGMI_MAX_NODES, n);
        if (r == -E2BIG)
                r = -EBADMSG;
        return r;
}

static void read_members(struct amdsmi_gpu *gpu, struct amdsmi_xgmi_info *info) {
        _cleanup_strv_free_ char **names = NULL;
        char path[256];
        int n;

        if (gpu_file(gpu, "xgmi_hive_info", path, sizeof(path)) < 0)
                return;
        n = sysfs_list_dir(gpu->ctx, path, "node", &names);
        for (int i = 0; i < n; i++) {
                _cleanup_free_ char *target = NULL;
                char lpath[320];
                uint64_t k;

                /* node<K>, K = 1 .. the hive's size, in join order */
                if (parse_u64(names[i] + 4, 10, &k) < 0 || k < 1 || k > AMDSMI_XGMI_MAX_NODES)
                        continue;
                snprintf(lpath, sizeof(lpath), "%s/%s", path, names[i]);
                if (sysfs_readlink_basename(gpu->ctx, lpath, &target) < 0 || !pci_bdf_valid(target))
                        continue;
                snprintf(info->members[k - 1], sizeof(info->members[k - 1]), "%s", target);
                if (k > info->n_members)
                        info->n_members = (size_t) k;
        }
}

_public_ int amdsmi_gpu_read_xgmi(struct amdsmi_gpu *gpu, struct amdsmi_xgmi_info *ret_info) {
        struct amdsmi_xgmi_info info = { .size = sizeof(info) };
        char path[256];
        bool any = false;
        int r;

        if (ret_info->size < sizeof(info))
                return -EINVAL;
        info.device_id = info.physical_id = info.hive_id = AMDSMI_NA;
        static const struct {
                const char *attr;
                size_t offset;
        } ids[] = {
                { "xgmi_device_id", offsetof(struct amdsmi_xgmi_info, device_id) },
                { "xgmi_physical_id", offsetof(struct amdsmi_xgmi_info, physical_id) },
                { "xgmi_hive_info/xgmi_hive_id", offsetof(struct amdsmi_xgmi_info, hive_id) },
        };
        for (size_t i = 0; i < ELEMENTSOF(ids); i++) {
                uint64_t v;

                if (gpu_file(gpu, ids[i].attr, path, sizeof(path)) < 0)
                        continue;
                r = sysfs_read_u64(gpu->ctx, path, 10, &v);
                /* the driver creates the XGMI files together (amdgpu_xgmi_sysfs_add_dev_info),
                 * only for a GPU with XGMI: without the first, a GPU has none (one failed
                 * open per GPU instead of five) */
                if (i == 0 && r == -ENOENT)
                        return -ENOENT;
                if (r != -ENOENT)
                        any = true;
                if (r == 0 && v != AMDSMI_NA)
                        *(uint64_t *) ((char *) &info + ids[i].offset) = v;
        }
        info.hops_error = read_bytes(gpu, "xgmi_num_hops", info.hops, &info.n_hops);
        info.links_error = read_bytes(gpu, "xgmi_num_links", info.links, &info.n_links);
        if (info.hops_error != -ENOENT || info.links_error != -ENOENT)
                any = true;
        if (!any)
                return -ENOENT;
        read_members(gpu, &info);
        info.size = ret_info->size;
        memcpy(ret_info, &info, sizeof(info));
        return 0;
}

_public_ int amdsmi_gpu_read_xgmi_error(struct amdsmi_gpu *gpu,
                                        enum amdsmi_xgmi_error *ret_status) {
        char path[256];
        uint64_t v;
        int r;

        r = gpu_file(gpu, "xgmi_error", path, sizeof(path));
        if (r >= 0)
                r = sysfs_read_u64(gpu->ctx, path, 10, &v);
        if (r == -ENOMSG || r == -ERANGE)
                r = -EBADMSG;
        if (r < 0)
                return r;
        if (v > AMDSMI_XGMI_ERROR_MULTIPLE)
                return -EBADMSG;
        *ret_status = (enum amdsmi_xgmi_error) v;
        return 0;
}

/* ---- host placement --------------------------------------------------------------------- */

bool topology_cpulist_valid(const char *s) {
        bool digit = false;

        if (*s == '\0')
                return false;
        for (const char *p = s; *p; p++) {
                if (*p >= '0' && *p <= '9')
                        digit = true;
                else if ((*p == ',' || *p == '-') && digit)
                        digit = false;
                else
                        return false;
        }
        return digit;
}

_public_ int amdsmi_gpu_read_local_cpulist(struct amdsmi_gpu *gpu, char **ret_cpulist) {
        char path[256], text[SYSFS_TEXT_MAX + 1], *s;
        int r;

        r = gpu_file(gpu, "local_cpulist", path, sizeof(path));
        if (r >= 0)
                r = sysfs_read_text(gpu->ctx, path, text, sizeof(text));
        if (r < 0)
                return r;
        if (!topology_cpulist_valid(text))
                return -EBADMSG;
        s = strdup(text);
        if (!s)
                return -ENOMEM;
        *ret_cpulist = s;
        return 0;
}
