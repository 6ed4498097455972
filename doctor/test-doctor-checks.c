/* SPDX-License-Identifier: MIT */
/* The doctor's checks (doctor-checks.c) fed hand-made facts: each on both sides, with its
 * evidence and fix. */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* clang-format off */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
/* clang-format on */

#include "doctor.h"
#include "health-json.h"

static struct doctor_check c;

static void start(const char *id, const char *bdf) {
        doctor_check_init(&c, id, bdf ? 0 : -1, bdf);
}

static void done(void) {
        doctor_check_clear(&c);
}

static const char *ev(const char *key) {
        json_object *v = NULL;

        if (!json_object_object_get_ex(c.evidence, key, &v) || !v)
                return NULL;
        return json_object_get_string(v);
}

static void host_ok(struct amdsmi_host_info *h) {
        memset(h, 0, sizeof(*h));
        h->size = sizeof(*h);
        snprintf(h->cmdline, sizeof(h->cmdline),
                 "BOOT_IMAGE=/vmlinuz root=/dev/sda1 ro amd_iommu=on iommu=pt quiet");
        h->n_iommu_units = 2;
        snprintf(h->iommu_units[0], sizeof(h->iommu_units[0]), "ivhd0");
        snprintf(h->iommu_units[1], sizeof(h->iommu_units[1]), "ivhd1");
        h->interrupt_remapping = 1;
        h->irq_remapped = 12;
        h->vfio_pci_driver = 1;
        h->vfio_pci_module = 1;
}

static void test_cmdline(void **state) {
        char v[32];

        (void) state;
        assert_true(doctor_cmdline_has("ro iommu=pt", "iommu", "pt"));
        assert_false(doctor_cmdline_has("ro amd_iommu=on", "iommu", NULL));
        assert_true(doctor_cmdline_has("ro amd_iommu=on", "amd_iommu", "on"));
        /* the last one counts, as the kernel takes it */
        assert_true(doctor_cmdline_get("iommu=off x iommu=pt", "iommu", v, sizeof(v)));
        assert_string_equal(v, "pt");
        /* a bare name, quotes, and a prefix that is another name */
        assert_true(doctor_cmdline_has("a quiet b", "quiet", ""));
        assert_true(doctor_cmdline_get("x=\"a b\" y", "x", v, sizeof(v)));
        assert_string_equal(v, "a b");
        assert_false(doctor_cmdline_has("iommu.passthrough=1", "iommu", NULL));
        assert_false(doctor_cmdline_has("", "iommu", NULL));
        assert_false(doctor_cmdline_has(NULL, "iommu", NULL));
}

static void test_iommu(void **state) {
        struct amdsmi_host_info h;

        (void) state;
        host_ok(&h);
        start("iommu", NULL);
        doctor_check_iommu(&h, &c);
        assert_int_equal(c.status, DOCTOR_OK);
        assert_non_null(strstr(c.summary, "2 units"));
        assert_non_null(strstr(ev("cmdline"), "iommu=pt"));
        done();

        /* on, but without iommu=pt: a warning naming the parameters */
        snprintf(h.cmdline, sizeof(h.cmdline), "ro quiet");
        start("iommu", NULL);
        doctor_check_iommu(&h, &c);
        assert_int_equal(c.status, DOCTOR_WARN);
        assert_non_null(strstr(c.fix, "amd_iommu=on iommu=pt"));
        done();

        /* off: no unit; the command line said so */
        snprintf(h.cmdline, sizeof(h.cmdline), "ro amd_iommu=off");
        h.n_iommu_units = 0;
        h.iommu_error = -ENOENT;
        start("iommu", NULL);
        doctor_check_iommu(&h, &c);
        assert_int_equal(c.status, DOCTOR_FAIL);
        assert_non_null(strstr(c.summary, "amd_iommu=off"));
        assert_non_null(strstr(c.fix, "BIOS"));
        done();

        /* units, but iommu=off on the command line */
        host_ok(&h);
        snprintf(h.cmdline, sizeof(h.cmdline), "iommu=off");
        start("iommu", NULL);
        doctor_check_iommu(&h, &c);
        assert_int_equal(c.status, DOCTOR_FAIL);
        done();
}

static void test_interrupt_remapping(void **state) {
        struct amdsmi_host_info h;

        (void) state;
        host_ok(&h);
        start("interrupt_remapping", NULL);
        doctor_check_interrupt_remapping(&h, &c);
        assert_int_equal(c.status, DOCTOR_OK);
        done();

        h.interrupt_remapping = 0;
        h.irq_plain = 9;
        snprintf(h.cmdline, sizeof(h.cmdline), "ro intremap=off");
        start("interrupt_remapping", NULL);
        doctor_check_interrupt_remapping(&h, &c);
        assert_int_equal(c.status, DOCTOR_FAIL);
        assert_non_null(strstr(c.summary, "intremap=off"));
        assert_non_null(strstr(c.fix, "allow_unsafe_interrupts"));
        done();

        h.interrupt_remapping = -ENODATA;
        start("interrupt_remapping", NULL);
        doctor_check_interrupt_remapping(&h, &c);
        assert_int_equal(c.status, DOCTOR_WARN);
        done();
}

static void test_vfio(void **state) {
        struct amdsmi_host_info h;

        (void) state;
        host_ok(&h);
        start("vfio_pci", NULL);
        doctor_check_vfio_pci(&h, true, &c);
        assert_int_equal(c.status, DOCTOR_OK);
        done();

        h.vfio_pci_driver = 0;
        h.vfio_pci_module = 0;
        start("vfio_pci", NULL);
        doctor_check_vfio_pci(&h, true, &c);
        assert_int_equal(c.status, DOCTOR_FAIL);
        assert_non_null(strstr(c.fix, "modprobe vfio-pci"));
        done();

        start("vfio_pci", NULL);
        doctor_check_vfio_pci(&h, false, &c);
        assert_int_equal(c.status, DOCTOR_NOT_APPLICABLE);
        done();
}

static void test_iommu_group(void **state) {
        struct amdsmi_iommu_group g = { .group = 7, .n_devices = 1 };

        (void) state;
        snprintf(g.devices[0], sizeof(g.devices[0]), "0000:05:00.0");
        start("iommu_group", "0000:05:00.0");
        doctor_check_iommu_group(false, false, 0, &g, &c);
        assert_int_equal(c.status, DOCTOR_OK);
        done();

        /* shared: a warning for a GPU, a failure for a VF */
        g.n_devices = 2;
        snprintf(g.devices[1], sizeof(g.devices[1]), "0000:06:00.0");
        start("iommu_group", "0000:05:00.0");
        doctor_check_iommu_group(false, false, 0, &g, &c);
        assert_int_equal(c.status, DOCTOR_WARN);
        assert_non_null(strstr(c.summary, "0000:06:00.0"));
        assert_non_null(strstr(c.fix, "ACS"));
        assert_non_null(strstr(c.fix, "pcie_acs_override"));
        done();
        start("iommu_group", "0000:05:00.0");
        doctor_check_iommu_group(true, false, 0, &g, &c);
        assert_int_equal(c.status, DOCTOR_FAIL);
        done();

        start("iommu_group", "0000:05:00.0");
        doctor_check_iommu_group(false, false, -ENOENT, NULL, &c);
        assert_int_equal(c.status, DOCTOR_FAIL);
        done();
        start("iommu_group", "0000:05:00.0");
        doctor_check_iommu_group(false, true, -ENOENT, NULL, &c);
        assert_int_equal(c.status, DOCTOR_NOT_APPLICABLE);
        done();
}

static void test_gim(void **state) {
        struct doctor_gim_gpu g[2] = {
                { .bdf = "0000:05:00.0", .desired = 8, .loaded = 8, .num_vfs = 8 },
                { .bdf = "0000:26:00.0", .desired = -1, .loaded = 8, .num_vfs = 8 },
        };

        (void) state;
        start("gim_vf_num", NULL);
        doctor_check_gim(true, "8,8", g, 2, &c);
        assert_int_equal(c.status, DOCTOR_OK);
        done();

        g[0].desired = 4;
        start("gim_vf_num", NULL);
        doctor_check_gim(true, "8,8", g, 2, &c);
        assert_int_equal(c.status, DOCTOR_WARN);
        assert_non_null(strstr(c.summary, "0000:05:00.0: 4 desired, gim 8"));
        assert_non_null(strstr(c.fix, "amdsmi sriov set -g 0000:05:00.0 --num-vfs 4 --persist"));
        done();

        start("gim_vf_num", NULL);
        doctor_check_gim(false, "", NULL, 0, &c);
        assert_int_equal(c.status, DOCTOR_NOT_APPLICABLE);
        done();
}

static void test_hive(void **state) {
        struct amdsmi_firmware fa[2] = { { "mec", 0x9b, 0 }, { "sos", 0x1234, 0 } };
        struct amdsmi_firmware fb[2] = { { "mec", 0x9b, 0 }, { "sos", 0x1234, 0 } };
        struct doctor_hive_gpu g[3] = {
                { "0000:05:00.0", 0xabc, "amdgpu", 2, fa },
                { "0000:26:00.0", 0xabc, "amdgpu", 2, fb },
                { "0000:46:00.0", 0, "amdgpu", 0, NULL },
        };

        (void) state;
        start("hive_versions", NULL);
        doctor_check_hive(g, 3, &c);
        assert_int_equal(c.status, DOCTOR_OK);
        done();

        fb[1].version = 0x1235;
        start("hive_versions", NULL);
        doctor_check_hive(g, 3, &c);
        assert_int_equal(c.status, DOCTOR_WARN);
        assert_non_null(strstr(c.summary, "sos 0x00001234 on 0000:05:00.0, 0x00001235 on "
                                          "0000:26:00.0"));
        done();

        fb[1].version = 0x1234;
        snprintf(g[1].driver, sizeof(g[1].driver), "vfio-pci");
        start("hive_versions", NULL);
        doctor_check_hive(g, 3, &c);
        assert_int_equal(c.status, DOCTOR_WARN);
        assert_non_null(strstr(c.summary, "driver amdgpu"));
        done();

        start("hive_versions", NULL);
        doctor_check_hive(g + 2, 1, &c);
        assert_int_equal(c.status, DOCTOR_NOT_APPLICABLE);
        done();
}

static void test_xgmi(void **state) {
        struct health_links l = { .xgmi_known = 0x7f };

        (void) state;
        start("xgmi_links", "0000:05:00.0");
        doctor_check_xgmi(true, &l, &c);
        assert_int_equal(c.status, DOCTOR_OK);
        done();

        l.xgmi_down = 0x4;
        start("xgmi_links", "0000:05:00.0");
        doctor_check_xgmi(true, &l, &c);
        assert_int_equal(c.status, DOCTOR_FAIL);
        assert_string_equal(c.summary, "XGMI link 2 down (6 of 7 up)");
        done();

        start("xgmi_links", "0000:05:00.0");
        doctor_check_xgmi(false, NULL, &c);
        assert_int_equal(c.status, DOCTOR_NOT_APPLICABLE);
        done();
}

static void test_access(void **state) {
        struct doctor_node n[2] = {
                { .path = "/dev/kfd",
                  .mode = 020660,
                  .gid = 993,
                  .group = "render",
                  .members = "alice",
                  .n_members = 1,
                  .group_known = true },
                { .path = "DEV/dri/renderD128", .error = -ENOENT },
        };

        (void) state;
        start("device_access", NULL);
        doctor_check_access(n, 2, &c);
        assert_int_equal(c.status, DOCTOR_OK);
        done();

        /* a group without members */
        n[0].n_members = 0;
        n[0].members[0] = '\0';
        start("device_access", NULL);
        doctor_check_access(n, 2, &c);
        assert_int_equal(c.status, DOCTOR_WARN);
        assert_non_null(strstr(c.fix, "usermod -aG render"));
        done();

        /* root's only */
        n[0].mode = 020600;
        n[0].gid = 0;
        snprintf(n[0].group, sizeof(n[0].group), "root");
        start("device_access", NULL);
        doctor_check_access(n, 2, &c);
        assert_int_equal(c.status, DOCTOR_WARN);
        assert_non_null(strstr(c.summary, "only root"));
        assert_non_null(strstr(c.fix, "udev"));
        done();

        /* world-usable */
        n[0].mode = 020666;
        start("device_access", NULL);
        doctor_check_access(n, 2, &c);
        assert_int_equal(c.status, DOCTOR_OK);
        done();

        start("device_access", NULL);
        doctor_check_access(n + 1, 1, &c);
        assert_int_equal(c.status, DOCTOR_NOT_APPLICABLE);
        done();
}

static void test_daemon(void **state) {
        (void) state;
        start("amdsmid", NULL);
        doctor_check_daemon(1, "success", "", &c);
        assert_int_equal(c.status, DOCTOR_OK);
        done();
        start("amdsmid", NULL);
        doctor_check_daemon(0, NULL, NULL, &c);
        assert_int_equal(c.status, DOCTOR_WARN);
        assert_string_equal(c.fix, "systemctl enable --now amdsmid");
        done();
        start("amdsmid", NULL);
        doctor_check_daemon(1, "pending", "0000:05:00.0 power_cap_w", &c);
        assert_int_equal(c.status, DOCTOR_WARN);
        assert_non_null(strstr(c.summary, "power_cap_w"));
        done();
}

static void test_ras(void **state) {
        struct amdsmi_ras_info r = { .size = sizeof(r),
                                     .features = 0x3fff,
                                     .enabled_blocks = 0x3fff };

        (void) state;
        start("ras", "0000:05:00.0");
        doctor_check_ras(0, &r, false, &c);
        assert_int_equal(c.status, DOCTOR_OK);
        done();
        r.features = r.enabled_blocks = 0;
        start("ras", "0000:05:00.0");
        doctor_check_ras(0, &r, false, &c);
        assert_int_equal(c.status, DOCTOR_FAIL);
        assert_non_null(strstr(c.fix, "ras_enable"));
        done();
        r.enabled_blocks = 1u << AMDSMI_RAS_BLOCK_GFX;
        start("ras", "0000:05:00.0");
        doctor_check_ras(0, &r, false, &c);
        assert_int_equal(c.status, DOCTOR_WARN);
        done();
        start("ras", "0000:05:00.0");
        doctor_check_ras(-ENODATA, &r, true, &c);
        assert_int_equal(c.status, DOCTOR_NOT_APPLICABLE);
        done();
}

static void test_bad_pages(void **state) {
        (void) state;
        start("bad_pages", "0000:05:00.0");
        doctor_check_bad_pages(0, 10, 0, 100, 90, &c);
        assert_int_equal(c.status, DOCTOR_OK);
        done();
        /* at 90 % of the threshold: a warning; at the threshold: a failure */
        start("bad_pages", "0000:05:00.0");
        doctor_check_bad_pages(0, 89, 0, 100, 90, &c);
        assert_int_equal(c.status, DOCTOR_OK);
        done();
        start("bad_pages", "0000:05:00.0");
        doctor_check_bad_pages(0, 90, 0, 100, 90, &c);
        assert_int_equal(c.status, DOCTOR_WARN);
        done();
        start("bad_pages", "0000:05:00.0");
        doctor_check_bad_pages(0, 100, 0, 100, 90, &c);
        assert_int_equal(c.status, DOCTOR_FAIL);
        assert_non_null(strstr(c.fix, "RMA"));
        done();
        start("bad_pages", "0000:05:00.0");
        doctor_check_bad_pages(0, 100, -EACCES, 0, 90, &c);
        assert_int_equal(c.status, DOCTOR_OK);
        assert_non_null(strstr(c.summary, "needs root"));
        done();
        start("bad_pages", "0000:05:00.0");
        doctor_check_bad_pages(-ENODATA, 0, 0, 0, 90, &c);
        assert_int_equal(c.status, DOCTOR_NOT_APPLICABLE);
        done();
}

static void test_power(void **state) {
        (void) state;
        start("power_cap", "0000:05:00.0");
        doctor_check_power(750000000, "absent", 0, "/run/amdsmi/apml/0000:05:00.0", NULL, &c);
        assert_int_equal(c.status, DOCTOR_NOT_APPLICABLE);
        done();
        start("power_cap", "0000:05:00.0");
        doctor_check_power(650000000, "valid", 700000000, "/x", NULL, &c);
        assert_int_equal(c.status, DOCTOR_OK);
        done();
        start("power_cap", "0000:05:00.0");
        doctor_check_power(750000000, "valid", 700000000, "/x", NULL, &c);
        assert_int_equal(c.status, DOCTOR_WARN);
        assert_string_equal(c.summary, "the power cap (750 W) is above the BMC's APML limit "
                                       "(700 W)");
        assert_non_null(strstr(c.fix, "--apml 700W"));
        done();
        start("power_cap", "0000:05:00.0");
        doctor_check_power(750000000, "malformed", 0, "/x", "line 2: second value", &c);
        assert_int_equal(c.status, DOCTOR_WARN);
        done();
}

static void test_status(void **state) {
        json_object *o;

        (void) state;
        assert_int_equal(doctor_exit_status(DOCTOR_OK), 0);
        assert_int_equal(doctor_exit_status(DOCTOR_NOT_APPLICABLE), 0);
        assert_int_equal(doctor_exit_status(DOCTOR_WARN), 1);
        assert_int_equal(doctor_exit_status(DOCTOR_FAIL), 2);
        assert_int_equal(doctor_status_worst(DOCTOR_WARN, DOCTOR_FAIL), DOCTOR_FAIL);
        assert_int_equal(doctor_status_worst(DOCTOR_NOT_APPLICABLE, DOCTOR_OK), DOCTOR_OK);
        assert_string_equal(doctor_status_to_string(DOCTOR_NOT_APPLICABLE), "not_applicable");
        start("amdsmid", NULL);
        doctor_check_daemon(0, NULL, NULL, &c);
        o = doctor_check_json(&c);
        assert_string_equal(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN),
                            "{\"id\":\"amdsmid\",\"gpu\":null,\"bdf\":null,\"status\":\"warn\","
                            "\"summary\":\"amdsmid is not running: changes need root and are not "
                            "serialised, desired state is not kept across resets\","
                            "\"evidence\":{\"running\":false,\"sync_state\":null,\"drifted\":"
                            "null},\"fix\":\"systemctl enable --now amdsmid\"}");
        json_object_put(o);
        done();
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_cmdline),
                cmocka_unit_test(test_iommu),
                cmocka_unit_test(test_interrupt_remapping),
                cmocka_unit_test(test_vfio),
                cmocka_unit_test(test_iommu_group),
                cmocka_unit_test(test_gim),
                cmocka_unit_test(test_hive),
                cmocka_unit_test(test_xgmi),
                cmocka_unit_test(test_access),
                cmocka_unit_test(test_daemon),
                cmocka_unit_test(test_ras),
                cmocka_unit_test(test_bad_pages),
                cmocka_unit_test(test_power),
                cmocka_unit_test(test_status),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
