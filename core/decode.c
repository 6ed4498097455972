/* SPDX-License-Identifier: MIT */
/* Decoders of raw values into the forms documents and tables show (decode.h). */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "decode.h"

const char *xgmi_link_status_to_string(uint64_t status) {
        switch (status) {
        case 0:
                return "down";
        case 1:
                return "up";
        case 2:
        case UINT64_MAX:
                return "n/a";
        default:
                return NULL;
        }
}

static int fits(int n, size_t len) {
        return n < 0 || (size_t) n >= len ? -ENOBUFS : 0;
}

int format_gfx_target(uint64_t version, char *buf, size_t len) {
        uint64_t major = version / 10000, minor = version / 100 % 100, stepping = version % 100;

        if (version == 0 || minor > 15 || stepping > 15)
                return -EINVAL;
        return fits(snprintf(buf, len, "gfx%llu%llx%llx", (unsigned long long) major,
                             (unsigned long long) minor, (unsigned long long) stepping),
                    len);
}

int format_firmware_hex(uint64_t version, char *buf, size_t len) {
        return fits(snprintf(buf, len, "0x%llx", (unsigned long long) version), len);
}

int format_firmware_dotted(const char *name, uint64_t version, char *buf, size_t len) {
        unsigned program, major, minor, debug;

        if (!name || strcmp(name, "smc") != 0)
                return -EOPNOTSUPP;
        if (version > UINT32_MAX)
                return -EINVAL;
        program = (unsigned) (version >> 24) & 0xff;
        major = (unsigned) (version >> 16) & 0xff;
        minor = (unsigned) (version >> 8) & 0xff;
        debug = (unsigned) version & 0xff;
        if (program)
                return fits(snprintf(buf, len, "%u.%u.%u.%u", program, major, minor, debug), len);
        return fits(snprintf(buf, len, "%u.%u.%u", major, minor, debug), len);
}

int format_unique_id(const char *s, char *buf, size_t len) {
        unsigned long long v = 0;
        size_t n = 0;

        if (!s)
                return -EINVAL;
        if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
                s += 2;
        for (; s[n]; n++) {
                char c = s[n];
                unsigned d;

                if (c >= '0' && c <= '9')
                        d = (unsigned) (c - '0');
                else if (c >= 'a' && c <= 'f')
                        d = (unsigned) (c - 'a' + 10);
                else if (c >= 'A' && c <= 'F')
                        d = (unsigned) (c - 'A' + 10);
                else
                        return -EINVAL;
                if (v >> 60)
                        return -EINVAL;
                v = v << 4 | d;
        }
        if (n == 0)
                return -EINVAL;
        return fits(snprintf(buf, len, "0x%016llx", v), len);
}
