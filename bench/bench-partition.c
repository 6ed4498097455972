/* SPDX-License-Identifier: MIT */
/*
 * The cost of a compute-mode change beyond the switch itself, on a simulator mount (the
 * switch needs the kernel's behaviour: a plain tree has none). Alternates GPU 0 between SPX
 * and CPX ROUNDS times, once with a bare write of current_compute_partition (the switch
 * itself: what `echo CPX > current_compute_partition` costs) and once through
 * amdsmi_gpu_set_compute_mode() (preflight, write, settle, verify, re-enumeration), and
 * prints the medians, the difference, and the read/write system calls of each (from
 * /proc/self/io: the library's reads beyond the write).
 *
 *   AMDSMI_SYSFS_ROOT=MOUNT bench-partition [ROUNDS]
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <amdsmi/amdsmi.h>

#include "bench-util.h"

/* Read and write system calls of this process so far. */
static void io_calls(long *ret_r, long *ret_w) {
        char line[128];
        FILE *f = fopen("/proc/self/io", "re");

        *ret_r = *ret_w = 0;
        if (!f)
                return;
        while (fgets(line, sizeof(line), f)) {
                if (strncmp(line, "syscr: ", 7) == 0)
                        *ret_r = atol(line + 7);
                else if (strncmp(line, "syscw: ", 7) == 0)
                        *ret_w = atol(line + 7);
        }
        fclose(f);
}

static int raw_write(const char *path, const char *mode) {
        int fd = open(path, O_WRONLY | O_CLOEXEC);
        ssize_t n;

        if (fd < 0)
                return -1;
        n = write(fd, mode, strlen(mode));
        close(fd);
        return n == (ssize_t) strlen(mode) ? 0 : -1;
}

int main(int argc, char **argv) {
        static const enum amdsmi_compute_mode modes[2] = { AMDSMI_COMPUTE_CPX, AMDSMI_COMPUTE_SPX };
        int rounds = argc > 1 ? atoi(argv[1]) : 10;
        const char *root = getenv("AMDSMI_SYSFS_ROOT");
        struct amdsmi_ctx *ctx = NULL;
        struct amdsmi_gpu *gpu;
        char path[512];
        double *raw, *lib;
        long r0, w0, r1, w1, lib_r = 0, lib_w = 0, raw_r = 0, raw_w = 0;

        if (rounds < 1 || !root) {
                fprintf(stderr, "usage: AMDSMI_SYSFS_ROOT=MOUNT bench-partition [ROUNDS]\n");
                return 2;
        }
        raw = calloc((size_t) rounds * 2, sizeof(double));
        lib = calloc((size_t) rounds * 2, sizeof(double));
        if (!raw || !lib || amdsmi_ctx_new(&ctx) < 0 || amdsmi_ctx_enumerate(ctx) < 1)
                return 1;
        gpu = amdsmi_ctx_get_gpu(ctx, 0);
        snprintf(path, sizeof(path), "%s/bus/pci/devices/%s/current_compute_partition", root,
                 amdsmi_gpu_get_bdf(gpu));

        for (int i = 0; i < rounds * 2; i++) {
                const char *m = amdsmi_compute_mode_to_string(modes[i % 2]);
                double t0;

                io_calls(&r0, &w0);
                t0 = bench_now_us(CLOCK_MONOTONIC);
                if (raw_write(path, m) < 0) {
                        fprintf(stderr, "writing %s to %s failed\n", m, path);
                        return 1;
                }
                raw[i] = bench_now_us(CLOCK_MONOTONIC) - t0;
                io_calls(&r1, &w1);
                raw_r += r1 - r0;
                raw_w += w1 - w0;
        }
        for (int i = 0; i < rounds * 2; i++) {
                struct amdsmi_partition_change c = { .size = sizeof(c) };
                double t0;
                int r;

                io_calls(&r0, &w0);
                t0 = bench_now_us(CLOCK_MONOTONIC);
                r = amdsmi_gpu_set_compute_mode(gpu, modes[i % 2], 0, 0, &c);
                lib[i] = bench_now_us(CLOCK_MONOTONIC) - t0;
                io_calls(&r1, &w1);
                if (r < 0 || !c.changed) {
                        fprintf(stderr, "amdsmi_gpu_set_compute_mode(%s): %d %s\n",
                                amdsmi_compute_mode_to_string(modes[i % 2]), r, c.message);
                        return 1;
                }
                lib_r += r1 - r0;
                lib_w += w1 - w0;
        }

        double mr = bench_median(raw, (size_t) rounds * 2),
               ml = bench_median(lib, (size_t) rounds * 2);
        printf("compute switch SPX<->CPX, GPU %s, %d switches each:\n", amdsmi_gpu_get_bdf(gpu),
               rounds * 2);
        printf("  bare write:                  median %.0f us, %.1f reads + %.1f writes per switch\n",
               mr, (double) raw_r / (rounds * 2), (double) raw_w / (rounds * 2));
        printf("  amdsmi_gpu_set_compute_mode: median %.0f us, %.1f reads + %.1f writes per switch\n",
               ml, (double) lib_r / (rounds * 2), (double) lib_w / (rounds * 2));
        printf("  beyond the switch: %.0f us (ratio %.2fx), %.1f reads\n", ml - mr, ml / mr,
               (double) (lib_r - raw_r) / (rounds * 2));
        amdsmi_ctx_unref(ctx);
        free(raw);
        free(lib);
        return 0;
}
