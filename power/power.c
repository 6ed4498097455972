/* SPDX-License-Identifier: MIT */
/*
 * Power caps (spec amdgpu-sysfs §4.2, §4.3, §7.2, §7.3; virtualization §1.5, §5): reading the
 * PPT0/PPT1 limits and the draw, deciding where a cap can be applied, and applying one with a
 * single write and a single read-back.
 *
 * hwmon power*_cap* read "\n" when the SMU query fails (-ENOMSG here); pm reads fail with
 * EBUSY during a reset and EPERM while the device is runtime-suspended (both -EBUSY). Writes
 * take µW (kstrtou32), the driver keeps whole watts, checks [cap_min, cap_max] in watts
 * (EINVAL) and treats 0 as "re-apply the current limit". A one-VF guest's power1_cap is 0444
 * unless the host granted power-limit control (open fails with EACCES); multi-VF guests and
 * gim hosts have no hwmon at all.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "private.h"
#include "sysfs.h"

#define UW_PER_W UINT64_C(1000000)
#define WRITE_MAX_UW UINT64_C(4294967295) /* kstrtou32 */

static const char *const control_names[_AMDSMI_POWER_CONTROL_MAX] = {
        [AMDSMI_POWER_CONTROL_UNKNOWN] = "unknown",
        [AMDSMI_POWER_CONTROL_HWMON] = "hwmon",
        [AMDSMI_POWER_CONTROL_VF] = "vf",
        [AMDSMI_POWER_CONTROL_VF_READ_ONLY] = "vf-read-only",
        [AMDSMI_POWER_CONTROL_MULTI_VF] = "multi-vf",
        [AMDSMI_POWER_CONTROL_GIM] = "gim",
        [AMDSMI_POWER_CONTROL_NO_HWMON] = "no-hwmon",
        [AMDSMI_POWER_CONTROL_READ_ONLY] = "read-only",
};

_public_ const char *amdsmi_power_control_to_string(enum amdsmi_power_control c) {
        if ((unsigned) c >= _AMDSMI_POWER_CONTROL_MAX)
                return "unknown";
        return control_names[c];
}

_public_ const char *amdsmi_power_control_explain(enum amdsmi_power_control c) {
        switch (c) {
        case AMDSMI_POWER_CONTROL_HWMON:
        case AMDSMI_POWER_CONTROL_VF:
                return NULL;
        case AMDSMI_POWER_CONTROL_VF_READ_ONLY:
                return "this one-VF guest may not set its power cap: the host has not granted "
                       "power-limit control to the VF (power1_cap is read-only); the host's "
                       "administrator sets the VM's cap";
        case AMDSMI_POWER_CONTROL_MULTI_VF:
                return "a multi-VF guest has no power controls (the driver hides hwmon when "
                       "several VFs share the GPU); the host applies one cap for all VMs on it";
        case AMDSMI_POWER_CONTROL_GIM:
                return "gim hosts have no sysfs power path (only gim's own SMI ioctl sets the "
                       "cap); amdsmi records and explains the sources but cannot apply them";
        case AMDSMI_POWER_CONTROL_NO_HWMON:
                return "the GPU has no amdgpu hwmon directory (driver not bound, power "
                       "management disabled, or a VF seen from the host)";
        case AMDSMI_POWER_CONTROL_READ_ONLY:
                return "power1_cap is read-only on this GPU";
        default:
                return "where the power cap can be applied is unknown";
        }
}

static void hwmon_file(struct amdsmi_gpu *gpu, const char *attr, char *buf, size_t size) {
        snprintf(buf, size, "%s/%s", gpu->hwmon_path, attr);
}

/* pm files: EPERM means runtime-suspended, not a permission problem. */
static int pm_errno(int r) {
        return r == -EPERM ? -EBUSY : r;
}

static void read_value(struct amdsmi_gpu *gpu, const char *attr, struct amdsmi_power_value *v) {
        char path[320];
        uint64_t uw;
        int r;

        hwmon_file(gpu, attr, path, sizeof(path));
        r = sysfs_read_u64(gpu->ctx, path, 10, &uw);
        if (r == -ENOENT)
                r = -ENODATA;
        if (r < 0) {
                r = pm_errno(r);
                if (r != -ENODATA)
                        log_warning(gpu->ctx, "%s/%s: %s", gpu->ctx->sysfs_root, path,
                                    r == -ENOMSG    ? "empty value (SMU query failed)"
                                    : r == -EBADMSG ? "not a number"
                                                    : strerror(-r));
                *v = (struct amdsmi_power_value){ .uw = AMDSMI_NA, .error = r };
                return;
        }
        *v = (struct amdsmi_power_value){ .uw = uw, .error = 0 };
}

static void read_limit(struct amdsmi_gpu *gpu, const char *prefix, struct amdsmi_power_limit *l) {
        static const char *const suffix[] = { "", "_min", "_max", "_default" };
        struct amdsmi_power_value *v[] = { &l->cap, &l->min, &l->max, &l->def };
        char attr[32];

        for (size_t i = 0; i < ELEMENTSOF(suffix); i++) {
                snprintf(attr, sizeof(attr), "%s%s", prefix, suffix[i]);
                read_value(gpu, attr, v[i]);
        }
}

static enum amdsmi_power_control probe_control(struct amdsmi_gpu *gpu) {
        enum amdsmi_role role = amdsmi_gpu_get_role(gpu);
        char path[320];
        int r;

        if (gpu->driver == AMDSMI_DRIVER_GIM)
                return AMDSMI_POWER_CONTROL_GIM;
        if (role == AMDSMI_ROLE_VF_GUEST_MULTI)
                return AMDSMI_POWER_CONTROL_MULTI_VF;
        if (!gpu->hwmon_path)
                return AMDSMI_POWER_CONTROL_NO_HWMON;
        hwmon_file(gpu, "power1_cap", path, sizeof(path));
        r = sysfs_is_writable(gpu->ctx, path);
        if (r == -ENOENT)
                return AMDSMI_POWER_CONTROL_NO_HWMON;
        if (role == AMDSMI_ROLE_VF_GUEST_1VF)
                return r > 0 ? AMDSMI_POWER_CONTROL_VF : AMDSMI_POWER_CONTROL_VF_READ_ONLY;
        if (r < 0)
                return AMDSMI_POWER_CONTROL_UNKNOWN;
        return r > 0 ? AMDSMI_POWER_CONTROL_HWMON : AMDSMI_POWER_CONTROL_READ_ONLY;
}

static uint64_t floor_of(uint64_t cap_min_uw) {
        if (cap_min_uw == AMDSMI_NA)
                return AMDSMI_NA;
        return cap_min_uw > UW_PER_W ? cap_min_uw : UW_PER_W;
}

static uint64_t ceiling_of(uint64_t cap_max_uw) {
        if (cap_max_uw == AMDSMI_NA)
                return AMDSMI_NA;
        return cap_max_uw < WRITE_MAX_UW ? cap_max_uw : WRITE_MAX_UW;
}

static void remember_range(struct amdsmi_gpu *gpu, const struct amdsmi_power_limit *l) {
        /* Only a complete range is remembered: a failed read is tried again next time. */
        if (l->min.error < 0 || l->max.error < 0)
                return;
        gpu->power_cap_min_uw = l->min.uw;
        gpu->power_cap_max_uw = l->max.uw;
        gpu->power_range_loaded = true;
}

_public_ int amdsmi_gpu_read_power(struct amdsmi_gpu *gpu, uint64_t flags,
                                   struct amdsmi_power_info *ret_info) {
        struct amdsmi_power_info info = { .size = sizeof(info) };
        static const struct amdsmi_power_value absent = { .uw = AMDSMI_NA, .error = -ENODATA };

        if (ret_info->size < sizeof(info))
                return -EINVAL;

        info.control = probe_control(gpu);
        info.draw = info.socket_power = absent;
        info.ppt0 = info.ppt1 = (struct amdsmi_power_limit){ absent, absent, absent, absent };
        info.floor_uw = info.ceiling_uw = AMDSMI_NA;

        if (gpu->hwmon_path) {
                read_value(gpu, "power1_input", &info.draw);
                read_limit(gpu, "power1_cap", &info.ppt0);
                /* PPT1 only where the firmware has it: power2_cap decides */
                read_value(gpu, "power2_cap", &info.ppt1.cap);
                info.ppt1_present = info.ppt1.cap.error != -ENODATA;
                if (info.ppt1_present) {
                        read_value(gpu, "power2_cap_min", &info.ppt1.min);
                        read_value(gpu, "power2_cap_max", &info.ppt1.max);
                        read_value(gpu, "power2_cap_default", &info.ppt1.def);
                }
                remember_range(gpu, &info.ppt0);
                if (info.ppt0.min.error == 0)
                        info.floor_uw = floor_of(info.ppt0.min.uw);
                if (info.ppt0.max.error == 0)
                        info.ceiling_uw = ceiling_of(info.ppt0.max.uw);
        }

        if (!(flags & AMDSMI_POWER_READ_NO_METRICS) && info.control != AMDSMI_POWER_CONTROL_GIM &&
            info.control != AMDSMI_POWER_CONTROL_MULTI_VF) {
                struct amdsmi_gpu_metrics m;
                int r = amdsmi_gpu_read_metrics(gpu, &m);

                if (r < 0)
                        info.socket_power = (struct amdsmi_power_value){ AMDSMI_NA, r };
                else if (m.socket_power_uw != AMDSMI_NA)
                        info.socket_power = (struct amdsmi_power_value){ m.socket_power_uw, 0 };
        }

        *ret_info = info;
        return 0;
}

/* The range for validation: remembered, or read now (two reads, once per driver instance). */
static void load_range(struct amdsmi_gpu *gpu, uint64_t *ret_floor, uint64_t *ret_ceiling) {
        if (!gpu->power_range_loaded) {
                struct amdsmi_power_limit l;

                read_value(gpu, "power1_cap_min", &l.min);
                read_value(gpu, "power1_cap_max", &l.max);
                remember_range(gpu, &l);
        }
        if (gpu->power_range_loaded) {
                *ret_floor = floor_of(gpu->power_cap_min_uw);
                *ret_ceiling = ceiling_of(gpu->power_cap_max_uw);
        } else {
                *ret_floor = UW_PER_W;
                *ret_ceiling = AMDSMI_NA;
        }
}

_public_ int amdsmi_gpu_set_power_cap(struct amdsmi_gpu *gpu, uint64_t uw, uint64_t flags,
                                      struct amdsmi_power_cap_result *ret_result) {
        struct amdsmi_power_cap_result res = {
                .size = sizeof(res),
                .requested_uw = uw,
                .applied_uw = uw / UW_PER_W * UW_PER_W,
                .truncated = uw % UW_PER_W != 0,
                .floor_uw = AMDSMI_NA,
                .ceiling_uw = AMDSMI_NA,
                .readback_uw = AMDSMI_NA,
        };
        enum amdsmi_power_control control;
        char path[320], value[32];
        uint64_t back;
        int r;

        if (ret_result && ret_result->size < sizeof(res))
                return -EINVAL;
        if (uw < UW_PER_W)
                return -EINVAL; /* 0 would re-apply the current limit, not set one */
        if (uw > WRITE_MAX_UW)
                return -ERANGE;

        control = probe_control(gpu);
        if (control != AMDSMI_POWER_CONTROL_HWMON && control != AMDSMI_POWER_CONTROL_VF) {
                log_debug(gpu->ctx, "%s: cannot apply a power cap: %s", gpu->bdf,
                          amdsmi_power_control_explain(control));
                return -EOPNOTSUPP;
        }

        load_range(gpu, &res.floor_uw, &res.ceiling_uw);
        if (ret_result)
                *ret_result = res;
        if (uw < res.floor_uw || (res.ceiling_uw != AMDSMI_NA && uw > res.ceiling_uw))
                return -ERANGE;
        if (flags & AMDSMI_POWER_SET_DRY_RUN)
                return 0;

        hwmon_file(gpu, "power1_cap", path, sizeof(path));
        snprintf(value, sizeof(value), "%" PRIu64, uw);
        r = sysfs_write_string(gpu->ctx, path, value);
        if (r < 0) {
                res.write_error = r;
                if (ret_result)
                        *ret_result = res;
                if (r == -EACCES) /* the write bit went away (a guest lost the grant) */
                        return -EOPNOTSUPP;
                if (r == -ENOENT)
                        return -ENODEV;
                if (r == -EINVAL) /* the kernel's range check, or the firmware refused it */
                        return -ERANGE;
                log_warning(gpu->ctx, "%s/%s: writing %s: %s", gpu->ctx->sysfs_root, path, value,
                            strerror(-r));
                return pm_errno(r);
        }
        res.written = true;

        r = sysfs_read_u64(gpu->ctx, path, 10, &back);
        if (r < 0) {
                if (ret_result)
                        *ret_result = res;
                r = pm_errno(r);
                log_warning(gpu->ctx, "%s/%s: reading back: %s", gpu->ctx->sysfs_root, path,
                            r == -ENOMSG ? "empty value (SMU query failed)" : strerror(-r));
                return r == -ENOENT ? -ENODEV : r == -ENOMSG || r == -EBADMSG ? -EIO : r;
        }
        res.readback_uw = back;
        res.limited = back / UW_PER_W < res.applied_uw / UW_PER_W;
        if (ret_result)
                *ret_result = res;
        if (!res.limited && back / UW_PER_W != res.applied_uw / UW_PER_W) {
                log_warning(gpu->ctx, "%s/%s: wrote %s but reads back %" PRIu64,
                            gpu->ctx->sysfs_root, path, value, back);
                return -EIO;
        }
        return 0;
}
