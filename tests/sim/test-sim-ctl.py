#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""The control socket (sim/ctl.h; spec amdgpu-sysfs.md §2, §6, §9 rule 8): every command end to
end through `amdsmi-sim ctl` (or the raw protocol) and the kernel's VFS (plain open, read,
write): KFD users by live PID with their class/kfd/kfd/proc entries and EBUSY, injected errnos,
delays and writes without effect, how long a partition switch takes (readers of that GPU wait,
others do not), switch errors and the state after EIO, sensors, the platform limit, a reset in
progress, hot-unplug and replug, dump, malformed requests, `run` exporting AMDSMI_SIM_CTL, the
repository's CLI under a fault, control requests under load; and xcp/xcp_metrics (§5.5)."""

import errno
import json
import os
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import simtest  # noqa: E402
from simtest import CLI, GPU0, GPU1, SIM, main, metrics_field  # noqa: E402

CCP = "current_compute_partition"
PROC = "class/kfd/kfd/proc"


class CtlMount(simtest.CtlMount):
    """simtest's CtlMount, with raw requests on the socket."""

    def raw(self, *requests):
        """Sends raw request bytes on one connection; returns everything the server sent."""
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(30)
            s.connect(self.sock)
            for r in requests:
                s.sendall(r)
            s.shutdown(socket.SHUT_WR)
            out = b""
            while True:
                chunk = s.recv(65536)
                if not chunk:
                    return out
                out += chunk

    def hwmon(self, bdf=GPU0):
        d = self.gpu(bdf, "hwmon")
        return "%s/%s" % (d, os.listdir(self.path(d))[0])

    def dump(self):
        return json.loads(self.ctl("dump").stdout)

    def timed_read(self, rel):
        t0 = time.monotonic()
        try:
            value = self.read(rel).decode(errors="replace").strip()
        except OSError as e:
            value = e.errno
        return value, time.monotonic() - t0


def sleeper():
    """A live child process (a real PID for kfd-users)."""
    p = subprocess.Popen(["sleep", "120"])
    # until it runs sleep (comm is what it execs)
    for _ in range(100):
        try:
            with open("/proc/%d/comm" % p.pid) as f:
                if f.read().strip() == "sleep":
                    break
        except OSError:
            pass
        time.sleep(0.01)
    return p


class Protocol(unittest.TestCase):
    def test_raw_requests(self):
        with CtlMount("--seed", "1") as m:
            out = m.raw(b"help\n")
            head, body = out.split(b"\n", 1)
            self.assertEqual(head, b"ok %d" % len(body))
            self.assertIn(b"kfd-users add BDF[.P] PID", body)
            # several requests on one connection, answered in order
            out = m.raw(b"reset 0000:05:00.0 begin\n", b"reset 05:00.0 end\n")
            self.assertEqual(out, b"ok 0\nok 0\n")
            cases = [
                (b"bogus\n", "EINVAL", "unknown command \"bogus\""),
                (b"\n", "EINVAL", "empty request"),
                (b"reset 0000:05:00.0\n", "EINVAL", "usage: reset BDF begin|end"),
                (b"kfd-users frob\n", "EINVAL", "usage: kfd-users add|add-raw|remove|list"),
                (b"reset zz:00 begin\n", "EINVAL", "\"zz:00\" is not a PCI address"),
                (b"reset 0000:05:00.0 later\n", "EINVAL", "expected begin or end"),
                (b"reset 0000:99:00.0 begin\n", "ENODEV", "no GPU at 0000:99:00.0"),
                (b"inject nowhere/at/all EIO\n", "ENOENT", "no such path in the tree"),
                (b"inject bus EWHAT\n", "EINVAL", "\"EWHAT\" is not an errno"),
                (b"inject bus EIO sometimes\n", "EINVAL", "expected once, always, times=N"),
                (b"inject bus EIO times=0\n", "ERANGE", "times: 0"),
                (b"inject bus EIO times=x\n", "EINVAL", "times"),
                (b"no-effect bus read\n", "EINVAL", "only writes"),
                (b"delay bus 0\n", "ERANGE", "a delay of 0 ms"),
                (b"sensor 0000:05:00.0 volts 3\n", "EINVAL", "unknown sensor \"volts\""),
                (b"sensor 0000:05:00.0 power_w 99999\n", "ERANGE", "out of range"),
                (b"sensor 0000:05:00.0 power_w -3\n", "EINVAL", "is not a number"),
                (b"platform-limit 0000:05:00.0 5000\n", "ERANGE", "out of range"),
                (b"switch-time 0000:05:00.0 9999999\n", "ERANGE", "out of range"),
                (b"kfd-users add 0000:05:00.0 0\n", "EINVAL", "0 is not a process"),
                (b"replug 0000:05:00.0\n", "EEXIST", "is plugged in"),
                (b"a b c d e f g h i j k l m n o p q\n", "E2BIG", "more than 16 words"),
            ]
            for req, name, text in cases:
                with self.subTest(request=req):
                    out = m.raw(req).decode()
                    self.assertTrue(out.startswith("error %s %d " % (name, getattr(errno, name))),
                                    out)
                    self.assertIn(text, out)
                    self.assertTrue(out.endswith("\n") and out.count("\n") == 1, out)
            # not text, or too long: an error, then the connection is closed
            out = m.raw(b"dump\x01\nhelp\n")
            self.assertEqual(out, b"error EINVAL 22 the request is not text\n")
            out = m.raw(b"x" * 4096)
            self.assertTrue(out.startswith(b"error E2BIG 7 "), out)
            # the server is still there
            self.assertEqual(m.raw(b"dump\n")[:3], b"ok ")

    def test_client(self):
        with CtlMount("--seed", "1") as m:
            p = m.ctl(check=False)
            self.assertEqual(p.returncode, 2)
            self.assertIn("a command is needed", p.stderr)
            for args in (["frob"], ["reset", GPU0], ["kfd-users"], ["dump", "x"],
                         ["inject", "a b", "EIO"]):
                self.assertEqual(m.ctl(*args, check=False).returncode, 2, args)
            p = m.ctl("reset", "0000:99:00.0", "begin", check=False)
            self.assertEqual(p.returncode, 3)
            self.assertIn("no GPU at 0000:99:00.0", p.stderr)
            self.assertIn("ENODEV", p.stderr)
            p = subprocess.run([SIM, "ctl", "--socket", m.sock + ".none", "dump"],
                               capture_output=True, text=True)
            self.assertEqual(p.returncode, 1)
            self.assertIn("cannot connect", p.stderr)
            env = dict(os.environ)
            env.pop("AMDSMI_SIM_CTL", None)
            p = subprocess.run([SIM, "ctl", "dump"], capture_output=True, text=True, env=env)
            self.assertEqual(p.returncode, 2)
            # AMDSMI_SIM_CTL, and --mount DIR (the registered mount point)
            env["AMDSMI_SIM_CTL"] = m.sock
            p = subprocess.run([SIM, "ctl", "help"], capture_output=True, text=True, env=env)
            self.assertEqual(p.returncode, 0, p.stderr)
            p = subprocess.run([SIM, "ctl", "--mount", m.root, "dump"], capture_output=True,
                               text=True, env=env)
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertEqual(json.loads(p.stdout)["machine"]["name"], "mi300x-8")
        # gone with the simulator: the socket and the registration
        for _ in range(50):
            if not os.path.exists(m.sock):
                break
            time.sleep(0.1)
        self.assertFalse(os.path.exists(m.sock))
        p = subprocess.run([SIM, "ctl", "--mount", m.root, "dump"], capture_output=True,
                           text=True)
        self.assertEqual(p.returncode, 1)

    def test_default_socket_and_foreground_line(self):
        tmp = simtest.tmpdir(self, "amdsmi-sim-test.", 0o700)   # unmounted, removed at the end
        root = os.path.join(tmp, "sys")
        os.mkdir(root)
        env = dict(os.environ, XDG_RUNTIME_DIR=tmp)
        proc = subprocess.Popen([SIM, "mount", "-f", root, "--seed", "1"], env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            line = proc.stdout.readline()
            self.assertIn("mounted at %s" % root, line)
            sock = line.rsplit("control socket ", 1)[1].strip()
            self.assertEqual(sock, os.path.join(tmp, "amdsmi-sim-%d.sock" % proc.pid))
            p = subprocess.run([SIM, "ctl", "--socket", sock, "dump"], capture_output=True,
                               text=True)
            self.assertEqual(p.returncode, 0, p.stderr)
            p = subprocess.run([SIM, "ctl", "--mount", root, "dump"], capture_output=True,
                               text=True, env=env)
            self.assertEqual(p.returncode, 0, p.stderr)
        finally:
            subprocess.run(["fusermount3", "-u", root], capture_output=True)
            self.assertEqual(proc.wait(timeout=20), 0)
            proc.stdout.close()
            proc.stderr.close()
            self.assertFalse(os.path.exists(sock))


class KfdUsers(unittest.TestCase):
    def test_live_user_blocks_switch(self):
        with CtlMount("--seed", "1") as m:
            (_, _, gpu_id), = m.gpu_nodes(GPU0)
            child = sleeper()
            try:
                m.ctl("kfd-users", "add", GPU0, child.pid, 1 << 30)
                d = "%s/%d" % (PROC, child.pid)
                self.assertEqual(sorted(os.listdir(m.path(d))),
                                 sorted(["pasid", "queues", "stats_%d" % gpu_id,
                                         "vram_%d" % gpu_id, "sdma_%d" % gpu_id,
                                         "counters_%d" % gpu_id]))
                self.assertGreaterEqual(int(m.value(d + "/pasid")), 32768)
                self.assertEqual(m.value("%s/vram_%d" % (d, gpu_id)), str(1 << 30))
                self.assertEqual(m.value("%s/sdma_%d" % (d, gpu_id)), "0")
                for f in ("stats_%d/evicted_ms", "stats_%d/cu_occupancy", "counters_%d/faults",
                          "counters_%d/page_in", "counters_%d/page_out"):
                    self.assertEqual(m.value(d + "/" + f % gpu_id), "0")
                self.assertEqual(os.listdir(m.path(d + "/queues")), [])
                self.assertEqual(os.stat(m.path(d + "/pasid")).st_mode & 0o777, 0o444)
                # the PID resolves: what a tool reads next
                for name in os.listdir(m.path(PROC)):
                    with open("/proc/%s/comm" % name) as f:
                        self.assertEqual(f.read(), "sleep\n")
                out = m.ctl("kfd-users", "list").stdout
                self.assertIn("%s %d " % (GPU0, child.pid), out)
                self.assertTrue(out.strip().endswith(" sleep"), out)
                # EBUSY on this GPU only
                self.assertEqual(m.write(m.gpu(GPU0, CCP), "CPX"), errno.EBUSY)
                self.assertEqual(m.write(m.gpu(GPU1, CCP), "CPX"), 0)
                self.assertEqual(m.value(m.gpu(GPU0, CCP)), "SPX")
                # twice, or a process that is not there: refused
                p = m.ctl("kfd-users", "add", GPU0, child.pid, check=False)
                self.assertEqual(p.returncode, 3)
                self.assertIn("EEXIST", p.stderr)
                p = m.ctl("kfd-users", "remove", GPU1, child.pid, check=False)
                self.assertEqual(p.returncode, 3)
                self.assertIn("not a KFD user of %s" % GPU1, p.stderr)
                # removed: the switch goes through
                m.ctl("kfd-users", "remove", GPU0, child.pid)
                self.assertEqual(os.listdir(m.path(PROC)), [])
                self.assertEqual(m.write(m.gpu(GPU0, CCP), "CPX"), 0)
                # in CPX the process gets one set of files per partition
                m.ctl("kfd-users", "add", GPU0, child.pid)
                ids = [n[2] for n in m.gpu_nodes(GPU0)]
                self.assertEqual(len(ids), 8)
                names = os.listdir(m.path(d))
                self.assertEqual(sorted(n for n in names if n.startswith("vram_")),
                                 sorted("vram_%d" % i for i in ids))
                self.assertEqual(m.write(m.gpu(GPU0, CCP), "SPX"), errno.EBUSY)
            finally:
                child.kill()
                child.wait()
            # the process exited: the next check drops it
            self.assertEqual(m.write(m.gpu(GPU0, CCP), "SPX"), 0)
            self.assertEqual(os.listdir(m.path(PROC)), [])
            self.assertEqual(m.ctl("kfd-users", "list").stdout, "")

    def test_exited_user_is_dropped(self):
        with CtlMount("--seed", "1") as m:
            child = sleeper()
            m.ctl("kfd-users", "add", GPU1, child.pid)
            self.assertEqual(os.listdir(m.path(PROC)), [str(child.pid)])
            child.kill()
            child.wait()
            # without any write: the simulator notices the exit by itself
            for _ in range(50):
                if not os.listdir(m.path(PROC)):
                    break
                time.sleep(0.1)
            self.assertEqual(os.listdir(m.path(PROC)), [])
            p = m.ctl("kfd-users", "add", GPU1, child.pid, check=False)
            self.assertEqual(p.returncode, 3)
            self.assertIn("no process with PID %d" % child.pid, p.stderr)

    def test_counted_users(self):
        with CtlMount("--seed", "1", "--kfd-users", GPU0 + "=2") as m:
            self.assertEqual(m.ctl("kfd-users", "list").stdout,
                             "%s - - (2 without a process)\n" % GPU0)
            self.assertEqual(m.write(m.gpu(GPU0, CCP), "CPX"), errno.EBUSY)
            self.assertEqual(m.dump()["gpus"][0]["kfd_users"]["count"], 2)


class Faults(unittest.TestCase):
    def test_inject_errno(self):
        with CtlMount("--seed", "1") as m:
            cap = m.hwmon() + "/power1_cap"
            metrics = m.gpu(GPU0, "gpu_metrics")
            # once, on read: the first read fails, the next one does not
            m.ctl("inject", metrics, "EIO", "once", "read")
            self.assertEqual(m.read_errno(metrics), errno.EIO)
            self.assertEqual(m.read_errno(metrics), 0)
            # always, on read and write (the default); the same file through class/hwmon
            link = "class/hwmon/" + cap.split("/")[-2] + "/power1_cap"
            m.ctl("inject", m.path(link), "ETIME")
            for _ in range(3):
                self.assertEqual(m.read_errno(cap), errno.ETIME)
                self.assertEqual(m.write(cap, "500000000"), errno.ETIME)
            fd = os.open(m.path(cap), os.O_RDWR)        # open is not faulted
            try:
                with self.assertRaises(OSError) as e:
                    os.read(fd, 4096)
                self.assertEqual(e.exception.errno, errno.ETIME)
                with self.assertRaises(OSError) as e:
                    os.write(fd, b"500000000")
                self.assertEqual(e.exception.errno, errno.ETIME)
            finally:
                os.close(fd)
            self.assertEqual(m.read_errno(m.hwmon(GPU1) + "/power1_cap"), 0)
            faults = m.dump()["faults"]
            self.assertEqual([(f["kind"], f["errno"], f["ops"], f["once"]) for f in faults],
                             [("errno", "ETIME", ["read", "write"], False)])
            self.assertTrue(faults[0]["path"].startswith("devices/pci"))
            self.assertGreaterEqual(faults[0]["hits"], 8)
            # a new fault takes over the operations it names
            m.ctl("inject", cap, "EBUSY", "write")
            self.assertEqual(m.read_errno(cap), errno.ETIME)
            self.assertEqual(m.write(cap, "500000000"), errno.EBUSY)
            m.ctl("clear-faults", cap)
            self.assertEqual(m.read_errno(cap), 0)
            self.assertEqual(m.write(cap, "500000000"), 0)
            self.assertEqual(m.value(cap), "500000000")
            p = m.ctl("clear-faults", cap, check=False)
            self.assertEqual(p.returncode, 3)
            # on open: files and directories
            m.ctl("inject", m.gpu(GPU0, CCP), "ENXIO", "open", "once")
            self.assertEqual(m.read_errno(m.gpu(GPU0, CCP)), errno.ENXIO)
            self.assertEqual(m.write(m.gpu(GPU0, CCP), "SPX"), 0)
            m.ctl("inject", "class/drm", "EACCES", "open")
            with self.assertRaises(OSError) as e:
                os.listdir(m.path("class/drm"))
            self.assertEqual(e.exception.errno, errno.EACCES)
            m.ctl("clear-faults")
            self.assertGreater(len(os.listdir(m.path("class/drm"))), 16)
            self.assertEqual(m.dump()["faults"], [])
            # a plain injected errno on a partition write changes nothing in the driver
            gen = m.generation()
            m.ctl("inject", m.gpu(GPU0, CCP), "EIO", "write", "once")
            self.assertEqual(m.write(m.gpu(GPU0, CCP), "CPX"), errno.EIO)
            self.assertEqual((m.value(m.gpu(GPU0, CCP)), m.generation()), ("SPX", gen))

    def test_delay(self):
        with CtlMount("--seed", "1") as m:
            vendor = m.gpu(GPU0, "vendor")
            m.ctl("delay", vendor, 400, "once")
            value, took = m.timed_read(vendor)
            self.assertEqual(value, "0x1002")
            self.assertGreaterEqual(took, 0.4)
            self.assertLess(took, 4)
            self.assertLess(m.timed_read(vendor)[1], 0.3)
            # always; other files are served meanwhile
            m.ctl("delay", m.gpu(GPU0, CCP), 3000, "write")
            done = []
            t = threading.Thread(target=lambda: done.append(m.write(m.gpu(GPU0, CCP), "CPX")))
            t0 = time.monotonic()
            t.start()
            time.sleep(0.2)
            for rel in (vendor, m.gpu(GPU0, "gpu_busy_percent"), m.gpu(GPU1, CCP)):
                self.assertLess(m.timed_read(rel)[1], 0.5, rel)
            self.assertEqual(done, [])
            t.join(10)
            self.assertEqual(done, [0])
            self.assertGreaterEqual(time.monotonic() - t0, 3)
            self.assertEqual(m.value(m.gpu(GPU0, CCP)), "CPX")

    def test_no_effect(self):
        with CtlMount("--seed", "1") as m:
            cap = m.hwmon() + "/power1_cap"
            m.ctl("no-effect", cap)
            self.assertEqual(m.write(cap, "500000000"), 0)
            self.assertEqual(m.write(cap, "garbage"), 0)
            self.assertEqual(m.value(cap), "750000000")
            self.assertEqual(m.write(m.gpu(GPU0, CCP), "CPX"), 0)    # other files work
            m.ctl("no-effect", m.gpu(GPU1, CCP), "once")
            self.assertEqual(m.write(m.gpu(GPU1, CCP), "CPX"), 0)
            self.assertEqual(m.value(m.gpu(GPU1, CCP)), "SPX")
            self.assertEqual(m.write(m.gpu(GPU1, CCP), "CPX"), 0)
            self.assertEqual(m.value(m.gpu(GPU1, CCP)), "CPX")
            m.ctl("clear-faults")
            self.assertEqual(m.write(cap, "500000000"), 0)
            self.assertEqual(m.value(cap), "500000000")


class Switch(unittest.TestCase):
    def test_switch_time(self):
        with CtlMount("--seed", "1") as m:
            m.ctl("switch-time", GPU0, 3000)
            gen = m.generation()
            results = {}

            def writer():
                t0 = time.monotonic()
                results["write"] = m.write(m.gpu(GPU0, CCP), "CPX")
                results["write_end"] = time.monotonic()
                results["write_took"] = results["write_end"] - t0

            def reader(i):
                results["read%d" % i] = m.value(m.gpu(GPU0, CCP))
                results["read_end%d" % i] = time.monotonic()

            w = threading.Thread(target=writer)
            w.start()
            time.sleep(0.3)
            # more readers than the simulator has workers: they wait without holding one
            readers = [threading.Thread(target=reader, args=(i,)) for i in range(12)]
            t_read = time.monotonic()
            for r in readers:
                r.start()
            time.sleep(0.2)
            # while it runs: that GPU's readers wait; nothing else does
            self.assertNotIn("read0", results)
            for rel in (m.gpu(GPU1, CCP), m.gpu(GPU0, "available_compute_partition"),
                        m.gpu(GPU0, "gpu_metrics"), m.hwmon() + "/power1_input"):
                self.assertLess(m.timed_read(rel)[1], 0.5, rel)
            self.assertEqual(m.gpu_nodes(GPU0), [])        # KFD went down at the start
            self.assertEqual(m.generation(), gen + 1)
            self.assertTrue(m.dump()["gpus"][0]["switching"])
            # another switch of that GPU waits too, then finds the mode set
            self.assertEqual(m.write(m.gpu(GPU0, CCP), "CPX"), 0)
            w.join(10)
            for r in readers:
                r.join(10)
            self.assertEqual(results["write"], 0)
            self.assertGreaterEqual(results["write_took"], 3)
            self.assertLess(results["write_took"], 10)
            for i in range(12):
                self.assertEqual(results["read%d" % i], "CPX")
                self.assertGreaterEqual(results["read_end%d" % i], results["write_end"] - 0.2)
                self.assertGreaterEqual(results["read_end%d" % i] - t_read, 2)
            self.assertEqual(len(m.gpu_nodes(GPU0)), 8)
            self.assertEqual(m.generation(), gen + 1 + 8)
            m.ctl("switch-time", GPU0, 0)
            t0 = time.monotonic()
            self.assertEqual(m.write(m.gpu(GPU0, CCP), "SPX"), 0)
            self.assertLess(time.monotonic() - t0, 1)

    def test_switch_error_eio(self):
        """The defined state after EIO in a switch (ctl.h): the new mode, no KFD nodes,
        available_compute_partition unchanged, until the driver is loaded again."""
        with CtlMount("--seed", "1") as m:
            avail = m.value(m.gpu(GPU0, "available_compute_partition"))
            gen = m.generation()
            m.ctl("switch-error", GPU0, "EIO")
            self.assertEqual(m.write(m.gpu(GPU0, CCP), "CPX"), errno.EIO)
            self.assertEqual(m.value(m.gpu(GPU0, CCP)), "CPX")
            self.assertEqual(m.gpu_nodes(GPU0), [])
            self.assertEqual(m.generation(), gen + 1)
            self.assertEqual(m.value(m.gpu(GPU0, "available_compute_partition")), avail)
            g = m.dump()["gpus"][0]
            self.assertEqual((g["kfd_lost"], g["compute_partition"], g["kfd_gpu_ids"]),
                             (True, "CPX", []))
            self.assertEqual(metrics_field(m.read(m.gpu(GPU0, "gpu_metrics")), 7,
                                           "num_partition"), 8)
            # later switches succeed without KFD (no EBUSY check: KFD is down)
            m.ctl("kfd-users", "add", GPU1, os.getpid())
            self.assertEqual(m.write(m.gpu(GPU0, CCP), "QPX"), 0)
            self.assertEqual(m.value(m.gpu(GPU0, CCP)), "QPX")
            self.assertEqual(m.gpu_nodes(GPU0), [])
            p = m.ctl("kfd-users", "add", GPU0, os.getpid(), check=False)
            self.assertEqual(p.returncode, 3)
            self.assertIn("has no KFD nodes", p.stderr)
            # a driver reload brings KFD back, in the mode the hardware is in
            self.assertEqual(m.write("bus/pci/drivers/amdgpu/unbind", GPU0), 0)
            self.assertEqual(m.write("bus/pci/drivers/amdgpu/bind", GPU0), 0)
            self.assertEqual(len(m.gpu_nodes(GPU0)), 4)
            # another errno refuses the switch before anything happens; always
            m.ctl("switch-error", GPU0, "ETIME", "always")
            for _ in range(2):
                self.assertEqual(m.write(m.gpu(GPU0, CCP), "SPX"), errno.ETIME)
            self.assertEqual(len(m.gpu_nodes(GPU0)), 4)
            m.ctl("switch-error", GPU0, "none")
            self.assertEqual(m.write(m.gpu(GPU0, CCP), "SPX"), 0)


class State(unittest.TestCase):
    def test_sensors(self):
        with CtlMount("--seed", "1") as m:
            h = m.hwmon()
            m.ctl("sensor", GPU0, "power_w", 432)
            m.ctl("sensor", GPU0, "temp_junction_c", 77)
            m.ctl("sensor", GPU0, "temp_mem_c", 81)
            m.ctl("sensor", GPU0, "gfx_busy_pct", 55)
            m.ctl("sensor", GPU0, "mem_busy_pct", 12)
            m.ctl("sensor", GPU0, "sclk_mhz", 1500)
            m.ctl("sensor", GPU0, "vram_used_bytes", 1 << 34)
            for _ in range(3):          # held while the telemetry lives
                self.assertEqual(m.value(h + "/power1_input"), "432000000")
                self.assertEqual(m.value(h + "/temp2_input"), "77000")
                self.assertEqual(m.value(h + "/temp3_input"), "81000")
                self.assertEqual(m.value(h + "/freq1_input"), "1500000000")
                self.assertEqual(m.value(m.gpu(GPU0, "gpu_busy_percent")), "55")
                self.assertEqual(m.value(m.gpu(GPU0, "mem_busy_percent")), "12")
                blob = m.read(m.gpu(GPU0, "gpu_metrics"))
                self.assertEqual(metrics_field(blob, 7, "curr_socket_power"), 432)
                self.assertEqual(metrics_field(blob, 7, "temperature_hotspot"), 77)
                time.sleep(0.25)
            self.assertEqual(m.value(m.gpu(GPU0, "mem_info_vram_used")), str(1 << 34))
            s = m.dump()["gpus"][0]["sensors"]
            self.assertEqual((s["power_w"], s["temp_junction_c"], s["vram_used_bytes"]),
                             (432, 77, 1 << 34))
            self.assertEqual(sorted(s["held"]), sorted(["power_w", "temp_junction_c",
                                                        "temp_mem_c", "gfx_busy_pct",
                                                        "mem_busy_pct", "sclk_mhz"]))
            m.ctl("sensor", GPU0, "power_w", "auto")
            self.assertNotIn("power_w", m.dump()["gpus"][0]["sensors"]["held"])
            p = m.ctl("sensor", GPU0, "gfx_busy_pct", 101, check=False)
            self.assertEqual(p.returncode, 3)
            self.assertIn("ERANGE", p.stderr)

    def test_platform_limit(self):
        with CtlMount("--seed", "1") as m:
            cap = m.hwmon() + "/power1_cap"
            m.ctl("platform-limit", GPU0, 400)
            self.assertEqual(m.value(cap), "400000000")
            self.assertEqual(m.dump()["gpus"][0]["power"]["platform_limit_w"], 400)
            m.ctl("platform-limit", GPU0, "none")
            self.assertEqual(m.value(cap), "750000000")

    def test_reset(self):
        with CtlMount("--seed", "1") as m:
            m.ctl("reset", GPU0, "begin")
            self.assertEqual(m.read_errno(m.gpu(GPU0, CCP)), errno.EPERM)      # DKMS
            self.assertEqual(m.write(m.gpu(GPU0, CCP), "CPX"), errno.EPERM)
            self.assertEqual(m.read_errno(m.gpu(GPU0, "current_memory_partition")), errno.EPERM)
            self.assertEqual(m.read_errno(m.gpu(GPU0, "gpu_metrics")), errno.EBUSY)
            self.assertEqual(m.read_errno(m.hwmon() + "/power1_input"), errno.EBUSY)
            self.assertEqual(m.write(m.hwmon() + "/power1_cap", "500000000"), errno.EBUSY)
            self.assertEqual(m.read_errno(m.gpu(GPU1, "gpu_metrics")), 0)
            self.assertTrue(m.dump()["gpus"][0]["in_reset"])
            m.ctl("reset", GPU0, "end")
            self.assertEqual(m.read_errno(m.gpu(GPU0, CCP)), 0)
            self.assertEqual(m.read_errno(m.gpu(GPU0, "gpu_metrics")), 0)
            self.assertEqual(m.write(m.gpu(GPU0, CCP), "CPX"), 0)

    def test_unplug_replug(self):
        with CtlMount("--seed", "1") as m:
            drm_before = sorted(os.listdir(m.path("class/drm")))
            hwmon_before = sorted(os.listdir(m.path("class/hwmon")))
            hwmon = m.hwmon().split("/")[-1]
            real = os.path.realpath(m.path(m.gpu(GPU0)))
            cards = [n for n in drm_before
                     if os.path.realpath(m.path("class/drm/%s/device" % n)) == real]
            # changed state, lost at the unplug
            self.assertEqual(m.write(m.gpu(GPU0, CCP), "CPX"), 0)
            self.assertEqual(m.write(m.hwmon() + "/power1_cap", "500000000"), 0)
            m.ctl("platform-limit", GPU0, 300)
            child = sleeper()
            try:
                m.ctl("kfd-users", "add", GPU0, child.pid)
                gen = m.generation()
                gpu1_nodes = m.gpu_nodes(GPU1)
                m.ctl("unplug", GPU0)
                self.assertFalse(os.path.exists(m.path(m.gpu(GPU0))))
                self.assertNotIn(GPU0, os.listdir(m.path("bus/pci/devices")))
                self.assertFalse(os.path.exists(real))
                self.assertNotIn(GPU0, os.listdir(m.path("bus/pci/drivers/amdgpu")))
                drm = sorted(os.listdir(m.path("class/drm")))
                self.assertEqual(len(drm), len(drm_before) - 16)      # 8 cards, 8 render nodes
                for c in cards:
                    self.assertNotIn(c, drm)
                self.assertNotIn(hwmon, os.listdir(m.path("class/hwmon")))
                self.assertEqual(m.generation(), gen + 8)             # its 8 CPX nodes went
                self.assertEqual(m.gpu_nodes(GPU0), [])
                self.assertEqual(len(m.kfd_nodes()), 2 + 7)
                self.assertEqual([n[2] for n in m.gpu_nodes(GPU1)], [n[2] for n in gpu1_nodes])
                self.assertEqual(os.listdir(m.path(PROC)), [])        # its KFD user too
                self.assertEqual(m.write("bus/pci/drivers/amdgpu/bind", GPU0), errno.ENODEV)
                p = m.ctl("reset", GPU0, "begin", check=False)
                self.assertEqual(p.returncode, 3)
                self.assertIn("ENODEV", p.stderr)
                g = m.dump()["gpus"][0]
                self.assertEqual((g["present"], g["attached"], g["driver"]), (False, False, None))
                # back as at load
                m.ctl("replug", GPU0)
                self.assertEqual(sorted(os.listdir(m.path("class/drm"))), drm_before)
                self.assertEqual(sorted(os.listdir(m.path("class/hwmon"))), hwmon_before)
                self.assertEqual(os.path.realpath(m.path(m.gpu(GPU0))), real)
                self.assertEqual(m.value(m.gpu(GPU0, "vendor")), "0x1002")
                self.assertEqual(os.path.realpath(m.path(m.gpu(GPU0, "driver"))),
                                 os.path.realpath(m.path("bus/pci/drivers/amdgpu")))
                self.assertEqual(m.value(m.gpu(GPU0, CCP)), "SPX")
                self.assertEqual(m.value(m.hwmon() + "/power1_cap"), "750000000")
                self.assertEqual(m.generation(), gen + 8 + 1)
                nodes = m.gpu_nodes(GPU0)
                self.assertEqual(len(nodes), 1)
                self.assertEqual(nodes[0][0], 2 + 8 - 1)           # appended at the end
                self.assertEqual(m.write(m.gpu(GPU0, CCP), "CPX"), 0)      # no user any more
            finally:
                child.kill()
                child.wait()

    def test_dump(self):
        with CtlMount("--seed", "1", "-m", "mi355x-8") as m:
            m.ctl("inject", m.gpu(GPU0, "vendor"), "EIO", "once")
            m.ctl("delay", m.gpu(GPU0, "device"), 20, "read")
            m.ctl("platform-limit", GPU0, 900)
            m.ctl("switch-time", GPU0, 10)
            self.assertEqual(m.write(m.gpu(GPU0, "current_memory_partition"), "NPS2"), 0)
            doc = m.dump()
            self.assertEqual(sorted(doc), ["faults", "gpus", "kfd", "kfd_processes", "machine"])
            self.assertEqual(doc["machine"]["name"], "mi355x-8")
            self.assertEqual(doc["machine"]["seed"], 1)
            self.assertIn("dkms", doc["machine"]["kernel"])
            self.assertEqual(doc["kfd"]["generation_id"], m.generation())
            self.assertEqual(doc["kfd"]["gpu_nodes"], 8)
            self.assertEqual(len(doc["gpus"]), 8)
            g = doc["gpus"][0]
            for key in ("bdf", "product", "role", "present", "driver", "attached",
                        "compute_partition", "available_compute_partitions", "memory_partition",
                        "memory_partition_requested", "switch_time_ms", "switching",
                        "switch_error", "kfd_lost", "in_reset", "kfd_gpu_ids", "power",
                        "kfd_users", "sensors"):
                self.assertIn(key, g)
            self.assertEqual((g["bdf"], g["product"], g["driver"], g["compute_partition"]),
                             (GPU0, "MI355X", "amdgpu", "SPX"))
            self.assertEqual((g["memory_partition"], g["memory_partition_requested"]),
                             ("NPS1", "NPS2"))
            self.assertEqual(doc["gpus"][1]["memory_partition_requested"], "NPS2")  # hive
            self.assertEqual(g["switch_time_ms"], 10)
            self.assertEqual(g["power"]["platform_limit_w"], 900)
            self.assertEqual(g["power"]["effective_cap_w"], 900)
            self.assertIsNotNone(g["power"]["ppt1"])
            self.assertEqual(len(g["kfd_gpu_ids"]), 1)
            self.assertEqual(g["kfd_users"], {"count": 0, "without_process": 0, "pids": []})
            self.assertEqual(sorted((f["kind"], f["ops"][0]) for f in doc["faults"]),
                             [("delay", "read"), ("errno", "read")])
            self.assertEqual(doc["kfd_processes"], [])


class XcpMetrics(unittest.TestCase):
    """xcp/xcp_metrics (spec §5.5, §1.3): newer kernels, valid partitions only, 488 bytes."""

    def files(self, m):
        out = []
        for dirpath, _, names in os.walk(m.root):
            if "xcp_metrics" in names:
                out.append(os.path.relpath(os.path.join(dirpath, "xcp_metrics"), m.root))
        return sorted(out)

    def test_partition_metrics(self):
        # v1.0: mi355x-8 with the kernel of gpu_metrics v1.8 (the preset serves v1.9 and
        # xcp_metrics v1.1: test-sim-metrics-v19.py)
        desc = json.loads(subprocess.run([SIM, "dump-machine", "mi355x-8"], check=True,
                                         capture_output=True, text=True).stdout)
        desc["kernel"]["gpu_metrics_revision"] = 8
        for g in desc["gpus"]:
            g.pop("gpu_metrics_revision", None)
            g.pop("gpu_metrics_layout", None)
        fd, machine = tempfile.mkstemp(suffix=".json")
        self.addCleanup(os.unlink, machine)
        with os.fdopen(fd, "w") as f:
            json.dump(desc, f)
        with CtlMount("--frozen", "-m", machine) as m:
            files = self.files(m)
            self.assertEqual(len(files), 8)                    # SPX: partition 0 of each GPU
            pm = m.gpu(GPU0, "xcp/xcp_metrics")
            self.assertEqual(os.stat(m.path(pm)).st_mode & 0o777, 0o444)
            blob, gm = m.read(pm), m.read(m.gpu(GPU0, "gpu_metrics"))
            self.assertEqual(struct.unpack_from("<HBB", blob), (488, 1, 0))
            self.assertEqual(len(blob), 488)
            # the GPU's clocks and its xcp_stats[0] (v1.8: current_gfxclk @296, xcp_stats @344)
            self.assertEqual(struct.unpack_from("<8H", blob, 4), struct.unpack_from("<8H", gm, 296))
            self.assertEqual(struct.unpack_from("<8I", blob, 48),
                             struct.unpack_from("<8I", gm, 344))
            self.assertEqual(struct.unpack_from("<8Q", blob, 168),
                             struct.unpack_from("<8Q", gm, 344 + 120))
            self.assertEqual(m.write(m.gpu(GPU0, CCP), "CPX"), 0)
            self.assertEqual(len(self.files(m)), 8 + 7)
            xcp_dirs = sorted({os.path.realpath(m.path("class/drm/renderD%d/device" % (128 + p)))
                               for p in range(1, 8)})
            for p, d in enumerate([os.path.realpath(m.path(m.gpu(GPU0)))] + xcp_dirs):
                blob = m.read(os.path.relpath(d, m.root) + "/xcp/xcp_metrics")
                clk = struct.unpack_from("<8H", blob, 4)
                self.assertNotEqual(clk[0], 0xffff)
                self.assertEqual(clk[1:], (0xffff,) * 7)       # one XCC per partition
                gm = m.read(m.gpu(GPU0, "gpu_metrics"))
                self.assertEqual(struct.unpack_from("<Q", blob, 168),
                                 struct.unpack_from("<Q", gm, 344 + 440 * p + 120))
            self.assertEqual(m.write(m.gpu(GPU0, CCP), "DPX"), 0)
            self.assertEqual(len(self.files(m)), 8 + 1)
            # a failed switch leaves what is visible as it was
            m.ctl("switch-error", GPU0, "EIO")
            self.assertEqual(m.write(m.gpu(GPU0, CCP), "CPX"), errno.EIO)
            self.assertEqual(len(self.files(m)), 8 + 1)
            other = "0000:15:00.0"                             # MI350 boards' second GPU
            m.ctl("reset", other, "begin")
            self.assertEqual(m.read_errno(m.gpu(other, "xcp/xcp_metrics")), errno.EBUSY)
            m.ctl("unplug", other)
            self.assertEqual(len(self.files(m)), 7 + 1)
        with CtlMount("--seed", "1") as m:                     # an older kernel: none
            self.assertEqual(self.files(m), [])


class Run(unittest.TestCase):
    def test_run_exports_ctl(self):
        script = """
            set -e
            test -S "$AMDSMI_SIM_CTL"
            sleep 60 & pid=$!
            while [ "$(cat /proc/$pid/comm)" != sleep ]; do sleep 0.01; done
            {sim} ctl kfd-users add 0000:05:00.0 $pid
            # the PID of this namespace names the entry, and resolves here
            test -d /sys/class/kfd/kfd/proc/$pid
            ls /sys/class/kfd/kfd/proc
            cat /proc/$pid/comm
            if echo CPX > /sys/bus/pci/devices/0000:05:00.0/current_compute_partition; then
                exit 10
            fi
            kill $pid
            wait $pid || true
            echo CPX > /sys/bus/pci/devices/0000:05:00.0/current_compute_partition
            {sim} ctl inject /sys/bus/pci/devices/0000:05:00.0/vendor EIO once
            if cat /sys/bus/pci/devices/0000:05:00.0/vendor; then exit 11; fi
            cat /sys/bus/pci/devices/0000:05:00.0/vendor
        """.format(sim=SIM)
        p = subprocess.run([SIM, "run", "--", "sh", "-c", script], capture_output=True,
                           text=True, timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        lines = p.stdout.split()
        self.assertEqual(lines[1:], ["sleep", "0x1002"])
        self.assertLess(int(lines[0]), 100)         # a PID of CMD's namespace
        self.assertIn("Input/output error", p.stderr)


class Cli(unittest.TestCase):
    def test_cli_under_fault(self):
        """The library-facing check: EIO on power1_cap reads shows as cap_w null and an errors
        entry with errno EIO, for that GPU only; the other files and GPUs are read."""
        with CtlMount("--seed", "1") as m:
            m.ctl("inject", m.hwmon() + "/power1_cap", "EIO", "read")
            env = dict(os.environ, AMDSMI_SYSFS_ROOT=m.root)
            p = subprocess.run([CLI, "metric", "--json"], capture_output=True, text=True,
                               env=env, timeout=60)
            self.assertEqual(p.returncode, 0, p.stderr)
            doc = json.loads(p.stdout)
            power = doc["gpus"][0]["power"]
            self.assertIsNone(power["cap_w"])
            self.assertEqual((power["cap_max_w"], power["cap_default_w"]), (750, 750))
            self.assertEqual(doc["gpus"][1]["power"]["cap_w"], 750)
            errs = [e for e in doc["errors"] if e["field"] == "power.cap_w"]
            self.assertEqual([(e["gpu"], e["errno"]) for e in errs], [(0, "EIO")])
            # a reset in progress: the list verb still sees every GPU
            m.ctl("clear-faults")
            m.ctl("reset", GPU1, "begin")
            p = subprocess.run([CLI, "list", "--json"], capture_output=True, text=True,
                               env=env, timeout=60)
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertEqual(len(json.loads(p.stdout)["gpus"]), 8)


class Threads(unittest.TestCase):
    def test_storm_with_controls(self):
        """Control requests while workers read and switch partitions: nothing blocks."""
        with CtlMount("--seed", "6") as m:
            stop = threading.Event()
            errors = []
            m.ctl("switch-time", GPU1, 50)

            def writer(bdf):
                modes = ("SPX", "DPX", "QPX", "CPX")
                i = 0
                while not stop.is_set():
                    r = m.write(m.gpu(bdf, CCP), modes[i % 4])
                    if r not in (0, errno.EBUSY, errno.EIO):
                        errors.append("write %s: %s" % (bdf, os.strerror(r)))
                    i += 1

            def reader():
                while not stop.is_set():
                    for rel in (m.gpu(GPU0, CCP), m.gpu(GPU1, CCP), m.gpu(GPU1, "gpu_metrics")):
                        try:
                            m.read(rel)
                        except OSError as e:
                            if e.errno not in (errno.EIO, errno.ENODEV, errno.ENOENT):
                                errors.append("%s: %s" % (rel, e))

            def controller():
                child = sleeper()
                try:
                    n = 0
                    while not stop.is_set():
                        for args in (("dump",), ("sensor", GPU0, "power_w", 300 + n % 50),
                                     ("inject", m.gpu(GPU0, CCP), "EIO", "once", "read"),
                                     ("kfd-users", "add", GPU0, child.pid),
                                     ("kfd-users", "remove", GPU0, child.pid),
                                     ("clear-faults",)):
                            p = m.ctl(*args, check=False)
                            if p.returncode not in (0, 3):
                                errors.append("ctl %s: %s" % (args, p.stderr))
                        n += 1
                finally:
                    child.kill()
                    child.wait()

            threads = [threading.Thread(target=writer, args=(b,)) for b in (GPU0, GPU1)]
            threads += [threading.Thread(target=reader) for _ in range(4)]
            threads += [threading.Thread(target=controller) for _ in range(2)]
            for t in threads:
                t.start()
            time.sleep(4)
            stop.set()
            for t in threads:
                t.join(30)
            self.assertFalse(any(t.is_alive() for t in threads), "a thread is stuck")
            self.assertEqual(errors, [])
            self.assertEqual(m.raw(b"dump\n")[:3], b"ok ")


if __name__ == "__main__":
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    main()
