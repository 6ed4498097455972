#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""One value, one form: the same fact as every verb, the table, the CSV and --json say it.

usage: test-cli-consistency.py AMDSMI [unittest options]
env:   FIXTURES_DIR  the generated trees

On every fixture tree: unique_id, driver, firmware versions, the gfx target, the power
range, the XGMI per-link arrays; and the numbers of apply --dry-run (a private amdsmid.conf
in temporary CONFIGURATION_DIRECTORY, STATE_DIRECTORY and RUNTIME_DIRECTORY).
"""

import csv
import io
import json
import os
import re
import subprocess
import sys
import tempfile
import unittest

AMDSMI = None
FIXTURES_DIR = os.environ.get("FIXTURES_DIR", "")
UNIQUE_ID = re.compile(r"^0x[0-9a-f]{16}$")
# a number as every document writes it: no exponent, no point for a whole number
NUMBER = re.compile(r"^-?(0|[1-9][0-9]*)(\.[0-9]*[1-9])?$")


def trees():
    return sorted(d for d in os.listdir(FIXTURES_DIR)
                  if os.path.isdir(os.path.join(FIXTURES_DIR, d)))


def run(tree, *args, env=None, status=0):
    e = dict(os.environ, AMDSMI_SYSFS_ROOT=os.path.join(FIXTURES_DIR, tree), **(env or {}))
    p = subprocess.run([AMDSMI] + [str(a) for a in args], env=e, capture_output=True,
                       text=True, timeout=60, check=False)
    if p.returncode != status:
        raise AssertionError("amdsmi %s on %s: exit %d, expected %d: %s"
                             % (" ".join(map(str, args)), tree, p.returncode, status, p.stderr))
    return p.stdout


def doc(tree, *args, **kw):
    return json.loads(run(tree, *(list(args) + ["--json"]), **kw))


def by_bdf(d):
    return {g["bdf"]: g for g in d["gpus"]}


def table_rows(text, header):
    """The rows under the line that starts with @header, split at runs of 2+ spaces."""
    lines = text.splitlines()
    out, inside = [], False
    for line in lines:
        if line.strip().startswith(header):
            inside = True
            continue
        if inside:
            if not line.strip():
                inside = False
                continue
            out.append(re.split(r"\s{2,}", line.strip()))
    return out


class Consistency(unittest.TestCase):
    def test_unique_id_and_driver(self):
        """list, static, partition and sriov say unique_id and driver the same way."""
        for tree in trees():
            with self.subTest(tree=tree):
                lst, st = by_bdf(doc(tree, "list")), by_bdf(doc(tree, "static"))
                part, sr = by_bdf(doc(tree, "partition")), by_bdf(doc(tree, "sriov"))
                self.assertEqual(set(lst), set(st))
                for bdf, g in st.items():
                    self.assertEqual(lst[bdf]["unique_id"], g["unique_id"], bdf)
                    if g["unique_id"] is not None:
                        self.assertRegex(g["unique_id"], UNIQUE_ID)
                    for p in g["partitions"] or []:
                        if p["unique_id"] is not None:
                            self.assertRegex(p["unique_id"], UNIQUE_ID)
                    drivers = {lst[bdf]["driver"], g["driver"]}
                    drivers |= {x[bdf]["driver"] for x in (part, sr) if bdf in x}
                    self.assertEqual(len(drivers), 1, (bdf, drivers))
                    self.assertNotIn(None, drivers)
                    # the table: UNIQUE ID as the JSON spells it, DRIVER once
                    table = run(tree, "static", "-g", bdf)
                    self.assertIn("UNIQUE ID              %s\n" % (g["unique_id"] or "N/A"),
                                  table)
                    self.assertNotIn("DRIVER NAME", table)
                # list's table and CSV, static's CSV: the same spelling ("" when unknown)
                list_csv = {r["bdf"]: r for r in csv.DictReader(io.StringIO(run(tree, "list",
                                                                               "--csv")))}
                static_csv = {r["bdf"]: r for r in csv.DictReader(io.StringIO(run(
                    tree, "static", "--csv")))}
                list_table = {r[1]: r for r in table_rows(run(tree, "list"), "GPU")}
                for bdf, g in lst.items():
                    self.assertEqual(list_csv[bdf]["unique_id"], g["unique_id"] or "", bdf)
                    self.assertEqual(static_csv[bdf]["unique_id"], g["unique_id"] or "", bdf)
                    self.assertEqual(list_table[bdf][-1], g["unique_id"] or "N/A", bdf)

    def test_firmware(self):
        """The table, the CSV and the JSON show the same hex string; smc is decoded."""
        for tree in trees():
            with self.subTest(tree=tree):
                d = doc(tree, "static", "-g", 0)
                fw = d["gpus"][0]["firmware"] or []
                rows = table_rows(run(tree, "static", "-g", 0), "FIRMWARE")
                self.assertEqual([r[0] for r in rows], [f["name"] for f in fw])
                for r, f in zip(rows, fw):
                    self.assertEqual(r[1], f["version_hex"], f["name"])
                    self.assertEqual(int(f["version_hex"], 16), f["version"])
                    self.assertEqual(r[2], f["version_dotted"] or "N/A", f["name"])
                smc = [f for f in fw if f["name"] == "smc"]
                if smc:
                    v = smc[0]["version"]
                    self.assertEqual(smc[0]["version_dotted"], "%d.%d.%d" % (
                        (v >> 16) & 0xff, (v >> 8) & 0xff, v & 0xff))
                row = next(csv.DictReader(io.StringIO(run(tree, "static", "-g", 0, "--csv"))))
                for f in fw:
                    self.assertEqual(row["fw_" + f["name"]], f["version_hex"])

    def test_gfx_target(self):
        for tree in trees():
            with self.subTest(tree=tree):
                d = doc(tree, "static", "-g", 0)
                parts = d["gpus"][0]["partitions"] or []
                rows = table_rows(run(tree, "static", "-g", 0), "PARTITION")
                self.assertEqual(len(rows), len(parts))
                for r, p in zip(rows, parts):
                    self.assertIn(p["gfx_target"], ("gfx942", "gfx950"))
                    self.assertIn(p["gfx_target"], r)

    def test_power_range(self):
        """RANGE of the table is the settable range of the JSON, which starts at 1 W."""
        for tree in trees():
            with self.subTest(tree=tree):
                gpus = doc(tree, "power")["gpus"]
                rows = table_rows(run(tree, "power"), "GPU")
                self.assertEqual(len(rows), len(gpus))
                for r, g in zip(rows, gpus):
                    lo, hi = g["cap_settable_min_w"], g["cap_settable_max_w"]
                    if g["cap_min_w"] is None:
                        self.assertEqual((lo, r[4]), (None, "N/A"))
                        continue
                    self.assertEqual(lo, max(g["cap_min_w"], 1))
                    self.assertEqual(hi, g["cap_max_w"])
                    self.assertEqual(r[4], "%s-%s" % (lo, hi))
                    self.assertEqual(g["cap_held_by"], g["effective_source"])

    def test_xgmi_links(self):
        for tree in trees():
            with self.subTest(tree=tree):
                for g in doc(tree, "metric")["gpus"]:
                    x = (g["gpu_metrics"] or {}).get("xgmi")
                    if not x:
                        continue
                    arrays = [x[k] for k in ("read_data_kb", "write_data_kb", "link_status",
                                             "link_state") if x[k] is not None]
                    self.assertEqual({len(a) for a in arrays}, {x["links"]} if arrays else set())
                    if x["link_state"] is not None:
                        words = {0: "down", 1: "up", 2: "n/a", None: "n/a"}
                        self.assertEqual(x["link_state"], [words[s] for s in x["link_status"]])

    def test_apply_dry_run_numbers(self):
        """apply --dry-run writes W as every document does: 750, not 750.0."""
        with tempfile.TemporaryDirectory() as tmp:
            env = {"CONFIGURATION_DIRECTORY": tmp, "STATE_DIRECTORY": tmp,
                   "RUNTIME_DIRECTORY": tmp}
            with open(os.path.join(tmp, "amdsmid.conf"), "w", encoding="utf-8") as f:
                f.write("[gpu]\npower_cap = 600.5W\n[gpu 0000:26:00.0]\npower_cap = 800W\n")
            tree = "mi300x-8-spx"
            text = run(tree, "apply", "--dry-run", "--json", "-g", "0,1", env=env, status=7)
            for m in re.finditer(r'"(now|desired)": ([^,\n}]+)', text):
                self.assertRegex(m.group(2), NUMBER, m.group(0))
            rows = json.loads(text)["settings"]
            self.assertEqual([(r["now"], r["desired"], r["action"]) for r in rows],
                             [(750, 600.5, "apply"), (750, 800, "invalid")])
            self.assertEqual(rows[1]["message"], "outside the GPU's range 1-750 W")
            table = table_rows(run(tree, "apply", "--dry-run", "-g", "0,1", env=env, status=7),
                               "GPU")
            self.assertEqual([(r[3], r[4]) for r in table], [("750", "600.5"), ("750", "800")])


if __name__ == "__main__":
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    AMDSMI = sys.argv.pop(1)
    unittest.main(verbosity=2)
