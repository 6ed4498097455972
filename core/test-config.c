/* SPDX-License-Identifier: MIT */
/* config.c: amdsmid.conf(5) — the defaults, a missing file, $CONFIGURATION_DIRECTORY, the
 * [gpu] / [gpu BDF] merge, the ranges, and every error with its exact message and line. Files
 * live in a temporary directory. */
#include "amdsmid-conf.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
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

#include "macro.h"
#include "parse-util.h"

#define NAME "amdsmid.conf"
#define W(x) ((uint64_t) (x) *UINT64_C(1000000))
/* A literal that may hold NUL bytes, and its size. */
#define DATA(s) s, sizeof(s) - 1

/* ---- helpers ---------------------------------------------------------------------------- */

static struct config *parse_ok(const char *text) {
        struct config *c = NULL;
        char err[512] = "stale";
        int r;

        r = config_parse_string(NAME, text, &c, err, sizeof(err));
        if (r < 0)
                fail_msg("unexpected error %d: %s\ninput:\n%s", r, err, text);
        assert_non_null(c);
        assert_string_equal(err, "");
        return c;
}

/* The exact message and error code, and *ret untouched. */
static void expect_error_buf(const char *text, size_t size, int r, const char *msg) {
        struct config sentinel, *c = &sentinel;
        char err[512] = "";
        int k;

        k = config_parse_buffer(NAME, text, size, &c, err, sizeof(err));
        if (k != r || strcmp(err, msg) != 0)
                fail_msg("input:\n%.*s\nexpected %d \"%s\"\n     got %d \"%s\"", (int) size, text,
                         r, msg, k, err);
        assert_ptr_equal(c, &sentinel);
}

static void expect_error(const char *text, int r, const char *msg) {
        expect_error_buf(text, strlen(text), r, msg);
}

static char *make_dir(void) {
        char tmpl[] = "/tmp/test-config.XXXXXX";
        char *d = mkdtemp(tmpl);

        assert_non_null(d);
        return strdup(d);
}

static char *put(const char *dir, const char *name, const char *data, size_t size) {
        char *path = NULL;
        FILE *f;

        assert_true(asprintf(&path, "%s/%s", dir, name) > 0);
        f = fopen(path, "we");
        assert_non_null(f);
        assert_int_equal(fwrite(data, 1, size, f), size);
        assert_int_equal(fclose(f), 0);
        return path;
}

static void rm_rf(const char *path) {
        char cmd[PATH_MAX + 16];

        assert_true(strncmp(path, "/tmp/test-config.", 17) == 0);
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", path);
        assert_int_equal(system(cmd), 0);
}

static void assert_gpu_unset(const struct config_gpu *g) {
        assert_int_equal(g->compute, AMDSMI_COMPUTE_UNKNOWN);
        assert_int_equal(g->memory, AMDSMI_MEMORY_UNKNOWN);
        assert_false(g->power_cap_set);
        assert_false(g->num_vfs_set);
}

/* ---- tests ------------------------------------------------------------------------------ */

static void test_defaults(void **state) {
        const char *texts[] = {
                "",
                "\n\n",
                "# nothing but comments\n; and this\n   # indented\n",
                "[daemon]\n",
                "[daemon]\n[gpu]\n",
        };

        for (size_t i = 0; i < ELEMENTSOF(texts); i++) {
                _cleanup_(config_freep) struct config *c = parse_ok(texts[i]);

                assert_true(c->exists);
                assert_string_equal(c->path, NAME);
                assert_int_equal(c->poll_interval_ms, 2000);
                assert_int_equal(c->history_max_bytes, 1024 * 1024);
                assert_int_equal(c->n_gpus, i == 4 ? 1 : 0);
                if (i == 4) {
                        assert_string_equal(c->gpus[0].bdf, "");
                        assert_int_equal(c->gpus[0].line, 2);
                        assert_gpu_unset(&c->gpus[0]);
                }
        }
}

static void test_example(void **state) {
        _cleanup_(config_freep) struct config *c = NULL;

        c = parse_ok("# /etc/amdsmi/amdsmid.conf\n"                                 /* 1 */
                     "[daemon]\n"                                                   /* 2 */
                     "poll_interval_ms = 2000     # the cheap periodic check\n"     /* 3 */
                     "history_max_kib = 4096      # history.jsonl rotates beyond\n" /* 4 */
                     "\n"                                                           /* 5 */
                     "[gpu]                       # every GPU\n"                    /* 6 */
                     "power_cap = 600W\n"                                           /* 7 */
                     "\n"                                                           /* 8 */
                     "[gpu 0000:05:00.0]          # one GPU\n"                      /* 9 */
                     "compute_mode = CPX          # SPX DPX TPX QPX CPX\n"          /* 10 */
                     "memory_mode = NPS4\n"                                         /* 11 */
                     "power_cap = 550             ; a bare number is watts\n"       /* 12 */
                     "num_vfs = 8\n"                                                /* 13 */
                     "[gpu C1:00.0]\n"                                              /* 14 */
                     "  compute_mode=dpx\n"                                         /* 15 */
                     "\tmemory_mode\t=\tnps2\t\n");                                 /* 16 */

        assert_int_equal(c->poll_interval_ms, 2000);
        assert_int_equal(c->history_max_bytes, 4096 * 1024);
        assert_int_equal(c->n_gpus, 3);

        assert_string_equal(c->gpus[0].bdf, "");
        assert_int_equal(c->gpus[0].line, 6);
        assert_true(c->gpus[0].power_cap_set);
        assert_int_equal(c->gpus[0].power_cap_uw, W(600));
        assert_int_equal(c->gpus[0].compute, AMDSMI_COMPUTE_UNKNOWN);
        assert_int_equal(c->gpus[0].memory, AMDSMI_MEMORY_UNKNOWN);
        assert_false(c->gpus[0].num_vfs_set);

        assert_string_equal(c->gpus[1].bdf, "0000:05:00.0");
        assert_int_equal(c->gpus[1].line, 9);
        assert_int_equal(c->gpus[1].compute, AMDSMI_COMPUTE_CPX);
        assert_int_equal(c->gpus[1].memory, AMDSMI_MEMORY_NPS4);
        assert_true(c->gpus[1].power_cap_set);
        assert_int_equal(c->gpus[1].power_cap_uw, W(550));
        assert_true(c->gpus[1].num_vfs_set);
        assert_int_equal(c->gpus[1].num_vfs, 8);

        assert_string_equal(c->gpus[2].bdf, "0000:c1:00.0");
        assert_int_equal(c->gpus[2].line, 14);
        assert_int_equal(c->gpus[2].compute, AMDSMI_COMPUTE_DPX);
        assert_int_equal(c->gpus[2].memory, AMDSMI_MEMORY_NPS2);
        assert_false(c->gpus[2].power_cap_set);
        assert_false(c->gpus[2].num_vfs_set);
}

/* [gpu] is gpus[0] even when it comes last; [gpu all] is the same section. */
static void test_gpu_all_first(void **state) {
        _cleanup_(config_freep) struct config *c = NULL;

        c = parse_ok("[gpu 0000:05:00.0]\n"
                     "num_vfs = 0\n"
                     "[gpu 0000:06:00.0]\n"
                     "[ gpu   all ]\n"
                     "compute_mode = SPX\n");
        assert_int_equal(c->n_gpus, 3);
        assert_string_equal(c->gpus[0].bdf, "");
        assert_int_equal(c->gpus[0].line, 4);
        assert_int_equal(c->gpus[0].compute, AMDSMI_COMPUTE_SPX);
        assert_string_equal(c->gpus[1].bdf, "0000:05:00.0");
        assert_true(c->gpus[1].num_vfs_set);
        assert_int_equal(c->gpus[1].num_vfs, 0);
        assert_string_equal(c->gpus[2].bdf, "0000:06:00.0");
        assert_gpu_unset(&c->gpus[2]);
}

static void test_bdf_forms(void **state) {
        static const struct {
                const char *section, *bdf;
        } cases[] = {
                { "[gpu 0000:05:00.0]", "0000:05:00.0" },
                { "[gpu 0000:C1:1F.7]", "0000:c1:1f.7" },
                { "[gpu c1:00.0]", "0000:c1:00.0" },
                { "[gpu AB:01.3]", "0000:ab:01.3" },
                { "[gpu 10000:e1:00.0]", "10000:e1:00.0" },     /* a VMD domain */
                { "[gpu 000abcd:e1:00.0]", "000abcd:e1:00.0" }, /* 7 digits: the most */
                { "[gpu\t0001:05:00.0]", "0001:05:00.0" },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_(config_freep) struct config *c = NULL;
                char text[128];

                snprintf(text, sizeof(text), "%s\nnum_vfs = %zu\n", cases[i].section, i);
                c = parse_ok(text);
                assert_int_equal(c->n_gpus, 1);
                assert_string_equal(c->gpus[0].bdf, cases[i].bdf);
                assert_int_equal(c->gpus[0].num_vfs, i);
        }
}

static void test_values(void **state) {
        static const struct {
                const char *line;
                enum amdsmi_compute_mode compute;
                enum amdsmi_memory_mode memory;
                uint64_t cap_uw;
        } cases[] = {
                { "compute_mode = SPX", AMDSMI_COMPUTE_SPX, AMDSMI_MEMORY_UNKNOWN, 0 },
                { "compute_mode = dpx", AMDSMI_COMPUTE_DPX, AMDSMI_MEMORY_UNKNOWN, 0 },
                { "compute_mode = Tpx", AMDSMI_COMPUTE_TPX, AMDSMI_MEMORY_UNKNOWN, 0 },
                { "compute_mode = QPX", AMDSMI_COMPUTE_QPX, AMDSMI_MEMORY_UNKNOWN, 0 },
                { "compute_mode = cpx", AMDSMI_COMPUTE_CPX, AMDSMI_MEMORY_UNKNOWN, 0 },
                { "memory_mode = NPS1", AMDSMI_COMPUTE_UNKNOWN, AMDSMI_MEMORY_NPS1, 0 },
                { "memory_mode = nps2", AMDSMI_COMPUTE_UNKNOWN, AMDSMI_MEMORY_NPS2, 0 },
                { "memory_mode = NPS4", AMDSMI_COMPUTE_UNKNOWN, AMDSMI_MEMORY_NPS4, 0 },
                { "memory_mode = Nps8", AMDSMI_COMPUTE_UNKNOWN, AMDSMI_MEMORY_NPS8, 0 },
                { "power_cap = 550", AMDSMI_COMPUTE_UNKNOWN, AMDSMI_MEMORY_UNKNOWN, W(550) },
                { "power_cap = 550W", AMDSMI_COMPUTE_UNKNOWN, AMDSMI_MEMORY_UNKNOWN, W(550) },
                { "power_cap = 550000mW", AMDSMI_COMPUTE_UNKNOWN, AMDSMI_MEMORY_UNKNOWN, W(550) },
                { "power_cap = 0.55kW", AMDSMI_COMPUTE_UNKNOWN, AMDSMI_MEMORY_UNKNOWN, W(550) },
                { "power_cap = 550 W", AMDSMI_COMPUTE_UNKNOWN, AMDSMI_MEMORY_UNKNOWN, W(550) },
                { "power_cap = 450.5W", AMDSMI_COMPUTE_UNKNOWN, AMDSMI_MEMORY_UNKNOWN,
                  UINT64_C(450500000) },
                { "power_cap = 1W", AMDSMI_COMPUTE_UNKNOWN, AMDSMI_MEMORY_UNKNOWN, W(1) },
                { "power_cap = 4294.967295W", AMDSMI_COMPUTE_UNKNOWN, AMDSMI_MEMORY_UNKNOWN,
                  UINT64_C(4294967295) },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_(config_freep) struct config *c = NULL;
                char text[128];

                snprintf(text, sizeof(text), "[gpu]\n%s\n", cases[i].line);
                c = parse_ok(text);
                assert_int_equal(c->n_gpus, 1);
                assert_int_equal(c->gpus[0].compute, cases[i].compute);
                assert_int_equal(c->gpus[0].memory, cases[i].memory);
                assert_int_equal(c->gpus[0].power_cap_set, cases[i].cap_uw > 0);
                if (cases[i].cap_uw > 0)
                        assert_int_equal(c->gpus[0].power_cap_uw, cases[i].cap_uw);
                assert_false(c->gpus[0].num_vfs_set);
        }
}

/* [libvirt]: the connection amdsmid watches the domains on and the hook's deadline. */
static void test_libvirt(void **state) {
        _cleanup_(config_freep) struct config *d = parse_ok("[gpu]\npower_cap = 500\n");
        _cleanup_(config_freep) struct config *c =
                parse_ok("[libvirt]\nuri = qemu+ssh://root@host/system\nhook_timeout_s = 45\n");

        assert_string_equal(d->libvirt_uri, "qemu:///system");
        assert_int_equal(d->hook_timeout_s, 20);
        assert_string_equal(c->libvirt_uri, "qemu+ssh://root@host/system");
        assert_int_equal(c->hook_timeout_s, 45);
        {
                _cleanup_(config_freep) struct config *off = parse_ok("[libvirt]\nuri = none\n");

                assert_string_equal(off->libvirt_uri, "");
        }
        expect_error("[libvirt]\nuri = system\n", -EINVAL,
                     NAME ":2: bad uri \"system\" (a libvirt connection URI such as "
                          "qemu:///system, or none)");
        expect_error("[libvirt]\nuri = qemu:///sys tem\n", -EINVAL,
                     NAME ":2: bad uri \"qemu:///sys tem\" (a libvirt connection URI such as "
                          "qemu:///system, or none)");
        expect_error("[libvirt]\nhook_timeout_s = 2.5\n", -EINVAL,
                     NAME ":2: bad hook_timeout_s \"2.5\" (a whole number, 1..600)");
        expect_error("[libvirt]\nuri = test:///default\n[libvirt]\n", -EINVAL,
                     NAME ":3: section [libvirt] given twice (first on line 1)");
        expect_error("[libvirt]\npoll_interval_ms = 100\n", -EINVAL,
                     NAME ":2: unknown key \"poll_interval_ms\" in [libvirt] (uri, "
                          "hook_timeout_s)");
}

/* [metrics]: the sampler's period. */
static void test_metrics(void **state) {
        _cleanup_(config_freep) struct config *d = parse_ok("[gpu]\npower_cap = 500\n");
        _cleanup_(config_freep) struct config *c = parse_ok("[metrics]\ninterval_ms = 250\n");

        assert_int_equal(d->metrics_interval_ms, 1000);
        assert_int_equal(c->metrics_interval_ms, 250);
        expect_error("[metrics]\ninterval_ms = 0.5s\n", -EINVAL,
                     NAME ":2: bad interval_ms \"0.5s\" (a whole number, 100..60000)");
        expect_error("[metrics]\n[metrics]\n", -EINVAL,
                     NAME ":2: section [metrics] given twice (first on line 1)");
        expect_error("[metrics]\npoll_interval_ms = 100\n", -EINVAL,
                     NAME ":2: unknown key \"poll_interval_ms\" in [metrics] (interval_ms, "
                          "identity, textfile)");
        expect_error("[daemon]\ninterval_ms = 100\n", -EINVAL,
                     NAME ":2: unknown key \"interval_ms\" in [daemon] (poll_interval_ms, "
                          "history_max_kib, profile)");
}

/* [kubernetes] nfd_features: the default (the standard file when its directory exists), a file
 * of the admin's, no; every refused spelling named. */
static void test_kubernetes(void **state) {
        _cleanup_(config_freep) struct config *d = parse_ok("[gpu]\npower_cap = 500\n");
        _cleanup_(config_freep) struct config *c =
                parse_ok("[kubernetes]\nnfd_features = /run/nfd/features.d/gpu\n");
        _cleanup_(config_freep) struct config *n = parse_ok("[kubernetes]\nnfd_features = no\n");

        assert_int_equal(d->nfd, CONFIG_NFD_AUTO);
        assert_null(d->nfd_features);
        assert_int_equal(c->nfd, CONFIG_NFD_PATH);
        assert_string_equal(c->nfd_features, "/run/nfd/features.d/gpu");
        assert_int_equal(n->nfd, CONFIG_NFD_NO);
        assert_null(n->nfd_features);
        assert_string_equal(CONFIG_NFD_FEATURES_DEFAULT,
                            "/etc/kubernetes/node-feature-discovery/features.d/amdsmi");

#define BAD_NFD(v)                                                                               \
        NAME ":2: bad nfd_features \"" v "\" (no, or an absolute file name not starting with "  \
             "'.', such as /etc/kubernetes/node-feature-discovery/features.d/amdsmi)"
        expect_error("[kubernetes]\nnfd_features = amdsmi\n", -EINVAL, BAD_NFD("amdsmi"));
        expect_error("[kubernetes]\nnfd_features = yes\n", -EINVAL, BAD_NFD("yes"));
        expect_error("[kubernetes]\nnfd_features = /etc/features.d/\n", -EINVAL,
                     BAD_NFD("/etc/features.d/"));
        expect_error("[kubernetes]\nnfd_features = /etc/features.d/.amdsmi\n", -EINVAL,
                     BAD_NFD("/etc/features.d/.amdsmi"));
        expect_error("[kubernetes]\nnfd_features = /etc/features.d/..\n", -EINVAL,
                     BAD_NFD("/etc/features.d/.."));
        expect_error("[kubernetes]\nnfd_features = /etc/../features.d/amdsmi\n", -EINVAL,
                     BAD_NFD("/etc/../features.d/amdsmi"));
        expect_error("[kubernetes]\nnfd_features = /etc/./features.d/amdsmi\n", -EINVAL,
                     BAD_NFD("/etc/./features.d/amdsmi"));
#undef BAD_NFD
        expect_error("[kubernetes]\nnfd_features = no\nnfd_features = /a/b\n", -EINVAL,
                     NAME ":3: key \"nfd_features\" given twice in [kubernetes] (first on line 2)");
        expect_error("[kubernetes]\n[kubernetes]\n", -EINVAL,
                     NAME ":2: section [kubernetes] given twice (first on line 1)");
        expect_error("[kubernetes]\ntextfile = /a/b.prom\n", -EINVAL,
                     NAME ":2: unknown key \"textfile\" in [kubernetes] (nfd_features)");
        expect_error("[metrics]\nnfd_features = no\n", -EINVAL,
                     NAME ":2: unknown key \"nfd_features\" in [metrics] (interval_ms, "
                          "identity, textfile)");
}

/* [metrics] identity and textfile: the defaults (identity shown, no textfile), the values
 * taken, and every refused spelling named. */
static void test_metrics_exporter(void **state) {
        _cleanup_(config_freep) struct config *d = parse_ok("[metrics]\ninterval_ms = 250\n");
        _cleanup_(config_freep) struct config *c = parse_ok(
                "[metrics]\nidentity = no\ntextfile = /var/lib/prometheus/node-exporter/"
                "amdsmi.prom\n");
        _cleanup_(config_freep) struct config *y = parse_ok("[metrics]\nidentity = yes\n");

        assert_true(d->metrics_identity);
        assert_null(d->metrics_textfile);
        assert_false(c->metrics_identity);
        assert_string_equal(c->metrics_textfile, "/var/lib/prometheus/node-exporter/amdsmi.prom");
        assert_true(y->metrics_identity);
        assert_null(y->metrics_textfile);
        expect_error("[metrics]\nidentity = false\n", -EINVAL,
                     NAME ":2: bad identity \"false\" (yes or no)");
#define TEXTFILE_RULE                                                                          \
        "(an absolute file name ending in .prom, the files node_exporter reads, such as "      \
        "/var/lib/prometheus/node-exporter/amdsmi.prom)"
        expect_error("[metrics]\ntextfile = amdsmi.prom\n", -EINVAL,
                     NAME ":2: bad textfile \"amdsmi.prom\" " TEXTFILE_RULE);
        expect_error("[metrics]\ntextfile = /var/lib/prometheus/\n", -EINVAL,
                     NAME ":2: bad textfile \"/var/lib/prometheus/\" " TEXTFILE_RULE);
        expect_error("[metrics]\ntextfile = /var/lib/../etc/x.prom\n", -EINVAL,
                     NAME ":2: bad textfile \"/var/lib/../etc/x.prom\" " TEXTFILE_RULE);
        expect_error("[metrics]\ntextfile = /var/lib/..\n", -EINVAL,
                     NAME ":2: bad textfile \"/var/lib/..\" " TEXTFILE_RULE);
        /* node_exporter reads *.prom only: another name would be written and never read */
        expect_error("[metrics]\ntextfile = /var/lib/amdsmi.txt\n", -EINVAL,
                     NAME ":2: bad textfile \"/var/lib/amdsmi.txt\" " TEXTFILE_RULE);
        expect_error("[metrics]\ntextfile = /var/lib/.prom\n", -EINVAL,
                     NAME ":2: bad textfile \"/var/lib/.prom\" " TEXTFILE_RULE);
#undef TEXTFILE_RULE
        expect_error("[metrics]\ntextfile = /a.prom\ntextfile = /b.prom\n", -EINVAL,
                     NAME ":3: key \"textfile\" given twice in [metrics] (first on line 2)");
        expect_error("[gpu]\nidentity = no\n", -EINVAL,
                     NAME ":2: unknown key \"identity\" in [gpu] (compute_mode, memory_mode, "
                          "power_cap, num_vfs, enforce, perf_level, "
                  "perf_determinism_sclk_mhz, sclk_min_mhz, sclk_max_mhz, mclk_max_mhz, "
                  "soc_pstate, xgmi_plpd)");
}

/* [power] enforce and its per-GPU override: the default, the merge both ways, the errors. */
static void test_power(void **state) {
        _cleanup_(config_freep) struct config *none = parse_ok("[gpu]\npower_cap = 500\n");
        _cleanup_(config_freep) struct config *on = NULL, *off = NULL, *all = NULL;
        struct config_gpu d;

        /* default: report only */
        assert_false(none->power_enforce);
        memset(&d, 0xaa, sizeof(d));
        assert_true(config_desired(none, "0000:05:00.0", &d));
        assert_false(d.enforce);
        assert_false(d.enforce_set);
        memset(&d, 0xaa, sizeof(d));
        assert_false(config_desired(NULL, "0000:05:00.0", &d));
        assert_false(d.enforce);
        assert_false(d.enforce_set);

        /* [power] on, one GPU off; a policy alone desires nothing */
        on = parse_ok("[power]\nenforce = yes   # the default of every GPU\n"
                      "[gpu 0000:05:00.0]\nenforce = no\n"
                      "[gpu 0000:06:00.0]\n");
        assert_true(on->power_enforce);
        memset(&d, 0xaa, sizeof(d));
        assert_false(config_desired(on, "0000:05:00.0", &d));
        assert_false(d.enforce);
        assert_true(d.enforce_set);
        assert_int_equal(d.line, 3);
        assert_false(config_desired(on, "06:00.0", &d));
        assert_true(d.enforce);
        assert_false(d.enforce_set);
        assert_false(config_desired(on, "0000:c1:00.0", &d));
        assert_true(d.enforce);

        /* [power] off (also: no [power]), one GPU on */
        off = parse_ok("[gpu 05:00.0]\nenforce = yes\npower_cap = 600\n[power]\nenforce = no\n");
        assert_false(off->power_enforce);
        assert_true(config_desired(off, "0000:05:00.0", &d));
        assert_true(d.enforce);
        assert_true(d.enforce_set);
        assert_int_equal(d.power_cap_uw, W(600));
        assert_false(config_desired(off, "0000:06:00.0", &d));
        assert_false(d.enforce);

        /* [gpu] between the two: [gpu BDF] over [gpu] over [power] */
        all = parse_ok("[gpu]\nenforce = yes\n[gpu 0000:05:00.0]\nenforce = no\n");
        assert_false(all->power_enforce);
        assert_false(config_desired(all, "0000:05:00.0", &d));
        assert_false(d.enforce);
        assert_false(config_desired(all, "0000:06:00.0", &d));
        assert_true(d.enforce);
        assert_true(d.enforce_set);

        /* errors name the line and the key */
        expect_error("[power]\nenforce = on\n", -EINVAL, NAME ":2: bad enforce \"on\" (yes or no)");
        expect_error("[power]\nenforce = Yes\n", -EINVAL,
                     NAME ":2: bad enforce \"Yes\" (yes or no)");
        expect_error("[gpu 0000:05:00.0]\npower_cap = 500\nenforce = 1\n", -EINVAL,
                     NAME ":3: bad enforce \"1\" (yes or no)");
        expect_error("[power]\nenforce =\n", -EINVAL,
                     NAME ":2: key \"enforce\" has an empty value");
        expect_error("[power]\nenforce = yes\nenforce = no\n", -EINVAL,
                     NAME ":3: key \"enforce\" given twice in [power] (first on line 2)");
        expect_error("[power]\nenforce = yes\n[gpu]\n\n[power]\n", -EINVAL,
                     NAME ":5: section [power] given twice (first on line 1)");
        expect_error("[power]\npower_cap = 500\n", -EINVAL,
                     NAME ":2: unknown key \"power_cap\" in [power] (enforce)");
        expect_error("[daemon]\nenforce = yes\n", -EINVAL,
                     NAME ":2: unknown key \"enforce\" in [daemon] (poll_interval_ms, "
                          "history_max_kib, profile)");
        expect_error("[metrics]\nenforce = yes\n", -EINVAL,
                     NAME ":2: unknown key \"enforce\" in [metrics] (interval_ms, identity, "
                          "textfile)");
        expect_error("enforce = yes\n[power]\n", -EINVAL,
                     NAME ":1: key \"enforce\" outside a section");
        expect_error("[Power]\n", -EINVAL,
                     NAME ":1: unknown section [Power] ([daemon], [gpu], [gpu all], [gpu BDF], "
                          "[health], [kubernetes], [libvirt], [metrics], [power], [profile NAME], [profile NAME gpu BDF])");
}

/* Both ends of every range are accepted, one past them is refused with -ERANGE. */
static void test_ranges(void **state) {
        static const struct {
                const char *section, *key;
                uint64_t min, max;
        } ranges[] = {
                { "daemon", "poll_interval_ms", 100, 600000 },
                { "daemon", "history_max_kib", 16, 1048576 },
                { "gpu", "num_vfs", 0, 65535 },
                { "libvirt", "hook_timeout_s", 1, 600 },
                { "metrics", "interval_ms", 100, 60000 },
        };

        for (size_t i = 0; i < ELEMENTSOF(ranges); i++)
                for (int end = 0; end < 2; end++) {
                        _cleanup_(config_freep) struct config *c = NULL;
                        uint64_t v = end == 0 ? ranges[i].min : ranges[i].max;
                        char text[128], msg[256];

                        snprintf(text, sizeof(text), "[%s]\n%s = %" PRIu64 "\n", ranges[i].section,
                                 ranges[i].key, v);
                        c = parse_ok(text);
                        if (i == 0)
                                assert_int_equal(c->poll_interval_ms, v);
                        else if (i == 1)
                                assert_int_equal(c->history_max_bytes, v * 1024);
                        else if (i == 3)
                                assert_int_equal(c->hook_timeout_s, v);
                        else if (i == 4)
                                assert_int_equal(c->metrics_interval_ms, v);
                        else {
                                assert_true(c->gpus[0].num_vfs_set);
                                assert_int_equal(c->gpus[0].num_vfs, v);
                        }

                        if (end == 0 && v == 0)
                                continue; /* below 0 is not a number: see test_errors */
                        v = end == 0 ? v - 1 : v + 1;
                        snprintf(text, sizeof(text), "[%s]\n%s = %" PRIu64 "\n", ranges[i].section,
                                 ranges[i].key, v);
                        snprintf(msg, sizeof(msg),
                                 NAME ":2: %s %" PRIu64 " out of range (%" PRIu64 "..%" PRIu64 ")",
                                 ranges[i].key, v, ranges[i].min, ranges[i].max);
                        expect_error(text, -ERANGE, msg);
                }

        /* power_cap: 1 W .. 4294.967295 W */
        expect_error("[gpu]\npower_cap = 0.999999W\n", -ERANGE,
                     NAME ":2: power_cap 0.999999W below 1 W");
        expect_error("[gpu]\npower_cap = 0\n", -ERANGE, NAME ":2: power_cap 0 below 1 W");
        expect_error("[gpu]\npower_cap = 999mW\n", -ERANGE, NAME ":2: power_cap 999mW below 1 W");
        expect_error("[gpu]\npower_cap = 4294.967296W\n", -ERANGE,
                     NAME ":2: power_cap 4294.967296W above 4294.967295 W (the most power1_cap "
                          "takes)");
        expect_error("[gpu]\npower_cap = 5kW\n", -ERANGE,
                     NAME ":2: power_cap 5kW above 4294.967295 W (the most power1_cap takes)");
        expect_error("[gpu]\npower_cap = 99999999999999999999\n", -ERANGE,
                     NAME ":2: power_cap 99999999999999999999 above 4294.967295 W (the most "
                          "power1_cap takes)");
        expect_error("[daemon]\npoll_interval_ms = 99999999999999999999\n", -ERANGE,
                     NAME ":2: poll_interval_ms 99999999999999999999 out of range "
                          "(100..600000)");
}

static void test_errors(void **state) {
        static const struct {
                const char *text;
                int r;
                const char *msg;
        } cases[] = {
                /* the line layer */
                { "[gpu]\n\x01power_cap = 5\n", -EINVAL, ":2: control character 0x01" },
                { "[gpu]\npower_cap = 5\x7f\n", -EINVAL, ":2: control character 0x7f" },
                { "[gpu]\npower_cap = 5\r0\n", -EINVAL, ":2: control character 0x0d" },
                { "[gpu]\ncompute_mode = CPX\xff\n", -EINVAL,
                  ":2: not UTF-8 (byte 0xff; only comments may hold such bytes)" },
                { "[gpu]\ncompute_mode = \xc3\x28\n", -EINVAL,
                  ":2: not UTF-8 (byte 0xc3; only comments may hold such bytes)" },
                { "[gpu]\ncompute_mode = \xc0\xafPX\n", -EINVAL, /* overlong '/' */
                  ":2: not UTF-8 (byte 0xc0; only comments may hold such bytes)" },
                { "[gpu]\ncompute_mode = \xed\xa0\x80\n", -EINVAL, /* a surrogate */
                  ":2: not UTF-8 (byte 0xed; only comments may hold such bytes)" },
                { "[gpu]\ncompute_mode = \xe2\x82\n", -EINVAL, /* cut short */
                  ":2: not UTF-8 (byte 0xe2; only comments may hold such bytes)" },
                { "[gpu]\ncompute_mode = C\xc3\xa9PX\n", -EINVAL, /* UTF-8, but no mode */
                  ":2: bad compute_mode \"C\xc3\xa9PX\" (SPX, DPX, TPX, QPX, CPX)" },
                { "[gpu\n", -EINVAL, ":1: missing \"]\" in section header" },
                { "[gpu] x\n", -EINVAL, ":1: unexpected text after \"]\"" },
                { "[gpu]]\n", -EINVAL, ":1: unexpected text after \"]\"" },
                { "[gpu]\npower_cap\n", -EINVAL, ":2: expected \"key = value\" or \"[section]\"" },
                { "[gpu]\n= 550\n", -EINVAL, ":2: expected \"key = value\" or \"[section]\"" },
                { "[gpu]\npower_cap: 550\n", -EINVAL,
                  ":2: expected \"key = value\" or \"[section]\"" },
                { "[gpu]\nnum_vfs:x = 1\n", -EINVAL, /* libinih would split at ':' */
                  ":2: expected \"key = value\" or \"[section]\"" },
                /* no multi-line values: an indented line is a line of its own */
                { "[gpu]\npower_cap = 550\n    600\n", -EINVAL,
                  ":3: expected \"key = value\" or \"[section]\"" },

                /* sections */
                { "[gpus]\n", -EINVAL,
                  ":1: unknown section [gpus] ([daemon], [gpu], [gpu all], [gpu BDF], [health], [kubernetes], [libvirt], [metrics], [power], [profile NAME], [profile NAME gpu BDF])" },
                { "# c\n\n[GPU]\n", -EINVAL,
                  ":3: unknown section [GPU] ([daemon], [gpu], [gpu all], [gpu BDF], [health], [kubernetes], [libvirt], [metrics], [power], [profile NAME], [profile NAME gpu BDF])" },
                { "[]\n", -EINVAL,
                  ":1: unknown section [] ([daemon], [gpu], [gpu all], [gpu BDF], [health], [kubernetes], [libvirt], [metrics], [power], [profile NAME], [profile NAME gpu BDF])" },
                { "[gpu0000:05:00.0]\n", -EINVAL,
                  ":1: unknown section [gpu0000:05:00.0] ([daemon], [gpu], [gpu all], [gpu BDF], [health], [kubernetes], [libvirt], [metrics], [power], [profile NAME], [profile NAME gpu BDF])" },
                { "[daemon x]\n", -EINVAL,
                  ":1: unknown section [daemon x] ([daemon], [gpu], [gpu all], [gpu BDF], [health], [kubernetes], [libvirt], [metrics], [power], [profile NAME], [profile NAME gpu BDF])" },
                { "[gpu 0000:05:00]\n", -EINVAL,
                  ":1: malformed PCI address \"0000:05:00\" in [gpu 0000:05:00] (DDDD:BB:DD.F or "
                  "BB:DD.F, e.g. 0000:05:00.0)" },
                { "[gpu 0000:05:00.8]\n", -EINVAL,
                  ":1: malformed PCI address \"0000:05:00.8\" in [gpu 0000:05:00.8] (DDDD:BB:DD.F "
                  "or BB:DD.F, e.g. 0000:05:00.0)" },
                { "[gpu 0000:05:20.0]\n", -EINVAL,
                  ":1: malformed PCI address \"0000:05:20.0\" in [gpu 0000:05:20.0] (DDDD:BB:DD.F "
                  "or BB:DD.F, e.g. 0000:05:00.0)" },
                { "[gpu 000:05:00.0]\n", -EINVAL,
                  ":1: malformed PCI address \"000:05:00.0\" in [gpu 000:05:00.0] (DDDD:BB:DD.F "
                  "or BB:DD.F, e.g. 0000:05:00.0)" },
                { "[gpu 00000000:05:00.0]\n", -EINVAL,
                  ":1: malformed PCI address \"00000000:05:00.0\" in [gpu 00000000:05:00.0] "
                  "(DDDD:BB:DD.F or BB:DD.F, e.g. 0000:05:00.0)" },
                { "[gpu zz:00.0]\n", -EINVAL,
                  ":1: malformed PCI address \"zz:00.0\" in [gpu zz:00.0] (DDDD:BB:DD.F or "
                  "BB:DD.F, e.g. 0000:05:00.0)" },
                { "[gpu 0000:05:00.0 0000:06:00.0]\n", -EINVAL,
                  ":1: malformed PCI address \"0000:05:00.0 0000:06:00.0\" in [gpu 0000:05:00.0 "
                  "0000:06:00.0] (DDDD:BB:DD.F or BB:DD.F, e.g. 0000:05:00.0)" },
                { "[gpu ALL]\n", -EINVAL,
                  ":1: malformed PCI address \"ALL\" in [gpu ALL] (DDDD:BB:DD.F or BB:DD.F, "
                  "e.g. 0000:05:00.0)" },
                { "[daemon]\n[gpu]\n[daemon]\n", -EINVAL,
                  ":3: section [daemon] given twice (first on line 1)" },
                { "[gpu 0000:05:00.0]\n[gpu 0000:05:00.0]\n", -EINVAL,
                  ":2: section [gpu 0000:05:00.0] given twice (first on line 1)" },
                { "[gpu 0000:05:00.0]\n[gpu 05:00.0]\n", -EINVAL,
                  ":2: section [gpu 05:00.0] given twice (first on line 1)" },
                { "[gpu 0000:c1:00.0]\nnum_vfs = 1\n[gpu 0000:C1:00.0]\n", -EINVAL,
                  ":3: section [gpu 0000:C1:00.0] given twice (first on line 1)" },
                { "[gpu]\n\n[gpu all]\n", -EINVAL,
                  ":3: section [gpu all] given twice (first on line 1)" },
                { "[gpu all]\n[gpu]\n", -EINVAL,
                  ":2: section [gpu] given twice (first on line 1)" },

                /* keys */
                { "power_cap = 550\n", -EINVAL, ":1: key \"power_cap\" outside a section" },
                { "# first\n\nnum_vfs = 1\n[gpu]\n", -EINVAL,
                  ":3: key \"num_vfs\" outside a section" },
                { "[gpu 0000:05:00.0]\nmemory_mode = NPS1\n\n# the wrong name\n\n\n"
                  "compute = CPX\n",
                  -EINVAL,
                  ":7: unknown key \"compute\" in [gpu 0000:05:00.0] (compute_mode, memory_mode, "
                  "power_cap, num_vfs, enforce, perf_level, "
                  "perf_determinism_sclk_mhz, sclk_min_mhz, sclk_max_mhz, mclk_max_mhz, "
                  "soc_pstate, xgmi_plpd)" },
                { "[gpu]\nCompute_Mode = CPX\n", -EINVAL,
                  ":2: unknown key \"Compute_Mode\" in [gpu] (compute_mode, memory_mode, "
                  "power_cap, num_vfs, enforce, perf_level, "
                  "perf_determinism_sclk_mhz, sclk_min_mhz, sclk_max_mhz, mclk_max_mhz, "
                  "soc_pstate, xgmi_plpd)" },
                { "[gpu]\npoll_interval_ms = 1000\n", -EINVAL,
                  ":2: unknown key \"poll_interval_ms\" in [gpu] (compute_mode, memory_mode, "
                  "power_cap, num_vfs, enforce, perf_level, "
                  "perf_determinism_sclk_mhz, sclk_min_mhz, sclk_max_mhz, mclk_max_mhz, "
                  "soc_pstate, xgmi_plpd)" },
                { "[daemon]\ncompute_mode = CPX\n", -EINVAL,
                  ":2: unknown key \"compute_mode\" in [daemon] (poll_interval_ms, "
                  "history_max_kib, profile)" },
                { "[daemon]\npoll interval = 1000\n", -EINVAL,
                  ":2: unknown key \"poll interval\" in [daemon] (poll_interval_ms, "
                  "history_max_kib, profile)" },
                { "[gpu]\npower_cap = 500\ncompute_mode = SPX\npower_cap = 600\n", -EINVAL,
                  ":4: key \"power_cap\" given twice in [gpu] (first on line 2)" },
                { "[daemon]\npoll_interval_ms = 1000\n[gpu]\n[daemon]\n", -EINVAL,
                  ":4: section [daemon] given twice (first on line 1)" },
                { "[daemon]\nhistory_max_kib = 64\nhistory_max_kib = 64\n", -EINVAL,
                  ":3: key \"history_max_kib\" given twice in [daemon] (first on line 2)" },
                { "[gpu]\npower_cap =\n", -EINVAL, ":2: key \"power_cap\" has an empty value" },
                { "[gpu]\ncompute_mode =    # none\n", -EINVAL,
                  ":2: key \"compute_mode\" has an empty value" },
                { "[daemon]\npoll_interval_ms=\n", -EINVAL,
                  ":2: key \"poll_interval_ms\" has an empty value" },

                /* values */
                { "[gpu]\ncompute_mode = UNKNOWN\n", -EINVAL,
                  ":2: bad compute_mode \"UNKNOWN\" (SPX, DPX, TPX, QPX, CPX)" },
                { "[gpu]\ncompute_mode = CP\n", -EINVAL,
                  ":2: bad compute_mode \"CP\" (SPX, DPX, TPX, QPX, CPX)" },
                { "[gpu]\ncompute_mode = \"CPX\"\n", -EINVAL,
                  ":2: bad compute_mode \"\"CPX\"\" (SPX, DPX, TPX, QPX, CPX)" },
                { "[gpu]\ncompute_mode = CPX NPS4\n", -EINVAL,
                  ":2: bad compute_mode \"CPX NPS4\" (SPX, DPX, TPX, QPX, CPX)" },
                { "[gpu]\nmemory_mode = NPS5\n", -EINVAL,
                  ":2: bad memory_mode \"NPS5\" (NPS1, NPS2, NPS3, NPS4, NPS6, NPS8)" },
                { "[gpu]\nmemory_mode = unknown\n", -EINVAL,
                  ":2: bad memory_mode \"unknown\" (NPS1, NPS2, NPS3, NPS4, NPS6, NPS8)" },
                { "[gpu]\nmemory_mode = CPX\n", -EINVAL,
                  ":2: bad memory_mode \"CPX\" (NPS1, NPS2, NPS3, NPS4, NPS6, NPS8)" },
                { "[gpu]\npower_cap = lots\n", -EINVAL,
                  ":2: bad power_cap \"lots\" (watts: 550, 550W, 550000mW, 0.55kW)" },
                { "[gpu]\npower_cap = -5\n", -EINVAL,
                  ":2: bad power_cap \"-5\" (watts: 550, 550W, 550000mW, 0.55kW)" },
                { "[gpu]\npower_cap = 550MW\n", -EINVAL,
                  ":2: bad power_cap \"550MW\" (watts: 550, 550W, 550000mW, 0.55kW)" },
                { "[gpu]\npower_cap = 5e2\n", -EINVAL,
                  ":2: bad power_cap \"5e2\" (watts: 550, 550W, 550000mW, 0.55kW)" },
                { "[gpu]\npower_cap = 550  W\n", -EINVAL,
                  ":2: bad power_cap \"550  W\" (watts: 550, 550W, 550000mW, 0.55kW)" },
                { "[gpu]\nnum_vfs = -1\n", -EINVAL,
                  ":2: bad num_vfs \"-1\" (a whole number, 0..65535)" },
                { "[gpu]\nnum_vfs = 0x10\n", -EINVAL,
                  ":2: bad num_vfs \"0x10\" (a whole number, 0..65535)" },
                { "[gpu]\nnum_vfs = 8 VFs\n", -EINVAL,
                  ":2: bad num_vfs \"8 VFs\" (a whole number, 0..65535)" },
                { "[gpu]\nnum_vfs = +8\n", -EINVAL,
                  ":2: bad num_vfs \"+8\" (a whole number, 0..65535)" },
                { "[daemon]\npoll_interval_ms = 2s\n", -EINVAL,
                  ":2: bad poll_interval_ms \"2s\" (a whole number, 100..600000)" },
                { "[daemon]\nhistory_max_kib = 1.5\n", -EINVAL,
                  ":2: bad history_max_kib \"1.5\" (a whole number, 16..1048576)" },
                { "[gpu]\nnum_vfs = 1 = 2\n", -EINVAL,
                  ":2: bad num_vfs \"1 = 2\" (a whole number, 0..65535)" },

                /* the first error is the one reported */
                { "[gpu]\nnum_vfs = x\n[bogus]\n", -EINVAL,
                  ":2: bad num_vfs \"x\" (a whole number, 0..65535)" },
                { "[bogus]\nnum_vfs = x\n", -EINVAL,
                  ":1: unknown section [bogus] ([daemon], [gpu], [gpu all], [gpu BDF], [health], [kubernetes], [libvirt], [metrics], [power], [profile NAME], [profile NAME gpu BDF])" },
                { "[gpu]\r\nnum_vfs = 1\r\nnum_vfs = 2\r\n", -EINVAL,
                  ":3: key \"num_vfs\" given twice in [gpu] (first on line 2)" },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                char msg[512];

                snprintf(msg, sizeof(msg), NAME "%s", cases[i].msg);
                expect_error(cases[i].text, cases[i].r, msg);
        }
}

/* What libinih alone would cut, take in two or ignore. */
static void test_lines(void **state) {
        _cleanup_(config_freep) struct config *c = NULL;
        _cleanup_free_ char *text = NULL;
        char line[512];
        size_t n;

        /* libinih holds 197 bytes of a line: the content up to there is fine, one more is not */
        memset(line, ' ', sizeof(line));
        n = (size_t) snprintf(line, sizeof(line), "compute_mode =");
        line[n] = ' ';
        memcpy(line + 197 - 3, "CPX", 3);
        line[197] = '\0';
        assert_true(asprintf(&text, "[gpu]\n%s\n", line) > 0);
        c = parse_ok(text);
        assert_int_equal(c->gpus[0].compute, AMDSMI_COMPUTE_CPX);
        c = config_free(c);
        free(text);

        line[197 - 3] = ' ';
        memcpy(line + 198 - 3, "CPX", 4);
        assert_true(asprintf(&text, "[gpu]\n\n%s\n", line) > 0);
        expect_error(text, -EINVAL,
                     NAME ":3: line too long (198 bytes before its comment, at most "
                          "197)");
        free(text);

        /* a value longer than the buffer is not cut into a value and a line */
        memset(line, '9', sizeof(line));
        memcpy(line, "num_vfs = ", 10);
        line[300] = '\0';
        assert_true(asprintf(&text, "[gpu]\n%s\n", line) > 0);
        expect_error(text, -EINVAL,
                     NAME ":2: line too long (300 bytes before its comment, at most "
                          "197)");
        free(text);

        /* a long comment is fine, and so are bytes that are not UTF-8 in comments */
        memset(line, 'x', sizeof(line));
        line[450] = '\0';
        assert_true(asprintf(&text,
                             "# %s\n"
                             "[gpu]  # \xff\xfe latin-1: \xe9t\xe9\n"
                             "num_vfs = 4 ; %s \x80\n"
                             "; \xc0\xaf\n",
                             line, line) > 0);
        c = parse_ok(text);
        assert_int_equal(c->gpus[0].num_vfs, 4);
        c = config_free(c);

        /* CRLF, a UTF-8 BOM, blanks and tabs, '#' and ';' right after a value */
        c = parse_ok("\xef\xbb\xbf[gpu]\r\n"
                     "\t power_cap\t= 600W#no space needed\r\n"
                     "num_vfs=2;\r\n"
                     "\r\n");
        assert_int_equal(c->gpus[0].power_cap_uw, W(600));
        assert_int_equal(c->gpus[0].num_vfs, 2);
        assert_int_equal(c->gpus[0].line, 1);
        c = config_free(c);

        /* no newline at the end */
        c = parse_ok("[gpu 05:00.0]\nnum_vfs = 3");
        assert_int_equal(c->gpus[0].num_vfs, 3);
        c = config_free(c);

        /* a BOM elsewhere than at the start is content (and a bad section) */
        expect_error("[gpu]\n\xef\xbb\xbf[daemon]\n", -EINVAL,
                     NAME ":2: expected \"key = value\" or \"[section]\"");

        /* NUL bytes, even in comments; a string ends at its first NUL */
        expect_error_buf(DATA("[gpu]\nnum_vfs = 1\0\n"), -EINVAL, NAME ":2: NUL byte");
        expect_error_buf(DATA("[gpu]\n# a \0 in a comment\nnum_vfs = 1\n"), -EINVAL,
                         NAME ":2: NUL byte");
        c = parse_ok("[gpu]\nnum_vfs = 1\0num_vfs = 2\n");
        assert_int_equal(c->gpus[0].num_vfs, 1);
        c = config_free(c);

        /* a message that does not fit is cut, never overrun */
        {
                struct config *none = NULL;
                char small[12];

                memset(small, 'z', sizeof(small));
                assert_int_equal(config_parse_string(NAME, "[x]\n", &none, small, sizeof(small)),
                                 -EINVAL);
                assert_null(none);
                assert_string_equal(small, "amdsmid.con"); /* cut at 11 bytes and a NUL */
                assert_int_equal(config_parse_string(NAME, "[x]\n", &none, NULL, 0), -EINVAL);
                assert_null(none);
        }
}

static void test_merge(void **state) {
        _cleanup_(config_freep) struct config *c = NULL, *only = NULL, *none = NULL;
        struct config_gpu d;

        c = parse_ok("[gpu 0000:05:00.0]\n"
                     "power_cap = 550\n"
                     "memory_mode = NPS4\n"
                     "[gpu]\n"
                     "power_cap = 600W\n"
                     "compute_mode = SPX\n"
                     "num_vfs = 2\n"
                     "[gpu 0000:06:00.0]\n"
                     "compute_mode = CPX\n"
                     "num_vfs = 0\n");

        /* [gpu BDF] over [gpu] */
        memset(&d, 0xaa, sizeof(d));
        assert_true(config_desired(c, "0000:05:00.0", &d));
        assert_string_equal(d.bdf, "0000:05:00.0");
        assert_int_equal(d.line, 1);
        assert_int_equal(d.compute, AMDSMI_COMPUTE_SPX);
        assert_int_equal(d.memory, AMDSMI_MEMORY_NPS4);
        assert_true(d.power_cap_set);
        assert_int_equal(d.power_cap_uw, W(550));
        assert_true(d.num_vfs_set);
        assert_int_equal(d.num_vfs, 2);

        /* another spelling of the same GPU */
        memset(&d, 0xaa, sizeof(d));
        assert_true(config_desired(c, "06:00.0", &d));
        assert_string_equal(d.bdf, "0000:06:00.0");
        assert_int_equal(d.line, 8);
        assert_int_equal(d.compute, AMDSMI_COMPUTE_CPX);
        assert_int_equal(d.memory, AMDSMI_MEMORY_UNKNOWN);
        assert_int_equal(d.power_cap_uw, W(600));
        assert_true(d.num_vfs_set);
        assert_int_equal(d.num_vfs, 0); /* 0 over 2: set, not absent */

        /* a GPU without a section of its own: [gpu] alone */
        memset(&d, 0xaa, sizeof(d));
        assert_true(config_desired(c, "0000:C1:00.0", &d));
        assert_string_equal(d.bdf, "0000:c1:00.0");
        assert_int_equal(d.line, 4);
        assert_int_equal(d.compute, AMDSMI_COMPUTE_SPX);
        assert_int_equal(d.memory, AMDSMI_MEMORY_UNKNOWN);
        assert_int_equal(d.power_cap_uw, W(600));
        assert_int_equal(d.num_vfs, 2);

        /* no [gpu]: a GPU without a section desires nothing */
        only = parse_ok("[gpu 0000:05:00.0]\nnum_vfs = 4\n[gpu 0000:07:00.0]\n");
        memset(&d, 0xaa, sizeof(d));
        assert_false(config_desired(only, "0000:06:00.0", &d));
        assert_string_equal(d.bdf, "0000:06:00.0");
        assert_int_equal(d.line, 0);
        assert_gpu_unset(&d);
        assert_true(config_desired(only, "0000:05:00.0", &d));
        assert_int_equal(d.num_vfs, 4);
        assert_int_equal(d.compute, AMDSMI_COMPUTE_UNKNOWN);
        assert_false(d.power_cap_set);
        /* a section without keys desires nothing either */
        assert_false(config_desired(only, "0000:07:00.0", &d));
        assert_int_equal(d.line, 3);

        /* no file at all */
        none = parse_ok("");
        assert_false(config_desired(none, "0000:05:00.0", &d));
        assert_gpu_unset(&d);
        assert_false(config_desired(NULL, "0000:05:00.0", &d));
        assert_gpu_unset(&d);
}

static void test_unknown_gpus(void **state) {
        _cleanup_(config_freep) struct config *c = NULL, *empty = NULL;
        const char *present[] = { "0000:05:00.0", "0000:C1:00.0" };
        char **l;

        c = parse_ok("[gpu 0000:c1:00.0]\n[gpu]\n[gpu 0000:09:00.0]\n[gpu 05:00.0]\n"
                     "[gpu 0000:0a:00.0]\n");

        l = config_unknown_gpus(c, present, ELEMENTSOF(present));
        assert_non_null(l);
        assert_int_equal(strv_length(l), 2);
        assert_string_equal(l[0], "0000:09:00.0");
        assert_string_equal(l[1], "0000:0a:00.0");
        strv_free(l);

        l = config_unknown_gpus(c, NULL, 0);
        assert_non_null(l);
        assert_int_equal(strv_length(l), 4);
        assert_string_equal(l[0], "0000:c1:00.0");
        assert_string_equal(l[3], "0000:0a:00.0");
        strv_free(l);

        empty = parse_ok("[gpu]\nnum_vfs = 1\n");
        l = config_unknown_gpus(empty, present, ELEMENTSOF(present));
        assert_non_null(l);
        assert_null(l[0]);
        strv_free(l);
}

static void test_path(void **state) {
        char buf[4096];

        assert_int_equal(unsetenv("CONFIGURATION_DIRECTORY"), 0);
        assert_int_equal(config_path(buf, sizeof(buf)), 0);
        assert_string_equal(buf, AMDSMID_CONF_PATH);
        assert_true(strlen(AMDSMID_CONF_PATH) > strlen("/amdsmi/amdsmid.conf"));
        assert_string_equal(buf + strlen(buf) - strlen("/amdsmi/amdsmid.conf"),
                            "/amdsmi/amdsmid.conf");

        assert_int_equal(setenv("CONFIGURATION_DIRECTORY", "/tmp/cfg", 1), 0);
        assert_int_equal(config_path(buf, sizeof(buf)), 0);
        assert_string_equal(buf, "/tmp/cfg/amdsmid.conf");

        assert_int_equal(setenv("CONFIGURATION_DIRECTORY", "/tmp/one:/tmp/two", 1), 0);
        assert_int_equal(config_path(buf, sizeof(buf)), 0);
        assert_string_equal(buf, "/tmp/one/amdsmid.conf");

        /* empty or relative: not systemd's */
        assert_int_equal(setenv("CONFIGURATION_DIRECTORY", "", 1), 0);
        assert_int_equal(config_path(buf, sizeof(buf)), 0);
        assert_string_equal(buf, AMDSMID_CONF_PATH);
        assert_int_equal(setenv("CONFIGURATION_DIRECTORY", "etc", 1), 0);
        assert_int_equal(config_path(buf, sizeof(buf)), 0);
        assert_string_equal(buf, AMDSMID_CONF_PATH);

        memset(buf, 'q', sizeof(buf));
        assert_int_equal(setenv("CONFIGURATION_DIRECTORY", "/tmp/cfg", 1), 0);
        assert_int_equal(config_path(buf, strlen("/tmp/cfg/amdsmid.conf")), -ENAMETOOLONG);
        assert_int_equal(config_path(buf, strlen("/tmp/cfg/amdsmid.conf") + 1), 0);
        assert_string_equal(buf, "/tmp/cfg/amdsmid.conf");

        assert_int_equal(unsetenv("CONFIGURATION_DIRECTORY"), 0);
}

static void test_load(void **state) {
        _cleanup_free_ char *dir = make_dir(), *path = NULL, *sub = NULL, *big_path = NULL;
        _cleanup_free_ char *nul_path = NULL, *bad_path = NULL, *expected = NULL;
        struct config *c = NULL, sentinel, *s = &sentinel;
        _cleanup_free_ char *big = NULL;
        char err[1024];
        int r;

        /* a missing file: no error, nothing desired */
        assert_int_equal(setenv("CONFIGURATION_DIRECTORY", dir, 1), 0);
        strcpy(err, "stale");
        r = config_load(NULL, &c, err, sizeof(err));
        assert_int_equal(r, 0);
        assert_string_equal(err, "");
        assert_non_null(c);
        assert_false(c->exists);
        assert_null(c->path);
        assert_int_equal(c->poll_interval_ms, 2000);
        assert_int_equal(c->history_max_bytes, 1024 * 1024);
        assert_int_equal(c->n_gpus, 0);
        c = config_free(c);
        assert_null(c);

        assert_true(asprintf(&sub, "%s/nowhere/amdsmid.conf", dir) > 0);
        assert_int_equal(config_load(sub, &c, NULL, 0), 0);
        assert_false(c->exists);
        c = config_free(c);

        /* $CONFIGURATION_DIRECTORY/amdsmid.conf is the one read */
        path = put(dir, "amdsmid.conf",
                   DATA("[daemon]\npoll_interval_ms = 500\n[gpu 0000:05:00.0]\n"
                        "compute_mode = QPX\n"));
        assert_int_equal(config_load(NULL, &c, err, sizeof(err)), 0);
        assert_true(c->exists);
        assert_string_equal(c->path, path);
        assert_int_equal(c->poll_interval_ms, 500);
        assert_int_equal(c->n_gpus, 1);
        assert_int_equal(c->gpus[0].compute, AMDSMI_COMPUTE_QPX);
        c = config_free(c);

        /* an explicit path wins; messages name it */
        bad_path = put(dir, "bad.conf", DATA("[gpu]\n\nnum_vfs = many\n"));
        assert_int_equal(config_load(bad_path, &s, err, sizeof(err)), -EINVAL);
        assert_ptr_equal(s, &sentinel);
        assert_true(asprintf(&expected, "%s:3: bad num_vfs \"many\" (a whole number, 0..65535)",
                             bad_path) > 0);
        assert_string_equal(err, expected);
        free(expected);

        nul_path = put(dir, "nul.conf", DATA("[gpu]\nnum_vfs = 1\n\0\n"));
        assert_int_equal(config_load(nul_path, &s, err, sizeof(err)), -EINVAL);
        assert_ptr_equal(s, &sentinel);
        assert_true(asprintf(&expected, "%s:3: NUL byte", nul_path) > 0);
        assert_string_equal(err, expected);
        free(expected);

        /* other errors than a missing file are errors: here ENOTDIR */
        free(sub);
        assert_true(asprintf(&sub, "%s/amdsmid.conf", path) > 0);
        assert_int_equal(config_load(sub, &s, err, sizeof(err)), -ENOTDIR);
        assert_ptr_equal(s, &sentinel);
        assert_true(asprintf(&expected, "%s: cannot open: %s", sub, strerror(ENOTDIR)) > 0);
        assert_string_equal(err, expected);
        free(expected);

        /* a directory */
        assert_int_equal(config_load(dir, &s, err, sizeof(err)), -EISDIR);
        assert_ptr_equal(s, &sentinel);
        assert_true(asprintf(&expected, "%s is a directory, not a regular file: refused", dir) > 0);
        assert_string_equal(err, expected);
        free(expected);

        /* CONFIG_FILE_MAX bytes are read whole; one more is refused */
        big = malloc(CONFIG_FILE_MAX + 1);
        assert_non_null(big);
        memset(big, '\n', CONFIG_FILE_MAX + 1);
        memcpy(big + CONFIG_FILE_MAX - 12, "num_vfs = 7\n", 12);
        memcpy(big, "[gpu]\n", 6);
        big_path = put(dir, "big.conf", big, CONFIG_FILE_MAX);
        assert_int_equal(config_load(big_path, &c, err, sizeof(err)), 0);
        assert_int_equal(c->gpus[0].num_vfs, 7);
        c = config_free(c);
        free(big_path);
        big_path = put(dir, "big.conf", big, CONFIG_FILE_MAX + 1);
        assert_int_equal(config_load(big_path, &s, err, sizeof(err)), -EFBIG);
        assert_ptr_equal(s, &sentinel);
        assert_true(asprintf(&expected, "%s: file too large (more than %d bytes)", big_path,
                             CONFIG_FILE_MAX) > 0);
        assert_string_equal(err, expected);

        assert_int_equal(unsetenv("CONFIGURATION_DIRECTORY"), 0);
        rm_rf(dir);
}


/* ---- profiles ---------------------------------------------------------------------------- */

static void test_profiles(void **state) {
        _cleanup_(config_freep) struct config *c = NULL;
        const struct config_profile *pr;
        struct config_gpu d;
        char err[512];

        c = parse_ok("[gpu]\n"                           /* 1 */
                     "compute_mode = SPX\n"
                     "power_cap = 700\n"
                     "[gpu 0000:05:00.0]\n"               /* 4 */
                     "compute_mode = DPX\n"
                     "num_vfs = 1\n"
                     "[profile cpx-nps4]\n"               /* 7 */
                     "compute_mode = CPX\n"
                     "memory_mode = NPS4\n"
                     "[profile  cpx-nps4   gpu   06:00.0 ]\n" /* 10 */
                     "power_cap = 500W\n"
                     "enforce = yes\n"
                     "[profile A.b_c]\n"                  /* 13 */
                     "[profile only-gpu gpu 0000:05:00.0]\n" /* 14 */
                     "num_vfs = 3\n");
        assert_int_equal(c->n_profiles, 3);
        assert_string_equal(c->profiles[0].name, "cpx-nps4");
        assert_int_equal(c->profiles[0].line, 7);
        assert_int_equal(c->profiles[0].all.line, 7);
        assert_int_equal(c->profiles[0].n_gpus, 1);
        assert_string_equal(c->profiles[0].gpus[0].bdf, "0000:06:00.0");
        assert_string_equal(c->profiles[1].name, "A.b_c");
        assert_string_equal(c->profiles[2].name, "only-gpu");
        assert_int_equal(c->profiles[2].all.line, 0); /* a profile of GPU sections alone */
        assert_int_equal(c->profile_source, CONFIG_PROFILE_NONE);
        assert_string_equal(c->profile, "");
        assert_null(config_find_profile(c, "cpx"));
        assert_null(config_find_profile(c, "CPX-NPS4")); /* names are case-sensitive */

        /* no profile active: the [gpu] sections alone */
        assert_true(config_desired(c, "0000:06:00.0", &d));
        assert_int_equal(d.compute, AMDSMI_COMPUTE_SPX);
        assert_int_equal(d.memory, AMDSMI_MEMORY_UNKNOWN);
        assert_int_equal(d.power_cap_uw, W(700));
        assert_false(d.enforce_set);

        /* [profile P gpu BDF] > [profile P] > [gpu BDF] > [gpu], key by key */
        assert_int_equal(config_select_profile(c, "cpx-nps4", CONFIG_PROFILE_OPTION, err,
                                               sizeof(err)), 0);
        assert_string_equal(c->profile, "cpx-nps4");
        assert_string_equal(config_profile_source_to_string(c->profile_source), "option");
        assert_true(config_desired(c, "0000:06:00.0", &d));
        assert_int_equal(d.line, 10);
        assert_int_equal(d.compute, AMDSMI_COMPUTE_CPX);
        assert_int_equal(d.memory, AMDSMI_MEMORY_NPS4);
        assert_int_equal(d.power_cap_uw, W(500));
        assert_true(d.enforce_set && d.enforce);
        assert_true(config_desired(c, "0000:05:00.0", &d));
        assert_int_equal(d.line, 7);
        assert_int_equal(d.compute, AMDSMI_COMPUTE_CPX); /* [profile P] over [gpu BDF] */
        assert_int_equal(d.power_cap_uw, W(700));        /* unset in the profile: [gpu]'s */
        assert_true(d.num_vfs_set);
        assert_int_equal(d.num_vfs, 1);                   /* [gpu BDF]'s */
        assert_false(d.enforce_set);

        /* a profile that sets one key of one GPU leaves the rest to the [gpu] sections */
        assert_int_equal(config_select_profile(c, "only-gpu", CONFIG_PROFILE_OPTION, NULL, 0), 0);
        assert_true(config_desired(c, "0000:05:00.0", &d));
        assert_int_equal(d.num_vfs, 3);
        assert_int_equal(d.compute, AMDSMI_COMPUTE_DPX);
        assert_true(config_desired(c, "0000:06:00.0", &d));
        assert_int_equal(d.compute, AMDSMI_COMPUTE_SPX);
        assert_int_equal(d.line, 1);

        /* an empty profile desires nothing more */
        assert_int_equal(config_select_profile(c, "A.b_c", CONFIG_PROFILE_OPTION, NULL, 0), 0);
        assert_true(config_desired(c, "0000:07:00.0", &d));
        assert_int_equal(d.compute, AMDSMI_COMPUTE_SPX);

        /* unknown: refused, the active one unchanged */
        strcpy(err, "");
        assert_int_equal(config_select_profile(c, "nope", CONFIG_PROFILE_OPTION, err,
                                               sizeof(err)), -EINVAL);
        assert_string_equal(err, "amdsmid.conf has no [profile nope] section");
        assert_string_equal(c->profile, "A.b_c");
        assert_int_equal(config_select_profile(c, "-x", CONFIG_PROFILE_OPTION, err, sizeof(err)),
                         -EINVAL);
        assert_int_equal(config_select_profile(c, "", CONFIG_PROFILE_OPTION, NULL, 0), 0);
        assert_string_equal(c->profile, "");
        assert_int_equal(c->profile_source, CONFIG_PROFILE_NONE);
        assert_null(config_profile_source_to_string(c->profile_source));

        pr = config_find_profile(c, "cpx-nps4");
        assert_non_null(pr);
        assert_ptr_equal(pr, &c->profiles[0]);
}

static void test_profile_daemon_key(void **state) {
        _cleanup_(config_freep) struct config *c = NULL;
        struct config_gpu d;

        c = parse_ok("[daemon]\nprofile = big\n[gpu]\ncompute_mode = SPX\n"
                     "[profile big]\ncompute_mode = QPX\n");
        assert_string_equal(c->daemon_profile, "big");
        assert_string_equal(c->profile, "big");
        assert_string_equal(config_profile_source_to_string(c->profile_source), "config");
        assert_true(config_desired(c, "0000:05:00.0", &d));
        assert_int_equal(d.compute, AMDSMI_COMPUTE_QPX);

        expect_error("[daemon]\nprofile = big\n[profile small]\n", -EINVAL,
                     NAME ":2: profile \"big\" has no [profile big] section");
        expect_error("[daemon]\nprofile = a b\n", -EINVAL,
                     NAME ":2: bad profile \"a b\" (1 to 63 letters, digits, '.', '_' or '-', a "
                     "letter or digit at both ends)");
        expect_error("[daemon]\nprofile = big\nprofile = big\n[profile big]\n", -EINVAL,
                     NAME ":3: key \"profile\" given twice in [daemon] (first on line 2)");
}

static void test_profile_names(void **state) {
        static const char *const good[] = { "a", "Z", "0", "cpx-nps4", "a.b_c-d", "A1",
                "123456789012345678901234567890123456789012345678901234567890123" };
        static const char *const bad[] = { "", "-a", "a-", ".a", "a_", "_", "a b", "a/b",
                "a:b", "a\xc3\xa9", "1234567890123456789012345678901234567890123456789012345678901234" };

        for (size_t i = 0; i < ELEMENTSOF(good); i++) {
                char text[256];
                _cleanup_(config_freep) struct config *c = NULL;

                assert_true(config_profile_name_valid(good[i]));
                snprintf(text, sizeof(text), "[profile %s]\ncompute_mode = CPX\n", good[i]);
                c = parse_ok(text);
                assert_string_equal(c->profiles[0].name, good[i]);
        }
        for (size_t i = 0; i < ELEMENTSOF(bad); i++)
                assert_false(config_profile_name_valid(bad[i]));
        assert_false(config_profile_name_valid(NULL));

        expect_error("[profile -a]\n", -EINVAL,
                     NAME ":1: bad profile name \"-a\" in [profile -a] (1 to 63 letters, digits, "
                     "'.', '_' or '-', a letter or digit at both ends)");
        expect_error("[profile a/b]\n", -EINVAL,
                     NAME ":1: bad profile name \"a/b\" in [profile a/b] (1 to 63 letters, "
                     "digits, '.', '_' or '-', a letter or digit at both ends)");
        expect_error("[profile]\n", -EINVAL,
                     NAME ":1: section [profile] names no profile ([profile NAME] or [profile "
                     "NAME gpu BDF])");
        expect_error("[gpu]\n[profile x gpux 05:00.0]\n", -EINVAL,
                     NAME ":2: unexpected \"gpux 05:00.0\" in [profile x gpux 05:00.0] "
                     "([profile NAME] or [profile NAME gpu BDF])");
        expect_error("[profile x gpu 5:00.0]\n", -EINVAL,
                     NAME ":1: malformed PCI address \"5:00.0\" in [profile x gpu 5:00.0] "
                     "(DDDD:BB:DD.F or BB:DD.F, e.g. 0000:05:00.0)");
        expect_error("[profile x]\n[profile y]\n[profile x]\n", -EINVAL,
                     NAME ":3: section [profile x] given twice (first on line 1)");
        expect_error("[profile x gpu 05:00.0]\n[profile x gpu 0000:05:00.0]\n", -EINVAL,
                     NAME ":2: section [profile x gpu 0000:05:00.0] given twice (first on line "
                     "1)");
        /* the keys of [gpu], no others */
        expect_error("[profile x]\npoll_interval_ms = 100\n", -EINVAL,
                     NAME ":2: unknown key \"poll_interval_ms\" in [profile x] (compute_mode, "
                     "memory_mode, power_cap, num_vfs, enforce, perf_level, "
                  "perf_determinism_sclk_mhz, sclk_min_mhz, sclk_max_mhz, mclk_max_mhz, "
                  "soc_pstate, xgmi_plpd)");
        expect_error("[profile x gpu 05:00.0]\ncompute_mode = XPX\n", -EINVAL,
                     NAME ":2: bad compute_mode \"XPX\" (SPX, DPX, TPX, QPX, CPX)");
        expect_error("[profilex]\n", -EINVAL,
                     NAME ":1: unknown section [profilex] ([daemon], [gpu], [gpu all], [gpu BDF], "
                     "[health], [kubernetes], [libvirt], [metrics], [power], [profile NAME], [profile NAME "
                     "gpu BDF])");
}

static void test_selector_parse(void **state) {
        char name[CONFIG_PROFILE_NAME_MAX + 1], err[512];
        static const struct {
                const char *text;
                const char *want; /* NULL: refused with msg */
                const char *msg;
        } cases[] = {
                { "cpx\n", "cpx", NULL },
                { "cpx", "cpx", NULL },
                { "  cpx-nps4 \t\r\n\n", "cpx-nps4", NULL },
                { "# written by Ansible\n\ncpx\n# more\n", "cpx", NULL },
                { "", NULL, "sel: no profile name (one word; remove the file to select none)" },
                { "# only a comment\n\n", NULL,
                  "sel: no profile name (one word; remove the file to select none)" },
                { "a b\n", NULL, "sel:1: more than one word (one profile name)" },
                { "a\nb\n", NULL,
                  "sel:2: a second profile name (the first on line 1; the file holds one)" },
                { "-a\n", NULL,
                  "sel:1: bad profile name \"-a\" (1 to 63 letters, digits, '.', '_' or '-', a "
                  "letter or digit at both ends)" },
                { "a\x01\n", NULL, "sel:1: control character 0x01" },
                { "\xff\n", NULL,
                  "sel:1: bad profile name (byte 0xff; 1 to 63 letters, digits, '.', '_' or "
                  "'-', a letter or digit at both ends)" },
                { "1234567890123456789012345678901234567890123456789012345678901234\n", NULL,
                  "sel:1: profile name longer than 63 characters" },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                strcpy(name, "untouched");
                strcpy(err, "");
                int r = config_selector_parse("sel", cases[i].text, strlen(cases[i].text), name,
                                              err, sizeof(err));

                if (cases[i].want) {
                        assert_int_equal(r, 0);
                        assert_string_equal(name, cases[i].want);
                } else {
                        if (r != -EINVAL || strcmp(err, cases[i].msg) != 0)
                                fail_msg("case %zu: got %d \"%s\", expected \"%s\"", i, r, err,
                                         cases[i].msg);
                        assert_string_equal(name, "untouched");
                }
        }
        assert_int_equal(config_selector_parse("sel", DATA("a\0b"), name, err, sizeof(err)),
                         -EINVAL);
        assert_string_equal(err, "sel: NUL byte (one profile name)");
}

static void test_selector_load(void **state) {
        _cleanup_free_ char *dir = make_dir(), *conf = NULL, *sel = NULL, *expected = NULL;
        _cleanup_free_ char *link = NULL, *sub = NULL;
        struct config *c = NULL, sentinel, *s = &sentinel;
        struct config_selector_stamp st1, st2;
        char name[CONFIG_PROFILE_NAME_MAX + 1], err[1024], path[4096];
        struct config_gpu d;

        assert_int_equal(setenv("CONFIGURATION_DIRECTORY", dir, 1), 0);
        assert_int_equal(config_selector_path(path, sizeof(path)), 0);
        assert_true(asprintf(&sel, "%s/profile", dir) > 0);
        assert_string_equal(path, sel);
        assert_int_equal(unsetenv("CONFIGURATION_DIRECTORY"), 0);
        assert_int_equal(config_selector_path(path, sizeof(path)), 0);
        assert_true(strlen(AMDSMID_CONF_PATH) > strlen("amdsmid.conf"));
        assert_int_equal(strncmp(path, AMDSMID_CONF_PATH,
                                 strlen(AMDSMID_CONF_PATH) - strlen("amdsmid.conf")), 0);
        assert_string_equal(path + strlen(AMDSMID_CONF_PATH) - strlen("amdsmid.conf"), "profile");
        assert_int_equal(setenv("CONFIGURATION_DIRECTORY", dir, 1), 0);

        conf = put(dir, "amdsmid.conf",
                   DATA("[daemon]\nprofile = spx\n[gpu]\nnum_vfs = 1\n"
                        "[profile spx]\ncompute_mode = SPX\n[profile cpx]\ncompute_mode = CPX\n"));

        /* no selector: profile = of [daemon] */
        assert_int_equal(config_load(NULL, &c, err, sizeof(err)), 0);
        assert_string_equal(c->profile, "spx");
        assert_int_equal(c->profile_source, CONFIG_PROFILE_CONFIG);
        assert_string_equal(c->selector_path, sel);
        assert_false(c->selector.exists);
        c = config_free(c);

        /* the selector wins */
        free(put(dir, "profile", DATA("# k8s\ncpx\n")));
        assert_int_equal(chmod(sel, 0644), 0);
        assert_int_equal(config_load(NULL, &c, err, sizeof(err)), 0);
        assert_string_equal(c->profile, "cpx");
        assert_string_equal(config_profile_source_to_string(c->profile_source), "selector");
        assert_true(c->selector.exists);
        assert_true(config_desired(c, "0000:05:00.0", &d));
        assert_int_equal(d.compute, AMDSMI_COMPUTE_CPX);
        assert_int_equal(d.num_vfs, 1);
        config_selector_stat(sel, &st1);
        assert_true(config_selector_stamp_equal(&st1, &c->selector));
        c = config_free(c);

        /* an explicit path looks at no selector */
        assert_int_equal(config_load(conf, &c, err, sizeof(err)), 0);
        assert_string_equal(c->profile, "spx");
        c = config_free(c);

        /* a selected profile without a section: the whole file is refused */
        free(put(dir, "profile", DATA("nosuch\n")));
        assert_int_equal(config_load(NULL, &s, err, sizeof(err)), -EINVAL);
        assert_ptr_equal(s, &sentinel);
        assert_true(asprintf(&expected, "%s: selects the profile \"nosuch\", which %s has no "
                                        "[profile nosuch] section for",
                             sel, conf) > 0);
        assert_string_equal(err, expected);
        config_selector_stat(sel, &st2);
        assert_false(config_selector_stamp_equal(&st1, &st2) && st1.size == st2.size);

        /* refusals, each naming the file */
        free(put(dir, "profile", DATA("cpx\n")));
        assert_int_equal(chmod(sel, 0664), 0);
        assert_int_equal(config_selector_read(sel, name, NULL, err, sizeof(err)), -EPERM);
        free(expected);
        assert_true(asprintf(&expected, "%s: refused: writable by its group (mode 0664; chmod "
                                        "go-w)", sel) > 0);
        assert_string_equal(err, expected);
        assert_int_equal(config_load(NULL, &s, err, sizeof(err)), -EPERM);
        assert_ptr_equal(s, &sentinel);
        assert_int_equal(chmod(sel, 0646), 0);
        assert_int_equal(config_selector_read(sel, name, NULL, err, sizeof(err)), -EPERM);
        assert_non_null(strstr(err, "writable by others"));
        assert_int_equal(chmod(sel, 0600), 0);
        assert_int_equal(config_selector_read(sel, name, &st1, err, sizeof(err)), 0);
        assert_string_equal(name, "cpx");
        assert_true(st1.exists);

        /* a symbolic link, a directory, a FIFO (never waited on), too large */
        assert_true(asprintf(&link, "%s/link", dir) > 0);
        assert_int_equal(symlink(sel, link), 0);
        assert_int_equal(config_selector_read(link, name, NULL, err, sizeof(err)), -ELOOP);
        free(expected);
        assert_true(asprintf(&expected, "%s: refused: a symbolic link (the selector must be a "
                                        "regular file)", link) > 0);
        assert_string_equal(err, expected);
        assert_true(asprintf(&sub, "%s/dir", dir) > 0);
        assert_int_equal(mkdir(sub, 0755), 0);
        assert_int_equal(config_selector_read(sub, name, NULL, err, sizeof(err)), -EISDIR);
        assert_non_null(strstr(err, "refused: not a regular file"));
        assert_int_equal(unlink(link), 0);
        assert_int_equal(mkfifo(link, 0600), 0);
        assert_int_equal(config_selector_read(link, name, NULL, err, sizeof(err)), -EBADFD);
        assert_non_null(strstr(err, "refused: not a regular file"));
        {
                char big[CONFIG_SELECTOR_MAX + 1];

                memset(big, '#', sizeof(big));
                big[sizeof(big) - 2] = '\n';
                big[sizeof(big) - 1] = 'x';
                free(put(dir, "profile", big, CONFIG_SELECTOR_MAX + 1));
                assert_int_equal(chmod(sel, 0644), 0);
                assert_int_equal(config_selector_read(sel, name, NULL, err, sizeof(err)),
                                 -EFBIG);
                assert_non_null(strstr(err, "refused: larger than 4096 bytes"));
                free(put(dir, "profile", big + 1, CONFIG_SELECTOR_MAX));
                assert_int_equal(config_selector_read(sel, name, NULL, err, sizeof(err)), 0);
                assert_string_equal(name, "x");
        }

        /* a missing selector: -ENOENT, and the stamp says so */
        assert_int_equal(unlink(sel), 0);
        assert_int_equal(config_selector_read(sel, name, &st1, err, sizeof(err)), -ENOENT);
        assert_false(st1.exists);
        config_selector_stat(sel, &st2);
        assert_true(config_selector_stamp_equal(&st1, &st2));

        assert_int_equal(unsetenv("CONFIGURATION_DIRECTORY"), 0);
        rm_rf(dir);
}

/* The performance keys: parsed, merged (a profile over [gpu]), formatted, and refused with
 * their line. */
static void test_performance(void **state) {
        _cleanup_(config_freep) struct config *c = parse_ok(
                "[daemon]\nprofile = p\n[gpu]\nperf_level = manual\nsclk_max_mhz = 1800\n"
                "soc_pstate = soc_pstate_0\n[profile p gpu 0000:05:00.0]\n"
                "perf_level = determinism\nperf_determinism_sclk_mhz = 1900\nxgmi_plpd = 2\n");
        _cleanup_free_ char *text = NULL;
        struct config_gpu d;

        assert_true(config_desired(c, "0000:05:00.0", &d));
        assert_int_equal(d.perf_level, AMDSMI_PERF_LEVEL_PERF_DETERMINISM);
        assert_int_equal(d.perf_determinism_sclk_mhz, 1900);
        assert_int_equal(d.sclk_max_mhz, 1800);
        assert_string_equal(d.soc_pstate, "soc_pstate_0");
        assert_string_equal(d.xgmi_plpd, "2");
        text = config_gpu_format(&d);
        assert_non_null(text);
        assert_non_null(strstr(text, "perf_level = determinism\nperf_determinism_sclk_mhz = 1900\n"
                                     "sclk_max_mhz = 1800\nsoc_pstate = soc_pstate_0\n"
                                     "xgmi_plpd = 2\n"));
        assert_true(config_desired(c, "0000:26:00.0", &d));
        assert_int_equal(d.perf_level, AMDSMI_PERF_LEVEL_MANUAL);
        assert_int_equal(d.perf_determinism_sclk_mhz, 0);

        expect_error("[gpu]\nperf_level = high\n", -EINVAL,
                     NAME ":2: bad perf_level \"high\" (auto, manual, determinism)");
        expect_error("[gpu]\n\nsclk_max_mhz = 0\n", -ERANGE,
                     NAME ":3: sclk_max_mhz 0 out of range (1..100000)");
        expect_error("[gpu]\nsoc_pstate = a/b\n", -EINVAL,
                     NAME ":2: bad soc_pstate \"a/b\" (a policy's id or name as pm_policy/"
                          "soc_pstate lists it, e.g. 0 or soc_pstate_default)");
}

static void test_gpu_format(void **state) {
        _cleanup_(config_freep) struct config *c = NULL;
        _cleanup_free_ char *common_text = NULL, *own_text = NULL, *text = NULL;
        struct config_gpu a, b, common;
        struct config_gpu d;

        config_gpu_init(&a, "0000:05:00.0");
        assert_gpu_unset(&a);
        a.compute = AMDSMI_COMPUTE_CPX;
        a.memory = AMDSMI_MEMORY_NPS4;
        a.power_cap_set = true;
        a.power_cap_uw = W(750) + 500000;
        a.num_vfs_set = true;
        a.num_vfs = 0;
        b = a;
        snprintf(b.bdf, sizeof(b.bdf), "0000:06:00.0");
        b.compute = AMDSMI_COMPUTE_SPX;
        b.power_cap_uw = W(600);

        common = a;
        config_gpu_intersect(&common, &b);
        assert_int_equal(common.compute, AMDSMI_COMPUTE_UNKNOWN);
        assert_int_equal(common.memory, AMDSMI_MEMORY_NPS4);
        assert_false(common.power_cap_set);
        assert_true(common.num_vfs_set);
        config_gpu_subtract(&b, &common);
        assert_int_equal(b.compute, AMDSMI_COMPUTE_SPX);
        assert_int_equal(b.memory, AMDSMI_MEMORY_UNKNOWN);
        assert_true(b.power_cap_set);
        assert_false(b.num_vfs_set);

        common_text = config_gpu_format(&common);
        assert_string_equal(common_text, "memory_mode = NPS4\nnum_vfs = 0\n");
        own_text = config_gpu_format(&b);
        assert_string_equal(own_text, "compute_mode = SPX\npower_cap = 600W\n");
        free(own_text);
        own_text = config_gpu_format(&a);
        assert_string_equal(own_text, "compute_mode = CPX\nmemory_mode = NPS4\n"
                                      "power_cap = 750.5W\nnum_vfs = 0\n");

        /* what export prints parses back to the same desired state */
        assert_true(asprintf(&text, "[profile e]\n%s[profile e gpu %s]\n%s", common_text, b.bdf,
                             "compute_mode = SPX\npower_cap = 600W\n") > 0);
        c = parse_ok(text);
        assert_int_equal(config_select_profile(c, "e", CONFIG_PROFILE_OPTION, NULL, 0), 0);
        assert_true(config_desired(c, "0000:06:00.0", &d));
        assert_int_equal(d.compute, AMDSMI_COMPUTE_SPX);
        assert_int_equal(d.memory, AMDSMI_MEMORY_NPS4);
        assert_int_equal(d.power_cap_uw, W(600));
        assert_int_equal(d.num_vfs, 0);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_defaults),      cmocka_unit_test(test_example),
                cmocka_unit_test(test_gpu_all_first), cmocka_unit_test(test_bdf_forms),
                cmocka_unit_test(test_values),        cmocka_unit_test(test_ranges),
                cmocka_unit_test(test_errors),        cmocka_unit_test(test_lines),
                cmocka_unit_test(test_merge),         cmocka_unit_test(test_unknown_gpus),
                cmocka_unit_test(test_path),          cmocka_unit_test(test_load),
                cmocka_unit_test(test_libvirt),
                cmocka_unit_test(test_metrics),
                cmocka_unit_test(test_metrics_exporter),
                cmocka_unit_test(test_kubernetes),
                cmocka_unit_test(test_power),
                cmocka_unit_test(test_profiles),
                cmocka_unit_test(test_profile_daemon_key),
                cmocka_unit_test(test_profile_names),
                cmocka_unit_test(test_selector_parse),
                cmocka_unit_test(test_selector_load),
                cmocka_unit_test(test_gpu_format),
                cmocka_unit_test(test_performance),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
