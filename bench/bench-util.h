/* SPDX-License-Identifier: MIT */
/*
 * What every benchmark needs to time and summarise its rounds:
 *
 *   bench_now_us(clock)     the time on @clock in microseconds (CLOCK_MONOTONIC for wall time,
 *                           CLOCK_PROCESS_CPUTIME_ID for the process's CPU time)
 *   bench_now_ns(clock)     the same in whole nanoseconds
 *   bench_cmp_double/_u64   qsort() comparators, ascending
 *   bench_median(v, n)      sorts v in place and returns v[n / 2]: the upper of the two middle
 *                           values when n is even; 0 when n is 0
 *   bench_median_u64(v, n)  the same for uint64_t values
 *   bench_percentile(v, n, pct), bench_percentile_u64(v, n, pct)
 *                           sorts v in place and returns v[n * pct / 100] (the last value for
 *                           pct = 100); 0 when n is 0
 */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

static inline double bench_now_us(clockid_t clock) {
        struct timespec ts;

        clock_gettime(clock, &ts);
        return (double) ts.tv_sec * 1e6 + (double) ts.tv_nsec / 1e3;
}

static inline uint64_t bench_now_ns(clockid_t clock) {
        struct timespec ts;

        clock_gettime(clock, &ts);
        return (uint64_t) ts.tv_sec * 1000000000ULL + (uint64_t) ts.tv_nsec;
}

static inline int bench_cmp_double(const void *a, const void *b) {
        double x = *(const double *) a, y = *(const double *) b;

        return x < y ? -1 : x > y;
}

static inline int bench_cmp_u64(const void *a, const void *b) {
        uint64_t x = *(const uint64_t *) a, y = *(const uint64_t *) b;

        return x < y ? -1 : x > y;
}

static inline double bench_median(double *v, size_t n) {
        if (n == 0)
                return 0;
        qsort(v, n, sizeof(*v), bench_cmp_double);
        return v[n / 2];
}

static inline uint64_t bench_median_u64(uint64_t *v, size_t n) {
        if (n == 0)
                return 0;
        qsort(v, n, sizeof(*v), bench_cmp_u64);
        return v[n / 2];
}

/* The index of percentile @pct in @n > 0 sorted values. */
static inline size_t bench_rank(size_t n, unsigned pct) {
        size_t i = n * pct / 100;

        return i < n ? i : n - 1;
}

static inline double bench_percentile(double *v, size_t n, unsigned pct) {
        if (n == 0)
                return 0;
        qsort(v, n, sizeof(*v), bench_cmp_double);
        return v[bench_rank(n, pct)];
}

static inline uint64_t bench_percentile_u64(uint64_t *v, size_t n, unsigned pct) {
        if (n == 0)
                return 0;
        qsort(v, n, sizeof(*v), bench_cmp_u64);
        return v[bench_rank(n, pct)];
}
