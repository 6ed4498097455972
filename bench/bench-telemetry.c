/* SPDX-License-Identifier: MIT */
/*
 * What one telemetry sample of one GPU costs in-process, on a plain snapshot tree, part by
 * part: the hwmon read, the gpu_metrics read and parse, the memory sizes, and the whole
 * `amdsmi metric` document of one GPU as amdsmid's GetMetrics() builds it (the reads above,
 * the JSON tree and its text). Medians over ROUNDS passes over every GPU, warm (back to
 * back) and cold (one GPU every 12.5 ms, as 8 GPUs sampled at 10 Hz are), with the CPU time
 * of the cold run as a share of one core, the figure amdsmid's 10 Hz budget is about.
 *
 *   AMDSMI_SYSFS_ROOT=TREE bench-telemetry [ROUNDS]      (default 500)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#include "bench-util.h"
#include "documents.h"

/* the cold phase: one document every 12.5 ms for 4 s */
#define COLD_SAMPLES 320

static size_t document(struct amdsmi_ctx *ctx, struct amdsmi_gpu *gpu) {
        struct report rep = { .command = "metric", .keep_field_errors = true };
        struct gpu_set set = {};
        struct doc_query q = { .report = &rep, .set = &set };
        json_object *doc;
        size_t len = 0;

        snprintf(rep.hostname, sizeof(rep.hostname), "bench");
        if (gpu_set_attach(&set, ctx, amdsmi_gpu_get_bdf(gpu)) == 0) {
                doc = metric_document(&q);
                if (doc) {
                        len = strlen(json_object_to_json_string_ext(
                                doc, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
                        json_object_put(doc);
                }
        }
        gpu_set_clear(&set);
        report_clear(&rep);
        return len;
}

int main(int argc, char *argv[]) {
        int rounds = argc > 1 ? atoi(argv[1]) : 500;
        struct amdsmi_ctx *ctx = NULL;
        double *t[5];
        size_t n_gpus, k = 0, len = 0;
        int r;

        r = amdsmi_ctx_new(&ctx);
        if (r < 0 || (r = amdsmi_ctx_enumerate(ctx)) <= 0) {
                fprintf(stderr, "no GPUs under AMDSMI_SYSFS_ROOT\n");
                return 1;
        }
        n_gpus = (size_t) r;
        if (rounds < 1)
                rounds = 1;
        for (int i = 0; i < 4; i++)
                t[i] = calloc((size_t) rounds * n_gpus, sizeof(double));
        t[4] = calloc(COLD_SAMPLES, sizeof(double)); /* the cold phase's own count */

        for (int round = 0; round < rounds; round++)
                for (size_t g = 0; g < n_gpus; g++, k++) {
                        struct amdsmi_gpu *gpu = amdsmi_ctx_get_gpu(ctx, g);
                        struct amdsmi_hwmon h;
                        struct amdsmi_gpu_metrics m;
                        struct amdsmi_memory_info mem;
                        double a = bench_now_us(CLOCK_MONOTONIC), b, c, d, e;

                        (void) amdsmi_gpu_read_hwmon(gpu, &h);
                        b = bench_now_us(CLOCK_MONOTONIC);
                        (void) amdsmi_gpu_read_metrics(gpu, &m);
                        c = bench_now_us(CLOCK_MONOTONIC);
                        (void) amdsmi_gpu_read_memory_info(gpu, &mem);
                        d = bench_now_us(CLOCK_MONOTONIC);
                        len = document(ctx, gpu);
                        e = bench_now_us(CLOCK_MONOTONIC);
                        t[0][k] = b - a;
                        t[1][k] = c - b;
                        t[2][k] = d - c;
                        t[3][k] = e - d;
                }
        printf("per GPU, warm, %d rounds over %zu GPUs: hwmon %.1f us, gpu_metrics read+parse "
               "%.1f us, memory sizes %.1f us; GetMetrics document (%zu bytes) %.1f us\n",
               rounds, n_gpus, bench_median(t[0], k), bench_median(t[1], k), bench_median(t[2], k),
               len, bench_median(t[3], k));

        /* cold: one document every 12.5 ms, 8 GPUs at 10 Hz; 4 s */
        {
                int samples = COLD_SAMPLES;
                double cpu0 = bench_now_us(CLOCK_PROCESS_CPUTIME_ID),
                       wall0 = bench_now_us(CLOCK_MONOTONIC);
                double next = wall0;

                for (int i = 0; i < samples; i++) {
                        struct amdsmi_gpu *gpu = amdsmi_ctx_get_gpu(ctx, (size_t) i % n_gpus);
                        double a = bench_now_us(CLOCK_MONOTONIC);

                        (void) document(ctx, gpu);
                        t[4][i] = bench_now_us(CLOCK_MONOTONIC) - a;
                        next += 12500.0;
                        while (bench_now_us(CLOCK_MONOTONIC) < next)
                                usleep((useconds_t) (next - bench_now_us(CLOCK_MONOTONIC)));
                }
                printf("GetMetrics document, cold (one GPU every 12.5 ms): median %.1f us; CPU "
                       "%.2f %% of one core for 8 GPUs at 10 Hz\n",
                       bench_median(t[4], (size_t) samples),
                       100.0 * (bench_now_us(CLOCK_PROCESS_CPUTIME_ID) - cpu0) /
                               (bench_now_us(CLOCK_MONOTONIC) - wall0));
        }
        for (int i = 0; i < 5; i++)
                free(t[i]);
        amdsmi_ctx_unref(ctx);
        return 0;
}
