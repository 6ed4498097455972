/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target of the profile selector file (core/config.c config_selector_parse()): what
 * Kubernetes or Ansible writes to $CONFIGURATION_DIRECTORY/profile. Checks the contract: only
 * -EINVAL fails, with a "fuzz" message and the output untouched; an accepted file holds a
 * valid profile name, no NUL byte, and the name appears in the input on a line of its own.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "amdsmid-conf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        char name[CONFIG_PROFILE_NAME_MAX + 1], err[256];
        int r;

        memset(name, 0x5a, sizeof(name));
        err[0] = 'x';
        r = config_selector_parse("fuzz", data, size, name, err, sizeof(err));
        if (r < 0) {
                if (r != -EINVAL || (unsigned char) name[0] != 0x5a)
                        abort(); /* another errno, or the output touched */
                if (strncmp(err, "fuzz", 4) != 0)
                        abort(); /* the message names the file */
                return 0;
        }
        if (r != 0 || !config_profile_name_valid(name))
                abort();
        if (size > 0 && memchr(data, '\0', size))
                abort(); /* a NUL byte is refused */
        if (!memmem(data, size, name, strlen(name)))
                abort();
        return 0;
}
