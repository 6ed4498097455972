#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""org.amdsmi1.Manager.GetGpuByBdf(s) and GetGpuByIndex(u): the object of a GPU without
typing its sd_bus_path_encode'd path. Every address form amdsmi -g takes (full, short, either
case), the same index as the Index property and Describe(), VFs, NotFound naming what exists,
InvalidArgument naming the argument, unprivileged callers, a GPU that goes, and busctl as an
operator types it."""

import os
import subprocess
import time
import unittest

from daemontest import (BUS, GPU0, GPU1, IFACE_GPU, MANAGER, MI300X_BDFS, NOBODY, ROOT,
                        Daemon, gpu_path, require_daemon)

ALL_LISTED = "GPUs: " + ", ".join(MI300X_BDFS)


class Lookup(unittest.TestCase):
    def by_bdf(self, d, bdf, user=None):
        (path,) = d.call(ROOT, MANAGER, "GetGpuByBdf", "s", bdf, user=user)
        return path

    def by_index(self, d, index, user=None):
        (path,) = d.call(ROOT, MANAGER, "GetGpuByIndex", "u", index, user=user)
        return path

    def test_found(self):
        with Daemon() as d:
            doc = d.describe()
            self.assertEqual(len(doc["gpus"]), len(MI300X_BDFS))
            for g in doc["gpus"]:
                bdf, index = g["bdf"], g["gpu"]
                path = self.by_bdf(d, bdf)
                # the object whose Bdf is that address, the one Describe() names
                self.assertEqual(path, gpu_path(bdf))
                self.assertEqual(path, g["object_path"])
                self.assertEqual(d.get(path, IFACE_GPU, "Bdf"), bdf)
                # by index: the same object, whose Index is that index
                self.assertEqual(self.by_index(d, index), path)
                self.assertEqual(d.get(path, IFACE_GPU, "Index"), index)
            # the forms amdsmi -g takes: short, upper case, both, fewer digits
            for form in ("a6:00.0", "0000:A6:00.0", "A6:00.0", "0:a6:0.0"):
                with self.subTest(form=form):
                    self.assertEqual(self.by_bdf(d, form), gpu_path("0000:a6:00.0"))
            # a read: no polkit, open to every user
            self.assertEqual(self.by_bdf(d, "26:00.0", user=NOBODY), gpu_path(GPU1))
            self.assertEqual(self.by_index(d, 0, user=NOBODY), gpu_path(GPU0))

    def test_not_found(self):
        with Daemon() as d:
            name, msg = d.call_error(ROOT, MANAGER, "GetGpuByBdf", "string:99:00.0")
            self.assertEqual(name, "org.amdsmi1.Error.NotFound")
            self.assertEqual(msg, "no GPU 0000:99:00.0 (%s)" % ALL_LISTED)
            # a function of an existing device is no GPU either
            name, msg = d.call_error(ROOT, MANAGER, "GetGpuByBdf", "string:0000:05:00.1")
            self.assertEqual(name, "org.amdsmi1.Error.NotFound")
            self.assertTrue(msg.startswith("no GPU 0000:05:00.1 (GPUs: 0000:05:00.0, "), msg)
            for index in (8, 9, 4294967295):
                with self.subTest(index=index):
                    name, msg = d.call_error(ROOT, MANAGER, "GetGpuByIndex",
                                             "uint32:%d" % index)
                    self.assertEqual(name, "org.amdsmi1.Error.NotFound")
                    self.assertEqual(msg, "no GPU index %d (8 GPUs: 0-7)" % index)

    def test_malformed(self):
        with Daemon() as d:
            for bad in ("", "garbage", "0000:05:00", "05:00.8", "05:20.0", "005:00.0",
                        "1:2:3:4.0", "0000:05:00.0,0000:26:00.0", "all", "0000:05:00.0 "):
                with self.subTest(bdf=bad):
                    name, msg = d.call_error(ROOT, MANAGER, "GetGpuByBdf", "string:" + bad)
                    self.assertEqual(name, "org.amdsmi1.Error.InvalidArgument")
                    self.assertEqual(msg, "bdf \"%s\" is not a PCI address (DDDD:BB:DD.F or "
                                     "BB:DD.F, hex)" % bad)
            # an index where an address belongs: pointed to the other method
            name, msg = d.call_error(ROOT, MANAGER, "GetGpuByBdf", "string:3")
            self.assertEqual(name, "org.amdsmi1.Error.InvalidArgument")
            self.assertIn("bdf \"3\" is not a PCI address", msg)
            self.assertIn("GetGpuByIndex takes an index", msg)
            # the wrong signature: D-Bus's own error
            name, _ = d.call_error(ROOT, MANAGER, "GetGpuByIndex", "string:3")
            self.assertEqual(name, "org.freedesktop.DBus.Error.InvalidArgs")

    def test_vfs(self):
        """Whatever Describe() lists as a GPU object is found by its address: VFs too."""
        with Daemon(machine="mi300x-sriov") as d:
            vfs = d.with_vfs(GPU0, 2)
            deadline = time.monotonic() + 20
            while time.monotonic() < deadline:
                doc = d.describe()
                if set(vfs) <= {g["bdf"] for g in doc["gpus"]}:
                    break
                time.sleep(0.2)
            listed = {g["bdf"]: g for g in doc["gpus"]}
            for vf in vfs:
                with self.subTest(vf=vf):
                    self.assertIn(vf, listed)
                    path = self.by_bdf(d, vf.upper()[5:])
                    self.assertEqual(path, listed[vf]["object_path"])
                    self.assertEqual(d.get(path, IFACE_GPU, "Bdf"), vf)
                    self.assertEqual(d.get(path, IFACE_GPU, "Role"), "vf")
                    self.assertEqual(self.by_index(d, listed[vf]["gpu"]), path)
            n = len(doc["gpus"])
            name, msg = d.call_error(ROOT, MANAGER, "GetGpuByIndex", "uint32:%d" % n)
            self.assertEqual((name, msg), ("org.amdsmi1.Error.NotFound",
                                           "no GPU index %d (%d GPUs: 0-%d)" % (n, n, n - 1)))

    def test_gpu_gone(self):
        with Daemon() as d:
            p = subprocess.run([os.environ["AMDSMI_SIM"], "ctl", "--mount", d.mount.root,
                                "unplug", GPU1], capture_output=True, text=True, timeout=60)
            self.assertEqual(p.returncode, 0, p.stderr)
            deadline = time.monotonic() + 20
            while time.monotonic() < deadline:
                try:
                    self.by_bdf(d, GPU1)
                except Exception:
                    break
                time.sleep(0.2)
            name, msg = d.call_error(ROOT, MANAGER, "GetGpuByBdf", "string:" + GPU1)
            rest = [b for b in MI300X_BDFS if b != GPU1]
            self.assertEqual((name, msg), ("org.amdsmi1.Error.NotFound",
                                           "no GPU %s (GPUs: %s)" % (GPU1, ", ".join(rest))))
            # the indexes follow the enumeration, as amdsmi list and Index show them
            doc = d.describe()
            self.assertEqual([g["bdf"] for g in doc["gpus"]], rest)
            for g in doc["gpus"]:
                self.assertEqual(self.by_index(d, g["gpu"]), gpu_path(g["bdf"]))
            name, msg = d.call_error(ROOT, MANAGER, "GetGpuByIndex", "uint32:7")
            self.assertEqual((name, msg), ("org.amdsmi1.Error.NotFound",
                                           "no GPU index 7 (7 GPUs: 0-6)"))

    def test_busctl_as_typed(self):
        """What amdsmid(8)'s EXAMPLES show, without --json: busctl's own text."""
        with Daemon() as d:
            def run(*args, check=True):
                p = subprocess.run(["busctl", "--system"] + list(args), env=d.env(),
                                   capture_output=True, text=True, timeout=60)
                if check:
                    self.assertEqual(p.returncode, 0, p.stderr)
                return p

            out = run("call", BUS, ROOT, MANAGER, "GetGpuByBdf", "s", "c6:00.0").stdout
            self.assertEqual(out, 'o "%s"\n' % gpu_path("0000:c6:00.0"))
            path = out.split('"')[1]
            out = run("get-property", BUS, path, IFACE_GPU, "Bdf").stdout
            self.assertEqual(out, 's "0000:c6:00.0"\n')
            out = run("call", BUS, ROOT, MANAGER, "GetGpuByIndex", "u", "6").stdout
            self.assertEqual(out, 'o "%s"\n' % path)
            p = run("call", BUS, ROOT, MANAGER, "GetGpuByBdf", "s", "99:00.0", check=False)
            self.assertNotEqual(p.returncode, 0)
            self.assertIn("no GPU 0000:99:00.0 (GPUs: 0000:05:00.0, ", p.stderr)
            p = run("call", BUS, ROOT, MANAGER, "GetGpuByIndex", "u", "9", check=False)
            self.assertNotEqual(p.returncode, 0)
            self.assertIn("no GPU index 9 (8 GPUs: 0-7)", p.stderr)


if __name__ == "__main__":
    require_daemon()
    unittest.main(verbosity=2)
