#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""SR-IOV in amdsmi-sim (spec amdgpu-sysfs.md §7, §9 rule 7; virtualization.md §1, §2) through
the kernel's VFS and ordinary tools: the gim hosts (PFs under gim with gim's files, VFs made at
load from vf_num), the VMs (one-VF and multi-VF visibility), the synthetic mi300x-sriov host;
sriov_numvfs with the PCI core's checks and errno (EINVAL, ERANGE, the no-op, ENOENT for no
driver and for drivers without sriov_configure, EBUSY), VFs appearing and disappearing with
virtfnN/physfn links, IOMMU groups and bus/pci/devices entries, sriov_drivers_autoprobe, the
driver_override + unbind + drivers_probe recipe to vfio-pci, vfio-pci.enable_sriov, gim's
stores, and the description's SR-IOV fields."""

import errno
import json
import os
import stat
import struct
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from simtest import MI300X_BDFS, NOBODY, Mount, main, sim, vf_bdf  # noqa: E402

GPU0, GPU1 = MI300X_BDFS[0], MI300X_BDFS[1]
SRIOV_FILES = {"sriov_totalvfs": 0o444, "sriov_numvfs": 0o644, "sriov_offset": 0o444,
               "sriov_stride": 0o444, "sriov_vf_device": 0o444, "sriov_drivers_autoprobe": 0o644,
               "sriov_vf_total_msix": 0o444}
GIM_FILES = {"self_switch": 0o600, "reset_gpu": 0o400, "psp_vbflash_status": 0o444,
             "accelerator_partition_profile": 0o600, "memory_partition_mode": 0o600,
             "spatial_partition_mode": 0o400, "accelerator_partition_profile_config": 0o400,
             "memory_partition_config": 0o400, "spatial_partition_caps": 0o400}
GIM_DRIVER_FILES = ("self_switch", "force_hot_reset", "live_update")
FRU_FILES = ("serial_number", "product_name", "product_number", "manufacturer", "fru_id")
PM_FILES = ("gpu_metrics", "gpu_busy_percent", "mem_busy_percent",
            "power_dpm_force_performance_level", "pp_dpm_sclk", "pp_dpm_mclk",
            "thermal_throttling_logging", "unique_id")
GUEST = "0000:01:00.0"
GiB = 1 << 30


def sriov_cap(cfg):
    """(ctrl, total, num, offset, stride, vf device) of the SR-IOV capability at 0x100."""
    header = struct.unpack_from("<I", cfg, 0x100)[0]
    assert header & 0xffff == 0x10, "no SR-IOV capability at 0x100: %#x" % header
    ctrl = struct.unpack_from("<H", cfg, 0x108)[0]
    total, num = struct.unpack_from("<HH", cfg, 0x10e)
    offset, stride = struct.unpack_from("<HH", cfg, 0x114)
    did = struct.unpack_from("<H", cfg, 0x11a)[0]
    return ctrl, total, num, offset, stride, did


def sh(cmd):
    """A shell command line; bash, whose echo reports a write's errno (dash's says "I/O error").
    An empty write(2) never reaches the store, so no test writes "" (it succeeds, as in sysfs)."""
    return subprocess.run(["bash", "-c", cmd], capture_output=True, text=True)


class Sriov(unittest.TestCase):
    def mode(self, m, rel):
        return stat.S_IMODE(os.lstat(m.path(rel)).st_mode)

    def exists(self, m, rel):
        return os.path.lexists(m.path(rel))

    def driver(self, m, bdf):
        link = m.path("bus/pci/devices/%s/driver" % bdf)
        return os.path.basename(os.readlink(link)) if os.path.lexists(link) else None

    def devices(self, m):
        return sorted(os.listdir(m.path("bus/pci/devices")))

    def groups(self, m):
        return set(os.listdir(m.path("kernel/iommu_groups")))

    def check_vf(self, m, pf, i, driver):
        """VF i of @pf as the PCI core shows it, with links both ways and its own group."""
        vf = vf_bdf(pf, i)
        d = m.gpu(vf)
        self.assertTrue(os.path.samefile(m.path(m.gpu(pf, "virtfn%d" % i)), m.path(d)), vf)
        self.assertEqual(os.readlink(m.path(m.gpu(pf, "virtfn%d" % i))), "../" + vf)
        self.assertEqual(os.readlink(m.path(d + "/physfn")), "../" + pf)
        self.assertEqual((m.value(d + "/vendor"), m.value(d + "/device")), ("0x1002", "0x74b5"))
        self.assertEqual(m.value(d + "/class"), m.value(m.gpu(pf, "class")))
        self.assertEqual(m.value(d + "/subsystem_device"), m.value(m.gpu(pf, "subsystem_device")))
        self.assertEqual(m.value(d + "/numa_node"), m.value(m.gpu(pf, "numa_node")))
        self.assertEqual((m.value(d + "/current_link_speed"), m.value(d + "/irq")),
                         ("Unknown", "0"))
        for f in SRIOV_FILES:
            self.assertFalse(self.exists(m, d + "/" + f), f)
        self.assertEqual(self.mode(m, d + "/sriov_vf_msix_count"), 0o200)
        self.assertEqual(self.driver(m, vf), driver)
        uevent = m.text(d + "/uevent")
        self.assertIn("PCI_ID=1002:74B5\n", uevent)
        self.assertEqual("DRIVER=" in uevent, driver is not None)
        # config space as a VF: IDs read 0xffff, no SR-IOV capability of its own
        cfg = m.read(d + "/config")
        self.assertEqual(len(cfg), 4096)
        self.assertEqual(struct.unpack_from("<HH", cfg, 0), (0xffff, 0xffff))
        self.assertEqual(struct.unpack_from("<I", cfg, 0x100)[0] & 0xffff, 0)
        group = os.readlink(m.path(d + "/iommu_group")).split("/")[-1]
        self.assertEqual(os.listdir(m.path("kernel/iommu_groups/%s/devices" % group)), [vf])
        return vf, group

    def check_pf_sriov(self, m, pf, num, vf_device=0x74b5):
        d = m.gpu(pf)
        for f, mode in SRIOV_FILES.items():
            self.assertEqual(self.mode(m, d + "/" + f), mode, f)
        self.assertEqual([m.value(d + "/" + f) for f in
                          ("sriov_totalvfs", "sriov_numvfs", "sriov_offset", "sriov_stride",
                           "sriov_vf_device", "sriov_vf_total_msix")],
                         ["8", str(num), "16", "1", "%x" % vf_device, "0"])
        ctrl, total, numvfs, offset, stride, did = sriov_cap(m.read(d + "/config"))
        self.assertEqual((total, numvfs, offset, stride, did), (8, num, 16, 1, vf_device))
        self.assertEqual(ctrl & 1, 1 if num else 0)     # VF Enable
        links = sorted(f for f in os.listdir(m.path(d)) if f.startswith("virtfn"))
        self.assertEqual(links, sorted("virtfn%d" % i for i in range(num)))

    # ---------------------------------------------------------------------------------------
    # The presets at load

    def test_gim_hosts(self):
        for name, vfs in (("mi300x-gim-1vf", 1), ("mi300x-gim-8vf", 8)):
            with self.subTest(machine=name), Mount("-m", name, "--seed", "1") as m:
                # amdgpu is not loaded: no module, driver, KFD, DRM or hwmon of the GPUs
                for rel in ("module/amdgpu", "bus/pci/drivers/amdgpu", "class/kfd",
                            "devices/virtual/kfd"):
                    self.assertFalse(self.exists(m, rel), rel)
                self.assertEqual(os.listdir(m.path("class/drm")), ["version"])
                p = "module/gim/parameters/"
                self.assertEqual(m.value(p + "vf_num"), ",".join([str(vfs)] * 8))
                self.assertEqual(m.value(p + "enabled_devices"), ";".join(MI300X_BDFS))
                self.assertEqual(self.mode(m, p + "vf_num"), 0o444)
                self.assertEqual(m.value("module/vfio_pci/parameters/enable_sriov"), "N")
                for f in GIM_DRIVER_FILES:
                    self.assertEqual(self.mode(m, "bus/pci/drivers/gim/" + f), 0o600)
                self.assertEqual(m.text("bus/pci/drivers/gim/self_switch"),
                                 "".join("Adapter[%s] : %d\n" % (b, vfs > 1) for b in MI300X_BDFS))
                groups = set()
                for pf in MI300X_BDFS:
                    d = m.gpu(pf)
                    self.assertEqual(self.driver(m, pf), "gim")
                    for sub in ("drm", "hwmon", "current_compute_partition", "gpu_metrics"):
                        self.assertFalse(self.exists(m, d + "/" + sub), sub)
                    for f, mode in GIM_FILES.items():
                        self.assertEqual(self.mode(m, d + "/" + f), mode, f)
                    self.check_pf_sriov(m, pf, vfs)
                    for i in range(vfs):
                        vf, group = self.check_vf(m, pf, i, "vfio-pci" if vfs == 8 else None)
                        self.assertNotIn(group, groups)
                        groups.add(group)
                # gim's formats (spec §7.3)
                d = m.gpu(GPU0)
                cpx = vfs == 8
                self.assertEqual(m.value(d + "/spatial_partition_mode"), "CPX" if cpx else "SPX")
                mpm = m.text(d + "/memory_partition_mode").splitlines()
                self.assertEqual(mpm[:2], ["memory_partition_mode: NPS%d" % (4 if cpx else 1),
                                           "numa_count: %d" % (4 if cpx else 1)])
                self.assertRegex(mpm[2], r"^NUMA0 type=\d+ start=0x0{16} end=0x[0-9a-f]{16}$")
                self.assertEqual(m.text(d + "/memory_partition_config"), "NPS1 NPS2 NPS4 \n")
                self.assertEqual(m.text(d + "/spatial_partition_caps"),
                                 "num_xcc=8 num_sdma=16 num_vcn=4 num_jpeg=32\n")
                prof = m.text(d + "/accelerator_partition_profile").splitlines()
                self.assertEqual(prof[0].split(), ["profile_index", "profile_type",
                                                   "num_of_partitions", "num_of_resources",
                                                   "resource_index_in_resource_profiles"])
                self.assertEqual(prof[1].split()[:4], ["3", "CPX", "8", "4"] if cpx
                                 else ["0", "SPX", "1", "4"])
                cfg = m.text(d + "/accelerator_partition_profile_config")
                self.assertIn("resource_profiles:\n", cfg)
                types = [ln.split()[1] for ln in cfg.split("profiles:\n")[2].splitlines()[1:]]
                self.assertEqual(types, ["SPX", "DPX", "QPX", "CPX"])
                self.assertEqual(m.value(d + "/self_switch"), "1" if cpx else "0")
                self.assertEqual(m.text(d + "/reset_gpu"), "dev(%s) reset completed\n" % GPU0)
                self.assertEqual(m.value(d + "/psp_vbflash_status"), "0x0")
                # a VF's config space: 64 bytes for others than root (vendor 0xffff)
                vf = vf_bdf(GPU0, 0)
                p = subprocess.run(NOBODY + ["cat", m.path(m.gpu(vf, "config"))],
                                   capture_output=True)
                self.assertEqual((p.returncode, len(p.stdout)), (0, 64))
                self.assertEqual(p.stdout[:4], b"\xff\xff\xff\xff")
                for bdf in self.devices(m):
                    self.assertEqual(self.exists(m, m.gpu(bdf, "physfn")),
                                     m.value(m.gpu(bdf, "device")) == "0x74b5")
                self.assertEqual(len(self.devices(m)), len(set(self.devices(m))))

    def test_guest_1vf(self):
        with Mount("-m", "mi300x-guest-1vf", "--seed", "1") as m:
            d = m.gpu(GUEST)
            self.assertEqual(m.value(d + "/device"), "0x74b5")
            self.assertEqual(self.driver(m, GUEST), "amdgpu")
            # a VM: QEMU's root port, no IOMMU groups, no NUMA affinity, no CPU functions
            self.assertEqual(m.value("bus/pci/devices/0000:00:02.0/vendor"), "0x1b36")
            self.assertFalse(self.exists(m, d + "/iommu_group"))
            self.assertEqual(os.listdir(m.path("kernel/iommu_groups")), [])
            self.assertEqual(m.value(d + "/numa_node"), "-1")
            self.assertEqual(self.devices(m), ["0000:00:02.0", GUEST])
            for f in list(SRIOV_FILES) + ["physfn"] + list(FRU_FILES) + [
                    "available_compute_partition", "available_memory_partition"]:
                self.assertFalse(self.exists(m, d + "/" + f), f)
            for f, mode in (("current_compute_partition", 0o444),
                            ("current_memory_partition", 0o444), ("pp_dpm_sclk", 0o444),
                            ("power_dpm_force_performance_level", 0o644),
                            ("gpu_metrics", 0o444), ("unique_id", 0o444)):
                self.assertEqual(self.mode(m, d + "/" + f), mode, f)
            self.assertEqual(m.value(d + "/current_compute_partition"), "SPX")
            self.assertEqual(m.value(d + "/current_memory_partition"), "NPS1")
            self.assertEqual(m.write(d + "/current_compute_partition", "CPX"), errno.EACCES)
            self.assertGreater(len(m.read(d + "/gpu_metrics")), 100)
            self.assertEqual(int(m.value(d + "/mem_info_vram_total")), 191 * GiB)
            # hwmon with every write bit removed
            (h,) = os.listdir(m.path(d + "/hwmon"))
            hw = d + "/hwmon/" + h
            for f in os.listdir(m.path(hw)):
                if not os.path.islink(m.path(hw + "/" + f)):
                    self.assertEqual(self.mode(m, hw + "/" + f), 0o444, f)
            self.assertEqual(m.value(hw + "/power1_cap"), "750000000")
            self.assertEqual(m.write(hw + "/power1_cap", "500000000"), errno.EACCES)
            p = sh("echo 500000000 > " + m.path(hw + "/power1_cap"))
            self.assertNotEqual(p.returncode, 0)
            self.assertIn("Permission denied", p.stderr)
            # the VF's KFD node: all 8 XCCs, no per-queue reset
            (node,) = m.gpu_nodes(GUEST)
            self.assertEqual((node[1]["num_xcc"], node[1]["device_id"]), (8, 0x74b5))
            self.assertEqual(node[1]["capability"] & 0x80000000, 0)
            self.assertEqual(len(m.kfd_nodes()), 2)

    def test_guest_multivf(self):
        with Mount("-m", "mi300x-guest-multivf", "--seed", "1") as m:
            d = m.gpu(GUEST)
            self.assertEqual(m.value(d + "/device"), "0x74b5")
            self.assertFalse(self.exists(m, d + "/hwmon"))
            self.assertEqual(os.listdir(m.path("class/hwmon")), [])
            for f in list(SRIOV_FILES) + list(FRU_FILES) + list(PM_FILES) + [
                    "physfn", "available_compute_partition", "available_memory_partition"]:
                self.assertFalse(self.exists(m, d + "/" + f), f)
            # one partition of one XCC: CPX (the kernel names a VF's mode by XCCs per partition)
            self.assertEqual(self.mode(m, d + "/current_compute_partition"), 0o444)
            self.assertEqual(m.value(d + "/current_compute_partition"), "CPX")
            self.assertEqual(self.mode(m, d + "/current_memory_partition"), 0o444)
            self.assertEqual(m.value(d + "/current_memory_partition"), "NPS1")
            self.assertEqual(int(m.value(d + "/mem_info_vram_total")), 24 * GiB - 512 * 2**20)
            (node,) = m.gpu_nodes(GUEST)
            self.assertEqual((node[1]["num_xcc"], node[1]["simd_count"]), (1, 4 * 38))
            self.assertTrue(os.path.isdir(m.path(d + "/drm")))

    def test_synthetic_host(self):
        lines = sim("list-machines", check=True).stdout.splitlines()
        (line,) = [ln for ln in lines if ln.split()[0] == "mi300x-sriov"]
        self.assertIn("SYNTHETIC", line)
        with Mount("-m", "mi300x-sriov", "--seed", "1") as m:
            self.assertEqual(m.value("module/vfio_pci/parameters/enable_sriov"), "Y")
            for pf in MI300X_BDFS:
                self.assertEqual(self.driver(m, pf), "amdgpu")
                self.assertTrue(os.path.isdir(m.path(m.gpu(pf, "hwmon"))))
                self.assertEqual(len(m.gpu_nodes(pf)), 1)
                self.check_pf_sriov(m, pf, 0)
            self.assertFalse(self.exists(m, "module/gim"))
        # bare metal too has the capability (and amdgpu refuses to configure it, below)
        with Mount("-m", "mi300x-8") as m:
            self.check_pf_sriov(m, GPU0, 0)
            self.assertEqual(m.value("module/vfio_pci/parameters/enable_sriov"), "N")
        # MI350X/MI355X: gim supports their VFs; the VF IDs are placeholders (unverified)
        for name, did in (("mi350x-8", 0x75b0), ("mi355x-8", 0x75b3)):
            with self.subTest(machine=name), Mount("-m", name) as m:
                self.check_pf_sriov(m, GPU0, 0, did)
        with Mount("-m", "mi300a-4") as m:
            self.assertFalse(self.exists(m, "bus/pci/devices/0000:01:00.0/sriov_numvfs"))  # no VF ID

    # ---------------------------------------------------------------------------------------
    # sriov_numvfs (virtualization.md §2.2)

    def test_numvfs_enoent(self):
        """amdgpu and gim have no sriov_configure, an unbound PF no driver: ENOENT, but the
        range and the no-op come first."""
        with Mount("-m", "mi300x-8") as m:
            rel = m.gpu(GPU0, "sriov_numvfs")
            before = self.devices(m)
            self.assertEqual(m.write(rel, "1"), errno.ENOENT)
            self.assertEqual(m.write(rel, "0"), 0)                  # the current count
            self.assertEqual(m.write(rel, "9"), errno.ERANGE)
            self.assertEqual(m.write(rel, "x"), errno.EINVAL)
            p = sh("echo 2 > " + m.path(rel))
            self.assertNotEqual(p.returncode, 0)
            self.assertIn("No such file or directory", p.stderr)
            self.assertEqual((m.value(rel), self.devices(m)), ("0", before))
        with Mount("-m", "mi300x-gim-1vf") as m:
            rel = m.gpu(GPU0, "sriov_numvfs")
            before = self.devices(m)
            self.assertEqual(m.write(rel, "1"), 0)                  # the current count
            for value in ("0", "2", "8\n"):
                self.assertEqual(m.write(rel, value), errno.ENOENT, value)
            self.assertEqual(m.write(rel, "9"), errno.ERANGE)
            self.assertEqual((m.value(rel), self.devices(m)), ("1", before))
        with Mount("-m", "mi300x-sriov") as m:
            self.assertEqual(m.write("bus/pci/drivers/amdgpu/unbind", GPU1), 0)
            rel = m.gpu(GPU1, "sriov_numvfs")
            self.assertEqual(m.write(rel, "2"), errno.ENOENT)       # no driver bound
            self.assertEqual(m.write(rel, "0"), 0)
            self.assertEqual(m.value(rel), "0")

    def test_numvfs_parse(self):
        with Mount("-m", "mi300x-sriov") as m:
            rel = m.gpu(GPU0, "sriov_numvfs")
            before, groups = self.devices(m), self.groups(m)
            # kstrtou16, base auto: any failure is EINVAL, even an overflow
            for value in ("\n", "abc", "-1", "1 2", "2x", "70000", "0x", " 1"):
                self.assertEqual(m.write(rel, value), errno.EINVAL, repr(value))
            for value in ("9", "011", "0x10", "65535"):           # 011 is octal 9
                self.assertEqual(m.write(rel, value), errno.ERANGE, value)
            self.assertEqual(m.write(rel, "0\n"), 0)                # no-op
            self.assertEqual((self.devices(m), self.groups(m)), (before, groups))
            self.assertEqual(m.write(rel, "0x2"), 0)                # hexadecimal 2
            self.assertEqual(m.value(rel), "2")
            self.assertEqual(m.write(rel, "02"), 0)                 # the same count: no-op
            self.assertEqual(m.write(rel, "0"), 0)

    def test_enable_disable(self):
        with Mount("-m", "mi300x-sriov", "--seed", "1") as m:
            rel = m.gpu(GPU0, "sriov_numvfs")
            before, groups = self.devices(m), self.groups(m)
            p = sh("echo 4 > " + m.path(rel))
            self.assertEqual(p.returncode, 0, p.stderr)
            self.check_pf_sriov(m, GPU0, 4)
            vfs = [vf_bdf(GPU0, i) for i in range(4)]
            self.assertEqual(vfs, ["0000:05:02.0", "0000:05:02.1", "0000:05:02.2",
                                   "0000:05:02.3"])
            self.assertEqual(self.devices(m), sorted(before + vfs))
            new_groups = set()
            for i in range(4):
                vf, group = self.check_vf(m, GPU0, i, None)       # no VF driver matches
                self.assertNotIn(group, groups)
                new_groups.add(group)
            self.assertEqual(self.groups(m), groups | new_groups)
            self.assertEqual(len(new_groups), 4)
            # the tools see the same
            p = subprocess.run(["ls", m.path("bus/pci/devices")], capture_output=True, text=True)
            self.assertIn("0000:05:02.3\n", p.stdout)
            p = subprocess.run(["readlink", "-f", m.path(m.gpu(GPU0, "virtfn3"))],
                               capture_output=True, text=True)
            self.assertTrue(p.stdout.strip().endswith("/0000:04:00.0/0000:05:02.3"), p.stdout)
            # the PF keeps amdgpu's files, and the library's view turns host-pf
            self.assertEqual(self.driver(m, GPU0), "amdgpu")
            self.assertTrue(os.path.isdir(m.path(m.gpu(GPU0, "hwmon"))))
            # EBUSY: no second enable; the same count is a no-op
            self.assertEqual(m.write(rel, "2"), errno.EBUSY)
            self.assertEqual(m.write(rel, "8"), errno.EBUSY)
            self.assertEqual(m.write(rel, "4"), 0)
            self.assertEqual(self.devices(m), sorted(before + vfs))
            # another PF is independent
            self.assertEqual(m.write(m.gpu(GPU1, "sriov_numvfs"), "1"), 0)
            self.assertTrue(self.exists(m, m.gpu("0000:26:02.0")))
            self.assertEqual(m.write(m.gpu(GPU1, "sriov_numvfs"), "0"), 0)
            # 0 disables: VFs, links, groups and bus entries go
            p = sh("echo 0 > " + m.path(rel))
            self.assertEqual(p.returncode, 0, p.stderr)
            self.check_pf_sriov(m, GPU0, 0)
            self.assertEqual((self.devices(m), self.groups(m)), (before, groups))
            for vf in vfs:
                self.assertFalse(self.exists(m, m.gpu(vf)))
                with self.assertRaises(FileNotFoundError):
                    os.stat(m.path("devices/pci0000:00/0000:00:01.1/0000:03:00.0/0000:04:00.0/"
                                   + vf))
            # again: the same BDFs and groups come back
            self.assertEqual(m.write(rel, "4"), 0)
            self.assertEqual(self.devices(m), sorted(before + vfs))
            self.assertEqual(self.groups(m), groups | new_groups)
            # unbinding the PF's driver disables its VFs
            self.assertEqual(m.write("bus/pci/drivers/amdgpu/unbind", GPU0), 0)
            self.assertEqual((m.value(rel), self.devices(m)), ("0", before))

    def test_autoprobe(self):
        with Mount("-m", "mi300x-sriov") as m:
            pf = m.gpu(GPU0)
            auto = pf + "/sriov_drivers_autoprobe"
            vf = vf_bdf(GPU0, 0)
            # vfio-pci claims the VF ID: new VFs bind to it
            self.assertEqual(m.write("bus/pci/drivers/vfio-pci/new_id", "1002 74b5"), 0)
            self.assertEqual(m.write(pf + "/sriov_numvfs", "2"), 0)
            for i in range(2):
                self.check_vf(m, GPU0, i, "vfio-pci")
            self.assertTrue(os.path.samefile(m.path("bus/pci/drivers/vfio-pci/" + vf),
                                             m.path(m.gpu(vf))))
            self.assertEqual(m.value(m.gpu(vf, "enable")), "0")
            # disabling unbinds them (no VM holds them here) and removes them
            self.assertEqual(m.write(pf + "/sriov_numvfs", "0"), 0)
            self.assertFalse(self.exists(m, "bus/pci/drivers/vfio-pci/" + vf))
            # kstrtobool
            for value, want in (("0", "0"), ("on", "1"), ("OFF\n", "0"), ("y", "1"),
                                ("n", "0")):
                self.assertEqual(m.write(auto, value), 0, value)
                self.assertEqual(m.value(auto), want, value)
            for value in ("\n", "2", "maybe", "-1"):
                self.assertEqual(m.write(auto, value), errno.EINVAL, value)
            self.assertEqual(m.value(auto), "0")
            # autoprobe 0: the VFs stay unbound, even through drivers_probe and bind ...
            self.assertEqual(m.write(pf + "/sriov_numvfs", "2"), 0)
            for i in range(2):
                self.check_vf(m, GPU0, i, None)
            self.assertEqual(m.write("bus/pci/drivers_probe", vf), 0)
            self.assertIsNone(self.driver(m, vf))
            self.assertEqual(m.write("bus/pci/drivers/vfio-pci/bind", vf), errno.ENODEV)
            # ... unless driver_override names the driver
            self.assertEqual(m.write(m.gpu(vf, "driver_override"), "vfio-pci\n"), 0)
            self.assertEqual(m.write("bus/pci/drivers/vfio-pci/bind", vf), 0)
            self.assertEqual(self.driver(m, vf), "vfio-pci")
            # autoprobe is read at probe time
            other = vf_bdf(GPU0, 1)
            self.assertEqual(m.write(auto, "1"), 0)
            self.assertEqual(m.write("bus/pci/drivers_probe", other), 0)
            self.assertEqual(self.driver(m, other), "vfio-pci")

    def test_rebind_to_vfio(self):
        """The libvirt recipe (virtualization.md §2.4): driver_override, unbind, drivers_probe;
        with a shell's echo."""
        with Mount("-m", "mi300x-gim-1vf") as m:
            vf = vf_bdf(GPU0, 0)
            d = m.gpu(vf)
            self.assertIsNone(self.driver(m, vf))
            self.assertEqual(m.value(d + "/driver_override"), "(null)")
            self.assertEqual(m.write("bus/pci/drivers_probe", vf), 0)
            self.assertIsNone(self.driver(m, vf))                  # nothing matches a VF
            p = sh("echo vfio-pci > %s && echo %s > %s" % (
                m.path(d + "/driver_override"), vf, m.path("bus/pci/drivers_probe")))
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertEqual(m.value(d + "/driver_override"), "vfio-pci")
            self.assertEqual(self.driver(m, vf), "vfio-pci")
            self.assertIn("DRIVER=vfio-pci\n", m.text(d + "/uevent"))
            self.assertEqual(m.write("bus/pci/drivers/vfio-pci/bind", vf), errno.EBUSY)
            self.assertEqual(m.write("bus/pci/drivers/gim/unbind", vf), errno.ENODEV)
            # and back: clear the override, unbind, probe: no driver again
            p = sh("echo > %s && echo %s > %s && echo %s > %s" % (
                m.path(d + "/driver_override"), vf, m.path("bus/pci/drivers/vfio-pci/unbind"),
                vf, m.path("bus/pci/drivers_probe")))
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertEqual(m.value(d + "/driver_override"), "(null)")
            self.assertIsNone(self.driver(m, vf))
            self.assertEqual(m.write("bus/pci/drivers/vfio-pci/unbind", vf), errno.ENODEV)
        with Mount("-m", "mi300x-gim-8vf") as m:
            # bound to vfio-pci through vfio-pci.ids; the recipe from bound to bound
            vf = vf_bdf(GPU1, 5)
            self.assertEqual(self.driver(m, vf), "vfio-pci")
            self.assertEqual(m.write(m.gpu(vf, "driver_override"), "vfio-pci"), 0)
            self.assertEqual(m.write("bus/pci/drivers/vfio-pci/unbind", vf), 0)
            self.assertIsNone(self.driver(m, vf))
            self.assertEqual(m.write("bus/pci/drivers_probe", vf), 0)
            self.assertEqual(self.driver(m, vf), "vfio-pci")

    def test_vfio_pf(self):
        """vfio-pci's sriov_configure works only with enable_sriov; a vfio-pci PF captures its
        VFs (driver_override); gim binds again with its VFs."""
        with Mount("-m", "mi300x-sriov") as m:
            self.assertEqual(m.write("bus/pci/drivers/amdgpu/unbind", GPU1), 0)
            self.assertEqual(m.write(m.gpu(GPU1, "driver_override"), "vfio-pci"), 0)
            self.assertEqual(m.write("bus/pci/drivers_probe", GPU1), 0)
            self.assertEqual(self.driver(m, GPU1), "vfio-pci")
            self.assertEqual(m.write(m.gpu(GPU1, "sriov_numvfs"), "3"), 0)
            for i in range(3):
                vf, _ = self.check_vf(m, GPU1, i, "vfio-pci")
                self.assertEqual(m.value(m.gpu(vf, "driver_override")), "vfio-pci")
            self.assertEqual(m.write(m.gpu(GPU1, "sriov_numvfs"), "1"), errno.EBUSY)
            self.assertEqual(m.write("bus/pci/drivers/vfio-pci/unbind", GPU1), 0)
            self.check_pf_sriov(m, GPU1, 0)
            self.assertFalse(self.exists(m, m.gpu(vf_bdf(GPU1, 0))))
        with Mount("-m", "mi300x-gim-1vf") as m:
            vf = vf_bdf(GPU0, 0)
            # gim's remove disables its VFs and takes its files
            self.assertEqual(m.write("bus/pci/drivers/gim/unbind", GPU0), 0)
            self.assertIsNone(self.driver(m, GPU0))
            self.assertFalse(self.exists(m, m.gpu(vf)))
            self.assertFalse(self.exists(m, m.gpu(GPU0, "self_switch")))
            self.check_pf_sriov(m, GPU0, 0)
            self.assertEqual(m.write(m.gpu(GPU0, "sriov_numvfs"), "1"), errno.ENOENT)
            self.assertNotIn("Adapter[%s]" % GPU0, m.text("bus/pci/drivers/gim/self_switch"))
            # vfio-pci without enable_sriov: its callback refuses
            self.assertEqual(m.write(m.gpu(GPU0, "driver_override"), "vfio-pci"), 0)
            self.assertEqual(m.write("bus/pci/drivers/vfio-pci/bind", GPU0), 0)
            self.assertEqual(m.write(m.gpu(GPU0, "sriov_numvfs"), "1"), errno.ENOENT)
            self.assertEqual(m.value(m.gpu(GPU0, "sriov_numvfs")), "0")
            # back to gim (its IDs match again once the override is cleared)
            self.assertEqual(m.write("bus/pci/drivers/vfio-pci/unbind", GPU0), 0)
            self.assertEqual(m.write(m.gpu(GPU0, "driver_override"), "\n"), 0)
            self.assertEqual(m.write("bus/pci/drivers_probe", GPU0), 0)
            self.assertEqual(self.driver(m, GPU0), "gim")
            self.check_pf_sriov(m, GPU0, 1)
            self.check_vf(m, GPU0, 0, None)
            self.assertEqual(self.mode(m, m.gpu(GPU0, "self_switch")), 0o600)
            # gim binds host-pf GPUs only: not a VF
            self.assertEqual(m.write(m.gpu(vf, "driver_override"), "gim"), 0)
            self.assertEqual(m.write("bus/pci/drivers/gim/bind", vf), errno.ENODEV)

    def test_vf_msix_count(self):
        with Mount("-m", "mi300x-gim-1vf") as m:
            rel = m.gpu(vf_bdf(GPU0, 0), "sriov_vf_msix_count")
            self.assertEqual(m.write(rel, "4"), errno.EOPNOTSUPP)
            for value in ("-1", "x", "\n"):
                self.assertEqual(m.write(rel, value), errno.EINVAL, value)
            self.assertEqual(m.read_errno(rel), errno.EACCES)

    # ---------------------------------------------------------------------------------------
    # gim's stores (spec §7.3)

    def test_gim_stores(self):
        with Mount("-m", "mi300x-gim-1vf") as m:
            d = m.gpu(GPU0)
            for f in ("reset_gpu", "spatial_partition_mode", "memory_partition_config",
                      "spatial_partition_caps", "accelerator_partition_profile_config",
                      "psp_vbflash_status"):
                self.assertEqual(m.write(d + "/" + f, "1"), errno.EACCES, f)
            p = subprocess.run(NOBODY + ["cat", m.path(d + "/self_switch")], capture_output=True)
            self.assertNotEqual(p.returncode, 0)
            # self_switch: "%u", else EINVAL
            self.assertEqual(m.write(d + "/self_switch", "1"), 0)
            self.assertEqual(m.value(d + "/self_switch"), "1")
            self.assertEqual(m.write(d + "/self_switch", " 0 junk"), 0)
            self.assertEqual(m.value(d + "/self_switch"), "0")
            self.assertEqual(m.write(d + "/self_switch", "on"), errno.EINVAL)
            # the driver's self_switch sets every PF's
            self.assertEqual(m.write("bus/pci/drivers/gim/self_switch", "1"), 0)
            self.assertEqual(m.value(m.gpu(GPU1, "self_switch")), "1")
            self.assertEqual(m.write("bus/pci/drivers/gim/force_hot_reset", "x"), errno.EINVAL)
            self.assertEqual(m.write("bus/pci/drivers/gim/force_hot_reset", "1"), 0)
            self.assertIn("Adapter[%s] : 1\n" % GPU0, m.text("bus/pci/drivers/gim/force_hot_reset"))
            self.assertEqual(m.write("bus/pci/drivers/gim/live_update", "1"), errno.EINVAL)
            # an unknown profile or NPS2 with SPX... fail in the firmware: success, no change
            before = self.devices(m)
            self.assertEqual(m.write(d + "/accelerator_partition_profile", "9"), 0)
            self.assertEqual(m.write(d + "/accelerator_partition_profile", "0"), 0)   # current
            self.assertEqual(m.write(d + "/memory_partition_mode", "NPS2"), 0)
            self.assertEqual(self.devices(m), before)
            self.assertEqual(m.value(d + "/spatial_partition_mode"), "SPX")
            self.assertTrue(m.text(d + "/memory_partition_mode").startswith(
                "memory_partition_mode: NPS1\n"))
            for f, value in (("accelerator_partition_profile", "CPX"),
                             ("memory_partition_mode", "NPS3"), ("memory_partition_mode", "\n")):
                self.assertEqual(m.write(d + "/" + f, value), errno.EINVAL, (f, value))
            # CPX (profile 3): the VF goes, eight come, one per partition
            self.assertEqual(m.write(d + "/accelerator_partition_profile", "3\n"), 0)
            self.assertEqual(m.value(d + "/spatial_partition_mode"), "CPX")
            self.assertEqual(m.value(d + "/sriov_numvfs"), "8")
            self.check_pf_sriov(m, GPU0, 8)
            self.assertEqual(len(self.devices(m)), len(before) + 7)
            # NPS8 means NPS4 to this gim, which CPX allows
            self.assertEqual(m.write(d + "/memory_partition_mode", "nps8"), 0)
            self.assertEqual(m.text(d + "/memory_partition_mode").splitlines()[:2],
                             ["memory_partition_mode: NPS4", "numa_count: 4"])
            self.assertEqual(m.value(d + "/sriov_numvfs"), "8")
            # binding gim again brings its vf_num layout back
            self.assertEqual(m.write("bus/pci/drivers/gim/unbind", GPU0), 0)
            self.assertEqual(m.write("bus/pci/drivers/gim/bind", GPU0), 0)
            self.assertEqual(m.value(d + "/spatial_partition_mode"), "SPX")
            self.assertEqual(m.value(d + "/sriov_numvfs"), "1")

    # ---------------------------------------------------------------------------------------
    # Descriptions

    def test_descriptions(self):
        with tempfile.TemporaryDirectory() as tmp:
            def bad(desc, where):
                path = os.path.join(tmp, "m.json")
                with open(path, "w") as f:
                    json.dump(desc, f)
                p = sim("dump-machine", path)
                self.assertEqual(p.returncode, 3, p.stderr)
                self.assertIn(where, p.stderr)
                self.assertEqual(len(p.stderr.splitlines()), 1, p.stderr)

            gim = json.loads(sim("dump-machine", "mi300x-gim-8vf", check=True).stdout)
            self.assertEqual(gim["gpus"][0]["vf_num"], 8)
            self.assertEqual(gim["gpus"][0]["compute_partition"], "CPX")
            self.assertEqual(gim["kernel"]["vfio_pci_ids"], "1002:74b5")
            self.assertEqual(gim["products"]["MI300X"]["total_vfs"], 8)
            guest = json.loads(sim("dump-machine", "mi300x-guest-multivf", check=True).stdout)
            self.assertEqual(guest["gpus"][0]["product"], "MI300X")     # what the VF is of
            self.assertEqual(guest["gpus"][0]["compute_partition"], "CPX")
            bare = json.loads(sim("dump-machine", "mi300x-8", check=True).stdout)

            def variant(base, fn):
                d = json.loads(json.dumps(base))
                fn(d)
                return d

            bad(variant(gim, lambda d: d["gpus"][3].update(role="baremetal", vf_num=0)),
                "gpus[3].role: a gim host has host-pf GPUs only")
            bad(variant(gim, lambda d: d["gpus"][0].update(driver="amdgpu")),
                "gpus[0].driver: a host-pf GPU is bound to gim or to none")
            bad(variant(gim, lambda d: d["gpus"][0].update(vf_num=3)),
                "gpus[0].vf_num: 3 VFs: gim makes one VF per compute partition")
            bad(variant(gim, lambda d: d["gpus"][0].update(vf_num=16)),
                "gpus[0].vf_num: 16 VFs")
            bad(variant(gim, lambda d: d["gpus"][0].update(compute_partition="SPX")),
                "gpus[0].compute_partition: CPX follows from 8 VFs")
            bad(variant(gim, lambda d: d["products"]["MI300X"].update(total_vfs=0)),
                "gpus[0].role: a MI300X has no SR-IOV capability")
            bad(variant(gim, lambda d: d["kernel"].update(vfio_pci_ids="1002-74b5")),
                "kernel.vfio_pci_ids: \"1002-74b5\" is not VENDOR:DEVICE")
            bad(variant(bare, lambda d: d["gpus"][1].update(vf_num=2)),
                "gpus[1].vf_num: gim's VF count is for host-pf and guest GPUs")
            bad(variant(guest, lambda d: d["gpus"][0].update(vf_num=1)),
                "gpus[0].vf_num: multi-VF mode means 2 VFs or more")
            bad(variant(guest, lambda d: d["gpus"][0].update(nps_supported=["NPS1", "NPS4"])),
                "gpus[0].nps_supported: a VF sees one memory range")
            bad(variant(guest, lambda d: d["gpus"].append(
                {"bdf": "0000:02:00.0", "product": "MI300X", "role": "baremetal"})),
                "gpus[1].role: a VM has guest GPUs only")
            bad(variant(guest, lambda d: d["gpus"][0].update(driver="vfio-pci")),
                "gpus[0].driver: a VF in a VM is bound to amdgpu or to none")
            bad(variant(guest, lambda d: d.update(bmc_vga=True)), "bmc_vga: a VM has no BMC")
            # a VM with two VFs of different hosts' layouts, and a 2-VF host
            ok = variant(guest, lambda d: d["gpus"].append(
                {"bdf": "0000:02:00.0", "product": "MI300X", "role": "vf-guest-multi",
                 "vf_num": 2}))
            path = os.path.join(tmp, "two.json")
            with open(path, "w") as f:
                json.dump(ok, f)
            snap = os.path.join(tmp, "snap")
            sim("snapshot", snap, "-m", path, "--frozen", check=True)
            with open(os.path.join(snap, "bus/pci/devices/0000:02:00.0/"
                                   "current_compute_partition")) as f:
                self.assertEqual(f.read(), "SPX\n")              # 4 XCCs in one partition
            self.assertEqual(os.readlink(os.path.join(snap, "bus/pci/devices/0000:02:00.0")),
                             "../../../devices/pci0000:00/0000:00:02.1/0000:02:00.0")
            two = variant(gim, lambda d: d["gpus"][0].update(vf_num=2))
            del two["gpus"][0]["compute_partition"]
            del two["gpus"][0]["memory_partition"]
            path = os.path.join(tmp, "dpx.json")
            with open(path, "w") as f:
                json.dump(two, f)
            desc = json.loads(sim("dump-machine", path, check=True).stdout)
            self.assertEqual((desc["gpus"][0]["compute_partition"],
                              desc["gpus"][0]["memory_partition"]), ("DPX", "NPS1"))


if __name__ == "__main__":
    main()
