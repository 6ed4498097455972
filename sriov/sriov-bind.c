/* SPDX-License-Identifier: MIT */
/* STUB: being written. */
#include <errno.h>

#include "sriov-private.h"

_public_ int amdsmi_vf_bind_vfio(struct amdsmi_gpu *vf, uint64_t flags,
                                 struct amdsmi_vf_bind_report *ret_report) {
        return -ENOSYS;
}

_public_ int amdsmi_vf_release(struct amdsmi_gpu *vf, uint64_t flags,
                               struct amdsmi_vf_bind_report *ret_report) {
        return -ENOSYS;
}
