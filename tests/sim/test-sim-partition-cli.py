#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""amdsmi partition / partition set / set / reset --reload-driver end to end: the real CLI and
library on simulator mounts (AMDSMI_SYSFS_ROOT=<mount>, a fresh RUNTIME_DIRECTORY each).

mi300x-8: reads after switching, compute switches, --dry-run exit codes (0 valid, 5 KFD user,
4 not supported, 7 incompatible), the per-GPU lock (5 with the holder's PID), non-root (6), a
hive-wide memory request (8, pending on every GPU of the hive) and the driver reload (every GPU
NPS4 / CPX). mi300x-gim-8vf: the gim host's view and a change that needs --force."""

import fcntl
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from simtest import CLI, GPU0, GPU1, MI300X_BDFS, NOBODY, SIM, Mount, SchemaCase, main, tmpdir  # noqa: E402



class Case(SchemaCase):
    maxDiff = None

    def setUp(self):
        self.rt = tmpdir(self, "amdsmi-rt.")

    def cli(self, m, *args, status=0, user=None, has=()):
        env = dict(os.environ, AMDSMI_SYSFS_ROOT=m.root, RUNTIME_DIRECTORY=self.rt,
                   STATE_DIRECTORY=self.rt)
        env.pop("AMDSMI_DEBUG", None)
        p = subprocess.run((user or []) + [CLI] + [str(a) for a in args], env=env,
                           capture_output=True, text=True, timeout=120)
        what = "amdsmi %s: exit %d, stdout %r, stderr %r" % (" ".join(map(str, args)),
                                                              p.returncode, p.stdout[-2000:],
                                                              p.stderr)
        self.assertEqual(p.returncode, status, what)
        for s in has:
            self.assertIn(s, p.stderr, what)
        return p

    def doc(self, m, *args, status=0, user=None, has=()):
        p = self.cli(m, *(list(args) + ["--json"]), status=status, user=user, has=has)
        d = json.loads(p.stdout)
        self.assert_valid(d, "amdsmi %s --json" % " ".join(args))
        return d

    def ctl(self, m, *args):
        p = subprocess.run([SIM, "ctl", "--mount", m.root] + [str(a) for a in args],
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        return p.stdout

    def test_mi300x_8(self):
        with Mount("--machine", "mi300x-8") as m:
            d = self.doc(m, "partition")
            self.assertEqual([g["bdf"] for g in d["gpus"]], MI300X_BDFS)
            for g in d["gpus"]:
                self.assertEqual((g["compute_mode"], g["memory_mode"], g["memory_pending"]),
                                 ("SPX", "NPS1", None))
                self.assertEqual(g["partition_count"], 1)
                self.assertEqual(g["supported_compute_modes"], ["SPX", "DPX", "QPX", "CPX"])
                self.assertEqual(g["available_memory_modes"], ["NPS1", "NPS2", "NPS4"])

            # not root: refused before anything is read or locked; a dry run is fine
            p = self.cli(m, "set", "-g", "0", "-C", "cpx", status=6, user=NOBODY,
                         has=["amdsmid is not running; changes in-process need root"])
            self.assertEqual(p.stdout, "")
            self.cli(m, "set", "-g", "0", "-C", "cpx", "--dry-run", user=NOBODY)
            self.assertFalse(os.path.exists(os.path.join(self.rt, "lock")))

            # a compute switch, lower-case mode name
            p = self.cli(m, "set", "-g", "0", "-C", "cpx",
                         has=["amdsmid is not running: changing in-process"])
            self.assertEqual(p.stderr.count("changing in-process"), 1)
            d = self.doc(m, "partition")
            g0 = d["gpus"][0]
            self.assertEqual((g0["compute_mode"], g0["partition_count"]), ("CPX", 8))
            self.assertEqual([p["partition"] for p in g0["partitions"]], list(range(8)))
            self.assertEqual({p["xcc_count"] for p in g0["partitions"]}, {1})
            self.assertEqual(len({p["kfd_gpu_id"] for p in g0["partitions"]}), 8)
            self.assertEqual(d["gpus"][1]["compute_mode"], "SPX")

            # partition set, JSON report
            d = self.doc(m, "partition", "set", "-g", "1", "--compute", "DPX")
            self.assertEqual(d["command"], "partition set")
            self.assertEqual(d["result"]["exit_code"], 0)
            r = d["gpus"][0]["reports"][0]
            self.assertEqual((r["operation"], r["stage"], r["compute_after"],
                              r["partitions_after"]), ("compute", "done", "DPX", 2))

            # dry runs: the code the change would have had
            self.cli(m, "set", "-g", "0", "-C", "SPX", "--dry-run")
            self.cli(m, "set", "-g", "0", "-C", "tpx", "--dry-run", status=4,
                     has=["TPX", "SPX, DPX, QPX, CPX"])
            self.cli(m, "partition", "set", "-g", "0", "--compute", "spx", "--memory", "nps4",
                     "--dry-run", status=7, has=["not valid under memory mode NPS4",
                                                 "QPX, CPX"])
            self.cli(m, "set", "-g", "0", "-M", "NPS3", "--dry-run", status=4,
                     has=["NPS1, NPS2, NPS4"])
            self.assertEqual(self.doc(m, "partition")["gpus"][0]["compute_mode"], "CPX")

            user = subprocess.Popen(["sleep", "60"])
            try:
                self.ctl(m, "kfd-users", "add", GPU1, user.pid, 1 << 30)
                d = self.doc(m, "set", "-g", "1", "-C", "cpx", "--dry-run", status=5)
                self.assertTrue(d["dry_run"])
                self.assertEqual(d["result"]["errno"], "EBUSY")
                blockers = d["gpus"][0]["reports"][0]["blockers"]
                self.assertIn(user.pid, [b["pid"] for b in blockers])
                p = self.cli(m, "set", "-g", "1", "-C", "cpx", status=5, has=[str(user.pid)])
                self.ctl(m, "kfd-users", "remove", GPU1, user.pid)
            finally:
                user.kill()
                user.wait()

            # the lock, held by another process
            os.makedirs(os.path.join(self.rt, "lock"), exist_ok=True)
            holder = subprocess.Popen(
                [sys.executable, "-c",
                 "import fcntl, os, sys, time\n"
                 "fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o644)\n"
                 "fcntl.flock(fd, fcntl.LOCK_EX)\n"
                 "os.write(fd, b'%d\\n' % os.getpid())\n"
                 "print('locked', flush=True)\n"
                 "time.sleep(60)\n",
                 os.path.join(self.rt, "lock", GPU1)], stdout=subprocess.PIPE, text=True)
            try:
                self.assertEqual(holder.stdout.readline().strip(), "locked")
                self.cli(m, "set", "-g", "1", "-C", "cpx", status=5,
                         has=["GPU %s is being changed by PID %d" % (GPU1, holder.pid)])
                # a memory request locks the whole hive: refused as well
                self.cli(m, "set", "-g", "0", "-M", "NPS4", status=5,
                         has=["is being changed by PID %d" % holder.pid])
            finally:
                holder.kill()
                holder.wait()
                holder.stdout.close()
            self.doc(m, "partition")
            self.assertEqual(self.doc(m, "partition")["gpus"][1]["compute_mode"], "DPX")

            # memory request: hive-wide, pending until the reload (exit 8)
            p = self.cli(m, "set", "-g", "0,1", "-M", "NPS4", status=8,
                         has=["whole XGMI hive", "reload"])
            self.assertEqual(p.stderr.count("whole XGMI hive"), 1)
            self.assertIn("amdsmi reset -g 0 --reload-driver", p.stdout)
            d = self.doc(m, "partition")
            self.assertEqual([g["memory_pending"] for g in d["gpus"]], ["NPS4"] * 8)
            self.assertEqual([g["memory_mode"] for g in d["gpus"]], ["NPS1"] * 8)

            d = self.doc(m, "reset", "-g", "0", "--reload-driver")
            self.assertEqual(d["result"]["exit_code"], 0)
            gpus = d["gpus"][0]["reports"][0]["gpus"]
            self.assertEqual([g["bdf"] for g in gpus], MI300X_BDFS)
            self.assertEqual({(g["compute_mode"], g["memory_mode"]) for g in gpus},
                             {("CPX", "NPS4")})
            d = self.doc(m, "partition")
            for g in d["gpus"]:
                self.assertEqual((g["compute_mode"], g["memory_mode"], g["memory_pending"],
                                  g["partition_count"]), ("CPX", "NPS4", None, 8))
            self.assertEqual(len([p for g in d["gpus"] for p in g["partitions"]]), 64)

    def test_gim_host(self):
        with Mount("--machine", "mi300x-gim-8vf") as m:
            d = self.doc(m, "partition")
            pfs = [g for g in d["gpus"] if g["driver"] == "gim"]
            self.assertEqual(len(pfs), 8)
            self.assertEqual((pfs[0]["role"], pfs[0]["compute_mode"], pfs[0]["vf_count"]),
                             ("host-pf", "CPX", 8))
            self.cli(m, "partition", "set", "-g", "0", "--compute", "qpx", status=5,
                     has=["--force"])
            self.cli(m, "partition", "set", "-g", "0", "--compute", "qpx", "--dry-run",
                     status=5)
            d = self.doc(m, "partition", "set", "-g", "0", "--compute", "qpx", "--force")
            self.assertEqual(d["result"]["exit_code"], 0)
            d = self.doc(m, "partition", "-g", "0")
            self.assertEqual((d["gpus"][0]["compute_mode"], d["gpus"][0]["vf_count"]),
                             ("QPX", 4))


if __name__ == "__main__":
    main()
