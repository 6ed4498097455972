/* SPDX-License-Identifier: MIT */
/*
 * RAS counts, retired pages and the bad-page threshold on hand-made trees (spec
 * health-and-control §1): ACA and legacy count files, both at once, "Query currently
 * inaccessible", garbage and truncation, a GPU without ras/, the debugfs directory by PCI
 * address or card minor, and an unprivileged reader (debugfs refused, counts readable).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <sys/wait.h>

#include "health-private.h"
#include "private.h"
#include "tree-util.h"

#define DEV "devices/pci0000:00/0000:c1:00.0/"

static char *gpu_tree(void) {
        char *root = tree_new();

        tree_file(root, DEV "vendor", "0x1002\n", -1, 0444);
        tree_file(root, DEV "device", "0x74a1\n", -1, 0444);
        tree_file(root, DEV "class", "0x120000\n", -1, 0444);
        tree_mkdirs(root, DEV "drm/card1");
        tree_mkdirs(root, DEV "drm/renderD129");
        tree_mkdirs(root, "bus/pci/drivers/amdgpu");
        tree_link(root, "bus/pci/devices/0000:c1:00.0", "../../../devices/pci0000:00/0000:c1:00.0");
        tree_link(root, DEV "driver", "../../../bus/pci/drivers/amdgpu");
        return root;
}

static struct amdsmi_ctx *open_gpu(const char *root, struct amdsmi_gpu **ret_gpu) {
        struct amdsmi_ctx *ctx = NULL;

        assert_int_equal(amdsmi_ctx_new_with_roots(root, NULL, &ctx), 0);
        assert_int_equal(amdsmi_ctx_enumerate(ctx), 1);
        *ret_gpu = amdsmi_ctx_get_gpu(ctx, 0);
        assert_non_null(*ret_gpu);
        return ctx;
}

static void test_count_parser(void **state) {
        struct amdsmi_ras_count c = { .ue = 7, .ce = 7, .de = 7 };

        assert_int_equal(ras_count_parse("ue: 1\nce: 2\nde: 3", &c), 0);
        assert_int_equal(c.ue, 1);
        assert_int_equal(c.ce, 2);
        assert_int_equal(c.de, 3);
        assert_int_equal(ras_count_parse("ue: 0\nce: 18446744073709551614", &c), 0);
        assert_int_equal(c.ue, 0);
        assert_true(c.ce == UINT64_MAX - 1);
        assert_true(c.de == AMDSMI_NA); /* legacy, not UMC: no de line */
        /* unknown keys are future lines, ignored */
        assert_int_equal(ras_count_parse("ue: 4\nce: 5\npoison: 9", &c), 0);
        assert_int_equal(c.ue, 4);

        c = (struct amdsmi_ras_count){ .ue = 7, .ce = 7, .de = 7 };
        assert_int_equal(ras_count_parse("Query currently inaccessible", &c), -EBUSY);
        assert_int_equal(c.ue, 7); /* unknown, never zero: untouched */
        static const char *const bad[] = {
                "",                                /* empty */
                "ue: 1",                           /* truncated: no ce */
                "ue: 1\nce",                       /* cut in a line */
                "ue: 1\nce: ",                     /* no number */
                "ue: 1\nce: 2\n",                  /* an empty last line */
                "ue: 1\n\nce: 2",                  /* an empty line */
                "ue: -1\nce: 2",                   /* a sign */
                "ue: 0x1\nce: 2",                  /* hex */
                "ue: 1\nce: 2\nue: 3",             /* twice */
                "ue:1\nce:2",                      /* no space */
                "ue: 1 \nce: 2",                   /* trailing space */
                "ue: 18446744073709551616\nce: 1", /* overflow */
                "ue: 18446744073709551615\nce: 1", /* the N/A marker is no count */
                "garbage",
                "Query currently inaccessible\n",
        };
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                c = (struct amdsmi_ras_count){ .ue = 7 };
                assert_int_equal(ras_count_parse(bad[i], &c), -EBADMSG);
                assert_int_equal(c.ue, 7);
        }
}

static void test_features_parser(void **state) {
        uint32_t m = 0;

        assert_int_equal(ras_features_parse("feature mask: 0x6000000f", &m), 0);
        assert_int_equal(m, 0x6000000f);
        assert_int_equal(ras_features_parse("feature mask: 0x0", &m), 0);
        assert_int_equal(m, 0);
        assert_int_equal(ras_features_parse("feature mask: 15", &m), -EBADMSG);
        assert_int_equal(ras_features_parse("feature mask: 0x100000000", &m), -EBADMSG);
        assert_int_equal(ras_features_parse("mask: 0x1", &m), -EBADMSG);
        assert_int_equal(ras_features_parse("", &m), -EBADMSG);
}

static void test_read_ras(void **state) {
        char *root = gpu_tree();
        struct amdsmi_ras_info info = { .size = sizeof(info) };
        struct amdsmi_ras_count c;
        struct amdsmi_gpu *gpu;
        struct amdsmi_ctx *ctx;

        tree_file(root, DEV "ras/features", "feature mask: 0x6000008f\n", -1, 0444);
        tree_file(root, DEV "ras/aca_umc", "ue: 1\nce: 2\nde: 3\n", -1, 0444);
        tree_file(root, DEV "ras/aca_gfx", "ue: 0\nce: 0\nde: 0\n", -1, 0444);
        tree_file(root, DEV "ras/sdma_err_count", "ue: 4\nce: 5\n", -1, 0444);
        tree_file(root, DEV "ras/aca_mmhub", "ue: 6\nce: 7\nde: 8\n", -1, 0444);
        tree_file(root, DEV "ras/mmhub_err_count", "ue: 60\nce: 70\n", -1, 0444);
        tree_file(root, DEV "ras/aca_xgmi_wafl", "Query currently inaccessible\n", -1, 0444);
        tree_file(root, DEV "ras/aca_vcn", "ue: 1\nce", -1, 0444);
        tree_file(root, DEV "ras/hdp_err_count", "ue: x\nce: 1\n", -1, 0444);
        tree_file(root, DEV "ras/mca_mp1_err_count", "ue: 0\nce: 3\nde: 1\n", -1, 0444);
        tree_file(root, DEV "ras/gpu_vram_bad_pages", "", 0, 0444);
        ctx = open_gpu(root, &gpu);

        info.size = sizeof(info) - 1;
        assert_int_equal(amdsmi_gpu_read_ras(gpu, &info), -EINVAL);
        info.size = sizeof(info);
        assert_int_equal(amdsmi_gpu_read_ras(gpu, &info), 0);
        assert_int_equal(info.features_error, 0);
        assert_int_equal(info.features, 0x6000008f);
        assert_int_equal(info.socket_id, 3);
        assert_int_equal(info.enabled_blocks, 0x8f); /* umc sdma gfx mmhub xgmi_wafl */

        c = info.blocks[AMDSMI_RAS_BLOCK_UMC];
        assert_int_equal(c.error, 0);
        assert_int_equal(c.source, AMDSMI_RAS_SOURCE_ACA);
        assert_int_equal(c.both_sources, 0);
        assert_int_equal(c.ue, 1);
        assert_int_equal(c.ce, 2);
        assert_int_equal(c.de, 3);
        c = info.blocks[AMDSMI_RAS_BLOCK_GFX];
        assert_int_equal(c.error, 0);
        assert_int_equal(c.ue, 0); /* a real zero */
        c = info.blocks[AMDSMI_RAS_BLOCK_SDMA];
        assert_int_equal(c.error, 0);
        assert_int_equal(c.source, AMDSMI_RAS_SOURCE_LEGACY);
        assert_int_equal(c.ue, 4);
        assert_int_equal(c.ce, 5);
        assert_true(c.de == AMDSMI_NA);
        c = info.blocks[AMDSMI_RAS_BLOCK_MMHUB];
        assert_int_equal(c.source, AMDSMI_RAS_SOURCE_ACA); /* both: ACA wins, and says so */
        assert_int_equal(c.both_sources, 1);
        assert_int_equal(c.ue, 6);
        c = info.blocks[AMDSMI_RAS_BLOCK_XGMI_WAFL];
        assert_int_equal(c.error, -EBUSY); /* unavailable, not zero */
        assert_true(c.ue == AMDSMI_NA && c.ce == AMDSMI_NA);
        assert_int_equal(info.blocks[AMDSMI_RAS_BLOCK_VCN].error, -EBADMSG);
        assert_int_equal(info.blocks[AMDSMI_RAS_BLOCK_HDP].error, -EBADMSG);
        assert_int_equal(info.blocks[AMDSMI_RAS_BLOCK_HDP].source, AMDSMI_RAS_SOURCE_LEGACY);
        assert_int_equal(info.blocks[AMDSMI_RAS_BLOCK_JPEG].error, -ENOENT);
        assert_int_equal(info.blocks[AMDSMI_RAS_BLOCK_JPEG].source, AMDSMI_RAS_SOURCE_NONE);
        c = info.blocks[AMDSMI_RAS_BLOCK_MCA_MP1];
        assert_int_equal(c.error, 0);
        assert_int_equal(c.ce, 3);
        assert_int_equal(c.de, 1);

        /* one block */
        assert_int_equal(amdsmi_gpu_read_ras_block(gpu, AMDSMI_RAS_BLOCK_UMC, &c), 0);
        assert_int_equal(c.ce, 2);
        assert_int_equal(amdsmi_gpu_read_ras_block(gpu, AMDSMI_RAS_BLOCK_XGMI_WAFL, &c), -EBUSY);
        assert_int_equal(c.error, -EBUSY);
        assert_int_equal(amdsmi_gpu_read_ras_block(gpu, AMDSMI_RAS_BLOCK_JPEG, &c), -ENOENT);
        assert_int_equal(amdsmi_gpu_read_ras_block(gpu, AMDSMI_RAS_BLOCK_MMHUB, &c), 0);
        assert_int_equal(c.both_sources, 1);
        assert_int_equal(amdsmi_gpu_read_ras_block(gpu, _AMDSMI_RAS_BLOCK_MAX, &c), -EINVAL);

        /* the count goes up, then backwards: a driver reload, said as such */
        tree_file(root, DEV "ras/aca_umc", "ue: 1\nce: 9\nde: 3\n", -1, 0444);
        assert_int_equal(amdsmi_gpu_read_ras_block(gpu, AMDSMI_RAS_BLOCK_UMC, &c), 0);
        {
                uint64_t d = 77;

                assert_int_equal(amdsmi_ras_count_delta(2, c.ce, &d), 0);
                assert_int_equal(d, 7);
                tree_file(root, DEV "ras/aca_umc", "ue: 0\nce: 1\nde: 0\n", -1, 0444);
                assert_int_equal(amdsmi_gpu_read_ras_block(gpu, AMDSMI_RAS_BLOCK_UMC, &c), 0);
                assert_int_equal(amdsmi_ras_count_delta(9, c.ce, &d), 1);
                assert_int_equal(d, 1); /* counted since the reload, never negative */
                d = 77;
                assert_int_equal(amdsmi_ras_count_delta(AMDSMI_NA, 1, &d), -EINVAL);
                assert_int_equal(amdsmi_ras_count_delta(1, AMDSMI_NA, &d), -EINVAL);
                assert_int_equal(d, 77);
        }

        /* features garbage: said in features_error, the blocks still read */
        tree_file(root, DEV "ras/features", "feature mask 0x8f\n", -1, 0444);
        assert_int_equal(amdsmi_gpu_read_ras(gpu, &info), 0);
        assert_int_equal(info.features_error, -EBADMSG);
        assert_int_equal(info.blocks[AMDSMI_RAS_BLOCK_UMC].error, 0);

        amdsmi_ctx_unref(ctx);
        tree_free(root);
}

static void test_no_ras(void **state) {
        char *root = gpu_tree();
        struct amdsmi_ras_info info = { .size = sizeof(info) };
        struct amdsmi_ras_count c = { .ue = 5 };
        struct amdsmi_bad_page *pages = NULL;
        struct amdsmi_gpu *gpu;
        struct amdsmi_ctx *ctx;
        uint32_t t = 5;

        ctx = open_gpu(root, &gpu);
        assert_int_equal(amdsmi_gpu_read_ras(gpu, &info), -ENODATA);
        assert_int_equal(amdsmi_gpu_read_ras_block(gpu, AMDSMI_RAS_BLOCK_UMC, &c), -ENODATA);
        assert_int_equal(c.ue, 5);
        assert_int_equal(amdsmi_gpu_read_bad_pages(gpu, &pages), -ENODATA);
        assert_null(pages);
        /* no debugfs at all: not provided, distinct from refused */
        assert_int_equal(amdsmi_gpu_read_bad_page_threshold(gpu, &t), -ENODATA);
        assert_int_equal(t, 5);
        amdsmi_ctx_unref(ctx);
        tree_free(root);
}

static void test_enum_strings(void **state) {
        enum amdsmi_ras_block b = _AMDSMI_RAS_BLOCK_MAX;

        for (unsigned i = 0; i < _AMDSMI_RAS_BLOCK_MAX; i++) {
                const char *s = amdsmi_ras_block_to_string((enum amdsmi_ras_block) i);

                assert_string_not_equal(s, "unknown");
                assert_int_equal(amdsmi_ras_block_from_string(s, &b), 0);
                assert_int_equal(b, i);
        }
        assert_string_equal(amdsmi_ras_block_to_string(AMDSMI_RAS_BLOCK_XGMI_WAFL), "xgmi_wafl");
        assert_string_equal(amdsmi_ras_block_to_string(AMDSMI_RAS_BLOCK_MCA_IOHC), "mca_iohc");
        assert_string_equal(amdsmi_ras_block_to_string(_AMDSMI_RAS_BLOCK_MAX), "unknown");
        b = AMDSMI_RAS_BLOCK_GFX;
        assert_int_equal(amdsmi_ras_block_from_string("UMC", &b), -EINVAL);
        assert_int_equal(amdsmi_ras_block_from_string("", &b), -EINVAL);
        assert_int_equal(b, AMDSMI_RAS_BLOCK_GFX);
        assert_string_equal(amdsmi_ras_source_to_string(AMDSMI_RAS_SOURCE_ACA), "aca");
        assert_string_equal(amdsmi_ras_source_to_string(AMDSMI_RAS_SOURCE_LEGACY), "legacy");
        assert_string_equal(amdsmi_bad_page_status_to_string(AMDSMI_BAD_PAGE_STATUS_PENDING),
                            "pending");
        assert_string_equal(amdsmi_bad_page_status_to_string(_AMDSMI_BAD_PAGE_STATUS_MAX),
                            "unknown");
}

static void test_bad_pages(void **state) {
        char *root = gpu_tree();
        struct amdsmi_bad_page *pages = NULL;
        struct amdsmi_gpu *gpu;
        struct amdsmi_ctx *ctx;
        char big[200 * BAD_PAGE_RECORD_SIZE + 1];

        tree_file(root, DEV "ras/features", "feature mask: 0x1\n", -1, 0444);
        tree_file(root, DEV "ras/gpu_vram_bad_pages", "", 0, 0444);
        ctx = open_gpu(root, &gpu);

        /* empty: no bad pages */
        assert_int_equal(amdsmi_gpu_read_bad_pages(gpu, &pages), 0);
        assert_null(pages);

        tree_file(root, DEV "ras/gpu_vram_bad_pages",
                  "0x00001234 : 0x00001000 : R\n"
                  "0x000abcde : 0x00001000 : P\n"
                  "0xffffffff : 0x00001000 : F\n"
                  "0x00000001 : 0x00001000 : ?\n",
                  -1, 0444);
        assert_int_equal(amdsmi_gpu_read_bad_pages(gpu, &pages), 4);
        assert_int_equal(pages[0].pfn, 0x1234);
        assert_true(pages[0].address == 0x1234000ULL);
        assert_int_equal(pages[0].size, 4096);
        assert_int_equal(pages[0].status, AMDSMI_BAD_PAGE_STATUS_RESERVED);
        assert_int_equal(pages[1].status, AMDSMI_BAD_PAGE_STATUS_PENDING);
        assert_true(pages[1].address == 0xabcde000ULL);
        assert_int_equal(pages[2].status, AMDSMI_BAD_PAGE_STATUS_UNRESERVABLE);
        assert_true(pages[2].address == 0xffffffff000ULL); /* beyond 32 bits: no overflow */
        assert_int_equal(pages[3].status, AMDSMI_BAD_PAGE_STATUS_UNKNOWN);
        assert_int_equal(pages[3].flag, '?');
        free(pages);

        /* more than a page of records */
        for (int i = 0; i < 200; i++)
                snprintf(big + i * BAD_PAGE_RECORD_SIZE, BAD_PAGE_RECORD_SIZE + 1,
                         "0x%08x : 0x00001000 : R\n", i);
        tree_file(root, DEV "ras/gpu_vram_bad_pages", big, -1, 0444);
        pages = NULL;
        assert_int_equal(amdsmi_gpu_read_bad_pages(gpu, &pages), 200);
        assert_int_equal(pages[199].pfn, 199);
        free(pages);

        /* truncated, and garbage in a record */
        static const char *const bad[] = {
                "0x00001234 : 0x00001000 : R",   "0x00001234 : 0x00001000 : R\n0x0000",
                "0x0000123g : 0x00001000 : R\n", "0x00001234 - 0x00001000 : R\n",
                "0x00001234 : 0x00001000 :  \n", "0x00001234 : 0x00001000 : RR",
                "00x0001234 : 0x00001000 : R\n",
        };
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                pages = NULL;
                tree_file(root, DEV "ras/gpu_vram_bad_pages", bad[i], -1, 0444);
                assert_int_equal(amdsmi_gpu_read_bad_pages(gpu, &pages), -EBADMSG);
                assert_null(pages);
        }
        {
                size_t where = 99;
                struct amdsmi_bad_page *p = NULL;

                assert_int_equal(bad_pages_parse("0x00000001 : 0x00001000 : R\n"
                                                 "0x0000000x : 0x00001000 : R\n",
                                                 56, &p, &where),
                                 -EBADMSG);
                assert_int_equal(where, 1);
                assert_null(p);
        }
        amdsmi_ctx_unref(ctx);
        tree_free(root);
}

static void test_threshold(void **state) {
        char *root = gpu_tree();
        struct amdsmi_gpu *gpu;
        struct amdsmi_ctx *ctx;
        char path[256];
        uint32_t t = 0;

        /* older kernels: dri/<card minor> */
        tree_file(root, "kernel/debug/dri/1/ras/bad_page_cnt_threshold", "42\n", -1, 0444);
        ctx = open_gpu(root, &gpu);
        assert_int_equal(amdsmi_gpu_read_bad_page_threshold(gpu, &t), 0);
        assert_int_equal(t, 42);
        assert_int_equal(health_debugfs_path(gpu, "x", path, sizeof(path)), 0);
        assert_string_equal(path, "kernel/debug/dri/1/x");

        /* newer kernels: dri/<PCI address> is the directory, preferred */
        tree_file(root, "kernel/debug/dri/0000:c1:00.0/ras/bad_page_cnt_threshold", "7\n", -1,
                  0444);
        assert_int_equal(amdsmi_gpu_read_bad_page_threshold(gpu, &t), 0);
        assert_int_equal(t, 7);

        t = 5;
        tree_file(root, "kernel/debug/dri/0000:c1:00.0/ras/bad_page_cnt_threshold", "4294967296\n",
                  -1, 0444);
        assert_int_equal(amdsmi_gpu_read_bad_page_threshold(gpu, &t), -EBADMSG);
        tree_file(root, "kernel/debug/dri/0000:c1:00.0/ras/bad_page_cnt_threshold", "\n", -1, 0444);
        assert_int_equal(amdsmi_gpu_read_bad_page_threshold(gpu, &t), -EBADMSG);
        tree_file(root, "kernel/debug/dri/0000:c1:00.0/ras/bad_page_cnt_threshold", "-1\n", -1,
                  0444);
        assert_int_equal(amdsmi_gpu_read_bad_page_threshold(gpu, &t), -EBADMSG);
        assert_int_equal(t, 5);
        /* the directory without the file: no RAS in debugfs */
        path[0] = '\0';
        snprintf(path, sizeof(path), "%s/kernel/debug/dri/0000:c1:00.0/ras/bad_page_cnt_threshold",
                 root);
        assert_int_equal(unlink(path), 0);
        assert_int_equal(amdsmi_gpu_read_bad_page_threshold(gpu, &t), -ENODATA);
        amdsmi_ctx_unref(ctx);
        tree_free(root);
}

/* Runs fn in a child as nobody; returns its exit status. */
static int as_nobody(const char *root, int (*fn)(const char *root)) {
        pid_t pid;
        int status;

        if (geteuid() != 0)
                return fn(root); /* already unprivileged */
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                if (setresgid(65534, 65534, 65534) < 0 || setresuid(65534, 65534, 65534) < 0)
                        _exit(100);
                _exit(fn(root));
        }
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFEXITED(status));
        return WEXITSTATUS(status);
}

static int unprivileged_reads(const char *root) {
        struct amdsmi_ras_info info = { .size = sizeof(info) };
        struct amdsmi_cper_batch *batch = NULL;
        struct amdsmi_ctx *ctx = NULL;
        struct amdsmi_gpu *gpu;
        uint32_t t;

        if (amdsmi_ctx_new_with_roots(root, NULL, &ctx) < 0 || amdsmi_ctx_enumerate(ctx) != 1)
                return 1;
        gpu = amdsmi_ctx_get_gpu(ctx, 0);
        if (amdsmi_gpu_read_ras(gpu, &info) != 0 || info.blocks[AMDSMI_RAS_BLOCK_UMC].ce != 2)
                return 2; /* counts are for everyone */
        if (amdsmi_gpu_read_bad_page_threshold(gpu, &t) != -EACCES)
                return 3; /* root only, and said so */
        if (amdsmi_gpu_read_cper(gpu, NULL, &batch) != -EACCES)
                return 4;
        amdsmi_ctx_unref(ctx);
        return 0;
}

static void test_unprivileged(void **state) {
        char *root = gpu_tree();
        char *cmd;

        tree_file(root, DEV "ras/features", "feature mask: 0x1\n", -1, 0444);
        tree_file(root, DEV "ras/aca_umc", "ue: 1\nce: 2\nde: 3\n", -1, 0444);
        tree_file(root, "kernel/debug/dri/1/ras/bad_page_cnt_threshold", "42\n", -1, 0444);
        tree_file(root, "kernel/debug/dri/1/amdgpu_ring_cper", "", 0, 0444);
        /* the tree for everyone, but debugfs as the kernel mounts it: 0700 root */
        assert_true(asprintf(&cmd, "chmod -R a+rX '%s' && chmod 0700 '%s/kernel/debug'", root,
                             root) > 0);
        assert_int_equal(system(cmd), 0);
        free(cmd);
        assert_int_equal(as_nobody(root, unprivileged_reads), 0);
        tree_free(root);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_count_parser), cmocka_unit_test(test_features_parser),
                cmocka_unit_test(test_read_ras),     cmocka_unit_test(test_no_ras),
                cmocka_unit_test(test_enum_strings), cmocka_unit_test(test_bad_pages),
                cmocka_unit_test(test_threshold),    cmocka_unit_test(test_unprivileged),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
