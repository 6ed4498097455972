#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""The process document through amdsmid: Manager.ListProcesses and GetDocument("process").

Real processes (sleep, as root and as nobody) are made KFD users of the simulator; amdsmid
lists them with their owner, VRAM and partition; a caller other than root sees other users'
processes only when polkit allows org.amdsmi1.process.list, else its own with a note;
`amdsmi process` prints through amdsmid what it prints in-process, byte for byte; a process
that exits is gone from the next answer.
"""
import json
import os
import re
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from daemontest import (MANAGER, MI300X_BDFS, NOBODY, ROOT, Daemon,  # noqa: E402
                        require_daemon)

ACTION = "org.amdsmi1.process.list"
STAMP = re.compile(r'"timestamp": ?"[^"]*"')
GiB = 1 << 30


def blind(d):
    """A prefix for d.cli(user=...): the CLI runs in a private mount namespace where the
    simulator's mount point holds an empty tmpfs, so that it can read nothing of it."""
    return ["unshare", "--mount", "--propagation", "private", "--", "sh", "-c",
            'mount -t tmpfs amdsmi-blind "$0" && exec "$@"', d.mount.root]


def spawn(user=None):
    return subprocess.Popen((user or []) + ["sleep", "300"])


def pids_of(doc):
    """{pid: [(gpu, partition, vram_bytes)]} of a process document."""
    out = {}
    for g in doc["gpus"]:
        for e in g["processes"]:
            out.setdefault(e["pid"], []).append((g["gpu"], e["partition"], e["vram_bytes"]))
    return out


class ProcessTest(unittest.TestCase):
    def setUp(self):
        self.procs = []

    def tearDown(self):
        for p in self.procs:
            p.kill()
            p.wait()

    def start(self, user=None):
        p = spawn(user)
        self.procs.append(p)
        return p

    def list_processes(self, d, user=None):
        return json.loads(d.call(ROOT, MANAGER, "ListProcesses", user=user)[0])

    def test_list_and_document(self):
        with Daemon() as d:
            root_p = self.start()
            nobody_p = self.start(NOBODY)
            d.ctl("kfd-users", "add", MI300X_BDFS[0], root_p.pid, 3 * GiB)
            d.ctl("kfd-users", "add", MI300X_BDFS[2], nobody_p.pid, GiB)

            doc = self.list_processes(d)
            self.assertEqual(doc["command"], "process")
            got = pids_of(doc)
            self.assertEqual(got[root_p.pid], [(0, 0, 3 * GiB)])
            self.assertEqual(got[nobody_p.pid], [(2, 0, GiB)])
            by_pid = {e["pid"]: e for g in doc["gpus"] for e in g["processes"]}
            self.assertEqual(by_pid[root_p.pid]["user"], "root")
            self.assertEqual(by_pid[root_p.pid]["name"], "sleep")
            self.assertEqual(by_pid[nobody_p.pid]["uid"], 65534)
            self.assertTrue(by_pid[root_p.pid]["in_use"])
            # every GPU is in it, used or not
            self.assertEqual(len(doc["gpus"]), len(MI300X_BDFS))

            # GetDocument("process") is the same document
            other = json.loads(d.call(ROOT, MANAGER, "GetDocument", "sa{sv}", "process", 0)[0])
            self.assertEqual(pids_of(other), got)

            # -g through GetDocument
            one = json.loads(d.call(ROOT, MANAGER, "GetDocument", "sa{sv}", "process", 1,
                                    "gpus", "as", 1, "2")[0])
            self.assertEqual([g["gpu"] for g in one["gpus"]], [2])
            self.assertEqual(pids_of(one), {nobody_p.pid: [(2, 0, GiB)]})

            # a process that exits is gone from the next answer, and no error comes of it
            root_p.kill()
            root_p.wait()
            doc = self.list_processes(d)
            self.assertNotIn(root_p.pid, pids_of(doc))
            self.assertEqual(doc["errors"], [])

    def test_polkit(self):
        with Daemon() as d:
            root_p = self.start()
            nobody_p = self.start(NOBODY)
            d.ctl("kfd-users", "add", MI300X_BDFS[0], root_p.pid, GiB)
            d.ctl("kfd-users", "add", MI300X_BDFS[1], nobody_p.pid, GiB)

            d.allow()
            doc = self.list_processes(d, user=NOBODY)
            self.assertEqual(set(pids_of(doc)), {nobody_p.pid},
                             "without %s nobody sees only its own" % ACTION)
            self.assertTrue(any(ACTION in n for n in doc.get("notes", [])), doc.get("notes"))
            p = d.cli("process", "--json", user=NOBODY)
            self.assertEqual(set(pids_of(json.loads(p.stdout))), {nobody_p.pid})
            self.assertIn(ACTION, p.stderr)

            d.allow(ACTION)
            doc = self.list_processes(d, user=NOBODY)
            self.assertEqual(set(pids_of(doc)), {root_p.pid, nobody_p.pid})
            self.assertFalse(any(ACTION in n for n in doc.get("notes", [])))

            # root needs no polkit
            d.allow()
            self.assertEqual(set(pids_of(self.list_processes(d))), {root_p.pid, nobody_p.pid})

    def test_cli_same_as_direct(self):
        """Through amdsmid, with the simulator's tree hidden from the CLI (it can read nothing
        of it itself), `amdsmi process` prints what --direct prints."""
        with Daemon() as d:
            a = self.start()
            b = self.start(NOBODY)
            d.ctl("kfd-users", "add", MI300X_BDFS[0], a.pid, 2 * GiB)
            d.ctl("kfd-users", "add", MI300X_BDFS[5], b.pid, GiB)
            for args in (["process", "--json"], ["process"], ["process", "--csv"],
                         ["-g", "5", "process", "--json"]):
                through = d.cli(*args, user=blind(d))
                direct = d.cli("--direct", *args)
                self.assertEqual(STAMP.sub("", through.stdout), STAMP.sub("", direct.stdout),
                                 args)
                self.assertEqual(through.stderr, direct.stderr)
                self.assertIn(str(b.pid) if "5" in args else str(a.pid), through.stdout)
            # the control: blind and --direct, the CLI finds no GPU
            p = d.cli("--direct", "process", user=blind(d), status=None)
            self.assertNotEqual(p.returncode, 0)


if __name__ == "__main__":
    require_daemon()
    unittest.main()
