#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""The read verbs through amdsmid (Manager.GetDocument, ARCHITECTURE §4).

With amdsmid running, `amdsmi list|static|metric|partition|power|sriov|ras` ask it for their
document and read nothing under /sys themselves: the CLI runs here blind, in a private mount
namespace where the simulated tree's path holds an empty tmpfs (blind() below). Its
AMDSMI_SYSFS_ROOT names the tree amdsmid reads (amdsmid's PID file says which), so it asks
amdsmid; any read of its own would find no GPU. The output must be what `--direct` prints on
the same (frozen) simulator, in every format, byte for byte but for the JSON timestamp.

A CLI whose AMDSMI_SYSFS_ROOT names another tree reads that tree itself: the environment
names the GPUs the user means.
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

STAMP = re.compile(r'"timestamp": ?"[^"]*"')

# metric's limiters need two samples: --throttle gives the in-process reading its two, as
# amdsmid's sampler has them
CASES = [
    ("list",), ("list", "-g", "1"), ("static",), ("static", "-g", "0,3"),
    ("metric", "--throttle"), ("metric", "--throttle", "-g", "2"),
    ("metric", "-T", "-p", "--fields", "gpu_metrics.pcie.width"),
    ("partition",), ("partition", "-g", "0.0"), ("power",), ("power", "-g", "7"),
    ("sriov",), ("ras",), ("ras", "-g", "3"),
]


def blind(d, user=None):
    """A prefix for d.cli(user=...): the CLI runs in a private mount namespace where the
    simulator's mount point (its AMDSMI_SYSFS_ROOT, amdsmid's tree) holds an empty tmpfs.
    The path, and so the roots the CLI compares with amdsmid's PID file, are the same; any
    read of the CLI's own finds no GPU."""
    return ["unshare", "--mount", "--propagation", "private", "--", "sh", "-c",
            'mount -t tmpfs amdsmi-blind "$0" && exec "$@"', d.mount.root] + (user or [])


def snapshot(d, machine, name):
    """A plain tree of @machine (amdsmi-sim snapshot) in d's directory: its path."""
    root = os.path.join(d.tmp, name)
    subprocess.run([SIM, "snapshot", "--machine", machine, "--frozen", root], check=True,
                   capture_output=True, timeout=120)
    return root


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
                        via = d.cli(*args, user=blind(d, NOBODY), status=None)
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
            via = d.cli(user=blind(d, NOBODY)).stdout
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
            env = dict(DBUS_SYSTEM_BUS_ADDRESS="tcp:host=127.0.0.1,port=9;" + d.address,
                       LD_DEBUG="files")
            p = d.cli("list", "--json", "-g", "0,2", env=env)
            self.assertEqual([g["gpu"] for g in json.loads(p.stdout)["gpus"]], [0, 2])
            self.assertNotIn("file=libsystemd", p.stderr)
            # an address only sd-bus knows (unix:runtime=) goes through sd-bus
            p = d.cli("list", env=dict(DBUS_SYSTEM_BUS_ADDRESS="unix:runtime=yes",
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
        # the control: blind, --direct does read the (empty) tree, so the tests above can fail
        with Daemon() as d:
            p = d.cli("--direct", "metric", "--json", user=blind(d, NOBODY), status=None)
            self.assertNotEqual(p.returncode, 0)
            self.assertIn("no AMD GPU found under %s" % d.mount.root, p.stderr)
            # and so does a read while amdsmid's PID file is hidden ("it does not run")
            p = d.cli("list", user=blind(d), env={"RUNTIME_DIRECTORY": d.tmp}, status=None)
            self.assertIn("no AMD GPU found under %s" % d.mount.root, p.stderr)

    def test_other_root_reads_here(self):
        # amdsmid reads 8 MI300X; the CLI is pointed at a tree of 4 MI300A: it shows those
        # (no device root on either side: the messages say "(unset)" and "none")
        with Daemon(sim_args=("--frozen",), kfd=False) as d:
            other = snapshot(d, "mi300a-4", "other")
            env = {"AMDSMI_SYSFS_ROOT": other}
            for args in (("list", "--json"), ("static", "-g", "1", "--csv"),
                         ("metric", "--throttle", "--json"), ("partition",), ("power", "--csv"),
                         ("sriov", "--json")):
                with self.subTest(args=args):
                    here = d.cli(*args, env=env)
                    direct = d.cli("--direct", *args, env=env)
                    self.assertEqual(unstamped(here.stdout), unstamped(direct.stdout))
                    self.assertEqual(here.stderr, direct.stderr)
            doc = json.loads(d.cli("list", "--json", env=env).stdout)
            self.assertEqual(len(doc["gpus"]), 4)
            self.assertEqual({g["product"] for g in doc["gpus"]}, {"MI300A"})
            # amdsmid itself still has its 8 MI300X
            self.assertEqual(len(self.get_document(d, "list", {})["gpus"]), 8)
            # the overview: the tree's GPUs; a change would go to amdsmid's GPUs: refused
            p = d.cli(env=env).stdout
            self.assertIn("4 GPUs:", p)
            self.assertIn("amdsmid is running on other GPUs than these: changes are refused "
                          "here.", p)
            caps = [g["cap_w"] for g in self.get_document(d, "power", {})["gpus"]]
            for args in (("power", "set", "-g", "0", "--host", "500W"),
                         ("power", "set", "-g", "0", "--host", "500W", "--dry-run"),
                         ("partition", "set", "-g", "0", "--compute", "CPX")):
                with self.subTest(args=args):
                    p = d.cli(*args, env=env, status=5)
                    self.assertIn("amdsmid runs on other GPUs than this command reads "
                                  "(AMDSMI_SYSFS_ROOT=%s, AMDSMI_DEV_ROOT=(unset))" % other,
                                  p.stderr)
            self.assertEqual([g["cap_w"] for g in self.get_document(d, "power", {})["gpus"]],
                             caps)
            self.assertEqual(self.get_document(d, "partition", {})["gpus"][0]["compute_mode"],
                             "SPX")
            # said only with AMDSMI_DEBUG=1
            p = d.cli("list", env=dict(env, AMDSMI_DEBUG="1"))
            self.assertIn("amdsmi: amdsmid reads %s (devices none), this command %s "
                          "(devices none): reading in-process" % (d.mount.root, other),
                          p.stderr)
            # a tree that does not exist: the error names it, as without amdsmid
            p = d.cli("metric", env={"AMDSMI_SYSFS_ROOT": "/nonexistent/amdsmi-tree"},
                      status=None)
            self.assertNotEqual(p.returncode, 0)
            self.assertIn("no AMD GPU found under /nonexistent/amdsmi-tree", p.stderr)
            # device nodes: AMDSMI_DEV_ROOT given here, none for amdsmid: read here
            p = d.cli("list", env={"AMDSMI_DEV_ROOT": d.tmp, "AMDSMI_DEBUG": "1"},
                      user=blind(d), status=None)
            self.assertIn("no AMD GPU found under %s" % d.mount.root, p.stderr)
            self.assertIn("this command %s (devices %s)" % (d.mount.root, d.tmp), p.stderr)

    def test_same_root_written_otherwise(self):
        # the tree amdsmid reads, through a symbolic link or with trailing slashes: the
        # CLI asks amdsmid (blind, a read of its own would find nothing)
        with Daemon(sim_args=("--frozen",)) as d:
            link = os.path.join(d.tmp, "link")
            os.symlink(d.mount.root, link)
            for root in (link, d.mount.root + "//", link + "/"):
                with self.subTest(root=root):
                    p = d.cli("list", "--csv", env={"AMDSMI_SYSFS_ROOT": root},
                              user=blind(d, NOBODY))
                    self.assertEqual(len(p.stdout.splitlines()), 1 + 8)
                    self.assertEqual(p.stderr, "")

    def test_pid_file_formats(self):
        # no device root: the files below say dev_root= (none), as amdsmid's does
        with Daemon(sim_args=("--frozen",), kfd=False) as d:
            path = os.path.join(d.runtime_dir, "amdsmid.pid")
            with open(path) as f:
                text = f.read()
            # the PID first (a pidfile still), then the roots as amdsmid resolved them
            self.assertEqual(text, "%d\nsysfs_root=%s\ndev_root=\n" % (d.proc.pid,
                                                                      d.mount.root))
            self.assertEqual(os.stat(path).st_mode & 0o777, 0o644)
            other = snapshot(d, "mi300a-4", "other")

            def count(user=None):
                p = d.cli("list", "--csv", env={"AMDSMI_SYSFS_ROOT": other}, user=user)
                return len(p.stdout.splitlines()) - 1

            self.assertEqual(count(), 4)
            # an older amdsmid's file (the PID alone): as before, reads ask amdsmid
            # (blind: the 8 GPUs can only come from it)
            for old in ("%d\n" % d.proc.pid, "%d" % d.proc.pid):
                with self.subTest(old=old):
                    self.write_pid_file(path, old)
                    self.assertEqual(count(blind(d)), 8)
            # garbage: as when it cannot tell, the bus is asked
            for bad in ("%d\nsysfs_root=relative\ndev_root=\n",
                        "%d\nsysfs_root=" + other + "\n",
                        "%d\nsysfs_root=" + other + "\ndev_root=\n\0",
                        "%d\nsysfs_root=" + other + "\ndev_root=\nx=" + "y" * 9000 + "\n"):
                with self.subTest(bad=bad[:60]):
                    self.write_pid_file(path, bad % d.proc.pid)
                    self.assertEqual(count(blind(d)), 8)
            # a later amdsmid's keys are skipped, the roots still decide: amdsmid reads
            # `other` (it says), asked; it reads its tree, `other` is read here
            self.write_pid_file(path, "%d\nfuture=1\nsysfs_root=%s\ndev_root=\n"
                                % (d.proc.pid, other))
            self.assertEqual(count(user=blind(d)), 8)
            self.write_pid_file(path, "%d\nfuture=1\nsysfs_root=%s\ndev_root=\n"
                                % (d.proc.pid, d.mount.root))
            self.assertEqual(count(), 4)

    @staticmethod
    def write_pid_file(path, text):
        tmp = path + ".test"
        with open(tmp, "w") as f:
            f.write(text)
        os.chmod(tmp, 0o644)
        os.rename(tmp, path)

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

    def test_metric_text_served_again(self):
        # GetDocumentText("metric") of every GPU is served again for 50 ms, as GetMetrics()'s
        # document (ten scrapers at 10 Hz cost the GPUs what one does); then built anew
        with Daemon() as d:
            obj = self.bus(d).get_object("org.amdsmi1", ROOT)
            none = dbus.Dictionary({}, signature="sv")

            def stamp():
                text, _ = obj.GetDocumentText("metric", none, dbus_interface=MANAGER)
                return json.loads(text)["timestamp"]

            stamp()  # the sampler's first samples
            pairs = same = 0
            for _ in range(20):
                t0 = time.monotonic()
                first, second = stamp(), stamp()
                if time.monotonic() - t0 < 0.01:
                    # the same document, unless it turned 50 ms old in between
                    pairs += 1
                    same += first == second
            self.assertGreater(pairs, 0, "no two calls within 10 ms: cannot tell")
            self.assertGreaterEqual(same, pairs * 0.6, (same, pairs))
            first = stamp()
            time.sleep(0.2)
            self.assertNotEqual(stamp(), first)

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
                        d.cli(*args, user=blind(d))
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
                    via = d.cli(*args, user=blind(d), status=None)
                    direct = d.cli("--direct", *args, status=None)
                    self.assertEqual(via.returncode, 3)
                    self.assertEqual(via.returncode, direct.returncode)
                    self.assertEqual(via.stderr, direct.stderr)
            # still serving
            self.assertEqual(len(self.get_document(d, "list", {})["gpus"]), 8)

    def unplug_gpu1(self, d):
        """GPU 1 goes: amdsmid's indexes 2-7 move down by one."""
        p = subprocess.run([SIM, "ctl", "--mount", d.mount.root, "unplug", GPU1],
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            if len(self.get_document(d, "list", {})["gpus"]) == 7:
                return
            time.sleep(0.2)
        self.fail("amdsmid still has 8 GPUs 20 s after the unplug")

    def test_moved_indexes_noted(self):
        with Daemon() as d:
            ids = {g["bdf"]: g["unique_id"] for g in self.get_document(d, "list", {})["gpus"]}
            self.unplug_gpu1(d)
            # -g 1 names GPU 2's address now: said on stderr, the document is GPU 2's
            p = d.cli("list", "-g", "1", "--json", user=blind(d))
            self.assertEqual([g["bdf"] for g in json.loads(p.stdout)["gpus"]],
                             [MI300X_BDFS[2]])
            self.assertIn("GPU 1 is %s since " % MI300X_BDFS[2], p.stderr)
            self.assertIn("before, it was %s" % GPU1, p.stderr)
            # an index that names nothing now: the error says what it was
            p = d.cli("metric", "-g", "7", user=blind(d), status=3)
            self.assertIn("GPU 7 not found (7 GPUs present)", p.stderr)
            self.assertIn("GPU 7 was %s until" % MI300X_BDFS[7], p.stderr)
            # an index that did not move, a PCI address, a unique id: no note
            for sel in ("0", MI300X_BDFS[4], ids[MI300X_BDFS[4]]):
                with self.subTest(selection=sel):
                    p = d.cli("static", "-g", sel, user=blind(d))
                    self.assertEqual(p.stderr, "")

    def test_moved_indexes_noted_on_changes(self):
        # a change resolves -g N in the CLI, then calls the GPU's object: amdsmid is asked
        # once (CheckIndexes) whether N named another GPU before, and the note is the read's
        with Daemon() as d:
            (notes,) = d.call(ROOT, MANAGER, "CheckIndexes", "as", 2, "1", "7")
            self.assertEqual(notes, [])
            self.unplug_gpu1(d)
            # -g 1 names GPU 2's address now: said on stderr, the change is GPU 2's
            p = d.cli("power", "set", "-g", "1", "--host", "600W", "--dry-run", "--json")
            self.assertIn("amdsmi: GPU 1 is %s since " % MI300X_BDFS[2], p.stderr)
            self.assertIn("before, it was %s" % GPU1, p.stderr)
            self.assertEqual([g["bdf"] for g in json.loads(p.stdout)["gpus"]],
                             [MI300X_BDFS[2]])
            p = d.cli("set", "-g", "0,3", "-C", "dpx", "--dry-run")
            self.assertIn("GPU 3 is %s since " % MI300X_BDFS[4], p.stderr)
            self.assertNotIn("GPU 0 ", p.stderr)
            # an index that names nothing now: the note says what it was, then the error
            p = d.cli("partition", "set", "-g", "7", "--compute", "cpx", "--dry-run", status=3)
            self.assertIn("amdsmi: GPU 7 was %s until" % MI300X_BDFS[7], p.stderr)
            self.assertIn("GPU 7 not found (7 GPUs present)", p.stderr)
            # unprivileged too (the check is open to everyone; the change itself is polkit's)
            p = d.cli("power", "set", "-g", "1", "--host", "600W", user=NOBODY, status=None)
            self.assertIn("GPU 1 is %s since " % MI300X_BDFS[2], p.stderr)
            # an index that did not move, a PCI address, all: no note
            for sel in ("0", MI300X_BDFS[4], "all"):
                with self.subTest(selection=sel):
                    p = d.cli("power", "set", "-g", sel, "--host", "600W", "--dry-run")
                    self.assertNotIn("GPU", p.stderr)
            # the method itself: one note per moved index, none for the others
            (notes,) = d.call(ROOT, MANAGER, "CheckIndexes", "as", 4, "0", "1",
                              MI300X_BDFS[5], "6,7")
            self.assertEqual(len(notes), 3, notes)
            self.assertTrue(notes[0].startswith("GPU 1 is %s since " % MI300X_BDFS[2]))
            self.assertTrue(notes[1].startswith("GPU 6 is %s since " % MI300X_BDFS[7]))
            self.assertTrue(notes[2].startswith("GPU 7 was %s until " % MI300X_BDFS[7]))
            name, msg = d.call_error(ROOT, MANAGER, "CheckIndexes", "array:string:zz")
            self.assertEqual(name, "org.amdsmi1.Error.InvalidArgument")
            self.assertIn("invalid GPU selection 'zz'", msg)

    def test_unique_id(self):
        with Daemon(sim_args=("--frozen",)) as d:
            ids = [g["unique_id"] for g in self.get_document(d, "list", {})["gpus"]]
            via = d.cli("power", "-g", ids[6].upper(), "--csv", user=blind(d))
            direct = d.cli("--direct", "power", "-g", ids[6], "--csv")
            self.assertEqual(via.stdout, direct.stdout)
            self.assertEqual(via.stdout.splitlines()[1].split(",")[0], "6")

    def test_watch_follows_amdsmid(self):
        with Daemon(sim_args=("--frozen",)) as d:
            p = d.cli("metric", "--json", "-g", "1", "-w", "0.1", "-n", "3", user=blind(d))
            lines = p.stdout.splitlines()
            self.assertEqual(len(lines), 3)
            for line in lines:
                doc = json.loads(line)
                self.assertEqual([g["bdf"] for g in doc["gpus"]], ["0000:26:00.0"])
            p = d.cli("power", "--csv", "-w", "0.1", "-n", "2", user=blind(d))
            self.assertEqual(len(p.stdout.splitlines()), 1 + 2 * 8)


if __name__ == "__main__":
    unittest.main(verbosity=2)
