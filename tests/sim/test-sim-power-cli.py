#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""amdsmi power / power set / clear / apply, set -o, reset --power-cap end to end: the real CLI,
library, arbitration and state file on simulator mounts (AMDSMI_SYSFS_ROOT=<mount>, a fresh
STATE_DIRECTORY and RUNTIME_DIRECTORY each).

The minimum over every combination of sources, clamping at both ends, removing the binding
source, an external limiter (the simulator's platform limit) and an outside writer, the
kernel's errno (EINVAL from the driver, EBUSY in a reset, a write that does not take), value
syntax and ranges, truncation to whole watts, --dry-run, one-VF guests (read-only and granted),
multi-VF guests, gim hosts, the BMC agent's APML file, concurrent writers and writers killed
while they save the state."""

import glob
import itertools
import json
import os
import random
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from simtest import CLI, GPU0, GPU1, NOBODY, SIM, Mount, SchemaCase, main, tmpdir  # noqa: E402


W = 1000000


class Case(SchemaCase):
    maxDiff = None

    def setUp(self):
        # removed by cleanups: after a test's own (the tmpfs over self.st unmounted first)
        self.rt = tmpdir(self, "amdsmi-rt.")
        self.st = tmpdir(self, "amdsmi-state.")

    def env(self, m):
        env = dict(os.environ, AMDSMI_SYSFS_ROOT=m.root, RUNTIME_DIRECTORY=self.rt,
                   STATE_DIRECTORY=self.st)
        env.pop("AMDSMI_DEBUG", None)
        return env

    def cli(self, m, *args, status=0, user=None, has=()):
        p = subprocess.run((user or []) + [CLI] + [str(a) for a in args], env=self.env(m),
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

    def power(self, m, gpu=0):
        return self.doc(m, "power", "-g", gpu)["gpus"][0]

    def ctl(self, m, *args):
        p = subprocess.run([SIM, "ctl", "--mount", m.root] + [str(a) for a in args],
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        return p.stdout

    def cap_file(self, m, bdf=GPU0, name="power1_cap"):
        dirs = glob.glob(os.path.join(m.root, "bus/pci/devices", bdf, "hwmon", "hwmon*"))
        self.assertEqual(len(dirs), 1)
        return os.path.join(dirs[0], name)

    def device_cap(self, m, bdf=GPU0):
        with open(self.cap_file(m, bdf)) as f:
            return int(f.read())

    def state(self):
        path = os.path.join(self.st, "state.json")
        if not os.path.exists(path):
            return None
        with open(path) as f:
            return json.load(f)

    def apml_file(self, bdf, text):
        d = os.path.join(self.rt, "apml")
        os.makedirs(d, exist_ok=True)
        tmp = os.path.join(d, "." + bdf + ".tmp")
        with open(tmp, "w") as f:
            f.write(text)
        os.rename(tmp, os.path.join(d, bdf))

    def machine(self, preset, **kernel):
        """A machine file: PRESET with kernel knobs changed."""
        p = subprocess.run([SIM, "dump-machine", preset], capture_output=True, text=True,
                           check=True)
        d = json.loads(p.stdout)
        d["kernel"].update(kernel)
        path = os.path.join(self.st, "..", os.path.basename(self.st) + "-machine.json")
        path = os.path.abspath(path)
        with open(path, "w") as f:
            json.dump(d, f)
        self.addCleanup(os.unlink, path)
        return path

    # ---- reads ------------------------------------------------------------------------

    def test_read_default(self):
        with Mount("--machine", "mi300x-8", "--seed", "3") as m:
            d = self.doc(m, "power")
            self.assertEqual(len(d["gpus"]), 8)
            for g in d["gpus"]:
                self.assertEqual(g["control"], "hwmon")
                self.assertEqual((g["cap_w"], g["cap_min_w"], g["cap_max_w"], g["cap_default_w"]),
                                 (750, 0, 750, 750))
                # power1_cap_min is 0, but a write below 1 W is refused: the settable range
                self.assertEqual((g["cap_settable_min_w"], g["cap_settable_max_w"]), (1, 750))
                self.assertEqual(g["cap_held_by"], "default")
                self.assertEqual((g["effective_w"], g["effective_source"], g["binding"],
                                  g["observed"], g["sources"]),
                                 (750, "default", "default", "consistent", []))
                self.assertIsNone(g["ppt1"])
                self.assertGreater(g["draw_w"], 0)
                self.assertGreater(g["socket_power_w"], 0)
                self.assertEqual(g["apml_file"]["state"], "absent")
            # table and CSV: the same values
            t = self.cli(m, "power").stdout
            self.assertIn("SOURCES", t)
            self.assertEqual(t.count("default"), 8)
            c = self.cli(m, "power", "--csv").stdout.splitlines()
            head = c[0].split(",")
            self.assertEqual(len(head), len(set(head)), "CSV column names are unique")
            self.assertEqual(len(c), 9)
            row = dict(zip(head, c[1].split(",")))
            self.assertEqual((row["cap_w"], row["effective_source"]), ("750", "default"))
            self.assertEqual((row["cap_settable_min_w"], row["cap_settable_max_w"]), ("1", "750"))
            # the table's RANGE is the JSON's settable range, and a write below it is refused
            rng = t.splitlines()[1].split()[4]
            self.assertEqual(rng, "%s-%s" % (d["gpus"][0]["cap_settable_min_w"],
                                             d["gpus"][0]["cap_settable_max_w"]))
            self.cli(m, "power", "set", "-g", 0, "--host", "0.999W", "--dry-run", status=7)
            # reads need no privilege and write nothing
            self.doc(m, "power", user=NOBODY)
            self.assertIsNone(self.state())

    def test_read_ppt1(self):
        with Mount("--machine", "mi355x-8") as m:
            g = self.power(m)
            self.assertIsNotNone(g["ppt1"])
            self.assertGreater(g["ppt1"]["cap_max_w"], 0)
            # PPT1 is shown, never arbitrated: a host cap changes PPT0 only
            before = g["ppt1"]["cap_w"]
            self.cli(m, "power", "set", "-g", 0, "--host", "900W")
            g = self.power(m)
            self.assertEqual((g["cap_w"], g["ppt1"]["cap_w"]), (900, before))

    # ---- arbitration ------------------------------------------------------------------

    def test_minimum_over_every_combination(self):
        sources = [("host", None, 600), ("vm", "web1", 520), ("vm", "db2", 560),
                   ("apml", None, 480)]
        with Mount("--machine", "mi300x-8") as m:
            for n in range(1, len(sources) + 1):
                for combo in itertools.combinations(sources, n):
                    for rot in range(len(combo)):
                        # rotate the values so that every member of the combination binds once
                        vals = [s[2] for s in combo]
                        vals = vals[rot:] + vals[:rot]
                        given = [(s[0], s[1], v) for s, v in zip(combo, vals)]
                        for kind, name, v in given:
                            args = ["power", "set", "-g", 0]
                            args += ["--vm", name, "%dW" % v] if kind == "vm" \
                                else ["--" + kind, "%dW" % v]
                            self.cli(m, *args)
                        g = self.power(m)
                        low = min(v for _, _, v in given)
                        binder = [(k, nm) for k, nm, v in given if v == low][0]
                        what = "sources %r" % (given,)
                        self.assertEqual(g["cap_w"], low, what)
                        self.assertEqual(self.device_cap(m), low * W, what)
                        self.assertEqual((g["binding"], g["binding_vm"]), binder, what)
                        self.assertEqual(g["effective_source"], binder[0], what)
                        self.assertEqual(g["observed"], "consistent", what)
                        self.assertEqual(sorted((s["source"], s["vm"], s["cap_w"])
                                                for s in g["sources"]),
                                         sorted(given, key=lambda x: (x[0], x[1] or "", x[2])),
                                         what)
                        self.assertEqual([s["binds"] for s in g["sources"]].count(True), 1)
                        # clear them all: back to the default cap
                        for kind, name, _ in given:
                            args = ["power", "clear", "-g", 0]
                            args += ["--vm", name] if kind == "vm" else ["--" + kind]
                            self.cli(m, *args)
                        g = self.power(m)
                        self.assertEqual((g["cap_w"], g["binding"], g["sources"]),
                                         (750, "default", []), what)
            # the other GPUs were never touched
            self.assertEqual(self.device_cap(m, GPU1), 750 * W)

    def test_removing_the_binding_source_raises_the_cap(self):
        with Mount("--machine", "mi300x-8") as m:
            self.cli(m, "power", "set", "-g", 0, "--host", "600W")
            self.cli(m, "power", "set", "-g", 0, "--vm", "web1", "450W", "--vf", "0000:05:02.0")
            self.cli(m, "power", "set", "-g", 0, "--apml", "500W")
            g = self.power(m)
            self.assertEqual((g["cap_w"], g["binding"], g["binding_vm"]), (450, "vm", "web1"))
            vm = [s for s in g["sources"] if s["source"] == "vm"][0]
            self.assertEqual(vm["vf_bdf"], "0000:05:02.0")
            self.assertIn("amdsmi (uid 0", vm["set_by"])
            d = self.doc(m, "power", "clear", "-g", 0, "--vm", "web1")
            e = d["gpus"][0]
            self.assertEqual((e["before"]["modelled_cap_w"], e["after"]["modelled_cap_w"]),
                             (450, 500))
            self.assertEqual((e["apply"]["applied_w"], e["apply"]["readback_w"]), (500, 500))
            self.assertEqual(self.power(m)["binding"], "apml")
            self.cli(m, "power", "clear", "-g", 0, "--apml")
            self.assertEqual((self.power(m)["cap_w"], self.power(m)["binding"]), (600, "host"))
            # reset --power-cap clears the host source: the default cap again
            self.cli(m, "reset", "-g", 0, "--power-cap")
            g = self.power(m)
            self.assertEqual((g["cap_w"], g["binding"]), (750, "default"))
            # clearing what is not there: a VM is named, so that is an error; host is not
            self.cli(m, "power", "clear", "-g", 0, "--vm", "nosuch", status=3,
                     has=["no source of VM 'nosuch'"])
            self.cli(m, "power", "clear", "-g", 0, "--host", has=["nothing to clear"])

    def test_clamping(self):
        # a GPU whose minimum cap is 200 W: the BMC's 150 W is raised to it, 900 W lowered
        path = self.machine("mi300x-8")
        with open(path) as f:
            d = json.load(f)
        for g in d["gpus"]:
            g["power_cap_limits_w"] = {"min": 200, "max": 750, "default": 700}
            g["power_cap_w"] = 700
        with open(path, "w") as f:
            json.dump(d, f)
        with Mount("--machine", path) as m:
            g = self.power(m)
            self.assertEqual((g["cap_w"], g["cap_default_w"]), (700, 700))
            # the CLI refuses a source outside the range, naming it
            self.cli(m, "power", "set", "-g", 0, "--host", "150W", status=7,
                     has=["valid 200 W to 750 W"])
            self.cli(m, "power", "set", "-g", 0, "--host", "751W", status=7,
                     has=["valid 200 W to 750 W"])
            self.assertIsNone(self.state())
            # a BMC agent's file is not refused: it is clamped and explained
            self.apml_file(GPU0, "150W\n")
            self.cli(m, "power", "apply", "-g", 0)
            g = self.power(m)
            self.assertEqual((g["binding"], g["clamp"], g["modelled_cap_w"], g["cap_w"]),
                             ("apml", "low", 200, 200))
            self.assertTrue(any("raised to 200 W" in n for n in g["notes"]), g["notes"])
            self.apml_file(GPU0, "0.9kW\n")
            self.cli(m, "power", "apply", "-g", 0)
            g = self.power(m)
            self.assertEqual((g["binding"], g["clamp"], g["modelled_cap_w"], g["cap_w"]),
                             ("apml", "high", 750, 750))

    # ---- what the device says ---------------------------------------------------------

    def test_external_limiter_and_outside_writer(self):
        with Mount("--machine", "mi300x-8") as m:
            self.cli(m, "power", "set", "-g", 0, "--host", "600W")
            self.ctl(m, "platform-limit", GPU0, 400)
            g = self.power(m)
            self.assertEqual((g["cap_w"], g["modelled_cap_w"], g["effective_source"],
                              g["observed"], g["binding"]),
                             (400, 600, "external", "external", "host"))
            # binding host with observed external: cap_held_by says who holds the device
            self.assertEqual(g["cap_held_by"], "external")
            self.assertTrue(any("external limiter" in n for n in g["notes"]))
            # a change under the limiter succeeds, says so, and rolls nothing back
            d = self.doc(m, "power", "set", "-g", 0, "--vm", "a", "500W")
            e = d["gpus"][0]
            self.assertEqual((e["apply"]["applied_w"], e["apply"]["readback_w"],
                              e["apply"]["limited"], e["result"]), (500, 400, True, None))
            self.assertEqual(self.state()["gpus"][GPU0]["power"]["applied"]["uw"], 500 * W)
            self.assertEqual(len(self.state()["gpus"][GPU0]["power"]["vms"]), 1)
            self.ctl(m, "platform-limit", GPU0, "none")
            g = self.power(m)
            self.assertEqual((g["cap_w"], g["effective_source"]), (500, "vm"))
            # someone else writes power1_cap: higher than the model is an outside writer
            with open(self.cap_file(m), "w") as f:
                f.write("700000000")
            g = self.power(m)
            self.assertEqual((g["cap_w"], g["effective_source"], g["observed"]),
                             (700, "outside-writer", "outside-writer"))
            self.assertEqual(g["cap_held_by"], "outside-writer")
            # apply restores the model
            self.cli(m, "power", "apply", "-g", 0)
            self.assertEqual(self.power(m)["effective_source"], "vm")

    def test_kernel_errors(self):
        with Mount("--machine", "mi300x-8") as m:
            cap = self.cap_file(m)
            self.cli(m, "power", "set", "-g", 0, "--host", "600W")
            saved = self.state()
            # the driver refuses the value (EINVAL): out of range, nothing recorded
            self.ctl(m, "inject", cap, "EINVAL", "once", "write")
            d = self.doc(m, "power", "set", "-g", 0, "--host", "500W", status=7,
                         has=["the driver refused 500 W"])
            self.assertEqual(d["result"]["errno"], "ERANGE")
            self.assertEqual(self.state(), saved)
            self.assertEqual(self.device_cap(m), 600 * W)
            # the history of the failed change: the sources as they were, on both sides
            with open(os.path.join(self.st, "history.jsonl")) as f:
                last = json.loads(f.read().splitlines()[-1])
            self.assertEqual((last["old"], last["new"], last["result"]),
                             ("host=600W; cap 600W", "host=600W; cap 600W", "ERANGE"))
            # a reset in progress: busy, nothing recorded
            self.ctl(m, "reset", GPU0, "begin")
            self.cli(m, "power", "set", "-g", 0, "--host", "500W", status=5, has=["busy"])
            self.ctl(m, "reset", GPU0, "end")
            self.assertEqual(self.state(), saved)
            # runtime-suspended (EPERM on pm files) is busy too, not a permission problem
            self.ctl(m, "inject", cap, "EPERM", "once", "write")
            self.cli(m, "power", "set", "-g", 0, "--host", "500W", status=5)
            # a write the device ignores: the read-back says so
            self.ctl(m, "no-effect", cap, "once")
            self.cli(m, "power", "set", "-g", 0, "--host", "500W", status=9,
                     has=["reads back 600 W"])
            self.assertEqual(self.state(), saved)
            # the SMU query fails on the read-back ("\n" in the kernel; EIO here)
            self.ctl(m, "inject", cap, "EIO", "always", "read")
            self.cli(m, "power", "set", "-g", 0, "--host", "500W", status=9,
                     has=["applying 500 W failed"])
            self.assertEqual(self.state(), saved)
            self.ctl(m, "clear-faults")
            self.cli(m, "power", "set", "-g", 0, "--host", "500W")
            self.assertEqual(self.device_cap(m), 500 * W)

    # ---- the command line ---------------------------------------------------------------

    def test_values_and_usage(self):
        with Mount("--machine", "mi300x-8") as m:
            for value, applied in (("600", 600), ("600W", 600), ("550w", 550),
                                   ("500000mW", 500), ("0.45kW", 450), ("440.000W", 440)):
                self.cli(m, "power", "set", "-g", 0, "--host", value)
                self.assertEqual(self.device_cap(m), applied * W, value)
            self.cli(m, "power", "set", "-g", 0, "--host=430W")
            self.assertEqual(self.device_cap(m), 430 * W)
            for bad, status in (("0", 7), ("0.5W", 7), ("abc", 2), ("600 Watts", 2),
                                ("1e3", 2), ("-5W", 2), ("600MW", 2), ("4295W", 7),
                                ("99999999999999999999999W", 7)):
                p = self.cli(m, "power", "set", "-g", 0, "--host", bad, status=status)
                self.assertIn("amdsmi:", p.stderr)
            self.assertEqual(self.device_cap(m), 430 * W)
            # truncation to whole watts: a warning, the kernel keeps 450 W
            d = self.doc(m, "power", "set", "-g", 0, "--host", "450.7W",
                         has=["applied as 450 W"])
            e = d["gpus"][0]["apply"]
            self.assertEqual((e["requested_w"], e["applied_w"], e["truncated"]),
                             (450.7, 450, True))
            self.assertEqual(self.device_cap(m), 450 * W)
            g = self.power(m)
            self.assertEqual((g["modelled_cap_w"], g["observed"]), (450.7, "consistent"))
            # usage errors
            for args, msg in ((["power", "set", "-g", 0], "nothing to set"),
                              (["power", "set", "-g", 0, "--host"], "needs a value"),
                              (["power", "set", "-g", 0, "--vm", "x"], "needs a name and"),
                              (["power", "clear", "-g", 0, "--host", "5"], "takes no value"),
                              (["power", "set", "--host", "5"], "-g missing"),
                              (["power", "set", "-g", "0.1", "--host", "500"], "whole GPU"),
                              (["power", "set", "-g", 0, "--vf", "0000:05:02.0", "--host", "5"],
                               "give --vm NAME"),
                              (["power", "set", "-g", 0, "--vm", "a", "5", "--vf", "../x"],
                               "invalid VF address"),
                              (["power", "set", "-g", 0, "--vm", "", "5"], "invalid VM name"),
                              (["power", "-g", 0, "--host", "5"], "not valid for 'power'"),
                              (["set", "-g", 0, "-o"], "needs a value"),
                              (["set", "-g", 0, "-o", "ppt1", "500"], "PPT1"),
                              (["set", "-g", 0, "-C", "cpx", "-o", "500"], "one kind"),
                              (["reset", "-g", 0, "--power-cap", "5"], "takes no value")):
                self.cli(m, *args, status=2, has=[msg])
            # amd-smi's spellings
            self.cli(m, "set", "-g", 0, "-o", "610")
            self.assertEqual(self.device_cap(m), 610 * W)
            self.cli(m, "set", "-g", 0, "-o", "ppt0", "620")
            self.assertEqual(self.device_cap(m), 620 * W)
            self.cli(m, "set", "-g", 0, "--power-cap=630W")
            self.assertEqual(self.device_cap(m), 630 * W)
            self.cli(m, "set", "-g", 0, "-o635")
            self.assertEqual(self.device_cap(m), 635 * W)
            self.cli(m, "set", "-g", 0, "-o", "630")
            self.cli(m, "set", "-g", 0, "-o", "800", status=7, has=["-o 800 W is out of range"])
            # not root: refused, nothing changes; a dry run is fine
            self.cli(m, "power", "set", "-g", 0, "--host", "500W", status=6, user=NOBODY,
                     has=["need root"])
            self.cli(m, "power", "set", "-g", 0, "--host", "500W", "--dry-run", user=NOBODY)
            self.assertEqual(self.device_cap(m), 630 * W)

    def test_dry_run(self):
        with Mount("--machine", "mi300x-8") as m:
            self.cli(m, "power", "set", "-g", "all", "--host", "600W")
            saved = self.state()
            d = self.doc(m, "power", "set", "-g", 0, "--vm", "web1", "450W", "--dry-run")
            e = d["gpus"][0]
            self.assertTrue(d["dry_run"])
            self.assertEqual((e["after"]["modelled_cap_w"], e["apply"]["written"],
                              e["apply"]["applied_w"]), (450, False, 450))
            self.assertEqual(self.state(), saved)
            self.assertEqual(self.device_cap(m), 600 * W)
            # a dry run exits with the code the change would have
            self.cli(m, "power", "set", "-g", 0, "--host", "800W", "--dry-run", status=7)
            self.cli(m, "power", "clear", "-g", 0, "--vm", "x", "--dry-run", status=3)

    # ---- where a cap can be applied -----------------------------------------------------

    def test_guest_one_vf(self):
        with Mount("--machine", "mi300x-guest-1vf") as m:
            g = self.power(m)
            self.assertEqual((g["control"], g["cap_w"]), ("vf-read-only", 750))
            self.assertTrue(any("not granted" in n for n in g["notes"]))
            self.cli(m, "power", "set", "-g", 0, "--vm", "self", "500W", status=4,
                     has=["not granted power-limit control"])
            self.assertIsNone(self.state())
        with Mount("--machine", self.machine("mi300x-guest-1vf", vf_power_limit=True)) as m:
            g = self.power(m)
            self.assertEqual(g["control"], "vf")
            self.cli(m, "power", "set", "-g", 0, "--vm", "self", "500W")
            self.assertEqual(self.device_cap(m, "0000:01:00.0"), 500 * W)
            g = self.power(m)
            self.assertEqual((g["cap_w"], g["binding"], g["effective_source"]),
                             (500, "vm", "vm"))

    def test_guest_multi_vf(self):
        with Mount("--machine", "mi300x-guest-multivf") as m:
            g = self.power(m)
            self.assertEqual((g["control"], g["cap_w"], g["effective_w"]), ("multi-vf", None, None))
            self.assertTrue(any("multi-VF guest" in n for n in g["notes"]))
            self.cli(m, "power", "set", "-g", 0, "--host", "500W", status=4,
                     has=["multi-VF guest has no power controls"])
            self.assertIsNone(self.state())

    def test_gim_host(self):
        with Mount("--machine", "mi300x-gim-8vf") as m:
            g = self.power(m)
            self.assertEqual((g["control"], g["cap_w"], g["binding"]), ("gim", None, None))
            # recorded and explained, not applied: not supported
            d = self.doc(m, "power", "set", "-g", 0, "--host", "600W", status=4,
                         has=["no sysfs power path"])
            self.assertEqual(d["gpus"][0]["apply"], None)
            self.cli(m, "power", "set", "-g", 0, "--vm", "vm3", "450W", "--vf", "0000:05:02.3",
                     status=4)
            # a VF of another GPU is refused, nothing recorded
            self.cli(m, "power", "set", "-g", 0, "--vm", "vm4", "400W", "--vf", "0000:26:02.0",
                     status=2, has=["not one of its VFs (0000:05:02.0 to 0000:05:02.7)"])
            g = self.power(m)
            self.assertEqual((g["effective_w"], g["modelled_cap_w"], g["binding"],
                              g["binding_vm"], g["effective_source"], g["observed"]),
                             (450, 450, "vm", "vm3", "vm", "unknown"))
            self.assertEqual(len(self.state()["gpus"][GPU0]["power"]["vms"]), 1)

    # ---- the BMC agent's file -----------------------------------------------------------

    def test_apml_file(self):
        with Mount("--machine", "mi300x-8") as m:
            self.cli(m, "power", "set", "-g", 0, "--host", "600W")
            self.apml_file(GPU0, "# written by the BMC agent\n420000000\n")
            g = self.power(m)
            self.assertEqual((g["apml_file"]["state"], g["apml_file"]["cap_w"],
                              g["apml_file"]["used"]), ("valid", 420, True))
            self.assertEqual((g["modelled_cap_w"], g["binding"], g["cap_w"]), (420, "apml", 600))
            self.assertTrue(any("power apply" in n for n in g["notes"]), g["notes"])
            self.cli(m, "power", "apply", "-g", 0)
            self.assertEqual(self.device_cap(m), 420 * W)
            src = [s for s in self.power(m)["sources"] if s["source"] == "apml"][0]
            self.assertTrue(src["set_by"].startswith("apml file "), src)
            # a call made later wins over the older file
            time.sleep(0.02)
            self.cli(m, "power", "set", "-g", 0, "--apml", "520W")
            self.assertEqual(self.power(m)["modelled_cap_w"], 520)
            # garbage is ignored and reported, never guessed
            self.apml_file(GPU0, "lots\n")
            g = self.power(m)
            self.assertEqual(g["apml_file"]["state"], "malformed")
            self.assertTrue(any("ignored" in n for n in g["notes"]), g["notes"])
            self.assertEqual(g["modelled_cap_w"], 520)
            # an empty file: no limit from the file
            self.apml_file(GPU0, "")
            self.cli(m, "power", "clear", "-g", 0, "--apml")
            self.assertEqual(self.power(m)["modelled_cap_w"], 600)

    # ---- concurrency and crashes -----------------------------------------------------

    def test_concurrent_writers_lose_nothing(self):
        with Mount("--machine", "mi300x-8") as m:
            procs = []
            for k in range(12):
                args = [CLI, "power", "set", "-g", str(k % 2), "--vm", "vm%02d" % k,
                        "%dW" % (400 + 10 * k)]
                procs.append(subprocess.Popen(args, env=self.env(m), stdout=subprocess.PIPE,
                                              stderr=subprocess.PIPE, text=True))
            for p in procs:
                out, err = p.communicate(timeout=120)
                self.assertEqual(p.returncode, 0, err)
            st = self.state()
            for gpu, bdf in ((0, GPU0), (1, GPU1)):
                keys = sorted(v["key"] for v in st["gpus"][bdf]["power"]["vms"])
                self.assertEqual(keys, ["vm%02d" % k for k in range(gpu, 12, 2)])
                g = self.power(m, gpu)
                self.assertEqual((g["cap_w"], g["binding_vm"]), (400 + 10 * gpu,
                                                                 "vm%02d" % gpu))

    def test_killed_writers_leave_a_state_that_loads(self):
        with Mount("--machine", "mi300x-8") as m:
            self.cli(m, "power", "set", "-g", "all", "--host", "700W")
            rnd = random.Random(5)
            for k in range(40):
                p = subprocess.Popen([CLI, "power", "set", "-g", "all", "--vm", "v%d" % k,
                                      "%dW" % (500 + k)], env=self.env(m),
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                time.sleep(rnd.uniform(0, 0.03))
                p.send_signal(signal.SIGKILL)
                p.wait()
            d = self.doc(m, "power")
            self.assertEqual([e for e in d["errors"] if e["field"] == "state"], [])
            self.assertEqual(glob.glob(os.path.join(self.st, "state.json.corrupt*")), [])
            for g in d["gpus"]:
                self.assertEqual(g["sources"][0]["source"], "host")
            # and a later writer works
            self.cli(m, "power", "set", "-g", 0, "--vm", "after", "450W")
            self.assertEqual(self.power(m)["cap_w"], 450)

    def test_damaged_file_is_never_written(self):
        with Mount("--machine", "mi300x-8") as m:
            self.cli(m, "power", "set", "-g", 0, "--host", "500W")
            damaged = '{"version": 1, "gpus": {"0000:05:00.0": {"power": {"host": {"uw": "x"'
            with open(os.path.join(self.st, "state.json"), "w") as f:
                f.write(damaged)
            d = self.doc(m, "power")
            self.assertTrue(any(e["field"] == "state" and "damaged" in e["message"]
                                for e in d["errors"]), d["errors"])
            # a change is refused before the GPU is touched, the file stays as it is
            d = self.doc(m, "power", "set", "-g", 0, "--host", "600W", status=10,
                         has=["cannot be read", "--damaged"])
            self.assertEqual(d["result"]["exit_code"], 10)
            self.assertEqual(self.device_cap(m), 500 * W)
            with open(os.path.join(self.st, "state.json")) as f:
                self.assertEqual(f.read(), damaged)
            self.assertEqual(glob.glob(os.path.join(self.st, "state.json.corrupt*")), [])
            # a dry run of the drop changes nothing; the drop keeps the file aside
            self.cli(m, "power", "clear", "-g", 0, "--damaged", "--dry-run",
                     has=["would drop the damaged record"])
            self.assertEqual(glob.glob(os.path.join(self.st, "state.json.corrupt*")), [])
            d = self.doc(m, "power", "clear", "-g", 0, "--damaged")
            kept = glob.glob(os.path.join(self.st, "state.json.corrupt*"))
            self.assertEqual(len(kept), 1)
            self.assertEqual(d["gpus"][0]["dropped"][0]["kept_as"], kept[0])
            with open(kept[0]) as f:
                self.assertEqual(f.read(), damaged)
            self.cli(m, "power", "set", "-g", 0, "--host", "600W")
            self.assertEqual(self.power(m)["cap_w"], 600)

    def test_damaged_record_one_field_at_a_time(self):
        """Every field of every record kind damaged in turn: the GPU's change is refused (exit
        10, naming the record), its cap never raised, nothing of the file lost, other GPUs
        change, and clear --damaged drops exactly the damaged record."""
        with Mount("--machine", "mi300x-8") as m:
            self.cli(m, "power", "set", "-g", 0, "--host", "600W", "--vm", "web1", "500W")
            self.cli(m, "power", "set", "-g", 0, "--apml", "590W")
            self.cli(m, "power", "set", "-g", 1, "--host", "550W")
            self.assertEqual(self.device_cap(m), 500 * W)
            good = self.state()
            p0 = good["gpus"][GPU0]["power"]
            fields = [(("host",), k) for k in p0["host"]] + \
                     [(("apml",), k) for k in p0["apml"]] + \
                     [(("vms", 0), k) for k in p0["vms"][0]] + \
                     [(("applied",), k) for k in p0["applied"]] + \
                     [(("host",), None), (("vms", 0), None), (("vms",), None), ((), None)]
            self.assertGreaterEqual(len(fields), 14)
            for path, key in fields:
                doc = json.loads(json.dumps(good))
                rec = doc["gpus"][GPU0]["power"]
                for part in path[:-1]:
                    rec = rec[part]
                if key is None and not path:
                    doc["gpus"][GPU0]["power"] = "broken"
                    where = "gpus.%s.power" % GPU0
                elif key is None:
                    rec[path[-1]] = ["broken"]
                    where = "gpus.%s.power.%s" % (GPU0, ".".join(map(str, path)))
                else:
                    rec = rec[path[-1]]
                    rec[key] = ["broken"]
                    where = "gpus.%s.power.%s" % (GPU0, path[0]) + \
                        ("[0]" if len(path) > 1 else "")
                where = where.replace(".vms.0", ".vms[0]")
                text = json.dumps(doc, indent=2)
                name = "%s %s" % (where, key)
                with open(os.path.join(self.st, "state.json"), "w") as f:
                    f.write(text)
                # a read names it; every other source still shows
                d = self.doc(m, "power", "-g", 0)
                self.assertTrue(any(e["field"] == "state" and where in e["message"]
                                    for e in d["errors"]), (name, d["errors"]))
                # the change is refused, the cap not raised, the file as it was
                p = self.cli(m, "power", "set", "-g", 0, "--host", "590W", status=10,
                             has=[where, "damaged", "--damaged"])
                self.assertEqual(self.device_cap(m), 500 * W, name)
                with open(os.path.join(self.st, "state.json")) as f:
                    self.assertEqual(f.read(), text, name)
                # another GPU changes; the damaged record is written back verbatim
                self.cli(m, "power", "set", "-g", 1, "--host", "540W")
                after = self.state()
                self.assertEqual(after["gpus"][GPU0], doc["gpus"][GPU0], name)
                self.assertEqual(after["gpus"][GPU1]["power"]["host"]["uw"], 540 * W, name)
                self.cli(m, "power", "set", "-g", 1, "--host", "550W")
                del p
            # the drop: shows the record, keeps the rest of the GPU's sources
            doc = json.loads(json.dumps(good))
            doc["gpus"][GPU0]["power"]["apml"]["uw"] = "590W"
            with open(os.path.join(self.st, "state.json"), "w") as f:
                json.dump(doc, f)
            d = self.doc(m, "power", "clear", "-g", 0, "--damaged")
            dropped = d["gpus"][0]["dropped"]
            self.assertEqual([x["record"] for x in dropped], ["gpus.%s.power.apml" % GPU0])
            self.assertEqual(dropped[0]["value"]["uw"], "590W")
            after = self.state()
            self.assertNotIn("apml", after["gpus"][GPU0]["power"])
            self.assertEqual(after["gpus"][GPU0]["power"]["host"], p0["host"])
            self.assertEqual(after["gpus"][GPU0]["power"]["vms"], p0["vms"])
            # without the APML source the VM's 500 W still binds
            self.assertEqual(self.device_cap(m), 500 * W)
            self.cli(m, "power", "set", "-g", 0, "--host", "450W")
            self.assertEqual(self.device_cap(m), 450 * W)

    def test_full_state_directory_changes_nothing(self):
        """ENOSPC while saving the sources: the device goes back to its cap, the file keeps the
        old sources, and the error names the cause."""
        if os.geteuid() != 0:
            self.fail("this test mounts a tmpfs: run it as root")
        subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k,mode=0755", "tmpfs", self.st],
                       check=True)
        self.addCleanup(subprocess.run, ["umount", "-l", self.st])
        with Mount("--machine", "mi300x-8") as m:
            self.cli(m, "power", "set", "-g", 0, "--host", "600W")
            with open(os.path.join(self.st, "state.json")) as f:
                before = f.read()
            # fill the file system to the last block
            fd = os.open(os.path.join(self.st, "filler"), os.O_WRONLY | os.O_CREAT, 0o600)
            try:
                while True:
                    os.write(fd, b"\0" * 4096)
            except OSError:
                pass
            os.close(fd)
            p = self.cli(m, "power", "set", "-g", 0, "--host", "500W", status=1,
                         has=["No space left on device", "the cap is back at 600 W"])
            self.assertEqual(self.device_cap(m), 600 * W, p.stderr)
            with open(os.path.join(self.st, "state.json")) as f:
                self.assertEqual(f.read(), before)
            self.assertEqual(self.power(m)["cap_w"], 600)
            os.unlink(os.path.join(self.st, "filler"))
            self.cli(m, "power", "set", "-g", 0, "--host", "500W")
            self.assertEqual(self.device_cap(m), 500 * W)

    def test_newer_state_is_never_written(self):
        with Mount("--machine", "mi300x-8") as m:
            newer = '{"version": 2, "gpus": {}, "from_the_future": true}\n'
            with open(os.path.join(self.st, "state.json"), "w") as f:
                f.write(newer)
            # refused before the GPU is touched; the file stays as it was
            self.cli(m, "power", "set", "-g", 0, "--host", "600W", status=1,
                     has=["written by a newer amdsmi"])
            self.assertEqual(self.device_cap(m), 750 * W)
            with open(os.path.join(self.st, "state.json")) as f:
                self.assertEqual(f.read(), newer)
            # reads still work, from an empty model
            self.assertEqual(self.power(m)["sources"], [])


if __name__ == "__main__":
    main()
