#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""org.amdsmi1.Sriov of amdsmid and the sriov verbs of amdsmi(1) through it, on simulated
SR-IOV hosts: mi300x-sriov (the generic sysfs path: sriov_numvfs, vfio-pci binding) and
mi300x-gim-1vf / mi300x-gim-8vf (gim: the count is gim's vf_num module parameter).

TotalVfs / NumVfs and PropertiesChanged, ListVfs(), SetNumVfs() up and down with the VF objects
following (InterfacesAdded / InterfacesRemoved, GetManagedObjects) and the PFs' GPU indices
unchanged, dry runs, over the total (OutOfRange), refused while a VF is bound or in use (Busy)
unless FORCE, Changing while a slow change runs, BindVf() / ReleaseVf() round trips, a process
holding the VF's /dev/vfio/<group> (AMDSMI_DEV_ROOT), malformed and foreign VF addresses and
unknown flag bits (InvalidArgument before anything is touched), gim PFs (NotSupported with gim's
explanation) and the persist bit (amdsmid started in a private mount namespace with an overlay
over /etc and a tmpfs over every modprobe.d directory: the host's are never touched), polkit
denying and allowing an unprivileged caller (D-Bus and CLI), the CLI's documents and exit
statuses through amdsmid against --direct, history.jsonl, num_vfs of amdsmid.conf (a notice,
never a change) and the recovery of interrupted changes from intent records."""

import json
import os
import re
import subprocess
import threading
import time
import unittest

from daemontest import (BUS, CLI, GPU0, GPU1, IFACE_GPU, IFACE_SRIOV, MANAGER, MI300X_BDFS,
                        NOBODY, ROOT, SIM, Daemon, gpu_path, require_daemon, tmpdir, vf_bdf,
                        wait_until)

DRY, FORCE, PERSIST, AUTOPROBE_OFF = 1, 2, 1 << 8, 1 << 9
ACTION = "org.amdsmi1.sriov.configure"
OBJMGR = "org.freedesktop.DBus.ObjectManager"
OWN = "/etc/modprobe.d/amdsmi-gim.conf"
MODPROBE_DIRS = ["/etc/modprobe.d", "/run/modprobe.d", "/usr/local/lib/modprobe.d",
                 "/lib/modprobe.d", "/usr/lib/modprobe.d"]
GIM_HINT = "gim sets the VF count with its vf_num module parameter"
P0, P1 = gpu_path(GPU0), gpu_path(GPU1)


def host_modprobe_state():
    """What the host has in its modprobe directories (no test may change it)."""
    out = {}
    for d in MODPROBE_DIRS + ["/etc/modprobe.conf"]:
        if os.path.isdir(d):
            out[d] = sorted((n, os.lstat(os.path.join(d, n)).st_mtime_ns) for n in os.listdir(d))
        else:
            out[d] = os.path.exists(d)
    return out


def normalise(doc):
    """A document without what differs between two runs of the same change: the time stamps,
    the elapsed milliseconds (also in messages) and the date line of gim's file."""
    if isinstance(doc, dict):
        return {k: normalise(v) for k, v in doc.items()
                if k not in ("timestamp", "elapsed_ms")}
    if isinstance(doc, list):
        return [normalise(v) for v in doc]
    if isinstance(doc, str):
        doc = re.sub(r"\d+ ms\)", "N ms)", doc)
        return re.sub(r"on \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", "on STAMP", doc)
    return doc


class Monitor:
    """busctl monitor of org.amdsmi1's signals, as JSON lines."""

    def __init__(self, d):
        self.p = subprocess.Popen(["busctl", "--system", "--json=short", "monitor", BUS],
                                  env=d.env(), stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL, text=True)
        self.lines = []
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()
        time.sleep(0.5)         # the match is installed

    def _read(self):
        for line in self.p.stdout:
            try:
                self.lines.append(json.loads(line))
            except ValueError:
                pass

    def signals(self, member):
        return [m for m in self.lines if m.get("type") == "signal" and m.get("member") == member]

    def answered_after_signals(self, method):
        """Whether each call of @method was answered after the signals of the objects and of
        org.amdsmi1.Sriov's properties that it caused (up to the next call): they had followed
        when the caller heard back."""
        out = []
        for i, m in enumerate(self.lines):
            if m.get("type") != "method_call" or m.get("member") != method:
                continue
            ret = [k for k, r in enumerate(self.lines)
                   if r.get("type") == "method_return" and r.get("reply_cookie") == m["cookie"]
                   and r.get("destination") == m.get("sender")]
            sig = [k for k, r in enumerate(self.lines) if k > i and r.get("type") == "signal" and
                   (r.get("member") in ("InterfacesAdded", "InterfacesRemoved") or
                    (r.get("member") == "PropertiesChanged" and
                     r["payload"]["data"][0] == IFACE_SRIOV))]
            nxt = [k for k, r in enumerate(self.lines)
                   if k > i and r.get("type") == "method_call" and r.get("member") == method]
            sig = [k for k in sig if not nxt or k < nxt[0]]
            out.append(bool(ret) and bool(sig) and max(sig) < ret[0])
        return out

    def stop(self):
        time.sleep(0.5)
        self.p.terminate()
        self.p.wait()
        self.thread.join(5)
        self.p.stdout.close()


class Case(unittest.TestCase):
    maxDiff = None

    def setUp(self):
        self.host_modprobe = host_modprobe_state()

    def tearDown(self):
        self.assertEqual(host_modprobe_state(), self.host_modprobe,
                         "the host's modprobe configuration changed")

    # ---- helpers ----------------------------------------------------------------------------

    def reply(self, d, path, method, sig, *args, user=None):
        return json.loads(d.call(path, IFACE_SRIOV, method, sig, *args, user=user)[0])

    def error(self, d, path, method, *args, user=None):
        """(error name, whole message): the message may have several lines."""
        cmd = (user or []) + ["dbus-send", "--system", "--print-reply", "--dest=" + BUS, path,
                              IFACE_SRIOV + "." + method] + list(args)
        p = subprocess.run(cmd, env=d.env(), capture_output=True, text=True, timeout=60)
        self.assertNotEqual(p.returncode, 0, "%s succeeded: %s" % (method, p.stdout))
        self.assertTrue(p.stderr.startswith("Error "), p.stderr)
        name, _, msg = p.stderr[6:].rstrip("\n").partition(": ")
        return name, msg

    def set_error(self, d, path, n, flags, user=None):
        return self.error(d, path, "SetNumVfs", "uint32:%d" % n, "uint64:%d" % flags, user=user)

    def vf_error(self, d, path, method, vf, flags=0, user=None):
        return self.error(d, path, method, "string:" + vf, "uint64:%d" % flags, user=user)

    def objects(self, d):
        return d.call(ROOT, OBJMGR, "GetManagedObjects")[0]

    @staticmethod
    def driver(m, bdf):
        link = m.path("bus/pci/devices/%s/driver" % bdf)
        return os.path.basename(os.readlink(link)) if os.path.lexists(link) else None

    def state(self, m):
        """Every PCI function's driver and override, the PFs' VF counts and autoprobe."""
        out = {}
        for bdf in sorted(os.listdir(m.path("bus/pci/devices"))):
            d = "bus/pci/devices/" + bdf
            entry = [self.driver(m, bdf)]
            for f in ("driver_override", "sriov_numvfs", "sriov_drivers_autoprobe"):
                entry.append(m.value(d + "/" + f) if os.path.exists(m.path(d + "/" + f))
                             else None)
            out[bdf] = tuple(entry)
        return out

    def numvfs(self, m, pf=GPU0):
        return int(m.value(m.gpu(pf, "sriov_numvfs")))

    def cli_json(self, d, *args, status=0, user=None, env=None):
        p = d.cli(*(list(args) + ["--json"]), status=status, user=user, env=env)
        return json.loads(p.stdout), p

    def check_indices(self, d, n_vfs):
        """PFs keep GPU 0..7 whatever the VF count; VFs come after them."""
        objs = self.objects(d)
        self.assertEqual(len(objs), 8 + n_vfs, sorted(objs))
        for i, bdf in enumerate(MI300X_BDFS):
            self.assertEqual(d.get(gpu_path(bdf), IFACE_GPU, "Index"), i)
        return objs

    def dev_root(self):
        dev = tmpdir(self, "amdsmi-dev.")
        os.makedirs(os.path.join(dev, "vfio"))
        return dev

    def hold_vfio(self, m, dev, vf):
        """A process (root) holding <dev>/vfio/<group of @vf> open, as QEMU does."""
        group = os.path.basename(os.readlink(m.path("bus/pci/devices/%s/iommu_group" % vf)))
        node = os.path.join(dev, "vfio", group)
        with open(node, "w"):
            pass
        os.chmod(node, 0o666)
        with open(node) as f:
            p = subprocess.Popen(["sleep", "300"], stdin=f)
        self.addCleanup(lambda: (p.kill(), p.wait()))

        def comm():
            with open("/proc/%d/comm" % p.pid) as f:
                return f.read().strip() == "sleep"
        wait_until("the holder", comm)
        return p

    # ---- the generic path (mi300x-sriov) ---------------------------------------------------

    def test_set_num_vfs(self):
        with Daemon(machine="mi300x-sriov") as d:
            m = d.mount
            self.assertEqual((d.get(P0, IFACE_SRIOV, "TotalVfs"), d.get(P0, IFACE_SRIOV, "NumVfs")),
                             (8, 0))
            self.check_indices(d, 0)
            mon = Monitor(d)
            r = self.reply(d, P0, "SetNumVfs", "ut", 4, 0)
            vfs = [vf_bdf(GPU0, i) for i in range(4)]
            self.assertEqual((r["gpu"], r["bdf"], r["config"], r["num_vfs_requested"], r["vfs"],
                              r["result"], r["persist"]),
                             (0, GPU0, "sysfs", 4, vfs, None, None))
            self.assertEqual((r["report"]["vfs_before"], r["report"]["vfs_after"],
                              r["report"]["changed"], r["report"]["stage"]), (0, 4, True, "done"))
            self.assertRegex(r["messages"][0], r"^GPU 0 \(0000:05:00.0\): VFs 0 -> 4 \(\d+ ms\)$")
            # the properties and the objects have followed when the reply comes
            self.assertEqual(d.get(P0, IFACE_SRIOV, "NumVfs"), 4)
            self.assertEqual(self.numvfs(m), 4)
            objs = self.check_indices(d, 4)
            for i, vf in enumerate(vfs):
                self.assertIn(IFACE_SRIOV, objs[gpu_path(vf)])
                self.assertEqual(d.get(gpu_path(vf), IFACE_GPU, "Index"), 8 + i)
                self.assertEqual(d.get(gpu_path(vf), IFACE_GPU, "Role"), "vf")
                self.assertEqual(d.get(gpu_path(vf), IFACE_SRIOV, "TotalVfs"), 0)
            # down: two VF objects go
            r = self.reply(d, P0, "SetNumVfs", "ut", 2, FORCE)
            self.assertEqual((r["vfs"], r["report"]["wrote_zero"]), (vfs[:2], True))
            self.assertEqual(d.get(P0, IFACE_SRIOV, "NumVfs"), 2)
            objs = self.check_indices(d, 2)
            self.assertNotIn(gpu_path(vfs[3]), objs)
            mon.stop()
            added = [s["payload"]["data"][0] for s in mon.signals("InterfacesAdded")]
            removed = [s["payload"]["data"][0] for s in mon.signals("InterfacesRemoved")]
            # (a periodic check during the change may see its steps: 0 VFs for a moment)
            self.assertEqual(set(added), set(gpu_path(v) for v in vfs))
            self.assertTrue(set(gpu_path(v) for v in vfs[2:]) <= set(removed), removed)
            self.assertTrue(set(removed) <= set(added), removed)
            changed = [s["payload"]["data"] for s in mon.signals("PropertiesChanged")
                       if s.get("path") == P0 and s["payload"]["data"][0] == IFACE_SRIOV]
            self.assertEqual([c[1]["NumVfs"]["data"] for c in changed], [4, 2])
            self.assertEqual(mon.answered_after_signals("SetNumVfs"), [True, True])

            # a dry run: the plan, nothing changes, nothing recorded, no polkit needed
            before = self.state(m)
            n_history = len(d.history())
            r = self.reply(d, P0, "SetNumVfs", "ut", 0, DRY, user=NOBODY)
            self.assertEqual(r["messages"], ["GPU 0 (0000:05:00.0): dry run: VFs 2 -> 0 is "
                                             "possible now"])
            self.assertEqual((r["report"]["changed"], r["vfs"]), (False, vfs[:2]))
            self.assertEqual(self.state(m), before)
            self.assertEqual(len(d.history()), n_history)
            self.assertEqual(d.get(P0, IFACE_SRIOV, "NumVfs"), 2)

            # over the total, over 65535, unknown bits, persist with autoprobe-off, persist on a
            # sysfs PF, a VF's object: refused, nothing written
            name, msg = self.set_error(d, P0, 9, 0)
            self.assertEqual(name, "org.amdsmi1.Error.OutOfRange")
            self.assertIn("takes at most 8 VFs (sriov_totalvfs), not 9", msg)
            name, msg = self.set_error(d, P0, 70000, 0)
            self.assertEqual(name, "org.amdsmi1.Error.OutOfRange")
            for flags in (1 << 5, 1 << 10, 1 << 63, PERSIST | AUTOPROBE_OFF):
                name, msg = self.set_error(d, P0, 1, flags)
                self.assertEqual(name, "org.amdsmi1.Error.InvalidArgument", (flags, msg))
            name, msg = self.set_error(d, P0, 1, PERSIST)
            self.assertEqual(name, "org.amdsmi1.Error.NotSupported")
            self.assertIn("not under gim", msg)
            name, msg = self.set_error(d, gpu_path(vfs[0]), 1, 0)
            self.assertEqual(name, "org.amdsmi1.Error.InvalidArgument")
            self.assertIn("is a VF: SetNumVfs() is a method of its PF, GPU 0 (%s)" % GPU0, msg)
            name, _ = self.error(d, gpu_path(vfs[0]), "ListVfs")
            self.assertEqual(name, "org.amdsmi1.Error.InvalidArgument")
            self.assertEqual(self.state(m), before)

            # the history: who, old -> new, the result
            h = [(e["gpu"], e["change"], e["old"], e["new"], e["result"], e["via"], e["uid"])
                 for e in d.history()]
            self.assertEqual(h, [(GPU0, "num_vfs", "0", "4", "ok", "amdsmid", 0),
                                 (GPU0, "num_vfs", "4", "2", "ok", "amdsmid", 0),
                                 (GPU0, "num_vfs", "2", "9", "ERANGE", "amdsmid", 0),
                                 (GPU0, "gim_vf_num", None, "1", "EOPNOTSUPP", "amdsmid", 0)])

    def test_busy_and_force(self):
        with Daemon(machine="mi300x-sriov") as d:
            m = d.mount
            self.reply(d, P0, "SetNumVfs", "ut", 3, 0)
            vf1 = vf_bdf(GPU0, 1)
            r = self.reply(d, P0, "BindVf", "st", vf1, 0)
            self.assertEqual(self.driver(m, vf1), "vfio-pci")
            name, msg = self.set_error(d, P0, 1, 0)
            self.assertEqual(name, "org.amdsmi1.Error.Busy")
            self.assertIn("1 VF of %s is bound to vfio-pci or in use" % GPU0, msg)
            self.assertIn("\n  VF %s is bound to vfio-pci\n" % vf1, msg)
            self.assertIn("--force changes the count anyway", msg)
            self.assertEqual(self.numvfs(m), 3)
            # the CLI through amdsmid: exit 5, the same lines
            p = d.cli("sriov", "set", "-g", 0, "--num-vfs", 1, status=5)
            self.assertIn("amdsmi:   VF %s is bound to vfio-pci\n" % vf1, p.stderr)
            # a dry run with FORCE passes; FORCE changes it
            r = self.reply(d, P0, "SetNumVfs", "ut", 1, DRY | FORCE)
            self.assertEqual(r["report"]["n_blockers"], 1)
            self.assertEqual(self.numvfs(m), 3)
            r = self.reply(d, P0, "SetNumVfs", "ut", 1, FORCE)
            self.assertEqual((r["report"]["vfs_after"], r["vfs"]), (1, [vf_bdf(GPU0, 0)]))
            self.assertIn("  forced: 1 VF in use or bound to vfio-pci went away", r["messages"])
            self.assertEqual(d.get(P0, IFACE_SRIOV, "NumVfs"), 1)

    def test_changing(self):
        with Daemon(machine="mi300x-sriov") as d:
            subprocess.run([SIM, "ctl", "--mount", d.mount.root, "delay",
                            d.mount.gpu(GPU0, "sriov_numvfs"), "2000", "once", "write"],
                           check=True, capture_output=True)
            p = subprocess.Popen(["busctl", "--system", "call", BUS, P0, IFACE_SRIOV,
                                  "SetNumVfs", "ut", "2", "0"], env=d.env(),
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            wait_until("Changing", lambda: d.get(P0, IFACE_GPU, "Changing"), timeout=10)
            # reads answer meanwhile, from the cache
            self.assertEqual(d.get(P0, IFACE_SRIOV, "NumVfs"), 0)
            self.assertEqual(d.get(P1, IFACE_GPU, "Changing"), False)
            out, err = p.communicate(60)
            self.assertEqual(p.returncode, 0, err)
            self.assertEqual(d.get(P0, IFACE_GPU, "Changing"), False)
            self.assertEqual(d.get(P0, IFACE_SRIOV, "NumVfs"), 2)

    def test_bind_release(self):
        with Daemon(machine="mi300x-sriov") as d:
            m = d.mount
            self.reply(d, P0, "SetNumVfs", "ut", 2, 0)
            vf = vf_bdf(GPU0, 1)
            before = self.state(m)
            r = self.reply(d, P0, "BindVf", "st", vf[5:].upper(), DRY)
            self.assertEqual((r["bdf"], r["pf_bdf"], r["operation"], r["gpu"]),
                             (vf, GPU0, "bind", 9))
            self.assertEqual(r["messages"], ["%s: dry run: none -> vfio-pci is possible now" % vf])
            self.assertEqual(self.state(m), before)
            r = self.reply(d, P0, "BindVf", "st", vf, 0)
            self.assertEqual(r["messages"], ["%s: none -> vfio-pci" % vf])
            self.assertEqual((r["report"]["driver_after"], r["report"]["override_after"],
                              r["report"]["changed"], r["result"]),
                             ("vfio-pci", "vfio-pci", True, None))
            self.assertEqual(self.driver(m, vf), "vfio-pci")
            doc = self.reply(d, P0, "ListVfs", "")
            self.assertEqual([v["driver"] for v in doc["vfs"]], ["none", "vfio-pci"])
            # the PF's state, as `amdsmi sriov` shows it
            self.assertEqual(doc["state"], "ok")
            r = self.reply(d, P0, "BindVf", "st", vf, 0)
            self.assertEqual(r["messages"],
                             ["%s: vfio-pci (bound to vfio-pci already, nothing to do)" % vf])
            r = self.reply(d, P0, "ReleaseVf", "st", vf, 0)
            self.assertEqual(r["messages"], ["%s: vfio-pci -> none" % vf])
            self.assertIsNone(self.driver(m, vf))
            self.assertEqual(self.state(m), before)
            h = [(e["gpu"], e["change"], e["old"], e["new"], e["result"]) for e in d.history()
                 if e["change"] != "num_vfs"]
            self.assertEqual(h, [(GPU0, "bind_vf", vf + " none", vf + " vfio-pci", "ok"),
                                 (GPU0, "bind_vf", vf + " vfio-pci", vf + " vfio-pci", "ok"),
                                 (GPU0, "release_vf", vf + " vfio-pci", vf + " none", "ok")])

    def test_timeout_through_daemon(self):
        """sriov set --timeout reaches amdsmid (SetNumVfsWithTimeout): the VFs that never
        appear are waited for that long, not the default; the failure's report comes along."""
        with Daemon(machine="mi300x-sriov") as d:
            m = d.mount
            p = subprocess.run([SIM, "ctl", "--mount", m.root, "no-effect",
                                "bus/pci/devices/%s/sriov_numvfs" % GPU0, "once"],
                               capture_output=True, text=True, timeout=60)
            self.assertEqual(p.returncode, 0, p.stderr)
            doc, p = self.cli_json(d, "sriov", "set", "-g", 0, "--num-vfs", 2, "--timeout", "0.3",
                                   status=5)
            self.assertEqual(doc["result"]["errno"], "ETIMEDOUT")
            self.assertIn("300 ms", doc["result"]["message"])
            rep = doc["gpus"][0]["report"]
            self.assertEqual((rep["stage"], rep["vfs_after"]), ("settle", 0))
            self.assertLess(rep["elapsed_ms"], 5000)
            # the timeout's range is checked before anything is touched
            name, msg = self.error(d, P0, "SetNumVfsWithTimeout", "uint32:2",
                                   "uint32:%d" % (3600 * 1000 + 1), "uint64:0")
            self.assertEqual(name, "org.amdsmi1.Error.InvalidArgument")
            self.assertIn("above 3600000 ms", msg)
            # without --timeout, SetNumVfs and the default
            d.cli("sriov", "set", "-g", 0, "--num-vfs", 2)
            self.assertEqual(d.get(P0, IFACE_SRIOV, "NumVfs"), 2)

    def test_in_use(self):
        dev = self.dev_root()
        with Daemon(machine="mi300x-sriov", env={"AMDSMI_DEV_ROOT": dev}) as d:
            m = d.mount
            self.reply(d, P0, "SetNumVfs", "ut", 2, 0)
            vf = vf_bdf(GPU0, 0)
            self.reply(d, P0, "BindVf", "st", vf, 0)
            holder = self.hold_vfio(m, dev, vf)
            doc = self.reply(d, P0, "ListVfs", "", user=NOBODY)
            v = doc["vfs"][0]
            self.assertEqual((v["bdf"], v["in_use"], v["users"], v["n_users"]),
                             (vf, True, [{"pid": holder.pid, "comm": "sleep"}], 1))
            # the CLI as nobody sees the holder through amdsmid; in-process it cannot
            sriov, _ = self.cli_json(d, "sriov", "-g", 0, user=NOBODY)
            self.assertEqual(sriov["gpus"][0]["vfs"][0]["in_use"], True)
            self.assertEqual(sriov["gpus"][0]["vfs"][0]["users"][0]["pid"], holder.pid)
            self.assertEqual(sriov["errors"], [])
            direct, _ = self.cli_json(d, "sriov", "-g", 0, "--direct", user=NOBODY)
            self.assertIsNone(direct["gpus"][0]["vfs"][0]["in_use"])
            self.assertEqual([e["field"] for e in direct["errors"]], ["vfs.in_use"])
            # root in-process sees what amdsmid sees
            direct, _ = self.cli_json(d, "sriov", "--direct")
            via, _ = self.cli_json(d, "sriov")
            self.assertEqual(normalise(via), normalise(direct))
            # refused while held: release (unless FORCE), the count (unless FORCE)
            name, msg = self.vf_error(d, P0, "ReleaseVf", vf)
            self.assertEqual(name, "org.amdsmi1.Error.Busy")
            self.assertIn("VF %s is in use: its VFIO group" % vf, msg)
            self.assertIn("held by %d (sleep)" % holder.pid, msg)
            self.assertIn("\n  --force releases it anyway", msg)
            name, msg = self.set_error(d, P0, 0, 0)
            self.assertEqual(name, "org.amdsmi1.Error.Busy")
            self.assertIn("in use by PID %d (sleep)" % holder.pid, msg)
            self.assertEqual(self.driver(m, vf), "vfio-pci")
            self.assertEqual(self.numvfs(m), 2)
            p = d.cli("sriov", "release", vf, status=5)
            self.assertIn("amdsmi:   --force releases it anyway\n", p.stderr)
            # with --json, the refusal still shows amdsmid's report of what it found (as the
            # in-process refusal does), not only an error
            via, _ = self.cli_json(d, "sriov", "release", vf, status=5)
            g = via["gpus"][0]
            self.assertEqual((g["bdf"], g["pf_bdf"], g["operation"], g["result"]),
                             (vf, GPU0, "release", "EBUSY"))
            self.assertEqual(g["report"]["driver_before"], "vfio-pci")
            self.assertEqual(via["result"]["errno"], "EBUSY")
            self.assertIn("held by %d (sleep)" % holder.pid, via["result"]["message"])
            r = self.reply(d, P0, "ReleaseVf", "st", vf, FORCE)
            self.assertEqual(r["report"]["driver_after"], "none")
            self.assertIsNone(self.driver(m, vf))

    def test_bad_vf_arguments(self):
        with Daemon(machine="mi300x-sriov") as d:
            m = d.mount
            self.reply(d, P0, "SetNumVfs", "ut", 2, 0)
            self.reply(d, P1, "SetNumVfs", "ut", 1, 0)
            before = self.state(m)
            n_history = len(d.history())
            for method in ("BindVf", "ReleaseVf"):
                for arg, want, text in (
                        ("../..", "InvalidArgument", "invalid VF address"),
                        ("0000:05:02.0/../..", "InvalidArgument", "invalid VF address"),
                        ("0000:05:02.0\n", "InvalidArgument", "invalid VF address"),
                        ("", "InvalidArgument", "invalid VF address"),
                        ("x" * 100000, "InvalidArgument", "invalid VF address"),
                        ("0", "InvalidArgument", "invalid VF address"),
                        (GPU0, "InvalidArgument", "is a physical function"),
                        (GPU1, "InvalidArgument", "is a physical function"),
                        (vf_bdf(GPU1, 0), "InvalidArgument",
                         "is a VF of %s, not of %s" % (GPU1, GPU0)),
                        ("0000:99:00.0", "NotFound", "no AMD GPU function at 0000:99:00.0")):
                    with self.subTest(method=method, arg=arg[:20]):
                        name, msg = self.vf_error(d, P0, method, arg)
                        self.assertEqual(name, "org.amdsmi1.Error." + want, msg)
                        self.assertIn(text, msg)
                        self.assertLess(len(msg), 400)
                # unknown flag bits, persist: not for bind / release
                for flags in (PERSIST, AUTOPROBE_OFF, 1 << 40):
                    name, _ = self.vf_error(d, P0, method, vf_bdf(GPU0, 0), flags)
                    self.assertEqual(name, "org.amdsmi1.Error.InvalidArgument")
                # a VF's object has no VFs
                name, _ = self.vf_error(d, gpu_path(vf_bdf(GPU0, 0)), method, vf_bdf(GPU0, 1))
                self.assertEqual(name, "org.amdsmi1.Error.InvalidArgument")
                # wrong signatures
                name, _ = self.error(d, P0, method, "uint32:1", "uint64:0")
                self.assertEqual(name, "org.freedesktop.DBus.Error.InvalidArgs")
            name, _ = self.error(d, P0, "SetNumVfs", "string:4", "uint64:0")
            self.assertEqual(name, "org.freedesktop.DBus.Error.InvalidArgs")
            self.assertEqual(self.state(m), before)
            self.assertEqual(len(d.history()), n_history)
            # the CLI: usage (2), a PF (2), not found (3), before asking amdsmid
            for args, status in ((["../.."], 2), ([GPU0], 2), (["0000:99:00.0"], 3)):
                d.cli("sriov", "bind", *args, status=status)
            self.assertEqual(self.state(m), before)

    def test_authorisation(self):
        with Daemon(machine="mi300x-sriov") as d:
            m = d.mount
            self.reply(d, P0, "SetNumVfs", "ut", 2, 0)
            vf = vf_bdf(GPU0, 0)
            before = self.state(m)
            # polkit denies: PermissionDenied, nothing changed
            for method, args in (("SetNumVfs", ("uint32:4", "uint64:0")),
                                 ("BindVf", ("string:" + vf, "uint64:0")),
                                 ("ReleaseVf", ("string:" + vf, "uint64:0"))):
                name, msg = self.error(d, P0, method, *args, user=NOBODY)
                self.assertEqual(name, "org.amdsmi1.Error.PermissionDenied", (method, msg))
                self.assertIn(method, msg)
            p = d.cli("sriov", "set", "-g", 0, "--num-vfs", 4, user=NOBODY, status=6)
            self.assertIn("not authorised", p.stderr)
            d.cli("sriov", "bind", vf, user=NOBODY, status=6)
            self.assertEqual(self.state(m), before)
            self.assertIn("SetNumVfs by uid 65534 refused", d.log())
            # reads and dry runs need no authorisation
            self.reply(d, P0, "ListVfs", "", user=NOBODY)
            p = d.cli("sriov", "set", "-g", 0, "--num-vfs", 4, "--dry-run", user=NOBODY)
            self.assertEqual(p.stdout, "GPU 0 (%s): dry run: VFs 2 -> 4 is possible now "
                                       "(writing 0 first)\n" % GPU0)
            # polkit allows: an unprivileged admin changes through amdsmid, D-Bus and CLI
            d.allow(ACTION)
            r = self.reply(d, P0, "SetNumVfs", "ut", 3, 0, user=NOBODY)
            self.assertEqual(r["report"]["vfs_after"], 3)
            p = d.cli("sriov", "set", "-g", 0, "--num-vfs", 4, user=NOBODY)
            self.assertRegex(p.stdout, r"^GPU 0 \(0000:05:00.0\): VFs 3 -> 4 \(0 written first, "
                                       r"\d+ ms\)\n$")
            self.assertEqual(self.numvfs(m), 4)
            p = d.cli("sriov", "bind", vf, user=NOBODY)
            self.assertEqual(p.stdout, "%s: none -> vfio-pci\n" % vf)
            p = d.cli("sriov", "release", vf, user=NOBODY)
            self.assertEqual(p.stdout, "%s: vfio-pci -> none\n" % vf)
            h = [(e["change"], e["uid"], e["result"]) for e in d.history()][1:]
            self.assertEqual(h, [("num_vfs", 65534, "ok"), ("num_vfs", 65534, "ok"),
                                 ("bind_vf", 65534, "ok"), ("release_vf", 65534, "ok")])
            # another action allowed only: denied again
            d.allow("org.amdsmi1.partition.configure")
            name, _ = self.set_error(d, P0, 1, 0, user=NOBODY)
            self.assertEqual(name, "org.amdsmi1.Error.PermissionDenied")
            self.assertEqual(self.numvfs(m), 4)

    def test_cli_through_daemon(self):
        with Daemon(machine="mi300x-sriov") as d:
            m = d.mount
            # --direct is refused while amdsmid runs, allowed with --force
            for args in (["sriov", "set", "-g", 0, "--num-vfs", 2],
                         ["sriov", "bind", vf_bdf(GPU0, 0)],
                         ["sriov", "release", vf_bdf(GPU0, 0)]):
                p = d.cli(*(args + ["--direct"]), status=5)
                self.assertIn("amdsmid is running", p.stderr)
            self.assertEqual(self.numvfs(m), 0)
            # the same change through amdsmid and in-process: the same document
            via, _ = self.cli_json(d, "sriov", "set", "-g", 0, "--num-vfs", 2)
            self.assertEqual(d.get(P0, IFACE_SRIOV, "NumVfs"), 2)
            self.cli_json(d, "sriov", "set", "-g", 0, "--num-vfs", 0, "--direct", "--force")
            direct, _ = self.cli_json(d, "sriov", "set", "-g", 0, "--num-vfs", 2, "--direct",
                                      "--force")
            self.assertEqual(normalise(via), normalise(direct))
            self.assertEqual((via["command"], via["dry_run"], via["result"]),
                             ("sriov set", False, {"exit_code": 0, "errno": None,
                                                   "message": None}))
            # amdsmid saw the in-process changes too (its periodic check)
            wait_until("NumVfs 2", lambda: d.get(P0, IFACE_SRIOV, "NumVfs") == 2)
            # dry runs, table and CSV
            for fmt in ([], ["--csv"], ["--json"]):
                via = d.cli("sriov", "set", "-g", "0,1", "--num-vfs", 4, "--dry-run", *fmt)
                direct = d.cli("sriov", "set", "-g", "0,1", "--num-vfs", 4, "--dry-run",
                               "--direct", "--force", *fmt)
                if fmt == ["--json"]:
                    self.assertEqual(normalise(json.loads(via.stdout)),
                                     normalise(json.loads(direct.stdout)))
                else:
                    self.assertEqual(via.stdout, direct.stdout)
            # failures: the exit status of the errno, the same message
            via = d.cli("sriov", "set", "-g", 0, "--num-vfs", 9, status=7)
            direct = d.cli("sriov", "set", "-g", 0, "--num-vfs", 9, "--direct", "--force",
                           status=7)
            self.assertEqual(via.stderr, direct.stderr)
            # ... and the same document: amdsmid's report comes with its error
            doc, _ = self.cli_json(d, "sriov", "set", "-g", 0, "--num-vfs", 9, status=7)
            direct, _ = self.cli_json(d, "sriov", "set", "-g", 0, "--num-vfs", 9, "--direct",
                                      "--force", status=7)
            self.assertEqual(normalise(doc), normalise(direct))
            self.assertEqual((doc["result"]["errno"], doc["gpus"][0]["report"]["stage"]),
                             ("ERANGE", "preflight"))
            self.assertIn("not 9", doc["result"]["message"])
            # bind / release through amdsmid: the same document as in-process
            vf = vf_bdf(GPU0, 1)
            via, _ = self.cli_json(d, "sriov", "bind", vf)
            self.assertEqual(self.driver(m, vf), "vfio-pci")
            self.cli_json(d, "sriov", "release", vf, "--direct", "--force")
            direct, _ = self.cli_json(d, "sriov", "bind", vf, "--direct", "--force")
            self.assertEqual(normalise(via), normalise(direct))
            p = d.cli("sriov", "release", vf)
            self.assertEqual(p.stdout, "%s: vfio-pci -> none\n" % vf)
            # reads: the same document
            via, _ = self.cli_json(d, "sriov")
            direct, _ = self.cli_json(d, "sriov", "--direct")
            self.assertEqual(normalise(via), normalise(direct))
            self.assertEqual(d.cli("sriov", "-g", vf).stdout,
                             d.cli("sriov", "-g", vf, "--direct").stdout)
            # every change in the history: amdsmid's and the in-process ones
            h = [(e["via"], e["change"], e["old"], e["new"], e["result"]) for e in d.history()]
            self.assertEqual(h, [
                ("amdsmid", "num_vfs", "0", "2", "ok"),
                ("direct", "num_vfs", "2", "0", "ok"),
                ("direct", "num_vfs", "0", "2", "ok"),
                ("amdsmid", "num_vfs", "2", "9", "ERANGE"),
                ("direct", "num_vfs", "2", "9", "ERANGE"),
                ("amdsmid", "num_vfs", "2", "9", "ERANGE"),
                ("direct", "num_vfs", "2", "9", "ERANGE"),
                ("amdsmid", "bind_vf", vf + " none", vf + " vfio-pci", "ok"),
                ("direct", "release_vf", vf + " vfio-pci", vf + " none", "ok"),
                ("direct", "bind_vf", vf + " none", vf + " vfio-pci", "ok"),
                ("amdsmid", "release_vf", vf + " vfio-pci", vf + " none", "ok")])

    # ---- gim hosts ---------------------------------------------------------------------------

    def test_gim_not_supported(self):
        for machine, vfs in (("mi300x-gim-1vf", 1), ("mi300x-gim-8vf", 8)):
            with self.subTest(machine=machine), Daemon(machine=machine) as d:
                m = d.mount
                self.assertEqual((d.get(P0, IFACE_SRIOV, "NumVfs"),
                                  d.get(P0, IFACE_SRIOV, "TotalVfs")), (vfs, 8))
                self.assertEqual(len(self.objects(d)), 8 + 8 * vfs)
                before = self.state(m)
                want = 8 if vfs == 1 else 1
                name, msg = self.set_error(d, P0, want, 0)
                self.assertEqual(name, "org.amdsmi1.Error.NotSupported")
                self.assertIn(GIM_HINT + " (now %d for this GPU)" % vfs, msg)
                self.assertIn("--persist", msg)
                # the CLI prints the same, exit 4
                p = d.cli("sriov", "set", "-g", 0, "--num-vfs", want, status=4)
                q = d.cli("sriov", "set", "-g", 0, "--num-vfs", want, "--direct", "--force",
                          status=4)
                self.assertEqual(p.stderr, q.stderr)
                self.assertIn(GIM_HINT, p.stderr)
                self.assertEqual(self.state(m), before)
                doc = self.reply(d, P0, "ListVfs", "")
                self.assertEqual((doc["config"], doc["num_vfs"], doc["gim_vf_num"],
                                  len(doc["vfs"])), ("gim-param", vfs, vfs, vfs))

    def gim_daemon(self, machine="mi300x-gim-8vf", **kw):
        """amdsmid in a private mount namespace: an overlay over /etc (its changes stay in a
        temporary directory), an empty tmpfs over every modprobe.d directory there is. If a
        mount fails, amdsmid does not start."""
        ns = tmpdir(self, "amdsmi-ns.", 0o700)
        script = r"""
set -e
mount --make-rprivate /
mkdir -p "$0/etc.up" "$0/etc.work"
mount -t overlay overlay -o "lowerdir=/etc,upperdir=$0/etc.up,workdir=$0/etc.work" /etc
mountpoint -q /etc
mkdir -p /etc/modprobe.d
for dir in /etc/modprobe.d /run/modprobe.d /usr/local/lib/modprobe.d /usr/lib/modprobe.d \
           /etc/initramfs-tools /etc/dracut.conf.d; do
        if [ -d "$dir" ]; then mount -t tmpfs -o mode=0755 tmpfs "$dir"; fi
done
mountpoint -q /etc/modprobe.d
rm -f /etc/modprobe.conf /etc/dracut.conf
exec "$@"
"""
        return Daemon(machine=machine, wrapper=["unshare", "-m", "--propagation", "private",
                                                "sh", "-c", script, ns], **kw)

    def ns_file(self, d, path=OWN):
        try:
            with open("/proc/%d/root%s" % (d.proc.pid, path)) as f:
                return f.read()
        except FileNotFoundError:
            return None

    def ns_cli(self, d, *args, status=0):
        """amdsmi in amdsmid's mount namespace (--direct sees the same modprobe files)."""
        p = subprocess.run(["nsenter", "-t", str(d.proc.pid), "-m", CLI] + [str(a) for a in args],
                           env=d.env(), capture_output=True, text=True, timeout=120)
        self.assertEqual(p.returncode, status, (args, p.stdout, p.stderr))
        return p

    def test_persist(self):
        with self.gim_daemon() as d:
            m = d.mount
            before = self.state(m)
            self.assertIsNone(self.ns_file(d))
            # dry run: the file it would write; nothing written
            r = self.reply(d, P0, "SetNumVfs", "ut", 1, PERSIST | DRY)
            p = r["persist"]
            self.assertEqual((p["written"], p["path"], p["order"], p["conflicts"]),
                             (False, OWN, "pci_address", []))
            self.assertIn("options gim vf_num=1,8,8,8,8,8,8,8\n", p["content"])
            self.assertEqual(r["messages"], [
                "GPU 0 (%s): dry run: vf_num 1 for gim's next load" % GPU0,
                "dry run: amdsmi would write %s:" % OWN])
            self.assertIsNone(self.ns_file(d))
            # the same dry run in-process in the namespace: the same document and table
            via, _ = self.cli_json(d, "sriov", "set", "-g", 0, "--num-vfs", 1, "--persist",
                                   "--dry-run")
            direct = self.ns_cli(d, "sriov", "set", "-g", 0, "--num-vfs", 1, "--persist",
                                 "--dry-run", "--direct", "--force", "--json")
            self.assertEqual(normalise(via), normalise(json.loads(direct.stdout)))
            via = d.cli("sriov", "set", "-g", 0, "--num-vfs", 1, "--persist", "--dry-run")
            direct = self.ns_cli(d, "sriov", "set", "-g", 0, "--num-vfs", 1, "--persist",
                                 "--dry-run", "--direct", "--force")
            self.assertEqual(normalise(via.stdout), normalise(direct.stdout))
            self.assertIn("options gim vf_num=1,8,8,8,8,8,8,8\n", via.stdout)

            # written: a success whose reply says so; it waits for gim's next load
            r = self.reply(d, P0, "SetNumVfs", "ut", 1, PERSIST)
            self.assertEqual((r["persist"]["written"], r["result"]), (True, None))
            self.assertIn("wrote %s: options gim vf_num=1,8,8,8,8,8,8,8" % OWN, r["messages"])
            self.assertTrue(any("gim's next load" in s for s in r["messages"][2:]), r["messages"])
            text = self.ns_file(d)
            self.assertEqual(text, r["persist"]["content"])
            self.assertTrue(text.endswith("# vf_num %s 1\n# vf_num %s 8\n" % (GPU0, GPU1) +
                                          "".join("# vf_num %s 8\n" % b for b in MI300X_BDFS[2:]) +
                                          "options gim vf_num=1,8,8,8,8,8,8,8\n"), text)
            # nothing of the GPUs changed: gim reads vf_num when it loads
            self.assertEqual(self.state(m), before)
            self.assertEqual(d.get(P0, IFACE_SRIOV, "NumVfs"), 8)
            # the history: the lists, for every GPU under gim
            h = [(e["gpu"], e["change"], e["old"], e["new"], e["result"]) for e in d.history()]
            self.assertEqual(h, [(b, "gim_vf_num", "8,8,8,8,8,8,8,8", "1,8,8,8,8,8,8,8", "ok")
                                 for b in MI300X_BDFS])

            # the CLI through amdsmid: exit 8 as in-process, the document says what was written
            doc, p = self.cli_json(d, "sriov", "set", "-g", 1, "--num-vfs", 1, "--persist",
                                   status=8)
            self.assertIn("waits for gim's next load", p.stderr)
            self.assertEqual((doc["result"]["errno"], doc["result"]["exit_code"]), ("ERESTART", 8))
            self.assertEqual(doc["gpus"][0]["persist"]["written"], True)
            self.assertIn("options gim vf_num=1,1,8,8,8,8,8,8\n", self.ns_file(d))
            p = d.cli("sriov", "set", "-g", 1, "--num-vfs", 8, "--persist", status=8)
            self.assertIn("wrote %s: options gim vf_num=1,8,8,8,8,8,8,8\n" % OWN, p.stdout)

            # outside gim's layouts (MI300X: 1 or 8): OutOfRange; FORCE writes it
            name, msg = self.set_error(d, P0, 2, PERSIST)
            self.assertEqual(name, "org.amdsmi1.Error.OutOfRange")
            self.assertIn("gim supports 1 (SPX/NPS1) or 8 (CPX/NPS4) VFs on MI300X", msg)
            p = d.cli("sriov", "set", "-g", 0, "--num-vfs", 2, "--persist", status=7)
            self.assertIn("--force writes it anyway", p.stderr)
            p = d.cli("sriov", "set", "-g", 0, "--num-vfs", 2, "--persist", "--force", status=8)
            self.assertIn("warning: GPU 0 (%s): gim supports" % GPU0, p.stderr)
            self.assertIn("options gim vf_num=2,8,8,8,8,8,8,8\n", self.ns_file(d))
            # back to what gim runs with: nothing pending, exit 0
            d.cli("sriov", "set", "-g", 0, "--num-vfs", 8, "--persist")
            self.assertIn("options gim vf_num=8,8,8,8,8,8,8,8\n", self.ns_file(d))

            # another file sets vf_num: Busy, nothing written
            with open("/proc/%d/root/etc/modprobe.d/gim.conf" % d.proc.pid, "w") as f:
                f.write("options gim vf_num=4\n")
            own = self.ns_file(d)
            name, msg = self.set_error(d, P0, 1, PERSIST)
            self.assertEqual(name, "org.amdsmi1.Error.Busy")
            self.assertIn("gim's vf_num is set in /etc/modprobe.d/gim.conf:1 already", msg)
            d.cli("sriov", "set", "-g", 0, "--num-vfs", 1, "--persist", status=5)
            self.assertEqual(self.ns_file(d), own)
            self.assertEqual(self.state(m), before)

            # denied as nobody; allowed by polkit
            name, _ = self.set_error(d, P0, 1, PERSIST, user=NOBODY)
            self.assertEqual(name, "org.amdsmi1.Error.PermissionDenied")
            os.unlink("/proc/%d/root/etc/modprobe.d/gim.conf" % d.proc.pid)
            d.allow(ACTION)
            d.cli("sriov", "set", "-g", 0, "--num-vfs", 1, "--persist", user=NOBODY, status=8)
            self.assertIn("options gim vf_num=1,8,8,8,8,8,8,8\n", self.ns_file(d))
            self.assertEqual(d.history()[-1]["uid"], 65534)

    # ---- amdsmid.conf and recovery ---------------------------------------------------------

    def test_num_vfs_notice(self):
        conf = "[gpu %s]\nnum_vfs = 4\n[gpu %s]\nnum_vfs = 0\n" % (GPU0, GPU1)
        with Daemon(machine="mi300x-sriov", config=conf) as d:
            self.assertIn("%s: 4 VFs desired, 0 present: amdsmi sriov set -g %s --num-vfs 4"
                          % (GPU0, GPU0), d.log())
            self.assertNotIn("%s: 0 VFs desired" % GPU1, d.log())
            # never a change of its own
            self.assertEqual(d.get(P0, IFACE_SRIOV, "NumVfs"), 0)
            self.assertEqual(self.numvfs(d.mount), 0)
            self.assertEqual(d.history(), [])
            # Reload: changed keys only
            d.write_config("[gpu %s]\nnum_vfs = 4\n[gpu %s]\nnum_vfs = 2\n" % (GPU0, GPU1))
            d.call(ROOT, MANAGER, "Reload")
            log = d.log()
            self.assertEqual(log.count("4 VFs desired"), 1, log)
            self.assertIn("%s: 2 VFs desired, 0 present: amdsmi sriov set -g %s --num-vfs 2"
                          % (GPU1, GPU1), log)
            self.assertEqual(self.numvfs(d.mount, GPU1), 0)
            self.assertEqual(d.history(), [])
        with Daemon(machine="mi300x-gim-8vf", config="[gpu]\nnum_vfs = 1\n") as d:
            log = d.log()
            for bdf in MI300X_BDFS:
                self.assertIn("%s: 1 VFs desired, 8 present: gim sets the VF count when it "
                              "loads: amdsmi sriov set -g %s --num-vfs 1 --persist" % (bdf, bdf),
                              log)
            # [gpu] covers the VFs too: nothing said about them
            self.assertNotIn(vf_bdf(GPU0, 0) + ": 1 VFs desired", log)
            self.assertEqual(d.history(), [])

    def write_intent(self, d, n, gpu, change, old, new):
        usec = int(time.time() * 1e6) - 1000000 + n
        rid = "%d-%d-%d" % (usec, 4242, n)
        path = os.path.join(d.state_dir, "intent")
        os.makedirs(path, exist_ok=True)
        with open(os.path.join(path, rid + ".json"), "w") as f:
            json.dump({"id": rid, "time": "2026-01-01T00:00:00.000Z", "time_usec": usec,
                       "pid": 4242, "gpu": gpu, "change": change, "old": old, "new": new,
                       "detail": None}, f)

    def test_sigkill_mid_change_leaves_one_record(self):
        with Daemon(machine="mi300x-sriov") as d:
            d.kill_during(d.mount.gpu(GPU0, "sriov_numvfs"), P0, IFACE_SRIOV, "SetNumVfs", "ut", 2, 0)
            self.assertEqual(os.listdir(os.path.join(d.state_dir, "intent")), [])
            r = d.recoveries()
            self.assertEqual(len(r), 1, r)
            self.assertEqual((r[0][0], r[0][1], r[0][3]), (GPU0, "num_vfs 0 -> 2", "ok"))
            self.assertIn("the interrupted change of the VF count to 2", r[0][4])

    def test_recover(self):
        with Daemon(machine="mi300x-sriov", start=False) as d:
            m = d.mount
            self.assertEqual(m.write(m.gpu(GPU0, "sriov_numvfs"), "3"), 0)
            vf0, vf1, vf2 = (vf_bdf(GPU0, i) for i in range(3))
            # vf0: a bind cut off after driver_override; vf1: bound; vf2: untouched
            self.assertEqual(m.write(m.gpu(vf0, "driver_override"), "vfio-pci"), 0)
            self.assertEqual(m.write(m.gpu(vf1, "driver_override"), "vfio-pci"), 0)
            self.assertEqual(m.write("bus/pci/drivers_probe", vf1), 0)
            self.assertEqual(self.driver(m, vf1), "vfio-pci")
            self.write_intent(d, 1, GPU0, "num_vfs", "0", "3")
            self.write_intent(d, 2, GPU1, "num_vfs", "0", "4")
            self.write_intent(d, 3, GPU0, "bind_vf", vf0 + " none", vf0 + " vfio-pci")
            self.write_intent(d, 4, GPU0, "bind_vf", vf1 + " none", vf1 + " vfio-pci")
            self.write_intent(d, 5, GPU0, "bind_vf", vf2 + " none", vf2 + " vfio-pci")
            self.write_intent(d, 6, GPU0, "release_vf", vf1 + " vfio-pci", vf1 + " released")
            self.write_intent(d, 7, GPU0, "release_vf", vf2 + " vfio-pci", vf2 + " released")
            d.start()
            log = d.log()
            for text in (
                    "%s: the interrupted change of the VF count to 3 completed" % GPU0,
                    "%s: the interrupted change of the VF count to 4 was not applied: 0 VFs "
                    "present" % GPU1,
                    "the interrupted bind of %s to vfio-pci was rolled back" % vf0,
                    "the interrupted bind of %s to vfio-pci completed" % vf1,
                    "the interrupted bind of %s to vfio-pci was not applied (driver none)" % vf2,
                    "the interrupted release of %s was not applied: it is bound to vfio-pci"
                    % vf1,
                    "the interrupted release of %s completed (driver none)" % vf2):
                self.assertIn(text, log)
            self.assertNotIn("nothing knows how to recover", log)
            # the rolled back bind: no override left, no driver; the others as they were
            self.assertEqual(m.value(m.gpu(vf0, "driver_override")), "(null)")
            self.assertIsNone(self.driver(m, vf0))
            self.assertEqual(self.driver(m, vf1), "vfio-pci")
            self.assertEqual(self.numvfs(m), 3)
            self.assertEqual(self.numvfs(m, GPU1), 0)
            self.assertEqual(os.listdir(os.path.join(d.state_dir, "intent")), [])
            # exactly one history record per intent, the rolled back bind among them
            h = sorted((g, old, new, result) for g, old, new, result, _ in d.recoveries())
            self.assertEqual(h, sorted([
                (GPU0, "num_vfs 0 -> 3", "recovered", "ok"),
                (GPU1, "num_vfs 0 -> 4", "recovered", "ok"),
                (GPU0, "bind_vf %s none -> %s vfio-pci" % (vf0, vf0), "recovered", "ok"),
                (GPU0, "bind_vf %s none -> %s vfio-pci" % (vf1, vf1), "recovered", "ok"),
                (GPU0, "bind_vf %s none -> %s vfio-pci" % (vf2, vf2), "recovered", "ok"),
                (GPU0, "release_vf %s vfio-pci -> %s released" % (vf1, vf1), "recovered", "ok"),
                (GPU0, "release_vf %s vfio-pci -> %s released" % (vf2, vf2), "recovered",
                 "ok")]))
            self.assertEqual(len(d.history()), 7)
            msg = [m for _, old, _, _, m in d.recoveries() if old.startswith("bind_vf " + vf0)]
            self.assertIn("the interrupted bind of %s to vfio-pci was rolled back" % vf0, msg[0])
            # the daemon runs on with the VF objects
            self.assertEqual(d.get(P0, IFACE_SRIOV, "NumVfs"), 3)
            self.assertEqual(d.get(gpu_path(vf0), IFACE_GPU, "Role"), "vf")


if __name__ == "__main__":
    require_daemon()
    unittest.main(verbosity=2)
