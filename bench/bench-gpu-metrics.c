/* SPDX-License-Identifier: MIT */
/*
 * In-process benchmark of the gpu_metrics parsers: parses an in-memory table N times per round
 * and prints the median time per parse over the rounds. The fixed layouts (v1.8, v1.4) are
 * made here; the attribute-encoded ones (gpu_metrics 1.9 of Linux 6.19 and 7.1, xcp_metrics
 * 1.1) are the fixture generator's blobs (mkfixtures.py --metrics-blobs, the SMU 13.0.6
 * layouts of gpu-metrics-v1.9.md), read from $METRICS_BLOBS_DIR or the build tree's
 * tests/fixtures/metrics.
 *
 *   bench-gpu-metrics [ITERATIONS [ROUNDS]]   (defaults 1000000 and 15)
 */

#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <amdsmi/amdsmi.h>

#include "bench-util.h"

#define MAX_ROUNDS 101

/* A table of @size bytes with ordinary values everywhere (no all-ones fields). */
static void make_table(uint8_t *buf, uint16_t size, uint8_t content_revision) {
        for (size_t i = 0; i < size; i++)
                buf[i] = (uint8_t) ((i * 7 + 3) & 0x7f);
        buf[0] = size & 0xff;
        buf[1] = size >> 8;
        buf[2] = 1;
        buf[3] = content_revision;
}

enum parser {
        PARSE,          /* amdsmi_gpu_metrics_parse() */
        PARSE_EXT,      /* amdsmi_gpu_metrics_parse_ext() */
        PARSE_PARTITION /* amdsmi_partition_metrics_parse() */
};

static int bench(const char *name, const uint8_t *buf, size_t size, enum parser parser,
                 unsigned long iterations, unsigned rounds) {
        static struct amdsmi_gpu_metrics m;
        static struct amdsmi_gpu_metrics_ext ext = { .size = sizeof(ext) };
        static struct amdsmi_partition_metrics pm = { .size = sizeof(pm) };
        static const char *const fn[] = { "gpu_metrics_parse", "gpu_metrics_parse_ext",
                                          "partition_metrics_parse" };
        double per_parse[MAX_ROUNDS];
        uint64_t sink = 0;
        char reason[128] = "";
        int r;

        r = parser == PARSE ? amdsmi_gpu_metrics_parse(buf, size, &m)
            : parser == PARSE_EXT
                    ? amdsmi_gpu_metrics_parse_ext(buf, size, &ext, reason, sizeof(reason))
                    : amdsmi_partition_metrics_parse(buf, size, &pm, reason, sizeof(reason));
        if (r < 0) {
                fprintf(stderr, "%s: parse failed: %s %s\n", name, strerror(-r), reason);
                return r;
        }

        for (unsigned round = 0; round < rounds; round++) {
                uint64_t start = bench_now_ns(CLOCK_MONOTONIC);

                switch (parser) {
                case PARSE:
                        for (unsigned long i = 0; i < iterations; i++) {
                                sink += (uint64_t) amdsmi_gpu_metrics_parse(buf, size, &m);
                                sink += m.energy_uj;
                        }
                        break;
                case PARSE_EXT:
                        for (unsigned long i = 0; i < iterations; i++) {
                                sink += (uint64_t) amdsmi_gpu_metrics_parse_ext(buf, size, &ext,
                                                                                NULL, 0);
                                sink += ext.base.energy_uj;
                        }
                        break;
                case PARSE_PARTITION:
                        for (unsigned long i = 0; i < iterations; i++) {
                                sink += (uint64_t) amdsmi_partition_metrics_parse(buf, size, &pm,
                                                                                  NULL, 0);
                                sink += pm.uclk_hz;
                        }
                        break;
                }
                per_parse[round] =
                        (double) (bench_now_ns(CLOCK_MONOTONIC) - start) / (double) iterations;
        }
        printf("%s %s: median %.0f ns/parse (%u rounds x %lu)\n", fn[parser], name,
               bench_median(per_parse, rounds), rounds, iterations);
        /* keeps the loop from being dropped; never true for these tables */
        if (sink == 42)
                puts("");
        return 0;
}

static int bench_fixed(const char *name, uint16_t size, uint8_t content_revision,
                       enum parser parser, unsigned long iterations, unsigned rounds) {
        static uint8_t buf[4096];

        make_table(buf, size, content_revision);
        return bench(name, buf, size, parser, iterations, rounds);
}

/* One blob of the fixture generator, in a buffer of exactly its size. */
static int bench_blob(const char *name, const char *file, enum parser parser,
                      unsigned long iterations, unsigned rounds) {
        const char *dir = getenv("METRICS_BLOBS_DIR");
        char path[4096];
        uint8_t *buf;
        FILE *f;
        long size;
        int r;

        if (!dir || !*dir)
                dir = METRICS_BLOBS_DIR;
        snprintf(path, sizeof(path), "%s/%s", dir, file);
        f = fopen(path, "re");
        if (!f) {
                fprintf(stderr, "%s: %s (build the tests, or set METRICS_BLOBS_DIR)\n", path,
                        strerror(errno));
                return -errno;
        }
        if (fseek(f, 0, SEEK_END) < 0 || (size = ftell(f)) <= 0 || fseek(f, 0, SEEK_SET) < 0) {
                fclose(f);
                fprintf(stderr, "%s: cannot size\n", path);
                return -EIO;
        }
        buf = malloc(size);
        if (!buf || fread(buf, 1, size, f) != (size_t) size) {
                free(buf);
                fclose(f);
                fprintf(stderr, "%s: short read\n", path);
                return -EIO;
        }
        fclose(f);
        r = bench(name, buf, size, parser, iterations, rounds);
        free(buf);
        return r;
}

int main(int argc, char *argv[]) {
        unsigned long iterations = 1000000;
        unsigned long rounds = 15;
        char *end;

        if (argc > 3) {
                fprintf(stderr, "usage: %s [ITERATIONS [ROUNDS]]\n", argv[0]);
                return EXIT_FAILURE;
        }
        if (argc > 1) {
                errno = 0;
                iterations = strtoul(argv[1], &end, 10);
                if (errno != 0 || *end || iterations == 0) {
                        fprintf(stderr, "invalid iteration count: %s\n", argv[1]);
                        return EXIT_FAILURE;
                }
        }
        if (argc > 2) {
                errno = 0;
                rounds = strtoul(argv[2], &end, 10);
                if (errno != 0 || *end || rounds == 0 || rounds > MAX_ROUNDS) {
                        fprintf(stderr, "invalid round count (1..%d): %s\n", MAX_ROUNDS,
                                argv[2]);
                        return EXIT_FAILURE;
                }
        }

        if (bench_fixed("v1.8", 3872, 8, PARSE, iterations, rounds) < 0 ||
            bench_fixed("v1.4", 288, 4, PARSE, iterations, rounds) < 0 ||
            bench_fixed("v1.8", 3872, 8, PARSE_EXT, iterations, rounds) < 0 ||
            bench_blob("v1.9 (Linux 6.19 MI300X, 47 attributes, 1150 B)",
                       "gpu_metrics_v1_9-6.19.bin", PARSE_EXT, iterations, rounds) < 0 ||
            bench_blob("v1.9 (Linux 7.1, 50 attributes, 1218 B)", "gpu_metrics_v1_9-7.1.bin",
                       PARSE_EXT, iterations, rounds) < 0 ||
            bench_blob("v1.9 (Linux 6.19 MI300X, into the old structure)",
                       "gpu_metrics_v1_9-6.19.bin", PARSE, iterations, rounds) < 0 ||
            bench_blob("xcp v1.1 (Linux 6.19, 13 attributes, 594 B)",
                       "xcp_metrics_v1_1-6.19.bin", PARSE_PARTITION, iterations, rounds) < 0 ||
            bench_blob("xcp v1.1 (Linux 7.0, 15 attributes, 626 B)", "xcp_metrics_v1_1-7.0.bin",
                       PARSE_PARTITION, iterations, rounds) < 0)
                return EXIT_FAILURE;
        return EXIT_SUCCESS;
}
