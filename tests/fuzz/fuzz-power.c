/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target of the power values amdsmi accepts from people and from files: power_parse_watts()
 * (the CLI's --host/--vm/--apml/-o values) and apml_parse() (the BMC agent's APML file). Checks
 * the documented contracts: only -EINVAL/-ERANGE fail, outputs untouched on failure, and a value
 * that parses is within what power1_cap can take once validated.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "power-apml.h"
#include "power-arbitration.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        char *s = malloc(size + 1), err[160];
        uint64_t uw = 7;
        int r;

        if (!s)
                return 0;
        memcpy(s, data, size);
        s[size] = '\0';

        r = power_parse_watts(s, &uw);
        if (r != 0 && r != -EINVAL && r != -ERANGE)
                abort();
        if (r < 0 && uw != 7)
                abort(); /* untouched on failure */
        if (r == 0) {
                /* a parsed value (up to a NUL) has no blank at either end, and a bound */
                size_t n = strlen(s);

                if (n == 0 || s[0] == ' ' || s[n - 1] == ' ')
                        abort();
                if (uw == UINT64_MAX)
                        abort();
        }

        uw = 7;
        err[0] = '\0';
        r = apml_parse((const char *) data, size, &uw, err, sizeof(err));
        if (r != 0 && r != -EINVAL)
                abort();
        if (r < 0 && (uw != 7 || err[0] == '\0' || !memchr(err, '\0', sizeof(err))))
                abort(); /* untouched, and a message saying why */
        if (r == 0 && uw != POWER_UW_UNKNOWN && power_validate(uw) != 0)
                abort(); /* an accepted file limit is a valid cap */
        free(s);
        return 0;
}
