/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target of the reset mask files (<dev>/<ring>_reset_mask, control/reset.c), as C strings
 * (a sysfs read refuses NUL bytes). Checks: only -EBADMSG fails, the output is untouched on
 * failure, a success holds known bits only and prints back, in the kernel's order, to text
 * that parses to the same mask.
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
        static const struct {
                uint32_t bit;
                const char *name;
        } types[] = {
                { AMDSMI_RESET_TYPE_SOFT, "soft" },
                { AMDSMI_RESET_TYPE_QUEUE, "queue" },
                { AMDSMI_RESET_TYPE_PIPE, "pipe" },
                { AMDSMI_RESET_TYPE_FULL, "full" },
        };
        char *s = fuzz_strndup(data, size);
        uint32_t mask = 0xdead, back = 0xbeef;
        char text[64] = "";
        size_t len = 0;
        int r;

        r = amdsmi_reset_mask_parse(s, &mask);
        if (r != 0 && r != -EBADMSG)
                abort();
        if (r < 0 && mask != 0xdead)
                abort();
        if (r == 0) {
                if (mask & ~(uint32_t) (AMDSMI_RESET_TYPE_SOFT | AMDSMI_RESET_TYPE_QUEUE |
                                        AMDSMI_RESET_TYPE_PIPE | AMDSMI_RESET_TYPE_FULL))
                        abort();
                for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
                        if (mask & types[i].bit)
                                len += (size_t) snprintf(text + len, sizeof(text) - len, "%s%s",
                                                         len ? " " : "", types[i].name);
                snprintf(text + len, sizeof(text) - len, "\n");
                if (amdsmi_reset_mask_parse(text, &back) != 0 || back != mask)
                        abort();
        }
        free(s);
        return 0;
}
