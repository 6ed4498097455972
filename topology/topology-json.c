/* SPDX-License-Identifier: MIT */
/* The "topology" document (topology-json.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "documents.h"
#include "gpu-set.h"
#include "json-util.h"
#include "macro.h"
#include "report.h"
#include "select.h"
#include "topology-json.h"

/* A partition of a selected GPU. */
struct tnode {
        struct amdsmi_partition *part;
        unsigned index; /* the partition's index */
        unsigned kfd_node;
        bool selected; /* a partition pair end */
};

/* A link looked up once: @error 0 (found), -ENOENT (none) or another negative errno. */
struct tlink {
        bool read;
        int error;
        struct amdsmi_io_link link;
};

/* A selected GPU. */
struct tgpu {
        size_t index;
        struct amdsmi_gpu *gpu;
        int xgmi_error;
        struct amdsmi_xgmi_info xgmi;
        struct tnode *nodes;
        size_t n_nodes;
        struct tlink cpu;     /* partition 0 to its CPU node */
        struct tlink sibling; /* partition 0 to partition 1 */
        bool links_failed;    /* reported */
};

struct topo {
        const struct doc_query *q;
        struct amdsmi_ctx *ctx;
        struct tgpu *gpus;
        size_t n_gpus;
        struct tlink *pairs; /* n_gpus x n_gpus: partition 0 to partition 0 */
        bool partition_pairs;
        /* the weight between two CPU nodes (the last asked) */
        unsigned cpu_a, cpu_b;
        uint64_t cpu_weight;
        bool cpu_known;
};

/* What a pair's entry says; numbers OUTPUT_NA when unknown. */
struct pair {
        const char *type;
        uint64_t hops, weight, xgmi_links, min_bw, max_bw;
};

static void topo_free(struct topo *t) {
        for (size_t i = 0; i < t->n_gpus; i++)
                free(t->gpus[i].nodes);
        free(t->gpus);
        free(t->pairs);
}

/*
 * The link from partition 0 of @g to partition 0 of @peer (@to_cpu: to @g's CPU node;
 * @sibling: to @g's partition 1), looked up on first use. The kernel gives every partition of
 * a GPU the same links to another GPU (kfd_crat.c builds them from the physical pair), so
 * partition 0 stands for all; a failure other than "no link" is reported once per GPU.
 */
static const struct tlink *get_link(struct topo *t, struct tgpu *g, struct tgpu *peer, bool to_cpu,
                                    bool sibling) {
        struct tlink *l;
        struct amdsmi_partition *to = NULL;

        if (to_cpu)
                l = &g->cpu;
        else if (sibling)
                l = &g->sibling;
        else
                l = &t->pairs[(size_t) (g - t->gpus) * t->n_gpus + (size_t) (peer - t->gpus)];
        if (l->read)
                return l;
        l->read = true;
        if (g->n_nodes == 0 || (sibling && g->n_nodes < 2) || (peer && peer->n_nodes == 0)) {
                l->error = -ENODATA;
                return l;
        }
        if (sibling)
                to = g->nodes[1].part;
        else if (!to_cpu)
                to = peer->nodes[0].part;
        l->error = amdsmi_partition_find_io_link(g->nodes[0].part, to, &l->link);
        if (l->error < 0 && l->error != -ENOENT && !g->links_failed) {
                g->links_failed = true;
                report_field_error_msg(t->q->report, (int) g->index, "links", l->error,
                                       "cannot read the KFD io_links of the GPU");
        }
        return l;
}

static int topo_load(struct topo *t) {
        const struct gpu_set *set = t->q->set;

        t->ctx = set->ctx;
        t->gpus = calloc(set->n_gpus ? set->n_gpus : 1, sizeof(*t->gpus));
        if (!t->gpus)
                return -ENOMEM;
        FOREACH_GPU_IN_SET(set, i, gpu) {
                const struct select_match *m = &set->matches[i];
                struct tgpu *g = &t->gpus[t->n_gpus++];
                size_t n = amdsmi_gpu_get_partition_count(gpu);

                g->index = i;
                g->gpu = gpu;
                g->xgmi.size = sizeof(g->xgmi);
                g->xgmi_error = amdsmi_gpu_read_xgmi(gpu, &g->xgmi);
                if (amdsmi_gpu_get_partitions_error(gpu) < 0)
                        n = 0;
                if (n == 0)
                        continue;
                g->nodes = calloc(n, sizeof(*g->nodes));
                if (!g->nodes)
                        return -ENOMEM;
                for (size_t k = 0; k < n; k++) {
                        struct amdsmi_partition *p = amdsmi_gpu_get_partition(gpu, k);
                        struct tnode *tn;

                        if (!p)
                                continue;
                        tn = &g->nodes[g->n_nodes++];
                        tn->part = p;
                        tn->index = amdsmi_partition_get_index(p);
                        tn->kfd_node = amdsmi_partition_get_kfd_node(p);
                        tn->selected = select_match_partition(m, tn->index);
                }
                if (n > 1 || !m->all_partitions)
                        t->partition_pairs = true;
        }
        t->pairs = calloc(t->n_gpus * t->n_gpus + 1, sizeof(*t->pairs));
        return t->pairs ? 0 : -ENOMEM;
}

/* The weight of the link between CPU nodes @a and @b, OUTPUT_NA if unknown. */
static uint64_t cpu_cpu_weight(struct topo *t, unsigned a, unsigned b) {
        struct amdsmi_io_link *links = NULL;
        uint64_t w = OUTPUT_NA;
        size_t n = 0;

        if (t->cpu_known && t->cpu_a == a && t->cpu_b == b)
                return t->cpu_weight;
        if (amdsmi_ctx_read_kfd_node_io_links(t->ctx, a, &links, &n) >= 0)
                for (size_t i = 0; i < n; i++)
                        if (links[i].node_to == b && !links[i].peer) {
                                w = links[i].weight;
                                break;
                        }
        free(links);
        t->cpu_known = true;
        t->cpu_a = a;
        t->cpu_b = b;
        t->cpu_weight = w;
        return w;
}

static uint64_t add_na(uint64_t a, uint64_t b) {
        return a == OUTPUT_NA || b == OUTPUT_NA || a > UINT64_MAX / 2 || b > UINT64_MAX / 2
                       ? OUTPUT_NA
                       : a + b;
}

static uint64_t min_na(uint64_t a, uint64_t b) {
        return a == OUTPUT_NA || b == OUTPUT_NA ? OUTPUT_NA : a < b ? a : b;
}

/* The index of @peer in @g's hive member list, or -1. */
static int member_index(const struct tgpu *g, const struct tgpu *peer) {
        const char *bdf = amdsmi_gpu_get_bdf(peer->gpu);

        if (g->xgmi_error < 0)
                return -1;
        for (size_t k = 0; k < g->xgmi.n_members; k++)
                if (strcmp(g->xgmi.members[k], bdf) == 0)
                        return (int) k;
        return -1;
}

/* Between two GPUs of a hive: the hops and link count their xgmi files say for the pair. */
static void xgmi_counts(const struct tgpu *a, const struct tgpu *b, uint64_t weight,
                        struct pair *ret) {
        int k = member_index(a, b);

        ret->hops = OUTPUT_NA;
        ret->xgmi_links = OUTPUT_NA;
        if (k >= 0 && a->xgmi.hops_error == 0 && (size_t) k < a->xgmi.n_hops)
                ret->hops = amdsmi_xgmi_hops(a->xgmi.hops[k]);
        else if (weight != OUTPUT_NA && weight >= TOPOLOGY_KFD_XGMI_WEIGHT)
                ret->hops = weight / TOPOLOGY_KFD_XGMI_WEIGHT;
        if (k >= 0 && a->xgmi.links_error == 0 && (size_t) k < a->xgmi.n_links)
                ret->xgmi_links = a->xgmi.links[k];
}

/* The pair from GPU @a to GPU @b; @same_partition: from a partition to itself (or the GPUs
 * themselves, for "links"). */
static void pair_of(struct topo *t, struct tgpu *a, struct tgpu *b, bool same_partition,
                    struct pair *ret) {
        const struct tlink *l, *ca, *cb;

        *ret = (struct pair){ TOPOLOGY_TYPE_NONE, OUTPUT_NA, OUTPUT_NA,
                              OUTPUT_NA,          OUTPUT_NA, OUTPUT_NA };
        if (a == b && same_partition) {
                *ret = (struct pair){ TOPOLOGY_TYPE_SELF, 0, 0, OUTPUT_NA, OUTPUT_NA, OUTPUT_NA };
                return;
        }
        if (a == b) {
                l = get_link(t, a, NULL, false, true);
                ret->type = TOPOLOGY_TYPE_SAME_GPU;
                ret->hops = 0;
                if (l->error == 0) {
                        ret->weight = l->link.weight;
                        ret->min_bw = l->link.min_bandwidth;
                        ret->max_bw = l->link.max_bandwidth;
                }
                return;
        }
        l = get_link(t, a, b, false, false);
        if (l->error == 0 && l->link.type == AMDSMI_IO_LINK_TYPE_XGMI) {
                ret->type = TOPOLOGY_TYPE_XGMI;
                ret->weight = l->link.weight;
                ret->min_bw = l->link.min_bandwidth;
                ret->max_bw = l->link.max_bandwidth;
                xgmi_counts(a, b, l->link.weight, ret);
                return;
        }
        if (l->error == 0) { /* a direct peer-to-peer PCIe path */
                *ret = (struct pair){ TOPOLOGY_TYPE_PCIE,    1,
                                      l->link.weight,        OUTPUT_NA,
                                      l->link.min_bandwidth, l->link.max_bandwidth };
                return;
        }
        /* through the CPU nodes */
        ca = get_link(t, a, NULL, true, false);
        cb = get_link(t, b, NULL, true, false);
        if (ca->error < 0 || cb->error < 0)
                return;
        ret->type = TOPOLOGY_TYPE_PCIE;
        ret->min_bw = min_na(ca->link.min_bandwidth, cb->link.min_bandwidth);
        ret->max_bw = min_na(ca->link.max_bandwidth, cb->link.max_bandwidth);
        if (ca->link.node_to == cb->link.node_to) {
                ret->hops = 2;
                ret->weight = add_na(ca->link.weight, cb->link.weight);
        } else {
                ret->hops = 3;
                ret->weight = add_na(add_na(ca->link.weight, cb->link.weight),
                                     cpu_cpu_weight(t, ca->link.node_to, cb->link.node_to));
        }
}

/*
 * The values of the pairs, shared: 64 partitions make 4096 pairs, and one JSON object per
 * value of each was most of the document's time (allocations). Numbers and strings repeat (a
 * type, a weight, an end's name), so each is made once and referenced by every pair.
 */
#define SHARED_MAX 64
struct shared {
        size_t n;
        uint64_t num[SHARED_MAX];
        json_object *obj[SHARED_MAX];
        json_object *types[5];
};

static void shared_free(struct shared *sh) {
        for (size_t i = 0; i < sh->n; i++)
                json_object_put(sh->obj[i]);
        for (size_t i = 0; i < ELEMENTSOF(sh->types); i++)
                json_object_put(sh->types[i]);
}

/* A shared value's serializer: the text json-c writes for it, rendered once. A value is
 * written thousands of times, and json-c renders a number with snprintf() each time: that
 * was a third of the instructions of `amdsmi topology --json` on 64 partitions. */
static int write_rendered(json_object *o, struct printbuf *pb, int level, int flags) {
        const char *text = json_object_get_userdata(o);

        return printbuf_memappend(pb, text, (int) strlen(text));
}

static void render_once(json_object *o) {
        char *text = strdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));

        if (text) /* else json-c's own serializer stays */
                json_object_set_serializer(o, write_rendered, text, json_object_free_userdata);
}

/* Indentation as json-c writes it: two spaces (or a tab) per level when pretty. */
static size_t put_indent(char *p, int level, int flags) {
        size_t n = 0;

        if (!(flags & JSON_C_TO_STRING_PRETTY))
                return 0;
        for (int i = 0; i < level; i++) {
                if (flags & JSON_C_TO_STRING_PRETTY_TAB)
                        p[n++] = '\t';
                else {
                        p[n++] = ' ';
                        p[n++] = ' ';
                }
        }
        return n;
}

/*
 * A row of a partition matrix (an array of shared values): the text json-c's own array
 * serializer writes, with the same flags, made in one buffer and appended once (json-c
 * appends three or four pieces per value: 24 576 values on 64 partitions). Rows are never
 * empty. A value without its rendered text is rendered by json-c.
 */
static int write_row(json_object *row, struct printbuf *pb, int level, int flags) {
        size_t n = json_object_array_length(row), len = 0, size;
        bool pretty = flags & JSON_C_TO_STRING_PRETTY;
        bool spaced = (flags & JSON_C_TO_STRING_SPACED) && !pretty;
        char *buf;
        int r;

        size = 2 * (size_t) level + 8;
        for (size_t i = 0; i < n; i++) {
                json_object *v = json_object_array_get_idx(row, i);
                const char *text = !v ? "null"
                                   : json_object_get_userdata(v)
                                           ? json_object_get_userdata(v)
                                           : json_object_to_json_string_ext(v, flags);

                size += strlen(text) + 2 * (size_t) level + 8;
        }
        buf = malloc(size);
        if (!buf)
                return -1;
        buf[len++] = '[';
        if (pretty)
                buf[len++] = '\n';
        for (size_t i = 0; i < n; i++) {
                json_object *v = json_object_array_get_idx(row, i);
                const char *text = !v ? "null"
                                   : json_object_get_userdata(v)
                                           ? json_object_get_userdata(v)
                                           : json_object_to_json_string_ext(v, flags);
                size_t tl = strlen(text);

                if (i > 0) {
                        buf[len++] = ',';
                        if (pretty)
                                buf[len++] = '\n';
                }
                if (spaced)
                        buf[len++] = ' ';
                len += put_indent(buf + len, level + 1, flags);
                memcpy(buf + len, text, tl);
                len += tl;
        }
        if (pretty) {
                buf[len++] = '\n';
                len += put_indent(buf + len, level, flags);
        }
        if (spaced)
                buf[len++] = ' ';
        buf[len++] = ']';
        r = printbuf_memappend(pb, buf, (int) len);
        free(buf);
        return r < 0 ? -1 : 0;
}

/* A new reference to the number @v (NULL: OUTPUT_NA, JSON null). */
static json_object *shared_u64(struct shared *sh, uint64_t v) {
        json_object *o;

        if (v == OUTPUT_NA)
                return NULL;
        for (size_t i = 0; i < sh->n; i++)
                if (sh->num[i] == v)
                        return json_object_get(sh->obj[i]);
        o = json_object_new_uint64(v);
        if (!o || sh->n == SHARED_MAX)
                return o;
        render_once(o);
        sh->num[sh->n] = v;
        sh->obj[sh->n++] = o;
        return json_object_get(o);
}

static json_object *shared_type(struct shared *sh, const char *type) {
        static const char *const names[] = { TOPOLOGY_TYPE_SELF, TOPOLOGY_TYPE_XGMI,
                                             TOPOLOGY_TYPE_PCIE, TOPOLOGY_TYPE_SAME_GPU,
                                             TOPOLOGY_TYPE_NONE };

        for (size_t i = 0; i < ELEMENTSOF(names); i++)
                if (strcmp(names[i], type) == 0) {
                        if (!sh->types[i]) {
                                sh->types[i] = json_object_new_string(type);
                                if (sh->types[i])
                                        render_once(sh->types[i]);
                        }
                        return json_object_get(sh->types[i]);
                }
        return json_object_new_string(type);
}

static void add_key(json_object *o, const char *key, json_object *v) {
        json_object_object_add_ex(o, key, v,
                                  JSON_C_OBJECT_ADD_KEY_IS_NEW | JSON_C_OBJECT_KEY_IS_CONSTANT);
}

/* A pair's object; @from and @to are borrowed (a reference is taken). */
static json_object *pair_json(struct shared *sh, json_object *from, json_object *to,
                              const struct pair *p) {
        json_object *o = json_object_new_object();

        if (!o)
                return NULL;
        add_key(o, "from", json_object_get(from));
        add_key(o, "to", json_object_get(to));
        add_key(o, "type", shared_type(sh, p->type));
        add_key(o, "hops", shared_u64(sh, p->hops));
        add_key(o, "weight", shared_u64(sh, p->weight));
        add_key(o, "xgmi_links", shared_u64(sh, p->xgmi_links));
        add_key(o, "min_bandwidth_mbps", shared_u64(sh, p->min_bw));
        add_key(o, "max_bandwidth_mbps", shared_u64(sh, p->max_bw));
        return o;
}

/* The name of each end: "N" for GPU N, "N.P" for its partition P. */
static json_object **end_names(struct topo *t, bool partitions, size_t *ret_n) {
        size_t n = 0, k = 0;
        json_object **names;

        for (size_t i = 0; i < t->n_gpus; i++)
                n += partitions ? t->gpus[i].n_nodes : 1;
        names = calloc(n + 1, sizeof(*names));
        if (!names)
                return NULL;
        for (size_t i = 0; i < t->n_gpus; i++) {
                char buf[48];

                if (!partitions) {
                        snprintf(buf, sizeof(buf), "%zu", t->gpus[i].index);
                        names[k++] = json_object_new_string(buf);
                        continue;
                }
                for (size_t m = 0; m < t->gpus[i].n_nodes; m++) {
                        snprintf(buf, sizeof(buf), "%zu.%u", t->gpus[i].index,
                                 t->gpus[i].nodes[m].index);
                        names[k++] = json_object_new_string(buf);
                }
        }
        *ret_n = n;
        return names;
}

static void names_free(json_object **names, size_t n) {
        for (size_t i = 0; names && i < n; i++)
                json_object_put(names[i]);
        free(names);
}

static json_object *gpu_links(struct topo *t, struct shared *sh) {
        json_object *a = json_object_new_array_ext((int) (t->n_gpus * t->n_gpus));
        size_t n = 0;
        json_object **names = end_names(t, false, &n);

        for (size_t i = 0; a && names && i < t->n_gpus; i++)
                for (size_t j = 0; j < t->n_gpus; j++) {
                        struct pair p;
                        json_object *o;

                        pair_of(t, &t->gpus[i], &t->gpus[j], true, &p);
                        o = pair_json(sh, names[i], names[j], &p);
                        if (!o || json_object_array_add(a, o) < 0) {
                                json_object_put(o);
                                json_object_put(a);
                                a = NULL;
                                break;
                        }
                }
        if (!names) {
                json_object_put(a);
                a = NULL;
        }
        names_free(names, n);
        return a;
}

/* The keys of the partition matrix, in the order of struct pair's values. */
static const char *const matrix_keys[] = {
        "type", "hops", "weight", "xgmi_links", "min_bandwidth_mbps", "max_bandwidth_mbps"
};
#define N_MATRIX_KEYS ELEMENTSOF(matrix_keys)

static json_object *pair_value(struct shared *sh, const struct pair *p, size_t key) {
        switch (key) {
        case 0:
                return shared_type(sh, p->type);
        case 1:
                return shared_u64(sh, p->hops);
        case 2:
                return shared_u64(sh, p->weight);
        case 3:
                return shared_u64(sh, p->xgmi_links);
        case 4:
                return shared_u64(sh, p->min_bw);
        default:
                return shared_u64(sh, p->max_bw);
        }
}

/*
 * The pairs of partitions as matrices (4096 pair objects for 64 partitions were most of the
 * document's time): {"ends": ["0.0", ...], "type": [[row of "0.0"], ...], "hops": ..., ...},
 * row i column j the pair from ends[i] to ends[j]; null when no selected GPU is partitioned
 * and -g names no partition.
 */
static json_object *partition_links(struct topo *t, struct shared *sh) {
        json_object *m, *ends, *rows[N_MATRIX_KEYS] = { NULL }, **names;
        size_t n = 0, n_sel = 0, fi = 0;
        int r = 0;

        if (!t->partition_pairs)
                return NULL;
        names = end_names(t, true, &n);
        m = json_object_new_object();
        ends = json_object_new_array();
        if (!names || !m || !ends)
                goto fail;
        for (size_t i = 0; i < t->n_gpus; i++)
                for (size_t k = 0; k < t->gpus[i].n_nodes; k++, fi++)
                        if (t->gpus[i].nodes[k].selected) {
                                json_object_array_add(ends, json_object_get(names[fi]));
                                n_sel++;
                        }
        for (size_t key = 0; key < N_MATRIX_KEYS; key++) {
                rows[key] = json_object_new_array_ext((int) n_sel);
                if (!rows[key])
                        goto fail;
        }
        for (size_t i = 0; i < t->n_gpus; i++)
                for (size_t k = 0; k < t->gpus[i].n_nodes; k++) {
                        struct tgpu *x = &t->gpus[i];
                        json_object *row[N_MATRIX_KEYS] = { NULL };

                        if (!x->nodes[k].selected)
                                continue;
                        for (size_t key = 0; key < N_MATRIX_KEYS; key++) {
                                row[key] = json_object_new_array_ext((int) n_sel);
                                if (!row[key] || json_object_array_add(rows[key], row[key]) < 0) {
                                        json_object_put(row[key]);
                                        goto fail;
                                }
                                /* not empty: x itself is an end */
                                json_object_set_serializer(row[key], write_row, NULL, NULL);
                        }
                        for (size_t j = 0; j < t->n_gpus; j++)
                                for (size_t mm = 0; mm < t->gpus[j].n_nodes; mm++) {
                                        struct tgpu *y = &t->gpus[j];
                                        struct pair pr;

                                        if (!y->nodes[mm].selected)
                                                continue;
                                        pair_of(t, x, y, x == y && k == mm, &pr);
                                        for (size_t key = 0; r >= 0 && key < N_MATRIX_KEYS; key++)
                                                r = json_object_array_add(row[key],
                                                                          pair_value(sh, &pr, key));
                                        if (r < 0)
                                                goto fail;
                                }
                }
        add_key(m, "ends", ends);
        for (size_t key = 0; key < N_MATRIX_KEYS; key++)
                add_key(m, matrix_keys[key], rows[key]);
        names_free(names, n);
        return m;
fail:
        for (size_t key = 0; key < N_MATRIX_KEYS; key++)
                json_object_put(rows[key]);
        json_object_put(ends);
        json_object_put(m);
        names_free(names, n);
        return NULL;
}

static const char *xgmi_message(int r) {
        return r == -EBADMSG ? "the file does not parse (garbage or truncated)" : "cannot be read";
}

static json_object *topology_gpu(void *userdata, size_t index, struct amdsmi_gpu *gpu) {
        struct topo *t = userdata;
        struct report *rep = t->q->report;
        json_object *o = doc_gpu_new(index, gpu), *parts;
        _cleanup_free_ char *cpus = NULL;
        struct tgpu *g = NULL;
        uint64_t hive;
        int numa, r;

        if (!o)
                return NULL;
        for (size_t i = 0; i < t->n_gpus; i++)
                if (t->gpus[i].index == index)
                        g = &t->gpus[i];
        numa = amdsmi_gpu_get_numa_node(gpu);
        json_set(o, "numa_node", numa >= 0 ? json_object_new_int(numa) : NULL);
        r = amdsmi_gpu_read_local_cpulist(gpu, &cpus);
        if (r < 0 && r != -ENOENT)
                report_field_error(rep, (int) index, "cpu_affinity", r);
        json_set(o, "cpu_affinity", json_string_or_null(cpus));
        hive = OUTPUT_NA;
        if (g && g->xgmi_error == 0 && g->xgmi.hive_id != OUTPUT_NA)
                hive = g->xgmi.hive_id;
        else if (amdsmi_gpu_get_hive_id(gpu) != 0)
                hive = amdsmi_gpu_get_hive_id(gpu);
        json_set(o, "hive_id", hive == OUTPUT_NA ? NULL : json_hex(hive, 16));
        json_set(o, "xgmi_physical_id",
                 g && g->xgmi_error == 0 ? json_u64_or_null(g->xgmi.physical_id) : NULL);
        json_set(o, "xgmi_device_id",
                 g && g->xgmi_error == 0 ? json_u64_or_null(g->xgmi.device_id) : NULL);
        if (g && g->xgmi_error < 0 && g->xgmi_error != -ENOENT)
                report_field_error_msg(rep, (int) index, "xgmi", g->xgmi_error,
                                       xgmi_message(g->xgmi_error));
        if (g && g->xgmi_error == 0 && g->xgmi.hops_error < 0 && g->xgmi.hops_error != -ENOENT)
                report_field_error_msg(rep, (int) index, "xgmi_num_hops", g->xgmi.hops_error,
                                       xgmi_message(g->xgmi.hops_error));
        if (g && g->xgmi_error == 0 && g->xgmi.links_error < 0 && g->xgmi.links_error != -ENOENT)
                report_field_error_msg(rep, (int) index, "xgmi_num_links", g->xgmi.links_error,
                                       xgmi_message(g->xgmi.links_error));
        if (!g || amdsmi_gpu_get_partitions_error(gpu) < 0) {
                json_set(o, "partitions", NULL);
                return o;
        }
        parts = json_object_new_array();
        for (size_t k = 0; parts && k < g->n_nodes; k++) {
                json_object *e;

                if (!g->nodes[k].selected)
                        continue;
                e = json_object_new_object();
                if (!e)
                        break;
                json_set(e, "partition", json_object_new_uint64(g->nodes[k].index));
                json_set(e, "kfd_node", json_object_new_uint64(g->nodes[k].kfd_node));
                json_object_array_add(parts, e);
        }
        json_set(o, "partitions", parts);
        return o;
}

json_object *topology_document(const struct doc_query *q) {
        struct topo t = { .q = q };
        struct shared sh = {};
        json_object *gpus = NULL, *links = NULL, *plinks = NULL, *doc = NULL, *errors;
        struct amdsmi_partition *first;
        int r;

        r = topo_load(&t);
        if (r < 0) {
                report_fail(q->report, r, "out of memory");
                goto finish;
        }
        r = gpu_set_collect(q->set, q->report, topology_gpu, &t, &gpus);
        if (r < 0)
                goto finish;
        first = t.n_gpus && t.gpus[0].n_nodes ? t.gpus[0].nodes[0].part : NULL;
        links = gpu_links(&t, &sh);
        plinks = partition_links(&t, &sh);
        /* KFD renumbers its nodes when partitions change: the links read are of one
         * numbering only if the generation did not move (it was the enumeration's before) */
        if (first && amdsmi_partition_check(first) < 0)
                report_field_error_msg(q->report, -1, "links", -ESTALE,
                                       "the partitions changed while reading their KFD links: "
                                       "run it again");
        if (!links || (!plinks && t.partition_pairs)) {
                report_fail(q->report, -ENOMEM, "out of memory");
                goto finish;
        }
        doc = report_document(q->report, TAKE_PTR(gpus));
        if (!doc)
                goto finish;
        /* "errors" after the pairs, as the other documents end with it */
        errors = json_object_get(json_object_object_get(doc, "errors"));
        json_object_object_del(doc, "errors");
        json_set(doc, "links", TAKE_PTR(links));
        json_set(doc, "partition_links", TAKE_PTR(plinks));
        json_set(doc, "errors", errors);
finish:
        json_object_put(gpus);
        json_object_put(links);
        json_object_put(plinks);
        shared_free(&sh);
        topo_free(&t);
        return doc;
}
