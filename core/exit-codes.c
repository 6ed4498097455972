/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "exit-codes.h"

int exit_code_from_errno(int r) {
        if (r < 0)
                r = -r;

        switch (r) {
        case 0:
                return EXIT_OK;
        case EINVAL:
                return EXIT_USAGE;
        case ENOENT:
        case ENODEV:
        case ENXIO:
        case ESTALE:
                return EXIT_NOT_FOUND;
        case EOPNOTSUPP:
#if ENOTSUP != EOPNOTSUPP
        case ENOTSUP:
#endif
        case ENOSYS:
        case ENODATA:
        case ENOTTY:
                return EXIT_NOT_SUPPORTED;
        case EBUSY:
        case EAGAIN:
        case ETIMEDOUT:
                return EXIT_BUSY;
        case EACCES:
        case EPERM:
                return EXIT_PERMISSION;
        case ERANGE:
        case EDOM:
        case EOVERFLOW:
                return EXIT_OUT_OF_RANGE;
        case ERELOAD_REQUIRED:
                return EXIT_RELOAD_REQUIRED;
        case EIO:
        case ETIME:
        case EBADMSG:
        case ENOMSG:
        case EPROTO:
        case EREMOTEIO:
                return EXIT_DEVICE_ERROR;
        case EUCLEAN:
                return EXIT_STATE_DAMAGED;
        default:
                return EXIT_GENERIC;
        }
}

const char *errno_name(int r, char *buf, size_t len) {
        const char *name;

        if (r < 0)
                r = -r;
        name = strerrorname_np(r);
        if (name)
                return name;
        snprintf(buf, len, "E%d", r);
        return buf;
}
