/* SPDX-License-Identifier: MIT */
/*
 * The cost of reading power and of applying a cap, in-process on a plain snapshot tree:
 *
 *  - amdsmi_gpu_read_power() on every GPU, with and without AMDSMI_POWER_READ_NO_METRICS:
 *    the median time per GPU over ROUNDS passes, and the read system calls per call;
 *  - amdsmi_gpu_set_power_cap() on GPU 0 after one amdsmi_gpu_read_power() (the range is
 *    remembered): the median time and the read/write system calls per call (one write and
 *    one read-back expected), and the first call of a fresh context, which also reads the
 *    range (power1_cap_min, power1_cap_max) and the GPU's SR-IOV role (sriov_numvfs);
 *  - the floor: a bare write and read-back of the same power1_cap, open/write/close +
 *    open/read/close (openat() from the root, as the library opens it).
 *
 * System calls come from /proc/self/io (syscr, syscw), less what reading that file costs.
 * The cap alternates between 600 W and 650 W and is restored at the end; run it on a copy
 * of a tree (the writes change power1_cap), never on /sys.
 *
 *   AMDSMI_SYSFS_ROOT=COPY bench-power [ROUNDS]      (default 1000)
 */
#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <amdsmi/amdsmi.h>

#include "bench-util.h"

#define CAP_A_UW UINT64_C(600000000)
#define CAP_B_UW UINT64_C(650000000)

/* Read and write system calls of this process so far, with a single read of /proc/self/io. */
static void io_calls(long *ret_r, long *ret_w) {
        char buf[512], *p;
        int fd = open("/proc/self/io", O_RDONLY | O_CLOEXEC);
        ssize_t n;

        *ret_r = *ret_w = 0;
        if (fd < 0)
                return;
        n = read(fd, buf, sizeof(buf) - 1);
        close(fd);
        if (n <= 0)
                return;
        buf[n] = '\0';
        if ((p = strstr(buf, "syscr: ")))
                *ret_r = atol(p + 7);
        if ((p = strstr(buf, "syscw: ")))
                *ret_w = atol(p + 7);
}

/* The reads that io_calls() itself adds between two calls. */
static long io_overhead(void) {
        long r0, w0, r1, w1;

        io_calls(&r0, &w0);
        io_calls(&r1, &w1);
        return r1 - r0;
}

/* bus/pci/devices/BDF/hwmon/hwmonN/power1_cap of the amdgpu hwmon, relative to the root. */
static int find_cap(int root, const char *bdf, char *buf, size_t size) {
        char dir[64], name[512], text[16];
        struct dirent *de;
        int found = -1;
        DIR *d;
        int fd;

        snprintf(dir, sizeof(dir), "bus/pci/devices/%s/hwmon", bdf);
        fd = openat(root, dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0 || !(d = fdopendir(fd)))
                return -1;
        while (found < 0 && (de = readdir(d))) {
                int nfd;
                ssize_t n;

                if (strncmp(de->d_name, "hwmon", 5) != 0)
                        continue;
                snprintf(name, sizeof(name), "%s/%s/name", dir, de->d_name);
                nfd = openat(root, name, O_RDONLY | O_CLOEXEC);
                if (nfd < 0)
                        continue;
                n = read(nfd, text, sizeof(text) - 1);
                close(nfd);
                if (n == 7 && memcmp(text, "amdgpu\n", 7) == 0) {
                        snprintf(buf, size, "%s/%s/power1_cap", dir, de->d_name);
                        found = 0;
                }
        }
        closedir(d);
        return found;
}

/* One write of power1_cap and one read-back, the way a shell script would do it. */
static int bare_set(int root, const char *path, uint64_t uw) {
        char value[32], back[32];
        ssize_t n;
        int fd;

        snprintf(value, sizeof(value), "%" PRIu64, uw);
        fd = openat(root, path, O_WRONLY | O_CLOEXEC);
        if (fd < 0)
                return -1;
        n = write(fd, value, strlen(value));
        close(fd);
        if (n != (ssize_t) strlen(value))
                return -1;
        fd = openat(root, path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return -1;
        n = read(fd, back, sizeof(back) - 1);
        close(fd);
        if (n <= 0)
                return -1;
        back[n] = '\0';
        return strtoull(back, NULL, 10) == uw ? 0 : -1;
}

static int set_cap(struct amdsmi_gpu *gpu, uint64_t uw) {
        struct amdsmi_power_cap_result res = { .size = sizeof(res) };
        int r = amdsmi_gpu_set_power_cap(gpu, uw, 0, &res);

        if (r < 0 || !res.written || res.readback_uw != uw) {
                fprintf(stderr,
                        "amdsmi_gpu_set_power_cap(%s, %" PRIu64 " uW): %d (%s), read back "
                        "%" PRIu64 "\n",
                        amdsmi_gpu_get_bdf(gpu), uw, r, strerror(r < 0 ? -r : 0), res.readback_uw);
                return -1;
        }
        return 0;
}

static int bench_read(struct amdsmi_ctx *ctx, int n_gpus, uint64_t flags, const char *label,
                      double *t, int rounds, long overhead) {
        long r0, w0, r1, w1, reads = 0;

        for (int i = 0; i < rounds; i++) {
                double t0;

                io_calls(&r0, &w0);
                t0 = bench_now_us(CLOCK_MONOTONIC);
                for (int g = 0; g < n_gpus; g++) {
                        struct amdsmi_power_info info = { .size = sizeof(info) };
                        int r = amdsmi_gpu_read_power(amdsmi_ctx_get_gpu(ctx, (size_t) g), flags,
                                                      &info);

                        if (r < 0 || info.ppt0.cap.error < 0) {
                                fprintf(stderr, "amdsmi_gpu_read_power(GPU %d): %d, cap %d\n", g, r,
                                        info.ppt0.cap.error);
                                return -1;
                        }
                }
                t[i] = (bench_now_us(CLOCK_MONOTONIC) - t0) / n_gpus;
                io_calls(&r1, &w1);
                reads += r1 - r0 - overhead;
        }
        printf("  amdsmi_gpu_read_power %-12s median %.1f us per GPU, %.1f reads per call\n", label,
               bench_median(t, (size_t) rounds), (double) reads / rounds / n_gpus);
        return 0;
}

int main(int argc, char **argv) {
        int rounds = argc > 1 ? atoi(argv[1]) : 1000;
        int first_rounds = rounds < 100 ? rounds : 100;
        const char *root = getenv("AMDSMI_SYSFS_ROOT");
        struct amdsmi_ctx *ctx = NULL;
        struct amdsmi_power_info info = { .size = sizeof(info) };
        struct amdsmi_gpu *gpu;
        char cap_path[512];
        double *t;
        long overhead, r0, w0, r1, w1, first_r = 0, first_w = 0, lib_r = 0, lib_w = 0;
        long raw_r = 0, raw_w = 0;
        int n_gpus, root_fd;
        uint64_t original;

        if (rounds < 1 || !root) {
                fprintf(stderr, "usage: AMDSMI_SYSFS_ROOT=COPY bench-power [ROUNDS]\n");
                return 2;
        }
        t = calloc((size_t) rounds, sizeof(double));
        root_fd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (!t || root_fd < 0 || amdsmi_ctx_new(&ctx) < 0)
                return 1;
        n_gpus = amdsmi_ctx_enumerate(ctx);
        if (n_gpus < 1) {
                fprintf(stderr, "no GPU under %s\n", root);
                return 1;
        }
        gpu = amdsmi_ctx_get_gpu(ctx, 0);
        if (find_cap(root_fd, amdsmi_gpu_get_bdf(gpu), cap_path, sizeof(cap_path)) < 0) {
                fprintf(stderr, "%s/bus/pci/devices/%s: no amdgpu hwmon\n", root,
                        amdsmi_gpu_get_bdf(gpu));
                return 1;
        }
        if (amdsmi_gpu_read_power(gpu, AMDSMI_POWER_READ_NO_METRICS, &info) < 0 ||
            info.ppt0.cap.error < 0) {
                fprintf(stderr, "%s/%s: power1_cap unreadable\n", root, cap_path);
                return 1;
        }
        original = info.ppt0.cap.uw;
        overhead = io_overhead();

        printf("power read, %d GPUs, %d passes:\n", n_gpus, rounds);
        if (bench_read(ctx, n_gpus, 0, "(metrics):", t, rounds, overhead) < 0 ||
            bench_read(ctx, n_gpus, AMDSMI_POWER_READ_NO_METRICS, "(NO_METRICS):", t, rounds,
                       overhead) < 0)
                return 1;

        /* The first cap of a fresh context reads the range: one context per sample. */
        for (int i = 0; i < first_rounds; i++) {
                struct amdsmi_ctx *fresh = NULL;
                double t0;

                if (amdsmi_ctx_new(&fresh) < 0 || amdsmi_ctx_enumerate(fresh) < 1)
                        return 1;
                io_calls(&r0, &w0);
                t0 = bench_now_us(CLOCK_MONOTONIC);
                if (set_cap(amdsmi_ctx_get_gpu(fresh, 0), i % 2 ? CAP_B_UW : CAP_A_UW) < 0)
                        return 1;
                t[i] = bench_now_us(CLOCK_MONOTONIC) - t0;
                io_calls(&r1, &w1);
                first_r += r1 - r0 - overhead;
                first_w += w1 - w0;
                amdsmi_ctx_unref(fresh);
        }
        double m_first = bench_median(t, (size_t) first_rounds);

        for (int i = 0; i < rounds; i++) {
                double t0;

                io_calls(&r0, &w0);
                t0 = bench_now_us(CLOCK_MONOTONIC);
                if (bare_set(root_fd, cap_path, i % 2 ? CAP_B_UW : CAP_A_UW) < 0) {
                        fprintf(stderr, "bare write + read-back of %s/%s failed\n", root, cap_path);
                        return 1;
                }
                t[i] = bench_now_us(CLOCK_MONOTONIC) - t0;
                io_calls(&r1, &w1);
                raw_r += r1 - r0 - overhead;
                raw_w += w1 - w0;
        }
        double m_raw = bench_median(t, (size_t) rounds);

        for (int i = 0; i < rounds; i++) {
                double t0;

                io_calls(&r0, &w0);
                t0 = bench_now_us(CLOCK_MONOTONIC);
                if (set_cap(gpu, i % 2 ? CAP_B_UW : CAP_A_UW) < 0)
                        return 1;
                t[i] = bench_now_us(CLOCK_MONOTONIC) - t0;
                io_calls(&r1, &w1);
                lib_r += r1 - r0 - overhead;
                lib_w += w1 - w0;
        }
        double m_lib = bench_median(t, (size_t) rounds);

        if (set_cap(gpu, original) < 0)
                return 1;

        printf("power cap 600 W <-> 650 W, GPU %s, %d caps each (%d fresh contexts):\n",
               amdsmi_gpu_get_bdf(gpu), rounds, first_rounds);
        printf("  bare write + read-back:            median %.1f us, %.1f reads + %.1f writes "
               "per cap\n",
               m_raw, (double) raw_r / rounds, (double) raw_w / rounds);
        printf("  amdsmi_gpu_set_power_cap:          median %.1f us, %.1f reads + %.1f writes "
               "per cap (ratio %.2fx)\n",
               m_lib, (double) lib_r / rounds, (double) lib_w / rounds, m_lib / m_raw);
        printf("  amdsmi_gpu_set_power_cap, first:   median %.1f us, %.1f reads + %.1f writes "
               "per cap (fresh context: + range, SR-IOV role)\n",
               m_first, (double) first_r / first_rounds, (double) first_w / first_rounds);
        close(root_fd);
        amdsmi_ctx_unref(ctx);
        free(t);
        return 0;
}
