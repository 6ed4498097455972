# SPDX-License-Identifier: MIT
"""Shared helpers of the amdsmi-sim tests (suite 'sim').

Every test mounts the simulator in a temporary directory and always unmounts it
(fusermount3 -u), also when the test fails. Temporary directories come from TMPDIR and are
removed whatever happens: by the test's cleanups (tmpdir()), by Mount's __exit__, and at exit
for what a test killed by a signal (meson's timeout sends SIGTERM) could not remove; CI fails
on anything left (.ci/build-and-test.sh). The tests go through the kernel's VFS only:
os.open/os.read/os.write, and ordinary tools. They need /dev/fuse (and root, for the
permission and namespace checks); without it they FAIL, they never skip.

env: AMDSMI_SIM     the amdsmi-sim executable
     AMDSMI_CLI     the amdsmi executable (CLI tests)
     AMDSMI_SCHEMA  cli/schema/amdsmi-1.schema.json
"""

import atexit
import json
import os
import shutil
import signal
import struct
import socket
import subprocess
import sys
import tempfile
import time
import unittest

SIM = os.environ.get("AMDSMI_SIM", "")
CLI = os.environ.get("AMDSMI_CLI", "")
SCHEMA = os.environ.get("AMDSMI_SCHEMA", "")
BAREMETAL_PRESETS = ["mi300x-8", "mi300x-8-dkms", "mi300x-8-bmc", "mi325x-8", "mi300a-4", "mi350x-8", "mi355x-8"]
# SR-IOV (test-sim-sriov.py): gim hosts, VMs, and the synthetic amdgpu host with sriov_configure
SRIOV_PRESETS = ["mi300x-gim-1vf", "mi300x-gim-8vf", "mi300x-guest-1vf", "mi300x-guest-multivf",
                 "mi300x-sriov"]
PRESETS = BAREMETAL_PRESETS + SRIOV_PRESETS     # every built-in machine, in list-machines order
GPU0 = "0000:05:00.0"
GPU1 = "0000:26:00.0"
MI300X_BDFS = ["0000:05:00.0", "0000:26:00.0", "0000:46:00.0", "0000:65:00.0",
               "0000:85:00.0", "0000:a6:00.0", "0000:c6:00.0", "0000:e5:00.0"]
NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
GiB = 1 << 30

# Snapshots write thousands of small files: on tmpfs when there is one (a disk file system can
# take seconds for that). A TMPDIR set by the caller wins: CI gives the tests a private one and
# fails on anything left in it (.ci/build-and-test.sh).
if not os.environ.get("TMPDIR") and os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK):
    tempfile.tempdir = "/dev/shm"


# Directories made here and not removed yet: whatever is left at exit is unmounted and removed.
_live = set()


def _mounts_below(path):
    """The mount points at or below @path, deepest first."""
    out = []
    with open("/proc/self/mounts") as f:
        for line in f:
            mnt = line.split()[1].replace("\\040", " ")
            if mnt == path or mnt.startswith(path + "/"):
                out.append(mnt)
    return sorted(out, key=len, reverse=True)


def remove_tree(path):
    """Removes @path, unmounting whatever is mounted below it first (a simulator, a tmpfs)."""
    _live.discard(path)
    for mnt in _mounts_below(path):
        if subprocess.run(["fusermount3", "-u", mnt], capture_output=True).returncode != 0:
            subprocess.run(["umount", "-l", mnt], capture_output=True)
    shutil.rmtree(path, ignore_errors=True)


@atexit.register
def _remove_live():
    for path in sorted(_live, key=len, reverse=True):
        remove_tree(path)


def _terminated(signum, frame):
    # unwind as on Ctrl-C: the with blocks unmount, atexit removes the rest
    signal.signal(signum, signal.SIG_DFL)
    raise KeyboardInterrupt("signal %d" % signum)


signal.signal(signal.SIGTERM, _terminated)


def mkdtemp(prefix, mode=None):
    """tempfile.mkdtemp(prefix=@prefix), removed at exit unless remove_tree() was first."""
    path = tempfile.mkdtemp(prefix=prefix)
    _live.add(path)
    if mode is not None:
        os.chmod(path, mode)
    return path


def tmpdir(test, prefix, mode=0o755):
    """A new directory for @test (a unittest.TestCase), removed by its cleanups, also when
    setUp or the test fails (cleanups added later, e.g. an unmount, run first)."""
    path = mkdtemp(prefix)
    test.addCleanup(remove_tree, path)
    os.chmod(path, mode)
    return path


def require_fuse():
    """The simulator needs /dev/fuse: without it the suite fails (never skips)."""
    if not SIM or not os.access(SIM, os.X_OK):
        sys.exit("FAIL: AMDSMI_SIM is not the amdsmi-sim executable: %r" % SIM)
    if not os.path.exists("/dev/fuse"):
        sys.exit("FAIL: /dev/fuse is missing; the simulator tests need FUSE")
    if os.geteuid() != 0:
        sys.exit("FAIL: the simulator tests run as root (permission and namespace checks)")


def sim(*args, check=False, **kw):
    """Runs amdsmi-sim with ARGS; returns the CompletedProcess (text)."""
    p = subprocess.run([SIM] + [str(a) for a in args], capture_output=True, text=True,
                       timeout=60, **kw)
    if check and p.returncode != 0:
        raise AssertionError("amdsmi-sim %s: exit %d: %s" % (" ".join(map(str, args)),
                                                             p.returncode, p.stderr))
    return p


class Mount:
    """A mounted simulator: `with Mount("--machine", "mi350x-8") as m: m.read(...)`."""

    def __init__(self, *args):
        self.args = [str(a) for a in args]
        self.tmp = None
        self.root = None

    def __enter__(self):
        self.tmp = mkdtemp("amdsmi-sim-test.", 0o755)  # unprivileged readers reach the mount
        self.root = os.path.join(self.tmp, "sys")
        os.mkdir(self.root)
        p = sim("mount", self.root, *self.args)
        if p.returncode != 0:
            self.__exit__(None, None, None)     # a subclass's directories too
            raise AssertionError("mount failed (exit %d): %s" % (p.returncode, p.stderr))
        if not os.path.ismount(self.root):
            self.__exit__(None, None, None)
            raise AssertionError("amdsmi-sim mount returned but %s is not mounted" % self.root)
        return self

    def __exit__(self, *exc):
        for _ in range(50):
            if not os.path.ismount(self.root):
                break
            p = subprocess.run(["fusermount3", "-u", self.root], capture_output=True)
            if p.returncode == 0:
                break
            time.sleep(0.1)
        for _ in range(50):
            if not self.tmp or not os.path.lexists(self.tmp):
                break
            try:
                shutil.rmtree(self.tmp)
                break
            except OSError:
                time.sleep(0.1)
        if self.tmp:
            remove_tree(self.tmp)   # still there: unmounted the hard way; forgotten anyway
        return False

    def path(self, rel):
        return os.path.join(self.root, rel)

    def gpu(self, bdf=GPU0, rel=""):
        return "bus/pci/devices/%s%s" % (bdf, "/" + rel if rel else "")

    def read(self, rel):
        """The contents of a file (bytes), read with one read(2) of 4096 bytes and EOF check."""
        fd = os.open(self.path(rel), os.O_RDONLY)
        try:
            data = os.read(fd, 4096)
            tail = os.read(fd, 4096)
            if tail:
                raise AssertionError("%s: more than one page" % rel)
            return data
        finally:
            os.close(fd)

    def text(self, rel):
        return self.read(rel).decode()

    def value(self, rel):
        return self.text(rel).strip()

    def read_errno(self, rel):
        """0 if the file reads, else the errno of open() or read()."""
        try:
            self.read(rel)
            return 0
        except OSError as e:
            return e.errno

    def write(self, rel, data):
        """One write(2); returns 0 on success (the whole count written), else the errno."""
        if isinstance(data, str):
            data = data.encode()
        try:
            fd = os.open(self.path(rel), os.O_WRONLY)
        except OSError as e:
            return e.errno
        try:
            n = os.write(fd, data)
            if n != len(data):
                raise AssertionError("%s: short write %d of %d" % (rel, n, len(data)))
            return 0
        except OSError as e:
            return e.errno
        finally:
            os.close(fd)

    def kfd_nodes(self):
        """[(index, properties dict, gpu_id)] of the KFD topology, in index order."""
        top = "class/kfd/kfd/topology/nodes"
        out = []
        for name in sorted(os.listdir(self.path(top)), key=int):
            props = {}
            for line in self.text("%s/%s/properties" % (top, name)).splitlines():
                k, v = line.split(" ")
                props[k] = int(v)
            out.append((int(name), props, int(self.value("%s/%s/gpu_id" % (top, name)))))
        return out

    def gpu_nodes(self, bdf):
        """The KFD GPU nodes of the GPU at @bdf."""
        dom, bus, devfn = bdf_ids(bdf)
        return [n for n in self.kfd_nodes()
                if n[2] and n[1]["domain"] == dom and n[1]["location_id"] >> 8 == bus
                and n[1]["location_id"] & 0xf8 == devfn & 0xf8]

    def generation(self):
        return int(self.value("class/kfd/kfd/topology/generation_id"))


class CtlMount(Mount):
    """A mounted simulator with its control socket at a known path."""

    def __init__(self, *args):
        self.sock_dir = mkdtemp("amdsmi-sim-ctl.")
        self.sock = os.path.join(self.sock_dir, "ctl.sock")
        super().__init__("--ctl", self.sock, *args)

    def __exit__(self, *exc):
        super().__exit__(*exc)
        remove_tree(self.sock_dir)
        return False

    def raw(self, lines):
        """Requests on one connection to the control socket, one a line, without pidfds (the
        server names the PIDs in its own namespace): the answers. Quick for many requests
        (1000 kfd-users add)."""
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(120)
            s.connect(self.sock)
            s.sendall("".join(line + "\n" for line in lines).encode())
            s.shutdown(socket.SHUT_WR)
            out = b""
            while True:
                chunk = s.recv(1 << 16)
                if not chunk:
                    return out.decode()
                out += chunk

    def ctl(self, *args, check=True):
        """amdsmi-sim ctl --socket SOCK ARGS: the CompletedProcess; with @check, exit 0."""
        p = subprocess.run([SIM, "ctl", "--socket", self.sock] + [str(a) for a in args],
                           capture_output=True, text=True, timeout=60)
        if check and p.returncode != 0:
            raise AssertionError("ctl %s: exit %d: %s" % (" ".join(map(str, args)),
                                                          p.returncode, p.stderr))
        return p


def machine_variant(base, name, directory, edit):
    """A machine description: preset @base as dump-machine gives it, renamed @name and
    changed in place by @edit(machine), written to @directory; its path."""
    p = subprocess.run([SIM, "dump-machine", base], check=True, capture_output=True,
                       text=True, timeout=60)
    m = json.loads(p.stdout)
    m["name"] = name
    edit(m)
    path = os.path.join(directory, name + ".json")
    with open(path, "w") as f:
        json.dump(m, f)
    return path


def cpx_machine(directory):
    """mi300x-8 with every GPU in CPX/NPS4 (as bench/run.sh makes it)."""
    def edit(m):
        for g in m["gpus"]:
            g.update(compute_partition="CPX", memory_partition="NPS4")
    return machine_variant("mi300x-8", "mi300x-8-cpx", directory, edit)


def vf_bdf(pf, i):
    """VF i of @pf in the simulator's layout: devfn + offset 16 + stride 1 * i
    (virtualization.md §2.3)."""
    dom, bus, rest = pf.split(":")
    dev, fn = rest.split(".")
    devfn = (int(dev, 16) << 3 | int(fn, 16)) + 16 + i
    return "%s:%02x:%02x.%x" % (dom, int(bus, 16) + (devfn >> 8), (devfn & 0xff) >> 3, devfn & 7)


def bdf_ids(bdf):
    dom, bus, rest = bdf.split(":")
    dev, fn = rest.split(".")
    return int(dom, 16), int(bus, 16), int(dev, 16) << 3 | int(fn, 16)


def metrics_field(blob, rev, name):
    """A few gpu_metrics fields at the spec's offsets (§5.4)."""
    offs = {
        6: {"energy_accumulator": (16, "Q"), "system_clock_counter": (24, "Q"),
            "firmware_timestamp": (256, "Q"), "num_partition": (306, "H"),
            "curr_socket_power": (10, "H"), "temperature_hotspot": (4, "H")},
        7: {"energy_accumulator": (24, "Q"), "system_clock_counter": (32, "Q"),
            "firmware_timestamp": (288, "Q"), "num_partition": (338, "H"),
            "curr_socket_power": (10, "H"), "temperature_hotspot": (4, "H")},
        8: {"energy_accumulator": (24, "Q"), "system_clock_counter": (32, "Q"),
            "firmware_timestamp": (288, "Q"), "num_partition": (338, "H"),
            "curr_socket_power": (10, "H"), "temperature_hotspot": (4, "H")},
    }
    off, fmt = offs[rev][name]
    return struct.unpack_from("<" + fmt, blob, off)[0]


def walk(root):
    """Every path below @root (relative), with its lstat, without following links."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            full = os.path.join(dirpath, name)
            out[os.path.relpath(full, root)] = os.lstat(full)
    return out


class SchemaCase(unittest.TestCase):
    """A test case that checks the documents it reads against amdsmi/1 (AMDSMI_SCHEMA): the
    validator is built once per class, in setUpClass()."""

    validator = None

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        import jsonschema   # only the tests of documents need it
        with open(SCHEMA, encoding="utf-8") as f:
            cls.validator = jsonschema.Draft202012Validator(json.load(f))

    def schema_errors(self, doc):
        """What in @doc violates amdsmi/1: (path, message) pairs, [] for a valid document."""
        return [("/".join(map(str, e.absolute_path)), e.message[:200])
                for e in self.validator.iter_errors(doc)]

    def assert_valid(self, doc, what):
        """Fails naming @what (the command) unless @doc is a valid amdsmi/1 document."""
        self.assertEqual(self.schema_errors(doc), [], "%s: not valid amdsmi/1" % what)


def main():
    require_fuse()
    unittest.main(verbosity=2)
