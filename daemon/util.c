/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "amdsmid.h"

int strv_extend(char ***l, const char *s) {
        size_t n = strv_length(*l);
        char **nl, *c;

        c = strdup(s);
        if (!c)
                return -ENOMEM;
        nl = reallocarray(*l, n + 2, sizeof(char *));
        if (!nl) {
                free(c);
                return -ENOMEM;
        }
        nl[n] = c;
        nl[n + 1] = NULL;
        *l = nl;
        return 0;
}

bool strv_contains(char *const *l, const char *s) {
        for (; l && *l; l++)
                if (strcmp(*l, s) == 0)
                        return true;
        return false;
}

bool strv_equal(char **a, char **b) {
        size_t n = strv_length(a);

        if (n != strv_length(b))
                return false;
        for (size_t i = 0; i < n; i++)
                if (strcmp(a[i], b[i]) != 0)
                        return false;
        return true;
}

int free_and_strdup(char **dst, const char *src) {
        char *c;

        if (!src)
                src = "";
        if (*dst && strcmp(*dst, src) == 0)
                return 0;
        c = strdup(src);
        if (!c)
                return -ENOMEM;
        free(*dst);
        *dst = c;
        return 1;
}

uint64_t now_usec(clockid_t clock) {
        struct timespec ts;

        clock_gettime(clock, &ts);
        return (uint64_t) ts.tv_sec * 1000000 + (uint64_t) ts.tv_nsec / 1000;
}

int bus_error_errno(sd_bus_error *error, int r, const char *format, ...) {
        va_list ap;
        char *msg = NULL;

        va_start(ap, format);
        if (vasprintf(&msg, format, ap) < 0)
                msg = NULL;
        va_end(ap);
        if (r >= 0)
                r = -EIO;
        /* sd-bus maps errno to its own names only: ours come from the table */
        for (const sd_bus_error_map *m = amdsmi_bus_errors; m->name; m++)
                if (m->code == -r) {
                        (void) sd_bus_error_set(error, m->name, msg ? msg : strerror(-r));
                        free(msg);
                        return r;
                }
        (void) sd_bus_error_set_errnof(error, -r, "%s", msg ? msg : strerror(-r));
        free(msg);
        return r;
}

