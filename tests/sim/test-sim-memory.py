#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Memory partition writes and the driver reload (spec amdgpu-sysfs.md §3, §2.3, §9 rule 3,
§7.1, virtualization.md §2.4) through write(2): the request is hive-wide and only remembered;
unbinding the last GPU of the hive from amdgpu and binding it again applies it and re-picks
the compute mode by the AUTO rule. Unbound GPUs lose every amdgpu file; bind, unbind,
driver_override and drivers_probe follow the driver core."""

import errno
import os
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from simtest import GPU0, GPU1, MI300X_BDFS, Mount, main  # noqa: E402

CMP = "current_memory_partition"
AMDGPU = "bus/pci/drivers/amdgpu/"


class Memory(unittest.TestCase):
    def test_request_is_only_remembered(self):
        with Mount("--seed", "1") as m:
            gen = m.generation()
            for token in ("NPS3", "NPS8", "nps", "foo", " NPS4", "SPX"):
                self.assertEqual(m.write(m.gpu(GPU0, CMP), token), errno.EINVAL, token)
            self.assertEqual(m.write(m.gpu(GPU0, CMP), "NPS1\n"), 0)     # same: skipped
            self.assertEqual(m.write(m.gpu(GPU0, CMP), "nps4\n"), 0)     # prefix, any case
            for bdf in MI300X_BDFS:
                self.assertEqual(m.value(m.gpu(bdf, CMP)), "NPS1")
                self.assertEqual(m.value(m.gpu(bdf, "current_compute_partition")), "SPX")
            self.assertEqual(m.generation(), gen)
            # one GPU reloaded alone: the hive is still up, nothing changes
            self.assertEqual(m.write(AMDGPU + "unbind", GPU0), 0)
            self.assertEqual(m.write(AMDGPU + "bind", GPU0), 0)
            self.assertEqual(m.value(m.gpu(GPU0, CMP)), "NPS1")
            self.assertEqual(len(m.gpu_nodes(GPU0)), 1)

    def test_unbind_removes_driver_files(self):
        with Mount("--seed", "1") as m:
            gen = m.generation()
            d = m.gpu(GPU0)
            hwmon = os.listdir(m.path(d + "/hwmon"))[0]
            self.assertTrue(os.path.lexists(m.path(AMDGPU + GPU0)))
            self.assertEqual(m.write(AMDGPU + "unbind", GPU0 + "\n"), 0)
            for f in ("driver", "drm", "hwmon", "current_compute_partition", CMP, "gpu_metrics",
                      "unique_id", "power_dpm_force_performance_level", "fw_version",
                      "product_name"):
                self.assertFalse(os.path.lexists(m.path(d + "/" + f)), f)
            for f in ("vendor", "device", "config", "uevent", "driver_override"):
                self.assertTrue(os.path.exists(m.path(d + "/" + f)), f)
            self.assertNotIn("DRIVER=", m.text(d + "/uevent"))
            self.assertEqual(m.value(d + "/enable"), "0")
            self.assertFalse(os.path.lexists(m.path(AMDGPU + GPU0)))
            self.assertFalse(os.path.lexists(m.path("class/hwmon/" + hwmon)))
            for p in range(8):
                self.assertFalse(os.path.lexists(m.path("class/drm/renderD%d" % (128 + p))))
                self.assertFalse(os.path.lexists(m.path("class/drm/card%d" % p)))
            for k in range(7):
                self.assertFalse(os.path.lexists(m.path("devices/platform/amdgpu_xcp_%d" % k)))
            self.assertEqual(m.gpu_nodes(GPU0), [])
            self.assertEqual(m.generation(), gen + 1)
            # errors of the driver core
            self.assertEqual(m.write(AMDGPU + "unbind", GPU0), errno.ENODEV)   # not bound
            self.assertEqual(m.write(AMDGPU + "bind", "0000:99:00.0"), errno.ENODEV)
            self.assertEqual(m.write(AMDGPU + "bind", GPU1), errno.EBUSY)      # bound already
            self.assertEqual(m.write("bus/pci/drivers/vfio-pci/bind", GPU0), errno.ENODEV)
            self.assertEqual(m.write(AMDGPU + "bind", "0000:00:01.1"), errno.ENODEV)  # a bridge
            # bound again: the same minors, hwmon and files as before
            self.assertEqual(m.write(AMDGPU + "bind", GPU0), 0)
            self.assertEqual(m.generation(), gen + 2)
            self.assertEqual(os.listdir(m.path(d + "/hwmon")), [hwmon])
            self.assertEqual(sorted(os.listdir(m.path(d + "/drm"))), ["card0", "renderD128"])
            self.assertEqual(m.value(d + "/enable"), "1")
            self.assertEqual([n[0] for n in m.gpu_nodes(GPU0)], [9])  # appended at the end
            self.assertEqual(m.gpu_nodes(GPU0)[0][1]["drm_render_minor"], 128)

    def test_reload_applies_nps(self):
        with Mount("--seed", "1") as m:
            self.assertEqual(m.write(m.gpu(GPU1, CMP), "NPS4"), 0)
            for bdf in MI300X_BDFS:
                self.assertEqual(m.write(AMDGPU + "unbind", bdf), 0)
            gen = m.generation()
            for bdf in MI300X_BDFS[:4]:
                self.assertEqual(m.write(AMDGPU + "bind", bdf), 0)
            # a shell does the rest, the way an admin would
            p = subprocess.run(["sh", "-c", "for d in %s; do echo $d > %s; done" % (
                " ".join(MI300X_BDFS[4:]), m.path(AMDGPU + "bind"))], capture_output=True,
                text=True)
            self.assertEqual(p.returncode, 0, p.stderr)
            for bdf in MI300X_BDFS:
                self.assertEqual(m.value(m.gpu(bdf, CMP)), "NPS4")
                self.assertEqual(m.value(m.gpu(bdf, "current_compute_partition")), "CPX")  # AUTO
                self.assertEqual(m.value(m.gpu(bdf, "available_compute_partition")), "QPX, CPX")
                self.assertEqual(len(m.gpu_nodes(bdf)), 8)
            self.assertEqual(m.generation(), gen + 64)
            self.assertEqual(len(m.kfd_nodes()), 2 + 64)
            minors = sorted(n[1]["drm_render_minor"] for n in m.kfd_nodes() if n[2])
            self.assertEqual(minors, list(range(128, 192)))
            # the request was used up: another reload keeps NPS4
            self.assertEqual(m.write(AMDGPU + "unbind", GPU0), 0)
            self.assertEqual(m.write(AMDGPU + "bind", GPU0), 0)
            self.assertEqual(m.value(m.gpu(GPU0, CMP)), "NPS4")
            # and back to NPS1: SPX
            self.assertEqual(m.write(m.gpu(GPU0, CMP), "NPS1"), 0)
            for bdf in MI300X_BDFS:
                self.assertEqual(m.write(AMDGPU + "unbind", bdf), 0)
            for bdf in MI300X_BDFS:
                self.assertEqual(m.write(AMDGPU + "bind", bdf), 0)
                self.assertEqual(m.value(m.gpu(bdf, "current_compute_partition")), "SPX")

    def test_mi350x_nps2(self):
        with Mount("--machine", "mi350x-8", "--seed", "1") as m:
            bdfs = [b for b in sorted(os.listdir(m.path("bus/pci/drivers/amdgpu")))
                    if b.startswith("0000:")]
            self.assertEqual(len(bdfs), 8)
            self.assertEqual(m.value(m.gpu(bdfs[0], "available_memory_partition")), "NPS1, NPS2")
            self.assertEqual(m.write(m.gpu(bdfs[0], CMP), "NPS4"), errno.EINVAL)
            self.assertEqual(m.write(m.gpu(bdfs[0], CMP), "NPS2"), 0)
            for bdf in bdfs:
                self.assertEqual(m.write(AMDGPU + "unbind", bdf), 0)
            for bdf in bdfs:
                self.assertEqual(m.write(AMDGPU + "bind", bdf), 0)
            self.assertEqual(m.value(m.gpu(bdfs[0], CMP)), "NPS2")
            self.assertEqual(m.value(m.gpu(bdfs[0], "current_compute_partition")), "DPX")
            self.assertEqual(m.value(m.gpu(bdfs[0], "available_compute_partition")),
                             "DPX, QPX, CPX")
            cpc = m.gpu(bdfs[0], "compute_partition_config/")
            self.assertEqual(m.value(cpc + "supported_nps_configs"), "NPS1, NPS2")
            self.assertEqual(m.value(cpc + "xcp_config"), "DPX")
            self.assertEqual(m.value(cpc + "xcc/num_inst"), "4")

    def test_mi300a_fixed(self):
        with Mount("--machine", "mi300a-4", "--seed", "1") as m:
            with self.assertRaises(OSError) as cm:
                os.open(m.path(m.gpu("0000:01:00.0", CMP)), os.O_WRONLY)
            self.assertEqual(cm.exception.errno, errno.EACCES)

    def test_vfio_override(self):
        with Mount("--seed", "1") as m:
            d = m.gpu(GPU1)
            self.assertEqual(m.write(d + "/driver_override", "vfio-pci\n"), 0)
            self.assertEqual(m.value(d + "/driver_override"), "vfio-pci")
            self.assertEqual(m.write(AMDGPU + "unbind", GPU1), 0)
            self.assertEqual(m.write(AMDGPU + "bind", GPU1), errno.ENODEV)  # override rules
            self.assertEqual(m.write("bus/pci/drivers_probe", GPU1), 0)
            self.assertTrue(os.readlink(m.path(d + "/driver")).endswith("/vfio-pci"))
            self.assertTrue(os.path.exists(m.path("bus/pci/drivers/vfio-pci/" + GPU1)))
            self.assertFalse(os.path.exists(m.path(d + "/drm")))
            self.assertIn("DRIVER=vfio-pci\n", m.text(d + "/uevent"))
            self.assertEqual(m.write("bus/pci/drivers_probe", "0000:99:00.0"), errno.ENODEV)
            # and back: clear the override, unbind, probe
            self.assertEqual(m.write(d + "/driver_override", "\n"), 0)
            self.assertEqual(m.value(d + "/driver_override"), "(null)")
            self.assertEqual(m.write("bus/pci/drivers/vfio-pci/unbind", GPU1), 0)
            self.assertEqual(m.write("bus/pci/drivers_probe", GPU1), 0)
            self.assertTrue(os.readlink(m.path(d + "/driver")).endswith("/amdgpu"))
            self.assertEqual(len(m.gpu_nodes(GPU1)), 1)
            # new_id: amdgpu matches these already; vfio-pci takes the unbound ones
            self.assertEqual(m.write(AMDGPU + "new_id", "1002 74a1"), errno.EEXIST)
            self.assertEqual(m.write(AMDGPU + "new_id", "1002"), errno.EINVAL)
            self.assertEqual(m.write(AMDGPU + "unbind", GPU1), 0)
            self.assertEqual(m.write("bus/pci/drivers/vfio-pci/new_id", "1002 74a1"), 0)
            self.assertTrue(os.readlink(m.path(d + "/driver")).endswith("/vfio-pci"))
            self.assertTrue(os.readlink(m.path(m.gpu(GPU0, "driver"))).endswith("/amdgpu"))
            self.assertEqual(m.write("bus/pci/drivers/vfio-pci/remove_id", "1002 74a1"), 0)
            self.assertEqual(m.write("bus/pci/drivers/vfio-pci/remove_id", "1002 74a1"),
                             errno.ENODEV)


if __name__ == "__main__":
    main()
