#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""amdsmi-libvirt-hook run exactly as libvirt runs it (argv DOMAIN OPERATION SUB-OPERATION
EXTRA, the domain XML on stdin, libvirt's bare environment) against amdsmid and the
simulator on a private bus: prepare reserves and binds, the VM cap joins the minimum rule,
release restores everything; a held VF is refused naming its holder; amdsmid absent or hung
fails a start closed within the deadline and never fails a stop; hostile XML is refused
safely; a domain without AMD devices is left alone; reconnect, migrate and restore."""

import json
import os
import signal
import subprocess
import time
import unittest

from daemontest import (GPU0, GPU1, MANAGER, ROOT, SIM, Daemon, gpu_path, require_daemon,
                        vf_bdf)

HOOK = os.environ.get("AMDSMI_HOOK", "")
W = 1000000
UUID1 = "c7a5fdbd-cdaf-9455-926a-d65c16db1809"
UUID2 = "6695eb01-f6a4-8304-79aa-97f2502e193f"
NS = "urn:amdsmi:libvirt:1"
FAST = "[libvirt]\nhook_timeout_s = 2\n"


def hostdev(bdf, managed="yes"):
    dom, bus, rest = bdf.split(":")
    slot, fn = rest.split(".")
    return ("<hostdev mode='subsystem' type='pci' managed='%s'><driver name='vfio'/>"
            "<source><address domain='0x%s' bus='0x%s' slot='0x%s' function='0x%s'/>"
            "</source></hostdev>" % (managed, dom, bus, slot, fn))


def domain(name, uuid, hostdevs=(), metadata=""):
    return ("<domain type='kvm'><name>%s</name><uuid>%s</uuid>"
            "<metadata>%s</metadata><memory unit='GiB'>8</memory>"
            "<os><type arch='x86_64' machine='q35'>hvm</type></os>"
            "<devices><emulator>/usr/bin/qemu-system-x86_64</emulator>%s</devices></domain>"
            % (name, uuid, metadata, "".join(hostdevs)))


def gpu_meta(watts=None, vfs=None, ns=NS):
    attrs = " power-cap-watts='%d'" % watts if watts else ""
    inner = "".join("<a:vf address='%s' power-cap-watts='%d'/>" % (b, w)
                    for b, w in (vfs or {}).items())
    return "<a:gpu xmlns:a='%s'%s>%s</a:gpu>" % (ns, attrs, inner)


class Hook(unittest.TestCase):
    def hook(self, d, name, op, sub, xml, extra="-", timeout=60, env_extra=None,
             no_journal=False):
        """The hook as libvirt runs it: its environment (virCommandAddEnvPassCommon) plus the
        test's bus, simulated sysfs and configuration directory. no_journal: its log goes to
        stderr also on a host with a journal (an empty /run/systemd/journal in a private
        mount namespace), so that the test sees it."""
        env = {"LC_ALL": "C", "PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "HOME": "/root",
               "USER": "root", "LOGNAME": "root",
               "DBUS_SYSTEM_BUS_ADDRESS": d.address, "AMDSMI_SYSFS_ROOT": d.mount.root,
               "CONFIGURATION_DIRECTORY": d.config_dir}
        env.update(env_extra or {})
        cmd = [HOOK, name, op, sub, extra]
        if no_journal and os.path.exists("/run/systemd/journal"):
            cmd = ["unshare", "--mount", "--propagation", "private", "sh", "-c",
                   'mount -t tmpfs tmpfs /run/systemd/journal && exec "$@"', "sh"] + cmd
        start = time.monotonic()
        p = subprocess.run(cmd, input=xml.encode() if isinstance(xml, str) else xml,
                           env=env, capture_output=True, timeout=timeout)
        p.elapsed = time.monotonic() - start
        p.out = p.stdout.decode(errors="replace")
        p.err = p.stderr.decode(errors="replace")
        return p

    def vms(self, d):
        return json.loads(d.call(ROOT, MANAGER, "ListVms")[0])["vms"]

    def test_start_and_stop(self):
        with Daemon(machine="mi300x-sriov", config=FAST) as d:
            vfs = d.with_vfs(GPU0, 2)
            d.cli("power", "set", "-g", 0, "--host", "600W")
            xml = domain("web1", UUID1, [hostdev(vfs[0], "no"), hostdev(vfs[1], "yes")],
                         gpu_meta(450))
            p = self.hook(d, "web1", "prepare", "begin", xml)
            self.assertEqual((p.returncode, p.out), (0, ""), p.err)
            # reserved, the managed='no' VF bound (libvirt binds the other), 450 W binds
            (v,) = self.vms(d)
            self.assertEqual((v["name"], v["uuid"], [f["bdf"] for f in v["vfs"]]),
                             ("web1", UUID1, vfs))
            self.assertEqual([d.driver(b) for b in vfs], ["vfio-pci", None])
            self.assertEqual(d.device_cap(GPU0), 450 * W)
            p = d.cli("power", "-g", 0)
            self.assertIn("web1", p.stdout)
            # the rest of libvirt's calls for a start: nothing to do
            for op, sub in (("start", "begin"), ("started", "begin")):
                p = self.hook(d, "web1", op, sub, xml)
                self.assertEqual((p.returncode, p.out), (0, ""))
            # stop: release end undoes it all; stopped end after it finds nothing
            p = self.hook(d, "web1", "release", "end", xml, extra="shutdown")
            self.assertEqual(p.returncode, 0, p.err)
            self.assertEqual(self.vms(d), [])
            self.assertEqual([d.driver(b) for b in vfs], [None, None])
            self.assertEqual(d.device_cap(GPU0), 600 * W)
            p = self.hook(d, "web1", "stopped", "end", xml)
            self.assertEqual(p.returncode, 0, p.err)
            # the history says what the hook did
            changes = [e["change"] for e in d.history() if e["change"].startswith("vm_")]
            self.assertEqual(changes, ["vm_prepare", "vm_release"])

    def test_log_lines(self):
        """One line per operation saying what was done; amdsmid's reply only with
        AMDSMI_DEBUG (any value but "" and "0"), then whole, at debug level."""
        with Daemon(machine="mi300x-sriov", config=FAST) as d:
            vfs = d.with_vfs(GPU0, 2)
            d.cli("power", "set", "-g", 0, "--host", "600W")
            xml = domain("web1", UUID1, [hostdev(vfs[0], "no"), hostdev(vfs[1], "yes")],
                         gpu_meta(450))
            lines = {
                "prepare": "domain web1: provisioned %s (vfio-pci), %s (libvirt binds it), "
                           "cap 450 W on GPU %s" % (vfs[0], vfs[1], GPU0),
                "reconnect": "domain web1: reconnected %s (vfio-pci), %s (no driver), "
                             "cap 450 W on GPU %s" % (vfs[0], vfs[1], GPU0),
                "release": "domain web1: released %s (unbound from vfio-pci), %s, cap 450 W "
                           "on GPU %s removed (effective now 600 W: host)"
                           % (vfs[0], vfs[1], GPU0),
                "stopped": "domain web1: nothing to release (amdsmid holds no reservation "
                           "of it)",
            }
            for op, sub in (("prepare", "begin"), ("reconnect", "begin"), ("release", "end"),
                            ("stopped", "end")):
                for debug in (None, "0", ""):
                    with self.subTest(op=op, AMDSMI_DEBUG=debug):
                        if op == "release" and debug is not None:
                            continue  # once released, there is nothing left to release
                        env = {"AMDSMI_DEBUG": debug} if debug is not None else {}
                        p = self.hook(d, "web1", op, sub, xml, env_extra=env, no_journal=True)
                        self.assertEqual((p.returncode, p.out), (0, ""), p.err)
                        # exactly the line: no JSON, nothing else
                        self.assertEqual(p.err.splitlines(),
                                         ["amdsmi-libvirt-hook: " + lines[op]])

            # with AMDSMI_DEBUG: the same line, and the whole reply after it
            for op, sub, method in (("prepare", "begin", "PrepareVm"),
                                    ("reconnect", "begin", "PrepareVm"),
                                    ("release", "end", "ReleaseVm")):
                with self.subTest(op=op, AMDSMI_DEBUG="1"):
                    p = self.hook(d, "web1", op, sub, xml, env_extra={"AMDSMI_DEBUG": "1"},
                                  no_journal=True)
                    self.assertEqual(p.returncode, 0, p.err)
                    err = p.err.splitlines()
                    self.assertIn("amdsmi-libvirt-hook: " + lines[op], err)
                    head = "amdsmi-libvirt-hook: domain web1: amdsmid's reply to %s: " % method
                    replies = [json.loads(x[len(head):]) for x in err if x.startswith(head)]
                    self.assertEqual(len(replies), 1, p.err)
                    self.assertEqual(replies[0]["operation"], op)
                    self.assertEqual([f["bdf"] for f in replies[0].get("vm", replies[0])["vfs"]],
                                     vfs)
                    # after the line, and longer than the old 2 KiB cut
                    first = next(i for i, x in enumerate(err) if x.startswith(head))
                    self.assertLess(err.index("amdsmi-libvirt-hook: " + lines[op]), first)
                    if op != "reconnect":
                        self.assertGreater(len(json.dumps(replies[0])), 2048)

            # a cap that does not bind says what does; a VF's own cap
            d.cli("power", "set", "-g", 0, "--host", "300W")
            xml = domain("db2", UUID2, [hostdev(vfs[1])], gpu_meta(vfs={vfs[1]: 400}))
            p = self.hook(d, "db2", "prepare", "begin", xml, no_journal=True)
            self.assertEqual(p.err.splitlines(),
                             ["amdsmi-libvirt-hook: domain db2: provisioned %s (libvirt binds "
                              "it), cap 400 W on GPU %s (effective 300 W: host)"
                              % (vfs[1], GPU0)], p.err)
            p = self.hook(d, "db2", "release", "end", xml, no_journal=True)
            self.assertEqual(p.err.splitlines(),
                             ["amdsmi-libvirt-hook: domain db2: released %s, cap 400 W on GPU "
                              "%s removed (effective now 300 W: host)" % (vfs[1], GPU0)])
            # no cap: the VFs alone
            xml = domain("db2", UUID2, [hostdev(vfs[1])])
            p = self.hook(d, "db2", "prepare", "begin", xml, no_journal=True)
            self.assertEqual(p.err.splitlines(),
                             ["amdsmi-libvirt-hook: domain db2: provisioned %s (libvirt binds "
                              "it)" % vfs[1]])
            p = self.hook(d, "db2", "release", "end", xml, no_journal=True)
            self.assertEqual(p.err.splitlines(),
                             ["amdsmi-libvirt-hook: domain db2: released %s" % vfs[1]])

    def test_held_vf_refused(self):
        with Daemon(machine="mi300x-sriov", config=FAST) as d:
            vfs = d.with_vfs(GPU0, 2)
            self.assertEqual(self.hook(d, "web1", "prepare", "begin",
                                       domain("web1", UUID1, [hostdev(vfs[0])])).returncode, 0)
            p = self.hook(d, "db2", "prepare", "begin",
                          domain("db2", UUID2, [hostdev(vfs[1]), hostdev(vfs[0], "no")]))
            self.assertEqual(p.returncode, 1)
            lines = p.err.strip().splitlines()
            self.assertEqual(len(lines), 1, p.err)
            self.assertIn("domain db2: cannot provision its GPU VFs: VF %s is held by domain "
                          "web1 (%s)" % (vfs[0], UUID1), lines[0])
            # nothing of db2 is left: not reserved, nothing bound
            self.assertEqual([v["name"] for v in self.vms(d)], ["web1"])
            self.assertEqual(d.driver(vfs[1]), None)

    def test_amdsmid_absent_or_hung(self):
        with Daemon(machine="mi300x-sriov", config=FAST) as d:
            vfs = d.with_vfs(GPU0, 1)
            xml = domain("web1", UUID1, [hostdev(vfs[0])])
            # hung: the deadline (2 s) fails the start closed; a stop still succeeds
            os.kill(d.proc.pid, signal.SIGSTOP)
            try:
                p = self.hook(d, "web1", "prepare", "begin", xml)
                self.assertEqual(p.returncode, 1)
                self.assertIn("amdsmid did not answer in time", p.err)
                self.assertGreaterEqual(p.elapsed, 1.5)
                self.assertLess(p.elapsed, 10)
                p = self.hook(d, "web1", "release", "end", xml)
                self.assertEqual(p.returncode, 0)
                p = self.hook(d, "web1", "reconnect", "begin", xml)
                self.assertEqual(p.returncode, 0)
            finally:
                os.kill(d.proc.pid, signal.SIGCONT)
            # gone: at once
            d.stop()
            p = self.hook(d, "web1", "prepare", "begin", xml)
            self.assertEqual(p.returncode, 1)
            self.assertIn("amdsmid is not running", p.err)
            self.assertLess(p.elapsed, 5)
            for op, sub in (("release", "end"), ("stopped", "end"), ("reconnect", "begin")):
                self.assertEqual(self.hook(d, "web1", op, sub, xml).returncode, 0)
            # a domain without AMD devices never waits for amdsmid
            other = domain("plain", UUID2, [hostdev("0000:00:01.1")])
            p = self.hook(d, "plain", "prepare", "begin", other)
            self.assertEqual((p.returncode, p.err), (0, ""))
            p = self.hook(d, "plain", "prepare", "begin", domain("bare", UUID2))
            self.assertEqual((p.returncode, p.err), (0, ""))

    def test_prepare_after_the_deadline_is_undone(self):
        """The hook's deadline passes while amdsmid still prepares (a slow power1_cap write):
        the start fails, and what amdsmid then completes for a caller that left is undone."""
        with Daemon(machine="mi300x-sriov", config=FAST) as d:
            vfs = d.with_vfs(GPU0, 1)
            d.cli("power", "set", "-g", "0", "--host", "600W")
            hw = d.mount.path("bus/pci/devices/%s/hwmon" % GPU0)
            cap = "bus/pci/devices/%s/hwmon/%s/power1_cap" % (GPU0, os.listdir(hw)[0])
            subprocess.run([SIM, "ctl", "--mount", d.mount.root, "delay", cap, "4000", "once",
                            "write"], check=True, capture_output=True, timeout=60)
            xml = domain("web1", UUID1, [hostdev(vfs[0])], gpu_meta(450))
            p = self.hook(d, "web1", "prepare", "begin", xml)
            self.assertEqual(p.returncode, 1)
            self.assertIn("amdsmid did not answer in time", p.err)
            # the prepare completes in amdsmid after the hook left; then it is released
            deadline = time.monotonic() + 30
            while "ReleaseVm" not in d.log() and time.monotonic() < deadline:
                time.sleep(0.2)
            self.assertIn("was prepared after its caller gave up", d.log())
            while self.vms(d) and time.monotonic() < deadline:
                time.sleep(0.2)
            self.assertEqual(self.vms(d), [])
            self.assertEqual(d.device_cap(GPU0), 600 * W)
            self.assertEqual([(e["change"], e["result"]) for e in d.history()
                              if e["change"].startswith("vm_")],
                             [("vm_prepare", "ok"), ("vm_release", "ok")])

    def test_hostile_xml(self):
        with Daemon(machine="mi300x-sriov", config=FAST) as d:
            vfs = d.with_vfs(GPU0, 1)
            bomb = ("<?xml version='1.0'?><!DOCTYPE domain [<!ENTITY a 'aaaaaaaaaa'>"
                    + "".join("<!ENTITY %s '&%s;&%s;&%s;&%s;&%s;&%s;&%s;&%s;&%s;&%s;'>"
                              % (chr(98 + i), chr(97 + i), chr(97 + i), chr(97 + i),
                                 chr(97 + i), chr(97 + i), chr(97 + i), chr(97 + i),
                                 chr(97 + i), chr(97 + i), chr(97 + i)) for i in range(9))
                    + "]><domain><name>&j;</name><uuid>%s</uuid></domain>" % UUID1)
            external = ("<?xml version='1.0'?><!DOCTYPE domain [<!ENTITY x SYSTEM "
                        "'file:///etc/passwd'>]><domain><name>&x;</name><uuid>%s</uuid>"
                        "</domain>" % UUID1)
            huge = domain("web1", UUID1, [hostdev(vfs[0])]).replace(
                "<devices>", "<devices><!--" + "x" * (10 << 20) + "-->")
            no_bus = domain("web1", UUID1, [hostdev(vfs[0]).replace("bus='0x05' ", "")])
            bad_cap = domain("web1", UUID1, [hostdev(vfs[0])], gpu_meta().replace(
                "<a:gpu ", "<a:gpu power-cap-watts='lots' "))
            cases = [(bomb, "DTDs and entities are not accepted"),
                     (external, "DTDs and entities are not accepted"),
                     (huge, "larger than"),
                     (no_bus, "bus"),
                     (bad_cap, "power-cap-watts"),
                     ("<domain><name>web1", "domain XML"),
                     (b"\x00\x01garbage", "domain XML")]
            for xml, text in cases:
                start = time.monotonic()
                p = self.hook(d, "web1", "prepare", "begin", xml)
                self.assertEqual(p.returncode, 1, (text, p.err))
                self.assertIn(text, p.err)
                self.assertEqual(len(p.err.strip().splitlines()), 1, p.err)
                self.assertNotIn("root:", p.err)  # /etc/passwd was never read
                self.assertLess(time.monotonic() - start, 20)
                # a stop with the same XML is not refused
                self.assertEqual(self.hook(d, "web1", "release", "end", xml).returncode, 0)
            self.assertEqual(self.vms(d), [])
            self.assertIsNone(d.driver(vfs[0]))
            # metadata in another namespace is not ours: provisioned without a cap
            xml = domain("web1", UUID1, [hostdev(vfs[0])], gpu_meta(300, ns="urn:other:1"))
            p = self.hook(d, "web1", "prepare", "begin", xml)
            self.assertEqual(p.returncode, 0, p.err)
            self.assertEqual(d.device_cap(GPU0), 750 * W)
            self.assertEqual(self.vms(d)[0]["cap_w"], None)
            self.assertEqual(self.hook(d, "web1", "release", "end", xml).returncode, 0)

    def test_reconnect_migrate_restore(self):
        with Daemon(machine="mi300x-sriov", config=FAST) as d:
            vfs = d.with_vfs(GPU1, 1)
            xml = domain("web1", UUID1, [hostdev(vfs[0])], gpu_meta(500))
            # libvirtd restarted with the domain running, amdsmid lost it: recorded, no change
            p = self.hook(d, "web1", "reconnect", "begin", xml)
            self.assertEqual(p.returncode, 0, p.err)
            self.assertEqual([v["name"] for v in self.vms(d)], ["web1"])
            self.assertEqual(d.device_cap(GPU1), 750 * W)
            # filters print nothing: libvirt keeps the XML
            for op in ("migrate", "restore"):
                p = self.hook(d, "web1", op, "begin", xml)
                self.assertEqual((p.returncode, p.out, p.err), (0, "", ""))
            self.assertEqual(self.hook(d, "web1", "release", "end", xml).returncode, 0)
            self.assertEqual(self.vms(d), [])
            # wrong arguments
            p = subprocess.run([HOOK, "web1"], capture_output=True, text=True)
            self.assertEqual(p.returncode, 2)
            self.assertIn("expected DOMAIN OPERATION SUB-OPERATION", p.stderr)

    def test_gim_host(self):
        with Daemon(machine="mi300x-gim-8vf", config=FAST) as d:
            vfs = [vf_bdf(GPU0, i) for i in range(2)]
            xml = domain("web1", UUID1, [hostdev(b, "no") for b in vfs], gpu_meta(450))
            before = [d.driver(b) for b in vfs]
            p = self.hook(d, "web1", "prepare", "begin", xml, no_journal=True)
            self.assertEqual(p.returncode, 0, p.err)
            self.assertEqual(p.err.splitlines(),
                             ["amdsmi-libvirt-hook: domain web1: provisioned %s (vfio-pci), %s "
                              "(vfio-pci), cap 450 W on GPU %s (recorded only: gim applies no "
                              "cap through sysfs)" % (vfs[0], vfs[1], GPU0)])
            self.assertEqual([d.driver(b) for b in vfs], ["vfio-pci", "vfio-pci"])
            explain = json.loads(d.call(gpu_path(GPU0), "org.amdsmi1.Power", "Explain")[0])
            self.assertEqual([(s["source"], s["vm"], s["cap_w"]) for s in explain["sources"]],
                             [("vm", "web1", 450)])
            self.assertEqual(self.hook(d, "web1", "release", "end", xml).returncode, 0)
            # as they were: this host's VFs are on vfio-pci from the start, so amdsmid bound
            # nothing and gives nothing back
            self.assertEqual([d.driver(b) for b in vfs], before)
            self.assertEqual(self.vms(d), [])
            self.assertEqual(self.vms(d), [])


if __name__ == "__main__":
    require_daemon()
    if not HOOK or not os.access(HOOK, os.X_OK):
        raise SystemExit("FAIL: AMDSMI_HOOK (amdsmi-libvirt-hook) is not executable: %r" % HOOK)
    unittest.main(verbosity=2)
