/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gpu-lock.h"
#include "macro.h"
#include "runtime-dir.h"
#include "safe-open.h"
#include "time-util.h"
#include "parse-util.h"

int gpu_lock_path(const char *bdf, char *buf, size_t size) {
        char dir[4096];
        int r, n;

        r = runtime_dir(dir, sizeof(dir));
        if (r < 0)
                return r;
        n = snprintf(buf, size, "%s/lock/%s", dir, bdf);
        if (n < 0 || (size_t) n >= size)
                return -ENAMETOOLONG;
        return 0;
}

static pid_t read_holder(int fd) {
        char buf[32];
        ssize_t n;
        long v;
        char *end;

        n = pread(fd, buf, sizeof(buf) - 1, 0);
        if (n <= 0)
                return 0;
        buf[n] = '\0';
        errno = 0;
        v = strtol(buf, &end, 10);
        if (errno != 0 || end == buf || v <= 0 || v > INT32_MAX)
                return 0;
        return (pid_t) v;
}

int gpu_lock_acquire(struct gpu_lock *l, const char *bdf, pid_t *ret_holder) {
        char path[4200], dir[4200], pid[32];
        _cleanup_close_ int fd = -1;
        int r, n;

        if (!pci_bdf_valid(bdf))
                return -EINVAL;
        r = gpu_lock_path(bdf, path, sizeof(path));
        if (r < 0)
                return r;
        snprintf(dir, sizeof(dir), "%s", path);
        *strrchr(dir, '/') = '\0';
        /* Root's alone: a lock any user can open is a lock any user can hold (flock() works on
         * a read-only descriptor). */
        r = safe_mkdir(dir, GPU_LOCK_DIR_MODE);
        if (r < 0)
                return r;

        fd = lock_file_open(path);
        if (fd < 0)
                return fd;
        if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
                r = -errno;
                if (r == -EWOULDBLOCK) {
                        if (ret_holder)
                                *ret_holder = read_holder(fd);
                        return -EBUSY;
                }
                return r;
        }
        /* Ours now: say who holds it. A failure here only loses the message's PID. */
        n = snprintf(pid, sizeof(pid), "%ld\n", (long) getpid());
        if (ftruncate(fd, 0) == 0)
                (void) !pwrite(fd, pid, (size_t) n, 0);

        l->fd = TAKE_FD(fd);
        snprintf(l->bdf, sizeof(l->bdf), "%s", bdf);
        return 0;
}

int gpu_lock_acquire_wait(struct gpu_lock *l, const char *bdf, unsigned timeout_ms,
                          pid_t *ret_holder) {
        uint64_t deadline = now_ms() + timeout_ms;

        for (;;) {
                int r = gpu_lock_acquire(l, bdf, ret_holder);

                if (r != -EBUSY || now_ms() >= deadline)
                        return r;
                sleep_ms(5);
        }
}

void gpu_lock_release(struct gpu_lock *l) {
        if (l->fd < 0)
                return;
        /* Empty the file first: nobody holds it once we close. */
        (void) !ftruncate(l->fd, 0);
        (void) close(l->fd);
        l->fd = -1;
}

static int cmp_str(const void *a, const void *b) {
        return strcmp(*(const char *const *) a, *(const char *const *) b);
}

int gpu_locks_acquire(struct gpu_lock *locks, const char *const *bdfs, size_t n,
                      char *ret_busy_bdf, pid_t *ret_holder) {
        _cleanup_free_ const char **sorted = NULL;
        size_t k = 0;
        int r = 0;

        if (n == 0)
                return 0;
        sorted = calloc(n, sizeof(*sorted));
        if (!sorted)
                return -ENOMEM;
        memcpy(sorted, bdfs, n * sizeof(*sorted));
        qsort(sorted, n, sizeof(*sorted), cmp_str);

        for (size_t i = 0; i < n; i++) {
                pid_t holder = 0;

                if (i > 0 && strcmp(sorted[i], sorted[i - 1]) == 0)
                        continue;
                r = gpu_lock_acquire(&locks[k], sorted[i], &holder);
                if (r < 0) {
                        if (ret_busy_bdf) /* for the message of any error */
                                snprintf(ret_busy_bdf, 16, "%s", sorted[i]);
                        if (r == -EBUSY && ret_holder)
                                *ret_holder = holder;
                        gpu_locks_release(locks, k);
                        return r;
                }
                k++;
        }
        return 0;
}

int gpu_locks_acquire_wait(struct gpu_lock *locks, const char *const *bdfs, size_t n,
                           unsigned timeout_ms, char *ret_busy_bdf, pid_t *ret_holder) {
        uint64_t deadline = now_ms() + timeout_ms;

        for (;;) {
                int r = gpu_locks_acquire(locks, bdfs, n, ret_busy_bdf, ret_holder);

                if (r != -EBUSY || now_ms() >= deadline)
                        return r;
                sleep_ms(5);
        }
}

void gpu_locks_release(struct gpu_lock *locks, size_t n) {
        for (size_t i = n; i > 0; i--)
                gpu_lock_release(&locks[i - 1]);
}

const char *gpu_lock_error(const char *bdf, int r, char *buf, size_t size) {
        char path[4200], dir[4200];
        struct stat st;

        if (!bdf || !pci_bdf_valid(bdf) || gpu_lock_path(bdf, path, sizeof(path)) < 0) {
                (void) snprintf(buf, size, "%s", strerror(-r));
                return buf;
        }
        snprintf(dir, sizeof(dir), "%s", path);
        *strrchr(dir, '/') = '\0';
        /* the directory first: not one, or not ours */
        if ((r == -ENOTDIR || r == -ELOOP || r == -EPERM) && lstat(dir, &st) == 0 &&
            (!S_ISDIR(st.st_mode) || (st.st_uid != geteuid() && st.st_uid != 0)))
                return safe_open_message(dir, S_ISDIR(st.st_mode) ? -EPERM : -ENOTDIR, buf, size);
        return safe_open_message(path, r, buf, size);
}
