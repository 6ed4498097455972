#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""GPU reset: the simulator's side (debugfs amdgpu_gpu_recover, gim's reset_gpu, the effects
and their configuration, ctl reset-fail / reset-hang / reset-release / reset-config) and
amdsmi reset -G in-process (AMDSMI_SYSFS_ROOT=<mount>): success on a hive, the power cap
re-applied, KFD users refused or forced, a failing reset, a hang with a short --timeout and
its report, the change lock, dry runs, a GPU without a hive, a VF and a gim host."""

import json
import os
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from simtest import (CLI, GPU0, GPU1, MI300X_BDFS, NOBODY, SIM, CtlMount, SchemaCase,  # noqa: E402
                     machine_variant, main, tmpdir)

RECOVER = "kernel/debug/dri/%s/amdgpu_gpu_recover"
EXIT_NOT_SUPPORTED, EXIT_BUSY, EXIT_PERMISSION, EXIT_DEVICE = 4, 5, 6, 9


class Sim(SchemaCase):
    """The simulator's reset files and controls."""

    def dump(self, m):
        return {g["bdf"]: g for g in json.loads(m.ctl("dump").stdout)["gpus"]}

    def counts(self, m):
        return {bdf: g["reset"]["count"] for bdf, g in self.dump(m).items()}

    def cap(self, m, bdf):
        hw = m.path(m.gpu(bdf, "hwmon"))
        return int(m.value(m.gpu(bdf, "hwmon/%s/power1_cap" % os.listdir(hw)[0])))

    def set_cap(self, m, bdf, watts):
        hw = m.path(m.gpu(bdf, "hwmon"))
        self.assertEqual(m.write(m.gpu(bdf, "hwmon/%s/power1_cap" % os.listdir(hw)[0]),
                                 str(watts * 1000000)), 0)

    def test_recover_file(self):
        with CtlMount("--machine", "mi300x-8") as m:
            st = os.lstat(m.path(RECOVER % GPU0))
            self.assertEqual(st.st_mode & 0o777, 0o444)
            self.assertEqual(os.stat(m.path("kernel/debug")).st_mode & 0o777, 0o700)
            # dri/<minor> is a link to the device's directory
            minor = os.listdir(m.path(m.gpu(GPU0, "drm")))
            card = [c for c in minor if c.startswith("card")][0][4:]
            self.assertEqual(os.readlink(m.path("kernel/debug/dri/%s" % card)),
                             "%s" % GPU0)
            self.assertEqual(self.counts(m), {b: 0 for b in MI300X_BDFS})

            # effects: caps back to their defaults, the level to auto; modes, nodes persist
            self.set_cap(m, GPU0, 600)
            self.set_cap(m, GPU1, 650)
            self.assertEqual(m.write(m.gpu(GPU0, "power_dpm_force_performance_level"),
                                     "manual"), 0)
            self.assertEqual(m.write(m.gpu(GPU1, "current_compute_partition"), "CPX"), 0)
            nodes, gen = m.gpu_nodes(GPU1), m.generation()
            t = time.monotonic()
            self.assertEqual(m.text(RECOVER % GPU0), "0\n")
            self.assertGreaterEqual(time.monotonic() - t, 0.04)   # kernel.reset_ms 50
            self.assertEqual(self.counts(m), {b: 1 for b in MI300X_BDFS})  # the whole hive
            self.assertEqual((self.cap(m, GPU0), self.cap(m, GPU1)), (750000000, 750000000))
            self.assertEqual(m.value(m.gpu(GPU0, "power_dpm_force_performance_level")), "auto")
            self.assertEqual(m.value(m.gpu(GPU1, "current_compute_partition")), "CPX")
            self.assertEqual((m.gpu_nodes(GPU1), m.generation()), (nodes, gen))
            self.assertFalse(self.dump(m)[GPU0]["in_reset"])

            # through the minor's link as well
            self.assertEqual(m.text("kernel/debug/dri/%s/amdgpu_gpu_recover" % card), "0\n")
            self.assertEqual(self.counts(m)[GPU1], 2)

    def test_kfd_queues_lost(self):
        with CtlMount("--machine", "mi300x-8") as m:
            user = subprocess.Popen(["sleep", "60"])
            try:
                m.ctl("kfd-users", "add", GPU0, user.pid, 1 << 20, "queues=2")
                q = "class/kfd/kfd/proc/%d/queues" % user.pid
                self.assertEqual(len(os.listdir(m.path(q))), 2)
                self.assertEqual(m.text(RECOVER % GPU0), "0\n")
                # the process stays (its memory too), its queues on the GPU go
                self.assertEqual(os.listdir(m.path(q)), [])
                self.assertTrue(os.path.isdir(m.path("class/kfd/kfd/proc/%d" % user.pid)))
            finally:
                user.kill()
                user.wait()

    def test_fail(self):
        with CtlMount("--machine", "mi300x-8") as m:
            self.set_cap(m, GPU0, 600)
            m.ctl("reset-fail", GPU0, "ETIMEDOUT")
            self.assertEqual(self.dump(m)[GPU0]["reset"]["fail"], 110)
            self.assertEqual(m.text(RECOVER % GPU0), "-110\n")
            self.assertEqual(self.cap(m, GPU0), 600000000)    # no effects
            self.assertEqual(self.counts(m)[GPU1], 1)
            self.assertEqual(m.text(RECOVER % GPU0), "0\n")    # once by default
            # the read itself fails, nothing is reset
            m.ctl("reset-fail", GPU0, "EIO", "read")
            self.assertEqual(m.read_errno(RECOVER % GPU0), 5)
            self.assertEqual(self.counts(m)[GPU0], 2)
            # wedged: the GPU stays in reset (pm files busy) until `reset end`
            m.ctl("reset-fail", GPU0, "EIO", "wedged")
            self.assertEqual(m.text(RECOVER % GPU0), "-5\n")
            self.assertTrue(self.dump(m)[GPU0]["in_reset"])
            self.assertEqual(m.read_errno(m.gpu(GPU0, "power_dpm_force_performance_level")),
                             16)
            m.ctl("reset", GPU0, "end")
            self.assertEqual(m.read_errno(m.gpu(GPU0, "power_dpm_force_performance_level")), 0)
            # always
            m.ctl("reset-fail", GPU1, "ENODEV", "always")
            self.assertEqual(m.text(RECOVER % GPU1), "-19\n")
            self.assertEqual(m.text(RECOVER % GPU1), "-19\n")
            m.ctl("reset-fail", GPU1, "none")
            self.assertEqual(m.text(RECOVER % GPU1), "0\n")
            # bad input
            p = m.ctl("reset-fail", GPU0, "EWHAT", check=False)
            self.assertNotEqual(p.returncode, 0)
            self.assertIn("not an errno", p.stderr)
            p = m.ctl("reset-fail", "0000:99:00.0", "EIO", check=False)
            self.assertIn("no GPU at 0000:99:00.0", p.stderr)

    def test_hang(self):
        with CtlMount("--machine", "mi300x-8") as m:
            m.ctl("reset-hang", GPU0, 400)
            t = time.monotonic()
            self.assertEqual(m.text(RECOVER % GPU0), "0\n")
            self.assertGreaterEqual(time.monotonic() - t, 0.35)
            # forever, until reset-release; other files are served meanwhile
            m.ctl("reset-hang", GPU1, "forever")
            out = {}
            th = threading.Thread(target=lambda: out.update(v=m.text(RECOVER % GPU1)))
            th.start()
            deadline = time.monotonic() + 10
            while not self.dump(m)[GPU1]["reset"]["running"] and time.monotonic() < deadline:
                time.sleep(0.02)
            self.assertTrue(self.dump(m)[GPU1]["in_reset"])
            # in reset: the partition file refuses (DKMS), other files are served
            self.assertEqual(m.read_errno(m.gpu(GPU1, "current_compute_partition")), 1)
            self.assertEqual(m.value(m.gpu(GPU1, "vendor")), "0x1002")
            time.sleep(0.3)
            self.assertTrue(th.is_alive())
            m.ctl("reset-release", GPU1)
            th.join(10)
            self.assertFalse(th.is_alive())
            self.assertEqual(out["v"], "0\n")
            p = m.ctl("reset-release", GPU1, check=False)
            self.assertIn("no reset of it is running", p.stderr)
            p = m.ctl("reset-hang", GPU0, 700000, check=False)
            self.assertNotEqual(p.returncode, 0)

    def test_config(self):
        with CtlMount("--machine", "mi300x-8") as m:
            m.ctl("reset-config", "keeps_cap", 1)
            m.ctl("reset-config", "time_ms", 0)
            self.set_cap(m, GPU0, 600)
            self.assertEqual(m.text(RECOVER % GPU0), "0\n")
            self.assertEqual(self.cap(m, GPU0), 600000000)
            # KFD nodes gone for 300 ms, back as new nodes (generation moves)
            m.ctl("reset-config", "kfd_down_ms", 300)
            gen = m.generation()
            self.assertEqual(m.text(RECOVER % GPU0), "0\n")
            self.assertEqual(m.gpu_nodes(GPU0), [])
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline:
                try:
                    if m.generation() == gen + 16 and len(m.gpu_nodes(GPU0)) == 1:
                        break
                except FileNotFoundError:
                    pass  # a node listed while the other GPUs' nodes come back
                time.sleep(0.05)
            self.assertEqual(len(m.gpu_nodes(GPU0)), 1)
            self.assertEqual(m.generation(), gen + 16)   # 8 GPUs out, 8 in
            p = m.ctl("reset-config", "colour", 1, check=False)
            self.assertIn("unknown key", p.stderr)
            p = m.ctl("reset-config", "keeps_cap", 2, check=False)
            self.assertIn("out of range", p.stderr)

    def test_machine_json(self):
        d = tmpdir(self, "amdsmi-reset-machine.")

        def edit(mach):
            mach["kernel"].update(reset_ms=0, reset_keeps_perf=True, reset_kfd_down_ms=0)
            for g in mach["gpus"][1:]:
                g["hive_id"] = None
        path = machine_variant("mi300x-8", "reset-variant", d, edit)
        with open(path) as f:
            mach = json.load(f)
        for g in mach["gpus"][1:]:
            g.pop("hive_id")
        with open(path, "w") as f:
            json.dump(mach, f)
        p = subprocess.run([SIM, "dump-machine", path], capture_output=True, text=True,
                           timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        k = json.loads(p.stdout)["kernel"]
        self.assertEqual((k["reset_ms"], k["reset_keeps_perf"], k["reset_keeps_cap"]),
                         (0, True, False))
        with CtlMount("--machine", path) as m:
            self.assertEqual(m.write(m.gpu(GPU0, "power_dpm_force_performance_level"),
                                     "manual"), 0)
            self.assertEqual(m.text(RECOVER % GPU0), "0\n")
            self.assertEqual(m.value(m.gpu(GPU0, "power_dpm_force_performance_level")),
                             "manual")


class Gim(SchemaCase):
    def test_reset_gpu(self):
        with CtlMount("--machine", "mi300x-gim-8vf") as m:
            self.assertEqual(m.text(m.gpu(GPU0, "reset_gpu")),
                             "dev(%s) reset completed\n" % GPU0)
            dump = {g["bdf"]: g for g in json.loads(m.ctl("dump").stdout)["gpus"]}
            # gim resets the adapter, not its hive
            self.assertEqual([dump[b]["reset"]["count"] for b in MI300X_BDFS],
                             [1] + [0] * 7)
            m.ctl("reset-fail", GPU0, "EIO")
            self.assertEqual(m.read_errno(m.gpu(GPU0, "reset_gpu")), 5)


class Cli(SchemaCase):
    """amdsmi reset -G in-process."""
    maxDiff = None

    def setUp(self):
        self.rt = tmpdir(self, "amdsmi-rt.")

    def cli(self, m, *args, status=0, user=None, has=()):
        env = dict(os.environ, AMDSMI_SYSFS_ROOT=m.root, RUNTIME_DIRECTORY=self.rt,
                   STATE_DIRECTORY=self.rt, CONFIGURATION_DIRECTORY=self.rt)
        env.pop("AMDSMI_DEBUG", None)
        p = subprocess.run((user or []) + [CLI] + [str(a) for a in args], env=env,
                           capture_output=True, text=True, timeout=120)
        what = "amdsmi %s: exit %d, stdout %r, stderr %r" % (" ".join(map(str, args)),
                                                              p.returncode, p.stdout[-3000:],
                                                              p.stderr)
        self.assertEqual(p.returncode, status, what)
        for s in has:
            self.assertIn(s, p.stdout + p.stderr, what)
        return p

    def doc(self, m, *args, status=0, user=None, has=()):
        p = self.cli(m, *(list(args) + ["--json"]), status=status, user=user, has=has)
        d = json.loads(p.stdout)
        self.assert_valid(d, "amdsmi %s --json" % " ".join(map(str, args)))
        return d

    def counts(self, m):
        return {g["bdf"]: g["reset"]["count"] for g in json.loads(m.ctl("dump").stdout)["gpus"]}

    def history(self):
        path = os.path.join(self.rt, "history.jsonl")
        if not os.path.exists(path):
            return []
        with open(path) as f:
            return [json.loads(line) for line in f if line.strip()]

    def test_success_hive(self):
        with CtlMount("--machine", "mi300x-8") as m:
            d = self.doc(m, "reset", "-g", "0", "-G", "--dry-run")
            g = d["gpus"][0]
            self.assertTrue(d["dry_run"])
            self.assertEqual((g["mechanism"], g["hive_wide"], g["gpus_reset"]),
                             ("amdgpu-debugfs-recover", True, MI300X_BDFS))
            self.assertEqual(g["reset_masks"], {"compute": ["soft", "queue", "pipe", "full"]})
            self.assertEqual(self.counts(m), {b: 0 for b in MI300X_BDFS})
            self.assertEqual(self.history(), [])

            # -g 0,1: one reset (GPU 1 is in GPU 0's hive)
            self.cli(m, "power", "set", "-g", "0", "--host", "600")
            d = self.doc(m, "reset", "-g", "0,1", "--gpureset")
            g0, g1 = d["gpus"]
            self.assertEqual(d["result"]["exit_code"], 0)
            self.assertEqual(self.counts(m), {b: 1 for b in MI300X_BDFS})
            self.assertEqual((g0["reset_res"], g0["hung"], g0["recovery"]), (0, False, None))
            self.assertEqual(set(g0["stages_ms"]),
                             {"preflight", "reset", "wait", "verify", "reapply", "total"})
            self.assertGreaterEqual(g0["stages_ms"]["reset"], 40)
            self.assertEqual(g0["stages_ms"]["total"] - g0["stages_ms"]["reset"] -
                             g0["stages_ms"]["wait"], g0["overhead_ms"])
            self.assertEqual(g1["same_operation_as"], 0)
            # the cap went to its default and was applied again; modes and VFs the same
            self.assertEqual(g0["differences"],
                             [{"bdf": GPU0, "field": "power_cap_w", "before": 600,
                               "after": 750}])
            self.assertEqual(g0["reapplied"], [{"bdf": GPU0, "result": None}])
            self.assertEqual([s["power_cap_w"] for s in g0["before"]],
                             [600] + [750] * 7)
            self.assertTrue(all(s["answers"] and s["kfd_nodes_present"] == 1
                                for s in g0["state"]))
            p = self.cli(m, "power", "-g", "0", "--json")
            self.assertEqual(json.loads(p.stdout)["gpus"][0]["cap_w"], 600)
            recs = [h for h in self.history() if h["change"] == "gpu_reset"]
            self.assertEqual(sorted(h["gpu"] for h in recs), MI300X_BDFS)
            self.assertTrue(all((h["result"], h["errno"]) == ("ok", 0) for h in recs), recs)

            # the table says what happened
            p = self.cli(m, "reset", "-g", "3", "-G",
                         has=["the reset takes the whole XGMI hive: 8 GPUs",
                              "8 GPUs reset through amdgpu-debugfs-recover in"])

            # one kind of reset per command; nothing to reset
            self.cli(m, "reset", "-g", "0", "-G", "--reload-driver", status=2,
                     has=["one kind of reset per command"])
            self.cli(m, "reset", "-g", "0", status=2, has=["-G/--gpureset"])
            # not root and no amdsmid: refused; a dry run is fine
            self.cli(m, "reset", "-g", "0", "-G", status=EXIT_PERMISSION, user=NOBODY)

    def test_performance_reapplied(self):
        """In-process, the performance settings the state file keeps come back too."""
        gpu2 = MI300X_BDFS[2]
        with CtlMount("--machine", "mi300x-8") as m:
            self.cli(m, "set", "-g", "2", "-L", "sclk", "max", "1500")
            self.cli(m, "set", "-g", "2", "-p", "2")
            with open(os.path.join(self.rt, "state.json")) as f:
                rec = json.load(f)["gpus"][gpu2]["performance"]
            self.assertEqual((rec["level"], rec["sclk_max_mhz"], rec["soc_pstate"]),
                             ("manual", 1500, "2"))
            d = self.doc(m, "reset", "-g", "2", "-G")
            g = d["gpus"][0]
            self.assertEqual(d["result"]["exit_code"], 0, d)
            # the reset returned the SMU to its defaults; the settings were applied again
            self.assertEqual(g["reapplied"], [{"bdf": gpu2, "result": None}])
            self.assertIn("%s: performance settings applied again" % gpu2,
                          "\n".join(d.get("messages", []) + g.get("messages", [])))
            self.assertEqual(m.text(m.gpu(gpu2, "power_dpm_force_performance_level")),
                             "manual\n")
            self.assertIn("1: 1500Mhz", m.text(m.gpu(gpu2, "pp_od_clk_voltage")))
            self.assertIn("2 : soc_pstate_1*", m.text(m.gpu(gpu2, "pm_policy/soc_pstate")))
            # the GPUs nobody set anything on: back to auto, nothing applied
            self.assertEqual(m.text(m.gpu(MI300X_BDFS[3], "power_dpm_force_performance_level")),
                             "auto\n")
            # a dry run changes nothing and keeps nothing
            self.cli(m, "set", "-g", "3", "-L", "sclk", "max", "1400", "--dry-run")
            with open(os.path.join(self.rt, "state.json")) as f:
                self.assertNotIn("performance", json.load(f)["gpus"].get(MI300X_BDFS[3], {}))

    def test_kfd_users(self):
        with CtlMount("--machine", "mi300x-8") as m:
            user = subprocess.Popen(["sleep", "60"])
            try:
                m.ctl("kfd-users", "add", "0000:65:00.0", user.pid, 1 << 20, "queues=1")
                d = self.doc(m, "reset", "-g", "0", "-G", "--dry-run", status=EXIT_BUSY)
                g = d["gpus"][0]
                self.assertEqual(d["result"]["errno"], "EBUSY")
                self.assertEqual([p["pid"] for p in g["preflight"]["kfd_processes"]],
                                 [user.pid])
                self.assertEqual(g["preflight"]["kfd_processes"][0]["bdf"], "0000:65:00.0")
                self.cli(m, "reset", "-g", "0", "-G", status=EXIT_BUSY,
                         has=[str(user.pid), "give --force"])
                self.assertEqual(self.counts(m)[GPU0], 0)
                d = self.doc(m, "reset", "-g", "0", "-G", "--force")
                self.assertTrue(d["gpus"][0]["preflight"]["forced"])
                self.assertEqual(self.counts(m)[GPU0], 1)
            finally:
                user.kill()
                user.wait()

    def test_lock(self):
        with CtlMount("--machine", "mi300x-8") as m:
            os.makedirs(os.path.join(self.rt, "lock"), exist_ok=True)
            holder = subprocess.Popen(
                [sys.executable, "-c",
                 "import fcntl, os, sys, time\n"
                 "fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o644)\n"
                 "fcntl.flock(fd, fcntl.LOCK_EX)\n"
                 "os.write(fd, b'%d\\n' % os.getpid())\n"
                 "print('locked', flush=True)\n"
                 "time.sleep(60)\n",
                 os.path.join(self.rt, "lock", "0000:c6:00.0")], stdout=subprocess.PIPE,
                text=True)
            try:
                self.assertEqual(holder.stdout.readline().strip(), "locked")
                # a change in flight on another GPU of the hive
                self.cli(m, "reset", "-g", "0", "-G", status=EXIT_BUSY,
                         has=["is being changed by PID %d" % holder.pid])
                self.assertEqual(self.counts(m)[GPU0], 0)
            finally:
                holder.kill()
                holder.wait()
                holder.stdout.close()

    def test_fail(self):
        with CtlMount("--machine", "mi300x-8") as m:
            m.ctl("reset-fail", GPU0, "ETIMEDOUT")
            d = self.doc(m, "reset", "-g", "0", "-G", status=EXIT_DEVICE)
            g = d["gpus"][0]
            self.assertEqual((g["reset_res"], d["result"]["errno"]), (-110, "EIO"))
            self.assertIn("reset_res -110", d["result"]["message"])
            self.assertIn("run 'amdsmi reset -G' again", g["recovery"])
            self.assertTrue(all(s["answers"] for s in g["state"]))
            # wedged: the report says the GPUs do not answer
            m.ctl("reset-fail", GPU0, "EIO", "wedged")
            d = self.doc(m, "reset", "-g", "0", "-G", status=EXIT_DEVICE)
            g = d["gpus"][0]
            self.assertFalse(any(s["answers"] for s in g["state"]))
            self.assertIn("reload the driver", g["recovery"])
            recs = [h for h in self.history() if h["change"] == "gpu_reset"]
            self.assertEqual(len(recs), 16)
            self.assertTrue(all(h["errno"] == -5 for h in recs), recs)
            for b in MI300X_BDFS:
                m.ctl("reset", b, "end")

    def test_hang_timeout(self):
        with CtlMount("--machine", "mi300x-8") as m:
            m.ctl("reset-hang", GPU0, "forever")
            t = time.monotonic()
            d = self.doc(m, "reset", "-g", "0", "-G", "--timeout", "1", status=EXIT_BUSY)
            self.assertLess(time.monotonic() - t, 10)
            g = d["gpus"][0]
            self.assertEqual((g["hung"], d["result"]["errno"]), (True, "ETIMEDOUT"))
            self.assertGreaterEqual(g["stages_ms"]["reset"], 900)
            self.assertIn("still running in the kernel", g["recovery"])
            self.assertFalse(any(s["answers"] for s in g["state"]))   # in reset
            m.ctl("reset-release", GPU0)

    def test_kfd_nodes_come_back(self):
        with CtlMount("--machine", "mi300x-8") as m:
            m.ctl("reset-config", "kfd_down_ms", 400)
            d = self.doc(m, "reset", "-g", "0", "-G")
            g = d["gpus"][0]
            # the wait lasted until every GPU's KFD node was back, with a new generation
            self.assertGreaterEqual(g["stages_ms"]["wait"], 300)
            self.assertEqual(g["kernel_generation_after"], g["kernel_generation_before"] + 16)
            self.assertEqual([s["kfd_nodes_present"] for s in g["state"]], [1] * 8)
            # nodes that do not come back within --timeout: the report says which
            m.ctl("reset-config", "kfd_down_ms", 5000)
            d = self.doc(m, "reset", "-g", "0", "-G", "--timeout", "1", status=EXIT_BUSY)
            g = d["gpus"][0]
            self.assertEqual(d["result"]["errno"], "ETIMEDOUT")
            self.assertFalse(g["hung"])
            self.assertTrue(all(s["answers"] and s["kfd_nodes_present"] == 0 for s in g["state"]))
            self.assertIn("not every KFD node is back", g["recovery"])

    def test_no_hive(self):
        d = tmpdir(self, "amdsmi-reset-machine.")

        def edit(mach):
            mach.get("gpu_defaults", {}).pop("hive_id", None)
            for g in mach["gpus"]:
                g.pop("hive_id", None)
        path = machine_variant("mi300x-8", "no-hive", d, edit)
        with CtlMount("--machine", path) as m:
            doc = self.doc(m, "reset", "-g", "2", "-G")
            g = doc["gpus"][0]
            self.assertEqual((g["hive_wide"], g["gpus_reset"]), (False, ["0000:46:00.0"]))
            self.assertEqual(self.counts(m)["0000:46:00.0"], 1)
            self.assertEqual(sum(self.counts(m).values()), 1)

    def test_vf_and_gim(self):
        with CtlMount("--machine", "mi300x-guest-1vf") as m:
            d = self.doc(m, "reset", "-g", "0", "-G", status=EXIT_NOT_SUPPORTED)
            self.assertIn("a VF is reset by its host", d["result"]["message"])
            self.assertEqual(d["gpus"][0]["mechanism"], "none")
        with CtlMount("--machine", "mi300x-gim-8vf") as m:
            d = self.doc(m, "reset", "-g", "0", "-G")
            g = d["gpus"][0]
            # gim resets the adapter (its per-adapter reset_gpu)
            self.assertEqual((g["mechanism"], g["hive_wide"]), ("gim-reset-gpu", False))
            self.assertEqual([s["vf_count"] for s in g["after"]], [8])
            self.assertEqual(g["differences"], [])
            self.assertEqual(self.counts(m)[GPU0], 1)
            self.assertEqual(sum(self.counts(m).values()), 1)


if __name__ == "__main__":
    main()
