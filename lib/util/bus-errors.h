/* SPDX-License-Identifier: MIT */
/* The D-Bus names of amdsmid (ARCHITECTURE §2) and its one errno <-> error name table,
 * shared by amdsmid and its clients (amdsmi(1), the libvirt hook). */
#pragma once

#include <systemd/sd-bus.h>

#define AMDSMI_BUS_NAME "org.amdsmi1"
#define AMDSMI_BUS_PATH "/org/amdsmi1"
#define AMDSMI_BUS_GPU_PREFIX "/org/amdsmi1/gpu"
#define AMDSMI_BUS_IFACE_MANAGER "org.amdsmi1.Manager"
#define AMDSMI_BUS_IFACE_GPU "org.amdsmi1.Gpu"
#define AMDSMI_BUS_IFACE_PARTITION "org.amdsmi1.Partition"
#define AMDSMI_BUS_IFACE_POWER "org.amdsmi1.Power"
#define AMDSMI_BUS_IFACE_SRIOV "org.amdsmi1.Sriov"
#define AMDSMI_BUS_IFACE_HEALTH "org.amdsmi1.Health"
#define AMDSMI_BUS_IFACE_PERFORMANCE "org.amdsmi1.Performance"

#define AMDSMI_BUS_ERROR_BUSY "org.amdsmi1.Error.Busy"
#define AMDSMI_BUS_ERROR_NOT_SUPPORTED "org.amdsmi1.Error.NotSupported"
#define AMDSMI_BUS_ERROR_INVALID_ARGUMENT "org.amdsmi1.Error.InvalidArgument"
#define AMDSMI_BUS_ERROR_OUT_OF_RANGE "org.amdsmi1.Error.OutOfRange"
#define AMDSMI_BUS_ERROR_NOT_FOUND "org.amdsmi1.Error.NotFound"
#define AMDSMI_BUS_ERROR_PERMISSION_DENIED "org.amdsmi1.Error.PermissionDenied"
#define AMDSMI_BUS_ERROR_RELOAD_REQUIRED "org.amdsmi1.Error.ReloadRequired"
#define AMDSMI_BUS_ERROR_TIMEOUT "org.amdsmi1.Error.Timeout"
#define AMDSMI_BUS_ERROR_DEVICE_ERROR "org.amdsmi1.Error.DeviceError"
/* a record of the state file that the change needs cannot be read (EUCLEAN) */
#define AMDSMI_BUS_ERROR_STATE_DAMAGED "org.amdsmi1.Error.StateDamaged"

/* Method flags (ARCHITECTURE §6): bit 0 dry run; bit 1 force (what --force allows). */
#define AMDSMI_BUS_FLAG_DRY_RUN (UINT64_C(1) << 0)
#define AMDSMI_BUS_FLAG_FORCE (UINT64_C(1) << 1)
#define AMDSMI_BUS_FLAGS_ALL (AMDSMI_BUS_FLAG_DRY_RUN | AMDSMI_BUS_FLAG_FORCE)
/* org.amdsmi1.Sriov.SetNumVfs(): gim hosts: write gim's vf_num for its next load (sriov set
 * --persist); the sysfs path: sriov_drivers_autoprobe 0 first (sriov set --autoprobe-off). */
#define AMDSMI_BUS_FLAG_PERSIST (UINT64_C(1) << 8)
#define AMDSMI_BUS_FLAG_AUTOPROBE_OFF (UINT64_C(1) << 9)

/* The longest timeout a ...WithTimeout method takes (--timeout's limit: one hour); 0 means
 * the library's default. */
#define AMDSMI_BUS_TIMEOUT_MS_MAX (3600U * 1000)

/* errno -> name: the first entry with that errno; name -> errno: the first with that name. */
extern const sd_bus_error_map amdsmi_bus_errors[];

/* The error name of errno @r (sign ignored): the first entry of the table with it, or NULL
 * (sd-bus's own System.Error.* name applies then). */
const char *amdsmi_bus_error_name(int r);

/* Registers the table with sd-bus (once per process; idempotent). @return 0 or -errno. */
int amdsmi_bus_errors_register(void);

/* The object path of the GPU @bdf: AMDSMI_BUS_GPU_PREFIX/<sd_bus_path_encode(bdf)>. */
int amdsmi_bus_gpu_path(const char *bdf, char **ret);
