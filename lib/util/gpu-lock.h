/* SPDX-License-Identifier: MIT */
/*
 * The per-GPU change lock (ARCHITECTURE §4): one file per GPU, <runtime_dir()>/lock/<BDF>,
 * held with flock(LOCK_EX | LOCK_NB) for as long as a change runs. amdsmid and the CLI's
 * in-process changes take the same lock. The file holds the holder's PID (for the message of
 * whoever finds it taken); it is never removed: a lock dies with the holder's descriptor, so
 * a file left behind by a dead holder locks nothing.
 *
 * Nobody else may open the file: the directory is 0700 and the file 0600 (an older amdsmi's
 * 0755 directory and 0644 files are tightened), both owned by the effective uid or root
 * (anything else is refused: safe-open.h's errno convention).
 */
#pragma once

#include <stddef.h>
#include <sys/types.h>

#define GPU_LOCK_DIR_MODE 0700

struct gpu_lock {
        int fd;      /* -1: not held */
        char bdf[16];
};

#define GPU_LOCK_INIT { .fd = -1 }

/*
 * Takes the lock of the GPU at @bdf without waiting.
 * @return 0; -EBUSY when another open file description holds it, with the holder's PID in
 * *ret_holder (0 if it could not be read; ret_holder may be NULL); -EINVAL for a bad BDF;
 * or a negative errno (the runtime directory cannot be made, the lock file is not a regular
 * file of ours: -ELOOP, -EISDIR, -EBADFD, -EPERM, ...).
 */
int gpu_lock_acquire(struct gpu_lock *l, const char *bdf, pid_t *ret_holder);

/* As gpu_lock_acquire(), waiting up to @timeout_ms for a holder to finish (short changes,
 * such as power sources, queue up instead of failing). */
int gpu_lock_acquire_wait(struct gpu_lock *l, const char *bdf, unsigned timeout_ms,
                          pid_t *ret_holder);

/* Releases the lock (a no-op when not held). */
void gpu_lock_release(struct gpu_lock *l);

/* The lock file's path, "<runtime_dir()>/lock/<bdf>". @return 0 or -ENAMETOOLONG. */
int gpu_lock_path(const char *bdf, char *buf, size_t size);

/* The message for @r, an error of taking the lock of @bdf: names the lock file or directory
 * and what is wrong with it ("... is a FIFO, not a regular file: refused", "... is owned by
 * uid 1000, not by root: refused"), else strerror(). @return @buf. */
const char *gpu_lock_error(const char *bdf, int r, char *buf, size_t size);

/*
 * Takes the locks of @n GPUs in BDF order (strcmp order of @bdfs, duplicates once), all or
 * none: on -EBUSY the BDF that was taken is in *ret_busy_bdf (16 bytes) and its holder in
 * *ret_holder; on another error the BDF whose lock failed is in *ret_busy_bdf. @locks has @n
 * entries (GPU_LOCK_INIT); release with gpu_locks_release().
 */
int gpu_locks_acquire(struct gpu_lock *locks, const char *const *bdfs, size_t n,
                      char *ret_busy_bdf, pid_t *ret_holder);
/* As gpu_locks_acquire(), waiting up to @timeout_ms for the holders to finish (0: one try). */
int gpu_locks_acquire_wait(struct gpu_lock *locks, const char *const *bdfs, size_t n,
                           unsigned timeout_ms, char *ret_busy_bdf, pid_t *ret_holder);
void gpu_locks_release(struct gpu_lock *locks, size_t n);
