/* SPDX-License-Identifier: MIT */
/* The host facts (doctor-host.c) and their /proc parsers (procfs.c) on hand-made trees: a
 * /proc with cmdline, modules and interrupts, a sysfs with IOMMU units, groups and drivers. */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>

/* clang-format off */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
/* clang-format on */

#include "private.h"
#include "procfs.h"
#include "tree-util.h"

#define MODULES                                                     \
        "vfio_pci 16384 0 - Live 0x0000000000000000\n"              \
        "vfio_pci_core 94208 1 vfio_pci, Live 0x0000000000000000\n" \
        "amdgpu 19034112 0 - Live 0x0000000000000000\n"

#define INTERRUPTS_IR                                                                    \
        "            CPU0       CPU1       \n"                                           \
        "   0:         44          0   IO-APIC   2-edge      timer\n"                    \
        "  27:          0          0  IR-PCI-MSI-0000:00:01.1    0-edge      PCIe PME\n" \
        " 140:         12          0  IR-PCI-MSIX-0000:05:00.0    0-edge      amdgpu\n"  \
        " NMI:          0          0   Non-maskable interrupts\n"

#define INTERRUPTS_PLAIN                                       \
        "            CPU0\n"                                   \
        "  27:          0   PCI-MSI 2048-edge      PCIe PME\n" \
        " LOC:       1234   Local timer interrupts\n"

static void test_modules(void **state) {
        (void) state;
        assert_int_equal(procfs_modules_has(MODULES, strlen(MODULES), "vfio_pci"), 1);
        assert_int_equal(procfs_modules_has(MODULES, strlen(MODULES), "vfio-pci"), 1);
        assert_int_equal(procfs_modules_has(MODULES, strlen(MODULES), "vfio"), 0);
        assert_int_equal(procfs_modules_has(MODULES, strlen(MODULES), "gim"), 0);
        /* a name as a dependency of another line is not loaded by itself */
        assert_int_equal(procfs_modules_has("a 1 0 vfio_pci, Live\n", 21, "vfio_pci"), 0);
        /* no newline at the end, and a cut buffer */
        assert_int_equal(procfs_modules_has("gim 1 0", 7, "gim"), 1);
        assert_int_equal(procfs_modules_has("gimx 1", 3, "gim"), 1);
        assert_int_equal(procfs_modules_has("", 0, "gim"), 0);
        assert_int_equal(procfs_modules_has(MODULES, strlen(MODULES), ""), 0);
}

static void test_interrupts(void **state) {
        unsigned ir = 0, plain = 0;

        (void) state;
        assert_int_equal(
                procfs_interrupts_remapping(INTERRUPTS_IR, strlen(INTERRUPTS_IR), &ir, &plain), 1);
        assert_int_equal(ir, 2);
        assert_int_equal(plain, 1);
        assert_int_equal(procfs_interrupts_remapping(INTERRUPTS_PLAIN, strlen(INTERRUPTS_PLAIN),
                                                     &ir, &plain),
                         0);
        assert_int_equal(ir, 0);
        assert_int_equal(plain, 1);
        assert_int_equal(procfs_interrupts_remapping(" LOC: 1 Local\n", 14, NULL, NULL), -ENODATA);
        assert_int_equal(procfs_interrupts_remapping("", 0, NULL, NULL), -ENODATA);
}

static void test_host_read(void **state) {
        char *proc = tree_new(), *sys = tree_new();
        struct amdsmi_host_info h = { .size = sizeof(h) };
        struct amdsmi_iommu_group g;
        struct amdsmi_ctx *ctx = NULL;
        char buf[64];

        (void) state;
        tree_file(proc, "cmdline", "BOOT_IMAGE=/vmlinuz ro amd_iommu=on iommu=pt\n", -1, 0444);
        tree_file(proc, "modules", MODULES, -1, 0444);
        tree_file(proc, "interrupts", INTERRUPTS_IR, -1, 0444);
        tree_mkdirs(sys, "class/iommu/ivhd0");
        tree_mkdirs(sys, "class/iommu/ivhd1");
        tree_mkdirs(sys, "bus/pci/drivers/vfio-pci");
        tree_mkdirs(sys, "devices/pci0000:00/0000:05:00.0");
        tree_mkdirs(sys, "devices/pci0000:00/0000:06:00.0");
        tree_link(sys, "bus/pci/devices/0000:05:00.0", "../../../devices/pci0000:00/0000:05:00.0");
        tree_link(sys, "bus/pci/devices/0000:06:00.0", "../../../devices/pci0000:00/0000:06:00.0");
        tree_link(sys, "devices/pci0000:00/0000:05:00.0/iommu_group",
                  "../../../kernel/iommu_groups/12");
        tree_link(sys, "devices/pci0000:00/0000:06:00.0/iommu_group",
                  "../../../kernel/iommu_groups/12");
        tree_link(sys, "kernel/iommu_groups/12/devices/0000:06:00.0",
                  "../../../../devices/pci0000:00/0000:06:00.0");
        tree_link(sys, "kernel/iommu_groups/12/devices/0000:05:00.0",
                  "../../../../devices/pci0000:00/0000:05:00.0");
        tree_file(sys, "module/gim/parameters/vf_num", "8,8\n", -1, 0444);

        procfs_set_root(proc);
        assert_int_equal(amdsmi_ctx_new_with_roots(sys, NULL, &ctx), 0);
        assert_int_equal(amdsmi_host_read(ctx, &h), 0);
        assert_int_equal(h.cmdline_error, 0);
        assert_string_equal(h.cmdline, "BOOT_IMAGE=/vmlinuz ro amd_iommu=on iommu=pt");
        assert_int_equal(h.n_iommu_units, 2);
        assert_string_equal(h.iommu_units[1], "ivhd1");
        assert_int_equal(h.interrupt_remapping, 1);
        assert_int_equal(h.vfio_pci_driver, 1);
        assert_int_equal(h.vfio_pci_module, 1);
        assert_int_equal(amdsmi_host_module_loaded(ctx, "amdgpu"), 1);
        assert_int_equal(amdsmi_host_module_loaded(ctx, "gim"), 0);

        assert_int_equal(amdsmi_pci_read_iommu_group(ctx, "0000:05:00.0", &g), 0);
        assert_int_equal(g.group, 12);
        assert_int_equal(g.n_devices, 2);
        assert_string_equal(g.devices[0], "0000:05:00.0");
        assert_string_equal(g.devices[1], "0000:06:00.0");
        assert_int_equal(amdsmi_pci_read_iommu_group(ctx, "0000:07:00.0", &g), -ENOENT);
        assert_int_equal(amdsmi_pci_read_iommu_group(ctx, "nonsense", &g), -EINVAL);

        assert_int_equal(amdsmi_host_read_module_param(ctx, "gim", "vf_num", buf, sizeof(buf)), 0);
        assert_string_equal(buf, "8,8");
        assert_int_equal(amdsmi_host_read_module_param(ctx, "gim", "x", buf, sizeof(buf)), -ENOENT);
        assert_int_equal(amdsmi_host_read_module_param(ctx, "../gim", "x", buf, sizeof(buf)),
                         -EINVAL);

        /* none of it: no IOMMU, no vfio-pci, no remapping, no cmdline */
        tree_free(proc);
        proc = tree_new();
        tree_file(proc, "modules", "amdgpu 1 0 - Live 0x0\n", -1, 0444);
        tree_file(proc, "interrupts", INTERRUPTS_PLAIN, -1, 0444);
        procfs_set_root(proc);
        amdsmi_ctx_unref(ctx);
        tree_free(sys);
        sys = tree_new();
        assert_int_equal(amdsmi_ctx_new_with_roots(sys, NULL, &ctx), 0);
        assert_int_equal(amdsmi_host_read(ctx, &h), 0);
        assert_int_equal(h.cmdline_error, -ENOENT);
        assert_int_equal(h.n_iommu_units, 0);
        assert_int_equal(h.iommu_error, -ENOENT);
        assert_int_equal(h.interrupt_remapping, 0);
        assert_int_equal(h.vfio_pci_driver, 0);
        assert_int_equal(h.vfio_pci_module, 0);
        h.size = 1;
        assert_int_equal(amdsmi_host_read(ctx, &h), -EINVAL);

        /* a FIFO where /proc/cmdline is: refused, never waited on */
        {
                char *fifo = tree_path(proc, "cmdline");

                assert_int_equal(mkfifo(fifo, 0644), 0);
                free(fifo);
                h.size = sizeof(h);
                assert_int_equal(amdsmi_host_read(ctx, &h), 0);
                assert_int_equal(h.cmdline_error, -EBADF);
        }

        procfs_set_root(NULL);
        amdsmi_ctx_unref(ctx);
        tree_free(proc);
        tree_free(sys);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_modules),
                cmocka_unit_test(test_interrupts),
                cmocka_unit_test(test_host_read),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
