/* SPDX-License-Identifier: MIT */
#include <ctype.h>
#include <limits.h>

#include "parse.h"
#include "util.h"

int kstrtoull(const char *s, unsigned base, unsigned long long *ret) {
        unsigned long long v = 0;
        bool any = false;

        if (*s == '+')
                s++;
        if (base == 0 || base == 16) {
                if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X') && isxdigit((unsigned char) s[2])) {
                        s += 2;
                        base = 16;
                } else if (base == 0)
                        base = s[0] == '0' ? 8 : 10;
        }
        for (;; s++) {
                unsigned d;

                if (*s >= '0' && *s <= '9')
                        d = (unsigned) (*s - '0');
                else if (*s >= 'a' && *s <= 'f')
                        d = (unsigned) (*s - 'a' + 10);
                else if (*s >= 'A' && *s <= 'F')
                        d = (unsigned) (*s - 'A' + 10);
                else
                        break;
                if (d >= base)
                        break;
                if (v > (ULLONG_MAX - d) / base)
                        return -ERANGE;
                v = v * base + d;
                any = true;
        }
        if (!any)
                return -EINVAL;
        if (*s == '\n')
                s++;
        if (*s)
                return -EINVAL;
        *ret = v;
        return 0;
}

int kstrtoll(const char *s, unsigned base, long long *ret) {
        unsigned long long v;
        int r;

        if (*s == '-') {
                r = kstrtoull(s + 1, base, &v);
                if (r < 0)
                        return r;
                if (v > (unsigned long long) LLONG_MAX + 1)
                        return -ERANGE;
                *ret = v == (unsigned long long) LLONG_MAX + 1 ? LLONG_MIN : -(long long) v;
                return 0;
        }
        r = kstrtoull(s, base, &v);
        if (r < 0)
                return r;
        if (v > LLONG_MAX)
                return -ERANGE;
        *ret = (long long) v;
        return 0;
}

int kstrtou32(const char *s, unsigned base, uint32_t *ret) {
        unsigned long long v;
        int r = kstrtoull(s, base, &v);

        if (r < 0)
                return r;
        if (v > UINT32_MAX)
                return -ERANGE;
        *ret = (uint32_t) v;
        return 0;
}

int kstrtou16(const char *s, unsigned base, uint16_t *ret) {
        unsigned long long v;
        int r = kstrtoull(s, base, &v);

        if (r < 0)
                return r;
        if (v > UINT16_MAX)
                return -ERANGE;
        *ret = (uint16_t) v;
        return 0;
}

int kstrtoint(const char *s, unsigned base, int *ret) {
        long long v;
        int r = kstrtoll(s, base, &v);

        if (r < 0)
                return r;
        if (v < INT_MIN || v > INT_MAX)
                return -ERANGE;
        *ret = (int) v;
        return 0;
}

int kstrtol(const char *s, unsigned base, long *ret) {
        long long v;
        int r = kstrtoll(s, base, &v);

        if (r < 0)
                return r;
        *ret = (long) v;
        return 0;
}

int kstrtobool(const char *s, bool *ret) {
        switch (s[0]) {
        case 'y':
        case 'Y':
        case 't':
        case 'T':
        case '1':
                *ret = true;
                return 0;
        case 'n':
        case 'N':
        case 'f':
        case 'F':
        case '0':
                *ret = false;
                return 0;
        case 'o':
        case 'O':
                if (s[1] == 'n' || s[1] == 'N') {
                        *ret = true;
                        return 0;
                }
                if (s[1] == 'f' || s[1] == 'F') {
                        *ret = false;
                        return 0;
                }
                return -EINVAL;
        default:
                return -EINVAL;
        }
}
