#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Bad input to amdsmi(1): exit statuses, error messages, and the -g and -w syntax.

usage: test-cli-errors.py AMDSMI [unittest options]
env:   FIXTURES_DIR  the generated trees;  SRCDIR  the source tree (for the JSON Schema)

Each check runs the real CLI and asserts the exact exit status (cli/exit-codes.h: 2 usage,
3 not found), a stderr message that names the problem, and that stdout carries data only:
nothing with a usage error in table/CSV mode, the error document with --json.
"""

import csv
import io
import json
import os
import pty
import shutil
import signal
import subprocess
import sys
import tempfile
import unittest

import jsonschema

AMDSMI = None
FIXTURES_DIR = os.environ.get("FIXTURES_DIR", "")
SRCDIR = os.environ.get("SRCDIR", "")

SPX = "mi300x-8-spx"        # 8 GPUs, one partition each
CPX = "mi300x-8-cpx"        # 8 GPUs, eight partitions each
SMALL = "guest-1vf"         # one GPU, cheap to copy

EXIT_OK, EXIT_USAGE, EXIT_NOT_FOUND = 0, 2, 3


def copy_file(src, dst):
    """shutil.copy2, but a write-only sysfs attribute (bind, rescan...), which the owner may
    not read unless root, becomes an empty file of the same mode."""
    try:
        return shutil.copy2(src, dst)
    except PermissionError:
        with open(dst, "wb"):
            pass
        shutil.copymode(src, dst)
        return dst


def tree(name):
    return os.path.join(FIXTURES_DIR, name)


def run(args, root=None, timeout=30):
    env = {k: v for k, v in os.environ.items()
           if k not in ("AMDSMI_DEV_ROOT", "AMDSMI_DEBUG", "AMDSMI_SYSFS_ROOT")}
    env["AMDSMI_SYSFS_ROOT"] = root if root is not None else tree(SPX)
    return subprocess.run([AMDSMI] + list(args), env=env, capture_output=True, text=True,
                          check=False, timeout=timeout)


class Cli(unittest.TestCase):
    maxDiff = None

    @classmethod
    def setUpClass(cls):
        with open(os.path.join(SRCDIR, "cli/schema/amdsmi-1.schema.json"), encoding="utf-8") as f:
            cls.validator = jsonschema.Draft202012Validator(json.load(f))
        with open(tree(SPX) + ".expected.json", encoding="utf-8") as f:
            cls.spx_bdfs = [g["bdf"] for g in sorted(json.load(f)["gpus"],
                                                     key=lambda g: g["index"])]

    def expect(self, args, status, stderr_has=(), root=None):
        """Runs amdsmi; checks the exit status and that stderr holds every string of
        stderr_has. @return the CompletedProcess."""
        p = run(args, root)
        what = "amdsmi %s: stderr %r" % (" ".join(args), p.stderr)
        self.assertEqual(p.returncode, status, what)
        for s in stderr_has:
            self.assertIn(s, p.stderr, what)
        if status != EXIT_OK:
            self.assertTrue(p.stderr.startswith("amdsmi: "), what)
        return p

    def usage_error(self, args, *stderr_has, root=None):
        p = self.expect(args, EXIT_USAGE, stderr_has, root)
        self.assertEqual(p.stdout, "", "a usage error prints nothing on stdout")
        return p

    def valid(self, doc, what=""):
        errors = sorted(self.validator.iter_errors(doc), key=lambda e: list(e.absolute_path))
        self.assertEqual([("/".join(map(str, e.absolute_path)), e.message) for e in errors],
                         [], "%s: not valid amdsmi/1" % what)

    def json_doc(self, args, root=None, status=EXIT_OK):
        p = self.expect(list(args) + ["--json"], status, root=root)
        doc = json.loads(p.stdout)
        self.valid(doc, " ".join(args))
        return doc

    # --- command line -----------------------------------------------------------------------

    def test_unknown_verb(self):
        self.usage_error(["frobnicate"], "unknown verb 'frobnicate'", "list, static, metric")

    def test_unknown_verb_json_error_document(self):
        p = self.expect(["--json", "frobnicate"], EXIT_USAGE, ["unknown verb 'frobnicate'"])
        doc = json.loads(p.stdout)
        self.valid(doc, "--json frobnicate")
        self.assertEqual(doc["error"]["exit_code"], EXIT_USAGE)
        self.assertEqual(doc["error"]["errno"], "EINVAL")
        self.assertIn("unknown verb 'frobnicate'", doc["error"]["message"])

    def test_missing_verb(self):
        # amdsmi alone is the overview (test-cli-help.py); any option makes it a command
        self.usage_error(["-g", "0"], "missing verb")
        self.usage_error(["--csv"], "missing verb")
        p = self.expect(["--json"], EXIT_USAGE, ["missing verb"])
        self.assertEqual(json.loads(p.stdout)["error"]["exit_code"], EXIT_USAGE)

    def test_missing_positional_argument(self):
        # a verb's one argument is required, whatever the options (a crash before)
        for args, what in ((["vm", "release", "--force"], "DOMAIN"),
                           (["vm", "release"], "DOMAIN"),
                           (["sriov", "bind"], "VF"), (["sriov", "release", "--force"], "VF")):
            self.usage_error(args, "'%s' needs a %s" % (" ".join(args[:2]), what))
            p = self.expect(["--json"] + args, EXIT_USAGE, ["needs a " + what])
            doc = json.loads(p.stdout)
            self.valid(doc, " ".join(args))
            self.assertEqual(doc["error"]["exit_code"], EXIT_USAGE)

    def test_extra_argument(self):
        self.usage_error(["list", "extra"], "unexpected argument 'extra'")

    def test_unknown_long_option(self):
        self.usage_error(["--frobnicate", "list"], "unknown option '--frobnicate'")

    def test_unknown_short_option(self):
        self.usage_error(["-z", "list"], "unknown option '-z'")

    def test_option_without_argument(self):
        self.usage_error(["list", "-g"], "option '-g' needs an argument")

    def test_flag_with_argument(self):
        self.usage_error(["--json=yes", "list"], "option '--json' takes no argument")

    def test_json_and_csv(self):
        self.usage_error(["--json", "--csv", "list"], "--json and --csv are mutually exclusive")

    def test_help_and_version(self):
        p = self.expect(["--help"], EXIT_OK)
        self.assertIn("Usage: amdsmi", p.stdout)
        self.assertEqual(p.stderr, "")
        p = self.expect(["--version"], EXIT_OK)
        self.assertRegex(p.stdout, r"^amdsmi \S+ \(libamdsmi \S+\)\n$")

    # --- watch options ----------------------------------------------------------------------

    # --- metric's field selection -----------------------------------------------------------

    def test_metric_groups(self):
        groups = {
            "-p": ("power", ["power_w", "cap_w", "board_voltage_mv", "energy_j"]),
            "-t": ("temperatures", ["temp_junction_c", "metrics_temp_hotspot_c"]),
            "-c": ("clocks", ["gfx_clock_mhz", "metrics_soc_clock_mhz"]),
            "-u": ("usage", ["gpu_busy_pct", "gfx_activity_pct", "partition0_gfx_busy_pct"]),
            "-m": ("memory", ["vram_used_bytes", "vram_total_bytes"]),
            "-P": ("gpu_metrics", ["pcie_width", "pcie_replay_count_acc"]),
            "-x": ("gpu_metrics", ["xgmi_width", "xgmi_link_status"]),
            "-T": ("limiters", ["throttle", "throttle_status", "limiters_status"]),
        }
        full = next(csv.reader(io.StringIO(self.expect(["metric", "--csv"], EXIT_OK).stdout)))
        for flag, (key, columns) in groups.items():
            with self.subTest(group=flag):
                p = self.expect(["metric", flag, "--csv", "-g", "0"], EXIT_OK)
                header = next(csv.reader(io.StringIO(p.stdout)))
                self.assertEqual(header[:2], ["gpu", "bdf"])
                for col in columns:
                    self.assertIn(col, header)
                self.assertLess(len(header), len(full), "CSV keeps only the group")
                self.assertEqual(len(set(header)), len(header))
                doc = self.json_doc(["metric", flag, "-g", "0"])
                self.valid(doc, flag)
                g = doc["gpus"][0]
                self.assertIn(key, g)
                self.assertEqual((g["gpu"], g["bdf"]), (0, self.spx_bdfs[0]))
                for other in ("product", "memory", "power", "clocks"):
                    if other != key and not (flag == "-p" and other == "power"):
                        self.assertNotIn(other, g, flag)
                out = self.expect(["metric", flag, "-g", "0"], EXIT_OK).stdout
                table = out.split("\n\n")[0].splitlines()
                self.assertTrue(table[0].startswith("GPU  BDF"), table[0])
                self.assertEqual(len(table), 2, "one row per GPU")
                # the partitions' busy table comes with -u only
                self.assertEqual("PARTITION" in out, flag == "-u", flag)
        # groups add up; the table shows a CSV-only column with a header of its name
        header = next(csv.reader(io.StringIO(
            self.expect(["metric", "-p", "-m", "--csv"], EXIT_OK).stdout)))
        self.assertIn("cap_min_w", header)
        self.assertIn("vram_total_bytes", header)
        self.assertNotIn("gfx_clock_mhz", header)
        self.assertIn("CAP MIN (W)", self.expect(["metric", "-p"], EXIT_OK).stdout)

    def test_metric_fields(self):
        args = ["metric", "-g", "1", "--fields", "power.cap_w,gpu_metrics.pcie.width,"
                "temperature_limits"]
        doc = self.json_doc(args)
        g = doc["gpus"][0]
        self.assertEqual(sorted(g), ["bdf", "gpu", "gpu_metrics", "power", "state",
                                     "temperature_limits"])
        self.assertEqual(list(g["power"]), ["cap_w"])
        self.assertEqual(list(g["gpu_metrics"]), ["pcie"])
        self.assertEqual(list(g["gpu_metrics"]["pcie"]), ["width"])
        full = self.json_doc(["metric", "-g", "1"])["gpus"][0]
        self.assertEqual(g["temperature_limits"], full["temperature_limits"])
        self.assertEqual(g["power"]["cap_w"], full["power"]["cap_w"])
        p = self.expect(args + ["--csv"], EXIT_OK)
        rows = list(csv.reader(io.StringIO(p.stdout)))
        # a key without a column of its own gets one named by its path
        self.assertEqual(rows[0], ["gpu", "bdf", "cap_w", "pcie_width", "temperature_limits"])
        self.assertEqual(rows[1][2], str(full["power"]["cap_w"]))
        p = self.expect(args, EXIT_OK)
        self.assertIn("CAP (W)", p.stdout.splitlines()[0])
        self.assertIn("PCIE WIDTH", p.stdout.splitlines()[0])
        # --fields and a group add up
        doc = self.json_doc(["metric", "-g", "1", "-m", "--fields", "clocks.gfx_clock_mhz"])
        self.assertEqual(doc["fields"], ["memory", "gpu_metrics.mem_max_bandwidth_bytes_per_s",
                                         "clocks.gfx_clock_mhz"])
        self.assertEqual(sorted(doc["gpus"][0]), ["bdf", "clocks", "gpu", "gpu_metrics",
                                                  "memory", "state"])
        self.assertEqual(list(doc["gpus"][0]["clocks"]), ["gfx_clock_mhz"])
        for bad in ("powr", "power..cap_w", "power.", "", "power,", "gpu_metrics.pcie[0]",
                    "x" * 200):
            with self.subTest(field=bad):
                self.usage_error(["metric", "--fields", bad], "invalid field")
        self.usage_error(["static", "-p"], "option '-p' is not valid for 'static'")
        self.usage_error(["power", "--fields", "power"],
                         "option '--fields' is not valid for 'power'")

    # --- monitor -----------------------------------------------------------------------------

    def test_monitor(self):
        p = self.expect(["monitor"], EXIT_OK)
        lines = p.stdout.splitlines()
        self.assertEqual(len(lines), 1 + len(self.spx_bdfs), "one line per GPU")
        for h in ("POWER (W)", "HOTSPOT (C)", "GFX (MHz)", "GFX BUSY (%)", "VRAM USED (MiB)",
                  "THROTTLE"):
            self.assertIn(h, lines[0])
        doc = self.json_doc(["monitor", "-g", "2"])
        self.assertEqual(doc["command"], "monitor")
        full = self.json_doc(["metric", "-g", "2"])["gpus"][0]
        row = doc["gpus"][0]
        self.assertEqual((row["gpu"], row["bdf"], row["partition"]), (2, self.spx_bdfs[2], None))
        self.assertEqual(row["cap_w"], full["power"]["cap_w"])
        self.assertEqual(row["vram_total_bytes"], full["memory"]["vram_total_bytes"])
        self.assertEqual(row["throttle"], "-", "one sample: the limiters are unknown")
        # a row per selected partition, with the partition's own busy
        doc = self.json_doc(["monitor", "-g", "0.1,0.6"], tree(CPX))
        self.assertEqual([(r["gpu"], r["partition"]) for r in doc["gpus"]], [(0, 1), (0, 6)])
        parts = self.json_doc(["metric", "-g", "0.1,0.6"], tree(CPX))["gpus"][0]
        self.assertEqual([r["gfx_busy_pct"] for r in doc["gpus"]],
                         [round(sum(q["gfx_busy_pct"]) / len(q["gfx_busy_pct"]))
                          for q in parts["gpu_metrics"]["partitions"]])
        rows = list(csv.DictReader(io.StringIO(
            self.expect(["monitor", "--csv", "-g", "0.1"], EXIT_OK, root=tree(CPX)).stdout)))
        self.assertEqual([(r["gpu"], r["partition"]) for r in rows], [("0", "1")])

    def test_monitor_piped_watch(self):
        # piped: one header, then each sample's rows with their time
        p = run(["monitor", "-g", "0,1", "-w", "0.05", "-n", "3"], timeout=30)
        self.assertEqual(p.returncode, EXIT_OK, p.stderr)
        lines = p.stdout.splitlines()
        self.assertTrue(lines[0].startswith("TIME"), lines[0])
        self.assertEqual(len(lines), 1 + 3 * 2)
        self.assertEqual(len({ln.split()[0] for ln in lines[1:]}), 3, "three sample times")
        self.assertNotIn("\033", p.stdout)
        # NDJSON too
        p = run(["monitor", "--json", "-w", "0.05", "-n", "2"], timeout=30)
        self.assertEqual([json.loads(ln)["command"] for ln in p.stdout.splitlines()],
                         ["monitor", "monitor"])

    def test_monitor_terminal_redraws(self):
        # on a terminal each sample clears the screen and draws the table again
        master, slave = pty.openpty()
        env = {k: v for k, v in os.environ.items() if k not in ("AMDSMI_DEV_ROOT",)}
        env["AMDSMI_SYSFS_ROOT"] = tree(SPX)
        proc = subprocess.Popen([AMDSMI, "monitor", "-w", "0.05", "-n", "3"], env=env,
                                stdout=slave, stderr=subprocess.PIPE)
        os.close(slave)
        out = b""
        while True:
            try:
                chunk = os.read(master, 65536)
            except OSError:
                break
            if not chunk:
                break
            out += chunk
        os.close(master)
        self.assertEqual(proc.wait(timeout=30), EXIT_OK, proc.stderr.read())
        proc.stderr.close()
        text = out.decode()
        self.assertEqual(text.count("\033[H\033[2J"), 3, "one redraw per sample")
        self.assertEqual(text.count("POWER (W)"), 3, "the whole table each time")
        self.assertNotIn("TIME", text)

    def test_watch_every_read_verb(self):
        # list, metric, partition, power and sriov watch (static never changes): NDJSON,
        # and CSV with one header and a timestamp column
        for verb in ("list", "metric", "partition", "power", "sriov"):
            with self.subTest(verb=verb):
                p = run([verb, "--json", "-w", "0.05", "-n", "2"], timeout=30)
                self.assertEqual(p.returncode, EXIT_OK, p.stderr)
                lines = p.stdout.splitlines()
                self.assertEqual(len(lines), 2, "one compact document per line")
                for line in lines:
                    doc = json.loads(line)
                    self.valid(doc, verb)
                    self.assertEqual(doc["command"], verb)
                p = run([verb, "--csv", "-w", "0.05", "-n", "2"], timeout=30)
                self.assertEqual(p.returncode, EXIT_OK, p.stderr)
                rows = list(csv.reader(io.StringIO(p.stdout)))
                self.assertEqual(rows[0][0], "timestamp")
                self.assertEqual([r for r in rows if r[0] == "timestamp"], [rows[0]],
                                 "one header")
                self.assertEqual(len({len(r) for r in rows}), 1)
                self.assertEqual(len({r[0] for r in rows[1:]}), 2, "two samples")
                p = run([verb, "-w", "0.05", "-n", "2"], timeout=30)
                self.assertEqual(p.returncode, EXIT_OK, p.stderr)
                self.assertIn("\n\n", p.stdout, "tables set off by a blank line")

    def test_watch_with_static(self):
        self.usage_error(["static", "-w", "1"], "--watch is not supported by 'static'")

    def test_watch_zero(self):
        self.usage_error(["metric", "-w", "0"], "invalid watch interval '0'")

    def test_watch_negative(self):
        self.usage_error(["metric", "-w", "-1"], "invalid watch interval '-1'")

    def test_watch_not_a_number(self):
        self.usage_error(["metric", "-w", "abc"], "invalid watch interval 'abc'")

    def test_count_zero(self):
        self.usage_error(["metric", "-w", "1", "-n", "0"], "invalid count '0'")

    def test_count_without_watch(self):
        # Documented: --help says -n counts samples "with --watch", and cli/exit-codes.h lists
        # conflicting options as a usage error (2).
        p = self.expect(["metric", "--help"], EXIT_OK)
        count_help = [ln for ln in p.stdout.splitlines() if "--count" in ln]
        self.assertEqual(len(count_help), 1, p.stdout)
        self.assertIn("with --watch", count_help[0])
        self.assertIn("2  usage error", p.stdout)
        self.assertIn("2 usage", self.expect(["--help"], EXIT_OK).stdout)
        self.usage_error(["metric", "-n", "3"], "--count needs --watch")
        # a verb without --watch or a count takes no -n at all
        self.usage_error(["static", "-n", "3"], "option '-n' is not valid for 'static'")
        self.usage_error(["list", "-n", "3"], "--count needs --watch")

    def test_watch_json(self):
        p = run(["metric", "--json", "-w", "0.1", "-n", "3"], timeout=30)
        self.assertEqual(p.returncode, EXIT_OK, p.stderr)
        self.assertEqual(p.stderr, "")
        lines = p.stdout.split("\n")
        self.assertEqual(lines[-1], "", "output ends with a newline")
        lines = lines[:-1]
        self.assertEqual(len(lines), 3, "one line per sample")
        stamps = []
        for i, line in enumerate(lines):
            doc = json.loads(line)
            self.valid(doc, "sample %d" % i)
            self.assertEqual(doc["command"], "metric")
            self.assertEqual([g["bdf"] for g in doc["gpus"]], self.spx_bdfs)
            stamps.append(doc["timestamp"])
        # RFC 3339 UTC with milliseconds: the strings sort like the times
        self.assertEqual(stamps, sorted(set(stamps)), "time stamps strictly increasing")

    def test_watch_interrupted(self):
        # without -n, watch mode runs until SIGINT or SIGTERM, then exits 0 after a whole sample
        for sig in (signal.SIGINT, signal.SIGTERM):
            with self.subTest(signal=sig.name):
                env = {k: v for k, v in os.environ.items()
                       if k not in ("AMDSMI_DEV_ROOT", "AMDSMI_DEBUG")}
                env["AMDSMI_SYSFS_ROOT"] = tree(SPX)
                with subprocess.Popen([AMDSMI, "metric", "--json", "-w", "0.05"], env=env,
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                      text=True) as p:
                    first = p.stdout.readline()
                    p.send_signal(sig)
                    out, err = p.communicate(timeout=30)
                self.assertEqual(p.returncode, EXIT_OK, err)
                self.assertEqual(err, "")
                for line in [first] + out.splitlines():
                    self.valid(json.loads(line), "watch sample")

    def test_watch_csv(self):
        p = run(["metric", "--csv", "-w", "0.05", "-n", "2"])
        self.assertEqual(p.returncode, EXIT_OK, p.stderr)
        rows = list(csv.reader(io.StringIO(p.stdout)))
        self.assertEqual(rows[0][0], "timestamp", "watch mode leads with a timestamp column")
        self.assertEqual(rows.count(rows[0]), 1, "one header for all samples")
        self.assertEqual(len(rows), 1 + 2 * len(self.spx_bdfs))
        self.assertEqual({len(r) for r in rows}, {len(rows[0])})
        self.assertRegex(rows[1][0], r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")

    # --- GPU selection ----------------------------------------------------------------------

    def test_gpu_not_found(self):
        p = self.expect(["-g", "99", "list"], EXIT_NOT_FOUND, ["GPU 99 not found"])
        self.assertEqual(p.stdout, "")
        doc = self.json_doc(["-g", "99", "list"], status=EXIT_NOT_FOUND)
        self.assertEqual(doc["error"]["exit_code"], EXIT_NOT_FOUND)

    def test_partition_not_found_spx(self):
        p = self.expect(["-g", "0.9", "static"], EXIT_NOT_FOUND,
                        ["GPU 0 has no partition 9", "it has 1"])
        self.assertEqual(p.stdout, "")

    def test_partition_cpx(self):
        root = tree(CPX)
        doc = self.json_doc(["-g", "0.3", "static"], root)
        self.assertEqual([g["gpu"] for g in doc["gpus"]], [0])
        self.assertEqual(doc["gpus"][0]["partition_count"], 8)
        self.assertEqual([p["partition"] for p in doc["gpus"][0]["partitions"]], [3])
        doc = self.json_doc(["-g", "0.3", "metric"], root)
        self.assertEqual([g["gpu"] for g in doc["gpus"]], [0])
        self.assertEqual([p["partition"] for p in doc["gpus"][0]["gpu_metrics"]["partitions"]],
                         [3])
        p = self.expect(["-g", "0.3", "metric", "--csv"], EXIT_OK, root=root)
        rows = list(csv.DictReader(io.StringIO(p.stdout)))
        self.assertEqual(len(rows), 1)
        self.assertNotEqual(rows[0]["partition3_gfx_busy_pct"], "")
        for i in (0, 1, 2, 4, 5, 6, 7):
            self.assertEqual(rows[0]["partition%d_gfx_busy_pct" % i], "", "not selected")
        # partition 8 does not exist on an 8-partition GPU
        self.expect(["-g", "0.8", "static"], EXIT_NOT_FOUND, ["GPU 0 has no partition 8"],
                    root=root)

    def test_partitions_union(self):
        doc = self.json_doc(["-g", "1.5", "-g", "1.2,1.5", "static"], tree(CPX))
        self.assertEqual([g["gpu"] for g in doc["gpus"]], [1])
        self.assertEqual([p["partition"] for p in doc["gpus"][0]["partitions"]], [2, 5])

    def test_malformed_selection(self):
        for sel in ("x", "0.", "", ".1", "-1", "0.1.2", "1,", ",1", "0000:c6:00", "c6:20.0",
                    "c6:00.8"):
            with self.subTest(selection=sel):
                self.usage_error(["-g", sel, "list"], "invalid GPU selection '%s'" % sel)

    def test_duplicates_collapse(self):
        doc = self.json_doc(["-g", "0,0", "list"])
        self.assertEqual([g["gpu"] for g in doc["gpus"]], [0])
        doc = self.json_doc(["-g", "2", "-g", "0, 2", "list"])
        self.assertEqual([g["gpu"] for g in doc["gpus"]], [0, 2], "enumeration order")

    def test_all_absorbs(self):
        doc = self.json_doc(["-g", "all,1", "list"])
        self.assertEqual([g["bdf"] for g in doc["gpus"]], self.spx_bdfs)
        doc = self.json_doc(["-g", "ALL", "list"])
        self.assertEqual(len(doc["gpus"]), len(self.spx_bdfs))

    def test_short_bdf(self):
        for sel in ("c6:00.0", "0000:c6:00.0", "C6:00.0", "0:c6:0.0"):
            with self.subTest(selection=sel):
                doc = self.json_doc(["-g", sel, "list"])
                self.assertEqual([(g["gpu"], g["bdf"]) for g in doc["gpus"]],
                                 [(6, "0000:c6:00.0")])

    def test_unique_id(self):
        ids = [g["unique_id"] for g in self.json_doc(["list"])["gpus"]]
        self.assertEqual(len(set(ids)), len(ids))
        # list spells them "0x" and 16 hex digits; -g takes them with or without "0x"
        self.assertTrue(all(i.startswith("0x") and len(i) == 18 for i in ids), ids)
        for sel in (ids[3], ids[3].upper(), ids[3][2:]):
            with self.subTest(selection=sel):
                doc = self.json_doc(["-g", sel, "static"])
                self.assertEqual([g["gpu"] for g in doc["gpus"]], [3])
        doc = self.json_doc(["-g", "%s,1" % ids[5], "metric"])
        self.assertEqual([g["gpu"] for g in doc["gpus"]], [1, 5])
        self.expect(["-g", "0123456789abcdef", "list"], EXIT_NOT_FOUND,
                    ["no AMD GPU with unique id 0x0123456789abcdef"])
        self.usage_error(["-g", ids[3][:17], "list"],
                         "invalid GPU selection '%s'" % ids[3][:17], "a unique id")

    def test_bdf_not_found(self):
        self.expect(["-g", "c7:00.0", "list"], EXIT_NOT_FOUND, ["no AMD GPU at 0000:c7:00.0"])
        # the BMC's VGA function is a display device, but not an AMD GPU
        self.expect(["-g", "02:00.0", "list"], EXIT_NOT_FOUND, ["no AMD GPU at 0000:02:00.0"])

    # --- sysfs roots ------------------------------------------------------------------------

    def test_missing_root(self):
        with tempfile.TemporaryDirectory() as tmp:
            root = os.path.join(tmp, "nonexistent")
            for verb in ("list", "static", "metric"):
                with self.subTest(verb=verb):
                    p = self.expect([verb], EXIT_NOT_FOUND,
                                    ["no AMD GPU found under " + root], root)
                    self.assertEqual(p.stdout, "")
                    doc = self.json_doc([verb], root, EXIT_NOT_FOUND)
                    self.assertEqual(doc["command"], verb)
                    self.assertEqual(doc["error"]["exit_code"], EXIT_NOT_FOUND)
                    self.assertIn(root, doc["error"]["message"])
                    self.assertNotIn("gpus", doc)

    def test_empty_tree(self):
        with tempfile.TemporaryDirectory() as tmp:
            os.makedirs(os.path.join(tmp, "bus/pci/devices"))
            p = self.expect(["list"], EXIT_NOT_FOUND, ["no AMD GPU found under " + tmp], tmp)
            self.assertEqual(p.stdout, "")
            doc = self.json_doc(["metric"], tmp, EXIT_NOT_FOUND)
            self.assertIn("no AMD GPU found", doc["error"]["message"])

    def test_warnings_stay_off_stdout(self):
        with tempfile.TemporaryDirectory() as tmp:
            root = os.path.join(tmp, SMALL)
            shutil.copytree(tree(SMALL), root, symlinks=True, copy_function=copy_file)
            cap = None
            for dirpath, _dirs, files in os.walk(os.path.join(root, "devices")):
                if "power1_cap" in files and "name" in files:
                    cap = os.path.join(dirpath, "power1_cap")
            self.assertIsNotNone(cap, "no hwmon power1_cap in " + SMALL)
            os.chmod(cap, 0o644)
            with open(cap, "w", encoding="ascii") as f:
                f.write("\n")       # what the driver gives when the SMU query fails
            for fmt in ([], ["--csv"]):
                with self.subTest(format=fmt or "table"):
                    p = self.expect(["metric"] + fmt, EXIT_OK, ["power1_cap", "empty value"],
                                    root)
                    self.assertNotIn("amdsmi:", p.stdout)
                    self.assertNotIn("empty value", p.stdout)
                    self.assertNotIn("power1_cap", p.stdout)
                    self.assertTrue(p.stdout.startswith("gpu," if fmt else "GPU "), p.stdout)
            doc = self.json_doc(["metric"], root)
            self.assertIsNone(doc["gpus"][0]["power"]["cap_w"])
            self.assertIn("ENOMSG", [e["errno"] for e in doc["errors"]])


    # --- partition verbs, set, reset ------------------------------------------------------

    def test_partition_json_every_tree(self):
        for name in sorted(os.listdir(FIXTURES_DIR)):
            if not os.path.isdir(tree(name)):
                continue
            with self.subTest(tree=name):
                doc = self.json_doc(["partition"], tree(name))
                self.assertEqual(doc["command"], "partition")
                self.assertEqual(doc["errors"], [])
                for g in doc["gpus"]:
                    self.assertEqual(len(g["partitions"]), g["partition_count"])

    def test_partition_selection(self):
        doc = self.json_doc(["partition", "-g", "0.3,1.5"], tree(CPX))
        self.assertEqual([[p["partition"] for p in g["partitions"]] for g in doc["gpus"]],
                         [[3], [5]])
        self.assertEqual(doc["gpus"][0]["partition_count"], 8)

    def test_partition_csv_one_line_per_partition(self):
        p = self.expect(["partition", "--csv"], EXIT_OK, root=tree(CPX))
        rows = list(csv.DictReader(io.StringIO(p.stdout)))
        header = p.stdout.splitlines()[0].split(",")
        self.assertEqual(len(header), len(set(header)), "unique column names")
        self.assertEqual(len(rows), 64)
        self.assertEqual(rows[9]["gpu"], "1")
        self.assertEqual(rows[9]["partition"], "1")
        self.assertEqual(rows[0]["supported_compute_modes"], "SPX DPX QPX CPX")

    def test_partition_unknown_sub_verb(self):
        self.usage_error(["partition", "frob"], "unknown sub-verb 'frob' of 'partition'")
        self.usage_error(["partition", "set", "extra", "-g", "0", "--compute", "cpx"],
                         "unexpected argument 'extra'")

    def test_change_needs_gpu(self):
        msg = "-g missing: changes need an explicit GPU selection (-g 0, -g all)"
        self.usage_error(["set", "-C", "cpx"], msg)
        self.usage_error(["partition", "set", "--compute", "cpx"], msg)
        self.usage_error(["reset", "--reload-driver"], msg)
        p = self.expect(["set", "-C", "cpx", "--json"], EXIT_USAGE, [msg])
        doc = json.loads(p.stdout)
        self.valid(doc, "set --json")
        self.assertEqual(doc["error"]["exit_code"], EXIT_USAGE)

    def test_change_refuses_partition_selector(self):
        self.usage_error(["set", "-g", "0.3", "-C", "cpx"], "-g 0.3 selects a partition")
        self.usage_error(["reset", "-g", "1.0", "--reload-driver"], "-g 1.0 selects a partition")

    def test_mode_names(self):
        for bad in ("CP", "CPXX", "", "xpc", "UNKNOWN", "spx,cpx", "NPS4"):
            with self.subTest(mode=bad):
                self.usage_error(["set", "-g", "0", "-C", bad, "--dry-run"],
                                 "invalid compute partition mode '%s'" % bad,
                                 "SPX, DPX, TPX, QPX, CPX")
        for bad in ("NPS", "NPS44", "nps 4", "", "CPX", "4"):
            with self.subTest(mode=bad):
                self.usage_error(["partition", "set", "-g", "0", "--compute", "cpx",
                                  "--memory", bad], "invalid memory partition mode '%s'" % bad,
                                 "NPS1, NPS2, NPS3, NPS4, NPS6, NPS8")

    def test_mode_names_case_insensitive(self):
        # accepted by the parser: the dry run gets as far as the plan on a read-only tree
        # (amd-smi rejected valid lower-case names, ROCm/amdsmi#132)
        for args in (["-C", "cpx"], ["-C", "Cpx"], ["-C", "SPX"], ["-M", "nps1"]):
            with self.subTest(args=args):
                p = run(["set", "-g", "0", "--dry-run"] + args)
                self.assertNotEqual(p.returncode, EXIT_USAGE, p.stderr)
                self.assertNotIn("invalid", p.stderr)

    def test_nps3_is_not_supported_not_usage(self):
        p = self.expect(["set", "-g", "0", "-M", "NPS3", "--dry-run"], 4,
                        ["NPS3", "NPS1, NPS2, NPS4"])
        self.assertIn("NPS3", p.stdout)

    def test_options_on_wrong_verbs(self):
        self.usage_error(["list", "--compute", "cpx"],
                         "option '--compute' is not valid for 'list'")
        self.usage_error(["partition", "--dry-run"],
                         "option '--dry-run' is not valid for 'partition'")
        self.usage_error(["static", "-C", "cpx"], "option '-C' is not valid for 'static'")
        self.usage_error(["metric", "--reload-driver"],
                         "option '--reload-driver' is not valid for 'metric'")
        self.usage_error(["reset", "-g", "0", "--reload-driver", "--persist"],
                         "option '--persist' is not valid for 'reset'")
        # each change verb has one spelling of the modes
        self.usage_error(["set", "-g", "0", "--compute", "cpx"],
                         "option '--compute' is not valid for 'set' (use -C/--compute-partition)")
        self.usage_error(["set", "-g", "0", "--memory=nps4"],
                         "option '--memory' is not valid for 'set' (use -M/--memory-partition)")
        self.usage_error(["partition", "set", "-g", "0", "-C", "cpx"],
                         "option '-C' is not valid for 'partition set' (use --compute)")
        self.usage_error(["partition", "set", "-g", "0", "--memory-partition", "nps4"],
                         "option '--memory-partition' is not valid for 'partition set' "
                         "(use --memory)")

    def test_nothing_to_change(self):
        self.usage_error(["set", "-g", "0"], "nothing to set")
        self.usage_error(["reset", "-g", "0"], "nothing to reset")
        self.usage_error(["partition", "set", "-g", "0"], "nothing to change")

    def test_bad_timeout(self):
        for bad in ("0", "-1", "abc", "3601"):
            with self.subTest(timeout=bad):
                self.usage_error(["partition", "set", "-g", "0", "--compute", "cpx",
                                  "--timeout", bad], "invalid timeout '%s'" % bad)

    def test_dry_run_plans_on_fixture(self):
        # a read-only tree: plans work, exit codes as the change would have them
        doc = self.json_doc(["set", "-g", "0", "-C", "tpx", "--dry-run"], status=4)
        self.assertTrue(doc["dry_run"])
        self.assertEqual(doc["result"]["exit_code"], 4)
        self.assertEqual(doc["gpus"][0]["plan"]["reason"], "compute-not-supported")
        self.assertEqual(doc["gpus"][0]["plan"]["supported_compute_modes"],
                         ["SPX", "DPX", "QPX", "CPX"])
        doc = self.json_doc(["partition", "set", "-g", "0", "--compute", "spx", "--memory",
                             "nps4", "--dry-run"], status=7)
        self.assertEqual(doc["gpus"][0]["plan"]["reason"], "incompatible")
        self.assertEqual(doc["result"]["errno"], "ERANGE")
        self.assertIn("not valid under memory mode NPS4", doc["result"]["message"])
        self.expect(["set", "-g", "0", "-C", "cpx", "--dry-run"], 4, ["VF"], root=tree(SMALL))

    def test_memory_alone_plans_auto_modes(self):
        # --memory without --compute is set -M: the same plan, which says what the driver's
        # AUTO rule picks for every GPU of the hive
        args = ["-g", "0", "--memory", "nps1", "--dry-run"]
        p = self.expect(["partition", "set"] + args, EXIT_OK, root=tree(CPX))
        self.assertEqual(p.stdout, self.expect(["set", "-g", "0", "-M", "nps1", "--dry-run"],
                                               EXIT_OK, root=tree(CPX)).stdout)
        self.assertIn("GPU 0 (0000:05:00.0, MI300X): compute CPX -> SPX, memory NPS4 -> NPS1",
                      p.stdout)
        self.assertIn("compute CPX -> SPX: under NPS1 the driver picks SPX at the reload "
                      "(its AUTO rule)", p.stdout)
        auto = [line for line in p.stdout.splitlines() if "at the reload (AUTO rule" in line]
        self.assertEqual(len(auto), 7, p.stdout)  # the other seven GPUs of the hive
        self.assertIn("GPU 7 (0000:e5:00.0): compute CPX -> SPX", p.stdout)
        doc = self.json_doc(["partition", "set"] + args, root=tree(CPX))
        self.assertEqual(doc["gpus"][0]["plan"]["compute_after"], "SPX")
        # with --compute, the mode is the one asked for: no AUTO lines
        p = self.expect(["partition", "set", "-g", "0", "--memory", "nps1", "--compute", "spx",
                         "--dry-run"], EXIT_OK, root=tree(CPX))
        self.assertNotIn("AUTO", p.stdout)

    def test_help_lists_partition_verbs(self):
        p = self.expect(["--help"], EXIT_OK)
        for s in ("partition set", "reset", "set  "):
            self.assertIn(s, p.stdout)
        for args, options in ((["partition", "set"], ("--compute MODE", "--dry-run")),
                              (["set"], ("-C, --compute-partition", "--dry-run")),
                              (["reset"], ("--reload-driver", "--dry-run"))):
            p = self.expect(args + ["--help"], EXIT_OK)
            for s in options:
                self.assertIn(s, p.stdout, args)


def main(argv):
    global AMDSMI
    if len(argv) < 2 or not os.path.isdir(FIXTURES_DIR) or not os.path.isdir(SRCDIR):
        print(__doc__, file=sys.stderr)
        return 2
    AMDSMI = argv[1]
    prog = unittest.main(argv=[argv[0]] + argv[2:], exit=False, verbosity=2)
    return 0 if prog.result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
