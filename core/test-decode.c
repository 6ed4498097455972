/* SPDX-License-Identifier: MIT */
/* The decoders of core/decode.c: XGMI link states, gfx target names, firmware versions. */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "decode.h"

static void test_xgmi_link_status(void **state) {
        (void) state;
        assert_string_equal(xgmi_link_status_to_string(0), "down");
        assert_string_equal(xgmi_link_status_to_string(1), "up");
        assert_string_equal(xgmi_link_status_to_string(2), "n/a");
        assert_string_equal(xgmi_link_status_to_string(UINT64_MAX), "n/a");
        assert_null(xgmi_link_status_to_string(3));
        assert_null(xgmi_link_status_to_string(0xffff));
}

static void test_gfx_target(void **state) {
        char buf[16];

        (void) state;
        assert_int_equal(format_gfx_target(90402, buf, sizeof(buf)), 0);
        assert_string_equal(buf, "gfx942");
        assert_int_equal(format_gfx_target(90500, buf, sizeof(buf)), 0);
        assert_string_equal(buf, "gfx950");
        assert_int_equal(format_gfx_target(90010, buf, sizeof(buf)), 0);
        assert_string_equal(buf, "gfx90a");
        assert_int_equal(format_gfx_target(110001, buf, sizeof(buf)), 0);
        assert_string_equal(buf, "gfx1101");
        assert_int_equal(format_gfx_target(0, buf, sizeof(buf)), -EINVAL);
        assert_int_equal(format_gfx_target(91600, buf, sizeof(buf)), -EINVAL);
        assert_int_equal(format_gfx_target(90416, buf, sizeof(buf)), -EINVAL);
        assert_int_equal(format_gfx_target(90402, buf, 6), -ENOBUFS);
}

static void test_firmware(void **state) {
        char buf[24];

        (void) state;
        assert_int_equal(format_firmware_hex(0x557300, buf, sizeof(buf)), 0);
        assert_string_equal(buf, "0x557300");
        assert_int_equal(format_firmware_hex(0, buf, sizeof(buf)), 0);
        assert_string_equal(buf, "0x0");
        assert_int_equal(format_firmware_dotted("smc", 0x00557300, buf, sizeof(buf)), 0);
        assert_string_equal(buf, "85.115.0");
        assert_int_equal(format_firmware_dotted("smc", 0x05557302, buf, sizeof(buf)), 0);
        assert_string_equal(buf, "5.85.115.2");
        assert_int_equal(format_firmware_dotted("smc", 0x100000000ULL, buf, sizeof(buf)), -EINVAL);
        assert_int_equal(format_firmware_dotted("sos", 0x210e64, buf, sizeof(buf)), -EOPNOTSUPP);
        assert_int_equal(format_firmware_dotted("mec", 0x9b, buf, sizeof(buf)), -EOPNOTSUPP);
        assert_int_equal(format_firmware_dotted(NULL, 0x9b, buf, sizeof(buf)), -EOPNOTSUPP);
        assert_int_equal(format_firmware_dotted("smc", 0x00557300, buf, 5), -ENOBUFS);
}

static void test_unique_id(void **state) {
        char buf[19];

        (void) state;
        assert_int_equal(format_unique_id("637aac6ed49bc25c", buf, sizeof(buf)), 0);
        assert_string_equal(buf, "0x637aac6ed49bc25c");
        assert_int_equal(format_unique_id("0x637AAC6ED49BC25C", buf, sizeof(buf)), 0);
        assert_string_equal(buf, "0x637aac6ed49bc25c");
        assert_int_equal(format_unique_id("be3f0c8a79d12", buf, sizeof(buf)), 0);
        assert_string_equal(buf, "0x000be3f0c8a79d12");
        assert_int_equal(format_unique_id("0000ffffffffffffffff", buf, sizeof(buf)), 0);
        assert_string_equal(buf, "0xffffffffffffffff");
        assert_int_equal(format_unique_id("1ffffffffffffffff", buf, sizeof(buf)), -EINVAL);
        assert_int_equal(format_unique_id("", buf, sizeof(buf)), -EINVAL);
        assert_int_equal(format_unique_id("0x", buf, sizeof(buf)), -EINVAL);
        assert_int_equal(format_unique_id("12 34", buf, sizeof(buf)), -EINVAL);
        assert_int_equal(format_unique_id(NULL, buf, sizeof(buf)), -EINVAL);
        assert_int_equal(format_unique_id("1", buf, 18), -ENOBUFS);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_xgmi_link_status),
                cmocka_unit_test(test_gfx_target),
                cmocka_unit_test(test_firmware),
                cmocka_unit_test(test_unique_id),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
