#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""What a local user or a damaged file can do to amdsmi (issue 15), end to end with the real
CLI on a simulator mount, in a fresh RUNTIME_DIRECTORY, STATE_DIRECTORY and
CONFIGURATION_DIRECTORY each:

- no unprivileged user can open, let alone flock(), a lock file amdsmi waits for (the GPU
  locks and state.lock), so root's `set -C CPX` and `power set` still go through while
  nobody (setpriv) tries; an older amdsmi's 0755 lock directory and 0644 lock files are
  tightened to 0700 and 0600;
- a FIFO, a directory, a symbolic link to a regular file and one to a FIFO in the place of
  every file amdsmi reads (state, history and its old generation, amdsmid.conf, APML files,
  pending memory modes, the state lock) never hangs the CLI (every run has a timeout), is
  refused with a message naming the path and what is there, and is left as it was."""

import contextlib
import glob
import json
import os
import stat
import subprocess
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from simtest import CLI, GPU0, GPU1, MI300X_BDFS, NOBODY, Mount, main, tmpdir, vf_bdf  # noqa: E402

# Tries to open and flock() every path given, as the unprivileged user it runs as; prints one
# JSON line of what happened, then keeps whatever it got until killed.
HOLDER = r"""
import fcntl, json, os, sys, time
out, keep = {}, []
for p in sys.argv[1:]:
    try:
        fd = os.open(p, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as e:
        out[p] = "open: " + (os.strerror(e.errno))
        continue
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        out[p] = "held"
        keep.append(fd)
    except OSError as e:
        out[p] = "flock: " + os.strerror(e.errno)
# and a lock file of its own where amdsmi would look for one
d = os.path.dirname(sys.argv[1])
try:
    fd = os.open(os.path.join(d, "0000:26:00.0"), os.O_RDWR | os.O_CREAT, 0o644)
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    out["create"] = "held"
    keep.append(fd)
except OSError as e:
    out["create"] = "open: " + os.strerror(e.errno)
print(json.dumps(out), flush=True)
time.sleep(120)
"""

KINDS = ["fifo", "directory", "link to a file", "link to a FIFO"]
TYPE_NAME = {"fifo": "a FIFO", "directory": "a directory", "link to a file": "a symbolic link",
             "link to a FIFO": "a symbolic link"}


class Case(unittest.TestCase):
    maxDiff = None

    def setUp(self):
        self.tmp = tmpdir(self, "amdsmi-security.")     # removed after tearDown
        self.rt = os.path.join(self.tmp, "run")
        self.st = os.path.join(self.tmp, "state")
        self.conf = os.path.join(self.tmp, "etc")
        for d in (self.rt, self.st, self.conf):
            os.mkdir(d, 0o755)
            os.chmod(d, 0o755)
        self.procs = []

    def tearDown(self):
        for p in self.procs:
            if p.poll() is None:
                p.kill()
            p.wait()

    def env(self, m):
        env = dict(os.environ, AMDSMI_SYSFS_ROOT=m.root, RUNTIME_DIRECTORY=self.rt,
                   STATE_DIRECTORY=self.st, CONFIGURATION_DIRECTORY=self.conf)
        env.pop("AMDSMI_DEBUG", None)
        return env

    def cli(self, m, *args, status=0, user=None, has=(), timeout=30):
        """Runs amdsmi; a hang fails the test (subprocess.TimeoutExpired)."""
        start = time.monotonic()
        p = subprocess.run((user or []) + [CLI] + [str(a) for a in args], env=self.env(m),
                           capture_output=True, text=True, timeout=timeout,
                           stdin=subprocess.DEVNULL)
        what = "amdsmi %s: exit %d after %.1f s, stdout %r, stderr %r" % (
            " ".join(map(str, args)), p.returncode, time.monotonic() - start, p.stdout[-3000:],
            p.stderr)
        if status == "nonzero":
            self.assertNotEqual(p.returncode, 0, what)
        else:
            self.assertEqual(p.returncode, status, what)
        for s in has:
            self.assertIn(s, p.stdout + p.stderr, what)
        return p

    def mode(self, path):
        return stat.S_IMODE(os.lstat(path).st_mode)

    # ---- defect 1: locks -------------------------------------------------------------------

    def hold_as_nobody(self, paths):
        p = subprocess.Popen(NOBODY + [sys.executable, "-c", HOLDER] + paths,
                             stdout=subprocess.PIPE, text=True)
        self.procs.append(p)
        line = p.stdout.readline()
        self.assertTrue(line, "the holder did not report")
        return json.loads(line)

    def test_nobody_cannot_hold_a_lock(self):
        with Mount("--machine", "mi300x-8") as m:
            # root makes every lock file once (a power change takes the GPU and state locks)
            self.cli(m, "power", "set", "-g", 0, "--host", "700W")
            gpu_lock = os.path.join(self.rt, "lock", GPU0)
            state_lock = os.path.join(self.st, "state.lock")
            self.assertEqual(self.mode(os.path.join(self.rt, "lock")), 0o700)
            self.assertEqual(self.mode(gpu_lock), 0o600)
            self.assertEqual(self.mode(state_lock), 0o600)
            self.assertEqual(self.mode(self.rt), 0o755)     # the BMC agent's apml/ is there

            got = self.hold_as_nobody([gpu_lock, state_lock])
            self.assertEqual(got, {gpu_lock: "open: Permission denied",
                                   state_lock: "open: Permission denied",
                                   "create": "open: Permission denied"})
            # while it still runs, root's changes go through, promptly
            self.cli(m, "set", "-g", 0, "-C", "CPX", timeout=60)
            self.assertEqual(m.value("bus/pci/devices/%s/current_compute_partition" % GPU0),
                             "CPX")
            self.cli(m, "power", "set", "-g", 0, "--host", "650W", timeout=60)
            with open(os.path.join(self.st, "state.json")) as f:
                self.assertIn("650", f.read())
            # readers that cannot open state.lock read without it
            self.cli(m, "power", "-g", 0, "--json", user=NOBODY)

    def test_old_modes_are_tightened(self):
        """An older amdsmi left /run/amdsmi/lock 0755 and its lock files 0644."""
        with Mount("--machine", "mi300x-8") as m:
            lock_dir = os.path.join(self.rt, "lock")
            os.mkdir(lock_dir)
            os.chmod(lock_dir, 0o755)
            files = [os.path.join(lock_dir, b) for b in MI300X_BDFS[:2]]
            files.append(os.path.join(self.st, "state.lock"))
            for f in files:
                with open(f, "w"):
                    pass
                os.chmod(f, 0o644)
            self.cli(m, "power", "set", "-g", 0, "--host", "700W")
            self.cli(m, "set", "-g", 1, "-C", "DPX")
            self.assertEqual(self.mode(lock_dir), 0o700)
            for f in files:
                self.assertEqual(self.mode(f), 0o600, f)
            # from now on nobody cannot open them
            got = self.hold_as_nobody(files)
            for f in files:
                self.assertEqual(got[f], "open: Permission denied", f)

    def test_lock_of_another_owner_is_refused(self):
        with Mount("--machine", "mi300x-8") as m:
            lock_dir = os.path.join(self.rt, "lock")
            os.mkdir(lock_dir, 0o700)
            path = os.path.join(lock_dir, GPU0)
            with open(path, "w"):
                pass
            os.chown(path, 65534, 65534)
            p = self.cli(m, "set", "-g", 0, "-C", "CPX", status="nonzero",
                         has=[path, "owned by uid 65534"])
            self.assertEqual(m.value("bus/pci/devices/%s/current_compute_partition" % GPU0),
                             "SPX", p.stderr)
            os.unlink(path)
            os.chown(lock_dir, 65534, 65534)
            self.cli(m, "set", "-g", 0, "-C", "CPX", status="nonzero", has=[lock_dir])

    # ---- defect 2: what is at the path of a file amdsmi reads -------------------------------

    def put(self, path, kind):
        """Puts KIND at PATH; returns a function that checks it is still there, untouched."""
        if kind == "fifo":
            os.mkfifo(path, 0o644)
        elif kind == "directory":
            os.mkdir(path, 0o755)
        elif kind == "link to a file":
            target = path + ".target"
            with open(target, "w") as f:
                f.write("{}\n")
            os.symlink(os.path.basename(target), path)
        else:
            target = path + ".target-fifo"
            os.mkfifo(target, 0o644)
            os.symlink(os.path.basename(target), path)
        before = os.lstat(path)

        def check():
            after = os.lstat(path)
            self.assertEqual((stat.S_IFMT(after.st_mode), after.st_ino),
                             (stat.S_IFMT(before.st_mode), before.st_ino), path)
        return check

    @contextlib.contextmanager
    def placed(self, path, kind):
        """KIND at PATH for the block, checked untouched and removed after it."""
        check = self.put(path, kind)
        try:
            yield
            check()
        finally:
            self.remove(path)

    def remove(self, path):
        if os.path.isdir(path) and not os.path.islink(path):
            os.rmdir(path)
        else:
            os.unlink(path)
        for t in (path + ".target", path + ".target-fifo"):
            if os.path.lexists(t):
                os.unlink(t)

    def test_state_file(self):
        path = os.path.join(self.st, "state.json")
        with Mount("--machine", "mi300x-8") as m:
            caps = glob.glob(m.path("bus/pci/devices/%s/hwmon/hwmon*/power1_cap" % GPU0))
            self.assertEqual(len(caps), 1)
            with open(caps[0]) as f:
                cap = f.read()
            for kind in KINDS:
                with self.subTest(kind=kind):
                    with self.placed(path, kind):
                        what = [path, TYPE_NAME[kind], "not a regular file"]
                        # a change that needs the state is refused before touching the GPU
                        self.cli(m, "power", "set", "-g", 0, "--host", "500W", status="nonzero",
                                 has=what)
                        with open(caps[0]) as f:
                            self.assertEqual(f.read(), cap)
                        # readers go on with a warning that says why
                        self.cli(m, "power", "-g", 0, has=what)
                        self.cli(m, "power", "-g", 0, user=NOBODY, has=what)

    def test_state_lock(self):
        path = os.path.join(self.st, "state.lock")
        with Mount("--machine", "mi300x-8") as m:
            for kind in ("fifo", "directory", "link to a file"):
                with self.subTest(kind=kind):
                    with self.placed(path, kind):
                        self.cli(m, "power", "set", "-g", 0, "--host", "500W",
                                 status="nonzero", has=[path, TYPE_NAME[kind]])
                        self.cli(m, "power", "-g", 0)

    def test_history(self):
        with Mount("--machine", "mi300x-8") as m:
            for name in ("history.jsonl", "history.jsonl.1"):
                path = os.path.join(self.st, name)
                for kind in KINDS:
                    with self.subTest(name=name, kind=kind):
                        with self.placed(path, kind):
                            self.cli(m, "history", "--direct", status="nonzero",
                                     has=[path, TYPE_NAME[kind], "not a regular file"])
                            if name == "history.jsonl":
                                # a change still happens; appending to the history is refused,
                                # with a warning that names it
                                self.cli(m, "power", "set", "-g", 0, "--host", "600W",
                                         has=["cannot append to the history", path,
                                              TYPE_NAME[kind]])

    def test_config(self):
        path = os.path.join(self.conf, "amdsmid.conf")
        with Mount("--machine", "mi300x-8") as m:
            for kind in KINDS:
                with self.subTest(kind=kind):
                    with self.placed(path, kind):
                        self.cli(m, "apply", "--dry-run", status="nonzero",
                                 has=[path, TYPE_NAME[kind], "not a regular file"])

    def test_apml_file(self):
        d = os.path.join(self.rt, "apml")
        os.mkdir(d, 0o755)
        path = os.path.join(d, GPU0)
        with Mount("--machine", "mi300x-8") as m:
            for kind in KINDS:
                with self.subTest(kind=kind):
                    with self.placed(path, kind):
                        p = self.cli(m, "power", "-g", 0, "--json")
                        g = json.loads(p.stdout)["gpus"][0]
                        self.assertEqual(g["apml_file"]["state"], "unreadable", g["apml_file"])
                        self.assertIn(TYPE_NAME[kind] + ", not a regular file",
                                      json.dumps(g["apml_file"]))

    def test_pending_memory_mode(self):
        d = os.path.join(self.rt, "partition")
        with Mount("--machine", "mi300x-8") as m:
            # a real request names the file
            self.cli(m, "set", "-g", 0, "-M", "NPS4", status=8)    # waits for a reload
            names = [n for n in os.listdir(d) if n.startswith("nps-%s-" % GPU0)]
            self.assertEqual(len(names), 1, names)
            path = os.path.join(d, names[0])
            os.unlink(path)
            for kind in KINDS:
                with self.subTest(kind=kind):
                    with self.placed(path, kind):
                        self.cli(m, "partition", "-g", 0,
                                 has=[path, TYPE_NAME[kind], "not a regular file"])
                        self.cli(m, "partition", "-g", 0, user=NOBODY,
                                 has=[path, TYPE_NAME[kind], "not a regular file"])

    def test_remembered_driver(self):
        """The driver a VF had before vfio-pci: a FIFO or a link in its place is not read; the
        release goes on without it and says why."""
        with Mount("-m", "mi300x-gim-1vf") as m:
            vf = vf_bdf(GPU1, 0)
            path = os.path.join(self.rt, "sriov", vf)
            for kind in ("fifo", "link to a file", "link to a FIFO"):
                with self.subTest(kind=kind):
                    self.cli(m, "sriov", "bind", vf)
                    self.assertTrue(os.path.isfile(path))
                    os.unlink(path)
                    self.put(path, kind)
                    try:
                        self.cli(m, "sriov", "release", vf, "--force",
                                 has=[path, TYPE_NAME[kind], "not a regular file"])
                    finally:
                        for p in (path, path + ".target", path + ".target-fifo"):
                            if os.path.lexists(p):
                                os.unlink(p)


if __name__ == "__main__":
    main()
