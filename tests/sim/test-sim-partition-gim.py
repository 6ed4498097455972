#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""libamdsmi's partition reads, plans and changes on a gim virtualization host
(partition/partition-gim.c) on the simulator's mi300x-gim-1vf and mi300x-gim-8vf machines,
through partition-memory-probe (tests/sim/partition-memory-probe.c).

gim's files are root-only: root reads the modes, anybody else gets -EACCES. A change applies
at once and re-makes the VFs (one per partition): refused while VFs exist unless forced; the
plan says which order keeps every step valid; gim "accepts" a write it ignores, which the
read-back catches (-EIO, stage verify). There is no driver reload on a gim host."""

import errno
import json
import os
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from simtest import GPU0, GPU1, NOBODY, SIM, Mount, main, tmpdir  # noqa: E402

PROBE = os.environ.get("PARTITION_MEMORY_PROBE", "")
ALL = "SPX, DPX, QPX, CPX"


def probe(m, rt, *args, user=None, root=None, stderr=False):
    env = dict(os.environ, AMDSMI_SYSFS_ROOT=root or m.root, RUNTIME_DIRECTORY=rt)
    env.pop("AMDSMI_DEBUG", None)
    p = subprocess.run((user or []) + [PROBE] + [str(a) for a in args], env=env,
                       capture_output=True, text=True, timeout=120)
    if p.returncode != 0:
        raise AssertionError("partition-memory-probe %s: exit %d: %s"
                             % (" ".join(map(str, args)), p.returncode, p.stderr))
    return (json.loads(p.stdout), p.stderr) if stderr else json.loads(p.stdout)


def ctl(m, *args):
    p = subprocess.run([SIM, "ctl", "--mount", m.root] + [str(a) for a in args],
                       capture_output=True, text=True, timeout=30)
    if p.returncode != 0:
        raise AssertionError("amdsmi-sim ctl %s: %s" % (" ".join(map(str, args)), p.stderr))


class Gim(unittest.TestCase):
    def setUp(self):
        self.rt = tmpdir(self, "amdsmi-rt.")

    def vfs(self, m, bdf=GPU0):
        links = sorted(n for n in os.listdir(m.path(m.gpu(bdf))) if n.startswith("virtfn"))
        return int(m.value(m.gpu(bdf, "sriov_numvfs"))), links

    def test_gim_1vf(self):
        with Mount("--machine", "mi300x-gim-1vf") as m:
            modes = probe(m, self.rt, "modes", GPU0)
            self.assertEqual(modes, {"compute": "SPX", "memory": "NPS1", "supported": ALL,
                                     "available_compute": ALL,
                                     "available_memory": "NPS1, NPS2, NPS4",
                                     "memory_changeable": 1, "pending": None})
            # root-only files: -EACCES for everybody else, never a guess
            modes = probe(m, self.rt, "modes", GPU0, user=NOBODY)
            for k in ("compute", "memory", "supported", "available_compute",
                      "available_memory"):
                self.assertEqual(modes[k], -errno.EACCES, k)
            self.assertEqual(probe(m, self.rt, "plan", GPU0, "CPX", "NPS4", user=NOBODY),
                             {"r": -errno.EACCES})

            # SPX/NPS1 → CPX/NPS4: compute first (CPX is valid under NPS1), VFs 1 → 8
            plan = probe(m, self.rt, "plan", GPU0, "CPX", "NPS4")
            self.assertEqual((plan["reason"], plan["notes"]), ("ok", ["destroys-vfs"]))
            self.assertEqual((plan["vfs"], plan["partitions"]), ([1, 8], [1, 8]))
            self.assertEqual(plan["affected"], [GPU0])
            self.assertEqual(plan["valid_compute"], "QPX, CPX")
            # SPX under NPS4 is no profile of gim's
            plan = probe(m, self.rt, "plan", GPU0, "-", "NPS4")
            self.assertEqual(plan["reason"], "incompatible")
            self.assertEqual(probe(m, self.rt, "plan", GPU0, "-", "-")["notes"], ["no-change"])

            # refused while the VF exists, also as a dry run; nothing changes
            for extra in ([], ["--dry-run"]):
                c = probe(m, self.rt, "set-compute", GPU0, "CPX", *extra)
                self.assertEqual((c["r"], c["stage"]), (-errno.EBUSY, "preflight"))
                self.assertIn("1 VF of %s exists" % GPU0, c["message"])
                self.assertIn("--force", c["message"])
            c = probe(m, self.rt, "set-compute", GPU0, "CPX", "--force", "--dry-run")
            self.assertEqual((c["r"], c["changed"], c["vfs"]), (0, 0, [1, 8]))
            self.assertEqual(self.vfs(m), (1, ["virtfn0"]))
            # an incompatible pair is refused before gim sees it
            c = probe(m, self.rt, "set-memory", GPU0, "NPS4", "--force")
            self.assertEqual((c["r"], c["stage"]), (-errno.EINVAL, "preflight"))
            self.assertIn("change the compute mode first", c["message"])
            # not a root: the files say no
            c = probe(m, self.rt, "set-compute", GPU0, "CPX", "--force", user=NOBODY)
            self.assertEqual(c["r"], -errno.EACCES)
            self.assertIn("needs root", c["message"])

            # forced: compute, then memory; gim makes the VFs again, one per partition
            c = probe(m, self.rt, "set-compute", GPU0, "CPX", "--force")
            self.assertEqual((c["r"], c["stage"], c["changed"]), (0, "done", 1), c["message"])
            self.assertEqual((c["compute_before"], c["compute_after"]), ("SPX", "CPX"))
            self.assertEqual((c["vfs"], c["partitions"]), ([1, 8], [1, 8]))
            self.assertEqual(self.vfs(m), (8, ["virtfn%d" % i for i in range(8)]))
            self.assertEqual(m.value(m.gpu(GPU0, "spatial_partition_mode")), "CPX")
            c = probe(m, self.rt, "set-memory", GPU0, "NPS4", "--force")
            self.assertEqual((c["r"], c["stage"], c["changed"]), (0, "done", 1), c["message"])
            self.assertEqual((c["memory_before"], c["memory_after"]), ("NPS1", "NPS4"))
            self.assertEqual((c["reload_required"], c["memory_pending"]), (0, None))
            self.assertEqual(c["vfs"], [8, 8])
            self.assertTrue(m.text(m.gpu(GPU0, "memory_partition_mode"))
                            .startswith("memory_partition_mode: NPS4\n"))
            self.assertEqual(self.vfs(m)[0], 8)
            modes = probe(m, self.rt, "modes", GPU0)
            self.assertEqual((modes["compute"], modes["memory"], modes["available_compute"]),
                             ("CPX", "NPS4", "QPX, CPX"))
            # the other GPUs are their own: no hive on a gim host
            self.assertEqual(probe(m, self.rt, "modes", GPU1)["compute"], "SPX")

            # gim "accepts" a profile the firmware refuses: the read-back says so
            ctl(m, "no-effect", m.gpu(GPU0, "accelerator_partition_profile"))
            c = probe(m, self.rt, "set-compute", GPU0, "QPX", "--force")
            self.assertEqual((c["r"], c["stage"]), (-errno.EIO, "verify"))
            self.assertIn("ignored", c["message"])
            self.assertEqual(c["compute_after"], "CPX")
            ctl(m, "no-effect", m.gpu(GPU0, "memory_partition_mode"))
            c = probe(m, self.rt, "set-memory", GPU0, "NPS1", "--force")
            self.assertEqual((c["r"], c["stage"]), (-errno.EIO, "verify"))
            self.assertIn("gim accepted NPS1 but ignored it", c["message"])
            ctl(m, "clear-faults")
            self.assertEqual(self.vfs(m)[0], 8)

            # no amdgpu to reload
            c = probe(m, self.rt, "reload", GPU0)
            self.assertEqual((c["r"], c["stage"]), (-errno.EOPNOTSUPP, "preflight"))
            self.assertIn("gim", c["message"])

    def test_gim_8vf(self):
        with Mount("--machine", "mi300x-gim-8vf") as m:
            modes = probe(m, self.rt, "modes", GPU0)
            self.assertEqual((modes["compute"], modes["memory"], modes["available_compute"]),
                             ("CPX", "NPS4", "QPX, CPX"))
            self.assertEqual(probe(m, self.rt, "modes", GPU0, user=NOBODY)["memory"],
                             -errno.EACCES)
            # CPX/NPS4 → SPX/NPS1: SPX is not valid under NPS4, so memory first
            plan = probe(m, self.rt, "plan", GPU0, "SPX", "NPS1")
            self.assertEqual((plan["reason"], plan["notes"]), ("ok", ["destroys-vfs",
                                                                      "memory-first"]))
            self.assertEqual(plan["vfs"], [8, 1])
            c = probe(m, self.rt, "set-compute", GPU0, "SPX", "--force")
            self.assertEqual(c["r"], -errno.EINVAL)
            self.assertIn("change the memory mode first", c["message"])
            c = probe(m, self.rt, "set-memory", GPU0, "NPS1")
            self.assertEqual(c["r"], -errno.EBUSY)
            self.assertIn("8 VFs", c["message"])
            c = probe(m, self.rt, "set-memory", GPU0, "NPS1", "--force")
            self.assertEqual((c["r"], c["vfs"]), (0, [8, 8]), c["message"])
            c = probe(m, self.rt, "set-compute", GPU0, "SPX", "--force")
            self.assertEqual((c["r"], c["vfs"], c["partitions"]), (0, [8, 1], [8, 1]),
                             c["message"])
            self.assertEqual(self.vfs(m), (1, ["virtfn0"]))
            self.assertFalse(os.path.exists(m.path("bus/pci/devices/0000:05:02.1")))
            # the same mode again: nothing to do
            c = probe(m, self.rt, "set-compute", GPU0, "SPX")
            self.assertEqual((c["r"], c["changed"]), (0, 0))
            c = probe(m, self.rt, "set-memory", GPU0, "NPS1")
            self.assertEqual((c["r"], c["changed"]), (0, 0))
            self.assertEqual(probe(m, self.rt, "reload", GPU1)["r"], -errno.EOPNOTSUPP)
            # DPX/NPS2 -> QPX/NPS4: QPX is refused under NPS2 and DPX under NPS4, so no order
            # of the two writes works: the plan says so instead of failing halfway
            c = probe(m, self.rt, "set-compute", GPU0, "DPX", "--force")
            self.assertEqual(c["r"], 0, c["message"])
            c = probe(m, self.rt, "set-memory", GPU0, "NPS2", "--force")
            self.assertEqual(c["r"], 0, c["message"])
            plan = probe(m, self.rt, "plan", GPU0, "QPX", "NPS4")
            self.assertEqual(plan["reason"], "no-path")
            self.assertEqual(probe(m, self.rt, "plan", GPU0, "QPX", "NPS1")["reason"], "ok")

    def test_gim_file_formats(self):
        """gim's tables parsed robustly, on a plain snapshot tree whose files are edited:
        garbage is -EBADMSG with a warning naming the file; a profile table without a
        memory_caps column falls back to the kernel's compatible sets."""
        tree = os.path.join(self.rt, "tree")
        subprocess.run([SIM, "snapshot", "-m", "mi300x-gim-1vf", tree], check=True,
                       capture_output=True, timeout=60)
        pf = os.path.join(tree, "bus/pci/devices", GPU0)
        cfg = os.path.join(pf, "accelerator_partition_profile_config")
        with open(cfg) as f:
            text = f.read()

        def rewrite(name, data):
            with open(os.path.join(pf, name), "w") as f:
                f.write(data)

        # without memory_caps (an older gim): the kernel's sets stand in
        at = text.index("\nprofiles:\n")
        head, table = text[:at + 1], text[at + len("\nprofiles:\n"):]
        rows = ["profile_index       profile_type        num_of_partitions   num_of_resources"]
        for line in table.splitlines()[1:]:
            w = line.split()
            rows.append("%-20s%-20s%-20s%-20s" % (w[0], w[1], w[2], 4))
        rewrite("accelerator_partition_profile_config",
                head + "profiles:\n" + "\n".join(rows) + "\n")
        modes = probe(None, self.rt, "modes", GPU0, root=tree)
        self.assertEqual((modes["supported"], modes["available_compute"]), (ALL, ALL))
        plan = probe(None, self.rt, "plan", GPU0, "-", "NPS4", root=tree)
        self.assertEqual((plan["reason"], plan["valid_compute"]), ("incompatible", "QPX, CPX"))

        for name, data in (("accelerator_partition_profile_config",
                            "profiles:\nprofile_index profile_type num_of_partitions\n"
                            "0 SPX lots\n"),
                           ("accelerator_partition_profile_config", "nothing here\n"),
                           ("memory_partition_config", "NPS1 NPSX \n")):
            rewrite(name, data)
            modes, err = probe(None, self.rt, "modes", GPU0, root=tree, stderr=True)
            self.assertEqual(modes["supported" if "profile" in name else "available_memory"],
                             -errno.EBADMSG, name)
            self.assertIn("warning: %s/%s: unexpected contents" % (tree, "bus/pci/devices/%s/%s"
                                                                  % (GPU0, name)), err)
        rewrite("memory_partition_mode", "NPS1\n")
        modes, err = probe(None, self.rt, "modes", GPU0, root=tree, stderr=True)
        self.assertEqual(modes["memory"], -errno.EBADMSG)
        self.assertIn("memory_partition_mode: unexpected contents", err)
        self.assertEqual(modes["compute"], "SPX")


if __name__ == "__main__":
    if not PROBE:
        sys.exit("FAIL: PARTITION_MEMORY_PROBE is not set")
    main()
