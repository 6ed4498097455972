#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Named profiles of amdsmid.conf through the CLI, in-process on simulator mounts (amdsmid's
side is tests/daemon/test-daemon-profile.py): which profile is active (selector file over
profile = in [daemon], --profile over both), amdsmi apply --check's contract (exit 0 in sync,
1 drifted with the differences, other failures their own codes), the sync state, the
amdsmi_gpu_config_in_sync series of metric --prometheus, and amdsmi export's round trip
(its text, put in amdsmid.conf, checks in sync) on every built-in machine."""

import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from simtest import CLI, GPU0, GPU1, MI300X_BDFS, PRESETS, Mount, SchemaCase, main, tmpdir  # noqa: E402

EXIT_USAGE = 2


class Profiles(SchemaCase):
    def setUp(self):
        self.conf = tmpdir(self, "profile-conf")
        self.run_dir = tmpdir(self, "profile-run")
        self.state = tmpdir(self, "profile-state")

    def write(self, name, text):
        with open(os.path.join(self.conf, name), "w", encoding="utf-8") as f:
            f.write(text)

    def cli(self, m, *args, rc=0):
        env = dict(os.environ, AMDSMI_SYSFS_ROOT=m.root, RUNTIME_DIRECTORY=self.run_dir,
                   STATE_DIRECTORY=self.state, CONFIGURATION_DIRECTORY=self.conf)
        env.pop("AMDSMI_DEV_ROOT", None)
        p = subprocess.run([CLI, "--direct"] + list(args), capture_output=True, text=True,
                           env=env, timeout=120)
        if rc is not None:
            self.assertEqual(p.returncode, rc, "%s: %s%s" % (args, p.stdout, p.stderr))
        return p

    def check_json(self, m, *args, rc):
        p = self.cli(m, "apply", "--check", "--json", *args, rc=rc)
        doc = json.loads(p.stdout)
        self.assert_valid(doc, "apply --check --json")
        self.assertIs(doc["check"], True)
        self.assertEqual(doc["exit_code"], rc)
        self.assertEqual(doc["in_sync"], rc == 0)
        return doc

    def in_sync_series(self, m):
        """{(gpu, key): value} of amdsmi_gpu_config_in_sync in metric --prometheus."""
        out = {}
        for line in self.cli(m, "metric", "--prometheus").stdout.splitlines():
            if line.startswith("amdsmi_gpu_config_in_sync{"):
                labels, value = line[len("amdsmi_gpu_config_in_sync{"):].split("} ")
                lab = dict(kv.split("=", 1) for kv in labels.split(","))
                out[(lab["gpu"].strip('"'), lab["key"].strip('"'))] = float(value)
        return out

    def test_no_file_is_in_sync(self):
        with Mount("-m", "mi300x-8") as m:
            p = self.cli(m, "apply", "--check")
            self.assertIn("nothing is desired", p.stderr)
            doc = self.check_json(m, rc=0)
            self.assertIs(doc["config_exists"], False)
            self.assertEqual(doc["sync_state"], "success")
            self.assertEqual(self.in_sync_series(m), {})

    def test_check_drifted_then_in_sync(self):
        self.write("amdsmid.conf", "[daemon]\nprofile = cpx\n"
                   "[profile cpx]\ncompute_mode = CPX\n"
                   "[profile cpx gpu %s]\npower_cap = 500W\n" % GPU1)
        with Mount("-m", "mi300x-8") as m:
            # drifted: exit 1, the differing rows on stdout, the reason on stderr
            p = self.cli(m, "apply", "--check", rc=1)
            rows = [l for l in p.stdout.splitlines()[1:] if l.strip()]
            self.assertEqual(len(rows), 9, p.stdout)  # 8 compute modes, GPU 1's cap
            self.assertIn("profile cpx", p.stderr)
            self.assertIn("sync state pending", p.stderr)
            doc = self.check_json(m, rc=1)
            self.assertEqual((doc["profile"], doc["profile_source"]), ("cpx", "config"))
            self.assertEqual(doc["sync_state"], "pending")
            keys = sorted((r["bdf"], r["setting"]) for r in doc["settings"])
            self.assertEqual(keys, sorted([(b, "compute_mode") for b in MI300X_BDFS]
                                          + [(GPU1, "power_cap")]))
            self.assertFalse(any(r["in_sync"] for r in doc["settings"]))
            series = self.in_sync_series(m)
            self.assertEqual(series[(GPU0, "compute_mode")], 0)
            self.assertEqual(series[(GPU1, "power_cap")], 0)
            self.assertNotIn((GPU0, "power_cap"), series)  # a key left unset is no series
            # --csv: the same rows
            p = self.cli(m, "apply", "--check", "--csv", rc=1)
            self.assertEqual(len(p.stdout.splitlines()), 1 + 9)
            # bring part of it: GPU 0 to CPX; GPU 0's row goes, the others stay
            self.cli(m, "partition", "set", "-g", GPU0, "--compute", "CPX")
            doc = self.check_json(m, rc=1)
            row = next(r for r in doc["settings"] if r["bdf"] == GPU0)
            self.assertIs(row["in_sync"], True)
            self.assertEqual(row["action"], "none")
            self.assertEqual(self.in_sync_series(m)[(GPU0, "compute_mode")], 1)
            p = self.cli(m, "apply", "--check", rc=1)
            self.assertNotIn(GPU0, p.stdout)
            # all of it: exit 0
            self.cli(m, "partition", "set", "-g", "all", "--compute", "CPX")
            self.cli(m, "power", "set", "-g", GPU1, "--host", "500")
            p = self.cli(m, "apply", "--check")
            self.assertIn("in sync", p.stdout)
            self.assertIn("profile cpx", p.stdout)
            doc = self.check_json(m, rc=0)
            self.assertEqual(doc["sync_state"], "success")
            self.assertTrue(all(v == 1 for v in self.in_sync_series(m).values()))
            # -g narrows the check
            self.cli(m, "partition", "set", "-g", GPU1, "--compute", "SPX")
            self.cli(m, "apply", "--check", "-g", GPU0)
            self.cli(m, "apply", "--check", "-g", GPU1, rc=1)

    def test_reload_required_state(self):
        self.write("amdsmid.conf", "[profile nps4]\nmemory_mode = NPS4\n")
        with Mount("-m", "mi300x-8") as m:
            self.check_json(m, rc=0)  # no active profile: the [profile] sections do nothing
            doc = self.check_json(m, "--profile", "nps4", rc=1)
            self.assertEqual(doc["sync_state"], "reload-required")
            self.assertEqual({r["action"] for r in doc["settings"]}, {"reload-required"})

    def test_which_profile_is_active(self):
        self.write("amdsmid.conf", "[daemon]\nprofile = cpx\n"
                   "[profile cpx]\ncompute_mode = CPX\n[profile spx]\ncompute_mode = SPX\n")
        with Mount("-m", "mi300x-8") as m:
            self.assertEqual(self.check_json(m, rc=1)["profile"], "cpx")
            # the selector file wins over profile =
            self.write("profile", "spx\n")
            doc = self.check_json(m, rc=0)
            self.assertEqual((doc["profile"], doc["profile_source"]), ("spx", "selector"))
            # --profile wins over both
            doc = self.check_json(m, "--profile", "cpx", rc=1)
            self.assertEqual((doc["profile"], doc["profile_source"]), ("cpx", "option"))
            # a bad selector file is a refusal naming it, never a silent fallback
            for text, why in (("spx cpx\n", "more than one word"),
                              ("nosuch\n", "no [profile nosuch] section"),
                              ("sp/x\n", "profile")):
                self.write("profile", text)
                p = self.cli(m, "apply", "--check", rc=EXIT_USAGE)
                self.assertIn(os.path.join(self.conf, "profile"), p.stderr)
                self.assertIn(why, p.stderr)
            os.unlink(os.path.join(self.conf, "profile"))
            p = self.cli(m, "apply", "--check", "--profile", "nosuch", rc=EXIT_USAGE)
            self.assertIn("no [profile nosuch] section", p.stderr)
            # --check and --dry-run do not go together; --profile alone needs amdsmid
            self.cli(m, "apply", "--check", "--dry-run", rc=EXIT_USAGE)

    def test_export_round_trip(self):
        """On every machine, as it starts and after changes: export's text, as amdsmid.conf,
        checks in sync with its profile; JSON export carries the same text."""
        for name in PRESETS:
            with self.subTest(machine=name), Mount("-m", name, "--seed", "3") as m:
                # each machine its own state file: run-time power sources are per machine
                self.state = tmpdir(self, "profile-state")
                self.round_trip(m, name)
                if name == "mi300x-8":
                    # GPUs that differ get their own sections
                    self.cli(m, "partition", "set", "-g", GPU0, "--compute", "CPX")
                    self.cli(m, "power", "set", "-g", GPU1, "--host", "400")
                    text = self.round_trip(m, name)
                    self.assertIn("[profile snap gpu %s]" % GPU0, text)
                    self.assertIn("[profile snap gpu %s]" % GPU1, text)

    def round_trip(self, m, name):
        text = self.cli(m, "export", "--profile", "snap").stdout
        self.assertTrue(text.startswith("[profile snap]\n"), text)
        doc = json.loads(self.cli(m, "export", "--profile", "snap", "--json").stdout)
        self.assert_valid(doc, "export --json")
        self.assertEqual((doc["profile"], doc["text"]), ("snap", text))
        self.write("amdsmid.conf", text)
        doc = self.check_json(m, "--profile", "snap", rc=0)
        self.assertTrue(doc["settings"], "%s: export said nothing to check" % name)
        # a different machine state drifts from it
        return text


if __name__ == "__main__":
    main()
