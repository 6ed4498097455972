/* SPDX-License-Identifier: MIT */
/* STUB: replaced by the gim host implementation. */
#include <errno.h>

#include "partition-private.h"

int gim_read_compute_mode(struct amdsmi_gpu *gpu, enum amdsmi_compute_mode *ret) {
        (void) gpu;
        (void) ret;
        return -ENODATA;
}
int gim_read_memory_mode(struct amdsmi_gpu *gpu, enum amdsmi_memory_mode *ret) {
        (void) gpu;
        (void) ret;
        return -ENODATA;
}
int gim_supported_compute_modes(struct amdsmi_gpu *gpu, uint32_t *ret_mask) {
        (void) gpu;
        (void) ret_mask;
        return -ENODATA;
}
int gim_available_compute_modes(struct amdsmi_gpu *gpu, uint32_t *ret_mask) {
        (void) gpu;
        (void) ret_mask;
        return -ENODATA;
}
int gim_available_memory_modes(struct amdsmi_gpu *gpu, uint32_t *ret_mask) {
        (void) gpu;
        (void) ret_mask;
        return -ENODATA;
}
int gim_vf_count(struct amdsmi_gpu *gpu, unsigned *ret) {
        (void) gpu;
        (void) ret;
        return -ENODATA;
}
int gim_plan(struct amdsmi_gpu *gpu, enum amdsmi_compute_mode compute,
             enum amdsmi_memory_mode memory, uint64_t flags, struct amdsmi_partition_plan *plan) {
        (void) gpu;
        (void) compute;
        (void) memory;
        (void) flags;
        (void) plan;
        return -EOPNOTSUPP;
}
int gim_set_compute_mode(struct amdsmi_gpu *gpu, enum amdsmi_compute_mode mode, uint64_t flags,
                         struct amdsmi_partition_change *c) {
        (void) gpu;
        (void) mode;
        (void) flags;
        (void) c;
        return -EOPNOTSUPP;
}
int gim_set_memory_mode(struct amdsmi_gpu *gpu, enum amdsmi_memory_mode mode, uint64_t flags,
                        struct amdsmi_partition_change *c) {
        (void) gpu;
        (void) mode;
        (void) flags;
        (void) c;
        return -EOPNOTSUPP;
}
