/* SPDX-License-Identifier: MIT */
/*
 * The one place where libamdsmi touches sysfs (and, through devfs_open(), device nodes).
 * Every path is resolved relative to a directory fd of the context's root, so the same code
 * reads /sys, a simulator mount or a plain snapshot tree.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "parse-util.h"
#include "private.h"
#include "sysfs.h"

const char sysfs_default_root[] = "/sys";
const char devfs_default_root[] = "/dev";

bool sysfs_root_is_default(const char *root) {
        size_t n = strlen(root);

        while (n > 1 && root[n - 1] == '/')
                n--;
        return n == strlen(sysfs_default_root) && strncmp(root, sysfs_default_root, n) == 0;
}

static const char *relative(const char *path) {
        while (*path == '/')
                path++;
        return *path ? path : ".";
}

static int root_fd(struct amdsmi_ctx *ctx) {
        if (ctx->root_fd < 0) {
                int fd = open(ctx->sysfs_root, O_PATH | O_DIRECTORY | O_CLOEXEC);
                if (fd < 0) {
                        int r = -errno;
                        log_debug(ctx, "open %s: %s", ctx->sysfs_root, strerror(-r));
                        return r;
                }
                ctx->root_fd = fd;
        }
        return ctx->root_fd;
}

static void log_failure(struct amdsmi_ctx *ctx, const char *what, const char *path, int r) {
        if (r == -ENOENT)
                return;
        log_debug(ctx, "%s %s/%s: %s", what, ctx->sysfs_root, relative(path), strerror(-r));
}

/* Opens @path relative to @dfd, or to the root for SYSFS_AT_ROOT. */
static int open_at(struct amdsmi_ctx *ctx, int dfd, const char *path, int flags) {
        int fd;

        if (dfd == SYSFS_AT_ROOT)
                dfd = root_fd(ctx);
        if (dfd < 0)
                return dfd;
        do
                fd = openat(dfd, relative(path), flags | O_CLOEXEC);
        while (fd < 0 && errno == EINTR);
        return fd < 0 ? -errno : fd;
}

static int open_at_root(struct amdsmi_ctx *ctx, const char *path, int flags) {
        return open_at(ctx, SYSFS_AT_ROOT, path, flags);
}

static ssize_t read_retry(int fd, void *buf, size_t size) {
        ssize_t n;

        do
                n = pread(fd, buf, size, 0);
        while (n < 0 && errno == EINTR);
        return n < 0 ? -errno : n;
}

/* ---- attributes kept open --------------------------------------------------------------
 *
 * Telemetry is read again and again. A pread() at offset 0 makes sysfs render an attribute
 * anew (seq_file; the simulator opens every file with direct_io), so keeping such files open
 * turns open + read + close into one read. An fd whose file went away (a driver unbind, a
 * removed device: ENODEV from kernfs) or that fails in any other way is closed and the path
 * opened afresh once, so errors are those of a fresh open. The table is emptied at every
 * enumeration, so a renumbered hwmon directory never keeps a dead fd for long. */

#define KEPT_MAX 1024

static uint64_t hash_path(const char *s) {
        uint64_t h = 1469598103934665603ULL;

        for (; *s; s++)
                h = (h ^ (uint8_t) *s) * 1099511628211ULL;
        return h;
}

static struct sysfs_kept *kept_slot(struct amdsmi_ctx *ctx, const char *path) {
        size_t mask, i;

        if (ctx->kept_size == 0)
                return NULL;
        mask = ctx->kept_size - 1;
        for (i = hash_path(path) & mask;; i = (i + 1) & mask) {
                struct sysfs_kept *k = &ctx->kept[i];

                if (!k->path || strcmp(k->path, path) == 0)
                        return k;
        }
}

static int kept_grow(struct amdsmi_ctx *ctx) {
        size_t size = ctx->kept_size ? ctx->kept_size * 2 : 64;
        struct sysfs_kept *old = ctx->kept, *n;
        size_t old_size = ctx->kept_size;

        n = calloc(size, sizeof(*n));
        if (!n)
                return -ENOMEM;
        ctx->kept = n;
        ctx->kept_size = size;
        for (size_t i = 0; i < old_size; i++)
                if (old[i].path)
                        *kept_slot(ctx, old[i].path) = old[i];
        free(old);
        return 0;
}

/* Takes fd over: kept, or closed when the table is full. */
static void kept_add(struct amdsmi_ctx *ctx, const char *path, int fd) {
        struct sysfs_kept *k;

        if (ctx->n_kept >= KEPT_MAX ||
            ((ctx->n_kept + 1) * 2 > ctx->kept_size && kept_grow(ctx) < 0)) {
                close(fd);
                return;
        }
        k = kept_slot(ctx, path);
        k->path = strdup(path);
        if (!k->path) {
                close(fd);
                return;
        }
        k->fd = fd;
        ctx->n_kept++;
}

/* Drops the entry of path; the table is rebuilt, since open addressing cannot leave holes. */
static void kept_drop(struct amdsmi_ctx *ctx, const char *path) {
        struct sysfs_kept *old = ctx->kept;
        size_t size = ctx->kept_size;

        ctx->kept = calloc(size, sizeof(*ctx->kept));
        if (!ctx->kept) {
                /* cannot rebuild: forget everything */
                ctx->kept = old;
                sysfs_forget_kept(ctx);
                return;
        }
        ctx->n_kept = 0;
        for (size_t i = 0; i < size; i++) {
                if (!old[i].path)
                        continue;
                if (strcmp(old[i].path, path) == 0) {
                        close(old[i].fd);
                        free(old[i].path);
                        continue;
                }
                *kept_slot(ctx, old[i].path) = old[i];
                ctx->n_kept++;
        }
        free(old);
}

void sysfs_forget_kept(struct amdsmi_ctx *ctx) {
        for (size_t i = 0; i < ctx->kept_size; i++)
                if (ctx->kept[i].path) {
                        close(ctx->kept[i].fd);
                        free(ctx->kept[i].path);
                }
        free(ctx->kept);
        ctx->kept = NULL;
        ctx->kept_size = 0;
        ctx->n_kept = 0;
}

/* Reads the file at offset 0 into buf (at most size bytes) through its kept fd, or opens it.
 * Returns the byte count or a negative errno. *ret_fd is the fd read; *ret_fresh says it was
 * just opened: the caller then hands it to kept_add() or closes it. */
static ssize_t read_kept(struct amdsmi_ctx *ctx, const char *path, void *buf, size_t size,
                         int *ret_fd, bool *ret_fresh) {
        struct sysfs_kept *k = kept_slot(ctx, path);
        ssize_t n;
        int fd;

        if (k && k->path) {
                n = read_retry(k->fd, buf, size);
                if (n >= 0) {
                        *ret_fd = k->fd;
                        *ret_fresh = false;
                        return n;
                }
                kept_drop(ctx, path);
        }
        fd = open_at_root(ctx, path, O_RDONLY);
        if (fd < 0) {
                log_failure(ctx, "open", path, fd);
                return fd;
        }
        n = read_retry(fd, buf, size);
        if (n < 0) {
                log_failure(ctx, "read", path, (int) n);
                close(fd);
                return n;
        }
        *ret_fd = fd;
        *ret_fresh = true;
        return n;
}

/* ---- text and numbers ------------------------------------------------------------------- */

static int read_text_at(struct amdsmi_ctx *ctx, int dfd, const char *path, bool live, char *buf,
                        size_t size) {
        _cleanup_close_ int owned = -1;
        bool fresh = true;
        ssize_t n;
        int fd;

        if (size < 2)
                return -EINVAL;
        if (live) {
                n = read_kept(ctx, path, buf, size - 1, &fd, &fresh);
                if (n < 0)
                        return (int) n;
                if (fresh)
                        owned = fd;
        } else {
                fd = owned = open_at(ctx, dfd, path, O_RDONLY);
                if (fd < 0) {
                        log_failure(ctx, "open", path, fd);
                        return fd;
                }
                n = read_retry(fd, buf, size - 1);
                if (n < 0) {
                        log_failure(ctx, "read", path, (int) n);
                        return (int) n;
                }
        }
        if ((size_t) n == size - 1) {
                /* Maybe more: a sysfs attribute never exceeds a page, so this is not one. */
                char extra;
                ssize_t m = pread(fd, &extra, 1, n);
                if (m > 0) {
                        log_failure(ctx, "read", path, -EMSGSIZE);
                        return -EMSGSIZE;
                }
        }
        if (memchr(buf, '\0', (size_t) n)) {
                log_failure(ctx, "read", path, -EBADMSG);
                return -EBADMSG;
        }
        buf[n] = '\0';
        strip_newline(buf, (size_t) n);
        if (live && fresh)
                kept_add(ctx, path, TAKE_FD(owned));
        return 0;
}

static int read_text(struct amdsmi_ctx *ctx, const char *path, bool live, char *buf, size_t size) {
        return read_text_at(ctx, SYSFS_AT_ROOT, path, live, buf, size);
}

int sysfs_read_text(struct amdsmi_ctx *ctx, const char *path, char *buf, size_t size) {
        return read_text(ctx, path, false, buf, size);
}

int sysfs_open_dir(struct amdsmi_ctx *ctx, const char *path) {
        int fd = open_at(ctx, SYSFS_AT_ROOT, path, O_RDONLY | O_DIRECTORY);

        if (fd < 0)
                log_failure(ctx, "opendir", path, fd);
        return fd;
}

int sysfs_read_text_at(struct amdsmi_ctx *ctx, int dfd, const char *path, char *buf, size_t size) {
        return read_text_at(ctx, dfd, path, false, buf, size);
}

int sysfs_read_u64_at(struct amdsmi_ctx *ctx, int dfd, const char *path, int base, uint64_t *ret) {
        char buf[64];
        uint64_t v;
        int r;

        r = read_text_at(ctx, dfd, path, false, buf, sizeof(buf));
        if (r < 0)
                return r == -EMSGSIZE ? -EBADMSG : r;
        r = parse_u64(buf, base, &v);
        if (r < 0) {
                r = buf[0] == '\0' ? -ENOMSG : r == -ERANGE ? -ERANGE : -EBADMSG;
                log_failure(ctx, "parse", path, r);
                return r;
        }
        *ret = v;
        return 0;
}

int sysfs_read_text_live(struct amdsmi_ctx *ctx, const char *path, char *buf, size_t size) {
        return read_text(ctx, path, true, buf, size);
}

int sysfs_read_string(struct amdsmi_ctx *ctx, const char *path, char **ret) {
        char buf[SYSFS_TEXT_MAX + 1];
        char *s;
        int r;

        r = sysfs_read_text(ctx, path, buf, sizeof(buf));
        if (r < 0)
                return r;
        s = strdup(buf);
        if (!s)
                return -ENOMEM;
        *ret = s;
        return 0;
}

static int classify_parse_error(const char *buf, int r) {
        if (buf[0] == '\0')
                return -ENOMSG;
        return r == -ERANGE ? -ERANGE : -EBADMSG;
}

static int read_u64(struct amdsmi_ctx *ctx, const char *path, bool live, int base, uint64_t *ret) {
        char buf[64];
        uint64_t v;
        int r;

        r = read_text(ctx, path, live, buf, sizeof(buf));
        if (r < 0)
                return r == -EMSGSIZE ? -EBADMSG : r;
        r = parse_u64(buf, base, &v);
        if (r < 0) {
                r = classify_parse_error(buf, r);
                log_failure(ctx, "parse", path, r);
                return r;
        }
        *ret = v;
        return 0;
}

int sysfs_read_u64(struct amdsmi_ctx *ctx, const char *path, int base, uint64_t *ret) {
        return read_u64(ctx, path, false, base, ret);
}

int sysfs_read_u64_live(struct amdsmi_ctx *ctx, const char *path, int base, uint64_t *ret) {
        return read_u64(ctx, path, true, base, ret);
}

static int read_i64(struct amdsmi_ctx *ctx, const char *path, bool live, int64_t *ret) {
        char buf[64];
        int64_t v;
        int r;

        r = read_text(ctx, path, live, buf, sizeof(buf));
        if (r < 0)
                return r == -EMSGSIZE ? -EBADMSG : r;
        r = parse_i64(buf, &v);
        if (r < 0) {
                r = classify_parse_error(buf, r);
                log_failure(ctx, "parse", path, r);
                return r;
        }
        *ret = v;
        return 0;
}

int sysfs_read_i64(struct amdsmi_ctx *ctx, const char *path, int64_t *ret) {
        return read_i64(ctx, path, false, ret);
}

int sysfs_read_i64_live(struct amdsmi_ctx *ctx, const char *path, int64_t *ret) {
        return read_i64(ctx, path, true, ret);
}

ssize_t sysfs_read_binary(struct amdsmi_ctx *ctx, const char *path, void *buf, size_t size) {
        _cleanup_close_ int fd = -1;
        ssize_t n;

        fd = open_at_root(ctx, path, O_RDONLY);
        if (fd < 0) {
                log_failure(ctx, "open", path, fd);
                return fd;
        }
        n = read_retry(fd, buf, size);
        if (n < 0)
                log_failure(ctx, "read", path, (int) n);
        return n;
}

ssize_t sysfs_read_binary_live(struct amdsmi_ctx *ctx, const char *path, void *buf, size_t size) {
        bool fresh;
        ssize_t n;
        int fd;

        n = read_kept(ctx, path, buf, size, &fd, &fresh);
        if (n >= 0 && fresh)
                kept_add(ctx, path, fd);
        return n;
}

int sysfs_read_all(struct amdsmi_ctx *ctx, const char *path, size_t max, char **ret_buf,
                   size_t *ret_size) {
        /* debugfs rings want 4-byte aligned sizes; bad-page reads return whole 28-byte records
         * of what was asked for: one chunk size serves both. */
        const size_t chunk = 65536;
        _cleanup_close_ int fd = -1;
        _cleanup_free_ char *buf = NULL;
        size_t n = 0, allocated = 0;

        fd = open_at_root(ctx, path, O_RDONLY);
        if (fd < 0) {
                log_failure(ctx, "open", path, fd);
                return fd;
        }
        for (;;) {
                ssize_t m;

                if (allocated - n < chunk + 1) {
                        size_t na = allocated + chunk + 1;
                        char *nb;

                        if (n > max) {
                                log_failure(ctx, "read", path, -EFBIG);
                                return -EFBIG;
                        }
                        nb = realloc(buf, na);
                        if (!nb)
                                return -ENOMEM;
                        buf = nb;
                        allocated = na;
                }
                do
                        m = read(fd, buf + n, chunk);
                while (m < 0 && errno == EINTR);
                if (m < 0) {
                        int r = -errno;
                        log_failure(ctx, "read", path, r);
                        return r;
                }
                if (m == 0)
                        break;
                n += (size_t) m;
        }
        if (n > max) {
                log_failure(ctx, "read", path, -EFBIG);
                return -EFBIG;
        }
        if (!buf) {
                buf = malloc(1);
                if (!buf)
                        return -ENOMEM;
        }
        buf[n] = '\0';
        *ret_buf = TAKE_PTR(buf);
        *ret_size = n;
        return 0;
}

int sysfs_readlink(struct amdsmi_ctx *ctx, const char *path, char **ret) {
        char buf[PATH_MAX];
        int dfd = root_fd(ctx);
        ssize_t n;
        char *s;

        if (dfd < 0)
                return dfd;
        n = readlinkat(dfd, relative(path), buf, sizeof(buf) - 1);
        if (n < 0) {
                int r = -errno;
                log_failure(ctx, "readlink", path, r);
                return r;
        }
        buf[n] = '\0';
        s = strdup(buf);
        if (!s)
                return -ENOMEM;
        *ret = s;
        return 0;
}

int sysfs_readlink_basename(struct amdsmi_ctx *ctx, const char *path, char **ret) {
        _cleanup_free_ char *target = NULL;
        const char *base;
        char *s;
        int r;

        r = sysfs_readlink(ctx, path, &target);
        if (r < 0)
                return r;
        base = strrchr(target, '/');
        base = base ? base + 1 : target;
        if (!*base)
                return -EBADMSG;
        s = strdup(base);
        if (!s)
                return -ENOMEM;
        *ret = s;
        return 0;
}

static int cmp_str(const void *a, const void *b) {
        return strcmp(*(char *const *) a, *(char *const *) b);
}

int sysfs_list_dir(struct amdsmi_ctx *ctx, const char *path, const char *prefix, char ***ret) {
        return sysfs_list_dir_at(ctx, SYSFS_AT_ROOT, path, prefix, ret);
}

/* getdents64(2)'s record (the kernel's struct linux_dirent64) */
struct dirent64_rec {
        uint64_t d_ino;
        int64_t d_off;
        unsigned short d_reclen;
        unsigned char d_type;
        char d_name[];
};

int sysfs_list_dir_at(struct amdsmi_ctx *ctx, int dfd, const char *path, const char *prefix,
                      char ***ret) {
        _cleanup_strv_free_ char **names = NULL;
        _cleanup_close_ int fd = -EBADF;
        size_t n = 0, allocated = 0, plen = prefix ? strlen(prefix) : 0;
        /* getdents64 on the descriptor: no DIR (whose fdopendir() costs an fcntl and an
         * fstat), which matters for the thousand directories of the KFD process entries */
        union {
                char bytes[8192];
                uint64_t align;
        } buf;

        fd = open_at(ctx, dfd, path, O_RDONLY | O_DIRECTORY);
        if (fd < 0) {
                log_failure(ctx, "opendir", path, fd);
                return fd;
        }
        names = calloc(1, sizeof(char *));
        if (!names)
                return -ENOMEM;
        allocated = 1;
        for (;;) {
                ssize_t got = getdents64(fd, buf.bytes, sizeof(buf.bytes));

                if (got < 0 && errno == EINTR)
                        continue;
                if (got < 0) {
                        int r = -errno;

                        log_failure(ctx, "readdir", path, r);
                        return r;
                }
                if (got == 0)
                        break;
                for (ssize_t off = 0; off < got;) {
                        const struct dirent64_rec *de = (const void *) (buf.bytes + off);
                        const char *name = de->d_name;

                        off += de->d_reclen;
                        if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
                                continue;
                        if (plen && strncmp(name, prefix, plen) != 0)
                                continue;
                        if (n + 2 > allocated) {
                                size_t na = allocated * 2 + 8;
                                char **nn = realloc(names, na * sizeof(char *));

                                if (!nn)
                                        return -ENOMEM;
                                names = nn;
                                allocated = na;
                        }
                        names[n] = strdup(name);
                        if (!names[n])
                                return -ENOMEM;
                        names[++n] = NULL;
                }
        }
        qsort(names, n, sizeof(char *), cmp_str);
        *ret = TAKE_PTR(names);
        return (int) n;
}

int sysfs_exists(struct amdsmi_ctx *ctx, const char *path) {
        int dfd = root_fd(ctx);
        struct stat st;

        if (dfd < 0)
                return dfd;
        if (fstatat(dfd, relative(path), &st, 0) < 0)
                return -errno;
        return 0;
}

int sysfs_is_writable(struct amdsmi_ctx *ctx, const char *path) {
        int dfd = root_fd(ctx);
        struct stat st;

        if (dfd < 0)
                return dfd;
        if (fstatat(dfd, relative(path), &st, 0) < 0)
                return -errno;
        return (st.st_mode & 0222) ? 1 : 0;
}

int sysfs_write_string(struct amdsmi_ctx *ctx, const char *path, const char *value) {
        _cleanup_close_ int fd = -1;
        size_t len = strlen(value);
        ssize_t n;

        fd = open_at_root(ctx, path, O_WRONLY);
        if (fd < 0) {
                log_failure(ctx, "open", path, fd);
                return fd;
        }
        do
                n = write(fd, value, len);
        while (n < 0 && errno == EINTR);
        if (n < 0) {
                int r = -errno;
                log_failure(ctx, "write", path, r);
                return r;
        }
        if ((size_t) n != len)
                return -EIO;
        return 0;
}

int sysfs_open_read(struct amdsmi_ctx *ctx, const char *path) {
        int fd = open_at_root(ctx, path, O_RDONLY);

        if (fd < 0 && fd != -ENOENT)
                log_debug(ctx, "open %s/%s: %s", ctx->sysfs_root, relative(path), strerror(-fd));
        return fd;
}

int devfs_open(struct amdsmi_ctx *ctx, const char *path, int flags) {
        _cleanup_free_ char *full = NULL;
        int fd;

        if (!ctx->dev_root)
                return -ENODEV;
        if (asprintf(&full, "%s/%s", ctx->dev_root, relative(path)) < 0)
                return -ENOMEM;
        do
                fd = open(full, flags | O_CLOEXEC);
        while (fd < 0 && errno == EINTR);
        if (fd < 0) {
                int r = -errno;
                if (r != -ENOENT)
                        log_debug(ctx, "open %s: %s", full, strerror(-r));
                return r;
        }
        return fd;
}
