/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of amdsmi-sim's KFD topology text (sim/kfd.c).
 *
 * The expected properties files are written out literally from the key list of spec
 * amdgpu-sysfs.md §6.2; the expected gpu_id values were computed once with an independent
 * CRC-16/ARC implementation (polynomial 0x8005 reflected, initial value 0, check value 0xbb3d
 * for "123456789") over the eight little-endian words §6.2 lists.
 */

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "kfd.h"

#define GiB (UINT64_C(1) << 30)

/* A CPU node; the GPU-only fields set here must not show */
static const struct sim_kfd_node cpu_node = {
        .is_gpu = false,
        .cpu_cores_count = 96,
        .cpu_core_id_base = 0,
        .simd_count = 4,
        .array_count = 1,
        .max_engine_clk_ccompute = 3700,
        .mem_banks_count = 1,
        .io_links_count = 2,
};

static const char cpu_node_text[] =
        "cpu_cores_count 96\n"
        "simd_count 0\n"
        "mem_banks_count 1\n"
        "caches_count 0\n"
        "io_links_count 2\n"
        "p2p_links_count 0\n"
        "cpu_core_id_base 0\n"
        "simd_id_base 0\n"
        "max_waves_per_simd 0\n"
        "lds_size_in_kb 0\n"
        "gds_size_in_kb 0\n"
        "num_gws 0\n"
        "wave_front_size 0\n"
        "array_count 0\n"
        "simd_arrays_per_engine 0\n"
        "cu_per_simd_array 0\n"
        "simd_per_cu 0\n"
        "max_slots_scratch_cu 0\n"
        "gfx_target_version 0\n"
        "vendor_id 0\n"
        "device_id 0\n"
        "location_id 0\n"
        "domain 0\n"
        "drm_render_minor 0\n"
        "hive_id 0\n"
        "num_sdma_engines 0\n"
        "num_sdma_xgmi_engines 0\n"
        "num_sdma_queues_per_engine 0\n"
        "num_cp_queues 0\n"
        "max_engine_clk_ccompute 3700\n";

/* MI300X in SPX: one node with all 8 XCCs (304 CUs) at 0000:05:00.0 */
static const struct sim_kfd_node mi300x_spx = {
        .is_gpu = true,
        .simd_count = 1216,
        .num_xcc = 8,
        .array_count = 32,
        .simd_id_base = 2147487744u,
        .gfx_target_version = 90402,
        .vendor_id = 0x1002,
        .device_id = 0x74a1,
        .location_id = 0x0500,
        .domain = 0,
        .drm_render_minor = 128,
        .hive_id = UINT64_C(0x9f9b1ec0a1b2c3d4),
        .num_sdma_engines = 2,
        .num_sdma_xgmi_engines = 14,
        .max_engine_clk_fcompute = 2100,
        .fw_version = 155,
        .sdma_fw_version = 19,
        .capability = 0xa8a8a280,
        .capability2 = 1,
        .unique_id = UINT64_C(0x0123456789abcdef),
        .max_engine_clk_ccompute = 3700,
        .mem_banks_count = 1,
        .caches_count = 2,
        .io_links_count = 8,
        .p2p_links_count = 0,
};

static const char mi300x_spx_text[] =
        "cpu_cores_count 0\n"
        "simd_count 1216\n"
        "mem_banks_count 1\n"
        "caches_count 2\n"
        "io_links_count 8\n"
        "p2p_links_count 0\n"
        "cpu_core_id_base 0\n"
        "simd_id_base 2147487744\n"
        "max_waves_per_simd 8\n"
        "lds_size_in_kb 64\n"
        "gds_size_in_kb 0\n"
        "num_gws 64\n"
        "wave_front_size 64\n"
        "array_count 32\n"
        "simd_arrays_per_engine 1\n"
        "cu_per_simd_array 10\n"
        "simd_per_cu 4\n"
        "max_slots_scratch_cu 32\n"
        "gfx_target_version 90402\n"
        "vendor_id 4098\n"
        "device_id 29857\n"
        "location_id 1280\n"
        "domain 0\n"
        "drm_render_minor 128\n"
        "hive_id 11500819886116094932\n"
        "num_sdma_engines 2\n"
        "num_sdma_xgmi_engines 14\n"
        "num_sdma_queues_per_engine 8\n"
        "num_cp_queues 24\n"
        "max_engine_clk_fcompute 2100\n"
        "local_mem_size 0\n"
        "fw_version 155\n"
        "capability 2829623936\n"
        "capability2 1\n"
        "debug_prop 1511\n"
        "sdma_fw_version 19\n"
        "unique_id 81985529216486895\n"
        "num_xcc 8\n"
        "max_engine_clk_ccompute 3700\n";

static void test_cpu_node(void **state) {
        char buf[4096];

        assert_int_equal(sim_kfd_properties(&cpu_node, buf, sizeof(buf)),
                         (int) strlen(cpu_node_text));
        assert_string_equal(buf, cpu_node_text);
}

static void test_gpu_node_spx(void **state) {
        char buf[4096];

        assert_int_equal(sim_kfd_properties(&mi300x_spx, buf, sizeof(buf)),
                         (int) strlen(mi300x_spx_text));
        assert_string_equal(buf, mi300x_spx_text);
}

static const char *find_line(const char *text, const char *key, char *value, size_t size) {
        size_t klen = strlen(key);

        for (const char *p = text; *p;) {
                const char *nl = strchr(p, '\n');

                assert_non_null(nl);
                if (strncmp(p, key, klen) == 0 && p[klen] == ' ') {
                        size_t vlen = (size_t) (nl - p) - klen - 1;

                        assert_true(vlen < size);
                        memcpy(value, p + klen + 1, vlen);
                        value[vlen] = '\0';
                        return value;
                }
                p = nl + 1;
        }
        return NULL;
}

static void test_gpu_node_cpx_mi355x(void **state) {
        struct sim_kfd_node n = mi300x_spx;
        char buf[4096], v[64];

        /* one CPX partition of an MI355X: 1 XCC, 32 CUs */
        n.simd_count = 128;
        n.num_xcc = 1;
        n.array_count = 4;
        n.gfx_target_version = 90500;
        n.device_id = 0x75a3;
        n.location_id = 0x0500 | 3;
        n.drm_render_minor = 131;
        assert_true(sim_kfd_properties(&n, buf, sizeof(buf)) > 0);

        assert_string_equal(find_line(buf, "simd_count", v, sizeof(v)), "128");
        assert_string_equal(find_line(buf, "lds_size_in_kb", v, sizeof(v)), "160");
        assert_string_equal(find_line(buf, "array_count", v, sizeof(v)), "4");
        assert_string_equal(find_line(buf, "cu_per_simd_array", v, sizeof(v)), "8");
        assert_string_equal(find_line(buf, "location_id", v, sizeof(v)), "1283");
        assert_string_equal(find_line(buf, "drm_render_minor", v, sizeof(v)), "131");
        assert_string_equal(find_line(buf, "debug_prop", v, sizeof(v)), "1494");
        assert_string_equal(find_line(buf, "num_xcc", v, sizeof(v)), "1");
        assert_string_equal(find_line(buf, "device_id", v, sizeof(v)), "30115");
}

static void test_properties_enospc(void **state) {
        size_t len = strlen(mi300x_spx_text);
        char buf[4096];

        memset(buf, 'x', sizeof(buf));
        assert_int_equal(sim_kfd_properties(&mi300x_spx, buf, len), -ENOSPC);
        assert_int_equal(buf[0], 'x');
        assert_int_equal(sim_kfd_properties(&mi300x_spx, buf, len + 1), (int) len);
        assert_int_equal(sim_kfd_properties(&cpu_node, buf, 10), -ENOSPC);
}

static void test_gpu_id(void **state) {
        static const uint16_t cpx[8] = {
                42546, 23091, 7731, 57906, 38451, 27186, 11826, 53811,
        };
        uint16_t spx;

        /* MI300X at 0000:05:00.0, subsystem 1002:74a1, SPX with all 192 GiB */
        spx = sim_kfd_gpu_id(0x00, 0x1002, 0x74a1, 0, 0x74a1, 0x05, 192 * GiB, 0, 8);
        assert_int_equal(spx, 51383);

        /* CPX (NPS1): 24 GiB per partition, partition p owns XCC p */
        for (unsigned p = 0; p < 8; p++) {
                uint16_t id = sim_kfd_gpu_id(0x00, 0x1002, 0x74a1, 0, 0x74a1, 0x05, 24 * GiB, p, 1);

                assert_int_equal(id, cpx[p]);
                assert_int_not_equal(id, 0);
                assert_int_not_equal(id, spx);
                for (unsigned q = 0; q < p; q++)
                        assert_int_not_equal(id, cpx[q]);
        }

        /* the memory size enters the id */
        assert_int_not_equal(sim_kfd_gpu_id(0x00, 0x1002, 0x74a1, 0, 0x74a1, 0x05, 96 * GiB, 0, 8),
                             spx);
}

static void test_gpu_id_never_zero(void **state) {
        /* these inputs have a CRC of 0 (found by search with the independent implementation) */
        assert_int_equal(sim_kfd_gpu_id(0x00, 0x1002, 0x74a1, 1173, 0x74a1, 0x05, 192 * GiB, 0, 8),
                         1);
}

static void check_text(int r, const char *buf, const char *expected) {
        assert_int_equal(r, (int) strlen(expected));
        assert_string_equal(buf, expected);
}

static void test_mem_bank(void **state) {
        char buf[256];
        int r;

        r = sim_kfd_mem_bank(1, 192 * GiB, 8192, 1300, buf, sizeof(buf));
        check_text(r, buf,
                   "heap_type 1\n"
                   "size_in_bytes 206158430208\n"
                   "flags 0\n"
                   "width 8192\n"
                   "mem_clk_max 1300\n");

        r = sim_kfd_mem_bank(0, 1008 * GiB, 64, 4800, buf, sizeof(buf));
        check_text(r, buf,
                   "heap_type 0\n"
                   "size_in_bytes 1082331758592\n"
                   "flags 0\n"
                   "width 64\n"
                   "mem_clk_max 4800\n");

        assert_int_equal(sim_kfd_mem_bank(1, 192 * GiB, 8192, 1300, buf, 20), -ENOSPC);
}

static void test_io_link(void **state) {
        char buf[512];
        int r;

        r = sim_kfd_io_link(11, 2, 3, 15, 50000, 50000, buf, sizeof(buf));
        check_text(r, buf,
                   "type 11\n"
                   "version_major 0\n"
                   "version_minor 0\n"
                   "node_from 2\n"
                   "node_to 3\n"
                   "weight 15\n"
                   "min_latency 0\n"
                   "max_latency 0\n"
                   "min_bandwidth 50000\n"
                   "max_bandwidth 50000\n"
                   "recommended_transfer_size 0\n"
                   "recommended_sdma_engine_id_mask 0\n"
                   "flags 1\n");

        r = sim_kfd_io_link(2, 2, 0, 20, 312, 64000, buf, sizeof(buf));
        assert_true(r > 0);
        assert_memory_equal(buf, "type 2\n", 7);
        assert_int_equal(sim_kfd_io_link(2, 2, 0, 20, 312, 64000, buf, 50), -ENOSPC);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_cpu_node),
                cmocka_unit_test(test_gpu_node_spx),
                cmocka_unit_test(test_gpu_node_cpx_mi355x),
                cmocka_unit_test(test_properties_enospc),
                cmocka_unit_test(test_gpu_id),
                cmocka_unit_test(test_gpu_id_never_zero),
                cmocka_unit_test(test_mem_bank),
                cmocka_unit_test(test_io_link),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
