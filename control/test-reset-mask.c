/* SPDX-License-Identifier: MIT */
/* The reset mask parser (reset.c): the kernel's texts, the old and new name of the soft
 * recovery, and what it refuses; the names of the enums. */
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

#include <amdsmi/amdsmi.h>

static uint32_t parse_ok(const char *text) {
        uint32_t m = 0xdead;

        assert_int_equal(amdsmi_reset_mask_parse(text, &m), 0);
        return m;
}

static void parse_bad(const char *text) {
        uint32_t m = 0xdead;

        assert_int_equal(amdsmi_reset_mask_parse(text, &m), -EBADMSG);
        assert_int_equal(m, 0xdead); /* untouched */
}

static void test_kernel_texts(void **state) {
        /* MI300 compute with MEC firmware >= 155 (gfx_v9_4_3), and older firmware */
        assert_int_equal(parse_ok("soft queue pipe full\n"),
                         AMDSMI_RESET_TYPE_SOFT | AMDSMI_RESET_TYPE_QUEUE | AMDSMI_RESET_TYPE_PIPE |
                                 AMDSMI_RESET_TYPE_FULL);
        assert_int_equal(parse_ok("soft full\n"), AMDSMI_RESET_TYPE_SOFT | AMDSMI_RESET_TYPE_FULL);
        /* the later name of the soft recovery; SR-IOV: no soft */
        assert_int_equal(parse_ok("soft_recovery full\n"),
                         AMDSMI_RESET_TYPE_SOFT | AMDSMI_RESET_TYPE_FULL);
        assert_int_equal(parse_ok("queue pipe full"),
                         AMDSMI_RESET_TYPE_QUEUE | AMDSMI_RESET_TYPE_PIPE | AMDSMI_RESET_TYPE_FULL);
        /* recovery off: an empty mask; spaces before the newline */
        assert_int_equal(parse_ok(""), 0);
        assert_int_equal(parse_ok("\n"), 0);
        assert_int_equal(parse_ok("full \n"), AMDSMI_RESET_TYPE_FULL);
        assert_int_equal(parse_ok("  pipe   full"),
                         AMDSMI_RESET_TYPE_PIPE | AMDSMI_RESET_TYPE_FULL);
}

static void test_refused(void **state) {
        parse_bad("soft soft\n");        /* repeated */
        parse_bad("soft_recovery soft"); /* the same type twice */
        parse_bad("hard\n");
        parse_bad("Soft\n");
        parse_bad("full\nfull\n"); /* text after the newline */
        parse_bad("full\n\n");
        parse_bad("full\tpipe\n");
        parse_bad("ful\n");
        parse_bad("fullx\n");
        parse_bad("soft\xff");
}

static void test_names(void **state) {
        assert_string_equal(amdsmi_reset_mechanism_to_string(AMDSMI_RESET_MECHANISM_NONE), "none");
        assert_string_equal(amdsmi_reset_mechanism_to_string(AMDSMI_RESET_MECHANISM_AMDGPU_RECOVER),
                            "amdgpu-debugfs-recover");
        assert_string_equal(amdsmi_reset_mechanism_to_string(AMDSMI_RESET_MECHANISM_GIM_RESET_GPU),
                            "gim-reset-gpu");
        assert_null(amdsmi_reset_mechanism_to_string((enum amdsmi_reset_mechanism) 3));
        assert_string_equal(amdsmi_reset_ring_to_string(AMDSMI_RESET_RING_COMPUTE), "compute");
        assert_string_equal(amdsmi_reset_ring_to_string(AMDSMI_RESET_RING_JPEG), "jpeg");
        assert_null(amdsmi_reset_ring_to_string(_AMDSMI_RESET_RING_MAX));
        assert_string_equal(amdsmi_reset_stage_to_string(AMDSMI_RESET_STAGE_WAIT), "wait");
        assert_null(amdsmi_reset_stage_to_string((enum amdsmi_reset_stage) 9));
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_kernel_texts),
                cmocka_unit_test(test_refused),
                cmocka_unit_test(test_names),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
