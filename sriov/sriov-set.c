/* SPDX-License-Identifier: MIT */
/* STUB: being written. */
#include <errno.h>

#include "sriov-private.h"

_public_ int amdsmi_gpu_set_num_vfs(struct amdsmi_gpu *gpu, unsigned n, uint64_t flags,
                                    unsigned timeout_ms, struct amdsmi_sriov_change *ret_change) {
        return -ENOSYS;
}
