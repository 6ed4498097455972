/* SPDX-License-Identifier: MIT */
/*
 * The BMC agent's files (power-apml.c): the parser on every accepted form and every malformed
 * one, apml_read() on absent, empty, valid, malformed and unreadable files and on names that
 * are not PCI addresses (no file opened), and apml_merge() precedence both ways.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
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

#include "power-apml.h"

#define W(x) ((uint64_t) (x) * POWER_UW_PER_W)
#define BDF "0000:c1:00.0"
#define SENTINEL UINT64_C(0x5a5a5a5a5a5a5a5a)

static char tmpdir[128];

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
        return remove(path);
}

static int setup(void **state) {
        const char *base = getenv("TMPDIR");

        snprintf(tmpdir, sizeof(tmpdir), "%s/test-power-apml-XXXXXX",
                 base && *base ? base : "/tmp");
        if (!mkdtemp(tmpdir))
                return -1;
        setenv("RUNTIME_DIRECTORY", tmpdir, 1);
        setenv("STATE_DIRECTORY", tmpdir, 1);
        return 0;
}

static int teardown(void **state) {
        return nftw(tmpdir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static const char *in_dir(const char *name) {
        static char buf[4][1024];
        static unsigned i;

        i = (i + 1) % 4;
        snprintf(buf[i], sizeof(buf[i]), "%s/%.700s", tmpdir, name);
        return buf[i];
}

static void write_file(const char *path, const void *data, size_t len) {
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

        assert_true(fd >= 0);
        assert_int_equal(write(fd, data, len), (ssize_t) len);
        assert_int_equal(close(fd), 0);
}

/* Writes apml/<bdf> with an mtime of sec.usec. */
static void write_apml(const char *bdf, const void *data, size_t len, time_t sec, long usec) {
        const struct timespec ts[2] = { { sec, usec * 1000 + 999 }, { sec, usec * 1000 + 999 } };
        char name[64];

        (void) mkdir(in_dir("apml"), 0755);
        snprintf(name, sizeof(name), "apml/%s", bdf);
        write_file(in_dir(name), data, len);
        assert_int_equal(utimensat(AT_FDCWD, in_dir(name), ts, 0), 0);
}

/* ---- apml_parse --------------------------------------------------------------------------- */

struct good_case {
        const char *text;
        size_t len;
        uint64_t uw;
};

#define GOOD(lit, uw) { lit, sizeof(lit) - 1, uw }

static void test_parse_good(void **state) {
        static const struct good_case cases[] = {
                GOOD("700000000", W(700)),
                GOOD("700000000\n", W(700)),
                GOOD("700W", W(700)),
                GOOD("700W\n", W(700)),
                GOOD("700 W\n", W(700)),
                GOOD("700w", W(700)),
                GOOD("700000mW\n", W(700)),
                GOOD("700000 mW\n", W(700)),
                GOOD("0.7kW\n", W(700)),
                GOOD("0.7 kW\n", W(700)),
                GOOD("0.7KW", W(700)),
                GOOD("450.5W", 450500000),
                GOOD("450.5 W", 450500000),
                GOOD("1000000", W(1)),           /* the floor */
                GOOD("1W", W(1)),
                GOOD("4294967295", POWER_WRITE_MAX_UW), /* the ceiling */
                GOOD("4294.967295W", POWER_WRITE_MAX_UW),
                GOOD("0700000000", W(700)),
                GOOD("  700W  \n", W(700)),
                GOOD("\t700W\t\n", W(700)),
                GOOD("# set by the BMC agent\n\n700W\n# end\n", W(700)),
                GOOD("   # an indented comment\n700W", W(700)),
                GOOD("\n\n\n700W\n\n", W(700)),
                GOOD("#700W\n600W\n", W(600)),            /* a commented-out value */
                GOOD("# 1\n# 2 W\n#\n500000000\n", W(500)),
                GOOD("700W\r\n", W(700)),                 /* CRLF */
                GOOD("# c\r\n\r\n700W\r\n# d\r\n", W(700)),
                GOOD("700W \r\n", W(700)),
                GOOD("", POWER_UW_UNKNOWN),               /* no value: no limit */
                GOOD("\n", POWER_UW_UNKNOWN),
                GOOD("\n\n  \t \n", POWER_UW_UNKNOWN),
                GOOD("# nothing set\n", POWER_UW_UNKNOWN),
                GOOD("# only a comment", POWER_UW_UNKNOWN),
                GOOD("\r\n", POWER_UW_UNKNOWN),
        };
        char err[160];

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                uint64_t uw = SENTINEL;
                int r;

                err[0] = '\0';
                r = apml_parse(cases[i].text, cases[i].len, &uw, err, sizeof(err));
                if (r != 0 || uw != cases[i].uw)
                        fail_msg("'%s': r=%d uw=%" PRIu64 " (expected %" PRIu64 ") %s",
                                 cases[i].text, r, uw, cases[i].uw, err);
        }

        /* NULL data with no length is an empty file. */
        {
                uint64_t uw = SENTINEL;

                assert_int_equal(apml_parse(NULL, 0, &uw, err, sizeof(err)), 0);
                assert_int_equal(uw, POWER_UW_UNKNOWN);
        }
}

struct bad_case {
        const char *text;
        size_t len;
        const char *why;
};

#define BAD(lit, why) { lit, sizeof(lit) - 1, why }

static void test_parse_malformed(void **state) {
        static const struct bad_case cases[] = {
                BAD("700W\n600W\n", "line 2: second value '600W'"),
                BAD("700W\n# c\n\n700W", "line 4: second value '700W'"),
                BAD("700W 600W", "line 1: '700W 600W' is not a power value"),
                BAD("-700W", "line 1: '-700W' is negative"),
                BAD("-700000000", "line 1: '-700000000' is negative"),
                BAD("-0.5", "is negative"),
                BAD("+700W", "is not a power value"),
                BAD("700XW", "line 1: '700XW' is not a power value"),
                BAD("700 MW", "is not a power value"),
                BAD("700 watts", "is not a power value"),
                BAD("700  W", "is not a power value"),
                BAD("700.5", "line 1: '700.5' has no unit"),
                BAD("700.0", "line 1: '700.0' has no unit"),
                BAD("7e8", "line 1: '7e8' is not a power value"),
                BAD("0x29b92700", "is not a power value"),
                BAD("99999999999999999999999.5", "is too large"),
                BAD("W", "is not a power value"),
                BAD(".5kW", "is not a power value"),
                BAD("0.0000005W", "is not a power value"), /* below 1 µW */
                BAD("0", "line 1: '0' is less than 1 W"),
                BAD("0W", "line 1: '0W' is less than 1 W"),
                BAD("999999", "line 1: '999999' is less than 1 W"),
                BAD("0.5W", "is less than 1 W"),
                BAD("4294967296", "line 1: '4294967296' is more than 4294.967295 W"),
                BAD("4294.967296W", "is more than 4294.967295 W"),
                BAD("5000W", "is more than 4294.967295 W"),
                BAD("99999999999999999999999", "line 1: '99999999999999999999999' is too large"),
                BAD("99999999999999999999999W", "is too large"),
                BAD("700W # from the BMC", "line 1: '700W # from the BMC' is not a power value"),
                BAD("700\r\r\n", "line 1: '700\r' is not a power value"),
                BAD("700\rW", "is not a power value"),
                BAD("7 0 0", "line 1: '7 0 0' is not a power value"),
                BAD("\n\n\nabc\n", "line 4: 'abc' is not a power value"),
                BAD("700W\0", "a NUL byte at byte 4"),
                BAD("\0", "a NUL byte at byte 0"),
                BAD("# comment \0 700W\n", "a NUL byte at byte 10"),
        };
        char err[160];

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                uint64_t uw = SENTINEL;
                int r;

                err[0] = '\0';
                r = apml_parse(cases[i].text, cases[i].len, &uw, err, sizeof(err));
                if (r != -EINVAL || uw != SENTINEL || !strstr(err, cases[i].why))
                        fail_msg("'%s': r=%d uw=%" PRIu64 " err '%s' (expected '%s')",
                                 cases[i].text, r, uw, err, cases[i].why);
        }
}

static void test_parse_length(void **state) {
        char buf[APML_FILE_MAX + 2], err[160];
        uint64_t uw = SENTINEL;

        /* Exactly 4096 bytes: a long comment and a value. */
        memset(buf, ' ', sizeof(buf));
        buf[0] = '#';
        memcpy(buf + APML_FILE_MAX - 6, "\n700W\n", 6);
        assert_int_equal(apml_parse(buf, APML_FILE_MAX, &uw, err, sizeof(err)), 0);
        assert_int_equal(uw, W(700));

        /* One more byte, even a blank one: too long. */
        uw = SENTINEL;
        buf[APML_FILE_MAX] = '\n';
        assert_int_equal(apml_parse(buf, APML_FILE_MAX + 1, &uw, err, sizeof(err)), -EINVAL);
        assert_non_null(strstr(err, "longer than 4096 bytes"));
        assert_int_equal(uw, SENTINEL);

        /* A value line of 4096 bytes. */
        memset(buf, '7', APML_FILE_MAX);
        assert_int_equal(apml_parse(buf, APML_FILE_MAX, &uw, err, sizeof(err)), -EINVAL);
        assert_non_null(strstr(err, "is too large"));

        /* The message is cut to the buffer, err may be NULL. */
        assert_int_equal(apml_parse("700W\n600W", 9, &uw, err, 8), -EINVAL);
        assert_string_equal(err, "line 2:");
        assert_int_equal(apml_parse("700W\n600W", 9, &uw, NULL, 0), -EINVAL);
        assert_int_equal(apml_parse("700W", 4, NULL, NULL, 0), 0);
        assert_int_equal(uw, SENTINEL);
}

/* ---- apml_read ---------------------------------------------------------------------------- */

static void test_strings(void **state) {
        char buf[256];

        assert_string_equal(apml_file_state_to_string(APML_FILE_ABSENT), "absent");
        assert_string_equal(apml_file_state_to_string(APML_FILE_EMPTY), "empty");
        assert_string_equal(apml_file_state_to_string(APML_FILE_VALID), "valid");
        assert_string_equal(apml_file_state_to_string(APML_FILE_MALFORMED), "malformed");
        assert_string_equal(apml_file_state_to_string(APML_FILE_UNREADABLE), "unreadable");
        assert_null(apml_file_state_to_string((enum apml_file_state) 5));
        assert_null(apml_file_state_to_string((enum apml_file_state) -1));

        assert_int_equal(apml_dir(buf, sizeof(buf)), 0);
        assert_string_equal(buf, in_dir("apml"));
        assert_int_equal(apml_dir(buf, strlen(tmpdir) + 5), -ENAMETOOLONG);
        assert_int_equal(apml_dir(buf, strlen(tmpdir) + 6), 0);
        setenv("RUNTIME_DIRECTORY", "/run/x:/run/y", 1);
        assert_int_equal(apml_dir(buf, sizeof(buf)), 0);
        assert_string_equal(buf, "/run/x/apml");
        unsetenv("RUNTIME_DIRECTORY");
        assert_int_equal(apml_dir(buf, sizeof(buf)), 0);
        assert_string_equal(buf, "/run/amdsmi/apml");
}

static void test_read(void **state) {
        static const char big[APML_FILE_MAX + 100] = "# long\n";
        struct apml_file f;

        /* No directory, then no file. */
        memset(&f, 0x5a, sizeof(f));
        assert_int_equal(apml_read(BDF, &f), 0);
        assert_int_equal(f.state, APML_FILE_ABSENT);
        assert_string_equal(f.path, in_dir("apml/" BDF));
        assert_int_equal(f.uw, POWER_UW_UNKNOWN);
        assert_string_equal(f.error, "");
        assert_int_equal(mkdir(in_dir("apml"), 0755), 0);
        assert_int_equal(apml_read(BDF, &f), 0);
        assert_int_equal(f.state, APML_FILE_ABSENT);

        /* Empty, comments only. */
        write_apml(BDF, "", 0, 1764000000, 0);
        memset(&f, 0x5a, sizeof(f));
        assert_int_equal(apml_read(BDF, &f), 0);
        assert_int_equal(f.state, APML_FILE_EMPTY);
        assert_int_equal(f.uw, POWER_UW_UNKNOWN);
        assert_int_equal(f.mtime_usec, UINT64_C(1764000000000000));
        assert_string_equal(f.error, "");
        write_apml(BDF, "# none\n", 7, 1764000000, 0);
        assert_int_equal(apml_read(BDF, &f), 0);
        assert_int_equal(f.state, APML_FILE_EMPTY);

        /* Valid: the limit and the mtime in µs (the nanoseconds truncated). */
        write_apml(BDF, "# from the BMC\n650 W\n", 21, 1764000123, 456789);
        memset(&f, 0x5a, sizeof(f));
        assert_int_equal(apml_read(BDF, &f), 0);
        assert_int_equal(f.state, APML_FILE_VALID);
        assert_int_equal(f.uw, W(650));
        assert_int_equal(f.mtime_usec, UINT64_C(1764000123456789));
        assert_string_equal(f.path, in_dir("apml/" BDF));
        assert_string_equal(f.error, "");

        /* Malformed: why, and no value. */
        write_apml(BDF, "650W\n700W\n", 10, 1764000000, 0);
        assert_int_equal(apml_read(BDF, &f), 0);
        assert_int_equal(f.state, APML_FILE_MALFORMED);
        assert_int_equal(f.uw, POWER_UW_UNKNOWN);
        assert_string_equal(f.error, "line 2: second value '700W'");
        write_apml(BDF, "650W\0", 5, 1764000000, 0);
        assert_int_equal(apml_read(BDF, &f), 0);
        assert_int_equal(f.state, APML_FILE_MALFORMED);
        assert_non_null(strstr(f.error, "NUL"));

        /* Too long, though only comments and a good value. */
        {
                char data[sizeof(big)];

                memcpy(data, big, sizeof(big));
                memset(data + 7, '#', sizeof(data) - 7);
                memcpy(data + sizeof(data) - 6, "\n700W\n", 6);
                write_apml(BDF, data, sizeof(data), 1764000000, 0);
        }
        assert_int_equal(apml_read(BDF, &f), 0);
        assert_int_equal(f.state, APML_FILE_MALFORMED);
        assert_non_null(strstr(f.error, "longer than 4096 bytes"));

        /* Another GPU's file is its own. */
        write_apml("0000:c2:00.0", "500W", 4, 1764000000, 0);
        assert_int_equal(apml_read("0000:c2:00.0", &f), 0);
        assert_int_equal(f.state, APML_FILE_VALID);
        assert_int_equal(f.uw, W(500));

        /* Not a regular file, a symbolic link. */
        assert_int_equal(mkdir(in_dir("apml/0000:c3:00.0"), 0755), 0);
        assert_int_equal(apml_read("0000:c3:00.0", &f), 0);
        assert_int_equal(f.state, APML_FILE_UNREADABLE);
        assert_string_equal(f.error, "a directory, not a regular file: refused");
        assert_int_equal(mkfifo(in_dir("apml/0000:c4:00.0"), 0644), 0);
        assert_int_equal(apml_read("0000:c4:00.0", &f), 0);
        assert_int_equal(f.state, APML_FILE_UNREADABLE);
        assert_string_equal(f.error, "a FIFO, not a regular file: refused");
        assert_int_equal(symlink(BDF, in_dir("apml/0000:c5:00.0")), 0);
        assert_int_equal(apml_read("0000:c5:00.0", &f), 0);
        assert_int_equal(f.state, APML_FILE_UNREADABLE);
        assert_int_equal(f.uw, POWER_UW_UNKNOWN);
        assert_string_equal(f.error, "a symbolic link, not a regular file: refused");
}

static void test_read_bad_bdf(void **state) {
        static const char *const bad[] = {
                "../../etc/passwd",
                "0000:c1:00.0/../x",
                "0000:c1:00.0/",
                "/etc/passwd",
                "x",
                "",
                "0000:C1:00.0",
                "0000:c1:00.8",
                "0000:c1:00.0 ",
                " 0000:c1:00.0",
                "0000:c1:00",
                "0000:c1:000.0",
                "00000000:c1:00.0",
                "0000.c1:00.0",
                "0000:g1:00.0",
                "..",
                ".",
        };
        struct apml_file f, before;

        /* Files a careless reader would find: a valid limit behind each bad name. */
        assert_int_equal(mkdir(in_dir("apml"), 0755), 0);
        assert_int_equal(mkdir(in_dir("apml/" BDF), 0755), 0);
        write_file(in_dir("apml/x"), "700W", 4);
        write_file(in_dir("apml/0000:c1:00.0/x"), "700W", 4);
        write_file(in_dir("passwd"), "700W", 4);

        memset(&before, 0x5a, sizeof(before));
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                f = before;
                if (apml_read(bad[i], &f) != -EINVAL)
                        fail_msg("'%s' accepted", bad[i]);
                assert_memory_equal(&f, &before, sizeof(f));
        }
        assert_int_equal(apml_read(NULL, &f), -EINVAL);
        assert_int_equal(apml_read(BDF, NULL), -EINVAL);
        assert_memory_equal(&f, &before, sizeof(f));
        /* The good name of the same directory is a directory: unreadable, never followed. */
        assert_int_equal(apml_read(BDF, &f), 0);
        assert_int_equal(f.state, APML_FILE_UNREADABLE);
}

static void test_read_long_path(void **state) {
        char dir[512];
        struct apml_file f;

        /* A runtime directory so long that the path does not fit f.path. */
        snprintf(dir, sizeof(dir), "%s/%0250d", tmpdir, 0);
        assert_int_equal(mkdir(dir, 0755), 0);
        setenv("RUNTIME_DIRECTORY", dir, 1);
        assert_int_equal(apml_read(BDF, &f), 0);
        assert_int_equal(f.state, APML_FILE_UNREADABLE);
        assert_int_equal(f.uw, POWER_UW_UNKNOWN);
        assert_string_not_equal(f.error, "");
}

/* ---- apml_merge --------------------------------------------------------------------------- */

static struct apml_file valid_file(uint64_t uw, uint64_t mtime_usec) {
        struct apml_file f = {
                .state = APML_FILE_VALID,
                .uw = uw,
                .mtime_usec = mtime_usec,
        };

        snprintf(f.path, sizeof(f.path), "/run/amdsmi/apml/" BDF);
        return f;
}

static void test_merge(void **state) {
        struct power_sources s, before;
        struct apml_file f;

        /* No apml source: the file's limit is used. */
        power_sources_init(&s);
        assert_int_equal(power_sources_set(&s, POWER_SOURCE_HOST, NULL, NULL, W(600), "admin", 5),
                         1);
        assert_int_equal(power_sources_set(&s, POWER_SOURCE_VM, "vm1", NULL, W(300), "hook", 6), 1);
        f = valid_file(W(650), 1000);
        assert_int_equal(apml_merge(&s, &f), 1);
        assert_true(s.apml.present);
        assert_int_equal(s.apml.uw, W(650));
        assert_int_equal(s.apml.set_usec, 1000);
        assert_string_equal(s.apml.setter, "apml file /run/amdsmi/apml/" BDF);
        assert_int_equal(s.host.uw, W(600)); /* the others untouched */
        assert_int_equal(s.n_vms, 1);
        assert_int_equal(s.vms[0].uw, W(300));

        /* A limit given through a call after the file was written wins... */
        assert_int_equal(
                power_sources_set(&s, POWER_SOURCE_APML, NULL, NULL, W(550), "uid 0", 2000), 0);
        before = s;
        f = valid_file(W(650), 1999);
        assert_int_equal(apml_merge(&s, &f), 0);
        assert_int_equal(s.apml.uw, W(550));
        assert_string_equal(s.apml.setter, "uid 0");
        assert_int_equal(s.apml.set_usec, 2000);
        assert_memory_equal(&s, &before, sizeof(s));

        /* ...a file written later (or at the same µs) wins over the call. */
        f = valid_file(W(650), 2000);
        assert_int_equal(apml_merge(&s, &f), 1);
        assert_int_equal(s.apml.uw, W(650));
        assert_int_equal(s.apml.set_usec, 2000);
        f = valid_file(W(640), 3000);
        assert_int_equal(apml_merge(&s, &f), 1);
        assert_int_equal(s.apml.uw, W(640));
        assert_int_equal(s.apml.set_usec, 3000);

        /* Only a valid file counts. */
        power_sources_init(&s);
        for (int st = APML_FILE_ABSENT; st <= APML_FILE_UNREADABLE; st++) {
                if (st == APML_FILE_VALID)
                        continue;
                f = valid_file(W(650), 5000);
                f.state = (enum apml_file_state) st;
                assert_int_equal(apml_merge(&s, &f), 0);
                assert_false(s.apml.present);
        }
        assert_int_equal(power_sources_set(&s, POWER_SOURCE_APML, NULL, NULL, W(550), "uid 0", 1),
                         1);
        f = valid_file(W(650), 5000);
        f.state = APML_FILE_MALFORMED;
        assert_int_equal(apml_merge(&s, &f), 0);
        assert_int_equal(s.apml.uw, W(550));

        /* A value the core refuses is not used; NULL is nothing. */
        f = valid_file(0, 5000);
        assert_int_equal(apml_merge(&s, &f), 0);
        assert_int_equal(s.apml.uw, W(550));
        assert_int_equal(apml_merge(NULL, &f), 0);
        assert_int_equal(apml_merge(&s, NULL), 0);
}

static void test_read_then_merge(void **state) {
        struct power_sources s;
        struct apml_file f;

        write_apml(BDF, "700000mW\n", 9, 1764000500, 250);
        assert_int_equal(apml_read(BDF, &f), 0);
        assert_int_equal(f.state, APML_FILE_VALID);
        power_sources_init(&s);
        assert_int_equal(power_sources_set(&s, POWER_SOURCE_APML, NULL, NULL, W(600), "uid 0",
                                           UINT64_C(1764000500000251)),
                         1);
        assert_int_equal(apml_merge(&s, &f), 0); /* the call is 1 µs later */
        assert_int_equal(s.apml.uw, W(600));
        assert_int_equal(power_sources_set(&s, POWER_SOURCE_APML, NULL, NULL, W(600), "uid 0",
                                           UINT64_C(1764000500000249)),
                         0);
        assert_int_equal(apml_merge(&s, &f), 1); /* the file is 1 µs later */
        assert_int_equal(s.apml.uw, W(700));
        assert_int_equal(s.apml.set_usec, UINT64_C(1764000500000250));
        assert_non_null(strstr(s.apml.setter, "apml file "));
        assert_non_null(strstr(s.apml.setter, f.path));
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_parse_good),
                cmocka_unit_test(test_parse_malformed),
                cmocka_unit_test(test_parse_length),
                cmocka_unit_test_setup_teardown(test_strings, setup, teardown),
                cmocka_unit_test_setup_teardown(test_read, setup, teardown),
                cmocka_unit_test_setup_teardown(test_read_bad_bdf, setup, teardown),
                cmocka_unit_test_setup_teardown(test_read_long_path, setup, teardown),
                cmocka_unit_test(test_merge),
                cmocka_unit_test_setup_teardown(test_read_then_merge, setup, teardown),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
