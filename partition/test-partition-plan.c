/* SPDX-License-Identifier: MIT */
/*
 * The partition plan without sysfs: every row of the compatibility tables of spec
 * amdgpu-sysfs §2.3 under both kernel rules, for 8-XCC (MI300X, MI350X), 6-XCC (MI300A) and
 * 4-XCC parts, and the plan's reasons and effects; then the sysfs side on a hand-made tree
 * (lists the simulator never emits: garbage, the view selector showing another mode).
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "../tests/unit/tree-util.h"
#include "partition-rules.h"

#define C(m) AMDSMI_COMPUTE_MODE_BIT(AMDSMI_COMPUTE_##m)
#define M(n) AMDSMI_MEMORY_MODE_BIT(AMDSMI_MEMORY_NPS##n)
#define GiB (UINT64_C(1) << 30)

struct row {
        const char *part;
        unsigned xcc;
        bool gc950, apu;
        enum amdsmi_memory_mode nps;
        uint32_t nps_sets;  /* newer kernels */
        uint32_t nps_count; /* older kernels */
};

static const struct row rows[] = {
        { "MI300X", 8, false, false, AMDSMI_MEMORY_NPS1, C(SPX) | C(DPX) | C(QPX) | C(CPX),
          C(SPX) | C(DPX) | C(QPX) | C(CPX) },
        { "MI300X", 8, false, false, AMDSMI_MEMORY_NPS2, C(DPX), C(DPX) | C(CPX) },
        { "MI300X", 8, false, false, AMDSMI_MEMORY_NPS4, C(QPX) | C(CPX), C(QPX) | C(CPX) },
        { "MI300X", 8, false, false, AMDSMI_MEMORY_NPS8, 0, C(CPX) },
        { "MI350X", 8, true, false, AMDSMI_MEMORY_NPS1, C(SPX) | C(DPX) | C(QPX) | C(CPX),
          C(SPX) | C(DPX) | C(QPX) | C(CPX) },
        { "MI350X", 8, true, false, AMDSMI_MEMORY_NPS2, C(DPX) | C(QPX) | C(CPX),
          C(DPX) | C(CPX) },
        { "MI300A", 6, false, true, AMDSMI_MEMORY_NPS1, C(SPX) | C(TPX) | C(CPX),
          C(SPX) | C(TPX) | C(CPX) },
        { "MI300A", 6, false, true, AMDSMI_MEMORY_NPS4, C(TPX) | C(CPX), C(TPX) | C(CPX) },
        { "4-XCC", 4, false, false, AMDSMI_MEMORY_NPS1, C(SPX) | C(DPX) | C(CPX),
          C(SPX) | C(DPX) | C(CPX) },
        { "4-XCC", 4, false, false, AMDSMI_MEMORY_NPS2, C(DPX), C(DPX) | C(CPX) },
        { "4-XCC", 4, false, false, AMDSMI_MEMORY_NPS4, C(CPX), C(CPX) },
};

static void test_supported_by_xcc(void **state) {
        assert_int_equal(partition_supported_by_xcc(8), C(SPX) | C(DPX) | C(QPX) | C(CPX));
        assert_int_equal(partition_supported_by_xcc(6), C(SPX) | C(TPX) | C(CPX));
        assert_int_equal(partition_supported_by_xcc(4), C(SPX) | C(DPX) | C(CPX));
        assert_int_equal(partition_supported_by_xcc(2), C(SPX) | C(CPX));
        assert_int_equal(partition_supported_by_xcc(1), C(SPX) | C(CPX));
        assert_int_equal(partition_supported_by_xcc(0), 0);
        assert_int_equal(partition_supported_by_xcc(3), 0);
}

static void test_compatibility_tables(void **state) {
        for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
                const struct row *r = &rows[i];
                uint32_t hw = partition_supported_by_xcc(r->xcc);
                uint32_t sets = partition_compatible(AMDSMI_RULES_NPS_SETS, r->xcc, r->gc950,
                                                     r->apu, r->nps) & hw;
                uint32_t count = partition_compatible(AMDSMI_RULES_NPS_COUNT, r->xcc, r->gc950,
                                                      r->apu, r->nps) & hw;

                if (sets != r->nps_sets || count != r->nps_count)
                        fail_msg("%s NPS%d: sets 0x%x (want 0x%x), count 0x%x (want 0x%x)",
                                 r->part, r->nps, sets, r->nps_sets, count, r->nps_count);
        }
}

static void test_auto_mode(void **state) {
        assert_int_equal(partition_auto_mode(AMDSMI_MEMORY_NPS1, 8, false), AMDSMI_COMPUTE_SPX);
        assert_int_equal(partition_auto_mode(AMDSMI_MEMORY_NPS2, 8, false), AMDSMI_COMPUTE_DPX);
        assert_int_equal(partition_auto_mode(AMDSMI_MEMORY_NPS4, 8, false), AMDSMI_COMPUTE_CPX);
        assert_int_equal(partition_auto_mode(AMDSMI_MEMORY_NPS8, 8, false), AMDSMI_COMPUTE_CPX);
        assert_int_equal(partition_auto_mode(AMDSMI_MEMORY_NPS1, 6, true), AMDSMI_COMPUTE_SPX);
        assert_int_equal(partition_auto_mode(AMDSMI_MEMORY_NPS4, 6, true), AMDSMI_COMPUTE_TPX);
        assert_int_equal(partition_memory_count(AMDSMI_MEMORY_NPS4, true), 3);
        assert_int_equal(partition_memory_count(AMDSMI_MEMORY_NPS4, false), 4);
}

/* An 8-GPU MI300X hive in the given modes, with the kernel's available list for the rule. */
static struct partition_state mi300x(enum amdsmi_compute_mode compute,
                                     enum amdsmi_memory_mode memory,
                                     enum amdsmi_partition_rules rules) {
        struct partition_state s = {
                .xcc = 8,
                .supported = partition_supported_by_xcc(8),
                .available_known = true,
                .memory_available = M(1) | M(2) | M(4),
                .memory_changeable = true,
                .compute = compute,
                .memory = memory,
                .vram_bytes = 192 * GiB,
                .bdf = "0000:05:00.0",
                .n_hive = 7,
        };
        static const char *const others[] = { "0000:26:00.0", "0000:46:00.0", "0000:65:00.0",
                                              "0000:85:00.0", "0000:a6:00.0", "0000:c6:00.0",
                                              "0000:e5:00.0" };

        s.available = partition_compatible(rules, 8, false, false, memory) & s.supported;
        s.n_partitions = partition_count(compute, 8);
        for (unsigned i = 0; i < s.n_partitions; i++)
                s.render_minors[i] = 128 + (int) i;
        for (unsigned i = 0; i < 7; i++)
                snprintf(s.hive_bdfs[i], sizeof(s.hive_bdfs[i]), "%s", others[i]);
        return s;
}

static struct amdsmi_partition_plan plan(const struct partition_state *s,
                                         enum amdsmi_compute_mode c, enum amdsmi_memory_mode m,
                                         uint64_t flags) {
        struct amdsmi_partition_plan p;

        memset(&p, 0xaa, sizeof(p));
        assert_int_equal(partition_plan(s, c, m, flags, &p), 0);
        assert_int_equal(p.size, sizeof(p));
        return p;
}

#define NOTE(n) (1u << AMDSMI_PLAN_##n)

/* Every (compute, memory) pair on every row, planned from NPS1 (a different memory mode,
 * so the rule decides) and from that memory mode (available_compute_partition decides). */
static void test_plan_every_row(void **state) {
        for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
                const struct row *r = &rows[i];

                for (int rule = AMDSMI_RULES_NPS_SETS; rule <= AMDSMI_RULES_NPS_COUNT; rule++) {
                        uint32_t want = rule == AMDSMI_RULES_NPS_SETS ? r->nps_sets : r->nps_count;
                        uint64_t flag = rule == AMDSMI_RULES_NPS_SETS
                                                ? AMDSMI_PLAN_FLAG_RULES_NPS_SETS
                                                : AMDSMI_PLAN_FLAG_RULES_NPS_COUNT;
                        struct partition_state s = {
                                .xcc = r->xcc,
                                .gc950 = r->gc950,
                                .apu = r->apu,
                                .supported = partition_supported_by_xcc(r->xcc),
                                .memory_available = M(1) | AMDSMI_MEMORY_MODE_BIT(r->nps),
                                .memory_changeable = true,
                                .compute = AMDSMI_COMPUTE_SPX,
                                .memory = AMDSMI_MEMORY_NPS1,
                                .vram_bytes = 96 * GiB,
                                .n_partitions = 1,
                                .render_minors = { 128 },
                                .bdf = "0000:01:00.0",
                        };

                        for (int c = AMDSMI_COMPUTE_SPX; c <= AMDSMI_COMPUTE_CPX; c++) {
                                enum amdsmi_plan_reason expect;
                                struct amdsmi_partition_plan p;

                                if (!(s.supported & (1u << c)))
                                        expect = AMDSMI_PLAN_COMPUTE_NOT_SUPPORTED;
                                else if (want & (1u << c) ||
                                         (c == AMDSMI_COMPUTE_SPX &&
                                          r->nps == AMDSMI_MEMORY_NPS1))
                                        expect = AMDSMI_PLAN_OK;
                                else
                                        expect = AMDSMI_PLAN_INCOMPATIBLE;

                                /* planned from NPS1 with the rule detected (NPS1 tells
                                 * nothing: the newer rule) or forced */
                                p = plan(&s, (enum amdsmi_compute_mode) c, r->nps, flag);
                                if (p.reason != expect || p.valid_compute != want)
                                        fail_msg("%s NPS%d %s rule %d: %s (want %s), valid 0x%x",
                                                 r->part, r->nps,
                                                 amdsmi_compute_mode_to_string(c), rule,
                                                 amdsmi_plan_reason_to_string(p.reason),
                                                 amdsmi_plan_reason_to_string(expect),
                                                 p.valid_compute);
                                assert_int_equal(p.rules, rule);
                                if (r->nps != AMDSMI_MEMORY_NPS1)
                                        assert_true(p.notes & NOTE(RELOAD_REQUIRED));

                                /* already in that memory mode: the kernel's list decides,
                                 * and the rule is detected from it */
                                s.memory = r->nps;
                                s.available = want;
                                s.available_known = true;
                                p = plan(&s, (enum amdsmi_compute_mode) c,
                                         AMDSMI_MEMORY_UNKNOWN, 0);
                                if (p.reason != expect &&
                                    !(c == AMDSMI_COMPUTE_SPX &&
                                      p.reason == AMDSMI_PLAN_OK)) /* no change */
                                        fail_msg("%s NPS%d %s current: %s", r->part, r->nps,
                                                 amdsmi_compute_mode_to_string(c),
                                                 amdsmi_plan_reason_to_string(p.reason));
                                assert_false(p.notes & NOTE(RELOAD_REQUIRED));
                                s.memory = AMDSMI_MEMORY_NPS1;
                                s.available_known = false;
                        }
                }
        }
}

static void test_detect_rules(void **state) {
        struct partition_state s = mi300x(AMDSMI_COMPUTE_DPX, AMDSMI_MEMORY_NPS2,
                                          AMDSMI_RULES_NPS_COUNT);

        /* NPS2 with CPX available: only the older rule gives that */
        assert_int_equal(s.available, C(DPX) | C(CPX));
        assert_int_equal(partition_detect_rules(&s), AMDSMI_RULES_NPS_COUNT);
        /* so NPS4 is planned with it too, and CPX+NPS2 is fine */
        assert_int_equal(plan(&s, AMDSMI_COMPUTE_CPX, AMDSMI_MEMORY_UNKNOWN, 0).reason,
                         AMDSMI_PLAN_OK);
        s = mi300x(AMDSMI_COMPUTE_DPX, AMDSMI_MEMORY_NPS2, AMDSMI_RULES_NPS_SETS);
        assert_int_equal(partition_detect_rules(&s), AMDSMI_RULES_NPS_SETS);
        assert_int_equal(plan(&s, AMDSMI_COMPUTE_CPX, AMDSMI_MEMORY_UNKNOWN, 0).reason,
                         AMDSMI_PLAN_INCOMPATIBLE);
        /* NPS1 cannot tell them apart: the newer rule */
        s = mi300x(AMDSMI_COMPUTE_SPX, AMDSMI_MEMORY_NPS1, AMDSMI_RULES_NPS_COUNT);
        assert_int_equal(partition_detect_rules(&s), AMDSMI_RULES_NPS_SETS);
        assert_int_equal(plan(&s, AMDSMI_COMPUTE_CPX, AMDSMI_MEMORY_NPS2, 0).reason,
                         AMDSMI_PLAN_INCOMPATIBLE);
        assert_int_equal(plan(&s, AMDSMI_COMPUTE_CPX, AMDSMI_MEMORY_NPS2,
                              AMDSMI_PLAN_FLAG_RULES_NPS_COUNT).reason,
                         AMDSMI_PLAN_OK);
}

static void test_available_is_ground_truth(void **state) {
        struct partition_state s = mi300x(AMDSMI_COMPUTE_SPX, AMDSMI_MEMORY_NPS1,
                                          AMDSMI_RULES_NPS_SETS);

        s.available = C(SPX) | C(CPX); /* a kernel or firmware narrower than the tables */
        assert_int_equal(plan(&s, AMDSMI_COMPUTE_DPX, AMDSMI_MEMORY_UNKNOWN, 0).reason,
                         AMDSMI_PLAN_INCOMPATIBLE);
        assert_int_equal(plan(&s, AMDSMI_COMPUTE_CPX, AMDSMI_MEMORY_NPS1, 0).reason,
                         AMDSMI_PLAN_OK);
        s.available = 0; /* "Not supported" */
        assert_int_equal(plan(&s, AMDSMI_COMPUTE_CPX, AMDSMI_MEMORY_UNKNOWN, 0).reason,
                         AMDSMI_PLAN_INCOMPATIBLE);
}

static void test_plan_effects_compute(void **state) {
        struct partition_state s = mi300x(AMDSMI_COMPUTE_SPX, AMDSMI_MEMORY_NPS1,
                                          AMDSMI_RULES_NPS_SETS);
        struct amdsmi_partition_plan p;

        p = plan(&s, AMDSMI_COMPUTE_CPX, AMDSMI_MEMORY_UNKNOWN, 0);
        assert_int_equal(p.reason, AMDSMI_PLAN_OK);
        assert_int_equal(p.notes, 0);
        assert_int_equal(p.compute_before, AMDSMI_COMPUTE_SPX);
        assert_int_equal(p.compute_after, AMDSMI_COMPUTE_CPX);
        assert_int_equal(p.memory_after, AMDSMI_MEMORY_NPS1);
        assert_int_equal(p.partitions_before, 1);
        assert_int_equal(p.partitions_after, 8);
        assert_int_equal(p.xcc_per_partition_after, 1);
        assert_int_equal(p.memory_per_partition_after, 24 * GiB);
        assert_int_equal(p.n_invalidated_render_minors, 0);
        assert_int_equal(p.n_affected_bdfs, 1); /* a compute change is this GPU's alone */
        assert_string_equal(p.affected_bdfs[0], "0000:05:00.0");

        s = mi300x(AMDSMI_COMPUTE_CPX, AMDSMI_MEMORY_NPS1, AMDSMI_RULES_NPS_SETS);
        s.render_minors[0] = 136; /* GPU 1: renderD136..143 */
        for (int i = 1; i < 8; i++)
                s.render_minors[i] = 136 + i;
        p = plan(&s, AMDSMI_COMPUTE_DPX, AMDSMI_MEMORY_UNKNOWN, 0);
        assert_int_equal(p.reason, AMDSMI_PLAN_OK);
        assert_int_equal(p.partitions_before, 8);
        assert_int_equal(p.partitions_after, 2);
        assert_int_equal(p.xcc_per_partition_after, 4);
        assert_int_equal(p.memory_per_partition_after, 96 * GiB);
        assert_int_equal(p.n_invalidated_render_minors, 6);
        for (int i = 0; i < 6; i++)
                assert_int_equal(p.invalidated_render_minors[i], 138 + i);

        p = plan(&s, AMDSMI_COMPUTE_TPX, AMDSMI_MEMORY_UNKNOWN, 0);
        assert_int_equal(p.reason, AMDSMI_PLAN_COMPUTE_NOT_SUPPORTED);
        assert_int_equal(p.partitions_after, 0); /* no effect to describe */
        assert_int_equal(p.memory_per_partition_after, AMDSMI_NA);
        assert_int_equal(p.n_invalidated_render_minors, 0);
        p = plan(&s, AMDSMI_COMPUTE_UNKNOWN, AMDSMI_MEMORY_UNKNOWN, 0);
        assert_int_equal(p.reason, AMDSMI_PLAN_OK);
        assert_int_equal(p.notes, NOTE(NO_CHANGE));
}

static void test_plan_effects_memory(void **state) {
        struct partition_state s = mi300x(AMDSMI_COMPUTE_SPX, AMDSMI_MEMORY_NPS1,
                                          AMDSMI_RULES_NPS_SETS);
        struct amdsmi_partition_plan p;

        p = plan(&s, AMDSMI_COMPUTE_CPX, AMDSMI_MEMORY_NPS4, 0);
        assert_int_equal(p.reason, AMDSMI_PLAN_OK);
        assert_int_equal(p.notes, NOTE(RELOAD_REQUIRED) | NOTE(HIVE_WIDE));
        assert_int_equal(p.memory_per_partition_after, 24 * GiB);
        assert_int_equal(p.n_affected_bdfs, 8);
        assert_string_equal(p.affected_bdfs[0], "0000:05:00.0");
        assert_string_equal(p.affected_bdfs[7], "0000:e5:00.0");

        /* QPX+NPS4 is valid, but the driver boots NPS4 in CPX: set QPX after the reload */
        p = plan(&s, AMDSMI_COMPUTE_QPX, AMDSMI_MEMORY_NPS4, 0);
        assert_int_equal(p.reason, AMDSMI_PLAN_OK);
        assert_int_equal(p.notes,
                         NOTE(RELOAD_REQUIRED) | NOTE(HIVE_WIDE) | NOTE(COMPUTE_AFTER_RELOAD));
        assert_int_equal(p.memory_per_partition_after, 48 * GiB);

        p = plan(&s, AMDSMI_COMPUTE_DPX, AMDSMI_MEMORY_NPS2, 0);
        assert_int_equal(p.reason, AMDSMI_PLAN_OK);
        assert_int_equal(p.memory_per_partition_after, 96 * GiB);
        p = plan(&s, AMDSMI_COMPUTE_SPX, AMDSMI_MEMORY_NPS4, 0);
        assert_int_equal(p.reason, AMDSMI_PLAN_INCOMPATIBLE);
        assert_int_equal(p.memory_per_partition_after, AMDSMI_NA);
        p = plan(&s, AMDSMI_COMPUTE_CPX, AMDSMI_MEMORY_NPS8, 0);
        assert_int_equal(p.reason, AMDSMI_PLAN_MEMORY_NOT_SUPPORTED);

        /* Memory alone: the GPU comes back in the driver's AUTO mode (SPX is not valid
         * under NPS4, and is not what the reload gives): CPX, 8 partitions of 24 GiB */
        p = plan(&s, AMDSMI_COMPUTE_UNKNOWN, AMDSMI_MEMORY_NPS4, 0);
        assert_int_equal(p.reason, AMDSMI_PLAN_OK);
        assert_int_equal(p.compute_after, AMDSMI_COMPUTE_CPX);
        assert_int_equal(p.partitions_after, 8);
        assert_int_equal(p.notes, NOTE(RELOAD_REQUIRED) | NOTE(HIVE_WIDE));
        assert_int_equal(p.memory_per_partition_after, 24 * GiB);
        p = plan(&s, AMDSMI_COMPUTE_UNKNOWN, AMDSMI_MEMORY_NPS2, 0);
        assert_int_equal(p.compute_after, AMDSMI_COMPUTE_DPX);
        /* a gim host keeps the compute mode across a memory change */
        s.gim = true;
        p = plan(&s, AMDSMI_COMPUTE_UNKNOWN, AMDSMI_MEMORY_NPS4, 0);
        assert_int_equal(p.compute_after, AMDSMI_COMPUTE_SPX);
        assert_int_equal(p.reason, AMDSMI_PLAN_INCOMPATIBLE);
        s.gim = false;

        s.n_hive = 0; /* a lone GPU */
        p = plan(&s, AMDSMI_COMPUTE_CPX, AMDSMI_MEMORY_NPS4, 0);
        assert_int_equal(p.notes, NOTE(RELOAD_REQUIRED));
        assert_int_equal(p.n_affected_bdfs, 1);

        s.memory_changeable = false; /* MI300A, a VF, or firmware with one NPS mode */
        s.memory_available = M(1);
        p = plan(&s, AMDSMI_COMPUTE_CPX, AMDSMI_MEMORY_NPS4, 0);
        assert_int_equal(p.reason, AMDSMI_PLAN_MEMORY_NOT_CHANGEABLE);
        p = plan(&s, AMDSMI_COMPUTE_CPX, AMDSMI_MEMORY_NPS1, 0);
        assert_int_equal(p.reason, AMDSMI_PLAN_OK);
}

static void test_plan_unsupported(void **state) {
        struct partition_state s = mi300x(AMDSMI_COMPUTE_SPX, AMDSMI_MEMORY_NPS1,
                                          AMDSMI_RULES_NPS_SETS);
        struct amdsmi_partition_plan p;

        s.vf = true;
        assert_int_equal(plan(&s, AMDSMI_COMPUTE_CPX, 0, 0).reason, AMDSMI_PLAN_NOT_SWITCHABLE);
        s.vf = false;
        s.supported = 0;
        assert_int_equal(plan(&s, AMDSMI_COMPUTE_CPX, 0, 0).reason, AMDSMI_PLAN_NOT_SUPPORTED);

        assert_int_equal(partition_plan(&s, (enum amdsmi_compute_mode) 5, 0, 0, &p), -EINVAL);
        assert_int_equal(partition_plan(&s, AMDSMI_COMPUTE_CPX, (enum amdsmi_memory_mode) 5, 0,
                                        &p), -EINVAL);
        assert_int_equal(partition_plan(&s, AMDSMI_COMPUTE_CPX, 0, UINT64_C(1) << 40, &p),
                         -EINVAL);
        assert_int_equal(partition_plan(&s, AMDSMI_COMPUTE_CPX, 0,
                                        AMDSMI_PLAN_FLAG_RULES_NPS_SETS |
                                                AMDSMI_PLAN_FLAG_RULES_NPS_COUNT,
                                        &p), -EINVAL);
}

static void test_parse_lists(void **state) {
        uint32_t m = 0x1234;

        assert_int_equal(partition_parse_compute_list("SPX, DPX, QPX, CPX", &m), 0);
        assert_int_equal(m, C(SPX) | C(DPX) | C(QPX) | C(CPX));
        assert_int_equal(partition_parse_compute_list("TPX", &m), 0);
        assert_int_equal(m, C(TPX));
        assert_int_equal(partition_parse_compute_list("Not supported", &m), 0);
        assert_int_equal(m, 0);
        m = 0x1234;
        static const char *const bad[] = { "",        "SPX,DPX",  "SPX, ",   ", SPX",
                                           "SPX, FOO", "SPX,  DPX", "UNKNOWN", "SPX DPX",
                                           "SPXX",    "NPS1",     "SPX, DPX\n" };
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                assert_int_equal(partition_parse_compute_list(bad[i], &m), -EBADMSG);
                assert_int_equal(m, 0x1234);
        }
        assert_int_equal(partition_parse_memory_list("NPS1, NPS2, NPS4", &m), 0);
        assert_int_equal(m, M(1) | M(2) | M(4));
        assert_int_equal(partition_parse_memory_list("Not supported", &m), -EBADMSG);
        assert_int_equal(partition_parse_memory_list("NPS1, UNKNOWN", &m), -EBADMSG);
        assert_int_equal(partition_parse_memory_list("NPS5", &m), -EBADMSG);
}

static void test_strings(void **state) {
        char buf[64];

        assert_int_equal(amdsmi_compute_mode_mask_to_string(C(SPX) | C(CPX), buf, sizeof(buf)),
                         8);
        assert_string_equal(buf, "SPX, CPX");
        assert_int_equal(amdsmi_compute_mode_mask_to_string(0, buf, sizeof(buf)), 0);
        assert_string_equal(buf, "");
        assert_int_equal(amdsmi_compute_mode_mask_to_string(1u << 7, buf, sizeof(buf)), -EINVAL);
        assert_int_equal(amdsmi_memory_mode_mask_to_string(M(1) | M(2) | M(4), buf, sizeof(buf)),
                         16);
        assert_string_equal(buf, "NPS1, NPS2, NPS4");
        assert_int_equal(amdsmi_memory_mode_mask_to_string(M(1) | M(4), buf, 5), 10);
        assert_string_equal(buf, "NPS1");
        assert_int_equal(amdsmi_memory_mode_mask_to_string(1, buf, sizeof(buf)), -EINVAL);
        assert_int_equal(amdsmi_memory_mode_mask_to_string(M(8), NULL, 0), 4);
        for (int r = AMDSMI_PLAN_OK; r <= AMDSMI_PLAN_INCOMPATIBLE; r++)
                assert_non_null(amdsmi_plan_reason_to_string((enum amdsmi_plan_reason) r));
        for (int r = AMDSMI_PLAN_NO_CHANGE; r <= AMDSMI_PLAN_COMPUTE_AFTER_RELOAD; r++)
                assert_non_null(amdsmi_plan_reason_to_string((enum amdsmi_plan_reason) r));
        assert_string_equal(amdsmi_plan_reason_to_string(AMDSMI_PLAN_INCOMPATIBLE),
                            "incompatible");
        assert_string_equal(amdsmi_partition_rules_to_string(AMDSMI_RULES_NPS_COUNT),
                            "nps-count");
}

#define DEV "devices/pci0000:00/0000:05:00.0/"

static char logged[512];

static void log_fn(struct amdsmi_ctx *ctx, int priority, const char *format, va_list ap,
                   void *userdata) {
        if (priority <= AMDSMI_LOG_WARNING)
                vsnprintf(logged, sizeof(logged), format, ap);
}

static void test_sysfs_side(void **state) {
        char *root = tree_new();
        struct amdsmi_engine_shares sh;
        struct amdsmi_partition_plan p = { .size = sizeof(p) };
        struct amdsmi_ctx *ctx = NULL;
        struct amdsmi_gpu *gpu;
        uint32_t m = 0x1234;

        tree_file(root, DEV "vendor", "0x1002\n", -1, 0444);
        tree_file(root, DEV "device", "0x74a1\n", -1, 0444);
        tree_file(root, DEV "class", "0x120000\n", -1, 0444);
        tree_link(root, "bus/pci/devices/0000:05:00.0", "../../../devices/pci0000:00/0000:05:00.0");
        tree_link(root, DEV "driver", "../../../bus/pci/drivers/amdgpu");
        tree_file(root, DEV "current_compute_partition", "SPX\n", -1, 0644);
        tree_file(root, DEV "available_compute_partition", "SPX, DPX, QPX, CPX\n", -1, 0444);
        tree_file(root, DEV "current_memory_partition", "NPS1\n", -1, 0444);
        tree_file(root, DEV "compute_partition_config/supported_xcp_configs", "SPX, QPX, CPX\n",
                  -1, 0444);
        tree_file(root, DEV "compute_partition_config/xcp_config", "SPX\n", -1, 0644);
        /* 0444 here; the kernel's 0400 (EACCES for others) is checked on the simulator */
        tree_file(root, DEV "compute_partition_config/xcc/num_inst", "8\n", -1, 0444);
        tree_file(root, DEV "compute_partition_config/xcc/num_shared", "1\n", -1, 0444);
        tree_file(root, DEV "compute_partition_config/jpeg/num_inst", "x\n", -1, 0444);
        assert_int_equal(amdsmi_ctx_new_with_roots(root, NULL, &ctx), 0);
        amdsmi_ctx_set_log_fn(ctx, log_fn, NULL);
        amdsmi_ctx_set_log_priority(ctx, AMDSMI_LOG_DEBUG);
        assert_int_equal(amdsmi_ctx_enumerate(ctx), 1);
        gpu = amdsmi_ctx_get_gpu(ctx, 0);

        /* the kernel's list wins over the XCC table */
        assert_int_equal(amdsmi_gpu_get_supported_compute_modes(gpu, &m), 0);
        assert_int_equal(m, C(SPX) | C(QPX) | C(CPX));
        assert_int_equal(amdsmi_gpu_read_available_compute_modes(gpu, &m), 0);
        assert_int_equal(m, C(SPX) | C(DPX) | C(QPX) | C(CPX));
        /* one NPS mode: no available_memory_partition, not changeable */
        assert_int_equal(amdsmi_gpu_read_available_memory_modes(gpu, &m), 0);
        assert_int_equal(m, M(1));
        /* shares: what is readable; garbage and absent files are unknown */
        assert_int_equal(amdsmi_gpu_read_engine_shares(gpu, &sh), 0);
        assert_int_equal(sh.mode, AMDSMI_COMPUTE_SPX);
        assert_int_equal(sh.xcc.num_inst, 8);
        assert_int_equal(sh.xcc.num_shared, 1);
        assert_int_equal(sh.jpeg.num_inst, AMDSMI_NA);
        assert_int_equal(sh.dma.num_inst, AMDSMI_NA);
        /* no KFD: the XCC count comes from the hardware set */
        assert_int_equal(amdsmi_gpu_plan_partition(gpu, AMDSMI_COMPUTE_CPX, 0, 0, &p), 0);
        assert_int_equal(p.reason, AMDSMI_PLAN_OK);
        assert_int_equal(p.partitions_after, 8);
        p.size = 4;
        assert_int_equal(amdsmi_gpu_plan_partition(gpu, AMDSMI_COMPUTE_CPX, 0, 0, &p), -EINVAL);

        /* the view selector shows another mode: unknown, never written back */
        tree_file(root, DEV "compute_partition_config/xcp_config", "CPX\n", -1, 0644);
        assert_int_equal(amdsmi_gpu_read_engine_shares(gpu, &sh), 0);
        assert_int_equal(sh.mode, AMDSMI_COMPUTE_SPX);
        assert_int_equal(sh.xcc.num_inst, AMDSMI_NA);

        /* lists that are not the kernel's: -EBADMSG naming the file, output untouched */
        m = 0x1234;
        tree_file(root, DEV "available_compute_partition", "SPX, DPX, XPX\n", -1, 0444);
        assert_int_equal(amdsmi_gpu_read_available_compute_modes(gpu, &m), -EBADMSG);
        assert_non_null(strstr(logged, "available_compute_partition"));
        tree_file(root, DEV "available_compute_partition", "Not supported\n", -1, 0444);
        assert_int_equal(amdsmi_gpu_read_available_compute_modes(gpu, &m), 0);
        assert_int_equal(m, 0);
        m = 0x1234;
        tree_file(root, DEV "available_memory_partition", "NPS1,NPS4\n", -1, 0444);
        assert_int_equal(amdsmi_gpu_read_available_memory_modes(gpu, &m), -EBADMSG);
        assert_non_null(strstr(logged, "available_memory_partition"));
        assert_int_equal(m, 0x1234);
        tree_file(root, DEV "available_memory_partition", "NPS1, NPS4\n", -1, 0444);
        assert_int_equal(amdsmi_gpu_read_available_memory_modes(gpu, &m), 1);
        assert_int_equal(m, M(1) | M(4));
        tree_file(root, DEV "compute_partition_config/supported_xcp_configs", "\n", -1, 0444);
        assert_int_equal(amdsmi_gpu_get_supported_compute_modes(gpu, &m), -EBADMSG);
        assert_non_null(strstr(logged, "supported_xcp_configs"));

        amdsmi_ctx_unref(ctx);
        tree_free(root);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_supported_by_xcc),
                cmocka_unit_test(test_compatibility_tables),
                cmocka_unit_test(test_auto_mode),
                cmocka_unit_test(test_plan_every_row),
                cmocka_unit_test(test_detect_rules),
                cmocka_unit_test(test_available_is_ground_truth),
                cmocka_unit_test(test_plan_effects_compute),
                cmocka_unit_test(test_plan_effects_memory),
                cmocka_unit_test(test_plan_unsupported),
                cmocka_unit_test(test_parse_lists),
                cmocka_unit_test(test_strings),
                cmocka_unit_test(test_sysfs_side),
        };

        return cmocka_run_group_tests_name("partition-plan", tests, NULL, NULL);
}
