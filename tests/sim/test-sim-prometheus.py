#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""amdsmi metric --prometheus on every built-in machine (AMDSMI_SYSFS_ROOT on a simulator
mount): promtool check metrics accepts it (its linter included), the Prometheus client's
parser reads it, and what it says agrees with the JSON documents of the same machine: one
amdsmi_gpu_info per GPU, the PF addresses as gpu, the partition modes, the VRAM size, every
partition of a CPX GPU with its series, no series twice, no sentinel."""

import json
import math
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from simtest import BAREMETAL_PRESETS, CLI, GPU0, PRESETS, Mount, SchemaCase, main, tmpdir  # noqa: E402

from prometheus_client.parser import text_string_to_metric_families  # noqa: E402

PROMTOOL = shutil.which("promtool")

# The families every bare-metal machine of the simulator has data for.
BAREMETAL_FAMILIES = {
    "amdsmi_up", "amdsmi_scrape_duration_seconds", "amdsmi_gpu_info", "amdsmi_gpu_power_watts",
    "amdsmi_gpu_energy_joules_total", "amdsmi_gpu_power_cap_watts",
    "amdsmi_gpu_power_cap_source_info", "amdsmi_gpu_temperature_celsius",
    "amdsmi_gpu_clock_hertz", "amdsmi_gpu_busy_ratio", "amdsmi_partition_gfx_busy_ratio",
    "amdsmi_gpu_vram_used_bytes", "amdsmi_gpu_vram_size_bytes", "amdsmi_gpu_pcie_replays_total",
    "amdsmi_gpu_ecc_errors_total", "amdsmi_gpu_health", "amdsmi_gpu_partition_info",
    "amdsmi_gpu_performance_level_info",
}


class Prometheus(SchemaCase):
    def env(self, m):
        env = dict(os.environ, AMDSMI_SYSFS_ROOT=m.root,
                   RUNTIME_DIRECTORY=tmpdir(self, "prom-run"),
                   STATE_DIRECTORY=tmpdir(self, "prom-state"),
                   CONFIGURATION_DIRECTORY=tmpdir(self, "prom-conf"))
        env.pop("AMDSMI_DEV_ROOT", None)
        return env

    def cli(self, m, *args, rc=0):
        p = subprocess.run([CLI, "--direct"] + list(args), capture_output=True, text=True,
                           env=self.env(m), timeout=60)
        self.assertEqual(p.returncode, rc, "%s: %s" % (args, p.stderr))
        return p

    def scrape(self, m):
        """The text, its samples {(name, labels): value} and the family names."""
        text = self.cli(m, "metric", "--prometheus").stdout
        self.assertTrue(PROMTOOL, "promtool is missing (Debian's prometheus package)")
        p = subprocess.run([PROMTOOL, "check", "metrics"], input=text, capture_output=True,
                           text=True, timeout=60)
        self.assertEqual(p.returncode, 0, "promtool check metrics:\n%s%s" % (p.stdout, p.stderr))
        samples, families = {}, set()
        for fam in text_string_to_metric_families(text):
            families.add(fam.name + ("_total" if fam.type == "counter" else ""))
            for s in fam.samples:
                key = (s.name, tuple(sorted(s.labels.items())))
                self.assertNotIn(key, samples, "a series twice")
                self.assertFalse(math.isnan(s.value) or math.isinf(s.value), key)
                self.assertIsNone(s.timestamp, "a timestamp: node_exporter refuses the file")
                samples[key] = s.value
        for line in text.splitlines():
            self.assertFalse('=""' in line, "an empty label: %s" % line)
        return text, samples, families

    def by_name(self, samples, name):
        return [(dict(labels), v) for (n, labels), v in samples.items() if n == name]

    def test_presets(self):
        for name in PRESETS:
            with self.subTest(machine=name), Mount("-m", name, "--seed", "2") as m:
                _, samples, families = self.scrape(m)
                lst = json.loads(self.cli(m, "list", "--json").stdout)
                part = json.loads(self.cli(m, "partition", "--json").stdout)
                metric = json.loads(self.cli(m, "metric", "--json").stdout)
                # a host's VFs are no GPUs of their own here: their PF has the series
                bdfs = {g["bdf"] for g in lst["gpus"] if g["role"] != "vf"}
                self.assertEqual(self.by_name(samples, "amdsmi_up"), [({}, 1)])
                # every series of a GPU names one of the machine's GPUs
                for (n, labels), v in samples.items():
                    lab = dict(labels)
                    if n.startswith("amdsmi_gpu_") or n.startswith("amdsmi_partition_"):
                        self.assertIn(lab.get("gpu"), bdfs, n)
                    if n.endswith("_ratio"):
                        self.assertTrue(0 <= v <= 1, (n, lab, v))
                    if n.endswith("_total") or n.endswith("_bytes") or n.endswith("_hertz"):
                        self.assertGreaterEqual(v, 0, (n, lab))
                info = self.by_name(samples, "amdsmi_gpu_info")
                self.assertEqual(sorted(l["gpu"] for l, _ in info), sorted(bdfs))
                for g in lst["gpus"]:
                    if g["role"] == "vf":
                        continue
                    l = next(l for l, _ in info if l["gpu"] == g["bdf"])
                    self.assertEqual(l.get("product"), g["product"])
                    self.assertEqual(l.get("unique_id"), g.get("unique_id"))
                for g in part["gpus"]:
                    if g["bdf"] not in bdfs:
                        continue
                    pi = [l for l, _ in self.by_name(samples, "amdsmi_gpu_partition_info")
                          if l["gpu"] == g["bdf"]]
                    if g.get("compute_mode") or g.get("memory_mode"):
                        self.assertEqual(len(pi), 1, g["bdf"])
                        self.assertEqual(pi[0].get("compute_mode"), g["compute_mode"])
                        self.assertEqual(pi[0].get("memory_mode"), g["memory_mode"])
                for g in metric["gpus"]:
                    if g["bdf"] not in bdfs:
                        continue
                    size = g.get("memory", {}).get("vram_total_bytes")
                    got = [v for l, v in self.by_name(samples, "amdsmi_gpu_vram_size_bytes")
                           if l["gpu"] == g["bdf"]]
                    self.assertEqual(got, [size] if size is not None else [], g["bdf"])
                if name in BAREMETAL_PRESETS:
                    self.assertEqual(BAREMETAL_FAMILIES - families, set())
                    health = self.by_name(samples, "amdsmi_gpu_health")
                    self.assertEqual(len(health), 4 * len(bdfs))
                    self.assertEqual(sum(v for _, v in health), len(bdfs))

    def test_cpx_partitions(self):
        """Every partition of a CPX GPU has its busy series, GPU by GPU."""
        with Mount("-m", "mi300x-8", "--seed", "2") as m:
            self.cli(m, "partition", "set", "-g", GPU0, "--compute", "CPX")
            _, samples, _ = self.scrape(m)
            parts = sorted(int(l["partition"]) for l, _ in
                           self.by_name(samples, "amdsmi_partition_gfx_busy_ratio")
                           if l["gpu"] == GPU0)
            self.assertEqual(parts, list(range(8)))
            others = [l for l, _ in self.by_name(samples, "amdsmi_partition_gfx_busy_ratio")
                      if l["gpu"] != GPU0]
            self.assertEqual(len(others), 7)
            info = [l for l, _ in self.by_name(samples, "amdsmi_gpu_partition_info")
                    if l["gpu"] == GPU0]
            self.assertEqual(info[0]["compute_mode"], "CPX")

    def test_throttle_counters(self):
        """In-process, --throttle's two samples give the throttle counters; one sample none."""
        with Mount("-m", "mi300x-8", "--seed", "2") as m:
            _, samples, _ = self.scrape(m)
            self.assertEqual(self.by_name(samples, "amdsmi_gpu_throttle_seconds_total"), [])
            text = self.cli(m, "metric", "--prometheus", "--throttle").stdout
            reasons = {s.labels["reason"] for f in text_string_to_metric_families(text)
                       for s in f.samples if s.name == "amdsmi_gpu_throttle_seconds_total"}
            self.assertEqual(reasons, {"power", "socket_thermal", "hbm_thermal", "vr_thermal",
                                       "prochot"})

    def test_usage(self):
        with Mount("-m", "mi300x-8") as m:
            for args, what in ((["--json"], "not with --json"), (["--csv"], "not with --json"),
                               (["-w", "1"], "not with --watch"), (["-p"], "not with -p"),
                               (["--fields", "power"], "not with -p")):
                p = self.cli(m, *(args + ["metric", "--prometheus"]), rc=2)
                self.assertIn(what, p.stderr)
            p = self.cli(m, "list", "--prometheus", rc=2)
            self.assertIn("option '--prometheus' is not valid for 'list'", p.stderr)


if __name__ == "__main__":
    main()
