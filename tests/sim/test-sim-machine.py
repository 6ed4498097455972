#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Machine descriptions: every preset dumps to JSON that loads back into the same machine
(the same dump, the same tree), malformed descriptions are refused naming the field at fault,
and the command line's usage errors say what was wrong (exit 2; 3 for machines)."""

import json
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from simtest import PRESETS, main, sim, walk  # noqa: E402


def snapshot_tree(root):
    out = {}
    for rel, st in walk(root).items():
        full = os.path.join(root, rel)
        if os.path.islink(full):
            out[rel] = ("l", os.readlink(full))
        elif os.path.isdir(full):
            out[rel] = ("d", st.st_mode)
        else:
            with open(full, "rb") as f:
                out[rel] = ("f", st.st_mode, f.read())
    return out


class Machine(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.tmp.cleanup()

    def file(self, desc, name="m.json"):
        path = os.path.join(self.tmp.name, name)
        with open(path, "w") as f:
            f.write(desc if isinstance(desc, str) else json.dumps(desc))
        return path

    def test_list(self):
        p = sim("--list-machines", check=True)
        self.assertEqual([ln.split()[0] for ln in p.stdout.splitlines()], PRESETS)
        self.assertEqual(sim("list-machines", check=True).stdout, p.stdout)

    def test_round_trip(self):
        for name in PRESETS:
            with self.subTest(machine=name):
                text = sim("dump-machine", name, check=True).stdout
                desc = json.loads(text)
                self.assertEqual(desc["name"], name)
                path = self.file(text, name + ".json")
                self.assertEqual(sim("dump-machine", path, check=True).stdout, text)
                a = os.path.join(self.tmp.name, name + "-preset")
                b = os.path.join(self.tmp.name, name + "-file")
                sim("snapshot", a, "-m", name, "--frozen", "--seed", "5", check=True)
                sim("snapshot", b, "-m", path, "--frozen", "--seed", "5", check=True)
                self.assertEqual(snapshot_tree(a), snapshot_tree(b))

    def test_defaults(self):
        """A short description is completed from the product and the GPU's place."""
        path = self.file({"name": "two", "gpu_defaults": {"product": "MI300X"},
                          "gpus": [{"bdf": "0000:15:00.0"},
                                   {"bdf": "0000:95:00.0", "memory_partition": "NPS4",
                                    "power_cap_w": 600, "numa_node": 1}]})
        desc = json.loads(sim("dump-machine", path, check=True).stdout)
        g0, g1 = desc["gpus"]
        self.assertEqual((g0["compute_partition"], g0["memory_partition"]), ("SPX", "NPS1"))
        self.assertEqual((g1["compute_partition"], g1["memory_partition"]), ("CPX", "NPS4"))
        self.assertEqual((g0["power_cap_w"], g1["power_cap_w"]), (750, 600))
        self.assertEqual((g0["numa_node"], g1["numa_node"]), (0, 1))
        self.assertEqual(g0["hive_id"], "0x0000000000000000")
        self.assertEqual(desc["products"]["MI300X"]["device_id"], "0x74a1")

    def bad(self, desc, where, what=""):
        p = sim("dump-machine", self.file(desc))
        self.assertEqual(p.returncode, 3, p.stderr)
        self.assertIn(where, p.stderr)
        self.assertIn(what, p.stderr)
        self.assertEqual(p.stdout, "")
        self.assertEqual(len(p.stderr.splitlines()), 1, p.stderr)

    def test_errors(self):
        base = json.loads(sim("dump-machine", "mi300x-8", check=True).stdout)

        def variant(fn):
            d = json.loads(json.dumps(base))
            fn(d)
            return d

        self.bad("{", "not valid JSON")
        self.bad("[]", "a machine description is a JSON object")
        self.bad('{"gpus": []} x', "not valid JSON")
        self.bad(variant(lambda d: d.update(colour="red")), "colour: unknown key")
        self.bad(variant(lambda d: d["gpus"][3].update(colour="red")),
                 "gpus[3].colour: unknown key")
        self.bad(variant(lambda d: d["gpus"][1]["sensors"].update(fan=1)),
                 "gpus[1].sensors.fan: unknown key")
        self.bad(variant(lambda d: d["products"]["MI300X"].update(speed=3)),
                 "products.MI300X.speed: unknown key")
        self.bad(variant(lambda d: d["gpus"][0].update(kfd_users="many")),
                 "gpus[0].kfd_users: expected an integer, got string")
        self.bad(variant(lambda d: d["gpus"][2].update(in_reset=1)),
                 "gpus[2].in_reset: expected true or false")
        self.bad(variant(lambda d: d["gpus"][0].update(power_cap_w=800)),
                 "gpus[0].power_cap_w: 800 W is out of range [1, 750]")
        self.bad(variant(lambda d: d["gpus"][0].update(power_cap_w=5000)),
                 "gpus[0].power_cap_w: 5000 is out of range")
        self.bad(variant(lambda d: d["gpus"][0]["power_cap_limits_w"].update(min=800)),
                 "gpus[0].power_cap_limits_w: needs min <= default <= max")
        self.bad(variant(lambda d: d["gpus"][5].update(bdf=d["gpus"][2]["bdf"])),
                 "gpus[5].bdf: 0000:46:00.0 is also gpus[2]")
        self.bad(variant(lambda d: d["gpus"][0].update(bdf="0000:05:00")),
                 "gpus[0].bdf: \"0000:05:00\" is not a PCI address")
        self.bad(variant(lambda d: d["gpus"][0].update(bdf="0000:02:00.0")),
                 "gpus[0].bdf: bus 02 leaves no room")
        self.bad(variant(lambda d: d["gpus"][1].update(bdf="0000:06:00.0")),
                 "gpus[1].bdf: PCI address 0000:04:00.0 is taken")
        self.bad(variant(lambda d: d["gpus"][0].update(product="MI999X")),
                 "gpus[0].product: \"MI999X\" is not a product")
        self.bad(variant(lambda d: d["gpus"][0].update(compute_partition="TPX")),
                 "gpus[0].compute_partition: TPX is not available with NPS1")
        self.bad(variant(lambda d: d["gpus"][0].update(memory_partition="NPS4",
                                                        compute_partition="SPX")),
                 "gpus[0].compute_partition: SPX is not available with NPS4")
        self.bad(variant(lambda d: d["gpus"][0].update(memory_partition="NPS8")),
                 "gpus[0].memory_partition: NPS8 is not among the supported modes")
        self.bad(variant(lambda d: d["gpus"][0].update(memory_partition="NPS5")),
                 "gpus[0].memory_partition: \"NPS5\" is not a memory partition mode")
        self.bad(variant(lambda d: d["gpus"][0].update(memory_partition_requested="NPS4")),
                 "share XGMI hive")
        self.bad(variant(lambda d: d["gpus"][0].update(compute_partition="XPX")),
                 "gpus[0].compute_partition: \"XPX\" is not one of SPX DPX TPX QPX CPX")
        self.bad(variant(lambda d: d["gpus"][0].update(role="host-pf")),
                 "gpus[0].driver: a host-pf GPU is bound to gim or to none")
        self.bad(variant(lambda d: d["gpus"][0].update(numa_node=2)),
                 "gpus[0].numa_node: 2, but the machine has 2 NUMA nodes")
        self.bad(variant(lambda d: d["gpus"][0].update(hive_id="12")),
                 "gpus[0].hive_id: \"12\" is not a 64-bit hexadecimal number")
        self.bad(variant(lambda d: d["gpus"][0].update(gpu_metrics_revision=10)),
                 "gpus[0].gpu_metrics_revision: 10 is out of range [3, 9]")
        self.bad(variant(lambda d: d["kernel"].update(gpu_metrics_revision=2)),
                 "kernel.gpu_metrics_revision: 2 is out of range [3, 9]")
        self.bad(variant(lambda d: d["gpus"][0].update(gpu_metrics_layout="6.18")),
                 "gpus[0].gpu_metrics_layout: \"6.18\" is not one of 6.19 7.0 7.1")
        self.bad(variant(lambda d: d["kernel"].update(gpu_metrics_layout=7)),
                 "kernel.gpu_metrics_layout")
        self.bad(variant(lambda d: d["gpus"][0].update(ppt1_cap_w=1000)),
                 "gpus[0].ppt1_cap_w: a MI300X has no PPT1 limit")
        self.bad(variant(lambda d: d["kernel"].update(nps_compat="newest")),
                 "kernel.nps_compat: \"newest\" is not one of older newer")
        self.bad(variant(lambda d: d["products"]["MI300X"].update(xcc=7)),
                 "products.MI300X.xcc: 7 XCCs")
        self.bad(variant(lambda d: d["products"].update(MI400X={"xcc": 8})),
                 "products.MI400X: \"MI400X\" is not a built-in product; name one as \"base\"")
        self.bad(variant(lambda d: d.update(gpus={})), "gpus: expected an array")
        self.bad(variant(lambda d: d.update(gpu_defaults={"bdf": "0000:05:00.0"})),
                 "gpu_defaults.bdf")
        self.bad(variant(lambda d: d.update(name="My Machine")), "name: \"My Machine\"")
        p = sim("dump-machine", "no-such-machine")
        self.assertEqual(p.returncode, 3)
        self.assertIn("no-such-machine: no such machine", p.stderr)
        p = sim("dump-machine", os.path.join(self.tmp.name, "missing.json"))
        self.assertEqual(p.returncode, 3)
        self.assertIn("No such file or directory", p.stderr)

    def test_custom_product(self):
        desc = {"name": "custom", "products": {"MI308X": {"base": "MI300X", "device_id": "0x74a2",
                                                          "xcc": 4, "cu_per_xcc": 20}},
                "gpus": [{"bdf": "0000:15:00.0", "product": "MI308X"}]}
        text = sim("dump-machine", self.file(desc), check=True).stdout
        d = json.loads(text)
        self.assertEqual(d["products"]["MI308X"]["xcc"], 4)
        self.assertEqual(sim("dump-machine", self.file(text, "again.json"), check=True).stdout,
                         text)
        root = os.path.join(self.tmp.name, "snap")
        sim("snapshot", root, "-m", self.file(desc), "--frozen", check=True)
        with open(os.path.join(root, "bus/pci/devices/0000:15:00.0",
                               "available_compute_partition")) as f:
            self.assertEqual(f.read(), "SPX, DPX, CPX\n")

    def test_usage(self):
        for args, what in (([], "a command is needed"),
                           (["fly"], "fly: unknown command"),
                           (["mount"], "mount DIR: one directory"),
                           (["snapshot", "a", "b"], "snapshot DIR: one directory"),
                           (["run"], "run: no command"),
                           (["run", "true"], "run: unexpected \"true\""),
                           (["mount", "/tmp", "--", "x"], "\"--\" belongs to run"),
                           (["--seed", "x", "mount", "/tmp"], "--seed x: not a number"),
                           (["--kfd-users", "0000:05:00.0", "mount", "/tmp"],
                            "expected BDF=VALUE"),
                           (["--inject-switch-error", "0000:05:00.0=EWHAT", "mount", "/tmp"],
                            "\"EWHAT\" is not an errno"),
                           (["--kfd-users", "0000:99:00.0=1", "snapshot",
                             os.path.join(self.tmp.name, "x")], "0000:99:00.0: no GPU"),
                           (["mount", "/nonexistent-dir"], "/nonexistent-dir: No such file"),
                           (["--bogus"], "unrecognized option")):
            p = sim(*args)
            self.assertEqual(p.returncode, 2, "%s: %s" % (args, p.stderr))
            self.assertIn(what, p.stderr, args)
        p = sim("--help", check=True)
        self.assertIn("Exit status:", p.stdout)
        self.assertRegex(sim("--version", check=True).stdout, r"^amdsmi-sim \d")
        p = sim("-m", "nope", "snapshot", os.path.join(self.tmp.name, "y"))
        self.assertEqual(p.returncode, 3)
        empty = os.path.join(self.tmp.name, "empty")
        os.mkdir(empty)
        self.assertEqual(sim("snapshot", empty).returncode, 0)
        p = sim("snapshot", empty)
        self.assertEqual(p.returncode, 2)
        self.assertIn("not empty", p.stderr)
        self.assertFalse(os.path.exists(os.path.join(self.tmp.name, "x")))


if __name__ == "__main__":
    main()
