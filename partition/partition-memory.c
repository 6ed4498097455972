/* SPDX-License-Identifier: MIT */
/* STUB: replaced by the memory-mode request and driver reload implementation. */
#include <errno.h>

#include "partition-private.h"

_public_ int amdsmi_gpu_read_pending_memory_mode(struct amdsmi_gpu *gpu,
                                                 enum amdsmi_memory_mode *ret_mode) {
        (void) gpu;
        (void) ret_mode;
        return -EOPNOTSUPP;
}

_public_ int amdsmi_gpu_set_memory_mode(struct amdsmi_gpu *gpu, enum amdsmi_memory_mode mode,
                                        uint64_t flags, struct amdsmi_partition_change *ret_change) {
        (void) gpu;
        (void) mode;
        (void) flags;
        (void) ret_change;
        return -EOPNOTSUPP;
}

_public_ int amdsmi_gpu_reload_driver(struct amdsmi_gpu *gpu, uint64_t flags, unsigned timeout_ms,
                                      struct amdsmi_partition_change *ret_change) {
        (void) gpu;
        (void) flags;
        (void) timeout_ms;
        (void) ret_change;
        return -EOPNOTSUPP;
}
