#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""The read verbs through amdsmid (Manager.GetDocument, ARCHITECTURE §4).

With amdsmid running, `amdsmi list|static|metric|partition|power|sriov` ask it for their
document and read nothing under /sys themselves: the CLI runs here with AMDSMI_SYSFS_ROOT at
a directory that does not exist, so any read of its own would fail. The output must be what
`--direct` prints on the same (frozen) simulator, in every format, byte for byte but for the
JSON timestamp.
"""
import json
import os
import re
import subprocess
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from daemontest import (GPU1, MANAGER, MI300X_BDFS, NOBODY, ROOT, SIM, Daemon,  # noqa: E402
                        require_daemon)

import dbus  # noqa: E402

NOWHERE = {"AMDSMI_SYSFS_ROOT": "/nonexistent/amdsmi-test-sysfs"}
STAMP = re.compile(r'"timestamp": ?"[^"]*"')

# metric's limiters need two samples: --throttle gives the in-process reading its two, as
# amdsmid's sampler has them
CASES = [
    ("list",), ("list", "-g", "1"), ("static",), ("static", "-g", "0,3"),
    ("metric", "--throttle"), ("metric", "--throttle", "-g", "2"),
    ("metric", "-T", "-p", "--fields", "gpu_metrics.pcie.width"),
    ("partition",), ("partition", "-g", "0.0"), ("power",), ("power", "-g", "7"),
    ("sriov",),
]


def unstamped(text):
    return STAMP.sub('"timestamp": "T"', text)


def without_limiters(text):
    """power has no --throttle: its JSON limiters (which need two samples) are left out."""
    doc = json.loads(text)
    for g in doc["gpus"]:
        g.pop("limiters")
    doc["timestamp"] = "T"
    return doc


class Documents(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        require_daemon()

    def bus(self, d):
        return dbus.bus.BusConnection(d.address)

    def get_document(self, d, verb, options):
        obj = self.bus(d).get_object("org.amdsmi1", ROOT)
        return json.loads(obj.GetDocument(verb, options, dbus_interface=MANAGER))

    def assertBusError(self, d, name, verb, options, message=None):
        with self.assertRaises(dbus.exceptions.DBusException) as cm:
            self.get_document(d, verb, options)
        self.assertEqual(cm.exception.get_dbus_name(), name)
        if message:
            self.assertIn(message, cm.exception.get_dbus_message())

    def test_every_read_verb_as_direct(self):
        with Daemon(sim_args=("--frozen",)) as d:
            for case in CASES:
                for fmt in ((), ("--json",), ("--csv",)):
                    args = case + fmt
                    with self.subTest(args=" ".join(args)):
                        via = d.cli(*args, user=NOBODY, env=NOWHERE, status=None)
                        direct = d.cli("--direct", *args, status=None)
                        self.assertEqual(via.returncode, direct.returncode, via.stderr)
                        self.assertEqual(via.returncode, 0, via.stderr)
                        if case[0] == "power" and "--json" in fmt:
                            self.assertEqual(without_limiters(via.stdout),
                                             without_limiters(direct.stdout))
                        else:
                            self.assertEqual(unstamped(via.stdout), unstamped(direct.stdout))
                        self.assertEqual(via.stderr, direct.stderr)
                        self.assertNotEqual(via.stdout, "")

    def test_overview(self):
        # bare `amdsmi`: amdsmid's list, metric and sriov documents, nothing read here
        with Daemon(sim_args=("--frozen",)) as d:
            via = d.cli(user=NOBODY, env=NOWHERE).stdout
            self.assertIn("8 GPUs:", via)
            self.assertIn("amdsmid is running: changes go through it.", via)
            # the same rows as read in-process (amdsmid's PID file hidden: it "does not run")
            here = d.cli(env={"RUNTIME_DIRECTORY": d.tmp}).stdout
            self.assertIn("amdsmid is not running", here)
            self.assertEqual(via.split("\n\namdsmid")[0], here.split("\n\namdsmid")[0])

    def test_bus_address_entries(self):
        # the CLI's own D-Bus client (cli/dbus-mini.c) takes the first unix: entry of the
        # address; a read through it loads no libsystemd
        with Daemon(sim_args=("--frozen",)) as d:
            env = dict(NOWHERE, DBUS_SYSTEM_BUS_ADDRESS="tcp:host=127.0.0.1,port=9;" +
                       d.address, LD_DEBUG="files")
            p = d.cli("list", "--json", "-g", "0,2", env=env)
            self.assertEqual([g["gpu"] for g in json.loads(p.stdout)["gpus"]], [0, 2])
            self.assertNotIn("file=libsystemd", p.stderr)
            # an address only sd-bus knows (unix:runtime=) goes through sd-bus
            p = d.cli("list", env=dict(NOWHERE, DBUS_SYSTEM_BUS_ADDRESS="unix:runtime=yes",
                                       LD_DEBUG="files"), status=None)
            self.assertIn("file=libsystemd", p.stderr)

    def test_pid_file_without_owner(self):
        # amdsmid's PID file names a live process, but no one owns org.amdsmi1: the read
        # asks (ServiceUnknown) and then reads in-process, as --direct does
        with Daemon(sim_args=("--frozen",), polkit=False, start=False) as d:
            with open(os.path.join(d.runtime_dir, "amdsmid.pid"), "w") as f:
                f.write("%d\n" % os.getpid())
            for args in (("list", "--csv"), ("static", "-g", "1", "--csv")):
                with self.subTest(args=args):
                    via = d.cli(*args)
                    direct = d.cli("--direct", *args)
                    self.assertEqual(via.stdout, direct.stdout)
                    self.assertEqual(via.stderr, "")
            # no bus at all behind the address: the same
            direct = d.cli("--direct", "list", "--csv")
            via = d.cli("list", "--csv", env={"DBUS_SYSTEM_BUS_ADDRESS":
                                              "unix:path=" + d.tmp + "/nothing"})
            self.assertEqual(via.stdout, direct.stdout)

    def test_direct_reads_sysfs(self):
        # the control: --direct does read the (missing) tree, so the test above can fail
        with Daemon() as d:
            p = d.cli("--direct", "metric", "--json", env=NOWHERE, status=None)
            self.assertNotEqual(p.returncode, 0)
            self.assertIn("no AMD GPU found under /nonexistent", p.stderr)

    def test_document_answers(self):
        with Daemon(sim_args=("--frozen",)) as d:
            doc = self.get_document(d, "metric", {"gpus": dbus.Array(["1"], signature="s")})
            self.assertEqual((doc["schema"], doc["command"]), ("amdsmi/1", "metric"))
            self.assertEqual([g["gpu"] for g in doc["gpus"]], [1])
            # amdsmid's sampler has two samples: the limiters are measured, not unknown
            self.assertNotEqual(doc["gpus"][0]["limiters"]["status"], "one_sample")
            doc = self.get_document(d, "partition", dbus.Dictionary({}, signature="sv"))
            self.assertEqual(len(doc["gpus"]), 8)
            self.assertNotIn("notes", doc)
            doc = self.get_document(d, "power", {"gpus": dbus.Array(["0000:26:00.0", "all"],
                                                                    signature="s")})
            self.assertEqual(len(doc["gpus"]), 8)
            for verb in ("list", "static", "sriov"):
                self.assertEqual(self.get_document(d, verb, {})["command"], verb)

    def test_document_text(self):
        # GetDocumentText: GetDocument's document as amdsmi prints it, its notes apart
        with Daemon(sim_args=("--frozen",)) as d:
            obj = self.bus(d).get_object("org.amdsmi1", ROOT)
            for verb, options in (("metric", {"gpus": dbus.Array(["1"], signature="s")}),
                                  ("list", {}), ("static", {}), ("partition", {}),
                                  ("power", {}), ("sriov", {})):
                with self.subTest(verb=verb):
                    options = dbus.Dictionary(options, signature="sv")
                    text, notes = obj.GetDocumentText(verb, options, dbus_interface=MANAGER)
                    self.assertEqual(list(notes), [])
                    # pretty, two spaces, no final newline (amdsmi adds it)
                    self.assertTrue(text.startswith('{\n  "schema": "amdsmi/1",\n'), text[:40])
                    self.assertTrue(text.endswith("\n}"), text[-20:])
                    doc = json.loads(text)
                    other = self.get_document(d, verb, options)
                    if verb in ("metric", "power"):
                        for g in doc["gpus"] + other["gpus"]:
                            g.pop("limiters", None)
                    doc["timestamp"] = other["timestamp"] = "T"
                    self.assertEqual(doc, other)
            with self.assertRaises(dbus.exceptions.DBusException) as cm:
                obj.GetDocumentText("reset", dbus.Dictionary({}, signature="sv"),
                                    dbus_interface=MANAGER)
            self.assertEqual(cm.exception.get_dbus_name(), "org.amdsmi1.Error.InvalidArgument")
            self.assertIn("GetDocumentText: unknown verb 'reset'",
                          cm.exception.get_dbus_message())

    def test_cli_asks_for_text(self):
        # --json asks for the text (nothing to parse); a table, CSV, --fields and a watch ask
        # for the document. Seen on the bus by a monitor (the bus's owner: root).
        with Daemon(sim_args=("--frozen",)) as d:
            mon = subprocess.Popen(
                ["dbus-monitor", "--address", d.address, "--monitor",
                 "type='method_call',interface='org.amdsmi1.Manager'"],
                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
            try:
                obj = self.bus(d).get_object("org.amdsmi1", ROOT)
                seen = []

                def calls_until(marker):
                    """The member and verb of every call up to GetDocument(@marker)."""
                    deadline = time.monotonic() + 30
                    got = []
                    member = None
                    while time.monotonic() < deadline:
                        line = mon.stdout.readline()
                        m = re.search(r"member=(\w+)", line)
                        if m:
                            member = m.group(1)
                            continue
                        m = re.match(r'\s+string "(\w*)"', line)
                        if member and m:
                            if (member, m.group(1)) == ("GetDocument", marker):
                                return got
                            got.append((member, m.group(1)))
                            member = None
                    self.fail("no call of %s seen: %s" % (marker, got))

                def mark(marker):
                    try:
                        obj.GetDocument(marker, dbus.Dictionary({}, signature="sv"),
                                        dbus_interface=MANAGER)
                    except dbus.exceptions.DBusException:
                        pass

                # the monitor is ready once it sees a call
                deadline = time.monotonic() + 30
                while not seen and time.monotonic() < deadline:
                    mark("ready")
                    line = mon.stdout.readline()
                    seen = "member=GetDocument" in line and [line]
                mark("start")
                calls_until("start")
                for args, member in ((("metric", "--json"), "GetDocumentText"),
                                     (("list", "--json", "-g", "1"), "GetDocumentText"),
                                     (("power", "--json"), "GetDocumentText"),
                                     (("metric", "--csv"), "GetDocument"),
                                     (("metric", "--json", "-p"), "GetDocument"),
                                     (("static",), "GetDocument"),
                                     (("partition", "--json", "-w", "0.1", "-n", "1"),
                                      "GetDocument")):
                    with self.subTest(args=args):
                        d.cli(*args, env=NOWHERE)
                        mark("end")
                        self.assertEqual(calls_until("end"), [(member, args[0])])
            finally:
                mon.kill()
                mon.wait()
                mon.stdout.close()

    def test_bad_calls(self):
        with Daemon() as d:
            inval = "org.amdsmi1.Error.InvalidArgument"
            self.assertBusError(d, inval, "reset", {}, "unknown verb 'reset'")
            self.assertBusError(d, inval, "", {}, "unknown verb ''")
            self.assertBusError(d, inval, "list", {"gpu": dbus.Array(["0"], signature="s")},
                                "unknown option 'gpu'")
            self.assertBusError(d, inval, "list", {"gpus": dbus.String("0")},
                                "option 'gpus' must be an array of strings")
            self.assertBusError(d, inval, "list", {"gpus": dbus.Array([dbus.UInt32(0)],
                                                                      signature="u")},
                                "option 'gpus' must be an array of strings")
            self.assertBusError(d, inval, "static", {"gpus": dbus.Array(["zz"], signature="s")},
                                "invalid GPU selection 'zz'")
            self.assertBusError(d, "org.amdsmi1.Error.NotFound", "metric",
                                {"gpus": dbus.Array(["9"], signature="s")},
                                "GPU 9 not found (8 GPUs present)")
            self.assertBusError(d, "org.amdsmi1.Error.NotFound", "list",
                                {"gpus": dbus.Array(["0000:99:00.0"], signature="s")},
                                "no AMD GPU at 0000:99:00.0")
            # the CLI says what --direct says, with the same exit status
            for args in (("list", "-g", "9"), ("metric", "-g", "0.5"),
                         ("static", "-g", "0000:99:00.0")):
                with self.subTest(args=args):
                    via = d.cli(*args, env=NOWHERE, status=None)
                    direct = d.cli("--direct", *args, status=None)
                    self.assertEqual(via.returncode, 3)
                    self.assertEqual(via.returncode, direct.returncode)
                    self.assertEqual(via.stderr, direct.stderr)
            # still serving
            self.assertEqual(len(self.get_document(d, "list", {})["gpus"]), 8)

    def test_moved_indexes_noted(self):
        with Daemon() as d:
            ids = {g["bdf"]: g["unique_id"] for g in self.get_document(d, "list", {})["gpus"]}
            p = subprocess.run([SIM, "ctl", "--mount", d.mount.root, "unplug", GPU1],
                               capture_output=True, text=True, timeout=60)
            self.assertEqual(p.returncode, 0, p.stderr)
            deadline = time.monotonic() + 20
            while time.monotonic() < deadline:
                if len(self.get_document(d, "list", {})["gpus"]) == 7:
                    break
                time.sleep(0.2)
            # -g 1 names GPU 2's address now: said on stderr, the document is GPU 2's
            p = d.cli("list", "-g", "1", "--json", env=NOWHERE)
            self.assertEqual([g["bdf"] for g in json.loads(p.stdout)["gpus"]],
                             [MI300X_BDFS[2]])
            self.assertIn("GPU 1 is %s since " % MI300X_BDFS[2], p.stderr)
            self.assertIn("before, it was %s" % GPU1, p.stderr)
            # an index that names nothing now: the error says what it was
            p = d.cli("metric", "-g", "7", env=NOWHERE, status=3)
            self.assertIn("GPU 7 not found (7 GPUs present)", p.stderr)
            self.assertIn("GPU 7 was %s until" % MI300X_BDFS[7], p.stderr)
            # an index that did not move, a PCI address, a unique id: no note
            for sel in ("0", MI300X_BDFS[4], ids[MI300X_BDFS[4]]):
                with self.subTest(selection=sel):
                    p = d.cli("static", "-g", sel, env=NOWHERE)
                    self.assertEqual(p.stderr, "")

    def test_unique_id(self):
        with Daemon(sim_args=("--frozen",)) as d:
            ids = [g["unique_id"] for g in self.get_document(d, "list", {})["gpus"]]
            via = d.cli("power", "-g", ids[6].upper(), "--csv", env=NOWHERE)
            direct = d.cli("--direct", "power", "-g", ids[6], "--csv")
            self.assertEqual(via.stdout, direct.stdout)
            self.assertEqual(via.stdout.splitlines()[1].split(",")[0], "6")

    def test_watch_follows_amdsmid(self):
        with Daemon(sim_args=("--frozen",)) as d:
            p = d.cli("metric", "--json", "-g", "1", "-w", "0.1", "-n", "3", env=NOWHERE)
            lines = p.stdout.splitlines()
            self.assertEqual(len(lines), 3)
            for line in lines:
                doc = json.loads(line)
                self.assertEqual([g["bdf"] for g in doc["gpus"]], ["0000:26:00.0"])
            p = d.cli("power", "--csv", "-w", "0.1", "-n", "2", env=NOWHERE)
            self.assertEqual(len(p.stdout.splitlines()), 1 + 2 * 8)


if __name__ == "__main__":
    unittest.main(verbosity=2)
