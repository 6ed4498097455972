#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""amdsmi doctor through amdsmid: Manager.Doctor(), GetDocument("doctor") and the CLI.

Doctor() answers the "doctor" document, the one `amdsmi doctor --json --direct` prints (but for
the timestamp): the same checks, byte for byte, since amdsmid and the in-process run read the
same facts here (both as root, the same sysfs, device root, /proc and amdsmid.conf). The check
"amdsmid" is ok through amdsmid and with --direct while it runs, and warns without it. Any
caller may ask (reads only); the bad-page thresholds only root and callers polkit allows
org.amdsmi1.health.read-privileged see, as in the health documents.
"""
import glob
import json
import os
import re
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from daemontest import MANAGER, NOBODY, ROOT, Daemon, require_daemon  # noqa: E402

STAMP = re.compile(r'"timestamp": ?"[^"]*"')


def blind(d, user=None):
    """The CLI where the simulator's tree is an empty tmpfs: it can only ask amdsmid."""
    return ["unshare", "--mount", "--propagation", "private", "--", "sh", "-c",
            'mount -t tmpfs amdsmi-blind "$0" && exec "$@"', d.mount.root] + (user or [])


def unstamped(text):
    return STAMP.sub('"timestamp": "T"', text)


def checks(doc):
    return json.dumps(doc["checks"], sort_keys=True)


def find(doc, cid, bdf=None):
    return [c for c in doc["checks"] if c["id"] == cid and c["bdf"] == bdf][0]


class Doctor(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        require_daemon()

    def test_doctor(self):
        with Daemon(sim_args=("--frozen",)) as d:
            got = json.loads(d.call(ROOT, MANAGER, "Doctor", user=None)[0])
            direct_p = d.cli("--direct", "doctor", "--json", status=None)
            direct = json.loads(direct_p.stdout)
            via_p = d.cli("doctor", "--json", user=blind(d), status=None)
            via = json.loads(via_p.stdout)
            doc = json.loads(d.call(ROOT, MANAGER, "GetDocument", "sa{sv}", "doctor", 0)[0])
            self.assertEqual(got["command"], "doctor")
            self.assertEqual(checks(got), checks(direct))
            self.assertEqual(checks(via), checks(direct))
            self.assertEqual(checks(doc), checks(direct))
            self.assertEqual(got["summary"], direct["summary"])
            self.assertEqual(via_p.returncode, direct_p.returncode)
            self.assertEqual(direct_p.returncode, got["exit_code"])
            # amdsmid runs and nothing is desired: in sync
            c = find(got, "amdsmid")
            self.assertEqual(c["status"], "ok", c)
            self.assertEqual(c["evidence"]["sync_state"], "success")
            self.assertEqual(len([c for c in got["checks"] if c["id"] == "ras"]), 8)
            # the table through amdsmid is the in-process one
            via_t = d.cli("doctor", user=blind(d), status=None)
            direct_t = d.cli("--direct", "doctor", status=None)
            self.assertEqual(via_t.stdout, direct_t.stdout)
            self.assertEqual(via_t.returncode, direct_t.returncode)
            # -g through GetDocument
            via = json.loads(d.cli("doctor", "--json", "-g", "2", user=blind(d),
                                   status=None).stdout)
            self.assertEqual({c["gpu"] for c in via["checks"]} - {None}, {2})
            # any caller may ask; the bad-page thresholds (debugfs) as the health documents
            # give them: polkit denying org.amdsmi1.health.read-privileged, unknown and said
            nobody = json.loads(d.call(ROOT, MANAGER, "Doctor", user=NOBODY)[0])
            self.assertEqual([c["id"] for c in nobody["checks"]],
                             [c["id"] for c in got["checks"]])
            for mine, root in zip(nobody["checks"], got["checks"]):
                if mine["id"] != "bad_pages":
                    self.assertEqual(mine, root)
                    continue
                self.assertIsNotNone(root["evidence"]["threshold"], root)
                self.assertIsNone(mine["evidence"]["threshold"], mine)
                self.assertIn("needs root", mine["summary"])
            self.assertTrue(any("org.amdsmi1.health.read-privileged" in n
                                for n in nobody.get("notes", [])), nobody.get("notes"))
            self.assertNotIn("notes", got)
            d.allow("org.amdsmi1.health.read-privileged")
            nobody = json.loads(d.call(ROOT, MANAGER, "Doctor", user=NOBODY)[0])
            self.assertEqual(checks(nobody), checks(got))
            d.allow()

            # out of sync: amdsmid.conf asks a cap (applied at the reload), then an outside
            # writer changes it behind amdsmid's back: amdsmid's plan says so
            with open(os.path.join(d.config_dir, "amdsmid.conf"), "w") as f:
                f.write("[gpu 0000:05:00.0]\npower_cap = 500W\n")
            d.call(ROOT, MANAGER, "Reload")
            got = json.loads(d.call(ROOT, MANAGER, "Doctor", user=None)[0])
            self.assertEqual(find(got, "amdsmid")["status"], "ok", find(got, "amdsmid"))
            cap = glob.glob(os.path.join(d.mount.root, "bus/pci/devices/0000:05:00.0/hwmon/"
                                         "hwmon*/power1_cap"))[0]
            with open(cap, "w") as f:
                f.write("600000000")
            got = json.loads(d.call(ROOT, MANAGER, "Doctor", user=None)[0])
            c = find(got, "amdsmid")
            self.assertEqual(c["status"], "warn", c)
            self.assertEqual(c["evidence"]["sync_state"], "pending")
            self.assertIn("0000:05:00.0 power_cap", c["evidence"]["drifted"])
            self.assertIn("amdsmi apply", c["fix"])
            # --direct plans amdsmid.conf as amdsmi apply --check does: the same finding
            direct = json.loads(d.cli("--direct", "doctor", "--json", status=None).stdout)
            self.assertEqual(find(direct, "amdsmid")["evidence"]["sync_state"], "pending")
            os.unlink(os.path.join(d.config_dir, "amdsmid.conf"))

            # without amdsmid: the in-process run warns, and says how to start it
            d.stop()
            # (this host's own /proc decides the other host checks: the exit status is the
            # document's)
            p = d.cli("--direct", "doctor", "--json", status=None)
            doc = json.loads(p.stdout)
            self.assertIn(p.returncode, (1, 2))
            self.assertEqual(p.returncode, doc["exit_code"])
            c = find(doc, "amdsmid")
            self.assertEqual(c["status"], "warn")
            self.assertFalse(c["evidence"]["running"])
            self.assertEqual(c["fix"], "systemctl enable --now amdsmid")


if __name__ == "__main__":
    unittest.main(verbosity=2)
