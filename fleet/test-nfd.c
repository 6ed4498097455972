/* SPDX-License-Identifier: MIT */
/* The NFD feature file (nfd.c) for hand-made machines: the exact text of a uniform CPX/NPS4
 * server, mixed products and layouts, a gim host, a guest, no GPU, pending memory modes, the
 * profile and sanitized values, and the expiry directive (first, RFC 3339 UTC, now + expiry). */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "nfd.h"

#define P NFD_LABEL_PREFIX
/* 2026-12-05T10:00:00Z */
#define NOW ((time_t) 1796464800)

static char *render(const struct nfd_input *in, time_t now, unsigned expiry_s) {
        char *text = NULL;

        assert_int_equal(nfd_render(in, now, expiry_s, &text), 0);
        assert_non_null(text);
        return text;
}

/* @line is a whole line of @text */
static bool has_line(const char *text, const char *line) {
        size_t n = strlen(line);

        for (const char *p = text; (p = strstr(p, line)); p++)
                if ((p == text || p[-1] == '\n') && p[n] == '\n')
                        return true;
        return false;
}

#define assert_line(text, line)                                                    \
        do {                                                                       \
                if (!has_line((text), (line)))                                     \
                        fail_msg("missing line: %s\n--- in:\n%s", (line), (text)); \
        } while (0)

#define assert_no(text, s)                                                    \
        do {                                                                  \
                if (strstr((text), (s)))                                      \
                        fail_msg("unexpected: %s\n--- in:\n%s", (s), (text)); \
        } while (0)

/* Every line a comment or a label of ours whose name and value Kubernetes takes. */
static void assert_well_formed(const char *text) {
        const char *line = text;

        assert_true(strncmp(text, "# +expiry-time=", 15) == 0);
        assert_true(text[strlen(text) - 1] == '\n');
        while (*line) {
                const char *nl = strchr(line, '\n'), *eq;
                char name[128], value[128];

                assert_non_null(nl);
                if (line[0] != '#') {
                        eq = memchr(line, '=', (size_t) (nl - line));
                        assert_non_null(eq);
                        assert_true(strncmp(line, P, strlen(P)) == 0);
                        assert_true(eq - line < (ptrdiff_t) sizeof(name));
                        assert_true(nl - eq < (ptrdiff_t) sizeof(value));
                        snprintf(name, sizeof(name), "%.*s", (int) (eq - line), line);
                        snprintf(value, sizeof(value), "%.*s", (int) (nl - eq - 1), eq + 1);
                        /* the name after "feature.node.kubernetes.io/" and the value */
                        assert_true(nfd_label_value_valid(strchr(name, '/') + 1));
                        assert_true(nfd_label_value_valid(value));
                }
                line = nl + 1;
        }
        assert_no(text, "amd.com/");
}

#define GPU(product, role, c, m, parts) \
        { (product), (role), (c), (m), NULL, (parts) }

/* Eight MI300X in CPX/NPS4: the whole file, byte by byte. */
static void test_uniform_cpx_nps4(void **state) {
        struct nfd_gpu g[8];
        struct nfd_input in = {
                .gpus = g, .n_gpus = 8, .profile = "training", .sync_state = "success"
        };
        char *t;

        for (size_t i = 0; i < 8; i++)
                g[i] = (struct nfd_gpu) GPU("MI300X", "baremetal", "CPX", "NPS4", 8);
        t = render(&in, NOW, NFD_EXPIRY_S);
        /* clang-format off */
        assert_string_equal(t, "# +expiry-time=2026-12-05T10:05:00Z\n"
                               "# amdsmid's GPU labels (amdsmid(8) KUBERNETES), rewritten while "
                               "it runs\n"
                               P "present=true\n"
                               P "count=8\n"
                               P "product=MI300X\n"
                               P "role=baremetal\n"
                               P "partitions=64\n"
                               P "partition-layout=cpx_nps4\n"
                               P "profile=training\n"
                               P "sync-state=success\n");
        /* clang-format on */
        assert_well_formed(t);
        free(t);
}

/* Two products, two layouts, two roles: "mixed", and a count per product. */
static void test_mixed(void **state) {
        struct nfd_gpu g[] = {
                GPU("MI300X", "baremetal", "SPX", "NPS1", 1),
                GPU("MI325X", "baremetal", "CPX", "NPS4", 8),
                GPU("MI300X", "host-pf", "SPX", "NPS1", 1),
        };
        struct nfd_input in = { .gpus = g, .n_gpus = 3, .sync_state = "pending" };
        char *t = render(&in, NOW, 60);

        assert_line(t, P "count=3");
        assert_line(t, P "product=mixed");
        assert_line(t, P "count.MI300X=2");
        assert_line(t, P "count.MI325X=1");
        assert_line(t, P "role=mixed");
        assert_line(t, P "partitions=10");
        assert_line(t, P "partition-layout=mixed");
        assert_line(t, P "sync-state=pending");
        assert_no(t, "profile=");
        assert_no(t, "partition-layout-pending");
        assert_well_formed(t);
        free(t);

        /* one GPU whose modes are unknown (its driver went away): not uniform either */
        g[1] = (struct nfd_gpu) GPU("MI300X", "baremetal", NULL, "", 0);
        g[2].role = "baremetal";
        t = render(&in, NOW, 60);
        assert_line(t, P "product=MI300X");
        assert_no(t, "count.");
        assert_line(t, P "role=baremetal");
        assert_line(t, P "partitions=2");
        assert_line(t, P "partition-layout=mixed");
        assert_well_formed(t);
        free(t);
}

/* A gim host: its PFs are the GPUs, the VFs it gives to VMs are not. A guest: its VFs are. */
static void test_roles(void **state) {
        struct nfd_gpu host[] = {
                GPU("MI300X", "host-pf", "CPX", "NPS4", 0),
                GPU("MI300X", "host-pf", "CPX", "NPS4", 0),
                GPU("MI300X VF", "vf", NULL, NULL, 0),
                GPU("MI300X VF", "vf", NULL, NULL, 0),
                GPU("MI300X VF", "vf", NULL, NULL, 0),
        };
        struct nfd_gpu guest[] = { GPU("MI300X VF", "vf-guest-multi", "CPX", "NPS1", 1) };
        struct nfd_input in = { .gpus = host, .n_gpus = 5, .sync_state = "success" };
        char *t = render(&in, NOW, 60);

        assert_line(t, P "count=2");
        assert_line(t, P "product=MI300X");
        assert_line(t, P "role=host-pf");
        assert_line(t, P "partitions=0");
        assert_line(t, P "partition-layout=cpx_nps4");
        assert_well_formed(t);
        free(t);

        in = (struct nfd_input){ .gpus = guest, .n_gpus = 1, .sync_state = "success" };
        t = render(&in, NOW, 60);
        assert_line(t, P "count=1");
        assert_line(t, P "product=MI300X");
        assert_line(t, P "role=vf-guest-multi");
        assert_line(t, P "partition-layout=cpx_nps1");
        assert_well_formed(t);
        free(t);

        /* a host whose only functions are VFs it serves: no GPU of its own */
        in = (struct nfd_input){ .gpus = host + 2, .n_gpus = 3, .sync_state = "success" };
        t = render(&in, NOW, 60);
        assert_line(t, P "present=false");
        assert_line(t, P "count=0");
        assert_no(t, "product=");
        assert_no(t, "partition");
        assert_line(t, P "sync-state=success");
        assert_well_formed(t);
        free(t);
}

/* No GPU at all, no profile, no sync state: present=false and the count only. */
static void test_no_gpu(void **state) {
        struct nfd_input in = {};
        char *t = render(&in, NOW, NFD_EXPIRY_S);

        /* clang-format off */
        assert_string_equal(t, "# +expiry-time=2026-12-05T10:05:00Z\n"
                               "# amdsmid's GPU labels (amdsmid(8) KUBERNETES), rewritten while "
                               "it runs\n"
                               P "present=false\n"
                               P "count=0\n");
        /* clang-format on */
        free(t);
}

/* A memory mode waiting for a driver reload: the layout stays the current one, the pending
 * layout says what the reload brings, also when only some GPUs wait. */
static void test_pending(void **state) {
        struct nfd_gpu g[4];
        struct nfd_input in = { .gpus = g, .n_gpus = 4, .sync_state = "reload-required" };
        char *t;

        for (size_t i = 0; i < 4; i++)
                g[i] = (struct nfd_gpu){ "MI300X", "baremetal", "CPX", "NPS1", "NPS4", 8 };
        t = render(&in, NOW, 60);
        assert_line(t, P "partition-layout=cpx_nps1");
        assert_line(t, P "partition-layout-pending=cpx_nps4");
        assert_line(t, P "sync-state=reload-required");
        assert_well_formed(t);
        free(t);

        g[3].pending_memory = NULL;
        t = render(&in, NOW, 60);
        assert_line(t, P "partition-layout=cpx_nps1");
        assert_line(t, P "partition-layout-pending=mixed");
        free(t);

        /* a pending mode equal to the current one is none */
        for (size_t i = 0; i < 4; i++)
                g[i].pending_memory = "NPS1";
        t = render(&in, NOW, 60);
        assert_no(t, "pending=");
        free(t);

        /* the memory mode unknown (an APU with a fixed NPS): the compute mode alone */
        for (size_t i = 0; i < 4; i++)
                g[i] = (struct nfd_gpu) GPU("MI300A", "baremetal", "SPX", NULL, 1);
        t = render(&in, NOW, 60);
        assert_line(t, P "partition-layout=spx");
        free(t);
}

/* Values that are no label values: made ones, or left out. */
static void test_sanitize(void **state) {
        char long_name[100], buf[NFD_LABEL_MAX + 1];
        struct nfd_gpu g[] = { GPU("AMD GPU 0x74a5 (rev c1)", "baremetal", "SPX", "NPS1", 1) };
        struct nfd_input in = {
                .gpus = g, .n_gpus = 1, .profile = "bad name", .sync_state = "success"
        };
        char *t = render(&in, NOW, 60);

        assert_line(t, P "product=AMD_GPU_0x74a5__rev_c1");
        assert_no(t, "profile=");
        assert_well_formed(t);
        free(t);

        memset(long_name, 'x', sizeof(long_name) - 1);
        long_name[sizeof(long_name) - 1] = '\0';
        g[0].product = long_name;
        in.profile = "-ok-";
        t = render(&in, NOW, 60);
        assert_no(t, "profile=");
        assert_well_formed(t);
        free(t);

        assert_int_equal(nfd_label_value(long_name, buf), 63);
        assert_int_equal(nfd_label_value("  _MI300X_ ", buf), 6);
        assert_string_equal(buf, "MI300X");
        assert_int_equal(nfd_label_value("-_.", buf), 0);
        assert_string_equal(buf, "");
        assert_int_equal(nfd_label_value("a/b=c\nd", buf), 7);
        assert_string_equal(buf, "a_b_c_d");
        assert_int_equal(nfd_label_value(NULL, buf), 0);
        assert_true(nfd_label_value_valid("a"));
        assert_true(nfd_label_value_valid("cpx_nps4"));
        assert_true(nfd_label_value_valid("reload-required"));
        assert_false(nfd_label_value_valid(""));
        assert_false(nfd_label_value_valid("a-"));
        assert_false(nfd_label_value_valid("a b"));
        assert_false(nfd_label_value_valid(long_name));

        /* a product with no letter or digit */
        g[0].product = "???";
        t = render(&in, NOW, 60);
        assert_line(t, P "product=unknown");
        free(t);
}

/* The directive: the first line, RFC 3339 in UTC, @now + @expiry_s, whatever TZ says. */
static void test_expiry(void **state) {
        struct nfd_input in = {};
        char *t;

        setenv("TZ", "America/New_York", 1);
        tzset();
        t = render(&in, NOW, 0);
        assert_true(strncmp(t, "# +expiry-time=2026-12-05T10:00:00Z\n", 36) == 0);
        free(t);
        t = render(&in, NOW + 59, 300);
        assert_true(strncmp(t, "# +expiry-time=2026-12-05T10:05:59Z\n", 36) == 0);
        free(t);
        /* across a year's end */
        t = render(&in, (time_t) 1798761599, 1); /* 2026-12-31T23:59:59Z */
        assert_true(strncmp(t, "# +expiry-time=2027-01-01T00:00:00Z\n", 36) == 0);
        free(t);
        unsetenv("TZ");
        tzset();
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_uniform_cpx_nps4),
                cmocka_unit_test(test_mixed),
                cmocka_unit_test(test_roles),
                cmocka_unit_test(test_no_gpu),
                cmocka_unit_test(test_pending),
                cmocka_unit_test(test_sanitize),
                cmocka_unit_test(test_expiry),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
