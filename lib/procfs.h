/* SPDX-License-Identifier: MIT */
/*
 * The library's only access to /proc (not sysfs, so not lib/sysfs.c): the names of the
 * processes that use a GPU. Paths are the running system's /proc, whatever the sysfs root: the
 * PIDs KFD names are processes of this machine.
 */
#pragma once

#include <stddef.h>
#include <sys/types.h>

struct amdsmi_ctx;

/* Reads /proc/PID/comm into buf (NUL-terminated, the newline removed, cut to size - 1).
 * -ENOENT/-ESRCH when the process is gone, or another negative errno. */
int procfs_read_comm(struct amdsmi_ctx *ctx, pid_t pid, char *buf, size_t size);
