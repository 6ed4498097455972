#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""The tree of every built-in machine, mounted: ls -R and find walk it without error, and it
follows sysfs' rules (spec amdgpu-sysfs.md §0.1, §1, §2.1, §3.1, §4.2, §6, §9 rule 1): modes,
one trailing newline, relative links that stay inside and resolve, the PCI core files, drivers
and IOMMU groups, DRM cards and render nodes, hwmon, and the KFD topology."""

import errno
import os
import stat
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from simtest import BAREMETAL_PRESETS, MI300X_BDFS, PRESETS, Mount, main, walk  # noqa: E402

BINARY = ("gpu_metrics", "xcp_metrics", "config")
MODES = (0o444, 0o644, 0o400, 0o200, 0o600)
PCI_FILES = ("vendor", "device", "subsystem_vendor", "subsystem_device", "revision", "class",
             "numa_node", "local_cpulist", "driver_override", "config", "resource", "irq",
             "modalias", "uevent", "enable", "subsystem", "iommu_group")
HIDDEN_HWMON = ("power1_average", "temp1_input", "in0_input", "in1_input", "fan1_input", "pwm1",
                "energy1_input")


class Tree(unittest.TestCase):
    def check_generic(self, m, name):
        """Every entry: directory 0755, file modes of sysfs, text with one newline, links."""
        entries = walk(m.root)
        self.assertGreater(len(entries), 250 if "-guest-" in name else 1000)
        rootr = os.path.realpath(m.root)
        for rel, st in entries.items():
            full = m.path(rel)
            if stat.S_ISLNK(st.st_mode):
                target = os.readlink(full)
                self.assertFalse(target.startswith("/"), rel)
                real = os.path.realpath(full)
                self.assertTrue(real.startswith(rootr + "/"), "%s leaves the tree" % rel)
                self.assertTrue(os.path.exists(full), "%s dangles (%s)" % (rel, target))
            elif stat.S_ISDIR(st.st_mode):
                # debugfs is mounted root-only (health-and-control.md §2)
                self.assertEqual(stat.S_IMODE(st.st_mode),
                                 0o700 if rel == "kernel/debug" else 0o755, rel)
            else:
                self.assertTrue(stat.S_ISREG(st.st_mode), rel)
                mode = stat.S_IMODE(st.st_mode)
                self.assertIn(mode, MODES, "%s: %o" % (rel, mode))
                if not mode & 0o444:
                    continue
                name = os.path.basename(rel)
                if name == "xgmi_error" and m.read_errno(rel) == errno.EINVAL:
                    continue    # no FICA in the data fabric (test-sim-links.py)
                data = m.read(rel)
                if name in BINARY:
                    self.assertGreater(len(data), 0, rel)
                elif name == "unique_id" and data == b"":
                    pass        # the kernel prints nothing for an id of 0
                elif name in ("gpu_vram_bad_pages", "amdgpu_ring_cper"):
                    pass        # binary (test-sim-health.py): empty without bad pages
                else:
                    self.assertTrue(data.endswith(b"\n") and not data.endswith(b"\n\n"),
                                    "%s: %r" % (rel, data[-30:]))
        return entries

    def check_tools(self, m):
        for cmd in (["ls", "-lR", m.root], ["find", m.root, "-xdev"],
                    ["find", "-L", m.path("class"), "-maxdepth", "2"]):
            p = subprocess.run(cmd, capture_output=True, text=True)
            self.assertEqual(p.returncode, 0, "%s: %s" % (cmd, p.stderr[-500:]))
            self.assertEqual(p.stderr, "")

    def gpus(self, m):
        """BDFs of the AMD GPUs, in BDF order."""
        out = []
        for bdf in sorted(os.listdir(m.path("bus/pci/devices"))):
            if m.value("bus/pci/devices/%s/vendor" % bdf) == "0x1002":
                out.append(bdf)
        return out

    def check_pci(self, m, name):
        vm = "-guest-" in name          # no virtual IOMMU: no groups
        gim = "-gim-" in name           # amdgpu is not loaded on a gim host
        for bdf in os.listdir(m.path("bus/pci/devices")):
            d = "bus/pci/devices/" + bdf
            for f in PCI_FILES:
                self.assertEqual(os.path.lexists(m.path(d + "/" + f)),
                                 not (vm and f == "iommu_group"), "%s/%s" % (bdf, f))
            self.assertEqual(os.readlink(m.path(d + "/subsystem")).split("/")[-2:], ["bus", "pci"])
            if not vm:
                group = os.readlink(m.path(d + "/iommu_group")).split("/")[-1]
                self.assertTrue(os.path.samefile(
                    m.path("kernel/iommu_groups/%s/devices/%s" % (group, bdf)), m.path(d)))
            uevent = m.text(d + "/uevent")
            self.assertIn("PCI_SLOT_NAME=%s\n" % bdf, uevent)
            self.assertIn("MODALIAS=%s" % m.value(d + "/modalias"), uevent)
            self.assertRegex(m.value(d + "/modalias"), r"^pci:v0000[0-9A-F]{4}d0000[0-9A-F]{4}")
            self.assertEqual(m.value(d + "/driver_override"), "(null)")
            bridge = m.value(d + "/class").startswith("0x0604")
            self.assertEqual(len(m.text(d + "/resource").splitlines()), 17 if bridge else 13)
            if os.path.lexists(m.path(d + "/driver")):
                drv = os.path.basename(os.readlink(m.path(d + "/driver")))
                self.assertIn("DRIVER=%s\n" % drv, uevent)
                self.assertTrue(os.path.samefile(m.path("bus/pci/drivers/%s/%s" % (drv, bdf)),
                                                 m.path(d)))
                # vfio-pci enables the device only when a user opens it
                self.assertEqual(m.value(d + "/enable"), "0" if drv == "vfio-pci" else "1")
        for drv in ("amdgpu", "gim", "vfio-pci"):
            self.assertEqual(os.path.isdir(m.path("bus/pci/drivers/" + drv)),
                             not (gim and drv == "amdgpu"), drv)
            for f in ("bind", "unbind", "new_id", "remove_id"):
                if gim and drv == "amdgpu":
                    continue
                st = os.stat(m.path("bus/pci/drivers/%s/%s" % (drv, f)))
                self.assertEqual(st.st_mode & 0o777, 0o200)
        self.assertEqual(os.stat(m.path("bus/pci/drivers_probe")).st_mode & 0o777, 0o200)
        if gim:
            self.assertFalse(os.path.exists(m.path("module/amdgpu")))
        else:
            self.assertEqual(m.text("module/amdgpu/initstate"), "live\n")

    def check_gpus(self, m, name):
        gpus = self.gpus(m)
        bmc = name.endswith("-bmc")
        apu = name.startswith("mi300a")
        newer = name.startswith("mi35")
        self.assertEqual(len(gpus), 4 if apu else 8)
        if name.startswith("mi300x"):
            self.assertEqual(gpus, MI300X_BDFS)
        hwmons = set()
        for k, bdf in enumerate(gpus):
            d = "bus/pci/devices/" + bdf
            self.assertEqual(os.path.basename(os.readlink(m.path(d + "/driver"))), "amdgpu")
            # DRM: 8 devices, partition 0 on the PCI function (§1.3)
            cards = sorted(os.listdir(m.path(d + "/drm")))
            self.assertEqual(cards, sorted(["card%d" % (8 * k + int(bmc)),
                                            "renderD%d" % (128 + 8 * k)]))
            for p in range(1, 8):
                card = "card%d" % (8 * k + p + int(bmc))
                render = "renderD%d" % (128 + 8 * k + p)
                xcp = "devices/platform/amdgpu_xcp_%d" % (7 * k + p - 1)
                for node in (card, render):
                    self.assertTrue(os.path.samefile(m.path("class/drm/%s/device" % node),
                                                     m.path(xcp)), node)
                self.assertEqual(m.value("class/drm/%s/dev" % render), "226:%d" % (128 + 8 * k + p))
            self.assertEqual(m.value("class/drm/renderD%d/device/vendor" % (128 + 8 * k)), "0x1002")
            # partition files (§2.1, §3.1)
            st = os.stat(m.path(d + "/current_compute_partition"))
            self.assertEqual(stat.S_IMODE(st.st_mode), 0o644)
            self.assertEqual(m.value(d + "/current_compute_partition"), "SPX")
            self.assertEqual(m.value(d + "/available_compute_partition"),
                             "SPX, TPX, CPX" if apu else "SPX, DPX, QPX, CPX")
            mem_mode = stat.S_IMODE(os.stat(m.path(d + "/current_memory_partition")).st_mode)
            self.assertEqual(mem_mode, 0o444 if apu else 0o644)
            self.assertEqual(os.path.exists(m.path(d + "/available_memory_partition")), not apu)
            self.assertEqual(m.value(d + "/current_memory_partition"), "NPS1")
            self.assertEqual(os.path.isdir(m.path(d + "/compute_partition_config")), newer)
            self.assertEqual(os.path.exists(m.path(d + "/compute_partition_mem_alloc_mode")),
                             not newer)
            # identity (§1.4)
            self.assertRegex(m.value(d + "/unique_id"), r"^[0-9a-f]{16}$")
            self.assertEqual(os.path.exists(m.path(d + "/product_name")), not apu)
            self.assertEqual(os.path.exists(m.path(d + "/vbios_build")), newer)
            # hwmon (§4.2)
            (h,) = os.listdir(m.path(d + "/hwmon"))
            hw = "class/hwmon/" + h
            self.assertTrue(os.path.samefile(m.path(hw), m.path(d + "/hwmon/" + h)))
            self.assertTrue(os.path.samefile(m.path(hw + "/device"), m.path(d)))
            self.assertEqual(m.value(hw + "/name"), "amdgpu")
            hwmons.add(h)
            files = set(os.listdir(m.path(hw)))
            for f in HIDDEN_HWMON:
                self.assertNotIn(f, files)
            self.assertEqual("power2_cap" in files, newer)
            self.assertEqual("temp2_crit_hyst" in files, not apu)
            for f in files:
                if os.path.islink(m.path(hw + "/" + f)):
                    continue
                want = 0o644 if f in ("power1_cap", "power2_cap") else 0o444
                self.assertEqual(stat.S_IMODE(os.stat(m.path(hw + "/" + f)).st_mode), want, f)
            self.assertEqual(m.value(hw + "/power1_label"), "PPT")
            self.assertEqual(m.value(hw + "/temp2_label"), "junction")
            self.assertEqual(int(m.value(hw + "/power1_input")) % 1000000, 0)
        self.assertEqual(len(hwmons), len(gpus))
        if bmc:
            self.assertEqual(m.value("class/drm/card0/device/vendor"), "0x1a03")
            self.assertEqual(os.path.basename(os.readlink(m.path("class/drm/card0/device/driver"))),
                             "ast")
            self.assertEqual(m.value("class/drm/card0-VGA-1/status"), "connected")
        return gpus

    def check_kfd(self, m, gpus, name):
        nodes = m.kfd_nodes()
        cpus = 4 if name.startswith("mi300a") else 2
        self.assertEqual(len(nodes), cpus + len(gpus))
        self.assertEqual(m.generation(), 1 + len(gpus))
        self.assertEqual(m.text("class/kfd/kfd/topology/system_properties"),
                         "platform_oem 0\nplatform_id 0\nplatform_rev 0\n")
        ids = set()
        for i, (idx, props, gpu_id) in enumerate(nodes):
            self.assertEqual(idx, i)
            if i < cpus:
                self.assertEqual((gpu_id, props["simd_count"]), (0, 0))
                continue
            k = i - cpus
            self.assertNotEqual(gpu_id, 0)
            self.assertNotIn(gpu_id, ids)
            ids.add(gpu_id)
            self.assertEqual(props["drm_render_minor"], 128 + 8 * k)
            dom, bus = int(gpus[k][:4], 16), int(gpus[k][5:7], 16)
            self.assertEqual((props["domain"], props["location_id"]), (dom, bus << 8))
            self.assertEqual(props["num_xcc"], 6 if name.startswith("mi300a") else 8)
            self.assertEqual(props["simd_count"],
                             4 * props["num_xcc"] * (32 if name.startswith("mi35") else 38))
            links = os.listdir(m.path("class/kfd/kfd/topology/nodes/%d/io_links" % i))
            self.assertEqual(props["io_links_count"], len(links))
            self.assertEqual(m.value("class/kfd/kfd/topology/nodes/%d/name" % i), "ip discovery")
            unique = int(m.value("bus/pci/devices/%s/unique_id" % gpus[k]), 16)
            self.assertEqual(props["unique_id"], unique)

    def test_presets(self):
        for name in PRESETS:
            with self.subTest(machine=name), Mount("--machine", name, "--seed", "1") as m:
                self.check_generic(m, name)
                self.check_tools(m)
                self.check_pci(m, name)
                # the SR-IOV presets' GPUs: test-sim-sriov.py (mi300x-sriov is mi300x-8 at load)
                if name in BAREMETAL_PRESETS or name == "mi300x-sriov":
                    gpus = self.check_gpus(m, name)
                    self.check_kfd(m, gpus, name)


if __name__ == "__main__":
    main()
