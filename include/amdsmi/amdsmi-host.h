/* SPDX-License-Identifier: MIT */
/**
 * @file amdsmi-host.h
 * What the host around the GPUs says of itself, for a preflight of SR-IOV and of amdsmi's
 * controls (amdsmi doctor): the kernel command line, the IOMMU units and interrupt
 * remapping, the modules loaded, the PCI drivers registered, and the IOMMU group of a PCI
 * device. The files outside sysfs (/proc/cmdline, /proc/modules, /proc/interrupts) are the
 * running system's, whatever the sysfs root; everything else is read under it.
 */
#pragma once

#if !defined(__AMDSMI_H_INSIDE__)
#error "Only <amdsmi/amdsmi.h> can be included directly."
#endif

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct amdsmi_ctx;

/** The most IOMMU units amdsmi_host_read() names. */
#define AMDSMI_HOST_IOMMU_UNITS_MAX 32

/** What amdsmi_host_read() fills. Set @c size to sizeof(struct amdsmi_host_info). */
struct amdsmi_host_info {
        size_t size;
        int cmdline_error;      /**< 0, or the negative errno of reading /proc/cmdline */
        char cmdline[4096];     /**< /proc/cmdline without its newline (cut when longer) */
        int iommu_error;        /**< 0, or why class/iommu cannot be listed (-ENOENT: none) */
        unsigned n_iommu_units; /**< entries of class/iommu (ivhd0 ... on AMD hosts) */
        char iommu_units[AMDSMI_HOST_IOMMU_UNITS_MAX][32]; /**< their names, the first ones */
        /** 1: /proc/interrupts names an interrupt-remapping chip (IR-PCI-MSI ...), 0: MSI or
         * IO-APIC lines without one, -ENODATA: no such line, or another negative errno */
        int interrupt_remapping;
        unsigned irq_remapped, irq_plain; /**< lines of each kind */
        /** 1: bus/pci/drivers/vfio-pci exists (the driver is registered: loaded or built
         * in), 0: not, or a negative errno */
        int vfio_pci_driver;
        /** 1: /proc/modules lists vfio_pci, 0: not, or a negative errno */
        int vfio_pci_module;
        int modules_error; /**< 0, or the negative errno of reading /proc/modules */
};

/**
 * Reads the host's facts (one read of each file). Per-part failures are in the parts.
 * @return 0, or -EINVAL (@c size too small).
 * @since 0.2
 */
int amdsmi_host_read(struct amdsmi_ctx *ctx, struct amdsmi_host_info *ret_info);

/**
 * Whether kernel module @module is loaded (/proc/modules; '-' and '_' are the same).
 * @return 1 loaded, 0 not, or a negative errno.
 * @since 0.2
 */
int amdsmi_host_module_loaded(struct amdsmi_ctx *ctx, const char *module);

/** The most devices amdsmi_pci_read_iommu_group() names. */
#define AMDSMI_IOMMU_GROUP_DEVICES_MAX 32

/** What amdsmi_pci_read_iommu_group() fills. */
struct amdsmi_iommu_group {
        int group;                                        /**< the group's number */
        unsigned n_devices;                               /**< devices in the group, this one too */
        char devices[AMDSMI_IOMMU_GROUP_DEVICES_MAX][16]; /**< their PCI addresses, sorted */
};

/**
 * Reads the IOMMU group of PCI device @bdf (bus/pci/devices/BDF/iommu_group and the group's
 * devices/).
 * @return 0, -ENOENT (no such device, or it has no IOMMU group: no IOMMU, or a VM), or a
 * negative errno.
 * @since 0.2
 */
int amdsmi_pci_read_iommu_group(struct amdsmi_ctx *ctx, const char *bdf,
                                struct amdsmi_iommu_group *ret_group);

/**
 * Reads module/@module/parameters/@param (e.g. gim's vf_num) into @buf, its newline removed.
 * @return 0, -ENOENT (no such module or parameter), or a negative errno.
 * @since 0.2
 */
int amdsmi_host_read_module_param(struct amdsmi_ctx *ctx, const char *module, const char *param,
                                  char *buf, size_t size);

#ifdef __cplusplus
}
#endif
