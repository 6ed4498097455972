/* SPDX-License-Identifier: MIT */
/*
 * The topology slice's library part on hand-made trees (spec health-and-control §3): the
 * io_link properties parser, the xgmi_num_hops / xgmi_num_links parser, a partition's links
 * with their peers (numeric order, garbage left out, a node no GPU has), the one-file lookup
 * of a pair and its fallback, the XGMI files (a hop table shorter than the hive, garbage, none
 * at all), xgmi_error and local_cpulist.
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

#include "private.h"
#include "topology-private.h"
#include "tree-util.h"

#define DEV_A "devices/pci0000:00/0000:c1:00.0/"
#define DEV_B "devices/pci0000:00/0000:c2:00.0/"
#define NODES "class/kfd/kfd/topology/nodes/"

static void add_gpu(const char *root, const char *bdf, const char *dev) {
        char rel[256], target[256];

        snprintf(rel, sizeof(rel), "%svendor", dev);
        tree_file(root, rel, "0x1002\n", -1, 0444);
        snprintf(rel, sizeof(rel), "%sdevice", dev);
        tree_file(root, rel, "0x74a1\n", -1, 0444);
        snprintf(rel, sizeof(rel), "%sclass", dev);
        tree_file(root, rel, "0x120000\n", -1, 0444);
        snprintf(rel, sizeof(rel), "%sdriver", dev);
        tree_link(root, rel, "../../../bus/pci/drivers/amdgpu");
        snprintf(rel, sizeof(rel), "bus/pci/devices/%s", bdf);
        snprintf(target, sizeof(target), "../../../%.*s", (int) strlen(dev) - 1, dev);
        tree_link(root, rel, target);
}

static const char *link_text(unsigned type, unsigned from, unsigned to, unsigned weight,
                             unsigned bw) {
        static char buf[512];

        snprintf(buf, sizeof(buf),
                 "type %u\nversion_major 0\nversion_minor 0\nnode_from %u\nnode_to %u\n"
                 "weight %u\nmin_latency 0\nmax_latency 0\nmin_bandwidth %u\n"
                 "max_bandwidth %u\nrecommended_transfer_size 0\n"
                 "recommended_sdma_engine_id_mask 0\nflags 1\n",
                 type, from, to, weight, bw, bw);
        return buf;
}

/* Two MI300X (c1, c2) of one hive in SPX: KFD node 0 the CPU, 1 and 2 the GPUs. */
static char *two_gpus(void) {
        char *root = tree_new();

        tree_mkdirs(root, "bus/pci/drivers/amdgpu");
        add_gpu(root, "0000:c1:00.0", DEV_A);
        add_gpu(root, "0000:c2:00.0", DEV_B);
        tree_file(root, "class/kfd/kfd/topology/generation_id", "1\n", -1, 0444);
        tree_file(root, NODES "0/gpu_id", "0\n", -1, 0444);
        tree_file(root, NODES "0/properties", "cpu_cores_count 8\n", -1, 0444);
        tree_file(root, NODES "1/gpu_id", "1111\n", -1, 0444);
        tree_file(root, NODES "1/properties",
                  "simd_count 1216\nsimd_per_cu 4\nlocation_id 49408\ndomain 0\nnum_xcc 8\n"
                  "hive_id 77\n",
                  -1, 0444);
        tree_file(root, NODES "2/gpu_id", "2222\n", -1, 0444);
        tree_file(root, NODES "2/properties",
                  "simd_count 1216\nsimd_per_cu 4\nlocation_id 49664\ndomain 0\nnum_xcc 8\n"
                  "hive_id 77\n",
                  -1, 0444);
        /* node 1: the CPU, then the peer, in the kernel's order */
        tree_file(root, NODES "1/io_links/0/properties", link_text(2, 1, 0, 20, 64000), -1, 0444);
        tree_file(root, NODES "1/io_links/1/properties", link_text(11, 1, 2, 15, 50000), -1, 0444);
        tree_mkdirs(root, NODES "1/p2p_links");
        tree_file(root, NODES "2/io_links/0/properties", link_text(2, 2, 0, 20, 64000), -1, 0444);
        tree_file(root, NODES "2/io_links/1/properties", link_text(11, 2, 1, 15, 50000), -1, 0444);
        return root;
}

static struct amdsmi_ctx *open_ctx(const char *root) {
        struct amdsmi_ctx *ctx = NULL;

        assert_int_equal(amdsmi_ctx_new_with_roots(root, NULL, &ctx), 0);
        assert_int_equal(amdsmi_ctx_enumerate(ctx), 2);
        return ctx;
}

static void test_io_link_parser(void **state) {
        struct amdsmi_io_link l = { .type = 99 };

        assert_int_equal(amdsmi_io_link_parse(link_text(11, 3, 4, 15, 50000), &l), 0);
        assert_int_equal(l.type, AMDSMI_IO_LINK_TYPE_XGMI);
        assert_int_equal(l.node_from, 3);
        assert_int_equal(l.node_to, 4);
        assert_int_equal(l.weight, 15);
        assert_int_equal(l.min_bandwidth, 50000);
        assert_int_equal(l.max_bandwidth, 50000);
        assert_int_equal(l.flags, 1);
        assert_false(l.p2p);
        assert_null(l.peer);
        /* an older kernel: only some keys; unknown keys of a newer one are ignored */
        assert_int_equal(amdsmi_io_link_parse("type 2\nnode_from 1\nnode_to 0\nfuture 7", &l), 0);
        assert_int_equal(l.type, AMDSMI_IO_LINK_TYPE_PCIE);
        assert_true(l.weight == AMDSMI_NA);
        assert_true(l.max_bandwidth == AMDSMI_NA);
        assert_string_equal(amdsmi_io_link_type_to_string(11), "xgmi");
        assert_string_equal(amdsmi_io_link_type_to_string(2), "pcie");
        assert_string_equal(amdsmi_io_link_type_to_string(12), "other");

        static const char *const bad[] = {
                "",                                        /* empty */
                "type 11\nnode_from 1",                    /* truncated: no node_to */
                "type 11\nnode_from 1\nnode_to",           /* cut in a line */
                "type 11\nnode_from 1\nnode_to ",          /* no value */
                "type x\nnode_from 1\nnode_to 2",          /* garbage */
                "type -1\nnode_from 1\nnode_to 2",         /* a sign */
                "type 4294967296\nnode_from 1\nnode_to 2", /* above 32 bits */
                "type 11\nnode_from 1\nnode_to 2\ntype 2", /* twice */
                "type 11\nnode_from 1\nnode_to 2\nweight 18446744073709551615", /* N/A marker */
                "garbage",
                "type 11\n\nnode_from 1\nnode_to 2", /* an empty line */
        };
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                l.type = 99;
                assert_int_equal(amdsmi_io_link_parse(bad[i], &l), -EBADMSG);
                assert_int_equal(l.type, 99); /* untouched */
        }
}

static void test_xgmi_bytes_parser(void **state) {
        uint8_t b[AMDSMI_XGMI_MAX_NODES] = { 0 };
        size_t n = 99;
        char big[3 * (AMDSMI_XGMI_MAX_NODES + 1) + 2];

        assert_int_equal(amdsmi_xgmi_parse_bytes("00 41 c3 \n", b, sizeof(b), &n), 0);
        assert_int_equal(n, 3);
        assert_int_equal(b[1], 0x41);
        assert_int_equal(amdsmi_xgmi_hops(b[1]), 1);
        assert_int_equal(amdsmi_xgmi_link_type(b[1]), 1);
        assert_int_equal(amdsmi_xgmi_hops(b[2]), 3);
        assert_int_equal(amdsmi_xgmi_link_type(b[2]), 3);
        assert_int_equal(amdsmi_xgmi_parse_bytes("0A ", b, sizeof(b), &n), 0); /* no newline */
        assert_int_equal(n, 1);
        assert_int_equal(b[0], 0x0a);

        static const char *const bad[] = {
                "",    "\n",      "00 01",      "00 01\n", "0 1 ",    "000 ",
                "zz ", "00  01 ", "00 01 \n\n", " 00 ",    "00\t01 ", "00 01 x",
        };
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                n = 99;
                assert_int_equal(amdsmi_xgmi_parse_bytes(bad[i], b, sizeof(b), &n), -EBADMSG);
                assert_int_equal(n, 99);
        }
        /* more members than the caller has room for */
        assert_int_equal(amdsmi_xgmi_parse_bytes("00 01 02 ", b, 2, &n), -E2BIG);
        big[0] = '\0';
        for (size_t i = 0; i <= AMDSMI_XGMI_MAX_NODES; i++)
                strcat(big, "01 ");
        assert_int_equal(amdsmi_xgmi_parse_bytes(big, b, sizeof(b), &n), -E2BIG);
        assert_int_equal(n, 99);
}

static void test_read_io_links(void **state) {
        char *root = two_gpus();
        struct amdsmi_io_link *links = NULL;
        struct amdsmi_partition *a, *b;
        struct amdsmi_ctx *ctx;
        size_t n = 0;

        /* after link 1: a link to a node no GPU has, link 10 (after 2, not after 1), garbage,
         * an entry that is no number, a p2p link */
        tree_file(root, NODES "1/io_links/2/properties", link_text(11, 1, 9, 30, 50000), -1, 0444);
        tree_file(root, NODES "1/io_links/10/properties", link_text(11, 1, 2, 45, 1), -1, 0444);
        tree_file(root, NODES "1/io_links/3/properties", "type 11\nnode_fr", -1, 0444);
        tree_mkdirs(root, NODES "1/io_links/x");
        tree_file(root, NODES "1/p2p_links/0/properties", link_text(2, 1, 2, 40, 32000), -1, 0444);
        ctx = open_ctx(root);
        a = amdsmi_gpu_get_partition(amdsmi_ctx_get_gpu(ctx, 0), 0);
        b = amdsmi_gpu_get_partition(amdsmi_ctx_get_gpu(ctx, 1), 0);
        assert_non_null(a);
        assert_non_null(b);
        assert_int_equal(amdsmi_partition_read_io_links(a, &links, &n), 0);
        assert_int_equal(n, 5);
        assert_int_equal(links[0].node_to, 0);
        assert_null(links[0].peer); /* the CPU */
        assert_int_equal(links[1].node_to, 2);
        assert_ptr_equal(links[1].peer, b);
        assert_int_equal(links[2].node_to, 9);
        assert_null(links[2].peer);            /* no GPU has node 9 */
        assert_int_equal(links[3].weight, 45); /* link 10 */
        assert_true(links[4].p2p);
        assert_int_equal(links[4].type, AMDSMI_IO_LINK_TYPE_PCIE);
        assert_ptr_equal(links[4].peer, b);
        free(links);

        /* the partitions were renumbered since the enumeration */
        tree_file(root, "class/kfd/kfd/topology/generation_id", "2\n", -1, 0444);
        links = NULL;
        assert_int_equal(amdsmi_partition_read_io_links(a, &links, &n), -ESTALE);
        assert_null(links);
        amdsmi_ctx_unref(ctx);
        tree_free(root);
}

static void test_find_io_link(void **state) {
        char *root = two_gpus();
        struct amdsmi_partition *a, *b;
        struct amdsmi_io_link l = { .type = 99 };
        struct amdsmi_ctx *ctx = open_ctx(root);

        a = amdsmi_gpu_get_partition(amdsmi_ctx_get_gpu(ctx, 0), 0);
        b = amdsmi_gpu_get_partition(amdsmi_ctx_get_gpu(ctx, 1), 0);
        assert_int_equal(amdsmi_partition_find_io_link(a, b, &l), 0);
        assert_int_equal(l.type, AMDSMI_IO_LINK_TYPE_XGMI);
        assert_ptr_equal(l.peer, b);
        assert_int_equal(amdsmi_partition_find_io_link(b, a, &l), 0);
        assert_ptr_equal(l.peer, a);
        assert_int_equal(amdsmi_partition_find_io_link(a, NULL, &l), 0);
        assert_int_equal(l.node_to, 0);
        assert_null(l.peer);
        assert_int_equal(l.weight, 20);

        /* not where the kernel puts it: found by reading the others */
        tree_file(root, NODES "1/io_links/0/properties", link_text(11, 1, 2, 30, 100), -1, 0444);
        tree_file(root, NODES "1/io_links/1/properties", link_text(2, 1, 0, 21, 64000), -1, 0444);
        assert_int_equal(amdsmi_partition_find_io_link(a, b, &l), 0);
        assert_int_equal(l.weight, 30);
        assert_int_equal(amdsmi_partition_find_io_link(a, NULL, &l), 0);
        assert_int_equal(l.weight, 21);
        /* only in p2p_links */
        tree_file(root, NODES "2/io_links/1/properties", "garbage", -1, 0444);
        tree_file(root, NODES "2/p2p_links/0/properties", link_text(2, 2, 1, 40, 32000), -1, 0444);
        assert_int_equal(amdsmi_partition_find_io_link(b, a, &l), 0);
        assert_true(l.p2p);
        assert_int_equal(l.weight, 40);
        /* no link at all */
        tree_file(root, NODES "2/p2p_links/0/properties", link_text(2, 2, 5, 40, 32000), -1, 0444);
        l.type = 99;
        assert_int_equal(amdsmi_partition_find_io_link(b, a, &l), -ENOENT);
        assert_int_equal(l.type, 99);
        amdsmi_ctx_unref(ctx);
        tree_free(root);
}

static void test_read_xgmi(void **state) {
        char *root = two_gpus();
        struct amdsmi_xgmi_info x = { .size = sizeof(x) };
        struct amdsmi_gpu *a, *b;
        struct amdsmi_ctx *ctx;

        tree_file(root, DEV_A "xgmi_device_id", "1234567890123\n", -1, 0444);
        tree_file(root, DEV_A "xgmi_physical_id", "1\n", -1, 0444);
        tree_file(root, DEV_A "xgmi_hive_info/xgmi_hive_id", "77\n", -1, 0444);
        tree_link(root, DEV_A "xgmi_hive_info/node1", "../../0000:c2:00.0");
        tree_link(root, DEV_A "xgmi_hive_info/node2", "../../0000:c1:00.0");
        tree_file(root, DEV_A "xgmi_num_hops", "42 00 \n", -1, 0444);
        tree_file(root, DEV_A "xgmi_num_links", "04 00 \n", -1, 0444);
        tree_file(root, DEV_A "xgmi_error", "2\n", -1, 0444);
        /* B: a garbage device id, a hop table shorter than the hive, a garbage link table */
        tree_file(root, DEV_B "xgmi_device_id", "x1\n", -1, 0444);
        tree_file(root, DEV_B "xgmi_physical_id", "0\n", -1, 0444);
        tree_file(root, DEV_B "xgmi_num_hops", "00 \n", -1, 0444);
        tree_file(root, DEV_B "xgmi_num_links", "0x4 0\n", -1, 0444);
        tree_file(root, DEV_B "xgmi_error", "3\n", -1, 0444);
        ctx = open_ctx(root);
        a = amdsmi_ctx_get_gpu(ctx, 0);
        b = amdsmi_ctx_get_gpu(ctx, 1);

        x.size = sizeof(x) - 1;
        assert_int_equal(amdsmi_gpu_read_xgmi(a, &x), -EINVAL);
        x.size = sizeof(x);
        assert_int_equal(amdsmi_gpu_read_xgmi(a, &x), 0);
        assert_int_equal(x.device_id, 1234567890123ULL);
        assert_int_equal(x.physical_id, 1);
        assert_int_equal(x.hive_id, 77);
        assert_int_equal(x.hops_error, 0);
        assert_int_equal(x.n_hops, 2);
        assert_int_equal(amdsmi_xgmi_hops(x.hops[0]), 2);
        assert_int_equal(amdsmi_xgmi_link_type(x.hops[0]), 1);
        assert_int_equal(x.links[0], 4);
        assert_int_equal(x.n_members, 2);
        assert_string_equal(x.members[0], "0000:c2:00.0");
        assert_string_equal(x.members[1], "0000:c1:00.0");

        assert_int_equal(amdsmi_gpu_read_xgmi(b, &x), 0);
        assert_true(x.device_id == AMDSMI_NA);
        assert_true(x.hive_id == AMDSMI_NA);
        assert_int_equal(x.physical_id, 0);
        assert_int_equal(x.hops_error, 0);
        assert_int_equal(x.n_hops, 1);
        assert_int_equal(x.links_error, -EBADMSG);
        assert_int_equal(x.n_links, 0);
        assert_int_equal(x.n_members, 0);

        enum amdsmi_xgmi_error e = AMDSMI_XGMI_ERROR_NONE;
        assert_int_equal(amdsmi_gpu_read_xgmi_error(a, &e), 0);
        assert_int_equal(e, AMDSMI_XGMI_ERROR_MULTIPLE);
        e = AMDSMI_XGMI_ERROR_ONE;
        assert_int_equal(amdsmi_gpu_read_xgmi_error(b, &e), -EBADMSG);
        assert_int_equal(e, AMDSMI_XGMI_ERROR_ONE);
        tree_file(root, DEV_B "xgmi_error", "", 0, 0444);
        assert_int_equal(amdsmi_gpu_read_xgmi_error(b, &e), -EBADMSG);
        tree_file(root, DEV_B "xgmi_error", "0\n", -1, 0444);
        assert_int_equal(amdsmi_gpu_read_xgmi_error(b, &e), 0);
        assert_int_equal(e, AMDSMI_XGMI_ERROR_NONE);
        amdsmi_ctx_unref(ctx);
        tree_free(root);

        /* no XGMI at all */
        root = two_gpus();
        ctx = open_ctx(root);
        x = (struct amdsmi_xgmi_info){ .size = sizeof(x), .physical_id = 5 };
        assert_int_equal(amdsmi_gpu_read_xgmi(amdsmi_ctx_get_gpu(ctx, 0), &x), -ENOENT);
        assert_int_equal(x.physical_id, 5);
        assert_int_equal(amdsmi_gpu_read_xgmi_error(amdsmi_ctx_get_gpu(ctx, 0), &e), -ENOENT);
        amdsmi_ctx_unref(ctx);
        tree_free(root);
}

static void test_local_cpulist(void **state) {
        char *root = two_gpus();
        struct amdsmi_ctx *ctx;
        char *s = NULL;

        tree_file(root, DEV_A "local_cpulist", "0-63,128-191\n", -1, 0444);
        tree_file(root, DEV_B "local_cpulist", "0-63,garbage\n", -1, 0444);
        ctx = open_ctx(root);
        assert_int_equal(amdsmi_gpu_read_local_cpulist(amdsmi_ctx_get_gpu(ctx, 0), &s), 0);
        assert_string_equal(s, "0-63,128-191");
        free(s);
        s = NULL;
        assert_int_equal(amdsmi_gpu_read_local_cpulist(amdsmi_ctx_get_gpu(ctx, 1), &s), -EBADMSG);
        assert_null(s);
        tree_file(root, DEV_B "local_cpulist", "", 0, 0444);
        assert_int_equal(amdsmi_gpu_read_local_cpulist(amdsmi_ctx_get_gpu(ctx, 1), &s), -EBADMSG);
        amdsmi_ctx_unref(ctx);
        tree_free(root);

        assert_true(topology_cpulist_valid("7"));
        assert_true(topology_cpulist_valid("0-3,8,10-11"));
        assert_false(topology_cpulist_valid(""));
        assert_false(topology_cpulist_valid("-1"));
        assert_false(topology_cpulist_valid("1,"));
        assert_false(topology_cpulist_valid("1,,2"));
        assert_false(topology_cpulist_valid("1 2"));
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_io_link_parser), cmocka_unit_test(test_xgmi_bytes_parser),
                cmocka_unit_test(test_read_io_links),  cmocka_unit_test(test_find_io_link),
                cmocka_unit_test(test_read_xgmi),      cmocka_unit_test(test_local_cpulist),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
