#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""The engine of amdsmi-sim through the kernel's VFS: sysfs mechanics (spec amdgpu-sysfs.md
§0.1): permissions checked at open for root too, short writes past one page, O_TRUNC as a
no-op, reads at offsets, binary attributes read once, ENOENT, the namespace refusing changes,
the kernel's caches following tree changes, and concurrent readers and writers."""

import errno
import os
import random
import subprocess
import sys
import threading
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from simtest import GPU0, GPU1, MI300X_BDFS, NOBODY, Mount, main  # noqa: E402


class Engine(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.m = Mount("--seed", "3").__enter__()

    @classmethod
    def tearDownClass(cls):
        cls.m.__exit__(None, None, None)

    def test_unknown_paths(self):
        m = self.m
        for rel in ("nope", "bus/pci/devices/0000:99:00.0", m.gpu(GPU0, "no_such_attr"),
                    "class/kfd/kfd/topology/nodes/99/properties"):
            with self.assertRaises(OSError) as cm:
                os.stat(m.path(rel))
            self.assertEqual(cm.exception.errno, errno.ENOENT, rel)
            with self.assertRaises(OSError) as cm:
                os.open(m.path(rel), os.O_RDONLY)
            self.assertEqual(cm.exception.errno, errno.ENOENT, rel)

    def test_readonly_refuses_root(self):
        m = self.m
        for rel in (m.gpu(GPU0, "vendor"), m.gpu(GPU0, "available_compute_partition"),
                    "module/amdgpu/initstate", "class/kfd/kfd/topology/generation_id"):
            for flags in (os.O_WRONLY, os.O_RDWR, os.O_WRONLY | os.O_TRUNC):
                with self.assertRaises(OSError) as cm:
                    os.open(m.path(rel), flags)
                self.assertEqual(cm.exception.errno, errno.EACCES, rel)
        sh = subprocess.run(["sh", "-c", "echo 0x1003 > " + m.path(m.gpu(GPU0, "vendor"))],
                            capture_output=True, text=True)
        self.assertNotEqual(sh.returncode, 0)
        self.assertIn("Permission denied", sh.stderr)
        self.assertEqual(m.value(m.gpu(GPU0, "vendor")), "0x1002")

    def test_writeonly_refuses_reads(self):
        m = self.m
        for rel in ("bus/pci/drivers/amdgpu/bind", "bus/pci/drivers_probe",
                    m.gpu(GPU0, "run_cleaner_shader")):
            with self.assertRaises(OSError) as cm:
                os.open(m.path(rel), os.O_RDONLY)
            self.assertEqual(cm.exception.errno, errno.EACCES, rel)
            self.assertEqual(os.stat(m.path(rel)).st_mode & 0o7777, 0o200)

    def test_unprivileged(self):
        m = self.m
        cfg = m.path(m.gpu(GPU0, "config"))
        p = subprocess.run(NOBODY + ["cat", cfg], capture_output=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(len(p.stdout), 64)
        self.assertEqual(len(m.read(m.gpu(GPU0, "config"))), 4096)
        self.assertEqual(p.stdout, m.read(m.gpu(GPU0, "config"))[:64])
        # reads work for everyone, writes to root's 0644 files do not
        p = subprocess.run(NOBODY + ["cat", m.path(m.gpu(GPU0, "current_compute_partition"))],
                           capture_output=True, text=True)
        self.assertEqual((p.returncode, p.stdout), (0, "SPX\n"))
        p = subprocess.run(NOBODY + ["sh", "-c", "echo CPX > " +
                                     m.path(m.gpu(GPU0, "current_compute_partition"))],
                           capture_output=True, text=True)
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("Permission denied", p.stderr)
        self.assertEqual(m.value(m.gpu(GPU0, "current_compute_partition")), "SPX")

    def test_short_write_past_a_page(self):
        m = self.m
        self.assertEqual(m.write(m.gpu(GPU1, "power_dpm_force_performance_level"), "manual\n"), 0)
        for rel, data in ((m.gpu(GPU1, "pp_dpm_sclk"), b"0 1" + b" " * 6000),
                          (m.gpu(GPU1, "config"), b"\0" * 5000)):
            fd = os.open(m.path(rel), os.O_WRONLY)
            try:
                self.assertEqual(os.write(fd, data), 4096, rel)
            finally:
                os.close(fd)
        self.assertEqual(m.write(m.gpu(GPU1, "power_dpm_force_performance_level"), "auto\n"), 0)

    def test_each_write_is_one_store(self):
        m = self.m
        rel = m.gpu(GPU1, "power_dpm_force_performance_level")
        fd = os.open(m.path(rel), os.O_WRONLY)
        try:
            os.write(fd, b"manual")
            os.write(fd, b"auto")       # not "manualauto": nothing accumulates
        finally:
            os.close(fd)
        self.assertEqual(m.value(rel), "auto")
        # a shell's "echo X >" opens with O_TRUNC: a no-op
        sh = subprocess.run(["sh", "-c", "echo perf_determinism > " + m.path(rel)],
                            capture_output=True, text=True)
        self.assertEqual(sh.returncode, 0, sh.stderr)
        self.assertEqual(m.value(rel), "perf_determinism")
        fd = os.open(m.path(rel), os.O_WRONLY | os.O_TRUNC)
        os.close(fd)
        os.truncate(m.path(rel), 0)
        self.assertEqual(m.value(rel), "perf_determinism")
        self.assertEqual(m.write(rel, "auto"), 0)
        self.assertEqual(m.write(rel, "low\n"), errno.EINVAL)   # SMU 13.0.6 takes 3 levels

    def test_offsets(self):
        m = self.m
        fd = os.open(m.path(m.gpu(GPU0, "vendor")), os.O_RDONLY)
        try:
            self.assertEqual(os.pread(fd, 3, 2), b"100")
            self.assertEqual(os.pread(fd, 100, 4), b"02\n")
            self.assertEqual(os.pread(fd, 10, 7), b"")
            self.assertEqual(os.pread(fd, 10, 5000), b"")
            self.assertEqual(os.pread(fd, 4096, 0), b"0x1002\n")
        finally:
            os.close(fd)
        fd = os.open(m.path(m.gpu(GPU0, "config")), os.O_RDONLY)
        try:
            self.assertEqual(os.pread(fd, 4, 0), b"\x02\x10\xa1\x74")
            self.assertEqual(os.pread(fd, 3, 9), b"\x00\x00\x12")     # class code 0x120000
        finally:
            os.close(fd)

    def test_binary_read_once(self):
        m = self.m
        fd = os.open(m.path(m.gpu(GPU0, "gpu_metrics")), os.O_RDONLY)
        try:
            first = os.read(fd, 4096)
            self.assertEqual(os.read(fd, 4096), b"")
        finally:
            os.close(fd)
        self.assertEqual(len(first), 2208)      # v1.7 on mi300x-8
        self.assertEqual(int.from_bytes(first[:2], "little"), len(first))
        self.assertEqual(first[2:4], b"\x01\x07")
        with open(m.path(m.gpu(GPU0, "gpu_metrics")), "rb") as f:
            self.assertEqual(len(f.read()), 2208)

    def test_namespace_is_fixed(self):
        m = self.m
        d = m.path(m.gpu(GPU0))
        for fn, err in ((lambda: os.open(os.path.join(d, "new"), os.O_WRONLY | os.O_CREAT),
                         errno.EACCES),
                        (lambda: os.mkdir(os.path.join(d, "newdir")), errno.EPERM),
                        (lambda: os.unlink(os.path.join(d, "vendor")), errno.EPERM),
                        (lambda: os.rename(os.path.join(d, "vendor"), os.path.join(d, "v")),
                         errno.EPERM),
                        (lambda: os.symlink("vendor", os.path.join(d, "l")), errno.EPERM),
                        (lambda: os.chmod(os.path.join(d, "vendor"), 0o666), errno.EPERM)):
            with self.assertRaises(OSError) as cm:
                fn()
            self.assertEqual(cm.exception.errno, err)
        self.assertEqual(os.stat(os.path.join(d, "vendor")).st_mode & 0o7777, 0o444)

    def test_tools(self):
        m = self.m
        p = subprocess.run(["ls", "-l", m.path(m.gpu(GPU0)) + "/"], capture_output=True,
                           text=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("current_compute_partition", p.stdout)
        self.assertRegex(p.stdout, r"-rw-r--r-- 1 root root 4096 .* current_compute_partition")
        self.assertRegex(p.stdout, r"--w------- 1 root root 4096 .* run_cleaner_shader")
        self.assertRegex(p.stdout, r"lrwxrwxrwx 1 root root\s+\d+ .* driver -> "
                                   r"\.\./\.\./\.\./\.\./\.\./\.\./bus/pci/drivers/amdgpu")
        p = subprocess.run(["readlink", m.path("class/drm/card0")], capture_output=True,
                           text=True)
        self.assertEqual(p.stdout.strip(), "../../devices/pci0000:00/0000:00:01.1/0000:03:00.0/"
                                           "0000:04:00.0/0000:05:00.0/drm/card0")
        p = subprocess.run(["cat", m.path("class/drm/card0/device/vendor")], capture_output=True,
                           text=True)
        self.assertEqual(p.stdout, "0x1002\n")

    def test_cache_follows_changes(self):
        """The kernel caches names and attributes; a rebuilt KFD node must not read stale."""
        m = Mount("--seed", "4")
        with m:
            before = m.text("class/kfd/kfd/topology/nodes/2/properties")
            self.assertIn("location_id %d\n" % (0x05 << 8), before)
            os.stat(m.path("class/kfd/kfd/topology/nodes/9/gpu_id"))
            self.assertEqual(m.write(m.gpu(GPU0, "current_compute_partition"), "CPX\n"), 0)
            after = m.text("class/kfd/kfd/topology/nodes/2/properties")
            self.assertIn("location_id %d\n" % (0x26 << 8), after)     # GPU 1 moved down
            self.assertEqual(len(os.listdir(m.path("class/kfd/kfd/topology/nodes"))), 2 + 7 + 8)
            self.assertEqual(os.stat(m.path("class/kfd/kfd/topology/nodes")).st_nlink, 2 + 17)

    def test_concurrency(self):
        """Readers of every GPU and a writer switching partitions, all at once."""
        m = Mount("--seed", "5")
        errors = []
        stop = threading.Event()
        files = []
        with m:
            for bdf in (GPU0, GPU1):
                for f in ("gpu_metrics", "current_compute_partition", "gpu_busy_percent",
                          "uevent", "config", "available_compute_partition"):
                    files.append(m.gpu(bdf, f))
                hw = m.gpu(bdf, "hwmon")
                h = os.listdir(m.path(hw))[0]
                for f in ("power1_input", "power1_cap", "temp2_input"):
                    files.append("%s/%s/%s" % (hw, h, f))

            def reader(seed):
                rnd = random.Random(seed)
                while not stop.is_set():
                    rel = rnd.choice(files)
                    try:
                        if not m.read(rel):
                            errors.append("%s: empty" % rel)
                    except Exception as e:
                        errors.append("%s: %s" % (rel, e))

            threads = [threading.Thread(target=reader, args=(i,)) for i in range(6)]
            for t in threads:
                t.start()
            try:
                for i in range(40):
                    mode = ("CPX", "SPX", "QPX", "DPX")[i % 4]
                    for bdf in (GPU0, GPU1):
                        r = m.write(m.gpu(bdf, "current_compute_partition"), mode)
                        if r:
                            errors.append("write %s: %s" % (mode, os.strerror(r)))
                    nodes = len(os.listdir(m.path("class/kfd/kfd/topology/nodes")))
                    want = 2 + 6 + 2 * (8, 1, 4, 2)[i % 4]
                    if nodes != want:
                        errors.append("after %s: %d KFD nodes, want %d" % (mode, nodes, want))
            finally:
                stop.set()
                for t in threads:
                    t.join()
            self.assertEqual(errors, [])
            self.assertEqual(m.value(m.gpu(GPU0, "current_compute_partition")), "DPX")
            # every switch: one per node removed, one per node added, for both GPUs
            gen, prev = 9, 1
            for i in range(40):
                new = (8, 1, 4, 2)[i % 4]
                gen += 2 * (prev + new)
                prev = new
            self.assertEqual(m.generation(), gen)

    def test_storm(self):
        """More writers changing the tree than the simulator has workers, while others look up
        names in the directories being rebuilt: nothing blocks, every write is answered."""
        m = Mount("--seed", "6")
        errors, slowest = [], [0.0]
        stop = threading.Event()
        with m:
            top = m.path("class/kfd/kfd/topology/nodes")

            def writer(i):
                rnd = random.Random(i)
                while not stop.is_set():
                    t0 = time.monotonic()
                    r = m.write(m.gpu(MI300X_BDFS[i % 8], "current_compute_partition"),
                                rnd.choice(("SPX", "DPX", "QPX", "CPX")))
                    slowest[0] = max(slowest[0], time.monotonic() - t0)
                    if r:
                        errors.append(os.strerror(r))

            def looker(i):
                rnd = random.Random(100 + i)
                while not stop.is_set():
                    try:
                        name = rnd.choice(os.listdir(top))
                        with open(os.path.join(top, name, "properties")) as f:
                            f.read()
                    except OSError as e:
                        if e.errno not in (errno.ENOENT, errno.ENODEV):
                            errors.append(str(e))

            threads = [threading.Thread(target=writer, args=(i,)) for i in range(16)]
            threads += [threading.Thread(target=looker, args=(i,)) for i in range(6)]
            for t in threads:
                t.start()
            time.sleep(3)
            stop.set()
            for t in threads:
                t.join(30)
            self.assertFalse(any(t.is_alive() for t in threads), "a thread is stuck")
            self.assertEqual(errors, [])
            self.assertLess(slowest[0], 5.0)
            nodes = sum(len(m.gpu_nodes(b)) for b in MI300X_BDFS)
            self.assertEqual(len(os.listdir(top)), 2 + nodes)


if __name__ == "__main__":
    main()
