/* SPDX-License-Identifier: MIT */
/*
 * Firmware versions: sysfs fw_version/ first, the amdgpu INFO ioctl for the rest. Runs with
 * libmock-ioctl.so preloaded: the dev root is a temporary directory holding empty regular
 * files dri/renderD*, and the mock answers the ioctls on them from $MOCK_AMDGPU_FW and logs
 * each one to $MOCK_IOCTL_LOG, so the test sees exactly which queries were made.
 *
 * The tree:
 *   0000:05:00.0  renderD128, fw_version/ with mec, sos, smc, vcn, imu, a garbage ta_ras and
 *                 an empty ta_xgmi
 *   0000:06:00.0  renderD129, no fw_version/ (everything from the ioctl)
 *   0000:07:00.0  no render node, fw_version/ with mec only
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include <amdsmi/amdsmi.h>

#define FW_SCRIPT "toc=0x00000016/0x3,cap=0x12,mes=-22,mes_kiq=0x5d,imu=0x0b000c00"

struct fixture {
        char tmp[256];
        char sysroot[288];
        char devroot[288];
        char empty_devroot[288];
        char logpath[288];
        struct amdsmi_ctx *ctx;
        char messages[16384];
};

static int mkdir_p(const char *path) {
        char buf[PATH_MAX];

        snprintf(buf, sizeof(buf), "%s", path);
        for (char *p = buf + 1; *p; p++) {
                if (*p != '/')
                        continue;
                *p = '\0';
                if (mkdir(buf, 0755) < 0 && errno != EEXIST)
                        return -errno;
                *p = '/';
        }
        if (mkdir(buf, 0755) < 0 && errno != EEXIST)
                return -errno;
        return 0;
}

/* Writes root/rel (creating parent directories) with the given content and mode. */
static int write_file_mode(const char *root, const char *rel, const char *content,
                           mode_t mode) {
        char path[PATH_MAX];
        char *slash;
        FILE *f;

        snprintf(path, sizeof(path), "%s/%s", root, rel);
        slash = strrchr(path, '/');
        *slash = '\0';
        if (mkdir_p(path) < 0)
                return -1;
        *slash = '/';
        f = fopen(path, "we");
        if (!f)
                return -1;
        fputs(content, f);
        if (fclose(f) != 0)
                return -1;
        return chmod(path, mode);
}

/* A sysfs attribute: read-only, like the kernel's fw_version files. */
static int write_file(const char *root, const char *rel, const char *content) {
        return write_file_mode(root, rel, content, 0444);
}

static int make_dir(const char *root, const char *rel) {
        char path[PATH_MAX];

        snprintf(path, sizeof(path), "%s/%s", root, rel);
        return mkdir_p(path);
}

static int add_pci_function(const char *sysroot, const char *bdf) {
        static const char *const ids[][2] = {
                { "vendor", "0x1002\n" },
                { "device", "0x74a1\n" },
                { "class", "0x120000\n" },
                { "subsystem_vendor", "0x1002\n" },
                { "subsystem_device", "0x74a1\n" },
                { "revision", "0x00\n" },
                { "numa_node", "0\n" },
        };
        char rel[256];

        for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++) {
                snprintf(rel, sizeof(rel), "bus/pci/devices/%s/%s", bdf, ids[i][0]);
                if (write_file(sysroot, rel, ids[i][1]) < 0)
                        return -1;
        }
        return 0;
}

static int build_tree(struct fixture *f) {
        static const char *const fw05[][2] = {
                { "mec_fw_version", "0x0000009c\n" },
                { "sos_fw_version", "0x00360118\n" },
                { "smc_fw_version", "0x00557e00\n" },
                { "vcn_fw_version", "0x08614000\n" },
                { "imu_fw_version", "0x0b000b00\n" },
                { "ta_ras_fw_version", "garbage\n" },
                { "ta_xgmi_fw_version", "" },
        };
        const char *d05 = "bus/pci/devices/0000:05:00.0";
        char rel[256];

        if (add_pci_function(f->sysroot, "0000:05:00.0") < 0 ||
            add_pci_function(f->sysroot, "0000:06:00.0") < 0 ||
            add_pci_function(f->sysroot, "0000:07:00.0") < 0)
                return -1;
        for (size_t i = 0; i < sizeof(fw05) / sizeof(fw05[0]); i++) {
                snprintf(rel, sizeof(rel), "%s/fw_version/%s", d05, fw05[i][0]);
                if (write_file(f->sysroot, rel, fw05[i][1]) < 0)
                        return -1;
        }
        if (write_file(f->sysroot, "bus/pci/devices/0000:07:00.0/fw_version/mec_fw_version",
                       "0x0000009a\n") < 0)
                return -1;
        if (make_dir(f->sysroot, "bus/pci/devices/0000:05:00.0/drm/card0") < 0 ||
            make_dir(f->sysroot, "bus/pci/devices/0000:05:00.0/drm/renderD128") < 0 ||
            make_dir(f->sysroot, "bus/pci/devices/0000:06:00.0/drm/card1") < 0 ||
            make_dir(f->sysroot, "bus/pci/devices/0000:06:00.0/drm/renderD129") < 0)
                return -1;
        /* Regular files stand in for the render nodes (opened O_RDWR): the mock answers
         * before the kernel would. */
        if (write_file_mode(f->devroot, "dri/renderD128", "", 0644) < 0 ||
            write_file_mode(f->devroot, "dri/renderD129", "", 0644) < 0)
                return -1;
        return make_dir(f->empty_devroot, "dri");
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
        return remove(path);
}

static int group_setup(void **state) {
        struct fixture *f;
        const char *tmpdir = getenv("TMPDIR");

        if (!dlsym(RTLD_DEFAULT, "mock_ioctl_loaded")) {
                print_error("libmock-ioctl.so is not preloaded (LD_PRELOAD)\n");
                return -1;
        }
        f = calloc(1, sizeof(*f));
        if (!f)
                return -1;
        snprintf(f->tmp, sizeof(f->tmp), "%s/amdsmi-test-firmware.XXXXXX",
                 tmpdir && *tmpdir ? tmpdir : "/tmp");
        if (!mkdtemp(f->tmp)) {
                free(f);
                return -1;
        }
        snprintf(f->sysroot, sizeof(f->sysroot), "%s/sys", f->tmp);
        snprintf(f->devroot, sizeof(f->devroot), "%s/dev", f->tmp);
        snprintf(f->empty_devroot, sizeof(f->empty_devroot), "%s/dev-empty", f->tmp);
        snprintf(f->logpath, sizeof(f->logpath), "%s/ioctl.log", f->tmp);
        *state = f;
        if (build_tree(f) < 0)
                return -1;
        /* The mock answers only for files below its dev root. */
        setenv("MOCK_DEV_ROOT", f->devroot, 1);
        setenv("MOCK_IOCTL_LOG", f->logpath, 1);
        setenv("MOCK_AMDGPU_FW", FW_SCRIPT, 1);
        return 0;
}

static int group_teardown(void **state) {
        struct fixture *f = *state;

        if (!f)
                return 0;
        if (f->tmp[0])
                nftw(f->tmp, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
        free(f);
        return 0;
}

static void capture_log(struct amdsmi_ctx *ctx, int priority, const char *format, va_list args,
                        void *userdata) __attribute__((format(printf, 3, 0)));
static void capture_log(struct amdsmi_ctx *ctx, int priority, const char *format, va_list args,
                        void *userdata) {
        struct fixture *f = userdata;
        size_t len = strlen(f->messages);

        if (len + 2 >= sizeof(f->messages))
                return;
        vsnprintf(f->messages + len, sizeof(f->messages) - len - 1, format, args);
        strcat(f->messages, "\n");
}

static void reset_log(struct fixture *f) {
        int fd = open(f->logpath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

        assert_true(fd >= 0);
        close(fd);
        f->messages[0] = '\0';
}

static struct amdsmi_ctx *new_ctx(struct fixture *f, const char *devroot) {
        struct amdsmi_ctx *ctx = NULL;

        assert_int_equal(amdsmi_ctx_new_with_roots(f->sysroot, devroot, &ctx), 0);
        amdsmi_ctx_set_log_fn(ctx, capture_log, f);
        amdsmi_ctx_set_log_priority(ctx, AMDSMI_LOG_WARNING);
        assert_int_equal(amdsmi_ctx_enumerate(ctx), 3);
        return ctx;
}

static int test_setup(void **state) {
        struct fixture *f = *state;

        reset_log(f);
        f->ctx = new_ctx(f, f->devroot);
        return 0;
}

static int test_teardown(void **state) {
        struct fixture *f = *state;

        f->ctx = amdsmi_ctx_unref(f->ctx);
        return 0;
}

static struct amdsmi_gpu *find_gpu(struct amdsmi_ctx *ctx, const char *bdf) {
        struct amdsmi_gpu *gpu = NULL;

        assert_int_equal(amdsmi_ctx_find_gpu(ctx, bdf, &gpu), 0);
        assert_non_null(gpu);
        return gpu;
}

static const struct amdsmi_firmware *find_fw(const struct amdsmi_firmware *fw, int n,
                                             const char *name) {
        for (int i = 0; i < n; i++)
                if (strcmp(fw[i].name, name) == 0)
                        return &fw[i];
        return NULL;
}

static void assert_fw(const struct amdsmi_firmware *fw, int n, const char *name,
                      uint64_t version, int from_ioctl) {
        const struct amdsmi_firmware *e = find_fw(fw, n, name);

        if (!e)
                fail_msg("firmware %s missing", name);
        assert_int_equal(e->version, version);
        assert_int_equal(e->from_ioctl, from_ioctl);
}

/* The mock's log: its content, and the number of lines. */
static int read_ioctl_log(struct fixture *f, char *buf, size_t size) {
        FILE *file = fopen(f->logpath, "re");
        size_t n = 0;
        int lines = 0;

        buf[0] = '\0';
        if (!file)
                return 0;
        n = fread(buf, 1, size - 1, file);
        fclose(file);
        buf[n] = '\0';
        for (size_t i = 0; i < n; i++)
                if (buf[i] == '\n')
                        lines++;
        return lines;
}

static void test_sysfs_values(void **state) {
        struct fixture *f = *state;
        const struct amdsmi_firmware *fw = NULL;
        int n;

        n = amdsmi_gpu_get_firmware(find_gpu(f->ctx, "0000:05:00.0"), &fw);
        assert_true(n > 0);
        assert_fw(fw, n, "mec", 0x9c, 0);
        assert_fw(fw, n, "sos", 0x00360118, 0);
        assert_fw(fw, n, "smc", 0x00557e00, 0);
        assert_fw(fw, n, "vcn", 0x08614000, 0);
        /* sysfs has imu: its value wins, and the ioctl is never asked (see below). */
        assert_fw(fw, n, "imu", 0x0b000b00, 0);
}

static void test_garbage_skipped(void **state) {
        struct fixture *f = *state;
        const struct amdsmi_firmware *fw = NULL;
        int n;

        n = amdsmi_gpu_get_firmware(find_gpu(f->ctx, "0000:05:00.0"), &fw);
        assert_true(n > 0);
        assert_null(find_fw(fw, n, "ta_ras"));
        assert_null(find_fw(fw, n, "ta_xgmi"));
        /* Each skipped file is logged with its path. */
        assert_non_null(strstr(f->messages, "fw_version/ta_ras_fw_version"));
        assert_non_null(strstr(f->messages, "fw_version/ta_xgmi_fw_version"));
}

static void test_sorted(void **state) {
        struct fixture *f = *state;
        const struct amdsmi_firmware *fw = NULL;
        int n;

        n = amdsmi_gpu_get_firmware(find_gpu(f->ctx, "0000:05:00.0"), &fw);
        /* 5 from sysfs + psp_toc, cap, mes_kiq from the ioctl (mes fails). */
        assert_int_equal(n, 8);
        for (int i = 1; i < n; i++)
                assert_true(strcmp(fw[i - 1].name, fw[i].name) < 0);
}

static void test_ioctl_kinds(void **state) {
        struct fixture *f = *state;
        const struct amdsmi_firmware *fw = NULL;
        char log[4096];
        int n, lines;

        n = amdsmi_gpu_get_firmware(find_gpu(f->ctx, "0000:05:00.0"), &fw);
        assert_true(n > 0);
        assert_fw(fw, n, "psp_toc", 0x16, 1);
        assert_fw(fw, n, "cap", 0x12, 1);
        assert_fw(fw, n, "mes_kiq", 0x5d, 1);
        /* The mock fails mes with EINVAL: omitted, not an error. */
        assert_null(find_fw(fw, n, "mes"));

        lines = read_ioctl_log(f, log, sizeof(log));
        assert_int_equal(lines, 4);
        assert_non_null(strstr(log, "fw_type=toc result=0x00000016\n"));
        assert_non_null(strstr(log, "fw_type=cap result=0x00000012\n"));
        assert_non_null(strstr(log, "fw_type=mes result=-22\n"));
        assert_non_null(strstr(log, "fw_type=mes_kiq result=0x0000005d\n"));
        /* Kinds sysfs already had are never asked. */
        assert_null(strstr(log, "fw_type=imu "));
        assert_null(strstr(log, "fw_type=gfx_mec "));
}

static void test_no_sysfs_dir(void **state) {
        struct fixture *f = *state;
        const struct amdsmi_firmware *fw = NULL;
        char log[4096];
        int n;

        n = amdsmi_gpu_get_firmware(find_gpu(f->ctx, "0000:06:00.0"), &fw);
        assert_int_equal(n, 4);
        assert_fw(fw, n, "cap", 0x12, 1);
        assert_fw(fw, n, "imu", 0x0b000c00, 1);
        assert_fw(fw, n, "mes_kiq", 0x5d, 1);
        assert_fw(fw, n, "psp_toc", 0x16, 1);
        assert_int_equal(read_ioctl_log(f, log, sizeof(log)), 5);
        assert_non_null(strstr(log, "fw_type=imu result=0x0b000c00\n"));
}

static void test_no_render_node(void **state) {
        struct fixture *f = *state;
        const struct amdsmi_firmware *fw = NULL;
        char log[4096];
        int n;

        n = amdsmi_gpu_get_firmware(find_gpu(f->ctx, "0000:07:00.0"), &fw);
        assert_int_equal(n, 1);
        assert_fw(fw, n, "mec", 0x9a, 0);
        assert_int_equal(read_ioctl_log(f, log, sizeof(log)), 0);
}

static void test_no_dev_root(void **state) {
        struct fixture *f = *state;
        struct amdsmi_ctx *ctx = new_ctx(f, NULL);
        const struct amdsmi_firmware *fw = NULL;
        char log[4096];
        int n;

        n = amdsmi_gpu_get_firmware(find_gpu(ctx, "0000:05:00.0"), &fw);
        assert_int_equal(n, 5);
        for (int i = 0; i < n; i++)
                assert_int_equal(fw[i].from_ioctl, 0);
        assert_null(find_fw(fw, n, "psp_toc"));
        n = amdsmi_gpu_get_firmware(find_gpu(ctx, "0000:06:00.0"), &fw);
        assert_int_equal(n, 0);
        assert_int_equal(read_ioctl_log(f, log, sizeof(log)), 0);
        amdsmi_ctx_unref(ctx);
}

static void test_missing_node(void **state) {
        struct fixture *f = *state;
        struct amdsmi_ctx *ctx = new_ctx(f, f->empty_devroot);
        const struct amdsmi_firmware *fw = NULL;
        char log[4096];
        int n;

        /* A dev root without dri/renderD128: sysfs only, no error. */
        n = amdsmi_gpu_get_firmware(find_gpu(ctx, "0000:05:00.0"), &fw);
        assert_int_equal(n, 5);
        assert_null(find_fw(fw, n, "cap"));
        assert_int_equal(read_ioctl_log(f, log, sizeof(log)), 0);
        amdsmi_ctx_unref(ctx);
}

static void test_cached(void **state) {
        struct fixture *f = *state;
        struct amdsmi_gpu *gpu = find_gpu(f->ctx, "0000:05:00.0");
        const struct amdsmi_firmware *fw1 = NULL, *fw2 = NULL;
        char log[4096];
        int n1, n2;

        n1 = amdsmi_gpu_get_firmware(gpu, &fw1);
        assert_int_equal(read_ioctl_log(f, log, sizeof(log)), 4);
        n2 = amdsmi_gpu_get_firmware(gpu, &fw2);
        assert_int_equal(n1, n2);
        assert_ptr_equal(fw1, fw2);
        assert_int_equal(read_ioctl_log(f, log, sizeof(log)), 4);
}

static void test_gpu_outlives_enumeration(void **state) {
        struct fixture *f = *state;
        struct amdsmi_gpu *gpu = amdsmi_gpu_ref(find_gpu(f->ctx, "0000:06:00.0"));
        const struct amdsmi_firmware *fw = NULL;
        int n;

        /* The cache lives and dies with the handle (ASan checks the free). */
        n = amdsmi_gpu_get_firmware(gpu, &fw);
        assert_int_equal(n, 4);
        assert_int_equal(amdsmi_ctx_enumerate(f->ctx), 3);
        assert_int_equal(amdsmi_gpu_get_firmware(gpu, &fw), 4);
        assert_string_equal(fw[0].name, "cap");
        amdsmi_gpu_unref(gpu);
}

static void test_mock_scope(void **state) {
        struct fixture *f = *state;
        char path[PATH_MAX], log[4096];
        int fd, r;

        /* Outside the mock's dev root the real ioctl answers (a regular file: ENOTTY). */
        snprintf(path, sizeof(path), "%s/sys/bus/pci/devices/0000:05:00.0/vendor", f->tmp);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        assert_true(fd >= 0);
        r = ioctl(fd, 0x5401UL /* TCGETS */, NULL);
        assert_int_equal(r, -1);
        assert_int_equal(errno, ENOTTY);
        close(fd);
        assert_int_equal(read_ioctl_log(f, log, sizeof(log)), 0);

        /* Inside it, any other request is logged and refused. */
        snprintf(path, sizeof(path), "%s/dri/renderD128", f->devroot);
        fd = open(path, O_RDWR | O_CLOEXEC);
        assert_true(fd >= 0);
        r = ioctl(fd, 0x5401UL, NULL);
        assert_int_equal(r, -1);
        assert_int_equal(errno, ENOTTY);
        close(fd);
        assert_int_equal(read_ioctl_log(f, log, sizeof(log)), 1);
        assert_non_null(strstr(log, "request=0x5401 result=-25\n"));
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_sysfs_values, test_setup, test_teardown),
                cmocka_unit_test_setup_teardown(test_garbage_skipped, test_setup, test_teardown),
                cmocka_unit_test_setup_teardown(test_sorted, test_setup, test_teardown),
                cmocka_unit_test_setup_teardown(test_ioctl_kinds, test_setup, test_teardown),
                cmocka_unit_test_setup_teardown(test_no_sysfs_dir, test_setup, test_teardown),
                cmocka_unit_test_setup_teardown(test_no_render_node, test_setup, test_teardown),
                cmocka_unit_test_setup_teardown(test_no_dev_root, test_setup, test_teardown),
                cmocka_unit_test_setup_teardown(test_missing_node, test_setup, test_teardown),
                cmocka_unit_test_setup_teardown(test_cached, test_setup, test_teardown),
                cmocka_unit_test_setup_teardown(test_gpu_outlives_enumeration, test_setup,
                                                test_teardown),
                cmocka_unit_test_setup_teardown(test_mock_scope, test_setup, test_teardown),
        };

        return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
