/* SPDX-License-Identifier: MIT */
/*
 * amdsmi_limiters_compute(): the share of an interval each limiter held the GPU, from two
 * gpu_metrics 1.9 samples with known counters. The samples are tables written with
 * metrics-writer.h and parsed by amdsmi_gpu_metrics_parse_ext(), as a caller gets them; the
 * expected parts per million are Δresidency / Δaccumulation_counter, worked out by hand.
 */

#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <amdsmi/amdsmi.h>

#include "metrics-writer.h"

#define NA MW_ALL_ONES
#define MAX_XCC AMDSMI_METRICS_MAX_XCC

/* What one sample carries; NA leaves a value all-0xFF, acc_type 0xff leaves the record out. */
struct sample {
        unsigned acc_type;
        uint64_t acc;
        uint64_t clock_ns;
        uint64_t fw_10ns;
        uint64_t prochot, ppt, socket_thm, vr_thm, hbm_thm; /* U32 */
        uint64_t xcc_ppt[MAX_XCC], xcc_thm[MAX_XCC], xcc_low[MAX_XCC], xcc_total[MAX_XCC];
};

#define NO_RECORD 0xff

static void parse_sample(const struct sample *s, struct amdsmi_gpu_metrics_ext *ret) {
        static struct mwriter w;
        char reason[256];
        size_t len;
        int r;

        mw_init(&w);
        mw_scalar(&w, MW_ID_SYSTEM_CLOCK_COUNTER, MW_U64, MW_TIME_NS, s->clock_ns);
        if (s->acc_type != NO_RECORD)
                mw_scalar(&w, MW_ID_ACCUMULATION_COUNTER, s->acc_type, MW_NONE, s->acc);
        mw_scalar(&w, MW_ID_PROCHOT_RESIDENCY_ACC, MW_U32, MW_NONE, s->prochot);
        mw_scalar(&w, MW_ID_PPT_RESIDENCY_ACC, MW_U32, MW_NONE, s->ppt);
        mw_scalar(&w, MW_ID_SOCKET_THM_RESIDENCY_ACC, MW_U32, MW_NONE, s->socket_thm);
        mw_scalar(&w, MW_ID_VR_THM_RESIDENCY_ACC, MW_U32, MW_NONE, s->vr_thm);
        mw_scalar(&w, MW_ID_HBM_THM_RESIDENCY_ACC, MW_U32, MW_NONE, s->hbm_thm);
        mw_scalar(&w, MW_ID_FIRMWARE_TIMESTAMP, MW_U64, MW_TIME_10NS, s->fw_10ns);
        mw_attr(&w, MW_ID_GFX_BELOW_HOST_LIMIT_PPT_ACC, MW_U64, MW_NONE, MAX_XCC, s->xcc_ppt);
        mw_attr(&w, MW_ID_GFX_BELOW_HOST_LIMIT_THM_ACC, MW_U64, MW_NONE, MAX_XCC, s->xcc_thm);
        mw_attr(&w, MW_ID_GFX_LOW_UTILIZATION_ACC, MW_U64, MW_NONE, MAX_XCC, s->xcc_low);
        mw_attr(&w, MW_ID_GFX_BELOW_HOST_LIMIT_TOTAL_ACC, MW_U64, MW_NONE, MAX_XCC, s->xcc_total);
        len = mw_finish(&w, 9);

        memset(ret, 0x5a, sizeof(*ret));
        ret->size = sizeof(*ret);
        ret->ids = AMDSMI_METRICS_IDS_T3;
        r = amdsmi_gpu_metrics_parse_ext(w.buf, len, ret, reason, sizeof(reason));
        if (r != 0)
                fail_msg("parse_ext: %d: %s", r, reason);
}

/* A sample at the start of an interval: every counter at a distinct base. */
static struct sample base_sample(unsigned acc_type, uint64_t acc) {
        struct sample s = {
                .acc_type = acc_type,
                .acc = acc,
                .clock_ns = UINT64_C(5000000000),
                .fw_10ns = UINT64_C(700000000),
                .prochot = 11,
                .ppt = 1000,
                .socket_thm = 2000,
                .vr_thm = 3000,
                .hbm_thm = 4000,
        };

        for (unsigned x = 0; x < MAX_XCC; x++) {
                s.xcc_ppt[x] = UINT64_C(1) << 40 | x;
                s.xcc_thm[x] = UINT64_C(2) << 40 | x;
                s.xcc_low[x] = UINT64_C(3) << 40 | x;
                s.xcc_total[x] = UINT64_C(4) << 40 | x;
        }
        return s;
}

static int compute(const struct sample *a, const struct sample *b, struct amdsmi_limiters *ret) {
        static struct amdsmi_gpu_metrics_ext prev, cur;

        parse_sample(a, &prev);
        parse_sample(b, &cur);
        memset(ret, 0x5a, sizeof(*ret));
        ret->size = sizeof(*ret);
        return amdsmi_limiters_compute(&prev, &cur, ret);
}

/* Failing computes leave the output untouched. */
static void expect_error(const struct sample *a, const struct sample *b, int want) {
        static struct amdsmi_limiters l, pattern;
        int r;

        r = compute(a, b, &l);
        memset(&pattern, 0x5a, sizeof(pattern));
        pattern.size = sizeof(pattern);
        if (r != want)
                fail_msg("limiters_compute: %d (%s), want %d (%s)", r, strerror(-r), want,
                         strerror(-want));
        assert_memory_equal(&l, &pattern, sizeof(l));
}

static void test_exact_shares(void **state) {
        struct sample a = base_sample(MW_U32, 1000), b = a;
        static struct amdsmi_limiters l;

        b.acc = a.acc + 2000;                 /* 2000 ticks */
        b.clock_ns = a.clock_ns + 1000000000; /* 1 s */
        b.fw_10ns = a.fw_10ns + 100000000;
        b.ppt = a.ppt + 1000;              /* 50 % */
        b.socket_thm = a.socket_thm + 500; /* 25 % */
        b.vr_thm = a.vr_thm + 20;          /* 1 % */
        b.prochot = a.prochot + 2;         /* 0.1 % */
        /* hbm_thm did not move: 0 */
        for (unsigned x = 0; x < MAX_XCC; x++) {
                b.xcc_ppt[x] = a.xcc_ppt[x] + 200 * x; /* 10 % per XCC index */
                b.xcc_thm[x] = a.xcc_thm[x] + 2000;    /* the whole interval */
                b.xcc_low[x] = a.xcc_low[x] + 1;       /* 500 ppm */
                b.xcc_total[x] = a.xcc_total[x] + 10 * x;
        }

        assert_int_equal(compute(&a, &b, &l), 0);
        assert_int_equal(l.size, sizeof(l));
        assert_int_equal(l.version, AMDSMI_LIMITERS_VERSION);
        assert_int_equal(l.ticks, 2000);
        assert_int_equal(l.interval_ns, 1000000000);
        assert_int_equal(l.ppt_ppm, 500000);
        assert_int_equal(l.socket_thermal_ppm, 250000);
        assert_int_equal(l.hbm_thermal_ppm, 0);
        assert_int_equal(l.vr_thermal_ppm, 10000);
        assert_int_equal(l.prochot_ppm, 1000);
        for (unsigned x = 0; x < MAX_XCC; x++) {
                assert_int_equal(l.xcc_below_host_limit_ppt_ppm[x], 100000 * x);
                assert_int_equal(l.xcc_below_host_limit_thm_ppm[x], 1000000);
                assert_int_equal(l.xcc_low_utilization_ppm[x], 500);
                assert_int_equal(l.xcc_below_host_limit_total_ppm[x], 5000 * x);
        }
}

/* The 6.19 accumulation counter is 32 bits: 0xFFFFFF00 -> 0x00000100 is 512 ticks; a residency
 * counter (u32) that wraps in the same interval too. */
static void test_wrap_32(void **state) {
        struct sample a = base_sample(MW_U32, 0xFFFFFF00), b = a;
        static struct amdsmi_limiters l;

        b.acc = 0x00000100;
        b.clock_ns = a.clock_ns + 5120000;
        b.fw_10ns = a.fw_10ns + 512000;
        a.ppt = 0xFFFFFFF0;
        b.ppt = 0x000000F0;                /* 256 ticks: 50 % */
        b.socket_thm = a.socket_thm + 128; /* 25 % */

        assert_int_equal(compute(&a, &b, &l), 0);
        assert_int_equal(l.ticks, 512);
        assert_int_equal(l.interval_ns, 5120000);
        assert_int_equal(l.ppt_ppm, 500000);
        assert_int_equal(l.socket_thermal_ppm, 250000);
        assert_int_equal(l.hbm_thermal_ppm, 0);
}

/* From Linux 7.0 the counter is 64 bits: more than 2^32 ticks are counted in full, and going
 * backwards is no 32-bit wrap. */
static void test_counter_64(void **state) {
        struct sample a = base_sample(MW_U64, 0x100), b = a;
        static struct amdsmi_limiters l;

        b.acc = UINT64_C(0x200000100); /* 2^33 ticks: 0 if cut to 32 bits */
        b.clock_ns = a.clock_ns + UINT64_C(85899345920);
        b.fw_10ns = a.fw_10ns + UINT64_C(8589934592);
        a.ppt = 0x10;
        b.ppt = 0x80000010; /* 2^31: 25 % */
        assert_int_equal(compute(&a, &b, &l), 0);
        assert_int_equal(l.ticks, UINT64_C(0x200000000));
        assert_int_equal(l.ppt_ppm, 250000);

        /* 0xFFFFFF00 -> 0x100 at 64 bits is no wrap of 512 ticks: the counter restarted */
        a = base_sample(MW_U64, 0xFFFFFF00);
        b = a;
        b.acc = 0x100;
        b.clock_ns = a.clock_ns + 5120000;
        b.fw_10ns = a.fw_10ns + 512000;
        expect_error(&a, &b, -ESTALE);
}

static void test_counter_not_moved(void **state) {
        struct sample a = base_sample(MW_U32, 123456), b = a;

        b.clock_ns = a.clock_ns + 1000;
        b.fw_10ns = a.fw_10ns + 100;
        expect_error(&a, &b, -EAGAIN);
        /* same for the 64-bit counter */
        a = base_sample(MW_U64, UINT64_C(1) << 40);
        b = a;
        expect_error(&a, &b, -EAGAIN);
}

static void test_clock_backwards(void **state) {
        struct sample a = base_sample(MW_U32, 1000), b = a;

        b.acc = a.acc + 100;
        b.clock_ns = a.clock_ns - 1;
        b.fw_10ns = a.fw_10ns + 100;
        expect_error(&a, &b, -ESTALE);

        /* the firmware's clock alone going back is a restart too */
        b.clock_ns = a.clock_ns + 1000;
        b.fw_10ns = a.fw_10ns - 1;
        expect_error(&a, &b, -ESTALE);
}

static void test_missing_counter(void **state) {
        struct sample a = base_sample(MW_U32, 1000), b = a;

        b.acc = a.acc + 100;
        b.clock_ns = a.clock_ns + 1000;
        b.acc_type = NO_RECORD;
        expect_error(&a, &b, -ENODATA);
        expect_error(&b, &a, -ENODATA);
        /* present but unavailable (all-0xFF) */
        b.acc_type = MW_U32;
        b.acc = NA;
        expect_error(&a, &b, -ENODATA);
}

/* A residency counter that moved more than the accumulation counter is clamped to the whole
 * interval; a residency unavailable in one sample is unknown, the others still computed. */
static void test_clamp_and_unavailable(void **state) {
        struct sample a = base_sample(MW_U32, 1000), b = a;
        static struct amdsmi_limiters l;

        b.acc = a.acc + 100;
        b.clock_ns = a.clock_ns + 1000000;
        b.fw_10ns = a.fw_10ns + 100000;
        b.ppt = a.ppt + 150;
        b.socket_thm = a.socket_thm + 101;
        b.hbm_thm = NA;
        b.vr_thm = a.vr_thm + 99;
        b.xcc_thm[3] = a.xcc_thm[3] + 1000;
        a.xcc_low[5] = NA;

        assert_int_equal(compute(&a, &b, &l), 0);
        assert_int_equal(l.ticks, 100);
        assert_int_equal(l.ppt_ppm, 1000000);
        assert_int_equal(l.socket_thermal_ppm, 1000000);
        assert_int_equal(l.vr_thermal_ppm, 990000);
        assert_true(l.hbm_thermal_ppm == AMDSMI_NA);
        assert_int_equal(l.xcc_below_host_limit_thm_ppm[3], 1000000);
        assert_int_equal(l.xcc_below_host_limit_thm_ppm[2], 0);
        assert_true(l.xcc_low_utilization_ppm[5] == AMDSMI_NA);
        assert_int_equal(l.xcc_low_utilization_ppm[4], 0);
}

static void test_struct_sizes(void **state) {
        static struct amdsmi_gpu_metrics_ext prev, cur;
        static struct amdsmi_limiters l, pattern;
        struct sample a = base_sample(MW_U32, 1000), b = a;

        b.acc = a.acc + 100;
        b.clock_ns = a.clock_ns + 1000;
        parse_sample(&a, &prev);
        parse_sample(&b, &cur);

        memset(&pattern, 0x5a, sizeof(pattern));
        pattern.size = sizeof(pattern) - 1;
        l = pattern;
        assert_int_equal(amdsmi_limiters_compute(&prev, &cur, &l), -EINVAL);
        assert_memory_equal(&l, &pattern, sizeof(l));

        pattern.size = sizeof(pattern);
        l = pattern;
        cur.size = 8;
        assert_int_equal(amdsmi_limiters_compute(&prev, &cur, &l), -EINVAL);
        assert_memory_equal(&l, &pattern, sizeof(l));
        cur.size = sizeof(cur);
        assert_int_equal(amdsmi_limiters_compute(&prev, &cur, &l), 0);
        assert_int_equal(l.ticks, 100);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_exact_shares),
                cmocka_unit_test(test_wrap_32),
                cmocka_unit_test(test_counter_64),
                cmocka_unit_test(test_counter_not_moved),
                cmocka_unit_test(test_clock_backwards),
                cmocka_unit_test(test_missing_counter),
                cmocka_unit_test(test_clamp_and_unavailable),
                cmocka_unit_test(test_struct_sizes),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
