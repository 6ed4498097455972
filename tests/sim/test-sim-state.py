#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""A GPU in reset or without a driver is one state, shown once (issue 18, item 7), and gim
hosts (item 10), through the CLI on simulator mounts (--direct; test-daemon-state.py reads the
same through amdsmid).

- `amdsmi-sim ctl reset BDF begin` on one GPU: list, static, metric, partition, power and
  sriov exit 0, the GPU's object has "state": "resetting" and validates against amdsmi/1,
  the document has ONE errors entry for it (field "state", EBUSY) and none per value, and its table row
  shows RESET once with its GPU (and BDF) kept; a change (power set, set -o, partition set)
  exits 5 with a message saying to wait, and changes nothing; after `reset end` all is ok.
- A GPU unbound from amdgpu: the same with "no_driver", NO DRIVER and exit 4 (bind a driver,
  or amdsmi reset --reload-driver).
- gim hosts: metric's table keeps its columns (N/A) with one line on stderr saying why (once
  per run: a watch says it on its first sample only); a power cap is recorded but not
  applied, said in one line, exit 4.
"""

import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from simtest import CLI, GPU1, SIM, Mount, SchemaCase, main, tmpdir  # noqa: E402

GPU2 = "0000:46:00.0"
READ_VERBS = ["list", "static", "metric", "partition", "power", "sriov"]
IDENTITY = {"GPU", "BDF", "PRODUCT", "ROLE", "DRIVER"}


class Case(SchemaCase):
    maxDiff = None

    def setUp(self):
        self.dirs = {}
        for name in ("STATE_DIRECTORY", "RUNTIME_DIRECTORY", "CONFIGURATION_DIRECTORY"):
            self.dirs[name] = tmpdir(self, "amdsmi-state-test.", 0o700)

    def cli(self, m, *args, status=0):
        env = dict(os.environ, AMDSMI_SYSFS_ROOT=m.root, **self.dirs)
        env.pop("AMDSMI_DEBUG", None)
        env.pop("AMDSMI_DEV_ROOT", None)
        p = subprocess.run([CLI, "--direct"] + [str(a) for a in args], env=env,
                           capture_output=True, text=True, timeout=120)
        self.assertEqual(p.returncode, status, "amdsmi %s: stdout %r stderr %r"
                         % (" ".join(map(str, args)), p.stdout[-2000:], p.stderr))
        return p

    def doc(self, m, *args, status=0):
        p = self.cli(m, *(list(args) + ["--json"]), status=status)
        d = json.loads(p.stdout)
        self.assert_valid(d, "amdsmi %s --json" % " ".join(map(str, args)))
        return d, p

    def ctl(self, m, *args):
        p = subprocess.run([SIM, "ctl", "--mount", m.root] + [str(a) for a in args],
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)

    def device_cap(self, m, bdf):
        hw = os.path.join(m.root, "bus/pci/devices", bdf, "hwmon")
        with open(os.path.join(hw, os.listdir(hw)[0], "power1_cap")) as f:
            return int(f.read())

    def check_reads(self, m, index, bdf, state, marker, errno_name):
        """Every read verb: exit 0, GPU @index in @state with one errors entry; the others ok
        without any; the table shows @marker once on its row and no line per value."""
        for verb in READ_VERBS:
            with self.subTest(verb=verb):
                d, p = self.doc(m, verb)
                states = {g["gpu"]: g["state"] for g in d["gpus"]}
                self.assertEqual(states[index], state)
                self.assertEqual({s for i, s in states.items() if i != index}, {"ok"})
                self.assertEqual([(e["gpu"], e["field"], e["errno"]) for e in d["errors"]],
                                 [(index, "state", errno_name)])
                g = [g for g in d["gpus"] if g["gpu"] == index][0]
                self.assertEqual(g["bdf"], bdf)
                if verb == "metric":
                    self.assertIsNone(g["power"]["power_w"])
                    self.assertIsNone(g["gpu_metrics"])
                if verb == "power":
                    self.assertIsNone(g["cap_w"])
                if verb == "list":
                    self.assertIsNone(g["compute_mode"])
                if verb == "sriov":
                    self.assertIsNone(g["num_vfs"])
                    self.assertIsNone(g["compute_mode"])

                # the table: one line on stderr, the marker once on the GPU's row
                p = self.cli(m, verb, "-g", index)
                lines = p.stderr.strip().splitlines()
                self.assertEqual(len(lines), 1, p.stderr)
                self.assertIn("GPU %d: state: " % index, lines[0])
                out = p.stdout.splitlines()
                self.assertEqual(sum(line.count(marker) for line in out), 1, p.stdout)
                if verb == "static":
                    self.assertEqual(out[0].split(), ["GPU", str(index), bdf])
                    self.assertEqual(out[1].strip(), marker)
                    self.assertEqual(len(out), 2, p.stdout)
                    continue
                row = out[1]
                self.assertTrue(row.split()[0] == str(index), p.stdout)
                if verb != "metric":    # metric's table has no BDF column
                    self.assertIn(bdf, row)
                self.assertNotIn("N/A", row)
                # nothing after the marker: the value cells are empty
                self.assertTrue(row.rstrip().endswith(marker), p.stdout)
                # no partition rows below a GPU without values
                self.assertEqual(len(out), 2, p.stdout)

    def check_changes(self, m, index, bdf, status, has):
        for args in (["power", "set", "-g", index, "--host", "500W"],
                     ["set", "-o", "500", "-g", index],
                     ["partition", "set", "-g", index, "--compute", "DPX"]):
            with self.subTest(change=args):
                p = self.cli(m, *args, status=status)
                self.assertIn("GPU %d (%s): " % (index, bdf), p.stderr)
                self.assertIn("nothing was changed", p.stderr)
                self.assertIn(has, p.stderr)
                d, _ = self.doc(m, *args, status=status)
                self.assertEqual(d["result"]["exit_code"], status)
        # nothing recorded, nothing written
        self.assertFalse(os.path.exists(os.path.join(self.dirs["STATE_DIRECTORY"],
                                                     "state.json")))

    def test_reset(self):
        with Mount("-m", "mi300x-8", "--seed", "3") as m:
            self.ctl(m, "reset", GPU1, "begin")
            self.check_reads(m, 1, GPU1, "resetting", "RESET", "EBUSY")
            self.check_changes(m, 1, GPU1, 5, "wait for the reset to end")
            self.ctl(m, "reset", GPU1, "end")
            self.assertEqual(self.device_cap(m, GPU1), 750 * 1000000)   # not written
            for verb in READ_VERBS:
                d, p = self.doc(m, verb)
                self.assertEqual({g["state"] for g in d["gpus"]}, {"ok"}, verb)
                self.assertEqual(d["errors"], [], verb)
            self.cli(m, "power", "set", "-g", 1, "--host", "500W")
            self.assertEqual(self.device_cap(m, GPU1), 500 * 1000000)

    def test_no_driver(self):
        with Mount("-m", "mi300x-8", "--seed", "3") as m:
            self.assertEqual(m.write("bus/pci/drivers/amdgpu/unbind", GPU2), 0)
            d, _ = self.doc(m, "list")
            self.assertEqual(d["gpus"][2]["driver"], "none")
            self.check_reads(m, 2, GPU2, "no_driver", "NO DRIVER", "EOPNOTSUPP")
            self.check_changes(m, 2, GPU2, 4, "--reload-driver")
            self.assertEqual(m.write("bus/pci/drivers/amdgpu/bind", GPU2), 0)
            for verb in READ_VERBS:
                d, _ = self.doc(m, verb)
                self.assertEqual({g["state"] for g in d["gpus"]}, {"ok"}, verb)
                self.assertEqual(d["errors"], [], verb)

    def test_gim_host_metric(self):
        """The metric table of a gim host has the columns of a bare-metal one (N/A), and one
        line on stderr says why."""
        with Mount("-m", "mi300x-8", "--seed", "3") as m:
            want = self.cli(m, "metric").stdout.splitlines()[0].split("  ")
        for preset in ("mi300x-gim-1vf", "mi300x-gim-8vf"):
            with self.subTest(preset=preset), Mount("-m", preset, "--seed", "3") as m:
                p = self.cli(m, "metric")
                self.assertEqual(p.stdout.splitlines()[0].split("  "), want)
                self.assertEqual(p.stderr.count("\n"), 1, p.stderr)
                self.assertIn("gim exposes no hwmon and no gpu_metrics", p.stderr)
                self.assertIn("SMI ioctl", p.stderr)
                for row in p.stdout.splitlines()[1:]:
                    self.assertEqual(row.split()[1:3], ["N/A", "N/A"], row)
                # JSON: all GPUs ok, no errors, the same one line on stderr
                d, p = self.doc(m, "metric")
                self.assertEqual(d["errors"], [])
                self.assertEqual({g["state"] for g in d["gpus"]}, {"ok"})
                self.assertEqual(p.stderr.count("gim exposes"), 1, p.stderr)
                # a watch says it once, on its first sample (table and NDJSON alike)
                for fmt in ([], ["--json"]):
                    p = self.cli(m, "metric", "-w", "0.2", "-n", "3", *fmt)
                    if fmt:
                        self.assertEqual(len(p.stdout.splitlines()), 3, p.stdout)
                    else:
                        self.assertEqual(p.stdout.count("JUNCTION"), 3, p.stdout)
                    self.assertEqual(p.stderr.count("gim exposes"), 1, p.stderr)
                    self.assertEqual(p.stderr.count("\n"), 1, p.stderr)

    def test_gim_host_power(self):
        """A cap on a gim host: one line that says it is recorded but not applied, exit 4,
        and no "effective cap ... -> ..." line."""
        for preset in ("mi300x-gim-1vf", "mi300x-gim-8vf"):
            with self.subTest(preset=preset), Mount("-m", preset, "--seed", "3") as m:
                for args in (["set", "-o", "500", "-g", 0],
                             ["power", "set", "--host", "500W", "-g", 0]):
                    p = self.cli(m, *args, status=4)
                    self.assertEqual(p.stdout, "")
                    self.assertNotIn("effective cap", p.stderr)
                    lines = p.stderr.strip().splitlines()
                    self.assertEqual(len(lines), 1, p.stderr)
                    self.assertIn("the cap of 500 W (binds: host) is not applied, sources "
                                  "recorded; gim hosts have no sysfs power path", lines[0])
                with open(os.path.join(self.dirs["STATE_DIRECTORY"], "state.json")) as f:
                    st = json.load(f)
                self.assertEqual(st["gpus"]["0000:05:00.0"]["power"]["host"]["uw"], 500 * 10**6)
                os.unlink(os.path.join(self.dirs["STATE_DIRECTORY"], "state.json"))
                p = self.cli(m, "power", "set", "--host", "400W", "-g", 0, "--dry-run",
                             status=4)
                self.assertIn("would not be applied, the sources only recorded", p.stderr)
                self.assertNotIn("effective cap", p.stdout + p.stderr)


if __name__ == "__main__":
    main()
