#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""libamdsmi's compute-partition switch (partition/partition-set.c) on simulator mounts, through
partition-set-probe (tests/sim/partition-set-probe.c), which prints the change report, the
context's view of every GPU afterwards and the partition handles taken before the switch as
JSON: SPX -> CPX -> SPX on mi300x-8, modes the hardware or the memory mode refuses, the same
mode, KFD users (real processes and counted ones), dry runs, a driver EIO (KFD lost, rollback),
an EIO injected before the driver, a device that ignores the write, a reset, a non-root caller,
a hot-unplug during a slow switch, stale handles, and one switch on mi300a-4 and mi350x-8."""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from simtest import GPU0, GPU1, GiB, MI300X_BDFS, NOBODY, SIM, Mount, main  # noqa: E402

PROBE = os.environ.get("PARTITION_SET_PROBE", "")
CCP = "current_compute_partition"
EINVAL, EBUSY, EIO, EACCES, ENODEV, ESTALE = -22, -16, -5, -13, -19, -116


class Sim(Mount):
    """A mount with a private runtime directory, the probe and the control socket."""

    def __enter__(self):
        super().__enter__()
        self.runtime = tempfile.mkdtemp(prefix="amdsmi-run.", dir=self.tmp)
        os.chmod(self.runtime, 0o777)
        return self

    def env(self):
        return dict(os.environ, AMDSMI_SYSFS_ROOT=self.root, RUNTIME_DIRECTORY=self.runtime)

    def probe(self, *args, user=None):
        p = subprocess.run((user or []) + [PROBE] + [str(a) for a in args], env=self.env(),
                           capture_output=True, text=True, timeout=120)
        if p.returncode != 0:
            raise AssertionError("partition-set-probe %s: exit %d: %s"
                                 % (" ".join(map(str, args)), p.returncode, p.stderr))
        return json.loads(p.stdout)

    def set(self, bdf, mode, *args, user=None):
        return self.probe("set", bdf, mode, *args, user=user)

    def ctl(self, *args):
        p = subprocess.run([SIM, "ctl", "--mount", self.root] + [str(a) for a in args],
                           capture_output=True, text=True, timeout=60)
        if p.returncode != 0:
            raise AssertionError("ctl %s: exit %d: %s" % (" ".join(map(str, args)),
                                                          p.returncode, p.stderr))
        return p.stdout

    def dump(self):
        return json.loads(self.ctl("dump"))

    def mode(self, bdf):
        return self.value(self.gpu(bdf, CCP))


def sleeper():
    """A live child process running sleep (a real PID with comm "sleep")."""
    p = subprocess.Popen(["sleep", "120"])
    for _ in range(200):
        try:
            with open("/proc/%d/comm" % p.pid) as f:
                if f.read().strip() == "sleep":
                    break
        except OSError:
            pass
        time.sleep(0.01)
    return p


def nps2_machine(tmp):
    path = os.path.join(tmp, "mi300x-nps2.json")
    with open(path, "w") as f:
        json.dump({"name": "mi300x-1-nps2",
                   "cpu": {"sockets": 1, "cores_per_socket": 8, "threads_per_core": 1},
                   "gpu_defaults": {"product": "MI300X", "memory_partition": "NPS2",
                                    "compute_partition": "DPX"},
                   "gpus": [{"bdf": GPU0}]}, f)
    return path


class Switch(unittest.TestCase):
    def assertUnchanged(self, c, mode="SPX", parts=1):
        self.assertEqual(c["changed"], 0)
        self.assertEqual(c["compute_before"], mode)
        self.assertEqual(c["compute_after"], mode)
        self.assertEqual(c["partitions_before"], parts)
        self.assertEqual(c["partitions_after"], parts)
        self.assertEqual(c["generation_after"], c["generation_before"])
        self.assertEqual(c["rolled_back"], 0)
        self.assertEqual(c["kfd_lost"], 0)

    def assertFailed(self, c, err, stage):
        self.assertEqual(c["return"], err, c["message"])
        self.assertEqual(c["error"], err)
        self.assertEqual(c["stage"], stage)

    def test_mi300x_spx_cpx_spx(self):
        with Sim("--machine", "mi300x-8", "--seed", "1") as m:
            misc = m.probe("misc", GPU0)
            self.assertEqual(misc["bad_size"], EINVAL)
            self.assertTrue(misc["bad_size_untouched"])
            self.assertFailed(misc["bad_mode"], EINVAL, "preflight")
            self.assertFailed(misc["bad_flags"], EINVAL, "preflight")
            self.assertEqual(misc["stages"], ["done", "preflight", "write", "settle", "verify",
                                              "unbind", "bind", None])
            self.assertEqual(m.probe("kfd", GPU0), {"count": 0, "processes": []})

            # the same mode: nothing is written (a write would fail)
            m.ctl("inject", m.path(m.gpu(GPU0, CCP)), "EIO", "write")
            d = m.set(GPU0, "SPX")
            c = d["change"]
            self.assertEqual(c["return"], 0)
            self.assertEqual(c["stage"], "done")
            self.assertEqual(c["message"], "")
            self.assertEqual(c["elapsed_ms"], 0)
            self.assertUnchanged(c)
            self.assertEqual(c["memory_before"], "NPS1")
            self.assertTrue(all(o["check"] == 0 for o in d["old"]))
            m.ctl("clear-faults")

            # not in the hardware's set
            c = m.set(GPU0, "TPX")["change"]
            self.assertFailed(c, EINVAL, "preflight")
            self.assertIn("TPX is not in the hardware's set", c["message"])
            self.assertIn("(SPX, DPX, QPX, CPX)", c["message"])
            self.assertUnchanged(c)

            # a dry run of a valid change changes nothing
            gen = m.generation()
            c = m.set(GPU0, "CPX", "--dry-run")["change"]
            self.assertEqual(c["return"], 0)
            self.assertEqual(c["message"], "")
            self.assertUnchanged(c)
            self.assertEqual(m.mode(GPU0), "SPX")
            self.assertEqual(m.generation(), gen)

            # SPX -> CPX
            d = m.set(GPU0, "CPX")
            c = d["change"]
            self.assertEqual(c["return"], 0, c["message"])
            self.assertEqual((c["stage"], c["message"], c["changed"]), ("done", "", 1))
            self.assertEqual((c["compute_before"], c["compute_after"]), ("SPX", "CPX"))
            self.assertEqual((c["partitions_before"], c["partitions_after"]), (1, 8))
            self.assertEqual(c["generation_before"], gen)
            self.assertEqual(c["generation_after"], gen + 9)    # one removal, eight additions
            self.assertEqual(c["generation_after"], m.generation())
            self.assertEqual((c["rolled_back"], c["rollback_error"], c["kfd_lost"]), (0, 0, 0))
            self.assertEqual(m.mode(GPU0), "CPX")
            nodes = m.gpu_nodes(GPU0)
            self.assertEqual(len(nodes), 8)
            # the caller's context follows: GPU 0 has the new partitions, the others are as
            # they were (their nodes moved, so their old handles are stale too)
            g = d["gpus"][GPU0]
            self.assertEqual((g["mode"], g["partitions"]), ("CPX", 8))
            self.assertEqual(sorted(g["gpu_ids"]), sorted(n[2] for n in nodes))
            self.assertEqual(g["memory"], [24 * GiB] * 8)
            self.assertEqual(g["check"], [0] * 8)
            for bdf in MI300X_BDFS[1:]:
                self.assertEqual((d["gpus"][bdf]["mode"], d["gpus"][bdf]["partitions"]),
                                 ("SPX", 1))
                self.assertEqual(m.mode(bdf), "SPX")
                self.assertEqual(len(m.gpu_nodes(bdf)), 1)
            self.assertEqual(len(d["old"]), 8)
            for o in d["old"]:
                self.assertEqual(o["check"], ESTALE, o)
                # never another partition's data: not read after the switch, or its own
                if o["bdf"] != GPU0:
                    self.assertIsNone(o["memory_bytes"], o)

            # CPX -> SPX: the old handles' node numbers now name other GPUs' nodes
            d = m.set(GPU0, "SPX")
            c = d["change"]
            self.assertEqual(c["return"], 0, c["message"])
            self.assertEqual((c["compute_before"], c["compute_after"]), ("CPX", "SPX"))
            self.assertEqual((c["partitions_before"], c["partitions_after"]), (8, 1))
            self.assertEqual(c["generation_after"], c["generation_before"] + 9)
            self.assertEqual(d["gpus"][GPU0]["memory"], [192 * GiB])
            stale = [o for o in d["old"] if o["bdf"] == GPU0]
            self.assertEqual(len(stale), 8)
            node_ids = {n[0] for n in m.kfd_nodes()}
            for o in d["old"]:
                self.assertEqual(o["check"], ESTALE, o)
            for o in stale:
                self.assertIn(o["memory_bytes"], (None, 24 * GiB), o)
            # some old node numbers exist again (other GPUs' nodes): the test means something
            self.assertTrue(any(o["kfd_node"] in node_ids for o in stale))
            self.assertEqual(len(m.gpu_nodes(GPU0)), 1)

    def test_nps2(self):
        tmp = tempfile.mkdtemp(prefix="amdsmi-nps2.")
        self.addCleanup(shutil.rmtree, tmp, True)
        with Sim("--machine", nps2_machine(tmp)) as m:
            self.assertEqual(m.mode(GPU0), "DPX")
            c = m.set(GPU0, "CPX")["change"]
            self.assertFailed(c, EINVAL, "preflight")
            self.assertEqual(c["message"], "CPX is not available under NPS2 (available: DPX)")
            self.assertUnchanged(c, "DPX", 2)
            self.assertEqual(c["memory_before"], "NPS2")
            c = m.set(GPU0, "SPX", "--dry-run")["change"]
            self.assertFailed(c, EINVAL, "preflight")
            self.assertIn("SPX is not available under NPS2", c["message"])
            c = m.set(GPU0, "TPX")["change"]
            self.assertFailed(c, EINVAL, "preflight")
            self.assertIn("hardware's set", c["message"])
            c = m.set(GPU0, "DPX")["change"]
            self.assertEqual(c["return"], 0)
            self.assertUnchanged(c, "DPX", 2)
            self.assertEqual(m.mode(GPU0), "DPX")

    def test_kfd_users(self):
        with Sim("--machine", "mi300x-8", "--kfd-users", GPU1 + "=2") as m:
            a, b = sleeper(), sleeper()
            try:
                m.ctl("kfd-users", "add", GPU0, b.pid, 2 * GiB)
                m.ctl("kfd-users", "add", GPU0, a.pid, GiB)
                k = m.probe("kfd", GPU0)
                self.assertEqual(k["count"], 2)
                self.assertEqual([p["pid"] for p in k["processes"]], sorted([a.pid, b.pid]))
                for p in k["processes"]:
                    self.assertEqual(p["comm"], "sleep")
                    self.assertEqual(p["bdf"], GPU0)
                    self.assertEqual(p["vram_bytes"], GiB if p["pid"] == a.pid else 2 * GiB)
                self.assertEqual(m.probe("kfd", GPU0, 1)["count"], 2)   # count > max
                self.assertEqual(len(m.probe("kfd", GPU0, 1)["processes"]), 1)
                self.assertEqual(m.probe("kfd", GPU1)["count"], 0)      # other GPUs: none

                for extra in ([], ["--dry-run"]):
                    gen = m.generation()
                    c = m.set(GPU0, "CPX", *extra)["change"]
                    self.assertFailed(c, EBUSY, "preflight")
                    self.assertEqual(c["n_blockers"], 2)
                    self.assertEqual(sorted((p["pid"], p["comm"]) for p in c["blockers"]),
                                     sorted([(a.pid, "sleep"), (b.pid, "sleep")]))
                    first, second = sorted([a.pid, b.pid])
                    self.assertEqual(c["message"],
                                     "2 processes use GPU %s through KFD: %d (sleep), %d (sleep)"
                                     % (GPU0, first, second))
                    self.assertUnchanged(c)
                    self.assertEqual(m.mode(GPU0), "SPX")
                    self.assertEqual(m.generation(), gen)

                m.ctl("kfd-users", "remove", GPU0, b.pid)
                c = m.set(GPU0, "CPX")["change"]
                self.assertFailed(c, EBUSY, "preflight")
                self.assertEqual(c["message"], "1 process uses GPU %s through KFD: %d (sleep)"
                                 % (GPU0, a.pid))
                m.ctl("kfd-users", "remove", GPU0, a.pid)
                c = m.set(GPU0, "CPX")["change"]
                self.assertEqual(c["return"], 0, c["message"])
                self.assertEqual(m.mode(GPU0), "CPX")
                # users of a CPX GPU are found through all eight partitions' gpu_ids
                m.ctl("kfd-users", "add", GPU0, a.pid)
                c = m.set(GPU0, "SPX")["change"]
                self.assertFailed(c, EBUSY, "preflight")
                self.assertEqual([p["pid"] for p in c["blockers"]], [a.pid])
                self.assertUnchanged(c, "CPX", 8)
            finally:
                for p in (a, b):
                    p.kill()
                    p.wait()

            # counted users without a process: the preflight cannot see them, the driver can
            c = m.set(GPU1, "CPX", "--dry-run")["change"]
            self.assertEqual(c["return"], 0)
            c = m.set(GPU1, "CPX")["change"]
            self.assertFailed(c, EBUSY, "write")
            self.assertEqual(c["n_blockers"], 0)
            self.assertIn("busy", c["message"])
            self.assertUnchanged(c)
            self.assertEqual(m.mode(GPU1), "SPX")

    def test_failures(self):
        g = MI300X_BDFS
        with Sim("--machine", "mi300x-8") as m:
            # the driver fails KFD's re-init: the hardware switched, KFD is gone
            m.ctl("switch-error", g[0], "EIO")
            c = m.set(g[0], "CPX", "--timeout", 120000)["change"]
            self.assertFailed(c, EIO, "write")
            self.assertEqual(c["kfd_lost"], 1)
            self.assertEqual(c["rolled_back"], 1)
            self.assertEqual(c["rollback_error"], 0)
            self.assertEqual(c["changed"], 1)
            self.assertEqual((c["compute_before"], c["compute_after"]), ("SPX", "SPX"))
            self.assertEqual(c["partitions_after"], 0)
            self.assertIn("EIO", c["message"])
            self.assertIn("SPX restored", c["message"])
            self.assertIn("amdsmi reset --reload-driver", c["message"])
            self.assertLess(c["elapsed_ms"], 60000)     # no waiting for nodes that never come
            self.assertEqual(m.mode(g[0]), "SPX")
            self.assertEqual(m.gpu_nodes(g[0]), [])
            # later switches work without KFD and say it is still down
            c = m.set(g[0], "CPX", "--timeout", 120000)["change"]
            self.assertEqual(c["return"], 0, c["message"])
            self.assertEqual((c["compute_after"], c["kfd_lost"], c["partitions_after"]),
                             ("CPX", 1, 0))
            self.assertEqual(m.mode(g[0]), "CPX")

            # an EIO before the driver: nothing changed, nothing to restore
            m.ctl("inject", m.path(m.gpu(g[1], CCP)), "EIO", "once", "write")
            c = m.set(g[1], "CPX")["change"]
            self.assertFailed(c, EIO, "write")
            self.assertUnchanged(c)
            self.assertIn("nothing changed", c["message"])
            self.assertEqual(m.mode(g[1]), "SPX")

            # the device ignores the write
            m.ctl("no-effect", m.path(m.gpu(g[2], CCP)))
            c = m.set(g[2], "CPX")["change"]
            self.assertFailed(c, EIO, "verify")
            self.assertIn("device still reports SPX after CPX was written", c["message"])
            self.assertUnchanged(c)
            m.ctl("clear-faults")

            # a reset in progress (DKMS: EPERM from the partition files)
            m.ctl("reset", g[3], "begin")
            c = m.set(g[3], "CPX")["change"]
            self.assertFailed(c, EBUSY, "preflight")
            self.assertIn("reset", c["message"])
            m.ctl("reset", g[3], "end")

            # the driver refuses the switch before anything changes
            m.ctl("switch-error", g[5], "EBUSY")
            c = m.set(g[5], "CPX")["change"]
            self.assertFailed(c, EBUSY, "write")
            self.assertUnchanged(c)

            # not root
            c = m.set(g[4], "CPX", user=NOBODY)["change"]
            self.assertFailed(c, EACCES, "write")
            self.assertIn("needs root", c["message"])
            self.assertUnchanged(c)
            self.assertEqual(m.mode(g[4]), "SPX")

            for bdf in g[1:]:
                self.assertEqual(len(m.gpu_nodes(bdf)), 1, bdf)

    def test_unplug_during_switch(self):
        with Sim("--machine", "mi300x-8") as m:
            m.ctl("switch-time", GPU0, 2000)
            p = subprocess.Popen([PROBE, "set", GPU0, "CPX", "--timeout", "120000"],
                                 env=m.env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                 text=True)
            try:
                for _ in range(500):
                    if m.dump()["gpus"][0]["switching"]:
                        break
                    time.sleep(0.01)
                self.assertTrue(m.dump()["gpus"][0]["switching"])
                m.ctl("unplug", GPU0)
                out, err = p.communicate(timeout=100)
            finally:
                if p.poll() is None:
                    p.kill()
                    p.wait()
            self.assertEqual(p.returncode, 0, err)
            c = json.loads(out)["change"]
            self.assertEqual(c["return"], ENODEV, c["message"])
            self.assertIn(c["stage"], ("write", "settle", "verify"))
            self.assertIn("went away", c["message"])
            self.assertEqual(c["rolled_back"], 0)
            self.assertLess(c["elapsed_ms"], 60000)
            self.assertFalse(os.path.exists(m.path(m.gpu(GPU0))))

    def test_mi300a_tpx(self):
        with Sim("--machine", "mi300a-4") as m:
            bdf = "0000:01:00.0"
            d = m.set(bdf, "TPX", "--repeat")
            c = d["change"]
            self.assertEqual(c["return"], 0, c["message"])
            self.assertEqual((c["compute_after"], c["partitions_after"]), ("TPX", 3))
            b = d["back"]
            self.assertEqual(b["return"], 0, b["message"])
            self.assertEqual((b["compute_before"], b["compute_after"]), ("TPX", "SPX"))
            self.assertEqual((b["partitions_before"], b["partitions_after"]), (3, 1))
            self.assertEqual(m.mode(bdf), "SPX")
            c = m.set(bdf, "DPX")["change"]
            self.assertFailed(c, EINVAL, "preflight")
            self.assertIn("(SPX, TPX, CPX)", c["message"])

    def test_mi350x_cpx(self):
        with Sim("--machine", "mi350x-8") as m:
            d = m.set(GPU0, "CPX")
            c = d["change"]
            self.assertEqual(c["return"], 0, c["message"])
            self.assertEqual((c["compute_after"], c["partitions_after"]), ("CPX", 8))
            self.assertEqual(d["gpus"][GPU0]["partitions"], 8)
            self.assertEqual(len(m.gpu_nodes(GPU0)), 8)
            self.assertEqual(m.mode(GPU0), "CPX")


if __name__ == "__main__":
    if not PROBE or not os.access(PROBE, os.X_OK):
        sys.exit("FAIL: PARTITION_SET_PROBE is not the probe: %r" % PROBE)
    main()
