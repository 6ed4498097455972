#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""libamdsmi's SR-IOV read API (sriov/sriov.c) on simulator mounts and snapshot trees, through
sriov-probe (tests/sim/sriov-probe.c), which prints amdsmi_gpu_read_sriov() and the slice's
internal VF reader as JSON: bare metal (mi300x-8), gim hosts (mi300x-gim-8vf, -1vf) and gim's
module parameters, the synthetic amdgpu host (mi300x-sriov) after writes of sriov_numvfs, PF
driver changes, guests, VFs refused, IOMMU group viability, the processes holding a VF's
/dev/vfio/<group> (under AMDSMI_DEV_ROOT), and the record of a VF's previous driver under
$RUNTIME_DIRECTORY/sriov/."""

import errno
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from simtest import GPU0, GPU1, MI300X_BDFS, NOBODY, Mount, main, sim  # noqa: E402

PROBE = os.environ.get("SRIOV_PROBE", "")
GUEST = "0000:01:00.0"
SRIOV_INT_FILES = {"total_vfs": "sriov_totalvfs", "num_vfs": "sriov_numvfs",
                   "offset": "sriov_offset", "stride": "sriov_stride",
                   "drivers_autoprobe": "sriov_drivers_autoprobe"}


def run_probe(root, *args, env=None, user=None):
    e = dict(os.environ, AMDSMI_SYSFS_ROOT=root)
    e.pop("AMDSMI_DEV_ROOT", None)
    e.update(env or {})
    p = subprocess.run((user or []) + [PROBE] + list(args), env=e, capture_output=True,
                       text=True, timeout=60)
    if p.returncode != 0:
        raise AssertionError("sriov-probe %s: exit %d: %s" % (args, p.returncode, p.stderr))
    return json.loads(p.stdout)


def probe(root, *bdfs, env=None, user=None):
    """{bdf: the GPU's entry} of amdsmi_gpu_read_sriov()."""
    return {g["bdf"]: g for g in run_probe(root, *bdfs, env=env, user=user)["gpus"]}


def probe_after(root, change, *bdfs):
    """amdsmi_gpu_read_sriov() of a context enumerated before change() ran."""
    env = dict(os.environ, AMDSMI_SYSFS_ROOT=root, SRIOV_PROBE_WAIT="1")
    env.pop("AMDSMI_DEV_ROOT", None)
    p = subprocess.Popen([PROBE] + list(bdfs), env=env, stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        if p.stderr.readline() != "ready\n":
            raise AssertionError("sriov-probe did not get ready")
        change()
        out, err = p.communicate("go\n", timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
            p.communicate()
    if p.returncode != 0:
        raise AssertionError("sriov-probe: exit %d: %s" % (p.returncode, err))
    return {g["bdf"]: g for g in json.loads(out)["gpus"]}


def vf_bdf(pf, offset, stride, i):
    """VF i of @pf by the PCI core's formula (virtualization.md §2.3)."""
    dom, bus, rest = pf.split(":")
    dev, fn = rest.split(".")
    rid = (int(bus, 16) << 8 | int(dev, 16) << 3 | int(fn, 16)) + offset + stride * i
    return "%s:%02x:%02x.%x" % (dom, rid >> 8, (rid >> 3) & 0x1f, rid & 7)


def link_name(path):
    return os.path.basename(os.readlink(path)) if os.path.lexists(path) else ""


class Tree:
    """Reads the expected values from the simulated (or snapshot) tree itself."""

    def __init__(self, root):
        self.root = root

    def path(self, rel):
        return os.path.join(self.root, rel)

    def dev(self, bdf, attr=""):
        return self.path("bus/pci/devices/%s%s" % (bdf, "/" + attr if attr else ""))

    def value(self, bdf, attr):
        with open(self.dev(bdf, attr)) as f:
            return f.read().strip()

    def driver(self, bdf):
        return link_name(self.dev(bdf, "driver"))

    def group(self, bdf):
        g = link_name(self.dev(bdf, "iommu_group"))
        return int(g) if g else -1

    def virtfns(self, pf):
        """[(N, VF BDF)] of the virtfnN links, by N."""
        out = []
        for name in os.listdir(self.dev(pf)):
            if name.startswith("virtfn"):
                out.append((int(name[6:]), link_name(self.dev(pf, name))))
        return sorted(out)

    def override(self, bdf):
        v = self.value(bdf, "driver_override")
        return "" if v == "(null)" else v


class SriovLib(unittest.TestCase):
    def check_pf(self, t, g, pf, config, driver):
        """A PF's entry against the tree's files."""
        self.assertEqual(g["result"], 0, g)
        s = g["sriov"]
        self.assertTrue(s["capable"])
        for key, f in SRIOV_INT_FILES.items():
            self.assertEqual(s[key], int(t.value(pf, f)), key)
        self.assertEqual(s["vf_device"], int(t.value(pf, "sriov_vf_device"), 16))
        self.assertEqual((s["pf_driver"], s["config"]), (driver, config))
        self.assertEqual(s["pf_driver"], t.driver(pf))
        # the VFs: the virtfnN links in numeric order, each as the tree shows it
        links = t.virtfns(pf)
        self.assertEqual(s["n_vfs"], len(links))
        self.assertEqual([(v["index"], v["bdf"]) for v in s["vfs"]], links)
        for v in s["vfs"]:
            self.assertEqual(v["driver"], t.driver(v["bdf"]), v)
            self.assertEqual(v["driver_override"], t.override(v["bdf"]), v)
            self.assertEqual(v["iommu_group"], t.group(v["bdf"]), v)
        self.assertEqual((g["small_size"], g["small_size_untouched"]), (-errno.EINVAL, True))
        return s

    def check_refused_vfs(self, gpus):
        vfs = [g for g in gpus.values() if g["role"] == "vf"]
        for g in vfs:
            self.assertEqual(g["result"], -errno.EINVAL, g)
            self.assertNotIn("sriov", g)
        return len(vfs)

    # ---------------------------------------------------------------------------------------

    def test_names(self):
        n = run_probe("/nonexistent", "names")
        self.assertEqual(n["config"], ["unknown", "sysfs", "gim-param", "no-driver", "none",
                                       "unknown"])
        self.assertEqual(n["stage"], ["done", "preflight", "disable", "autoprobe", "enable",
                                      "settle", "verify", "unbind", "probe", "unknown"])

    def test_baremetal(self):
        with Mount("-m", "mi300x-8") as m:
            t = Tree(m.root)
            gpus = probe(m.root)
            self.assertEqual(sorted(gpus), MI300X_BDFS)
            for pf in MI300X_BDFS:
                g = gpus[pf]
                self.assertEqual(g["role"], "baremetal")
                s = self.check_pf(t, g, pf, "sysfs", "amdgpu")
                self.assertEqual((s["total_vfs"], s["num_vfs"], s["offset"], s["stride"],
                                  s["vf_device"], s["drivers_autoprobe"]),
                                 (8, 0, 16, 1, 0x74b5, 1))
                self.assertEqual((s["gim_vf_num"], s["n_vfs"], s["vfs"]), (-1, 0, []))
            # asking for one GPU only
            self.assertEqual(sorted(probe(m.root, GPU1)), [GPU1])
            # mi300a-4: no SR-IOV capability (no known VF ID): not an error
        with Mount("-m", "mi300a-4") as m:
            gpus = probe(m.root)
            self.assertEqual(len(gpus), 4)
            for g in gpus.values():
                self.assertEqual(g["result"], 0)
                s = g["sriov"]
                self.assertEqual((s["capable"], s["config"], s["total_vfs"], s["n_vfs"],
                                  s["drivers_autoprobe"], s["gim_vf_num"], s["pf_driver"]),
                                 (False, "none", 0, 0, -1, -1, "amdgpu"))

    def test_gim_8vf(self):
        with Mount("-m", "mi300x-gim-8vf", "--seed", "1") as m:
            t = Tree(m.root)
            gpus = probe(m.root)
            groups = set()
            for pf in MI300X_BDFS:
                g = gpus[pf]
                self.assertEqual(g["role"], "host-pf")
                s = self.check_pf(t, g, pf, "gim-param", "gim")
                self.assertEqual((s["num_vfs"], s["n_vfs"], s["gim_vf_num"]), (8, 8, 8))
                self.assertEqual([v["bdf"] for v in s["vfs"]],
                                 [vf_bdf(pf, s["offset"], s["stride"], i) for i in range(8)])
                for v in s["vfs"]:
                    self.assertEqual((v["driver"], v["driver_override"], v["vfio_viable"]),
                                     ("vfio-pci", "", True), v)
                    self.assertGreaterEqual(v["iommu_group"], 0)
                    groups.add(v["iommu_group"])
                    # no AMDSMI_DEV_ROOT: device nodes are not looked at
                    self.assertEqual((v["in_use"], v["n_users"], v["users"]),
                                     (-errno.ENODATA, 0, []))
            self.assertEqual(len(groups), 64)
            self.assertEqual(self.check_refused_vfs(gpus), 64)

    def test_gim_1vf(self):
        with Mount("-m", "mi300x-gim-1vf", "--seed", "1") as m:
            t = Tree(m.root)
            gpus = probe(m.root)
            for pf in MI300X_BDFS:
                s = self.check_pf(t, gpus[pf], pf, "gim-param", "gim")
                self.assertEqual((s["num_vfs"], s["n_vfs"], s["gim_vf_num"]), (1, 1, 1))
                (v,) = s["vfs"]
                self.assertEqual(v["bdf"], vf_bdf(pf, s["offset"], s["stride"], 0))
                # unbound: no driver counts as viable
                self.assertEqual((v["index"], v["driver"], v["vfio_viable"]), (0, "", True))
            self.assertEqual(self.check_refused_vfs(gpus), 8)

    def test_synthetic_enable(self):
        with Mount("-m", "mi300x-sriov", "--seed", "1") as m:
            t = Tree(m.root)
            gpus = probe(m.root)
            for pf in MI300X_BDFS:
                s = self.check_pf(t, gpus[pf], pf, "sysfs", "amdgpu")
                self.assertEqual((s["num_vfs"], s["n_vfs"]), (0, 0))
            # enable 4 VFs with a direct write, then read again
            self.assertEqual(m.write(m.gpu(GPU0, "sriov_numvfs"), "4"), 0)
            gpus = probe(m.root)
            s = self.check_pf(t, gpus[GPU0], GPU0, "sysfs", "amdgpu")
            self.assertEqual((s["num_vfs"], s["n_vfs"]), (4, 4))
            self.assertEqual([v["bdf"] for v in s["vfs"]],
                             [vf_bdf(GPU0, s["offset"], s["stride"], i) for i in range(4)])
            for v in s["vfs"]:
                self.assertEqual(v["driver"], "")     # no host driver claims them here
                self.assertTrue(v["vfio_viable"])
            self.assertEqual(gpus[GPU0]["role"], "host-pf")
            self.assertEqual(self.check_refused_vfs(gpus), 4)
            # the PF's driver is read at the call, not at enumeration: unbound from amdgpu
            def unbind():
                self.assertEqual(m.write("bus/pci/drivers/amdgpu/unbind", GPU1), 0)
            self.check_pf(t, probe_after(m.root, unbind, GPU1)[GPU1], GPU1, "no-driver", "")
            # and bound to vfio-pci (driver_override + drivers_probe), VFs through it
            def bind_vfio():
                self.assertEqual(m.write(m.gpu(GPU1, "driver_override"), "vfio-pci"), 0)
                self.assertEqual(m.write("bus/pci/drivers_probe", GPU1), 0)
                self.assertEqual(m.write(m.gpu(GPU1, "sriov_numvfs"), "2"), 0)
            s = self.check_pf(t, probe_after(m.root, bind_vfio, GPU1)[GPU1], GPU1, "sysfs",
                              "vfio-pci")
            self.assertEqual(s["n_vfs"], 2)
            for v in s["vfs"]:
                # vfio-pci's notifier gives its VFs the override
                self.assertEqual(v["driver_override"], "vfio-pci")
            # disabled again: the VFs are gone
            self.assertEqual(m.write(m.gpu(GPU0, "sriov_numvfs"), "0"), 0)
            s = self.check_pf(t, probe(m.root, GPU0)[GPU0], GPU0, "sysfs", "amdgpu")
            self.assertEqual((s["num_vfs"], s["n_vfs"], s["vfs"]), (0, 0, []))

    def test_virtfn_order(self):
        """virtfn10 after virtfn9 (a directory lists virtfn10 before virtfn2)."""
        with tempfile.TemporaryDirectory() as tmp:
            desc = json.loads(sim("dump-machine", "mi300x-sriov", check=True).stdout)
            desc["products"]["MI300X"]["total_vfs"] = 16
            path = os.path.join(tmp, "m.json")
            with open(path, "w") as f:
                json.dump(desc, f)
            with Mount("-m", path) as m:
                t = Tree(m.root)
                self.assertEqual(m.write(m.gpu(GPU0, "sriov_numvfs"), "12"), 0)
                s = self.check_pf(t, probe(m.root, GPU0)[GPU0], GPU0, "sysfs", "amdgpu")
                self.assertEqual([v["index"] for v in s["vfs"]], list(range(12)))
                self.assertEqual([v["bdf"] for v in s["vfs"]],
                                 [vf_bdf(GPU0, s["offset"], s["stride"], i) for i in range(12)])
                self.assertEqual(s["total_vfs"], 16)

    def test_guests(self):
        """A VF in a VM is the guest's GPU, not a host VF: read, not capable."""
        for name, role in (("mi300x-guest-1vf", "vf-guest-1vf"),
                           ("mi300x-guest-multivf", "vf-guest-multi")):
            with self.subTest(machine=name), Mount("-m", name, "--seed", "1") as m:
                gpus = probe(m.root)
                self.assertEqual(sorted(gpus), [GUEST])
                g = gpus[GUEST]
                self.assertEqual((g["role"], g["result"]), (role, 0))
                s = g["sriov"]
                self.assertEqual((s["capable"], s["config"], s["pf_driver"], s["n_vfs"],
                                  s["total_vfs"], s["drivers_autoprobe"], s["gim_vf_num"]),
                                 (False, "none", "amdgpu", 0, 0, -1, -1))

    def test_pf_gone(self):
        with Mount("-m", "mi300x-8") as m:
            gpus = probe_after(m.root, lambda: sim("ctl", "--mount", m.root, "unplug", GPU0,
                                                   check=True), GPU0, GPU1)
            self.assertEqual(gpus[GPU0]["result"], -errno.ENODEV)
            self.assertEqual(gpus[GPU1]["result"], 0)

    # ---------------------------------------------------------------------------------------
    # sriov_read_vf(): bad addresses, viability

    def test_read_vf_errors(self):
        with Mount("-m", "mi300x-gim-1vf") as m:
            vf = vf_bdf(GPU0, 16, 1, 0)
            r = run_probe(m.root, "read-vf", vf, "5")
            self.assertEqual(r["result"], 0)
            self.assertEqual((r["vf"]["bdf"], r["vf"]["index"]), (vf, 5))   # index as given
            for bad in ("../..", "0000:05:02.0/..", "0000:05:02.0/../../..", "", "05:02.0",
                        "0000:05:02.8", "0000:05:02.0\n", "0000:05:2.0", "0000:05:02.0 "):
                self.assertEqual(run_probe(m.root, "read-vf", bad, "0")["result"],
                                 -errno.EINVAL, repr(bad))
            self.assertEqual(run_probe(m.root, "read-vf", "0000:ff:1f.7", "0")["result"],
                             -errno.ENODEV)
            # a group whose one device is bound to a host driver (the PF itself, to gim)
            r = run_probe(m.root, "read-vf", GPU0, "0")
            self.assertEqual((r["vf"]["driver"], r["vf"]["vfio_viable"]), ("gim", False))

    def test_viability_shared_group(self):
        """Another device in the VF's group (a plain snapshot tree, edited: the simulator gives
        every function a group of its own)."""
        with tempfile.TemporaryDirectory() as tmp:
            root = os.path.join(tmp, "sys")
            sim("snapshot", root, "-m", "mi300x-gim-8vf", "--frozen", check=True)
            t = Tree(root)
            vf = vf_bdf(GPU0, 16, 1, 3)
            group = t.group(vf)
            self.assertGreaterEqual(group, 0)
            self.assertTrue(run_probe(root, "read-vf", vf, "3")["vf"]["vfio_viable"])
            # a host device bound to a driver other than vfio-pci
            other = next(b for b in sorted(os.listdir(t.path("bus/pci/devices")))
                         if t.driver(b) not in ("", "vfio-pci", "pcieport", "gim"))
            other_driver = t.driver(other)
            members = t.path("kernel/iommu_groups/%d/devices" % group)
            os.symlink(os.path.relpath(os.path.realpath(t.dev(other)), members),
                       os.path.join(members, other))
            self.assertEqual(link_name(os.path.join(members, other, "driver")), other_driver)
            r = run_probe(root, "read-vf", vf, "3")["vf"]
            self.assertEqual((r["iommu_group"], r["vfio_viable"]), (group, False))
            s = probe(root, GPU0)[GPU0]["sriov"]
            self.assertEqual([v["vfio_viable"] for v in s["vfs"]],
                             [i != 3 for i in range(8)])
            # that device bound to pci-stub, then to nothing: viable
            drv = os.path.join(t.dev(other), "driver")
            os.unlink(drv)
            os.makedirs(t.path("bus/pci/drivers/pci-stub"), exist_ok=True)
            os.symlink(os.path.relpath(t.path("bus/pci/drivers/pci-stub"),
                                       os.path.realpath(t.dev(other))), drv)
            self.assertEqual(t.driver(other), "pci-stub")
            self.assertTrue(run_probe(root, "read-vf", vf, "3")["vf"]["vfio_viable"])
            os.unlink(drv)
            self.assertTrue(run_probe(root, "read-vf", vf, "3")["vf"]["vfio_viable"])
            # no IOMMU group: not viable
            os.unlink(t.dev(vf, "iommu_group"))
            r = run_probe(root, "read-vf", vf, "3")["vf"]
            self.assertEqual((r["iommu_group"], r["vfio_viable"]), (-1, False))
            # driver_override as the kernel shows it: "(null)" none, a name with its newline
            with open(t.dev(vf, "driver_override"), "w") as f:
                f.write("vfio-pci\n")
            self.assertEqual(run_probe(root, "read-vf", vf, "3")["vf"]["driver_override"],
                             "vfio-pci")

    # ---------------------------------------------------------------------------------------
    # gim's module parameters (snapshot trees, edited)

    def test_gim_parameters(self):
        with tempfile.TemporaryDirectory() as tmp:
            root = os.path.join(tmp, "sys")
            sim("snapshot", root, "-m", "mi300x-gim-1vf", "--frozen", check=True)
            params = os.path.join(root, "module/gim/parameters")

            def set_params(vf_num, devices):
                for name, value in (("vf_num", vf_num), ("enabled_devices", devices)):
                    with open(os.path.join(params, name), "w") as f:
                        f.write(value + "\n")

            def vf_nums():
                gpus = probe(root)
                return [gpus[b]["sriov"]["gim_vf_num"] for b in MI300X_BDFS]

            self.assertEqual(vf_nums(), [1] * 8)
            # gim numbers the GPUs in probe (PCI) order; the last vf_num entry repeats
            set_params("1,2,3,4,5,6,7,8", ";".join(MI300X_BDFS))
            self.assertEqual(vf_nums(), [1, 2, 3, 4, 5, 6, 7, 8])
            set_params("8,1", ";".join(MI300X_BDFS))
            self.assertEqual(vf_nums(), [8] + [1] * 7)
            # enabled_devices filters, it does not order
            set_params("1,2,3,4,5,6,7,8", ";".join(reversed(MI300X_BDFS)))
            self.assertEqual(vf_nums(), [1, 2, 3, 4, 5, 6, 7, 8])
            set_params("3,5,7", "%s;%s;;%s" % (MI300X_BDFS[5], MI300X_BDFS[2], MI300X_BDFS[2]))
            self.assertEqual(vf_nums(), [-1, -1, 3, -1, -1, 5, -1, -1])
            # no enabled_devices: every SR-IOV PF gim holds, in PCI order
            for devices in ("(null)", ""):
                set_params("1,2,3,4,5,6,7,8", devices)
                self.assertEqual(vf_nums(), [1, 2, 3, 4, 5, 6, 7, 8], devices)
            # not given, or not a count gim takes (it uses its default then): unknown
            for vf_num in ("", "0,2", "x", "32"):
                set_params(vf_num, ";".join(MI300X_BDFS))
                self.assertEqual(vf_nums()[0], -1, vf_num)
            set_params("0,2", ";".join(MI300X_BDFS))
            self.assertEqual(vf_nums()[1:], [2] * 7)
            # GPU0 no longer bound to gim: no-driver, and GPU1 is gim's first now
            set_params("1,2,3,4,5,6,7,8", "(null)")
            os.unlink(os.path.join(root, "bus/pci/drivers/gim", GPU0))
            os.unlink(os.path.join(root, "bus/pci/devices", GPU0, "driver"))
            gpus = probe(root)
            self.assertEqual((gpus[GPU0]["sriov"]["config"], gpus[GPU0]["sriov"]["gim_vf_num"]),
                             ("no-driver", -1))
            self.assertEqual([gpus[b]["sriov"]["gim_vf_num"] for b in MI300X_BDFS[1:]],
                             [1, 2, 3, 4, 5, 6, 7])
            # gim without its parameter directory: unknown
            shutil.rmtree(os.path.join(root, "module/gim"))
            gpus = probe(root)
            self.assertEqual([gpus[b]["sriov"]["gim_vf_num"] for b in MI300X_BDFS[1:]], [-1] * 7)
            self.assertEqual(gpus[GPU1]["sriov"]["config"], "gim-param")

    # ---------------------------------------------------------------------------------------
    # VFIO users (AMDSMI_DEV_ROOT)

    def test_in_use(self):
        with Mount("-m", "mi300x-gim-8vf", "--seed", "1") as m, \
                tempfile.TemporaryDirectory() as tmp:
            t = Tree(m.root)
            devroot = os.path.join(tmp, "dev")
            os.makedirs(os.path.join(devroot, "vfio"))
            vfs = [vf_bdf(GPU0, 16, 1, i) for i in range(8)]
            groups = [t.group(v) for v in vfs]
            # a node for every group of GPU0's VFs but the last one
            for g in groups[:7]:
                open(os.path.join(devroot, "vfio", str(g)), "w").close()
            env = {"AMDSMI_DEV_ROOT": devroot}

            def read():
                return probe(m.root, GPU0, env=env)[GPU0]["sriov"]["vfs"]

            self.assertEqual([(v["in_use"], v["n_users"]) for v in read()], [(0, 0)] * 8)
            node0 = os.path.join(devroot, "vfio", str(groups[0]))
            node1 = os.path.join(devroot, "vfio", str(groups[1]))
            holders = []
            try:
                with open(node0) as stdin:
                    holders.append(subprocess.Popen(["sleep", "60"], stdin=stdin))
                # another process holding it twice, and GPU0's VF 1 through a linked root
                code = ("import os, sys, time\n"
                        "fds = [os.open(p, os.O_RDONLY) for p in sys.argv[1:]]\n"
                        "print('ready', flush=True)\n"
                        "time.sleep(60)\n")
                holders.append(subprocess.Popen(
                    [sys.executable, "-c", code, node0, node0, node1], stdout=subprocess.PIPE,
                    text=True))
                self.assertEqual(holders[1].stdout.readline(), "ready\n")
                v = read()
                self.assertEqual((v[0]["in_use"], v[0]["n_users"]), (1, 2))
                self.assertEqual(sorted((u["pid"], u["comm"]) for u in v[0]["users"]),
                                 sorted([(holders[0].pid, "sleep"),
                                         (holders[1].pid, self.comm(holders[1].pid))]))
                self.assertEqual((v[1]["in_use"], v[1]["n_users"]), (1, 1))
                self.assertEqual(v[1]["users"][0]["pid"], holders[1].pid)
                self.assertEqual([(x["in_use"], x["n_users"]) for x in v[2:]], [(0, 0)] * 6)
                # the internal reader agrees
                r = run_probe(m.root, "read-vf", vfs[0], "0", env=env)["vf"]
                self.assertEqual((r["in_use"], r["n_users"]), (1, 2))
                # a device root reached through a symbolic link: the kernel shows the real
                # path of an open file
                link = os.path.join(tmp, "devlink")
                os.symlink(devroot, link)
                v = probe(m.root, GPU0, env={"AMDSMI_DEV_ROOT": link})[GPU0]["sriov"]["vfs"]
                self.assertEqual((v[0]["in_use"], v[0]["n_users"]), (1, 2))
                # the first holder goes
                holders[0].kill()
                holders[0].wait()
                v = read()
                self.assertEqual((v[0]["in_use"], v[0]["n_users"]), (1, 1))
                self.assertEqual(v[0]["users"][0]["pid"], holders[1].pid)
                holders[1].kill()
                holders[1].wait()
                self.assertEqual([(x["in_use"], x["n_users"]) for x in read()], [(0, 0)] * 8)
            finally:
                for p in holders:
                    if p.poll() is None:
                        p.kill()
                        p.wait()
                    if p.stdout:
                        p.stdout.close()
            # more holders than the array reports
            try:
                holders = []
                for _ in range(10):
                    with open(node0) as stdin:
                        holders.append(subprocess.Popen(["sleep", "60"], stdin=stdin))
                v = read()
                self.assertEqual((v[0]["in_use"], v[0]["n_users"], len(v[0]["users"])),
                                 (1, 10, 8))
                self.assertTrue(set(u["pid"] for u in v[0]["users"]) <=
                                set(p.pid for p in holders))
            finally:
                for p in holders:
                    p.kill()
                    p.wait()

    def test_in_use_unprivileged(self):
        """Without root, other users' fd directories cannot be read: a holder found is
        reported, no holder found is not 'not in use' but -EACCES."""
        with Mount("-m", "mi300x-gim-8vf", "--seed", "1") as m, \
                tempfile.TemporaryDirectory() as tmp:
            os.chmod(tmp, 0o755)
            t = Tree(m.root)
            devroot = os.path.join(tmp, "dev")
            os.makedirs(os.path.join(devroot, "vfio"))
            groups = [t.group(vf_bdf(GPU0, 16, 1, i)) for i in range(8)]
            for g in groups[:2]:
                node = os.path.join(devroot, "vfio", str(g))
                open(node, "w").close()
                os.chmod(node, 0o666)
            env = {"AMDSMI_DEV_ROOT": devroot}
            holders = []
            try:
                with open(os.path.join(devroot, "vfio", str(groups[0]))) as stdin:
                    holders.append(subprocess.Popen(["sleep", "60"], stdin=stdin))
                holders.append(subprocess.Popen(
                    NOBODY + ["sh", "-c", "exec sleep 60 < %s" %
                              os.path.join(devroot, "vfio", str(groups[1]))]))
                for _ in range(100):     # until the shell has become sleep with the node open
                    if os.path.exists("/proc/%d/fd/0" % holders[1].pid) and os.readlink(
                            "/proc/%d/fd/0" % holders[1].pid).endswith("/%d" % groups[1]):
                        break
                    time.sleep(0.05)
                v = probe(m.root, GPU0, env=env, user=NOBODY)[GPU0]["sriov"]["vfs"]
                self.assertEqual((v[0]["in_use"], v[0]["n_users"]), (-errno.EACCES, 0))
                self.assertEqual((v[1]["in_use"], v[1]["n_users"]), (1, 1))
                self.assertEqual((v[1]["users"][0]["pid"], v[1]["users"][0]["comm"]),
                                 (holders[1].pid, "sleep"))
                self.assertEqual([x["in_use"] for x in v[2:]], [0] * 6)     # no node
                # root sees both
                v = probe(m.root, GPU0, env=env)[GPU0]["sriov"]["vfs"]
                self.assertEqual([(x["in_use"], x["n_users"]) for x in v[:2]], [(1, 1)] * 2)
            finally:
                for p in holders:
                    p.kill()
                    p.wait()

    @staticmethod
    def comm(pid):
        with open("/proc/%d/comm" % pid) as f:
            return f.read().strip()

    # ---------------------------------------------------------------------------------------
    # The driver a VF had (sriov_remember/recall/forget_driver)

    def test_remember(self):
        with tempfile.TemporaryDirectory() as tmp:
            rt = os.path.join(tmp, "run", "amdsmi")     # made on first use
            env = {"RUNTIME_DIRECTORY": rt}
            vf = "0000:05:02.0"
            path = os.path.join(rt, "sriov", vf)

            def call(*args):
                return run_probe("/nonexistent", *args, env=env)

            def content():
                with open(path) as f:
                    return f.read()

            r = call("recall", vf)
            self.assertEqual((r["result"], r["driver"]), (-errno.ENOENT, "untouched"))
            self.assertEqual(call("forget", vf)["result"], 0)       # nothing to forget
            self.assertEqual(call("remember", vf, "")["result"], 0)
            self.assertEqual(content(), "\n")
            self.assertEqual(stat.S_IMODE(os.stat(path).st_mode), 0o644)
            self.assertEqual(call("recall", vf), {"result": 0, "driver": ""})
            self.assertEqual(call("remember", vf, "amdgpu")["result"], 0)
            self.assertEqual(content(), "amdgpu\n")
            self.assertEqual(call("recall", vf), {"result": 0, "driver": "amdgpu"})
            self.assertEqual(os.listdir(os.path.join(rt, "sriov")), [vf])   # no temporary left
            self.assertEqual(call("forget", vf)["result"], 0)
            self.assertFalse(os.path.lexists(path))
            self.assertEqual(call("recall", vf)["result"], -errno.ENOENT)
            # bad addresses and names: refused before any file is touched
            for bad in ("../../x", "0000:05:02.0/../../x", "..", "", "0000:05:02.0/"):
                for args in (("remember", bad, "vfio-pci"), ("recall", bad), ("forget", bad)):
                    self.assertEqual(call(*args)["result"], -errno.EINVAL, (args, bad))
            for bad in ("a/b", "..", "x\ny", "a" * 64):
                self.assertEqual(call("remember", vf, bad)["result"], -errno.EINVAL, repr(bad))
            self.assertEqual(os.listdir(os.path.join(rt, "sriov")), [])
            self.assertEqual(os.listdir(tmp), ["run"])
            # files it did not write
            for text in ("amdgpu", "a\nb\n", "a/b\n", ""):
                with open(path, "w") as f:
                    f.write(text)
                r = call("recall", vf)
                self.assertEqual((r["result"], r["driver"]), (-errno.EBADMSG, "untouched"),
                                 repr(text))
            # a symbolic link in its place is not followed, and replaced by a new record
            os.unlink(path)
            target = os.path.join(tmp, "target")
            with open(target, "w") as f:
                f.write("vfio-pci\n")
            os.symlink(target, path)
            self.assertEqual(call("recall", vf)["result"], -errno.ELOOP)
            self.assertEqual(call("remember", vf, "amdgpu")["result"], 0)
            self.assertFalse(os.path.islink(path))
            self.assertEqual(content(), "amdgpu\n")
            with open(target) as f:
                self.assertEqual(f.read(), "vfio-pci\n")
            # a FIFO or a directory in its place: refused at once (never waited on), and a
            # FIFO is replaced by a new record
            os.unlink(path)
            os.mkfifo(path, 0o644)
            self.assertEqual(call("recall", vf)["result"], -errno.EBADFD)
            self.assertTrue(stat.S_ISFIFO(os.lstat(path).st_mode))
            self.assertEqual(call("remember", vf, "amdgpu")["result"], 0)
            self.assertEqual(content(), "amdgpu\n")
            os.unlink(path)
            os.mkdir(path)
            self.assertEqual(call("recall", vf)["result"], -errno.EISDIR)
            os.rmdir(path)
            self.assertEqual(call("remember", vf, "amdgpu")["result"], 0)
            # one record per VF
            other = "0000:26:02.3"
            self.assertEqual(call("remember", other, "")["result"], 0)
            self.assertEqual(call("recall", vf)["driver"], "amdgpu")
            self.assertEqual(sorted(os.listdir(os.path.join(rt, "sriov"))), sorted([vf, other]))


if __name__ == "__main__":
    if not PROBE or not os.access(PROBE, os.X_OK):
        sys.exit("FAIL: SRIOV_PROBE is not the sriov-probe executable: %r" % PROBE)
    main()
