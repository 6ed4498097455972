#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""amdsmid.conf's [power] enforce (amdsmid.conf(5)): an outside writer that raises power1_cap
above the arbitrated cap is reported and left alone by default, and undone with enforce = yes
(a "power_enforce" history record, PropertiesChanged, at most once every 10 s however fast
the writer writes again); [gpu BDF] overrides [power] both ways; a lower cap (an external
limiter: a write below the arbitrated cap, the BMC's platform limit) is never fought; Reload
switches enforcement on and off. The test plays the outside writer by writing power1_cap of
the simulated tree."""

import importlib.util
import json
import os
import time
import unittest

from daemontest import (GPU0, GPU1, IFACE_POWER, MANAGER, ROOT, Daemon, gpu_path,
                        require_daemon, wait_until)

# the helpers of the power suite (its Monitor of PropertiesChanged, the cap file)
_spec = importlib.util.spec_from_file_location(
    "daemon_power", os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                 "test-daemon-power.py"))
power = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(power)
Monitor, W = power.Monitor, power.W

# a quick periodic check: the device's cap is read every 0.5 s
FAST = "[daemon]\npoll_interval_ms = 500\n"
LEFT_ALONE = "an outside writer; left alone (enforce = no in amdsmid.conf)"
ENFORCING = "an outside writer; enforce = yes, writing the arbitrated cap again"
BACKOFF = "not fighting it more than once every 10 s"


class Enforce(unittest.TestCase):
    maxDiff = None

    # the helpers of test-daemon-power.py's Power, bound to this test
    cap_file = power.Power.cap_file
    device_cap = power.Power.device_cap
    write_device_cap = power.Power.write_device_cap
    ctl = power.Power.ctl
    props = power.Power.props

    def set_host(self, d, watts, bdf=GPU0):
        d.call(gpu_path(bdf), IFACE_POWER, "SetSource", "sstt", "host", "", watts * W, 0)
        self.assertEqual(self.device_cap(d, bdf), watts * W)

    def enforcements(self, d, bdf=None):
        return [e for e in d.history()
                if e["change"] == "power_enforce" and (bdf is None or e["gpu"] == bdf)]

    def power_records(self, d):
        return [e for e in d.history() if e["change"].startswith("power_")]

    def assert_left_alone(self, d, watts, bdf=GPU0, enforced=0):
        """An outside writer's @watts on @bdf: reported (EffectiveSource, the log), kept; the
        GPU's enforcements stay @enforced."""
        wait_until("%s reported as an outside writer" % bdf,
                 lambda: self.props(d, bdf) == (watts * W, "outside-writer"), timeout=8)
        report = "%s: the device holds %d W, above the arbitrated 600 W: %s" % (bdf, watts,
                                                                               LEFT_ALONE)
        wait_until("the log's report", lambda: report in d.log(), timeout=8)
        time.sleep(3)  # six periodic checks
        self.assertEqual(self.device_cap(d, bdf), watts * W)
        self.assertEqual(self.props(d, bdf), (watts * W, "outside-writer"))
        self.assertEqual(len(self.enforcements(d, bdf)), enforced)

    def test_report_only_by_default(self):
        with Daemon(machine="mi300x-8", config=FAST) as d:
            self.set_host(d, 600)
            n = len(self.power_records(d))
            self.write_device_cap(d, 700 * W)
            self.assert_left_alone(d, 700)
            log = d.log()
            # reported once per value, not at every check
            self.assertEqual(log.count(LEFT_ALONE), 1, log)
            self.assertIn("the device holds 700 W, above the arbitrated 600 W", log)
            self.assertNotIn(ENFORCING, log)
            self.assertEqual(len(self.power_records(d)), n)
            # another value: reported again
            self.write_device_cap(d, 720 * W)
            wait_until("720 W reported", lambda: d.log().count(LEFT_ALONE) == 2, timeout=8)
            self.assertEqual(self.device_cap(d), 720 * W)
            # a GPU reset (the default cap back) is not an outside writer: applied again
            self.write_device_cap(d, 750 * W)
            wait_until("600 W after the reset", lambda: self.device_cap(d) == 600 * W, timeout=8)
            self.assertEqual(self.enforcements(d), [])

    def test_enforce(self):
        with Daemon(machine="mi300x-8", config=FAST + "[power]\nenforce = yes\n") as d:
            self.set_host(d, 600)
            path = gpu_path(GPU0)
            with Monitor(d) as mon:
                self.write_device_cap(d, 700 * W)
                wait_until("600 W enforced", lambda: self.device_cap(d) == 600 * W, timeout=8)
                first = time.monotonic()
                wait_until("CapUw 600 W", lambda: self.props(d) == (600 * W, "host"), timeout=5)
                wait_until("the enforcement's record", lambda: self.enforcements(d), timeout=5)
            # the property changes of any change: the outside writer's cap, then ours
            caps = [c["CapUw"] for c in mon.changed(path, IFACE_POWER) if "CapUw" in c]
            self.assertEqual(caps[-2:], [700 * W, 600 * W], mon.changed(path, IFACE_POWER))
            e = self.enforcements(d)
            self.assertEqual(len(e), 1, e)
            self.assertEqual((e[0]["gpu"], e[0]["via"], e[0]["uid"], e[0]["old"], e[0]["new"],
                              e[0]["result"]),
                             (GPU0, "amdsmid", 0, "cap 700W", "cap 600W", "ok"))
            self.assertTrue(e[0]["message"].startswith(
                "enforcing the arbitrated cap over an outside writer: "), e[0]["message"])
            log = d.log()
            self.assertIn("the device holds 700 W, above the arbitrated 600 W: " + ENFORCING, log)
            self.assertNotIn(LEFT_ALONE, log)

            # the writer again at once: not fought more than once every 10 s, and said so
            self.write_device_cap(d, 710 * W)
            wait_until("the back-off logged", lambda: BACKOFF in d.log(), timeout=8)
            if time.monotonic() - first < 8:
                self.assertEqual(self.device_cap(d), 710 * W)
            self.assertIn("an outside writer set power1_cap to 710 W again", d.log())
            wait_until("600 W enforced again", lambda: self.device_cap(d) == 600 * W,
                     timeout=20)
            self.assertGreaterEqual(time.monotonic() - first, 9.0)
            self.assertEqual(d.log().count(BACKOFF), 1)
            wait_until("two records", lambda: len(self.enforcements(d)) == 2, timeout=5)
            self.assertEqual(self.enforcements(d)[1]["old"], "cap 710W")

            # lower caps are external limiters: never enforced upward
            n = len(self.power_records(d))
            self.write_device_cap(d, 550 * W)
            wait_until("550 W external", lambda: self.props(d) == (550 * W, "external"), timeout=8)
            time.sleep(4)
            self.assertEqual(self.device_cap(d), 550 * W)
            self.assertEqual(len(self.power_records(d)), n)
            self.write_device_cap(d, 600 * W)
            self.ctl(d, "platform-limit", GPU0, 500)
            wait_until("the BMC's 500 W", lambda: self.props(d) == (500 * W, "external"),
                     timeout=8)
            time.sleep(4)
            self.assertEqual(self.props(d), (500 * W, "external"))
            self.assertEqual(len(self.power_records(d)), n)
            self.assertEqual(len(self.enforcements(d)), 2)

    def test_per_gpu_override_and_reload(self):
        on0 = FAST + "[power]\nenforce = yes\n[gpu %s]\nenforce = no\n" % GPU1
        on1 = FAST + "[power]\nenforce = no\n[gpu %s]\nenforce = yes\n" % GPU1
        with Daemon(machine="mi300x-8", config=on0) as d:
            self.set_host(d, 600)
            self.set_host(d, 600, GPU1)
            self.write_device_cap(d, 700 * W)
            self.write_device_cap(d, 700 * W, GPU1)
            # [power] yes: GPU 0 enforced; [gpu GPU1] no: GPU 1 reported, left alone
            wait_until("GPU 0 enforced", lambda: self.device_cap(d) == 600 * W, timeout=8)
            self.assert_left_alone(d, 700, GPU1)
            self.assertEqual([e["gpu"] for e in self.enforcements(d)], [GPU0])

            # Reload the other way round: GPU 1's outside writer is undone now, GPU 0's next
            # one is left alone
            d.write_config(on1)
            d.call(ROOT, MANAGER, "Reload")
            wait_until("GPU 1 enforced after Reload", lambda: self.device_cap(d, GPU1) == 600 * W,
                     timeout=8)
            self.assertIn("enforce = yes: an outside writer's higher power cap is undone", d.log())
            self.write_device_cap(d, 690 * W)
            self.assert_left_alone(d, 690, enforced=1)
            self.assertEqual([e["gpu"] for e in self.enforcements(d)], [GPU0, GPU1])

            # SIGHUP switching it off everywhere: GPU 1's next writer stays
            d.write_config(FAST)
            d.proc.send_signal(1)
            wait_until("the reload", lambda: "enforce = no: an outside writer's higher power cap "
                     "is reported and left alone" in d.log(), timeout=8)
            self.write_device_cap(d, 680 * W, GPU1)
            self.assert_left_alone(d, 680, GPU1, enforced=1)
            self.assertEqual(len(self.enforcements(d)), 2)

    def test_apply_dry_run(self):
        """amdsmi apply --dry-run shows enforce where the file says it for a GPU, and whether
        amdsmid would undo an outside writer now."""
        conf = "[power]\nenforce = yes\n[gpu %s]\nenforce = no\n" % GPU1
        with Daemon(machine="mi300x-8", config=conf, start=False) as d:
            # in-process changes (no amdsmid): the arbitrated cap is 600 W on both
            d.cli("power", "set", "-g", "0,1", "--host", "600W")
            self.write_device_cap(d, 700 * W)
            self.write_device_cap(d, 700 * W, GPU1)
            doc = json.loads(d.cli("apply", "--dry-run", "--json").stdout)
            if power.SCHEMA:
                import jsonschema
                with open(power.SCHEMA, encoding="utf-8") as f:
                    jsonschema.Draft202012Validator(json.load(f)).validate(doc)
            rows = [(r["bdf"], r["desired"], r["action"], r["message"])
                    for r in doc["settings"] if r["setting"] == "enforce"]
            # [power] yes for every GPU but GPU 1, which says no
            self.assertEqual(len(rows), 8, rows)
            self.assertEqual(rows[0], (GPU0, "yes", "apply",
                                       "the device holds 700 W, above the arbitrated 600 W (an "
                                       "outside writer): amdsmid writes the arbitrated cap "
                                       "again, at most every 10 s"))
            self.assertEqual(rows[1], (GPU1, "no", "none",
                                       "an outside writer's cap above the arbitrated one is "
                                       "reported and left alone"))
            self.assertEqual(rows[2][1:3], ("yes", "none"))
            self.assertEqual(doc["exit_code"], 0)
            # amdsmid starting finds the writer: undone where enforce says yes (a
            # "power_enforce" record), left alone on GPU 1
            d.start()
            wait_until("GPU 0 enforced at start", lambda: self.device_cap(d) == 600 * W, timeout=8)
            wait_until("the record", lambda: self.enforcements(d), timeout=5)
            self.assertEqual([(e["gpu"], e["old"], e["new"]) for e in self.enforcements(d)],
                             [(GPU0, "cap 700W", "cap 600W")])
            self.assert_left_alone(d, 700, GPU1)
            # without [power] yes, only the GPU whose section gives enforce has a row
            d.write_config("[gpu %s]\nenforce = no\n" % GPU1)
            doc = json.loads(d.cli("apply", "--dry-run", "--json").stdout)
            self.assertEqual([(r["bdf"], r["setting"], r["desired"]) for r in doc["settings"]],
                             [(GPU1, "enforce", "no")])
            self.assertIn("enforce", d.cli("apply", "--dry-run").stdout)

    def test_enforce_config_errors(self):
        """A bad value refuses the file: Reload answers InvalidArgument naming line and key,
        and the configuration in force stays (enforcing)."""
        with Daemon(machine="mi300x-8", config=FAST + "[power]\nenforce = yes\n") as d:
            d.write_config(FAST + "[power]\nenforce = on\n")
            name, msg = d.call_error(ROOT, MANAGER, "Reload")
            self.assertEqual(name, "org.amdsmi1.Error.InvalidArgument")
            self.assertIn("amdsmid.conf:4: bad enforce \"on\" (yes or no)", msg)
            self.set_host(d, 600)
            self.write_device_cap(d, 700 * W)
            wait_until("still enforced", lambda: self.device_cap(d) == 600 * W, timeout=8)


if __name__ == "__main__":
    require_daemon()
    unittest.main(verbosity=2)
