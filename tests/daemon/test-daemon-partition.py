#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""org.amdsmi1.Partition of amdsmid on a private bus, and the partition verbs of amdsmi
through it.

The properties and their PropertiesChanged, Plan(), SetComputeMode(), SetMemoryMode(),
SetModes() and ReloadDriver() (success, dry run, root, nobody denied and allowed by polkit),
KFD users (Busy, with the PIDs), a slow switch (Changing, reads that do not wait, a second
change queued behind the first, a reload holding the whole hive), malformed calls, the CLI
through amdsmid (the same documents, lines and exit statuses as in-process, polkit deciding
for unprivileged admins, --direct refused unless --force), the history of every change, the
desired state of amdsmid.conf (before READY=1, on Reload, retried while KFD users block it)
and the recovery of changes a crash interrupted (intent records). mi300x-8, and
mi300x-gim-8vf for a gim host."""

import json
import os
import re
import signal
import subprocess
import time
import unittest

from daemontest import (BUS, GPU0, GPU1, IFACE_GPU, IFACE_PARTITION, MANAGER, MI300X_BDFS,
                        NOBODY, ROOT, Daemon, gpu_path, require_daemon, wait_until)
from simtest import SCHEMA, SIM

import jsonschema

P = IFACE_PARTITION
G0 = gpu_path(GPU0)
G1 = gpu_path(GPU1)
CONFIGURE = "org.amdsmi1.partition.configure"
RELOAD = "org.amdsmi1.driver.reload"
DRY_RUN = 1
FORCE = 2
FAST_POLL = "[daemon]\npoll_interval_ms = 200\n"
CHANGES = ("compute_mode", "memory_mode", "partition_modes", "reload_driver", "driver_bind")

with open(SCHEMA, encoding="utf-8") as f:
    VALIDATOR = jsonschema.Draft202012Validator(json.load(f))


def ctl(d, *args):
    p = subprocess.run([SIM, "ctl", "--mount", d.mount.root] + [str(a) for a in args],
                       capture_output=True, text=True, timeout=30)
    if p.returncode != 0:
        raise AssertionError("amdsmi-sim ctl %s: %s" % (" ".join(map(str, args)), p.stderr))
    return p.stdout


def no_kfd_nodes(d, bdf):
    """Whether the GPU has no KFD nodes (a switch under way); the topology may change while
    it is read."""
    try:
        return d.mount.gpu_nodes(bdf) == []
    except OSError:
        return False


def reply(d, path, method, sig, *args, user=None):
    """A change method's answer, parsed."""
    return json.loads(d.call(path, P, method, sig, *args, user=user)[0])


def busctl_async(d, path, method, sig, *args):
    return subprocess.Popen(["busctl", "--system", "--json=short", "call", "--timeout=120", BUS,
                             path, P, method, sig] + [str(a) for a in args],
                            env=d.env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)


def finished(p):
    out, err = p.communicate(timeout=120)
    if p.returncode != 0:
        raise AssertionError("busctl call failed: %s" % err)
    return json.loads(json.loads(out)["data"][0])


def mode(d, bdf, prop="ComputeMode"):
    return d.get(gpu_path(bdf), P, prop)


def normalise(doc):
    """A change document without what differs between two runs: the time stamp, durations."""
    doc = json.loads(json.dumps(doc))
    doc.pop("timestamp", None)
    for g in doc.get("gpus", []):
        for r in g.get("reports", []):
            r.pop("elapsed_ms", None)
        g["messages"] = [re.sub(r"\(\d+ ms\)", "(N ms)", m) for m in g.get("messages", [])]
    return doc


def table(text):
    return re.sub(r"\(\d+ ms\)", "(N ms)", text)


def write_intent(d, change, gpu, old, new, n=0):
    usec = 1796278321123456 + n
    ident = "%d-4242-%d" % (usec, n)
    rec = {"id": ident, "time": "2026-12-03T06:12:01.123Z", "time_usec": usec, "pid": 4242,
           "gpu": gpu, "change": change, "old": old, "new": new, "detail": None}
    path = os.path.join(d.state_dir, "intent")
    os.makedirs(path, exist_ok=True)
    with open(os.path.join(path, ident + ".json"), "w") as f:
        json.dump(rec, f)


class Partition(unittest.TestCase):
    maxDiff = None

    def valid(self, text):
        doc = json.loads(text)
        errors = [("/".join(map(str, e.absolute_path)), e.message[:200])
                  for e in VALIDATOR.iter_errors(doc)]
        self.assertEqual(errors, [], "not valid amdsmi/1: %s" % text[:2000])
        return doc

    def history(self, d, change=None):
        """The partition slice's entries (other slices apply their desired state too)."""
        return [(e["gpu"], e["change"], e["old"], e["new"], e["result"], e["via"], e["uid"])
                for e in d.history()
                if e["change"] == change or (change is None and e["change"] in CHANGES)]

    # ---- properties and Plan ---------------------------------------------------------------

    def test_properties_and_plan(self):
        with Daemon() as d:
            for bdf in MI300X_BDFS:
                path = gpu_path(bdf)
                self.assertEqual(d.get(path, P, "ComputeMode", user=NOBODY), "SPX")
                self.assertEqual(d.get(path, P, "MemoryMode"), "NPS1")
                self.assertEqual(d.get(path, P, "PendingMemoryMode"), "")
                self.assertEqual(d.get(path, P, "AvailableComputeModes"),
                                 ["SPX", "DPX", "QPX", "CPX"])
            # a plan is a dry run anyone may ask for; "" keeps a mode
            e = reply(d, G0, "Plan", "ss", "cpx", "", user=NOBODY)
            self.assertEqual((e["bdf"], e["gpu"], e["result"]), (GPU0, 0, None))
            self.assertEqual((e["plan"]["compute_before"], e["plan"]["compute_after"],
                              e["plan"]["partitions_after"]), ("SPX", "CPX", 8))
            self.assertIn("  dry run: the switch to CPX is possible now", e["messages"])
            self.assertFalse(e["reload_pending"])
            # an invalid plan is an answer too: what the change would fail with
            e = reply(d, G0, "Plan", "ss", "SPX", "nps4")
            self.assertEqual((e["result"], e["plan"]["reason"]), ("ERANGE", "incompatible"))
            self.assertIn("not valid under memory mode NPS4", " ".join(e["diagnostics"]))
            e = reply(d, G1, "Plan", "ss", "tpx", "")
            self.assertEqual(e["result"], "EOPNOTSUPP")
            e = reply(d, G1, "Plan", "ss", "", "NPS2")
            self.assertEqual((e["result"], e["plan"]["memory_after"]), (None, "NPS2"))
            self.assertEqual(e["plan"]["affected_bdfs"][0], GPU1)
            self.assertEqual(sorted(e["plan"]["affected_bdfs"]), MI300X_BDFS)
            # nothing changed, nothing recorded
            self.assertEqual(mode(d, GPU0), "SPX")
            self.assertEqual(d.get(G1, P, "PendingMemoryMode"), "")
            self.assertEqual(self.history(d), [])

    # ---- SetComputeMode --------------------------------------------------------------------

    def test_set_compute_mode(self):
        with Daemon() as d:
            mon = subprocess.Popen(["dbus-monitor", "--address", d.address,
                                    "type='signal',path='%s',member='PropertiesChanged'" % G0],
                                   stdout=subprocess.PIPE, text=True)
            try:
                time.sleep(0.5)
                # a dry run changes nothing and needs no authorisation
                e = reply(d, G0, "SetComputeMode", "st", "cpx", DRY_RUN, user=NOBODY)
                self.assertEqual(e["result"], None)
                self.assertEqual(e["reports"][0]["stage"], "done")
                self.assertFalse(e["reports"][0]["changed"])
                self.assertEqual(mode(d, GPU0), "SPX")
                # nobody, polkit allowing nothing: denied, nothing changed
                name, msg = d.call_error(G0, P, "SetComputeMode", "string:cpx", "uint64:0",
                                         user=NOBODY)
                self.assertEqual(name, "org.amdsmi1.Error.PermissionDenied")
                self.assertIn("not authorised", msg)
                self.assertEqual(mode(d, GPU0), "SPX")
                self.assertEqual(self.history(d), [])
                # root: switched; the properties show it when the call returns
                e = reply(d, G0, "SetComputeMode", "st", "Cpx", 0)
                self.assertEqual((e["result"], e["reports"][0]["compute_after"],
                                  e["reports"][0]["partitions_after"]), (None, "CPX", 8))
                self.assertRegex(e["messages"][-1], r"^  done: CPX with 8 partitions")
                self.assertEqual(mode(d, GPU0), "CPX")
                self.assertEqual(d.get(G0, P, "AvailableComputeModes"),
                                 ["SPX", "DPX", "QPX", "CPX"])
                self.assertEqual(mode(d, GPU1), "SPX")
                self.assertEqual(d.describe()["gpus"][0]["compute_mode"], "CPX")
                # nobody allowed by polkit
                d.allow(CONFIGURE)
                e = reply(d, G0, "SetComputeMode", "st", "qpx", 0, user=NOBODY)
                self.assertEqual(e["reports"][0]["compute_after"], "QPX")
                self.assertEqual(mode(d, GPU0), "QPX")
                time.sleep(0.5)
            finally:
                mon.terminate()
                signals = mon.communicate(timeout=10)[0]
            # PropertiesChanged carried each new mode
            self.assertIn('string "org.amdsmi1.Partition"', signals)
            for m in ("CPX", "QPX"):
                self.assertRegex(signals, r'string "ComputeMode"\s+variant\s+string "%s"' % m)
            self.assertEqual(self.history(d), [
                (GPU0, "compute_mode", "SPX", "CPX", "ok", "amdsmid", 0),
                (GPU0, "compute_mode", "CPX", "QPX", "ok", "amdsmid", 65534)])
            self.assertIsNotNone([e for e in d.history() if e["change"] in CHANGES][0]["sender"])
            self.assertIn("SetComputeMode by uid 65534", d.log())

    def test_kfd_users_busy(self):
        sleeper = subprocess.Popen(["sleep", "300"])
        try:
            with Daemon() as d:
                ctl(d, "kfd-users", "add", GPU1, sleeper.pid, 1 << 30)
                name, msg = d.call_error(G1, P, "SetComputeMode", "string:CPX", "uint64:0")
                self.assertEqual(name, "org.amdsmi1.Error.Busy")
                # (dbus-send shows the first line of the message)
                self.assertIn("GPU 1: the compute mode switch failed: 1 process uses GPU %s "
                              "through KFD: %d (sleep)" % (GPU1, sleeper.pid), msg)
                # the dry run says the same
                name, msg = d.call_error(G1, P, "SetComputeMode", "string:CPX", "uint64:1",
                                         user=NOBODY)
                self.assertEqual(name, "org.amdsmi1.Error.Busy")
                self.assertIn("%d (sleep)" % sleeper.pid, msg)
                # the driver reload of the hive is blocked by it too
                d.allow(RELOAD)
                name, msg = d.call_error(G0, P, "ReloadDriver", "uint64:0", user=NOBODY)
                self.assertEqual(name, "org.amdsmi1.Error.Busy")
                self.assertIn(str(sleeper.pid), msg)
                self.assertEqual(mode(d, GPU1), "SPX")
                self.assertEqual(mode(d, GPU0), "SPX")
                h = self.history(d)
                self.assertEqual(h[0], (GPU1, "compute_mode", "SPX", "CPX", "EBUSY", "amdsmid", 0))
                self.assertEqual({e[0] for e in h[1:]}, set(MI300X_BDFS))
                self.assertEqual({e[1:] for e in h[1:]},
                                 {("reload_driver", "NPS1", "NPS1", "EBUSY", "amdsmid", 65534)})
        finally:
            sleeper.kill()
            sleeper.wait()

    # ---- memory requests and the driver reload ---------------------------------------------

    def test_memory_and_reload(self):
        with Daemon() as d:
            d.allow(CONFIGURE)
            e = reply(d, G1, "SetMemoryMode", "st", "nps4", 0, user=NOBODY)
            # recorded: a success that waits for a reload
            self.assertTrue(e["reload_pending"])
            self.assertTrue(e["reports"][0]["reload_required"])
            self.assertEqual(sorted(e["covered_bdfs"]), MI300X_BDFS)
            self.assertIn("whole XGMI hive", e["diagnostics"][0])
            for bdf in MI300X_BDFS:
                self.assertEqual((mode(d, bdf, "MemoryMode"), mode(d, bdf, "PendingMemoryMode")),
                                 ("NPS1", "NPS4"))
            # ReloadDriver is its own right
            name, _ = d.call_error(G0, P, "ReloadDriver", "uint64:0", user=NOBODY)
            self.assertEqual(name, "org.amdsmi1.Error.PermissionDenied")
            self.assertEqual(mode(d, GPU0, "MemoryMode"), "NPS1")
            e = reply(d, G0, "ReloadDriver", "t", DRY_RUN, user=NOBODY)
            self.assertIn("dry run: the driver reload of 8 GPUs is possible now",
                          e["messages"][0])
            e = reply(d, G0, "ReloadDriverWithTimeout", "ut", 60000, 0)
            self.assertEqual(e["result"], None)
            self.assertEqual([g["bdf"] for g in e["reports"][0]["gpus"]], MI300X_BDFS)
            for bdf in MI300X_BDFS:
                self.assertEqual((mode(d, bdf), mode(d, bdf, "MemoryMode"),
                                  mode(d, bdf, "PendingMemoryMode")), ("CPX", "NPS4", ""))
                self.assertEqual(d.get(gpu_path(bdf), P, "AvailableComputeModes"),
                                 ["QPX", "CPX"])
            # both modes at once, planned together: SPX is not valid under NPS4
            name, msg = d.call_error(G0, P, "SetModes", "string:SPX", "string:NPS4",
                                     "uint32:0", "uint64:0")
            self.assertEqual(name, "org.amdsmi1.Error.OutOfRange")
            self.assertIn("valid: QPX, CPX", msg)
            e = reply(d, G0, "SetModes", "ssut", "qpx", "", 0, 0)
            self.assertEqual(mode(d, GPU0), "QPX")
            self.assertEqual(self.history(d, "memory_mode"),
                             [(b, "memory_mode", "NPS1", "NPS4", "ok", "amdsmid", 65534)
                              for b in [GPU1] + [b for b in MI300X_BDFS if b != GPU1]])
            self.assertEqual(self.history(d, "reload_driver"),
                             [(b, "reload_driver", "NPS1", "NPS4", "ok", "amdsmid", 0)
                              for b in MI300X_BDFS])
            self.assertEqual(self.history(d, "partition_modes"),
                             [(b, "partition_modes", "CPX/NPS4", "SPX/NPS4", "ERANGE",
                               "amdsmid", 0) for b in MI300X_BDFS])

    def test_sigkill_mid_reload_binds_the_hive_again(self):
        """amdsmid killed while a driver reload has unbound the hive: at the next start every
        GPU it left without a driver is bound again, and the interruption is one history
        record."""
        with Daemon(config=FAST_POLL) as d:
            d.kill_during("bus/pci/drivers/amdgpu/bind", G0, P, "ReloadDriver", "t", 0)
            for bdf in MI300X_BDFS:
                wait_until("amdgpu on " + bdf, lambda: d.driver(bdf) == "amdgpu", timeout=90)
                wait_until("Driver of " + bdf,
                         lambda: d.get(gpu_path(bdf), IFACE_GPU, "Driver") == "amdgpu")
            r = d.recoveries()
            self.assertEqual(len(r), 1, r)
            self.assertEqual((r[0][0], r[0][2], r[0][3]), (GPU0, "recovered", "ok"))
            self.assertTrue(r[0][1].startswith("reload_driver "), r)
            self.assertIn("without a driver", r[0][4])
            self.assertIn("amdsmid binds them to amdgpu again", r[0][4])
            self.assertEqual(os.listdir(os.path.join(d.state_dir, "intent")), [])

    def test_bind_failure_and_rebind(self):
        """A reload whose binds fail for good leaves the GPUs without a driver: amdsmid shows
        them (Driver "none", a Role), says so once, and binds them again on its periodic
        check once the cause is gone, recording each try; a GPU an admin unbinds is left
        alone."""
        bind = "bus/pci/drivers/amdgpu/bind"
        with Daemon(config=FAST_POLL) as d:
            ctl(d, "inject", bind, "EIO", "always", "write")
            name, msg = d.call_error(G0, P, "ReloadDriver", "uint64:0")
            self.assertEqual(name, "org.amdsmi1.Error.DeviceError")
            self.assertIn("8 GPUs have no driver now (first: %s)" % GPU0, msg)
            self.assertIn("amdsmi reset --reload-driver -g %s" % GPU0, msg)
            for bdf in MI300X_BDFS:
                self.assertIsNone(d.driver(bdf))
                wait_until("Driver none on " + bdf,
                         lambda: d.get(gpu_path(bdf), IFACE_GPU, "Driver") == "none")
                self.assertEqual(d.get(gpu_path(bdf), IFACE_GPU, "Role"), "baremetal")
            wait_until("the warning", lambda: "GPU 0 has no driver: a driver reload could not "
                     "bind amdgpu to it again" in d.log())
            # tried again while the fault lasts, failing, recorded
            wait_until("a failed try", lambda: any(
                e[4] == "EIO" for e in self.history(d, "driver_bind")), timeout=60)
            ctl(d, "clear-faults")
            for bdf in MI300X_BDFS:
                wait_until("amdgpu on " + bdf,
                         lambda: d.get(gpu_path(bdf), IFACE_GPU, "Driver") == "amdgpu",
                         timeout=90)
                self.assertEqual(d.driver(bdf), "amdgpu")
                wait_until("KFD nodes of " + bdf, lambda: len(d.mount.gpu_nodes(bdf)) == 1)
            wait_until("SPX on GPU 0", lambda: mode(d, GPU0) == "SPX")
            hist = self.history(d, "driver_bind")
            self.assertEqual(sorted(e[0] for e in hist if e[4] == "ok"), MI300X_BDFS)
            self.assertEqual({(e[2], e[3], e[5]) for e in hist}, {("none", "amdgpu", "amdsmid")})
            self.assertIn("EIO", {e[4] for e in hist})
            log = d.log()
            self.assertIn("GPU 0 bound to amdgpu again after", log)
            for i in range(8):
                self.assertEqual(log.count("GPU %d has no driver:" % i), 1, log)

            # an admin's unbind: said, never undone
            n = len(self.history(d, "driver_bind"))
            self.assertEqual(d.mount.write("bus/pci/drivers/amdgpu/unbind", GPU1), 0)
            wait_until("Driver none on GPU 1",
                     lambda: d.get(G1, IFACE_GPU, "Driver") == "none")
            wait_until("the notice", lambda: "GPU 1 has no driver (not a reload of amdsmi: left "
                     "as it is" in d.log())
            time.sleep(2)
            self.assertIsNone(d.driver(GPU1))
            self.assertEqual(len(self.history(d, "driver_bind")), n)
            # and the admin's reload binds it
            p = d.cli("reset", "-g", "1", "--reload-driver")
            self.assertIn("bound to amdgpu (it had no driver)", p.stdout)
            self.assertEqual(d.get(G1, IFACE_GPU, "Driver"), "amdgpu")

    def test_rebind_gives_up(self):
        """Binding again is bounded: five failed tries, then an error saying how to bind the
        GPU by hand, and no more tries; the admin's reload still binds it."""
        bind = "bus/pci/drivers/amdgpu/bind"
        with Daemon(config=FAST_POLL) as d:
            # every bind fails from the start (a fault set after the reload would race with
            # amdsmid's first try): the whole hive is left without a driver
            ctl(d, "inject", bind, "EIO", "always", "write")
            name, msg = d.call_error(G0, P, "ReloadDriver", "uint64:0")
            self.assertEqual(name, "org.amdsmi1.Error.DeviceError")
            self.assertIn("8 GPUs have no driver now (first: %s)" % GPU0, msg)
            self.assertEqual([d.driver(b) for b in MI300X_BDFS], [None] * 8)

            def gpu0_tries():
                return [t for t in self.history(d, "driver_bind") if t[0] == GPU0]

            wait_until("amdsmid to give up on GPU 0", lambda: "GPU 0 still has no driver: "
                     "binding amdgpu failed 5 times" in d.log(), timeout=180)
            self.assertIn("amdsmid gives up", d.log())
            self.assertEqual(gpu0_tries(),
                             [(GPU0, "driver_bind", "none", "amdgpu", "EIO", "amdsmid", 0)] * 5)
            ctl(d, "clear-faults")
            time.sleep(2)
            self.assertEqual(len(gpu0_tries()), 5)
            self.assertEqual(d.get(G0, IFACE_GPU, "Driver"), "none")
            p = d.cli("reset", "-g", "0", "--reload-driver")
            self.assertIn("bound to amdgpu (it had no driver)", p.stdout)
            self.assertEqual(d.get(G0, IFACE_GPU, "Driver"), "amdgpu")
            self.assertEqual(self.history(d, "reload_driver")[-1][0], GPU0)

    # ---- a slow switch ---------------------------------------------------------------------

    def test_slow_switch(self):
        with Daemon() as d:
            ctl(d, "switch-time", GPU0, 8000)
            first = busctl_async(d, G0, "SetComputeMode", "st", "cpx", 0)
            wait_until("Changing", lambda: d.get(G0, IFACE_GPU, "Changing"))
            second = busctl_async(d, G0, "SetComputeMode", "st", "dpx", 0)
            # the reload of the hive waits for GPU 0 and holds every GPU meanwhile (sent well
            # after the second switch, so that it arrives after it)
            time.sleep(1)
            reload = busctl_async(d, G1, "ReloadDriver", "t", 0)
            wait_until("GPU 7 changing", lambda: d.get(gpu_path(MI300X_BDFS[7]), IFACE_GPU,
                                                     "Changing"))
            # reads answer at once, with the modes before the change, also after the
            # periodic check has re-enumerated the GPUs
            for k in range(3):
                t = time.monotonic()
                doc = d.describe(user=NOBODY)
                self.assertEqual(mode(d, GPU0), "SPX")
                self.assertLess(time.monotonic() - t, 1.5)
                self.assertEqual((doc["gpus"][0]["compute_mode"], doc["gpus"][0]["changing"]),
                                 ("SPX", True))
                self.assertTrue(all(g["changing"] for g in doc["gpus"]))
                time.sleep(0.8)
            a = finished(first)
            b = finished(second)
            c = finished(reload)
            # in the order they came: the second saw the first's result
            self.assertEqual((a["plan"]["compute_before"], a["plan"]["compute_after"]),
                             ("SPX", "CPX"))
            self.assertEqual((b["plan"]["compute_before"], b["plan"]["compute_after"]),
                             ("CPX", "DPX"))
            self.assertGreaterEqual(a["reports"][0]["elapsed_ms"], 7900)
            self.assertEqual(c["result"], None)
            h = [(e[1], e[0], e[3]) for e in self.history(d)]
            self.assertEqual(h[:2], [("compute_mode", GPU0, "CPX"),
                                     ("compute_mode", GPU0, "DPX")])
            # the reload held the whole hive, GPU 0 included
            self.assertEqual([(e[0], e[1]) for e in h[2:]],
                             [("reload_driver", b)
                              for b in [GPU1] + [b for b in MI300X_BDFS if b != GPU1]])
            # the reload came last: GPU 0 is back as the reload reported it
            back = {g["bdf"]: g["compute_mode"] for g in c["reports"][0]["gpus"]}
            self.assertEqual(sorted(back), MI300X_BDFS)
            self.assertEqual(mode(d, GPU0), back[GPU0])
            self.assertEqual(c["plan"], None)
            self.assertFalse(d.get(G0, IFACE_GPU, "Changing"))

    # ---- malformed calls -------------------------------------------------------------------

    def test_malformed(self):
        with Daemon() as d:
            invalid = "org.amdsmi1.Error.InvalidArgument"
            for args in (["string:xpx", "uint64:0"], ["string:", "uint64:0"],
                         ["string:UNKNOWN", "uint64:0"], ["string:CP", "uint64:0"],
                         ["string:" + "C" * 100000, "uint64:0"], ["string:cpx", "uint64:4"],
                         ["string:cpx", "uint64:9223372036854775808"]):
                name, msg = d.call_error(G0, P, "SetComputeMode", *args, user=NOBODY)
                self.assertEqual(name, invalid, args[0][:40])
                self.assertLess(len(msg), 300)
            name, msg = d.call_error(G0, P, "SetComputeMode", "string:tpx!", "uint64:0")
            self.assertIn("modes: SPX, DPX, TPX, QPX, CPX", msg)
            name, msg = d.call_error(G0, P, "SetMemoryMode", "string:nps5", "uint64:0")
            self.assertEqual(name, invalid)
            self.assertIn("NPS1, NPS2, NPS3, NPS4, NPS6, NPS8", msg)
            name, _ = d.call_error(G0, P, "Plan", "string:spx", "string:nps")
            self.assertEqual(name, invalid)
            name, _ = d.call_error(G0, P, "SetModes", "string:", "string:", "uint32:0",
                                   "uint64:0")
            self.assertEqual(name, invalid)
            name, _ = d.call_error(G0, P, "SetModes", "string:cpx", "string:", "uint32:3600001",
                                   "uint64:0")
            self.assertEqual(name, invalid)
            name, _ = d.call_error(G0, P, "ReloadDriver", "uint64:256")
            self.assertEqual(name, invalid)
            # a valid name the GPU does not have: NotSupported, from the plan
            name, msg = d.call_error(G0, P, "SetMemoryMode", "string:NPS3", "uint64:0")
            self.assertEqual(name, "org.amdsmi1.Error.NotSupported")
            self.assertIn("available: NPS1, NPS2, NPS4", msg)
            # wrong signatures, objects that are no GPU
            name, _ = d.call_error(G0, P, "SetComputeMode", "string:cpx")
            self.assertEqual(name, "org.freedesktop.DBus.Error.InvalidArgs")
            name, _ = d.call_error(G0, P, "SetComputeMode", "uint32:1", "uint64:0")
            self.assertEqual(name, "org.freedesktop.DBus.Error.InvalidArgs")
            name, _ = d.call_error(gpu_path("0000:99:00.0"), P, "SetComputeMode", "string:cpx",
                                   "uint64:0")
            self.assertEqual(name, "org.freedesktop.DBus.Error.UnknownObject")
            # alive, nothing changed, nothing recorded but the refused NPS3 request
            self.assertEqual(mode(d, GPU0), "SPX")
            self.assertEqual({e[4] for e in self.history(d)}, {"EOPNOTSUPP"})

    # ---- the CLI through amdsmid -----------------------------------------------------------

    COMMANDS = [
        (["set", "-g", "0,1", "-C", "cpx"], 5),
        (["partition", "set", "-g", "2", "--compute", "dpx", "--timeout", "20"], 0),
        (["set", "-g", "all", "-M", "nps4"], 8),
        (["partition", "set", "-g", "3", "--compute", "spx", "--memory", "nps4"], 7),
        (["set", "-g", "4", "-C", "tpx", "--dry-run"], 4),
        (["reset", "-g", "5", "--reload-driver"], 5),
        (["reset", "-g", "5", "--reload-driver", "--dry-run"], 5),
    ]

    def run_commands(self, d, extra, user=None):
        """Each command in JSON, as a table and in CSV: (document, its stderr, table, table
        stderr, CSV)."""
        out = []
        for args, status in self.COMMANDS:
            j = d.cli(*(args + ["--json"] + extra), status=status, user=user)
            t = d.cli(*(args + extra), status=status, user=user)
            c = d.cli(*(args + ["--csv"] + extra), status=status, user=user)
            out.append((normalise(self.valid(j.stdout)), j.stderr, table(t.stdout), t.stderr,
                        c.stdout))
        return out

    def test_cli_same_as_in_process(self):
        sleeper = subprocess.Popen(["sleep", "300"])
        results = {}
        try:
            for route in ("amdsmid", "direct"):
                with Daemon() as d:
                    ctl(d, "kfd-users", "add", GPU1, sleeper.pid, 1 << 30)
                    if route == "amdsmid":
                        d.allow(CONFIGURE, RELOAD)
                        results[route] = self.run_commands(d, [], user=NOBODY)
                    else:
                        results[route] = self.run_commands(d, ["--direct", "--force"])
                    results[route + " history"] = [e[:6] for e in self.history(d)]
                    results[route + " uids"] = {e[6] for e in self.history(d)}
        finally:
            sleeper.kill()
            sleeper.wait()
        for (args, status), a, b in zip(self.COMMANDS, results["amdsmid"], results["direct"]):
            with self.subTest(args=args):
                self.assertEqual(a[0], b[0])      # the JSON document
                self.assertEqual(a[1], b[1])      # its standard error
                self.assertEqual(a[2], b[2])      # the table or CSV
                self.assertEqual(a[3], b[3])
                self.assertEqual(a[4], b[4])      # CSV
                self.assertEqual(a[0]["result"]["exit_code"] if "result" in a[0] else status,
                                 status)
        self.assertIn("PID %d (sleep) uses GPU %s" % (sleeper.pid, GPU1), results["amdsmid"][0][3])
        self.assertIn("the memory mode request waits for a driver reload",
                      results["amdsmid"][2][3])
        # the same changes were recorded, by whom they ran
        strip = [e[:5] for e in results["amdsmid history"]]
        self.assertEqual(strip, [e[:5] for e in results["direct history"]])
        self.assertEqual({e[5] for e in results["amdsmid history"]}, {"amdsmid"})
        self.assertEqual({e[5] for e in results["direct history"]}, {"direct"})
        self.assertEqual(results["amdsmid uids"], {65534})
        self.assertEqual(results["direct uids"], {0})
        self.assertIn((GPU1, "compute_mode", "SPX", "CPX", "EBUSY"), strip)
        self.assertIn((MI300X_BDFS[2], "compute_mode", "SPX", "DPX", "ok"), strip)

    def test_cli_authorisation(self):
        with Daemon() as d:
            # nobody, polkit denying: exit 6, nothing changed
            p = d.cli("set", "-g", "0", "-C", "cpx", "--json", user=NOBODY, status=6)
            doc = self.valid(p.stdout)
            self.assertEqual((doc["error"]["exit_code"], doc["error"]["errno"]), (6, "EACCES"))
            self.assertIn("not authorised", p.stderr)
            d.cli("reset", "-g", "0", "--reload-driver", user=NOBODY, status=6)
            self.assertEqual(mode(d, GPU0), "SPX")
            # allowed: through amdsmid, no root needed
            d.allow(CONFIGURE)
            p = d.cli("partition", "set", "-g", "0", "--compute", "cpx", user=NOBODY)
            self.assertRegex(p.stdout, r"done: CPX with 8 partitions")
            self.assertNotIn("in-process", p.stderr)
            self.assertEqual(mode(d, GPU0), "CPX")
            # the reload is its own right
            d.cli("reset", "-g", "0", "--reload-driver", user=NOBODY, status=6)
            # --direct while amdsmid runs: refused, unless --force (root only)
            p = d.cli("set", "-g", "1", "-C", "dpx", "--direct", status=5)
            self.assertIn("amdsmid is running", p.stderr)
            d.cli("reset", "-g", "1", "--reload-driver", "--direct", status=5)
            d.cli("set", "-g", "1", "-C", "dpx", "--direct", "--force", user=NOBODY, status=6)
            d.cli("set", "-g", "1", "-C", "dpx", "--direct", "--force")
            # amdsmid sees the in-process change at its next check
            wait_until("DPX on GPU 1", lambda: mode(d, GPU1) == "DPX")
            d.cli("reset", "-g", "1", "--reload-driver", "--direct", "--force", "--dry-run")
            self.assertEqual(self.history(d), [
                (GPU0, "compute_mode", "SPX", "CPX", "ok", "amdsmid", 65534),
                (GPU1, "compute_mode", "SPX", "DPX", "ok", "direct", 0)])

    # ---- a gim host ------------------------------------------------------------------------

    def test_gim_host(self):
        with Daemon(machine="mi300x-gim-8vf") as d:
            self.assertEqual((mode(d, GPU0), mode(d, GPU0, "MemoryMode")), ("CPX", "NPS4"))
            # the change tears the 8 VFs down: only with FORCE
            name, msg = d.call_error(G0, P, "SetComputeMode", "string:qpx", "uint64:0")
            self.assertEqual(name, "org.amdsmi1.Error.Busy")
            self.assertIn("tears down its 8 VFs", msg)
            self.assertEqual(mode(d, GPU0), "CPX")
            e = reply(d, G0, "SetComputeMode", "st", "qpx", FORCE)
            self.assertEqual((e["result"], e["plan"]["vfs_before"], e["plan"]["vfs_after"]),
                             (None, 8, 4))
            self.assertEqual(mode(d, GPU0), "QPX")
            # the CLI through amdsmid says the same
            p = d.cli("partition", "set", "-g", "1", "--compute", "qpx", status=5)
            self.assertIn("give --force to do it", p.stderr)
            d.cli("partition", "set", "-g", "1", "--compute", "qpx", "--force")
            self.assertEqual(mode(d, GPU1), "QPX")
            self.assertEqual(self.history(d, "compute_mode"), [
                (GPU0, "compute_mode", "CPX", "QPX", "EBUSY", "amdsmid", 0),
                (GPU0, "compute_mode", "CPX", "QPX", "ok", "amdsmid", 0),
                (GPU1, "compute_mode", "CPX", "QPX", "EBUSY", "amdsmid", 0),
                (GPU1, "compute_mode", "CPX", "QPX", "ok", "amdsmid", 0)])

    # ---- the desired state -----------------------------------------------------------------

    def test_desired_at_start_and_reload(self):
        conf = "[gpu %s]\ncompute_mode = cpx\n[gpu %s]\nmemory_mode = NPS4\n" % (GPU0, GPU1)
        with Daemon(config=conf, start=False) as d:
            ctl(d, "switch-time", GPU0, 1500)
            t = time.monotonic()
            d.start()
            # READY=1 came after the slow switch
            self.assertGreater(time.monotonic() - t, 1.4)
            self.assertEqual(mode(d, GPU0), "CPX")
            # the memory request is made, never the reload
            for bdf in MI300X_BDFS:
                self.assertEqual((mode(d, bdf, "MemoryMode"), mode(d, bdf, "PendingMemoryMode")),
                                 ("NPS1", "NPS4"))
            self.assertIn("desired memory mode NPS4 requested: it takes effect with "
                          "'amdsmi reset -g 1 --reload-driver'", d.log())
            self.assertEqual(self.history(d), [
                (GPU0, "compute_mode", "SPX", "CPX", "ok", "amdsmid", 0)] + [
                (b, "memory_mode", "NPS1", "NPS4", "ok", "amdsmid", 0)
                for b in [GPU1] + [b for b in MI300X_BDFS if b != GPU1]])
            # Reload: only the key that changed is applied again
            d.cli("set", "-g", "1", "-C", "dpx")
            d.write_config(conf.replace("compute_mode = cpx", "compute_mode = QPX") +
                           "compute_mode = CPX\n")
            d.call(ROOT, MANAGER, "Reload")
            wait_until("QPX on GPU 0", lambda: mode(d, GPU0) == "QPX")
            wait_until("CPX on GPU 1", lambda: mode(d, GPU1) == "CPX")
            self.assertEqual(len(self.history(d, "memory_mode")), 8)
            # an unchanged file: nothing is applied again
            d.cli("set", "-g", "0", "-C", "spx")
            d.call(ROOT, MANAGER, "Reload")
            time.sleep(1)
            self.assertEqual(mode(d, GPU0), "SPX")
            # the admin's reload applies NPS4, and the driver picks CPX for every GPU; the
            # desired compute modes are applied again
            p = d.cli("reset", "-g", "1", "--reload-driver", "--json")
            back = {g["bdf"]: g["compute_mode"]
                    for g in json.loads(p.stdout)["gpus"][0]["reports"][0]["gpus"]}
            self.assertEqual(set(back.values()), {"CPX"})
            wait_until("QPX on GPU 0", lambda: mode(d, GPU0) == "QPX")
            self.assertEqual([mode(d, b, "MemoryMode") for b in MI300X_BDFS], ["NPS4"] * 8)
            self.assertEqual(mode(d, GPU1), "CPX")
            self.assertEqual(self.history(d, "compute_mode")[-1],
                             (GPU0, "compute_mode", "CPX", "QPX", "ok", "amdsmid", 0))

    def test_desired_blocked_by_kfd_users(self):
        conf = FAST_POLL + "[gpu %s]\ncompute_mode = CPX\n" % GPU1
        sleeper = subprocess.Popen(["sleep", "300"])
        try:
            with Daemon(config=conf, start=False) as d:
                ctl(d, "kfd-users", "add", GPU1, sleeper.pid, 1 << 30)
                d.start()
                # ready although the switch failed; the warning names who blocks it
                self.assertEqual(mode(d, GPU1), "SPX")
                self.assertIn("desired compute mode CPX not applied: the GPU is in use through "
                              "KFD by PID %d (sleep)" % sleeper.pid, d.log())
                # not again before 30 s, although the checks run every 200 ms
                time.sleep(3)
                self.assertEqual(len(self.history(d, "compute_mode")), 1)
                ctl(d, "kfd-users", "remove", GPU1, sleeper.pid)
                t = time.monotonic()
                wait_until("CPX on GPU 1", lambda: mode(d, GPU1) == "CPX", timeout=45)
                self.assertGreater(time.monotonic() - t, 20)
                self.assertEqual(self.history(d, "compute_mode"), [
                    (GPU1, "compute_mode", "SPX", "CPX", "EBUSY", "amdsmid", 0),
                    (GPU1, "compute_mode", "SPX", "CPX", "ok", "amdsmid", 0)])
                self.assertEqual(d.log().count("not applied"), 1)
        finally:
            sleeper.kill()
            sleeper.wait()

    # ---- recovery --------------------------------------------------------------------------

    def test_recovery(self):
        with Daemon(start=False) as d:
            # GPU 0: a switch to CPX that completed; GPU 1: one to CPX that left the GPU in
            # DPX (restored to SPX); GPU 2: one to QPX that never reached the driver; GPU 3:
            # a memory request that was not recorded
            self.assertEqual(d.mount.write(d.mount.gpu(GPU0, "current_compute_partition"),
                                           "CPX"), 0)
            self.assertEqual(d.mount.write(d.mount.gpu(GPU1, "current_compute_partition"),
                                           "DPX"), 0)
            write_intent(d, "compute_mode", GPU0, "SPX", "CPX", 0)
            write_intent(d, "compute_mode", GPU1, "SPX", "CPX", 1)
            write_intent(d, "compute_mode", MI300X_BDFS[2], "SPX", "QPX", 2)
            write_intent(d, "memory_mode", MI300X_BDFS[3], "NPS1", "NPS4", 3)
            write_intent(d, "frobnicate", MI300X_BDFS[4], None, None, 4)  # not the slice's
            d.start()
            log = d.log()
            self.assertIn("%s: interrupted change of the compute mode to CPX completed" % GPU0,
                          log)
            self.assertIn("%s: interrupted change of the compute mode to CPX rolled back: "
                          "restoring SPX (the GPU is in DPX)" % GPU1, log)
            self.assertIn("%s: interrupted change of the compute mode to QPX rolled back: the "
                          "GPU is still in SPX" % MI300X_BDFS[2], log)
            self.assertIn("%s: interrupted request of memory mode NPS4 rolled back"
                          % MI300X_BDFS[3], log)
            # READY=1 after the restoring
            self.assertEqual([mode(d, b) for b in MI300X_BDFS[:3]], ["CPX", "SPX", "SPX"])
            self.assertEqual(mode(d, MI300X_BDFS[3], "PendingMemoryMode"), "")
            self.assertEqual(self.history(d), [
                (GPU1, "compute_mode", "DPX", "SPX", "ok", "amdsmid", 0)])
            self.assertIn("nothing knows how to recover a frobnicate change", log)
            self.assertEqual(os.listdir(os.path.join(d.state_dir, "intent")), [])
            # one history record per intent, whatever its kind
            self.assertEqual(sorted((g, old, new) for g, old, new, _, _ in d.recoveries()), sorted([
                (GPU0, "compute_mode SPX -> CPX", "recovered"),
                (GPU1, "compute_mode SPX -> CPX", "recovered"),
                (MI300X_BDFS[2], "compute_mode SPX -> QPX", "recovered"),
                (MI300X_BDFS[3], "memory_mode NPS1 -> NPS4", "recovered"),
                (MI300X_BDFS[4], "frobnicate ? -> ?", "not recovered")]))

    def test_recovery_of_a_killed_daemon(self):
        with Daemon(config=FAST_POLL) as d:
            ctl(d, "switch-time", GPU1, 3000)
            call = busctl_async(d, G1, "SetComputeMode", "st", "qpx", 0)
            intents = os.path.join(d.state_dir, "intent")
            wait_until("an intent record",
                     lambda: os.path.isdir(intents) and os.listdir(intents), timeout=20)
            # the switch is under way in the driver (its KFD nodes are gone meanwhile)
            wait_until("the switch", lambda: no_kfd_nodes(d, GPU1), timeout=20)
            d.proc.send_signal(signal.SIGKILL)
            d.proc.wait(10)
            call.communicate(timeout=60)
            d.start()
            # the switch went on in the driver: completed
            self.assertEqual(mode(d, GPU1), "QPX")
            self.assertIn("interrupted change of the compute mode to QPX completed", d.log())
            self.assertEqual(os.listdir(intents), [])
            r = d.recoveries()
            self.assertEqual(len(r), 1, r)
            self.assertEqual((r[0][0], r[0][2], r[0][3]), (GPU1, "recovered", "ok"))
            self.assertTrue(r[0][1].startswith("compute_mode "), r)
            self.assertIn("compute mode to QPX completed", r[0][4])


if __name__ == "__main__":
    require_daemon()
    unittest.main(verbosity=2)
