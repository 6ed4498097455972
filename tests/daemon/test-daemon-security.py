#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""amdsmid and the files a user or an admin can replace (issue 15): a FIFO (or a directory, or
a symbolic link) at state.json, history.jsonl, amdsmid.conf or an intent record never hangs
amdsmid. It still sends READY=1 and answers Describe, logs the damaged file by path and type,
and refuses (by D-Bus error naming it) the changes that need it; the file is left as it was.
And the lock directory amdsmid makes is root's alone (0700), its locks 0600."""

import os
import stat
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from daemontest import (GPU0, IFACE_POWER, MANAGER, NOBODY, ROOT, Daemon, gpu_path,  # noqa: E402
                        require_daemon)

W = 1000000


class Case(unittest.TestCase):
    maxDiff = None

    def assert_untouched(self, path, kind):
        st = os.lstat(path)
        self.assertEqual(stat.S_IFMT(st.st_mode), kind, path)

    def test_fifo_state_json(self):
        with Daemon(start=False) as d:
            path = os.path.join(d.state_dir, "state.json")
            os.mkfifo(path, 0o644)
            d.start()                               # READY=1 within 30 s, or the test fails
            doc = d.describe()
            self.assertTrue(doc["gpus"])
            d.describe(user=NOBODY)
            d.get(gpu_path(GPU0), IFACE_POWER, "CapUw")
            # a change that needs the state is refused with the reason
            name, msg = d.call_error(gpu_path(GPU0), IFACE_POWER, "SetSource", "string:host",
                                     "string:", "uint64:%d" % (500 * W), "uint64:0")
            self.assertIn(path, msg)
            self.assertIn("a FIFO, not a regular file", msg)
            p = d.cli("power", "set", "-g", 0, "--host", "500W", status=None)
            self.assertNotEqual(p.returncode, 0, p.stdout + p.stderr)
            self.assertIn(path, p.stdout + p.stderr)
            # amdsmid still answers, and said why in its log
            d.describe()
            self.assertIn(path, d.log())
            self.assertIn("a FIFO", d.log())
            self.assert_untouched(path, stat.S_IFIFO)

    def test_link_state_json(self):
        with Daemon(start=False) as d:
            path = os.path.join(d.state_dir, "state.json")
            target = os.path.join(d.tmp, "elsewhere.json")
            with open(target, "w") as f:
                f.write('{"version": 1}\n')
            os.symlink(target, path)
            d.start()
            d.describe()
            name, msg = d.call_error(gpu_path(GPU0), IFACE_POWER, "SetSource", "string:host",
                                     "string:", "uint64:%d" % (500 * W), "uint64:0")
            self.assertIn(path, msg)
            self.assertIn("a symbolic link, not a regular file", msg)
            self.assert_untouched(path, stat.S_IFLNK)
            with open(target) as f:
                self.assertEqual(f.read(), '{"version": 1}\n')

    def test_fifo_history(self):
        with Daemon(start=False) as d:
            path = os.path.join(d.state_dir, "history.jsonl")
            os.mkfifo(path, 0o640)
            d.start()
            d.describe()
            name, msg = d.call_error(ROOT, MANAGER, "GetHistory", "uint32:10")
            self.assertIn(path, msg)
            self.assertIn("a FIFO, not a regular file", msg)
            p = d.cli("history", status=None)
            self.assertNotEqual(p.returncode, 0)
            self.assertIn(path, p.stdout + p.stderr)
            self.assert_untouched(path, stat.S_IFIFO)

    def test_fifo_config(self):
        with Daemon(start=False) as d:
            path = os.path.join(d.config_dir, "amdsmid.conf")
            os.mkfifo(path, 0o644)
            d.start()
            d.describe()
            self.assertIn(path, d.log())
            self.assertIn("a FIFO, not a regular file", d.log())
            p = d.cli("apply", "--dry-run", status=None)
            self.assertNotEqual(p.returncode, 0)
            self.assertIn(path, p.stdout + p.stderr)
            self.assert_untouched(path, stat.S_IFIFO)

    def test_fifo_intent_record(self):
        with Daemon(start=False) as d:
            idir = os.path.join(d.state_dir, "intent")
            os.mkdir(idir, 0o755)
            path = os.path.join(idir, "1-1-1.json")
            os.mkfifo(path, 0o640)
            d.start()
            d.describe()
            self.assertIn("intent record %s is a FIFO, not a regular file" % path, d.log())

    def test_lock_modes(self):
        with Daemon() as d:
            d.call(gpu_path(GPU0), IFACE_POWER, "SetSource", "sstt", "host", "", 600 * W, 0)
            lock_dir = os.path.join(d.runtime_dir, "lock")
            self.assertEqual(stat.S_IMODE(os.lstat(lock_dir).st_mode), 0o700)
            self.assertEqual(stat.S_IMODE(os.lstat(os.path.join(lock_dir, GPU0)).st_mode),
                             0o600)
            self.assertEqual(stat.S_IMODE(os.lstat(os.path.join(d.state_dir,
                                                                "state.lock")).st_mode), 0o600)
            self.assertEqual(stat.S_IMODE(os.lstat(d.runtime_dir).st_mode), 0o755)


if __name__ == "__main__":
    require_daemon()
    unittest.main(verbosity=2)
