/* SPDX-License-Identifier: MIT */
/*
 * amdsmid's PID file, RUNTIME_DIRECTORY/amdsmid.pid (runtime-dir.h): its PID on the first
 * line, so that anything reading it as a pidfile still works, then the roots amdsmid reads:
 *
 *   1234
 *   sysfs_root=/sys
 *   dev_root=/dev
 *
 * each as realpath() resolved it (dev_root= empty: amdsmid opens no device node, as with a
 * snapshot tree and no AMDSMI_DEV_ROOT). amdsmi(1) reads through amdsmid only when amdsmid
 * reads the roots it would read itself (amdsmi(1), amdsmid(8)). An older amdsmid wrote the
 * PID line alone.
 */
#pragma once

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The largest PID file read: a PID and two paths of PATH_MAX with their keys. */
#define PID_FILE_MAX (2 * PATH_MAX + 64)

struct pid_file {
        uint32_t pid;              /* 1 .. INT32_MAX */
        bool has_roots;            /* false: the old format (the PID line alone) */
        char sysfs_root[PATH_MAX]; /* absolute */
        char dev_root[PATH_MAX];   /* absolute, or "": no device nodes */
};

/*
 * @sysfs_root and @dev_root (NULL or "": none) as the PID file has them: each through
 * realpath(), so that a trailing slash or a symbolic link names the same tree; a path that
 * cannot be resolved (it does not exist) is kept as given, without trailing slashes. The
 * roots come from libamdsmi's context (amdsmi_ctx_get_sysfs_root(), amdsmi_ctx_get_dev_root()),
 * which chose them from AMDSMI_SYSFS_ROOT and AMDSMI_DEV_ROOT. @ret_dev is "" for none.
 * @return 0, -EINVAL (no @sysfs_root) or -ENAMETOOLONG.
 */
int pid_file_resolve_roots(const char *sysfs_root, const char *dev_root,
                           char ret_sysfs[static PATH_MAX], char ret_dev[static PATH_MAX]);

/*
 * The text of the PID file for @pid and the roots (@dev_root "" or NULL: none), in @buf.
 * @return its length, or -ENAMETOOLONG (it does not fit), -EINVAL (a root is not an absolute
 * path, or holds a newline).
 */
int pid_file_format(uint32_t pid, const char *sysfs_root, const char *dev_root, char *buf,
                    size_t size);

/*
 * Parses @size bytes of a PID file, strictly: the PID alone (its newline may be missing), or
 * the PID line and then "key=value\n" lines, sysfs_root (absolute) and dev_root (absolute or
 * empty) exactly once each; lines of other keys (lower-case letters and '_') are skipped, for
 * a later amdsmid. Anything else (a NUL byte, an empty or unterminated key line, a line
 * without '=', a relative or over-long path, a key twice, one root without the other, more
 * than PID_FILE_MAX bytes) is -EINVAL. *ret is written only on success.
 * @return 0 or -EINVAL.
 */
int pid_file_parse(const char *data, size_t size, struct pid_file *ret);
