/* SPDX-License-Identifier: MIT */
/* The -g selection syntax and resolution, and the -w / -n parsers of amdsmi(1). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "select.h"

/* clang-format off */
static const struct select_target eight_gpus[] = {
        { "0000:05:00.0", 1 }, { "0000:15:00.0", 1 }, { "0000:65:00.0", 8 },
        { "0000:75:00.0", 1 }, { "0000:85:00.0", 2 }, { "0000:95:00.0", 1 },
        { "0000:c1:00.0", 4 }, { "0001:e5:00.0", 0 },
};
/* clang-format on */
#define N_GPUS (sizeof(eight_gpus) / sizeof(eight_gpus[0]))

/* Parses @arg into a fresh selection; @return selection_add()'s result. */
static int parse(const char *arg, struct selection *sel) {
        *sel = (struct selection){};
        return selection_add(sel, arg);
}

/* Parses and resolves; @return the first error. */
static int resolve(const char *arg, struct select_match *m, size_t *failed) {
        struct selection sel;
        int r = parse(arg, &sel);

        if (r == 0)
                r = selection_resolve(&sel, eight_gpus, N_GPUS, m, failed);
        selection_clear(&sel);
        return r;
}

/* selector_format() spells what selector_parse() takes back (amdsmid's GetDocument gets -g
 * this way), and refuses a pinned partition of a PCI address, which -g cannot spell. */
static void test_format(void **state) {
        static const char *const in[] = { "all", "3", "0.3", "0000:c1:00.0", "c1:00.0" };
        static const char *const out[] = { "all", "3", "0.3", "0000:c1:00.0", "0000:c1:00.0" };
        struct selector s, back;
        char buf[64];

        for (size_t i = 0; i < sizeof(in) / sizeof(in[0]); i++) {
                assert_int_equal(selector_parse(in[i], &s), 0);
                assert_int_equal(selector_format(&s, buf, sizeof(buf)), 0);
                assert_string_equal(buf, out[i]);
                assert_int_equal(selector_parse(buf, &back), 0);
                assert_int_equal(back.kind, s.kind);
                assert_int_equal(back.index, s.index);
                assert_int_equal(back.partition, s.partition);
                assert_string_equal(back.bdf, s.bdf);
        }
        s = (struct selector){ .kind = SELECTOR_BDF, .partition = 2 };
        strcpy(s.bdf, "0000:c1:00.0");
        assert_int_equal(selector_format(&s, buf, sizeof(buf)), -EOPNOTSUPP);
}

static void test_index(void **state) {
        struct selector s;

        assert_int_equal(selector_parse("0", &s), 0);
        assert_int_equal(s.kind, SELECTOR_INDEX);
        assert_int_equal(s.index, 0);
        assert_int_equal(s.partition, SELECT_NO_PARTITION);

        assert_int_equal(selector_parse("7", &s), 0);
        assert_int_equal(s.index, 7);
        assert_int_equal(selector_parse("99", &s), 0);
        assert_int_equal(s.index, 99);
        /* leading zeros are still decimal */
        assert_int_equal(selector_parse("010", &s), 0);
        assert_int_equal(s.index, 10);
        assert_int_equal(selector_parse("4294967295", &s), 0);
        assert_int_equal(s.index, UINT32_MAX);
}

static void test_partition(void **state) {
        struct selector s;

        assert_int_equal(selector_parse("0.3", &s), 0);
        assert_int_equal(s.kind, SELECTOR_INDEX);
        assert_int_equal(s.index, 0);
        assert_int_equal(s.partition, 3);

        assert_int_equal(selector_parse("12.0", &s), 0);
        assert_int_equal(s.index, 12);
        assert_int_equal(s.partition, 0);

        assert_int_equal(selector_parse("0.9", &s), 0);
        assert_int_equal(s.partition, 9);
}

/* A unique id: 16 hex digits (0x allowed, any case); every GPU with it, whole. */
static void test_unique_id(void **state) {
        static const struct select_target gpus[] = {
                { "0000:05:00.0", 1, "637aac6ed49bc25c" },
                { "0000:26:00.0", 4, "0x712290A6B1B365C2" }, /* either spelling */
                { "0000:46:00.0", 1, NULL },
                { "0000:65:00.0", 1, "712290a6b1b365c2" }, /* the same id twice: both */
        };
        struct select_match m[4];
        struct selection sel = {};
        struct selector s;
        size_t failed = 99;
        char buf[64];

        assert_int_equal(selector_parse("637AAC6ED49BC25C", &s), 0);
        assert_int_equal(s.kind, SELECTOR_UNIQUE_ID);
        assert_string_equal(s.unique_id, "637aac6ed49bc25c");
        assert_int_equal(selector_parse("0x637aac6ed49bc25c", &s), 0);
        assert_string_equal(s.unique_id, "637aac6ed49bc25c");
        assert_int_equal(selector_format(&s, buf, sizeof(buf)), 0);
        assert_string_equal(buf, "0x637aac6ed49bc25c");
        selector_describe(&s, buf, sizeof(buf));
        assert_string_equal(buf, "GPU with unique id 0x637aac6ed49bc25c");
        /* 15 or 17 digits, a non-hex digit: not an id (and not an index either) */
        assert_int_equal(selector_parse("637aac6ed49bc25", &s), -EINVAL);
        assert_int_equal(selector_parse("637aac6ed49bc25c0", &s), -EINVAL);
        assert_int_equal(selector_parse("637aac6ed49bc25g", &s), -EINVAL);
        assert_int_equal(selector_parse("0x", &s), -EINVAL);
        /* 16 decimal digits are an id, not an index above 32 bits */
        assert_int_equal(selector_parse("1234567890123456", &s), 0);
        assert_int_equal(s.kind, SELECTOR_UNIQUE_ID);

        assert_int_equal(selection_add(&sel, "712290a6b1b365c2"), 0);
        assert_int_equal(selection_resolve(&sel, gpus, 4, m, &failed), 0);
        assert_true(!m[0].selected && m[1].selected && !m[2].selected && m[3].selected);
        assert_true(m[1].all_partitions);
        selection_clear(&sel);

        assert_int_equal(selection_add(&sel, "0, 0xffffffffffffffff"), 0);
        assert_int_equal(selection_resolve(&sel, gpus, 4, m, &failed), -ENOENT);
        assert_int_equal(failed, 1);
        selection_clear(&sel);
}

static void test_bdf(void **state) {
        struct selector s;

        assert_int_equal(selector_parse("0000:c1:00.0", &s), 0);
        assert_int_equal(s.kind, SELECTOR_BDF);
        assert_string_equal(s.bdf, "0000:c1:00.0");

        /* domain 0 when omitted, case folded */
        assert_int_equal(selector_parse("C1:00.0", &s), 0);
        assert_string_equal(s.bdf, "0000:c1:00.0");
        assert_int_equal(selector_parse("0000:C1:1F.7", &s), 0);
        assert_string_equal(s.bdf, "0000:c1:1f.7");

        /* short fields, long domains */
        assert_int_equal(selector_parse("5:0.1", &s), 0);
        assert_string_equal(s.bdf, "0000:05:00.1");
        assert_int_equal(selector_parse("10000:05:00.0", &s), 0);
        assert_string_equal(s.bdf, "10000:05:00.0");
        assert_int_equal(selector_parse("1:05:00.0", &s), 0);
        assert_string_equal(s.bdf, "0001:05:00.0");
}

static void test_bdf_garbage(void **state) {
        /* clang-format off */
        static const char *const bad[] = {
                "0000:c1:00",      /* no function */
                "0000:c1:00.8",    /* function > 7 */
                "0000:c1:20.0",    /* device > 1f */
                "0000:c1:00.0.3",  /* partitions only after an index */
                "0000:c1:00.00",
                "0000:c1g:00.0",
                "0000:c1:00:0.0",
                ":c1:00.0",
                "c1:.0",
                "c1:00.",
                "c1:00.0:",
                "123456789:c1:00.0", /* domain of 9 digits */
                "0000:123:00.0",
                "0000:c1:123.0",
                "0000:c1.00:0",
                "c1:00.0 ",
                "0000:-1:00.0",
        };
        /* clang-format on */
        struct selector s;

        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                if (selector_parse(bad[i], &s) != -EINVAL)
                        fail_msg("'%s' accepted", bad[i]);
        }
}

static void test_all(void **state) {
        struct selector s;

        assert_int_equal(selector_parse("all", &s), 0);
        assert_int_equal(s.kind, SELECTOR_ALL);
        assert_int_equal(selector_parse("ALL", &s), 0);
        assert_int_equal(s.kind, SELECTOR_ALL);
        assert_int_equal(selector_parse("alll", &s), -EINVAL);
        assert_int_equal(selector_parse("al", &s), -EINVAL);
}

static void test_garbage(void **state) {
        /* clang-format off */
        static const char *const bad[] = {
                "", "-1", "+1", "0.", ".3", "0.3.1", "0x1", "x", "1a", "a1", "0..3", "0 .3",
                "0. 3", " 0", "0 ", "1e3", "0.-1", "0.+1", "0.x", "4294967296",
                "99999999999999999999999", "0.4294967295", "0.4294967296", "1,2", "１",
        };
        /* clang-format on */
        struct selector s;

        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                if (selector_parse(bad[i], &s) != -EINVAL)
                        fail_msg("'%s' accepted", bad[i]);
        }
        assert_int_equal(selector_parse(NULL, &s), -EINVAL);
}

static void test_list(void **state) {
        struct selection sel;

        assert_int_equal(parse("0,1,2.3", &sel), 0);
        assert_int_equal(sel.n_items, 3);
        assert_int_equal(sel.items[0].index, 0);
        assert_int_equal(sel.items[1].index, 1);
        assert_int_equal(sel.items[2].index, 2);
        assert_int_equal(sel.items[2].partition, 3);

        /* repeated -g appends */
        assert_int_equal(selection_add(&sel, "c1:00.0"), 0);
        assert_int_equal(sel.n_items, 4);
        assert_int_equal(sel.items[3].kind, SELECTOR_BDF);
        selection_clear(&sel);
        assert_int_equal(sel.n_items, 0);
        assert_null(sel.items);
}

static void test_whitespace(void **state) {
        struct selection sel;

        assert_int_equal(parse("  0 ,\t1 , 0000:c1:00.0\t", &sel), 0);
        assert_int_equal(sel.n_items, 3);
        assert_int_equal(sel.items[1].index, 1);
        assert_string_equal(sel.items[2].bdf, "0000:c1:00.0");
        selection_clear(&sel);

        assert_int_equal(parse(" all ", &sel), 0);
        assert_int_equal(sel.n_items, 1);
        assert_int_equal(sel.items[0].kind, SELECTOR_ALL);
        selection_clear(&sel);

        /* space inside a selector is garbage */
        assert_int_equal(parse("0 1", &sel), -EINVAL);
        selection_clear(&sel);
        assert_int_equal(parse("0 . 3", &sel), -EINVAL);
        selection_clear(&sel);
}

static void test_empty(void **state) {
        /* clang-format off */
        static const char *const bad[] = { "", " ", "\t", ",", "0,", ",0", "0,,1", "0, ,1",
                                           "all,", NULL };
        /* clang-format on */
        struct selection sel;

        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                if (parse(bad[i], &sel) != -EINVAL)
                        fail_msg("'%s' accepted", bad[i] ? bad[i] : "(null)");
                /* a rejected argument leaves the selection as it was */
                assert_int_equal(sel.n_items, 0);
                selection_clear(&sel);
        }

        /* a bad argument after a good one keeps the good one */
        assert_int_equal(parse("1", &sel), 0);
        assert_int_equal(selection_add(&sel, "2,x"), -EINVAL);
        assert_int_equal(sel.n_items, 1);
        selection_clear(&sel);
}

static void test_long_argument(void **state) {
        char arg[256];
        struct selection sel;

        memset(arg, '0', sizeof(arg) - 1);
        arg[sizeof(arg) - 1] = '\0';
        assert_int_equal(parse(arg, &sel), -EINVAL);
        selection_clear(&sel);
}

static void test_resolve_default(void **state) {
        struct selection sel = {};
        struct select_match m[N_GPUS];

        assert_int_equal(selection_resolve(&sel, eight_gpus, N_GPUS, m, NULL), 0);
        for (size_t i = 0; i < N_GPUS; i++) {
                assert_true(m[i].selected);
                assert_true(m[i].all_partitions);
        }
        /* no GPU, no selector: nothing, no error */
        assert_int_equal(selection_resolve(&sel, eight_gpus, 0, m, NULL), 0);
}

static void test_resolve_index(void **state) {
        struct select_match m[N_GPUS];

        assert_int_equal(resolve("2,7", m, NULL), 0);
        for (size_t i = 0; i < N_GPUS; i++)
                assert_int_equal(m[i].selected, i == 2 || i == 7);
        assert_true(m[2].all_partitions);
        assert_true(select_match_partition(&m[2], 0));
        assert_true(select_match_partition(&m[2], 7));
        assert_false(select_match_partition(&m[0], 0));
}

static void test_resolve_partition(void **state) {
        struct select_match m[N_GPUS];

        assert_int_equal(resolve("2.3,2.5", m, NULL), 0);
        assert_true(m[2].selected);
        assert_false(m[2].all_partitions);
        assert_int_equal(m[2].partitions, (1u << 3) | (1u << 5));
        assert_true(select_match_partition(&m[2], 3));
        assert_true(select_match_partition(&m[2], 5));
        assert_false(select_match_partition(&m[2], 0));
        assert_false(select_match_partition(&m[2], 64));
        assert_false(m[0].selected);

        /* the last partition of a GPU */
        assert_int_equal(resolve("6.3", m, NULL), 0);
        assert_true(select_match_partition(&m[6], 3));
}

static void test_resolve_bdf(void **state) {
        struct select_match m[N_GPUS];

        assert_int_equal(resolve("c1:00.0", m, NULL), 0);
        for (size_t i = 0; i < N_GPUS; i++)
                assert_int_equal(m[i].selected, i == 6);
        assert_int_equal(resolve("0001:E5:00.0", m, NULL), 0);
        assert_true(m[7].selected);
}

static void test_resolve_union(void **state) {
        struct select_match m[N_GPUS];

        /* duplicates collapse */
        assert_int_equal(resolve("1,1,0000:15:00.0,1", m, NULL), 0);
        for (size_t i = 0; i < N_GPUS; i++)
                assert_int_equal(m[i].selected, i == 1);
        assert_true(m[1].all_partitions);

        /* a whole GPU absorbs its partitions, in either order */
        assert_int_equal(resolve("2.3,2", m, NULL), 0);
        assert_true(m[2].all_partitions);
        assert_int_equal(m[2].partitions, 0);
        assert_int_equal(resolve("2,2.3", m, NULL), 0);
        assert_true(m[2].all_partitions);
        assert_int_equal(m[2].partitions, 0);

        /* all absorbs everything */
        assert_int_equal(resolve("all,2.3", m, NULL), 0);
        for (size_t i = 0; i < N_GPUS; i++)
                assert_true(m[i].selected && m[i].all_partitions);
        assert_int_equal(resolve("2.3,all", m, NULL), 0);
        assert_true(m[2].all_partitions);
}

static void test_resolve_not_found(void **state) {
        struct select_match m[N_GPUS];
        size_t failed = 1234;

        assert_int_equal(resolve("99", m, &failed), -ENOENT);
        assert_int_equal(failed, 0);
        assert_int_equal(resolve("0,8", m, &failed), -ENOENT);
        assert_int_equal(failed, 1);
        /* GPU 0 has one partition */
        assert_int_equal(resolve("0.0", m, &failed), 0);
        assert_int_equal(resolve("1,0.9", m, &failed), -ENOENT);
        assert_int_equal(failed, 1);
        assert_int_equal(resolve("0.1", m, &failed), -ENOENT);
        /* GPU 7 has no KFD partition at all */
        assert_int_equal(resolve("7.0", m, &failed), -ENOENT);
        assert_int_equal(resolve("0000:c2:00.0", m, &failed), -ENOENT);
        assert_int_equal(resolve("4294967295", m, &failed), -ENOENT);
        assert_int_equal(resolve("2.4294967294", m, &failed), -ENOENT);

        /* no GPU at all: an index is not found, "all" is empty */
        {
                struct selection sel;

                assert_int_equal(parse("0", &sel), 0);
                assert_int_equal(selection_resolve(&sel, eight_gpus, 0, m, NULL), -ENOENT);
                selection_clear(&sel);
                assert_int_equal(parse("all", &sel), 0);
                assert_int_equal(selection_resolve(&sel, eight_gpus, 0, m, NULL), 0);
                selection_clear(&sel);
        }
}

static void test_describe(void **state) {
        struct selector s;
        char buf[64];

        assert_int_equal(selector_parse("3", &s), 0);
        selector_describe(&s, buf, sizeof(buf));
        assert_string_equal(buf, "GPU 3");
        assert_int_equal(selector_parse("0.3", &s), 0);
        selector_describe(&s, buf, sizeof(buf));
        assert_string_equal(buf, "GPU 0 partition 3");
        assert_int_equal(selector_parse("C1:00.0", &s), 0);
        selector_describe(&s, buf, sizeof(buf));
        assert_string_equal(buf, "GPU 0000:c1:00.0");
        assert_int_equal(selector_parse("all", &s), 0);
        selector_describe(&s, buf, sizeof(buf));
        assert_string_equal(buf, "all");
}

static void test_interval(void **state) {
        /* clang-format off */
        static const char *const bad[] = {
                "", "0", "0.0", "0.000", "-1", "+1", ".5", "5.", "1e3", "0x1", "1,5", " 1",
                "1 ", "abc", "inf", "nan", "31536001", "31536000.5", "99999999999999999999",
                "0.0000000001",
        };
        /* clang-format on */
        uint64_t ns;

        assert_int_equal(parse_interval("1", &ns), 0);
        assert_int_equal(ns, 1000000000u);
        assert_int_equal(parse_interval("0.5", &ns), 0);
        assert_int_equal(ns, 500000000u);
        assert_int_equal(parse_interval("2.25", &ns), 0);
        assert_int_equal(ns, 2250000000u);
        assert_int_equal(parse_interval("0.001", &ns), 0);
        assert_int_equal(ns, 1000000u);
        assert_int_equal(parse_interval("0.000000001", &ns), 0);
        assert_int_equal(ns, 1u);
        /* digits beyond nanoseconds are dropped */
        assert_int_equal(parse_interval("1.0000000019", &ns), 0);
        assert_int_equal(ns, 1000000001u);
        assert_int_equal(parse_interval("31536000", &ns), 0);
        assert_int_equal(ns, UINT64_C(31536000000000000));

        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                if (parse_interval(bad[i], &ns) != -EINVAL)
                        fail_msg("interval '%s' accepted", bad[i]);
        }
}

static void test_count(void **state) {
        /* clang-format off */
        static const char *const bad[] = {
                "", "0", "-1", "+1", "1.5", "0x10", " 1", "1 ", "abc", "18446744073709551616",
                "99999999999999999999",
        };
        /* clang-format on */
        uint64_t n;

        assert_int_equal(parse_count("1", &n), 0);
        assert_int_equal(n, 1);
        assert_int_equal(parse_count("100", &n), 0);
        assert_int_equal(n, 100);
        assert_int_equal(parse_count("18446744073709551609", &n), 0);
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                if (parse_count(bad[i], &n) != -EINVAL)
                        fail_msg("count '%s' accepted", bad[i]);
        }
}

/* A watch pins index selectors to the BDFs they first resolved to. */
static void test_pin(void **state) {
        /* GPU 0 went away: the same machine, one GPU fewer, the others move up an index */
        static const struct select_target seven_gpus[] = {
                { "0000:15:00.0", 1 }, { "0000:65:00.0", 8 }, { "0000:75:00.0", 1 },
                { "0000:85:00.0", 2 }, { "0000:95:00.0", 1 }, { "0000:c1:00.0", 4 },
                { "0001:e5:00.0", 0 },
        };
        struct select_match m[N_GPUS];
        struct selection sel;
        size_t failed = 99;
        char buf[64];

        assert_int_equal(parse("2.5,1,all", &sel), 0);
        selection_pin(&sel, eight_gpus, N_GPUS);
        assert_int_equal(sel.items[0].kind, SELECTOR_BDF);
        assert_string_equal(sel.items[0].bdf, "0000:65:00.0");
        assert_int_equal(sel.items[0].partition, 5);
        assert_int_equal(sel.items[1].kind, SELECTOR_BDF);
        assert_string_equal(sel.items[1].bdf, "0000:15:00.0");
        assert_int_equal(sel.items[1].partition, SELECT_NO_PARTITION);
        assert_int_equal(sel.items[2].kind, SELECTOR_ALL);
        selector_describe(&sel.items[0], buf, sizeof(buf));
        assert_string_equal(buf, "GPU 0000:65:00.0 partition 5");
        selection_clear(&sel);

        /* pinned, "0" follows 0000:05:00.0 and fails once it is gone */
        assert_int_equal(parse("0", &sel), 0);
        selection_pin(&sel, eight_gpus, N_GPUS);
        assert_int_equal(selection_resolve(&sel, eight_gpus, N_GPUS, m, NULL), 0);
        assert_true(m[0].selected && m[0].all_partitions);
        assert_int_equal(selection_resolve(&sel, seven_gpus, 7, m, &failed), -ENOENT);
        assert_int_equal(failed, 0);
        selection_clear(&sel);

        /* pinned "2.5" keeps its partition on the GPU's new index; a partition that is gone
         * fails */
        assert_int_equal(parse("2.5", &sel), 0);
        selection_pin(&sel, eight_gpus, N_GPUS);
        assert_int_equal(selection_resolve(&sel, seven_gpus, 7, m, NULL), 0);
        assert_true(m[1].selected);
        assert_false(m[1].all_partitions);
        assert_true(select_match_partition(&m[1], 5));
        assert_false(select_match_partition(&m[1], 4));
        assert_false(m[2].selected);
        sel.items[0].partition = 8;
        assert_int_equal(selection_resolve(&sel, seven_gpus, 7, m, &failed), -ENOENT);
        selection_clear(&sel);

        /* an index past the GPUs present stays an index (resolution reports it) */
        assert_int_equal(parse("12", &sel), 0);
        selection_pin(&sel, eight_gpus, N_GPUS);
        assert_int_equal(sel.items[0].kind, SELECTOR_INDEX);
        selection_clear(&sel);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_format),
                cmocka_unit_test(test_unique_id),
                cmocka_unit_test(test_index),
                cmocka_unit_test(test_partition),
                cmocka_unit_test(test_bdf),
                cmocka_unit_test(test_bdf_garbage),
                cmocka_unit_test(test_all),
                cmocka_unit_test(test_garbage),
                cmocka_unit_test(test_list),
                cmocka_unit_test(test_whitespace),
                cmocka_unit_test(test_empty),
                cmocka_unit_test(test_long_argument),
                cmocka_unit_test(test_resolve_default),
                cmocka_unit_test(test_resolve_index),
                cmocka_unit_test(test_resolve_partition),
                cmocka_unit_test(test_resolve_bdf),
                cmocka_unit_test(test_resolve_union),
                cmocka_unit_test(test_resolve_not_found),
                cmocka_unit_test(test_describe),
                cmocka_unit_test(test_interval),
                cmocka_unit_test(test_count),
                cmocka_unit_test(test_pin),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
