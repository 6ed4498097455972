/* SPDX-License-Identifier: MIT */
/*
 * The single chokepoint for every sysfs access of the library. Paths are relative to the
 * context's sysfs root ("bus/pci/devices/0000:c1:00.0/vendor"). Every function opens with
 * O_CLOEXEC, bounds what it reads, retries EINTR and returns 0 or a negative errno. Failures
 * other than ENOENT are logged at debug priority with the full path.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct amdsmi_ctx;

/* The real roots ("/sys", "/dev"), used when no override is given. */
extern const char sysfs_default_root[];
extern const char devfs_default_root[];
/* Whether root names the real sysfs ("/sys", "/sys/", ...). */
bool sysfs_root_is_default(const char *root);

/* Largest text attribute we read (sysfs emits at most one page). */
#define SYSFS_TEXT_MAX 4096

/* Reads a text attribute into buf (NUL-terminated, one trailing newline removed).
 * -EMSGSIZE if it does not fit in size-1 bytes. */
int sysfs_read_text(struct amdsmi_ctx *ctx, const char *path, char *buf, size_t size);
/* Reads a text attribute into a new string (trailing newline removed). */
int sysfs_read_string(struct amdsmi_ctx *ctx, const char *path, char **ret);
/* Reads an unsigned number; base 0 = auto (0x prefix), 10, 16. -ENOMSG for an empty value,
 * -EBADMSG for garbage, -ERANGE for overflow. */
int sysfs_read_u64(struct amdsmi_ctx *ctx, const char *path, int base, uint64_t *ret);
/* Reads a signed decimal number. Same errors as sysfs_read_u64. */
int sysfs_read_i64(struct amdsmi_ctx *ctx, const char *path, int64_t *ret);
/* Reads a binary attribute with one pread at offset 0; returns the byte count. */
ssize_t sysfs_read_binary(struct amdsmi_ctx *ctx, const char *path, void *buf, size_t size);
/* The _live variants keep the file open for the next read of the same path (a pread at offset
 * 0 renders a sysfs attribute anew): for telemetry read again and again. A kept fd that fails
 * is replaced by a fresh open, whose errors are returned. */
int sysfs_read_text_live(struct amdsmi_ctx *ctx, const char *path, char *buf, size_t size);
int sysfs_read_u64_live(struct amdsmi_ctx *ctx, const char *path, int base, uint64_t *ret);
int sysfs_read_i64_live(struct amdsmi_ctx *ctx, const char *path, int64_t *ret);
ssize_t sysfs_read_binary_live(struct amdsmi_ctx *ctx, const char *path, void *buf, size_t size);
/* Closes every kept file (at each enumeration and when the context goes). */
void sysfs_forget_kept(struct amdsmi_ctx *ctx);

/* Reads a whole file of any length (a binary attribute of many records, a debugfs ring) with
 * sequential reads of a multiple of 4 bytes until end of file, into a new buffer (NUL-terminated
 * after *ret_size bytes, for text). -EFBIG if it holds more than max bytes. */
int sysfs_read_all(struct amdsmi_ctx *ctx, const char *path, size_t max, char **ret_buf,
                   size_t *ret_size);
/* Reads a symlink target into a new string. */
int sysfs_readlink(struct amdsmi_ctx *ctx, const char *path, char **ret);
/* Base name of a symlink's target ("amdgpu" for ".../drivers/amdgpu"). */
int sysfs_readlink_basename(struct amdsmi_ctx *ctx, const char *path, char **ret);
/* Lists a directory: names in ascending order (strcmp), without "." and "..".
 * prefix, if not NULL, keeps only names starting with it. Returns the count. */
int sysfs_list_dir(struct amdsmi_ctx *ctx, const char *path, const char *prefix, char ***ret);
/* Reads relative to a directory opened once (sysfs_open_dir(), closed by the caller), for
 * many files of one directory (a KFD process entry): the path walk from the root is done once.
 * SYSFS_AT_ROOT as @dfd is the root. Same results as the functions above. */
#define SYSFS_AT_ROOT (-1000)
int sysfs_open_dir(struct amdsmi_ctx *ctx, const char *path);
int sysfs_read_text_at(struct amdsmi_ctx *ctx, int dfd, const char *path, char *buf, size_t size);
int sysfs_read_u64_at(struct amdsmi_ctx *ctx, int dfd, const char *path, int base, uint64_t *ret);
int sysfs_list_dir_at(struct amdsmi_ctx *ctx, int dfd, const char *path, const char *prefix,
                      char ***ret);
/* 0 if the path exists, -ENOENT or another negative errno if not. */
int sysfs_exists(struct amdsmi_ctx *ctx, const char *path);
/* 1 if the file has any write permission bit, 0 if not, or a negative errno. */
int sysfs_is_writable(struct amdsmi_ctx *ctx, const char *path);
/* Opens a file for reading whose read may block for long (a debugfs trigger such as
 * amdgpu_gpu_recover): the caller reads the fd, from any thread, and closes it. Returns the
 * fd (O_RDONLY | O_CLOEXEC) or a negative errno. */
int sysfs_open_read(struct amdsmi_ctx *ctx, const char *path);
/* Writes a string with one write(2); a short write is -EIO. */
int sysfs_write_string(struct amdsmi_ctx *ctx, const char *path, const char *value);

/* Opens a device node below the context's device root ("dri/renderD128"); -ENODEV when the
 * context has no device root. Returns the fd. */
int devfs_open(struct amdsmi_ctx *ctx, const char *path, int flags);
