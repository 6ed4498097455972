#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""The repository's CLI reads every built-in machine through the mounted simulator
(AMDSMI_SYSFS_ROOT): list, static and metric --json succeed, report every GPU and validate
against the amdsmi/1 JSON Schema."""

import json
import os
import subprocess
import sys
import unittest

import jsonschema

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from simtest import CLI, PRESETS, SCHEMA, Mount, main  # noqa: E402


class Cli(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        with open(SCHEMA) as f:
            cls.validator = jsonschema.Draft202012Validator(json.load(f))

    def run_cli(self, m, *args):
        env = dict(os.environ, AMDSMI_SYSFS_ROOT=m.root)
        env.pop("AMDSMI_DEV_ROOT", None)
        p = subprocess.run([CLI] + list(args), capture_output=True, text=True, env=env,
                           timeout=60)
        self.assertEqual(p.returncode, 0, "%s: %s" % (args, p.stderr))
        doc = json.loads(p.stdout)
        errors = sorted(self.validator.iter_errors(doc), key=str)
        self.assertEqual([e.message for e in errors], [], args)
        return doc

    def test_presets(self):
        for name in PRESETS:
            with self.subTest(machine=name), Mount("-m", name, "--seed", "2") as m:
                count = 4 if name.startswith("mi300a") else 8
                doc = self.run_cli(m, "list", "--json")
                self.assertEqual(len(doc["gpus"]), count)
                self.assertEqual(doc["errors"], [])
                for g in doc["gpus"]:
                    self.assertEqual((g["driver"], g["compute_mode"], g["partition_count"]),
                                     ("amdgpu", "SPX", 1))
                doc = self.run_cli(m, "metric", "--json")
                self.assertEqual(len(doc["gpus"]), count)
                for g in doc["gpus"]:
                    self.assertIsNotNone(g["gpu_metrics"]["energy_j"])
                    self.assertGreater(g["power"]["power_w"], 0)
                    self.assertTrue(g["power"]["cap_writable"])
                    self.assertEqual(g["power"]["ppt1"] is not None, name.startswith("mi35"))
                doc = self.run_cli(m, "static", "--json")
                self.assertEqual(len(doc["gpus"]), count)


if __name__ == "__main__":
    main()
