/* SPDX-License-Identifier: MIT */
/*
 * The public header must be usable from strict C99 (built with -std=c99 -pedantic -Werror)
 * and the library must link: this file includes only <amdsmi/amdsmi.h> and calls into
 * libamdsmi.so.
 */
#include <stdio.h>
#include <string.h>

#include <amdsmi/amdsmi.h>

int main(void) {
        const char *v = amdsmi_version();

        if (!v || strcmp(v, EXPECTED_VERSION) != 0) {
                fprintf(stderr, "amdsmi_version() = \"%s\", expected \"%s\"\n",
                        v ? v : "(null)", EXPECTED_VERSION);
                return 1;
        }
        printf("ok: libamdsmi %s, header compiles as C99\n", v);
        return 0;
}
