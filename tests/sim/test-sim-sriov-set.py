#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""The SR-IOV changes of libamdsmi on amdsmi-sim (spec virtualization.md §2.2, §2.4;
amdgpu-sysfs.md §7): amdsmi_gpu_set_num_vfs() (the count through sriov_numvfs: 0 first, VFs
appearing with their links, the no-op, ERANGE, VFs bound to vfio-pci or held through VFIO as
blockers and FORCE, autoprobe off, every errno of the kernel's write mapped with its message,
dry runs, a PF under vfio-pci, gim hosts and driverless PFs that are never written) and
amdsmi_vf_bind_vfio() / amdsmi_vf_release() (the round trip on host VFs, VFs bound through
vfio-pci.ids, in use, failures restored, the remembered driver), through sriov-set-probe, which
prints the reports as JSON. "Nothing was written" is proven by an injected write fault that
never fires."""

import errno
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from simtest import MI300X_BDFS, NOBODY, SIM, Mount, main, vf_bdf  # noqa: E402

PROBE = os.environ.get("SRIOV_SET_PROBE", "")
GPU0, GPU1 = MI300X_BDFS[0], MI300X_BDFS[1]
NUMVFS = "sriov_numvfs"
GIM_HINT = ("the count also sets the partition mode (MI300X: 1 VF = SPX/NPS1, 8 VFs = CPX/NPS4; "
            "MI350X: 1, 2 or 8)")


def sleeper(stdin):
    """A child holding @stdin open, once it runs sleep (its comm)."""
    p = subprocess.Popen(["sleep", "120"], stdin=stdin)
    for _ in range(200):
        try:
            with open("/proc/%d/comm" % p.pid) as f:
                if f.read().strip() == "sleep":
                    break
        except OSError:
            pass
        time.sleep(0.01)
    return p


class SriovMount(Mount):
    """A mounted simulator with its control socket, a runtime and a state directory."""

    def __init__(self, *args):
        self.dir = tempfile.mkdtemp(prefix="amdsmi-sriov-set.")
        os.chmod(self.dir, 0o755)
        self.sock = os.path.join(self.dir, "ctl.sock")
        self.run_dir = os.path.join(self.dir, "run")
        self.state_dir = os.path.join(self.dir, "state")
        self.dev_root = os.path.join(self.dir, "dev")
        for d in (self.run_dir, self.state_dir, os.path.join(self.dev_root, "vfio")):
            os.makedirs(d)
        super().__init__("--ctl", self.sock, *args)

    def __exit__(self, *exc):
        super().__exit__(*exc)
        shutil.rmtree(self.dir, ignore_errors=True)
        return False

    def ctl(self, *args):
        p = subprocess.run([SIM, "ctl", "--socket", self.sock] + [str(a) for a in args],
                           capture_output=True, text=True, timeout=60)
        if p.returncode != 0:
            raise AssertionError("ctl %s: exit %d: %s" % (" ".join(map(str, args)),
                                                          p.returncode, p.stderr))
        return p.stdout

    def faults(self):
        return json.loads(self.ctl("dump"))["faults"]

    def env(self, dev_root=False):
        e = dict(os.environ)
        e.update(AMDSMI_SYSFS_ROOT=self.root, RUNTIME_DIRECTORY=self.run_dir,
                 STATE_DIRECTORY=self.state_dir,
                 AMDSMI_DEV_ROOT=self.dev_root if dev_root else "")
        e.pop("AMDSMI_DEBUG", None)
        return e

    def probe_cmd(self, *args):
        return [PROBE] + [str(a) for a in args]

    def probe(self, *args, dev_root=False, user=None):
        cmd = self.probe_cmd(*args)
        if user:
            cmd = user + cmd
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=120,
                           env=self.env(dev_root))
        if p.returncode != 0:
            raise AssertionError("%s: exit %d: %s" % (" ".join(cmd), p.returncode, p.stderr))
        if p.stderr:        # the library never prints; sanitizers would
            raise AssertionError("%s: stderr: %s" % (" ".join(cmd), p.stderr))
        return json.loads(p.stdout)

    def driver(self, bdf):
        link = self.path(self.gpu(bdf, "driver"))
        return os.path.basename(os.readlink(link)) if os.path.lexists(link) else None

    def exists(self, rel):
        return os.path.lexists(self.path(rel))

    def devices(self):
        return sorted(os.listdir(self.path("bus/pci/devices")))

    def group(self, bdf):
        return int(os.readlink(self.path(self.gpu(bdf, "iommu_group"))).split("/")[-1])

    def remembered(self, bdf):
        path = os.path.join(self.run_dir, "sriov", bdf)
        if not os.path.exists(path):
            return None
        with open(path) as f:
            return f.read()

    def guard(self, rel):
        """Any write of @rel now fails with EIO; self.unwritten(rel) checks none came."""
        self.ctl("inject", rel, "EIO", "always", "write")

    def hits(self, rel):
        (f,) = [f for f in self.faults() if f["kind"] == "errno" and f["errno"] == "EIO"]
        self.ctl("clear-faults", rel)
        return f["hits"]

    def rebind(self, bdf, old, new):
        """The libvirt recipe by hand (test-sim-sriov.py): @bdf from driver @old to @new."""
        assert self.write("bus/pci/drivers/%s/unbind" % old, bdf) == 0
        assert self.write(self.gpu(bdf, "driver_override"), new) == 0
        assert self.write("bus/pci/drivers_probe", bdf) == 0
        assert self.driver(bdf) == new


class SetNumVfs(unittest.TestCase):
    def check_vfs(self, m, pf, n, driver=None):
        """@pf has exactly VFs 0..n-1 with their links and bus entries."""
        self.assertEqual(m.value(m.gpu(pf, NUMVFS)), str(n))
        links = sorted(f for f in os.listdir(m.path(m.gpu(pf))) if f.startswith("virtfn"))
        self.assertEqual(links, sorted("virtfn%d" % i for i in range(n)))
        for i in range(n):
            vf = vf_bdf(pf, i)
            self.assertEqual(os.readlink(m.path(m.gpu(pf, "virtfn%d" % i))), "../" + vf)
            self.assertTrue(m.exists(m.gpu(vf)), vf)
            self.assertEqual(m.driver(vf), driver, vf)
        self.assertFalse(m.exists(m.gpu(vf_bdf(pf, n))))

    def check_report(self, out, ret, stage, **fields):
        rep = out["report"]
        self.assertEqual((out["return"], rep["error"], rep["stage"]), (ret, min(ret, 0), stage),
                         rep)
        for k, v in fields.items():
            self.assertEqual(rep[k], v, (k, rep))
        if ret == 0:
            self.assertEqual(rep["message"], "")
        else:
            self.assertNotEqual(rep["message"], "")
        return rep

    def test_counts(self):
        """0 → 4 → 4 → 2 → 0 on the synthetic amdgpu with sriov_configure."""
        with SriovMount("-m", "mi300x-sriov", "--seed", "1") as m:
            before = m.devices()
            out = m.probe("set", GPU0, 4)
            self.check_report(out, 0, "done", config="sysfs", total_vfs=8, vfs_before=0,
                              vfs_after=4, changed=True, wrote_zero=False, autoprobe_off=False,
                              n_blockers=0)
            self.check_vfs(m, GPU0, 4)
            vfs = [vf_bdf(GPU0, i) for i in range(4)]
            self.assertEqual(m.devices(), sorted(before + vfs))
            info = out["after"]["info"]
            self.assertEqual((out["after"]["return"], info["num_vfs"]), (0, 4))
            self.assertEqual([v["bdf"] for v in info["vfs"]], vfs)
            self.assertEqual([v["driver"] for v in info["vfs"]], [""] * 4)
            self.assertIsInstance(out["report"]["elapsed_ms"], int)
            # the same count: success, nothing written
            m.guard(m.gpu(GPU0, NUMVFS))
            out = m.probe("set", GPU0, 4)
            self.check_report(out, 0, "done", vfs_before=4, vfs_after=4, changed=False,
                              wrote_zero=False, elapsed_ms=0)
            self.assertEqual(m.hits(m.gpu(GPU0, NUMVFS)), 0)
            # fewer: 0 first (the kernel's EBUSY rule), then the count
            out = m.probe("set", GPU0, 2)
            self.check_report(out, 0, "done", vfs_before=4, vfs_after=2, changed=True,
                              wrote_zero=True)
            self.check_vfs(m, GPU0, 2)
            self.assertEqual(m.devices(), sorted(before + vfs[:2]))
            # more again
            out = m.probe("set", GPU0, 8)
            self.check_report(out, 0, "done", vfs_before=2, vfs_after=8, wrote_zero=True)
            self.check_vfs(m, GPU0, 8)
            # 0: no write of 0 "first"
            out = m.probe("set", GPU0, 0)
            self.check_report(out, 0, "done", vfs_before=8, vfs_after=0, changed=True,
                              wrote_zero=False)
            self.check_vfs(m, GPU0, 0)
            self.assertEqual(m.devices(), before)
            # another PF stayed as it was
            self.check_vfs(m, GPU1, 0)

    def test_preflight_refusals(self):
        with SriovMount("-m", "mi300x-sriov") as m:
            numvfs = m.gpu(GPU0, NUMVFS)
            self.assertEqual(m.write(numvfs, "2"), 0)
            m.guard(numvfs)
            # above sriov_totalvfs: ERANGE, the total in the message
            out = m.probe("set", GPU0, 9)
            rep = self.check_report(out, -errno.ERANGE, "preflight", vfs_before=2, vfs_after=2,
                                    total_vfs=8, changed=False, wrote_zero=False)
            self.assertIn("at most 8 VFs (sriov_totalvfs), not 9", rep["message"])
            self.assertIn(GPU0, rep["message"])
            # more than the PCI core's u16, unknown flags
            out = m.probe("set", GPU0, 70000)
            self.assertIn("65535", self.check_report(out, -errno.EINVAL, "preflight")["message"])
            out = m.probe("set", GPU0, 1, "--flags", 0x100)
            rep = self.check_report(out, -errno.EINVAL, "preflight")
            self.assertIn("unknown flags 0x100", rep["message"])
            # a VF
            out = m.probe("set", vf_bdf(GPU0, 0), 1)
            rep = self.check_report(out, -errno.EINVAL, "preflight")
            self.assertIn("is a VF", rep["message"])
            self.assertIn(GPU0, rep["message"])
            self.assertEqual(m.hits(numvfs), 0)
            self.check_vfs(m, GPU0, 2)
        with SriovMount("-m", "mi300a-4") as m:
            # no VF device ID known: no SR-IOV capability in the simulator
            out = m.probe("set", "0000:01:00.0", 1)
            rep = self.check_report(out, -errno.EOPNOTSUPP, "preflight", config="none")
            self.assertIn("no SR-IOV capability", rep["message"])

    def test_misc(self):
        with SriovMount("-m", "mi300x-sriov") as m:
            out = m.probe("misc", GPU0)
            self.assertEqual((out["set_bad_size"], out["set_bad_size_untouched"]),
                             (-errno.EINVAL, True))
            self.assertEqual((out["bind_bad_size"], out["bind_bad_size_untouched"]),
                             (-errno.EINVAL, True))
            self.assertEqual(out["release_bad_size"], -errno.EINVAL)
            self.assertEqual(out["stages"], ["done", "preflight", "disable", "autoprobe", "enable",
                                             "settle", "verify", "unbind", "probe", "unknown"])

    def test_blockers(self):
        with SriovMount("-m", "mi300x-sriov") as m:
            numvfs = m.gpu(GPU0, NUMVFS)
            self.assertEqual(m.probe("set", GPU0, 3)["return"], 0)
            vf0, vf1, vf2 = (vf_bdf(GPU0, i) for i in range(3))
            self.assertEqual(m.probe("bind", vf1)["return"], 0)
            self.assertEqual(m.driver(vf1), "vfio-pci")
            m.guard(numvfs)
            for extra in ((), ("--dry-run",), ("--autoprobe-off",)):
                out = m.probe("set", GPU0, 1, *extra)
                rep = self.check_report(out, -errno.EBUSY, "preflight", vfs_before=3,
                                        vfs_after=3, changed=False, n_blockers=1)
                self.assertEqual(rep["blockers"], [{"bdf": vf1, "vfio": True, "in_use": False,
                                                    "pid": 0, "comm": ""}])
                self.assertIn(vf1 + " (vfio-pci)", rep["message"])
                self.assertIn("1 VF of %s is bound to vfio-pci or in use" % GPU0, rep["message"])
            self.assertEqual(m.hits(numvfs), 0)
            self.assertEqual(m.value(m.gpu(GPU0, "sriov_drivers_autoprobe")), "1")
            # a VF whose VFIO group a process holds (a node under AMDSMI_DEV_ROOT)
            node = os.path.join(m.dev_root, "vfio", str(m.group(vf2)))
            open(node, "w").close()
            with open(node) as f:
                holder = sleeper(f)
            try:
                out = m.probe("set", GPU0, 0, dev_root=True)
                rep = self.check_report(out, -errno.EBUSY, "preflight", n_blockers=2)
                self.assertEqual(rep["blockers"], [
                    {"bdf": vf1, "vfio": True, "in_use": False, "pid": 0, "comm": ""},
                    {"bdf": vf2, "vfio": False, "in_use": True, "pid": holder.pid,
                     "comm": "sleep"}])
                self.assertIn("2 VFs of %s are bound" % GPU0, rep["message"])
                self.assertIn("%s (in use by %d (sleep))" % (vf2, holder.pid), rep["message"])
                # a dry run with FORCE: the plan passes, nothing written
                m.guard(numvfs)
                out = m.probe("set", GPU0, 1, "--force", "--dry-run", dev_root=True)
                self.check_report(out, 0, "done", n_blockers=2, changed=False, vfs_after=3)
                self.assertEqual(m.hits(numvfs), 0)
                # FORCE: the VFs go, vfio-pci's too, and what bind remembered of them
                remembered = os.path.join(m.run_dir, "sriov", vf1)
                self.assertTrue(os.path.exists(remembered))
                out = m.probe("set", GPU0, 1, "--force", dev_root=True)
                self.check_report(out, 0, "done", n_blockers=2, changed=True, wrote_zero=True,
                                  vfs_after=1)
                self.check_vfs(m, GPU0, 1)
                self.assertFalse(m.exists("bus/pci/drivers/vfio-pci/" + vf1))
                self.assertFalse(os.path.exists(remembered))
            finally:
                holder.kill()
                holder.wait()

    def test_autoprobe_off(self):
        with SriovMount("-m", "mi300x-sriov") as m:
            # vfio-pci claims the VF ID: new VFs bind to it unless autoprobe is off
            self.assertEqual(m.write("bus/pci/drivers/vfio-pci/new_id", "1002 74b5"), 0)
            out = m.probe("set", GPU1, 2)
            self.check_report(out, 0, "done", autoprobe_off=False)
            self.check_vfs(m, GPU1, 2, "vfio-pci")
            out = m.probe("set", GPU0, 2, "--autoprobe-off")
            self.check_report(out, 0, "done", autoprobe_off=True, vfs_after=2)
            self.assertEqual(m.value(m.gpu(GPU0, "sriov_drivers_autoprobe")), "0")
            self.assertEqual(out["after"]["info"]["drivers_autoprobe"], 0)
            self.check_vfs(m, GPU0, 2, None)
            # off already: not written again
            m.guard(m.gpu(GPU0, "sriov_drivers_autoprobe"))
            out = m.probe("set", GPU0, 3, "--autoprobe-off")
            self.check_report(out, 0, "done", autoprobe_off=False, wrote_zero=True)
            self.assertEqual(m.hits(m.gpu(GPU0, "sriov_drivers_autoprobe")), 0)
            self.check_vfs(m, GPU0, 3, None)
            # a failed write of autoprobe stops before the count
            self.assertEqual(m.write(m.gpu(GPU1, NUMVFS), "0"), 0)
            m.ctl("inject", m.gpu(GPU1, "sriov_drivers_autoprobe"), "EACCES", "once", "write")
            out = m.probe("set", GPU1, 2, "--autoprobe-off")
            rep = self.check_report(out, -errno.EACCES, "autoprobe", autoprobe_off=False,
                                    changed=False, vfs_after=0)
            self.assertIn("sriov_drivers_autoprobe needs root", rep["message"])
            self.check_vfs(m, GPU1, 0)

    def test_kernel_errno(self):
        """Each errno of the write of the count, as the kernel would return it."""
        cases = [
            ("ENOMEM", -errno.ENOMEM,
             "could not place 2 VFs of %s (ENOMEM): not enough MMIO" % GPU0),
            ("EBUSY", -errno.EBUSY, "refused to change the VF count of %s to 2 (EBUSY)" % GPU0),
            ("EINVAL", -errno.EINVAL, "rejected 2 VFs for %s (EINVAL)" % GPU0),
            ("EPERM", -errno.EACCES, "sriov_numvfs needs root"),
            ("EACCES", -errno.EACCES, "sriov_numvfs needs root"),
            ("ENOENT", -errno.EOPNOTSUPP,
             "amdgpu cannot enable VFs through sysfs (no sriov_configure): MI300-class hosts use "
             "gim"),
            ("EIO", -errno.EIO, "writing 2 to %s/sriov_numvfs failed: EIO" % GPU0),
            ("ENOSPC", -errno.ENOSPC, os.strerror(errno.ENOSPC)),
        ]
        with SriovMount("-m", "mi300x-sriov") as m:
            numvfs = m.gpu(GPU0, NUMVFS)
            for name, ret, text in cases:
                with self.subTest(errno=name):
                    m.ctl("inject", numvfs, name, "once", "write")
                    out = m.probe("set", GPU0, 2)
                    rep = self.check_report(out, ret, "enable", vfs_before=0, vfs_after=0,
                                            changed=False, wrote_zero=False)
                    self.assertIn(text, rep["message"])
                    self.assertEqual(m.faults(), [])
                    self.check_vfs(m, GPU0, 0)
            # failing the write of 0: nothing changed
            self.assertEqual(m.write(numvfs, "2"), 0)
            m.ctl("inject", numvfs, "EBUSY", "once", "write")
            out = m.probe("set", GPU0, 3)
            rep = self.check_report(out, -errno.EBUSY, "disable", vfs_before=2, vfs_after=2,
                                    changed=False, wrote_zero=False)
            self.assertIn("to 0 (EBUSY)", rep["message"])
            self.check_vfs(m, GPU0, 2)
            # a write of 0 without effect: the count read back is not 0
            m.ctl("no-effect", numvfs, "once")
            out = m.probe("set", GPU0, 3)
            rep = self.check_report(out, -errno.EIO, "disable", vfs_before=2, vfs_after=2,
                                    wrote_zero=True)
            self.assertIn("0 was written to %s/sriov_numvfs, but it reads 2" % GPU0,
                          rep["message"])
            self.check_vfs(m, GPU0, 2)

    def test_enable_fails_after_zero(self):
        """The write of the new count fails after 0 was written: the report says the PF has 0
        VFs now. The ENOMEM fault is injected while the library reads the 0 back (held by a
        delay), so that it cannot hit the write of 0."""
        with SriovMount("-m", "mi300x-sriov") as m:
            numvfs = m.gpu(GPU0, NUMVFS)
            self.assertEqual(m.write(numvfs, "2"), 0)

            def wait_fired():
                deadline = time.monotonic() + 30
                while any(f["kind"] == "delay" for f in m.faults()):
                    self.assertLess(time.monotonic(), deadline, "the delay never fired")
                    time.sleep(0.01)

            m.ctl("delay", numvfs, 1500, "once", "write")
            p = subprocess.Popen(m.probe_cmd("set", GPU0, 3), stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True, env=m.env())
            try:
                wait_fired()                        # the write of 0 sleeps: no errno can hit it
                m.ctl("delay", numvfs, 1500, "once", "read")
                wait_fired()                        # the read back of 0 sleeps
                m.ctl("inject", numvfs, "ENOMEM", "once", "write")
                stdout, stderr = p.communicate(timeout=60)
            finally:
                p.kill()
                p.wait()
            self.assertEqual((p.returncode, stderr), (0, ""))
            out = json.loads(stdout)
            rep = self.check_report(out, -errno.ENOMEM, "enable", vfs_before=2, vfs_after=0,
                                    changed=True, wrote_zero=True)
            self.assertIn("not enough MMIO space", rep["message"])
            self.assertIn("0 was written first, so PF %s now has 0 VFs" % GPU0, rep["message"])
            self.assertGreaterEqual(rep["elapsed_ms"], 3000)
            self.assertEqual(m.faults(), [])
            self.check_vfs(m, GPU0, 0)

    def test_settle_timeout(self):
        with SriovMount("-m", "mi300x-sriov") as m:
            m.ctl("no-effect", m.gpu(GPU0, NUMVFS), "once")
            out = m.probe("set", GPU0, 2, "--timeout", 300)
            rep = self.check_report(out, -errno.ETIMEDOUT, "settle", vfs_after=0, changed=True)
            self.assertIn("did not all appear", rep["message"])
            self.assertIn("300 ms", rep["message"])
            self.assertGreaterEqual(rep["elapsed_ms"], 300)
            self.assertLess(rep["elapsed_ms"], 5000)

    def test_not_root(self):
        with SriovMount("-m", "mi300x-sriov") as m:
            out = m.probe("set", GPU0, 2, user=NOBODY)
            rep = self.check_report(out, -errno.EACCES, "enable", changed=False)
            self.assertIn("%s/bus/pci/devices/%s/sriov_numvfs needs root" % (m.root, GPU0),
                          rep["message"])
            self.check_vfs(m, GPU0, 0)

    def test_dry_run(self):
        with SriovMount("-m", "mi300x-sriov") as m:
            numvfs = m.gpu(GPU0, NUMVFS)
            m.guard(numvfs)
            m.guard(m.gpu(GPU0, "sriov_drivers_autoprobe"))
            out = m.probe("set", GPU0, 4, "--dry-run", "--autoprobe-off")
            self.check_report(out, 0, "done", vfs_before=0, vfs_after=0, changed=False,
                              autoprobe_off=False, elapsed_ms=0)
            out = m.probe("set", GPU0, 9, "--dry-run")
            self.check_report(out, -errno.ERANGE, "preflight")
            self.assertEqual(len([f for f in m.faults() if f["hits"]]), 0)
            self.check_vfs(m, GPU0, 0)
            self.assertEqual(m.value(m.gpu(GPU0, "sriov_drivers_autoprobe")), "1")

    def test_vfio_pf(self):
        """A PF bound to vfio-pci, loaded with enable_sriov: its sriov_configure works, and its
        VFs come with driver_override vfio-pci, bound to it: they block the next change."""
        with SriovMount("-m", "mi300x-sriov") as m:
            m.rebind(GPU1, "amdgpu", "vfio-pci")
            out = m.probe("set", GPU1, 3)
            self.check_report(out, 0, "done", config="sysfs", vfs_after=3, n_blockers=0)
            self.assertEqual(out["after"]["info"]["pf_driver"], "vfio-pci")
            self.check_vfs(m, GPU1, 3, "vfio-pci")
            self.assertEqual([v["driver_override"] for v in out["after"]["info"]["vfs"]],
                             ["vfio-pci"] * 3)
            m.guard(m.gpu(GPU1, NUMVFS))
            out = m.probe("set", GPU1, 1)
            self.check_report(out, -errno.EBUSY, "preflight", n_blockers=3)
            self.assertEqual(m.hits(m.gpu(GPU1, NUMVFS)), 0)
            out = m.probe("set", GPU1, 1, "--force")
            self.check_report(out, 0, "done", vfs_after=1, wrote_zero=True)
            self.check_vfs(m, GPU1, 1, "vfio-pci")
        with SriovMount("-m", "mi300x-gim-1vf") as m:
            # vfio-pci without enable_sriov: its callback answers ENOENT
            self.assertEqual(m.write("bus/pci/drivers/gim/unbind", GPU0), 0)
            self.assertEqual(m.write(m.gpu(GPU0, "driver_override"), "vfio-pci"), 0)
            self.assertEqual(m.write("bus/pci/drivers_probe", GPU0), 0)
            out = m.probe("set", GPU0, 1)
            rep = self.check_report(out, -errno.EOPNOTSUPP, "enable", config="sysfs",
                                    changed=False, vfs_after=0)
            self.assertIn("vfio-pci enables VFs only when loaded with enable_sriov=1",
                          rep["message"])
            self.check_vfs(m, GPU0, 0)

    def test_gim(self):
        for machine, vfs, want in (("mi300x-gim-1vf", 1, 8), ("mi300x-gim-8vf", 8, 1)):
            with self.subTest(machine=machine), SriovMount("-m", machine) as m:
                numvfs = m.gpu(GPU1, NUMVFS)
                m.guard(numvfs)
                devices = m.devices()
                for extra in ((), ("--dry-run",), ("--force",)):
                    out = m.probe("set", GPU1, want, *extra)
                    rep = self.check_report(out, -errno.EOPNOTSUPP, "preflight",
                                            config="gim-param", vfs_before=vfs, vfs_after=vfs,
                                            total_vfs=8, changed=False)
                    msg = rep["message"]
                    self.assertIn("gim sets the VF count with its vf_num module parameter "
                                  "(now %d for this GPU)" % vfs, msg)
                    self.assertIn("`amdsmi sriov set -g %s --num-vfs %d --persist` writes "
                                  "/etc/modprobe.d/amdsmi-gim.conf for the next load of gim"
                                  % (GPU1, want), msg)
                    self.assertIn(GIM_HINT, msg)
                # the kernel's order: the range and the no-op come before the driver
                out = m.probe("set", GPU1, vfs)
                self.check_report(out, 0, "done", changed=False, vfs_after=vfs)
                out = m.probe("set", GPU1, 9)
                self.check_report(out, -errno.ERANGE, "preflight")
                self.assertEqual(m.hits(numvfs), 0)
                self.assertEqual(m.devices(), devices)
                self.assertEqual(m.value(numvfs), str(vfs))

    def test_no_driver(self):
        with SriovMount("-m", "mi300x-sriov") as m:
            self.assertEqual(m.write("bus/pci/drivers/amdgpu/unbind", GPU1), 0)
            numvfs = m.gpu(GPU1, NUMVFS)
            m.guard(numvfs)
            for extra in ((), ("--dry-run",)):
                out = m.probe("set", GPU1, 2, *extra)
                rep = self.check_report(out, -errno.EOPNOTSUPP, "preflight", config="no-driver",
                                        changed=False)
                self.assertIn("no driver is bound to PF %s" % GPU1, rep["message"])
            self.assertEqual(m.hits(numvfs), 0)
            self.check_vfs(m, GPU1, 0)

    def test_amdgpu_without_sriov_configure(self):
        """Upstream amdgpu (bare metal): only the write can tell; ENOENT becomes EOPNOTSUPP."""
        with SriovMount("-m", "mi300x-8") as m:
            out = m.probe("set", GPU0, 2)
            rep = self.check_report(out, -errno.EOPNOTSUPP, "enable", config="sysfs",
                                    changed=False, vfs_after=0)
            self.assertEqual(rep["message"],
                             "amdgpu cannot enable VFs through sysfs (no sriov_configure): "
                             "MI300-class hosts use gim (PF %s)" % GPU0)
            self.check_vfs(m, GPU0, 0)


class BindRelease(unittest.TestCase):
    def check_bind(self, out, ret, stage, **fields):
        rep = out["report"]
        self.assertEqual((out["return"], rep["error"], rep["stage"]), (ret, min(ret, 0), stage),
                         rep)
        for k, v in fields.items():
            self.assertEqual(rep[k], v, (k, rep))
        self.assertEqual(rep["message"] == "", ret == 0, rep)
        return rep

    def test_round_trip(self):
        with SriovMount("-m", "mi300x-sriov") as m:
            self.assertEqual(m.write(m.gpu(GPU0, NUMVFS), "2"), 0)
            vf0, vf1 = vf_bdf(GPU0, 0), vf_bdf(GPU0, 1)
            override = m.gpu(vf0, "driver_override")
            # a dry run changes nothing
            out = m.probe("bind", vf0, "--dry-run")
            self.check_bind(out, 0, "done", changed=False, driver_after="")
            self.assertIsNone(m.driver(vf0))
            self.assertIsNone(m.remembered(vf0))
            out = m.probe("bind", vf0)
            self.check_bind(out, 0, "done", changed=True, driver_before="", override_before="",
                            driver_after="vfio-pci", override_after="vfio-pci")
            self.assertEqual(m.driver(vf0), "vfio-pci")
            self.assertEqual(m.value(override), "vfio-pci")
            self.assertEqual(m.remembered(vf0), "\n")       # no driver before
            self.assertIsNone(m.driver(vf1))                # the other VF untouched
            # again: unchanged
            out = m.probe("bind", vf0)
            self.check_bind(out, 0, "done", changed=False, driver_before="vfio-pci",
                            driver_after="vfio-pci")
            self.assertEqual(m.remembered(vf0), "\n")
            # release: back to no driver, the override cleared, forgotten
            out = m.probe("release", vf0, "--dry-run")
            self.check_bind(out, 0, "done", changed=False, driver_after="vfio-pci")
            self.assertEqual(m.driver(vf0), "vfio-pci")
            out = m.probe("release", vf0)
            self.check_bind(out, 0, "done", changed=True, driver_before="vfio-pci",
                            override_before="vfio-pci", driver_after="", override_after="")
            self.assertIsNone(m.driver(vf0))
            self.assertEqual(m.value(override), "(null)")
            self.assertIsNone(m.remembered(vf0))
            out = m.probe("release", vf0)
            self.check_bind(out, 0, "done", changed=False, driver_after="", override_after="")
            # a stale override: release clears it (it would take the VF to vfio-pci)
            self.assertEqual(m.write(m.gpu(vf1, "driver_override"), "vfio-pci"), 0)
            out = m.probe("release", vf1)
            self.check_bind(out, 0, "done", changed=True, driver_before="",
                            override_before="vfio-pci", override_after="")
            self.assertEqual(m.value(m.gpu(vf1, "driver_override")), "(null)")
            # only host VFs
            for gpu in (GPU0, GPU1):
                for verb in ("bind", "release"):
                    out = m.probe(verb, gpu)
                    rep = self.check_bind(out, -errno.EINVAL, "preflight")
                    self.assertIn("is not a VF of this host", rep["message"])
            self.assertEqual(m.driver(GPU0), "amdgpu")
            out = m.probe("bind", vf0, "--flags", 4)        # AUTOPROBE_OFF means nothing here
            self.assertIn("unknown flags 0x4", self.check_bind(out, -errno.EINVAL,
                                                               "preflight")["message"])

    def test_vfio_ids_host(self):
        """gim-8vf: VFs bound to vfio-pci through vfio-pci.ids. A release leaves the VF
        unbound (a probe would give it straight back to vfio-pci); bind takes it again."""
        with SriovMount("-m", "mi300x-gim-8vf") as m:
            vf = vf_bdf(GPU1, 3)
            out = m.probe("bind", vf)
            self.check_bind(out, 0, "done", changed=False, driver_before="vfio-pci",
                            driver_after="vfio-pci", override_before="")
            self.assertIsNone(m.remembered(vf))
            out = m.probe("release", vf)
            self.check_bind(out, 0, "done", changed=True, driver_before="vfio-pci",
                            driver_after="", override_after="")
            self.assertIsNone(m.driver(vf))
            self.assertFalse(m.exists("bus/pci/drivers/vfio-pci/" + vf))
            self.assertEqual(m.driver(vf_bdf(GPU1, 4)), "vfio-pci")
            out = m.probe("bind", vf)
            self.check_bind(out, 0, "done", changed=True, driver_before="",
                            driver_after="vfio-pci", override_after="vfio-pci")
            self.assertEqual(m.driver(vf), "vfio-pci")
            self.assertEqual(m.remembered(vf), "\n")

    def test_in_use(self):
        with SriovMount("-m", "mi300x-gim-8vf") as m:
            vf = vf_bdf(GPU0, 0)
            node = os.path.join(m.dev_root, "vfio", str(m.group(vf)))
            open(node, "w").close()
            with open(node) as f:
                holder = sleeper(f)
            try:
                m.guard(m.gpu(vf, "driver_override"))
                m.guard("bus/pci/drivers/vfio-pci/unbind")
                for extra in ((), ("--dry-run",)):
                    out = m.probe("release", vf, *extra, dev_root=True)
                    rep = self.check_bind(out, -errno.EBUSY, "preflight", changed=False,
                                          driver_after="vfio-pci")
                    self.assertIn("VF %s is in use: its VFIO group %d is held by %d (sleep)"
                                  % (vf, m.group(vf), holder.pid), rep["message"])
                self.assertEqual([f["hits"] for f in m.faults()], [0, 0])
                m.ctl("clear-faults")
                self.assertEqual(m.driver(vf), "vfio-pci")
                # bound already: a bind is a no-op, in use or not
                out = m.probe("bind", vf, dev_root=True)
                self.check_bind(out, 0, "done", changed=False)
                # FORCE releases it all the same
                out = m.probe("release", vf, "--force", dev_root=True)
                self.check_bind(out, 0, "done", changed=True, driver_after="")
                self.assertIsNone(m.driver(vf))
                # a VF not on vfio-pci whose group is held (by another device of the group):
                # bind refuses
                out = m.probe("bind", vf, dev_root=True)
                rep = self.check_bind(out, -errno.EBUSY, "preflight", changed=False,
                                      driver_after="")
                self.assertIn("held by %d (sleep)" % holder.pid, rep["message"])
                self.assertIsNone(m.driver(vf))
                self.assertIsNone(m.remembered(vf))
            finally:
                holder.kill()
                holder.wait()
            # without a device root nothing is known to be in use
            out = m.probe("bind", vf)
            self.check_bind(out, 0, "done", changed=True, driver_after="vfio-pci")

    def test_bind_failures(self):
        with SriovMount("-m", "mi300x-sriov") as m:
            self.assertEqual(m.write(m.gpu(GPU0, NUMVFS), "2"), 0)
            vf = vf_bdf(GPU0, 0)
            override = m.gpu(vf, "driver_override")
            # drivers_probe fails: the override is cleared again, nothing remembered
            m.ctl("inject", "bus/pci/drivers_probe", "EIO", "once", "write")
            out = m.probe("bind", vf)
            rep = self.check_bind(out, -errno.EIO, "probe", driver_after="", override_after="")
            self.assertIn("bus/pci/drivers_probe failed: EIO", rep["message"])
            self.assertEqual(m.value(override), "(null)")
            self.assertIsNone(m.driver(vf))
            self.assertIsNone(m.remembered(vf))
            # drivers_probe does nothing: vfio-pci did not take it
            m.ctl("no-effect", "bus/pci/drivers_probe", "once")
            out = m.probe("bind", vf)
            rep = self.check_bind(out, -errno.EIO, "probe", driver_after="", override_after="")
            self.assertIn("vfio-pci did not take VF %s (driver now: none)" % vf, rep["message"])
            self.assertEqual(m.value(override), "(null)")
            self.assertIsNone(m.remembered(vf))
            # the override cannot be written
            m.ctl("inject", override, "EACCES", "once", "write")
            out = m.probe("bind", vf)
            rep = self.check_bind(out, -errno.EACCES, "unbind", changed=False)
            self.assertIn("driver_override needs root", rep["message"])
            self.assertIsNone(m.remembered(vf))
            # not root: the driver cannot be remembered, nothing is written
            out = m.probe("bind", vf, user=NOBODY)
            rep = self.check_bind(out, -errno.EACCES, "preflight", changed=False)
            self.assertIn("cannot remember the driver of VF %s" % vf, rep["message"])
            self.assertIsNone(m.driver(vf))
            self.assertEqual(m.value(override), "(null)")
            # finally it works
            out = m.probe("bind", vf)
            self.check_bind(out, 0, "done", driver_after="vfio-pci")
            # a failed unbind of vfio-pci in a release
            m.ctl("inject", "bus/pci/drivers/vfio-pci/unbind", "EIO", "once", "write")
            out = m.probe("release", vf)
            rep = self.check_bind(out, -errno.EIO, "unbind", driver_after="vfio-pci",
                                  override_after="")
            self.assertIn("vfio-pci/unbind failed: EIO", rep["message"])
            out = m.probe("release", vf)
            self.check_bind(out, 0, "done", driver_after="")


if __name__ == "__main__":
    if not PROBE or not os.access(PROBE, os.X_OK):
        sys.exit("FAIL: SRIOV_SET_PROBE is not the sriov-set-probe executable: %r" % PROBE)
    main()
