/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target of the strict number parsers every sysfs value goes through. The parsers see a C
 * string: the input up to its first NUL byte (libFuzzer's inputs may hold NUL bytes anywhere).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parse-util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        char *s = malloc(size + 1);
        uint64_t u = 7;
        int64_t i = 7;
        int r;

        if (!s)
                return 0;
        memcpy(s, data, size);
        s[size] = '\0';

        for (int base = 0; base <= 16; base += (base == 0 ? 10 : 6)) {
                u = 7;
                r = parse_u64(s, base, &u);
                if (r != 0 && r != -EINVAL && r != -ERANGE)
                        abort();
                if (r == 0) {
                        /* a success consumed the whole C string (up to its first NUL: the
                         * input may hold more bytes after it), which is not empty and holds
                         * no space, newline or sign */
                        if (s[0] == '\0' || strpbrk(s, " \t\n-+"))
                                abort();
                } else if (u != 7) {
                        abort(); /* output untouched on failure */
                }
        }
        r = parse_i64(s, &i);
        if (r == 0) {
                char back[32];
                snprintf(back, sizeof(back), "%lld", (long long) i);
                /* decimal round trip, modulo leading zeros */
                if (strlen(s) == strlen(back) && strcmp(s, back) != 0)
                        abort();
        } else if ((r != -EINVAL && r != -ERANGE) || i != 7) {
                abort();
        }
        free(s);
        return 0;
}
