#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""A GPU in reset or without a driver through amdsmid (issue 18, items 7 and 10): the read
verbs answered by GetDocument show the same one state as --direct (test-sim-state.py), and a
change asked of amdsmid is refused the same way; on a gim host the metric note and the power
refusal come through amdsmid too."""

import json
import os
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from daemontest import (BUS, GPU1, IFACE_POWER, MANAGER, ROOT, SIM, Daemon,  # noqa: E402
                        gpu_path, require_daemon)

import jsonschema  # noqa: E402

READ_VERBS = ["list", "static", "metric", "partition", "power", "sriov"]
GPU2 = "0000:46:00.0"


class State(unittest.TestCase):
    maxDiff = None

    @classmethod
    def setUpClass(cls):
        with open(os.environ["AMDSMI_SCHEMA"], encoding="utf-8") as f:
            cls.validator = jsonschema.Draft202012Validator(json.load(f))

    def ctl(self, d, *args):
        p = subprocess.run([SIM, "ctl", "--mount", d.mount.root] + [str(a) for a in args],
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)

    def doc(self, d, *args, status=0):
        p = d.cli(*(list(args) + ["--json"]), status=status)
        doc = json.loads(p.stdout)
        errors = [e.message[:200] for e in self.validator.iter_errors(doc)]
        self.assertEqual(errors, [], args)
        return doc, p

    def check(self, d, index, state, errno_name, marker):
        for verb in READ_VERBS:
            with self.subTest(verb=verb):
                # the document amdsmid builds, as GetDocument answers it
                out = d.call(ROOT, MANAGER, "GetDocument", "sa{sv}", verb, "0")[0]
                raw = json.loads(out)
                self.assertEqual([(e["gpu"], e["field"], e["errno"]) for e in raw["errors"]],
                                 [(index, "state", errno_name)], verb)
                # and through the CLI: the same state, table and JSON
                doc, p = self.doc(d, verb)
                self.assertNotIn("--direct", p.stderr)
                states = {g["gpu"]: g["state"] for g in doc["gpus"]}
                self.assertEqual(states[index], state)
                self.assertEqual({s for i, s in states.items() if i != index}, {"ok"})
                self.assertEqual([(e["gpu"], e["field"], e["errno"]) for e in doc["errors"]],
                                 [(index, "state", errno_name)])
                p = d.cli(verb, "-g", index)
                self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr)
                self.assertIn("GPU %d: state: " % index, p.stderr)
                self.assertEqual(p.stdout.count(marker), 1, p.stdout)

    def test_reset(self):
        with Daemon(machine="mi300x-8") as d:
            self.ctl(d, "reset", GPU1, "begin")
            self.check(d, 1, "resetting", "EBUSY", "RESET")
            # a change through amdsmid: Busy, nothing recorded
            for args in (["power", "set", "-g", 1, "--host", "500W"],
                         ["set", "-o", "500", "-g", 1],
                         ["partition", "set", "-g", 1, "--compute", "DPX"]):
                with self.subTest(change=args):
                    p = d.cli(*args, status=5)
                    self.assertIn("GPU 1 (%s): busy: a GPU reset is in progress" % GPU1, p.stderr)
                    self.assertIn("wait for the reset to end", p.stderr)
            name, msg = d.call_error(gpu_path(GPU1), IFACE_POWER, "SetSource", "string:host",
                                     "string:", "uint64:%d" % (500 * 10**6), "uint64:0")
            self.assertEqual(name, "org.amdsmi1.Error.Busy")
            self.assertIn("wait for the reset to end", msg)
            self.ctl(d, "reset", GPU1, "end")
            for verb in READ_VERBS:
                doc, _ = self.doc(d, verb)
                self.assertEqual({g["state"] for g in doc["gpus"]}, {"ok"}, verb)
                self.assertEqual(doc["errors"], [], verb)

    def test_no_driver(self):
        with Daemon(machine="mi300x-8") as d:
            self.assertEqual(d.mount.write("bus/pci/drivers/amdgpu/unbind", GPU2), 0)
            d.call(ROOT, MANAGER, "Reload")     # amdsmid sees the unbound GPU
            self.check(d, 2, "no_driver", "EOPNOTSUPP", "NO DRIVER")
            p = d.cli("power", "set", "-g", 2, "--host", "500W", status=4)
            self.assertIn("no driver is bound", p.stderr)
            self.assertIn("--reload-driver", p.stderr)

    def test_gim_host(self):
        with Daemon(machine="mi300x-gim-1vf") as d:
            p = d.cli("metric")
            self.assertEqual(p.stderr.count("\n"), 1, p.stderr)
            self.assertIn("gim exposes no hwmon and no gpu_metrics", p.stderr)
            self.assertIn("JUNCTION (°C)", p.stdout)
            direct = d.cli("metric", "--direct")
            self.assertEqual(direct.stdout.splitlines()[0], p.stdout.splitlines()[0])
            # each of amdsmid's documents carries the note: a watch says it once
            p = d.cli("metric", "-w", "0.2", "-n", "3")
            self.assertEqual(p.stdout.count("JUNCTION"), 3, p.stdout)
            self.assertEqual(p.stderr.count("gim exposes"), 1, p.stderr)
            p = d.cli("set", "-o", "500", "-g", 0, status=4)
            self.assertNotIn("effective cap", p.stdout + p.stderr)
            self.assertIn("the cap of 500 W (binds: host) is not applied, sources recorded; "
                          "gim hosts have no sysfs power path", p.stderr)


if __name__ == "__main__":
    require_daemon()
    unittest.main(verbosity=2)
