/* SPDX-License-Identifier: MIT */
/**
 * @file amdsmi-sriov.h
 * SR-IOV: a PF's virtual functions (the PCI core's sriov_* files and virtfnN links), setting
 * the VF count, and handing a VF to vfio-pci for a VM (driver_override, unbind, drivers_probe)
 * and back. VFs are GPUs of the context too (role AMDSMI_ROLE_VF).
 *
 * On MI300-class hosts gim owns VF creation: writes of sriov_numvfs fail with ENOENT under gim
 * (and under upstream amdgpu, which has no sriov_configure); the count is gim's vf_num module
 * parameter, and amdsmi_gpu_set_num_vfs() says so (-EOPNOTSUPP, with the explanation in the
 * report) instead of returning a bare ENOENT.
 */
#pragma once

#if !defined(__AMDSMI_H_INSIDE__)
#error "Only <amdsmi/amdsmi.h> can be included directly."
#endif

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

struct amdsmi_gpu;

/** The most VFs one PF reports (virtfn0..virtfn63). */
#define AMDSMI_SRIOV_MAX_VFS 64
/** The most processes reported as holding one VF's VFIO group. */
#define AMDSMI_SRIOV_MAX_USERS 8

/** How a PF's VF count is set. */
enum amdsmi_vf_config {
        AMDSMI_VF_CONFIG_UNKNOWN = 0,
        AMDSMI_VF_CONFIG_SYSFS,     /**< "sysfs": the PF driver implements sriov_configure
                                         (vfio-pci, or amdgpu where the kernel has it) */
        AMDSMI_VF_CONFIG_GIM_PARAM, /**< "gim-param": gim's vf_num module parameter */
        AMDSMI_VF_CONFIG_NO_DRIVER, /**< "no-driver": no PF driver is bound (ENOENT) */
        AMDSMI_VF_CONFIG_NONE,      /**< "none": not SR-IOV capable (no sriov_totalvfs) */
        _AMDSMI_VF_CONFIG_MAX,
};

/** "sysfs", "gim-param", ...; "unknown" for out-of-range values. @since 0.1 */
const char *amdsmi_vf_config_to_string(enum amdsmi_vf_config c);

/** A process holding a VF's /dev/vfio/<group>. */
struct amdsmi_vfio_user {
        pid_t pid;
        char comm[32]; /**< /proc/PID/comm, "" if gone */
};

/** One VF of a PF. */
struct amdsmi_vf_info {
        char bdf[16];
        unsigned index;            /**< N of the PF's virtfnN */
        char driver[32];           /**< bound driver ("vfio-pci"), "" when none */
        char driver_override[32];  /**< "" when none */
        int iommu_group;           /**< -1 when the VF has none (no IOMMU) */
        bool vfio_viable;          /**< every device of the group is bound to vfio-pci,
                                        pci-stub or no driver (VFIO can take the group);
                                        false without a group */
        int in_use;                /**< 1: a process holds vfio/<group> below the context's
                                        device root; 0: none does, or there is no such node;
                                        -ENODATA: the context has no device root (not looked
                                        at); -EACCES: none found, but the fd directories of
                                        some processes could not be read (not root); else the
                                        errno of the /proc scan */
        unsigned n_users;          /**< may exceed AMDSMI_SRIOV_MAX_USERS */
        struct amdsmi_vfio_user users[AMDSMI_SRIOV_MAX_USERS];
};

/** What amdsmi_gpu_read_sriov() fills. Set @c size to sizeof(struct amdsmi_sriov_info). */
struct amdsmi_sriov_info {
        size_t size;
        bool capable;             /**< the PF has the SR-IOV capability (sriov_totalvfs) */
        unsigned total_vfs;       /**< sriov_totalvfs */
        unsigned num_vfs;         /**< sriov_numvfs */
        unsigned offset, stride;  /**< sriov_offset, sriov_stride */
        uint16_t vf_device;       /**< sriov_vf_device (PCI device ID of the VFs) */
        int drivers_autoprobe;    /**< sriov_drivers_autoprobe: 1, 0, or -1 unknown */
        char pf_driver[32];       /**< the PF's driver, "" when none */
        enum amdsmi_vf_config config;
        int gim_vf_num;           /**< gim's vf_num for this PF as gim was loaded: the entry
                                       at the PF's place in PCI address order among the GPUs
                                       gim drives (enabled_devices filters, it does not
                                       order), the last entry for the later ones; -1 when not
                                       under gim or not known */
        unsigned n_vfs;           /**< VFs listed (virtfnN links), at most AMDSMI_SRIOV_MAX_VFS */
        struct amdsmi_vf_info vfs[AMDSMI_SRIOV_MAX_VFS]; /**< in virtfn order */
};

/**
 * Reads a PF's SR-IOV state and its VFs: driver, override, IOMMU group and whether VFIO can
 * take it, and which processes hold the group's vfio/<group> node (a scan of /proc/PID/fd;
 * only when the context has a device root, see amdsmi_ctx_new_with_roots(); without root
 * other users' processes are not seen). The PF's driver is read now, not taken from the
 * enumeration.
 * @return 0, -EINVAL (size; @p gpu is a host VF), -ENODEV (the PF went away), or a negative
 * errno. A PF without the SR-IOV capability, or a guest's VF, is not an error: @c capable is
 * false, @c config AMDSMI_VF_CONFIG_NONE.
 * @since 0.1
 */
int amdsmi_gpu_read_sriov(struct amdsmi_gpu *gpu, struct amdsmi_sriov_info *ret_info)
        AMDSMI_NONNULL(1, 2);

/** Flags of the SR-IOV changes (bit 0 and 1 as AMDSMI_CHANGE_DRY_RUN / _FORCE). */
#define AMDSMI_SRIOV_DRY_RUN (UINT64_C(1) << 0)       /**< check and plan only */
#define AMDSMI_SRIOV_FORCE (UINT64_C(1) << 1)         /**< set the count although VFs are
                                                           bound to vfio-pci or in use; release
                                                           a VF although it is in use */
#define AMDSMI_SRIOV_AUTOPROBE_OFF (UINT64_C(1) << 2) /**< write sriov_drivers_autoprobe 0
                                                           before enabling, so that new VFs
                                                           bind to no host driver */

enum amdsmi_sriov_stage {
        AMDSMI_SRIOV_STAGE_DONE = 0,   /**< "done" */
        AMDSMI_SRIOV_STAGE_PREFLIGHT,  /**< "preflight": refused before any write */
        AMDSMI_SRIOV_STAGE_DISABLE,    /**< "disable": writing 0 first */
        AMDSMI_SRIOV_STAGE_AUTOPROBE,  /**< "autoprobe" */
        AMDSMI_SRIOV_STAGE_ENABLE,     /**< "enable": writing the new count */
        AMDSMI_SRIOV_STAGE_SETTLE,     /**< "settle": waiting for the VF functions */
        AMDSMI_SRIOV_STAGE_VERIFY,     /**< "verify": reading back */
        AMDSMI_SRIOV_STAGE_UNBIND,     /**< "unbind" (bind/release) */
        AMDSMI_SRIOV_STAGE_PROBE,      /**< "probe" (bind/release: drivers_probe) */
        _AMDSMI_SRIOV_STAGE_MAX,
};

/** "done", "preflight", ...; "unknown" for out-of-range values. @since 0.1 */
const char *amdsmi_sriov_stage_to_string(enum amdsmi_sriov_stage s);

/** A VF that blocks a change of the VF count. */
struct amdsmi_vf_blocker {
        char bdf[16];
        bool vfio;      /**< bound to vfio-pci */
        bool in_use;    /**< its VFIO group is held by a process */
        pid_t pid;      /**< the first holder, 0 if none */
        char comm[32];
};

/** The report of amdsmi_gpu_set_num_vfs(). Set @c size to sizeof(the struct). */
struct amdsmi_sriov_change {
        size_t size;
        enum amdsmi_sriov_stage stage; /**< where it stopped (done on success) */
        int error;                     /**< the negative errno, 0 on success */
        enum amdsmi_vf_config config;
        unsigned total_vfs;
        unsigned vfs_before, vfs_after;
        bool changed;                  /**< the count was written */
        bool wrote_zero;               /**< 0 was written first (the kernel's EBUSY rule) */
        bool autoprobe_off;            /**< sriov_drivers_autoprobe was set to 0 */
        unsigned elapsed_ms;
        unsigned n_blockers;           /**< may exceed AMDSMI_SRIOV_MAX_VFS */
        struct amdsmi_vf_blocker blockers[AMDSMI_SRIOV_MAX_VFS];
        char message[512];             /**< one sentence for an operator, "" on success */
};

/**
 * Sets a PF's VF count through sriov_numvfs: @p n above sriov_totalvfs → -ERANGE; refused
 * (-EBUSY, the VFs in the report) while any VF is bound to vfio-pci or held through VFIO,
 * unless AMDSMI_SRIOV_FORCE; writes 0 first when VFs exist and @p n is not 0; with
 * AMDSMI_SRIOV_AUTOPROBE_OFF sets sriov_drivers_autoprobe to 0 first (and leaves it 0); waits
 * up to @p timeout_ms (0: 10 s) for the VF functions and their virtfnN links, and reads the
 * count back. The same count is a no-op (success, @c changed false). AMDSMI_SRIOV_DRY_RUN
 * stops after the checks. Nothing is rolled back: a failure after 0 was written leaves the
 * PF without VFs, and the message says so.
 * Under gim (checked before any write) or upstream amdgpu (the kernel's ENOENT at the write):
 * -EOPNOTSUPP, and the message says that gim's vf_num module parameter sets the count
 * (amdsmi(1): sriov set --persist) or that amdgpu cannot enable VFs through sysfs; with no
 * PF driver bound: -EOPNOTSUPP, and the message says to bind one. A bare -ENOENT is never
 * returned.
 * After a change the context's GPUs (its VFs) are out of date: call amdsmi_ctx_enumerate().
 * The caller serialises changes of one GPU (the per-GPU lock).
 * @return 0, -EINVAL (size; unknown flags; a VF given; @p n over 65535; the kernel's EINVAL),
 * -EOPNOTSUPP (no SR-IOV capability, or see above), -ERANGE, -EBUSY, -ENOMEM (the kernel
 * could not place the VFs: MMIO or bus numbers), -ETIMEDOUT (the VFs did not all appear),
 * -EIO (read back differs), -EACCES, -ENODEV (the PF went away), or another negative errno;
 * the report, filled on success and failure (unless @c size is too small), says more.
 * @since 0.1
 */
int amdsmi_gpu_set_num_vfs(struct amdsmi_gpu *gpu, unsigned n, uint64_t flags,
                           unsigned timeout_ms, struct amdsmi_sriov_change *ret_change)
        AMDSMI_NONNULL(1, 5);

/** The report of a bind or a release. Set @c size to sizeof(the struct). */
struct amdsmi_vf_bind_report {
        size_t size;
        enum amdsmi_sriov_stage stage;
        int error;
        char driver_before[32];   /**< "" when none */
        char driver_after[32];
        char override_before[32];
        char override_after[32];
        bool changed;             /**< something was written; false: it was bound that way
                                       already, or a dry run */
        char message[256];
};

/**
 * Hands a host VF to vfio-pci in the race-free order (spec virtualization §2.4): writes
 * driver_override "vfio-pci", unbinds the current driver, writes the VF's address to
 * bus/pci/drivers_probe, and checks that vfio-pci took it. The driver it had is remembered
 * (under $RUNTIME_DIRECTORY/sriov/, default /run/amdsmi/sriov/) for amdsmi_vf_release().
 * Already on vfio-pci: success, @c changed false. AMDSMI_SRIOV_DRY_RUN stops after the
 * checks; AMDSMI_SRIOV_FORCE is accepted and ignored. The viability of the VF's IOMMU group
 * is not checked. A failed bind clears the override, binds the previous driver again and
 * forgets it.
 * The handle's driver (amdsmi_gpu_get_driver(), amdsmi_gpu_get_driver_name()) was read at
 * enumeration: after a bind it is stale until the next amdsmi_ctx_enumerate().
 * @return 0, -EINVAL (size; unknown flags; @p vf is not a host VF), -EBUSY (its VFIO group is
 * in use), -EOPNOTSUPP (vfio-pci is not loaded), -EACCES (not root: the runtime directory or
 * a sysfs write), -ENODEV (it went away), -EIO (vfio-pci did not take it; the previous driver
 * is bound again), or a negative errno; the report says more.
 * @since 0.1
 */
int amdsmi_vf_bind_vfio(struct amdsmi_gpu *vf, uint64_t flags,
                        struct amdsmi_vf_bind_report *ret_report) AMDSMI_NONNULL(1, 3);

/**
 * Gives a VF back: refused while its VFIO group is in use (-EBUSY) unless
 * AMDSMI_SRIOV_FORCE; clears driver_override, unbinds vfio-pci and binds the driver it had
 * before amdsmi_vf_bind_vfio() through that driver's own bind file; forgets the remembered
 * driver. It never writes drivers_probe, which would hand the VF back to vfio-pci wherever
 * vfio-pci.ids claims its device ID: a VF that had no driver (host VFs normally have none),
 * or whose driver is not remembered, stays unbound. A VF not on vfio-pci is left as it is
 * (@c changed false), except that a leftover "vfio-pci" driver_override is cleared.
 * AMDSMI_SRIOV_DRY_RUN stops after the checks.
 * The handle's driver (amdsmi_gpu_get_driver(), amdsmi_gpu_get_driver_name()) was read at
 * enumeration: after a release it is stale until the next amdsmi_ctx_enumerate().
 * @return 0, -EINVAL (size; unknown flags; @p vf is not a host VF), -EBUSY, -EACCES, -ENODEV,
 * or the errno of a write (a failed bind of the remembered driver leaves the VF released and
 * unbound); the report says more.
 * @since 0.1
 */
int amdsmi_vf_release(struct amdsmi_gpu *vf, uint64_t flags,
                      struct amdsmi_vf_bind_report *ret_report) AMDSMI_NONNULL(1, 3);

#ifdef __cplusplus
}
#endif
