/* SPDX-License-Identifier: MIT */
/*
 * The "topology" document over hand-made trees: two GPUs of a hive and one outside it on the
 * other socket (XGMI hops from xgmi_num_hops, else from the KFD weight; a PCIe path through
 * both CPU nodes), and the same with the first GPU in DPX (the partition matrices, SAME_GPU).
 */
/* clang-format off */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
/* clang-format on */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "documents.h"
#include "gpu-set.h"
#include "report.h"
#include "topology-json.h"
#include "tree-util.h"

#define NODES "class/kfd/kfd/topology/nodes/"

static void add_gpu(const char *root, const char *bus, int numa) {
        char rel[256], target[256], v[32];

        snprintf(rel, sizeof(rel), "devices/pci0000:00/0000:%s:00.0/vendor", bus);
        tree_file(root, rel, "0x1002\n", -1, 0444);
        snprintf(rel, sizeof(rel), "devices/pci0000:00/0000:%s:00.0/device", bus);
        tree_file(root, rel, "0x74a1\n", -1, 0444);
        snprintf(rel, sizeof(rel), "devices/pci0000:00/0000:%s:00.0/class", bus);
        tree_file(root, rel, "0x120000\n", -1, 0444);
        snprintf(rel, sizeof(rel), "devices/pci0000:00/0000:%s:00.0/numa_node", bus);
        snprintf(v, sizeof(v), "%d\n", numa);
        tree_file(root, rel, v, -1, 0444);
        snprintf(rel, sizeof(rel), "devices/pci0000:00/0000:%s:00.0/local_cpulist", bus);
        tree_file(root, rel, numa == 0 ? "0-7\n" : "8-15\n", -1, 0444);
        snprintf(rel, sizeof(rel), "devices/pci0000:00/0000:%s:00.0/driver", bus);
        tree_link(root, rel, "../../../bus/pci/drivers/amdgpu");
        snprintf(rel, sizeof(rel), "bus/pci/devices/0000:%s:00.0", bus);
        snprintf(target, sizeof(target), "../../../devices/pci0000:00/0000:%s:00.0", bus);
        tree_link(root, rel, target);
}

static void add_link(const char *root, unsigned from, unsigned m, unsigned type, unsigned to,
                     unsigned weight, unsigned bw) {
        char rel[128], text[256];

        snprintf(rel, sizeof(rel), NODES "%u/io_links/%u/properties", from, m);
        snprintf(text, sizeof(text),
                 "type %u\nnode_from %u\nnode_to %u\nweight %u\nmin_bandwidth %u\n"
                 "max_bandwidth %u\nflags 1\n",
                 type, from, to, weight, bw, bw);
        tree_file(root, rel, text, -1, 0444);
}

static void add_node(const char *root, unsigned node, const char *gpu_id, const char *props) {
        char rel[128];

        snprintf(rel, sizeof(rel), NODES "%u/gpu_id", node);
        tree_file(root, rel, gpu_id, -1, 0444);
        snprintf(rel, sizeof(rel), NODES "%u/properties", node);
        tree_file(root, rel, props, -1, 0444);
}

/*
 * Nodes 0, 1: the CPUs (weight 32 between them). 2: GPU 0 (c1, socket 0), 3: GPU 1 (c2,
 * socket 0), both of hive 77; 4: GPU 2 (e1, socket 1), no hive. With @dpx, GPU 0 has a second
 * partition, node 5.
 */
static char *tree(bool dpx) {
        char *root = tree_new();

        tree_mkdirs(root, "bus/pci/drivers/amdgpu");
        add_gpu(root, "c1", 0);
        add_gpu(root, "c2", 0);
        add_gpu(root, "e1", 1);
        tree_file(root, "class/kfd/kfd/topology/generation_id", "1\n", -1, 0444);
        add_node(root, 0, "0\n", "cpu_cores_count 8\n");
        add_node(root, 1, "0\n", "cpu_cores_count 8\n");
        add_link(root, 0, 0, 2, 1, 32, 0);
        add_link(root, 1, 0, 2, 0, 32, 0);
        add_node(root, 2, "1\n",
                 dpx ? "simd_count 608\nsimd_per_cu 4\nlocation_id 49408\ndomain 0\nnum_xcc 4\n"
                       "hive_id 77\n"
                     : "simd_count 1216\nsimd_per_cu 4\nlocation_id 49408\ndomain 0\n"
                       "num_xcc 8\nhive_id 77\n");
        add_node(root, 3, "2\n",
                 "simd_count 1216\nsimd_per_cu 4\nlocation_id 49664\ndomain 0\nnum_xcc 8\n"
                 "hive_id 77\n");
        add_node(root, 4, "3\n",
                 "simd_count 1216\nsimd_per_cu 4\nlocation_id 57600\ndomain 0\nnum_xcc 8\n");
        add_link(root, 2, 0, 2, 0, 20, 64000);
        add_link(root, 2, 1, 11, 3, 15, 50000);
        add_link(root, 3, 0, 2, 0, 20, 64000);
        add_link(root, 3, 1, 11, 2, 15, 50000);
        add_link(root, 4, 0, 2, 1, 20, 32000);
        if (dpx) {
                add_node(root, 5, "4\n",
                         "simd_count 608\nsimd_per_cu 4\nlocation_id 49409\ndomain 0\n"
                         "num_xcc 4\nhive_id 77\n");
                add_link(root, 2, 2, 11, 5, 13, 819200);
                add_link(root, 5, 0, 2, 0, 20, 64000);
                add_link(root, 5, 1, 11, 2, 13, 819200);
                add_link(root, 5, 2, 11, 3, 15, 50000);
                add_link(root, 3, 2, 11, 5, 15, 50000);
        }
        /* GPU 0's XGMI files: GPU 1 is 2 hops away over 8 links (the weight says 1) */
        tree_file(root, "devices/pci0000:00/0000:c1:00.0/xgmi_physical_id", "0\n", -1, 0444);
        tree_file(root, "devices/pci0000:00/0000:c1:00.0/xgmi_device_id", "4242\n", -1, 0444);
        tree_file(root, "devices/pci0000:00/0000:c1:00.0/xgmi_hive_info/xgmi_hive_id", "77\n", -1,
                  0444);
        tree_link(root, "devices/pci0000:00/0000:c1:00.0/xgmi_hive_info/node1",
                  "../../0000:c1:00.0");
        tree_link(root, "devices/pci0000:00/0000:c1:00.0/xgmi_hive_info/node2",
                  "../../0000:c2:00.0");
        tree_file(root, "devices/pci0000:00/0000:c1:00.0/xgmi_num_hops", "00 42 \n", -1, 0444);
        tree_file(root, "devices/pci0000:00/0000:c1:00.0/xgmi_num_links", "00 08 \n", -1, 0444);
        /* GPU 1's hop table is garbage: said, and the weight gives the hops */
        tree_file(root, "devices/pci0000:00/0000:c2:00.0/xgmi_device_id", "4343\n", -1, 0444);
        tree_file(root, "devices/pci0000:00/0000:c2:00.0/xgmi_num_hops", "zz\n", -1, 0444);
        return root;
}

struct fixture {
        char *root;
        struct amdsmi_ctx *ctx;
        struct report rep;
        struct gpu_set set;
        struct selection sel;
        json_object *doc;
};

static void build(struct fixture *f, bool dpx, const char *selector) {
        struct doc_query q;

        memset(f, 0, sizeof(*f));
        f->root = tree(dpx);
        assert_int_equal(amdsmi_ctx_new_with_roots(f->root, NULL, &f->ctx), 0);
        assert_int_equal(amdsmi_ctx_enumerate(f->ctx), 3);
        f->rep.command = "topology";
        f->rep.keep_field_errors = true;
        if (selector)
                assert_int_equal(selection_add(&f->sel, selector), 0);
        assert_int_equal(gpu_set_resolve(&f->set, f->ctx, &f->sel, &f->rep, 0), 0);
        q = (struct doc_query){ .report = &f->rep, .set = &f->set };
        f->doc = topology_document(&q);
        assert_non_null(f->doc);
}

static void finish(struct fixture *f) {
        json_object_put(f->doc);
        gpu_set_clear(&f->set);
        selection_clear(&f->sel);
        report_clear(&f->rep);
        amdsmi_ctx_unref(f->ctx);
        tree_free(f->root);
}

static json_object *key(json_object *o, const char *k) {
        json_object *v = NULL;

        assert_true(json_object_object_get_ex(o, k, &v));
        return v;
}

/* The entry of "links" from @from to @to. */
static json_object *pair(json_object *doc, const char *from, const char *to) {
        json_object *links = key(doc, "links");

        for (size_t i = 0; i < json_object_array_length(links); i++) {
                json_object *p = json_object_array_get_idx(links, i);

                if (strcmp(json_object_get_string(key(p, "from")), from) == 0 &&
                    strcmp(json_object_get_string(key(p, "to")), to) == 0)
                        return p;
        }
        fail_msg("no pair %s -> %s", from, to);
        return NULL;
}

static void assert_pair(json_object *p, const char *type, int64_t hops, int64_t weight,
                        int64_t xgmi_links, int64_t bw) {
        assert_string_equal(json_object_get_string(key(p, "type")), type);
#define NUM(k, v)                                                                \
        do {                                                                     \
                if ((v) < 0)                                                     \
                        assert_null(key(p, k));                                  \
                else                                                             \
                        assert_int_equal(json_object_get_int64(key(p, k)), (v)); \
        } while (0)
        NUM("hops", hops);
        NUM("weight", weight);
        NUM("xgmi_links", xgmi_links);
        NUM("max_bandwidth_mbps", bw);
#undef NUM
}

static bool has_error(json_object *doc, int gpu, const char *field) {
        json_object *errors = key(doc, "errors");

        for (size_t i = 0; i < json_object_array_length(errors); i++) {
                json_object *e = json_object_array_get_idx(errors, i);

                if (json_object_get_int(key(e, "gpu")) == gpu &&
                    strcmp(json_object_get_string(key(e, "field")), field) == 0)
                        return true;
        }
        return false;
}

static void test_gpu_pairs(void **state) {
        struct fixture f;
        json_object *g0;

        build(&f, false, NULL);
        assert_int_equal(json_object_array_length(key(f.doc, "links")), 9);
        assert_null(key(f.doc, "partition_links"));
        assert_pair(pair(f.doc, "0", "0"), "SELF", 0, 0, -1, -1);
        assert_pair(pair(f.doc, "0", "1"), "XGMI", 2, 15, 8, 50000);  /* xgmi_num_hops */
        assert_pair(pair(f.doc, "1", "0"), "XGMI", 1, 15, -1, 50000); /* the weight */
        /* across the sockets: GPU -> CPU 0 -> CPU 1 -> GPU */
        assert_pair(pair(f.doc, "0", "2"), "PCIE", 3, 72, -1, 32000);
        assert_pair(pair(f.doc, "2", "1"), "PCIE", 3, 72, -1, 32000);
        assert_true(has_error(f.doc, 1, "xgmi_num_hops"));

        g0 = json_object_array_get_idx(key(f.doc, "gpus"), 0);
        assert_int_equal(json_object_get_int(key(g0, "numa_node")), 0);
        assert_string_equal(json_object_get_string(key(g0, "cpu_affinity")), "0-7");
        assert_string_equal(json_object_get_string(key(g0, "hive_id")), "0x000000000000004d");
        assert_int_equal(json_object_get_int(key(g0, "xgmi_physical_id")), 0);
        assert_int_equal(json_object_get_int(key(g0, "xgmi_device_id")), 4242);
        assert_null(key(json_object_array_get_idx(key(f.doc, "gpus"), 2), "hive_id"));
        finish(&f);
}

static void test_same_socket_pcie(void **state) {
        struct fixture f;

        /* GPU 2 on socket 0 too, no hive: two hops through CPU 0 */
        memset(&f, 0, sizeof(f));
        build(&f, false, "0,2");
        assert_int_equal(json_object_array_length(key(f.doc, "links")), 4);
        finish(&f);

        char *root = tree(false);
        add_link(root, 4, 0, 2, 0, 20, 16000);
        struct amdsmi_ctx *ctx = NULL;
        struct report rep = { .command = "topology", .keep_field_errors = true };
        struct gpu_set set = {};
        struct selection sel = {};
        struct doc_query q = { .report = &rep, .set = &set };
        json_object *doc;

        assert_int_equal(amdsmi_ctx_new_with_roots(root, NULL, &ctx), 0);
        assert_int_equal(amdsmi_ctx_enumerate(ctx), 3);
        assert_int_equal(gpu_set_resolve(&set, ctx, &sel, &rep, 0), 0);
        doc = topology_document(&q);
        assert_non_null(doc);
        assert_pair(pair(doc, "0", "2"), "PCIE", 2, 40, -1, 16000);
        json_object_put(doc);
        gpu_set_clear(&set);
        report_clear(&rep);
        amdsmi_ctx_unref(ctx);
        tree_free(root);
}

static void test_partition_pairs(void **state) {
        struct fixture f;
        json_object *pl, *ends, *type, *weight, *hops;

        build(&f, true, NULL);
        /* the GPU pairs stay one per GPU */
        assert_int_equal(json_object_array_length(key(f.doc, "links")), 9);
        assert_pair(pair(f.doc, "0", "1"), "XGMI", 2, 15, 8, 50000);
        pl = key(f.doc, "partition_links");
        assert_non_null(pl);
        ends = key(pl, "ends");
        assert_int_equal(json_object_array_length(ends), 4);
        assert_string_equal(json_object_get_string(json_object_array_get_idx(ends, 0)), "0.0");
        assert_string_equal(json_object_get_string(json_object_array_get_idx(ends, 1)), "0.1");
        assert_string_equal(json_object_get_string(json_object_array_get_idx(ends, 2)), "1.0");
        type = key(pl, "type");
        weight = key(pl, "weight");
        hops = key(pl, "hops");
#define AT(m, i, j) json_object_array_get_idx(json_object_array_get_idx(m, i), j)
        assert_string_equal(json_object_get_string(AT(type, 0, 0)), "SELF");
        assert_string_equal(json_object_get_string(AT(type, 0, 1)), "SAME_GPU");
        assert_string_equal(json_object_get_string(AT(type, 1, 0)), "SAME_GPU");
        assert_int_equal(json_object_get_int(AT(weight, 0, 1)), 13);
        assert_int_equal(json_object_get_int(AT(hops, 0, 1)), 0);
        assert_string_equal(json_object_get_string(AT(type, 1, 2)), "XGMI");
        assert_int_equal(json_object_get_int(AT(hops, 1, 2)), 2);
        assert_string_equal(json_object_get_string(AT(type, 1, 3)), "PCIE");
        assert_int_equal(json_object_get_int(AT(weight, 1, 3)), 72);
        assert_string_equal(json_object_get_string(AT(type, 3, 3)), "SELF");
#undef AT
        finish(&f);

        /* -g N.P: those partitions only, also of an SPX GPU */
        build(&f, true, "0.1,1.0");
        pl = key(f.doc, "partition_links");
        assert_int_equal(json_object_array_length(key(pl, "ends")), 2);
        assert_int_equal(json_object_array_length(key(f.doc, "links")), 4);
        finish(&f);
}

/* The document renders as json-c renders the same values without the document's own
 * serializers (shared values, matrix rows), in every style amdsmi and amdsmid use. */
static void test_rendering(void **state) {
        static const int styles[] = {
                JSON_C_TO_STRING_PLAIN,
                JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE,
                JSON_C_TO_STRING_SPACED,
                JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED,
                JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_PRETTY_TAB,
        };
        struct fixture f;

        build(&f, true, NULL);
        for (size_t i = 0; i < sizeof(styles) / sizeof(styles[0]); i++) {
                char *ours = strdup(json_object_to_json_string_ext(f.doc, styles[i]));
                json_object *plain = json_tokener_parse(ours);

                assert_non_null(plain);
                assert_string_equal(ours, json_object_to_json_string_ext(plain, styles[i]));
                json_object_put(plain);
                free(ours);
        }
        finish(&f);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_gpu_pairs),
                cmocka_unit_test(test_same_socket_pcie),
                cmocka_unit_test(test_partition_pairs),
                cmocka_unit_test(test_rendering),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
