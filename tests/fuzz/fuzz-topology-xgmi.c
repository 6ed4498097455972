/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target of the xgmi_num_hops / xgmi_num_links parser (topology/topology.c,
 * amdsmi_xgmi_parse_bytes()), as a C string. Checks: only -EBADMSG or -E2BIG fail (the latter
 * only past the room given), the outputs are untouched on failure, a success has 1 .. room
 * bytes and prints back ("%02x " each, then a newline) to text that parses to the same bytes.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <amdsmi/amdsmi.h>

#include "fuzz-util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        uint8_t b[AMDSMI_XGMI_MAX_NODES], back[AMDSMI_XGMI_MAX_NODES];
        char text[3 * AMDSMI_XGMI_MAX_NODES + 2];
        char *s = fuzz_strndup(data, size);
        size_t n = 999, n_back = 0, room = size % 2 ? 8 : AMDSMI_XGMI_MAX_NODES;
        int r;

        memset(b, 0xa5, sizeof(b));
        r = amdsmi_xgmi_parse_bytes(s, b, room, &n);
        if (r != 0 && r != -EBADMSG && r != -E2BIG)
                abort();
        if (r < 0 && (n != 999 || b[0] != 0xa5))
                abort();
        if (r == 0) {
                size_t len = 0;

                if (n == 0 || n > room)
                        abort();
                for (size_t i = 0; i < n; i++)
                        len += (size_t) snprintf(text + len, sizeof(text) - len, "%02x ", b[i]);
                snprintf(text + len, sizeof(text) - len, "\n");
                if (amdsmi_xgmi_parse_bytes(text, back, room, &n_back) != 0 || n_back != n ||
                    memcmp(back, b, n) != 0)
                        abort();
                for (size_t i = 0; i < n; i++)
                        if (amdsmi_xgmi_hops(b[i]) > 7 || amdsmi_xgmi_link_type(b[i]) > 3)
                                abort();
        }
        free(s);
        return 0;
}
