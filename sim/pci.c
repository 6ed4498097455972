/* SPDX-License-Identifier: MIT */
/*
 * amdsmi-sim: PCI function contents as the PCI core shows them (see pci.h).
 *
 * Config space layout written here (all multi-byte registers little endian):
 *
 *   0x00..0x3f  type 0 (or type 1) header; the capability pointer at 0x34
 *   0x50        Power Management capability (PFs and conventional functions, not VFs)
 *   0x64        PCI Express capability, version 2, 0x3c bytes (PCIe functions)
 *   0xa0        MSI-X capability (PCIe functions with a memory BAR of at least 4 KiB)
 *   0x100       SR-IOV extended capability (PFs with sriov); otherwise the extended list
 *               is empty (a zero header at 0x100)
 *
 * The capability chain is always terminated by a next pointer of 0. A VF reads 0xffff as
 * vendor and device ID, hard-wires Memory Space Enable and every BAR to 0 and has no INTx
 * pin, as the SR-IOV specification requires; its real IDs and BARs show up only in the PCI
 * core's view (modalias, uevent, resource), which is why those functions use the struct's
 * IDs as they are.
 *
 * BARs: a BAR is a 64-bit prefetchable memory BAR when its size exceeds 4 GiB or its end
 * lies above 4 GiB (a 32-bit BAR cannot hold such an address); it then also takes the next
 * slot (upper address dword), whose own start and size are ignored. All other BARs are
 * 32-bit non-prefetchable memory BARs.
 *
 * The resource file prints, per line, start, end and the resource flags the PCI core
 * derives from a BAR: the BAR's low 4 bits, IORESOURCE_MEM, IORESOURCE_PREFETCH for
 * prefetchable BARs, IORESOURCE_MEM_64 for 64-bit BARs and always IORESOURCE_SIZEALIGN.
 * An endpoint has 13 lines (6 BARs, expansion ROM, 6 SR-IOV VF BAR resources), a bridge 17
 * (plus its 4 windows). This model has no ROM, no VF BAR apertures and no bridge windows, so
 * those lines are zero, as the PCI core prints unassigned resources.
 */

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "pci.h"
#include "text.h"

#define CFG_SIZE 4096

/* Type 0/1 header registers */
#define REG_VENDOR 0x00
#define REG_DEVICE 0x02
#define REG_COMMAND 0x04
#define REG_STATUS 0x06
#define REG_REVISION 0x08
#define REG_CLASS_PROG 0x09
#define REG_CACHE_LINE 0x0c
#define REG_HEADER_TYPE 0x0e
#define REG_BAR0 0x10
#define REG_SUBSYS_VENDOR 0x2c
#define REG_SUBSYS_ID 0x2e
#define REG_CAP_PTR 0x34
#define REG_INT_LINE 0x3c
#define REG_INT_PIN 0x3d

#define CMD_MEMORY 0x0002
#define CMD_MASTER 0x0004
#define CMD_INTX_DISABLE 0x0400
#define STATUS_CAP_LIST 0x0010
#define HEADER_MULTIFUNCTION 0x80

#define BAR_MEM_TYPE_64 0x04
#define BAR_MEM_PREFETCH 0x08
#define BAR_MEM_MASK UINT64_C(0xfffffffffffffff0)

/* Capabilities */
#define CAP_ID_PM 0x01
#define CAP_ID_EXP 0x10
#define CAP_ID_MSIX 0x11
#define EXT_CAP_ID_SRIOV 0x0010

#define POS_PM 0x50
#define POS_EXP 0x64
#define POS_MSIX 0xa0
#define POS_EXT 0x100

#define PM_PMC 2
#define PM_CTRL 4
#define PM_CAP_VERSION_1_2 0x0003
#define PM_CTRL_NO_SOFT_RESET 0x0008

#define EXP_FLAGS 0x02
#define EXP_DEVCAP 0x04
#define EXP_LNKCAP 0x0c
#define EXP_LNKSTA 0x12
#define EXP_LNKCAP2 0x2c
#define EXP_LNKCTL2 0x30
#define EXP_FLAGS_VERSION_2 0x0002
#define EXP_TYPE_ENDPOINT 0x0
#define EXP_TYPE_DOWNSTREAM 0x6
#define EXP_DEVCAP_PAYLOAD_512 0x00000002
#define EXP_DEVCAP_EXT_TAG 0x00000020
#define EXP_DEVCAP_FLR 0x10000000
#define EXP_LNK_SPEED_MASK 0x000f
#define EXP_LNK_WIDTH_SHIFT 4
#define EXP_LNK_WIDTH_MASK 0x3f

#define MSIX_FLAGS 2
#define MSIX_TABLE 4
#define MSIX_PBA 8
#define MSIX_FLAGS_ENABLE 0x8000
#define MSIX_VECTORS 16
#define MSIX_ENTRY_SIZE 16
#define MSIX_MIN_BAR 4096

#define SRIOV_CTRL 0x08
#define SRIOV_INITIAL_VF 0x0c
#define SRIOV_TOTAL_VF 0x0e
#define SRIOV_NUM_VF 0x10
#define SRIOV_FUNC_LINK 0x12
#define SRIOV_VF_OFFSET 0x14
#define SRIOV_VF_STRIDE 0x16
#define SRIOV_VF_DID 0x1a
#define SRIOV_SUP_PGSIZE 0x1c
#define SRIOV_SYS_PGSIZE 0x20
#define SRIOV_CTRL_VFE 0x0001
#define SRIOV_CTRL_MSE 0x0008
#define SRIOV_PGSIZES 0x00000553 /* 4K, 8K, 64K, 256K, 1M, 4M */
#define SRIOV_PGSIZE_4K 0x00000001

/* Resource flags as the PCI core exports them in the resource file */
#define RES_MEM 0x00000200
#define RES_PREFETCH 0x00002000
#define RES_SIZEALIGN 0x00040000
#define RES_MEM_64 0x00100000

#define RESOURCES_ENDPOINT 13 /* 6 BARs, ROM, 6 SR-IOV VF BARs */
#define RESOURCES_BRIDGE 17   /* the same plus 4 bridge windows */

static void put8(uint8_t *cfg, unsigned off, uint8_t v) {
        cfg[off] = v;
}

static void put16(uint8_t *cfg, unsigned off, uint16_t v) {
        cfg[off] = v & 0xff;
        cfg[off + 1] = v >> 8;
}

static void put32(uint8_t *cfg, unsigned off, uint32_t v) {
        for (unsigned i = 0; i < 4; i++)
                cfg[off + i] = (v >> (8 * i)) & 0xff;
}

static unsigned bar_count(const struct sim_pci_func *f) {
        return f->header_type == 1 ? 2 : 6;
}

static bool bar_is_64(const struct sim_pci_func *f, unsigned i) {
        uint64_t four_gib = UINT64_C(1) << 32;

        if (f->bar_size[i] == 0)
                return false;
        return f->bar_size[i] > four_gib || f->bar_start[i] + f->bar_size[i] > four_gib;
}

/* The low BAR register bits: memory space, 64-bit type and prefetchable for 64-bit BARs. */
static uint32_t bar_low_bits(const struct sim_pci_func *f, unsigned i) {
        return bar_is_64(f, i) ? BAR_MEM_TYPE_64 | BAR_MEM_PREFETCH : 0;
}

/* Index of the BAR holding the MSI-X table: the smallest memory BAR of at least 4 KiB (the
 * register BAR), or -1 if there is none. */
static int msix_bar(const struct sim_pci_func *f) {
        int best = -1;

        for (unsigned i = 0; i < bar_count(f); i++) {
                if (f->bar_size[i] < MSIX_MIN_BAR)
                        continue;
                if (best < 0 || f->bar_size[i] < f->bar_size[best])
                        best = (int) i;
                if (bar_is_64(f, i))
                        i++;
        }
        return best;
}

/* PCI function number from "DDDD:BB:DD.F", 0 if it cannot be read. */
static unsigned slot_function(const struct sim_pci_func *f) {
        const char *dot;

        if (!f->slot_name)
                return 0;
        dot = strrchr(f->slot_name, '.');
        if (!dot || dot[1] < '0' || dot[1] > '7')
                return 0;
        return (unsigned) (dot[1] - '0');
}

static void write_bars(const struct sim_pci_func *f, uint8_t *cfg) {
        if (f->is_vf)
                return; /* VF BARs are read-only zero */

        for (unsigned i = 0; i < bar_count(f); i++) {
                unsigned reg = REG_BAR0 + 4 * i;

                if (f->bar_size[i] == 0)
                        continue;
                put32(cfg, reg, (uint32_t) (f->bar_start[i] & BAR_MEM_MASK) | bar_low_bits(f, i));
                if (bar_is_64(f, i) && i + 1 < bar_count(f)) {
                        put32(cfg, reg + 4, (uint32_t) (f->bar_start[i] >> 32));
                        i++;
                }
        }
}

static void write_pm(uint8_t *cfg, unsigned next) {
        put8(cfg, POS_PM, CAP_ID_PM);
        put8(cfg, POS_PM + 1, next);
        put16(cfg, POS_PM + PM_PMC, PM_CAP_VERSION_1_2);
        put16(cfg, POS_PM + PM_CTRL, PM_CTRL_NO_SOFT_RESET); /* D0 */
}

static void write_exp(const struct sim_pci_func *f, uint8_t *cfg, unsigned next) {
        unsigned type = f->header_type == 1 ? EXP_TYPE_DOWNSTREAM : EXP_TYPE_ENDPOINT;
        unsigned speed_max = f->link_speed_max & EXP_LNK_SPEED_MASK;
        uint32_t devcap = EXP_DEVCAP_PAYLOAD_512 | EXP_DEVCAP_EXT_TAG;
        uint32_t width_max = f->link_width_max & EXP_LNK_WIDTH_MASK;
        uint16_t width_cur = f->link_width_cur & EXP_LNK_WIDTH_MASK;
        uint16_t speed_cur = f->link_speed_cur & EXP_LNK_SPEED_MASK;

        if (f->header_type == 0)
                devcap |= EXP_DEVCAP_FLR;

        put8(cfg, POS_EXP, CAP_ID_EXP);
        put8(cfg, POS_EXP + 1, next);
        put16(cfg, POS_EXP + EXP_FLAGS, EXP_FLAGS_VERSION_2 | type << 4);
        put32(cfg, POS_EXP + EXP_DEVCAP, devcap);
        put32(cfg, POS_EXP + EXP_LNKCAP, speed_max | width_max << EXP_LNK_WIDTH_SHIFT);
        put16(cfg, POS_EXP + EXP_LNKSTA, (uint16_t) (speed_cur | width_cur << EXP_LNK_WIDTH_SHIFT));
        /* Supported Link Speeds Vector: bit n for speed n, every speed up to the maximum */
        put32(cfg, POS_EXP + EXP_LNKCAP2, ((UINT32_C(1) << speed_max) - 1) << 1);
        put16(cfg, POS_EXP + EXP_LNKCTL2, speed_max); /* Target Link Speed */
}

static void write_msix(const struct sim_pci_func *f, uint8_t *cfg, unsigned bir) {
        uint16_t flags = MSIX_VECTORS - 1;

        if (f->driver)
                flags |= MSIX_FLAGS_ENABLE;

        put8(cfg, POS_MSIX, CAP_ID_MSIX);
        put8(cfg, POS_MSIX + 1, 0);
        put16(cfg, POS_MSIX + MSIX_FLAGS, flags);
        put32(cfg, POS_MSIX + MSIX_TABLE, 0 | bir);
        put32(cfg, POS_MSIX + MSIX_PBA, (MSIX_VECTORS * MSIX_ENTRY_SIZE) | bir);
}

static void write_sriov(const struct sim_pci_func *f, uint8_t *cfg) {
        unsigned p = POS_EXT;

        /* ID, version 1, next offset 0 (end of the extended list) */
        put32(cfg, p, EXT_CAP_ID_SRIOV | UINT32_C(1) << 16);
        put16(cfg, p + SRIOV_CTRL, f->sriov_num_vfs > 0 ? SRIOV_CTRL_VFE | SRIOV_CTRL_MSE : 0);
        /* without VF migration, InitialVFs equals TotalVFs */
        put16(cfg, p + SRIOV_INITIAL_VF, f->sriov_total_vfs);
        put16(cfg, p + SRIOV_TOTAL_VF, f->sriov_total_vfs);
        put16(cfg, p + SRIOV_NUM_VF, f->sriov_num_vfs);
        put8(cfg, p + SRIOV_FUNC_LINK, (uint8_t) slot_function(f));
        put16(cfg, p + SRIOV_VF_OFFSET, f->sriov_offset);
        put16(cfg, p + SRIOV_VF_STRIDE, f->sriov_stride);
        put16(cfg, p + SRIOV_VF_DID, f->sriov_vf_device);
        put32(cfg, p + SRIOV_SUP_PGSIZE, SRIOV_PGSIZES);
        put32(cfg, p + SRIOV_SYS_PGSIZE, SRIOV_PGSIZE_4K);
}

void sim_pci_config(const struct sim_pci_func *f, uint8_t buf[4096]) {
        bool has_pm = !f->is_vf;
        bool has_exp = f->pcie || f->is_vf;
        int bir = has_exp ? msix_bar(f) : -1;
        uint16_t command = 0;
        uint8_t header = f->header_type & 0x7f;
        unsigned first = 0;

        memset(buf, 0, CFG_SIZE);

        put16(buf, REG_VENDOR, f->is_vf ? 0xffff : f->vendor);
        put16(buf, REG_DEVICE, f->is_vf ? 0xffff : f->device);

        if (!f->is_vf)
                command |= CMD_MEMORY;
        if (f->driver) {
                command |= CMD_MASTER;
                /* a bound driver uses MSI-X where the function has it, INTx then is off */
                if (bir >= 0 && !f->is_vf)
                        command |= CMD_INTX_DISABLE;
        }
        put16(buf, REG_COMMAND, command);
        put16(buf, REG_STATUS, STATUS_CAP_LIST);

        put8(buf, REG_REVISION, f->revision);
        put8(buf, REG_CLASS_PROG, f->class_code & 0xff);
        put8(buf, REG_CLASS_PROG + 1, (f->class_code >> 8) & 0xff);
        put8(buf, REG_CLASS_PROG + 2, (f->class_code >> 16) & 0xff);
        if (!f->is_vf)
                put8(buf, REG_CACHE_LINE, 0x10); /* 64 bytes, in dwords */
        if (f->multifunction && !f->is_vf)
                header |= HEADER_MULTIFUNCTION;
        put8(buf, REG_HEADER_TYPE, header);

        write_bars(f, buf);
        if (f->header_type == 0) {
                put16(buf, REG_SUBSYS_VENDOR, f->subsystem_vendor);
                put16(buf, REG_SUBSYS_ID, f->subsystem_device);
        }

        if (!f->is_vf) {
                put8(buf, REG_INT_LINE, f->irq & 0xff);
                put8(buf, REG_INT_PIN, 1); /* INTA# */
        }

        /* Capability list, written back to front so each knows its successor */
        if (bir >= 0) {
                write_msix(f, buf, (unsigned) bir);
                first = POS_MSIX;
        }
        if (has_exp) {
                write_exp(f, buf, first);
                first = POS_EXP;
        }
        if (has_pm) {
                write_pm(buf, first);
                first = POS_PM;
        }
        put8(buf, REG_CAP_PTR, (uint8_t) first);

        if (has_exp && f->sriov && !f->is_vf)
                write_sriov(f, buf);
}

/* ---- text files ---- */

static void add_modalias(struct sim_text *t, const struct sim_pci_func *f) {
        sim_text_add(t, "pci:v%08Xd%08Xsv%08Xsd%08Xbc%02Xsc%02Xi%02X", (unsigned) f->vendor,
                     (unsigned) f->device, (unsigned) f->subsystem_vendor,
                     (unsigned) f->subsystem_device, (unsigned) (f->class_code >> 16) & 0xff,
                     (unsigned) (f->class_code >> 8) & 0xff, (unsigned) f->class_code & 0xff);
}

int sim_pci_modalias(const struct sim_pci_func *f, char *buf, size_t size) {
        struct sim_text t = { .len = 0 };

        add_modalias(&t, f);
        return sim_text_finish(&t, buf, size);
}

int sim_pci_uevent(const struct sim_pci_func *f, char *buf, size_t size) {
        struct sim_text t = { .len = 0 };

        /* the driver core adds DRIVER= before the bus's own variables */
        if (f->driver)
                sim_text_add(&t, "DRIVER=%s\n", f->driver);
        /* the whole 24-bit class, at least 4 upper-case hex digits */
        sim_text_add(&t, "PCI_CLASS=%04X\n", (unsigned) f->class_code & 0xffffff);
        sim_text_add(&t, "PCI_ID=%04X:%04X\n", (unsigned) f->vendor, (unsigned) f->device);
        sim_text_add(&t, "PCI_SUBSYS_ID=%04X:%04X\n", (unsigned) f->subsystem_vendor,
                     (unsigned) f->subsystem_device);
        sim_text_add(&t, "PCI_SLOT_NAME=%s\n", f->slot_name ? f->slot_name : "");
        sim_text_add(&t, "MODALIAS=");
        add_modalias(&t, f);
        sim_text_add(&t, "\n");
        return sim_text_finish(&t, buf, size);
}

int sim_pci_resource(const struct sim_pci_func *f, char *buf, size_t size) {
        unsigned lines = f->header_type == 1 ? RESOURCES_BRIDGE : RESOURCES_ENDPOINT;
        struct sim_text t = { .len = 0 };

        for (unsigned i = 0; i < lines; i++) {
                unsigned long long start = 0, end = 0, flags = 0;

                if (i < bar_count(f) && f->bar_size[i] > 0) {
                        start = f->bar_start[i];
                        end = f->bar_start[i] + f->bar_size[i] - 1;
                        flags = bar_low_bits(f, i) | RES_MEM | RES_SIZEALIGN;
                        if (bar_is_64(f, i))
                                flags |= RES_PREFETCH | RES_MEM_64;
                }
                sim_text_add(&t, "0x%016llx 0x%016llx 0x%016llx\n", start, end, flags);

                /* the upper half of a 64-bit BAR is no resource of its own */
                if (i < bar_count(f) && bar_is_64(f, i) && i + 1 < lines) {
                        sim_text_add(&t, "0x%016llx 0x%016llx 0x%016llx\n", 0ULL, 0ULL, 0ULL);
                        i++;
                }
        }
        return sim_text_finish(&t, buf, size);
}
