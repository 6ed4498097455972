/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target of the KFD io_link properties parser (topology/topology.c,
 * amdsmi_io_link_parse()), as a C string (sysfs text has no NUL bytes). Checks: only -EBADMSG
 * fails, the output is untouched on failure, type / node_from / node_to are 32-bit values on
 * success, and a success printed back as the kernel writes it parses to the same link.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <amdsmi/amdsmi.h>

#include "fuzz-util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int put(char *buf, size_t size, size_t *len, const char *key, uint64_t v) {
        int n;

        if (v == AMDSMI_NA)
                return 0;
        n = snprintf(buf + *len, size - *len, "%s %" PRIu64 "\n", key, v);
        if (n < 0 || (size_t) n >= size - *len)
                return -1;
        *len += (size_t) n;
        return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        struct amdsmi_io_link l = { .type = 7, .node_from = 7, .weight = 7 }, back = { 0 };
        char *s = fuzz_strndup(data, size);
        char text[1024];
        size_t len = 0;
        int r;

        r = amdsmi_io_link_parse(s, &l);
        if (r != 0 && r != -EBADMSG)
                abort();
        if (r < 0 && (l.type != 7 || l.node_from != 7 || l.weight != 7))
                abort();
        if (r == 0) {
                if (l.p2p || l.peer)
                        abort();
                if (put(text, sizeof(text), &len, "type", l.type) < 0 ||
                    put(text, sizeof(text), &len, "node_from", l.node_from) < 0 ||
                    put(text, sizeof(text), &len, "node_to", l.node_to) < 0 ||
                    put(text, sizeof(text), &len, "weight", l.weight) < 0 ||
                    put(text, sizeof(text), &len, "min_latency", l.min_latency) < 0 ||
                    put(text, sizeof(text), &len, "max_latency", l.max_latency) < 0 ||
                    put(text, sizeof(text), &len, "min_bandwidth", l.min_bandwidth) < 0 ||
                    put(text, sizeof(text), &len, "max_bandwidth", l.max_bandwidth) < 0 ||
                    put(text, sizeof(text), &len, "flags", l.flags) < 0)
                        abort();
                if (amdsmi_io_link_parse(text, &back) != 0 || back.type != l.type ||
                    back.node_from != l.node_from || back.node_to != l.node_to ||
                    back.weight != l.weight || back.min_latency != l.min_latency ||
                    back.max_latency != l.max_latency || back.min_bandwidth != l.min_bandwidth ||
                    back.max_bandwidth != l.max_bandwidth || back.flags != l.flags)
                        abort();
        }
        free(s);
        return 0;
}
