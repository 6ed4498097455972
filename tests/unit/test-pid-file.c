/* SPDX-License-Identifier: MIT */
/*
 * lib/util/pid-file.c: amdsmid's PID file with the roots it reads, as amdsmid writes it and
 * amdsmi(1) parses it (strictly: anything else makes the CLI ask the bus, as before), and the
 * roots resolved as the file has them.
 */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "pid-file.h"

static int parse(const char *text, struct pid_file *f) {
        return pid_file_parse(text, strlen(text), f);
}

static void test_format_parse(void **state) {
        struct pid_file f;
        char buf[PID_FILE_MAX];
        int n;

        n = pid_file_format(1234, "/sys", "/dev", buf, sizeof(buf));
        assert_int_equal(n, (int) strlen("1234\nsysfs_root=/sys\ndev_root=/dev\n"));
        assert_string_equal(buf, "1234\nsysfs_root=/sys\ndev_root=/dev\n");
        assert_int_equal(pid_file_parse(buf, (size_t) n, &f), 0);
        assert_int_equal(f.pid, 1234);
        assert_true(f.has_roots);
        assert_string_equal(f.sysfs_root, "/sys");
        assert_string_equal(f.dev_root, "/dev");

        /* no device nodes: an empty dev_root, NULL or "" */
        n = pid_file_format(7, "/tmp/tree", NULL, buf, sizeof(buf));
        assert_string_equal(buf, "7\nsysfs_root=/tmp/tree\ndev_root=\n");
        assert_int_equal(pid_file_parse(buf, (size_t) n, &f), 0);
        assert_string_equal(f.dev_root, "");
        assert_int_equal(pid_file_format(7, "/tmp/tree", "", buf, sizeof(buf)), n);

        /* what the format refuses */
        assert_int_equal(pid_file_format(0, "/sys", "/dev", buf, sizeof(buf)), -EINVAL);
        assert_int_equal(pid_file_format(UINT32_MAX, "/sys", "/dev", buf, sizeof(buf)), -EINVAL);
        assert_int_equal(pid_file_format(1, "sys", "/dev", buf, sizeof(buf)), -EINVAL);
        assert_int_equal(pid_file_format(1, "", "/dev", buf, sizeof(buf)), -EINVAL);
        assert_int_equal(pid_file_format(1, "/sys", "dev", buf, sizeof(buf)), -EINVAL);
        assert_int_equal(pid_file_format(1, "/s\nys", "/dev", buf, sizeof(buf)), -EINVAL);
        assert_int_equal(pid_file_format(1, "/sys", "/dev", buf, 10), -ENAMETOOLONG);
}

static void test_old_format(void **state) {
        struct pid_file f;

        /* an older amdsmid: the PID alone, with or without its newline */
        assert_int_equal(parse("4321\n", &f), 0);
        assert_int_equal(f.pid, 4321);
        assert_false(f.has_roots);
        assert_int_equal(parse("4321", &f), 0);
        assert_int_equal(f.pid, 4321);
        assert_false(f.has_roots);
        assert_int_equal(parse("2147483647\n", &f), 0);
        assert_int_equal(f.pid, 2147483647u);
}

static void test_later_keys(void **state) {
        struct pid_file f;

        /* a later amdsmid's keys are skipped, in any place */
        assert_int_equal(parse("9\nbus=x=y\nsysfs_root=/a\nfuture_key=\ndev_root=/b\n", &f), 0);
        assert_true(f.has_roots);
        assert_string_equal(f.sysfs_root, "/a");
        assert_string_equal(f.dev_root, "/b");
        /* the PID file of a later amdsmid without roots (none of ours): the old format */
        assert_int_equal(parse("9\nother=1\n", &f), 0);
        assert_false(f.has_roots);
        /* a path may hold '=' and blanks */
        assert_int_equal(parse("9\nsysfs_root=/a b=c\ndev_root=\n", &f), 0);
        assert_string_equal(f.sysfs_root, "/a b=c");
}

static void test_garbage(void **state) {
        static const char *const bad[] = {
                "",
                "\n",
                "0\n",
                "-1\n",
                "+5\n",
                " 5\n",
                "5 \n",
                "2147483648\n",
                "99999999999999999999\n",
                "0x10\n",
                "12ab\n",
                "5\n\n",
                "5\nsysfs_root=/sys\n", /* one root without the other */
                "5\ndev_root=/dev\n",
                "5\nsysfs_root=/sys\ndev_root=/dev",  /* unterminated */
                "5\nsysfs_root=sys\ndev_root=/dev\n", /* relative */
                "5\nsysfs_root=\ndev_root=/dev\n",    /* no sysfs root */
                "5\nsysfs_root=/sys\ndev_root=dev\n",
                "5\nsysfs_root=/sys\nsysfs_root=/sys\ndev_root=/dev\n", /* twice */
                "5\nsysfs_root=/sys\ndev_root=/dev\ndev_root=/dev\n",
                "5\nsysfs_root /sys\ndev_root=/dev\n", /* no '=' */
                "5\n=/sys\n",
                "5\nSysfs_root=/sys\ndev_root=/dev\n", /* not a key */
                "5\nsysfs-root=/sys\ndev_root=/dev\n",
                "5\nsysfs_root=/sys\ndev_root=/dev\ngarbage\n",
        };
        struct pid_file f = { .pid = 77 };
        char nul[] = "5\nsysfs_root=/s\0s\ndev_root=/dev\n";
        /* static: gcc's -Warray-bounds with -fsanitize sees a heap buffer as 0 bytes */
        static char big[PID_FILE_MAX + 16];
        size_t n;

        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                if (parse(bad[i], &f) != -EINVAL)
                        fail_msg("accepted: \"%s\"", bad[i]);
                assert_int_equal(f.pid, 77); /* untouched */
        }
        assert_int_equal(pid_file_parse(nul, sizeof(nul) - 1, &f), -EINVAL);
        /* a NUL byte after a valid PID line */
        assert_int_equal(pid_file_parse("5\n\0", 3, &f), -EINVAL);

        /* a path of PATH_MAX bytes does not fit; PATH_MAX - 1 does */
        n = (size_t) sprintf(big, "5\nsysfs_root=/");
        memset(big + n, 'a', PATH_MAX - 2);
        n += PATH_MAX - 2;
        n += (size_t) sprintf(big + n, "\ndev_root=\n");
        assert_int_equal(pid_file_parse(big, n, &f), 0);
        assert_int_equal(strlen(f.sysfs_root), PATH_MAX - 1);
        n = (size_t) sprintf(big, "5\nsysfs_root=/");
        memset(big + n, 'a', PATH_MAX - 1);
        n += PATH_MAX - 1;
        n += (size_t) sprintf(big + n, "\ndev_root=\n");
        assert_int_equal(pid_file_parse(big, n, &f), -EINVAL);
        /* more than PID_FILE_MAX bytes, however valid */
        n = (size_t) sprintf(big, "5\nsysfs_root=/s\ndev_root=/d\n");
        memset(big + n, 'x', PID_FILE_MAX + 8 - n);
        for (size_t i = n; i + 8 < PID_FILE_MAX + 8; i += 8)
                memcpy(big + i, "k=vvvvv\n", 8);
        assert_int_equal(pid_file_parse(big, PID_FILE_MAX + 8, &f), -EINVAL);
}

static char tmpdir[] = "/tmp/test-pid-file.XXXXXX";

static void roots(const char *sysfs, const char *dev, const char *want_sysfs,
                  const char *want_dev) {
        char s[PATH_MAX] = "untouched", d[PATH_MAX] = "untouched";

        assert_int_equal(pid_file_resolve_roots(sysfs, dev, s, d), 0);
        assert_string_equal(s, want_sysfs);
        assert_string_equal(d, want_dev);
}

static void test_roots(void **state) {
        char tree[PATH_MAX], link[PATH_MAX], slash[PATH_MAX + 2], s[PATH_MAX] = "untouched",
                                                                  d[PATH_MAX] = "untouched";

        assert_non_null(mkdtemp(tmpdir));
        snprintf(tree, sizeof(tree), "%s/tree", tmpdir);
        snprintf(link, sizeof(link), "%s/link", tmpdir);
        snprintf(slash, sizeof(slash), "%s//", tree);
        assert_int_equal(mkdir(tree, 0755), 0);
        assert_int_equal(symlink("tree", link), 0);

        roots(tree, tree, tree, tree);
        /* no device root: NULL or "" */
        roots(tree, NULL, tree, "");
        roots(tree, "", tree, "");
        /* the same tree written otherwise resolves to the same */
        roots(slash, link, tree, tree);
        roots(link, NULL, tree, "");
        /* a path that does not exist: as given, without trailing slashes */
        roots("/nonexistent/amdsmi-tree//", NULL, "/nonexistent/amdsmi-tree", "");
        roots(tree, "/nonexistent/dev/", tree, "/nonexistent/dev");
        /* no sysfs root: refused, the outputs untouched */
        assert_int_equal(pid_file_resolve_roots(NULL, tree, s, d), -EINVAL);
        assert_int_equal(pid_file_resolve_roots("", tree, s, d), -EINVAL);
        assert_string_equal(s, "untouched");
        assert_string_equal(d, "untouched");

        assert_int_equal(unlink(link), 0);
        assert_int_equal(rmdir(tree), 0);
        assert_int_equal(rmdir(tmpdir), 0);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_format_parse), cmocka_unit_test(test_old_format),
                cmocka_unit_test(test_later_keys),   cmocka_unit_test(test_garbage),
                cmocka_unit_test(test_roots),
        };

        return cmocka_run_group_tests_name("pid-file", tests, NULL, NULL);
}
