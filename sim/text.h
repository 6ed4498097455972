/* SPDX-License-Identifier: MIT */
/*
 * amdsmi-sim: building one sysfs text attribute (at most a page) with printf-style appends.
 * Header-only, so the pure modules that use it still compile from their own source alone.
 */
#pragma once

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#define SIM_TEXT_MAX 4096 /* one sysfs page */

struct sim_text {
        char buf[SIM_TEXT_MAX];
        size_t len;
        bool overflow;
};

static inline void sim_text_add(struct sim_text *t, const char *fmt, ...)
        __attribute__((format(printf, 2, 3)));

static inline void sim_text_add(struct sim_text *t, const char *fmt, ...) {
        va_list ap;
        int n;

        if (t->overflow)
                return;
        va_start(ap, fmt);
        n = vsnprintf(t->buf + t->len, sizeof(t->buf) - t->len, fmt, ap);
        va_end(ap);
        if (n < 0 || (size_t) n >= sizeof(t->buf) - t->len) {
                t->overflow = true;
                return;
        }
        t->len += (size_t) n;
}

/* Copies the text with its NUL into @buf; the caller's buffer is untouched on failure.
 * @return the length, or -ENOSPC. */
static inline int sim_text_finish(const struct sim_text *t, char *buf, size_t size) {
        if (t->overflow || t->len + 1 > size)
                return -ENOSPC;
        memcpy(buf, t->buf, t->len + 1);
        return (int) t->len;
}
