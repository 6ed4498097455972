/* SPDX-License-Identifier: MIT */
/* The health slice's parsers of kernel text and bytes, for its library code, its unit tests and
 * its fuzz targets. Not installed. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include <amdsmi/amdsmi.h>

/* health-ras.c */

/* One RAS count file (ras/aca_<block>, ras/<block>_err_count), its trailing newline removed:
 * "ue: N\nce: N[\nde: N]" (decimal; other "key: N" lines are ignored). Fills ue, ce and de
 * (AMDSMI_NA without a de line) of *ret. Returns 0, -EBUSY for "Query currently inaccessible",
 * -EBADMSG for anything else (an empty file, a line without a number, ue or ce missing, a key
 * given twice). *ret is untouched on failure. */
int ras_count_parse(const char *text, struct amdsmi_ras_count *ret);
/* ras/features: "feature mask: 0x%x". Returns 0 or -EBADMSG. */
int ras_features_parse(const char *text, uint32_t *ret_mask);
/* ras/gpu_vram_bad_pages: records of exactly 28 bytes, "0x%08x : 0x%08x : %c\n". Returns the
 * record count (the array in *ret_pages, NULL for none), -EBADMSG (the first bad record's index
 * in *ret_bad, which may be NULL) or -ENOMEM. */
int bad_pages_parse(const char *buf, size_t size, struct amdsmi_bad_page **ret_pages,
                    size_t *ret_bad);
#define BAD_PAGE_RECORD_SIZE 28

/* The GPU's debugfs directory + "/" + file, relative to the sysfs root:
 * kernel/debug/dri/<PCI address> (kernels that name it by device, with dri/<minor> a link to it)
 * or else kernel/debug/dri/<card minor>. Returns 0, -EACCES (debugfs is root-only), -ENODATA
 * (neither exists: no debugfs, no DRM card), -ENAMETOOLONG. */
int health_debugfs_path(struct amdsmi_gpu *gpu, const char *file, char *buf, size_t size);

/* health-events.c */

/* A subscription on an fd already set up (owned from now on, also on failure): the reader's
 * part of amdsmi_partition_open_events(), also used by the unit tests on a pipe. */
int events_new_from_fd(int fd, uint32_t kfd_gpu_id, int partition, struct amdsmi_events **ret);
