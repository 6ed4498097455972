/* SPDX-License-Identifier: MIT */
/* Fuzz target of the gpu_metrics parser; see meson.build for the libFuzzer build. */

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <amdsmi/amdsmi.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        static struct amdsmi_gpu_metrics m, pattern;
        int r;

        memset(&pattern, 0xa5, sizeof(pattern));
        m = pattern;

        r = amdsmi_gpu_metrics_parse(data, size, &m);
        if (r < 0) {
                /* the contract: only these errors, and the output untouched */
                if (r != -EBADMSG && r != -EOPNOTSUPP && !(r == -EINVAL && !data))
                        abort();
                if (memcmp(&m, &pattern, sizeof(m)) != 0)
                        abort();
                return 0;
        }

        if (r != 0 || size < 4 || m.structure_size > size || m.format_revision != data[2] ||
            m.content_revision != data[3])
                abort();
        return 0;
}
