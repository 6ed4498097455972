/* SPDX-License-Identifier: MIT */
/*
 * Cross-check of the simulator's gpu_metrics emitter (sim/metrics.c) with the library's public
 * parser, amdsmi_gpu_metrics_parse(). The two were written independently from the spec, so a
 * table that one writes and the other reads back with every value in its place means both
 * agree on every offset, width and unit.
 *
 * For each revision the expected struct amdsmi_gpu_metrics starts all-NA; every field that the
 * revision carries (per spec §5.4) gets the emitted value in the library's unit (§5.3 and the
 * public header). The parsed result must then equal it member by member, so a field that the
 * parser fills but the revision lacks is caught as well.
 *
 * Revision 1.9 (sim/metrics-v19.c, attribute-encoded) in each of its layouts goes through
 * amdsmi_gpu_metrics_parse_ext() the same way: the base structure as for the fixed tables
 * (without num_partition and xcp_stats), the whole GPU's per-XCC arrays, media engines and the
 * T3 temperatures in the extension, and the counter widths; xcp_metrics v1.1 through
 * amdsmi_partition_metrics_parse().
 */

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include <amdsmi/amdsmi.h>

#include "metrics.h"

#define REV_MIN 3
#define REV_MAX 8

#define REVS(lo, hi) ((((1u << ((hi) + 1)) - 1) >> (lo)) << (lo))
#define ALL REVS(3, 9)

/* Unit conversions, spec unit -> library unit. */
enum conv {
        X1,
        X10,       /* firmware_timestamp: 10 ns -> ns */
        X100,      /* pcie_link_speed: 0.1 GT/s -> MT/s */
        X1000,     /* degrees C -> millidegrees C */
        X1E6,      /* W -> uW, MHz -> Hz */
        X1E9,      /* GB/s -> bytes/s */
        ENERGY_UJ, /* 2^-16 J -> uJ */
};

/* @n consecutive members of struct sim_metrics that land in struct amdsmi_gpu_metrics. */
struct mapping {
        const char *name;
        size_t sim, lib, n;
        enum conv conv;
        unsigned revs;
};

#define MAP(s, l, conv, revs) { #s, offsetof(struct sim_metrics, s), \
                offsetof(struct amdsmi_gpu_metrics, l), 1, conv, revs }
#define MAPN(s, l, n, conv, revs) { #s, offsetof(struct sim_metrics, s), \
                offsetof(struct amdsmi_gpu_metrics, l), n, conv, revs }

static const struct mapping top[] = {
        MAP(temperature_edge, temp_edge_mc, X1000, REVS(3, 3)),
        MAP(temperature_hotspot, temp_hotspot_mc, X1000, ALL),
        MAP(temperature_mem, temp_mem_mc, X1000, ALL),
        MAP(temperature_vrgfx, temp_vrgfx_mc, X1000, REVS(3, 3)),
        MAP(temperature_vrsoc, temp_vrsoc_mc, X1000, ALL),
        MAP(temperature_vrmem, temp_vrmem_mc, X1000, REVS(3, 3)),
        MAPN(temperature_hbm, temp_hbm_mc, 4, X1000, REVS(3, 3)),

        MAP(average_socket_power, socket_power_uw, X1E6, REVS(3, 3)),
        MAP(curr_socket_power, socket_power_uw, X1E6, REVS(4, 9)),
        MAP(energy_accumulator, energy_accumulator, X1, ALL),
        MAP(energy_accumulator, energy_uj, ENERGY_UJ, ALL),

        MAP(average_gfx_activity, gfx_activity_pct, X1, ALL),
        MAP(average_umc_activity, umc_activity_pct, X1, ALL),
        MAP(average_mm_activity, mm_activity_pct, X1, REVS(3, 3)),
        MAPN(vcn_activity, vcn_activity_pct, 4, X1, REVS(4, 5)),
        MAPN(jpeg_activity, jpeg_activity_pct, 32, X1, REVS(5, 5)),
        MAP(gfx_activity_acc, gfx_activity_acc, X1, ALL),
        MAP(mem_activity_acc, mem_activity_acc, X1, ALL),
        MAP(mem_max_bandwidth, mem_max_bandwidth_bps, X1E9, REVS(7, 9)),

        MAP(system_clock_counter, system_clock_counter_ns, X1, ALL),
        MAP(firmware_timestamp, firmware_timestamp_ns, X10, ALL),

        MAP(throttle_status, throttle_status, X1, REVS(3, 5)),
        MAP(indep_throttle_status, indep_throttle_status, X1, REVS(3, 3)),
        MAP(gfxclk_lock_status, gfxclk_lock_status, X1, REVS(4, 9)),
        MAP(accumulation_counter, accumulation_counter, X1, REVS(6, 9)),
        MAP(prochot_residency_acc, prochot_residency_acc, X1, REVS(6, 9)),
        MAP(ppt_residency_acc, ppt_residency_acc, X1, REVS(6, 9)),
        MAP(socket_thm_residency_acc, socket_thm_residency_acc, X1, REVS(6, 9)),
        MAP(vr_thm_residency_acc, vr_thm_residency_acc, X1, REVS(6, 9)),
        MAP(hbm_thm_residency_acc, hbm_thm_residency_acc, X1, REVS(6, 9)),

        /* v1.3 has the first instance of each clock only */
        MAP(current_gfxclk[0], gfxclk_hz[0], X1E6, ALL),
        MAPN(current_gfxclk[1], gfxclk_hz[1], 7, X1E6, REVS(4, 9)),
        MAP(current_socclk[0], socclk_hz[0], X1E6, ALL),
        MAPN(current_socclk[1], socclk_hz[1], 3, X1E6, REVS(4, 9)),
        MAP(current_vclk0[0], vclk0_hz[0], X1E6, ALL),
        MAPN(current_vclk0[1], vclk0_hz[1], 3, X1E6, REVS(4, 9)),
        MAP(current_dclk0[0], dclk0_hz[0], X1E6, ALL),
        MAPN(current_dclk0[1], dclk0_hz[1], 3, X1E6, REVS(4, 9)),
        MAP(current_uclk, uclk_hz, X1E6, ALL),
        MAP(average_gfxclk_frequency, avg_gfxclk_hz, X1E6, REVS(3, 3)),
        MAP(average_socclk_frequency, avg_socclk_hz, X1E6, REVS(3, 3)),
        MAP(average_uclk_frequency, avg_uclk_hz, X1E6, REVS(3, 3)),
        MAP(average_vclk0_frequency, avg_vclk0_hz, X1E6, REVS(3, 3)),
        MAP(average_dclk0_frequency, avg_dclk0_hz, X1E6, REVS(3, 3)),
        MAP(average_vclk1_frequency, avg_vclk1_hz, X1E6, REVS(3, 3)),
        MAP(average_dclk1_frequency, avg_dclk1_hz, X1E6, REVS(3, 3)),
        MAP(current_vclk1, vclk1_hz, X1E6, REVS(3, 3)),
        MAP(current_dclk1, dclk1_hz, X1E6, REVS(3, 3)),

        MAP(current_fan_speed, fan_speed_rpm, X1, REVS(3, 3)),
        MAP(voltage_soc, voltage_soc_mv, X1, REVS(3, 3)),
        MAP(voltage_gfx, voltage_gfx_mv, X1, REVS(3, 3)),
        MAP(voltage_mem, voltage_mem_mv, X1, REVS(3, 3)),

        MAP(pcie_link_width, pcie_link_width, X1, ALL),
        MAP(pcie_link_speed, pcie_link_speed_mts, X100, ALL),
        MAP(pcie_bandwidth_acc, pcie_bandwidth_acc, X1, REVS(4, 9)),
        MAP(pcie_bandwidth_inst, pcie_bandwidth_inst, X1, REVS(4, 9)),
        MAP(pcie_l0_to_recov_count_acc, pcie_l0_to_recov_count_acc, X1, REVS(4, 9)),
        MAP(pcie_replay_count_acc, pcie_replay_count_acc, X1, REVS(4, 9)),
        MAP(pcie_replay_rover_count_acc, pcie_replay_rover_count_acc, X1, REVS(4, 9)),
        MAP(pcie_nak_sent_count_acc, pcie_nak_sent_count_acc, X1, REVS(5, 9)),
        MAP(pcie_nak_rcvd_count_acc, pcie_nak_rcvd_count_acc, X1, REVS(5, 9)),
        MAP(pcie_lc_perf_other_end_recovery, pcie_lc_perf_other_end_recovery, X1, REVS(6, 9)),

        MAP(xgmi_link_width, xgmi_link_width, X1, REVS(4, 9)),
        MAP(xgmi_link_speed, xgmi_link_speed_gbps, X1, REVS(4, 9)),
        MAPN(xgmi_read_data_acc, xgmi_read_data_kb, 8, X1, REVS(4, 9)),
        MAPN(xgmi_write_data_acc, xgmi_write_data_kb, 8, X1, REVS(4, 9)),
        MAPN(xgmi_link_status, xgmi_link_status, 8, X1, REVS(7, 9)),

        MAP(num_partition, num_partition, X1, REVS(6, 8)), /* not in v1.9 */
};

#define XMAPN(s, l, n, revs) { #s, offsetof(struct sim_xcp_stats, s), \
                offsetof(struct amdsmi_xcp_metrics, l), n, X1, revs }

/* One xcp_stats entry; applied to each of the 8. */
static const struct mapping xcp[] = {
        XMAPN(gfx_busy_inst, gfx_busy_inst_pct, 8, REVS(6, 8)),
        XMAPN(jpeg_busy, jpeg_busy_pct, 32, REVS(6, 8)),
        XMAPN(jpeg_busy[32], jpeg_busy_pct[32], 8, REVS(8, 8)),
        XMAPN(vcn_busy, vcn_busy_pct, 4, REVS(6, 8)),
        XMAPN(gfx_busy_acc, gfx_busy_acc, 8, REVS(6, 8)),
        XMAPN(gfx_below_host_limit_acc, gfx_below_host_limit_acc, 8, REVS(7, 7)),
        XMAPN(gfx_below_host_limit_ppt_acc, gfx_below_host_limit_ppt_acc, 8, REVS(8, 8)),
        XMAPN(gfx_below_host_limit_thm_acc, gfx_below_host_limit_thm_acc, 8, REVS(8, 8)),
        XMAPN(gfx_low_utilization_acc, gfx_low_utilization_acc, 8, REVS(8, 8)),
        XMAPN(gfx_below_host_limit_total_acc, gfx_below_host_limit_total_acc, 8, REVS(8, 8)),
};

/* Everything of struct amdsmi_gpu_metrics after the header is a uint64_t. */
#define LIB_FIRST offsetof(struct amdsmi_gpu_metrics, temp_edge_mc)
_Static_assert((sizeof(struct amdsmi_gpu_metrics) - LIB_FIRST) % sizeof(uint64_t) == 0,
               "struct amdsmi_gpu_metrics holds uint64_t after its header");
_Static_assert(sizeof(struct sim_metrics) % sizeof(uint64_t) == 0,
               "struct sim_metrics holds uint64_t only");

static uint64_t convert(uint64_t v, enum conv conv) {
        static const uint64_t factor[] = {
                [X1] = 1,
                [X10] = 10,
                [X100] = 100,
                [X1000] = 1000,
                [X1E6] = UINT64_C(1000000),
                [X1E9] = UINT64_C(1000000000),
        };

        if (v == SIM_METRICS_NA)
                return AMDSMI_NA;
        if (conv == ENERGY_UJ) {
                /* the test's energies are whole joules (multiples of 65536 units) */
                assert_int_equal(v % 65536, 0);
                return v / 65536 * 1000000;
        }
        assert_true(v <= UINT64_MAX / factor[conv]);
        return v * factor[conv];
}

static uint64_t get(const void *base, size_t off) {
        uint64_t v;

        memcpy(&v, (const uint8_t *) base + off, sizeof(v));
        return v;
}

static void set(void *base, size_t off, uint64_t v) {
        memcpy((uint8_t *) base + off, &v, sizeof(v));
}

/* Applies those of @maps that revision @rev carries from @sim to @lib. */
static void apply(const struct mapping *maps, size_t n_maps, unsigned rev, const void *sim,
                  void *lib) {
        for (const struct mapping *p = maps; p < maps + n_maps; p++) {
                if (!(p->revs & (1u << rev)))
                        continue;
                for (size_t k = 0; k < p->n; k++) {
                        set(lib, p->lib + 8 * k, convert(get(sim, p->sim + 8 * k), p->conv));
                }
        }
}

static void expected(const struct sim_metrics *m, unsigned rev, struct amdsmi_gpu_metrics *e) {
        memset(e, 0xff, sizeof(*e));
        e->structure_size = (uint16_t) sim_metrics_size(rev);
        e->format_revision = 1;
        e->content_revision = (uint8_t) rev;

        apply(top, sizeof(top) / sizeof(top[0]), rev, m, e);
        for (size_t i = 0; i < AMDSMI_METRICS_MAX_XCP; i++)
                apply(xcp, sizeof(xcp) / sizeof(xcp[0]), rev, &m->xcp_stats[i], &e->xcp[i]);
}

/* The name of the mapping that targets library offset @off, for failure messages. */
static const char *name_of(size_t off) {
        size_t xcp0 = offsetof(struct amdsmi_gpu_metrics, xcp[0]);
        size_t xsz = sizeof(struct amdsmi_xcp_metrics);

        for (const struct mapping *p = top; p < top + sizeof(top) / sizeof(top[0]); p++)
                if (off >= p->lib && off < p->lib + 8 * p->n)
                        return p->name;
        if (off >= xcp0 && off < xcp0 + AMDSMI_METRICS_MAX_XCP * xsz)
                for (const struct mapping *p = xcp; p < xcp + sizeof(xcp) / sizeof(xcp[0]); p++)
                        if ((off - xcp0) % xsz >= p->lib && (off - xcp0) % xsz < p->lib + 8 * p->n)
                                return p->name;
        return "(a field no revision maps)";
}

static void check_rev(const struct sim_metrics *m, unsigned rev) {
        static uint8_t table[SIM_METRICS_MAX_SIZE];
        struct amdsmi_gpu_metrics want, got;
        int n;

        n = sim_metrics_emit(m, rev, table, sizeof(table));
        assert_int_equal(n, sim_metrics_size(rev));

        memset(&got, 0, sizeof(got));
        assert_int_equal(amdsmi_gpu_metrics_parse(table, (size_t) n, &got), 0);

        expected(m, rev, &want);
        assert_int_equal(got.structure_size, want.structure_size);
        assert_int_equal(got.format_revision, 1);
        assert_int_equal(got.content_revision, rev);

        for (size_t off = LIB_FIRST; off < sizeof(got); off += 8) {
                uint64_t w = get(&want, off), g = get(&got, off);

                if (w != g)
                        fail_msg("v1.%u, %s (library offset %zu): expected %#llx, parsed %#llx",
                                 rev, name_of(off), off, (unsigned long long) w,
                                 (unsigned long long) g);
        }
}

/*
 * Every member a different value that fits its field in every revision (16 bits), some wide
 * fields values that need all their bytes, and energy a whole number of joules.
 */
static void fill_distinct(struct sim_metrics *m) {
        uint64_t *p = (uint64_t *) m;

        for (size_t i = 0; i < sizeof(*m) / sizeof(uint64_t); i++)
                p[i] = 0x100 + i;

        m->energy_accumulator = UINT64_C(0x0000123456780000);
        m->system_clock_counter = UINT64_C(0x0102030405060708);
        m->firmware_timestamp = UINT64_C(0x0011223344556677);
        m->mem_max_bandwidth = 5300;
        m->pcie_replay_count_acc = UINT64_C(0x0123456789abcdef);
        m->xgmi_read_data_acc[7] = UINT64_C(0xfedcba9876543210);
        m->throttle_status = 0xa1b2c3d4;
        m->indep_throttle_status = UINT64_C(0xe1e2e3e4e5e6e7e8);
        m->accumulation_counter = 0xc1c2c3c4;
        m->gfx_activity_acc = 0x89abcdef;
        m->pcie_lc_perf_other_end_recovery = 0x41424344;
        m->num_partition = 8;
        for (size_t i = 0; i < 8; i++) {
                m->xcp_stats[i].gfx_busy_inst[0] = 0x51525300 + i;
                m->xcp_stats[i].gfx_busy_acc[7] = UINT64_C(0x6162636465666700) + i;
                m->xcp_stats[i].gfx_below_host_limit_total_acc[7] =
                        UINT64_C(0x7172737475767700) + i;
        }
        m->xgmi_link_status[0] = 0;
        m->xgmi_link_status[1] = 1;
        m->xgmi_link_status[2] = 2;
}

static void test_distinct(void **state) {
        struct sim_metrics m;

        fill_distinct(&m);
        for (unsigned rev = REV_MIN; rev <= REV_MAX; rev++)
                check_rev(&m, rev);
}

static void test_all_na(void **state) {
        struct sim_metrics m;

        sim_metrics_init(&m);
        for (unsigned rev = REV_MIN; rev <= REV_MAX; rev++)
                check_rev(&m, rev);
}

/* Two partitions, the other xcp_stats entries and fields of each width unavailable. */
static void test_some_na(void **state) {
        struct sim_metrics m;

        fill_distinct(&m);
        m.num_partition = 2;
        for (size_t i = 2; i < 8; i++) {
                uint64_t *p = (uint64_t *) &m.xcp_stats[i];

                for (size_t k = 0; k < sizeof(m.xcp_stats[i]) / sizeof(uint64_t); k++)
                        p[k] = SIM_METRICS_NA;
        }
        m.temperature_mem = SIM_METRICS_NA;        /* u16 */
        m.current_gfxclk[5] = SIM_METRICS_NA;      /* u16 array */
        m.gfxclk_lock_status = SIM_METRICS_NA;     /* u32 */
        m.throttle_status = SIM_METRICS_NA;        /* u32 */
        m.energy_accumulator = SIM_METRICS_NA;     /* u64, and its converted form */
        m.firmware_timestamp = SIM_METRICS_NA;     /* u64 with a conversion */
        m.xgmi_write_data_acc[3] = SIM_METRICS_NA; /* u64 array */
        m.xcp_stats[1].jpeg_busy[39] = SIM_METRICS_NA;
        for (unsigned rev = REV_MIN; rev <= REV_MAX; rev++)
                check_rev(&m, rev);
}

/* Each value the largest that its narrowest field can hold without being all-ones. */
static void test_max_values(void **state) {
        struct sim_metrics m;

        fill_distinct(&m);
        m.temperature_hotspot = 0xfffe;
        m.curr_socket_power = 0xfffe;
        m.average_socket_power = 0xfffe;
        m.pcie_link_speed = 0xfffe;
        m.current_uclk = 0xfffe;
        m.accumulation_counter = 0xfffffffe;
        m.throttle_status = 0xfffffffe;
        m.pcie_nak_rcvd_count_acc = 0xfffffffe;
        m.pcie_bandwidth_inst = UINT64_MAX - 1;
        m.xcp_stats[0].gfx_busy_acc[0] = UINT64_MAX - 1;
        m.energy_accumulator = UINT64_C(0x0000ffffffff0000);
        for (unsigned rev = REV_MIN; rev <= REV_MAX; rev++)
                check_rev(&m, rev);
}

/* ---------------------------------------------------------------------------------------- */
/* v1.9 and xcp_metrics v1.1 */

static const char *const layout_names[] = { "", "6.19", "7.0", "7.1" };

static void expect_array(const char *what, unsigned layout, const uint64_t *sim,
                         const uint64_t *lib, size_t n, enum conv conv) {
        for (size_t i = 0; i < n; i++) {
                uint64_t w = convert(sim[i], conv);

                if (w != lib[i])
                        fail_msg("v1.9 %s, %s[%zu]: expected %#llx, parsed %#llx",
                                 layout_names[layout], what, i, (unsigned long long) w,
                                 (unsigned long long) lib[i]);
        }
}

static void check_v19(const struct sim_metrics *m, enum sim_metrics_layout layout) {
        static uint8_t table[SIM_METRICS_MAX_SIZE];
        static struct amdsmi_gpu_metrics_ext got;
        struct amdsmi_gpu_metrics want;
        struct sim_metrics wm = *m;
        char reason[256];
        uint64_t na[40];
        int n;

        memset(na, 0xff, sizeof(na));
        n = sim_metrics_v19_emit(m, layout, table, sizeof(table));
        assert_int_equal(n, sim_metrics_v19_size(layout));

        memset(&got, 0, sizeof(got));
        got.size = sizeof(got);
        got.ids = AMDSMI_METRICS_IDS_T3;
        if (amdsmi_gpu_metrics_parse_ext(table, (size_t) n, &got, reason, sizeof(reason)) != 0)
                fail_msg("v1.9 %s: %s", layout_names[layout], reason);

        /* the u32 accumulation counter of 6.19 is the counter modulo 2^32 */
        if (layout == SIM_LAYOUT_6_19 && wm.accumulation_counter != SIM_METRICS_NA)
                wm.accumulation_counter &= UINT32_MAX;
        memset(&want, 0xff, sizeof(want));
        want.structure_size = (uint16_t) n;
        want.format_revision = 1;
        want.content_revision = 9;
        apply(top, sizeof(top) / sizeof(top[0]), 9, &wm, &want);
        assert_int_equal(got.base.structure_size, want.structure_size);
        assert_int_equal(got.base.format_revision, 1);
        assert_int_equal(got.base.content_revision, 9);
        for (size_t off = LIB_FIRST; off < sizeof(want); off += 8) {
                uint64_t w = get(&want, off), g = get(&got.base, off);

                if (w != g)
                        fail_msg("v1.9 %s, %s (library offset %zu): expected %#llx, parsed %#llx",
                                 layout_names[layout], name_of(off), off, (unsigned long long) w,
                                 (unsigned long long) g);
        }

        expect_array("gfx_busy_inst", layout, m->gpu_xcc.gfx_busy_inst, got.xcc_gfx_busy_inst_pct,
                     8, X1);
        expect_array("gfx_busy_acc", layout, m->gpu_xcc.gfx_busy_acc, got.xcc_gfx_busy_acc, 8, X1);
        expect_array("gfx_below_host_limit_ppt_acc", layout,
                     m->gpu_xcc.gfx_below_host_limit_ppt_acc, got.xcc_below_host_limit_ppt_acc, 8,
                     X1);
        expect_array("gfx_below_host_limit_thm_acc", layout,
                     m->gpu_xcc.gfx_below_host_limit_thm_acc, got.xcc_below_host_limit_thm_acc, 8,
                     X1);
        expect_array("gfx_low_utilization_acc", layout, m->gpu_xcc.gfx_low_utilization_acc,
                     got.xcc_low_utilization_acc, 8, X1);
        expect_array("gfx_below_host_limit_total_acc", layout,
                     m->gpu_xcc.gfx_below_host_limit_total_acc, got.xcc_below_host_limit_total_acc,
                     8, X1);
        expect_array("jpeg_busy", layout, m->gpu_xcc.jpeg_busy, got.jpeg_busy_pct, 40, X1);
        expect_array("vcn_busy", layout, m->gpu_xcc.vcn_busy, got.vcn_busy_pct, 4, X1);
        if (layout >= SIM_LAYOUT_7_1) {
                expect_array("temperature_hbm", layout, m->temperature_hbms, got.temp_hbm_stack_mc,
                             8, X1000);
                expect_array("temperature_aid", layout, m->temperature_aids, got.temp_aid_mc, 4,
                             X1000);
                expect_array("temperature_xcd", layout, m->temperature_xcds, got.temp_xcd_mc, 8,
                             X1000);
        } else {
                expect_array("temperature_hbm", layout, na, got.temp_hbm_stack_mc, 8, X1);
                expect_array("temperature_aid", layout, na, got.temp_aid_mc, 4, X1);
                expect_array("temperature_xcd", layout, na, got.temp_xcd_mc, 8, X1);
        }
        expect_array("temperature_mid", layout, na, got.temp_mid_mc, 4, X1);
        assert_int_equal(got.accumulation_counter_bits, layout == SIM_LAYOUT_6_19 ? 32 : 64);
        assert_int_equal(got.residency_bits, 32);
        assert_int_equal(got.attr_count, layout >= SIM_LAYOUT_7_1 ? 50 : 47);
        assert_int_equal(got.unknown_attrs, 0);
        assert_int_equal(got.clipped_attrs, 0);
}

static void check_xcp_v11(const struct sim_metrics *m, unsigned part,
                          enum sim_metrics_layout layout) {
        static uint8_t table[SIM_METRICS_MAX_SIZE];
        static struct amdsmi_partition_metrics got;
        const struct sim_xcp_stats *x = &m->xcp_stats[part];
        char reason[256];
        int n;

        n = sim_xcp_metrics_v11_emit(m, m->current_gfxclk, x, layout, table, sizeof(table));
        assert_int_equal(n, sim_xcp_metrics_v11_size(layout));
        memset(&got, 0, sizeof(got));
        got.size = sizeof(got);
        if (amdsmi_partition_metrics_parse(table, (size_t) n, &got, reason, sizeof(reason)) != 0)
                fail_msg("xcp v1.1 %s: %s", layout_names[layout], reason);
        assert_int_equal(got.structure_size, n);
        assert_int_equal(got.format_revision, 1);
        assert_int_equal(got.content_revision, 1);
        assert_int_equal(got.attr_count, layout == SIM_LAYOUT_6_19 ? 13 : 15);
        assert_int_equal(got.unknown_attrs, 0);
        expect_array("xcp gfxclk", layout, m->current_gfxclk, got.gfxclk_hz, 8, X1E6);
        expect_array("xcp socclk", layout, m->current_socclk, got.socclk_hz, 4, X1E6);
        expect_array("xcp vclk0", layout, m->current_vclk0, got.vclk0_hz, 4, X1E6);
        expect_array("xcp dclk0", layout, m->current_dclk0, got.dclk0_hz, 4, X1E6);
        expect_array("xcp uclk", layout, &m->current_uclk, &got.uclk_hz, 1, X1E6);
        expect_array("xcp gfx_busy_inst", layout, x->gfx_busy_inst, got.xcp.gfx_busy_inst_pct, 8,
                     X1);
        expect_array("xcp jpeg_busy", layout, x->jpeg_busy, got.xcp.jpeg_busy_pct, 40, X1);
        expect_array("xcp vcn_busy", layout, x->vcn_busy, got.xcp.vcn_busy_pct, 4, X1);
        expect_array("xcp gfx_busy_acc", layout, x->gfx_busy_acc, got.xcp.gfx_busy_acc, 8, X1);
        expect_array("xcp below_ppt", layout, x->gfx_below_host_limit_ppt_acc,
                     got.xcp.gfx_below_host_limit_ppt_acc, 8, X1);
        expect_array("xcp below_thm", layout, x->gfx_below_host_limit_thm_acc,
                     got.xcp.gfx_below_host_limit_thm_acc, 8, X1);
        expect_array("xcp low_util", layout, x->gfx_low_utilization_acc,
                     got.xcp.gfx_low_utilization_acc, 8, X1);
        expect_array("xcp below_total", layout, x->gfx_below_host_limit_total_acc,
                     got.xcp.gfx_below_host_limit_total_acc, 8, X1);
        if (layout == SIM_LAYOUT_6_19) {
                assert_true(got.accumulation_counter == AMDSMI_NA);
                assert_true(got.firmware_timestamp_ns == AMDSMI_NA);
        } else {
                expect_array("xcp accumulation_counter", layout, &m->accumulation_counter,
                             &got.accumulation_counter, 1, X1);
                expect_array("xcp firmware_timestamp", layout, &m->firmware_timestamp,
                             &got.firmware_timestamp_ns, 1, X10);
        }
}

static void check_v19_all(const struct sim_metrics *m) {
        for (unsigned l = SIM_LAYOUT_6_19; l < _SIM_LAYOUT_MAX; l++) {
                check_v19(m, (enum sim_metrics_layout) l);
                for (unsigned part = 0; part < 8; part++)
                        check_xcp_v11(m, part, (enum sim_metrics_layout) l);
        }
}

static void test_v19_distinct(void **state) {
        struct sim_metrics m;

        fill_distinct(&m);
        check_v19_all(&m);
        /* a counter past 2^32: 6.19 carries it modulo 2^32, 7.0 and xcp v1.1 whole */
        m.accumulation_counter = UINT64_C(0x1c1c2c3c4);
        check_v19_all(&m);
}

static void test_v19_all_na(void **state) {
        struct sim_metrics m;

        sim_metrics_init(&m);
        check_v19_all(&m);
}

static void test_v19_max_values(void **state) {
        struct sim_metrics m;

        fill_distinct(&m);
        m.temperature_hotspot = 0xfffe;
        m.curr_socket_power = 0xfffe;
        m.ppt_residency_acc = 0xfffffffe;
        m.accumulation_counter = UINT64_MAX - 1;
        m.gpu_xcc.gfx_busy_acc[7] = UINT64_MAX - 1;
        m.temperature_xcds[7] = 0xfffe;
        m.gpu_xcc.jpeg_busy[39] = SIM_METRICS_NA;
        check_v19_all(&m);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_distinct),       cmocka_unit_test(test_all_na),
                cmocka_unit_test(test_some_na),        cmocka_unit_test(test_max_values),
                cmocka_unit_test(test_v19_distinct),   cmocka_unit_test(test_v19_all_na),
                cmocka_unit_test(test_v19_max_values),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
