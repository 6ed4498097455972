#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Compute partition writes (spec amdgpu-sysfs.md §2.1, §2.3, §2.4, §6.3, §9 rule 2) through
write(2): each check in the kernel's order with its errno, and the tree after a switch: the
GPU's KFD nodes removed and appended, generation_id moved by one per node, per-partition CUs,
XCCs, memory, gpu_id and render minor, available_compute_partition, enforce_isolation and
gpu_metrics num_partition."""

import errno
import json
import os
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from simtest import (CLI, GPU0, GPU1, GiB, Mount, main, metrics_field, sim)  # noqa: E402

CCP = "current_compute_partition"


def machine_file(tmp, **gpu0):
    """mi300x-8 with GPU 0's description changed: a JSON machine file."""
    desc = json.loads(sim("dump-machine", "mi300x-8", check=True).stdout)
    desc["gpus"][0].update(gpu0)
    path = os.path.join(tmp, "machine.json")
    with open(path, "w") as f:
        json.dump(desc, f)
    return path


class Partition(unittest.TestCase):
    def test_switch_to_cpx(self):
        with Mount("--seed", "1") as m:
            gen = m.generation()
            gpu1_before = m.gpu_nodes(GPU1)
            self.assertEqual([n[0] for n in gpu1_before], [3])
            self.assertEqual(m.write(m.gpu(GPU0, CCP), "CPX\n"), 0)
            self.assertEqual(m.value(m.gpu(GPU0, CCP)), "CPX")
            # one removed, eight added (§6.3)
            self.assertEqual(m.generation(), gen + 1 + 8)
            nodes = m.gpu_nodes(GPU0)
            self.assertEqual([n[0] for n in nodes], list(range(9, 17)))    # appended at the end
            self.assertEqual([n[0] for n in m.gpu_nodes(GPU1)], [2])       # moved down
            ids = set()
            for p, (idx, props, gpu_id) in enumerate(nodes):
                self.assertEqual(props["location_id"], 0x05 << 8 | p)
                self.assertEqual(props["drm_render_minor"], 128 + p)
                self.assertEqual(props["num_xcc"], 1)
                self.assertEqual(props["simd_count"], 38 * 4)
                self.assertEqual(props["num_sdma_engines"], 2)
                self.assertEqual(props["num_sdma_xgmi_engines"], 0)
                bank = m.text("class/kfd/kfd/topology/nodes/%d/mem_banks/0/properties" % idx)
                self.assertIn("size_in_bytes %d\n" % (24 * GiB), bank)
                self.assertNotIn(gpu_id, ids)
                ids.add(gpu_id)
            self.assertNotEqual(gpu1_before[0][2], 0)
            self.assertNotIn(gpu1_before[0][2], ids)
            # the partitions' render nodes exist, owned by the XCP platform devices
            for p in range(1, 8):
                self.assertTrue(os.path.exists(m.path("class/drm/renderD%d/device" % (128 + p))))
            self.assertEqual(m.value(m.gpu(GPU0, "available_compute_partition")),
                             "SPX, DPX, QPX, CPX")
            self.assertEqual(m.value(m.gpu(GPU0, "enforce_isolation")), " ".join(["0"] * 8))
            blob = m.read(m.gpu(GPU0, "gpu_metrics"))
            self.assertEqual(metrics_field(blob, 7, "num_partition"), 8)
            self.assertEqual(metrics_field(m.read(m.gpu(GPU1, "gpu_metrics")), 7,
                                           "num_partition"), 1)
            # back to SPX: eight removed, one added
            gen = m.generation()
            self.assertEqual(m.write(m.gpu(GPU0, CCP), "spx"), 0)
            self.assertEqual(m.generation(), gen + 8 + 1)
            (node,) = m.gpu_nodes(GPU0)
            self.assertEqual((node[0], node[1]["num_xcc"], node[1]["simd_count"]), (9, 8, 1216))

    def test_dpx_qpx(self):
        with Mount("--seed", "1") as m:
            self.assertEqual(m.write(m.gpu(GPU0, CCP), "QPXgarbage"), 0)   # prefix match
            nodes = m.gpu_nodes(GPU0)
            self.assertEqual([n[1]["num_xcc"] for n in nodes], [2] * 4)
            self.assertEqual([n[1]["drm_render_minor"] for n in nodes], [128, 129, 130, 131])
            self.assertEqual(m.write(m.gpu(GPU0, CCP), "dPx"), 0)
            nodes = m.gpu_nodes(GPU0)
            self.assertEqual([n[1]["num_xcc"] for n in nodes], [4, 4])
            bank = m.text("class/kfd/kfd/topology/nodes/%d/mem_banks/0/properties" % nodes[1][0])
            self.assertIn("size_in_bytes %d\n" % (96 * GiB), bank)
            p = subprocess.run(["sh", "-c", "echo CPX > " + m.path(m.gpu(GPU1, CCP))],
                               capture_output=True, text=True)
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertEqual(len(m.gpu_nodes(GPU1)), 8)

    def test_invalid_tokens(self):
        with Mount("--seed", "1") as m:
            gen = m.generation()
            # (a write of 0 bytes never reaches a FUSE file system, so "" is not tried)
            for token in ("\n", "foo", " CPX", "SP", "TPX", "NPS1", "xCPX"):
                self.assertEqual(m.write(m.gpu(GPU0, CCP), token), errno.EINVAL, repr(token))
            self.assertEqual(m.generation(), gen)
            self.assertEqual(m.value(m.gpu(GPU0, CCP)), "SPX")
            # same mode: success, nothing happens
            self.assertEqual(m.write(m.gpu(GPU0, CCP), "SPX\n"), 0)
            self.assertEqual(m.generation(), gen)

    def test_nps_compatibility(self):
        with tempfile.TemporaryDirectory() as tmp:
            desc = machine_file(tmp, memory_partition="NPS4", compute_partition="CPX")
            with Mount("--machine", desc, "--seed", "1") as m:
                self.assertEqual(m.value(m.gpu(GPU0, "current_memory_partition")), "NPS4")
                self.assertEqual(m.value(m.gpu(GPU0, "available_compute_partition")), "QPX, CPX")
                self.assertEqual(len(m.gpu_nodes(GPU0)), 8)
                bank = m.text("class/kfd/kfd/topology/nodes/%d/mem_banks/0/properties"
                              % m.gpu_nodes(GPU0)[0][0])
                self.assertIn("size_in_bytes %d\n" % (24 * GiB), bank)
                for mode in ("SPX", "DPX"):
                    self.assertEqual(m.write(m.gpu(GPU0, CCP), mode), errno.EINVAL)
                self.assertEqual(m.write(m.gpu(GPU0, CCP), "QPX"), 0)
                self.assertEqual(len(m.gpu_nodes(GPU0)), 4)

    def test_order_of_checks(self):
        """EINVAL (token) before EPERM (reset) before same-mode success before EINVAL (NPS)
        before EBUSY (KFD users)."""
        with Mount("--seed", "1", "--in-reset", GPU0, "--kfd-users", GPU1 + "=2") as m:
            self.assertEqual(m.write(m.gpu(GPU0, CCP), "foo"), errno.EINVAL)
            self.assertEqual(m.write(m.gpu(GPU0, CCP), "TPX"), errno.EINVAL)
            self.assertEqual(m.write(m.gpu(GPU0, CCP), "SPX"), errno.EPERM)
            self.assertEqual(m.write(m.gpu(GPU0, CCP), "CPX"), errno.EPERM)
            self.assertEqual(m.read_errno(m.gpu(GPU0, CCP)), errno.EPERM)      # DKMS reads too
            self.assertEqual(m.read_errno(m.gpu(GPU0, "gpu_metrics")), errno.EBUSY)
            gen = m.generation()
            self.assertEqual(m.write(m.gpu(GPU1, CCP), "foo"), errno.EINVAL)
            self.assertEqual(m.write(m.gpu(GPU1, CCP), "SPX"), 0)
            self.assertEqual(m.write(m.gpu(GPU1, CCP), "CPX"), errno.EBUSY)
            self.assertEqual(m.generation(), gen)
            self.assertEqual(m.value(m.gpu(GPU1, CCP)), "SPX")
        with tempfile.TemporaryDirectory() as tmp:
            desc = machine_file(tmp, memory_partition="NPS4", compute_partition="CPX",
                                kfd_users=1)
            with Mount("--machine", desc, "--seed", "1") as m:
                self.assertEqual(m.write(m.gpu(GPU0, CCP), "SPX"), errno.EINVAL)  # NPS first
                self.assertEqual(m.write(m.gpu(GPU0, CCP), "QPX"), errno.EBUSY)

    def test_injected_eio(self):
        with Mount("--seed", "1", "--inject-switch-error", GPU0 + "=EIO") as m:
            gen = m.generation()
            self.assertEqual(m.write(m.gpu(GPU0, CCP), "CPX"), errno.EIO)
            # defined state: the hardware is in the new mode, the GPU has no KFD nodes
            self.assertEqual(m.value(m.gpu(GPU0, CCP)), "CPX")
            self.assertEqual(m.gpu_nodes(GPU0), [])
            self.assertEqual(m.generation(), gen + 1)
            self.assertEqual(len(m.kfd_nodes()), 2 + 7)
            # the same mode changes nothing; another mode succeeds, but KFD stays down (the
            # kernel skips KFD while kfd.init_complete is false) until the driver is loaded again
            self.assertEqual(m.write(m.gpu(GPU0, CCP), "CPX"), 0)
            self.assertEqual(m.gpu_nodes(GPU0), [])
            self.assertEqual(m.write(m.gpu(GPU0, CCP), "QPX"), 0)
            self.assertEqual(m.value(m.gpu(GPU0, CCP)), "QPX")
            self.assertEqual(m.gpu_nodes(GPU0), [])
            self.assertEqual(m.generation(), gen + 1)
            self.assertEqual(m.write("bus/pci/drivers/amdgpu/unbind", GPU0), 0)
            self.assertEqual(m.write("bus/pci/drivers/amdgpu/bind", GPU0), 0)
            self.assertEqual(len(m.gpu_nodes(GPU0)), 4)
            self.assertEqual(m.generation(), gen + 1 + 4)
        with Mount("--seed", "1", "--inject-switch-error", GPU0 + "=EBUSY:always") as m:
            for _ in range(2):
                self.assertEqual(m.write(m.gpu(GPU0, CCP), "CPX"), errno.EBUSY)
            self.assertEqual(m.value(m.gpu(GPU0, CCP)), "SPX")
            self.assertEqual(len(m.gpu_nodes(GPU0)), 1)

    def test_mi300a(self):
        with Mount("--machine", "mi300a-4", "--seed", "1") as m:
            apu = "0000:01:00.0"
            self.assertEqual(m.write(m.gpu(apu, CCP), "DPX"), errno.EINVAL)    # XCC % 4
            self.assertEqual(m.write(m.gpu(apu, CCP), "QPX"), errno.EINVAL)    # XCC == 8
            self.assertEqual(m.write(m.gpu(apu, CCP), "TPX"), 0)
            nodes = m.gpu_nodes(apu)
            self.assertEqual([n[1]["num_xcc"] for n in nodes], [2, 2, 2])
            self.assertEqual([n[1]["simd_count"] for n in nodes], [304] * 3)
            self.assertEqual(m.write(m.gpu(apu, CCP), "CPX"), 0)
            self.assertEqual(len(m.gpu_nodes(apu)), 6)

    def test_cli_sees_partitions(self):
        with Mount("--seed", "1") as m:
            self.assertEqual(m.write(m.gpu(GPU0, CCP), "CPX"), 0)
            env = dict(os.environ, AMDSMI_SYSFS_ROOT=m.root)
            p = subprocess.run([CLI, "list", "--json"], capture_output=True, text=True, env=env)
            self.assertEqual(p.returncode, 0, p.stderr)
            doc = json.loads(p.stdout)
            gpus = doc["gpus"]
            self.assertEqual((gpus[0]["compute_mode"], gpus[0]["partition_count"]), ("CPX", 8))
            self.assertEqual((gpus[1]["compute_mode"], gpus[1]["partition_count"]), ("SPX", 1))


if __name__ == "__main__":
    main()
