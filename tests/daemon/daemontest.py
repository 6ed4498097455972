# SPDX-License-Identifier: MIT
"""Shared helpers of the amdsmid tests (suite 'daemon').

A test starts, in this order: the simulator (tests/sim/simtest.py CtlMount: a mount with its
control socket), a private dbus-daemon with a system-bus-like policy, python-dbusmock's
polkitd template on it (unless polkit=False), and amdsmid with AMDSMI_SYSFS_ROOT at the mount
and its state, runtime and configuration directories in a temporary directory. It waits for
READY=1 on a NOTIFY_SOCKET of its own. Everything is stopped and removed on exit, also when the
test fails.

KFD: amdsmid runs as `amdsmi-sim run` runs a command, with the simulator's KFD shim
(libamdsmi-sim-kfd.so, LD_PRELOAD), AMDSMI_DEV_ROOT at a directory holding an empty kfd file
and AMDSMI_SIM_CTL at the control socket, so that it can follow the KFD SMI events. Clients get
AMDSMI_DEV_ROOT and AMDSMI_SIM_CTL too (the CLI reads through amdsmid only when its roots are
amdsmid's); env(kfd=True) adds the shim for a client that opens /dev/kfd itself.

Clients: busctl (call/get-property with --json=short) and the amdsmi CLI, both pointed at the
private bus with DBUS_SYSTEM_BUS_ADDRESS; unprivileged calls run under setpriv as nobody.

env: AMDSMID       the amdsmid executable
     AMDSMI_SIM    the amdsmi-sim executable
     AMDSMI_CLI    the amdsmi executable
     AMDSMI_SCHEMA cli/schema/amdsmi-1.schema.json
"""

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "sim"))
from simtest import (CLI, GPU0, GPU1, MI300X_BDFS, NOBODY, SIM, CtlMount, Mount,  # noqa: E402,F401
                     vf_bdf, mkdtemp, remove_tree, require_fuse, tmpdir)

# the KFD shim, next to amdsmi-sim in the build directory
SHIM = os.path.join(os.path.dirname(SIM), "libamdsmi-sim-kfd.so") if SIM else ""

AMDSMID = os.environ.get("AMDSMID", "")
BUS = "org.amdsmi1"
ROOT = "/org/amdsmi1"
MANAGER = "org.amdsmi1.Manager"
IFACE_GPU = "org.amdsmi1.Gpu"
IFACE_PARTITION = "org.amdsmi1.Partition"
IFACE_POWER = "org.amdsmi1.Power"
IFACE_SRIOV = "org.amdsmi1.Sriov"
ACTIONS = ["org.amdsmi1.partition.configure", "org.amdsmi1.power.configure",
           "org.amdsmi1.power.set-platform-limit", "org.amdsmi1.sriov.configure",
           "org.amdsmi1.vm.provision", "org.amdsmi1.driver.reload",
           "org.amdsmi1.health.read-privileged", "org.amdsmi1.process.list",
           "org.amdsmi1.performance.configure",
           "org.amdsmi1.gpu.reset"]

BUS_CONFIG = """<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>system</type>
  <listen>unix:path=%(socket)s</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow user="*"/>
    <allow own="*"/>
    <allow send_type="method_call"/>
    <allow send_type="signal"/>
    <allow send_requested_reply="true" send_type="method_return"/>
    <allow send_requested_reply="true" send_type="error"/>
    <allow receive_type="method_call"/>
    <allow receive_type="method_return"/>
    <allow receive_type="error"/>
    <allow receive_type="signal"/>
  </policy>
</busconfig>
"""


def require_daemon():
    require_fuse()
    for tool, what in ((AMDSMID, "AMDSMID (amdsmid)"), (CLI, "AMDSMI_CLI (amdsmi)")):
        if not tool or not os.access(tool, os.X_OK):
            sys.exit("FAIL: %s is not executable: %r" % (what, tool))
    for tool in ("dbus-daemon", "busctl", "setpriv"):
        if not shutil.which(tool):
            sys.exit("FAIL: %s is missing" % tool)


def gpu_path(bdf):
    """sd_bus_path_encode("/org/amdsmi1/gpu", bdf): every byte outside [A-Za-z0-9], and a
    leading digit, as _xx."""
    out = []
    for i, ch in enumerate(bdf):
        if ch.isascii() and (ch.isalpha() or (ch.isdigit() and i > 0)):
            out.append(ch)
        else:
            out.append("_%02x" % ord(ch))
    return ROOT + "/gpu/" + "".join(out)


class BusError(Exception):
    def __init__(self, name, message, returncode):
        super().__init__("%s: %s" % (name, message))
        self.name = name
        self.message = message
        self.returncode = returncode



def wait_until(what, fn, timeout=30):
    """fn()'s first true value, asked every 50 ms; AssertionError naming WHAT after TIMEOUT s."""
    deadline = time.monotonic() + timeout
    while True:
        v = fn()
        if v:
            return v
        if time.monotonic() > deadline:
            raise AssertionError("timed out waiting for " + what)
        time.sleep(0.05)

class Daemon:
    """`with Daemon(machine="mi300x-8") as d:` a simulator, a bus, polkit and amdsmid.

    polkit: True (dbusmock polkitd, allowing nothing until allow()), False (no polkit).
    config: the text of amdsmid.conf, or None for no file.
    sim_args: more arguments for amdsmi-sim mount.
    wrapper: a command list amdsmid runs under (its last argument is amdsmid's path), e.g. a
             private mount namespace; it must exec amdsmid.
    kfd: False runs amdsmid and its clients without a device root (no AMDSMI_DEV_ROOT, no
         KFD shim), as before amdsmid followed KFD events.
    """

    def __init__(self, machine="mi300x-8", polkit=True, config=None, sim_args=(),
                 start=True, env=None, wrapper=None, kfd=True):
        self.machine = machine
        self.use_kfd = kfd
        self.wrapper = list(wrapper or [])
        self.use_polkit = polkit
        self.config = config
        self.sim_args = list(sim_args)
        self.start_daemon = start
        self.extra_env = dict(env or {})
        self.mount = None
        self.tmp = None
        self.bus_proc = None
        self.polkit_proc = None
        self.proc = None
        self.notify = None
        self.log_path = None

    # ---- set-up and tear-down --------------------------------------------------------------

    def __enter__(self):
        try:
            self._setup()
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def _setup(self):
        self.tmp = mkdtemp("amdsmid-test.", 0o755)
        for sub in ("state", "run", "etc", "dev"):
            os.mkdir(os.path.join(self.tmp, sub))
            os.chmod(os.path.join(self.tmp, sub), 0o755)
        self.state_dir = os.path.join(self.tmp, "state")
        self.runtime_dir = os.path.join(self.tmp, "run")
        self.config_dir = os.path.join(self.tmp, "etc")
        # the device root: the kfd file whose descriptors the KFD shim answers
        self.dev_dir = os.path.join(self.tmp, "dev")
        with open(os.path.join(self.dev_dir, "kfd"), "w"):
            pass
        os.chmod(os.path.join(self.dev_dir, "kfd"), 0o666)
        if self.config is not None:
            self.write_config(self.config)
        self.mount = CtlMount("--machine", self.machine, "--seed", "1", *self.sim_args)
        self.mount.__enter__()
        self._start_bus()
        if self.use_polkit:
            self._start_polkit()
        if self.start_daemon:
            self.start()

    def _start_bus(self):
        self.socket = os.path.join(self.tmp, "bus")
        conf = os.path.join(self.tmp, "bus.conf")
        with open(conf, "w") as f:
            f.write(BUS_CONFIG % {"socket": self.socket})
        # its complaints (it cannot raise the fd limit in a container) go to a file
        with open(os.path.join(self.tmp, "dbus-daemon.log"), "w") as log:
            self.bus_proc = subprocess.Popen(["dbus-daemon", "--config-file=" + conf,
                                              "--nofork", "--print-address=1"],
                                             stdout=subprocess.PIPE, stderr=log, text=True)
        line = self.bus_proc.stdout.readline().strip()
        if not line:
            raise AssertionError("dbus-daemon did not start")
        self.address = line
        os.chmod(self.socket, 0o777)

    def _start_polkit(self):
        env = dict(os.environ, DBUS_SYSTEM_BUS_ADDRESS=self.address)
        self.polkit_proc = subprocess.Popen(
            ["/usr/bin/python3", "-m", "dbusmock", "--system", "--template", "polkitd"],
            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.wait_for_name("org.freedesktop.PolicyKit1")

    def env(self, kfd=False, **more):
        """The environment of amdsmid and its clients; @kfd: with the KFD shim preloaded (what
        opens /dev/kfd: amdsmid, amdsmi events --direct)."""
        e = dict(os.environ)
        e.update({
            "DBUS_SYSTEM_BUS_ADDRESS": self.address,
            "AMDSMI_SYSFS_ROOT": self.mount.root,
            "AMDSMI_DEV_ROOT": self.dev_dir,
            "AMDSMI_SIM_CTL": self.mount.sock,
            "STATE_DIRECTORY": self.state_dir,
            "RUNTIME_DIRECTORY": self.runtime_dir,
            "CONFIGURATION_DIRECTORY": self.config_dir,
            "LANG": "C.UTF-8",
        })
        if not self.use_kfd:
            del e["AMDSMI_DEV_ROOT"]
            kfd = False
        if kfd:
            # as `amdsmi-sim run` does: the shim first; a sanitized binary would refuse to run
            # with it loaded before its runtime
            old = e.get("LD_PRELOAD", "")
            e["LD_PRELOAD"] = SHIM + (" " + old if old else "")
            asan = e.get("ASAN_OPTIONS", "")
            if "verify_asan_link_order" not in asan:
                e["ASAN_OPTIONS"] = (asan + ":" if asan else "") + "verify_asan_link_order=0"
        e.update(self.extra_env)
        e.update(more)
        return e

    def ctl(self, *args, check=True):
        """amdsmi-sim ctl on the simulator's control socket."""
        return self.mount.ctl(*args, check=check)

    def start(self, wait=True):
        """Starts amdsmid and waits for READY=1 (30 s)."""
        if self.notify is None:
            self.notify_path = os.path.join(self.tmp, "notify")
            self.notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
            self.notify.bind(self.notify_path)
        self.log_path = os.path.join(self.tmp, "amdsmid.log")
        log = open(self.log_path, "a")
        self.proc = subprocess.Popen(self.wrapper + [AMDSMID],
                                     env=self.env(kfd=self.use_kfd, NOTIFY_SOCKET=self.notify_path),
                                     stdout=log, stderr=log)
        log.close()
        if wait:
            self.wait_ready()

    def wait_ready(self, timeout=30):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError("amdsmid exited with %d before READY=1:\n%s"
                                     % (self.proc.returncode, self.log()))
            self.notify.settimeout(0.2)
            try:
                msg = self.notify.recv(4096).decode()
            except socket.timeout:
                continue
            if "READY=1" in msg.split("\n"):
                return
        raise AssertionError("no READY=1 from amdsmid in %d s:\n%s" % (timeout, self.log()))

    def stop(self, sig=signal.SIGTERM, timeout=30):
        """Stops amdsmid; returns its exit status (negative: the signal)."""
        if not self.proc or self.proc.poll() is not None:
            return self.proc.returncode if self.proc else None
        self.proc.send_signal(sig)
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise AssertionError("amdsmid did not stop in %d s on signal %d" % (timeout, sig))

    def __exit__(self, *exc):
        if self.proc and self.proc.poll() is None:
            try:
                self.stop()
            except AssertionError:
                pass
        crashed = self.proc is not None and self.proc.returncode not in (0, None, -9, -15)
        for p in (self.polkit_proc, self.bus_proc):
            if p and p.poll() is None:
                p.terminate()
                try:
                    p.wait(10)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
        if self.bus_proc and self.bus_proc.stdout:
            self.bus_proc.stdout.close()
        if self.notify:
            self.notify.close()
        if self.mount:
            self.mount.__exit__(None, None, None)
        if crashed and exc[0] is None:
            log = self.log()
            remove_tree(self.tmp)
            raise AssertionError("amdsmid exited with %d:\n%s" % (self.proc.returncode, log))
        if self.tmp:
            remove_tree(self.tmp)
        return False

    def log(self):
        try:
            with open(self.log_path) as f:
                return f.read()
        except (OSError, TypeError):
            return ""

    def write_config(self, text):
        with open(os.path.join(self.config_dir, "amdsmid.conf"), "w") as f:
            f.write(text)

    # ---- clients --------------------------------------------------------------------------

    def busctl(self, *args, user=None, check=True, timeout=60):
        cmd = (user or []) + ["busctl", "--system", "--json=short"] + [str(a) for a in args]
        p = subprocess.run(cmd, env=self.env(), capture_output=True, text=True, timeout=timeout)
        if check and p.returncode != 0:
            raise AssertionError("%s: exit %d: %s" % (" ".join(cmd), p.returncode, p.stderr))
        return p

    def wait_for_name(self, name, timeout=20):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            p = self.busctl("status", name, check=False)
            if p.returncode == 0:
                return
            time.sleep(0.1)
        raise AssertionError("%s did not appear on the bus" % name)

    def call(self, path, interface, method, signature="", *args, user=None, timeout=60):
        """Calls a method; returns the list of return values, or raises BusError."""
        cmd = ["call", "--timeout=%ds" % timeout, BUS, path, interface, method]
        if signature:
            cmd += [signature] + [str(a) for a in args]
        p = self.busctl(*cmd, user=user, check=False, timeout=timeout + 10)
        if p.returncode != 0:
            raise self._error(p)
        out = p.stdout.strip()
        return json.loads(out)["data"] if out else []

    def _error(self, p):
        # busctl prints "Call failed: <message>" and, with --json, nothing parsable: the
        # error name comes from a second call through busctl's verbose mode is not possible,
        # so the message is matched; the D-Bus name is checked with call_error().
        return BusError(None, p.stderr.strip(), p.returncode)

    def call_error(self, path, interface, method, *args, user=None):
        """Calls a method that must fail: returns (error name, message) through
        dbus-send, which prints the error name. ARGS in dbus-send's syntax ("uint32:1")."""
        cmd = (user or []) + ["dbus-send", "--system", "--print-reply", "--dest=" + BUS,
                              path, interface + "." + method]
        cmd += list(args)
        p = subprocess.run(cmd, env=self.env(), capture_output=True, text=True, timeout=60)
        if p.returncode == 0:
            raise AssertionError("%s.%s succeeded: %s" % (interface, method, p.stdout))
        # "Error org.amdsmi1.Error.Busy: message"
        line = p.stderr.strip().splitlines()[0] if p.stderr.strip() else ""
        if line.startswith("Error "):
            name, _, msg = line[6:].partition(": ")
            return name, msg
        raise AssertionError("dbus-send failed without an error name: %r" % p.stderr)

    def get(self, path, interface, prop, user=None):
        p = self.busctl("get-property", BUS, path, interface, prop, user=user)
        return json.loads(p.stdout)["data"]

    def describe(self, user=None):
        return json.loads(self.call(ROOT, MANAGER, "Describe", user=user)[0])

    def cli(self, *args, user=None, status=0, env=None):
        cmd = (user or []) + [CLI] + [str(a) for a in args]
        e = self.env()
        if env:
            e.update(env)
        p = subprocess.run(cmd, env=e, capture_output=True, text=True, timeout=120)
        if status is not None and p.returncode != status:
            raise AssertionError("%s: exit %d, expected %d\nstdout: %s\nstderr: %s"
                                 % (" ".join(cmd), p.returncode, status, p.stdout, p.stderr))
        return p

    def allow(self, *actions):
        """polkit allows exactly ACTIONS from now on (for every non-root caller)."""
        self._polkit("SetAllowed", "as", str(len(actions)), *actions)

    def _polkit(self, method, signature, *args):
        p = subprocess.run(["busctl", "--system", "call", "org.freedesktop.PolicyKit1",
                            "/org/freedesktop/PolicyKit1/Authority",
                            "org.freedesktop.DBus.Mock", method, signature] + list(args),
                           env=self.env(), capture_output=True, text=True, timeout=30)
        if p.returncode != 0:
            raise AssertionError("polkit mock %s: %s" % (method, p.stderr))

    # ---- the simulated GPUs, as the VM tests look at them --------------------------------

    def driver(self, bdf):
        """The driver bound to @bdf in the simulator, or None."""
        link = self.mount.path("bus/pci/devices/%s/driver" % bdf)
        return os.path.basename(os.readlink(link)) if os.path.lexists(link) else None

    def device_cap(self, pf):
        """power1_cap of @pf in the simulator, µW."""
        hw = self.mount.path("bus/pci/devices/%s/hwmon" % pf)
        with open(os.path.join(hw, os.listdir(hw)[0], "power1_cap")) as f:
            return int(f.read())

    def with_vfs(self, pf, n):
        """Gives @pf @n VFs through amdsmid; their addresses."""
        self.call(gpu_path(pf), "org.amdsmi1.Sriov", "SetNumVfs", "ut", n, 0)
        return [vf_bdf(pf, i) for i in range(n)]

    def history(self):
        path = os.path.join(self.state_dir, "history.jsonl")
        if not os.path.exists(path):
            return []
        with open(path) as f:
            return [json.loads(line) for line in f if line.strip()]

    def kill_during(self, rel_path, *call):
        """SIGKILL in the middle of a change: the next write of REL_PATH (relative to the
        mount) is held for 10 s, CALL (busctl call arguments after the bus name: path,
        interface, member, signature, arguments) starts the change, amdsmid is killed once the
        change's intent record exists and the write is under way, and started again."""
        subprocess.run([SIM, "ctl", "--mount", self.mount.root, "delay", rel_path, "10000",
                        "once", "write"], check=True, capture_output=True, timeout=60)
        caller = subprocess.Popen(["busctl", "--system", "call", BUS] + [str(a) for a in call],
                                  env=self.env(), stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL)
        intents = os.path.join(self.state_dir, "intent")
        deadline = time.monotonic() + 20
        while not (os.path.isdir(intents) and os.listdir(intents)):
            if time.monotonic() > deadline:
                raise AssertionError("no intent record for %r" % (call,))
            time.sleep(0.02)
        time.sleep(0.3)  # the write is under way in the simulator
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(10)
        caller.wait(60)
        self.start()

    def recoveries(self):
        """The history records of recovered intents: (gpu, what was interrupted, outcome,
        result, message), one per intent record found at a start."""
        return [(e["gpu"], e["old"], e["new"], e["result"], e["message"])
                for e in self.history() if e["change"] == "recovery"]
