/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <strings.h>

#include "private.h"

_public_ const char *amdsmi_driver_to_string(enum amdsmi_driver driver) {
        switch (driver) {
        case AMDSMI_DRIVER_NONE:
                return "none";
        case AMDSMI_DRIVER_AMDGPU:
                return "amdgpu";
        case AMDSMI_DRIVER_GIM:
                return "gim";
        case AMDSMI_DRIVER_VFIO_PCI:
                return "vfio-pci";
        case AMDSMI_DRIVER_OTHER:
                return "other";
        }
        return "other";
}

_public_ const char *amdsmi_role_to_string(enum amdsmi_role role) {
        switch (role) {
        case AMDSMI_ROLE_UNKNOWN:
                return "unknown";
        case AMDSMI_ROLE_BAREMETAL:
                return "baremetal";
        case AMDSMI_ROLE_HOST_PF:
                return "host-pf";
        case AMDSMI_ROLE_VF_GUEST_1VF:
                return "vf-guest-1vf";
        case AMDSMI_ROLE_VF_GUEST_MULTI:
                return "vf-guest-multi";
        case AMDSMI_ROLE_VF:
                return "vf";
        }
        return "unknown";
}

static const char *const compute_names[] = {
        [AMDSMI_COMPUTE_SPX] = "SPX", [AMDSMI_COMPUTE_DPX] = "DPX", [AMDSMI_COMPUTE_TPX] = "TPX",
        [AMDSMI_COMPUTE_QPX] = "QPX", [AMDSMI_COMPUTE_CPX] = "CPX",
};

_public_ const char *amdsmi_compute_mode_to_string(enum amdsmi_compute_mode mode) {
        if (mode >= AMDSMI_COMPUTE_SPX && mode <= AMDSMI_COMPUTE_CPX)
                return compute_names[mode];
        return "UNKNOWN";
}

_public_ int amdsmi_compute_mode_from_string(const char *s, enum amdsmi_compute_mode *ret_mode) {
        if (!s)
                return -EINVAL;
        for (int m = AMDSMI_COMPUTE_SPX; m <= AMDSMI_COMPUTE_CPX; m++)
                if (strcasecmp(s, compute_names[m]) == 0) {
                        *ret_mode = (enum amdsmi_compute_mode) m;
                        return 0;
                }
        if (strcasecmp(s, "UNKNOWN") == 0) {
                *ret_mode = AMDSMI_COMPUTE_UNKNOWN;
                return 0;
        }
        return -EINVAL;
}

static const char *const memory_names[] = {
        [AMDSMI_MEMORY_UNKNOWN] = "UNKNOWN", [AMDSMI_MEMORY_NPS1] = "NPS1",
        [AMDSMI_MEMORY_NPS2] = "NPS2",       [AMDSMI_MEMORY_NPS3] = "NPS3",
        [AMDSMI_MEMORY_NPS4] = "NPS4",       [AMDSMI_MEMORY_NPS6] = "NPS6",
        [AMDSMI_MEMORY_NPS8] = "NPS8",
};

_public_ const char *amdsmi_memory_mode_to_string(enum amdsmi_memory_mode mode) {
        if ((unsigned) mode < ELEMENTSOF(memory_names) && memory_names[mode])
                return memory_names[mode];
        return "UNKNOWN";
}

_public_ int amdsmi_memory_mode_from_string(const char *s, enum amdsmi_memory_mode *ret_mode) {
        if (!s)
                return -EINVAL;
        for (unsigned m = 0; m < ELEMENTSOF(memory_names); m++)
                if (memory_names[m] && strcasecmp(s, memory_names[m]) == 0) {
                        *ret_mode = (enum amdsmi_memory_mode) m;
                        return 0;
                }
        return -EINVAL;
}
