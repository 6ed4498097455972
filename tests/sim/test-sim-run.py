#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""`amdsmi-sim run -- CMD`: CMD sees the simulated tree at /sys in private mount and PID
namespaces, its exit status comes back, signals reach it, and nothing is left mounted."""

import json
import os
import signal
import subprocess
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from simtest import CLI, NOBODY, SIM, main  # noqa: E402


def run(*cmd, machine=None, timeout=60):
    args = [SIM] + (["-m", machine] if machine else []) + ["run", "--"] + list(cmd)
    return subprocess.run(args, capture_output=True, text=True, timeout=timeout)


def host_sys_mounts():
    with open("/proc/self/mountinfo") as f:
        return [ln for ln in f if " /sys " in ln]


class Run(unittest.TestCase):
    def setUp(self):
        self.mounts = host_sys_mounts()

    def tearDown(self):
        self.assertEqual(host_sys_mounts(), self.mounts, "the host's /sys changed")

    def test_initstate(self):
        p = run("cat", "/sys/module/amdgpu/initstate")
        self.assertEqual((p.returncode, p.stdout, p.stderr), (0, "live\n", ""))

    def test_exit_status(self):
        self.assertEqual(run("sh", "-c", "exit 7").returncode, 7)
        self.assertEqual(run("false").returncode, 1)
        self.assertEqual(run("sh", "-c", "kill -TERM $$").returncode, 128 + signal.SIGTERM)
        p = run("/nonexistent/cmd")
        self.assertEqual(p.returncode, 127)
        self.assertIn("/nonexistent/cmd", p.stderr)

    def test_namespaces(self):
        p = run("sh", "-c", "echo $$; awk '$5 == \"/sys\" "
                            "{for (i = 7; i < NF; i++) if ($i == \"-\") t = $(i + 1)}"
                            " END {print t}' /proc/self/mountinfo")
        self.assertEqual(p.returncode, 0, p.stderr)
        pid, fstype = p.stdout.split()
        self.assertEqual(pid, "2")      # PID 1 is the simulator's init for CMD
        self.assertEqual(fstype, "fuse.amdsmi-sim")     # the top mount on /sys
        p = run("sh", "-c", "ls /sys/bus/pci/drivers/amdgpu | grep -c 0000:")
        self.assertEqual(p.stdout, "8\n")

    def test_unprivileged_reader(self):
        p = run(*NOBODY, "cat", "/sys/bus/pci/devices/0000:05:00.0/current_compute_partition")
        self.assertEqual((p.returncode, p.stdout), (0, "SPX\n"), p.stderr)

    def test_writes_inside(self):
        p = run("sh", "-c", "echo CPX > /sys/bus/pci/devices/0000:05:00.0/current_compute_partition"
                            " && ls /sys/class/kfd/kfd/topology/nodes | wc -l", machine="mi300x-8")
        self.assertEqual((p.returncode, p.stdout.strip()), (0, "17"), p.stderr)

    def test_cli_hard_coded_sys(self):
        env = dict(os.environ)
        env.pop("AMDSMI_SYSFS_ROOT", None)
        p = subprocess.run([SIM, "-m", "mi355x-8", "run", "--", CLI, "list", "--json"],
                           capture_output=True, text=True, env=env, timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        doc = json.loads(p.stdout)
        self.assertEqual([g["product"] for g in doc["gpus"]], ["MI355X"] * 8)

    def test_signal_forwarded(self):
        proc = subprocess.Popen([SIM, "run", "--", "sleep", "30"], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE)
        time.sleep(1)
        proc.send_signal(signal.SIGTERM)
        self.assertEqual(proc.wait(timeout=20), 128 + signal.SIGTERM)
        proc.stdout.close()
        proc.stderr.close()


if __name__ == "__main__":
    main()
