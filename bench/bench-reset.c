/* SPDX-License-Identifier: MIT */
/*
 * The cost of a GPU reset beyond the kernel's, on a simulator mount (the reset needs the
 * kernel's behaviour: a plain tree has none). Resets GPU 0's hive ROUNDS times, once with a
 * bare read of its debugfs amdgpu_gpu_recover (what `cat amdgpu_gpu_recover` costs: the
 * kernel's recovery) and once through amdsmi_gpu_reset() (the reader process, the deadline,
 * the wait until every GPU answers with its KFD nodes), and prints the medians of each, of the
 * library's reset_ms and wait_ms, and of its own time beyond them.
 *
 *   AMDSMI_SYSFS_ROOT=MOUNT bench-reset [ROUNDS]
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <amdsmi/amdsmi.h>

#include "bench-util.h"

static double now_ms(void) {
        return bench_now_us(CLOCK_MONOTONIC) / 1e3;
}

static int bare_read(const char *path) {
        char buf[64];
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        ssize_t n;

        if (fd < 0)
                return -1;
        n = read(fd, buf, sizeof(buf) - 1);
        close(fd);
        return n > 0 && buf[0] == '0' ? 0 : -1;
}

int main(int argc, char **argv) {
        int rounds = argc > 1 ? atoi(argv[1]) : 10;
        const char *root = getenv("AMDSMI_SYSFS_ROOT");
        struct amdsmi_ctx *ctx = NULL;
        struct amdsmi_gpu *gpu;
        double *bare, *lib, *res, *wait, *own;
        char path[512];
        int r;

        if (!root || rounds < 1) {
                fprintf(stderr, "usage: AMDSMI_SYSFS_ROOT=MOUNT bench-reset [ROUNDS]\n");
                return 2;
        }
        r = amdsmi_ctx_new(&ctx);
        if (r < 0 || amdsmi_ctx_enumerate(ctx) < 0 || !(gpu = amdsmi_ctx_get_gpu(ctx, 0))) {
                fprintf(stderr, "bench-reset: no GPU under %s\n", root);
                return 1;
        }
        snprintf(path, sizeof(path), "%s/kernel/debug/dri/%s/amdgpu_gpu_recover", root,
                 amdsmi_gpu_get_bdf(gpu));
        bare = calloc((size_t) rounds, sizeof(double));
        lib = calloc((size_t) rounds, sizeof(double));
        res = calloc((size_t) rounds, sizeof(double));
        wait = calloc((size_t) rounds, sizeof(double));
        own = calloc((size_t) rounds, sizeof(double));
        if (!bare || !lib || !res || !wait || !own)
                return 1;
        for (int i = 0; i < rounds; i++) {
                struct amdsmi_reset_report rep = { .size = sizeof(rep) };
                double t = now_ms();

                if (bare_read(path) < 0) {
                        fprintf(stderr, "bench-reset: %s: the read failed\n", path);
                        return 1;
                }
                bare[i] = now_ms() - t;
                t = now_ms();
                r = amdsmi_gpu_reset(gpu, 0, 60000, &rep);
                lib[i] = now_ms() - t;
                if (r < 0) {
                        fprintf(stderr, "bench-reset: amdsmi_gpu_reset: %s (%s)\n", strerror(-r),
                                rep.message);
                        return 1;
                }
                res[i] = rep.reset_ms;
                wait[i] = rep.wait_ms;
                own[i] = lib[i] - rep.reset_ms - rep.wait_ms;
        }
        printf("GPU reset of a hive of %u GPUs, %d rounds (medians):\n",
               amdsmi_gpu_get_reset_hive(gpu, NULL, 0), rounds);
        printf("  bare read of amdgpu_gpu_recover   %8.2f ms\n",
               bench_median(bare, (size_t) rounds));
        printf("  amdsmi_gpu_reset()                %8.2f ms (reset %.2f ms, wait %.2f ms)\n",
               bench_median(lib, (size_t) rounds), bench_median(res, (size_t) rounds),
               bench_median(wait, (size_t) rounds));
        printf("  library's own time beyond them    %8.2f ms\n",
               bench_median(own, (size_t) rounds));
        amdsmi_ctx_unref(ctx);
        return 0;
}
