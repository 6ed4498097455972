#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""amdsmid's telemetry sampler: GetMetrics() and Power.Explain() say which limiter held each
GPU from two gpu_metrics samples, answer a first call after an idle time with two fresh
samples, stop sampling when nobody asks, and name the arbitration source of a power limit."""

import json
import os
import subprocess
import time
import unittest

from daemontest import (GPU0, GPU1, IFACE_GPU, MANAGER, NOBODY, ROOT, SIM, Daemon, gpu_path,
                        require_daemon)

POWER = "org.amdsmi1.Power"
FAST = "[metrics]\ninterval_ms = 100\n"


def metrics(d, path=None, user=None):
    if path:
        return json.loads(d.call(path, IFACE_GPU, "GetMetrics", user=user)[0])
    return json.loads(d.call(ROOT, MANAGER, "GetMetrics", user=user)[0])


def sim_ctl(d, *args):
    p = subprocess.run([SIM, "ctl", "--mount", d.mount.root] + [str(a) for a in args],
                       capture_output=True, text=True, timeout=60)
    if p.returncode != 0:
        raise AssertionError("amdsmi-sim ctl %s: %s" % (" ".join(map(str, args)), p.stderr))


class Sampler(unittest.TestCase):
    def test_first_call_measures(self):
        # no consumer yet: the first call is answered from two samples taken for it
        with Daemon() as d:
            t0 = time.monotonic()
            doc = metrics(d, gpu_path(GPU1), user=NOBODY)
            lim = doc["gpus"][0]["limiters"]
            self.assertEqual(lim["status"], "measured", lim)
            self.assertGreater(lim["ticks"], 0)
            # the settle time: at least 100 ms between the samples, and not much more
            self.assertGreaterEqual(lim["interval_s"], 0.1)
            self.assertLess(lim["interval_s"], 5)
            self.assertLess(time.monotonic() - t0, 30)
            for key in ("power_pct", "socket_thermal_pct", "hbm_thermal_pct",
                        "vr_thermal_pct", "prochot_pct"):
                self.assertGreaterEqual(lim[key], 0)
                self.assertLessEqual(lim[key], 100)
            # the whole server in one call: every GPU measured
            whole = metrics(d)
            self.assertEqual({g["limiters"]["status"] for g in whole["gpus"]}, {"measured"})

    def test_slow_first_reads_still_settle(self):
        # first samples that take long to read (150 ms each) still get their full settle time
        # before the second: the held reply's timer counts from after them, not from when
        # the call came in
        with Daemon() as d:
            bdfs = [g["bdf"] for g in d.describe()["gpus"]]
            self.assertGreater(len(bdfs), 2)
            for bdf in bdfs:
                sim_ctl(d, "delay", "bus/pci/devices/%s/gpu_metrics" % bdf, 150, "once", "read")
            whole = metrics(d)
            status = {g["bdf"]: g["limiters"]["status"] for g in whole["gpus"]}
            self.assertEqual(set(status.values()), {"measured"}, status)
            for g in whole["gpus"]:
                self.assertGreaterEqual(g["limiters"]["interval_s"], 0.1, g["limiters"])

    def test_power_limit_source(self):
        # a host cap below the idle power: the power limiter holds the GPU all the time, and
        # the document says which source set that cap
        with Daemon(config=FAST) as d:
            d.call(gpu_path(GPU0), POWER, "SetSource", "sstt", "host", "", 5000000, 0)
            metrics(d, gpu_path(GPU0))
            time.sleep(0.5)
            lim = metrics(d, gpu_path(GPU0))["gpus"][0]["limiters"]
            self.assertEqual(lim["status"], "measured")
            self.assertEqual(lim["power_pct"], 100, lim)
            self.assertEqual(lim["power_limit"], {"source": "host", "key": None, "cap_w": 5})
            # a VM's lower cap binds: the source and its key
            d.call(gpu_path(GPU0), POWER, "SetSource", "sstt", "vm", "web1", 4000000, 0)
            time.sleep(0.3)
            lim = metrics(d, gpu_path(GPU0))["gpus"][0]["limiters"]
            self.assertEqual(lim["power_limit"], {"source": "vm", "key": "web1", "cap_w": 4})
            # Explain says it in a sentence, and amdsmi power shows it
            expl = json.loads(d.call(gpu_path(GPU0), POWER, "Explain")[0])
            self.assertEqual(expl["limiters"]["power_limit"]["key"], "web1")
            self.assertTrue(any("at the 4 W cap set by vm web1" in n for n in expl["notes"]),
                            expl["notes"])
            out = d.cli("power", "-g", "0").stdout
            self.assertIn("at the 4 W cap set by vm web1", out)
            # a GPU without a limit reads none in the THROTTLE column
            table = d.cli("metric", "-g", "0,1").stdout.splitlines()
            col = table[0].index("THROTTLE")
            self.assertEqual(table[1][col:].split()[0:2], ["power", "100%"])
            self.assertEqual(table[2][col:].split()[0], "none")

    def test_idle_costs_nothing(self):
        # after a few periods without a consumer the sampler stops: a read error (twice: the
        # library retries a kept file once)
        # injected then is still waiting for the next read, which the next call makes
        with Daemon(config=FAST) as d:
            metrics(d)
            time.sleep(1.5)  # > 5 periods of 100 ms
            rel = "bus/pci/devices/%s/gpu_metrics" % GPU1
            sim_ctl(d, "inject", rel, "EIO", "times=2", "read")
            time.sleep(1.0)  # 10 periods: a running sampler would have hit it
            doc = metrics(d)
            g1 = [g for g in doc["gpus"] if g["bdf"] == GPU1][0]
            self.assertIsNone(g1["gpu_metrics"])
            self.assertIn({"gpu": 1, "field": "gpu_metrics", "errno": "EIO",
                           "message": "Input/output error"}, doc["errors"])
            # while consumed, the sampler does read: the same fault is gone by the next call
            sim_ctl(d, "inject", rel, "EIO", "times=2", "read")
            time.sleep(0.5)
            doc = metrics(d)
            self.assertEqual(doc["errors"], [])

    def test_keeps_sampling_while_consumed(self):
        # a consumer every 300 ms with 100 ms periods: each answer at once, from samples at
        # most a few periods apart
        with Daemon(config=FAST) as d:
            metrics(d, gpu_path(GPU0))
            for _ in range(5):
                time.sleep(0.3)
                t0 = time.monotonic()
                lim = metrics(d, gpu_path(GPU0))["gpus"][0]["limiters"]
                self.assertEqual(lim["status"], "measured")
                self.assertLess(lim["interval_s"], 1.0, lim)

    def test_cli_asks_amdsmid(self):
        # amdsmi metric without --throttle: the limiters come from amdsmid's sampler
        with Daemon() as d:
            doc = json.loads(d.cli("metric", "--json", "-g", "1", user=NOBODY).stdout)
            self.assertEqual(doc["gpus"][0]["limiters"]["status"], "measured")
            # --direct: nobody to ask, one sample: unknown
            doc = json.loads(d.cli("metric", "--json", "-g", "1", "--direct").stdout)
            lim = doc["gpus"][0]["limiters"]
            self.assertEqual(lim["status"], "one_sample")
            self.assertIsNone(lim["power_pct"])
            out = d.cli("metric", "-g", "1", "--direct").stdout.splitlines()
            col = out[0].index("THROTTLE")
            self.assertEqual(out[1][col:].split()[0], "-")


if __name__ == "__main__":
    require_daemon()
    unittest.main()
