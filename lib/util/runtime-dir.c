/* SPDX-License-Identifier: MIT */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
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

/* A name for a temporary file: varies with the time and the process (O_EXCL decides). */
static unsigned tmp_suffix(unsigned i) {
        struct timespec ts = {};

        (void) clock_gettime(CLOCK_MONOTONIC, &ts);
        return ((unsigned) ts.tv_nsec ^ ((unsigned) getpid() << 8)) + i * 7919u;
}

int write_file_atomic_at(int dfd, const char *name, const char *data, size_t len, unsigned mode,
                         char *ret_tmp) {
        char tmp[256];
        int fd = -1, r = 0;

        for (unsigned i = 0; fd < 0; i++) {
                snprintf(tmp, sizeof(tmp), ".%.200s.%06x", name, tmp_suffix(i) & 0xffffff);
                fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                            (mode_t) mode);
                if (fd < 0 && (errno != EEXIST || i >= 16)) {
                        r = -errno;
                        if (ret_tmp)
                                snprintf(ret_tmp, 256, "%s", tmp);
                        return r;
                }
        }
        if (fchmod(fd, (mode_t) mode) < 0)
                r = -errno;
        for (size_t done = 0; r == 0 && done < len;) {
                ssize_t n = write(fd, data + done, len - done);

                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0)
                        r = n < 0 ? -errno : -EIO;
                else
                        done += (size_t) n;
        }
        if (r == 0 && fsync(fd) < 0)
                r = -errno;
        if (close(fd) < 0 && r == 0)
                r = -errno;
        if (r == 0 && renameat(dfd, tmp, dfd, name) < 0)
                r = -errno;
        if (r < 0)
                (void) unlinkat(dfd, tmp, 0);
        return r;
}
