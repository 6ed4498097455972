/* SPDX-License-Identifier: MIT */
/* The sysfs chokepoint: bounded reads, strict parsing, clear errors for garbage. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "parse-util.h"
#include "private.h"
#include "sysfs.h"
#include "tree-util.h"

struct fixture {
        char *root;
        struct amdsmi_ctx *ctx;
};

static int setup(void **state) {
        struct fixture *f = calloc(1, sizeof(*f));
        char big[5000];

        f->root = tree_new();
        memset(big, '7', sizeof(big));
        tree_file(f->root, "a/num", "42\n", -1, 0444);
        tree_file(f->root, "a/hex", "0x74a1\n", -1, 0444);
        tree_file(f->root, "a/hexbare", "74b5\n", -1, 0444);
        tree_file(f->root, "a/neg", "-5\n", -1, 0444);
        tree_file(f->root, "a/empty", "\n", -1, 0444);
        tree_file(f->root, "a/zero_bytes", "", -1, 0444);
        tree_file(f->root, "a/garbage", "abc\n", -1, 0444);
        tree_file(f->root, "a/trailing", "42 W\n", -1, 0444);
        tree_file(f->root, "a/two_newlines", "42\n\n", -1, 0444);
        tree_file(f->root, "a/huge", "99999999999999999999999\n", -1, 0444);
        tree_file(f->root, "a/nul", "4\0002\n", 4, 0444);
        tree_file(f->root, "a/oversized", big, sizeof(big), 0444);
        tree_file(f->root, "a/text", "113-M3000100-102\n", -1, 0444);
        tree_file(f->root, "a/rw", "750000000\n", -1, 0644);
        tree_file(f->root, "a/dir/b", "1\n", -1, 0444);
        tree_file(f->root, "a/dir/a", "1\n", -1, 0444);
        tree_file(f->root, "a/dir/c10", "1\n", -1, 0444);
        tree_link(f->root, "a/driver", "../../bus/pci/drivers/amdgpu");
        assert_int_equal(amdsmi_ctx_new_with_roots(f->root, NULL, &f->ctx), 0);
        *state = f;
        return 0;
}

static int teardown(void **state) {
        struct fixture *f = *state;

        amdsmi_ctx_unref(f->ctx);
        tree_free(f->root);
        free(f);
        return 0;
}

static void test_numbers(void **state) {
        struct fixture *f = *state;
        uint64_t u = 0;
        int64_t i = 0;

        assert_int_equal(sysfs_read_u64(f->ctx, "a/num", 10, &u), 0);
        assert_int_equal(u, 42);
        assert_int_equal(sysfs_read_u64(f->ctx, "/a/num", 10, &u), 0); /* leading slash ok */
        assert_int_equal(sysfs_read_u64(f->ctx, "a/hex", 16, &u), 0);
        assert_int_equal(u, 0x74a1);
        assert_int_equal(sysfs_read_u64(f->ctx, "a/hex", 0, &u), 0);
        assert_int_equal(u, 0x74a1);
        assert_int_equal(sysfs_read_u64(f->ctx, "a/hexbare", 16, &u), 0);
        assert_int_equal(u, 0x74b5);
        assert_int_equal(sysfs_read_i64(f->ctx, "a/neg", &i), 0);
        assert_int_equal(i, -5);
}

static void test_bad_numbers(void **state) {
        struct fixture *f = *state;
        uint64_t u = 1234;
        int64_t i = 1234;

        assert_int_equal(sysfs_read_u64(f->ctx, "a/empty", 10, &u), -ENOMSG);
        assert_int_equal(sysfs_read_u64(f->ctx, "a/zero_bytes", 10, &u), -ENOMSG);
        assert_int_equal(sysfs_read_u64(f->ctx, "a/garbage", 10, &u), -EBADMSG);
        assert_int_equal(sysfs_read_u64(f->ctx, "a/trailing", 10, &u), -EBADMSG);
        assert_int_equal(sysfs_read_u64(f->ctx, "a/two_newlines", 10, &u), -EBADMSG);
        assert_int_equal(sysfs_read_u64(f->ctx, "a/huge", 10, &u), -ERANGE);
        assert_int_equal(sysfs_read_u64(f->ctx, "a/neg", 10, &u), -EBADMSG);
        assert_int_equal(sysfs_read_u64(f->ctx, "a/nul", 10, &u), -EBADMSG);
        assert_int_equal(sysfs_read_u64(f->ctx, "a/oversized", 10, &u), -EBADMSG);
        assert_int_equal(sysfs_read_u64(f->ctx, "a/missing", 10, &u), -ENOENT);
        assert_int_equal(sysfs_read_i64(f->ctx, "a/garbage", &i), -EBADMSG);
        /* outputs untouched on failure */
        assert_int_equal(u, 1234);
        assert_int_equal(i, 1234);
}

static void test_text(void **state) {
        struct fixture *f = *state;
        char buf[64];
        char *s = NULL;

        assert_int_equal(sysfs_read_text(f->ctx, "a/text", buf, sizeof(buf)), 0);
        assert_string_equal(buf, "113-M3000100-102");
        assert_int_equal(sysfs_read_string(f->ctx, "a/text", &s), 0);
        assert_string_equal(s, "113-M3000100-102");
        free(s);
        assert_int_equal(sysfs_read_text(f->ctx, "a/text", buf, 8), -EMSGSIZE);
        assert_int_equal(sysfs_read_string(f->ctx, "a/oversized", &s), -EMSGSIZE);
        assert_int_equal(sysfs_read_text(f->ctx, "a/nul", buf, sizeof(buf)), -EBADMSG);
        assert_int_equal(sysfs_read_text(f->ctx, "a/empty", buf, sizeof(buf)), 0);
        assert_string_equal(buf, "");
}

static void test_dirs_links_modes(void **state) {
        struct fixture *f = *state;
        char **names = NULL;
        char *s = NULL;

        assert_int_equal(sysfs_list_dir(f->ctx, "a/dir", NULL, &names), 3);
        assert_string_equal(names[0], "a");
        assert_string_equal(names[1], "b");
        assert_string_equal(names[2], "c10");
        assert_null(names[3]);
        strv_free(names);
        assert_int_equal(sysfs_list_dir(f->ctx, "a/dir", "c", &names), 1);
        assert_string_equal(names[0], "c10");
        strv_free(names);
        assert_int_equal(sysfs_list_dir(f->ctx, "a/nodir", NULL, &names), -ENOENT);
        assert_int_equal(sysfs_list_dir(f->ctx, "a/num", NULL, &names), -ENOTDIR);

        assert_int_equal(sysfs_readlink_basename(f->ctx, "a/driver", &s), 0);
        assert_string_equal(s, "amdgpu");
        free(s);
        assert_int_equal(sysfs_readlink(f->ctx, "a/num", &s), -EINVAL);

        assert_int_equal(sysfs_exists(f->ctx, "a/num"), 0);
        assert_int_equal(sysfs_exists(f->ctx, "a/nope"), -ENOENT);
        assert_int_equal(sysfs_is_writable(f->ctx, "a/rw"), 1);
        assert_int_equal(sysfs_is_writable(f->ctx, "a/num"), 0);
}

static void test_no_dev_root(void **state) {
        struct fixture *f = *state;

        /* A context made on a snapshot without a device root never opens device nodes. */
        assert_int_equal(devfs_open(f->ctx, "dri/renderD128", O_RDWR), -ENODEV);
}

static void test_missing_root(void **state) {
        struct amdsmi_ctx *ctx = NULL;
        uint64_t u;

        assert_int_equal(amdsmi_ctx_new_with_roots("/nonexistent-amdsmi-root", NULL, &ctx), 0);
        assert_int_equal(sysfs_read_u64(ctx, "a/num", 10, &u), -ENOENT);
        assert_int_equal(amdsmi_ctx_enumerate(ctx), -ENOENT);
        amdsmi_ctx_unref(ctx);
        assert_int_equal(amdsmi_ctx_new_with_roots("", NULL, &ctx), -EINVAL);
}

/* The roots amdsmi_ctx_new() takes from the environment, as the getters give them (amdsmid
 * writes them into its PID file, amdsmi(1) compares its own with them). */
static void env_roots(const char *sysfs, const char *dev, const char *want_sysfs,
                      const char *want_dev) {
        struct amdsmi_ctx *ctx = NULL;

        if (sysfs)
                assert_int_equal(setenv("AMDSMI_SYSFS_ROOT", sysfs, 1), 0);
        else
                assert_int_equal(unsetenv("AMDSMI_SYSFS_ROOT"), 0);
        if (dev)
                assert_int_equal(setenv("AMDSMI_DEV_ROOT", dev, 1), 0);
        else
                assert_int_equal(unsetenv("AMDSMI_DEV_ROOT"), 0);
        assert_int_equal(amdsmi_ctx_new(&ctx), 0);
        assert_string_equal(amdsmi_ctx_get_sysfs_root(ctx), want_sysfs);
        if (want_dev)
                assert_string_equal(amdsmi_ctx_get_dev_root(ctx), want_dev);
        else
                assert_null(amdsmi_ctx_get_dev_root(ctx));
        amdsmi_ctx_unref(ctx);
}

static void test_env_roots(void **state) {
        env_roots(NULL, NULL, "/sys", "/dev");
        env_roots("", "", "/sys", "/dev");
        env_roots("/sys//", NULL, "/sys", "/dev");
        /* a tree never mixes with this machine's device nodes, unless they are named */
        env_roots("/tmp/tree/", NULL, "/tmp/tree", NULL);
        env_roots("/tmp/tree", "/tmp/dev", "/tmp/tree", "/tmp/dev");
        env_roots(NULL, "/tmp/dev", "/sys", "/tmp/dev");
        assert_int_equal(unsetenv("AMDSMI_SYSFS_ROOT"), 0);
        assert_int_equal(unsetenv("AMDSMI_DEV_ROOT"), 0);
}

/* The one check of PCI addresses that name files (locks, APML files, state keys). */
static void test_pci_bdf(void **state) {
        static const char *const good[] = { "0000:05:00.0", "0000:c1:1f.7", "10000:e2:00.1",
                                            "abcdef0:00:00.0" };
        static const char *const bad[] = { "", "0000:05:00", "0000:05:00.8", "0000:C1:00.0",
                                           "000:05:00.0", "00000000:05:00.0", "0000:05:20.0",
                                           "0000:05:00.0/..", "../../etc/passwd",
                                           "0000:05:00.0\n", " 0000:05:00.0", "0000-05-00.0",
                                           "0000:5:00.0" };

        for (size_t i = 0; i < ELEMENTSOF(good); i++)
                assert_true(pci_bdf_valid(good[i]));
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                if (pci_bdf_valid(bad[i]))
                        fail_msg("'%s' accepted as a PCI address", bad[i]);
        }
        assert_false(pci_bdf_valid(NULL));
}


/* _live reads keep the file open and read it anew each time (a pread at offset 0). */
static void test_live_reread(void **state) {
        struct fixture *f = *state;
        char buf[64];
        int64_t i = 0;
        uint64_t u = 0;
        size_t kept;

        assert_int_equal(sysfs_read_i64_live(f->ctx, "a/rw", &i), 0);
        assert_int_equal(i, 750000000);
        kept = f->ctx->n_kept;
        assert_true(kept >= 1);
        tree_file(f->root, "a/rw", "123\n", -1, 0644); /* same inode, new content */
        assert_int_equal(sysfs_read_i64_live(f->ctx, "a/rw", &i), 0);
        assert_int_equal(i, 123);
        assert_int_equal(f->ctx->n_kept, kept); /* the same fd, not a second one */
        tree_file(f->root, "a/rw", "750000000\n", -1, 0644);
        assert_int_equal(sysfs_read_u64_live(f->ctx, "a/rw", 10, &u), 0);
        assert_int_equal(u, 750000000);

        /* errors are those of a plain read; a file that cannot be read is not kept */
        kept = f->ctx->n_kept;
        assert_int_equal(sysfs_read_i64_live(f->ctx, "a/missing", &i), -ENOENT);
        assert_int_equal(sysfs_read_text_live(f->ctx, "a/oversized", buf, sizeof(buf)), -EMSGSIZE);
        assert_int_equal(sysfs_read_text_live(f->ctx, "a/nul", buf, sizeof(buf)), -EBADMSG);
        assert_int_equal(f->ctx->n_kept, kept);
        /* one that reads but does not parse is (the next value may parse) */
        assert_int_equal(sysfs_read_i64_live(f->ctx, "a/garbage", &i), -EBADMSG);
        assert_int_equal(sysfs_read_i64_live(f->ctx, "a/garbage", &i), -EBADMSG);
        assert_int_equal(f->ctx->n_kept, kept + 1);
        assert_int_equal(sysfs_read_text_live(f->ctx, "a/text", buf, sizeof(buf)), 0);
        assert_string_equal(buf, "113-M3000100-102");
        assert_int_equal(sysfs_read_binary_live(f->ctx, "a/nul", buf, sizeof(buf)), 4);
        assert_memory_equal(buf, "4\0002\n", 4);

        sysfs_forget_kept(f->ctx);
        assert_int_equal(f->ctx->n_kept, 0);
        assert_int_equal(sysfs_read_i64_live(f->ctx, "a/num", &i), 0);
        assert_int_equal(i, 42);
}

static int find_kept_fd(struct amdsmi_ctx *ctx, const char *path) {
        for (size_t k = 0; k < ctx->kept_size; k++)
                if (ctx->kept[k].path && strcmp(ctx->kept[k].path, path) == 0)
                        return ctx->kept[k].fd;
        return -1;
}

/* A kept fd that stops working (a removed device: ENODEV from kernfs) is replaced by a fresh
 * open, and the other kept files stay reachable. */
static void test_live_broken_fd(void **state) {
        struct fixture *f = *state;
        char rel[64];
        int64_t i = 0;
        int fd, dirfd;

        sysfs_forget_kept(f->ctx);
        for (int k = 0; k < 200; k++) { /* enough to grow the table and collide */
                char val[32];

                snprintf(rel, sizeof(rel), "many/f%d", k);
                snprintf(val, sizeof(val), "%d\n", k);
                tree_file(f->root, rel, val, -1, 0444);
                assert_int_equal(sysfs_read_i64_live(f->ctx, rel, &i), 0);
                assert_int_equal(i, k);
        }
        assert_int_equal(f->ctx->n_kept, 200);

        /* break one kept fd behind the table's back: reading a directory fails (EISDIR) */
        fd = find_kept_fd(f->ctx, "many/f77");
        assert_true(fd >= 0);
        dirfd = open(f->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        assert_true(dirfd >= 0);
        assert_int_equal(dup2(dirfd, fd), fd);
        close(dirfd);
        assert_int_equal(sysfs_read_i64_live(f->ctx, "many/f77", &i), 0);
        assert_int_equal(i, 77);
        assert_int_equal(f->ctx->n_kept, 200);
        for (int k = 0; k < 200; k++) {
                snprintf(rel, sizeof(rel), "many/f%d", k);
                assert_true(find_kept_fd(f->ctx, rel) >= 0);
                assert_int_equal(sysfs_read_i64_live(f->ctx, rel, &i), 0);
                assert_int_equal(i, k);
        }
        assert_int_equal(f->ctx->n_kept, 200);

        /* the file went away: the error of a fresh open, and the entry is gone */
        snprintf(rel, sizeof(rel), "%s/many/f5", f->root);
        fd = find_kept_fd(f->ctx, "many/f5");
        dirfd = open(f->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        assert_int_equal(dup2(dirfd, fd), fd);
        close(dirfd);
        assert_int_equal(unlink(rel), 0);
        assert_int_equal(sysfs_read_i64_live(f->ctx, "many/f5", &i), -ENOENT);
        assert_int_equal(find_kept_fd(f->ctx, "many/f5"), -1);
        assert_int_equal(f->ctx->n_kept, 199);
        sysfs_forget_kept(f->ctx);
}

/* The table is bounded: beyond it files are read the plain way, still right. */
static void test_live_bounded(void **state) {
        struct fixture *f = *state;
        char rel[64];
        int64_t i = 0;

        sysfs_forget_kept(f->ctx);
        for (int pass = 0; pass < 2; pass++)
                for (int k = 0; k < 1100; k++) {
                        char val[32];

                        snprintf(rel, sizeof(rel), "bounded/f%d", k);
                        if (pass == 0) {
                                snprintf(val, sizeof(val), "%d\n", k * 3);
                                tree_file(f->root, rel, val, -1, 0444);
                        }
                        assert_int_equal(sysfs_read_i64_live(f->ctx, rel, &i), 0);
                        assert_int_equal(i, k * 3);
                }
        assert_int_equal(f->ctx->n_kept, 1024);
        sysfs_forget_kept(f->ctx);
        assert_int_equal(f->ctx->n_kept, 0);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_pci_bdf),
                cmocka_unit_test(test_numbers),
                cmocka_unit_test(test_bad_numbers),
                cmocka_unit_test(test_text),
                cmocka_unit_test(test_dirs_links_modes),
                cmocka_unit_test(test_no_dev_root),
                cmocka_unit_test(test_missing_root),
                cmocka_unit_test(test_env_roots),
                cmocka_unit_test(test_live_reread),
                cmocka_unit_test(test_live_broken_fd),
                cmocka_unit_test(test_live_bounded),
        };
        return cmocka_run_group_tests(tests, setup, teardown);
}
