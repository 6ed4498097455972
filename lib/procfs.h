/* SPDX-License-Identifier: MIT */
/*
 * The library's only access to /proc (not sysfs, so not lib/sysfs.c): the names of the
 * processes that use a GPU. Paths are the running system's /proc, whatever the sysfs root: the
 * PIDs KFD names are processes of this machine.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct amdsmi_ctx;

/* Reads /proc/PID/comm into buf (NUL-terminated, the newline removed, cut to size - 1).
 * -ENOENT/-ESRCH when the process is gone, or another negative errno. */
int procfs_read_comm(struct amdsmi_ctx *ctx, pid_t pid, char *buf, size_t size);

/* A process holding one of the files procfs_find_fd_users() looks for. */
struct procfs_fd_user {
        pid_t pid;
        size_t target; /* index into the targets */
};

/* Scans /proc/PID/fd of every process for descriptors whose link target is one of
 * @targets (absolute paths, compared whole, as the kernel prints them: resolved, so pass
 * canonical paths). Each (process, target) pair is listed once, in /proc order, in a new
 * array (*ret_users, NULL when none; free()). *ret_denied counts the processes whose fd
 * directory could not be read (EACCES/EPERM: another user's, without privilege): with some,
 * the answer may be incomplete. Processes that exit during the scan are skipped.
 * @return 0, or a negative errno when /proc itself cannot be read. */
int procfs_find_fd_users(struct amdsmi_ctx *ctx, const char *const *targets, size_t n_targets,
                         struct procfs_fd_user **ret_users, size_t *ret_n,
                         unsigned *ret_denied);

/* What /proc says of a process using a GPU. */
struct procfs_process {
        uint32_t uid;     /* owner of /proc/PID, UINT32_MAX unknown */
        char comm[64];    /* raw (any byte but NUL), "" unknown */
        char cgroup[512]; /* the cgroup v2 path, "" unknown or too long */
};

/* Reads the owner, comm and cgroup of @pid. -ESRCH (or -ENOENT) when the process is gone or
 * hidden from this reader, another negative errno when /proc/PID cannot be opened; a comm or
 * cgroup that cannot be read is left empty. */
int procfs_read_process(struct amdsmi_ctx *ctx, pid_t pid, struct procfs_process *ret);

/* Whether no process @pid exists (kill(pid, 0) says ESRCH): a KFD entry whose /proc entry
 * cannot be read is of a process that exited, or hidden from this reader (hidepid). */
bool procfs_process_gone(pid_t pid);

/* Unit tests: read ROOT instead of /proc (NULL: /proc again). */
void procfs_set_root(const char *root);
