#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""The performance controls on the simulator: its files and rules (pp_od_clk_voltage,
pm_policy/, pp_dpm_* with deep sleep, the level's side effects, "unavailable", the telemetry
held within the soft limits, the machine JSON's pm keys and the ctl commands), and amdsmi set
-l/-d/-L/-p/-x and reset -d/-c in-process (--direct) on simulator mounts: every option, dry
runs, bad values refused before anything is written, the history, the documents' schema."""

import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from simtest import (CLI, GPU0, GPU1, NOBODY, SIM, CtlMount, Mount, SchemaCase,  # noqa: E402
                     machine_variant, main, tmpdir)

EINVAL, EPERM, ENOENT, EBUSY = 22, 1, 2, 16
LEVEL = "power_dpm_force_performance_level"
OD = "pp_od_clk_voltage"
SOC = "pm_policy/soc_pstate"
PLPD = "pm_policy/xgmi_plpd"
OD_DEFAULT = "OD_SCLK:\n0: 500Mhz\n1: 2100Mhz\nOD_MCLK:\n0: 900Mhz\n1: 1300Mhz\n"


class Files(SchemaCase):
    """The simulator's side, as the kernel's SMU 13.0.6 does it."""

    def test_files(self):
        with Mount("--machine", "mi300x-8") as m:
            self.assertEqual(m.text(m.gpu(GPU0, OD)), OD_DEFAULT)
            self.assertEqual(m.text(m.gpu(GPU0, SOC)),
                             "0 : soc_pstate_default*\n1 : soc_pstate_0\n2 : soc_pstate_1\n"
                             "3 : soc_pstate_2\n")
            self.assertEqual(m.text(m.gpu(GPU0, PLPD)),
                             "0 : plpd_disallow\n1 : plpd_default*\n2 : plpd_optimized\n")
            for f in (OD, SOC, PLPD):
                self.assertEqual(os.stat(m.path(m.gpu(GPU0, f))).st_mode & 0o777, 0o644, f)
            sclk = m.text(m.gpu(GPU0, "pp_dpm_sclk")).splitlines()
            self.assertEqual(sclk[0], "0: 500Mhz")
            self.assertEqual(sclk[-1], "2: 2100Mhz")
            self.assertEqual(sum(1 for line in sclk if line.endswith("*")), 1)

    def test_od_rules(self):
        with Mount("--machine", "mi300x-8") as m:
            od, lvl = m.gpu(GPU0, OD), m.gpu(GPU0, LEVEL)
            # only in manual or perf_determinism
            for cmd in ("s 1 1500", "r", "c", "m 1 1100"):
                self.assertEqual(m.write(od, cmd + "\n"), EINVAL, cmd)
            self.assertEqual(m.text(od), OD_DEFAULT)
            self.assertEqual(m.write(lvl, "manual\n"), 0)
            self.assertEqual(m.write(od, "s 1 1500\n"), 0)
            self.assertEqual(m.write(od, "s 0 600\n"), 0)
            # not committed yet
            self.assertEqual(m.text(od), OD_DEFAULT)
            self.assertEqual(m.write(od, "c\n"), 0)
            self.assertIn("OD_SCLK:\n0: 600Mhz\n1: 1500Mhz\n", m.text(od))
            # outside the DPM table, the UCLK min, garbage
            for cmd in ("s 1 2200", "s 0 400", "m 0 1000", "m 1 1400", "m 1 800", "s 2 900",
                        "s 1", "x", "s 1 15x00", "c 1"):
                self.assertEqual(m.write(od, cmd + "\n"), EINVAL, cmd)
            # an inverted range is refused at the commit, the committed one stays
            self.assertEqual(m.write(od, "s 0 1600\n"), 0)
            self.assertEqual(m.write(od, "c\n"), EINVAL)
            self.assertIn("0: 600Mhz\n1: 1500Mhz\n", m.text(od))
            self.assertEqual(m.write(od, "m 1 1100\n"), 0)
            self.assertEqual(m.write(od, "s 0 500\n"), 0)
            self.assertEqual(m.write(od, "c\n"), 0)
            self.assertEqual(m.text(od),
                             "OD_SCLK:\n0: 500Mhz\n1: 1500Mhz\nOD_MCLK:\n0: 900Mhz\n1: 1100Mhz\n")
            # r puts the defaults back at once
            self.assertEqual(m.write(od, "r\n"), 0)
            self.assertEqual(m.text(od), OD_DEFAULT)
            # determinism: the commit keeps the ceiling; leaving it restores the defaults
            self.assertEqual(m.write(lvl, "perf_determinism\n"), 0)
            self.assertEqual(m.write(od, "s 0 900\n"), 0)
            self.assertEqual(m.write(od, "s 1 1700\n"), 0)
            self.assertEqual(m.write(od, "c\n"), 0)
            self.assertIn("OD_SCLK:\n0: 500Mhz\n1: 1700Mhz\n", m.text(od))
            self.assertEqual(m.write(lvl, "manual\n"), 0)
            self.assertEqual(m.text(od), OD_DEFAULT)
            # auto restores every default (the UCLK max too)
            self.assertEqual(m.write(od, "m 1 1100\n"), 0)
            self.assertEqual(m.write(od, "c\n"), 0)
            self.assertEqual(m.write(lvl, "auto\n"), 0)
            self.assertEqual(m.text(od), OD_DEFAULT)
            # MI300 takes three levels
            for bad in ("high", "low", "profile_peak", "bogus"):
                self.assertEqual(m.write(lvl, bad + "\n"), EINVAL, bad)
            self.assertEqual(m.value(lvl), "auto")

    def test_policy_rules(self):
        with CtlMount("--machine", "mi300x-8") as m:
            soc = m.gpu(GPU0, SOC)
            self.assertEqual(m.write(soc, "2\n"), 0)
            self.assertIn("2 : soc_pstate_1*\n", m.text(soc))
            for bad in ("4", "-1", "soc_pstate_0", "", "1 2"):
                self.assertEqual(m.write(soc, bad + "\n"), EINVAL, bad)
            self.assertIn("2 : soc_pstate_1*\n", m.text(soc))
            self.assertEqual(m.write(m.gpu(GPU0, PLPD), "2\n"), 0)
            self.assertIn("2 : plpd_optimized*\n", m.text(m.gpu(GPU0, PLPD)))
            # EPERM during a reset
            m.ctl("reset", GPU0, "begin")
            self.assertEqual(m.write(soc, "1\n"), EPERM)
            m.ctl("reset", GPU0, "end")
            self.assertEqual(m.write(soc, "1\n"), 0)
            # pm-defaults: what a GPU reset leaves
            self.assertEqual(m.write(m.gpu(GPU0, LEVEL), "manual\n"), 0)
            m.ctl("pm-defaults", GPU0)
            self.assertEqual(m.value(m.gpu(GPU0, LEVEL)), "auto")
            self.assertIn("0 : soc_pstate_default*", m.text(soc))
            self.assertIn("1 : plpd_default*", m.text(m.gpu(GPU0, PLPD)))

    def test_telemetry_within_limits(self):
        with Mount("--machine", "mi300x-8") as m:
            self.assertEqual(m.write(m.gpu(GPU0, LEVEL), "manual\n"), 0)
            self.assertEqual(m.write(m.gpu(GPU0, OD), "s 1 700\n"), 0)
            self.assertEqual(m.write(m.gpu(GPU0, OD), "c\n"), 0)
            hw = [d for d in os.listdir(m.path(m.gpu(GPU0, "hwmon")))][0]
            for _ in range(5):
                mhz = int(m.value(m.gpu(GPU0, "hwmon/%s/freq1_input" % hw))) // 1000000
                self.assertLessEqual(mhz, 700)
                self.assertGreaterEqual(mhz, 500)

    def test_deep_sleep_and_unavailable(self):
        with CtlMount("--machine", "mi300x-8") as m:
            m.ctl("sensor", GPU0, "sclk_mhz", "100")
            lines = m.text(m.gpu(GPU0, "pp_dpm_sclk")).splitlines()
            self.assertEqual(lines[0], "S: 100Mhz *")
            self.assertFalse(any(line.endswith("*") for line in lines[1:]))
            m.ctl("clocks-unavailable", GPU0, "on")
            for f in ("pp_dpm_sclk", "pp_dpm_mclk", OD):
                self.assertEqual(m.text(m.gpu(GPU0, f)), "unavailable\n", f)
            m.ctl("clocks-unavailable", GPU0, "off")
            self.assertEqual(m.text(m.gpu(GPU0, OD)), OD_DEFAULT)

    def test_guests(self):
        with Mount("--machine", "mi300x-guest-1vf") as m:
            bdf = os.listdir(m.path("bus/pci/drivers/amdgpu"))
            bdf = [b for b in bdf if ":" in b][0]
            self.assertEqual(os.stat(m.path(m.gpu(bdf, OD))).st_mode & 0o777, 0o644)
            self.assertFalse(os.path.exists(m.path(m.gpu(bdf, "pm_policy"))))
        with Mount("--machine", "mi300x-guest-multivf") as m:
            bdf = [b for b in os.listdir(m.path("bus/pci/drivers/amdgpu")) if ":" in b][0]
            self.assertFalse(os.path.exists(m.path(m.gpu(bdf, OD))))

    def test_machine_json(self):
        d = tmpdir(self, "amdsmi-perf-machine.")

        def edit(mach):
            for p in mach["products"].values():
                p["pm"] = {"soc_pstate": False, "xgmi_plpd": True, "od_mclk": False}

        path = machine_variant("mi300x-8", "no-soc-pstate", d, edit)
        with Mount("--machine", path) as m:
            self.assertFalse(os.path.exists(m.path(m.gpu(GPU0, SOC))))
            self.assertTrue(os.path.exists(m.path(m.gpu(GPU0, PLPD))))
            self.assertEqual(m.text(m.gpu(GPU0, OD)), "OD_SCLK:\n0: 500Mhz\n1: 2100Mhz\n")
            self.assertEqual(m.write(m.gpu(GPU0, LEVEL), "manual\n"), 0)
            self.assertEqual(m.write(m.gpu(GPU0, OD), "m 1 1100\n"), EINVAL)

        def solo(mach):
            for g in mach["gpus"]:
                g["hive_id"] = "0x0"

        path = machine_variant("mi300x-8", "no-hive", d, solo)
        with Mount("--machine", path) as m:
            self.assertTrue(os.path.exists(m.path(m.gpu(GPU0, SOC))))
            self.assertFalse(os.path.exists(m.path(m.gpu(GPU0, PLPD))))


class Cli(SchemaCase):
    """amdsmi set/reset's performance options, in-process on a mount."""

    maxDiff = None

    def setUp(self):
        self.rt = tmpdir(self, "amdsmi-rt.")
        self.st = tmpdir(self, "amdsmi-state.")

    def env(self, m):
        env = dict(os.environ, AMDSMI_SYSFS_ROOT=m.root, RUNTIME_DIRECTORY=self.rt,
                   STATE_DIRECTORY=self.st)
        env.pop("AMDSMI_DEBUG", None)
        return env

    def cli(self, m, *args, status=0, user=None, has=()):
        p = subprocess.run((user or []) + [CLI] + [str(a) for a in args], env=self.env(m),
                           capture_output=True, text=True, timeout=120)
        what = "amdsmi %s: exit %d, stdout %r, stderr %r" % (" ".join(map(str, args)),
                                                              p.returncode, p.stdout[-3000:],
                                                              p.stderr)
        self.assertEqual(p.returncode, status, what)
        for s in has:
            self.assertIn(s, p.stdout + p.stderr, what)
        return p

    def doc(self, m, *args, status=0, has=()):
        p = self.cli(m, *(list(args) + ["--json"]), status=status, has=has)
        d = json.loads(p.stdout)
        self.assert_valid(d, "amdsmi %s --json" % " ".join(map(str, args)))
        return d

    def files(self, m, bdf=GPU0):
        return tuple(m.text(m.gpu(bdf, f)) for f in (LEVEL, OD, SOC, PLPD))

    def history(self):
        path = os.path.join(self.st, "history.jsonl")
        if not os.path.exists(path):
            return []
        with open(path) as f:
            return [json.loads(line) for line in f if line.strip()]

    def test_static(self):
        with Mount("--machine", "mi300x-8") as m:
            d = self.doc(m, "static", "-g", 0)
            p = d["gpus"][0]["performance"]
            self.assertEqual(p["level"], "auto")
            self.assertEqual(p["levels_accepted"], ["auto", "manual", "perf_determinism"])
            self.assertEqual((p["sclk"]["soft_min_mhz"], p["sclk"]["soft_max_mhz"]), (500, 2100))
            self.assertEqual((p["sclk"]["range_min_mhz"], p["sclk"]["range_max_mhz"]), (500, 2100))
            self.assertEqual(p["mclk"]["levels_mhz"], [900, 1100, 1300])
            self.assertEqual(p["soc_pstate"]["current"], "soc_pstate_default")
            self.assertEqual(p["xgmi_plpd"]["current_id"], 1)
            self.assertEqual(len(p["xgmi_plpd"]["policies"]), 3)
            t = self.cli(m, "static", "-g", 0).stdout
            self.assertRegex(t, r"PERF LEVEL +auto")
            self.assertRegex(t, r"SOC PSTATE +soc_pstate_default")

    def test_static_unavailable(self):
        with CtlMount("--machine", "mi300x-8") as m:
            m.ctl("clocks-unavailable", GPU0, "on")
            d = self.doc(m, "static", "-g", 0)
            p = d["gpus"][0]["performance"]
            self.assertIsNone(p["sclk"]["soft_max_mhz"])
            self.assertIsNone(p["sclk"]["range_max_mhz"])
            self.assertTrue(any("unavailable" in json.dumps(e) for e in d["errors"]), d["errors"])
            before = self.files(m)
            self.cli(m, "set", "-g", 0, "-L", "sclk", "max", "1500", "--direct", status=9,
                     has=["unavailable"])
            self.assertEqual(self.files(m), before)

    def test_level(self):
        with Mount("--machine", "mi300x-8") as m:
            before = self.files(m)
            d = self.doc(m, "set", "-g", 0, "-l", "manual", "--dry-run", "--direct")
            self.assertTrue(d["dry_run"])
            self.assertEqual(d["gpus"][0]["plan"], ["set the performance level auto -> manual"])
            self.assertEqual(self.files(m), before)
            self.assertEqual(self.history(), [])
            d = self.doc(m, "set", "-g", 0, "--perf-level", "manual", "--direct")
            self.assertEqual(d["gpus"][0]["after"]["level"], "manual")
            self.assertEqual(m.value(m.gpu(GPU0, LEVEL)), "manual")
            self.assertEqual(m.value(m.gpu(GPU1, LEVEL)), "auto")
            h = self.history()
            self.assertEqual(len(h), 1)
            self.assertEqual((h[0]["change"], h[0]["old"], h[0]["new"], h[0]["via"]),
                             ("perf_level", "auto", "manual", "direct"))
            # a level MI300 does not take: refused before writing, naming the accepted ones
            before = self.files(m)
            self.cli(m, "set", "-g", 0, "-l", "high", "--direct", status=2,
                     has=["auto, manual, perf_determinism"])
            self.cli(m, "set", "-g", 0, "-l", "turbo", "--direct", status=2,
                     has=["levels: auto, manual"])
            self.cli(m, "set", "-g", 0, "-l", "perf_determinism", "--direct", status=2,
                     has=["-d/--perf-determinism"])
            self.assertEqual(self.files(m), before)
            # metric -l: the level (amd-smi's metric --perf-level)
            d = self.doc(m, "metric", "-g", "0,1", "--perf-level")
            self.assertEqual([g["perf_level"] for g in d["gpus"]], ["manual", "auto"])
            self.assertRegex(self.cli(m, "metric", "-g", 0, "-l").stdout, r"PERF LEVEL\n.*manual")
            self.cli(m, "set", "-g", "all", "-l", "auto", "--direct")
            for i in range(8):
                self.assertEqual(m.value("bus/pci/devices/%s/%s" % (
                    self.doc(m, "list")["gpus"][i]["bdf"], LEVEL)), "auto")

    def test_determinism(self):
        with Mount("--machine", "mi300x-8") as m:
            before = self.files(m)
            self.doc(m, "set", "-g", 0, "-d", "1800", "--dry-run", "--direct")
            self.assertEqual(self.files(m), before)
            for bad in ("2200", "400"):
                self.cli(m, "set", "-g", 0, "-d", bad, "--direct", status=7,
                         has=["range 500-2100 MHz"])
            self.cli(m, "set", "-g", 0, "-d", "fast", "--direct", status=2,
                     has=["ceiling in MHz"])
            self.cli(m, "set", "-g", 0, "-d", "--direct", status=2)
            self.assertEqual(self.files(m), before)
            d = self.doc(m, "set", "-g", 0, "--perf-determinism", "1800MHz", "--direct")
            self.assertEqual(d["gpus"][0]["after"]["level"], "perf_determinism")
            self.assertEqual(d["gpus"][0]["after"]["sclk"]["soft_max_mhz"], 1800)
            self.assertEqual(m.value(m.gpu(GPU0, LEVEL)), "perf_determinism")
            self.assertIn("1: 1800Mhz", m.text(m.gpu(GPU0, OD)))
            d = self.doc(m, "reset", "-g", 0, "-d", "--direct")
            self.assertEqual(d["gpus"][0]["change"], "reset_determinism")
            self.assertEqual(m.value(m.gpu(GPU0, LEVEL)), "auto")
            self.assertEqual(m.text(m.gpu(GPU0, OD)), OD_DEFAULT)

    def test_clock_limits(self):
        with Mount("--machine", "mi300x-8") as m:
            before = self.files(m)
            d = self.doc(m, "set", "-g", 0, "-L", "sclk", "max", "1500", "--dry-run", "--direct")
            self.assertIn("manual", d["gpus"][0]["plan"][0])
            self.assertEqual(d["gpus"][0]["plan"][1], "write pp_od_clk_voltage: s 1 1500, c")
            self.assertEqual(self.files(m), before)
            # refused before anything is written
            for args, status, text in (
                    (["sclk", "max", "2500"], 7, "range 500-2100 MHz"),
                    (["sclk", "min", "100"], 7, "range 500-2100 MHz"),
                    (["mclk", "max", "1400"], 7, "range 900-1300 MHz"),
                    (["mclk", "min", "1000"], 4, "minimum cannot be changed"),
                    (["sclk", "min", "2100"], 2, "inverted range"),
                    (["pclk", "max", "1000"], 2, "clocks: sclk, mclk"),
                    (["sclk", "top", "1000"], 2, "min or max"),
                    (["sclk", "max", "x"], 2, "expected MHz"),
                    (["sclk", "max"], 2, "expected MHz")):
                self.cli(m, "set", "-g", 0, "-L", *args, "--direct", status=status, has=[text])
                self.assertEqual(self.files(m), before, args)
            d = self.doc(m, "set", "-g", 0, "--clk-limit", "sclk", "max", "1500", "--direct")
            self.assertEqual(d["gpus"][0]["after"]["level"], "manual")
            self.assertEqual(m.value(m.gpu(GPU0, LEVEL)), "manual")
            self.assertIn("OD_SCLK:\n0: 500Mhz\n1: 1500Mhz\n", m.text(m.gpu(GPU0, OD)))
            self.cli(m, "set", "-g", 0, "-L", "sclk", "min", "1000", "--direct")
            self.assertIn("OD_SCLK:\n0: 1000Mhz\n1: 1500Mhz\n", m.text(m.gpu(GPU0, OD)))
            # inverted against the committed limits
            before = self.files(m)
            self.cli(m, "set", "-g", 0, "-L", "sclk", "min", "1600", "--direct", status=2,
                     has=["not below the sclk max 1500 MHz"])
            self.cli(m, "set", "-g", 0, "-L", "sclk", "max", "900", "--direct", status=2,
                     has=["not above the sclk min 1000 MHz"])
            self.assertEqual(self.files(m), before)
            self.cli(m, "set", "-g", 0, "-L", "mclk", "max", "1100", "--direct")
            self.assertIn("OD_MCLK:\n0: 900Mhz\n1: 1100Mhz\n", m.text(m.gpu(GPU0, OD)))
            # the gfx clock stays within the limits
            d = self.doc(m, "static", "-g", 0)
            self.assertLessEqual(d["gpus"][0]["performance"]["sclk"]["current_mhz"], 1500)
            # reset -c: r, c, auto
            d = self.doc(m, "reset", "-g", 0, "--clocks", "--direct")
            self.assertEqual(d["gpus"][0]["after"]["level"], "auto")
            self.assertEqual(m.text(m.gpu(GPU0, OD)), OD_DEFAULT)
            self.assertEqual(m.value(m.gpu(GPU0, LEVEL)), "auto")
            changes = [h["change"] for h in self.history() if h["result"] == "ok"]
            self.assertEqual(changes, ["clock_limit", "clock_limit", "clock_limit",
                                       "reset_clocks"])

    def test_policies(self):
        with Mount("--machine", "mi300x-8") as m:
            before = self.files(m)
            self.doc(m, "set", "-g", 0, "-p", "2", "--dry-run", "--direct")
            self.assertEqual(self.files(m), before)
            for opt, bad in (("-p", "4"), ("-p", "soc_pstate_9"), ("-x", "fast")):
                self.cli(m, "set", "-g", 0, opt, bad, "--direct", status=2,
                         has=["valid: 0 (", "unknown"])
            self.assertEqual(self.files(m), before)
            d = self.doc(m, "set", "-g", 0, "--soc-pstate", "soc_pstate_1", "--direct")
            self.assertEqual(d["gpus"][0]["after"]["soc_pstate"]["current"], "soc_pstate_1")
            self.assertIn("2 : soc_pstate_1*", m.text(m.gpu(GPU0, SOC)))
            self.cli(m, "set", "-g", 0, "-x", "2", "--direct")
            self.assertIn("2 : plpd_optimized*", m.text(m.gpu(GPU0, PLPD)))
            self.cli(m, "set", "-g", 0, "--xgmi-plpd", "PLPD_DEFAULT", "--direct")
            self.assertIn("1 : plpd_default*", m.text(m.gpu(GPU0, PLPD)))
            h = [e for e in self.history() if e["result"] == "ok"]
            self.assertEqual(h[0]["old"], "0 (soc_pstate_default)")
            self.assertEqual(h[0]["new"], "2 (soc_pstate_1)")

    def test_not_offered(self):
        with Mount("--machine", "mi300x-guest-multivf") as m:
            self.cli(m, "set", "-g", 0, "-l", "manual", "--direct", status=4,
                     has=["no performance controls"])
        with Mount("--machine", "mi300x-guest-1vf") as m:
            self.cli(m, "set", "-g", 0, "-p", "1", "--direct", status=4,
                     has=["no soc_pstate policy"])

    def test_usage(self):
        with Mount("--machine", "mi300x-8") as m:
            before = self.files(m)
            self.cli(m, "set", "-g", 0, "-l", "manual", "-p", "1", "--direct", status=2,
                     has=["one setting per command"])
            self.cli(m, "reset", "-g", 0, "-c", "-d", "--direct", status=2,
                     has=["one kind of reset"])
            self.cli(m, "reset", "-g", 0, "-l", "--direct", status=2, has=["not valid for"])
            self.cli(m, "metric", "-g", 0, "-L", "sclk", status=2, has=["not valid for"])
            # the letters keep their meaning in the other verbs
            d = self.doc(m, "metric", "-g", 0, "-p")
            self.assertIn("power", d["gpus"][0])
            self.assertEqual(self.files(m), before)

    def test_unprivileged(self):
        with Mount("--machine", "mi300x-8") as m:
            before = self.files(m)
            self.cli(m, "set", "-g", 0, "-l", "manual", user=NOBODY, status=6)
            self.assertEqual(self.files(m), before)
            # a dry run needs no privilege
            self.cli(m, "set", "-g", 0, "-l", "manual", "--dry-run", user=NOBODY)


if __name__ == "__main__":
    main()
