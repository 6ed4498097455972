/* SPDX-License-Identifier: MIT */
/* Shared by the SR-IOV slice's library files (sriov.c, sriov-set.c, sriov-bind.c). */
#pragma once

#include "private.h"

/* Reads one VF (bus/pci/devices/<bdf>): driver, driver_override, IOMMU group, whether VFIO
 * can take the group, and the processes holding /dev/vfio/<group> (when the context has a
 * device root). @index is stored as is. @return 0, -ENODEV (no such device), or a negative
 * errno. */
int sriov_read_vf(struct amdsmi_ctx *ctx, const char *bdf, unsigned index,
                  struct amdsmi_vf_info *ret);

/* The driver a VF had before amdsmi bound it to vfio-pci, remembered in
 * <runtime dir>/sriov/<bdf> ("" for none). sriov_remember_driver() writes it atomically,
 * sriov_recall_driver() reads it (-ENOENT when nothing is remembered), sriov_forget_driver()
 * removes it. */
int sriov_remember_driver(const char *bdf, const char *driver);
int sriov_recall_driver(const char *bdf, char *buf, size_t size);
/* The message for @r, an error of sriov_recall_driver(): the file named with what is there when
 * it is not a regular file (safe-open.h), else strerror(). @return @buf. */
const char *sriov_recall_error(const char *bdf, int r, char *buf, size_t size);
int sriov_forget_driver(const char *bdf);
