#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""amdsmid's KFD event stream: Manager.SubscribeEvents() / UnsubscribeEvents(), the
org.amdsmi1.Health.Event signals, [health] events = auto | yes | no, and the pause around
amdsmid's own partition changes.

amdsmid runs with the simulator's KFD shim (daemontest.py); events are injected with
`amdsmi-sim ctl kfd-event` and `reset begin|end`. A subscriber is a separate bus client
(dbus-python), so that it can leave the bus. Whether amdsmid holds KFD event fds is checked
from the outside: its /proc/PID/fd (descriptors of the kfd file), and the simulator's rule
that a process holding an SMI stream is a KFD user of every GPU (a compute partition write
straight to the simulated sysfs fails with EBUSY)."""

import errno
import json
import os
import queue
import signal
import subprocess
import threading
import time
import unittest

from daemontest import (CLI, GPU0, GPU1, IFACE_PARTITION, MANAGER, ROOT, Daemon, gpu_path,
                        require_daemon, wait_until)

HEALTH = "org.amdsmi1.Health"
G0 = gpu_path(GPU0)
G1 = gpu_path(GPU1)

SUBSCRIBER = r"""
import json, sys
import dbus
from dbus.mainloop.glib import DBusGMainLoop
from gi.repository import GLib

DBusGMainLoop(set_as_default=True)
bus = dbus.SystemBus()
def out(o):
    print(json.dumps(o), flush=True)
def on_event(kind, text, path=None):
    out({"path": str(path), "kind": str(kind), "json": json.loads(str(text))})
bus.add_signal_receiver(on_event, signal_name="Event", dbus_interface="org.amdsmi1.Health",
                        path_keyword="path")
mgr = dbus.Interface(bus.get_object("org.amdsmi1", "/org/amdsmi1"), "org.amdsmi1.Manager")
if sys.argv[1] == "1":
    mgr.SubscribeEvents()
out({"ready": True})
loop = GLib.MainLoop()
def on_stdin(fd, cond):
    line = sys.stdin.readline().strip()
    if line == "unsubscribe":
        mgr.UnsubscribeEvents()
        out({"unsubscribed": True})
        return True
    loop.quit()
    return False
GLib.io_add_watch(sys.stdin, GLib.IO_IN | GLib.IO_HUP, on_stdin)
loop.run()
"""

# the simulator's names of the kinds -> amdsmi's
KINDS = {"vmfault": "vm_fault", "thermal_throttle": "thermal_throttle",
         "gpu_pre_reset": "gpu_pre_reset", "gpu_post_reset": "gpu_post_reset",
         "migrate_start": "migrate_start", "migrate_end": "migrate_end",
         "page_fault_start": "page_fault_start", "page_fault_end": "page_fault_end",
         "queue_eviction": "queue_eviction", "queue_restore": "queue_restore",
         "unmap_from_gpu": "unmap_from_gpu", "process_start": "process_start",
         "process_end": "process_end"}


class Subscriber:
    """A bus client receiving Health.Event; subscribed unless @subscribe is False."""

    def __init__(self, d, subscribe=True):
        self.q = queue.Queue()
        self.p = subprocess.Popen(["/usr/bin/python3", "-c", SUBSCRIBER,
                                   "1" if subscribe else "0"],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                  env=d.env())
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()
        first = self.next(timeout=30)
        if first != {"ready": True}:
            raise AssertionError("subscriber did not start: %r" % first)

    def _read(self):
        for line in self.p.stdout:
            self.q.put(json.loads(line))
        self.q.put(None)

    def next(self, timeout=10):
        try:
            return self.q.get(timeout=timeout)
        except queue.Empty:
            return None

    def wait(self, pred, timeout=10, what="an event"):
        """The first message for which @pred holds (the others before it are dropped)."""
        deadline = time.monotonic() + timeout
        seen = []
        while time.monotonic() < deadline:
            m = self.next(timeout=max(0.05, deadline - time.monotonic()))
            if m is None:
                break
            if pred(m):
                return m
            seen.append(m)
        raise AssertionError("no %s in %d s; seen: %r" % (what, timeout, seen))

    def none(self, timeout=1.5):
        m = self.next(timeout=timeout)
        if m is not None:
            raise AssertionError("unexpected message %r" % m)

    def send(self, line):
        self.p.stdin.write(line + "\n")
        self.p.stdin.flush()

    def close(self):
        if self.p.poll() is None:
            try:
                self.send("quit")
            except BrokenPipeError:
                pass
            try:
                self.p.wait(10)
            except subprocess.TimeoutExpired:
                self.p.kill()
                self.p.wait()
        self._closed()

    def kill(self):
        self.p.kill()
        self.p.wait()
        self._closed()

    def _closed(self):
        self.p.stdin.close()
        self.reader.join(10)
        self.p.stdout.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False


def stream(d):
    return json.loads(d.call(ROOT, MANAGER, "GetEventStream")[0])


def fd_targets(pid):
    """What the descriptors of @pid name now (one closed meanwhile is left out: a process
    opens and closes files as it starts)."""
    base = "/proc/%d/fd" % pid
    out = []
    for fd in os.listdir(base):
        try:
            out.append(os.readlink(os.path.join(base, fd)))
        except OSError:
            pass
    return out


def kfd_fds(d):
    """amdsmid's descriptors of the kfd file (the shim's /dev/kfd)."""
    want = os.path.realpath(os.path.join(d.dev_dir, "kfd"))
    return fd_targets(d.proc.pid).count(want)


def raw_write(d, bdf, mode):
    """A compute partition write straight to the simulated sysfs: 0 or the errno."""
    try:
        with open(d.mount.path("bus/pci/devices/%s/current_compute_partition" % bdf), "w") as f:
            f.write(mode)
        return 0
    except OSError as e:
        return e.errno


def of(path, kind):
    return lambda m: m.get("path") == path and m.get("kind") == kind


class Events(unittest.TestCase):
    def test_every_kind_reaches_the_signal(self):
        with Daemon() as d, Subscriber(d) as s:
            self.assertEqual(stream(d)["subscribers"], 1)
            for sim_kind, kind in KINDS.items():
                d.ctl("kfd-event", GPU0, sim_kind, "pid=77")
                m = s.wait(of(G0, kind), what=kind)
                j = m["json"]
                self.assertEqual((j["gpu"], j["bdf"], j["partition"], j["kind"]),
                                 (0, GPU0, 0, kind))
                self.assertGreater(j["kfd_gpu_id"], 0)
                self.assertRegex(j["timestamp"], r"^\d{4}-\d\d-\d\dT")
                self.assertRegex(j["text"], r"^[0-9a-f]+ ")
                self.assertEqual(j["id"], int(j["text"].split()[0], 16))
                if kind in ("vm_fault", "process_start", "process_end", "migrate_start",
                            "migrate_end", "page_fault_start", "page_fault_end",
                            "queue_eviction", "queue_restore", "unmap_from_gpu"):
                    self.assertEqual(j["data"]["pid"], 77, j)
                if kind == "thermal_throttle":
                    self.assertEqual(j["data"]["mask"], "0x1")
                if kind in ("gpu_pre_reset", "gpu_post_reset"):
                    self.assertIn("seq", j["data"])
            # a payload of the test's own: decoded, on the other GPU's object
            d.ctl("kfd-event", GPU1, "gpu_post_reset", "2a", "RAS", "error")
            j = s.wait(of(G1, "gpu_post_reset"))["json"]
            self.assertEqual((j["gpu"], j["bdf"], j["data"]), (1, GPU1, {"seq": 42,
                                                                         "cause": "RAS error"}))
            # a GPU reset raises pre and post reset events
            d.ctl("reset", GPU0, "begin")
            d.ctl("reset", GPU0, "end")
            pre = s.wait(of(G0, "gpu_pre_reset"))["json"]
            post = s.wait(of(G0, "gpu_post_reset"))["json"]
            self.assertEqual(pre["data"]["seq"], post["data"]["seq"])
            self.assertEqual(pre["data"]["cause"], "user trigger")

    def test_partition_of_the_event(self):
        with Daemon() as d:
            d.call(G1, IFACE_PARTITION, "SetComputeMode", "st", "cpx", 0)
            with Subscriber(d) as s:
                self.assertEqual(stream(d)["fds"], 8 - 1 + 8)
                d.ctl("kfd-event", GPU1 + ".5", "thermal_throttle")
                j = s.wait(of(G1, "thermal_throttle"))["json"]
                self.assertEqual((j["gpu"], j["partition"]), (1, 5))
                # one event of the whole GPU: one per partition, each its own
                d.ctl("kfd-event", GPU1, "process_start", "pid=9")
                parts = sorted(s.wait(of(G1, "process_start"))["json"]["partition"]
                               for _ in range(8))
                self.assertEqual(parts, list(range(8)))

    def test_no_fd_without_subscriber(self):
        with Daemon() as d:
            # a bare signal match gets nothing: amdsmid does not follow the events
            with Subscriber(d, subscribe=False) as s:
                st = stream(d)
                self.assertEqual((st["mode"], st["subscribers"], st["fds"]), ("auto", 0, 0))
                self.assertEqual(kfd_fds(d), 0)
                d.ctl("kfd-event", GPU0, "thermal_throttle")
                s.none()
                # no KFD user: the switch goes through
                self.assertEqual(raw_write(d, GPU1, "DPX"), 0)
            with Subscriber(d) as s:
                wait_until("the fds", lambda: stream(d)["fds"] == 8 + 1)   # GPU1 is DPX now
                self.assertEqual(kfd_fds(d), 9)
                self.assertEqual(stream(d)["following"], sorted(stream(d)["following"]))
                self.assertEqual(raw_write(d, GPU0, "CPX"), errno.EBUSY)
                s.send("unsubscribe")
                s.wait(lambda m: m.get("unsubscribed"))
                wait_until("no fd", lambda: kfd_fds(d) == 0)
                self.assertEqual(stream(d)["fds"], 0)
                self.assertEqual(raw_write(d, GPU0, "CPX"), 0)
                d.ctl("kfd-event", GPU0, "thermal_throttle")
                s.none()
            # unsubscribing without a subscription says so
            name, msg = d.call_error(ROOT, MANAGER, "UnsubscribeEvents")
            self.assertEqual(name, "org.amdsmi1.Error.NotFound")
            self.assertIn("not subscribed", msg)

    def test_subscriber_that_leaves_releases(self):
        with Daemon() as d:
            a = Subscriber(d)
            b = Subscriber(d)
            self.assertEqual(stream(d)["subscribers"], 2)
            a.kill()
            wait_until("one subscriber", lambda: stream(d)["subscribers"] == 1)
            self.assertEqual(kfd_fds(d), 8)
            d.ctl("kfd-event", GPU0, "vmfault")
            b.wait(of(G0, "vm_fault"))
            b.kill()
            wait_until("no fd", lambda: kfd_fds(d) == 0)
            self.assertEqual(stream(d)["subscribers"], 0)
            self.assertEqual(raw_write(d, GPU0, "CPX"), 0)

    def test_events_yes_and_no(self):
        with Daemon(config="[health]\nevents = yes\n") as d:
            # yes: held from the start, without a subscriber
            wait_until("the fds", lambda: kfd_fds(d) == 8)
            st = stream(d)
            self.assertEqual((st["mode"], st["subscribers"], st["fds"]), ("yes", 0, 8))
            self.assertEqual(raw_write(d, GPU1, "CPX"), errno.EBUSY)
            with Subscriber(d, subscribe=False) as s:
                d.ctl("kfd-event", GPU0, "thermal_throttle")
                s.wait(of(G0, "thermal_throttle"))
            # no, by a reload: closed, and a subscription is refused naming the setting
            d.write_config("[health]\nevents = no\n")
            d.call(ROOT, MANAGER, "Reload")
            wait_until("no fd", lambda: kfd_fds(d) == 0)
            self.assertEqual(stream(d)["mode"], "no")
            name, msg = d.call_error(ROOT, MANAGER, "SubscribeEvents")
            self.assertEqual(name, "org.amdsmi1.Error.NotSupported")
            self.assertIn("events = no", msg)
            self.assertIn("amdsmid.conf", msg)
            self.assertEqual(raw_write(d, GPU1, "CPX"), 0)
            # auto again (SIGHUP): no subscriber, no fd; a subscriber gets them
            d.write_config("[health]\nevents = auto\n")
            d.proc.send_signal(1)
            wait_until("auto", lambda: stream(d)["mode"] == "auto")
            self.assertEqual(kfd_fds(d), 0)
            with Subscriber(d) as s:
                self.assertGreater(kfd_fds(d), 0)
                d.ctl("kfd-event", GPU0, "thermal_throttle")
                s.wait(of(G0, "thermal_throttle"))

    def test_own_partition_change_pauses_the_stream(self):
        with Daemon() as d, Subscriber(d) as s:
            self.assertEqual(stream(d)["fds"], 8)
            # a dry run: a valid plan (amdsmid does not count itself), and no pause
            d.call(G1, IFACE_PARTITION, "SetComputeMode", "st", "cpx", 1)
            s.none()
            self.assertEqual(stream(d)["fds"], 8)
            # through amdsmid: the change succeeds although a subscriber holds the stream
            d.call(G1, IFACE_PARTITION, "SetComputeMode", "st", "cpx", 0)
            self.assertEqual(d.get(G1, IFACE_PARTITION, "ComputeMode").lower(), "cpx")
            paused = s.wait(lambda m: m["kind"] == "stream" and m["path"] == G1
                            and m["json"]["state"] == "paused")["json"]
            self.assertIn("SetComputeMode", paused["reason"])
            self.assertEqual((paused["gpu"], paused["bdf"]), (1, GPU1))
            resumed = s.wait(lambda m: m["kind"] == "stream" and m["path"] == G1
                             and m["json"]["state"] == "resumed")["json"]
            self.assertIn("ended", resumed["reason"])
            # the new partitions are followed
            self.assertEqual(stream(d)["fds"], 8 - 1 + 8)
            d.ctl("kfd-event", GPU1 + ".7", "vmfault")
            j = s.wait(of(G1, "vm_fault"))["json"]
            self.assertEqual(j["partition"], 7)
            # a failed change resumes too
            d.ctl("kfd-users", "add", GPU1, str(os.getpid()))
            try:
                name, msg = d.call_error(G1, IFACE_PARTITION, "SetComputeMode", "string:spx",
                                         "uint64:0")
                self.assertEqual(name, "org.amdsmi1.Error.Busy")
                # amdsmid is not among the blockers of its own change
                self.assertIn(str(os.getpid()), msg)
                self.assertNotIn(str(d.proc.pid), msg)
            finally:
                d.ctl("kfd-users", "remove", GPU1, str(os.getpid()))
            s.wait(lambda m: m["kind"] == "stream" and m["json"]["state"] == "resumed")
            self.assertEqual(stream(d)["fds"], 8 - 1 + 8)
            self.assertFalse(stream(d)["paused"])

    def test_direct_change_fails_while_amdsmid_holds_the_stream(self):
        with Daemon() as d, Subscriber(d):
            p = d.cli("partition", "set", "-g", "1", "--compute", "cpx", "--direct", "--force",
                      status=None)
            self.assertNotEqual(p.returncode, 0, p.stdout)
            # amdsmid holds /dev/kfd: a KFD user, named as such (documented in amdsmid(8))
            self.assertIn("amdsmid", p.stderr)
            self.assertIn(str(d.proc.pid), p.stderr)
            self.assertIn("KFD", p.stderr)
            self.assertEqual(d.get(G1, IFACE_PARTITION, "ComputeMode").lower(), "spx")


class Cli(unittest.TestCase):
    """amdsmi events through amdsmid: the CLI runs without the KFD shim, so what it prints can
    only have come from amdsmid's signals."""

    def start(self, d, *args):
        p = subprocess.Popen([CLI] + list(args) + ["events"], env=d.env(),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        q = queue.Queue()

        def read():
            for line in p.stdout:
                q.put(line)
            q.put(None)
        threading.Thread(target=read, daemon=True).start()
        wait_until("the CLI's subscription", lambda: stream(d)["subscribers"] == 1)
        return p, q

    def line(self, q, timeout=10):
        try:
            v = q.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError("no line in %d s" % timeout)
        if v is None:
            raise AssertionError("the CLI ended")
        return v

    def stop(self, p):
        p.send_signal(signal.SIGINT)
        err = p.stderr.read()
        self.assertEqual(p.wait(30), 0, err)
        p.stdout.close()
        p.stderr.close()
        return err

    def test_stream_across_a_partition_change(self):
        with Daemon() as d:
            p, q = self.start(d, "-g", "1", "--json")
            d.ctl("kfd-event", GPU0, "thermal_throttle")     # not selected
            d.ctl("kfd-event", GPU1, "thermal_throttle")
            j = json.loads(self.line(q))
            self.assertEqual((j["gpu"], j["bdf"], j["kind"], j["partition"]),
                             (1, GPU1, "thermal_throttle", 0))
            # a partition change through amdsmid in the middle: it succeeds
            d.call(G1, IFACE_PARTITION, "SetComputeMode", "st", "cpx", 0)
            self.assertEqual(d.get(G1, IFACE_PARTITION, "ComputeMode").lower(), "cpx")
            paused = json.loads(self.line(q))
            resumed = json.loads(self.line(q))
            self.assertEqual((paused["kind"], paused["state"]), ("stream", "paused"))
            self.assertEqual((resumed["kind"], resumed["state"]), ("stream", "resumed"))
            self.assertIn("missed", paused["text"])
            # events after it still arrive, from the new partitions
            d.ctl("kfd-event", GPU1 + ".4", "vmfault")
            j = json.loads(self.line(q))
            self.assertEqual((j["kind"], j["partition"]), ("vm_fault", 4))
            self.stop(p)
            wait_until("no subscriber", lambda: stream(d)["subscribers"] == 0)
            wait_until("no fd", lambda: kfd_fds(d) == 0)

    def test_table_kind_and_partition_filters(self):
        with Daemon() as d:
            d.call(G1, IFACE_PARTITION, "SetComputeMode", "st", "dpx", 0)
            p, q = self.start(d, "-g", "1.1", "--kind", "vm_fault")
            d.ctl("kfd-event", GPU1 + ".0", "vmfault")          # other partition
            d.ctl("kfd-event", GPU1 + ".1", "thermal_throttle")  # other kind
            d.ctl("kfd-event", GPU1 + ".1", "vmfault")
            header = self.line(q)
            for col in ("TIME", "GPU", "PARTITION", "KIND", "EVENT"):
                self.assertIn(col, header)
            row = self.line(q)
            self.assertRegex(row, r"\bvm_fault\b")
            self.assertRegex(row, r"\s1\s+1\s+vm_fault")
            time.sleep(0.5)
            self.assertTrue(q.empty())
            self.stop(p)

    def test_health_and_cper_kinds(self):
        """--kind health,cper keeps amdsmid's own kinds: a health change and a CPER record,
        each line with its GPU, kind and text like a KFD event's; a KFD event is left out."""
        with Daemon() as d:
            p, q = self.start(d, "-g", "1", "--json", "--kind", "health,cper")
            d.ctl("kfd-event", GPU1, "thermal_throttle")     # another kind
            d.ctl("cper", GPU1, "fatal")
            seen = {}
            while set(seen) != {"health", "cper"}:
                j = json.loads(self.line(q, timeout=20))
                self.assertIn(j["kind"], ("health", "cper"))
                seen[j["kind"]] = j
            for j in seen.values():
                self.assertEqual((j["gpu"], j["bdf"]), (1, GPU1))
                self.assertTrue(j["timestamp"])
            self.assertRegex(seen["health"]["text"], r"^health critical: ")
            self.assertEqual(seen["health"]["state"], "critical")
            self.assertRegex(seen["cper"]["text"], r"^CPER record \S+ \(fatal\)$")
            # amdsmi/1: each line is one of the schema's documents
            import jsonschema
            with open(os.environ["AMDSMI_SCHEMA"]) as f:
                validator = jsonschema.Draft202012Validator(json.load(f))
            for j in seen.values():
                self.assertEqual([e.message[:200] for e in validator.iter_errors(j)], [])
            self.stop(p)
            # without amdsmid's stream there are none: said, not an empty wait
            r = d.cli("--direct", "events", "--kind", "health", status=None)
            self.assertNotEqual(r.returncode, 0)
            self.assertIn("amdsmid's events", r.stderr)

    def test_refused_with_events_no(self):
        with Daemon(config="[health]\nevents = no\n") as d:
            p = d.cli("events", status=None)
            self.assertNotEqual(p.returncode, 0)
            self.assertIn("events = no", p.stderr)

    def test_direct_reads_in_process(self):
        with Daemon() as d:
            p = subprocess.Popen([CLI, "-g", "0", "--json", "--direct", "events"],
                                 env=d.env(kfd=True), stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True)
            try:
                # its own KFD stream, not amdsmid's: amdsmid has no subscriber
                kfd = os.path.realpath(os.path.join(d.dev_dir, "kfd"))
                wait_until("the CLI's KFD stream", lambda: kfd in fd_targets(p.pid))
                self.assertEqual(stream(d)["subscribers"], 0)
                d.ctl("kfd-event", GPU0, "process_start", "pid=5")
                j = json.loads(p.stdout.readline())
                self.assertEqual((j["kind"], j["data"]["pid"]), ("process_start", 5))
            finally:
                p.send_signal(signal.SIGINT)
                self.assertEqual(p.wait(30), 0)
                p.stdout.close()
                p.stderr.close()


if __name__ == "__main__":
    require_daemon()
    unittest.main(verbosity=2)
