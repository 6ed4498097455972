/* SPDX-License-Identifier: MIT */
/*
 * amdsmi-sim: small helpers of the simulator alone (it shares no code with libamdsmi, not even
 * lib/util: ARCHITECTURE §7).
 */
#pragma once

#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define _cleanup_(f) __attribute__((cleanup(f)))
#define _printf_(a, b) __attribute__((format(printf, a, b)))
#define _unused_ __attribute__((unused))

#define ELEMENTSOF(x) (sizeof(x) / sizeof((x)[0]))
#define MIN(a, b) ((a) < (b) ? (a) : (b))
#define MAX(a, b) ((a) > (b) ? (a) : (b))
#define CLAMP(x, lo, hi) ((x) < (lo) ? (lo) : (x) > (hi) ? (hi) : (x))

static inline void freep(void *p) {
        free(*(void **) p);
}
#define _cleanup_free_ _cleanup_(freep)

static inline void closep(int *fd) {
        if (*fd >= 0) {
                int saved = errno;
                close(*fd);
                errno = saved;
        }
}
#define _cleanup_close_ _cleanup_(closep)

static inline void fclosep(FILE **f) {
        if (*f)
                fclose(*f);
}
#define _cleanup_fclose_ _cleanup_(fclosep)

static inline void closedirp(DIR **d) {
        if (*d)
                closedir(*d);
}

#define TAKE_PTR(p)                      \
        ({                               \
                __typeof__(p) _p_ = (p); \
                (p) = NULL;              \
                _p_;                     \
        })

static inline bool streq(const char *a, const char *b) {
        return strcmp(a, b) == 0;
}

/* The kernel's sysfs_streq(): equal, ignoring one trailing newline on either side. */
static inline bool sysfs_streq(const char *a, const char *b) {
        while (*a && *a == *b) {
                a++;
                b++;
        }
        if (*a == *b)
                return true;
        if (*a == '\0' && b[0] == '\n' && b[1] == '\0')
                return true;
        if (*b == '\0' && a[0] == '\n' && a[1] == '\0')
                return true;
        return false;
}

/* A strdup() of a printf, NULL on failure. */
_printf_(1, 2) static inline char *strdupf(const char *fmt, ...) {
        va_list ap;
        char *s;
        int r;

        va_start(ap, fmt);
        r = vasprintf(&s, fmt, ap);
        va_end(ap);
        return r < 0 ? NULL : s;
}

/* Appends a printf to @buf of @size at *@len; sets *@len past @size on overflow (checked once
 * by the caller: a show callback returns -ENOSPC then). */
_printf_(4, 5) static inline void bprintf(char *buf, size_t size, size_t *len, const char *fmt,
                                          ...) {
        va_list ap;
        int r;

        if (*len >= size) {
                *len = size + 1;
                return;
        }
        va_start(ap, fmt);
        r = vsnprintf(buf + *len, size - *len, fmt, ap);
        va_end(ap);
        if (r < 0 || (size_t) r >= size - *len)
                *len = size + 1;
        else
                *len += (size_t) r;
}

/* splitmix64: the one hash of the simulator's deterministic values. */
static inline uint64_t sim_mix64(uint64_t x) {
        x += 0x9e3779b97f4a7c15ULL;
        x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
        x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
        return x ^ (x >> 31);
}

static inline uint64_t sim_hash3(uint64_t a, uint64_t b, uint64_t c) {
        return sim_mix64(sim_mix64(sim_mix64(a) ^ b) ^ c);
}
