/* SPDX-License-Identifier: MIT */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtime-dir.h"
#include "safe-open.h"

int runtime_dir(char *buf, size_t size) {
        const char *env = getenv("RUNTIME_DIRECTORY");
        size_t len;

        if (!env || env[0] != '/') /* unset, empty or relative: not systemd's */
                env = "/run/amdsmi";
        len = strcspn(env, ":");
        if (len + 1 > size)
                return -ENAMETOOLONG;
        memcpy(buf, env, len);
        buf[len] = '\0';
        return 0;
}

int state_dir(char *buf, size_t size) {
        const char *env = getenv("STATE_DIRECTORY");
        size_t len;

        if (!env || env[0] != '/') /* unset, empty or relative: not systemd's */
                env = LOCALSTATEDIR "/lib/amdsmi";
        len = strcspn(env, ":");
        if (len + 1 > size)
                return -ENAMETOOLONG;
        memcpy(buf, env, len);
        buf[len] = '\0';
        return 0;
}

int runtime_dir_mkdir(const char *path) {
        return safe_mkdir(path, 0755);
}

int write_file_atomic(const char *path, const char *data, size_t len, unsigned mode) {
        char tmp[4352];
        ssize_t n;
        int fd, r;

        if ((size_t) snprintf(tmp, sizeof(tmp), "%s.XXXXXX", path) >= sizeof(tmp))
                return -ENAMETOOLONG;
        fd = mkostemp(tmp, O_CLOEXEC);
        if (fd < 0)
                return -errno;
        if (fchmod(fd, (mode_t) mode) < 0)
                r = -errno;
        else {
                n = write(fd, data, len);
                r = n < 0 ? -errno : (size_t) n != len ? -EIO : 0;
        }
        if (close(fd) < 0 && r == 0)
                r = -errno;
        if (r == 0 && rename(tmp, path) < 0)
                r = -errno;
        if (r < 0)
                (void) unlink(tmp);
        return r;
}
