#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""amdsmi history end to end: the history file of a fresh STATE_DIRECTORY, written through
daemon/history.c by history-probe (as amdsmid and amdsmi --direct write it) or line by line,
read by the real CLI in every format.

Absent and empty files, the entries and their order across both generations, the last N, the
GPU filter by PCI address (also of GPUs that are gone, without touching sysfs) and by index on
a simulator mount, malformed lines and a line cut short by a crash, control characters in
tables, an unreadable file (exit status 6 and what to do about it), options history refuses,
and every --json document against the schema."""

import csv
import io
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from simtest import CLI, GPU0, GPU1, NOBODY, Mount, SchemaCase, main, tmpdir  # noqa: E402

PROBE = os.environ.get("HISTORY_PROBE", "")
GONE = "0000:ff:00.0"  # a GPU no machine here has
T = 1796278321123456   # 2026-12-03T06:12:01.123456Z
PERM_HINT = "(amdsmid answers 'amdsmi history' for everyone when it runs)"


class Case(SchemaCase):
    maxDiff = None

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        if not PROBE or not os.access(PROBE, os.X_OK):
            raise AssertionError("HISTORY_PROBE is not the history-probe executable: %r" % PROBE)

    def setUp(self):
        self.st = tmpdir(self, "amdsmi-state.")
        self.empty = tmpdir(self, "amdsmi-sys.")  # a sysfs without GPUs
        self.path = os.path.join(self.st, "history.jsonl")

    def env(self, root=None):
        env = dict(os.environ, STATE_DIRECTORY=self.st,
                   AMDSMI_SYSFS_ROOT=root or self.empty,
                   RUNTIME_DIRECTORY=self.st)
        env.pop("AMDSMI_DEBUG", None)
        return env

    def cli(self, *args, status=0, root=None, user=None):
        p = subprocess.run((user or []) + [CLI, "history"] + [str(a) for a in args],
                           env=self.env(root), capture_output=True, text=True, timeout=60)
        what = "amdsmi history %s: exit %d, stdout %r, stderr %r" % (
            " ".join(map(str, args)), p.returncode, p.stdout[-3000:], p.stderr)
        self.assertEqual(p.returncode, status, what)
        return p

    def doc(self, *args, status=0, root=None, user=None):
        p = self.cli(*(list(args) + ["--json"]), status=status, root=root, user=user)
        d = json.loads(p.stdout)
        self.assert_valid(d, "amdsmi %s --json (%s)" % (" ".join(map(str, args)), p.stdout[:2000]))
        return d

    def probe(self, *args, time=0):
        p = subprocess.run([PROBE, str(time)] + [str(a) for a in args],
                           env=self.env(), capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)

    def record(self, n, gpu, time=T, via="direct", errno=0):
        """Entry n: message 'mN', one second apart."""
        self.probe(via, 0, gpu, "compute_mode", "SPX", "CPX", errno, "m%d" % n,
                   time=time + n * 1000000)

    def messages(self, *args, root=None):
        return [e["message"] for e in self.doc(*args, root=root)["entries"]]

    # --- no history ----------------------------------------------------------------------

    def test_absent(self):
        os.rmdir(self.st)   # not even the directory
        d = self.doc()
        self.assertEqual(d["command"], "history")
        self.assertEqual(d["entries"], [])
        self.assertEqual(d["skipped"], 0)
        self.assertEqual(d["errors"], [])
        p = self.cli()
        self.assertEqual(p.stdout, "")
        self.assertIn("no change recorded in %s" % self.path, p.stderr)
        p = self.cli("--csv")
        self.assertEqual(p.stdout, "time,time_usec,via,uid,pid,sender,gpu,change,old,new,"
                                   "result,errno,message\n")
        self.assertFalse(os.path.exists(self.st), "reading created the directory")

    def test_empty_file(self):
        with open(self.path, "w", encoding="utf-8"):
            pass
        self.assertEqual(self.doc()["entries"], [])

    # --- what is recorded ----------------------------------------------------------------

    def test_entries(self):
        self.probe("amdsmid", 1000, GPU0, "compute_mode", "SPX", "CPX", 0,
                   "switched to CPX in 2.1 s", time=T)
        self.probe("direct", 0, GPU1, "power_source", "-", "host=600W", 16, "GPU busy",
                   time=T + 1000)
        self.probe("-", 0, "-", "recovery", "-", "-", 0, "-")   # now
        d = self.doc()
        self.assertEqual(d["skipped"], 0)
        e = d["entries"]
        self.assertEqual(len(e), 3)
        self.assertEqual(e[0], {
            "time": "2026-12-03T06:12:01.123Z", "time_usec": T, "via": "amdsmid", "uid": 1000,
            "pid": 4242, "sender": ":1.42", "gpu": GPU0, "change": "compute_mode",
            "old": "SPX", "new": "CPX", "result": "ok", "errno": 0,
            "message": "switched to CPX in 2.1 s"})
        self.assertEqual(e[1], {
            "time": "2026-12-03T06:12:01.124Z", "time_usec": T + 1000, "via": "direct",
            "uid": 0, "pid": 4242, "sender": None, "gpu": GPU1, "change": "power_source",
            "old": None, "new": "host=600W", "result": "EBUSY", "errno": -16,
            "message": "GPU busy"})
        self.assertEqual(e[2]["change"], "recovery")
        self.assertGreater(e[2]["time_usec"], T)
        self.assertIsNone(e[2]["gpu"])
        self.assertIsNone(e[2]["message"])
        # the file itself: 0640, one compact object per line
        self.assertEqual(os.stat(self.path).st_mode & 0o7777, 0o640)
        with open(self.path, encoding="utf-8") as f:
            lines = f.read().split("\n")
        self.assertEqual(lines[-1], "")
        self.assertEqual([json.loads(ln)["time_usec"] for ln in lines[:-1]][:2], [T, T + 1000])

    def test_table(self):
        self.probe("amdsmid", 1000, GPU0, "compute_mode", "SPX", "CPX", 0, "switched", time=T)
        self.probe("direct", 0, GPU1, "power_source", "-", "host=600W", 16,
                   "busy\nsecond line \x1b[31mred", time=T + 1000)
        p = self.cli()
        lines = p.stdout.splitlines()
        self.assertEqual(len(lines), 3, p.stdout)   # a header and one line per entry
        self.assertEqual(lines[0].split(), ["TIME", "VIA", "UID", "GPU", "CHANGE", "OLD", "NEW",
                                            "RESULT", "MESSAGE"])
        self.assertEqual(lines[1].split(), ["2026-12-03T06:12:01.123Z", "amdsmid", "1000", GPU0,
                                            "compute_mode", "SPX", "CPX", "ok", "switched"])
        # no old value: "-"; control characters written out, never sent to the terminal
        self.assertEqual(lines[2].split(), ["2026-12-03T06:12:01.124Z", "direct", "0", GPU1,
                                            "power_source", "-", "host=600W", "EBUSY",
                                            "busy\\nsecond", "line", "\\x1b[31mred"])
        self.assertNotIn("\x1b", p.stdout)
        self.assertEqual(p.stderr, "")

    def test_csv(self):
        self.probe("amdsmid", 1000, GPU0, "compute_mode", "SPX", "CPX", 0, "a, \"quoted\"",
                   time=T)
        self.probe("direct", 0, GPU1, "num_vfs", "0", "4", 1, "-", time=T + 1)
        p = self.cli("--csv")
        rows = list(csv.reader(io.StringIO(p.stdout)))
        self.assertEqual(rows[0], ["time", "time_usec", "via", "uid", "pid", "sender", "gpu",
                                   "change", "old", "new", "result", "errno", "message"])
        self.assertEqual(len(set(rows[0])), len(rows[0]))
        self.assertEqual(rows[1], ["2026-12-03T06:12:01.123Z", str(T), "amdsmid", "1000", "4242",
                                   ":1.42", GPU0, "compute_mode", "SPX", "CPX", "ok", "0",
                                   "a, \"quoted\""])
        self.assertEqual(rows[2], ["2026-12-03T06:12:01.123Z", str(T + 1), "direct", "0",
                                   "4242", "", GPU1, "num_vfs", "0", "4", "EPERM", "-1", ""])
        self.assertEqual(len(rows), 3)

    # --- the last N ------------------------------------------------------------------------

    def test_count(self):
        for n in range(5):
            self.record(n, GPU0 if n % 2 == 0 else GPU1)
        self.assertEqual(self.messages(), ["m0", "m1", "m2", "m3", "m4"])
        self.assertEqual(self.messages("-n", 2), ["m3", "m4"])
        self.assertEqual(self.messages("--count", "1"), ["m4"])
        self.assertEqual(self.messages("-n", 99), ["m0", "m1", "m2", "m3", "m4"])
        # the last N of the GPU selected, not of all
        self.assertEqual(self.messages("-n", 2, "-g", GPU1), ["m1", "m3"])
        self.assertEqual(self.messages("-n", 2, "-g", GPU0), ["m2", "m4"])
        p = self.cli("-n", 2)
        self.assertEqual(len(p.stdout.splitlines()), 3)
        p = self.cli("-n", 0, status=2)
        self.assertIn("invalid count '0'", p.stderr)
        p = self.cli("-w", 1, status=2)
        self.assertIn("--watch is not supported by 'history'", p.stderr)
        p = self.cli("--dry-run", status=2)
        self.assertIn("option '--dry-run' is not valid for 'history'", p.stderr)

    def test_generations(self):
        # the rotated generation comes first; the last N reach into it
        for n in range(4):
            self.record(n, GPU0)
        os.rename(self.path, self.path + ".1")
        for n in range(4, 6):
            self.record(n, GPU0)
        self.assertEqual(self.messages(), ["m0", "m1", "m2", "m3", "m4", "m5"])
        self.assertEqual(self.messages("-n", 3), ["m3", "m4", "m5"])

    def test_rotation(self):
        # appends past the bound rotate: one older generation is kept
        for n in range(6):
            self.probe("direct", 0, GPU0, "compute_mode", "SPX", "CPX", 0, "m%d" % n, 600,
                       time=T + n)
        self.assertTrue(os.path.exists(self.path + ".1"))
        got = self.messages()
        self.assertEqual(got, ["m%d" % n for n in range(6 - len(got), 6)])
        self.assertLess(len(got), 6)
        self.assertLessEqual(os.path.getsize(self.path), 600)

    # --- selecting GPUs --------------------------------------------------------------------

    def test_filter_by_address(self):
        self.record(0, GPU0)
        self.record(1, GPU1)
        self.record(2, GONE)
        self.record(3, GPU0)
        # PCI addresses need no GPU: the empty sysfs root is not even looked at
        self.assertEqual(self.messages("-g", GPU0), ["m0", "m3"])
        self.assertEqual(self.messages("-g", "26:00.0"), ["m1"])
        self.assertEqual(self.messages("-g", "0000:FF:00.0"), ["m2"])  # a GPU that is gone
        self.assertEqual(self.messages("-g", "%s,%s" % (GPU1, GONE)), ["m1", "m2"])
        self.assertEqual(self.messages("-g", GPU1, "-g", GONE), ["m1", "m2"])
        self.assertEqual(self.messages("-g", "0000:c1:00.0"), [])
        self.assertEqual(self.messages("-g", "all"), ["m0", "m1", "m2", "m3"])
        p = self.cli("-g", "0000:c1:00.0")
        self.assertIn("no change recorded for the selected GPUs", p.stderr)
        p = self.cli("-g", "zz", status=2)
        self.assertIn("invalid GPU selection 'zz'", p.stderr)

    def test_filter_by_index(self):
        self.record(0, GPU0)
        self.record(1, GPU1)
        self.record(2, GONE)
        # an index needs this machine's GPUs: none here
        d = self.doc("-g", 0, status=3)
        self.assertEqual(d["error"]["exit_code"], 3)
        with Mount("--machine", "mi300x-8") as m:
            self.assertEqual(self.messages("-g", 0, root=m.root), ["m0"])
            self.assertEqual(self.messages("-g", 1, root=m.root), ["m1"])
            self.assertEqual(self.messages("-g", "0,1", root=m.root), ["m0", "m1"])
            # a partition selector stands for its GPU (changes are recorded per GPU)
            self.assertEqual(self.messages("-g", "1.0", root=m.root), ["m1"])
            # indexes and addresses together: the address needs no GPU
            self.assertEqual(self.messages("-g", "1,%s" % GONE, root=m.root), ["m1", "m2"])
            self.assertEqual(self.messages("-g", 5, root=m.root), [])
            p = self.cli("-g", 9, root=m.root, status=3)
            self.assertIn("GPU 9 not found (8 GPUs present)", p.stderr)

    # --- damage ------------------------------------------------------------------------------

    def test_malformed_lines(self):
        self.record(0, GPU0)
        with open(self.path, "a", encoding="utf-8") as f:
            f.write("garbage\n")
            f.write('{"time_usec": 5}\n')       # no change
            f.write('{"change": "x"}\n')        # no time
            f.write('{"time_usec": %d, "change": "num_vfs", "uid": "root", "message": "m1",'
                    ' "future_key": 1}\n' % (T + 5))
        self.record(2, GPU0)
        # a crash in the middle of the last write
        with open(self.path, "a", encoding="utf-8") as f:
            f.write('{"time":"2026-12-03T06:12:09.123Z","time_usec":1796278329123')
        d = self.doc()
        self.assertEqual([e["message"] for e in d["entries"]], ["m0", "m1", "m2"])
        self.assertEqual(d["skipped"], 4)
        # a line of another shape: the known keys, null where the type is wrong
        self.assertIsNone(d["entries"][1]["uid"])
        self.assertIsNone(d["entries"][1]["result"])
        self.assertNotIn("future_key", d["entries"][1])
        p = self.cli()
        self.assertIn("%s: 4 malformed lines skipped" % self.path, p.stderr)
        self.assertEqual(len(p.stdout.splitlines()), 4)
        # the next change starts a line of its own
        self.record(3, GPU0)
        d = self.doc()
        self.assertEqual([e["message"] for e in d["entries"]], ["m0", "m1", "m2", "m3"])
        self.assertEqual(d["skipped"], 4)

    # --- permissions -------------------------------------------------------------------------

    def test_unreadable(self):
        self.record(0, GPU0)
        self.assertEqual(os.stat(self.path).st_mode & 0o777, 0o640)
        p = self.cli(user=NOBODY, status=6)
        self.assertEqual(p.stdout, "")
        self.assertEqual(p.stderr.strip(), "amdsmi: cannot read %s: Permission denied %s"
                         % (self.path, PERM_HINT))
        d = self.doc(user=NOBODY, status=6)
        self.assertEqual(d["error"]["errno"], "EACCES")
        self.assertEqual(d["error"]["exit_code"], 6)
        self.assertIn(PERM_HINT, d["error"]["message"])
        # readable for the group or everyone: it is read
        os.chmod(self.path, 0o644)
        d = self.doc(user=NOBODY)
        self.assertEqual([e["message"] for e in d["entries"]], ["m0"])


if __name__ == "__main__":
    main()
