#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""amdsmid's udev monitor: GPUs that go and come back on a uevent, with the periodic check
too slow to see them. amdsmid runs as on a real host: `amdsmi-sim run` mounts the simulated
tree over /sys in a private mount namespace (so no AMDSMI_SYSFS_ROOT, and the monitor is on),
`unshare -n` gives it a network namespace of its own, and the test plays udevd there: it
multicasts uevents on the udev group of NETLINK_KOBJECT_UEVENT, as root (libudev accepts
only root's). Nothing leaves the namespace; the host's /run is not touched (a tmpfs holds the
/run/udev/control that tells libudev a udevd runs)."""

import os
import subprocess
import time
import unittest

from daemontest import (GPU0, GPU1, IFACE_GPU, SIM, Daemon, gpu_path, require_daemon, tmpdir,
                        wait_until)

NETLINK_KOBJECT_UEVENT = 15
UDEV_GROUP = 2          # libudev's MONITOR_GROUP_UDEV (1 is the kernel's)
SLOW_POLL = "[daemon]\npoll_interval_ms = 600000\n"

SENDER = """
import socket, sys
action, devpath, subsystem = sys.argv[1:4]
fields = ["ACTION=" + action, "DEVPATH=" + devpath, "SUBSYSTEM=" + subsystem, "SEQNUM=1"]
msg = "\\0".join([action + "@" + devpath] + fields + [""]).encode()
s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_KOBJECT_UEVENT)
s.bind((0, 0))
s.sendto(msg, (0, UDEV_GROUP))
""".replace("NETLINK_KOBJECT_UEVENT", str(NETLINK_KOBJECT_UEVENT)).replace("UDEV_GROUP",
                                                                          str(UDEV_GROUP))


class Udev(unittest.TestCase):
    def setUp(self):
        self.tmp = tmpdir(self, "amdsmid-udev.", 0o700)
        self.sock = os.path.join(self.tmp, "ctl.sock")
        self.dev = os.path.join(self.tmp, "dev")  # no device node: AMDSMI_DEV_ROOT
        os.mkdir(self.dev)

    def daemon(self):
        # the mount namespace of `run`: a tmpfs over /run for libudev's /run/udev/control,
        # then amdsmid with the default sysfs root
        script = ("mount -t tmpfs tmpfs /run && mkdir /run/udev && touch /run/udev/control && "
                  "exec env -u AMDSMI_SYSFS_ROOT \"$0\"")
        wrapper = ["unshare", "-n", SIM, "run", "-m", "mi300x-8", "--ctl", self.sock, "--",
                   "/bin/sh", "-c", script]
        return Daemon(config=SLOW_POLL, polkit=False, wrapper=wrapper,
                      env={"AMDSMI_DEV_ROOT": self.dev})

    def ctl(self, *args):
        p = subprocess.run([SIM, "ctl", "--socket", self.sock] + [str(a) for a in args],
                           capture_output=True, text=True, timeout=30)
        self.assertEqual(p.returncode, 0, p.stderr)

    def uevent(self, d, action, bdf, subsystem="pci"):
        """Multicasts a uevent in amdsmid's network namespace (that of `unshare -n`)."""
        devpath = "/devices/pci0000:00/%s" % bdf
        p = subprocess.run(["nsenter", "--net=/proc/%d/ns/net" % d.proc.pid, "/usr/bin/python3",
                            "-c", SENDER, action, devpath, subsystem],
                           capture_output=True, text=True, timeout=30)
        self.assertEqual(p.returncode, 0, p.stderr)

    def present(self, d, bdf):
        return d.busctl("get-property", "org.amdsmi1", gpu_path(bdf), IFACE_GPU, "Bdf",
                        check=False).returncode == 0

    def test_unplug_and_replug_on_uevents(self):
        with self.daemon() as d:
            self.assertTrue(self.present(d, GPU1))
            self.assertNotIn("no udev monitor", d.log())
            # the GPU goes without a uevent: with a 10 min periodic check nobody notices
            self.ctl("unplug", GPU1)
            time.sleep(1.5)
            self.assertTrue(self.present(d, GPU1), "noticed without a uevent")
            # the uevent of the removal: its object goes
            self.uevent(d, "remove", GPU1)
            wait_until("InterfacesRemoved", lambda: not self.present(d, GPU1))
            self.assertTrue(self.present(d, GPU0))
            # back, but the only uevent is of a subsystem amdsmid does not watch
            self.ctl("replug", GPU1)
            self.uevent(d, "add", "0000:00:1f.2/ata1/host0/target0:0:0/0:0:0:0/block/sda",
                        "block")
            time.sleep(1.5)
            self.assertFalse(self.present(d, GPU1), "a block uevent made amdsmid look")
            # its own uevent: the object is back, with the same index
            self.uevent(d, "add", GPU1)
            wait_until("InterfacesAdded", lambda: self.present(d, GPU1))
            self.assertEqual(d.get(gpu_path(GPU1), IFACE_GPU, "Index"), 1)


if __name__ == "__main__":
    require_daemon()
    if not os.path.exists("/proc/self/ns/net") or os.geteuid() != 0:
        raise SystemExit("FAIL: needs root and network namespaces")
    unittest.main(verbosity=2)
