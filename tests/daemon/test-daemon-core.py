#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""amdsmid's framework on a private bus: start-up and READY=1, the object tree, Describe(),
GetMetrics(), the Gpu properties, Reload() and its authorisation (root, polkit allowing and
denying, no polkit at all), GetHistory(), malformed calls, and a clean stop."""

import json
import os
import signal
import subprocess
import time
import unittest

from daemontest import (BUS, GPU0, GPU1, IFACE_GPU, MANAGER, MI300X_BDFS, NOBODY, ROOT,
                        Daemon, gpu_path, require_daemon)


class Core(unittest.TestCase):
    def test_objects(self):
        with Daemon() as d:
            tree = d.busctl("tree", BUS, check=True).stdout
            for bdf in MI300X_BDFS:
                self.assertIn(gpu_path(bdf), tree)
            version = subprocess.run([os.environ["AMDSMID"], "--version"], capture_output=True,
                                     text=True).stdout.split()[-1]
            self.assertEqual(d.get(ROOT, MANAGER, "Version"), version)
            described = {g["bdf"]: g for g in d.describe()["gpus"]}
            for i, bdf in enumerate(MI300X_BDFS):
                path = gpu_path(bdf)
                self.assertEqual(d.get(path, IFACE_GPU, "Bdf"), bdf)
                self.assertEqual(d.get(path, IFACE_GPU, "Index"), i)
                self.assertEqual(d.get(path, IFACE_GPU, "Product"), "MI300X")
                self.assertEqual(d.get(path, IFACE_GPU, "Role"), "baremetal")
                self.assertEqual(d.get(path, IFACE_GPU, "Driver"), "amdgpu")
                self.assertEqual(d.get(path, IFACE_GPU, "Changing"), False)
                # the spelling of amdsmi list --json: 0x and 16 lower-case hex digits
                self.assertRegex(d.get(path, IFACE_GPU, "UniqueId"), r"^0x[0-9a-f]{16}$")
                self.assertEqual(d.get(path, IFACE_GPU, "UniqueId"), described[bdf]["unique_id"])
            # unprivileged readers see the same
            self.assertEqual(d.get(gpu_path(GPU1), IFACE_GPU, "Bdf", user=NOBODY), GPU1)
            # the ObjectManager lists every GPU with its interfaces
            objs = d.call(ROOT, "org.freedesktop.DBus.ObjectManager", "GetManagedObjects")[0]
            self.assertEqual(sorted(objs), sorted(gpu_path(b) for b in MI300X_BDFS))
            self.assertIn("org.amdsmi1.Gpu", objs[gpu_path(GPU0)])
            # an object that is no GPU
            p = d.busctl("get-property", BUS, ROOT + "/gpu/_30000_3a99_3a00_2e0", IFACE_GPU,
                         "Bdf", check=False)
            self.assertNotEqual(p.returncode, 0)
            self.assertIn("Unknown object", p.stderr)

    def test_describe_is_the_list_document(self):
        with Daemon() as d:
            doc = d.describe(user=NOBODY)
            self.assertEqual((doc["schema"], doc["command"]), ("amdsmi/1", "list"))
            direct = json.loads(d.cli("list", "--json", "--direct").stdout)
            strip = ("object_path", "changing")
            got = [{k: v for k, v in g.items() if k not in strip} for g in doc["gpus"]]
            self.assertEqual(got, direct["gpus"])
            self.assertEqual([g["object_path"] for g in doc["gpus"]],
                             [gpu_path(b) for b in MI300X_BDFS])
            self.assertEqual([g["changing"] for g in doc["gpus"]], [False] * 8)
            self.assertEqual(doc["daemon"]["version"], d.get(ROOT, MANAGER, "Version"))
            self.assertIsNone(doc["daemon"]["config_error"])
            # amdsmi list answers from it (the same timestamp: no new read), without amdsmid's
            # additions; with -g it reads in-process
            via = json.loads(d.cli("list", "--json", user=NOBODY).stdout)
            self.assertEqual(via["timestamp"], doc["timestamp"])
            self.assertEqual(via["gpus"], direct["gpus"])
            self.assertNotIn("daemon", via)
            table = d.cli("list").stdout.splitlines()
            self.assertEqual(len(table), 9)
            self.assertIn("0000:05:00.0", table[1])
            one = json.loads(d.cli("list", "--json", "-g", "1").stdout)
            self.assertEqual([g["bdf"] for g in one["gpus"]], [GPU1])

    def test_metrics(self):
        with Daemon() as d:
            doc = json.loads(d.call(gpu_path(GPU1), IFACE_GPU, "GetMetrics", user=NOBODY)[0])
            self.assertEqual((doc["schema"], doc["command"]), ("amdsmi/1", "metric"))
            self.assertEqual([g["bdf"] for g in doc["gpus"]], [GPU1])
            self.assertEqual(doc["gpus"][0]["gpu"], 1)
            self.assertIsInstance(doc["gpus"][0]["power"]["power_w"], (int, float))
            # every GPU in one document (one call per sample for a scraper), the same entries
            whole = json.loads(d.call(ROOT, MANAGER, "GetMetrics", user=NOBODY)[0])
            self.assertEqual((whole["schema"], whole["command"]), ("amdsmi/1", "metric"))
            self.assertEqual([g["bdf"] for g in whole["gpus"]], MI300X_BDFS)
            self.assertEqual([g["gpu"] for g in whole["gpus"]], list(range(len(MI300X_BDFS))))
            self.assertEqual(sorted(whole["gpus"][1]), sorted(doc["gpus"][0]))
            self.assertEqual(whole["errors"], [])
            name, _ = d.call_error(ROOT, MANAGER, "GetMetrics", "uint32:1")
            self.assertEqual(name, "org.freedesktop.DBus.Error.InvalidArgs")
            # a GPU unplugged: gone from the next document (after the periodic check)
            p = subprocess.run([os.environ["AMDSMI_SIM"], "ctl", "--mount", d.mount.root,
                                "unplug", GPU1], capture_output=True, text=True, timeout=60)
            self.assertEqual(p.returncode, 0, p.stderr)
            deadline = time.monotonic() + 20
            while time.monotonic() < deadline:
                whole = json.loads(d.call(ROOT, MANAGER, "GetMetrics")[0])
                if GPU1 not in [g["bdf"] for g in whole["gpus"]]:
                    break
                time.sleep(0.2)
            self.assertEqual([g["bdf"] for g in whole["gpus"]],
                             [b for b in MI300X_BDFS if b != GPU1])

    def test_reload_authorisation(self):
        with Daemon() as d:
            # root is allowed without asking polkit
            d.call(ROOT, MANAGER, "Reload")
            # polkit allows nothing: denied, with our error name
            name, msg = d.call_error(ROOT, MANAGER, "Reload", user=NOBODY)
            self.assertEqual(name, "org.amdsmi1.Error.PermissionDenied")
            self.assertIn("not authorised", msg)
            d.allow("org.amdsmi1.partition.configure")
            d.call(ROOT, MANAGER, "Reload", user=NOBODY)
            self.assertIn("configuration reloaded", d.log())

    def test_no_polkit(self):
        with Daemon(polkit=False) as d:
            d.call(ROOT, MANAGER, "Reload")
            name, msg = d.call_error(ROOT, MANAGER, "Reload", user=NOBODY)
            self.assertEqual(name, "org.amdsmi1.Error.PermissionDenied")
            self.assertIn("polkit is not running", msg)

    def test_history(self):
        with Daemon() as d:
            doc = json.loads(d.call(ROOT, MANAGER, "GetHistory", "u", 10, user=NOBODY)[0])
            self.assertEqual((doc["schema"], doc["command"], doc["entries"], doc["errors"]),
                             ("amdsmi/1", "history", [], []))
            # a change by root; the file is root's (0640): nobody reads it through amdsmid
            d.call(gpu_path(GPU1), "org.amdsmi1.Power", "SetSource", "sstt", "host", "",
                   600000000, 0)
            # a VM key beyond ASCII: the document still reaches nobody, intact
            d.call(gpu_path(GPU1), "org.amdsmi1.Power", "SetSource", "sstt", "vm", "gäst-ü",
                   700000000, 0)
            d.call(gpu_path(GPU1), "org.amdsmi1.Power", "ClearSource", "sst", "vm", "gäst-ü", 0)
            doc = json.loads(d.call(ROOT, MANAGER, "GetHistory", "u", 10, user=NOBODY)[0])
            self.assertEqual([e["change"] for e in doc["entries"]], ["power_source"] * 3)
            self.assertIn("vm:gäst-ü=700W", doc["entries"][1]["new"])
            path = os.path.join(d.state_dir, "history.jsonl")
            self.assertEqual(os.stat(path).st_mode & 0o777, 0o640)
            doc = json.loads(d.cli("history", "--json", user=NOBODY).stdout)
            self.assertEqual([(e["via"], e["uid"], e["gpu"], e["change"], e["result"])
                              for e in doc["entries"]],
                             [("amdsmid", 0, GPU1, "power_source", "ok")] * 3)
            # --direct reads the file itself: not allowed to
            p = d.cli("history", "--direct", user=NOBODY, status=6)
            self.assertIn("Permission denied", p.stderr)

    def test_malformed_calls(self):
        with Daemon() as d:
            # wrong signatures, unknown members and interfaces: standard errors, no crash
            name, _ = d.call_error(ROOT, MANAGER, "GetHistory", "string:x")
            self.assertEqual(name, "org.freedesktop.DBus.Error.InvalidArgs")
            name, _ = d.call_error(ROOT, MANAGER, "Describe", "uint32:1")
            self.assertEqual(name, "org.freedesktop.DBus.Error.InvalidArgs")
            name, _ = d.call_error(ROOT, MANAGER, "NoSuchMethod")
            self.assertEqual(name, "org.freedesktop.DBus.Error.UnknownMethod")
            name, _ = d.call_error(ROOT, "org.amdsmi1.NoSuch", "Describe")
            self.assertIn(name, ("org.freedesktop.DBus.Error.UnknownInterface",
                                 "org.freedesktop.DBus.Error.UnknownMethod"))
            name, _ = d.call_error(ROOT + "/gpu/nothing", IFACE_GPU, "GetMetrics")
            self.assertEqual(name, "org.freedesktop.DBus.Error.UnknownObject")
            # a huge string where a number goes, a huge string where a string goes
            name, _ = d.call_error(ROOT, MANAGER, "GetHistory", "string:" + "x" * 100000)
            self.assertEqual(name, "org.freedesktop.DBus.Error.InvalidArgs")
            # setting a read-only property
            p = d.busctl("set-property", BUS, gpu_path(GPU0), IFACE_GPU, "Bdf", "s", "x",
                         check=False)
            self.assertNotEqual(p.returncode, 0)
            # still alive and answering
            self.assertEqual(d.get(gpu_path(GPU0), IFACE_GPU, "Bdf"), GPU0)

    def test_stop(self):
        with Daemon() as d:
            self.assertEqual(d.stop(signal.SIGTERM), 0)
            self.assertIn("stopping", d.log())
            # the name is gone
            p = d.busctl("status", BUS, check=False)
            self.assertNotEqual(p.returncode, 0)

    def test_sighup_reload(self):
        with Daemon() as d:
            d.proc.send_signal(signal.SIGHUP)
            d.wait_ready()
            self.assertIn("configuration reloaded", d.log())

    def test_usage(self):
        p = subprocess.run([os.environ["AMDSMID"], "--bogus"], capture_output=True, text=True)
        self.assertEqual(p.returncode, 2)
        p = subprocess.run([os.environ["AMDSMID"], "extra"], capture_output=True, text=True)
        self.assertEqual(p.returncode, 2)
        self.assertIn('unexpected argument "extra"', p.stderr)
        p = subprocess.run([os.environ["AMDSMID"], "--version"], capture_output=True, text=True)
        self.assertEqual(p.returncode, 0)
        self.assertRegex(p.stdout, r"^amdsmid \d+\.\d+\.\d+\n$")


if __name__ == "__main__":
    require_daemon()
    unittest.main(verbosity=2)
