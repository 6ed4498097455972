/* SPDX-License-Identifier: MIT */
/*
 * The runtime directory shared by amdsmid, the CLI and the library: per-GPU change locks and
 * the record of pending memory-mode requests (both last until reboot, as /run does).
 */
#pragma once

#include <stddef.h>

/* $RUNTIME_DIRECTORY (its first entry when systemd lists several, ':'-separated), else
 * /run/amdsmi. Writes it into buf; -ENAMETOOLONG if it does not fit. */
int runtime_dir(char *buf, size_t size);

/* Makes the directory (and missing parents) with mode 0755; 0 if it exists. */
int runtime_dir_mkdir(const char *path);
