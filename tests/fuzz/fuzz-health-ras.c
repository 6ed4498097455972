/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target of the RAS text files (health/health-ras.c): a count file (ras/aca_<block>,
 * ras/<block>_err_count) and ras/features, as C strings (the reader refuses NUL bytes).
 * Checks: only -EBUSY (for exactly "Query currently inaccessible") or -EBADMSG fail, the output
 * is untouched on failure, ue and ce are always known on success, and a success prints back to
 * text that parses to the same counts.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz-util.h"
#include "health-private.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        struct amdsmi_ras_count c = { .ue = 7, .ce = 7, .de = 7 }, back = { 0 };
        char *s = fuzz_strndup(data, size);
        char text[128];
        uint32_t mask = 7;
        int r;

        r = ras_count_parse(s, &c);
        if (r == -EBUSY) {
                if (strcmp(s, "Query currently inaccessible") != 0)
                        abort();
        } else if (r != 0 && r != -EBADMSG) {
                abort();
        }
        if (r < 0 && (c.ue != 7 || c.ce != 7 || c.de != 7))
                abort();
        if (r == 0) {
                if (c.ue == AMDSMI_NA || c.ce == AMDSMI_NA)
                        abort();
                if (c.de == AMDSMI_NA)
                        snprintf(text, sizeof(text), "ue: %" PRIu64 "\nce: %" PRIu64, c.ue, c.ce);
                else
                        snprintf(text, sizeof(text),
                                 "ue: %" PRIu64 "\nce: %" PRIu64 "\nde: %" PRIu64, c.ue, c.ce,
                                 c.de);
                if (ras_count_parse(text, &back) != 0 || back.ue != c.ue || back.ce != c.ce ||
                    back.de != c.de)
                        abort();
        }

        r = ras_features_parse(s, &mask);
        if ((r != 0 && r != -EBADMSG) || (r < 0 && mask != 7))
                abort();
        if (r == 0 && strncmp(s, "feature mask: 0x", 16) != 0)
                abort();
        free(s);
        return 0;
}
