#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""org.amdsmi1.Power on a private bus: the properties CapUw and EffectiveSource and their
PropertiesChanged; Explain() against `amdsmi power --json --direct`; SetSource, SetVmSource,
SetSources, ClearSource, ClearSources and Apply (success, dry run, polkit per source action,
malformed calls); the daemon's ownership of the sources (the BMC agent's APML file watched, the
cap applied again after a GPU reset or re-plug and at most every 10 s, an external limiter and
an outside writer left alone, amdsmid.conf's power_cap as the host source until a call sets
one, Reload, recovery of interrupted changes); gim hosts (sources recorded, NotSupported); the CLI through amdsmid (the
same documents as --direct, exit statuses, unprivileged admins allowed by polkit, --direct
refused unless --force) and the history of every change."""

import glob
import json
import os
import subprocess
import time
import unittest

from daemontest import (BUS, CLI, GPU0, GPU1, IFACE_GPU, IFACE_POWER, MANAGER, MI300X_BDFS,
                        NOBODY, ROOT, Daemon, gpu_path, require_daemon, wait_until)

W = 1000000
HOST = "org.amdsmi1.power.configure"
APML = "org.amdsmi1.power.set-platform-limit"
VM = "org.amdsmi1.vm.provision"
INVALID = "org.amdsmi1.Error.InvalidArgument"
OUT_OF_RANGE = "org.amdsmi1.Error.OutOfRange"
DENIED = "org.amdsmi1.Error.PermissionDenied"
NOT_SUPPORTED = "org.amdsmi1.Error.NotSupported"
NOT_FOUND = "org.amdsmi1.Error.NotFound"
SIM = os.environ.get("AMDSMI_SIM", "")
SCHEMA = os.environ.get("AMDSMI_SCHEMA", "")
# values that change between two reads of the same GPU
VOLATILE = ("draw_w", "socket_power_w", "timestamp", "set_at", "applied_at", "set_by")


def strip(o, keys=VOLATILE):
    """@o without the volatile keys, recursively."""
    if isinstance(o, dict):
        return {k: strip(v, keys) for k, v in o.items() if k not in keys}
    if isinstance(o, list):
        return [strip(v, keys) for v in o]
    return o


class Monitor:
    """`with Monitor(d) as mon:` the PropertiesChanged signals on the bus while it runs."""

    def __init__(self, d):
        self.d = d
        self.signals = []

    def __enter__(self):
        self.proc = subprocess.Popen(
            ["busctl", "--system", "monitor", "--json=short",
             "--match=type='signal',interface='org.freedesktop.DBus.Properties',"
             "member='PropertiesChanged'"],
            env=self.d.env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        # busctl prints this once it monitors
        line = self.proc.stderr.readline()
        if "Monitoring" not in line:
            raise AssertionError("busctl monitor did not start: %r" % line)
        return self

    def __exit__(self, *exc):
        self.stop()
        return False

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
        out, _ = self.proc.communicate(timeout=30)
        self.signals = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
        return self.signals

    def changed(self, path, interface):
        """The property dictionaries of @interface changed on @path, in order."""
        out = []
        for s in self.signals:
            data = s["payload"]["data"]
            if s["path"] == path and data[0] == interface:
                out.append({k: v["data"] for k, v in data[1].items()})
        return out


class Power(unittest.TestCase):
    maxDiff = None

    @classmethod
    def setUpClass(cls):
        cls.validator = None
        if SCHEMA:
            import jsonschema
            with open(SCHEMA, encoding="utf-8") as f:
                cls.validator = jsonschema.Draft202012Validator(json.load(f))

    # ---- helpers ----------------------------------------------------------------------

    def valid(self, doc):
        if self.validator:
            errors = [("/".join(map(str, e.absolute_path)), e.message[:200])
                      for e in self.validator.iter_errors(doc)]
            self.assertEqual(errors, [], "not a valid amdsmi/1 document")
        return doc

    def cap_file(self, d, bdf=GPU0):
        files = glob.glob(os.path.join(d.mount.root, "bus/pci/devices", bdf, "hwmon", "hwmon*",
                                       "power1_cap"))
        self.assertEqual(len(files), 1, files)
        return files[0]

    def device_cap(self, d, bdf=GPU0):
        with open(self.cap_file(d, bdf)) as f:
            return int(f.read())

    def write_device_cap(self, d, uw, bdf=GPU0):
        """What a GPU reset does to power1_cap (the default comes back), or another writer."""
        with open(self.cap_file(d, bdf), "w") as f:
            f.write(str(uw))

    def ctl(self, d, *args):
        p = subprocess.run([SIM, "ctl", "--mount", d.mount.root] + [str(a) for a in args],
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        return p.stdout

    def set_source(self, d, source, key, uw, flags=0, bdf=GPU0, user=None):
        return json.loads(d.call(gpu_path(bdf), IFACE_POWER, "SetSource", "sstt", source, key,
                                 uw, flags, user=user)[0])

    def clear_source(self, d, source, key="", flags=0, bdf=GPU0, user=None):
        return json.loads(d.call(gpu_path(bdf), IFACE_POWER, "ClearSource", "sst", source, key,
                                 flags, user=user)[0])

    def explain(self, d, bdf=GPU0, user=None):
        return json.loads(d.call(gpu_path(bdf), IFACE_POWER, "Explain", user=user)[0])

    def props(self, d, bdf=GPU0):
        return (d.get(gpu_path(bdf), IFACE_POWER, "CapUw"),
                d.get(gpu_path(bdf), IFACE_POWER, "EffectiveSource"))

    def state(self, d):
        path = os.path.join(d.state_dir, "state.json")
        if not os.path.exists(path):
            return None
        with open(path) as f:
            return json.load(f)

    def power_history(self, d, change=None):
        return [e for e in d.history()
                if e["change"] in ("power_source", "power_apply")
                and (change is None or e["change"] == change)]

    def apml_file(self, d, bdf, text):
        """The BMC agent: a temporary file renamed over <runtime dir>/apml/<BDF>."""
        directory = os.path.join(d.runtime_dir, "apml")
        os.makedirs(directory, exist_ok=True)
        tmp = os.path.join(directory, "." + bdf + ".tmp")
        with open(tmp, "w") as f:
            f.write(text)
        os.rename(tmp, os.path.join(directory, bdf))

    def doc(self, d, *args, status=0, user=None):
        p = d.cli(*(list(args) + ["--json"]), status=status, user=user)
        return self.valid(json.loads(p.stdout)), p

    # ---- the interface ----------------------------------------------------------------

    def test_sources_properties_and_signals(self):
        with Daemon(machine="mi300x-8") as d:
            path = gpu_path(GPU0)
            self.assertEqual(self.props(d), (750 * W, "default"))
            self.assertEqual(self.props(d, GPU1), (750 * W, "default"))
            with Monitor(d) as mon:
                e = self.set_source(d, "host", "", 600 * W)
            # the answer is the GPU's object of `amdsmi power set --json`
            self.assertEqual((e["gpu"], e["bdf"], e["dry_run"], e["result"]), (0, GPU0, False, None))
            self.assertEqual(e["changes"], [{"action": "set", "source": "host", "vm": None,
                                             "vf_bdf": None, "cap_w": 600}])
            self.assertEqual((e["apply"]["applied_w"], e["apply"]["readback_w"],
                              e["apply"]["written"]), (600, 600, True))
            self.assertEqual((e["before"]["modelled_cap_w"], e["after"]["modelled_cap_w"]),
                             (750, 600))
            self.assertEqual(e["messages"], ["GPU 0: effective cap 750 W -> 600 W (binds: host)",
                                             "GPU 0: applied 600 W, read back 600 W"])
            self.assertEqual(self.device_cap(d), 600 * W)
            self.assertEqual(self.props(d), (600 * W, "host"))
            self.assertIn({"CapUw": 600 * W, "EffectiveSource": "host"},
                          mon.changed(path, IFACE_POWER))
            # Changing went up and down around the change
            wait_until("Changing back to false", lambda: [
                c["Changing"] for c in mon.changed(path, IFACE_GPU) if "Changing" in c
            ] == [True, False])
            # the other GPUs are untouched
            self.assertEqual(self.device_cap(d, GPU1), 750 * W)

            # vm (by name, then with its VF), apml: the minimum binds
            e = self.set_source(d, "vm", "web1", 550 * W)
            self.assertEqual((e["after"]["binding"], e["after"]["binding_vm"]), ("vm", "web1"))
            self.assertEqual(self.props(d), (550 * W, "vm"))
            e = json.loads(d.call(path, IFACE_POWER, "SetVmSource", "sstt", "db2",
                                  "0000:05:02.0", 560 * W, 0)[0])
            self.assertEqual(e["changes"][0]["vf_bdf"], "0000:05:02.0")
            vm = [s for s in e["after"]["sources"] if s["vm"] == "db2"][0]
            self.assertEqual((vm["vf_bdf"], vm["cap_w"], vm["origin"]),
                             ("0000:05:02.0", 560, "runtime"))
            self.assertRegex(vm["set_by"], r"^uid 0 via amdsmid \(pid \d+\)$")
            self.set_source(d, "apml", "", 500 * W)
            self.assertEqual(self.props(d), (500 * W, "apml"))
            self.assertEqual(self.device_cap(d), 500 * W)

            # several at once, one apply
            e = json.loads(d.call(path, IFACE_POWER, "SetSources", "a(ssst)t", 2,
                                  "host", "", "", 520 * W, "vm", "web1", "", 530 * W, 0)[0])
            self.assertEqual([(c["source"], c["cap_w"]) for c in e["changes"]],
                             [("host", 520), ("vm", 530)])
            self.assertEqual(e["after"]["modelled_cap_w"], 500)
            e = self.clear_source(d, "apml")
            self.assertEqual((e["after"]["binding"], e["apply"]["applied_w"]), ("host", 520))
            self.assertEqual(self.props(d), (520 * W, "host"))
            e = json.loads(d.call(path, IFACE_POWER, "ClearSources", "a(ss)t", 2,
                                  "host", "", "vm", "web1", 0)[0])
            self.assertEqual((e["after"]["binding"], e["after"]["binding_vm"]), ("vm", "db2"))
            self.assertEqual(self.props(d), (560 * W, "vm"))
            # clearing what is not there: a VM is NotFound, host is not a failure
            name, msg = d.call_error(path, IFACE_POWER, "ClearSource", "string:vm",
                                     "string:nosuch", "uint64:0")
            self.assertEqual(name, NOT_FOUND)
            self.assertIn("no source of VM 'nosuch' (VMs: db2)", msg)
            e = self.clear_source(d, "host")
            self.assertIn("GPU 0: no host source (nothing to clear)", e["messages"])
            self.clear_source(d, "vm", "db2")
            self.assertEqual(self.props(d), (750 * W, "default"))
            self.assertEqual(self.device_cap(d), 750 * W)

            # Apply writes the arbitrated cap again
            self.set_source(d, "host", "", 610 * W)
            self.write_device_cap(d, 700 * W)
            e = json.loads(d.call(path, IFACE_POWER, "Apply", "t", 0)[0])
            self.assertEqual((e["changes"], e["apply"]["applied_w"]), ([], 610))
            self.assertEqual(self.device_cap(d), 610 * W)

            # every change is in the history, with the caller and old -> new
            h = self.power_history(d)
            sets = [x for x in h if x["change"] == "power_source"]
            self.assertEqual(sets[0]["via"], "amdsmid")
            self.assertEqual((sets[0]["gpu"], sets[0]["uid"], sets[0]["result"]),
                             (GPU0, 0, "ok"))
            self.assertEqual((sets[0]["old"], sets[0]["new"]),
                             ("host=none; cap 750W", "host=600W; cap 600W"))
            self.assertIsNotNone(sets[0]["sender"])
            failed = [x for x in h if x["result"] == "ENOENT"]
            self.assertEqual(len(failed), 1)
            self.assertIn("no source of VM 'nosuch'", failed[0]["message"])
            self.assertIn("power_apply", [x["change"] for x in h])
            # and in the state file
            host = self.state(d)["gpus"][GPU0]["power"]["host"]
            self.assertEqual(host["uw"], 610 * W)

    def test_dry_run_changes_nothing(self):
        with Daemon(machine="mi300x-8") as d:
            self.set_source(d, "host", "", 600 * W)
            before = (self.state(d), len(d.history()))
            # nobody needs no authorisation for a plan
            e = self.set_source(d, "apml", "", 450 * W, flags=1, user=NOBODY)
            self.assertEqual((e["dry_run"], e["apply"]["written"], e["apply"]["requested_w"]),
                             (True, False, 450))
            self.assertIn("GPU 0: would write 450 W to power1_cap", e["messages"])
            self.assertEqual(e["after"]["binding"], "apml")
            e = self.clear_source(d, "host", flags=1, user=NOBODY)
            self.assertEqual(e["after"]["binding"], "default")
            e = json.loads(d.call(gpu_path(GPU0), IFACE_POWER, "Apply", "t", 1, user=NOBODY)[0])
            self.assertTrue(e["dry_run"])
            # a plan that would fail fails the same way
            name, msg = d.call_error(gpu_path(GPU0), IFACE_POWER, "SetSource", "string:host",
                                     "string:", "uint64:%d" % (800 * W), "uint64:1", user=NOBODY)
            self.assertEqual(name, OUT_OF_RANGE)
            self.assertIn("out of range: valid 1 W to 750 W", msg)
            self.assertEqual(self.device_cap(d), 600 * W)
            self.assertEqual(self.props(d), (600 * W, "host"))
            self.assertEqual((self.state(d), len(d.history())), before)

    def test_explain_is_the_power_document(self):
        for machine in ("mi300x-8", "mi350x-8"):
            with self.subTest(machine=machine), Daemon(machine=machine) as d:
                bdfs = [g["bdf"] for g in d.describe()["gpus"]]
                self.assertEqual(len(bdfs), 8)
                self.set_source(d, "host", "", 600 * W, bdf=bdfs[0])
                self.set_source(d, "vm", "web1", 580 * W, bdf=bdfs[1])
                self.apml_file(d, bdfs[1], "560W\n")
                wait_until("the APML file applied",
                         lambda: self.device_cap(d, bdfs[1]) == 560 * W)
                direct, _ = self.doc(d, "power", "--direct")
                # the limiters need two samples: amdsmid's sampler has them, one read
                # in-process has one
                keys = VOLATILE + ("limiters",)
                for i, bdf in enumerate(bdfs):
                    e = self.explain(d, bdf, user=NOBODY)
                    self.assertEqual((e["gpu"], e["bdf"]), (i, bdf))
                    self.assertEqual(strip(e, keys), strip(direct["gpus"][i], keys))
                    self.assertIsInstance(e["socket_power_w"], (int, float))
                    self.assertEqual(e["limiters"]["status"], "measured")
                    self.assertEqual(direct["gpus"][i]["limiters"]["status"], "one_sample")
                # `amdsmi power` asks amdsmid: the same document
                via, _ = self.doc(d, "power", user=NOBODY)
                self.assertEqual(strip(via, keys), strip(direct, keys))
                g1 = via["gpus"][1]
                self.assertEqual((g1["binding"], g1["effective_source"], g1["cap_w"]),
                                 ("apml", "apml", 560))
                self.assertEqual([(s["source"], s["origin"]) for s in g1["sources"]],
                                 [("vm", "runtime"), ("apml", "file")])
                if machine == "mi350x-8":
                    # PPT1 is shown, never arbitrated
                    self.assertIsNotNone(via["gpus"][0]["ppt1"])
                    self.assertEqual(via["gpus"][0]["ppt1"], direct["gpus"][0]["ppt1"])
                # the table too (the draw column aside)
                t_daemon = d.cli("power", "-g", 0).stdout.splitlines()
                t_direct = d.cli("power", "-g", 0, "--direct").stdout.splitlines()
                cut = t_direct[0].index("DRAW (W)")
                end = t_direct[0].index("CAP (W)")
                self.assertEqual([x[:cut] + x[end:] for x in t_daemon],
                                 [x[:cut] + x[end:] for x in t_direct])
                self.assertIn("host 600*", t_daemon[1])

    # ---- authorisation ----------------------------------------------------------------

    def test_authorisation_per_source(self):
        with Daemon(machine="mi300x-8") as d:
            path = gpu_path(GPU0)

            def denied(*args):
                name, msg = d.call_error(path, IFACE_POWER, *args, user=NOBODY)
                self.assertEqual(name, DENIED, msg)
                self.assertIn("not authorised", msg)

            host = ("SetSource", "string:host", "string:", "uint64:%d" % (600 * W), "uint64:0")
            apml = ("SetSource", "string:apml", "string:", "uint64:%d" % (600 * W), "uint64:0")
            vm = ("SetSource", "string:vm", "string:web1", "uint64:%d" % (600 * W), "uint64:0")
            # polkit allows nothing: every source and Apply refused, nothing changed
            for call in (host, apml, vm, ("Apply", "uint64:0"),
                         ("ClearSource", "string:host", "string:", "uint64:0")):
                denied(*call)
            self.assertEqual(self.props(d), (750 * W, "default"))
            self.assertIsNone(self.state(d))
            self.assertEqual(self.power_history(d), [])
            self.assertIn("SetSource by uid 65534 refused", d.log())
            # power.configure: the host source only
            d.allow(HOST)
            e = self.set_source(d, "host", "", 600 * W, user=NOBODY)
            self.assertEqual(e["after"]["binding"], "host")
            self.assertRegex(e["after"]["sources"][0]["set_by"], r"^uid 65534 via amdsmid")
            denied(*apml)
            denied(*vm)
            name, _ = d.call_error(path, IFACE_POWER, "ClearSource", "string:vm",
                                   "string:web1", "uint64:0", user=NOBODY)
            self.assertEqual(name, DENIED)
            # the platform limit, the VMs
            d.allow(APML)
            self.set_source(d, "apml", "", 580 * W, user=NOBODY)
            denied(*host)
            d.allow(VM)
            self.set_source(d, "vm", "web1", 560 * W, user=NOBODY)
            self.assertEqual(self.props(d), (560 * W, "vm"))
            self.assertEqual(self.device_cap(d), 560 * W)
            h = self.power_history(d)
            self.assertEqual([(x["uid"], x["result"]) for x in h], [(65534, "ok")] * 3)

    def test_authorisation_of_several_sources(self):
        with Daemon(machine="mi300x-8") as d:
            # the CLI's `power set --host W --vm NAME W` is one SetSources call: both actions
            d.allow(HOST)
            p = d.cli("power", "set", "-g", 0, "--host", "600W", "--vm", "web1", "550W",
                      user=NOBODY, status=6)
            self.assertIn("not authorised", p.stderr)
            self.assertEqual(self.device_cap(d), 750 * W)
            d.allow(VM)
            p = d.cli("power", "set", "-g", 0, "--host", "600W", "--vm", "web1", "550W",
                      user=NOBODY, status=6)
            self.assertEqual(self.device_cap(d), 750 * W)
            d.allow(HOST, VM)
            p = d.cli("power", "set", "-g", 0, "--host", "600W", "--vm", "web1", "550W",
                      user=NOBODY)
            self.assertEqual(p.stdout, "GPU 0: effective cap 750 W -> 550 W (binds: vm web1)\n"
                                       "GPU 0: applied 550 W, read back 550 W\n")
            self.assertEqual(self.device_cap(d), 550 * W)
            d.allow(HOST)
            d.cli("power", "clear", "-g", 0, "--host", "--vm", "web1", user=NOBODY, status=6)
            d.allow(HOST, VM, APML)
            d.cli("power", "clear", "-g", 0, "--host", "--vm", "web1", user=NOBODY)
            self.assertEqual(self.props(d), (750 * W, "default"))
            # root callers are allowed without asking polkit
            d.allow()
            d.cli("power", "set", "-g", 0, "--apml", "700W", "--host", "690W")
            self.assertEqual(self.device_cap(d), 690 * W)

    # ---- malformed calls --------------------------------------------------------------

    def test_malformed_calls(self):
        with Daemon(machine="mi300x-8") as d:
            path = gpu_path(GPU0)

            def error(*args):
                name, msg = d.call_error(path, IFACE_POWER, *args)
                return name, msg

            ok = "uint64:%d" % (600 * W)
            cases = [
                (("SetSource", "string:bogus", "string:", ok, "uint64:0"), INVALID,
                 "unknown power source 'bogus'"),
                (("SetSource", "string:", "string:", ok, "uint64:0"), INVALID,
                 "unknown power source"),
                (("SetSource", "string:host", "string:x", ok, "uint64:0"), INVALID,
                 "the host source takes no key"),
                (("SetSource", "string:apml", "string:x", ok, "uint64:0"), INVALID,
                 "the apml source takes no key"),
                (("SetSource", "string:vm", "string:", ok, "uint64:0"), INVALID,
                 "invalid VM name"),
                (("SetSource", "string:vm", "string:" + "x" * 100000, ok, "uint64:0"), INVALID,
                 "invalid VM name of 100000 bytes"),
                (("SetSource", "string:vm", "string:" + "x" * 128, ok, "uint64:0"), INVALID,
                 "invalid VM name"),
                (("SetSource", "string:vm", "string:a\tb", ok, "uint64:0"), INVALID,
                 "no control characters"),
                (("SetSource", "string:" + "h" * 100000, "string:", ok, "uint64:0"), INVALID,
                 "unknown power source of 100000 bytes"),
                (("SetSource", "string:host", "string:", "uint64:0", "uint64:0"), OUT_OF_RANGE,
                 "a cap is at least 1 W"),
                (("SetSource", "string:host", "string:", "uint64:999999", "uint64:0"),
                 OUT_OF_RANGE, "a cap is at least 1 W"),
                (("SetSource", "string:host", "string:", "uint64:4294967296", "uint64:0"),
                 OUT_OF_RANGE, "too large"),
                (("SetSource", "string:host", "string:", "uint64:%d" % (800 * W), "uint64:0"),
                 OUT_OF_RANGE, "--host 800 W is out of range: valid 1 W to 750 W"),
                (("SetSource", "string:host", "string:", ok, "uint64:32"), INVALID,
                 "unknown flags 0x20"),
                (("SetSource", "string:host", "string:", ok, "uint64:%d" % (1 << 63)), INVALID,
                 "unknown flags"),
                (("ClearSource", "string:host", "string:", "uint64:4"), INVALID,
                 "unknown flags 0x4"),
                (("ClearSource", "string:nope", "string:", "uint64:0"), INVALID,
                 "unknown power source"),
                (("Apply", "uint64:256"), INVALID, "unknown flags 0x100"),
                (("SetVmSource", "string:web1", "string:05:02.0", ok, "uint64:0"), INVALID,
                 "invalid VF address '05:02.0'"),
                (("SetVmSource", "string:web1", "string:0000:05:02.8", ok, "uint64:0"), INVALID,
                 "invalid VF address"),
                (("SetVmSource", "string:", "string:", ok, "uint64:0"), INVALID,
                 "invalid VM name"),
            ]
            for args, want, text in cases:
                with self.subTest(args=[a[:40] for a in args]):
                    name, msg = error(*args)
                    self.assertEqual(name, want, msg)
                    self.assertIn(text, msg)
                    self.assertLess(len(msg), 1000)
            # arrays: nothing, a kind twice, two VMs
            for sig, args, text in (
                    ("a(ssst)t", [0, 0], "no source given"),
                    ("a(ssst)t", [2, "host", "", "", 600 * W, "host", "", "", 500 * W, 0],
                     "the host source is given twice"),
                    ("a(ssst)t", [2, "vm", "a", "", 600 * W, "vm", "b", "", 500 * W, 0],
                     "one VM per call"),
                    ("a(ssst)t", [1, "host", "", "0000:05:02.0", 600 * W, 0],
                     "a VF address goes with a vm source only"),
                    ("a(ss)t", [0, 0], "no source given"),
                    ("a(ss)t", [2, "apml", "", "apml", "", 0], "the apml source is given twice")):
                member = "SetSources" if sig.startswith("a(ssst)") else "ClearSources"
                p = d.busctl("call", BUS, path, IFACE_POWER, member, sig, *args, check=False)
                self.assertNotEqual(p.returncode, 0, (member, args))
                self.assertIn(text, p.stderr)
            # wrong signatures are the bus's business
            name, _ = error("SetSource", "string:host", "string:", "uint32:1", "uint64:0")
            self.assertEqual(name, "org.freedesktop.DBus.Error.InvalidArgs")
            name, _ = error("Explain", "uint32:1")
            self.assertEqual(name, "org.freedesktop.DBus.Error.InvalidArgs")
            # nothing changed, nothing recorded as a change but the one range failure
            self.assertEqual(self.props(d), (750 * W, "default"))
            self.assertEqual([x["result"] for x in self.power_history(d)], ["ERANGE"])
            # still alive
            self.assertEqual(self.explain(d)["bdf"], GPU0)

    # ---- what amdsmid keeps -----------------------------------------------------------

    def test_apml_file_is_watched(self):
        with Daemon(machine="mi300x-8") as d:
            self.set_source(d, "host", "", 600 * W)
            n = len(self.power_history(d))
            # the BMC agent writes the platform limit: no call, the cap follows within seconds
            self.apml_file(d, GPU0, "# platform limit from the BMC\n520W\n")
            wait_until("the APML file's 520 W", lambda: self.device_cap(d) == 520 * W, timeout=5)
            wait_until("EffectiveSource apml", lambda: self.props(d) == (520 * W, "apml"),
                       timeout=5)
            e = self.explain(d)
            self.assertEqual((e["apml_file"]["state"], e["apml_file"]["used"],
                              e["apml_file"]["cap_w"]), ("valid", True, 520))
            h = self.power_history(d)[n:]
            self.assertEqual([(x["change"], x["uid"], x["via"], x["result"]) for x in h],
                             [("power_apply", 0, "amdsmid", "ok")])
            self.assertIn("the APML file changed", h[0]["message"])
            # a malformed file is ignored as a source: the host binds again
            self.apml_file(d, GPU0, "520W\n500W\n")
            wait_until("the host's 600 W", lambda: self.device_cap(d) == 600 * W, timeout=5)
            self.assertEqual(self.explain(d)["apml_file"]["state"], "malformed")
            # a lower limit again, then the file removed
            self.apml_file(d, GPU0, "480000000\n")
            wait_until("480 W", lambda: self.device_cap(d) == 480 * W, timeout=5)
            os.unlink(os.path.join(d.runtime_dir, "apml", GPU0))
            wait_until("600 W again", lambda: self.props(d) == (600 * W, "host"), timeout=5)
            self.assertEqual(self.device_cap(d), 600 * W)
            # files that name no GPU and the agent's temporary files change nothing
            n = len(self.power_history(d))
            self.apml_file(d, "0000:99:00.0", "400W\n")
            with open(os.path.join(d.runtime_dir, "apml", ".x"), "w") as f:
                f.write("400W\n")
            time.sleep(2)
            self.assertEqual(len(self.power_history(d)), n)
            self.assertEqual(self.device_cap(d), 600 * W)
            # another GPU's file changes that GPU only
            self.apml_file(d, GPU1, "700W\n")
            wait_until("GPU 1 at 700 W", lambda: self.device_cap(d, GPU1) == 700 * W, timeout=5)
            self.assertEqual(self.device_cap(d), 600 * W)

    def test_apml_directory_made_at_start(self):
        with Daemon(machine="mi300x-8", start=False) as d:
            directory = os.path.join(d.runtime_dir, "apml")
            self.assertFalse(os.path.exists(directory))
            d.start()
            self.assertTrue(os.path.isdir(directory))
            self.apml_file(d, GPU0, "610W\n")
            wait_until("610 W", lambda: self.device_cap(d) == 610 * W, timeout=5)

    def test_reset_and_replug_apply_again(self):
        with Daemon(machine="mi300x-8") as d:
            self.set_source(d, "host", "", 600 * W)
            # a GPU reset brings the default back: amdsmid applies the arbitrated cap again
            self.write_device_cap(d, 750 * W)
            wait_until("600 W again", lambda: self.device_cap(d) == 600 * W, timeout=8)
            first = time.monotonic()
            wait_until("CapUw 600 W", lambda: self.props(d) == (600 * W, "host"), timeout=5)
            log = d.log()
            self.assertEqual(log.count("a GPU reset or another writer; applying the arbitrated "
                                       "cap again"), 1)
            self.assertIn("the device holds 750 W, not the 600 W amdsmi applied", log)
            # at most every 10 s: a second reset waits for the interval
            self.write_device_cap(d, 750 * W)
            time.sleep(4)
            if time.monotonic() - first < 9:
                self.assertEqual(self.device_cap(d), 750 * W)
            wait_until("600 W once more", lambda: self.device_cap(d) == 600 * W, timeout=20)
            self.assertGreaterEqual(time.monotonic() - first, 8.5)
            self.assertEqual(d.log().count("a GPU reset or another writer; applying the "
                                           "arbitrated cap again"), 2)
            # the record follows the write: the cap may be seen before it
            wait_until("two power_apply records",
                     lambda: len(self.power_history(d, "power_apply")) >= 2)
            applies = self.power_history(d, "power_apply")
            self.assertEqual(len(applies), 2)
            self.assertEqual((applies[0]["old"], applies[0]["new"]),
                             ("cap 750W", "cap 600W"))

            # an external limiter (the BMC's platform limit) holds the device lower: reported,
            # never fought
            n = len(self.power_history(d))
            self.ctl(d, "platform-limit", GPU0, 500)
            wait_until("EffectiveSource external", lambda: self.props(d) == (500 * W, "external"),
                     timeout=8)
            time.sleep(5)
            self.assertEqual(len(self.power_history(d)), n)
            self.assertEqual(self.explain(d)["observed"], "external")
            self.ctl(d, "platform-limit", GPU0, "none")
            wait_until("back to the host's cap", lambda: self.props(d) == (600 * W, "host"),
                     timeout=8)
            # another writer raised the cap (not to the default): reported, left alone
            # without amdsmid.conf's enforce = yes (test-daemon-enforce.py)
            n = len(self.power_history(d))
            self.write_device_cap(d, 700 * W)
            wait_until("EffectiveSource outside-writer",
                     lambda: self.props(d) == (700 * W, "outside-writer"), timeout=8)
            wait_until("the report", lambda: "the device holds 700 W, above the arbitrated "
                     "600 W: an outside writer; left alone" in d.log(), timeout=8)
            time.sleep(3)
            self.assertEqual(self.device_cap(d), 700 * W)
            self.assertEqual(len(self.power_history(d)), n)

            # a re-plugged GPU comes back at its default: the state file's cap again
            self.set_source(d, "host", "", 620 * W, bdf=GPU1)
            self.ctl(d, "unplug", GPU1)
            wait_until("GPU 1's object gone",
                     lambda: d.busctl("get-property", BUS, gpu_path(GPU1), IFACE_GPU, "Bdf",
                                      check=False).returncode != 0, timeout=10)
            self.ctl(d, "replug", GPU1)
            wait_until("GPU 1 back at 620 W", lambda: self.device_cap(d, GPU1) == 620 * W,
                     timeout=15)
            wait_until("GPU 1's CapUw", lambda: self.props(d, GPU1) == (620 * W, "host"),
                     timeout=5)

    def test_state_applied_at_start(self):
        """The state file's sources hold when amdsmid starts after the device lost them."""
        with Daemon(machine="mi300x-8", start=False) as d:
            now = int(time.time() * 1e6)
            state = {"version": 1, "gpus": {
                GPU0: {"power": {"host": {"uw": 610 * W, "setter": "amdsmi (uid 0, pid 1)",
                                          "set_usec": now},
                                 "applied": {"uw": 610 * W, "usec": now}}},
                GPU1: {"power": {"vms": [{"key": "web1", "vf_bdf": "", "uw": 590 * W,
                                          "setter": "x", "set_usec": now}],
                                 "applied": {"uw": 590 * W, "usec": now}}}}}
            with open(os.path.join(d.state_dir, "state.json"), "w") as f:
                json.dump(state, f)
            d.start()
            wait_until("GPU 0 at 610 W", lambda: self.device_cap(d) == 610 * W, timeout=8)
            wait_until("GPU 1 at 590 W", lambda: self.device_cap(d, GPU1) == 590 * W, timeout=8)
            self.assertEqual(self.props(d, GPU1), (590 * W, "vm"))
            # the others had nothing to apply
            self.assertEqual(self.device_cap(d, MI300X_BDFS[2]), 750 * W)
            self.assertEqual(sorted(x["gpu"] for x in self.power_history(d)), [GPU0, GPU1])

    def test_config_power_cap(self):
        conf = "[gpu]\npower_cap = 650W\n"
        with Daemon(machine="mi300x-8", config=conf) as d:
            # applied before READY=1
            for bdf in MI300X_BDFS:
                self.assertEqual(self.device_cap(d, bdf), 650 * W, bdf)
            self.assertEqual(self.props(d), (650 * W, "host"))
            host = self.explain(d)["sources"][0]
            self.assertEqual((host["source"], host["origin"], host["cap_w"]),
                             ("host", "config", 650))
            self.assertTrue(host["set_by"].startswith("amdsmid.conf ("), host["set_by"])
            h = self.power_history(d)
            self.assertEqual(len(h), 8)
            self.assertEqual({x["change"] for x in h}, {"power_source"})
            self.assertEqual(h[0]["new"], "host=650W; cap 650W")
            # `amdsmi power` says where the host's value comes from
            self.assertIn("host 650* (config)", d.cli("power", "-g", 0).stdout)
            # a host source set by a call overrides it
            e = self.set_source(d, "host", "", 600 * W)
            self.assertEqual(e["after"]["sources"][0]["origin"], "runtime")
            self.assertEqual(self.device_cap(d), 600 * W)
            # ... also across a restart, and a reload that does not change power_cap applies
            # nothing
            self.assertEqual(d.stop(), 0)
            d.start()
            self.assertEqual(self.device_cap(d), 600 * W)
            self.assertEqual(self.device_cap(d, GPU1), 650 * W)
            n = len(self.power_history(d))
            self.assertEqual(n, 9)
            d.call(ROOT, MANAGER, "Reload")
            time.sleep(1)
            self.assertEqual(len(self.power_history(d)), n)
            # cleared: the configured cap is back, in the same change
            e = self.clear_source(d, "host")
            self.assertIn("GPU 0: host cap 650 W from amdsmid.conf", e["messages"])
            self.assertEqual((e["after"]["binding"], e["apply"]["applied_w"]), ("host", 650))
            self.assertEqual(self.props(d), (650 * W, "host"))
            # a changed power_cap: applied on Reload where no call set the host source
            self.set_source(d, "host", "", 610 * W, bdf=GPU1)
            d.write_config("[gpu]\npower_cap = 640W\n")
            d.call(ROOT, MANAGER, "Reload")
            wait_until("640 W", lambda: self.device_cap(d) == 640 * W, timeout=8)
            for bdf in MI300X_BDFS[2:]:
                wait_until("640 W on " + bdf, lambda: self.device_cap(d, bdf) == 640 * W)
            time.sleep(1)
            self.assertEqual(self.device_cap(d, GPU1), 610 * W)
            # power_cap removed: the configured host sources go, the default comes back
            d.write_config("[gpu 0000:05:00.0]\npower_cap = 630W\n")
            d.call(ROOT, MANAGER, "Reload")
            wait_until("630 W on GPU 0", lambda: self.device_cap(d) == 630 * W, timeout=8)
            for bdf in MI300X_BDFS[2:]:
                wait_until("the default on " + bdf,
                         lambda: self.props(d, bdf) == (750 * W, "default"), timeout=8)
            self.assertEqual(self.device_cap(d, GPU1), 610 * W)

    def test_config_power_cap_out_of_range(self):
        with Daemon(machine="mi300x-8", config="[gpu 0000:05:00.0]\npower_cap = 800W\n") as d:
            self.assertEqual(self.props(d), (750 * W, "default"))
            self.assertIn("amdsmid.conf's power_cap 800 W is out of range", d.log())
            self.assertIsNone(self.state(d) and self.state(d)["gpus"].get(GPU0, {})
                              .get("power", {}).get("host"))

    def test_recover_interrupted_changes(self):
        with Daemon(machine="mi300x-8", start=False) as d:
            now = int(time.time() * 1e6)
            # GPU 0: the state was saved, the write never happened; GPU 1: all done but the
            # record
            state = {"version": 1, "gpus": {
                GPU0: {"power": {"host": {"uw": 600 * W, "setter": "x", "set_usec": now},
                                 "applied": {"uw": 600 * W, "usec": now}}},
                GPU1: {"power": {"applied": {"uw": 750 * W, "usec": now}}}}}
            with open(os.path.join(d.state_dir, "state.json"), "w") as f:
                json.dump(state, f)
            os.mkdir(os.path.join(d.state_dir, "intent"))
            for n, (bdf, change) in enumerate(((GPU0, "power_source"), (GPU1, "power_apply"))):
                ident = "%d-4242-%d" % (now, n)
                rec = {"id": ident, "time": "2026-12-03T06:12:01.123Z", "time_usec": now,
                       "pid": 4242, "gpu": bdf, "change": change, "old": None, "new": None,
                       "detail": None}
                with open(os.path.join(d.state_dir, "intent", ident + ".json"), "w") as f:
                    json.dump(rec, f)
            d.start()
            wait_until("GPU 0 at 600 W", lambda: self.device_cap(d) == 600 * W, timeout=8)
            log = d.log()
            self.assertIn("interrupted power_source change re-applied", log)
            self.assertIn("interrupted power_apply change completed", log)
            self.assertEqual(os.listdir(os.path.join(d.state_dir, "intent")), [])
            # one history record per intent
            self.assertEqual(sorted((g, old, new) for g, old, new, _, _ in d.recoveries()),
                             [(GPU0, "power_source ? -> ?", "recovered"),
                              (GPU1, "power_apply ? -> ?", "recovered")])
            self.assertEqual(self.device_cap(d, GPU1), 750 * W)

    def test_damaged_state_record(self):
        """A damaged record of GPU 0: its changes (and amdsmid's own re-apply) answer
        StateDamaged, its cap stays, the record and every other one survive; ClearSource
        ("damaged") drops it."""
        with Daemon(machine="mi300x-8") as d:
            self.set_source(d, "vm", "web1", 500 * W)
            self.set_source(d, "host", "", 600 * W)
            self.set_source(d, "host", "", 550 * W, bdf=GPU1)
            self.assertEqual(self.device_cap(d), 500 * W)
            doc = self.state(d)
            doc["gpus"][GPU0]["power"]["vms"][0]["uw"] = "500W"
            with open(os.path.join(d.state_dir, "state.json"), "w") as f:
                json.dump(doc, f)
            name, msg = d.call_error(gpu_path(GPU0), IFACE_POWER, "SetSource", "string:host",
                                     "string:", "uint64:%d" % (590 * W), "uint64:0")
            self.assertEqual(name, "org.amdsmi1.Error.StateDamaged", msg)
            self.assertIn("gpus.%s.power.vms[0]" % GPU0, msg)
            name, msg = d.call_error(gpu_path(GPU0), IFACE_POWER, "Apply", "uint64:0")
            self.assertEqual(name, "org.amdsmi1.Error.StateDamaged", msg)
            self.assertEqual(self.device_cap(d), 500 * W)
            # another GPU changes, the damaged record is written back as it was
            self.set_source(d, "host", "", 540 * W, bdf=GPU1)
            self.assertEqual(self.state(d)["gpus"][GPU0], doc["gpus"][GPU0])
            # the CLI through amdsmid: exit status 10
            p = subprocess.run([CLI, "power", "set", "-g", "0", "--host", "590W"],
                               env=d.env(), capture_output=True, text=True, timeout=60)
            self.assertEqual(p.returncode, 10, p.stderr)
            r = self.clear_source(d, "damaged")
            self.assertEqual([x["record"] for x in r["dropped"]],
                             ["gpus.%s.power.vms[0]" % GPU0])
            self.assertEqual(r["dropped"][0]["value"]["uw"], "500W")
            # without the VM's source the host's 600 W binds
            self.assertEqual(self.device_cap(d), 600 * W)
            self.assertNotIn("vms", self.state(d)["gpus"][GPU0]["power"])

    def test_sigkill_mid_change_leaves_one_record(self):
        with Daemon(machine="mi300x-8") as d:
            rel = os.path.relpath(self.cap_file(d), d.mount.root)
            d.kill_during(rel, gpu_path(GPU0), IFACE_POWER, "SetSource", "sstt", "host", "",
                          600 * W, 0)
            self.assertEqual(os.listdir(os.path.join(d.state_dir, "intent")), [])
            r = d.recoveries()
            self.assertEqual(len(r), 1, r)
            self.assertEqual((r[0][0], r[0][2], r[0][3]), (GPU0, "recovered", "ok"))
            self.assertTrue(r[0][1].startswith("power_source "), r)
            self.assertIn("interrupted power_source change", r[0][4])

    def test_changing_while_a_slow_write_runs(self):
        with Daemon(machine="mi300x-8") as d:
            rel = os.path.relpath(self.cap_file(d), d.mount.root)
            self.ctl(d, "delay", rel, 3000, "once", "write")
            slow = subprocess.Popen(["busctl", "--system", "--json=short", "call", BUS,
                                     gpu_path(GPU0), IFACE_POWER, "SetSource", "sstt", "host",
                                     "", str(600 * W), "0"],
                                    env=d.env(), stdout=subprocess.PIPE, text=True)
            wait_until("Changing", lambda: d.get(gpu_path(GPU0), IFACE_GPU, "Changing"), timeout=3)
            # reads never wait for the change, a second change waits its turn
            t = time.monotonic()
            self.assertEqual(self.explain(d)["bdf"], GPU0)
            self.assertLess(time.monotonic() - t, 2)
            e = self.set_source(d, "vm", "web1", 550 * W)
            self.assertEqual(e["before"]["binding"], "host")
            out, _ = slow.communicate(timeout=30)
            self.assertEqual(slow.returncode, 0)
            self.assertEqual(json.loads(json.loads(out)["data"][0])["apply"]["applied_w"], 600)
            self.assertFalse(d.get(gpu_path(GPU0), IFACE_GPU, "Changing"))
            self.assertEqual(self.props(d), (550 * W, "vm"))

    # ---- gim hosts --------------------------------------------------------------------

    def test_gim_host(self):
        with Daemon(machine="mi300x-gim-1vf") as d:
            path = gpu_path(GPU0)
            self.assertEqual(self.props(d), (0, ""))
            name, msg = d.call_error(path, IFACE_POWER, "SetSource", "string:host", "string:",
                                     "uint64:%d" % (600 * W), "uint64:0")
            self.assertEqual(name, NOT_SUPPORTED)
            self.assertIn("sources recorded; gim hosts have no sysfs power path", msg)
            # recorded and explained all the same
            e = self.explain(d)
            self.assertEqual((e["control"], e["binding"], e["modelled_cap_w"], e["cap_w"]),
                             ("gim", "host", 600, None))
            self.assertEqual(self.props(d), (0, "host"))
            self.assertEqual(self.state(d)["gpus"][GPU0]["power"]["host"]["uw"], 600 * W)
            h = self.power_history(d)
            self.assertEqual([(x["result"], x["new"]) for x in h],
                             [("EOPNOTSUPP", "host=600W; cap 600W")])
            # a plan says the same without "sources recorded"
            name, msg = d.call_error(path, IFACE_POWER, "SetSource", "string:apml", "string:",
                                     "uint64:%d" % (500 * W), "uint64:1")
            self.assertEqual(name, NOT_SUPPORTED)
            self.assertNotIn("sources recorded", msg)
            self.assertEqual(len(self.power_history(d)), 1)
            # the CLI through amdsmid: exit status 4, the document of the recorded model
            doc, p = self.doc(d, "power", "set", "-g", 0, "--vm", "web1", "550W", status=4)
            self.assertIn("sources recorded", p.stderr)
            self.assertEqual((doc["result"]["exit_code"], doc["gpus"][0]["result"]),
                             (4, "EOPNOTSUPP"))
            self.assertEqual(doc["gpus"][0]["after"]["binding"], "vm")
            # a VF seen from the host has no power path: refused, nothing recorded
            vfs = [g for g in d.describe()["gpus"] if g["role"] == "vf"]
            self.assertTrue(vfs)
            name, msg = d.call_error(gpu_path(vfs[0]["bdf"]), IFACE_POWER, "SetSource",
                                     "string:host", "string:", "uint64:%d" % (600 * W),
                                     "uint64:0")
            self.assertEqual(name, NOT_SUPPORTED)
            self.assertNotIn("sources recorded", msg)
            self.assertEqual(self.explain(d, vfs[0]["bdf"])["sources"], [])

    def test_gim_host_config(self):
        with Daemon(machine="mi300x-gim-1vf", config="[gpu]\npower_cap = 600W\n") as d:
            gpus = d.describe()["gpus"]
            pfs = [g["bdf"] for g in gpus if g["role"] != "vf"]
            vfs = [g["bdf"] for g in gpus if g["role"] == "vf"]
            self.assertEqual((len(pfs), len(vfs)), (8, 8))
            # the PFs record amdsmid.conf's cap (and cannot apply it); the VFs have no power
            # path: nothing is tried there
            for bdf in pfs:
                e = self.explain(d, bdf)
                self.assertEqual([(s["source"], s["origin"], s["cap_w"]) for s in e["sources"]],
                                 [("host", "config", 600)])
                self.assertEqual(self.props(d, bdf), (0, "host"))
            for bdf in vfs[:2]:
                self.assertEqual(self.explain(d, bdf)["sources"], [])
            h = self.power_history(d)
            self.assertEqual(sorted(x["gpu"] for x in h), sorted(pfs))
            self.assertEqual({x["result"] for x in h}, {"EOPNOTSUPP"})
            # recorded once: a restart has nothing left to do
            self.assertEqual(d.stop(), 0)
            d.start()
            time.sleep(3)
            self.assertEqual(len(self.power_history(d)), 8)

    # ---- the CLI through amdsmid ------------------------------------------------------

    def test_cli_through_the_daemon(self):
        with Daemon(machine="mi300x-8") as d:
            # the same change, once through amdsmid (GPU 0), once in-process (GPU 1)
            via, p = self.doc(d, "power", "set", "-g", 0, "--host", "600W")
            direct, _ = self.doc(d, "power", "set", "-g", 1, "--host", "600W", "--direct",
                                 "--force")
            self.assertEqual(via["command"], "power set")
            for doc in (via, direct):
                for g in doc["gpus"]:
                    g["messages"] = [m.replace("GPU %d:" % g["gpu"], "GPU N:")
                                     for m in g["messages"]]
            self.assertEqual(strip(via, VOLATILE + ("gpu", "bdf", "path")),
                             strip(direct, VOLATILE + ("gpu", "bdf", "path")))
            self.assertEqual((via["gpus"][0]["gpu"], via["gpus"][0]["bdf"]), (0, GPU0))
            self.assertEqual(via["result"], {"exit_code": 0, "errno": None, "message": None})
            # the table: the same lines
            t1 = d.cli("power", "set", "-g", 0, "--host", "580W").stdout
            t2 = d.cli("power", "set", "-g", 1, "--host", "580W", "--direct", "--force").stdout
            self.assertEqual(t1, "GPU 0: effective cap 600 W -> 580 W (binds: host)\n"
                                 "GPU 0: applied 580 W, read back 580 W\n")
            self.assertEqual(t1.replace("GPU 0", "GPU 1"), t2)
            # the history: amdsmid's and the in-process one
            h = self.power_history(d)
            self.assertEqual([(x["via"], x["gpu"]) for x in h],
                             [("amdsmid", GPU0), ("direct", GPU1), ("amdsmid", GPU0),
                              ("direct", GPU1)])
            self.assertEqual((h[1]["old"], h[1]["new"], h[1]["result"]),
                             ("host=none; cap 750W", "host=600W; cap 600W", "ok"))
            # --direct is refused while amdsmid runs, unless --force
            p = d.cli("power", "apply", "-g", 0, "--direct", status=5)
            self.assertIn("amdsmid is running", p.stderr)
            d.cli("power", "apply", "-g", 0, "--direct", "--force")
            d.cli("reset", "-g", 0, "--power-cap", "--direct", status=5)

            # failures: the same status, message and document
            for route in ([], ["--direct", "--force"]):
                doc, p = self.doc(d, "power", "set", "-g", 0, "--host", "800W", *route,
                                  status=7)
                self.assertIn("GPU 0 (0000:05:00.0): --host 800 W is out of range: valid 1 W "
                              "to 750 W", p.stderr)
                self.assertEqual((doc["result"]["exit_code"], doc["result"]["errno"],
                                  doc["gpus"][0]["result"]), (7, "ERANGE", "ERANGE"))
                self.assertEqual(doc["gpus"][0]["after"]["cap_w"], 580)
                self.assertEqual(doc["gpus"][0]["control"], "hwmon")
                p = d.cli("power", "clear", "-g", 0, "--vm", "nosuch", *route, status=3)
                self.assertIn("no source of VM 'nosuch' (VMs: none)", p.stderr)
            # a write the device refuses: the error and the document are those of the
            # in-process change (amdsmid's report travels with its error, where a denial
            # has none); the library's own log line of the write goes to amdsmid's journal
            rel = os.path.relpath(self.cap_file(d), d.mount.root)
            out = []
            for route in ([], ["--direct", "--force"]):
                self.ctl(d, "inject", rel, "EIO", "once", "write")
                p = d.cli("power", "set", "-g", 0, "--host", "570W", *route, status=9)
                self.ctl(d, "inject", rel, "EIO", "once", "write")
                doc, _ = self.doc(d, "power", "set", "-g", 0, "--host", "570W", *route, status=9)
                out.append((p.stdout, p.stderr.splitlines()[-1], doc["gpus"][0]))
            self.assertEqual(out[0][:2], out[1][:2])
            self.assertEqual(out[0][1], "amdsmi: GPU 0 (0000:05:00.0): applying 570 W failed: "
                                        "Input/output error")
            for key in ("changes", "control", "apply", "messages", "result"):
                self.assertEqual(out[0][2][key], out[1][2][key], key)
            self.assertEqual(out[0][2]["apply"]["requested_w"], 570)
            self.assertEqual(out[0][2]["apply"]["written"], False)
            self.assertEqual(out[0][2]["after"]["cap_w"], 580)
            # set -o, reset --power-cap, apply, the dry run, CSV
            d.cli("set", "-g", 0, "-o", "610")
            # out of range: named as the option given, through amdsmid as in-process
            for route in ([], ["--direct", "--force"]):
                p = d.cli("set", "-g", 0, "-o", "900", *route, status=7)
                self.assertIn("GPU 0 (0000:05:00.0): -o 900 W is out of range: valid 1 W to "
                              "750 W", p.stderr)
                self.assertNotIn("--host", p.stderr)
            self.assertEqual(self.props(d), (610 * W, "host"))
            p = d.cli("power", "apply", "-g", 0, "--dry-run", user=NOBODY)
            self.assertIn("GPU 0: would write 610 W to power1_cap", p.stdout)
            p = d.cli("power", "set", "-g", 0, "--host", "590W", "--csv")
            self.assertTrue(p.stdout.startswith("gpu,bdf,dry_run,control,changes,"))
            self.assertIn("0,0000:05:00.0,false,hwmon,host,610,590,host,590,590,", p.stdout)
            d.cli("reset", "-g", 0, "--power-cap")
            self.assertEqual(self.props(d), (750 * W, "default"))
            # several GPUs: one call each, the first failure decides
            d.cli("power", "set", "-g", "0,1", "--vm", "web1", "700W", "--vf", "0000:05:02.0")
            self.assertEqual(self.device_cap(d), 700 * W)
            e = self.explain(d)
            self.assertEqual(e["sources"][0]["vf_bdf"], "0000:05:02.0")

    def test_cli_unprivileged_admin(self):
        with Daemon(machine="mi300x-8") as d:
            p = d.cli("power", "set", "-g", 0, "--host", "600W", user=NOBODY, status=6)
            self.assertIn("not authorised", p.stderr)
            doc, _ = self.doc(d, "power", "set", "-g", 0, "--host", "600W", user=NOBODY,
                              status=6)
            self.assertEqual((doc["result"]["errno"], doc["gpus"][0]["result"]),
                             ("EACCES", "EACCES"))
            self.assertEqual(self.device_cap(d), 750 * W)
            d.allow(HOST)
            d.cli("power", "set", "-g", 0, "--host", "600W", user=NOBODY)
            self.assertEqual(self.device_cap(d), 600 * W)
            d.cli("set", "-g", 0, "-o", "620W", user=NOBODY)
            d.cli("power", "set", "-g", 0, "--apml", "500W", user=NOBODY, status=6)
            self.assertEqual(self.props(d), (620 * W, "host"))
            h = self.power_history(d)
            self.assertEqual([(x["uid"], x["via"], x["result"]) for x in h],
                             [(65534, "amdsmid", "ok")] * 2)
            # --direct changes need root
            d.cli("power", "set", "-g", 0, "--host", "600W", "--direct", "--force",
                  user=NOBODY, status=6)
            # reads need nothing
            doc, _ = self.doc(d, "power", "-g", 0, user=NOBODY)
            self.assertEqual(doc["gpus"][0]["cap_w"], 620)


if __name__ == "__main__":
    require_daemon()
    unittest.main(verbosity=2)
