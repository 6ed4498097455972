/* SPDX-License-Identifier: MIT */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "parse-util.h"
#include "private.h"
#include "procfs.h"

/* "/proc", or the tree a unit test made (procfs_set_root()) */
static const char *proc_root = "/proc";

void procfs_set_root(const char *root) {
        proc_root = root ? root : "/proc";
}

int procfs_read_comm(struct amdsmi_ctx *ctx, pid_t pid, char *buf, size_t size) {
        _cleanup_close_ int fd = -EBADF;
        char path[PATH_MAX], text[64];
        ssize_t n;

        if (pid <= 0 || size == 0)
                return -EINVAL;
        snprintf(path, sizeof(path), "%s/%d/comm", proc_root, (int) pid);
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

static int add_user(struct procfs_fd_user **users, size_t *n, size_t *allocated, pid_t pid,
                    size_t target) {
        /* one entry per (process, target): a process's entries are the last ones */
        for (size_t i = *n; i > 0 && (*users)[i - 1].pid == pid; i--)
                if ((*users)[i - 1].target == target)
                        return 0;
        if (*n == *allocated) {
                size_t na = *allocated * 2 + 8;
                struct procfs_fd_user *nu = reallocarray(*users, na, sizeof(**users));
                if (!nu)
                        return -ENOMEM;
                *users = nu;
                *allocated = na;
        }
        (*users)[(*n)++] = (struct procfs_fd_user){ .pid = pid, .target = target };
        return 0;
}

/* The descriptors of one process: 0, -ENOENT/-ESRCH (it is gone), -EACCES/-EPERM (not ours to
 * look at), -ENOMEM. */
static int scan_process(int proc_fd, pid_t pid, const char *const *targets, size_t n_targets,
                        struct procfs_fd_user **users, size_t *n, size_t *allocated) {
        _cleanup_closedir_ DIR *d = NULL;
        struct dirent *de;
        char path[32];
        int fd, r;

        snprintf(path, sizeof(path), "%d/fd", (int) pid);
        do
                fd = openat(proc_fd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        while (fd < 0 && errno == EINTR);
        if (fd < 0)
                return -errno;
        d = fdopendir(fd);
        if (!d) {
                r = -errno;
                (void) close(fd);
                return r;
        }
        while ((de = readdir(d))) {
                char target[PATH_MAX];
                ssize_t len;

                if (de->d_name[0] == '.')
                        continue;
                len = readlinkat(dirfd(d), de->d_name, target, sizeof(target) - 1);
                if (len < 0)
                        continue; /* closed meanwhile */
                target[len] = '\0';
                for (size_t t = 0; t < n_targets; t++)
                        if (strcmp(target, targets[t]) == 0) {
                                r = add_user(users, n, allocated, pid, t);
                                if (r < 0)
                                        return r;
                        }
        }
        return 0;
}

int procfs_find_fd_users(struct amdsmi_ctx *ctx, const char *const *targets, size_t n_targets,
                         struct procfs_fd_user **ret_users, size_t *ret_n, unsigned *ret_denied) {
        _cleanup_free_ struct procfs_fd_user *users = NULL;
        _cleanup_closedir_ DIR *d = NULL;
        size_t n = 0, allocated = 0;
        unsigned denied = 0;
        struct dirent *de;
        int fd, r;

        do
                fd = open(proc_root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        while (fd < 0 && errno == EINTR);
        if (fd < 0) {
                r = -errno;
                log_debug(ctx, "open %s: %s", proc_root, strerror(-r));
                return r;
        }
        d = fdopendir(fd);
        if (!d) {
                r = -errno;
                (void) close(fd);
                return r;
        }
        errno = 0;
        while ((de = readdir(d))) {
                int pid;

                if (parse_int(de->d_name, &pid) < 0 || pid <= 0)
                        continue; /* "self", "sys", ... */
                r = scan_process(dirfd(d), (pid_t) pid, targets, n_targets, &users, &n, &allocated);
                if (r == -EACCES || r == -EPERM)
                        denied++;
                else if (r == -ENOMEM)
                        return r;
                else if (r < 0 && r != -ENOENT && r != -ESRCH)
                        log_debug(ctx, "/proc/%d/fd: %s", pid, strerror(-r));
                errno = 0;
        }
        if (errno != 0) {
                r = -errno;
                log_debug(ctx, "read /proc: %s", strerror(-r));
                return r;
        }
        *ret_users = n > 0 ? TAKE_PTR(users) : NULL;
        *ret_n = n;
        *ret_denied = denied;
        return 0;
}

/* Reads up to size - 1 bytes of a /proc file of @pid_fd's directory with one read (comm and
 * cgroup are rendered whole by the first read of a page), NUL-terminated; the byte count, or
 * a negative errno. */
static ssize_t read_small(int pid_fd, const char *name, char *buf, size_t size) {
        _cleanup_close_ int fd = -EBADF;
        ssize_t k;

        do
                fd = openat(pid_fd, name, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW);
        while (fd < 0 && errno == EINTR);
        if (fd < 0)
                return -errno;
        do
                k = read(fd, buf, size - 1);
        while (k < 0 && errno == EINTR);
        if (k < 0)
                return -errno;
        buf[k] = '\0';
        return k;
}

bool procfs_process_gone(pid_t pid) {
        /* EPERM: it runs, as another user's; ESRCH: no such process */
        return pid > 0 && kill(pid, 0) < 0 && errno == ESRCH;
}

int procfs_read_process(struct amdsmi_ctx *ctx, pid_t pid, struct procfs_process *ret) {
        _cleanup_close_ int pid_fd = -EBADF;
        char path[PATH_MAX], text[4096];
        struct stat st;
        ssize_t n;
        char *line, *save = NULL;

        if (pid <= 0)
                return -EINVAL;
        *ret = (struct procfs_process){ .uid = UINT32_MAX };
        snprintf(path, sizeof(path), "%s/%d", proc_root, (int) pid);
        do
                pid_fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
        while (pid_fd < 0 && errno == EINTR);
        if (pid_fd < 0)
                return -errno; /* ENOENT: gone, or hidden (hidepid=invisible) */
        if (fstat(pid_fd, &st) < 0)
                return -errno;
        ret->uid = (uint32_t) st.st_uid;

        /* the kernel cuts comm to 15 bytes; a longer one (not from a kernel) is cut here */
        n = read_small(pid_fd, "comm", text, sizeof(ret->comm));
        if (n == -ENOENT || n == -ESRCH)
                return -ESRCH;
        if (n >= 0) {
                if (memchr(text, '\0', (size_t) n))
                        n = (ssize_t) strlen(text);
                if (n > 0 && text[n - 1] == '\n')
                        text[--n] = '\0';
                memcpy(ret->comm, text, (size_t) n + 1);
        } else
                log_debug(ctx, "%s/comm: %s", path, strerror((int) -n));

        n = read_small(pid_fd, "cgroup", text, sizeof(text));
        if (n == -ENOENT || n == -ESRCH)
                return -ESRCH;
        if (n < 0) {
                log_debug(ctx, "%s/cgroup: %s", path, strerror((int) -n));
                return 0;
        }
        /* the unified hierarchy's line, "0::/path" */
        for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
                if (strncmp(line, "0::", 3) == 0 && strlen(line + 3) < sizeof(ret->cgroup)) {
                        strcpy(ret->cgroup, line + 3);
                        break;
                }
        return 0;
}

/* ---- host facts (amdsmi doctor) -------------------------------------------------------- */

ssize_t procfs_read_file(struct amdsmi_ctx *ctx, const char *name, size_t max, char **ret) {
        _cleanup_close_ int fd = -EBADF;
        char path[PATH_MAX];
        size_t len = 0, size = 4096;
        char *buf = NULL;

        snprintf(path, sizeof(path), "%s/%s", proc_root, name);
        do
                fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW | O_NONBLOCK);
        while (fd < 0 && errno == EINTR);
        if (fd < 0) {
                int r = -errno;

                log_debug(ctx, "open %s: %s", path, strerror(-r));
                return r;
        }
        {
                /* a regular file (procfs's, or a file bind-mounted over it), never a FIFO */
                struct stat st;

                if (fstat(fd, &st) < 0)
                        return -errno;
                if (!S_ISREG(st.st_mode)) {
                        log_debug(ctx, "%s: not a regular file", path);
                        return -EBADF;
                }
        }
        /* /proc files have no size: read until the end, growing the buffer */
        for (;;) {
                ssize_t n;

                if (!buf || len + 1 >= size) {
                        char *nb;

                        if (buf)
                                size *= 2;
                        if (size > max + 1)
                                size = max + 1;
                        if (buf && len + 1 >= size) {
                                free(buf);
                                log_debug(ctx, "%s: longer than %zu bytes", path, max);
                                return -EFBIG;
                        }
                        nb = realloc(buf, size);
                        if (!nb) {
                                free(buf);
                                return -ENOMEM;
                        }
                        buf = nb;
                }
                do
                        n = read(fd, buf + len, size - 1 - len);
                while (n < 0 && errno == EINTR);
                if (n < 0) {
                        int r = -errno;

                        free(buf);
                        log_debug(ctx, "read %s: %s", path, strerror(-r));
                        return r;
                }
                if (n == 0)
                        break;
                len += (size_t) n;
        }
        buf[len] = '\0';
        *ret = buf;
        return (ssize_t) len;
}

int procfs_read_cmdline(struct amdsmi_ctx *ctx, char **ret) {
        char *text = NULL;
        ssize_t n = procfs_read_file(ctx, "cmdline", 64 * 1024, &text);

        if (n < 0)
                return (int) n;
        /* one line; a NUL (never written by the kernel) ends it too */
        text[strcspn(text, "\n")] = '\0';
        *ret = text;
        return 0;
}

/* Module names compare with '-' and '_' the same, as kmod does. */
static bool module_name_eq(const char *a, size_t alen, const char *b) {
        size_t i;

        for (i = 0; i < alen && b[i]; i++) {
                char x = a[i] == '-' ? '_' : a[i], y = b[i] == '-' ? '_' : b[i];

                if (x != y)
                        return false;
        }
        return i == alen && !b[i];
}

int procfs_modules_has(const char *text, size_t len, const char *module) {
        size_t pos = 0;

        if (!module || !*module)
                return 0;
        while (pos < len) {
                const char *line = text + pos, *nl = memchr(line, '\n', len - pos);
                size_t line_len = nl ? (size_t) (nl - line) : len - pos, name_len;

                /* "name size refcount deps state address": the name is the first field */
                for (name_len = 0; name_len < line_len && line[name_len] != ' ' &&
                                   line[name_len] != '\t' && line[name_len] != '\0';
                     name_len++)
                        ;
                if (name_len > 0 && module_name_eq(line, name_len, module))
                        return 1;
                pos += line_len + 1;
        }
        return 0;
}

int procfs_module_loaded(struct amdsmi_ctx *ctx, const char *module) {
        _cleanup_free_ char *text = NULL;
        ssize_t n = procfs_read_file(ctx, "modules", 4 << 20, &text);

        if (n < 0)
                return (int) n;
        return procfs_modules_has(text, (size_t) n, module);
}

/* Whether @word (@n bytes) is an interrupt chip of PCI MSI or the IO-APIC, and whether it is
 * remapped: "IR-PCI-MSI", "IR-PCI-MSIX", "IR-IO-APIC" (remapped), "PCI-MSI", "PCI-MSIX",
 * "PCI-MSI-0000:c1:00.0" (newer kernels name the device), "IO-APIC". @return 2 remapped, 1
 * plain, 0 neither. */
static int msi_chip(const char *word, size_t n) {
        bool ir = n > 3 && memcmp(word, "IR-", 3) == 0;
        const char *w = ir ? word + 3 : word;
        size_t wn = ir ? n - 3 : n;

        if ((wn >= 7 && memcmp(w, "PCI-MSI", 7) == 0) || (wn == 7 && memcmp(w, "IO-APIC", 7) == 0))
                return ir ? 2 : 1;
        return 0;
}

int procfs_interrupts_remapping(const char *text, size_t len, unsigned *ret_remapped,
                                unsigned *ret_plain) {
        unsigned remapped = 0, plain = 0;
        size_t pos = 0;

        while (pos < len) {
                const char *line = text + pos, *nl = memchr(line, '\n', len - pos);
                size_t line_len = nl ? (size_t) (nl - line) : len - pos, i = 0;

                /* every blank-separated word of the line after the "NNN:" label */
                while (i < line_len) {
                        size_t start, wn;
                        int k;

                        while (i < line_len && (line[i] == ' ' || line[i] == '\t'))
                                i++;
                        start = i;
                        while (i < line_len && line[i] != ' ' && line[i] != '\t')
                                i++;
                        wn = i - start;
                        if (wn == 0)
                                break;
                        k = msi_chip(line + start, wn);
                        if (k == 2) {
                                remapped++;
                                break;
                        }
                        if (k == 1) {
                                plain++;
                                break;
                        }
                }
                pos += line_len + 1;
        }
        if (ret_remapped)
                *ret_remapped = remapped;
        if (ret_plain)
                *ret_plain = plain;
        if (remapped)
                return 1;
        return plain ? 0 : -ENODATA;
}

int procfs_interrupt_remapping(struct amdsmi_ctx *ctx, unsigned *ret_remapped,
                               unsigned *ret_plain) {
        _cleanup_free_ char *text = NULL;
        ssize_t n = procfs_read_file(ctx, "interrupts", 16 << 20, &text);

        if (n < 0)
                return (int) n;
        return procfs_interrupts_remapping(text, (size_t) n, ret_remapped, ret_plain);
}
