/* SPDX-License-Identifier: MIT */
/*
 * The process document's names and containers: a comm made printable and valid UTF-8 whatever
 * its bytes, and the container runtimes' cgroup scopes (systemd and cgroupfs drivers, nested,
 * malformed ids).
 */
/* clang-format off: cmocka.h needs these first */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
/* clang-format on */

#include <string.h>

#include "process-json.h"

#define ID "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define ID2 "fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210"

static void test_escape(void **state) {
        char buf[64];

        process_escape_name("python3", buf, sizeof(buf));
        assert_string_equal(buf, "python3");
        process_escape_name("\x1b[31mred\x7f", buf, sizeof(buf));
        assert_string_equal(buf, "\\x1b[31mred\\x7f");
        process_escape_name("a\\b\n\xc3\xa9", buf, sizeof(buf));
        assert_string_equal(buf, "a\\\\b\\x0a\\xc3\\xa9");
        /* cut whole escapes, never half of one */
        process_escape_name("\x01\x02\x03", buf, 9);
        assert_string_equal(buf, "\\x01\\x02");
        process_escape_name("", buf, sizeof(buf));
        assert_string_equal(buf, "");
}

static void test_container(void **state) {
        char rt[16], id[65];

        assert_true(process_container("/system.slice/docker-" ID ".scope", rt, sizeof(rt), id,
                                      sizeof(id)));
        assert_string_equal(rt, "docker");
        assert_string_equal(id, ID);
        assert_true(process_container("/kubepods.slice/kubepods-besteffort.slice/"
                                      "kubepods-besteffort-pod1234.slice/cri-containerd-" ID
                                      ".scope",
                                      rt, sizeof(rt), id, sizeof(id)));
        assert_string_equal(rt, "containerd");
        assert_true(process_container("/machine.slice/libpod-" ID ".scope/container", rt,
                                      sizeof(rt), id, sizeof(id)));
        assert_string_equal(rt, "podman");
        assert_true(process_container("/kubepods/burstable/podx/crio-" ID2 ".scope", rt, sizeof(rt),
                                      id, sizeof(id)));
        assert_string_equal(rt, "cri-o");
        assert_string_equal(id, ID2);
        /* cgroupfs driver */
        assert_true(process_container("/docker/" ID, rt, sizeof(rt), id, sizeof(id)));
        assert_string_equal(rt, "docker");
        /* nested: the innermost */
        assert_true(
                process_container("/docker/" ID "/docker/" ID2, rt, sizeof(rt), id, sizeof(id)));
        assert_string_equal(id, ID2);

        static const char *const none[] = {
                "/",
                "",
                "/user.slice/user-1000.slice/session-3.scope",
                "/system.slice/docker-0123.scope",     /* short id */
                "/system.slice/docker-" ID "x.scope",  /* long id */
                "/system.slice/docker-" ID ".service", /* not a scope */
                "/docker/0123456789ABCDEF0123456789abcdef0123456789abcdef0123456789abcdef",
                "/dockerx/" ID, /* not docker's parent */
                "/" ID,         /* no parent */
        };
        for (size_t i = 0; i < sizeof(none) / sizeof(none[0]); i++)
                assert_false(process_container(none[i], rt, sizeof(rt), id, sizeof(id)));
        assert_false(process_container(NULL, rt, sizeof(rt), id, sizeof(id)));
        assert_false(process_container("/docker/" ID, rt, sizeof(rt), id, 64));
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_escape),
                cmocka_unit_test(test_container),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
