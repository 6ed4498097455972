/* SPDX-License-Identifier: MIT */
/* Fuzz target of the -g selection syntax and its resolution against a fixed machine. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "select.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        static const struct select_target gpus[] = {
                { "0000:05:00.0", 1 }, { "0000:26:00.0", 8 }, { "0000:c1:00.0", 0 },
        };
        struct select_match matches[3];
        struct selection sel = { 0 };
        char *s = malloc(size + 1);
        size_t failed = SIZE_MAX;
        int r;

        if (!s)
                return 0;
        memcpy(s, data, size);
        s[size] = '\0';
        r = selection_add(&sel, s);
        if (r == 0) {
                r = selection_resolve(&sel, gpus, 3, matches, &failed);
                if (r != 0 && (r != -ENOENT || failed >= sel.n_items))
                        abort();
                for (size_t i = 0; r == 0 && i < 3; i++) {
                        size_t np = gpus[i].n_partitions;
                        uint64_t beyond = np >= 64 ? 0 : matches[i].partitions >> np;

                        if (beyond != 0)
                                abort(); /* a partition the GPU does not have */
                }
        } else if ((r != -EINVAL && r != -ENOMEM) || sel.n_items != 0) {
                abort();
        }
        selection_clear(&sel);
        free(s);
        return 0;
}
