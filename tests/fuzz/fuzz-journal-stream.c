/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target of $JOURNAL_STREAM ("DEVICE:INODE", set by systemd; amdsmid's log_setup() of
 * daemon/log.c reads it with parse_journal_stream() of lib/util). Checks the contract: only
 * two decimal numbers around one colon are accepted, the outputs are untouched otherwise, and
 * what is accepted prints back as the input (modulo leading zeros).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz-util.h"
#include "parse-util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* "DIGITS:DIGITS" and nothing else */
static int shape_ok(const char *s) {
        size_t a = strspn(s, "0123456789"), b;

        if (a == 0 || s[a] != ':')
                return 0;
        b = strspn(s + a + 1, "0123456789");
        return b > 0 && s[a + 1 + b] == '\0';
}

/* @s without the leading zeros of each number */
static void canonical(const char *s, char *buf, size_t size) {
        size_t n = 0;
        int lead = 1;

        for (; *s && n + 1 < size; s++) {
                if (*s == ':') {
                        if (lead)
                                buf[n++] = '0';
                        lead = 1;
                        buf[n++] = ':';
                        continue;
                }
                if (lead && *s == '0')
                        continue;
                lead = 0;
                buf[n++] = *s;
        }
        if (lead && n + 1 < size)
                buf[n++] = '0';
        buf[n] = '\0';
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        char *s = fuzz_strndup(data, size);
        uint64_t dev = 7, ino = 7;
        int r;

        r = parse_journal_stream(s, &dev, &ino);
        if (r != 0 && r != -EINVAL && r != -ERANGE)
                abort();
        if (r < 0 && (dev != 7 || ino != 7))
                abort(); /* untouched on failure */
        if (r == 0 && !shape_ok(s))
                abort(); /* a sign, a blank, a hex digit or trailing text was accepted */
        if (r == -ERANGE && !shape_ok(s))
                abort(); /* only numbers too large are out of range */
        if (r == 0) {
                char back[64], want[64];

                snprintf(back, sizeof(back), "%" PRIu64 ":%" PRIu64, dev, ino);
                canonical(s, want, sizeof(want));
                if (strlen(s) < sizeof(want) && strcmp(back, want) != 0)
                        abort(); /* round trip */
        }
        if (r < 0 && shape_ok(s) && strlen(s) < 20)
                abort(); /* short numbers always fit */
        free(s);
        return 0;
}
