/* SPDX-License-Identifier: MIT */
/*
 * Decoders of raw values into the forms amdsmi's documents and tables show them in, one of
 * each, for every verb and both front ends: XGMI link states, gfx target names, firmware
 * versions. Pure: libc only.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

/*
 * A gpu_metrics xgmi_link_status value as a word: 0 "down", 1 "up", 2 "n/a" (the kernel's
 * "not available"); a slot the table leaves unset (all ones, the library's AMDSMI_NA) is
 * "n/a" too. @return NULL for any other value (unknown: shown as null).
 */
const char *xgmi_link_status_to_string(uint64_t status);

/*
 * A KFD gfx_target_version (major * 10000 + minor * 100 + stepping) as its LLVM target name:
 * 90402 "gfx942", 90500 "gfx950", 90010 "gfx90a" (minor and stepping are hex digits).
 * @return 0, -EINVAL for 0 or a minor or stepping above 15, -ENOBUFS if @len is too small
 * (16 bytes always suffice).
 */
int format_gfx_target(uint64_t version, char *buf, size_t len);

/*
 * A firmware version as the table shows it: "0x%x" ("0x557300"). @return 0 or -ENOBUFS
 * (24 bytes always suffice).
 */
int format_firmware_hex(uint64_t version, char *buf, size_t len);

/*
 * A firmware version in its decoded dotted form where the format of that firmware (@name, as
 * in fw_version/<name>_fw_version) is known, as the kernel decodes it:
 *   smc (PMFW)  program.major.minor.debug bytes: 0x00557300 "85.115.0"; the program byte,
 *               when not 0, leads: 0x05557300 "5.85.115.0"
 * @return 0, -EOPNOTSUPP for a firmware whose format is not known (no dotted form),
 * -EINVAL for a version out of the format's range, -ENOBUFS if @len is too small (24 bytes
 * always suffice).
 */
int format_firmware_dotted(const char *name, uint64_t version, char *buf, size_t len);

/*
 * A 64-bit unique ID (the sysfs unique_id "%016llx", KFD's unique_id) in the one spelling the
 * documents use for 64-bit identifiers: "0x" and 16 lower-case hex digits. @s may carry a
 * "0x" prefix and upper-case digits. @return 0, -EINVAL if @s is no hex number of at most 64
 * bits, -ENOBUFS if @len is too small (19 bytes always suffice).
 */
int format_unique_id(const char *s, char *buf, size_t len);
