/* SPDX-License-Identifier: MIT */
/*
 * In-process discovery cost: context + enumeration + KFD partition mapping of the tree in
 * $AMDSMI_SYSFS_ROOT, and one telemetry pass (hwmon + gpu_metrics of every GPU).
 *
 *   AMDSMI_SYSFS_ROOT=TREE bench-discovery [ROUNDS]
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <amdsmi/amdsmi.h>

#include "bench-util.h"

int main(int argc, char **argv) {
        int rounds = argc > 1 ? atoi(argv[1]) : 200;
        double *disc, *tele;
        size_t gpus = 0, parts = 0;

        if (rounds < 1)
                return 2;
        disc = calloc((size_t) rounds, sizeof(double));
        tele = calloc((size_t) rounds, sizeof(double));
        if (!disc || !tele)
                return 1;
        for (int i = 0; i < rounds; i++) {
                struct amdsmi_ctx *ctx = NULL;
                static struct amdsmi_gpu_metrics m;
                struct amdsmi_hwmon h;
                double t0 = bench_now_us(CLOCK_MONOTONIC), t1;
                int n;

                if (amdsmi_ctx_new(&ctx) < 0)
                        return 1;
                n = amdsmi_ctx_enumerate(ctx);
                if (n < 0) {
                        fprintf(stderr, "enumerate failed: %d\n", n);
                        return 1;
                }
                parts = 0;
                for (int g = 0; g < n; g++)
                        parts += amdsmi_gpu_get_partition_count(amdsmi_ctx_get_gpu(ctx, (size_t) g));
                t1 = bench_now_us(CLOCK_MONOTONIC);
                for (int g = 0; g < n; g++) {
                        struct amdsmi_gpu *gpu = amdsmi_ctx_get_gpu(ctx, (size_t) g);
                        (void) amdsmi_gpu_read_hwmon(gpu, &h);
                        (void) amdsmi_gpu_read_metrics(gpu, &m);
                }
                tele[i] = bench_now_us(CLOCK_MONOTONIC) - t1;
                disc[i] = t1 - t0;
                gpus = (size_t) n;
                amdsmi_ctx_unref(ctx);
        }
        printf("discovery (%zu GPUs, %zu partitions): median %.0f us (%d rounds)\n", gpus, parts,
               bench_median(disc, (size_t) rounds), rounds);
        printf("telemetry pass (hwmon + gpu_metrics, %zu GPUs): median %.0f us (%d rounds)\n", gpus,
               bench_median(tele, (size_t) rounds), rounds);
        free(disc);
        free(tele);
        return 0;
}
