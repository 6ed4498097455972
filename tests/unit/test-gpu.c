/* SPDX-License-Identifier: MIT */
/*
 * Discovery, roles and telemetry error paths on small hand-made trees. The full fixture
 * machines are checked in test-fixtures.c; these cases are the corners a whole machine
 * does not show: garbage, truncation, oddly bound functions.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "private.h"
#include "sysfs.h"
#include "tree-util.h"

static void add_function(const char *root, const char *bdf, const char *vendor,
                         const char *device, const char *pci_class, const char *driver) {
        char rel[256], target[256];

        snprintf(rel, sizeof(rel), "devices/pci0000:00/%s/vendor", bdf);
        tree_file(root, rel, vendor, -1, 0444);
        snprintf(rel, sizeof(rel), "devices/pci0000:00/%s/device", bdf);
        tree_file(root, rel, device, -1, 0444);
        snprintf(rel, sizeof(rel), "devices/pci0000:00/%s/class", bdf);
        tree_file(root, rel, pci_class, -1, 0444);
        snprintf(rel, sizeof(rel), "bus/pci/devices/%s", bdf);
        snprintf(target, sizeof(target), "../../../devices/pci0000:00/%s", bdf);
        tree_link(root, rel, target);
        if (driver) {
                snprintf(rel, sizeof(rel), "devices/pci0000:00/%s/driver", bdf);
                snprintf(target, sizeof(target), "../../../bus/pci/drivers/%s", driver);
                tree_link(root, rel, target);
        }
}

static struct amdsmi_ctx *ctx_on(const char *root) {
        struct amdsmi_ctx *ctx = NULL;

        assert_int_equal(amdsmi_ctx_new_with_roots(root, NULL, &ctx), 0);
        return ctx;
}

static void test_discovery_filters_and_orders(void **state) {
        char *root = tree_new();
        struct amdsmi_ctx *ctx;
        struct amdsmi_gpu *gpu = NULL;

        add_function(root, "0000:c1:00.0", "0x1002\n", "0x74a1\n", "0x120000\n", "amdgpu");
        add_function(root, "0000:05:00.0", "0x1002\n", "0x74a1\n", "0x120000\n", NULL);
        add_function(root, "0000:02:00.0", "0x1a03\n", "0x2000\n", "0x030000\n", "ast");
        add_function(root, "0000:05:00.1", "0x1002\n", "0x1640\n", "0x040300\n", NULL); /* audio */
        add_function(root, "0000:07:00.0", "0x1002\n", "0x7551\n", "0x038000\n", "vfio-pci");
        add_function(root, "0000:08:00.0", "garbage\n", "0x74a1\n", "0x120000\n", NULL);
        ctx = ctx_on(root);

        assert_int_equal(amdsmi_ctx_enumerate(ctx), 3);
        assert_string_equal(amdsmi_gpu_get_bdf(amdsmi_ctx_get_gpu(ctx, 0)), "0000:05:00.0");
        assert_string_equal(amdsmi_gpu_get_bdf(amdsmi_ctx_get_gpu(ctx, 1)), "0000:07:00.0");
        assert_string_equal(amdsmi_gpu_get_bdf(amdsmi_ctx_get_gpu(ctx, 2)), "0000:c1:00.0");
        assert_null(amdsmi_ctx_get_gpu(ctx, 3));

        gpu = amdsmi_ctx_get_gpu(ctx, 0);
        assert_int_equal(amdsmi_gpu_get_driver(gpu), AMDSMI_DRIVER_NONE);
        assert_null(amdsmi_gpu_get_driver_name(gpu));
        assert_string_equal(amdsmi_gpu_get_product(gpu), "MI300X");
        gpu = amdsmi_ctx_get_gpu(ctx, 1);
        assert_int_equal(amdsmi_gpu_get_driver(gpu), AMDSMI_DRIVER_VFIO_PCI);
        assert_string_equal(amdsmi_gpu_get_product(gpu), "AMD GPU 0x7551");
        gpu = amdsmi_ctx_get_gpu(ctx, 2);
        assert_int_equal(amdsmi_gpu_get_driver(gpu), AMDSMI_DRIVER_AMDGPU);
        assert_int_equal(amdsmi_gpu_get_role(gpu), AMDSMI_ROLE_BAREMETAL);
        assert_int_equal(amdsmi_gpu_get_numa_node(gpu), -1);
        assert_int_equal(amdsmi_gpu_get_partition_count(gpu), 0);

        /* lookups by address */
        assert_int_equal(amdsmi_ctx_find_gpu(ctx, "c1:00.0", &gpu), 0);
        assert_string_equal(amdsmi_gpu_get_bdf(gpu), "0000:c1:00.0");
        assert_int_equal(amdsmi_ctx_find_gpu(ctx, "0000:C1:00.0", &gpu), 0);
        assert_int_equal(amdsmi_ctx_find_gpu(ctx, "0000:02:00.0", &gpu), -ENODEV);
        assert_int_equal(amdsmi_ctx_find_gpu(ctx, "c1:00", &gpu), -EINVAL);
        assert_int_equal(amdsmi_ctx_find_gpu(ctx, "0000:c1:00.0x", &gpu), -EINVAL);
        assert_int_equal(amdsmi_ctx_find_gpu(ctx, "0000:c1:20.0", &gpu), -EINVAL);
        assert_int_equal(amdsmi_ctx_find_gpu(ctx, "", &gpu), -EINVAL);

        amdsmi_ctx_unref(ctx);
        tree_free(root);
}

static void test_roles(void **state) {
        char *root = tree_new();
        struct amdsmi_ctx *ctx;

        /* host: a PF with VFs enabled and one of its VFs */
        add_function(root, "0000:11:00.0", "0x1002\n", "0x74a1\n", "0x120000\n", "amdgpu");
        tree_file(root, "devices/pci0000:00/0000:11:00.0/sriov_numvfs", "1\n", -1, 0644);
        add_function(root, "0000:11:02.0", "0x1002\n", "0x74b5\n", "0x120000\n", "vfio-pci");
        tree_link(root, "devices/pci0000:00/0000:11:02.0/physfn", "../0000:11:00.0");
        /* a gim PF */
        add_function(root, "0000:12:00.0", "0x1002\n", "0x74a1\n", "0x120000\n", "gim");
        /* guests: a VF ID without physfn, with and without hwmon */
        add_function(root, "0000:21:00.0", "0x1002\n", "0x74b5\n", "0x120000\n", "amdgpu");
        tree_file(root, "devices/pci0000:00/0000:21:00.0/hwmon/hwmon0/name", "amdgpu\n", -1, 0444);
        add_function(root, "0000:22:00.0", "0x1002\n", "0x74b5\n", "0x120000\n", "amdgpu");
        ctx = ctx_on(root);

        /* physical functions first, then VFs, each in BDF order */
        assert_int_equal(amdsmi_ctx_enumerate(ctx), 5);
        assert_string_equal(amdsmi_gpu_get_bdf(amdsmi_ctx_get_gpu(ctx, 0)), "0000:11:00.0");
        assert_int_equal(amdsmi_gpu_get_role(amdsmi_ctx_get_gpu(ctx, 0)), AMDSMI_ROLE_HOST_PF);
        assert_string_equal(amdsmi_gpu_get_bdf(amdsmi_ctx_get_gpu(ctx, 1)), "0000:12:00.0");
        assert_int_equal(amdsmi_gpu_get_role(amdsmi_ctx_get_gpu(ctx, 1)), AMDSMI_ROLE_HOST_PF);
        assert_string_equal(amdsmi_gpu_get_bdf(amdsmi_ctx_get_gpu(ctx, 2)), "0000:11:02.0");
        assert_int_equal(amdsmi_gpu_get_index(amdsmi_ctx_get_gpu(ctx, 2)), 2);
        assert_int_equal(amdsmi_gpu_get_role(amdsmi_ctx_get_gpu(ctx, 2)), AMDSMI_ROLE_VF);
        assert_string_equal(amdsmi_gpu_get_physfn_bdf(amdsmi_ctx_get_gpu(ctx, 2)), "0000:11:00.0");
        assert_int_equal(amdsmi_gpu_get_role(amdsmi_ctx_get_gpu(ctx, 3)),
                         AMDSMI_ROLE_VF_GUEST_1VF);
        assert_int_equal(amdsmi_gpu_get_role(amdsmi_ctx_get_gpu(ctx, 4)),
                         AMDSMI_ROLE_VF_GUEST_MULTI);
        assert_true(amdsmi_gpu_is_vf(amdsmi_ctx_get_gpu(ctx, 4)));
        assert_string_equal(amdsmi_role_to_string(AMDSMI_ROLE_VF_GUEST_MULTI), "vf-guest-multi");

        amdsmi_ctx_unref(ctx);
        tree_free(root);
}

#define HW "devices/pci0000:00/0000:05:00.0/hwmon/hwmon4/"
#define DEV "devices/pci0000:00/0000:05:00.0/"

static void test_hwmon_garbage(void **state) {
        char *root = tree_new();
        struct amdsmi_ctx *ctx;
        struct amdsmi_hwmon h;
        struct amdsmi_gpu *gpu;
        enum amdsmi_compute_mode cm;
        enum amdsmi_memory_mode mm;

        add_function(root, "0000:05:00.0", "0x1002\n", "0x74a1\n", "0x120000\n", "amdgpu");
        tree_file(root, DEV "hwmon/hwmon2/name", "k10temp\n", -1, 0444); /* not ours */
        tree_file(root, HW "name", "amdgpu\n", -1, 0444);
        tree_file(root, HW "power1_input", "139000000\n", -1, 0444);
        tree_file(root, HW "power1_cap", "\n", -1, 0644);           /* SMU query failed */
        tree_file(root, HW "power1_cap_max", "75O000000\n", -1, 0444); /* garbage */
        tree_file(root, HW "power1_cap_min", "0\n", -1, 0444);
        /* power1_cap_default absent */
        tree_file(root, HW "temp2_input", "41000\n", -1, 0444);
        tree_file(root, HW "temp2_label", "junction\n", -1, 0444);
        tree_file(root, HW "temp3_input", "99999999999999999999\n", -1, 0444);
        tree_file(root, HW "temp3_label", "mem\n", -1, 0444);
        tree_file(root, HW "temp10_input", "30000\n", -1, 0444);
        tree_file(root, HW "freq1_input", "132000000\n", -1, 0444);
        tree_file(root, HW "freq1_label", "sclk\n", -1, 0444);
        tree_file(root, DEV "gpu_busy_percent", "7\n", -1, 0444);
        tree_file(root, DEV "current_compute_partition", "SPX\n", -1, 0644);
        tree_file(root, DEV "current_memory_partition", "NPS9\n", -1, 0644);
        ctx = ctx_on(root);
        assert_int_equal(amdsmi_ctx_enumerate(ctx), 1);
        gpu = amdsmi_ctx_get_gpu(ctx, 0);

        assert_int_equal(amdsmi_gpu_read_hwmon(gpu, &h), 0);
        assert_true(h.present);
        assert_int_equal(h.power_uw.error, 0);
        assert_int_equal(h.power_uw.value, 139000000);
        assert_int_equal(h.power_cap_uw.error, -ENOMSG);
        assert_int_equal(h.power_cap_max_uw.error, -EBADMSG);
        assert_int_equal(h.power_cap_min_uw.error, 0);
        assert_int_equal(h.power_cap_default_uw.error, -ENODATA);
        assert_true(h.power_cap_writable);
        assert_int_equal(h.ppt1_cap_uw.error, -ENODATA);
        assert_int_equal(h.n_temps, 3);
        assert_int_equal(h.temps[0].channel, 2);
        assert_string_equal(h.temps[0].label, "junction");
        assert_int_equal(h.temps[0].input.value, 41000);
        assert_int_equal(h.temps[0].crit.error, -ENODATA);
        assert_int_equal(h.temps[1].channel, 3);
        assert_int_equal(h.temps[1].input.error, -ERANGE);
        assert_int_equal(h.temps[2].channel, 10);
        assert_string_equal(h.temps[2].label, "");
        assert_int_equal(h.sclk_hz.value, 132000000);
        assert_int_equal(h.mclk_hz.error, -ENODATA);
        assert_int_equal(h.gpu_busy_percent.value, 7);
        assert_int_equal(h.mem_busy_percent.error, -ENODATA);

        assert_int_equal(amdsmi_gpu_read_compute_mode(gpu, &cm), 0);
        assert_int_equal(cm, AMDSMI_COMPUTE_SPX);
        mm = AMDSMI_MEMORY_NPS2;
        assert_int_equal(amdsmi_gpu_read_memory_mode(gpu, &mm), -EBADMSG);
        assert_int_equal(mm, AMDSMI_MEMORY_NPS2); /* untouched */

        amdsmi_ctx_unref(ctx);
        tree_free(root);
}

static void rm_tree(const char *root, const char *rel) {
        char *cmd;

        if (asprintf(&cmd, "rm -rf '%s/%s'", root, rel) < 0 || system(cmd) != 0)
                abort();
        free(cmd);
}

/* Later reads of one GPU object: what moves is read again, what is fixed while the driver is
 * bound comes from the first read unless it failed then; a directory that went away is
 * noticed. */
static void test_hwmon_later_reads(void **state) {
        char *root = tree_new();
        struct amdsmi_ctx *ctx;
        struct amdsmi_hwmon h;
        struct amdsmi_memory_info mem;
        struct amdsmi_gpu *gpu;

        add_function(root, "0000:05:00.0", "0x1002\n", "0x74a1\n", "0x120000\n", "amdgpu");
        tree_file(root, HW "name", "amdgpu\n", -1, 0444);
        tree_file(root, HW "power1_input", "139000000\n", -1, 0444);
        tree_file(root, HW "power1_cap", "750000000\n", -1, 0644);
        tree_file(root, HW "power1_cap_max", "75O000000\n", -1, 0444); /* garbage at first */
        tree_file(root, HW "power1_cap_min", "0\n", -1, 0444);
        tree_file(root, HW "temp2_input", "41000\n", -1, 0444);
        tree_file(root, HW "temp2_label", "junction\n", -1, 0444);
        tree_file(root, HW "temp2_crit", "110000\n", -1, 0444);
        tree_file(root, HW "freq1_input", "132000000\n", -1, 0444);
        tree_file(root, HW "freq1_label", "sclk\n", -1, 0444);
        tree_file(root, DEV "gpu_busy_percent", "7\n", -1, 0444);
        tree_file(root, DEV "mem_info_vram_total", "206158430208\n", -1, 0444);
        tree_file(root, DEV "mem_info_vram_used", "1000\n", -1, 0444);
        tree_file(root, DEV "mem_info_vis_vram_total", "206158430208\n", -1, 0444);
        tree_file(root, DEV "mem_info_gtt_total", "1099511627776\n", -1, 0444);
        ctx = ctx_on(root);
        assert_int_equal(amdsmi_ctx_enumerate(ctx), 1);
        gpu = amdsmi_ctx_get_gpu(ctx, 0);

        assert_int_equal(amdsmi_gpu_read_hwmon(gpu, &h), 0);
        assert_int_equal(h.power_cap_max_uw.error, -EBADMSG);
        assert_int_equal(h.temps[0].crit.value, 110000);
        assert_int_equal(amdsmi_gpu_read_memory_info(gpu, &mem), 0);
        assert_int_equal(mem.vram_used, 1000);

        /* everything moves (files rewritten in place, as sysfs renders them anew) */
        tree_file(root, HW "power1_input", "150000000\n", -1, 0444);
        tree_file(root, HW "power1_cap", "600000000\n", -1, 0644);
        tree_file(root, HW "power1_cap_max", "750000000\n", -1, 0444);
        tree_file(root, HW "temp2_input", "45000\n", -1, 0444);
        tree_file(root, HW "temp2_crit", "120000\n", -1, 0444);
        tree_file(root, HW "temp2_label", "other\n", -1, 0444);
        tree_file(root, HW "freq1_input", "140000000\n", -1, 0444);
        tree_file(root, DEV "gpu_busy_percent", "9\n", -1, 0444);
        tree_file(root, DEV "mem_info_vram_used", "2000\n", -1, 0444);
        tree_file(root, DEV "mem_info_vram_total", "1\n", -1, 0444);
        assert_int_equal(amdsmi_gpu_read_hwmon(gpu, &h), 0);
        assert_int_equal(h.power_uw.value, 150000000);
        assert_int_equal(h.power_cap_uw.value, 600000000);
        assert_int_equal(h.temps[0].input.value, 45000);
        assert_int_equal(h.sclk_hz.value, 140000000);
        assert_int_equal(h.gpu_busy_percent.value, 9);
        /* the failed limit is read again, and with it the rest of the first read */
        assert_int_equal(h.power_cap_max_uw.error, 0);
        assert_int_equal(h.power_cap_max_uw.value, 750000000);
        assert_int_equal(h.temps[0].crit.value, 120000);
        assert_string_equal(h.temps[0].label, "other");
        assert_int_equal(amdsmi_gpu_read_memory_info(gpu, &mem), 0);
        assert_int_equal(mem.vram_used, 2000);
        assert_int_equal(mem.vram_total, 206158430208ULL); /* fixed once read */

        /* now all read cleanly: fixed values stay, moving ones move */
        tree_file(root, HW "temp2_crit", "1\n", -1, 0444);
        tree_file(root, HW "temp2_input", "46000\n", -1, 0444);
        assert_int_equal(amdsmi_gpu_read_hwmon(gpu, &h), 0);
        assert_int_equal(h.temps[0].crit.value, 120000);
        assert_int_equal(h.temps[0].input.value, 46000);

        /* a new enumeration reads the fixed values again */
        assert_int_equal(amdsmi_ctx_enumerate(ctx), 1);
        gpu = amdsmi_ctx_get_gpu(ctx, 0);
        assert_int_equal(amdsmi_gpu_read_hwmon(gpu, &h), 0);
        assert_int_equal(h.temps[0].crit.value, 1);

        /* the directory went away (the kept files are closed, as a real sysfs fails them):
         * the sensors read absent, then the directory's loss is the read's error */
        sysfs_forget_kept(ctx);
        rm_tree(root, HW);
        assert_int_equal(amdsmi_gpu_read_hwmon(gpu, &h), 0);
        assert_int_equal(h.power_uw.error, -ENODATA);
        assert_int_equal(amdsmi_gpu_read_hwmon(gpu, &h), -ENOENT);

        amdsmi_ctx_unref(ctx);
        tree_free(root);
}

/* amdsmi_ctx_check_devices(): what makes a new enumeration necessary, cheaply. */
static void test_check_devices(void **state) {
        char *root = tree_new();
        struct amdsmi_ctx *ctx;
        char *path;

        add_function(root, "0000:05:00.0", "0x1002\n", "0x74a1\n", "0x120000\n", "amdgpu");
        add_function(root, "0000:06:00.0", "0x1002\n", "0x74a1\n", "0x120000\n", NULL);
        tree_file(root, HW "name", "amdgpu\n", -1, 0444);
        tree_file(root, "class/kfd/kfd/topology/generation_id", "3\n", -1, 0444);
        ctx = ctx_on(root);
        assert_int_equal(amdsmi_ctx_enumerate(ctx), 2);
        assert_int_equal(amdsmi_ctx_check_devices(ctx), 0);
        assert_int_equal(amdsmi_ctx_check_devices(ctx), 0);

        /* a new PCI function (hot-plug, a VF), even one that is no GPU */
        add_function(root, "0000:02:00.0", "0x1a03\n", "0x2000\n", "0x030000\n", "ast");
        assert_int_equal(amdsmi_ctx_check_devices(ctx), -ESTALE);
        assert_int_equal(amdsmi_ctx_enumerate(ctx), 2);
        assert_int_equal(amdsmi_ctx_check_devices(ctx), 0);

        /* a driver bound, unbound */
        tree_link(root, "devices/pci0000:00/0000:06:00.0/driver", "../../../bus/pci/drivers/vfio-pci");
        assert_int_equal(amdsmi_ctx_check_devices(ctx), -ESTALE);
        assert_int_equal(amdsmi_ctx_enumerate(ctx), 2);
        assert_int_equal(amdsmi_ctx_check_devices(ctx), 0);
        path = tree_path(root, "devices/pci0000:00/0000:05:00.0/driver");
        assert_int_equal(unlink(path), 0);
        free(path);
        assert_int_equal(amdsmi_ctx_check_devices(ctx), -ESTALE);
        tree_link(root, "devices/pci0000:00/0000:05:00.0/driver", "../../../bus/pci/drivers/amdgpu");
        assert_int_equal(amdsmi_ctx_check_devices(ctx), 0);

        /* the hwmon directory replaced (unbound and bound again between two checks) */
        rm_tree(root, HW);
        tree_file(root, DEV "hwmon/hwmon9/name", "amdgpu\n", -1, 0444);
        assert_int_equal(amdsmi_ctx_check_devices(ctx), -ESTALE);
        assert_int_equal(amdsmi_ctx_enumerate(ctx), 2);
        assert_int_equal(amdsmi_ctx_check_devices(ctx), 0);

        /* the KFD topology moved; a function gone */
        tree_file(root, "class/kfd/kfd/topology/generation_id", "4\n", -1, 0444);
        assert_int_equal(amdsmi_ctx_check_devices(ctx), -ESTALE);
        assert_int_equal(amdsmi_ctx_enumerate(ctx), 2);
        path = tree_path(root, "bus/pci/devices/0000:06:00.0");
        assert_int_equal(unlink(path), 0);
        free(path);
        assert_int_equal(amdsmi_ctx_check_devices(ctx), -ESTALE);
        assert_int_equal(amdsmi_ctx_enumerate(ctx), 1);
        assert_int_equal(amdsmi_ctx_check_devices(ctx), 0);

        amdsmi_ctx_unref(ctx);
        tree_free(root);
}

static void test_metrics_files(void **state) {
        char *root = tree_new();
        struct amdsmi_ctx *ctx;
        struct amdsmi_gpu_metrics m;
        struct amdsmi_hwmon h;
        struct amdsmi_gpu *gpu;
        uint8_t blob[300];

        add_function(root, "0000:05:00.0", "0x1002\n", "0x74a1\n", "0x120000\n", "amdgpu");
        add_function(root, "0000:06:00.0", "0x1002\n", "0x74a1\n", "0x120000\n", "amdgpu");
        add_function(root, "0000:07:00.0", "0x1002\n", "0x74a1\n", "0x120000\n", "amdgpu");
        add_function(root, "0000:08:00.0", "0x1002\n", "0x74a1\n", "0x120000\n", "amdgpu");
        /* 05: truncated v1.4 (size says 288, file has 100 bytes) */
        memset(blob, 0xff, sizeof(blob));
        blob[0] = 288 & 0xff;
        blob[1] = 288 >> 8;
        blob[2] = 1;
        blob[3] = 4;
        tree_file(root, DEV "gpu_metrics", (const char *) blob, 100, 0444);
        /* 06: unknown format revision 2 */
        blob[2] = 2;
        tree_file(root, "devices/pci0000:00/0000:06:00.0/gpu_metrics", (const char *) blob, 288,
                  0444);
        /* 07: empty file */
        tree_file(root, "devices/pci0000:00/0000:07:00.0/gpu_metrics", "", 0, 0444);
        /* 08: no gpu_metrics, no hwmon (multi-VF guest style) */
        ctx = ctx_on(root);
        assert_int_equal(amdsmi_ctx_enumerate(ctx), 4);

        memset(&m, 0xab, sizeof(m));
        gpu = amdsmi_ctx_get_gpu(ctx, 0);
        assert_int_equal(amdsmi_gpu_read_metrics(gpu, &m), -EBADMSG);
        assert_int_equal(m.structure_size, 0xabab); /* untouched */
        gpu = amdsmi_ctx_get_gpu(ctx, 1);
        assert_int_equal(amdsmi_gpu_read_metrics(gpu, &m), -EOPNOTSUPP);
        gpu = amdsmi_ctx_get_gpu(ctx, 2);
        assert_int_equal(amdsmi_gpu_read_metrics(gpu, &m), -EBADMSG);
        gpu = amdsmi_ctx_get_gpu(ctx, 3);
        assert_int_equal(amdsmi_gpu_read_metrics(gpu, &m), -ENODATA);
        assert_int_equal(amdsmi_gpu_read_hwmon(gpu, &h), 0);
        assert_false(h.present);
        assert_int_equal(h.power_uw.error, -ENODATA);
        assert_int_equal(h.n_temps, 0);

        amdsmi_ctx_unref(ctx);
        tree_free(root);
}

static void test_stale_topology(void **state) {
        char *root = tree_new();
        struct amdsmi_ctx *ctx;
        struct amdsmi_partition *p;
        struct amdsmi_gpu *gpu;

        add_function(root, "0000:05:00.0", "0x1002\n", "0x74a1\n", "0x120000\n", "amdgpu");
        tree_file(root, "class/kfd/kfd/topology/generation_id", "3\n", -1, 0444);
        tree_file(root, "class/kfd/kfd/topology/nodes/0/gpu_id", "0\n", -1, 0444);
        tree_file(root, "class/kfd/kfd/topology/nodes/0/properties",
                  "cpu_cores_count 96\nsimd_count 0\n", -1, 0444);
        tree_file(root, "class/kfd/kfd/topology/nodes/1/gpu_id", "48879\n", -1, 0444);
        tree_file(root, "class/kfd/kfd/topology/nodes/1/properties",
                  "simd_count 1216\nsimd_per_cu 4\nlocation_id 1280\ndomain 0\n"
                  "drm_render_minor 128\nhive_id 77\nnum_xcc 8\ngfx_target_version 90402\n",
                  -1, 0444);
        tree_file(root, "class/kfd/kfd/topology/nodes/1/mem_banks/0/properties",
                  "heap_type 1\nsize_in_bytes 206158430208\nflags 0\n", -1, 0444);
        ctx = ctx_on(root);
        assert_int_equal(amdsmi_ctx_enumerate(ctx), 1);
        gpu = amdsmi_ctx_get_gpu(ctx, 0);
        assert_int_equal(amdsmi_gpu_get_partition_count(gpu), 1);
        p = amdsmi_gpu_get_partition(gpu, 0);
        assert_int_equal(amdsmi_partition_get_kfd_node(p), 1);
        assert_int_equal(amdsmi_partition_get_kfd_gpu_id(p), 48879);
        assert_int_equal(amdsmi_partition_get_compute_units(p), 304);
        assert_int_equal(amdsmi_partition_get_xcc_count(p), 8);
        assert_int_equal(amdsmi_partition_get_memory_bytes(p), 206158430208ULL);
        assert_int_equal(amdsmi_gpu_get_hive_id(gpu), 77);
        {
                enum amdsmi_compute_mode cm = AMDSMI_COMPUTE_CPX;
                assert_int_equal(amdsmi_gpu_get_topology_compute_mode(gpu, &cm), 0);
                assert_int_equal(cm, AMDSMI_COMPUTE_SPX);
        }
        assert_int_equal(amdsmi_partition_check(p), 0);
        assert_int_equal(amdsmi_ctx_check_topology(ctx), 0);

        tree_file(root, "class/kfd/kfd/topology/generation_id", "5\n", -1, 0444);
        assert_int_equal(amdsmi_partition_check(p), -ESTALE);
        assert_int_equal(amdsmi_ctx_check_topology(ctx), -ESTALE);
        assert_int_equal(amdsmi_ctx_enumerate(ctx), 1);
        assert_int_equal(amdsmi_ctx_check_topology(ctx), 0);

        /* a garbage property: partitions unknown, enumeration itself still works */
        tree_file(root, "class/kfd/kfd/topology/nodes/1/properties",
                  "simd_count 12x6\nlocation_id 1280\ndomain 0\n", -1, 0444);
        assert_int_equal(amdsmi_ctx_enumerate(ctx), 1);
        assert_int_equal(amdsmi_gpu_get_partition_count(amdsmi_ctx_get_gpu(ctx, 0)), 0);
        assert_int_equal(amdsmi_gpu_get_partitions_error(amdsmi_ctx_get_gpu(ctx, 0)), -EBADMSG);
        {
                enum amdsmi_compute_mode cm = AMDSMI_COMPUTE_CPX;
                assert_int_equal(amdsmi_gpu_get_topology_compute_mode(amdsmi_ctx_get_gpu(ctx, 0),
                                                                      &cm),
                                 -ENODATA);
                assert_int_equal(cm, AMDSMI_COMPUTE_CPX);
        }

        /* an unattributable node (no location): the amdgpu GPU without nodes is unknown too */
        tree_file(root, "class/kfd/kfd/topology/nodes/1/properties", "garbage\n", -1, 0444);
        assert_int_equal(amdsmi_ctx_enumerate(ctx), 1);
        assert_int_equal(amdsmi_gpu_get_partitions_error(amdsmi_ctx_get_gpu(ctx, 0)), -EBADMSG);

        /* repaired: known again */
        tree_file(root, "class/kfd/kfd/topology/nodes/1/properties",
                  "simd_count 1216\nlocation_id 1280\ndomain 0\n", -1, 0444);
        assert_int_equal(amdsmi_ctx_enumerate(ctx), 1);
        assert_int_equal(amdsmi_gpu_get_partitions_error(amdsmi_ctx_get_gpu(ctx, 0)), 0);
        assert_int_equal(amdsmi_gpu_get_partition_count(amdsmi_ctx_get_gpu(ctx, 0)), 1);

        amdsmi_ctx_unref(ctx);
        tree_free(root);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_discovery_filters_and_orders),
                cmocka_unit_test(test_roles),
                cmocka_unit_test(test_hwmon_garbage),
                cmocka_unit_test(test_hwmon_later_reads),
                cmocka_unit_test(test_check_devices),
                cmocka_unit_test(test_metrics_files),
                cmocka_unit_test(test_stale_topology),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
