/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of amdsmi_gpu_metrics_parse().
 *
 * The tables are built here from the field order and C types of the spec (natural alignment,
 * no packing), independently of the parser's offset tables; the offsets the spec states
 * explicitly (@24, @232, ...) and the total sizes are checked while building. A second set of
 * tests writes values at the spec's literal offsets and checks the converted values by name.
 */

#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include <amdsmi/amdsmi.h>

#define BLOB_MAX 4096

static void put_u16(uint8_t *buf, size_t off, uint16_t v) {
        buf[off] = v & 0xff;
        buf[off + 1] = v >> 8;
}

static void put_u32(uint8_t *buf, size_t off, uint32_t v) {
        for (unsigned i = 0; i < 4; i++)
                buf[off + i] = (v >> (8 * i)) & 0xff;
}

static void put_u64(uint8_t *buf, size_t off, uint64_t v) {
        for (unsigned i = 0; i < 8; i++)
                buf[off + i] = (v >> (8 * i)) & 0xff;
}

static void put_header(uint8_t *buf, uint16_t size, uint8_t frev, uint8_t crev) {
        put_u16(buf, 0, size);
        buf[2] = frev;
        buf[3] = crev;
}

/* ---- builder that lays out fields in spec order ---- */

enum fill {
        FILL_DISTINCT,          /* a different ordinary value in every field */
        FILL_ALL_ONES,          /* every field "not provided" */
        FILL_ALTERNATE,         /* every other field all-ones, the rest distinct */
        FILL_MAX_MINUS_ONE,     /* the largest value that is not all-ones */
};

struct blob {
        uint8_t data[BLOB_MAX];
        size_t pos;
        unsigned seq;
        enum fill fill;
};

static uint64_t all_ones(unsigned width) {
        return width == 8 ? UINT64_MAX : (UINT64_C(1) << (8 * width)) - 1;
}

static uint64_t next_value(struct blob *b, unsigned width) {
        unsigned s = ++b->seq;

        switch (b->fill) {
        case FILL_ALL_ONES:
                return all_ones(width);
        case FILL_MAX_MINUS_ONE:
                return all_ones(width) - 1;
        case FILL_ALTERNATE:
                if (s % 2)
                        return all_ones(width);
                break;
        case FILL_DISTINCT:
                break;
        }

        /* Disjoint ranges per width, so a field read at the wrong width or offset shows. */
        switch (width) {
        case 2:
                return 100 + s;
        case 4:
                return 0x10000 + 3 * s;
        default:
                return ((uint64_t) s << 33) | s;
        }
}

static void align(struct blob *b, size_t a) {
        b->pos = (b->pos + a - 1) / a * a;
}

/* Appends the next field of @width bytes; returns its raw value, AMDSMI_NA for all-ones. */
static uint64_t put(struct blob *b, unsigned width) {
        uint64_t v = next_value(b, width);

        align(b, width);
        assert_true(b->pos + width <= BLOB_MAX);
        switch (width) {
        case 2:
                put_u16(b->data, b->pos, v);
                break;
        case 4:
                put_u32(b->data, b->pos, v);
                break;
        default:
                put_u64(b->data, b->pos, v);
        }
        b->pos += width;
        return v == all_ones(width) ? AMDSMI_NA : v;
}

/* Explicit padding members: garbage that must never show up. */
static void put_padding16(struct blob *b) {
        align(b, 2);
        put_u16(b->data, b->pos, 0x5a5a);
        b->pos += 2;
}

static void at(struct blob *b, size_t expected_offset) {
        if (b->pos != expected_offset)
                fail_msg("test layout: at %zu, spec says %zu", b->pos, expected_offset);
}

static uint64_t mul(uint64_t raw, uint64_t factor) {
        uint64_t r;

        if (raw == AMDSMI_NA || __builtin_mul_overflow(raw, factor, &r))
                return AMDSMI_NA;
        return r;
}

/* 2^-16 J to uJ: raw * 10^6 / 2^16 = raw * 15625 / 1024, split to stay in 64 bits. */
static uint64_t energy_uj(uint64_t raw) {
        uint64_t hi, r;

        if (raw == AMDSMI_NA || __builtin_mul_overflow(raw / 1024, UINT64_C(15625), &hi) ||
            __builtin_add_overflow(hi, (raw % 1024) * 15625 / 1024, &r) || r == AMDSMI_NA)
                return AMDSMI_NA;
        return r;
}

static void put_array(struct blob *b, unsigned width, size_t n, uint64_t *dst, uint64_t factor) {
        for (size_t i = 0; i < n; i++)
                dst[i] = mul(put(b, width), factor);
}

static void blob_init(struct blob *b, enum fill fill, struct amdsmi_gpu_metrics *exp) {
        /* implicit alignment padding is garbage too */
        memset(b->data, 0x5a, sizeof(b->data));
        b->pos = 4;
        b->seq = 0;
        b->fill = fill;
        memset(exp, 0xff, sizeof(*exp)); /* every field AMDSMI_NA unless written below */
}

static void blob_finish(struct blob *b, uint8_t crev, size_t expected_size,
                        struct amdsmi_gpu_metrics *exp) {
        align(b, 8); /* every table holds a u64, so it is 8-aligned */
        at(b, expected_size);
        put_header(b->data, expected_size, 1, crev);
        exp->structure_size = expected_size;
        exp->format_revision = 1;
        exp->content_revision = crev;
}

static void build_v1_3(struct blob *b, struct amdsmi_gpu_metrics *e) {
        e->temp_edge_mc = mul(put(b, 2), 1000);
        e->temp_hotspot_mc = mul(put(b, 2), 1000);
        e->temp_mem_mc = mul(put(b, 2), 1000);
        e->temp_vrgfx_mc = mul(put(b, 2), 1000);
        e->temp_vrsoc_mc = mul(put(b, 2), 1000);
        e->temp_vrmem_mc = mul(put(b, 2), 1000);
        e->gfx_activity_pct = put(b, 2);
        e->umc_activity_pct = put(b, 2);
        e->mm_activity_pct = put(b, 2);
        e->socket_power_uw = mul(put(b, 2), 1000000);
        at(b, 24);
        e->energy_accumulator = put(b, 8);
        e->energy_uj = energy_uj(e->energy_accumulator);
        e->system_clock_counter_ns = put(b, 8);
        e->avg_gfxclk_hz = mul(put(b, 2), 1000000);
        e->avg_socclk_hz = mul(put(b, 2), 1000000);
        e->avg_uclk_hz = mul(put(b, 2), 1000000);
        e->avg_vclk0_hz = mul(put(b, 2), 1000000);
        e->avg_dclk0_hz = mul(put(b, 2), 1000000);
        e->avg_vclk1_hz = mul(put(b, 2), 1000000);
        e->avg_dclk1_hz = mul(put(b, 2), 1000000);
        e->gfxclk_hz[0] = mul(put(b, 2), 1000000);
        e->socclk_hz[0] = mul(put(b, 2), 1000000);
        e->uclk_hz = mul(put(b, 2), 1000000);
        e->vclk0_hz[0] = mul(put(b, 2), 1000000);
        e->dclk0_hz[0] = mul(put(b, 2), 1000000);
        e->vclk1_hz = mul(put(b, 2), 1000000);
        e->dclk1_hz = mul(put(b, 2), 1000000);
        e->throttle_status = put(b, 4);
        e->fan_speed_rpm = put(b, 2);
        e->pcie_link_width = put(b, 2);
        e->pcie_link_speed_mts = mul(put(b, 2), 100);
        put_padding16(b);
        e->gfx_activity_acc = put(b, 4);
        e->mem_activity_acc = put(b, 4);
        put_array(b, 2, 4, e->temp_hbm_mc, 1000);
        at(b, 96);
        e->firmware_timestamp_ns = mul(put(b, 8), 10);
        e->voltage_soc_mv = put(b, 2);
        e->voltage_gfx_mv = put(b, 2);
        e->voltage_mem_mv = put(b, 2);
        put_padding16(b);
        at(b, 112);
        e->indep_throttle_status = put(b, 8);
        blob_finish(b, 3, 120, e);
}

/* v1.4 and v1.5 (v1.5 = v1.4 plus jpeg_activity and the two NAK counters) */
static void build_v1_4_5(struct blob *b, struct amdsmi_gpu_metrics *e, unsigned crev) {
        bool v15 = crev == 5;

        e->temp_hotspot_mc = mul(put(b, 2), 1000);
        e->temp_mem_mc = mul(put(b, 2), 1000);
        e->temp_vrsoc_mc = mul(put(b, 2), 1000);
        e->socket_power_uw = mul(put(b, 2), 1000000);
        e->gfx_activity_pct = put(b, 2);
        e->umc_activity_pct = put(b, 2);
        put_array(b, 2, 4, e->vcn_activity_pct, 1);
        if (v15)
                put_array(b, 2, 32, e->jpeg_activity_pct, 1);
        at(b, v15 ? 88 : 24);
        e->energy_accumulator = put(b, 8);
        e->energy_uj = energy_uj(e->energy_accumulator);
        at(b, v15 ? 96 : 32);
        e->system_clock_counter_ns = put(b, 8);
        e->throttle_status = put(b, 4);
        e->gfxclk_lock_status = put(b, 4);
        e->pcie_link_width = put(b, 2);
        e->pcie_link_speed_mts = mul(put(b, 2), 100);
        e->xgmi_link_width = put(b, 2);
        e->xgmi_link_speed_gbps = put(b, 2);
        e->gfx_activity_acc = put(b, 4);
        e->mem_activity_acc = put(b, 4);
        e->pcie_bandwidth_acc = put(b, 8);
        e->pcie_bandwidth_inst = put(b, 8);
        e->pcie_l0_to_recov_count_acc = put(b, 8);
        e->pcie_replay_count_acc = put(b, 8);
        e->pcie_replay_rover_count_acc = put(b, 8);
        if (v15) {
                e->pcie_nak_sent_count_acc = put(b, 4);
                e->pcie_nak_rcvd_count_acc = put(b, 4);
        }
        put_array(b, 8, 8, e->xgmi_read_data_kb, 1);
        put_array(b, 8, 8, e->xgmi_write_data_kb, 1);
        at(b, v15 ? 304 : 232);
        e->firmware_timestamp_ns = mul(put(b, 8), 10);
        at(b, v15 ? 312 : 240);
        put_array(b, 2, 8, e->gfxclk_hz, 1000000);
        put_array(b, 2, 4, e->socclk_hz, 1000000);
        put_array(b, 2, 4, e->vclk0_hz, 1000000);
        put_array(b, 2, 4, e->dclk0_hz, 1000000);
        e->uclk_hz = mul(put(b, 2), 1000000);
        put_padding16(b);
        blob_finish(b, crev, v15 ? 360 : 288, e);
}

static void build_xcp(struct blob *b, struct amdsmi_xcp_metrics *x, unsigned crev) {
        size_t start;

        align(b, 8);
        start = b->pos;
        put_array(b, 4, 8, x->gfx_busy_inst_pct, 1);
        put_array(b, 2, crev >= 8 ? 40 : 32, x->jpeg_busy_pct, 1);
        put_array(b, 2, 4, x->vcn_busy_pct, 1);
        at(b, start + (crev >= 8 ? 120 : 104));
        put_array(b, 8, 8, x->gfx_busy_acc, 1);
        if (crev == 7) {
                at(b, start + 168);
                put_array(b, 8, 8, x->gfx_below_host_limit_acc, 1);
        }
        if (crev >= 8) {
                put_array(b, 8, 8, x->gfx_below_host_limit_ppt_acc, 1);
                put_array(b, 8, 8, x->gfx_below_host_limit_thm_acc, 1);
                put_array(b, 8, 8, x->gfx_low_utilization_acc, 1);
                put_array(b, 8, 8, x->gfx_below_host_limit_total_acc, 1);
        }
        align(b, 8);
        at(b, start + (crev == 6 ? 168 : crev == 7 ? 232 : 440));
}

/* v1.6, v1.7 (mem_max_bandwidth, xgmi_link_status, bigger xcp_stats) and v1.8 (xcp_stats v1_2) */
static void build_v1_6_7_8(struct blob *b, struct amdsmi_gpu_metrics *e, unsigned crev) {
        bool v17 = crev >= 7;

        e->temp_hotspot_mc = mul(put(b, 2), 1000);
        e->temp_mem_mc = mul(put(b, 2), 1000);
        e->temp_vrsoc_mc = mul(put(b, 2), 1000);
        e->socket_power_uw = mul(put(b, 2), 1000000);
        e->gfx_activity_pct = put(b, 2);
        e->umc_activity_pct = put(b, 2);
        if (v17) {
                at(b, 16);
                e->mem_max_bandwidth_bps = mul(put(b, 8), 1000000000);
        }
        at(b, v17 ? 24 : 16);
        e->energy_accumulator = put(b, 8);
        e->energy_uj = energy_uj(e->energy_accumulator);
        e->system_clock_counter_ns = put(b, 8);
        at(b, v17 ? 40 : 32);
        e->accumulation_counter = put(b, 4);
        e->prochot_residency_acc = put(b, 4);
        e->ppt_residency_acc = put(b, 4);
        e->socket_thm_residency_acc = put(b, 4);
        e->vr_thm_residency_acc = put(b, 4);
        e->hbm_thm_residency_acc = put(b, 4);
        e->gfxclk_lock_status = put(b, 4);
        e->pcie_link_width = put(b, 2);
        e->pcie_link_speed_mts = mul(put(b, 2), 100);
        e->xgmi_link_width = put(b, 2);
        e->xgmi_link_speed_gbps = put(b, 2);
        e->gfx_activity_acc = put(b, 4);
        e->mem_activity_acc = put(b, 4);
        e->pcie_bandwidth_acc = put(b, 8);
        e->pcie_bandwidth_inst = put(b, 8);
        e->pcie_l0_to_recov_count_acc = put(b, 8);
        e->pcie_replay_count_acc = put(b, 8);
        e->pcie_replay_rover_count_acc = put(b, 8);
        e->pcie_nak_sent_count_acc = put(b, 4);
        e->pcie_nak_rcvd_count_acc = put(b, 4);
        put_array(b, 8, 8, e->xgmi_read_data_kb, 1);
        put_array(b, 8, 8, e->xgmi_write_data_kb, 1);
        if (v17) {
                at(b, 264);
                put_array(b, 2, 8, e->xgmi_link_status, 1);
                put_padding16(b);
                align(b, 8);
                at(b, 288);
        }
        e->firmware_timestamp_ns = mul(put(b, 8), 10);
        at(b, v17 ? 296 : 264);
        put_array(b, 2, 8, e->gfxclk_hz, 1000000);
        put_array(b, 2, 4, e->socclk_hz, 1000000);
        put_array(b, 2, 4, e->vclk0_hz, 1000000);
        put_array(b, 2, 4, e->dclk0_hz, 1000000);
        e->uclk_hz = mul(put(b, 2), 1000000);
        at(b, v17 ? 338 : 306);
        e->num_partition = put(b, 2);
        align(b, 8);
        at(b, v17 ? 344 : 312);
        for (unsigned i = 0; i < 8; i++)
                build_xcp(b, &e->xcp[i], crev);
        at(b, crev == 6 ? 1656 : crev == 7 ? 2200 : 3864);
        e->pcie_lc_perf_other_end_recovery = put(b, 4);
        blob_finish(b, crev, crev == 6 ? 1664 : crev == 7 ? 2208 : 3872, e);
}

static void build(struct blob *b, unsigned crev, enum fill fill, struct amdsmi_gpu_metrics *e) {
        blob_init(b, fill, e);
        if (crev == 3)
                build_v1_3(b, e);
        else if (crev <= 5)
                build_v1_4_5(b, e, crev);
        else
                build_v1_6_7_8(b, e, crev);
}

/* Compares every field; all members after the header are uint64_t. */
static void assert_metrics_equal(const struct amdsmi_gpu_metrics *exp,
                                 const struct amdsmi_gpu_metrics *got) {
        const size_t first = offsetof(struct amdsmi_gpu_metrics, temp_edge_mc);
        const uint64_t *e = (const uint64_t *) ((const uint8_t *) exp + first);
        const uint64_t *g = (const uint64_t *) ((const uint8_t *) got + first);
        size_t n = (sizeof(*exp) - first) / sizeof(uint64_t);
        unsigned bad = 0;

        _Static_assert((sizeof(struct amdsmi_gpu_metrics) -
                        offsetof(struct amdsmi_gpu_metrics, temp_edge_mc)) % 8 == 0,
                       "struct tail is an array of uint64_t");

        assert_int_equal(got->structure_size, exp->structure_size);
        assert_int_equal(got->format_revision, exp->format_revision);
        assert_int_equal(got->content_revision, exp->content_revision);
        for (size_t i = 0; i < n; i++)
                if (e[i] != g[i]) {
                        print_error("struct offset %zu: expected %" PRIu64 " (0x%" PRIx64
                                    "), got %" PRIu64 " (0x%" PRIx64 ")\n",
                                    first + i * 8, e[i], e[i], g[i], g[i]);
                        bad++;
                }
        assert_int_equal(bad, 0);
}

static void check_fill(unsigned crev, enum fill fill) {
        static struct blob b;
        static struct amdsmi_gpu_metrics exp, got;

        build(&b, crev, fill, &exp);
        memset(&got, 0, sizeof(got));
        assert_int_equal(amdsmi_gpu_metrics_parse(b.data, exp.structure_size, &got), 0);
        assert_metrics_equal(&exp, &got);

        /* a longer buffer than the table is fine (one 4096-byte pread) */
        memset(&got, 0, sizeof(got));
        assert_int_equal(amdsmi_gpu_metrics_parse(b.data, sizeof(b.data), &got), 0);
        assert_metrics_equal(&exp, &got);
}

#define REVISION_TESTS(n)                                                       \
        static void test_v1_##n##_distinct(void **state) {                      \
                check_fill(n, FILL_DISTINCT);                                   \
        }                                                                       \
        static void test_v1_##n##_all_ones(void **state) {                      \
                check_fill(n, FILL_ALL_ONES);                                   \
        }                                                                       \
        static void test_v1_##n##_alternate(void **state) {                     \
                check_fill(n, FILL_ALTERNATE);                                  \
        }                                                                       \
        static void test_v1_##n##_max_minus_one(void **state) {                 \
                check_fill(n, FILL_MAX_MINUS_ONE);                              \
        }

REVISION_TESTS(3)
REVISION_TESTS(4)
REVISION_TESTS(5)
REVISION_TESTS(6)
REVISION_TESTS(7)
REVISION_TESTS(8)

/* The distinct fill must really be distinct, or the tests above could miss swapped fields. */
static void test_distinct_values_are_distinct(void **state) {
        static struct blob b;
        static struct amdsmi_gpu_metrics exp;
        static uint64_t raw[4096];
        unsigned n = 0;

        build(&b, 8, FILL_DISTINCT, &exp);
        assert_true(b.seq > 800);
        b.seq = 0;
        for (unsigned i = 0; i < 1000; i++) {
                raw[n++] = next_value(&b, 2);
                raw[n++] = next_value(&b, 4);
                raw[n++] = next_value(&b, 8);
        }
        for (unsigned i = 0; i < n; i++)
                for (unsigned j = i + 1; j < n; j++)
                        assert_true(raw[i] != raw[j]);
}

/* ---- literal offsets and units, by field name ---- */

static void test_v1_3_literal(void **state) {
        uint8_t buf[120];
        struct amdsmi_gpu_metrics m;

        memset(buf, 0xff, sizeof(buf));
        put_header(buf, 120, 1, 3);
        put_u16(buf, 4, 41);            /* temperature_edge */
        put_u16(buf, 14, 47);           /* temperature_vrmem */
        put_u16(buf, 20, 12);           /* average_mm_activity */
        put_u16(buf, 22, 300);          /* average_socket_power, W */
        put_u64(buf, 24, 131072);       /* energy_accumulator, 2 J */
        put_u16(buf, 40, 1500);         /* average_gfxclk_frequency, MHz */
        put_u16(buf, 52, 900);          /* average_dclk1_frequency */
        put_u16(buf, 54, 1700);         /* current_gfxclk */
        put_u16(buf, 66, 1000);         /* current_dclk1 */
        put_u32(buf, 68, 0x80000001);   /* throttle_status */
        put_u16(buf, 72, 2200);         /* current_fan_speed */
        put_u16(buf, 76, 160);          /* pcie_link_speed, 0.1 GT/s */
        put_u16(buf, 94, 85);           /* temperature_hbm[3] */
        put_u64(buf, 96, 7);            /* firmware_timestamp, 10 ns */
        put_u16(buf, 108, 1200);        /* voltage_mem, mV */
        put_u64(buf, 112, 0x123456789a); /* indep_throttle_status */

        assert_int_equal(amdsmi_gpu_metrics_parse(buf, sizeof(buf), &m), 0);
        assert_int_equal(m.temp_edge_mc, 41000);
        assert_int_equal(m.temp_hotspot_mc, AMDSMI_NA);
        assert_int_equal(m.temp_vrmem_mc, 47000);
        assert_int_equal(m.mm_activity_pct, 12);
        assert_int_equal(m.socket_power_uw, 300000000);
        assert_int_equal(m.energy_accumulator, 131072);
        assert_int_equal(m.energy_uj, 2000000);
        assert_int_equal(m.avg_gfxclk_hz, 1500000000);
        assert_int_equal(m.avg_dclk1_hz, 900000000);
        assert_int_equal(m.gfxclk_hz[0], 1700000000);
        assert_int_equal(m.gfxclk_hz[1], AMDSMI_NA);
        assert_int_equal(m.dclk1_hz, 1000000000);
        assert_int_equal(m.throttle_status, 0x80000001);
        assert_int_equal(m.fan_speed_rpm, 2200);
        assert_int_equal(m.pcie_link_speed_mts, 16000);
        assert_int_equal(m.temp_hbm_mc[3], 85000);
        assert_int_equal(m.temp_hbm_mc[2], AMDSMI_NA);
        assert_int_equal(m.firmware_timestamp_ns, 70);
        assert_int_equal(m.voltage_mem_mv, 1200);
        assert_int_equal(m.indep_throttle_status, 0x123456789a);
        assert_int_equal(m.num_partition, AMDSMI_NA);
        assert_int_equal(m.xcp[0].gfx_busy_inst_pct[0], AMDSMI_NA);
}

static void test_v1_4_literal(void **state) {
        uint8_t buf[288];
        struct amdsmi_gpu_metrics m;

        memset(buf, 0xff, sizeof(buf));
        put_header(buf, 288, 1, 4);
        put_u16(buf, 4, 75);            /* temperature_hotspot */
        put_u16(buf, 10, 550);          /* curr_socket_power */
        put_u16(buf, 22, 33);           /* vcn_activity[3] */
        put_u64(buf, 24, 65536);        /* energy_accumulator: 1 J */
        put_u64(buf, 32, 999);          /* system_clock_counter */
        put_u32(buf, 44, 0xff);         /* gfxclk_lock_status */
        put_u16(buf, 48, 16);           /* pcie_link_width */
        put_u16(buf, 50, 320);          /* pcie_link_speed: 32 GT/s */
        put_u16(buf, 54, 32);           /* xgmi_link_speed, Gbps */
        put_u64(buf, 96, 5);            /* pcie_replay_rover_count_acc */
        put_u64(buf, 104, 1024);        /* xgmi_read_data_acc[0], KB */
        put_u64(buf, 224, 2048);        /* xgmi_write_data_acc[7] */
        put_u64(buf, 232, 12345);       /* firmware_timestamp */
        put_u16(buf, 254, 2100);        /* current_gfxclk[7] */
        put_u16(buf, 280, 1300);        /* current_uclk */

        assert_int_equal(amdsmi_gpu_metrics_parse(buf, sizeof(buf), &m), 0);
        assert_int_equal(m.structure_size, 288);
        assert_int_equal(m.format_revision, 1);
        assert_int_equal(m.content_revision, 4);
        assert_int_equal(m.temp_hotspot_mc, 75000);
        assert_int_equal(m.temp_edge_mc, AMDSMI_NA);
        assert_int_equal(m.socket_power_uw, 550000000);
        assert_int_equal(m.vcn_activity_pct[3], 33);
        assert_int_equal(m.energy_uj, 1000000);
        assert_int_equal(m.energy_accumulator, 65536);
        assert_int_equal(m.system_clock_counter_ns, 999);
        assert_int_equal(m.gfxclk_lock_status, 0xff);
        assert_int_equal(m.pcie_link_width, 16);
        assert_int_equal(m.pcie_link_speed_mts, 32000);
        assert_int_equal(m.xgmi_link_speed_gbps, 32);
        assert_int_equal(m.pcie_replay_rover_count_acc, 5);
        assert_int_equal(m.xgmi_read_data_kb[0], 1024);
        assert_int_equal(m.xgmi_write_data_kb[7], 2048);
        assert_int_equal(m.firmware_timestamp_ns, 123450);
        assert_int_equal(m.gfxclk_hz[7], 2100000000);
        assert_int_equal(m.uclk_hz, 1300000000);
        assert_int_equal(m.pcie_nak_sent_count_acc, AMDSMI_NA);
        assert_int_equal(m.jpeg_activity_pct[0], AMDSMI_NA);
        assert_int_equal(m.mem_max_bandwidth_bps, AMDSMI_NA);
}

static void test_v1_8_literal(void **state) {
        static uint8_t buf[3872];
        struct amdsmi_gpu_metrics m;
        const size_t xcp1 = 344 + 440;

        memset(buf, 0xff, sizeof(buf));
        put_header(buf, 3872, 1, 8);
        put_u64(buf, 16, 5300);         /* mem_max_bandwidth, GB/s */
        put_u64(buf, 24, 3 * 65536 + 1); /* energy_accumulator */
        put_u32(buf, 40, 1000);         /* accumulation_counter */
        put_u32(buf, 60, 250);          /* hbm_thm_residency_acc */
        put_u16(buf, 264, 1);           /* xgmi_link_status[0] */
        put_u16(buf, 278, 2);           /* xgmi_link_status[7] */
        put_u64(buf, 288, 100);         /* firmware_timestamp */
        put_u16(buf, 296, 2400);        /* current_gfxclk[0] */
        put_u16(buf, 338, 2);           /* num_partition */
        put_u32(buf, 344, 97);          /* xcp_stats[0].gfx_busy_inst[0] */
        put_u32(buf, xcp1 + 28, 13);    /* xcp_stats[1].gfx_busy_inst[7] */
        put_u16(buf, xcp1 + 32 + 39 * 2, 44); /* xcp_stats[1].jpeg_busy[39] */
        put_u16(buf, xcp1 + 112 + 3 * 2, 8);  /* xcp_stats[1].vcn_busy[3] */
        put_u64(buf, xcp1 + 120, 77);   /* xcp_stats[1].gfx_busy_acc[0] */
        put_u64(buf, xcp1 + 376 + 7 * 8, 66); /* gfx_below_host_limit_total_acc[7] */
        put_u32(buf, 3864, 3);          /* pcie_lc_perf_other_end_recovery */

        assert_int_equal(amdsmi_gpu_metrics_parse(buf, sizeof(buf), &m), 0);
        assert_int_equal(m.mem_max_bandwidth_bps, UINT64_C(5300000000000));
        assert_int_equal(m.energy_accumulator, 3 * 65536 + 1);
        assert_int_equal(m.energy_uj, 3000015); /* 15.258... uJ rounds down */
        assert_int_equal(m.accumulation_counter, 1000);
        assert_int_equal(m.hbm_thm_residency_acc, 250);
        assert_int_equal(m.xgmi_link_status[0], 1);
        assert_int_equal(m.xgmi_link_status[7], 2);
        assert_int_equal(m.firmware_timestamp_ns, 1000);
        assert_int_equal(m.gfxclk_hz[0], 2400000000);
        assert_int_equal(m.num_partition, 2);
        assert_int_equal(m.xcp[0].gfx_busy_inst_pct[0], 97);
        assert_int_equal(m.xcp[0].gfx_busy_inst_pct[1], AMDSMI_NA);
        assert_int_equal(m.xcp[1].gfx_busy_inst_pct[7], 13);
        assert_int_equal(m.xcp[1].jpeg_busy_pct[39], 44);
        assert_int_equal(m.xcp[1].vcn_busy_pct[3], 8);
        assert_int_equal(m.xcp[1].gfx_busy_acc[0], 77);
        assert_int_equal(m.xcp[1].gfx_below_host_limit_total_acc[7], 66);
        assert_int_equal(m.xcp[1].gfx_below_host_limit_acc[0], AMDSMI_NA); /* v1.7 only */
        for (unsigned i = 2; i < AMDSMI_METRICS_MAX_XCP; i++) {
                assert_int_equal(m.xcp[i].gfx_busy_inst_pct[0], AMDSMI_NA);
                assert_int_equal(m.xcp[i].jpeg_busy_pct[39], AMDSMI_NA);
                assert_int_equal(m.xcp[i].gfx_below_host_limit_total_acc[7], AMDSMI_NA);
        }
        assert_int_equal(m.pcie_lc_perf_other_end_recovery, 3);
        assert_int_equal(m.throttle_status, AMDSMI_NA);
        assert_int_equal(m.vcn_activity_pct[0], AMDSMI_NA);
}

/* v1.6 xcp_stats have 32 JPEG slots; the other 8 of the output array stay NA. */
static void test_v1_6_xcp_jpeg(void **state) {
        static struct blob b;
        static struct amdsmi_gpu_metrics m, exp;

        build(&b, 6, FILL_DISTINCT, &exp);
        assert_int_equal(amdsmi_gpu_metrics_parse(b.data, 1664, &m), 0);
        for (unsigned i = 0; i < AMDSMI_METRICS_MAX_XCP; i++) {
                assert_int_not_equal(m.xcp[i].jpeg_busy_pct[31], AMDSMI_NA);
                for (unsigned j = 32; j < AMDSMI_METRICS_MAX_JPEG; j++)
                        assert_int_equal(m.xcp[i].jpeg_busy_pct[j], AMDSMI_NA);
                assert_int_equal(m.xcp[i].gfx_below_host_limit_acc[0], AMDSMI_NA);
        }
        /* entry 7, field 1: put at 312 + 7 * 168 + 32 + 2 */
        assert_int_equal(m.xcp[7].jpeg_busy_pct[1],
                         b.data[312 + 7 * 168 + 34] | b.data[312 + 7 * 168 + 35] << 8);
}

/* ---- bad input ---- */

static uint8_t big[BLOB_MAX];

static int parse_header(uint16_t size, uint8_t frev, uint8_t crev, size_t len) {
        struct amdsmi_gpu_metrics m;

        memset(big, 0, sizeof(big));
        put_header(big, size, frev, crev);
        return amdsmi_gpu_metrics_parse(big, len, &m);
}

static void test_len_0(void **state) {
        assert_int_equal(parse_header(288, 1, 4, 0), -EBADMSG);
}

static void test_len_3(void **state) {
        assert_int_equal(parse_header(288, 1, 4, 3), -EBADMSG);
}

static void test_header_only(void **state) {
        for (unsigned crev = 3; crev <= 8; crev++) {
                static const uint16_t size[] = { 120, 288, 360, 1664, 2208, 3872 };

                assert_int_equal(parse_header(size[crev - 3], 1, crev, 4), -EBADMSG);
        }
}

static void test_size_larger_than_len(void **state) {
        assert_int_equal(parse_header(288, 1, 4, 287), -EBADMSG);
        assert_int_equal(parse_header(3872, 1, 8, 3871), -EBADMSG);
        assert_int_equal(parse_header(120, 1, 3, 100), -EBADMSG);
        /* the same sizes fit exactly */
        assert_int_equal(parse_header(288, 1, 4, 288), 0);
        assert_int_equal(parse_header(3872, 1, 8, 3872), 0);
        assert_int_equal(parse_header(120, 1, 3, 120), 0);
}

static void test_size_smaller_than_revision(void **state) {
        assert_int_equal(parse_header(287, 1, 4, BLOB_MAX), -EBADMSG);
        assert_int_equal(parse_header(4, 1, 4, BLOB_MAX), -EBADMSG);
        assert_int_equal(parse_header(0, 1, 5, BLOB_MAX), -EBADMSG);
        assert_int_equal(parse_header(1656, 1, 6, BLOB_MAX), -EBADMSG);
        /* a v1.7 size in a v1.8 header */
        assert_int_equal(parse_header(2208, 1, 8, BLOB_MAX), -EBADMSG);
}

static void test_size_bigger_than_revision(void **state) {
        assert_int_equal(parse_header(289, 1, 4, BLOB_MAX), -EBADMSG);
        assert_int_equal(parse_header(121, 1, 3, BLOB_MAX), -EBADMSG);
        assert_int_equal(parse_header(368, 1, 5, BLOB_MAX), -EBADMSG);
        assert_int_equal(parse_header(2208, 1, 6, BLOB_MAX), -EBADMSG);
        assert_int_equal(parse_header(3872, 1, 7, BLOB_MAX), -EBADMSG);
        assert_int_equal(parse_header(4000, 1, 8, BLOB_MAX), -EBADMSG);
}

static void test_unknown_revision(void **state) {
        /* 1.2 with any size, 2.x with the size of the matching 1.x table */
        assert_int_equal(parse_header(120, 1, 2, BLOB_MAX), -EOPNOTSUPP);
        assert_int_equal(parse_header(288, 2, 4, BLOB_MAX), -EOPNOTSUPP);
        assert_int_equal(parse_header(3872, 2, 8, BLOB_MAX), -EOPNOTSUPP);
        assert_int_equal(parse_header(120, 2, 3, BLOB_MAX), -EOPNOTSUPP);
        assert_int_equal(parse_header(288, 0, 4, BLOB_MAX), -EOPNOTSUPP);
        /* only the header is needed to tell */
        assert_int_equal(parse_header(288, 2, 4, 4), -EOPNOTSUPP);
}

/* 1.9 and later 1.x are attribute-encoded: a header alone is a table that lies */
static void test_attribute_encoded_revisions(void **state) {
        assert_int_equal(parse_header(3872, 1, 9, BLOB_MAX), -EBADMSG);
        assert_int_equal(parse_header(16, 1, 9, BLOB_MAX), -EBADMSG);
        assert_int_equal(parse_header(3872, 1, 255, BLOB_MAX), -EBADMSG);
        assert_int_equal(parse_header(16, 1, 9, 4), -EBADMSG);
}

static void test_untouched_on_failure(void **state) {
        static const struct {
                uint16_t size;
                uint8_t frev, crev;
                size_t len;
                int r;
        } cases[] = {
                { 288, 1, 4, 0, -EBADMSG },
                { 288, 1, 4, 3, -EBADMSG },
                { 288, 1, 4, 4, -EBADMSG },
                { 288, 1, 4, 287, -EBADMSG },
                { 287, 1, 4, BLOB_MAX, -EBADMSG },
                { 289, 1, 4, BLOB_MAX, -EBADMSG },
                { 3872, 1, 8, 3000, -EBADMSG },
                { 3872, 1, 9, BLOB_MAX, -EBADMSG },
                { 288, 2, 4, BLOB_MAX, -EOPNOTSUPP },
        };
        static struct amdsmi_gpu_metrics m, pattern;

        memset(&pattern, 0xa5, sizeof(pattern));
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                memset(big, 0x11, sizeof(big));
                put_header(big, cases[i].size, cases[i].frev, cases[i].crev);
                memcpy(&m, &pattern, sizeof(m));
                assert_int_equal(amdsmi_gpu_metrics_parse(big, cases[i].len, &m), cases[i].r);
                assert_memory_equal(&m, &pattern, sizeof(m));
        }
}

int main(void) {
        const struct CMUnitTest tests[] = {
#define REVISION_ENTRIES(n)                                     \
                cmocka_unit_test(test_v1_##n##_distinct),       \
                cmocka_unit_test(test_v1_##n##_all_ones),       \
                cmocka_unit_test(test_v1_##n##_alternate),      \
                cmocka_unit_test(test_v1_##n##_max_minus_one)
                REVISION_ENTRIES(3),
                REVISION_ENTRIES(4),
                REVISION_ENTRIES(5),
                REVISION_ENTRIES(6),
                REVISION_ENTRIES(7),
                REVISION_ENTRIES(8),
                cmocka_unit_test(test_distinct_values_are_distinct),
                cmocka_unit_test(test_v1_3_literal),
                cmocka_unit_test(test_v1_4_literal),
                cmocka_unit_test(test_v1_8_literal),
                cmocka_unit_test(test_v1_6_xcp_jpeg),
                cmocka_unit_test(test_len_0),
                cmocka_unit_test(test_len_3),
                cmocka_unit_test(test_header_only),
                cmocka_unit_test(test_size_larger_than_len),
                cmocka_unit_test(test_size_smaller_than_revision),
                cmocka_unit_test(test_size_bigger_than_revision),
                cmocka_unit_test(test_unknown_revision),
                cmocka_unit_test(test_attribute_encoded_revisions),
                cmocka_unit_test(test_untouched_on_failure),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
