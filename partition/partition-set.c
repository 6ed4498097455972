/* SPDX-License-Identifier: MIT */
/* STUB: replaced by the compute-switch implementation. */
#include <errno.h>
#include <string.h>

#include "partition-private.h"

int change_init(struct amdsmi_partition_change *c) {
        uint32_t size = c->size;

        if (size < sizeof(*c))
                return -EINVAL;
        memset(c, 0, sizeof(*c));
        c->size = size;
        c->compute_before = c->compute_after = AMDSMI_COMPUTE_UNKNOWN;
        return 0;
}

int change_finish(struct amdsmi_partition_change *c, int r, enum amdsmi_change_stage stage) {
        c->error = r;
        c->stage = r < 0 ? stage : AMDSMI_STAGE_DONE;
        return r;
}

int change_add_blockers(struct amdsmi_partition_change *c, struct amdsmi_gpu *gpu) {
        (void) c;
        (void) gpu;
        return -EOPNOTSUPP;
}

_public_ const char *amdsmi_change_stage_to_string(enum amdsmi_change_stage stage) {
        (void) stage;
        return NULL;
}

_public_ int amdsmi_gpu_list_kfd_processes(struct amdsmi_gpu *gpu, struct amdsmi_kfd_process *ret,
                                           size_t max) {
        (void) gpu;
        (void) ret;
        (void) max;
        return -EOPNOTSUPP;
}

_public_ int amdsmi_gpu_set_compute_mode(struct amdsmi_gpu *gpu, enum amdsmi_compute_mode mode,
                                         uint64_t flags, unsigned timeout_ms,
                                         struct amdsmi_partition_change *ret_change) {
        (void) gpu;
        (void) mode;
        (void) flags;
        (void) timeout_ms;
        (void) ret_change;
        return -EOPNOTSUPP;
}
