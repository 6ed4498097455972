/* SPDX-License-Identifier: MIT */
/*
 * What amdsmid's health sampling costs in-process, on a plain snapshot tree: one RAS sample
 * of every GPU (health_sample_read(): every block), one sample of every GPU as amdsmid's
 * periodic check takes it (RAS, retired pages, bad-page threshold, the CPER ring from a
 * cursor: health/dbus-health.c), and the `amdsmi ras` document of every GPU (ras_gpu()).
 * Medians over ROUNDS passes; the CPU time of the check as a share of one core at
 * amdsmid's default period (2 s).
 *
 *   AMDSMI_SYSFS_ROOT=TREE bench-health [ROUNDS]      (default 500)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <json-c/json.h>

#include "bench-util.h"
#include "documents.h"
#include "health-json.h"
#include "select.h"

/* amdsmid's check of one GPU, without the verdict and the bus (health_update()) */
static void check_sample(struct amdsmi_gpu *gpu, struct amdsmi_cper_cursor *cursor) {
        struct health_sample s;
        struct amdsmi_bad_page *pages = NULL;
        struct amdsmi_cper_batch *batch = NULL;
        uint32_t threshold;
        int r;

        (void) health_sample_read(gpu, &s);
        if (amdsmi_gpu_read_bad_pages(gpu, &pages) >= 0)
                free(pages);
        r = amdsmi_gpu_read_bad_page_threshold(gpu, &threshold);
        (void) r;
        if (amdsmi_gpu_read_cper(gpu, cursor, &batch) == 0)
                amdsmi_cper_batch_free(batch);
}

static size_t ras_document(struct amdsmi_ctx *ctx) {
        struct report rep = { .command = "ras", .keep_field_errors = true };
        struct selection sel = {};
        struct gpu_set set = {};
        struct doc_query q = { .report = &rep, .set = &set };
        json_object *gpus = NULL, *doc;
        size_t len = 0;

        snprintf(rep.hostname, sizeof(rep.hostname), "bench");
        if (gpu_set_resolve(&set, ctx, &sel, &rep, 0) >= 0 &&
            doc_collect(&q, ras_gpu, &gpus) == 0) {
                doc = report_document(&rep, gpus);
                if (doc) {
                        len = strlen(json_object_to_json_string_ext(doc, JSON_C_TO_STRING_PLAIN));
                        json_object_put(doc);
                }
        }
        gpu_set_clear(&set);
        report_clear(&rep);
        return len;
}

int main(int argc, char *argv[]) {
        int rounds = argc > 1 ? atoi(argv[1]) : 500;
        struct amdsmi_cper_cursor cursors[64] = {};
        struct amdsmi_ctx *ctx = NULL;
        double *t[3], cpu0, cpu1;
        size_t n_gpus, len = 0;
        int r;

        r = amdsmi_ctx_new(&ctx);
        if (r < 0 || (r = amdsmi_ctx_enumerate(ctx)) <= 0) {
                fprintf(stderr, "no GPUs under AMDSMI_SYSFS_ROOT\n");
                return 1;
        }
        n_gpus = (size_t) r;
        if (n_gpus > 64)
                n_gpus = 64;
        if (rounds < 1)
                rounds = 1;
        for (int i = 0; i < 3; i++)
                t[i] = calloc((size_t) rounds, sizeof(double));

        for (int round = 0; round < rounds; round++) {
                double a = bench_now_us(CLOCK_MONOTONIC), b, c;

                for (size_t g = 0; g < n_gpus; g++) {
                        struct health_sample s;

                        (void) health_sample_read(amdsmi_ctx_get_gpu(ctx, g), &s);
                }
                b = bench_now_us(CLOCK_MONOTONIC);
                for (size_t g = 0; g < n_gpus; g++)
                        check_sample(amdsmi_ctx_get_gpu(ctx, g), &cursors[g]);
                c = bench_now_us(CLOCK_MONOTONIC);
                len = ras_document(ctx);
                t[0][round] = b - a;
                t[1][round] = c - b;
                t[2][round] = bench_now_us(CLOCK_MONOTONIC) - c;
        }
        cpu0 = bench_now_us(CLOCK_PROCESS_CPUTIME_ID);
        for (int round = 0; round < rounds; round++)
                for (size_t g = 0; g < n_gpus; g++)
                        check_sample(amdsmi_ctx_get_gpu(ctx, g), &cursors[g]);
        cpu1 = bench_now_us(CLOCK_PROCESS_CPUTIME_ID);
        /* the links at each check (health/dbus-health.c sample_links()): the PCIe files,
         * pcie_replay_count and xgmi_error, and gpu_metrics at every 30th check */
        {
                struct health_links links[64] = {};
                double c0, c1, m0, m1;
                int n = 0;

                c0 = bench_now_us(CLOCK_PROCESS_CPUTIME_ID);
                for (int round = 0; round < rounds; round++)
                        for (size_t g = 0; g < n_gpus; g++) {
                                struct amdsmi_gpu *gpu = amdsmi_ctx_get_gpu(ctx, g);
                                enum amdsmi_xgmi_error xe;

                                (void) health_links_read(gpu, false, &links[g]);
                                n += amdsmi_gpu_read_xgmi_error(gpu, &xe) == 0;
                        }
                c1 = bench_now_us(CLOCK_PROCESS_CPUTIME_ID);
                m0 = bench_now_us(CLOCK_PROCESS_CPUTIME_ID);
                for (int round = 0; round < rounds; round++)
                        for (size_t g = 0; g < n_gpus; g++)
                                (void) health_links_read(amdsmi_ctx_get_gpu(ctx, g), true,
                                                         &links[g]);
                m1 = bench_now_us(CLOCK_PROCESS_CPUTIME_ID);
                printf("links at amdsmid's check, %zu GPUs: PCIe files, pcie_replay_count and "
                       "xgmi_error (%s) CPU %.1f us; with gpu_metrics %.1f us; at the default "
                       "period (2 s, gpu_metrics every 30th check): %.4f %% of one core\n",
                       n_gpus, n > 0 ? "counted" : "no counter", (c1 - c0) / rounds,
                       (m1 - m0) / rounds,
                       100.0 * ((c1 - c0) / rounds * 29 / 30 + (m1 - m0) / rounds / 30) / 2e6);
        }
        printf("health, %d rounds over %zu GPUs: RAS sample (all blocks) of all GPUs %.1f us; "
               "amdsmid's check of all GPUs (RAS, bad pages, threshold, CPER cursor) %.1f us "
               "(CPU %.1f us, %.3f %% of one core every 2 s); `amdsmi ras` document (%zu bytes) "
               "%.1f us\n",
               rounds, n_gpus, bench_median(t[0], (size_t) rounds),
               bench_median(t[1], (size_t) rounds), (cpu1 - cpu0) / rounds,
               100.0 * (cpu1 - cpu0) / rounds / 2e6, len, bench_median(t[2], (size_t) rounds));
        for (int i = 0; i < 3; i++)
                free(t[i]);
        amdsmi_ctx_unref(ctx);
        return 0;
}
