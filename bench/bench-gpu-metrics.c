/* SPDX-License-Identifier: MIT */
/*
 * In-process benchmark of amdsmi_gpu_metrics_parse(): parses an in-memory v1.8 and v1.4 table
 * N times per round and prints the median time per parse over the rounds.
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

#define MAX_ROUNDS 101

static uint64_t now_ns(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000000000 + (uint64_t) ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
        double x = *(const double *) a, y = *(const double *) b;

        return (x > y) - (x < y);
}

/* A table of @size bytes with ordinary values everywhere (no all-ones fields). */
static void make_table(uint8_t *buf, uint16_t size, uint8_t content_revision) {
        for (size_t i = 0; i < size; i++)
                buf[i] = (uint8_t) ((i * 7 + 3) & 0x7f);
        buf[0] = size & 0xff;
        buf[1] = size >> 8;
        buf[2] = 1;
        buf[3] = content_revision;
}

static int bench(const char *name, uint16_t size, uint8_t content_revision,
                 unsigned long iterations, unsigned rounds) {
        static uint8_t buf[4096];
        static struct amdsmi_gpu_metrics m;
        double per_parse[MAX_ROUNDS];
        uint64_t sink = 0;
        int r;

        make_table(buf, size, content_revision);
        r = amdsmi_gpu_metrics_parse(buf, size, &m);
        if (r < 0) {
                fprintf(stderr, "%s: parse failed: %s\n", name, strerror(-r));
                return r;
        }

        for (unsigned round = 0; round < rounds; round++) {
                uint64_t start = now_ns();

                for (unsigned long i = 0; i < iterations; i++) {
                        sink += (uint64_t) amdsmi_gpu_metrics_parse(buf, size, &m);
                        sink += m.energy_uj;
                }
                per_parse[round] = (double) (now_ns() - start) / (double) iterations;
        }
        qsort(per_parse, rounds, sizeof(per_parse[0]), cmp_double);

        printf("gpu_metrics_parse %s: median %.0f ns/parse (%u rounds x %lu)\n",
               name, per_parse[rounds / 2], rounds, iterations);
        /* keeps the loop from being dropped; never true for these tables */
        if (sink == 42)
                puts("");
        return 0;
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

        if (bench("v1.8", 3872, 8, iterations, rounds) < 0 ||
            bench("v1.4", 288, 4, iterations, rounds) < 0)
                return EXIT_FAILURE;
        return EXIT_SUCCESS;
}
