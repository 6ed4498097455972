/* SPDX-License-Identifier: MIT */
/*
 * Exit status of amdsmi(1). Every failure inside the CLI is a negative errno; main() turns it
 * into an exit status with exit_code_from_errno() and nothing else decides an exit status.
 *
 *   0  EXIT_OK               success
 *   1  EXIT_GENERIC          any other failure (out of memory, write error on stdout, ...)
 *   2  EXIT_USAGE            bad command line: unknown verb or option, malformed -g selector,
 *                            conflicting options, bad interval or count     (EINVAL)
 *   3  EXIT_NOT_FOUND        no such GPU or partition, no AMD GPU at all     (ENOENT, ENODEV,
 *                                                                             ENXIO, ESTALE)
 *   4  EXIT_NOT_SUPPORTED    the GPU or driver cannot do it                  (EOPNOTSUPP,
 *                                                                             ENOSYS, ENODATA,
 *                                                                             ENOTTY)
 *   5  EXIT_BUSY             device busy, reset in progress, try again       (EBUSY, EAGAIN,
 *                                                                             ETIMEDOUT)
 *   6  EXIT_PERMISSION       permission denied                               (EACCES, EPERM)
 *   7  EXIT_OUT_OF_RANGE     value outside the accepted range                (ERANGE, EDOM,
 *                                                                             EOVERFLOW)
 *   8  EXIT_RELOAD_REQUIRED  takes effect only after a driver reload         (ERESTART)
 *   9  EXIT_DEVICE_ERROR     the device or its firmware failed               (EIO, ETIME,
 *                                                                             EBADMSG, ENOMSG,
 *                                                                             EPROTO, EREMOTEIO)
 *  10 EXIT_STATE_DAMAGED    a record of the state file the change needs     (EUCLEAN)
 *                            cannot be read: nothing was changed
 *
 * Per-field problems of a read (one sensor failing among many) are reported in the output and
 * do not change the exit status; only a failure of the command as a whole does.
 */
#pragma once

#include <amdsmi/amdsmi.h>

#include <stddef.h>

enum {
        EXIT_OK = 0,
        EXIT_GENERIC = 1,
        EXIT_USAGE = 2,
        EXIT_NOT_FOUND = 3,
        EXIT_NOT_SUPPORTED = 4,
        EXIT_BUSY = 5,
        EXIT_PERMISSION = 6,
        EXIT_OUT_OF_RANGE = 7,
        EXIT_RELOAD_REQUIRED = 8,
        EXIT_DEVICE_ERROR = 9,
        EXIT_STATE_DAMAGED = 10,
};

/* The errno that means "takes effect after a driver reload" (ReloadRequired): the library's. */
#define ERELOAD_REQUIRED AMDSMI_ERELOAD_REQUIRED

/* Maps an errno (negative or positive; 0 is success) to the exit status above. */
int exit_code_from_errno(int r);

/* The symbolic name of an errno ("ENOENT"), sign ignored; "E<number>" if it has none. The
 * result points to static storage for known names, else to @buf (at least 16 bytes). */
const char *errno_name(int r, char *buf, size_t len);
