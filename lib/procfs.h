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
                         struct procfs_fd_user **ret_users, size_t *ret_n, unsigned *ret_denied);

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

/* ---- host facts (amdsmi doctor) -------------------------------------------------------- */

/* Reads a whole small file of /proc (@name: "cmdline", "modules", "interrupts") into a new
 * NUL-terminated buffer (*ret, free()); at most @max bytes (-EFBIG beyond). @return the length,
 * or a negative errno. */
ssize_t procfs_read_file(struct amdsmi_ctx *ctx, const char *name, size_t max, char **ret);

/* /proc/cmdline without its newline (*ret, free()). @return 0 or a negative errno. */
int procfs_read_cmdline(struct amdsmi_ctx *ctx, char **ret);

/* Whether /proc/modules' @text (@len bytes, not NUL-terminated) lists @module (its name as
 * the kernel writes it: '-' and '_' are the same, "vfio-pci" matches "vfio_pci"). Pure.
 * @return 1 listed, 0 not. */
int procfs_modules_has(const char *text, size_t len, const char *module);

/* 1 if @module is loaded (/proc/modules), 0 if not, or a negative errno. */
int procfs_module_loaded(struct amdsmi_ctx *ctx, const char *module);

/* What /proc/interrupts' @text says of interrupt remapping (pure): the MSI chips of its lines
 * ("IR-PCI-MSI", "IR-IO-APIC" with remapping; "PCI-MSI", "IO-APIC" without). @return 1 (a
 * line names an IR- chip), 0 (PCI MSI or IO-APIC lines, none remapped), -ENODATA (no such
 * line: cannot tell). *ret_remapped and *ret_plain (may be NULL) count the lines of each. */
int procfs_interrupts_remapping(const char *text, size_t len, unsigned *ret_remapped,
                                unsigned *ret_plain);

/* procfs_interrupts_remapping() of /proc/interrupts, or a negative errno reading it. */
int procfs_interrupt_remapping(struct amdsmi_ctx *ctx, unsigned *ret_remapped, unsigned *ret_plain);
