/* SPDX-License-Identifier: MIT */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "parse-util.h"

static int check_end(const char *end) {
        return *end == '\0' ? 0 : -EINVAL;
}

int unhexchar(char c) {
        if (c >= '0' && c <= '9')
                return c - '0';
        if (c >= 'a' && c <= 'f')
                return c - 'a' + 10;
        if (c >= 'A' && c <= 'F')
                return c - 'A' + 10;
        return -1;
}

int parse_u64(const char *s, int base, uint64_t *ret) {
        char *end;
        unsigned long long v;

        if (!s || !isxdigit((unsigned char) s[0]))
                return -EINVAL;
        errno = 0;
        v = strtoull(s, &end, base);
        if (errno == ERANGE)
                return -ERANGE;
        if (errno != 0 || end == s)
                return -EINVAL;
        if (check_end(end) < 0)
                return -EINVAL;
        *ret = v;
        return 0;
}

int parse_journal_stream(const char *s, uint64_t *ret_dev, uint64_t *ret_ino) {
        uint64_t v[2] = { 0, 0 };
        bool range = false;
        const char *p = s;

        if (!s)
                return -EINVAL;
        for (int i = 0; i < 2; i++) {
                if (!isdigit((unsigned char) *p))
                        return -EINVAL;
                for (; isdigit((unsigned char) *p); p++) {
                        unsigned d = (unsigned) (*p - '0');

                        if (v[i] > (UINT64_MAX - d) / 10)
                                range = true;
                        else
                                v[i] = v[i] * 10 + d;
                }
                if (*p != (i == 0 ? ':' : '\0'))
                        return -EINVAL;
                p++;
        }
        if (range)
                return -ERANGE;
        *ret_dev = v[0];
        *ret_ino = v[1];
        return 0;
}

int parse_u32(const char *s, int base, uint32_t *ret) {
        uint64_t v;
        int r = parse_u64(s, base, &v);

        if (r < 0)
                return r;
        if (v > UINT32_MAX)
                return -ERANGE;
        *ret = (uint32_t) v;
        return 0;
}

int parse_i64(const char *s, int64_t *ret) {
        char *end;
        long long v;

        if (!s ||
            !(isdigit((unsigned char) s[0]) || (s[0] == '-' && isdigit((unsigned char) s[1]))))
                return -EINVAL;
        errno = 0;
        v = strtoll(s, &end, 10);
        if (errno == ERANGE)
                return -ERANGE;
        if (errno != 0 || end == s || check_end(end) < 0)
                return -EINVAL;
        *ret = v;
        return 0;
}

int parse_int(const char *s, int *ret) {
        int64_t v;
        int r = parse_i64(s, &v);

        if (r < 0)
                return r;
        if (v < INT_MIN || v > INT_MAX)
                return -ERANGE;
        *ret = (int) v;
        return 0;
}

size_t strip_newline(char *s, size_t len) {
        if (len > 0 && s[len - 1] == '\n')
                s[--len] = '\0';
        return len;
}

int streq_ci(const char *a, const char *b) {
        return a && b && strcasecmp(a, b) == 0;
}

void strv_free(char **l) {
        if (!l)
                return;
        for (char **p = l; *p; p++)
                free(*p);
        free(l);
}

size_t strv_length(char **l) {
        size_t n = 0;

        while (l && l[n])
                n++;
        return n;
}

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

static bool is_lower_hex(char c) {
        return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

bool pci_bdf_valid(const char *s) {
        size_t domain = 0;

        if (!s)
                return false;
        while (is_lower_hex(s[domain]))
                domain++;
        if (domain < 4 || domain > 7)
                return false;
        s += domain;
        return s[0] == ':' && is_lower_hex(s[1]) && is_lower_hex(s[2]) && s[3] == ':' &&
               s[4] >= '0' && s[4] <= '1' && is_lower_hex(s[5]) && s[6] == '.' && s[7] >= '0' &&
               s[7] <= '7' && s[8] == '\0';
}
