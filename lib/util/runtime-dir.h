/* SPDX-License-Identifier: MIT */
/*
 * The runtime directory shared by amdsmid, the CLI and the library: per-GPU change locks and
 * the record of pending memory-mode requests (both last until reboot, as /run does). And the
 * state directory: the state file, the history of changes and the intent records.
 */
#pragma once

#include <stddef.h>

/* $RUNTIME_DIRECTORY (its first entry when systemd lists several, ':'-separated), else
 * /run/amdsmi. Writes it into buf; -ENAMETOOLONG if it does not fit. */
int runtime_dir(char *buf, size_t size);

/* amdsmid's PID in the runtime directory while it owns org.amdsmi1: amdsmi(1) learns from it
 * whether amdsmid may run without connecting to the bus (and loading libsystemd). */
#define AMDSMID_PID_FILE "amdsmid.pid"

/* $STATE_DIRECTORY (its first entry when systemd lists several), else LOCALSTATEDIR
 * "/lib/amdsmi". Writes it into buf; -ENAMETOOLONG if it does not fit. */
int state_dir(char *buf, size_t size);

/* Makes the directory (and missing parents) with mode 0755 through safe_mkdir(): 0 if it
 * exists as a directory of the effective uid or root; -ENOTDIR, -ELOOP, -EPERM (another
 * owner) otherwise. */
int runtime_dir_mkdir(const char *path);

/* Replaces @path with @len bytes of @data, atomically (a temporary file in the same
 * directory, fchmod @mode whatever the umask, rename): readers see the old file or the new
 * one, never a part. The temporary file is made O_EXCL, and rename() replaces whatever is at
 * @path (a symbolic link or a FIFO is replaced, never followed nor opened; a directory fails
 * with -EISDIR). @return 0 or a negative errno (nothing left behind). */
int write_file_atomic(const char *path, const char *data, size_t len, unsigned mode);

/* Replaces @name in the directory @dfd with @len bytes of @data, durably and atomically, for
 * readers that skip hidden files (node_exporter reads *.prom, Node Feature Discovery skips
 * dot files): a hidden temporary file ".NAME.XXXXXX" made O_EXCL|O_NOFOLLOW, fchmod @mode
 * whatever the umask, fsync, renameat over @name. @return 0 or a negative errno (nothing
 * left behind); @ret_tmp (NULL, or 256 bytes) names the temporary file when creating it
 * failed. */
int write_file_atomic_at(int dfd, const char *name, const char *data, size_t len, unsigned mode,
                         char *ret_tmp);
