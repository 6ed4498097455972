#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Named profiles through amdsmid (issue 20): a selector file written while amdsmid runs is
picked up at the periodic check (the compute mode changes, Manager.Profile and SyncState change
and PropertiesChanged says so), a refused selector makes SyncState "failed" and keeps the
configuration in force, `amdsmi apply --profile` goes through SetProfile (the selector file
written root-owned 0644, unknown profiles refused with InvalidArgument, polkit asked), and
GetDocument("apply") agrees with `amdsmi apply --check --json --direct`."""

import json
import os
import stat
import subprocess
import sys
import unittest

import dbus

from daemontest import (GPU0, GPU1, IFACE_PARTITION, MANAGER, NOBODY, ROOT, Daemon, gpu_path,
                        require_daemon, wait_until)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from importlib import import_module  # noqa: E402

Monitor = import_module("test-daemon-power").Monitor

CONF = """[daemon]
poll_interval_ms = 200

[profile cpx]
compute_mode = SPX

[profile cpx gpu %s]
compute_mode = CPX

[profile dpx]
compute_mode = DPX
""" % GPU0


def selector(d):
    return os.path.join(d.config_dir, "profile")


def write_selector(d, text, mode=0o644):
    tmp = selector(d) + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.chmod(tmp, mode)
    os.rename(tmp, selector(d))


def volatile(doc):
    """The document without what differs from one reading to the next."""
    doc = dict(doc)
    for k in ("timestamp", "check", "dry_run"):
        doc.pop(k, None)
    return doc


class Profile(unittest.TestCase):
    maxDiff = None

    @classmethod
    def setUpClass(cls):
        require_daemon()

    def get_document(self, d, verb="apply"):
        obj = dbus.bus.BusConnection(d.address).get_object("org.amdsmi1", ROOT)
        return json.loads(obj.GetDocument(verb, dbus.Dictionary({}, signature="sv"),
                                          dbus_interface=MANAGER))

    def test_selector_picked_up(self):
        with Daemon(config=CONF) as d:
            self.assertEqual(d.get(ROOT, MANAGER, "Profile"), "")
            self.assertEqual(d.get(ROOT, MANAGER, "SyncState"), "success")
            with Monitor(d) as mon:
                # what Kubernetes or Ansible writes: a comment, the word, a final newline
                write_selector(d, "# set by the fleet\n  cpx  \n")
                wait_until("Profile cpx", lambda: d.get(ROOT, MANAGER, "Profile") == "cpx")
                wait_until("GPU0 in CPX", lambda: d.get(gpu_path(GPU0), IFACE_PARTITION,
                                                         "ComputeMode") == "CPX")
                wait_until("SyncState success",
                           lambda: d.get(ROOT, MANAGER, "SyncState") == "success")
            self.assertEqual(d.get(gpu_path(GPU1), IFACE_PARTITION, "ComputeMode"), "SPX")
            changed = mon.changed(ROOT, MANAGER)
            self.assertIn({"Profile": "cpx"}, changed)
            # the switch went through pending (the plan had a compute mode to apply) or was
            # done within one check; either way SyncState was announced as success at the end
            states = [c["SyncState"] for c in changed if "SyncState" in c]
            self.assertEqual(states[-1], "success", changed)
            self.assertIn("profile appeared: reloading the configuration", d.log())
            self.assertIn("active profile: cpx (the selector file", d.log())

            # a refused selector: the configuration in force stays, SyncState says failed
            write_selector(d, "dpx\n", mode=0o666)
            wait_until("SyncState failed", lambda: d.get(ROOT, MANAGER, "SyncState") == "failed")
            self.assertEqual(d.get(ROOT, MANAGER, "Profile"), "cpx")
            self.assertEqual(d.get(gpu_path(GPU0), IFACE_PARTITION, "ComputeMode"), "CPX")
            self.assertIn("writable by others", d.log())
            doc = self.get_document(d)
            self.assertEqual(doc["sync_state"], "failed")
            self.assertIn("writable by others", doc["config_error"])

            # a selector naming no section is refused as a whole too
            write_selector(d, "nosuch\n")
            wait_until("the refusal logged", lambda: "nosuch" in d.log())
            self.assertEqual(d.get(ROOT, MANAGER, "SyncState"), "failed")

            # removed: no profile, GPU 0 stays as it is (keys left unset leave it alone)
            os.unlink(selector(d))
            wait_until("Profile none", lambda: d.get(ROOT, MANAGER, "Profile") == "")
            wait_until("SyncState success", lambda: d.get(ROOT, MANAGER, "SyncState") == "success")
            self.assertEqual(d.get(gpu_path(GPU0), IFACE_PARTITION, "ComputeMode"), "CPX")

    def test_set_profile(self):
        with Daemon(config=CONF) as d:
            p = d.cli("apply", "--profile", "dpx")
            self.assertIn("dpx", p.stdout)
            st = os.stat(selector(d))
            self.assertEqual(stat.S_IMODE(st.st_mode), 0o644)
            self.assertEqual(st.st_uid, os.geteuid())
            with open(selector(d)) as f:
                self.assertEqual(f.read(), "dpx\n")
            self.assertEqual(d.get(ROOT, MANAGER, "Profile"), "dpx")
            wait_until("every GPU in DPX", lambda: all(
                d.get(gpu_path(g), IFACE_PARTITION, "ComputeMode") == "DPX" for g in (GPU0, GPU1)))
            wait_until("SyncState success", lambda: d.get(ROOT, MANAGER, "SyncState") == "success")
            d.cli("apply", "--check")
            d.cli("apply", "--check", "--profile", "cpx", status=1)

            # an unknown profile: InvalidArgument, nothing written
            name, msg = d.call_error(ROOT, MANAGER, "SetProfile", "string:nosuch", "uint64:0")
            self.assertEqual(name, "org.amdsmi1.Error.InvalidArgument")
            self.assertIn("no [profile nosuch] section", msg)
            p = d.cli("apply", "--profile", "nosuch", status=2)
            self.assertIn("nosuch", p.stderr)
            name, _ = d.call_error(ROOT, MANAGER, "SetProfile", "string:-bad", "uint64:0")
            self.assertEqual(name, "org.amdsmi1.Error.InvalidArgument")
            with open(selector(d)) as f:
                self.assertEqual(f.read(), "dpx\n")

            # polkit decides for other users (denied until allowed)
            name, _ = d.call_error(ROOT, MANAGER, "SetProfile", "string:cpx", "uint64:0",
                                   user=NOBODY)
            self.assertEqual(name, "org.amdsmi1.Error.PermissionDenied")
            self.assertEqual(d.get(ROOT, MANAGER, "Profile"), "dpx")

            # a dry run answers the plan of that profile and changes nothing
            doc = json.loads(d.call(ROOT, MANAGER, "SetProfile", "st", "cpx", 1)[0])
            self.assertEqual((doc["profile"], doc["in_sync"], doc["sync_state"]),
                             ("cpx", False, "pending"))
            self.assertEqual(d.get(ROOT, MANAGER, "Profile"), "dpx")

            # "" selects none: the selector file goes
            d.call(ROOT, MANAGER, "SetProfile", "st", "", 0)
            self.assertFalse(os.path.exists(selector(d)))
            self.assertEqual(d.get(ROOT, MANAGER, "Profile"), "")

    def test_document_agrees_with_direct(self):
        conf = CONF + "\n[profile mixed]\nmemory_mode = NPS4\n[profile mixed gpu %s]\n" \
                      "power_cap = 600W\n" % GPU1
        with Daemon(config=conf) as d:
            for profile in ("cpx", "mixed"):
                with self.subTest(profile=profile):
                    d.cli("apply", "--profile", profile)
                    wait_until("the changes done", lambda: d.get(ROOT, MANAGER, "SyncState")
                               in ("success", "reload-required"))
                    doc = self.get_document(d)
                    p = d.cli("apply", "--check", "--json", "--direct", status=None)
                    direct = json.loads(p.stdout)
                    self.assertEqual(volatile(doc), volatile(direct))
                    self.assertEqual(p.returncode, 0 if doc["in_sync"] else 1)
                    self.assertEqual(doc["profile"], profile)
                    self.assertEqual(doc["profile_source"], "selector")
                    self.assertEqual(d.get(ROOT, MANAGER, "SyncState"), doc["sync_state"])
            # NPS4 is recorded, not in force before a driver reload
            self.assertEqual(doc["sync_state"], "reload-required")
            rows = {(r["bdf"], r["setting"]): r for r in doc["settings"]}
            self.assertEqual(rows[(GPU0, "memory_mode")]["action"], "reload-required")
            self.assertFalse(rows[(GPU0, "memory_mode")]["in_sync"])
            self.assertTrue(rows[(GPU1, "power_cap")]["in_sync"])


if __name__ == "__main__":
    unittest.main(verbosity=2)
