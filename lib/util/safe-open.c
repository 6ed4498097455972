/* SPDX-License-Identifier: MIT */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "macro.h"
#include "safe-open.h"

const char *file_type_name(mode_t mode) {
        switch (mode & S_IFMT) {
        case S_IFREG:
                return "a regular file";
        case S_IFDIR:
                return "a directory";
        case S_IFIFO:
                return "a FIFO";
        case S_IFSOCK:
                return "a socket";
        case S_IFCHR:
                return "a character device";
        case S_IFBLK:
                return "a block device";
        case S_IFLNK:
                return "a symbolic link";
        default:
                return "an unknown kind of file";
        }
}

/* The errno of the convention for a file of type @mode where a regular file is expected. */
static int regular_errno(mode_t mode) {
        if (S_ISREG(mode))
                return 0;
        if (S_ISDIR(mode))
                return -EISDIR;
        if (S_ISLNK(mode))
                return -ELOOP;
        return -EBADFD;
}

static int check_owner(const struct stat *st, unsigned safe_flags) {
        uid_t uid = geteuid();

        if (!(safe_flags & SAFE_OPEN_TRUSTED))
                return 0;
        if (st->st_uid != uid && st->st_uid != 0)
                return -EPERM;
        if (st->st_mode & (S_IWGRP | S_IWOTH))
                return -EPERM;
        return 0;
}

int fd_verify_regular(int fd, unsigned safe_flags) {
        struct stat st;
        int r;

        if (fstat(fd, &st) < 0)
                return -errno;
        r = regular_errno(st.st_mode);
        if (r < 0)
                return r;
        return check_owner(&st, safe_flags);
}

int safe_openat(int dirfd, const char *path, int flags, mode_t mode, unsigned safe_flags) {
        _cleanup_close_ int fd = -EBADF;
        struct stat st;
        int r;

        if (!path || !path[0])
                return -EINVAL;
        fd = openat(dirfd, path, flags | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK, mode);
        if (fd < 0) {
                r = -errno;
                /* ELOOP (a symbolic link), EISDIR (a directory opened for writing), ENXIO (a
                 * socket, a FIFO without reader opened for writing), ENODEV, EWOULDBLOCK...:
                 * name what is there when it is not a regular file. */
                if (r != -ENOENT && r != -EACCES && r != -ENOMEM &&
                    fstatat(dirfd, path, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
                    regular_errno(st.st_mode) < 0)
                        return regular_errno(st.st_mode);
                return r;
        }
        if (fstat(fd, &st) < 0)
                return -errno;
        r = regular_errno(st.st_mode);
        if (r < 0)
                return r;
        if ((safe_flags & SAFE_OPEN_TRUSTED) && (safe_flags & SAFE_OPEN_TIGHTEN) &&
            st.st_uid == geteuid() && (st.st_mode & 07777 & ~mode)) {
                if (fchmod(fd, mode & st.st_mode & 07777) < 0)
                        return -errno;
                st.st_mode &= ~(07777 & ~mode);
        }
        r = check_owner(&st, safe_flags);
        if (r < 0)
                return r;
        if (safe_flags & SAFE_OPEN_BLOCK) {
                int fl = fcntl(fd, F_GETFL);

                if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0)
                        return -errno;
        }
        return TAKE_FD(fd);
}

int lock_file_open(const char *path) {
        return safe_open(path, O_RDWR | O_CREAT, 0600, SAFE_OPEN_TRUSTED | SAFE_OPEN_TIGHTEN);
}

static int mkdir_one(const char *path, mode_t mode, bool last) {
        _cleanup_close_ int fd = -EBADF;
        struct stat st;
        bool made;

        made = mkdir(path, last ? (mode & 0700) : mode) == 0;
        if (!made && errno != EEXIST)
                return -errno;
        if (!last)
                return 0;
        fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0) {
                int r = -errno;

                if (lstat(path, &st) == 0)
                        return S_ISLNK(st.st_mode) ? -ELOOP : -ENOTDIR;
                return r;
        }
        if (fstat(fd, &st) < 0)
                return -errno;
        if (!S_ISDIR(st.st_mode))
                return -ENOTDIR;
        if (st.st_uid != geteuid() && st.st_uid != 0)
                return -EPERM;
        /* Ours: made just now (first 0700, then the mode whatever the umask), or left with
         * more bits than wanted by an older amdsmi. Root's while we are not root: refused if
         * it lets others in more than we would. */
        if (made || (st.st_mode & 07777 & ~mode)) {
                mode_t want = made ? mode : (st.st_mode & 07777 & mode);

                if (st.st_uid != geteuid())
                        return -EPERM;
                if (fchmod(fd, want) < 0)
                        return -errno;
        }
        return 0;
}

int safe_mkdir(const char *path, mode_t mode) {
        char tmp[4096];
        size_t len = path ? strlen(path) : 0;
        int r;

        if (len == 0)
                return -EINVAL;
        if (len >= sizeof(tmp))
                return -ENAMETOOLONG;
        memcpy(tmp, path, len + 1);
        while (len > 1 && tmp[len - 1] == '/')
                tmp[--len] = '\0';
        for (char *p = tmp + 1; *p; p++) {
                if (*p != '/')
                        continue;
                *p = '\0';
                r = mkdir_one(tmp, 0755, false);
                if (r < 0)
                        return r;
                *p = '/';
        }
        return mkdir_one(tmp, mode, true);
}

const char *safe_open_message(const char *path, int r, char *buf, size_t size) {
        struct stat st;
        bool seen;

        if (r > 0)
                r = -r;
        seen = (r == -ELOOP || r == -EISDIR || r == -EBADFD || r == -ENOTDIR || r == -EPERM) &&
               lstat(path, &st) == 0;
        if (seen && r == -ENOTDIR && !S_ISDIR(st.st_mode))
                (void) snprintf(buf, size, "%s is %s, not a directory", path,
                                file_type_name(st.st_mode));
        else if (seen && r == -EPERM && st.st_uid != geteuid() && st.st_uid != 0)
                (void) snprintf(buf, size, "%s is owned by uid %lu, not by root: refused", path,
                                (unsigned long) st.st_uid);
        else if (seen && r == -EPERM && (st.st_mode & (S_IWGRP | S_IWOTH)))
                (void) snprintf(buf, size, "%s is writable by %s (mode %04o): refused", path,
                                (st.st_mode & S_IWOTH) ? "others" : "its group",
                                (unsigned) (st.st_mode & 07777));
        else if (seen && r != -EPERM && r != -ENOTDIR && !S_ISREG(st.st_mode))
                (void) snprintf(buf, size, "%s is %s, not a regular file: refused", path,
                                file_type_name(st.st_mode));
        else
                (void) snprintf(buf, size, "%s: %s", path, strerror(-r));
        return buf;
}
