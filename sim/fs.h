/* SPDX-License-Identifier: MIT */
/*
 * amdsmi-sim: the engine. An in-memory tree of directories, attribute files (show/store
 * callbacks and a mode, as sysfs has them) and relative symlinks, served through the libfuse3
 * low-level API, or written out as a plain directory tree (snapshot).
 *
 * Locking: one mutex (sim_fs_lock()) guards the tree and everything the callbacks touch. Every
 * FUSE handler takes it; show/store callbacks run with it held and may change the tree.
 *
 * Building: the node functions below never fail loudly. An allocation failure or a duplicate
 * name is remembered in the fs (sim_fs_error()), and functions given a NULL parent do nothing,
 * so a builder makes many calls and checks once.
 *
 * Removal: a removed node is unhooked at once; the kernel may still hold it (lookup count), so
 * it stays allocated, "dead" (reads and writes give ENODEV as kernfs does), until the kernel
 * forgets it. Removing a node the kernel has cached queues an invalidation. A notifier thread
 * sends the invalidations once the lock is released; a write(2) that changed the tree is
 * answered after them, so that what a process reads after its write is the new tree.
 *
 * Threads: the request loop runs at most 8 workers (4 kept idle), plus the notifier. A
 * callback may wait (sim_fs_wait(), sim_fs_sleep()): the lock is released meanwhile. No worker
 * ever waits for the notifier.
 */
#pragma once

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define SIM_PAGE_SIZE 4096
#define SIM_SHOW_LATER (-EINPROGRESS)

struct sim_fs;
struct sim_node;

/* Who is reading or writing: the opener's credentials (FUSE request context). */
struct sim_caller {
        uid_t uid;
        gid_t gid;
        pid_t pid;
};

/*
 * show: writes the file's contents into @buf (SIM_PAGE_SIZE bytes), returns the length or a
 * negative errno. Text ends with exactly one newline. SIM_SHOW_LATER: the read waits (as for a
 * kernel mutex) without holding a worker, and the show is called again at sim_fs_wake().
 * store: one write(2), NUL-terminated, at most SIM_PAGE_SIZE bytes; returns 0 or a negative
 * errno (the engine then reports the whole count written).
 */
struct sim_attr_ops {
        int (*show)(struct sim_node *n, const struct sim_caller *c, char *buf);
        int (*store)(struct sim_node *n, const struct sim_caller *c, const char *buf, size_t len);
        /* A binary attribute or a debugfs file instead of show: every read(2) reaches it with
         * its offset and size (at most SIM_PAGE_SIZE, as kernfs passes a bin read); returns
         * the byte count (0: end of file) or a negative errno. */
        int (*read)(struct sim_node *n, const struct sim_caller *c, char *buf, size_t size,
                    uint64_t off);
        /* st_size, where the kernel sets one (a debugfs ring); else SIM_PAGE_SIZE. */
        uint64_t (*size)(struct sim_node *n);
};

int sim_fs_new(struct sim_fs **ret);
struct sim_fs *sim_fs_free(struct sim_fs *fs);

void sim_fs_lock(struct sim_fs *fs);
void sim_fs_unlock(struct sim_fs *fs);

/* The first error of the building functions since the last call (0 if none); clears it. */
int sim_fs_error(struct sim_fs *fs);

struct sim_node *sim_fs_root(struct sim_fs *fs);

/* The directory at @path below @at ("a/b/c"), created with its parents (mode 0755). */
struct sim_node *sim_mkdir(struct sim_node *at, const char *path);
struct sim_node *sim_mkdirf(struct sim_node *at, const char *fmt, ...)
        __attribute__((format(printf, 2, 3)));

/* An attribute file @name in @dir; @obj and @arg are for the callbacks. */
struct sim_node *sim_attr(struct sim_node *dir, const char *name, unsigned mode,
                          const struct sim_attr_ops *ops, void *obj, intptr_t arg);

/* A file with fixed contents: printf, a newline appended (text), or raw bytes. */
struct sim_node *sim_text(struct sim_node *dir, const char *name, unsigned mode, const char *fmt,
                          ...) __attribute__((format(printf, 4, 5)));
struct sim_node *sim_raw(struct sim_node *dir, const char *name, unsigned mode, const void *data,
                         size_t len);

/* A symlink at @link_path to @target_path (both relative to the root), as a relative link the
 * way sysfs writes it ("../../bus/pci/drivers/amdgpu"). Parents of the link are created. */
struct sim_node *sim_link(struct sim_fs *fs, const char *link_path, const char *target_path);

/* Changes the mode bits of a node (a debugfs directory is 0700). NULL-safe. */
void sim_set_mode(struct sim_node *n, unsigned mode);

/* Removes @n and everything below it (no-op for NULL or the root). */
void sim_remove(struct sim_node *n);
/* Removes every child of @dir. */
void sim_remove_children(struct sim_node *dir);

/* The node at @path below the root, following no links; NULL if there is none. */
struct sim_node *sim_lookup(struct sim_fs *fs, const char *path);
struct sim_node *sim_child(struct sim_node *dir, const char *name);

void *sim_node_obj(const struct sim_node *n);
intptr_t sim_node_arg(const struct sim_node *n);
const char *sim_node_name(const struct sim_node *n);
struct sim_fs *sim_node_fs(const struct sim_node *n);

/* Serving. */
struct sim_serve_config {
        const char *mountpoint;
        bool foreground;
        bool allow_other;
        bool auto_unmount;
        unsigned max_threads;
        unsigned max_idle_threads;
};

/* Mounts the tree (no threads started yet). */
int sim_fs_mount(struct sim_fs *fs, const struct sim_serve_config *cfg);
/* Runs the request loop until the file system is unmounted or a signal ends it. */
int sim_fs_loop(struct sim_fs *fs);
/* Ends the loop from another thread: unmounts (lazily) so that the workers see the end. */
void sim_fs_stop(struct sim_fs *fs);
/* Releases the session after the loop ended. */
void sim_fs_unmount(struct sim_fs *fs);
/* Detaches into the background once mounted (unless foreground). */
int sim_fs_daemonize(struct sim_fs *fs, bool foreground);

/* Writes the tree as a plain directory tree under @dir (which must exist), as root reads it. */
int sim_fs_snapshot(struct sim_fs *fs, const char *dir);

/* Counters for tests and benchmarks. */
size_t sim_fs_node_count(struct sim_fs *fs);

/*
 * Faults (the control socket's inject, delay and no-effect) on one path of the tree, for some
 * operations (open: files and directories; read and write: files; a read is one that renders
 * the file, at offset 0), once or until cleared. At an operation the delay runs first (the
 * lock is not held meanwhile), then the errno fails it, then a write without effect succeeds
 * without calling the store. The functions below run with the lock held.
 */
enum {
        SIM_OP_OPEN = 1 << 0,
        SIM_OP_READ = 1 << 1,
        SIM_OP_WRITE = 1 << 2,
};

enum sim_fault_kind {
        SIM_FAULT_ERRNO,
        SIM_FAULT_DELAY,
        SIM_FAULT_NO_EFFECT,
        _SIM_FAULT_KIND_MAX,
};

struct sim_fault {
        char *path; /* every link resolved, relative to the root */
        enum sim_fault_kind kind;
        unsigned ops; /* SIM_OP_* */
        int err;      /* SIM_FAULT_ERRNO: a positive errno */
        unsigned ms;  /* SIM_FAULT_DELAY */
        bool once;    /* removed when it fired */
        unsigned times; /* > 0: removed when it fired this many times */
        uint64_t hits;
};

/* The path of what @path names below the root, every link followed as open(2) follows them:
 * -ENOENT when nothing is there, -ELOOP. */
int sim_fs_resolve(struct sim_fs *fs, const char *path, char **ret);
/* Adds a copy of @f. It takes over the operations it names from the faults of its kind on its
 * path (a fault left without operations goes). */
int sim_fs_fault_add(struct sim_fs *fs, const struct sim_fault *f);
/* Removes the faults on @path, or all of them for NULL; returns how many went. */
size_t sim_fs_fault_clear(struct sim_fs *fs, const char *path);
size_t sim_fs_n_faults(struct sim_fs *fs);
const struct sim_fault *sim_fs_fault(struct sim_fs *fs, size_t i);

/*
 * Waiting inside a store (the lock held, as the kernel's sleeping locks): the lock is released
 * while waiting, so every other file is served, and what was queued for the kernel is handed
 * to the notifier first; the worker stays busy. A write that waited is answered after the
 * notifier sent what it queued. sim_fs_wait() returns after some sim_fs_wake() (callers check
 * their condition again); sim_fs_sleep() after @ms milliseconds. sim_fs_wake() also runs the
 * reads whose show returned SIM_SHOW_LATER again.
 */
void sim_fs_wait(struct sim_fs *fs);
void sim_fs_sleep(struct sim_fs *fs, unsigned ms);
void sim_fs_wake(struct sim_fs *fs);

/* Unlocks, then returns once the notifier has told the kernel of every change made so far.
 * Only for threads that are not FUSE workers (the control socket's): the notifier may have to
 * wait for a worker. */
void sim_fs_unlock_sync(struct sim_fs *fs);
