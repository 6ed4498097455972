/* SPDX-License-Identifier: MIT */
/* The calls into sd-bus of bus-errors.h, apart from its tables: amdsmi(1) uses the tables
 * without linking libsystemd (it loads it only when it talks to amdsmid, cli/sd-bus-dl.c). */
#include <stdbool.h>

#include "bus-errors.h"

int amdsmi_bus_errors_register(void) {
        static bool done;
        int r;

        if (done)
                return 0;
        r = sd_bus_error_add_map(amdsmi_bus_errors);
        if (r < 0)
                return r;
        done = true;
        return 0;
}

int amdsmi_bus_gpu_path(const char *bdf, char **ret) {
        return sd_bus_path_encode(AMDSMI_BUS_GPU_PREFIX, bdf, ret);
}
