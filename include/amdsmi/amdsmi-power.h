/* SPDX-License-Identifier: MIT */
/**
 * @file amdsmi-power.h
 * Power caps: the PPT0 limit (hwmon power1_cap) that amdsmi applies, the PPT1 limit
 * (power2_cap, shown only), the draw, and where a cap can be applied at all.
 *
 * Arbitration between the Host, VM and APML sources is policy and lives above the library
 * (amdsmid, and the CLI when it changes things in-process); the library reads the device and
 * applies one value. All values are microwatts; the kernel keeps whole watts.
 */
#pragma once

#if !defined(__AMDSMI_H_INSIDE__)
#error "Only <amdsmi/amdsmi.h> can be included directly."
#endif

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct amdsmi_gpu;

/**
 * Where (and whether) this GPU's power cap can be applied through sysfs.
 */
enum amdsmi_power_control {
        AMDSMI_POWER_CONTROL_UNKNOWN = 0,
        AMDSMI_POWER_CONTROL_HWMON,        /**< "hwmon": power1_cap is writable (bare metal) */
        AMDSMI_POWER_CONTROL_VF,           /**< "vf": a one-VF guest whose host granted
                                                power-limit control (power1_cap writable) */
        AMDSMI_POWER_CONTROL_VF_READ_ONLY, /**< "vf-read-only": a one-VF guest; the host did
                                                not grant control (power1_cap 0444) */
        AMDSMI_POWER_CONTROL_MULTI_VF,     /**< "multi-vf": a multi-VF guest has no hwmon */
        AMDSMI_POWER_CONTROL_GIM,          /**< "gim": a gim host has no sysfs power path */
        AMDSMI_POWER_CONTROL_NO_HWMON,     /**< "no-hwmon": no amdgpu hwmon (driver not bound,
                                                DPM off, a VF seen on the host) */
        AMDSMI_POWER_CONTROL_READ_ONLY,    /**< "read-only": power1_cap without a write bit */
        _AMDSMI_POWER_CONTROL_MAX,
};

/** "hwmon", "vf", ...; "unknown" for out-of-range values. @since 0.1 */
const char *amdsmi_power_control_to_string(enum amdsmi_power_control c);

/**
 * Why a cap cannot be applied under @p c, as one sentence for an operator; NULL for the
 * controls that can apply one (hwmon, vf). @since 0.1
 */
const char *amdsmi_power_control_explain(enum amdsmi_power_control c);

/** One power value (µW). @c error is 0 when @c uw is valid, -ENODATA when not provided, else
 * the negative errno of the read (-ENOMSG: empty value, the SMU query failed). */
struct amdsmi_power_value {
        uint64_t uw;
        int error;
};

/** One power limit and its range. */
struct amdsmi_power_limit {
        struct amdsmi_power_value cap, min, max, def;
};

/** What amdsmi_gpu_read_power() fills. Set @c size to sizeof(struct amdsmi_power_info). */
struct amdsmi_power_info {
        size_t size;
        enum amdsmi_power_control control;
        struct amdsmi_power_value draw;          /**< power1_input */
        struct amdsmi_power_value socket_power;  /**< gpu_metrics current_socket_power
                                                      (-ENODATA with AMDSMI_POWER_READ_NO_METRICS) */
        struct amdsmi_power_limit ppt0;          /**< power1_cap, _min, _max, _default */
        bool ppt1_present;                       /**< power2_cap exists */
        struct amdsmi_power_limit ppt1;          /**< power2_* (shown, never arbitrated) */
        uint64_t floor_uw;   /**< the lowest cap accepted: max(cap_min, 1 W); AMDSMI_NA */
        uint64_t ceiling_uw; /**< the highest: min(cap_max, 4294.967295 W); AMDSMI_NA */
};

#define AMDSMI_POWER_READ_NO_METRICS (UINT64_C(1) << 0) /**< skip gpu_metrics (~1 ms of SMU) */

/**
 * Reads the GPU's power state: the PPT0 cap and its range, PPT1 where present, the draw and
 * (unless AMDSMI_POWER_READ_NO_METRICS) the socket power from gpu_metrics, and the control.
 * Per-value failures are in the values; the range is remembered for
 * amdsmi_gpu_set_power_cap() (it does not change while the driver is loaded).
 * @return 0 (per-value failures are in the values), or -EINVAL (@c size too small).
 * @since 0.1
 */
int amdsmi_gpu_read_power(struct amdsmi_gpu *gpu, uint64_t flags,
                          struct amdsmi_power_info *ret_info) AMDSMI_NONNULL(1, 3);

/** Flags of amdsmi_gpu_set_power_cap(). AMDSMI_CHANGE_DRY_RUN (bit 0) validates only. */
#define AMDSMI_POWER_SET_DRY_RUN (UINT64_C(1) << 0)

/** The outcome of amdsmi_gpu_set_power_cap(). Set @c size to sizeof(the struct). */
struct amdsmi_power_cap_result {
        size_t size;
        uint64_t requested_uw; /**< the value asked for */
        uint64_t applied_uw;   /**< what the kernel keeps: whole watts (truncated) */
        bool truncated;        /**< requested_uw was not a whole number of watts */
        uint64_t floor_uw;     /**< the range the value was checked against (AMDSMI_NA: the */
        uint64_t ceiling_uw;   /**< range was unknown and the kernel checks it) */
        bool written;          /**< power1_cap was written (not in a dry run) */
        uint64_t readback_uw;  /**< power1_cap after the write, AMDSMI_NA if unread */
        bool limited;          /**< the read-back is lower: an external limiter (the BMC's
                                    platform limit, ...) holds the device below it */
        int write_error;       /**< the kernel's errno of the write, as returned, or 0 */
};

/**
 * Applies a PPT0 cap: validates @p uw (below 1 W: -EINVAL, since 0 makes the kernel re-apply
 * the current limit; outside [max(cap_min, 1 W), cap_max] or above 4294.967295 W: -ERANGE),
 * writes power1_cap once and reads it back once (the range comes from the last
 * amdsmi_gpu_read_power(), or is read here first). A read-back lower than the applied value is
 * an external limiter (@c limited), not an error; a read-back that is not lower and not the
 * applied value means the write did not take: -EIO.
 *
 * Not applicable (-EOPNOTSUPP; amdsmi_power_control_explain() says why): gim hosts, multi-VF
 * guests, one-VF guests without the host's grant, GPUs without hwmon.
 * Other errors: -EBUSY (reset in progress or device suspended: the kernel's EBUSY or EPERM),
 * -EIO / -ETIME (the firmware failed), -ERANGE also when the kernel refused the value
 * (EINVAL: outside the range it enforces, or the firmware refused it; @c write_error says
 * so), -ENODEV (the GPU went away).
 * @p ret_result (may be NULL) is filled also on failure, once validation passed.
 * @since 0.1
 */
int amdsmi_gpu_set_power_cap(struct amdsmi_gpu *gpu, uint64_t uw, uint64_t flags,
                             struct amdsmi_power_cap_result *ret_result) AMDSMI_NONNULL(1);

#ifdef __cplusplus
}
#endif
