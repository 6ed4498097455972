#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""The repository's CLI reads every built-in machine through the mounted simulator
(AMDSMI_SYSFS_ROOT): list, static and metric --json succeed, report every GPU and validate
against the amdsmi/1 JSON Schema; on the SR-IOV machines with the roles of spec §7 (host-pf,
vf, vf-guest-1vf, vf-guest-multi)."""

import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from simtest import BAREMETAL_PRESETS, CLI, SRIOV_PRESETS, Mount, SchemaCase, main  # noqa: E402


class Cli(SchemaCase):
    def run_cli(self, m, *args):
        env = dict(os.environ, AMDSMI_SYSFS_ROOT=m.root)
        env.pop("AMDSMI_DEV_ROOT", None)
        p = subprocess.run([CLI] + list(args), capture_output=True, text=True, env=env,
                           timeout=60)
        self.assertEqual(p.returncode, 0, "%s: %s" % (args, p.stderr))
        doc = json.loads(p.stdout)
        self.assert_valid(doc, "amdsmi %s" % " ".join(args))
        return doc

    def test_presets(self):
        for name in BAREMETAL_PRESETS + ["mi300x-sriov"]:   # bare metal at load
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

    def test_xgmi_links_one_length(self):
        """The simulated tables leave the last link without data (all ones) but with a status
        (2, not available): every per-link array still has one entry per link."""
        for name in ("mi300x-8", "mi300x-8-dkms", "mi355x-8"):
            with self.subTest(machine=name), Mount("-m", name, "--seed", "2") as m:
                for g in self.run_cli(m, "metric", "--json")["gpus"]:
                    x = g["gpu_metrics"]["xgmi"]
                    self.assertEqual(x["links"], 8)
                    for k in ("read_data_kb", "write_data_kb", "link_status", "link_state"):
                        self.assertEqual(len(x[k]), 8, k)
                    self.assertIsNone(x["read_data_kb"][7])
                    self.assertEqual((x["link_status"][7], x["link_state"][7]), (2, "n/a"))
                    self.assertEqual(x["link_state"][0], "up")

    def test_vf_driver_none(self):
        """An unbound VF's driver is "none" in list, static (driver and driver_name), sriov."""
        with Mount("-m", "mi300x-gim-1vf") as m:
            vf = self.run_cli(m, "sriov", "--json")["gpus"][0]["vfs"][0]
            self.assertEqual(vf["driver"], "none")
            g = self.run_cli(m, "list", "--json", "-g", vf["bdf"])["gpus"][0]
            self.assertEqual(g["driver"], "none")
            g = self.run_cli(m, "static", "--json", "-g", vf["bdf"])["gpus"][0]
            self.assertEqual((g["driver"], g["driver_name"]), ("none", "none"))


    def test_sriov_presets(self):
        """PFs under gim numbered before their VFs (physfn), a VF in a VM, and the synthetic
        host whose PF turns host-pf once it has VFs, and whose other GPUs keep their numbers."""
        roles = {
            "mi300x-gim-1vf": ["host-pf"] * 8 + ["vf"] * 8,
            "mi300x-gim-8vf": ["host-pf"] * 8 + ["vf"] * 64,
            "mi300x-guest-1vf": ["vf-guest-1vf"],
            "mi300x-guest-multivf": ["vf-guest-multi"],
        }
        self.assertEqual(sorted(roles), sorted(set(SRIOV_PRESETS) - {"mi300x-sriov"}))
        for name, want in roles.items():
            with self.subTest(machine=name), Mount("-m", name, "--seed", "2") as m:
                vf_driver = "vfio-pci" if name == "mi300x-gim-8vf" else "none"
                drivers = {"host-pf": "gim", "vf": vf_driver, "vf-guest-1vf": "amdgpu",
                           "vf-guest-multi": "amdgpu"}
                doc = self.run_cli(m, "list", "--json")
                self.assertEqual(doc["errors"], [])
                self.assertEqual([g["role"] for g in doc["gpus"]], want)
                for g in doc["gpus"]:
                    self.assertEqual(g["driver"], drivers[g["role"]], g["bdf"])
                    self.assertEqual(g["product"],
                                     "MI300X" if g["role"] == "host-pf" else "MI300X VF")
                doc = self.run_cli(m, "static", "--json")
                self.assertEqual([g["role"] for g in doc["gpus"]], want)
                for g in doc["gpus"]:
                    self.assertEqual(g["is_vf"], g["role"] != "host-pf")
                    # a VF's PF is the function 0 of its slot 0 (stride 1, offset 16)
                    pf = g["bdf"][:8] + "00.0" if g["role"] == "vf" else None
                    self.assertEqual(g["physfn_bdf"], pf)
                    guest = g["role"].startswith("vf-guest")
                    self.assertEqual(g["render_minor"], 128 if guest else None)
                    self.assertEqual(g["fru"]["product_name"], None)
                bdfs = [g["bdf"] for g in doc["gpus"]]
                pfs = [b for b, r in zip(bdfs, want) if r == "host-pf"]
                vfs = [b for b, r in zip(bdfs, want) if r == "vf"]
                self.assertEqual((pfs, vfs), (sorted(pfs), sorted(vfs)))
                doc = self.run_cli(m, "metric", "--json")
                self.assertEqual(len(doc["gpus"]), len(want))
                if name == "mi300x-guest-1vf":
                    power = doc["gpus"][0]["power"]
                    self.assertEqual((power["cap_w"], power["cap_writable"]), (750, False))
                    self.assertIsNotNone(doc["gpus"][0]["gpu_metrics"])
                if name == "mi300x-guest-multivf":
                    self.assertIsNone(doc["gpus"][0]["power"]["cap_w"])
                    self.assertIsNone(doc["gpus"][0]["gpu_metrics"])
        with Mount("-m", "mi300x-sriov", "--seed", "2") as m:
            self.assertEqual(m.write("bus/pci/devices/0000:26:00.0/sriov_numvfs", "2"), 0)
            doc = self.run_cli(m, "list", "--json")
            got = [(g["gpu"], g["bdf"], g["role"]) for g in doc["gpus"]]
            self.assertEqual(got[:3] + got[7:],
                             [(0, "0000:05:00.0", "baremetal"), (1, "0000:26:00.0", "host-pf"),
                              (2, "0000:46:00.0", "baremetal"), (7, "0000:e5:00.0", "baremetal"),
                              (8, "0000:26:02.0", "vf"), (9, "0000:26:02.1", "vf")])
            self.assertEqual(len(doc["gpus"]), 10)
            doc = self.run_cli(m, "static", "--json")
            self.assertEqual(doc["gpus"][8]["physfn_bdf"], "0000:26:00.0")


if __name__ == "__main__":
    main()
