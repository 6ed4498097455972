#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""amdsmid.conf as amdsmid uses it: applied before READY=1, a refused file (at start and on
Reload), SIGHUP and Reload applying only what changed, a GPU that is unplugged and plugged
back getting the desired state again, `amdsmi apply --dry-run`, `amdsmi apply` and
`amdsmi reload`, and a change interrupted by SIGKILL completed at the next start."""

import json
import os
import signal
import subprocess
import time
import unittest

from daemontest import (CLI, GPU0, GPU1, IFACE_GPU, IFACE_PARTITION, MANAGER, NOBODY, ROOT, SIM,
                        Daemon, gpu_path, require_daemon, wait_until)

IFACE = IFACE_PARTITION


def ctl(d, *args):
    p = subprocess.run([SIM, "ctl", "--mount", d.mount.root] + [str(a) for a in args],
                       capture_output=True, text=True, timeout=30)
    if p.returncode != 0:
        raise AssertionError("amdsmi-sim ctl %s: %s" % (" ".join(map(str, args)), p.stderr))
    return p.stdout


class Desired(unittest.TestCase):
    def test_applied_before_ready(self):
        conf = "[gpu %s]\ncompute_mode = CPX\n" % GPU0
        with Daemon(config=conf) as d:
            # READY=1 came only after the switch: the mode is there at once
            self.assertEqual(d.get(gpu_path(GPU0), IFACE, "ComputeMode"), "CPX")
            self.assertEqual(d.get(gpu_path(GPU1), IFACE, "ComputeMode"), "SPX")
            h = [e for e in d.history() if e["change"] == "compute_mode"]
            self.assertEqual([(e["gpu"], e["old"], e["new"], e["result"], e["via"], e["uid"])
                              for e in h],
                             [(GPU0, "SPX", "CPX", "ok", "amdsmid", 0)])

    def test_refused_file(self):
        with Daemon(config="[gpu]\ncompute = CPX\n") as d:
            doc = d.describe()
            self.assertIn('amdsmid.conf:2: unknown key "compute"', doc["daemon"]["config_error"])
            self.assertIn("configuration refused", d.log())
            # nothing desired: nothing changed
            self.assertEqual(d.get(gpu_path(GPU0), IFACE, "ComputeMode"), "SPX")
            # fixed on disk; Reload takes it
            d.write_config("[gpu %s]\ncompute_mode = DPX\n" % GPU1)
            d.call(ROOT, MANAGER, "Reload")
            wait_until("DPX on GPU 1",
                     lambda: d.get(gpu_path(GPU1), IFACE, "ComputeMode") == "DPX")
            self.assertIsNone(d.describe()["daemon"]["config_error"])
            # broken again: Reload answers the error, the previous file stays in force
            d.write_config("[gpu %s]\ncompute_mode = XPX\n" % GPU1)
            name, msg = d.call_error(ROOT, MANAGER, "Reload")
            self.assertEqual(name, "org.amdsmi1.Error.InvalidArgument")
            self.assertIn('bad compute_mode "XPX"', msg)
            self.assertIn('bad compute_mode "XPX"', d.describe()["daemon"]["config_error"])
            self.assertEqual(d.get(gpu_path(GPU1), IFACE, "ComputeMode"), "DPX")
            # every kind of refusal is InvalidArgument (a value out of range, a file that is
            # not a regular file), and amdsmi reload and apply --dry-run exit 2
            cpath = os.path.join(d.config_dir, "amdsmid.conf")
            for text in ("[gpu]\npower_cap = 0.5W\n", "[daemon]\npoll_interval_ms = 0\n",
                         None):
                os.unlink(cpath)
                if text is None:
                    os.mkfifo(cpath)
                else:
                    d.write_config(text)
                name, msg = d.call_error(ROOT, MANAGER, "Reload")
                self.assertEqual(name, "org.amdsmi1.Error.InvalidArgument", (text, msg))
                for args in (["reload"], ["apply", "--dry-run"]):
                    p = subprocess.run([CLI] + args, env=d.env(), capture_output=True,
                                       text=True, timeout=60)
                    self.assertEqual(p.returncode, 2, (text, args, p.stderr))
                self.assertEqual(d.get(gpu_path(GPU1), IFACE, "ComputeMode"), "DPX")
            os.unlink(cpath)

    def test_reload_applies_changed_keys_only(self):
        conf = "[gpu %s]\ncompute_mode = DPX\n" % GPU0
        with Daemon(config=conf) as d:
            self.assertEqual(d.get(gpu_path(GPU0), IFACE, "ComputeMode"), "DPX")
            # an admin switches GPU 0 at run time: a reload of an unchanged key keeps it
            d.cli("partition", "set", "-g", 0, "--compute", "QPX")
            self.assertEqual(d.get(gpu_path(GPU0), IFACE, "ComputeMode"), "QPX")
            d.write_config(conf + "[gpu %s]\ncompute_mode = CPX\n" % GPU1)
            d.proc.send_signal(signal.SIGHUP)
            wait_until("CPX on GPU 1",
                     lambda: d.get(gpu_path(GPU1), IFACE, "ComputeMode") == "CPX")
            self.assertEqual(d.get(gpu_path(GPU0), IFACE, "ComputeMode"), "QPX")
            # amdsmi apply: the whole file, now (root; then nobody allowed by polkit)
            p = d.cli("apply")
            self.assertIn("amdsmid applies amdsmid.conf", p.stdout)
            wait_until("DPX on GPU 0 again",
                     lambda: d.get(gpu_path(GPU0), IFACE, "ComputeMode") == "DPX")
            p = d.cli("apply", user=NOBODY, status=6)
            self.assertIn("not authorised", p.stderr)
            d.allow("org.amdsmi1.partition.configure")
            d.cli("reload", user=NOBODY)

    def test_dry_run_plan(self):
        conf = ("[gpu]\npower_cap = 600W\n[gpu %s]\ncompute_mode = CPX\nmemory_mode = NPS4\n"
                "num_vfs = 2\n[gpu %s]\ncompute_mode = TPX\n" % (GPU0, GPU1))
        with Daemon(config=conf) as d:
            # the plan of what is left to do: the daemon applied what it could
            doc = json.loads(d.cli("apply", "--dry-run", "--json", "-g", "0,1", user=NOBODY,
                                   status=7).stdout)
            rows = {(r["bdf"], r["setting"]): (r["now"], r["desired"], r["action"])
                    for r in doc["settings"]}
            self.assertEqual(rows[(GPU0, "compute_mode")], ("CPX", "CPX", "none"))
            self.assertEqual(rows[(GPU0, "memory_mode")][2], "reload-required")
            # amdsmid never changes a VF count on its own
            self.assertEqual(rows[(GPU0, "num_vfs")], (0, 2, "manual"))
            self.assertEqual(rows[(GPU1, "compute_mode")][2], "invalid")  # no TPX on MI300X
            self.assertEqual(rows[(GPU0, "power_cap")], (600, 600, "none"))
            self.assertEqual(doc["exit_code"], 7)
            self.assertIn("config", doc)
            # every document of apply and reload is valid amdsmi/1
            import jsonschema
            with open(os.environ["AMDSMI_SCHEMA"]) as f:
                validator = jsonschema.Draft202012Validator(json.load(f))
            docs = [doc]
            for args in (["apply", "--json"], ["reload", "--json"]):
                out = d.cli(*args).stdout
                self.assertTrue(out.strip(), args)  # --json prints one document
                docs.append(json.loads(out))
                self.assertEqual((docs[-1]["command"], docs[-1]["exit_code"]), (args[0], 0))
            for x in docs:
                self.assertEqual([e.message[:200] for e in validator.iter_errors(x)], [])
            # apply applies the whole file: a selection is refused, not ignored
            for args in (["apply", "-g", "99"], ["apply", "-g", "0"], ["reload", "-g", "0"]):
                p = d.cli(*args, status=2)
                self.assertIn("-g", p.stderr)
            d.cli("apply", "--dry-run", "-g", "99", status=3)

    def test_replug(self):
        conf = "[gpu %s]\ncompute_mode = CPX\n" % GPU1
        with Daemon(config=conf) as d:
            self.assertEqual(d.get(gpu_path(GPU1), IFACE, "ComputeMode"), "CPX")
            ctl(d, "unplug", GPU1)
            wait_until("GPU 1 removed", lambda: gpu_path(GPU1) not in
                     d.call(ROOT, "org.freedesktop.DBus.ObjectManager", "GetManagedObjects")[0])
            ctl(d, "replug", GPU1)
            # back with the driver's default mode, then the desired one
            wait_until("GPU 1 back in CPX", lambda: self._mode(d, GPU1) == "CPX", timeout=40)

    @staticmethod
    def _mode(d, bdf):
        p = d.busctl("get-property", "org.amdsmi1", gpu_path(bdf), IFACE, "ComputeMode",
                     check=False)
        return json.loads(p.stdout)["data"] if p.returncode == 0 else None

    def test_sigterm_finishes_the_running_change(self):
        with Daemon() as d:
            ctl(d, "switch-time", GPU0, 2000)
            path = gpu_path(GPU0)
            cmd = ["busctl", "--system", "--timeout=60s", "call", "org.amdsmi1", path, IFACE,
                   "SetComputeMode", "st"]
            first = subprocess.Popen(cmd + ["CPX", "0"], env=d.env(), stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True)
            wait_until("the first change running",
                     lambda: d.get(path, IFACE_GPU, "Changing") is True)
            second = subprocess.Popen(cmd + ["DPX", "0"], env=d.env(), stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE, text=True)
            time.sleep(0.5)
            self.assertEqual(d.stop(signal.SIGTERM), 0)
            out, err = first.communicate(timeout=60)
            self.assertEqual(first.returncode, 0, err)
            out, err = second.communicate(timeout=60)
            self.assertNotEqual(second.returncode, 0)
            self.assertIn("amdsmid is stopping; nothing was changed", err)
            # the first switch completed; the second never started
            self.assertEqual(d.mount.value(d.mount.gpu(GPU0, "current_compute_partition")),
                             "CPX")

    def test_sigkill_mid_change(self):
        conf = "[gpu %s]\ncompute_mode = CPX\n" % GPU0
        with Daemon(config=conf, start=False) as d:
            ctl(d, "switch-time", GPU0, 3000)
            d.start(wait=False)
            # the switch is under way (an intent record exists): kill the daemon
            intent_dir = os.path.join(d.state_dir, "intent")
            wait_until("an intent record", lambda: os.path.isdir(intent_dir) and
                     os.listdir(intent_dir), timeout=20)
            d.proc.send_signal(signal.SIGKILL)
            d.proc.wait(10)
            d.start()
            self.assertEqual(d.get(gpu_path(GPU0), IFACE, "ComputeMode"), "CPX")
            self.assertIn("interrupted change compute_mode", d.log())
            self.assertEqual(os.listdir(intent_dir), [])
            self.assertEqual([(g, new) for g, _, new, _, _ in d.recoveries()],
                             [(GPU0, "recovered")])


if __name__ == "__main__":
    require_daemon()
    unittest.main(verbosity=2)
