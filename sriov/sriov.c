/* SPDX-License-Identifier: MIT */
/* STUB: being written. */
#include <errno.h>

#include "sriov-private.h"

_public_ const char *amdsmi_vf_config_to_string(enum amdsmi_vf_config c) {
        return "unknown";
}

_public_ const char *amdsmi_sriov_stage_to_string(enum amdsmi_sriov_stage s) {
        return "unknown";
}

_public_ int amdsmi_gpu_read_sriov(struct amdsmi_gpu *gpu, struct amdsmi_sriov_info *ret_info) {
        return -ENOSYS;
}
