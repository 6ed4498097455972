/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "parse-util.h"
#include "private.h"
#include "procfs.h"

int procfs_read_comm(struct amdsmi_ctx *ctx, pid_t pid, char *buf, size_t size) {
        _cleanup_close_ int fd = -EBADF;
        char path[64], text[64];
        ssize_t n;

        if (pid <= 0 || size == 0)
                return -EINVAL;
        snprintf(path, sizeof(path), "/proc/%d/comm", (int) pid);
        do
                fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        while (fd < 0 && errno == EINTR);
        if (fd < 0) {
                int r = -errno;
                if (r != -ENOENT)
                        log_debug(ctx, "open %s: %s", path, strerror(-r));
                return r;
        }
        do
                n = read(fd, text, sizeof(text) - 1);
        while (n < 0 && errno == EINTR);
        if (n < 0) {
                int r = -errno;
                /* a process that exits between open and read: ESRCH */
                if (r != -ESRCH)
                        log_debug(ctx, "read %s: %s", path, strerror(-r));
                return r;
        }
        text[n] = '\0';
        (void) strip_newline(text, (size_t) n);
        snprintf(buf, size, "%s", text);
        return 0;
}
