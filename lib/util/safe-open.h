/* SPDX-License-Identifier: MIT */
/*
 * Opening amdsmi's own files and directories (state, history, intent records, locks,
 * amdsmid.conf, APML files, modprobe.d files, remembered drivers, pending memory modes) so
 * that whatever a user or an admin put at their path cannot hang, redirect or block amdsmi:
 * in the spirit of systemd's fd_verify_regular() and open_mkdir_at().
 *
 * Every open is O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK (a FIFO never blocks the
 * opener), then fstat() refuses anything but a regular file. One errno convention:
 *
 *   -ELOOP   the path is a symbolic link (even one to a regular file)
 *   -EISDIR  a directory (where a file is expected)
 *   -EBADFD  a FIFO, a socket, a character or block device: not a regular file
 *   -ENOTDIR a file that is not a directory (where a directory is expected)
 *   -EPERM   SAFE_OPEN_TRUSTED: owned by another user than the effective uid or root, or
 *            writable by group or others
 *
 * safe_open_message() turns any of them (and any other errno) into "<path> is a FIFO, not a
 * regular file" and the like, for the one message the caller reports.
 */
#pragma once

#include <fcntl.h>
#include <stddef.h>
#include <sys/types.h>

enum {
        /* Clears O_NONBLOCK once the file is known to be regular (callers that want plain
         * blocking semantics on the descriptor). */
        SAFE_OPEN_BLOCK = 1u << 0,
        /* The file must be owned by the effective uid or root and not be writable by group or
         * others: files amdsmi trusts or locks. */
        SAFE_OPEN_TRUSTED = 1u << 1,
        /* With SAFE_OPEN_TRUSTED: a file of the effective uid with more permission bits than
         * @mode is fchmod()ed to @mode (a lock file left 0644 by an older amdsmi) instead of
         * refused. */
        SAFE_OPEN_TIGHTEN = 1u << 2,
};

/*
 * Opens @path (relative to @dirfd, or AT_FDCWD) with @flags (O_RDONLY, O_RDWR | O_CREAT,
 * O_APPEND, O_EXCL, ...) plus O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK, @mode for
 * O_CREAT, and refuses it unless it is a regular file (see the errno convention above).
 * @return the descriptor, or a negative errno (-ENOENT when nothing is there).
 */
int safe_openat(int dirfd, const char *path, int flags, mode_t mode, unsigned safe_flags);

static inline int safe_open(const char *path, int flags, mode_t mode, unsigned safe_flags) {
        return safe_openat(AT_FDCWD, path, flags, mode, safe_flags);
}

/* Checks an open descriptor as safe_openat() does (regular file; owner and mode with
 * SAFE_OPEN_TRUSTED). @return 0 or the negative errno of the convention above. */
int fd_verify_regular(int fd, unsigned safe_flags);

/*
 * Opens a lock file: created 0600, O_RDWR, SAFE_OPEN_TRUSTED | SAFE_OPEN_TIGHTEN (an older
 * amdsmi's 0644 lock file of ours becomes 0600; one of another user is refused, -EPERM).
 * @return the descriptor or a negative errno.
 */
int lock_file_open(const char *path);

/*
 * Makes the directory @path with @mode (missing parents 0755) and checks it: a directory,
 * not a symbolic link (-ENOTDIR / -ELOOP), owned by the effective uid or root (-EPERM). A
 * directory of ours with more permission bits than @mode (a lock directory left 0755 by an
 * older amdsmi) is tightened to @mode; one of root with more bits than @mode while we are not
 * root is refused (-EPERM). @return 0 or a negative errno.
 */
int safe_mkdir(const char *path, mode_t mode);

/* "a regular file", "a directory", "a FIFO", "a socket", "a character device", "a block
 * device", "a symbolic link", or "an unknown kind of file". */
const char *file_type_name(mode_t mode);

/*
 * Explains @r, the error of opening @path: "<path> is a FIFO, not a regular file",
 * "<path> is a symbolic link, not a regular file (refused)", "<path> is owned by uid 1000,
 * not by root", "<path>: <strerror>" for any other error. For the refusals of the convention
 * above it looks at @path again (lstat) to name what is there. @return @buf.
 */
const char *safe_open_message(const char *path, int r, char *buf, size_t size);
