/* SPDX-License-Identifier: MIT */
/* The pure parts of a GPU reset's run (reset-run.c) on hand-made inputs: the preflight's
 * verdict, the differences between before and after, the recovery advice of a failure. */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>

/* clang-format off */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
/* clang-format on */

#include "reset-run.h"

static void test_preflight(void **state) {
        char msg[256];

        assert_int_equal(reset_preflight_verdict(0, 0, false, msg, sizeof(msg)), 0);
        assert_string_equal(msg, "");
        /* KFD users: refused unless forced */
        assert_int_equal(reset_preflight_verdict(2, 0, false, msg, sizeof(msg)), -EBUSY);
        assert_non_null(strstr(msg, "2 processes use the GPUs to reset"));
        assert_non_null(strstr(msg, "--force"));
        assert_int_equal(reset_preflight_verdict(1, 0, true, msg, sizeof(msg)), 0);
        /* VFs in use by VMs: always refused, forced or not */
        assert_int_equal(reset_preflight_verdict(0, 1, true, msg, sizeof(msg)), -EBUSY);
        assert_non_null(strstr(msg, "1 VF of the GPUs to reset is in use by a VM"));
        assert_int_equal(reset_preflight_verdict(3, 2, false, msg, sizeof(msg)), -EBUSY);
        assert_non_null(strstr(msg, "2 VFs"));
}

static struct reset_snapshot snap(const char *bdf, enum amdsmi_compute_mode c,
                                  enum amdsmi_memory_mode m, uint64_t cap_uw, int vfs) {
        struct reset_snapshot s = {
                .compute = c, .memory = m, .cap_uw = cap_uw, .vf_count = vfs, .kfd_nodes = 1
        };

        strcpy(s.bdf, bdf);
        return s;
}

static void test_differences(void **state) {
        struct reset_snapshot before[2] = {
                snap("0000:05:00.0", AMDSMI_COMPUTE_CPX, AMDSMI_MEMORY_NPS4, 600000000, 0),
                snap("0000:26:00.0", AMDSMI_COMPUTE_SPX, AMDSMI_MEMORY_NPS1, 750000000, 8),
        };
        struct reset_snapshot after[2];
        json_object *d;

        memcpy(after, before, sizeof(after));
        after[0].kfd_nodes = 0; /* not compared: the state says it */
        d = reset_differences(before, after, 2);
        assert_int_equal(json_object_array_length(d), 0);
        json_object_put(d);

        after[0].cap_uw = 750000000;
        after[1].compute = AMDSMI_COMPUTE_UNKNOWN;
        after[1].vf_count = 0;
        d = reset_differences(before, after, 2);
        assert_string_equal(json_object_to_json_string_ext(d, JSON_C_TO_STRING_PLAIN),
                            "[{\"bdf\":\"0000:05:00.0\",\"field\":\"power_cap_w\",\"before\":600,"
                            "\"after\":750},{\"bdf\":\"0000:26:00.0\",\"field\":\"compute_mode\","
                            "\"before\":\"SPX\",\"after\":null},{\"bdf\":\"0000:26:00.0\","
                            "\"field\":\"vf_count\",\"before\":8,\"after\":0}]");
        json_object_put(d);
}

static void test_recovery(void **state) {
        struct amdsmi_reset_report r = { .size = sizeof(r), .n_gpus = 2 };

        r.gpus[0] = (struct amdsmi_reset_gpu){ .answers = 1,
                                               .kfd_nodes_before = 1,
                                               .kfd_nodes_after = 1 };
        r.gpus[1] = r.gpus[0];
        r.stage = AMDSMI_RESET_STAGE_RESET;
        /* a failed recovery that left the GPUs usable */
        assert_non_null(strstr(reset_recovery_advice(&r), "dmesg"));
        /* a GPU that does not answer */
        r.gpus[1].answers = 0;
        assert_non_null(strstr(reset_recovery_advice(&r), "--reload-driver"));
        /* a hang: wait for the kernel */
        r.hung = 1;
        assert_non_null(strstr(reset_recovery_advice(&r), "still running in the kernel"));
        /* the wait: KFD nodes missing, the driver answering */
        r.hung = 0;
        r.stage = AMDSMI_RESET_STAGE_WAIT;
        r.gpus[1].answers = 1;
        r.gpus[1].kfd_nodes_after = 0;
        assert_non_null(strstr(reset_recovery_advice(&r), "not every KFD node is back"));
        r.gpus[0].answers = 0;
        assert_non_null(strstr(reset_recovery_advice(&r), "do not answer yet"));
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_preflight),
                cmocka_unit_test(test_differences),
                cmocka_unit_test(test_recovery),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
