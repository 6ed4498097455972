#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""org.amdsmi1.Performance of amdsmid and amdsmi set/reset's performance options through it:
the properties and PropertiesChanged, every method as root, denied to an unprivileged caller
until polkit allows org.amdsmi1.performance.configure, dry runs (no authorisation, nothing
written), bad values refused before anything is written (InvalidArgument, OutOfRange), the
history, the operator's settings kept in the state file and applied again when the GPU comes
back (a re-plug, the simulator's pm-defaults as a reset leaves the SMU), and amdsmid.conf's
performance keys applied at start and on reload."""

import json
import os
import signal
import subprocess
import unittest

from daemontest import (BUS, GPU0, GPU1, NOBODY, ROOT, SIM, Daemon, gpu_path, require_daemon,
                        wait_until)

IFACE = "org.amdsmi1.Performance"
ACTION = "org.amdsmi1.performance.configure"
DRY = 1
P0, P1 = gpu_path(GPU0), gpu_path(GPU1)
LEVEL = "power_dpm_force_performance_level"
OD = "pp_od_clk_voltage"
SOC = "pm_policy/soc_pstate"
OD_DEFAULT = "OD_SCLK:\n0: 500Mhz\n1: 2100Mhz\nOD_MCLK:\n0: 900Mhz\n1: 1300Mhz\n"


def ctl(d, *args):
    p = subprocess.run([SIM, "ctl", "--mount", d.mount.root] + [str(a) for a in args],
                       capture_output=True, text=True, timeout=30)
    if p.returncode != 0:
        raise AssertionError("amdsmi-sim ctl %s: %s" % (" ".join(map(str, args)), p.stderr))
    return p.stdout


def text(d, bdf, f):
    with open(d.mount.path("bus/pci/devices/%s/%s" % (bdf, f))) as fh:
        return fh.read()


def files(d, bdf=GPU0):
    return tuple(text(d, bdf, f) for f in (LEVEL, OD, SOC))


class Performance(unittest.TestCase):
    def test_properties_and_methods(self):
        with Daemon() as d:
            self.assertEqual(d.get(P0, IFACE, "PerformanceLevel"), "auto")
            self.assertEqual(d.get(P0, IFACE, "SocPstate"), "soc_pstate_default")
            self.assertEqual(d.get(P0, IFACE, "XgmiPlpd"), "plpd_default")
            # a dry run: the plan, nothing written
            before = files(d)
            doc = json.loads(d.call(P0, IFACE, "SetClockLimit", "ssut", "sclk", "max", 1500,
                                    DRY)[0])
            self.assertTrue(doc["dry_run"])
            self.assertEqual(doc["plan"][1], "write pp_od_clk_voltage: s 1 1500, c")
            self.assertEqual(files(d), before)
            # root: applied, verified, the properties follow
            doc = json.loads(d.call(P0, IFACE, "SetClockLimit", "ssut", "sclk", "max", 1500,
                                    0)[0])
            self.assertEqual(doc["after"]["sclk"]["soft_max_mhz"], 1500)
            self.assertIn("1: 1500Mhz", text(d, GPU0, OD))
            self.assertEqual(d.get(P0, IFACE, "PerformanceLevel"), "manual")
            json.loads(d.call(P0, IFACE, "SetPolicy", "sst", "soc_pstate", "soc_pstate_1", 0)[0])
            self.assertEqual(d.get(P0, IFACE, "SocPstate"), "soc_pstate_1")
            d.call(P0, IFACE, "SetDeterminism", "ut", 1800, 0)
            self.assertEqual(d.get(P0, IFACE, "PerformanceLevel"), "perf_determinism")
            self.assertIn("1: 1800Mhz", text(d, GPU0, OD))
            d.call(P0, IFACE, "ResetClocks", "t", 0)
            self.assertEqual(d.get(P0, IFACE, "PerformanceLevel"), "auto")
            self.assertEqual(text(d, GPU0, OD), OD_DEFAULT)
            d.call(P0, IFACE, "SetPerformanceLevel", "st", "manual", 0)
            self.assertEqual(text(d, GPU0, LEVEL), "manual\n")
            explain = json.loads(d.call(P0, IFACE, "Explain")[0])
            self.assertEqual(explain["gpus"][0]["performance"]["level"], "manual")
            self.assertIn("level manual", explain["gpus"][0]["operator_set"])
            # the history: one record per change, via amdsmid
            h = [e for e in d.history() if e["change"] in (
                "clock_limit", "pm_policy", "perf_determinism", "reset_clocks", "perf_level")]
            self.assertEqual([e["change"] for e in h],
                             ["clock_limit", "pm_policy", "perf_determinism", "reset_clocks",
                              "perf_level"])
            self.assertTrue(all(e["via"] == "amdsmid" and e["result"] == "ok" for e in h))
            self.assertEqual((h[1]["old"], h[1]["new"]),
                             ("0 (soc_pstate_default)", "2 (soc_pstate_1)"))

    def test_refused_before_writing(self):
        with Daemon() as d:
            before = files(d)
            for method, sig, args, name in (
                    ("SetPerformanceLevel", "string:turbo", "uint64:0", "InvalidArgument"),
                    ("SetPerformanceLevel", "string:high", "uint64:0", "InvalidArgument"),
                    ("SetClockLimit", "string:sclk", "string:max", "InvalidArgument"),
                    ("SetPolicy", "string:soc_pstate", "string:9", "InvalidArgument")):
                extra = ["uint32:9999", "uint64:0"] if method == "SetClockLimit" else \
                    ["uint64:0"] if method == "SetPolicy" else []
                if method == "SetPerformanceLevel":
                    err = d.call_error(P0, IFACE, method, sig, args)
                elif method == "SetClockLimit":
                    err = d.call_error(P0, IFACE, method, sig, args, *extra)
                    name = "OutOfRange"
                else:
                    err = d.call_error(P0, IFACE, method, sig, args, *extra)
                self.assertEqual(err[0], "org.amdsmi1.Error." + name, (method, err))
            err = d.call_error(P0, IFACE, "SetClockLimit", "string:mclk", "string:min",
                               "uint32:1000", "uint64:0")
            self.assertEqual(err[0], "org.amdsmi1.Error.NotSupported")
            self.assertIn("minimum cannot be changed", err[1])
            err = d.call_error(P0, IFACE, "SetPolicy", "string:xgmi_plpd", "string:fast",
                               "uint64:0")
            self.assertIn("valid: 0 (plpd_disallow)", err[1])
            err = d.call_error(P0, IFACE, "ResetClocks", "uint64:4")
            self.assertEqual(err[0], "org.amdsmi1.Error.InvalidArgument")
            self.assertEqual(files(d), before)

    def test_polkit(self):
        with Daemon() as d:
            before = files(d)
            err = d.call_error(P0, IFACE, "SetPerformanceLevel", "string:manual", "uint64:0",
                               user=NOBODY)
            self.assertEqual(err[0], "org.amdsmi1.Error.PermissionDenied")
            p = d.cli("set", "-g", 0, "-l", "manual", user=NOBODY, status=6)
            self.assertIn("not authorised", p.stderr)
            self.assertEqual(files(d), before)
            # a dry run needs no authorisation
            d.call(P0, IFACE, "SetPerformanceLevel", "st", "manual", DRY, user=NOBODY)
            d.cli("set", "-g", 0, "-p", "1", "--dry-run", user=NOBODY)
            self.assertEqual(files(d), before)
            # another action does not allow it
            d.allow("org.amdsmi1.power.configure")
            d.cli("set", "-g", 0, "-x", "2", user=NOBODY, status=6)
            d.allow(ACTION)
            d.cli("set", "-g", 0, "-x", "2", user=NOBODY)
            self.assertIn("2 : plpd_optimized*", text(d, GPU0, "pm_policy/xgmi_plpd"))
            rec = [e for e in d.history() if e["change"] == "pm_policy"]
            self.assertEqual(rec[-1]["uid"], 65534)

    def test_cli_through_amdsmid(self):
        with Daemon() as d:
            p = d.cli("set", "-g", 0, "-L", "sclk", "max", "1600", "--json")
            doc = json.loads(p.stdout)
            self.assertEqual(doc["gpus"][0]["after"]["sclk"]["soft_max_mhz"], 1600)
            self.assertIn("1: 1600Mhz", text(d, GPU0, OD))
            p = d.cli("set", "-g", 0, "-L", "sclk", "max", "3000", status=7)
            self.assertIn("range 500-2100 MHz", p.stderr)
            d.cli("reset", "-g", 0, "-c")
            self.assertEqual(text(d, GPU0, OD), OD_DEFAULT)
            # --direct while amdsmid runs needs --force
            d.cli("set", "-g", 0, "-l", "manual", "--direct", status=5)
            self.assertEqual([e["via"] for e in d.history() if e["change"] == "clock_limit"],
                             ["amdsmid", "amdsmid"])

    def test_reapplied_after_reset_and_replug(self):
        with Daemon() as d:
            d.cli("set", "-g", 1, "-L", "sclk", "max", "1500")
            d.cli("set", "-g", 1, "-p", "2")
            with open(os.path.join(d.state_dir, "state.json")) as f:
                rec = json.load(f)["gpus"][GPU1]["performance"]
            self.assertEqual((rec["level"], rec["sclk_max_mhz"], rec["soc_pstate"]),
                             ("manual", 1500, "2"))
            # a re-plug: the GPU comes back with the SMU's defaults, then the operator's
            ctl(d, "unplug", GPU1)
            wait_until("GPU 1 removed", lambda: P1 not in d.call(
                ROOT, "org.freedesktop.DBus.ObjectManager", "GetManagedObjects")[0])
            ctl(d, "replug", GPU1)
            # (the limit and the policy are applied one after the other)
            wait_until("GPU 1 back in manual with its limit and policy",
                       lambda: os.path.exists(d.mount.path("bus/pci/devices/%s/%s" % (GPU1, OD)))
                       and "1: 1500Mhz" in text(d, GPU1, OD)
                       and "2 : soc_pstate_1*" in text(d, GPU1, SOC), timeout=40)
            self.assertEqual(text(d, GPU1, LEVEL), "manual\n")
            # reset -c: the operator wants the defaults now; kept too
            d.cli("reset", "-g", 1, "-c")
            with open(os.path.join(d.state_dir, "state.json")) as f:
                rec = json.load(f)["gpus"][GPU1]["performance"]
            self.assertEqual((rec["level"], rec["sclk_max_mhz"]), ("auto", 0))

    def test_reapplied_after_driver_reload(self):
        with Daemon() as d:
            d.cli("set", "-g", 1, "-L", "sclk", "max", "1500")
            d.cli("set", "-g", 1, "-x", "plpd_optimized")
            # the reload probes the hive's GPUs again: the SMU's defaults, then the operator's
            d.cli("reset", "-g", 1, "--reload-driver")
            # (the limit and the policy are applied one after the other)
            wait_until("GPU 1 back in manual with its limit and policy",
                       lambda: os.path.exists(d.mount.path("bus/pci/devices/%s/%s" % (GPU1, OD)))
                       and "1: 1500Mhz" in text(d, GPU1, OD)
                       and "2 : plpd_optimized*" in text(d, GPU1, "pm_policy/xgmi_plpd"),
                       timeout=60)
            self.assertEqual(text(d, GPU0, LEVEL), "auto\n")

    def test_restart_applies_kept_settings(self):
        with Daemon() as d:
            d.cli("set", "-g", 0, "-d", "1700")
            d.stop()
            # what a GPU reset leaves: the SMU's defaults
            ctl(d, "pm-defaults", GPU0)
            self.assertEqual(text(d, GPU0, LEVEL), "auto\n")
            d.start()
            self.assertEqual(text(d, GPU0, LEVEL), "perf_determinism\n")
            self.assertIn("1: 1700Mhz", text(d, GPU0, OD))

    def test_config(self):
        conf = ("[gpu]\nsoc_pstate = soc_pstate_0\n[gpu %s]\nperf_level = manual\n"
                "sclk_max_mhz = 1800\nsclk_min_mhz = 700\nmclk_max_mhz = 1100\n" % GPU0)
        with Daemon(config=conf) as d:
            # applied before READY=1
            self.assertEqual(text(d, GPU0, LEVEL), "manual\n")
            self.assertEqual(text(d, GPU0, OD),
                             "OD_SCLK:\n0: 700Mhz\n1: 1800Mhz\nOD_MCLK:\n0: 900Mhz\n1: 1100Mhz\n")
            self.assertIn("1 : soc_pstate_0*", text(d, GPU1, SOC))
            self.assertEqual(text(d, GPU1, LEVEL), "auto\n")
            # apply --check / --dry-run compare them: in sync once applied
            d.cli("apply", "--check")
            doc = json.loads(d.cli("apply", "--dry-run", "--json", "-g", "0").stdout)
            rows = {r["setting"]: (r["now"], r["desired"], r["action"]) for r in doc["settings"]}
            self.assertEqual(rows["sclk_max_mhz"], (1800, 1800, "none"))
            self.assertEqual(rows["perf_level"], ("manual", "manual", "none"))
            self.assertEqual(rows["soc_pstate"], ("soc_pstate_0", "soc_pstate_0", "none"))
            # a reload with a changed key applies it
            d.write_config(conf.replace("1800", "1600") + "[gpu %s]\nperf_level = determinism\n"
                           "perf_determinism_sclk_mhz = 1900\n" % GPU1)
            d.proc.send_signal(signal.SIGHUP)
            wait_until("sclk max 1600 on GPU 0", lambda: "1: 1600Mhz" in text(d, GPU0, OD))
            # (the level is written before the ceiling is committed)
            wait_until("determinism at 1900 MHz on GPU 1",
                       lambda: text(d, GPU1, LEVEL) == "perf_determinism\n"
                       and "1: 1900Mhz" in text(d, GPU1, OD))
            # an operator's setting wins over the file until reset; apply --check says so
            d.cli("set", "-g", 0, "-L", "sclk", "max", "1500")
            d.cli("apply", "--check", status=1)
            # export prints the keys
            p = d.cli("export")
            self.assertIn("sclk_max_mhz = 1500", p.stdout)
            self.assertIn("soc_pstate = soc_pstate_0", p.stdout)
            # a key removed from the file leaves the GPU as it is (as for partition modes)
            d.write_config(conf.replace("1800", "1700"))
            d.call(ROOT, "org.amdsmi1.Manager", "Reload")
            d.cli("apply", "--dry-run", "-g", "1")  # after the reload's jobs (serialised)
            self.assertEqual(text(d, GPU1, LEVEL), "perf_determinism\n")
            self.assertIn("1: 1500Mhz", text(d, GPU0, OD))

    def test_config_refused(self):
        with Daemon(config="[gpu]\nperf_level = high\n") as d:
            before = files(d)
            err = d.describe()["daemon"]["config_error"]
            self.assertIn('amdsmid.conf:2: bad perf_level "high"', err)
            for bad, what in (("sclk_max_mhz = fast\n", "sclk_max_mhz"),
                              ("soc_pstate = a b\n", 'bad soc_pstate "a b"'),
                              ("mclk_max_mhz = 0\n", "mclk_max_mhz"),
                              ("perf_determinism_sclk_mhz = 200000\n",
                               "perf_determinism_sclk_mhz")):
                d.write_config("[gpu %s]\n%s" % (GPU0, bad))
                name, msg = d.call_error(ROOT, "org.amdsmi1.Manager", "Reload")
                self.assertEqual(name, "org.amdsmi1.Error.InvalidArgument", bad)
                self.assertIn("amdsmid.conf:2:", msg)
                self.assertIn(what, msg)
            self.assertEqual(files(d), before)


if __name__ == "__main__":
    require_daemon()
    unittest.main(verbosity=2)
