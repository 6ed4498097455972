/* SPDX-License-Identifier: MIT */
/*
 * amdsmi-sim: PCI function contents as the PCI core shows them: the binary config space and
 * the text of modalias, uevent and resource (pure functions, written from the PCI and SR-IOV
 * specifications and ../shared/spec/virtualization.md §2).
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sim_pci_func {
        uint16_t vendor, device, subsystem_vendor, subsystem_device;
        uint8_t revision;
        uint32_t class_code;     /* 24 bits, e.g. 0x120000 */
        uint8_t header_type;     /* 0 endpoint, 1 bridge */
        bool multifunction;
        bool is_vf;              /* VF: vendor/device read back as 0xffff in config space */
        /* PCI Express capability */
        bool pcie;
        uint8_t link_speed_cur, link_speed_max;   /* 1..6 = 2.5, 5, 8, 16, 32, 64 GT/s */
        uint8_t link_width_cur, link_width_max;
        /* SR-IOV extended capability (PFs only) */
        bool sriov;
        uint16_t sriov_total_vfs, sriov_num_vfs, sriov_offset, sriov_stride, sriov_vf_device;
        /* BARs: up to 6, 64-bit prefetchable memory where size > 4 GiB */
        uint64_t bar_start[6], bar_size[6];
        unsigned irq;
        const char *driver;      /* bound driver name or NULL: for uevent DRIVER= */
        const char *slot_name;   /* "0000:05:00.0" */
};

/* The 4096-byte extended config space (root reads all of it, others the first 64 bytes).
 * Fills exactly 4096 bytes of @buf. */
void sim_pci_config(const struct sim_pci_func *f, uint8_t buf[4096]);

/* "pci:v00001002d000074A1sv00001002sd000074A1bc12sc00i00" (no newline). */
int sim_pci_modalias(const struct sim_pci_func *f, char *buf, size_t size);

/* The uevent text: DRIVER= (if bound), PCI_CLASS=, PCI_ID=, PCI_SUBSYS_ID=, PCI_SLOT_NAME=,
 * MODALIAS=, one per line, each ending in a newline. */
int sim_pci_uevent(const struct sim_pci_func *f, char *buf, size_t size);

/* The resource file: 13 lines "0x%016llx 0x%016llx 0x%016llx\n" (start end flags). */
int sim_pci_resource(const struct sim_pci_func *f, char *buf, size_t size);
