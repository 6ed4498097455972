/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the desired performance state (control/perf-state.c): what an operator's
 * change leaves desired, an operator's settings laid over the configuration's, the record in
 * the state file (a private STATE_DIRECTORY) read back, and a damaged record ignored.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* clang-format off */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
/* clang-format on */

#include "amdsmid-conf.h"
#include "perf-state.h"

#define BDF "0000:05:00.0"

static void test_apply_change(void **state) {
        struct perf_desired d = {};
        struct perf_change ch = {
                .kind = PERF_CHANGE_CLK_LIMIT, .clk = AMDSMI_CLK_SCLK, .max = true, .mhz = 1500
        };
        char buf[256];

        perf_desired_apply_change(&d, &ch);
        assert_int_equal(d.level, AMDSMI_PERF_LEVEL_MANUAL);
        assert_int_equal(d.sclk_max_mhz, 1500);
        ch = (struct perf_change){
                .kind = PERF_CHANGE_CLK_LIMIT, .clk = AMDSMI_CLK_MCLK, .max = true, .mhz = 1100
        };
        perf_desired_apply_change(&d, &ch);
        assert_int_equal(d.sclk_max_mhz, 1500); /* kept: still manual */
        assert_int_equal(d.mclk_max_mhz, 1100);
        perf_desired_describe(&d, buf, sizeof(buf));
        assert_string_equal(buf, "level manual, sclk max 1500 MHz, mclk max 1100 MHz");

        /* determinism drops the limits; reset -c goes back to auto */
        ch = (struct perf_change){ .kind = PERF_CHANGE_DETERMINISM, .mhz = 1900 };
        perf_desired_apply_change(&d, &ch);
        assert_int_equal(d.level, AMDSMI_PERF_LEVEL_PERF_DETERMINISM);
        assert_int_equal(d.determinism_sclk_mhz, 1900);
        assert_int_equal(d.sclk_max_mhz, 0);
        ch = (struct perf_change){ .kind = PERF_CHANGE_POLICY,
                                   .policy = AMDSMI_PM_POLICY_XGMI_PLPD };
        snprintf(ch.policy_value, sizeof(ch.policy_value), "plpd_optimized");
        perf_desired_apply_change(&d, &ch);
        ch = (struct perf_change){ .kind = PERF_CHANGE_RESET_CLOCKS };
        perf_desired_apply_change(&d, &ch);
        assert_int_equal(d.level, AMDSMI_PERF_LEVEL_AUTO);
        assert_int_equal(d.determinism_sclk_mhz, 0);
        assert_string_equal(d.xgmi_plpd, "plpd_optimized"); /* policies are not clocks */
        assert_false(perf_desired_empty(&d));
        d = (struct perf_desired){};
        assert_true(perf_desired_empty(&d));
        perf_desired_describe(&d, buf, sizeof(buf));
        assert_string_equal(buf, "none");
}

static void test_merge(void **state) {
        struct config_gpu c;
        struct perf_desired base, top = {};

        config_gpu_init(&c, BDF);
        c.perf_level = AMDSMI_PERF_LEVEL_MANUAL;
        c.sclk_max_mhz = 1800;
        c.sclk_min_mhz = 700;
        snprintf(c.soc_pstate, sizeof(c.soc_pstate), "1");
        perf_desired_from_config(&c, &base);
        assert_int_equal(base.sclk_min_mhz, 700);

        /* an operator's limit over the file's: the other limit stays */
        top.level = AMDSMI_PERF_LEVEL_MANUAL;
        top.sclk_max_mhz = 1500;
        perf_desired_merge(&base, &top);
        assert_int_equal(base.sclk_max_mhz, 1500);
        assert_int_equal(base.sclk_min_mhz, 700);
        assert_string_equal(base.soc_pstate, "1");

        /* an operator's auto drops the file's limits */
        top = (struct perf_desired){ .level = AMDSMI_PERF_LEVEL_AUTO };
        perf_desired_merge(&base, &top);
        assert_int_equal(base.level, AMDSMI_PERF_LEVEL_AUTO);
        assert_int_equal(base.sclk_max_mhz, 0);
        assert_int_equal(base.sclk_min_mhz, 0);
}

static int setup_dir(void **state) {
        char tmpl[] = "/tmp/amdsmi-perf-state.XXXXXX";

        if (!mkdtemp(tmpl))
                return -1;
        setenv("STATE_DIRECTORY", tmpl, 1);
        *state = strdup(tmpl);
        return 0;
}

static int teardown_dir(void **state) {
        char cmd[128];

        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", (char *) *state);
        free(*state);
        return system(cmd) == 0 ? 0 : -1;
}

static void test_record(void **state) {
        struct perf_change ch = {
                .kind = PERF_CHANGE_CLK_LIMIT, .clk = AMDSMI_CLK_SCLK, .max = true, .mhz = 1500
        };
        struct perf_desired d;
        char path[256];
        FILE *f;

        assert_int_equal(perf_state_load(BDF, &d), 0);
        assert_true(perf_desired_empty(&d));
        assert_int_equal(perf_state_remember(BDF, &ch), 0);
        ch = (struct perf_change){ .kind = PERF_CHANGE_POLICY,
                                   .policy = AMDSMI_PM_POLICY_SOC_PSTATE };
        snprintf(ch.policy_value, sizeof(ch.policy_value), "2");
        assert_int_equal(perf_state_remember(BDF, &ch), 0);
        assert_int_equal(perf_state_load(BDF, &d), 0);
        assert_int_equal(d.level, AMDSMI_PERF_LEVEL_MANUAL);
        assert_int_equal(d.sclk_max_mhz, 1500);
        assert_string_equal(d.soc_pstate, "2");
        assert_int_equal(perf_state_load("0000:26:00.0", &d), 0);
        assert_true(perf_desired_empty(&d));

        /* a damaged record reads as nothing desired */
        snprintf(path, sizeof(path), "%s/state.json", (char *) *state);
        f = fopen(path, "w");
        assert_non_null(f);
        fputs("{\"version\": 1, \"gpus\": {\"" BDF "\": {\"performance\": {\"version\": 1, "
              "\"level\": \"turbo\"}}}}\n",
              f);
        fclose(f);
        assert_int_equal(perf_state_load(BDF, &d), 0);
        assert_true(perf_desired_empty(&d));
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_apply_change),
                cmocka_unit_test(test_merge),
                cmocka_unit_test_setup_teardown(test_record, setup_dir, teardown_dir),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
