/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of amdsmi-sim's PCI function contents (sim/pci.c): config space bytes at their
 * register offsets, the capability chains, modalias, uevent and resource text.
 *
 * Expected bytes and strings are written out here from the PCI, PCI Express and SR-IOV
 * register layouts and from the PCI core's sysfs formats, not computed with the simulator's
 * helpers.
 */

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "pci.h"

#define GiB (UINT64_C(1) << 30)
#define MiB (UINT64_C(1) << 20)
#define KiB (UINT64_C(1) << 10)

/* MI300X PF bound to amdgpu, PCIe 5.0 x16, SR-IOV with 8 of 8 VFs enabled */
static const struct sim_pci_func mi300x_pf = {
        .vendor = 0x1002,
        .device = 0x74a1,
        .subsystem_vendor = 0x1002,
        .subsystem_device = 0x74a1,
        .revision = 0x00,
        .class_code = 0x120000,
        .header_type = 0,
        .pcie = true,
        .link_speed_cur = 5,
        .link_speed_max = 5,
        .link_width_cur = 16,
        .link_width_max = 16,
        .sriov = true,
        .sriov_total_vfs = 8,
        .sriov_num_vfs = 8,
        .sriov_offset = 16,
        .sriov_stride = 1,
        .sriov_vf_device = 0x74b5,
        .bar_start = { [0] = UINT64_C(0x1c0000000000),
                       [2] = UINT64_C(0x1c4000000000),
                       [5] = UINT64_C(0xd0000000) },
        .bar_size = { [0] = 256 * GiB, [2] = 2 * MiB, [5] = 512 * KiB },
        .irq = 42,
        .driver = "amdgpu",
        .slot_name = "0000:05:00.0",
};

/* One of its VFs, bound to vfio-pci */
static const struct sim_pci_func mi300x_vf = {
        .vendor = 0x1002,
        .device = 0x74b5,
        .subsystem_vendor = 0x1002,
        .subsystem_device = 0x74a1,
        .revision = 0x00,
        .class_code = 0x120000,
        .header_type = 0,
        .is_vf = true,
        .pcie = true,
        .link_speed_cur = 5,
        .link_speed_max = 5,
        .link_width_cur = 16,
        .link_width_max = 16,
        .bar_start = { [0] = UINT64_C(0x1d0000000000),
                       [2] = UINT64_C(0x1d4000000000),
                       [5] = UINT64_C(0xd1000000) },
        .bar_size = { [0] = 32 * GiB, [2] = 2 * MiB, [5] = 512 * KiB },
        .driver = "vfio-pci",
        .slot_name = "0000:05:02.0",
};

/* The BMC's VGA function: conventional PCI behind the ASPEED bridge, not bound */
static const struct sim_pci_func aspeed_vga = {
        .vendor = 0x1a03,
        .device = 0x2000,
        .subsystem_vendor = 0x1a03,
        .subsystem_device = 0x2000,
        .revision = 0x52,
        .class_code = 0x030000,
        .header_type = 0,
        .bar_start = { [0] = UINT64_C(0xde000000), [1] = UINT64_C(0xdf000000) },
        .bar_size = { [0] = 16 * MiB, [1] = 256 * KiB },
        .irq = 16,
        .slot_name = "0000:c2:00.0",
};

static uint16_t get16(const uint8_t *cfg, unsigned off) {
        return (uint16_t) (cfg[off] | cfg[off + 1] << 8);
}

static uint32_t get32(const uint8_t *cfg, unsigned off) {
        return (uint32_t) cfg[off] | (uint32_t) cfg[off + 1] << 8 | (uint32_t) cfg[off + 2] << 16 |
               (uint32_t) cfg[off + 3] << 24;
}

/* Walks the standard capability list; fails the test if it does not end within the 48
 * entries 192 bytes of capability space can hold. Returns the position of @id or 0. */
static unsigned find_cap(const uint8_t *cfg, uint8_t id) {
        unsigned pos = cfg[0x34], found = 0;

        for (unsigned n = 0; pos != 0; n++) {
                assert_true(n < 48);
                assert_true(pos >= 0x40 && pos <= 0xfc);
                assert_int_equal(pos & 3, 0);
                if (cfg[pos] == id && !found)
                        found = pos;
                pos = cfg[pos + 1];
        }
        return found;
}

/* Walks the extended capability list from 0x100. Returns the position of @id or 0. */
static unsigned find_ext_cap(const uint8_t *cfg, uint16_t id) {
        unsigned pos = 0x100;

        for (unsigned n = 0; n < (4096 - 0x100) / 4; n++) {
                uint32_t header = get32(cfg, pos);

                if (header == 0)
                        return 0;
                if ((header & 0xffff) == id)
                        return pos;
                pos = (header >> 20) & 0xffc;
                if (pos < 0x100)
                        return 0;
        }
        fail_msg("extended capability list does not end");
        return 0;
}

static void test_config_pf_header(void **state) {
        uint8_t cfg[4096];

        sim_pci_config(&mi300x_pf, cfg);

        assert_int_equal(get16(cfg, 0x00), 0x1002);
        assert_int_equal(get16(cfg, 0x02), 0x74a1);
        /* Memory Space, Bus Master, INTx disabled (MSI-X in use) */
        assert_int_equal(get16(cfg, 0x04), 0x0406);
        assert_int_equal(get16(cfg, 0x06) & 0x0010, 0x0010);
        assert_int_equal(cfg[0x08], 0x00);
        assert_int_equal(cfg[0x09], 0x00);
        assert_int_equal(cfg[0x0a], 0x00);
        assert_int_equal(cfg[0x0b], 0x12);
        assert_int_equal(cfg[0x0e], 0x00);
        /* BAR0: 64-bit prefetchable memory, two dwords */
        assert_int_equal(get32(cfg, 0x10), 0x0000000c);
        assert_int_equal(get32(cfg, 0x14), 0x00001c00);
        /* BAR2: 2 MiB above 4 GiB, so 64-bit too */
        assert_int_equal(get32(cfg, 0x18), 0x0000000c);
        assert_int_equal(get32(cfg, 0x1c), 0x00001c40);
        assert_int_equal(get32(cfg, 0x20), 0);
        /* BAR5: 32-bit non-prefetchable */
        assert_int_equal(get32(cfg, 0x24), 0xd0000000);
        assert_int_equal(get16(cfg, 0x2c), 0x1002);
        assert_int_equal(get16(cfg, 0x2e), 0x74a1);
        assert_int_equal(get32(cfg, 0x30), 0);
        assert_int_not_equal(cfg[0x34], 0);
        assert_int_equal(cfg[0x3c], 42);
        assert_int_equal(cfg[0x3d], 1);
}

static void test_config_pf_capabilities(void **state) {
        uint8_t cfg[4096];
        unsigned exp, msix;

        sim_pci_config(&mi300x_pf, cfg);

        exp = find_cap(cfg, 0x10);
        msix = find_cap(cfg, 0x11);
        assert_int_not_equal(exp, 0);
        assert_int_not_equal(msix, 0);
        assert_int_not_equal(find_cap(cfg, 0x01), 0);

        /* PCIe capability: version 2, endpoint */
        assert_int_equal(get16(cfg, exp + 0x02) & 0x000f, 2);
        assert_int_equal((get16(cfg, exp + 0x02) & 0x00f0) >> 4, 0);
        /* Link Capabilities: max speed 32 GT/s (5), max width x16 */
        assert_int_equal(get32(cfg, exp + 0x0c) & 0x000f, 5);
        assert_int_equal((get32(cfg, exp + 0x0c) & 0x03f0) >> 4, 16);
        /* Link Status: current speed and negotiated width */
        assert_int_equal(get16(cfg, exp + 0x12) & 0x000f, 5);
        assert_int_equal((get16(cfg, exp + 0x12) & 0x03f0) >> 4, 16);
        /* Link Capabilities 2: 2.5 .. 32 GT/s supported */
        assert_int_equal(get32(cfg, exp + 0x2c) & 0xfe, 0x3e);

        /* MSI-X: 16 vectors, enabled, table and PBA in the 512 KiB register BAR5 */
        assert_int_equal(get16(cfg, msix + 0x02) & 0x07ff, 15);
        assert_int_equal(get16(cfg, msix + 0x02) & 0x8000, 0x8000);
        assert_int_equal(get32(cfg, msix + 0x04) & 7, 5);
        assert_int_equal(get32(cfg, msix + 0x08) & 7, 5);
        assert_true((get32(cfg, msix + 0x08) & ~7u) >= 16 * 16);
}

static void test_config_pf_sriov(void **state) {
        uint8_t cfg[4096];
        unsigned p;

        sim_pci_config(&mi300x_pf, cfg);

        p = find_ext_cap(cfg, 0x0010);
        assert_int_equal(p, 0x100);
        assert_int_equal(get32(cfg, p) & 0xffff, 0x0010);
        assert_int_equal((get32(cfg, p) >> 16) & 0xf, 1);
        assert_int_equal(get32(cfg, p) >> 20, 0);
        /* VF Enable and VF Memory Space Enable with VFs on */
        assert_int_equal(get16(cfg, p + 0x08) & 0x0009, 0x0009);
        assert_int_equal(get16(cfg, p + 0x0c), 8);  /* InitialVFs */
        assert_int_equal(get16(cfg, p + 0x0e), 8);  /* TotalVFs */
        assert_int_equal(get16(cfg, p + 0x10), 8);  /* NumVFs */
        assert_int_equal(cfg[p + 0x12], 0);         /* Function Dependency Link */
        assert_int_equal(get16(cfg, p + 0x14), 16); /* First VF Offset */
        assert_int_equal(get16(cfg, p + 0x16), 1);  /* VF Stride */
        assert_int_equal(get16(cfg, p + 0x1a), 0x74b5);
        assert_int_equal(get32(cfg, p + 0x20), 1); /* System Page Size 4 KiB */
}

static void test_config_pf_sriov_off(void **state) {
        struct sim_pci_func f = mi300x_pf;
        uint8_t cfg[4096];

        f.sriov = false;
        sim_pci_config(&f, cfg);
        assert_int_equal(get32(cfg, 0x100), 0);
        assert_int_equal(find_ext_cap(cfg, 0x0010), 0);

        f.sriov = true;
        f.sriov_num_vfs = 0;
        sim_pci_config(&f, cfg);
        assert_int_equal(get16(cfg, 0x100 + 0x08) & 0x0001, 0);
        assert_int_equal(get16(cfg, 0x100 + 0x10), 0);
        assert_int_equal(get16(cfg, 0x100 + 0x0e), 8);
}

static void test_config_vf(void **state) {
        uint8_t cfg[4096];
        unsigned exp;

        memset(cfg, 0xa5, sizeof(cfg));
        sim_pci_config(&mi300x_vf, cfg);

        assert_int_equal(get16(cfg, 0x00), 0xffff);
        assert_int_equal(get16(cfg, 0x02), 0xffff);
        /* Memory Space Enable is hard-wired to 0 in a VF; the bound driver set Bus Master */
        assert_int_equal(get16(cfg, 0x04) & 0x0002, 0);
        assert_int_equal(get16(cfg, 0x04) & 0x0004, 0x0004);
        assert_int_equal(get16(cfg, 0x06) & 0x0010, 0x0010);
        assert_int_equal(cfg[0x0b], 0x12);
        /* VF BARs read as zero */
        for (unsigned reg = 0x10; reg < 0x28; reg += 4)
                assert_int_equal(get32(cfg, reg), 0);
        assert_int_equal(get16(cfg, 0x2c), 0x1002);
        assert_int_equal(get16(cfg, 0x2e), 0x74a1);
        assert_int_equal(cfg[0x3d], 0); /* no INTx */

        exp = find_cap(cfg, 0x10);
        assert_int_not_equal(exp, 0);
        assert_int_not_equal(find_cap(cfg, 0x11), 0);
        assert_int_equal(get32(cfg, exp + 0x0c) & 0x000f, 5);
        assert_int_equal(find_ext_cap(cfg, 0x0010), 0);
        /* everything past the written registers was cleared */
        assert_int_equal(cfg[4095], 0);
}

static void test_config_aspeed(void **state) {
        uint8_t cfg[4096];

        sim_pci_config(&aspeed_vga, cfg);

        assert_int_equal(get16(cfg, 0x00), 0x1a03);
        assert_int_equal(get16(cfg, 0x02), 0x2000);
        assert_int_equal(get16(cfg, 0x04), 0x0002); /* not bound: memory decode only */
        assert_int_equal(get16(cfg, 0x06) & 0x0010, 0x0010);
        assert_int_equal(cfg[0x08], 0x52);
        assert_int_equal(cfg[0x09], 0x00);
        assert_int_equal(cfg[0x0a], 0x00);
        assert_int_equal(cfg[0x0b], 0x03);
        assert_int_equal(cfg[0x0e], 0x00);
        assert_int_equal(get32(cfg, 0x10), 0xde000000);
        assert_int_equal(get32(cfg, 0x14), 0xdf000000);
        assert_int_equal(get32(cfg, 0x18), 0);
        assert_int_equal(get16(cfg, 0x2c), 0x1a03);
        assert_int_equal(get16(cfg, 0x2e), 0x2000);
        assert_int_equal(cfg[0x3c], 16);
        assert_int_equal(cfg[0x3d], 1);

        /* conventional PCI: a Power Management capability, no PCIe, no MSI-X */
        assert_int_not_equal(find_cap(cfg, 0x01), 0);
        assert_int_equal(find_cap(cfg, 0x10), 0);
        assert_int_equal(find_cap(cfg, 0x11), 0);
        assert_int_equal(get32(cfg, 0x100), 0);
}

static void test_config_multifunction(void **state) {
        struct sim_pci_func f = aspeed_vga;
        uint8_t cfg[4096];

        f.multifunction = true;
        sim_pci_config(&f, cfg);
        assert_int_equal(cfg[0x0e], 0x80);
}

static void test_modalias(void **state) {
        char buf[128];

        assert_int_equal(sim_pci_modalias(&mi300x_pf, buf, sizeof(buf)), 53);
        assert_string_equal(buf, "pci:v00001002d000074A1sv00001002sd000074A1bc12sc00i00");

        /* a VF shows its real IDs to the PCI core */
        assert_int_equal(sim_pci_modalias(&mi300x_vf, buf, sizeof(buf)), 53);
        assert_string_equal(buf, "pci:v00001002d000074B5sv00001002sd000074A1bc12sc00i00");

        assert_int_equal(sim_pci_modalias(&aspeed_vga, buf, sizeof(buf)), 53);
        assert_string_equal(buf, "pci:v00001A03d00002000sv00001A03sd00002000bc03sc00i00");
}

static void check_uevent(const struct sim_pci_func *f, const char *expected) {
        char buf[512];

        assert_int_equal(sim_pci_uevent(f, buf, sizeof(buf)), (int) strlen(expected));
        assert_string_equal(buf, expected);
}

static void test_uevent(void **state) {
        check_uevent(&mi300x_pf,
                     "DRIVER=amdgpu\n"
                     "PCI_CLASS=120000\n"
                     "PCI_ID=1002:74A1\n"
                     "PCI_SUBSYS_ID=1002:74A1\n"
                     "PCI_SLOT_NAME=0000:05:00.0\n"
                     "MODALIAS=pci:v00001002d000074A1sv00001002sd000074A1bc12sc00i00\n");

        check_uevent(&mi300x_vf,
                     "DRIVER=vfio-pci\n"
                     "PCI_CLASS=120000\n"
                     "PCI_ID=1002:74B5\n"
                     "PCI_SUBSYS_ID=1002:74A1\n"
                     "PCI_SLOT_NAME=0000:05:02.0\n"
                     "MODALIAS=pci:v00001002d000074B5sv00001002sd000074A1bc12sc00i00\n");

        /* unbound: no DRIVER=; the class is printed with at least 4 digits, so 5 here */
        check_uevent(&aspeed_vga,
                     "PCI_CLASS=30000\n"
                     "PCI_ID=1A03:2000\n"
                     "PCI_SUBSYS_ID=1A03:2000\n"
                     "PCI_SLOT_NAME=0000:c2:00.0\n"
                     "MODALIAS=pci:v00001A03d00002000sv00001A03sd00002000bc03sc00i00\n");
}

#define ZERO_LINE "0x0000000000000000 0x0000000000000000 0x0000000000000000\n"

static void test_resource_pf(void **state) {
        char buf[2048];
        int r;

        r = sim_pci_resource(&mi300x_pf, buf, sizeof(buf));
        assert_int_equal(r, 13 * 57);
        assert_string_equal(buf,
                            "0x00001c0000000000 0x00001c3fffffffff 0x000000000014220c\n"
                            ZERO_LINE
                            "0x00001c4000000000 0x00001c40001fffff 0x000000000014220c\n"
                            ZERO_LINE
                            ZERO_LINE
                            "0x00000000d0000000 0x00000000d007ffff 0x0000000000040200\n"
                            ZERO_LINE /* expansion ROM */
                            ZERO_LINE ZERO_LINE ZERO_LINE ZERO_LINE ZERO_LINE ZERO_LINE);
}

static void test_resource_vf_and_vga(void **state) {
        char buf[2048];
        unsigned lines = 0;

        /* the VF's config BARs read zero, but the PCI core knows its BAR resources */
        assert_int_equal(sim_pci_resource(&mi300x_vf, buf, sizeof(buf)), 13 * 57);
        assert_memory_equal(buf,
                            "0x00001d0000000000 0x00001d07ffffffff 0x000000000014220c\n"
                            ZERO_LINE
                            "0x00001d4000000000 0x00001d40001fffff 0x000000000014220c\n",
                            3 * 57);

        assert_int_equal(sim_pci_resource(&aspeed_vga, buf, sizeof(buf)), 13 * 57);
        assert_memory_equal(buf,
                            "0x00000000de000000 0x00000000deffffff 0x0000000000040200\n"
                            "0x00000000df000000 0x00000000df03ffff 0x0000000000040200\n"
                            ZERO_LINE,
                            3 * 57);
        for (const char *p = buf; *p; p++)
                if (*p == '\n')
                        lines++;
        assert_int_equal(lines, 13);
}

static void test_resource_bridge(void **state) {
        struct sim_pci_func f = {
                .vendor = 0x1002,
                .device = 0x14b9,
                .class_code = 0x060400,
                .header_type = 1,
                .pcie = true,
                .slot_name = "0000:04:00.0",
        };
        char buf[2048];
        uint8_t cfg[4096];

        /* a bridge also prints its 4 windows */
        assert_int_equal(sim_pci_resource(&f, buf, sizeof(buf)), 17 * 57);

        sim_pci_config(&f, cfg);
        assert_int_equal(cfg[0x0e], 0x01);
        assert_int_equal((get16(cfg, find_cap(cfg, 0x10) + 0x02) & 0x00f0) >> 4, 6);
}

static void test_enospc(void **state) {
        char buf[2048];
        size_t len;

        len = strlen("pci:v00001002d000074A1sv00001002sd000074A1bc12sc00i00");
        memset(buf, 'x', sizeof(buf));
        assert_int_equal(sim_pci_modalias(&mi300x_pf, buf, len), -ENOSPC);
        assert_int_equal(buf[0], 'x'); /* untouched */
        assert_int_equal(sim_pci_modalias(&mi300x_pf, buf, 0), -ENOSPC);
        assert_int_equal(sim_pci_modalias(&mi300x_pf, buf, len + 1), (int) len);

        len = (size_t) sim_pci_uevent(&mi300x_pf, buf, sizeof(buf));
        assert_int_equal(sim_pci_uevent(&mi300x_pf, buf, len), -ENOSPC);
        assert_int_equal(sim_pci_uevent(&mi300x_pf, buf, len + 1), (int) len);

        assert_int_equal(sim_pci_resource(&mi300x_pf, buf, 13 * 57), -ENOSPC);
        assert_int_equal(sim_pci_resource(&mi300x_pf, buf, 13 * 57 + 1), 13 * 57);
        assert_int_equal(sim_pci_resource(&mi300x_pf, buf, 100), -ENOSPC);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_config_pf_header),
                cmocka_unit_test(test_config_pf_capabilities),
                cmocka_unit_test(test_config_pf_sriov),
                cmocka_unit_test(test_config_pf_sriov_off),
                cmocka_unit_test(test_config_vf),
                cmocka_unit_test(test_config_aspeed),
                cmocka_unit_test(test_config_multifunction),
                cmocka_unit_test(test_modalias),
                cmocka_unit_test(test_uevent),
                cmocka_unit_test(test_resource_pf),
                cmocka_unit_test(test_resource_vf_and_vga),
                cmocka_unit_test(test_resource_bridge),
                cmocka_unit_test(test_enospc),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
