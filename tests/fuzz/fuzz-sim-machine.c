/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target of amdsmi-sim's machine description (sim/machine-json.c): arbitrary text through
 * sim_machine_load_json() as `amdsmi-sim mount --machine FILE` reads it. Checks: only -EINVAL
 * and -ENOMEM fail, leaving the output untouched; and a machine that loads dumps to JSON that
 * loads again into a machine dumping to the very same text (the description is complete).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz-util.h"
#include "machine.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        struct sim_machine sentinel_storage, *sentinel = &sentinel_storage, *m = sentinel;
        char *text = fuzz_strndup(data, size);
        int quiet, r;

        if (size > 64 * 1024) { /* a machine description is a few KiB */
                free(text);
                return 0;
        }
        quiet = fuzz_quiet_begin();
        r = sim_machine_load_json(text, "fuzz", &m);
        fuzz_quiet_end(quiet);
        if (r < 0) {
                if ((r != -EINVAL && r != -ENOMEM) || m != sentinel)
                        abort();
        } else {
                struct sim_machine *again = NULL;
                char *dump = NULL, *dump2 = NULL;

                if (r != 0 || !m || m == sentinel)
                        abort();
                if (sim_machine_dump(m, &dump) < 0)
                        abort();
                quiet = fuzz_quiet_begin();
                r = sim_machine_load_json(dump, "dump", &again);
                fuzz_quiet_end(quiet);
                if (r < 0) {
                        fprintf(stderr, "a dump does not load back (%s):\n%s\n", strerror(-r), dump);
                        abort();
                }
                if (sim_machine_dump(again, &dump2) < 0)
                        abort();
                if (strcmp(dump, dump2) != 0) {
                        fprintf(stderr, "dump round trip differs:\n%s\n---\n%s\n", dump, dump2);
                        abort();
                }
                free(dump);
                free(dump2);
                sim_machine_free(again);
                sim_machine_free(m);
        }
        free(text);
        return 0;
}
