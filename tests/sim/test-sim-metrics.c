/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the simulator's gpu_metrics emitter (sim/metrics.c), against the spec alone:
 * every check reads bytes at the literal offsets and widths of amdgpu-sysfs.md §5.4, in
 * little-endian order assembled byte by byte here. Nothing of libamdsmi is linked.
 */

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "metrics.h"

#define BUF_SIZE (SIM_METRICS_MAX_SIZE + 64)
#define GUARD 0x5a
#define REV_MIN 3
#define REV_MAX 8

static const size_t table_size[REV_MAX + 1] = {
        [3] = 120, [4] = 288, [5] = 360, [6] = 1664, [7] = 2208, [8] = 3872,
};

/* Bytes the driver leaves all-ones in every table: explicit padding, holes and tail. */
struct range {
        size_t start, end;
};

static const struct range padding[REV_MAX + 1][5] = {
        [3] = { { 78, 80 }, { 110, 112 } },
        [4] = { { 282, 288 } },
        [5] = { { 354, 360 } },
        [6] = { { 76, 80 }, { 308, 312 }, { 1660, 1664 } },
        [7] = { { 84, 88 }, { 280, 288 }, { 340, 344 }, { 2204, 2208 } },
        [8] = { { 84, 88 }, { 280, 288 }, { 340, 344 }, { 3868, 3872 } },
};

static uint8_t buf[BUF_SIZE];

static uint64_t rd(size_t off, size_t width) {
        uint64_t v = 0;

        for (size_t i = 0; i < width; i++)
                v |= (uint64_t) buf[off + i] << (8 * i);
        return v;
}

#define CHECK(off, width, value) assert_int_equal(rd((off), (width)), (value))

static bool is_padding(unsigned rev, size_t off) {
        for (const struct range *r = padding[rev]; r < padding[rev] + 5 && r->end; r++)
                if (off >= r->start && off < r->end)
                        return true;
        return false;
}

/* A value for the @i-th member that fits 16 bits and has no 0xFF byte: 0x0101, 0x0102, ... */
static uint64_t distinct(size_t i) {
        return ((i / 200 + 1) << 8) | (i % 200 + 1);
}

/*
 * Every member a different ordinary value (struct sim_metrics is made of uint64_t only), with
 * some wide fields given values that need all their bytes. No byte of any value is 0xFF.
 */
static void fill_distinct(struct sim_metrics *m) {
        uint64_t *p = (uint64_t *) m;

        for (size_t i = 0; i < sizeof(*m) / sizeof(uint64_t); i++)
                p[i] = distinct(i);

        m->energy_accumulator = UINT64_C(0x1122334455667788);
        m->system_clock_counter = UINT64_C(0x0102030405060708);
        m->firmware_timestamp = UINT64_C(0x0011223344556677);
        m->mem_max_bandwidth = UINT64_C(0x2122232425262728);
        m->pcie_replay_count_acc = UINT64_C(0x0123456789abcdef);
        m->xgmi_read_data_acc[7] = UINT64_C(0xfedcba9876543210);
        m->xcp_stats[7].gfx_below_host_limit_total_acc[7] = UINT64_C(0x3132333435363738);
        m->throttle_status = 0xa1b2c3d4;
        m->indep_throttle_status = UINT64_C(0xe1e2e3e4e5e6e7e8);
        m->accumulation_counter = 0xc1c2c3c4;
        m->gfx_activity_acc = 0x89abcdef;
        m->pcie_lc_perf_other_end_recovery = 0x41424344;
        m->xcp_stats[0].gfx_busy_inst[0] = 0x51525354;
}

static int emit(const struct sim_metrics *m, unsigned rev) {
        memset(buf, GUARD, sizeof(buf));
        return sim_metrics_emit(m, rev, buf, sizeof(buf));
}

static void test_sizes(void **state) {
        struct sim_metrics m;

        sim_metrics_init(&m);
        for (unsigned rev = REV_MIN; rev <= REV_MAX; rev++) {
                assert_int_equal(sim_metrics_size(rev), table_size[rev]);
                assert_int_equal(emit(&m, rev), table_size[rev]);
                assert_true(table_size[rev] <= SIM_METRICS_MAX_SIZE);
        }
        assert_int_equal(sim_metrics_size(120), 0);
        assert_int_equal(sim_metrics_size(0), 0);
        assert_int_equal(sim_metrics_size(2), 0);
        assert_int_equal(sim_metrics_size(9), 0);
}

static void test_header(void **state) {
        struct sim_metrics m;

        fill_distinct(&m);
        for (unsigned rev = REV_MIN; rev <= REV_MAX; rev++) {
                size_t n = table_size[rev];

                assert_int_equal(emit(&m, rev), n);
                CHECK(0, 2, n); /* structure_size */
                assert_int_equal(buf[0], n & 0xff);
                assert_int_equal(buf[1], n >> 8);
                assert_int_equal(buf[2], 1);   /* format_revision */
                assert_int_equal(buf[3], rev); /* content_revision */
                /* nothing past the table */
                for (size_t off = n; off < sizeof(buf); off++)
                        assert_int_equal(buf[off], GUARD);
        }
}

static void test_bad_revision(void **state) {
        static const unsigned bad[] = { 0, 1, 2, 9, 10, 255 };
        struct sim_metrics m;

        fill_distinct(&m);
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                assert_int_equal(emit(&m, bad[i]), -EINVAL);
                for (size_t off = 0; off < sizeof(buf); off++)
                        assert_int_equal(buf[off], GUARD);
        }
}

static void test_short_buffer(void **state) {
        struct sim_metrics m;

        fill_distinct(&m);
        for (unsigned rev = REV_MIN; rev <= REV_MAX; rev++) {
                size_t n = table_size[rev];

                memset(buf, GUARD, sizeof(buf));
                assert_int_equal(sim_metrics_emit(&m, rev, buf, n - 1), -ENOSPC);
                assert_int_equal(sim_metrics_emit(&m, rev, buf, 0), -ENOSPC);
                for (size_t off = 0; off < sizeof(buf); off++)
                        assert_int_equal(buf[off], GUARD);

                /* exactly the table's size is enough */
                assert_int_equal(sim_metrics_emit(&m, rev, buf, n), n);
                assert_int_equal(buf[n], GUARD);
        }
}

/* With every field set, the all-ones bytes are exactly the padding, whatever the buffer held. */
static void test_padding(void **state) {
        struct sim_metrics m;

        fill_distinct(&m);
        for (unsigned rev = REV_MIN; rev <= REV_MAX; rev++) {
                memset(buf, 0, sizeof(buf));
                assert_int_equal(sim_metrics_emit(&m, rev, buf, sizeof(buf)), table_size[rev]);
                for (size_t off = 4; off < table_size[rev]; off++) {
                        if (is_padding(rev, off) != (buf[off] == 0xff))
                                fail_msg("v1.%u byte %zu is 0x%02x", rev, off, buf[off]);
                }
                assert_int_equal(buf[table_size[rev]], 0);
        }
}

/* An all-NA table is the header followed by all-ones. */
static void test_all_na(void **state) {
        struct sim_metrics m;

        sim_metrics_init(&m);
        for (unsigned rev = REV_MIN; rev <= REV_MAX; rev++) {
                assert_int_equal(emit(&m, rev), table_size[rev]);
                CHECK(0, 2, table_size[rev]);
                assert_int_equal(buf[2], 1);
                assert_int_equal(buf[3], rev);
                for (size_t off = 4; off < table_size[rev]; off++)
                        assert_int_equal(buf[off], 0xff);
        }
}

/* NA is all-ones of the field's own width and does not spill into its neighbours. */
static void test_na_width(void **state) {
        struct sim_metrics m;

        fill_distinct(&m);
        m.temperature_mem = SIM_METRICS_NA;               /* u16 */
        m.gfxclk_lock_status = SIM_METRICS_NA;            /* u32 */
        m.energy_accumulator = SIM_METRICS_NA;            /* u64 */
        m.current_gfxclk[3] = SIM_METRICS_NA;             /* u16 in an array */
        m.xcp_stats[1].gfx_busy_inst[2] = SIM_METRICS_NA; /* u32 in xcp_stats */
        m.xcp_stats[1].gfx_busy_acc[0] = SIM_METRICS_NA;  /* u64 in xcp_stats */
        m.pcie_lc_perf_other_end_recovery = SIM_METRICS_NA;

        /* v1.4: temperature_hotspot @4, temperature_mem @6, temperature_vrsoc @8 */
        assert_int_equal(emit(&m, 4), 288);
        CHECK(4, 2, m.temperature_hotspot);
        CHECK(6, 2, 0xffff);
        CHECK(8, 2, m.temperature_vrsoc);
        CHECK(24, 8, UINT64_MAX);
        CHECK(32, 8, m.system_clock_counter);
        CHECK(40, 4, m.throttle_status);
        CHECK(44, 4, 0xffffffff);
        CHECK(48, 2, m.pcie_link_width);
        CHECK(240 + 2 * 2, 2, m.current_gfxclk[2]);
        CHECK(240 + 3 * 2, 2, 0xffff);
        CHECK(240 + 4 * 2, 2, m.current_gfxclk[4]);

        /* v1.6: accumulation_counter @32 ... hbm_thm_residency_acc @52, gfxclk_lock_status @56 */
        assert_int_equal(emit(&m, 6), 1664);
        CHECK(16, 8, UINT64_MAX);
        CHECK(52, 4, m.hbm_thm_residency_acc);
        CHECK(56, 4, 0xffffffff);
        CHECK(60, 2, m.pcie_link_width);
        /* xcp_stats[1] @312 + 168: gfx_busy_inst[2] @+8, gfx_busy_acc[0] @+104 */
        CHECK(480 + 4, 4, m.xcp_stats[1].gfx_busy_inst[1]);
        CHECK(480 + 8, 4, 0xffffffff);
        CHECK(480 + 12, 4, m.xcp_stats[1].gfx_busy_inst[3]);
        CHECK(480 + 100, 2, m.xcp_stats[1].vcn_busy[2]);
        CHECK(480 + 102, 2, m.xcp_stats[1].vcn_busy[3]);
        CHECK(480 + 104, 8, UINT64_MAX);
        CHECK(480 + 112, 8, m.xcp_stats[1].gfx_busy_acc[1]);
        CHECK(1656, 4, 0xffffffff);
}

static void test_v1_3(void **state) {
        struct sim_metrics m;

        fill_distinct(&m);
        assert_int_equal(emit(&m, 3), 120);

        CHECK(4, 2, m.temperature_edge);
        CHECK(6, 2, m.temperature_hotspot);
        CHECK(8, 2, m.temperature_mem);
        CHECK(10, 2, m.temperature_vrgfx);
        CHECK(12, 2, m.temperature_vrsoc);
        CHECK(14, 2, m.temperature_vrmem);
        CHECK(16, 2, m.average_gfx_activity);
        CHECK(18, 2, m.average_umc_activity);
        CHECK(20, 2, m.average_mm_activity);
        CHECK(22, 2, m.average_socket_power);
        CHECK(24, 8, m.energy_accumulator);
        assert_int_equal(buf[24], 0x88);
        assert_int_equal(buf[31], 0x11);
        CHECK(32, 8, m.system_clock_counter);
        CHECK(40, 2, m.average_gfxclk_frequency);
        CHECK(52, 2, m.average_dclk1_frequency);
        CHECK(54, 2, m.current_gfxclk[0]);
        CHECK(56, 2, m.current_socclk[0]);
        CHECK(58, 2, m.current_uclk);
        CHECK(60, 2, m.current_vclk0[0]);
        CHECK(62, 2, m.current_dclk0[0]);
        CHECK(64, 2, m.current_vclk1);
        CHECK(66, 2, m.current_dclk1);
        CHECK(68, 4, m.throttle_status);
        CHECK(72, 2, m.current_fan_speed);
        CHECK(74, 2, m.pcie_link_width);
        CHECK(76, 2, m.pcie_link_speed);
        CHECK(78, 2, 0xffff);
        CHECK(80, 4, m.gfx_activity_acc);
        CHECK(84, 4, m.mem_activity_acc);
        CHECK(88, 2, m.temperature_hbm[0]);
        CHECK(94, 2, m.temperature_hbm[3]);
        CHECK(96, 8, m.firmware_timestamp);
        CHECK(104, 2, m.voltage_soc);
        CHECK(106, 2, m.voltage_gfx);
        CHECK(108, 2, m.voltage_mem);
        CHECK(110, 2, 0xffff);
        CHECK(112, 8, m.indep_throttle_status);
}

static void test_v1_4(void **state) {
        struct sim_metrics m;

        fill_distinct(&m);
        assert_int_equal(emit(&m, 4), 288);

        CHECK(4, 2, m.temperature_hotspot);
        CHECK(10, 2, m.curr_socket_power);
        CHECK(12, 2, m.average_gfx_activity);
        CHECK(14, 2, m.average_umc_activity);
        CHECK(16, 2, m.vcn_activity[0]);
        CHECK(22, 2, m.vcn_activity[3]);
        CHECK(24, 8, m.energy_accumulator);
        CHECK(32, 8, m.system_clock_counter);
        CHECK(40, 4, m.throttle_status);
        CHECK(44, 4, m.gfxclk_lock_status);
        CHECK(48, 2, m.pcie_link_width);
        CHECK(50, 2, m.pcie_link_speed);
        CHECK(52, 2, m.xgmi_link_width);
        CHECK(54, 2, m.xgmi_link_speed);
        CHECK(56, 4, m.gfx_activity_acc);
        CHECK(60, 4, m.mem_activity_acc);
        CHECK(64, 8, m.pcie_bandwidth_acc);
        CHECK(72, 8, m.pcie_bandwidth_inst);
        CHECK(80, 8, m.pcie_l0_to_recov_count_acc);
        CHECK(88, 8, m.pcie_replay_count_acc);
        CHECK(96, 8, m.pcie_replay_rover_count_acc);
        CHECK(104, 8, m.xgmi_read_data_acc[0]);
        CHECK(160, 8, m.xgmi_read_data_acc[7]);
        CHECK(168, 8, m.xgmi_write_data_acc[0]);
        CHECK(224, 8, m.xgmi_write_data_acc[7]);
        CHECK(232, 8, m.firmware_timestamp);
        CHECK(240, 2, m.current_gfxclk[0]);
        CHECK(254, 2, m.current_gfxclk[7]);
        CHECK(256, 2, m.current_socclk[0]);
        CHECK(264, 2, m.current_vclk0[0]);
        CHECK(272, 2, m.current_dclk0[0]);
        CHECK(278, 2, m.current_dclk0[3]);
        CHECK(280, 2, m.current_uclk);
        CHECK(282, 2, 0xffff);
}

static void test_v1_5(void **state) {
        struct sim_metrics m;

        fill_distinct(&m);
        assert_int_equal(emit(&m, 5), 360);

        CHECK(16, 2, m.vcn_activity[0]);
        CHECK(24, 2, m.jpeg_activity[0]);
        CHECK(86, 2, m.jpeg_activity[31]);
        CHECK(88, 8, m.energy_accumulator);
        CHECK(96, 8, m.system_clock_counter);
        CHECK(104, 4, m.throttle_status);
        CHECK(108, 4, m.gfxclk_lock_status);
        CHECK(112, 2, m.pcie_link_width);
        CHECK(120, 4, m.gfx_activity_acc);
        CHECK(128, 8, m.pcie_bandwidth_acc);
        CHECK(160, 8, m.pcie_replay_rover_count_acc);
        CHECK(168, 4, m.pcie_nak_sent_count_acc);
        CHECK(172, 4, m.pcie_nak_rcvd_count_acc);
        CHECK(176, 8, m.xgmi_read_data_acc[0]);
        CHECK(232, 8, m.xgmi_read_data_acc[7]);
        CHECK(240, 8, m.xgmi_write_data_acc[0]);
        CHECK(304, 8, m.firmware_timestamp);
        CHECK(312, 2, m.current_gfxclk[0]);
        CHECK(352, 2, m.current_uclk);
        CHECK(354, 2, 0xffff);
}

static void test_v1_6(void **state) {
        struct sim_metrics m;

        fill_distinct(&m);
        assert_int_equal(emit(&m, 6), 1664);

        CHECK(4, 2, m.temperature_hotspot);
        CHECK(14, 2, m.average_umc_activity);
        CHECK(16, 8, m.energy_accumulator);
        CHECK(24, 8, m.system_clock_counter);
        CHECK(32, 4, m.accumulation_counter);
        CHECK(36, 4, m.prochot_residency_acc);
        CHECK(40, 4, m.ppt_residency_acc);
        CHECK(44, 4, m.socket_thm_residency_acc);
        CHECK(48, 4, m.vr_thm_residency_acc);
        CHECK(52, 4, m.hbm_thm_residency_acc);
        CHECK(56, 4, m.gfxclk_lock_status);
        CHECK(60, 2, m.pcie_link_width);
        CHECK(66, 2, m.xgmi_link_speed);
        CHECK(68, 4, m.gfx_activity_acc);
        CHECK(72, 4, m.mem_activity_acc);
        CHECK(76, 4, 0xffffffff);
        CHECK(80, 8, m.pcie_bandwidth_acc);
        CHECK(112, 8, m.pcie_replay_rover_count_acc);
        CHECK(120, 4, m.pcie_nak_sent_count_acc);
        CHECK(124, 4, m.pcie_nak_rcvd_count_acc);
        CHECK(128, 8, m.xgmi_read_data_acc[0]);
        CHECK(248, 8, m.xgmi_write_data_acc[7]);
        CHECK(256, 8, m.firmware_timestamp);
        CHECK(264, 2, m.current_gfxclk[0]);
        CHECK(304, 2, m.current_uclk);
        CHECK(306, 2, m.num_partition);
        CHECK(308, 4, 0xffffffff);

        /* xcp_stats[8] @312, amdgpu_xcp_metrics of 168 B */
        for (size_t i = 0; i < 8; i++) {
                size_t x = 312 + 168 * i;

                CHECK(x, 4, m.xcp_stats[i].gfx_busy_inst[0]);
                CHECK(x + 28, 4, m.xcp_stats[i].gfx_busy_inst[7]);
                CHECK(x + 32, 2, m.xcp_stats[i].jpeg_busy[0]);
                CHECK(x + 94, 2, m.xcp_stats[i].jpeg_busy[31]);
                CHECK(x + 96, 2, m.xcp_stats[i].vcn_busy[0]);
                CHECK(x + 102, 2, m.xcp_stats[i].vcn_busy[3]);
                CHECK(x + 104, 8, m.xcp_stats[i].gfx_busy_acc[0]);
                CHECK(x + 160, 8, m.xcp_stats[i].gfx_busy_acc[7]);
        }
        CHECK(1656, 4, m.pcie_lc_perf_other_end_recovery);
        CHECK(1660, 4, 0xffffffff);
}

static void test_v1_7(void **state) {
        struct sim_metrics m;

        fill_distinct(&m);
        assert_int_equal(emit(&m, 7), 2208);

        CHECK(14, 2, m.average_umc_activity);
        CHECK(16, 8, m.mem_max_bandwidth);
        CHECK(24, 8, m.energy_accumulator);
        CHECK(32, 8, m.system_clock_counter);
        CHECK(40, 4, m.accumulation_counter);
        CHECK(60, 4, m.hbm_thm_residency_acc);
        CHECK(64, 4, m.gfxclk_lock_status);
        CHECK(68, 2, m.pcie_link_width);
        CHECK(74, 2, m.xgmi_link_speed);
        CHECK(76, 4, m.gfx_activity_acc);
        CHECK(80, 4, m.mem_activity_acc);
        CHECK(84, 4, 0xffffffff);
        CHECK(88, 8, m.pcie_bandwidth_acc);
        CHECK(128, 4, m.pcie_nak_sent_count_acc);
        CHECK(136, 8, m.xgmi_read_data_acc[0]);
        CHECK(256, 8, m.xgmi_write_data_acc[7]);
        CHECK(264, 2, m.xgmi_link_status[0]);
        CHECK(278, 2, m.xgmi_link_status[7]);
        CHECK(280, 8, UINT64_MAX);
        CHECK(288, 8, m.firmware_timestamp);
        CHECK(296, 2, m.current_gfxclk[0]);
        CHECK(336, 2, m.current_uclk);
        CHECK(338, 2, m.num_partition);
        CHECK(340, 4, 0xffffffff);

        /* xcp_stats[8] @344, amdgpu_xcp_metrics_v1_1 of 232 B */
        for (size_t i = 0; i < 8; i++) {
                size_t x = 344 + 232 * i;

                CHECK(x, 4, m.xcp_stats[i].gfx_busy_inst[0]);
                CHECK(x + 32, 2, m.xcp_stats[i].jpeg_busy[0]);
                CHECK(x + 94, 2, m.xcp_stats[i].jpeg_busy[31]);
                CHECK(x + 96, 2, m.xcp_stats[i].vcn_busy[0]);
                CHECK(x + 104, 8, m.xcp_stats[i].gfx_busy_acc[0]);
                CHECK(x + 168, 8, m.xcp_stats[i].gfx_below_host_limit_acc[0]);
                CHECK(x + 224, 8, m.xcp_stats[i].gfx_below_host_limit_acc[7]);
        }
        CHECK(2200, 4, m.pcie_lc_perf_other_end_recovery);
        CHECK(2204, 4, 0xffffffff);
}

static void test_v1_8(void **state) {
        struct sim_metrics m;

        fill_distinct(&m);
        assert_int_equal(emit(&m, 8), 3872);

        /* the part before xcp_stats is v1.7's */
        CHECK(16, 8, m.mem_max_bandwidth);
        CHECK(24, 8, m.energy_accumulator);
        CHECK(40, 4, m.accumulation_counter);
        CHECK(264, 2, m.xgmi_link_status[0]);
        CHECK(288, 8, m.firmware_timestamp);
        CHECK(296, 2, m.current_gfxclk[0]);
        CHECK(338, 2, m.num_partition);

        /* xcp_stats[8] @344, amdgpu_xcp_metrics_v1_2 of 440 B */
        for (size_t i = 0; i < 8; i++) {
                size_t x = 344 + 440 * i;

                CHECK(x, 4, m.xcp_stats[i].gfx_busy_inst[0]);
                CHECK(x + 28, 4, m.xcp_stats[i].gfx_busy_inst[7]);
                CHECK(x + 32, 2, m.xcp_stats[i].jpeg_busy[0]);
                CHECK(x + 94, 2, m.xcp_stats[i].jpeg_busy[31]);
                CHECK(x + 96, 2, m.xcp_stats[i].jpeg_busy[32]);
                CHECK(x + 110, 2, m.xcp_stats[i].jpeg_busy[39]);
                CHECK(x + 112, 2, m.xcp_stats[i].vcn_busy[0]);
                CHECK(x + 118, 2, m.xcp_stats[i].vcn_busy[3]);
                CHECK(x + 120, 8, m.xcp_stats[i].gfx_busy_acc[0]);
                CHECK(x + 176, 8, m.xcp_stats[i].gfx_busy_acc[7]);
                CHECK(x + 184, 8, m.xcp_stats[i].gfx_below_host_limit_ppt_acc[0]);
                CHECK(x + 248, 8, m.xcp_stats[i].gfx_below_host_limit_thm_acc[0]);
                CHECK(x + 312, 8, m.xcp_stats[i].gfx_low_utilization_acc[0]);
                CHECK(x + 376, 8, m.xcp_stats[i].gfx_below_host_limit_total_acc[0]);
                CHECK(x + 432, 8, m.xcp_stats[i].gfx_below_host_limit_total_acc[7]);
        }
        CHECK(3864, 4, m.pcie_lc_perf_other_end_recovery);
        CHECK(3868, 4, 0xffffffff);
}

/* A member that a revision lacks leaves no trace in that revision's table. */
static void test_absent_fields_ignored(void **state) {
        struct sim_metrics a, b;
        static uint8_t first[BUF_SIZE];

        for (unsigned rev = REV_MIN; rev <= REV_MAX; rev++) {
                fill_distinct(&a);
                b = a;
                if (rev != 3) {
                        b.temperature_edge = SIM_METRICS_NA;
                        b.average_mm_activity = SIM_METRICS_NA;
                        b.voltage_soc = SIM_METRICS_NA;
                        b.indep_throttle_status = SIM_METRICS_NA;
                        b.average_socket_power = SIM_METRICS_NA;
                        b.average_gfxclk_frequency = SIM_METRICS_NA;
                        b.current_vclk1 = SIM_METRICS_NA;
                        b.current_fan_speed = SIM_METRICS_NA;
                        b.temperature_hbm[0] = SIM_METRICS_NA;
                        b.temperature_vrgfx = SIM_METRICS_NA;
                } else {
                        /* v1.3 has the first clock instance only, and no accumulators */
                        b.current_gfxclk[7] = SIM_METRICS_NA;
                        b.current_socclk[3] = SIM_METRICS_NA;
                        b.curr_socket_power = SIM_METRICS_NA;
                        b.gfxclk_lock_status = SIM_METRICS_NA;
                        b.xgmi_link_width = SIM_METRICS_NA;
                        b.pcie_bandwidth_acc = SIM_METRICS_NA;
                        b.xgmi_read_data_acc[0] = SIM_METRICS_NA;
                }
                if (rev < 5)
                        b.pcie_nak_sent_count_acc = SIM_METRICS_NA;
                if (rev != 4 && rev != 5)
                        b.vcn_activity[0] = SIM_METRICS_NA;
                if (rev != 5)
                        b.jpeg_activity[0] = SIM_METRICS_NA;
                if (rev < 6) {
                        b.prochot_residency_acc = SIM_METRICS_NA;
                        b.pcie_lc_perf_other_end_recovery = SIM_METRICS_NA;
                        b.num_partition = SIM_METRICS_NA;
                        b.xcp_stats[0].gfx_busy_inst[0] = SIM_METRICS_NA;
                        b.accumulation_counter = SIM_METRICS_NA;
                }
                if (rev < 7) {
                        b.mem_max_bandwidth = SIM_METRICS_NA;
                        b.xgmi_link_status[0] = SIM_METRICS_NA;
                }
                if (rev != 7)
                        b.xcp_stats[0].gfx_below_host_limit_acc[0] = SIM_METRICS_NA;
                if (rev < 8) {
                        b.xcp_stats[0].jpeg_busy[32] = SIM_METRICS_NA;
                        b.xcp_stats[0].gfx_low_utilization_acc[0] = SIM_METRICS_NA;
                }
                if (rev > 5)
                        b.throttle_status = SIM_METRICS_NA;

                assert_int_equal(emit(&a, rev), table_size[rev]);
                memcpy(first, buf, sizeof(buf));
                assert_int_equal(emit(&b, rev), table_size[rev]);
                assert_memory_equal(first, buf, sizeof(buf));
        }
}

/* ---------------------------------------------------------------------------------------- */
/* v1.9 and xcp_metrics v1.1 (gpu-metrics-v1.9.md) */

static void test_v19_sizes(void **state) {
        static const size_t gpu[] = { 0, 1150, 1154, 1218 }, xcp[] = { 0, 594, 626, 626 };
        struct sim_metrics m;

        sim_metrics_init(&m);
        for (unsigned l = SIM_LAYOUT_6_19; l < _SIM_LAYOUT_MAX; l++) {
                assert_int_equal(sim_metrics_v19_size(l), gpu[l]);
                assert_int_equal(sim_xcp_metrics_v11_size(l), xcp[l]);
                memset(buf, GUARD, sizeof(buf));
                assert_int_equal(sim_metrics_v19_emit(&m, l, buf, sizeof(buf)), (int) gpu[l]);
                CHECK(0, 2, gpu[l]); /* structure_size: the blob's length */
                CHECK(2, 1, 1);
                CHECK(3, 1, 9);
                CHECK(4, 4, l == SIM_LAYOUT_7_1 ? 50 : 47);
                assert_int_equal(buf[gpu[l]], GUARD); /* nothing past it */
                memset(buf, GUARD, sizeof(buf));
                assert_int_equal(sim_xcp_metrics_v11_emit(&m, m.current_gfxclk, &m.gpu_xcc, l, buf,
                                                          sizeof(buf)),
                                 (int) xcp[l]);
                CHECK(0, 2, xcp[l]);
                CHECK(3, 1, 1);
                CHECK(4, 4, l == SIM_LAYOUT_6_19 ? 13 : 15);
                assert_int_equal(buf[xcp[l]], GUARD);
                /* one byte short */
                assert_int_equal(sim_metrics_v19_emit(&m, l, buf, gpu[l] - 1), -ENOSPC);
                assert_int_equal(sim_xcp_metrics_v11_emit(&m, m.current_gfxclk, &m.gpu_xcc, l, buf,
                                                          xcp[l] - 1),
                                 -ENOSPC);
        }
        assert_int_equal(sim_metrics_v19_emit(&m, SIM_LAYOUT_UNSET, buf, sizeof(buf)), -EINVAL);
        assert_int_equal(sim_metrics_v19_emit(&m, _SIM_LAYOUT_MAX, buf, sizeof(buf)), -EINVAL);
        assert_int_equal(sim_metrics_v19_size(_SIM_LAYOUT_MAX), 0);
}

/* The value offsets the spec computes for the 6.19 layout (§2.1), and the 7.0 shift. */
static void test_v19_offsets(void **state) {
        struct sim_metrics m;

        sim_metrics_init(&m);
        m.temperature_hotspot = 42;
        m.curr_socket_power = 750;
        m.accumulation_counter = UINT64_C(0x154536484); /* past 2^32 */
        m.ppt_residency_acc = 0x12345678;
        for (unsigned i = 0; i < 8; i++) {
                m.current_gfxclk[i] = 2100 - i;
                m.gpu_xcc.gfx_busy_inst[i] = 90 + i;
                m.gpu_xcc.gfx_below_host_limit_total_acc[i] = UINT64_C(0x0102030405060700) + i;
        }

        assert_int_equal(sim_metrics_v19_emit(&m, SIM_LAYOUT_6_19, buf, sizeof(buf)), 1150);
        CHECK(8, 8, 0x02200001); /* TEMPERATURE_HOTSPOT: TEMP_1, U16, id 0, 1 instance */
        CHECK(16, 2, 42);
        CHECK(46, 2, 750);
        CHECK(116, 8, 0x00402401); /* ACCUMULATION_COUNTER: NONE, U32, id 9, 1 */
        CHECK(124, 4, 0x54536484); /* modulo 2^32 */
        CHECK(148, 4, 0x12345678);
        for (unsigned i = 0; i < 8; i++) {
                CHECK(560 + 2 * i, 2, 2100 - i);
                CHECK(654 + 4 * i, 4, 90 + i);
                CHECK(1086 + 8 * i, 8, UINT64_C(0x0102030405060700) + i);
        }
        CHECK(1078, 8, 0x0060bc08); /* TOTAL_ACC: NONE, U64, id 47, 8 instances */

        /* 7.0: the counter is u64, everything after it 4 bytes later */
        assert_int_equal(sim_metrics_v19_emit(&m, SIM_LAYOUT_7_0, buf, sizeof(buf)), 1154);
        CHECK(116, 8, 0x00602401);
        CHECK(124, 8, UINT64_C(0x154536484));
        CHECK(152, 4, 0x12345678);
        CHECK(564, 2, 2100);
        CHECK(1090, 8, UINT64_C(0x0102030405060700));
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_v19_sizes),
                cmocka_unit_test(test_v19_offsets),
                cmocka_unit_test(test_sizes),
                cmocka_unit_test(test_header),
                cmocka_unit_test(test_bad_revision),
                cmocka_unit_test(test_short_buffer),
                cmocka_unit_test(test_padding),
                cmocka_unit_test(test_all_na),
                cmocka_unit_test(test_na_width),
                cmocka_unit_test(test_v1_3),
                cmocka_unit_test(test_v1_4),
                cmocka_unit_test(test_v1_5),
                cmocka_unit_test(test_v1_6),
                cmocka_unit_test(test_v1_7),
                cmocka_unit_test(test_v1_8),
                cmocka_unit_test(test_absent_fields_ignored),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
