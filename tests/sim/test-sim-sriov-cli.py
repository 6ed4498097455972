#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""amdsmi sriov / sriov set / bind / release end to end: the real CLI and library on simulator
mounts (AMDSMI_SYSFS_ROOT=<mount>, a fresh RUNTIME_DIRECTORY and STATE_DIRECTORY each), every
--json document validated against the schema.

Reads on bare metal, on a gim host with 8 VFs per GPU, on the synthetic mi300x-sriov host after
a change and in a VM; VF selection; VFIO users (a process holding <AMDSMI_DEV_ROOT>/vfio/N).
The generic VF count (0 -> 4 -> 2, over the total, blocked by a VF on vfio-pci and forced,
--autoprobe-off, --dry-run); gim hosts without --persist; gim's modprobe file with --persist in
a private mount namespace (an overlay over /etc, a tmpfs over every modprobe.d directory): its
exact text, gim's order, the other GPUs' values, values kept between commands, refusal on a
conflicting file, a FIFO, directory or link in its place refused by name, dry run, the
initramfs reminder. Bind and release round trips; bad VF arguments refused before anything is
written; unprivileged callers refused."""

import json
import os
import re
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from simtest import CLI, MI300X_BDFS, NOBODY, Mount, SchemaCase, main, tmpdir, vf_bdf  # noqa: E402


GPU0, GPU1 = MI300X_BDFS[0], MI300X_BDFS[1]
MODPROBE_DIRS = ["/etc/modprobe.d", "/run/modprobe.d", "/usr/local/lib/modprobe.d",
                 "/lib/modprobe.d", "/usr/lib/modprobe.d"]
OWN = "/etc/modprobe.d/amdsmi-gim.conf"
STAMP = re.compile(r"^# Written by amdsmi on (\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ): ")


def gim_file(entries, order="PCI address order (enabled_devices is not set)",
             stamp="STAMP"):
    """The exact text amdsmi writes, for [(bdf, vf_num)] in gim's order."""
    text = ("# Written by amdsmi on %s: the VF count of each GPU under gim, read when gim\n"
            "# loads. amdsmi rewrites this file: change it with\n"
            "#   amdsmi sriov set -g GPU --num-vfs N --persist\n"
            "# gim's order of the GPUs: %s\n" % (stamp, order))
    for bdf, n in entries:
        text += "# vf_num %s %d\n" % (bdf, n)
    return text + "options gim vf_num=%s\n" % ",".join(str(n) for _, n in entries)


def host_modprobe_state():
    """What the host has in the modprobe directories (never changed by a test)."""
    out = {}
    for d in MODPROBE_DIRS + ["/etc/modprobe.conf"]:
        if os.path.isdir(d):
            out[d] = sorted((n, os.lstat(os.path.join(d, n)).st_mtime_ns) for n in os.listdir(d))
        else:
            out[d] = os.path.exists(d)
    return out


# ---- the private mount namespace ---------------------------------------------------------
#
# This file runs itself as `unshare -m --propagation private python3 THIS --namespace SPEC`:
# the helper mounts an overlay over /etc (changes stay in the namespace's upper directory) and
# an empty tmpfs over each modprobe.d directory (made inside an overlay of its parent when it
# does not exist), checks that every one of them is a private mount, creates the files of the
# spec, runs the commands and prints their results and every file of those directories as JSON.
# If any mount fails, nothing runs.

def namespace_helper(spec_path):
    with open(spec_path) as f:
        spec = json.load(f)
    tmp = spec["tmp"]

    def run(*args):
        subprocess.run(list(args), check=True, capture_output=True)

    overlaid = []

    def overlay(path):
        name = path.strip("/").replace("/", "_")
        up, work = os.path.join(tmp, name + ".up"), os.path.join(tmp, name + ".work")
        os.makedirs(up)
        os.makedirs(work)
        run("mount", "-t", "overlay", "overlay", "-o",
            "lowerdir=%s,upperdir=%s,workdir=%s" % (path, up, work), path)
        overlaid.append(path)

    run("mount", "--make-rprivate", "/")
    overlay("/etc")
    for d in MODPROBE_DIRS:
        if not os.path.isdir(d):
            parent = os.path.dirname(d)
            while not os.path.isdir(parent):
                parent = os.path.dirname(parent)
            if parent in ("/", "/usr"):
                raise SystemExit("no safe place to make %s" % d)
            if not any(parent == o or parent.startswith(o + "/") for o in overlaid):
                overlay(parent)
            os.makedirs(d)
        run("mount", "-t", "tmpfs", "-o", "mode=0755", "tmpfs", d)
    for d in MODPROBE_DIRS + ["/etc"]:
        if not os.path.ismount(os.path.realpath(d)):
            raise SystemExit("%s is not a private mount" % d)
    # the host's own files that amdsmi reads are hidden (whiteouts in the overlay)
    for path in ("/etc/modprobe.conf", "/etc/dracut.conf"):
        if os.path.lexists(path):
            os.unlink(path)
    for path in ("/etc/initramfs-tools", "/etc/dracut.conf.d"):
        if os.path.lexists(path):
            shutil.rmtree(path)

    for path, text in spec.get("files", {}).items():
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text)
    # what is not a file: "fifo", "dir" or "link:TARGET"
    for path, kind in spec.get("special", {}).items():
        os.makedirs(os.path.dirname(path), exist_ok=True)
        if kind == "fifo":
            os.mkfifo(path, 0o644)
        elif kind == "dir":
            os.mkdir(path, 0o755)
        else:
            os.symlink(kind[len("link:"):], path)
    runs = []
    for cmd in spec["commands"]:
        p = subprocess.run(cmd, env=spec["env"], capture_output=True, text=True, timeout=120)
        runs.append({"rc": p.returncode, "stdout": p.stdout, "stderr": p.stderr})
    files, seen = {}, set()
    for d in MODPROBE_DIRS + ["/etc/initramfs-tools"]:
        if os.path.realpath(d) in seen:          # /lib is a link to /usr/lib
            continue
        seen.add(os.path.realpath(d))
        if os.path.isdir(d):
            for name in sorted(os.listdir(d)):
                full = os.path.join(d, name)
                if os.path.islink(full) or not os.path.isfile(full):
                    files[full] = "<not a regular file>"    # never opened: a FIFO would hang
                    continue
                with open(full, errors="replace") as f:
                    files[full] = f.read()
    if os.path.exists("/etc/modprobe.conf"):
        with open("/etc/modprobe.conf") as f:
            files["/etc/modprobe.conf"] = f.read()
    json.dump({"runs": runs, "files": files}, sys.stdout)


class Case(SchemaCase):
    maxDiff = None

    def setUp(self):
        self.rt = tmpdir(self, "amdsmi-rt.")
        self.st = tmpdir(self, "amdsmi-state.")
        self.dev = None
        self.host_modprobe = host_modprobe_state()

    def tearDown(self):
        self.assertEqual(host_modprobe_state(), self.host_modprobe,
                         "the host's modprobe configuration changed")

    def env(self, m):
        env = dict(os.environ, AMDSMI_SYSFS_ROOT=m.root, RUNTIME_DIRECTORY=self.rt,
                   STATE_DIRECTORY=self.st)
        env.pop("AMDSMI_DEBUG", None)
        env.pop("AMDSMI_DEV_ROOT", None)
        if self.dev:
            env["AMDSMI_DEV_ROOT"] = self.dev
        return env

    def check_doc(self, text, what):
        d = json.loads(text)
        self.assert_valid(d, "%s --json" % what)
        return d

    def cli(self, m, *args, status=0, user=None, has=()):
        p = subprocess.run((user or []) + [CLI] + [str(a) for a in args], env=self.env(m),
                           capture_output=True, text=True, timeout=120)
        what = "amdsmi %s: exit %d, stdout %r, stderr %r" % (" ".join(map(str, args)),
                                                              p.returncode, p.stdout[-3000:],
                                                              p.stderr)
        self.assertEqual(p.returncode, status, what)
        for s in has:
            self.assertIn(s, p.stdout + p.stderr, what)
        return p

    def doc(self, m, *args, status=0, user=None, has=()):
        p = self.cli(m, *(list(args) + ["--json"]), status=status, user=user, has=has)
        return self.check_doc(p.stdout, "amdsmi " + " ".join(map(str, args)))

    def sriov(self, m, *args):
        return self.doc(m, "sriov", *args)["gpus"]

    # ---- the simulator's state ----------------------------------------------------------

    def driver(self, m, bdf):
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

    def runtime_files(self):
        out = []
        for dirpath, dirnames, filenames in os.walk(self.rt):
            out += [os.path.relpath(os.path.join(dirpath, n), self.rt) for n in filenames]
        return sorted(out)

    def hold_vfio(self, m, vf):
        """A process holding <dev root>/vfio/<group of @vf>, as QEMU does; killed at cleanup."""
        if not self.dev:
            self.dev = tmpdir(self, "amdsmi-dev.", 0o700)
            os.makedirs(os.path.join(self.dev, "vfio"))
        group = os.path.basename(os.readlink(m.path("bus/pci/devices/%s/iommu_group" % vf)))
        node = os.path.join(self.dev, "vfio", group)
        with open(node, "w"):
            pass
        f = open(node)
        p = subprocess.Popen(["sleep", "300"], stdin=f)
        f.close()
        self.addCleanup(self.let_go, p)
        return p

    @staticmethod
    def let_go(p):
        if p.poll() is None:
            p.kill()
            p.wait()

    # ---- the namespace runner -------------------------------------------------------------

    def in_namespace(self, m, commands, files=None, special=None):
        """Runs amdsmi COMMANDS (lists of arguments) one after the other in a private mount
        namespace with empty modprobe directories and FILES {path: text} created first, and
        SPECIAL {path: "fifo" | "dir" | "link:TARGET"}.
        @return ([CompletedProcess-like dicts], {path: text} of the modprobe directories)."""
        tmp = tmpdir(self, "amdsmi-ns.", 0o700)
        spec = {"tmp": tmp, "files": files or {}, "special": special or {}, "env": self.env(m),
                "commands": [[CLI] + [str(a) for a in c] for c in commands]}
        path = os.path.join(tmp, "spec.json")
        with open(path, "w") as f:
            json.dump(spec, f)
        p = subprocess.run(["unshare", "-m", "--propagation", "private", sys.executable,
                            os.path.abspath(__file__), "--namespace", path],
                           capture_output=True, text=True, timeout=300)
        self.assertEqual(p.returncode, 0, "namespace helper: %s %s" % (p.stdout, p.stderr))
        out = json.loads(p.stdout)
        return out["runs"], out["files"]

    def file_text(self, text):
        """Our file with its time stamp (checked: now, in UTC) replaced by STAMP."""
        first = text.splitlines()[0]
        match = STAMP.match(first)
        self.assertIsNotNone(match, first)
        t = time.mktime(time.strptime(match.group(1), "%Y-%m-%dT%H:%M:%SZ")) - time.timezone
        self.assertLess(abs(t - time.time()), 600, match.group(1))
        return text.replace(match.group(1), "STAMP", 1)

    # ---- reads --------------------------------------------------------------------------

    def test_read_baremetal(self):
        with Mount("-m", "mi300x-8") as m:
            gpus = self.sriov(m)
            self.assertEqual([g["bdf"] for g in gpus], MI300X_BDFS)
            for i, g in enumerate(gpus):
                self.assertEqual((g["gpu"], g["role"], g["driver"], g["pf_driver"]),
                                 (i, "baremetal", "amdgpu", "amdgpu"))
                self.assertEqual((g["capable"], g["total_vfs"], g["num_vfs"], g["offset"],
                                  g["stride"], g["vf_device"], g["autoprobe"]),
                                 (True, 8, 0, 16, 1, "0x74b5", True))
                self.assertEqual((g["gim_vf_num"], g["vf_modes"], g["vfs"]), (None, None, []))
                self.assertEqual((g["compute_mode"], g["memory_mode"]), ("SPX", "NPS1"))
            # table: one line per PF, no VF lines; CSV: one row per PF with empty VF cells
            t = self.cli(m, "sriov").stdout.splitlines()
            self.assertEqual(len(t), 9)
            self.assertTrue(t[0].startswith("GPU  BDF"), t[0])
            self.assertNotIn("IOMMU GROUP", "\n".join(t))
            c = self.cli(m, "sriov", "--csv").stdout.splitlines()
            head = c[0].split(",")
            self.assertEqual(len(head), len(set(head)), "CSV column names are unique")
            self.assertEqual(len(c), 9)
            row = dict(zip(head, c[1].split(",")))
            self.assertEqual((row["bdf"], row["num_vfs"], row["total_vfs"], row["vf_bdf"],
                              row["vf_driver"]), (GPU0, "0", "8", "", ""))
            # reads need no privilege and write nothing
            before = self.state(m)
            self.doc(m, "sriov", user=NOBODY)
            self.assertEqual(self.state(m), before)
            self.assertEqual(self.runtime_files(), [])
            # no PF driver with sriov_configure: the library explains, nothing written
            d = self.doc(m, "sriov", "set", "-g", 0, "--num-vfs", 2, status=4)
            self.assertEqual(d["result"]["errno"], "EOPNOTSUPP")
            self.assertEqual(self.state(m), before)

    def test_read_gim(self):
        with Mount("-m", "mi300x-gim-8vf") as m:
            gpus = self.sriov(m)
            self.assertEqual([g["bdf"] for g in gpus], MI300X_BDFS)
            index = 0
            for g in gpus:
                self.assertEqual(g["gpu"], index)
                self.assertEqual((g["role"], g["driver"], g["config"], g["pf_driver"]),
                                 ("host-pf", "gim", "gim-param", "gim"))
                self.assertEqual((g["total_vfs"], g["num_vfs"], g["gim_vf_num"]), (8, 8, 8))
                self.assertEqual((g["compute_mode"], g["memory_mode"]), ("CPX", "NPS4"))
                self.assertEqual(g["vf_modes"], [
                    {"vfs": 1, "compute_mode": "SPX", "memory_mode": "NPS1", "current": False},
                    {"vfs": 8, "compute_mode": "CPX", "memory_mode": "NPS4", "current": True}])
                self.assertEqual([v["bdf"] for v in g["vfs"]],
                                 [vf_bdf(g["bdf"], i) for i in range(8)])
                for i, v in enumerate(g["vfs"]):
                    self.assertEqual((v["index"], v["gpu"], v["driver"], v["vfio_viable"]),
                                     (i, 8 + 8 * index + i, "vfio-pci", True))
                    group = os.path.basename(os.readlink(
                        m.path("bus/pci/devices/%s/iommu_group" % v["bdf"])))
                    self.assertEqual(v["iommu_group"], int(group))
                    # no AMDSMI_DEV_ROOT with a simulator root: device nodes are not looked at
                    self.assertEqual((v["in_use"], v["users"], v["n_users"]), (None, [], 0))
                index += 1
            # a VF selected: its PF with that VF only; a PF and a VF: the PF with all its VFs
            g = self.sriov(m, "-g", vf_bdf(GPU1, 3))
            self.assertEqual([(x["bdf"], [v["bdf"] for v in x["vfs"]]) for x in g],
                             [(GPU1, [vf_bdf(GPU1, 3)])])
            # PFs are GPUs 0-7, the VFs follow: 8 and 9 are GPU 0's first two VFs
            g = self.sriov(m, "-g", "8,9,1")
            self.assertEqual([(x["bdf"], len(x["vfs"])) for x in g], [(GPU0, 2), (GPU1, 8)])
            self.assertEqual([v["index"] for v in g[0]["vfs"]], [0, 1])
            # table: the PF line, then its VFs indented
            t = self.cli(m, "sriov", "-g", 0).stdout.splitlines()
            self.assertEqual(len(t), 2 + 1 + 8, t)
            self.assertIn("1=SPX/NPS1 8=CPX/NPS4*", t[1])
            self.assertTrue(t[2].startswith("      VF  BDF"), t[2])
            self.assertIn(vf_bdf(GPU0, 7), t[10])
            self.assertIn("vfio-pci", t[10])
            # CSV: one row per VF with the PF's columns
            c = self.cli(m, "sriov", "--csv").stdout.splitlines()
            head = c[0].split(",")
            self.assertEqual(len(head), len(set(head)))
            self.assertEqual(len(c), 1 + 64)
            rows = [dict(zip(head, line.split(","))) for line in c[1:]]
            self.assertEqual([(r["bdf"], r["vf_bdf"]) for r in rows[:9]],
                             [(GPU0, vf_bdf(GPU0, i)) for i in range(8)] +
                             [(GPU1, vf_bdf(GPU1, 0))])
            self.assertEqual((rows[0]["config"], rows[0]["gim_vf_num"], rows[0]["vf_driver"],
                              rows[0]["vf_in_use"]), ("gim-param", "8", "vfio-pci", ""))

            # VFIO users: a process holding the group's node under AMDSMI_DEV_ROOT
            vf = vf_bdf(GPU1, 2)
            pid = self.hold_vfio(m, vf).pid
            g = self.sriov(m, "-g", 9)[0]
            for v in g["vfs"]:
                if v["bdf"] == vf:
                    self.assertEqual((v["in_use"], v["users"], v["n_users"]),
                                     (True, [{"pid": pid, "comm": "sleep"}], 1))
                else:
                    self.assertEqual((v["in_use"], v["users"]), (False, []))
            t = self.cli(m, "sriov", "-g", vf).stdout
            self.assertIn("yes: %d (sleep)" % pid, t)

    def test_read_guest(self):
        with Mount("-m", "mi300x-guest-1vf") as m:
            d = self.doc(m, "sriov")
            self.assertEqual(d["gpus"], [])
            p = self.cli(m, "sriov", "-g", 0, has=["is a VF inside a guest"])
            self.assertEqual(p.stdout, "")
            d = self.doc(m, "sriov", "set", "-g", 0, "--num-vfs", 1, status=4,
                         has=["set on the host"])
            self.assertEqual(d["error"]["errno"], "EOPNOTSUPP")

    # ---- sriov set: the sysfs path ------------------------------------------------------

    def test_set_generic(self):
        with Mount("-m", "mi300x-sriov") as m:
            numvfs = m.gpu(GPU0, "sriov_numvfs")
            # 0 -> 4
            d = self.doc(m, "sriov", "set", "-g", 0, "--num-vfs", 4)
            self.assertEqual((d["command"], d["dry_run"], d["result"]["exit_code"]),
                             ("sriov set", False, 0))
            e = d["gpus"][0]
            self.assertEqual((e["bdf"], e["config"], e["num_vfs_requested"], e["result"]),
                             (GPU0, "sysfs", 4, None))
            r = e["report"]
            self.assertEqual((r["stage"], r["vfs_before"], r["vfs_after"], r["changed"],
                              r["wrote_zero"], r["autoprobe_off"], r["blockers"]),
                             ("done", 0, 4, True, False, False, []))
            self.assertEqual(e["vfs"], [vf_bdf(GPU0, i) for i in range(4)])
            self.assertEqual(m.value(numvfs), "4")
            # the read after the change: VFs with their links, unbound, each in its group
            g = self.sriov(m, "-g", 0)[0]
            self.assertEqual((g["role"], g["num_vfs"]), ("host-pf", 4))
            self.assertEqual([(v["bdf"], v["index"], v["gpu"], v["driver"]) for v in g["vfs"]],
                             [(vf_bdf(GPU0, i), i, 8 + i, "none") for i in range(4)])
            # an unbound VF's driver is "none" in every verb, never null in one of them
            for verb in ("list", "static"):
                d = self.doc(m, verb, "-g", vf_bdf(GPU0, 0))
                self.assertEqual(d["gpus"][0]["driver"], "none", verb)
            self.assertEqual(len({v["iommu_group"] for v in g["vfs"]}), 4)
            self.assertEqual(len(self.sriov(m)), 8)               # VFs are no PF lines
            # 4 -> 2: 0 written first (the kernel's EBUSY rule); the table says so
            p = self.cli(m, "sriov", "set", "-g", GPU0, "--num-vfs", 2,
                         has=["GPU 0 (%s): VFs 4 -> 2 (0 written first" % GPU0])
            self.assertIn("amdsmid is not running", p.stderr)
            self.assertEqual(m.value(numvfs), "2")
            self.assertFalse(os.path.exists(m.path(m.gpu(vf_bdf(GPU0, 2)))))
            # the same count: nothing to do
            d = self.doc(m, "sriov", "set", "-g", 0, "--num-vfs", 2)
            self.assertEqual((d["gpus"][0]["report"]["changed"],
                              d["gpus"][0]["report"]["wrote_zero"]), (False, False))
            # over the total: 7, nothing changes
            before = self.state(m)
            d = self.doc(m, "sriov", "set", "-g", 0, "--num-vfs", 9, status=7)
            self.assertEqual(d["result"]["errno"], "ERANGE")
            self.assertEqual(d["gpus"][0]["report"]["stage"], "preflight")
            self.assertEqual(self.state(m), before)
            self.cli(m, "sriov", "set", "-g", 0, "--num-vfs", 70000, status=7)
            self.assertEqual(self.state(m), before)
            # --dry-run: the plan, exit 0, nothing written
            d = self.doc(m, "sriov", "set", "-g", 0, "--num-vfs", 5, "--dry-run")
            self.assertEqual((d["dry_run"], d["result"]["exit_code"]), (True, 0))
            self.assertEqual(d["gpus"][0]["report"]["changed"], False)
            self.cli(m, "sriov", "set", "-g", 0, "--num-vfs", 5, "--dry-run",
                     has=["dry run: VFs 2 -> 5 is possible now"])
            self.assertEqual(self.state(m), before)
            # --autoprobe-off: sriov_drivers_autoprobe 0 before the VFs come
            self.assertEqual(self.sriov(m, "-g", 1)[0]["bdf"], GPU1)  # VFs renumber no PF
            d = self.doc(m, "sriov", "set", "-g", 8, "--num-vfs", 3, status=2)  # a VF
            self.assertIn("is a VF: the VF count is set on its PF, GPU 0", d["error"]["message"])
            d = self.doc(m, "sriov", "set", "-g", GPU1, "--num-vfs", 3, "--autoprobe-off")
            self.assertEqual(d["gpus"][0]["report"]["autoprobe_off"], True)
            self.assertEqual(m.value(m.gpu(GPU1, "sriov_drivers_autoprobe")), "0")
            self.assertEqual(m.value(m.gpu(GPU1, "sriov_numvfs")), "3")
            self.assertEqual(self.sriov(m, "-g", GPU1)[0]["autoprobe"], False)
            # -g all: every PF, the VFs skipped; several PFs in one command
            d = self.doc(m, "sriov", "set", "-g", "all", "--num-vfs", 1)
            self.assertEqual([e["bdf"] for e in d["gpus"]], MI300X_BDFS)
            self.assertEqual([e["report"]["vfs_after"] for e in d["gpus"]], [1] * 8)
            self.assertEqual([e["vfs"] for e in d["gpus"]],
                             [[vf_bdf(b, 0)] for b in MI300X_BDFS])
            # CSV of a change
            c = self.cli(m, "sriov", "set", "-g", 0, "--num-vfs", 0, "--csv").stdout
            lines = c.splitlines()
            head = lines[0].split(",")
            self.assertEqual(len(head), len(set(head)))
            rows = [dict(zip(head, x.split(","))) for x in lines[1:]]
            self.assertEqual([(r["bdf"], r["vfs_before"], r["vfs_after"], r["dry_run"])
                              for r in rows], [(GPU0, "1", "0", "false")])

    def test_set_blocked(self):
        with Mount("-m", "mi300x-sriov") as m:
            self.cli(m, "sriov", "set", "-g", 0, "--num-vfs", 2)
            vf = vf_bdf(GPU0, 1)
            self.cli(m, "sriov", "bind", vf, has=["%s: none -> vfio-pci" % vf])
            before = self.state(m)
            # a VF on vfio-pci blocks: 5, the VF named
            d = self.doc(m, "sriov", "set", "-g", 0, "--num-vfs", 0, status=5)
            r = d["gpus"][0]["report"]
            self.assertEqual((d["result"]["errno"], r["stage"], r["n_blockers"]),
                             ("EBUSY", "preflight", 1))
            self.assertEqual(r["blockers"], [{"bdf": vf, "vfio": True, "in_use": False,
                                              "pid": None, "comm": None}])
            self.assertEqual(self.state(m), before)
            # ... and in use: the PID and its command
            pid = self.hold_vfio(m, vf).pid
            self.cli(m, "sriov", "set", "-g", 0, "--num-vfs", 4, status=5,
                         has=["VF %s is bound to vfio-pci, in use by PID %d (sleep)" % (vf, pid),
                              "--force"])
            d = self.doc(m, "sriov", "set", "-g", 0, "--num-vfs", 4, "--dry-run", status=5)
            self.assertEqual(d["gpus"][0]["report"]["blockers"][0]["pid"], pid)
            self.assertEqual(d["gpus"][0]["report"]["blockers"][0]["comm"], "sleep")
            self.assertEqual(self.state(m), before)
            # --force: done, 0 first
            d = self.doc(m, "sriov", "set", "-g", 0, "--num-vfs", 4, "--force")
            r = d["gpus"][0]["report"]
            self.assertEqual((r["changed"], r["wrote_zero"], r["vfs_after"]), (True, True, 4))
            self.assertEqual(m.value(m.gpu(GPU0, "sriov_numvfs")), "4")

    def test_set_vfio_pf(self):
        """A PF under vfio-pci with enable_sriov: its VFs come with driver_override vfio-pci and
        bound to it, so a later change is blocked until forced."""
        with Mount("-m", "mi300x-sriov") as m:
            self.assertEqual(m.write("bus/pci/drivers/amdgpu/unbind", GPU1), 0)
            self.assertEqual(m.write(m.gpu(GPU1, "driver_override"), "vfio-pci"), 0)
            self.assertEqual(m.write("bus/pci/drivers_probe", GPU1), 0)
            g = self.sriov(m, "-g", GPU1)[0]
            self.assertEqual((g["driver"], g["pf_driver"], g["config"], g["num_vfs"]),
                             ("vfio-pci", "vfio-pci", "sysfs", 0))
            d = self.doc(m, "sriov", "set", "-g", GPU1, "--num-vfs", 3)
            self.assertEqual(d["gpus"][0]["vfs"], [vf_bdf(GPU1, i) for i in range(3)])
            g = self.sriov(m, "-g", GPU1)[0]
            self.assertEqual([(v["driver"], v["driver_override"]) for v in g["vfs"]],
                             [("vfio-pci", "vfio-pci")] * 3)
            d = self.doc(m, "sriov", "set", "-g", GPU1, "--num-vfs", 1, status=5)
            self.assertEqual([b["bdf"] for b in d["gpus"][0]["report"]["blockers"]],
                             [vf_bdf(GPU1, i) for i in range(3)])
            self.assertEqual(m.value(m.gpu(GPU1, "sriov_numvfs")), "3")
            d = self.doc(m, "sriov", "set", "-g", GPU1, "--num-vfs", 1, "--force")
            self.assertEqual((d["gpus"][0]["report"]["wrote_zero"], d["gpus"][0]["vfs"]),
                             (True, [vf_bdf(GPU1, 0)]))

    # ---- sriov set on gim hosts ---------------------------------------------------------

    def test_gim_without_persist(self):
        with Mount("-m", "mi300x-gim-1vf") as m:
            before = self.state(m)
            d = self.doc(m, "sriov", "set", "-g", 0, "--num-vfs", 8, status=4)
            self.assertEqual(d["result"]["errno"], "EOPNOTSUPP")
            msg = d["result"]["message"]
            self.assertIn("vf_num", msg)
            self.assertIn("--persist", msg)
            self.assertEqual(d["gpus"][0]["report"]["message"] in msg, True)
            self.assertEqual(d["gpus"][0]["config"], "gim-param")
            self.cli(m, "sriov", "set", "-g", 0, "--num-vfs", 8, status=4,
                     has=["gim sets the VF count with its vf_num module parameter"])
            self.assertEqual(self.state(m), before)
            self.assertEqual(m.value(m.gpu(GPU0, "sriov_numvfs")), "1")

    def test_persist_not_gim(self):
        with Mount("-m", "mi300x-sriov") as m:
            runs, files = self.in_namespace(m, [
                ["sriov", "set", "-g", 0, "--num-vfs", 2, "--persist", "--json"]])
            self.assertEqual(runs[0]["rc"], 4, runs[0])
            d = self.check_doc(runs[0]["stdout"], "sriov set --persist")
            self.assertIn("not under gim", d["error"]["message"])
            self.assertEqual(files, {})
            self.assertEqual(m.value(m.gpu(GPU0, "sriov_numvfs")), "0")

    def test_persist_not_a_file(self):
        """A FIFO, a directory or a symbolic link at our modprobe file: --persist is refused
        at once, naming it, and leaves it alone (a FIFO used to hang amdsmi)."""
        with Mount("-m", "mi300x-gim-8vf") as m:
            for kind, name in (("fifo", "a FIFO"), ("dir", "a directory"),
                               ("link:/etc/modprobe.d/elsewhere", "a symbolic link")):
                with self.subTest(kind=kind):
                    start = time.monotonic()
                    runs, files = self.in_namespace(
                        m, [["sriov", "set", "-g", 0, "--num-vfs", 1, "--persist"]],
                        files={"/etc/modprobe.d/elsewhere": "options gim vf_num=2\n"},
                        special={OWN: kind})
                    self.assertLess(time.monotonic() - start, 60)
                    self.assertNotEqual(runs[0]["rc"], 0, runs[0])
                    self.assertIn("%s is %s, not a regular file" % (OWN, name),
                                  runs[0]["stderr"], runs[0])
                    self.assertEqual(files[OWN], "<not a regular file>")
                    self.assertEqual(files["/etc/modprobe.d/elsewhere"], "options gim vf_num=2\n")

    def test_persist(self):
        with Mount("-m", "mi300x-gim-8vf") as m:
            before = self.state(m)
            others = [(b, 8) for b in MI300X_BDFS]
            runs, files = self.in_namespace(m, [
                ["sriov", "set", "-g", 0, "--num-vfs", 1, "--persist", "--dry-run"],
                ["sriov", "set", "-g", 0, "--num-vfs", 1, "--persist", "--dry-run", "--json"],
                ["sriov", "set", "-g", 0, "--num-vfs", 1, "--persist"],
                ["sriov", "set", "-g", GPU1, "--num-vfs", 1, "--persist", "--json"],
                ["sriov", "set", "-g", 0, "--num-vfs", 2, "--persist"],
            ])
            expected1 = gim_file([(GPU0, 1)] + others[1:])
            expected2 = gim_file([(GPU0, 1), (GPU1, 1)] + others[2:])
            # dry run: the file it would write, on stdout; nothing written
            self.assertEqual(runs[0]["rc"], 0, runs[0])
            self.assertIn("dry run: amdsmi would write %s:\n" % OWN, runs[0]["stdout"])
            self.assertEqual(self.file_text(runs[0]["stdout"].split(":\n", 1)[1]), expected1)
            self.assertEqual(runs[1]["rc"], 0, runs[1])
            d = self.check_doc(runs[1]["stdout"], "sriov set --persist --dry-run")
            p = d["gpus"][0]["persist"]
            self.assertEqual((d["dry_run"], p["written"], p["path"], p["order"], p["conflicts"]),
                             (True, False, OWN, "pci_address", []))
            self.assertEqual(self.file_text(p["content"]), expected1)
            self.assertEqual(p["vf_num"][:2],
                             [{"bdf": GPU0, "vf_num": 1, "loaded": 8, "selected": True},
                              {"bdf": GPU1, "vf_num": 8, "loaded": 8, "selected": False}])
            # written: exit 8 (waits for gim's next load), the reminders
            self.assertEqual(runs[2]["rc"], 8, runs[2])
            out = runs[2]["stdout"]
            self.assertIn("wrote %s: options gim vf_num=1,8,8,8,8,8,8,8\n" % OWN, out)
            self.assertIn("gim's next load", out)
            self.assertIn("update-initramfs -u", out)
            self.assertIn("waits for gim's next load", runs[2]["stderr"])
            # another GPU later: the value written for GPU 0 stays
            self.assertEqual(runs[3]["rc"], 8, runs[3])
            d = self.check_doc(runs[3]["stdout"], "sriov set --persist")
            self.assertEqual((d["result"]["errno"], d["gpus"][0]["persist"]["written"]),
                             ("ERESTART", True))
            self.assertEqual(self.file_text(d["gpus"][0]["persist"]["content"]), expected2)
            # a count outside MI300X's layouts (1 or 8) is refused: nothing written
            self.assertEqual(runs[4]["rc"], 7, runs[4])
            self.assertIn("gim supports 1 (SPX/NPS1) or 8 (CPX/NPS4) VFs on MI300X",
                          runs[4]["stderr"])
            self.assertEqual(sorted(files), [OWN])
            self.assertEqual(self.file_text(files[OWN]), expected2)
            # nothing of the GPUs changed: gim reads vf_num when it loads
            self.assertEqual(self.state(m), before)

            # --force writes a count gim's table lacks; enabled_devices chooses the GPUs (in
            # PCI order, however it lists them);
            # a file of the same name in an earlier directory hides one that sets vf_num; the
            # initramfs loads gim
            order = list(reversed(MI300X_BDFS))
            runs, files = self.in_namespace(m, [
                ["sriov", "set", "-g", "0,1", "--num-vfs", 2, "--persist", "--force"],
            ], files={
                "/etc/modprobe.d/gim-devices.conf":
                    "# the GPUs gim drives\noptions gim enabled_devices=%s\n" % ";".join(order),
                "/etc/modprobe.d/gim.conf": "options gim sch_policy=2\n",
                "/lib/modprobe.d/gim.conf": "options gim vf_num=4\n",
                "/etc/initramfs-tools/modules": "# modules\ngim\n",
            })
            self.assertEqual(runs[0]["rc"], 8, runs[0])
            self.assertIn("warning: GPU 0 (%s): gim supports 1 (SPX/NPS1) or 8 (CPX/NPS4)" % GPU0,
                          runs[0]["stderr"])
            want = [(b, 2 if b in (GPU0, GPU1) else 8) for b in sorted(order)]
            self.assertEqual(self.file_text(files[OWN]), gim_file(
                want, order="PCI address order of the GPUs in enabled_devices "
                "(/etc/modprobe.d/gim-devices.conf:2)"))
            self.assertIn("gim is loaded from the initramfs (/etc/initramfs-tools/modules:2)",
                          runs[0]["stdout"])
            self.assertEqual(files["/lib/modprobe.d/gim.conf"], "options gim vf_num=4\n")
            self.assertEqual(files["/etc/modprobe.d/gim.conf"], "options gim sch_policy=2\n")

            # the same count gim runs with: written, nothing pending, exit 0
            runs, files = self.in_namespace(m, [
                ["sriov", "set", "-g", 0, "--num-vfs", 8, "--persist"]])
            self.assertEqual(runs[0]["rc"], 0, runs[0])
            self.assertEqual(self.file_text(files[OWN]), gim_file(others))

    def test_persist_conflicts(self):
        cases = [
            ("/lib/modprobe.d/gim.conf", "options gim sch_policy=1 vf_num=8\n", 1),
            ("/etc/modprobe.d/50-gim.conf", "# ours\n\noptions gim \\\n  vf_num=1,1\n", 3),
            ("/run/modprobe.d/gim.conf", "install gim /sbin/modprobe --ignore-install gim "
                                         "vf_num=8\n", 1),
            ("/usr/local/lib/modprobe.d/x.conf", "options gim vf-num=8\n", 1),
            ("/etc/modprobe.conf", "options gim vf_num=8\n", 1),
        ]
        with Mount("-m", "mi300x-gim-1vf") as m:
            for path, text, line in cases:
                with self.subTest(path=path):
                    runs, files = self.in_namespace(m, [
                        ["sriov", "set", "-g", 0, "--num-vfs", 8, "--persist"],
                        ["sriov", "set", "-g", 0, "--num-vfs", 8, "--persist", "--json"],
                        ["sriov", "set", "-g", 0, "--num-vfs", 8, "--persist", "--dry-run"],
                    ], files={path: text})
                    for r in runs:
                        self.assertEqual(r["rc"], 5, r)
                    self.assertIn("gim's vf_num is set in %s:%d already" % (path, line),
                                  runs[0]["stderr"])
                    d = self.check_doc(runs[1]["stdout"], "sriov set --persist")
                    p = d["gpus"][0]["persist"]
                    self.assertEqual((d["result"]["errno"], p["written"], p["content"]),
                                     ("EBUSY", False, None))
                    self.assertEqual([(c["path"], c["line"]) for c in p["conflicts"]],
                                     [(path, line)])
                    self.assertEqual(files, {path: text})     # untouched, ours not written

    # ---- bind / release -------------------------------------------------------------------

    def test_bind_release(self):
        with Mount("-m", "mi300x-gim-1vf") as m:
            vf = vf_bdf(GPU1, 0)
            d = m.gpu(vf)
            self.assertIsNone(self.driver(m, vf))
            before = self.state(m)
            # dry run: nothing changes
            doc = self.doc(m, "sriov", "bind", vf, "--dry-run")
            self.assertEqual((doc["dry_run"], doc["result"]["exit_code"]), (True, 0))
            p = self.cli(m, "sriov", "bind", vf, "--dry-run")
            self.assertEqual(p.stdout, "%s: dry run: none -> vfio-pci is possible now\n" % vf)
            p = self.cli(m, "sriov", "release", vf, "--dry-run")
            self.assertEqual(p.stdout, "%s: none (not bound to vfio-pci, nothing to do)\n" % vf)
            self.assertEqual(self.state(m), before)
            # bind, by the short address
            p = self.cli(m, "sriov", "bind", vf[5:])
            self.assertEqual(p.stdout, "%s: none -> vfio-pci\n" % vf)
            self.assertEqual((self.driver(m, vf), m.value(d + "/driver_override")),
                             ("vfio-pci", "vfio-pci"))
            self.assertTrue(os.path.exists(os.path.join(self.rt, "lock", GPU1)))
            # again: nothing to do
            doc = self.doc(m, "sriov", "bind", vf)
            e = doc["gpus"][0]
            self.assertEqual((doc["command"], e["gpu"], e["bdf"], e["pf_bdf"], e["operation"]),
                             ("sriov bind", 9, vf, GPU1, "bind"))
            self.assertEqual((e["report"]["changed"], e["report"]["driver_after"]),
                             (False, "vfio-pci"))
            self.assertEqual(self.sriov(m, "-g", vf)[0]["vfs"][0]["driver"], "vfio-pci")
            p = self.cli(m, "sriov", "release", vf, "--dry-run")
            self.assertEqual(p.stdout, "%s: dry run: vfio-pci -> the driver it had before is "
                             "possible now\n" % vf)
            self.assertEqual(self.driver(m, vf), "vfio-pci")
            # release while a process holds the group: 5; --force gives it back anyway
            holder = self.hold_vfio(m, vf)
            doc = self.doc(m, "sriov", "release", vf, status=5)
            self.assertEqual(doc["result"]["errno"], "EBUSY")
            self.assertEqual(self.driver(m, vf), "vfio-pci")
            p = self.cli(m, "sriov", "release", vf, "--force")
            self.assertEqual(p.stdout, "%s: vfio-pci -> none\n" % vf)
            self.assertEqual((self.driver(m, vf), m.value(d + "/driver_override")),
                             (None, "(null)"))
            self.assertEqual(self.state(m), before)
            # release again: nothing to do; CSV
            c = self.cli(m, "sriov", "release", vf, "--csv").stdout.splitlines()
            head = c[0].split(",")
            self.assertEqual(len(head), len(set(head)))
            row = dict(zip(head, c[1].split(",")))
            self.assertEqual((row["bdf"], row["operation"], row["changed"], row["result"]),
                             (vf, "release", "false", ""))
            # bind while a process holds the group: 5; a round trip by JSON once it is gone
            doc = self.doc(m, "sriov", "bind", vf, status=5)
            self.assertIn("is in use", doc["result"]["message"])
            self.assertEqual(self.state(m), before)
            self.let_go(holder)
            doc = self.doc(m, "sriov", "bind", vf)
            self.assertEqual(doc["gpus"][0]["report"]["driver_before"], "none")
            doc = self.doc(m, "sriov", "release", vf)
            self.assertEqual((doc["gpus"][0]["report"]["driver_before"],
                              doc["gpus"][0]["report"]["driver_after"]), ("vfio-pci", "none"))
            self.assertEqual(self.state(m), before)

    def test_bad_vf_arguments(self):
        cases = [
            ("mi300x-gim-1vf", [], 2, "'sriov bind' needs a VF"),
            ("mi300x-gim-1vf", ["0000:05:02"], 2, "invalid VF address '0000:05:02'"),
            ("mi300x-gim-1vf", ["zz:02.0"], 2, "invalid VF address"),
            ("mi300x-gim-1vf", ["../.."], 2, "invalid VF address '../..'"),
            ("mi300x-gim-1vf", ["0000:05:02.0/../../x"], 2, "invalid VF address"),
            ("mi300x-gim-1vf", ["05:02.0/.."], 2, "invalid VF address"),
            ("mi300x-gim-1vf", ["0000:05:02.8"], 2, "invalid VF address"),
            ("mi300x-gim-1vf", ["0000:05:02.0", "extra"], 2, "unexpected argument 'extra'"),
            ("mi300x-gim-1vf", ["-g", 1, "0000:05:02.0"], 2, "not -g"),
            ("mi300x-gim-1vf", ["0000:99:00.0"], 3, "no AMD GPU function at 0000:99:00.0"),
            ("mi300x-gim-1vf", ["0000:03:00.0"], 3, "no AMD GPU function at 0000:03:00.0"),
            ("mi300x-gim-1vf", ["0000:00:18.3"], 3, "no AMD GPU function at 0000:00:18.3"),
            ("mi300x-8-bmc", ["0000:02:00.0"], 3, "no AMD GPU function at 0000:02:00.0"),
            ("mi300x-gim-1vf", [GPU0], 2, "is a physical function"),
            ("mi300x-guest-1vf", ["0000:01:00.0"], 4, "VF inside a guest"),
        ]
        mounts = {}
        try:
            for preset, args, status, msg in cases:
                if preset not in mounts:
                    mounts[preset] = Mount("-m", preset).__enter__()
                m = mounts[preset]
                for verb in ("bind", "release"):
                    with self.subTest(preset=preset, args=args, verb=verb):
                        if preset == "mi300x-8-bmc":     # the BMC's VGA exists: not AMD
                            self.assertEqual(m.value("bus/pci/devices/0000:02:00.0/vendor"),
                                             "0x1a03")
                        before = self.state(m)
                        want = msg.replace("'sriov bind'", "'sriov %s'" % verb)
                        d = self.doc(m, "sriov", verb, *args, status=status, has=[want])
                        self.assertEqual(d["error"]["exit_code"], status)
                        self.assertEqual(self.state(m), before)
                        self.assertEqual(self.runtime_files(), [])
        finally:
            for m in mounts.values():
                m.__exit__(None, None, None)

    # ---- privilege and usage --------------------------------------------------------------

    def test_unprivileged(self):
        with Mount("-m", "mi300x-sriov") as m:
            self.cli(m, "sriov", "set", "-g", 0, "--num-vfs", 1)
            before, files = self.state(m), self.runtime_files()
            self.assertEqual(files, ["lock/" + GPU0])
            for args in (["sriov", "set", "-g", 0, "--num-vfs", 2],
                         ["sriov", "set", "-g", 0, "--num-vfs", 2, "--persist"],
                         ["sriov", "bind", vf_bdf(GPU0, 0)],
                         ["sriov", "release", vf_bdf(GPU0, 0)]):
                with self.subTest(args=args):
                    d = self.doc(m, *args, status=6, user=NOBODY,
                                 has=["changes in-process need root"])
                    self.assertEqual(d["error"]["errno"], "EACCES")
                    self.assertEqual(self.state(m), before)
            # a dry run needs no privilege
            d = self.doc(m, "sriov", "set", "-g", 0, "--num-vfs", 3, "--dry-run", user=NOBODY)
            self.assertEqual(d["result"]["exit_code"], 0)
            self.assertEqual(self.state(m), before)
            self.assertEqual(self.runtime_files(), files)

    def test_usage(self):
        with Mount("-m", "mi300x-sriov") as m:
            for args, msg in (
                    (["sriov", "set", "-g", 0], "sriov set needs --num-vfs N"),
                    (["sriov", "set", "--num-vfs", 2], "-g missing"),
                    (["sriov", "set", "-g", 0, "--num-vfs", "x"], "invalid VF count 'x'"),
                    (["sriov", "set", "-g", 0, "--num-vfs", "-1"], "invalid VF count '-1'"),
                    (["sriov", "set", "-g", "0.1", "--num-vfs", 1], "selects a partition"),
                    (["sriov", "set", "-g", 0, "--num-vfs", 1, "--persist", "--autoprobe-off"],
                     "--autoprobe-off is for the sysfs path"),
                    (["sriov", "--num-vfs", 2], "option '--num-vfs' is not valid for 'sriov'"),
                    (["sriov", "bind", "--autoprobe-off", vf_bdf(GPU0, 0)],
                     "option '--autoprobe-off' is not valid for 'sriov bind'"),
                    (["sriov", "release", "--persist", vf_bdf(GPU0, 0)],
                     "option '--persist' is not valid for 'sriov release'"),
                    (["sriov", "frob"], "unknown sub-verb 'frob' of 'sriov'"),
                    (["sriov", "set", "extra", "-g", 0, "--num-vfs", 1],
                     "unexpected argument 'extra'"),
                    (["list", "extra"], "unexpected argument 'extra'"),
                    (["power", "set", "extra"], "unexpected argument 'extra'")):
                with self.subTest(args=args):
                    d = self.doc(m, *args, status=2, has=[msg])
                    self.assertEqual(d["error"]["errno"], "EINVAL")
            self.assertEqual(m.value(m.gpu(GPU0, "sriov_numvfs")), "0")


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--namespace":
        namespace_helper(sys.argv[2])
        sys.exit(0)
    main()
