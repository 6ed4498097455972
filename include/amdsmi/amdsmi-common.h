/* SPDX-License-Identifier: MIT */
#pragma once

#if !defined(__AMDSMI_H_INSIDE__)
#error "Only <amdsmi/amdsmi.h> can be included directly."
#endif

#include <errno.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define AMDSMI_WARN_UNUSED __attribute__((warn_unused_result))
#define AMDSMI_NONNULL(...) __attribute__((nonnull(__VA_ARGS__)))
#else
#define AMDSMI_WARN_UNUSED
#define AMDSMI_NONNULL(...)
#endif

/**
 * The (positive) errno value that stands for "accepted, takes effect only after a driver
 * reload" (a memory partition change). Functions return its negation.
 */
#define AMDSMI_ERELOAD_REQUIRED ERESTART

/** Value of a numeric field that the hardware or driver does not provide. */
#define AMDSMI_NA UINT64_MAX

/**
 * Log priorities, the same numbers as syslog(3).
 */
enum amdsmi_log_priority {
        AMDSMI_LOG_ERR = 3,
        AMDSMI_LOG_WARNING = 4,
        AMDSMI_LOG_INFO = 6,
        AMDSMI_LOG_DEBUG = 7,
};

/**
 * Returns the library version, e.g. "0.1.0".
 * @since 0.1
 */
const char *amdsmi_version(void);

#ifdef __cplusplus
}
#endif
