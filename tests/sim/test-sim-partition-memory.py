#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""libamdsmi's memory-partition (NPS) request, its pending record and the driver reload
(partition/partition-memory.c) on simulator mounts, through partition-memory-probe
(tests/sim/partition-memory-probe.c), which prints the change reports as JSON.

mi300x-8 (eight GPUs, one XGMI hive): a request is hive-wide and only pending until the
reload; the reload is refused while a process uses KFD, unbinds and binds the whole hive, and
brings every GPU back in NPS4 and CPX (the driver's AUTO choice); a failed unbind binds the
others again. The pending record: readable by non-root, per sysfs root, garbage ignored.
mi350x-8: NPS2 comes back in DPX. mi300a-4: one NPS mode, not changeable."""

import errno
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from simtest import CLI, GPU0, GPU1, MI300X_BDFS, NOBODY, SIM, Mount, main  # noqa: E402

PROBE = os.environ.get("PARTITION_MEMORY_PROBE", "")
CMP = "current_memory_partition"
CCP = "current_compute_partition"


class Runtime:
    """A fresh RUNTIME_DIRECTORY (never the host's /run/amdsmi), readable by everybody."""

    def __enter__(self):
        self.dir = tempfile.mkdtemp(prefix="amdsmi-rt.")
        os.chmod(self.dir, 0o755)
        return self

    def __exit__(self, *exc):
        shutil.rmtree(self.dir, ignore_errors=True)
        return False

    def records(self):
        d = os.path.join(self.dir, "partition")
        return sorted(os.listdir(d)) if os.path.isdir(d) else []

    def record(self, bdf):
        names = [n for n in self.records() if bdf in n]
        if len(names) != 1:
            raise AssertionError("one record for %s expected: %s" % (bdf, self.records()))
        return os.path.join(self.dir, "partition", names[0])


def probe(m, rt, *args, user=None):
    """Runs the probe; returns (parsed JSON, stderr)."""
    env = dict(os.environ, AMDSMI_SYSFS_ROOT=m.root, RUNTIME_DIRECTORY=rt.dir)
    env.pop("AMDSMI_DEBUG", None)
    p = subprocess.run((user or []) + [PROBE] + [str(a) for a in args], env=env,
                       capture_output=True, text=True, timeout=120)
    if p.returncode != 0:
        raise AssertionError("partition-memory-probe %s: exit %d: %s"
                             % (" ".join(map(str, args)), p.returncode, p.stderr))
    return json.loads(p.stdout), p.stderr


def ctl(m, *args):
    p = subprocess.run([SIM, "ctl", "--mount", m.root] + [str(a) for a in args],
                       capture_output=True, text=True, timeout=30)
    if p.returncode != 0:
        raise AssertionError("amdsmi-sim ctl %s: %s" % (" ".join(map(str, args)), p.stderr))
    return p.stdout


def sleeper():
    """A live child process (a real PID for kfd-users)."""
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


def driver(m, bdf):
    try:
        return os.path.basename(os.readlink(m.path(m.gpu(bdf, "driver"))))
    except OSError:
        return None


class MemoryRequest(unittest.TestCase):
    def check_all_back(self, m, compute, memory, partitions):
        for bdf in MI300X_BDFS:
            self.assertEqual(driver(m, bdf), "amdgpu", bdf)
            self.assertEqual(m.value(m.gpu(bdf, CMP)), memory, bdf)
            self.assertEqual(m.value(m.gpu(bdf, CCP)), compute, bdf)
            self.assertEqual(len(m.gpu_nodes(bdf)), partitions, bdf)

    def test_mi300x_request_and_reload(self):
        with Mount("--machine", "mi300x-8") as m, Runtime() as rt:
            # nothing pending at first
            pend, _ = probe(m, rt, "pending")
            self.assertEqual(pend, {b: None for b in MI300X_BDFS})

            # not an available mode: EINVAL naming the available ones, nothing recorded
            c, _ = probe(m, rt, "set-memory", GPU0, "NPS8")
            self.assertEqual((c["r"], c["stage"]), (-errno.EINVAL, "preflight"))
            self.assertIn("NPS1, NPS2, NPS4", c["message"])
            self.assertEqual(rt.records(), [])

            # the current mode: nothing to do
            c, _ = probe(m, rt, "set-memory", GPU0, "NPS1")
            self.assertEqual((c["r"], c["reload_required"], c["memory_pending"]), (0, 0, None))
            self.assertEqual(rt.records(), [])

            # dry run: would need a reload, nothing written or recorded
            c, _ = probe(m, rt, "set-memory", GPU0, "NPS4", "--dry-run")
            self.assertEqual((c["r"], c["reload_required"]), (1, 1))
            self.assertEqual(rt.records(), [])
            pend, _ = probe(m, rt, "pending")
            self.assertEqual(set(pend.values()), {None})

            # the request: hive-wide, pending until the reload, current unchanged
            c, _ = probe(m, rt, "set-memory", GPU0, "NPS4")
            self.assertEqual((c["r"], c["error"], c["stage"]), (1, 0, "done"))
            self.assertEqual((c["reload_required"], c["changed"]), (1, 0))
            self.assertEqual((c["memory_before"], c["memory_after"], c["memory_pending"]),
                             ("NPS1", "NPS1", "NPS4"))
            self.assertIn("8 GPUs of the XGMI hive", c["message"])
            self.assertIn("--reload-driver", c["message"])
            for bdf in MI300X_BDFS:
                self.assertIn(bdf, c["message"])
                self.assertEqual(m.value(m.gpu(bdf, CMP)), "NPS1")
            self.assertEqual(len(rt.records()), 8)
            for name in rt.records():
                st = os.stat(os.path.join(rt.dir, "partition", name))
                self.assertEqual(st.st_mode & 0o777, 0o644, name)
            pend, _ = probe(m, rt, "pending")
            self.assertEqual(pend, {b: "NPS4" for b in MI300X_BDFS})
            # also for a reader that is not root
            pend, _ = probe(m, rt, "pending", user=NOBODY)
            self.assertEqual(pend, {b: "NPS4" for b in MI300X_BDFS})
            modes, _ = probe(m, rt, "modes", GPU1, user=NOBODY)
            self.assertEqual((modes["memory"], modes["pending"]), ("NPS1", "NPS4"))

            # a process using KFD on one GPU of the hive blocks the reload; nothing unbound
            gen = m.generation()
            p = sleeper()
            try:
                ctl(m, "kfd-users", "add", MI300X_BDFS[2], p.pid)
                c, _ = probe(m, rt, "reload", GPU0)
                self.assertEqual((c["r"], c["stage"]), (-errno.EBUSY, "preflight"))
                self.assertEqual([(b["pid"], b["comm"], b["bdf"]) for b in c["blockers"]],
                                 [(p.pid, "sleep", MI300X_BDFS[2])])
                self.assertIn(str(p.pid), c["message"])
                self.assertEqual(len(c["gpus"]), 8)
                # a dry run says the same
                c, _ = probe(m, rt, "reload", GPU0, "--dry-run")
                self.assertEqual(c["r"], -errno.EBUSY)
            finally:
                p.kill()
                p.wait()
            self.assertEqual(m.generation(), gen)
            self.check_all_back(m, "SPX", "NPS1", 1)
            for _ in range(100):        # the simulator drops an exited user within 200 ms
                if not os.listdir(m.path("class/kfd/kfd/proc")):
                    break
                time.sleep(0.05)

            # dry run of the reload: nothing happens
            c, _ = probe(m, rt, "reload", GPU0, "--dry-run")
            self.assertEqual((c["r"], c["stage"], c["memory_pending"]), (0, "done", "NPS4"))
            self.assertEqual([g["bdf"] for g in c["gpus"]], MI300X_BDFS)
            self.assertEqual(m.generation(), gen)

            # the reload: all eight back in NPS4 and CPX, the request applied
            c, _ = probe(m, rt, "reload", GPU0)
            self.assertEqual((c["r"], c["error"], c["stage"]), (0, 0, "done"), c["message"])
            self.assertEqual((c["compute_before"], c["compute_after"]), ("SPX", "CPX"))
            self.assertEqual((c["memory_before"], c["memory_after"]), ("NPS1", "NPS4"))
            self.assertEqual(c["partitions"], [1, 8])
            self.assertEqual((c["changed"], c["memory_pending"]), (1, None))
            self.assertEqual(c["gpus"], [{"bdf": b, "error": 0, "compute": "CPX",
                                          "memory": "NPS4", "partitions": 8}
                                         for b in MI300X_BDFS])
            self.assertGreater(m.generation(), gen)
            self.check_all_back(m, "CPX", "NPS4", 8)
            self.assertEqual(rt.records(), [])
            pend, _ = probe(m, rt, "pending")
            self.assertEqual(set(pend.values()), {None})

            # a reload without a request: the same modes come back
            c, _ = probe(m, rt, "reload", MI300X_BDFS[3])
            self.assertEqual((c["r"], c["changed"]), (0, 0), c["message"])
            self.assertEqual({(g["compute"], g["memory"], g["partitions"], g["error"])
                              for g in c["gpus"]}, {("CPX", "NPS4", 8, 0)})
            self.check_all_back(m, "CPX", "NPS4", 8)

    def test_mi300x_unbind_failure_and_records(self):
        with Mount("--machine", "mi300x-8") as m, Runtime() as rt:
            c, _ = probe(m, rt, "set-memory", GPU1, "NPS2")
            self.assertEqual(c["r"], 1)
            pend, _ = probe(m, rt, "pending")
            self.assertEqual(pend, {b: "NPS2" for b in MI300X_BDFS})
            # the current mode does not withdraw it: the kernel keeps its request
            c, _ = probe(m, rt, "set-memory", GPU0, "NPS1")
            self.assertEqual((c["r"], c["reload_required"], c["memory_pending"]), (0, 0, "NPS2"))
            self.assertIn("stays pending", c["message"])
            pend, _ = probe(m, rt, "pending")
            self.assertEqual(pend, {b: "NPS2" for b in MI300X_BDFS})

            # a record made for another sysfs root does not count here
            path = rt.record(MI300X_BDFS[4])
            with open(path) as f:
                text = f.read()
            self.assertIn("root %s\n" % m.root, text)
            with open(path, "w") as f:
                f.write(text.replace("root %s\n" % m.root, "root /elsewhere/sys\n"))
            # garbage is ignored, with a warning naming the file
            garbage = rt.record(MI300X_BDFS[5])
            with open(garbage, "w") as f:
                f.write("\x00\x01 not a request\n")
            pend, err = probe(m, rt, "pending")
            want = {b: "NPS2" for b in MI300X_BDFS}
            want[MI300X_BDFS[4]] = None
            want[MI300X_BDFS[5]] = None
            self.assertEqual(pend, want)
            self.assertIn("warning: %s" % garbage, err)

            # a record for another root lives next to ours under another name
            other = Mount("--machine", "mi300x-8")
            with other:
                pend, _ = probe(other, rt, "pending")
                self.assertEqual(set(pend.values()), {None})
                c, _ = probe(other, rt, "set-memory", GPU0, "NPS4")
                self.assertEqual(c["r"], 1)
                self.assertEqual(len(rt.records()), 16)
            pend, _ = probe(m, rt, "pending")
            self.assertEqual(pend[GPU0], "NPS2")

            # unbinding fails part-way: the GPUs already unbound are bound again
            ctl(m, "delay", "bus/pci/drivers/amdgpu/unbind", 600, "always", "write")
            result = {}

            def run():
                result["c"], _ = probe(m, rt, "reload", GPU0)

            t = threading.Thread(target=run)
            t.start()
            for _ in range(600):
                if driver(m, GPU0) is None:
                    break
                time.sleep(0.01)
            ctl(m, "inject", "bus/pci/drivers/amdgpu/unbind", "EIO", "always", "write")
            t.join(120)
            self.assertFalse(t.is_alive())
            ctl(m, "clear-faults")
            c = result["c"]
            self.assertEqual((c["r"], c["stage"]), (-errno.EIO, "unbind"), c["message"])
            errors = [g["error"] for g in c["gpus"]]
            self.assertEqual(errors.count(-errno.EIO), 1, errors)
            failed = errors.index(-errno.EIO)
            self.assertGreaterEqual(failed, 1)     # GPU0 was unbound before the fault
            self.assertEqual(errors[:failed], [0] * failed)
            self.assertIn(MI300X_BDFS[failed], c["message"])
            for g in c["gpus"]:
                self.assertEqual((g["compute"], g["memory"], g["partitions"]), ("SPX", "NPS1", 1))
            self.check_all_back(m, "SPX", "NPS1", 1)
            # the request is still with the driver, and so is the record
            pend, _ = probe(m, rt, "pending")
            self.assertEqual(pend[GPU0], "NPS2")

            # now it goes through: DPX is the driver's choice for NPS2
            c, _ = probe(m, rt, "reload", GPU0)
            self.assertEqual(c["r"], 0, c["message"])
            self.check_all_back(m, "DPX", "NPS2", 2)

    def test_mi300x_bind_failure_and_recovery(self):
        bind = "bus/pci/drivers/amdgpu/bind"
        with Mount("--machine", "mi300x-8") as m, Runtime() as rt:
            c, _ = probe(m, rt, "set-memory", GPU0, "NPS4")
            self.assertEqual(c["r"], 1)

            # one failed bind (the first GPU's): tried again, the reload succeeds
            ctl(m, "inject", bind, "EIO", "once", "write")
            c, _ = probe(m, rt, "reload", GPU0)
            self.assertEqual((c["r"], c["stage"]), (0, "done"), c["message"])
            self.assertEqual({g["error"] for g in c["gpus"]}, {0})
            self.check_all_back(m, "CPX", "NPS4", 8)
            self.assertEqual(json.loads(ctl(m, "dump"))["faults"], [])

            # every try of the first GPU fails (four, 100 + 200 + 400 ms apart): it is left
            # without a driver, said so with how to recover; the others are back
            ctl(m, "inject", bind, "EIO", "times=4", "write")
            t = time.monotonic()
            c, _ = probe(m, rt, "reload", GPU0)
            self.assertGreaterEqual(time.monotonic() - t, 0.7)
            self.assertEqual((c["r"], c["stage"]), (-errno.EIO, "bind"), c["message"])
            self.assertEqual(json.loads(ctl(m, "dump"))["faults"], [])
            # the report's message holds 255 bytes: its end is cut when the mount's path is
            # long (a deep TMPDIR)
            full = ("%s has no driver now: binding amdgpu failed 4 times (%s); recover with "
                    "'amdsmi reset --reload-driver -g %s' or "
                    "'echo %s > %s/bus/pci/drivers/amdgpu/bind'"
                    % (GPU0, os.strerror(errno.EIO), GPU0, GPU0, m.root))
            self.assertEqual(c["message"], full[:255])
            self.assertEqual(c["gpus"][0]["error"], -errno.EIO)
            self.assertEqual([g["error"] for g in c["gpus"][1:]], [0] * 7)
            self.assertIsNone(driver(m, GPU0))
            for bdf in MI300X_BDFS[1:]:
                self.assertEqual(driver(m, bdf), "amdgpu", bdf)
                self.assertEqual(len(m.gpu_nodes(bdf)), 8, bdf)
            self.assertEqual(m.gpu_nodes(GPU0), [])
            # amdsmi knows that it left this one unbound (a record under the runtime
            # directory, readable by everybody)
            self.assertEqual(probe(m, rt, "left-unbound", GPU0)[0], {"left_unbound": 1})
            self.assertEqual(probe(m, rt, "left-unbound", GPU0, user=NOBODY)[0],
                             {"left_unbound": 1})
            self.assertEqual(probe(m, rt, "left-unbound", GPU1)[0], {"left_unbound": 0})

            # a bind failing with ENODEV (no such device) is not tried again
            ctl(m, "inject", bind, "ENODEV", "times=2", "write")
            c, _ = probe(m, rt, "reload", GPU0)
            self.assertEqual((c["r"], c["stage"]), (-errno.ENODEV, "bind"), c["message"])
            self.assertIn("failed 1 time (", c["message"])
            self.assertEqual([f["hits"] for f in json.loads(ctl(m, "dump"))["faults"]], [1])
            ctl(m, "clear-faults")

            # the GPU without a driver is still a GPU, and its reload binds it, waiting for
            # its KFD nodes
            c, _ = probe(m, rt, "reload", GPU0, "--dry-run")
            self.assertEqual(c["r"], 0, c["message"])
            self.assertIn("has no driver: amdgpu would be bound to it", c["message"])
            self.assertIsNone(driver(m, GPU0))
            c, _ = probe(m, rt, "reload", GPU0)
            self.assertEqual((c["r"], c["stage"]), (0, "done"), c["message"])
            self.assertEqual(c["gpus"], [{"bdf": GPU0, "error": 0, "compute": "CPX",
                                          "memory": "NPS4", "partitions": 8}])
            self.check_all_back(m, "CPX", "NPS4", 8)
            self.assertEqual(probe(m, rt, "left-unbound", GPU0)[0], {"left_unbound": 0})
            self.assertEqual(rt.records(), [])

            # an admin's unbind is not amdsmi's doing; a GPU handed to another driver is
            # refused, saying which
            gpu2 = MI300X_BDFS[2]
            self.assertEqual(m.write("bus/pci/drivers/amdgpu/unbind", gpu2), 0)
            self.assertEqual(probe(m, rt, "left-unbound", gpu2)[0], {"left_unbound": 0})
            self.assertEqual(m.write(m.gpu(gpu2, "driver_override"), "vfio-pci\n"), 0)
            self.assertEqual(m.write("bus/pci/drivers_probe", gpu2), 0)
            self.assertEqual(driver(m, gpu2), "vfio-pci")
            c, _ = probe(m, rt, "reload", gpu2)
            self.assertEqual((c["r"], c["stage"]), (-errno.EOPNOTSUPP, "preflight"))
            self.assertIn("%s is bound to vfio-pci, not amdgpu" % gpu2, c["message"])
            self.assertEqual(driver(m, gpu2), "vfio-pci")

    def test_cli_bind_failure_and_recovery(self):
        """amdsmi reset --reload-driver in-process: a bind failing once is retried; one
        failing always leaves the GPUs without a driver, says so with how to recover, and
        they stay GPUs that the next reset --reload-driver binds."""
        bind = "bus/pci/drivers/amdgpu/bind"
        with Mount("--machine", "mi300x-8") as m, Runtime() as rt:
            def cli(*args, status=0):
                env = dict(os.environ, AMDSMI_SYSFS_ROOT=m.root, RUNTIME_DIRECTORY=rt.dir,
                           STATE_DIRECTORY=rt.dir)
                env.pop("AMDSMI_DEBUG", None)
                p = subprocess.run([CLI] + [str(a) for a in args], env=env,
                                   capture_output=True, text=True, timeout=120)
                self.assertEqual(p.returncode, status, "amdsmi %s: %r %r"
                                 % (" ".join(map(str, args)), p.stdout[-2000:], p.stderr))
                return p

            ctl(m, "inject", bind, "EIO", "once", "write")
            p = cli("reset", "-g", "0", "--reload-driver")
            self.assertIn("driver reloaded on 8 GPUs", p.stdout)
            self.check_all_back(m, "SPX", "NPS1", 1)

            ctl(m, "inject", bind, "EIO", "always", "write")
            p = cli("reset", "-g", "0", "--reload-driver", "--json", status=9)
            self.assertIn("8 GPUs have no driver now (first: %s): binding amdgpu failed 4 times"
                          % GPU0, p.stderr)
            self.assertIn("recover with 'amdsmi reset --reload-driver -g %s'" % GPU0, p.stderr)
            doc = json.loads(p.stdout)
            self.assertEqual(doc["gpus"][0]["reports"][0]["stage"], "bind")
            for bdf in MI300X_BDFS:
                self.assertIsNone(driver(m, bdf), bdf)
            ctl(m, "clear-faults")

            # still listed and selectable, with their role and driver "none"
            doc = json.loads(cli("list", "--json").stdout)
            self.assertEqual([(g["bdf"], g["role"], g["driver"]) for g in doc["gpus"]],
                             [(b, "baremetal", "none") for b in MI300X_BDFS])
            p = cli("reset", "-g", "0", "--reload-driver")
            self.assertIn("GPU 0 (%s): bound to amdgpu (it had no driver)" % GPU0, p.stdout)
            self.assertEqual(driver(m, GPU0), "amdgpu")
            self.assertEqual(len(m.gpu_nodes(GPU0)), 1)
            p = cli("reset", "-g", "all", "--reload-driver")
            self.check_all_back(m, "SPX", "NPS1", 1)

            # another driver's GPU is refused, naming it (exit 4: not supported)
            self.assertEqual(m.write("bus/pci/drivers/amdgpu/unbind", GPU1), 0)
            self.assertEqual(m.write(m.gpu(GPU1, "driver_override"), "vfio-pci\n"), 0)
            self.assertEqual(m.write("bus/pci/drivers_probe", GPU1), 0)
            p = cli("reset", "-g", "1", "--reload-driver", status=4)
            self.assertIn("%s is bound to vfio-pci, not amdgpu" % GPU1, p.stderr)

    def test_mi350x_and_mi300a(self):
        with Mount("--machine", "mi350x-8") as m, Runtime() as rt:
            c, _ = probe(m, rt, "set-memory", GPU0, "NPS4")
            self.assertEqual(c["r"], -errno.EINVAL)
            self.assertIn("NPS1, NPS2", c["message"])
            c, _ = probe(m, rt, "set-memory", GPU0, "NPS2")
            self.assertEqual((c["r"], c["memory_pending"]), (1, "NPS2"))
            c, _ = probe(m, rt, "reload", GPU0)
            self.assertEqual(c["r"], 0, c["message"])
            self.assertEqual((c["compute_after"], c["memory_after"]), ("DPX", "NPS2"))
            self.assertEqual(len(c["gpus"]), 8)
            self.assertEqual({(g["compute"], g["memory"], g["partitions"]) for g in c["gpus"]},
                             {("DPX", "NPS2", 2)})
            self.assertEqual(rt.records(), [])
        with Mount("--machine", "mi300a-4") as m, Runtime() as rt:
            pend, _ = probe(m, rt, "pending")
            self.assertEqual(len(pend), 4)
            apu = sorted(pend)[0]
            c, _ = probe(m, rt, "set-memory", apu, "NPS4")
            self.assertEqual((c["r"], c["stage"]), (-errno.EOPNOTSUPP, "preflight"))
            self.assertIn("cannot be changed", c["message"])
            self.assertIn("NPS1", c["message"])
            c, _ = probe(m, rt, "set-memory", apu, "NPS1")
            self.assertEqual(c["r"], 0)
            self.assertEqual(rt.records(), [])


if __name__ == "__main__":
    if not PROBE:
        sys.exit("FAIL: PARTITION_MEMORY_PROBE is not set")
    main()
