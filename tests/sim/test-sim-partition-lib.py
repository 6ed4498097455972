#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""libamdsmi's partition read API and plans (partition/) on simulator mounts, through
partition-probe (tests/sim/partition-probe.c), which prints them as JSON: mi300x-8 in SPX/NPS1
and after CPX is written to current_compute_partition, mi350x-8 (compute_partition_config/,
root-only engine shares) and mi300a-4 (one NPS mode)."""

import json
import os
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from simtest import GPU0, GiB, MI300X_BDFS, NOBODY, Mount, main  # noqa: E402

PROBE = os.environ.get("PARTITION_PROBE", "")
CCP = "current_compute_partition"


def probe(m, user=None):
    env = dict(os.environ, AMDSMI_SYSFS_ROOT=m.root)
    p = subprocess.run((user or []) + [PROBE], env=env, capture_output=True, text=True,
                       timeout=60)
    if p.returncode != 0:
        raise AssertionError("partition-probe: exit %d: %s" % (p.returncode, p.stderr))
    return {g["bdf"]: g for g in json.loads(p.stdout)["gpus"]}


class PartitionLib(unittest.TestCase):
    def test_mi300x_spx(self):
        with Mount("--machine", "mi300x-8") as m:
            gpus = probe(m)
            self.assertEqual(sorted(gpus), MI300X_BDFS)
            g = gpus[GPU0]
            self.assertEqual(g["supported"], "SPX, DPX, QPX, CPX")   # by XCC count
            self.assertEqual(g["available_compute"], "SPX, DPX, QPX, CPX")
            self.assertEqual(g["available_memory"], "NPS1, NPS2, NPS4")
            self.assertTrue(g["memory_changeable"])
            self.assertEqual(g["shares"], -61)      # -ENODATA: no compute_partition_config/
            p = g["plans"]
            cpx = p["CPX/UNKNOWN"]
            self.assertEqual(cpx["reason"], "ok")
            self.assertEqual(cpx["notes"], [])
            self.assertEqual(cpx["partitions"], [1, 8])
            self.assertEqual(cpx["memory_per_partition"], 24 * GiB)
            self.assertEqual(cpx["affected"], [GPU0])
            self.assertEqual(p["SPX/UNKNOWN"]["notes"], ["no-change"])
            self.assertEqual(p["TPX/UNKNOWN"]["reason"], "compute-not-supported")
            dpx2 = p["DPX/NPS2"]
            self.assertEqual(dpx2["reason"], "ok")
            self.assertEqual(dpx2["notes"], ["reload-required", "hive-wide"])
            self.assertEqual(dpx2["affected"], MI300X_BDFS)
            self.assertEqual(dpx2["memory_per_partition"], 96 * GiB)
            self.assertEqual(p["CPX/NPS2"]["reason"], "incompatible")
            self.assertEqual(p["CPX/NPS4"]["reason"], "ok")
            self.assertEqual(p["CPX/NPS4"]["valid_compute"], "QPX, CPX")

    def test_mi300x_cpx(self):
        with Mount("--machine", "mi300x-8") as m:
            self.assertEqual(m.write(m.gpu(GPU0, CCP), "CPX\n"), 0)
            g = probe(m)[GPU0]
            self.assertEqual(g["available_compute"], "SPX, DPX, QPX, CPX")
            spx = g["plans"]["SPX/UNKNOWN"]
            self.assertEqual(spx["reason"], "ok")
            self.assertEqual(spx["partitions"], [8, 1])
            self.assertEqual(spx["memory_per_partition"], 192 * GiB)
            self.assertEqual(spx["invalidated_render_minors"], list(range(129, 136)))
            self.assertEqual(g["plans"]["CPX/UNKNOWN"]["notes"], ["no-change"])
            # CPX+NPS2: NPS1 cannot tell the kernel rules apart, so the newer one refuses it
            self.assertEqual(g["plans"]["CPX/NPS2"]["reason"], "incompatible")

    def test_mi350x(self):
        with Mount("--machine", "mi350x-8") as m:
            g = probe(m)[GPU0]
            self.assertEqual(g["supported"], "SPX, DPX, QPX, CPX")   # supported_xcp_configs
            self.assertEqual(g["available_memory"], "NPS1, NPS2")
            self.assertEqual(g["shares"]["mode"], "SPX")
            self.assertEqual(g["shares"]["xcc"], [8, 1])
            self.assertTrue(all(v is not None for e in ("xcc", "dma", "dec", "jpeg")
                                for v in g["shares"][e]))
            self.assertEqual(g["plans"]["CPX/NPS2"]["reason"], "ok")   # GC 9.5.0
            self.assertEqual(g["plans"]["CPX/NPS2"]["valid_compute"], "DPX, QPX, CPX")
            self.assertEqual(g["plans"]["CPX/NPS4"]["reason"], "memory-not-supported")
            # the engine files are root-only: unknown for others, the rest still answers
            g = probe(m, NOBODY)[GPU0]
            self.assertEqual(g["shares"]["mode"], "SPX")
            self.assertEqual(g["shares"]["xcc"], [None, None])
            self.assertEqual(g["shares"]["jpeg"], [None, None])
            self.assertEqual(g["supported"], "SPX, DPX, QPX, CPX")

    def test_mi300a(self):
        with Mount("--machine", "mi300a-4") as m:
            gpus = probe(m)
            g = gpus[sorted(gpus)[0]]
            self.assertEqual(g["supported"], "SPX, TPX, CPX")
            self.assertEqual(g["available_compute"], "SPX, TPX, CPX")
            self.assertEqual(g["available_memory"], "NPS1")
            self.assertFalse(g["memory_changeable"])
            self.assertEqual(g["plans"]["TPX/UNKNOWN"]["reason"], "ok")
            self.assertEqual(g["plans"]["TPX/UNKNOWN"]["partitions"], [1, 3])
            self.assertEqual(g["plans"]["DPX/NPS2"]["reason"], "compute-not-supported")
            self.assertEqual(g["plans"]["CPX/NPS4"]["reason"], "memory-not-changeable")


if __name__ == "__main__":
    if not PROBE or not os.access(PROBE, os.X_OK):
        sys.exit("FAIL: PARTITION_PROBE is not the partition-probe executable: %r" % PROBE)
    main()
