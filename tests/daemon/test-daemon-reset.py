#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""org.amdsmi1.Gpu.Reset / ResetWithTimeout of amdsmid, and amdsmi reset -G through it.

Root allowed, an unprivileged caller denied until polkit allows org.amdsmi1.gpu.reset, a
dry run for anyone; the whole hive reset once; the power cap the reset returned to its
default applied again by amdsmid; KFD users refused unless forced; VFs in use by a VM refused;
a partition change in flight on a GPU of the hive serialised before the reset; history
records; the health verdict's recent reset with its PropertiesChanged and the KFD events'
Health.Event signals; a failing reset's error and document; the CLI's document as in-process.
"""
import json
import os
import subprocess
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from daemontest import (BUS, GPU0, GPU1, IFACE_GPU, MANAGER, MI300X_BDFS, NOBODY, ROOT,  # noqa: E402
                        Daemon, gpu_path, require_daemon, wait_until)

G0 = gpu_path(GPU0)
ACTION = "org.amdsmi1.gpu.reset"
HEALTH = "org.amdsmi1.Health"
DRY_RUN, FORCE = 1, 2
W = 1000000
UUID1 = "c7a5fdbd-cdaf-9455-926a-d65c16db1809"


def counts(d):
    return {g["bdf"]: g["reset"]["count"]
            for g in json.loads(d.ctl("dump").stdout)["gpus"]}


def schema_errors(test, doc):
    import jsonschema
    with open(os.environ["AMDSMI_SCHEMA"]) as f:
        schema = json.load(f)
    errors = [("/".join(map(str, e.absolute_path)), e.message[:200])
              for e in jsonschema.Draft202012Validator(schema).iter_errors(doc)]
    test.assertEqual(errors, [], "not a valid amdsmi/1 document: %s" % json.dumps(doc)[:2000])


class Monitor:
    """busctl monitor of amdsmid's messages."""

    def __init__(self, d):
        self.d = d

    def __enter__(self):
        self.out = open(os.path.join(self.d.tmp, "monitor-reset.json"), "w+")
        self.proc = subprocess.Popen(["busctl", "--system", "monitor", "--json=short",
                                      "org.amdsmi1"], env=self.d.env(), stdout=self.out,
                                     stderr=subprocess.DEVNULL)
        time.sleep(0.5)
        return self

    def __exit__(self, *exc):
        self.proc.terminate()
        self.proc.wait(10)
        self.out.close()

    def signals(self, path, interface, member):
        self.out.flush()
        with open(self.out.name) as f:
            lines = f.read().splitlines()
        out = []
        for line in lines:
            try:
                m = json.loads(line)
            except ValueError:
                continue
            if (m.get("type") == "signal" and m.get("path") == path
                    and m.get("interface") == interface and m.get("member") == member):
                out.append(m)
        return out


class Reset(unittest.TestCase):
    maxDiff = None

    @classmethod
    def setUpClass(cls):
        require_daemon()

    def reset(self, d, bdf=GPU0, flags=0, user=None, timeout_ms=None):
        if timeout_ms is None:
            out = d.call(gpu_path(bdf), IFACE_GPU, "Reset", "t", flags, user=user, timeout=120)
        else:
            out = d.call(gpu_path(bdf), IFACE_GPU, "ResetWithTimeout", "ut", timeout_ms, flags,
                         user=user, timeout=120)
        return json.loads(out[0])

    def test_root_nobody_dry_run(self):
        with Daemon() as d:
            # nobody: denied, nothing reset; a dry run needs no authorisation
            name, msg = d.call_error(G0, IFACE_GPU, "Reset", "uint64:0", user=NOBODY)
            self.assertEqual(name, "org.amdsmi1.Error.PermissionDenied")
            e = self.reset(d, flags=DRY_RUN, user=NOBODY)
            self.assertEqual((e["mechanism"], e["hive_wide"], e["gpus_reset"]),
                             ("amdgpu-debugfs-recover", True, MI300X_BDFS))
            self.assertIsNone(e["state"])
            self.assertEqual(counts(d), {b: 0 for b in MI300X_BDFS})
            # root
            e = self.reset(d)
            self.assertEqual((e["reset_res"], e["result"]), (0, None))
            self.assertEqual(counts(d), {b: 1 for b in MI300X_BDFS})
            self.assertEqual(set(e["stages_ms"]),
                             {"preflight", "reset", "wait", "verify", "reapply", "total"})
            self.assertEqual([r["bdf"] for r in e["reapplied"]], MI300X_BDFS)
            # polkit allows it
            d.allow(ACTION)
            e = self.reset(d, bdf=GPU1, user=NOBODY, timeout_ms=30000)
            self.assertEqual(counts(d), {b: 2 for b in MI300X_BDFS})
            # the history: one record per GPU of the hive and reset, via amdsmid
            recs = [h for h in d.history() if h["change"] == "gpu_reset"]
            self.assertEqual(len(recs), 16)
            self.assertEqual(sorted({h["gpu"] for h in recs}), MI300X_BDFS)
            self.assertTrue(all(h["via"] != "direct" and h["result"] == "ok" for h in recs))
            # malformed calls
            name, _ = d.call_error(G0, IFACE_GPU, "Reset", "uint64:4")
            self.assertEqual(name, "org.amdsmi1.Error.InvalidArgument")
            name, _ = d.call_error(G0, IFACE_GPU, "ResetWithTimeout", "uint32:99999999",
                                   "uint64:0")
            self.assertEqual(name, "org.amdsmi1.Error.InvalidArgument")

    def test_power_cap_reapplied(self):
        with Daemon() as d:
            d.cli("power", "set", "-g", "0", "--host", "600")
            wait_until("600 W", lambda: d.device_cap(GPU0) == 600 * W)
            e = self.reset(d)
            self.assertIn({"bdf": GPU0, "field": "power_cap_w", "before": 600, "after": 750},
                          e["differences"])
            # amdsmid applies its desired state again once the reset returned
            wait_until("600 W again", lambda: d.device_cap(GPU0) == 600 * W)
            self.assertEqual(d.get(G0, "org.amdsmi1.Power", "CapUw"), 600 * W)

    def test_kfd_users_and_force(self):
        with Daemon() as d:
            user = subprocess.Popen(["sleep", "60"])
            try:
                d.ctl("kfd-users", "add", "0000:85:00.0", user.pid, 1 << 20)
                name, msg = d.call_error(G0, IFACE_GPU, "Reset", "uint64:0")
                self.assertEqual(name, "org.amdsmi1.Error.Busy")
                self.assertIn("--force", msg)
                self.assertEqual(counts(d)[GPU0], 0)
                p = d.cli("reset", "-g", "0", "-G", "--json", status=5)
                doc = json.loads(p.stdout)
                schema_errors(self, doc)
                self.assertEqual([x["pid"] for x in doc["gpus"][0]["preflight"]["kfd_processes"]],
                                 [user.pid])
                e = self.reset(d, flags=FORCE)
                self.assertTrue(e["preflight"]["forced"])
                self.assertEqual(counts(d)[GPU0], 1)
            finally:
                user.kill()
                user.wait()

    def test_vfs_in_use_refused(self):
        with Daemon(machine="mi300x-sriov") as d:
            vfs = d.with_vfs(GPU0, 2)
            d.call(ROOT, MANAGER, "PrepareVm", "ssasa{sv}", "web1", UUID1, 1, vfs[0], 0)
            name, msg = d.call_error(G0, IFACE_GPU, "Reset", "uint64:2")
            self.assertEqual(name, "org.amdsmi1.Error.Busy")
            self.assertIn("in use by a VM", msg)
            name, _ = d.call_error(G0, IFACE_GPU, "Reset", "uint64:3")   # a dry run says so
            self.assertEqual(name, "org.amdsmi1.Error.Busy")
            self.assertEqual(counts(d)[GPU0], 0)
            d.call(ROOT, MANAGER, "ReleaseVm", "s", UUID1)
            e = self.reset(d)
            self.assertEqual([s["vf_count"] for s in e["after"]][0], 2)
            self.assertEqual(counts(d)[GPU0], 1)

    def test_job_in_flight_serialised(self):
        with Daemon() as d:
            d.ctl("switch-time", GPU1, 2000)
            sw = subprocess.Popen(["busctl", "--system", "call", "--timeout=120", BUS,
                                   gpu_path(GPU1), "org.amdsmi1.Partition", "SetComputeMode",
                                   "st", "CPX", "0"], env=d.env(), stdout=subprocess.DEVNULL,
                                  stderr=subprocess.PIPE, text=True)
            wait_until("the switch runs",
                       lambda: json.loads(d.ctl("dump").stdout)["gpus"][1]["switching"])
            t = time.monotonic()
            e = self.reset(d)
            # the reset waited for the switch: it holds GPU 1 of the hive
            self.assertGreaterEqual(time.monotonic() - t, 1.0)
            self.assertEqual(sw.wait(60), 0, sw.stderr.read())
            sw.stderr.close()
            self.assertEqual(e["result"], None)
            self.assertEqual([s["compute_mode"] for s in e["before"]][1], "CPX")
            self.assertEqual(counts(d)[GPU1], 1)

    def test_failure_and_signals(self):
        with Daemon(config="[health]\nevents = yes\n") as d:
            with Monitor(d) as mon:
                e = self.reset(d)
                self.assertEqual(e["result"], None)
                wait_until("recent reset", lambda: d.get(G0, HEALTH, "State") == "warning")
                reasons = d.get(G0, HEALTH, "Reasons")
                self.assertIn("recent_reset", [r[0] for r in reasons])
                wait_until("PropertiesChanged of Health",
                           lambda: any(m["payload"]["data"][0] == HEALTH
                                       for m in mon.signals(G0, "org.freedesktop.DBus.Properties",
                                                            "PropertiesChanged")))
                wait_until("the KFD reset events",
                           lambda: {m["payload"]["data"][0]
                                    for m in mon.signals(G0, HEALTH, "Event")}
                           >= {"gpu_pre_reset", "gpu_post_reset"})
            # a failing reset: DeviceError, and the document after the message
            d.ctl("reset-fail", GPU0, "ETIMEDOUT")
            name, msg = d.call_error(G0, IFACE_GPU, "Reset", "uint64:0")
            self.assertEqual(name, "org.amdsmi1.Error.DeviceError")
            self.assertIn("reset_res -110", msg)
            p = d.cli("reset", "-g", "0", "-G", "--json", status=0)
            doc = json.loads(p.stdout)
            schema_errors(self, doc)
            self.assertEqual(doc["gpus"][0]["reset_res"], 0)

    def test_cli_through_amdsmid(self):
        with Daemon() as d:
            p = d.cli("reset", "-g", "0,1", "-G", "--json")
            doc = json.loads(p.stdout)
            schema_errors(self, doc)
            self.assertEqual(doc["gpus"][1]["same_operation_as"], 0)
            self.assertEqual(counts(d)[GPU0], 1)
            self.assertNotIn("in-process", p.stderr)
            # nobody: refused by polkit through amdsmid (exit 6)
            p = d.cli("reset", "-g", "0", "-G", user=NOBODY, status=6)
            d.cli("reset", "-g", "0", "-G", "--dry-run", user=NOBODY)
            self.assertEqual(counts(d)[GPU0], 1)
            # a hang and a short timeout: the report says it, amdsmid goes on serving
            d.ctl("reset-hang", GPU0, "forever")
            p = d.cli("reset", "-g", "0", "-G", "--timeout", "1", "--json", status=5)
            doc = json.loads(p.stdout)
            self.assertTrue(doc["gpus"][0]["hung"])
            self.assertIn("still running in the kernel", doc["gpus"][0]["recovery"])
            self.assertEqual(d.get(G0, IFACE_GPU, "Bdf"), GPU0)
            d.ctl("reset-release", GPU0)


if __name__ == "__main__":
    unittest.main(verbosity=2)
