/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdbool.h>

#include <amdsmi/amdsmi.h>

#include "bus-errors.h"

const sd_bus_error_map amdsmi_bus_errors[] = {
        SD_BUS_ERROR_MAP(AMDSMI_BUS_ERROR_BUSY, EBUSY),
        SD_BUS_ERROR_MAP(AMDSMI_BUS_ERROR_BUSY, EAGAIN),
        SD_BUS_ERROR_MAP(AMDSMI_BUS_ERROR_NOT_SUPPORTED, EOPNOTSUPP),
        SD_BUS_ERROR_MAP(AMDSMI_BUS_ERROR_NOT_SUPPORTED, ENOSYS),
        SD_BUS_ERROR_MAP(AMDSMI_BUS_ERROR_NOT_SUPPORTED, ENODATA),
        SD_BUS_ERROR_MAP(AMDSMI_BUS_ERROR_NOT_SUPPORTED, ENOTTY),
        SD_BUS_ERROR_MAP(AMDSMI_BUS_ERROR_INVALID_ARGUMENT, EINVAL),
        SD_BUS_ERROR_MAP(AMDSMI_BUS_ERROR_OUT_OF_RANGE, ERANGE),
        SD_BUS_ERROR_MAP(AMDSMI_BUS_ERROR_OUT_OF_RANGE, EDOM),
        SD_BUS_ERROR_MAP(AMDSMI_BUS_ERROR_OUT_OF_RANGE, EOVERFLOW),
        SD_BUS_ERROR_MAP(AMDSMI_BUS_ERROR_NOT_FOUND, ENOENT),
        SD_BUS_ERROR_MAP(AMDSMI_BUS_ERROR_NOT_FOUND, ENODEV),
        SD_BUS_ERROR_MAP(AMDSMI_BUS_ERROR_NOT_FOUND, ENXIO),
        SD_BUS_ERROR_MAP(AMDSMI_BUS_ERROR_NOT_FOUND, ESTALE),
        SD_BUS_ERROR_MAP(AMDSMI_BUS_ERROR_PERMISSION_DENIED, EACCES),
        SD_BUS_ERROR_MAP(AMDSMI_BUS_ERROR_PERMISSION_DENIED, EPERM),
        SD_BUS_ERROR_MAP(AMDSMI_BUS_ERROR_RELOAD_REQUIRED, AMDSMI_ERELOAD_REQUIRED),
        SD_BUS_ERROR_MAP(AMDSMI_BUS_ERROR_TIMEOUT, ETIMEDOUT),
        SD_BUS_ERROR_MAP(AMDSMI_BUS_ERROR_DEVICE_ERROR, EIO),
        SD_BUS_ERROR_MAP(AMDSMI_BUS_ERROR_DEVICE_ERROR, ETIME),
        SD_BUS_ERROR_MAP(AMDSMI_BUS_ERROR_DEVICE_ERROR, EBADMSG),
        SD_BUS_ERROR_MAP(AMDSMI_BUS_ERROR_DEVICE_ERROR, ENOMSG),
        SD_BUS_ERROR_MAP(AMDSMI_BUS_ERROR_DEVICE_ERROR, EPROTO),
        SD_BUS_ERROR_MAP(AMDSMI_BUS_ERROR_DEVICE_ERROR, EREMOTEIO),
        SD_BUS_ERROR_MAP(AMDSMI_BUS_ERROR_STATE_DAMAGED, EUCLEAN),
        SD_BUS_ERROR_MAP_END,
};

const char *amdsmi_bus_error_name(int r) {
        if (r < 0)
                r = -r;
        for (const sd_bus_error_map *m = amdsmi_bus_errors; m->name; m++)
                if (m->code == r)
                        return m->name;
        return NULL;
}

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
