/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the performance parsers and names (control/perf.c): pp_dpm_* with the current
 * level and deep sleep, pp_od_clk_voltage with and without OD_MCLK, pm_policy/ files, and the
 * refusals (empty, "unavailable", truncated, garbage).
 */
#include <errno.h>
#include <string.h>

/* clang-format off */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
/* clang-format on */

#include <amdsmi/amdsmi.h>

#define S(x) x, strlen(x)

static void test_levels(void **state) {
        struct amdsmi_clk_levels l;

        assert_int_equal(amdsmi_clk_levels_parse(S("0: 500Mhz\n1: 1200Mhz *\n2: 2100Mhz\n"), &l),
                         0);
        assert_int_equal(l.n, 3);
        assert_int_equal(l.current, 1);
        assert_false(l.deep_sleep);
        assert_int_equal(amdsmi_clk_levels_min(&l), 500);
        assert_int_equal(amdsmi_clk_levels_max(&l), 2100);
        assert_int_equal(amdsmi_clk_levels_current_mhz(&l), 1200);

        /* the kernel's "%d: %uMhz %s\n": a blank before the newline */
        assert_int_equal(amdsmi_clk_levels_parse(S("0: 900Mhz \n1: 1100Mhz *\n2: 1300Mhz \n"), &l),
                         0);
        assert_int_equal(l.current, 1);

        assert_int_equal(
                amdsmi_clk_levels_parse(S("S: 100Mhz *\n0: 900Mhz\n1: 1100Mhz\n2: 1300Mhz\n"), &l),
                0);
        assert_true(l.deep_sleep);
        assert_int_equal(l.deep_sleep_mhz, 100);
        assert_int_equal(l.current, -1);
        assert_int_equal(l.n, 3);
        assert_int_equal(amdsmi_clk_levels_current_mhz(&l), 100);
}

static void test_levels_bad(void **state) {
        struct amdsmi_clk_levels l = { .n = 77 };

        assert_int_equal(amdsmi_clk_levels_parse(S(""), &l), -ENODATA);
        assert_int_equal(amdsmi_clk_levels_parse(S("\n"), &l), -ENODATA);
        assert_int_equal(amdsmi_clk_levels_parse(S("unavailable\n"), &l), -EIO);
        assert_int_equal(amdsmi_clk_levels_parse(S("0: 500Mhz\n1: 12"), &l), -EBADMSG);
        assert_int_equal(amdsmi_clk_levels_parse(S("0: 500Mhz *\n1: 900Mhz *\n"), &l), -EBADMSG);
        assert_int_equal(amdsmi_clk_levels_parse(S("1: 500Mhz\n"), &l), -EBADMSG);
        assert_int_equal(amdsmi_clk_levels_parse(S("0: 900Mhz\n1: 500Mhz\n"), &l), -EBADMSG);
        assert_int_equal(amdsmi_clk_levels_parse(S("0: 500\n"), &l), -EBADMSG);
        assert_int_equal(amdsmi_clk_levels_parse(S("0: 500Mhz\nS: 100Mhz *\n"), &l), -EBADMSG);
        assert_int_equal(amdsmi_clk_levels_parse(S("garbage\n"), &l), -EBADMSG);
        assert_int_equal(amdsmi_clk_levels_parse(S("0: 9999999999Mhz\n"), &l), -EBADMSG);
        assert_int_equal(l.n, 77); /* untouched */
}

static void test_od(void **state) {
        struct amdsmi_od_clk od;

        assert_int_equal(
                amdsmi_od_clk_parse(
                        S("OD_SCLK:\n0: 600Mhz\n1: 1500Mhz\nOD_MCLK:\n0: 900Mhz\n1: 1100Mhz\n"),
                        &od),
                0);
        assert_true(od.sclk_present);
        assert_int_equal(od.sclk_min_mhz, 600);
        assert_int_equal(od.sclk_max_mhz, 1500);
        assert_true(od.mclk_present);
        assert_int_equal(od.mclk_max_mhz, 1100);

        assert_int_equal(amdsmi_od_clk_parse(S("OD_SCLK:\n0: 500Mhz\n1: 2100Mhz\n"), &od), 0);
        assert_false(od.mclk_present);

        /* other GPUs' sections are skipped */
        assert_int_equal(amdsmi_od_clk_parse(S("OD_SCLK:\n0: 500Mhz\n1: 2100Mhz\nOD_RANGE:\n"
                                               "SCLK:     500Mhz       2100Mhz\n"),
                                             &od),
                         0);
}

static void test_od_bad(void **state) {
        struct amdsmi_od_clk od = { .sclk_min_mhz = 7 };

        assert_int_equal(amdsmi_od_clk_parse(S(""), &od), -ENODATA);
        assert_int_equal(amdsmi_od_clk_parse(S("unavailable\n"), &od), -EIO);
        assert_int_equal(amdsmi_od_clk_parse(S("OD_SCLK:\n0: 500Mhz\n"), &od), -EBADMSG);
        assert_int_equal(amdsmi_od_clk_parse(S("OD_SCLK:\n0: 500Mhz\n1: 21"), &od), -EBADMSG);
        assert_int_equal(amdsmi_od_clk_parse(S("0: 500Mhz\n1: 2100Mhz\n"), &od), -EBADMSG);
        assert_int_equal(amdsmi_od_clk_parse(S("OD_SCLK:\n0: 500Mhz\n0: 600Mhz\n1: 900Mhz\n"), &od),
                         -EBADMSG);
        assert_int_equal(amdsmi_od_clk_parse(S("OD_SCLK:\n0: x\n1: 900Mhz\n"), &od), -EBADMSG);
        assert_int_equal(od.sclk_min_mhz, 7);
}

static void test_policy(void **state) {
        struct amdsmi_pm_policy p;

        assert_int_equal(amdsmi_pm_policy_parse(S("0 : soc_pstate_default\n1 : soc_pstate_0\n"
                                                  "2 : soc_pstate_1*\n3 : soc_pstate_2\n"),
                                                &p),
                         0);
        assert_int_equal(p.n, 4);
        assert_int_equal(p.current, 2);
        assert_string_equal(p.levels[2].name, "soc_pstate_1");
        assert_int_equal(amdsmi_pm_policy_find(&p, "3"), 3);
        assert_int_equal(amdsmi_pm_policy_find(&p, "SOC_PSTATE_0"), 1);
        assert_int_equal(amdsmi_pm_policy_find(&p, "4"), -EINVAL);
        assert_int_equal(amdsmi_pm_policy_find(&p, "soc_pstate_9"), -EINVAL);
        assert_int_equal(amdsmi_pm_policy_find(&p, ""), -EINVAL);

        assert_int_equal(amdsmi_pm_policy_parse(S(""), &p), -ENODATA);
        assert_int_equal(amdsmi_pm_policy_parse(S("0 : a\n0 : b\n"), &p), -EBADMSG);
        assert_int_equal(amdsmi_pm_policy_parse(S("0 : a*\n1 : b*\n"), &p), -EBADMSG);
        assert_int_equal(amdsmi_pm_policy_parse(S("0 : plpd_def"), &p), -EBADMSG);
        assert_int_equal(amdsmi_pm_policy_parse(S("x : a\n"), &p), -EBADMSG);
        assert_int_equal(amdsmi_pm_policy_parse(S("0 : \n"), &p), -EBADMSG);
        assert_int_equal(amdsmi_pm_policy_parse(S("0 : a b\n"), &p), -EBADMSG);
        /* a bare number is no name (find() would read it as an id) */
        assert_int_equal(amdsmi_pm_policy_parse(S("0 : 1*\n"), &p), -EBADMSG);
        assert_int_equal(amdsmi_pm_policy_parse(S("5 : 1\n1 : soc_pstate_0*\n"), &p), -EBADMSG);
}

static void test_names(void **state) {
        enum amdsmi_perf_level l;
        enum amdsmi_clk_domain d;
        enum amdsmi_pm_policy_kind k;

        for (int i = 1; i < _AMDSMI_PERF_LEVEL_MAX; i++) {
                assert_int_equal(
                        amdsmi_perf_level_from_string(
                                amdsmi_perf_level_to_string((enum amdsmi_perf_level) i), &l),
                        0);
                assert_int_equal(l, i);
        }
        assert_int_equal(amdsmi_perf_level_from_string("Determinism", &l), 0);
        assert_int_equal(l, AMDSMI_PERF_LEVEL_PERF_DETERMINISM);
        assert_int_equal(amdsmi_perf_level_from_string("unknown", &l), -EINVAL);
        assert_int_equal(amdsmi_perf_level_from_string("autox", &l), -EINVAL);
        assert_string_equal(amdsmi_perf_level_to_string(_AMDSMI_PERF_LEVEL_MAX), "unknown");
        assert_true(amdsmi_perf_level_accepted(AMDSMI_PERF_LEVEL_MANUAL));
        assert_false(amdsmi_perf_level_accepted(AMDSMI_PERF_LEVEL_HIGH));

        assert_int_equal(amdsmi_clk_domain_from_string("uclk", &d), 0);
        assert_int_equal(d, AMDSMI_CLK_MCLK);
        assert_int_equal(amdsmi_clk_domain_from_string("SCLK", &d), 0);
        assert_int_equal(d, AMDSMI_CLK_SCLK);
        assert_int_equal(amdsmi_clk_domain_from_string("pclk", &d), -EINVAL);

        assert_int_equal(amdsmi_pm_policy_kind_from_string("xgmi_plpd", &k), 0);
        assert_int_equal(k, AMDSMI_PM_POLICY_XGMI_PLPD);
        assert_int_equal(amdsmi_pm_policy_kind_from_string("plpd", &k), -EINVAL);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_levels), cmocka_unit_test(test_levels_bad),
                cmocka_unit_test(test_od),     cmocka_unit_test(test_od_bad),
                cmocka_unit_test(test_policy), cmocka_unit_test(test_names),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
