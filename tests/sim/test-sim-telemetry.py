#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Living telemetry (spec amdgpu-sysfs.md §4.2, §5, §9 rule 5): power and temperatures drift
within sane ranges, gpu_metrics counters and timestamps only move forward, --seed makes the
sequence reproducible and --frozen stops it at the description's values."""

import json
import os
import subprocess
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from simtest import CLI, GPU0, MI300X_BDFS, Mount, main, metrics_field, sim, tmpdir  # noqa: E402

FIELDS = ("energy_accumulator", "system_clock_counter", "firmware_timestamp")


def hwmon(m, bdf):
    d = m.gpu(bdf, "hwmon")
    return "%s/%s/" % (d, os.listdir(m.path(d))[0])


class Telemetry(unittest.TestCase):
    def test_frozen(self):
        desc = json.loads(sim("dump-machine", "mi300x-8", check=True).stdout)
        with Mount("--frozen") as m:
            first = {b: m.read(m.gpu(b, "gpu_metrics")) for b in MI300X_BDFS}
            time.sleep(0.35)
            for k, bdf in enumerate(MI300X_BDFS):
                self.assertEqual(m.read(m.gpu(bdf, "gpu_metrics")), first[bdf])
                s = desc["gpus"][k]["sensors"]
                h = hwmon(m, bdf)
                self.assertEqual(int(m.value(h + "power1_input")), s["power_w"] * 10**6)
                self.assertEqual(int(m.value(h + "temp2_input")), s["junction_c"] * 1000)
                self.assertEqual(int(m.value(h + "temp3_input")), s["mem_c"] * 1000)
                self.assertEqual(int(m.value(h + "freq1_input")), s["sclk_mhz"] * 10**6)
                self.assertEqual(int(m.value(m.gpu(bdf, "gpu_busy_percent"))),
                                 s["gpu_busy_percent"])
                self.assertEqual(metrics_field(first[bdf], 7, "curr_socket_power"), s["power_w"])

    def test_living(self):
        with Mount("--seed", "11") as m:
            h = hwmon(m, GPU0)
            prev = None
            powers = set()
            for _ in range(12):
                blob = m.read(m.gpu(GPU0, "gpu_metrics"))
                now = {f: metrics_field(blob, 7, f) for f in FIELDS}
                if prev:
                    for f in FIELDS:
                        self.assertGreaterEqual(now[f], prev[f], f)
                prev = now
                p = int(m.value(h + "power1_input"))
                self.assertEqual(p % 10**6, 0)
                self.assertTrue(125 * 10**6 <= p <= 750 * 10**6, p)
                powers.add(p)
                t = int(m.value(h + "temp2_input"))
                self.assertTrue(25000 <= t < 110000, t)
                busy = int(m.value(m.gpu(GPU0, "gpu_busy_percent")))
                self.assertTrue(0 <= busy <= 100)
                time.sleep(0.12)
            first = m.read(m.gpu(GPU0, "gpu_metrics"))
            time.sleep(0.25)
            later = m.read(m.gpu(GPU0, "gpu_metrics"))
            for f in FIELDS:
                self.assertGreater(metrics_field(later, 7, f), metrics_field(first, 7, f), f)
            self.assertGreater(len(powers), 1, "power never moved")

    def test_watch_reads_anew(self):
        """One library context sampling again and again (watch mode; amdsmid does the same)
        keeps the telemetry files open between samples: every sample must still see the
        simulator's new values, and a GPU unplugged meanwhile must read as gone, not as its
        last values."""
        sock_dir = tmpdir(self, "amdsmi-sim-ctl.", 0o700)
        sock = os.path.join(sock_dir, "ctl.sock")
        with Mount("--seed", "11", "--ctl", sock) as m:
            env = dict(os.environ, AMDSMI_SYSFS_ROOT=m.root)
            p = subprocess.run([CLI, "metric", "-g", "0", "--json", "-w", "0.12", "-n", "8"],
                               env=env, capture_output=True, text=True, timeout=60)
            self.assertEqual(p.returncode, 0, p.stderr)
            docs = [json.loads(line) for line in p.stdout.splitlines() if line.strip()]
            self.assertEqual(len(docs), 8)
            gpus = [d["gpus"][0] for d in docs]
            powers = {g["power"]["power_w"] for g in gpus}
            self.assertGreater(len(powers), 1, "power never moved: %s" % powers)
            energy = [g["gpu_metrics"]["energy_j"] for g in gpus]
            self.assertEqual(energy, sorted(energy))
            self.assertGreater(energy[-1], energy[0], "gpu_metrics read once only")

            # unplugged while a watch runs: "-g 0" keeps meaning the GPU the watch started
            # with (never the next one moving up to index 0), and its going ends the watch
            w = subprocess.Popen([CLI, "metric", "-g", "0", "--json", "-w", "0.3", "-n", "20"],
                                 env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                 text=True)
            time.sleep(0.5)
            sim("ctl", "--socket", sock, "unplug", GPU0, check=True)
            out, err = w.communicate(timeout=60)
            self.assertEqual(w.returncode, 3, err)  # not found
            self.assertIn("no AMD GPU at %s any more" % GPU0, err)
            docs = [json.loads(line) for line in out.splitlines() if line.strip()]
            self.assertGreaterEqual(len(docs), 2)
            self.assertEqual(docs[-1]["error"]["exit_code"], 3)
            for d in docs[:-1]:
                self.assertEqual([g["bdf"] for g in d["gpus"]], [GPU0])

    def test_seeded_runs_agree(self):
        """Two simulators with one seed show the same values at the same step (the step is
        system_clock_counter); another seed does not."""
        def samples(seed):
            out = {}
            with Mount("--seed", seed) as m:
                for _ in range(10):
                    blob = m.read(m.gpu(GPU0, "gpu_metrics"))
                    out[metrics_field(blob, 7, "system_clock_counter")] = blob
                    time.sleep(0.07)
            return out
        a, b, c = samples(21), samples(21), samples(22)
        common = set(a) & set(b)
        self.assertTrue(common, "no common step")
        for step in common:
            self.assertEqual(a[step], b[step], step)
        other = [s for s in set(a) & set(c) if s != min(a)]
        self.assertTrue(any(a[s] != c[s] for s in other) or not other)


if __name__ == "__main__":
    main()
