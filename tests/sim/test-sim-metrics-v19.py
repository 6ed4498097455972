#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""gpu_metrics v1.9 and xcp_metrics v1.1 as the simulator serves them (spec
gpu-metrics-v1.9.md), the limiter shares and the accumulation counter of the control socket,
and the PF files of issue 16 (compute_reset_mask, pcie_replay_count).

The blobs are decoded here, with this file's own reading of the spec (§1, §2, §3): neither the
library's parser nor the simulator's encoder is used.
"""

import json
import os
import struct
import subprocess
import sys
import tempfile
import time
import unittest
from fractions import Fraction

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import simtest  # noqa: E402
from simtest import GPU0, MI300X_BDFS, Mount, main, sim, vf_bdf  # noqa: E402

# --- the spec, as this test reads it ------------------------------------------------------------

U8, S8, U16, S16, U32, S32, U64, S64 = range(8)
FMT = {U8: "B", S8: "b", U16: "H", S16: "h", U32: "I", S32: "i", U64: "Q", S64: "q"}
NONE, CLOCK, TEMP, POWER, TIME_NS, TIME_10NS, SPEED_GTS, SPEED_01GTS, BW, DATA_KB, PERCENT = \
    range(11)

# §2: (id, name, type, unit, instances), in the order the SMU 13.0.6 class emits them
GPU_V19 = [
    (0, "TEMPERATURE_HOTSPOT", U16, TEMP, 1),
    (1, "TEMPERATURE_MEM", U16, TEMP, 1),
    (2, "TEMPERATURE_VRSOC", U16, TEMP, 1),
    (3, "CURR_SOCKET_POWER", U16, POWER, 1),
    (4, "AVERAGE_GFX_ACTIVITY", U16, PERCENT, 1),
    (5, "AVERAGE_UMC_ACTIVITY", U16, PERCENT, 1),
    (6, "MEM_MAX_BANDWIDTH", U64, BW, 1),
    (7, "ENERGY_ACCUMULATOR", U64, NONE, 1),
    (8, "SYSTEM_CLOCK_COUNTER", U64, TIME_NS, 1),
    (9, "ACCUMULATION_COUNTER", None, NONE, 1),      # U32 in 6.19, U64 from 7.0
    (10, "PROCHOT_RESIDENCY_ACC", U32, NONE, 1),
    (11, "PPT_RESIDENCY_ACC", U32, NONE, 1),
    (12, "SOCKET_THM_RESIDENCY_ACC", U32, NONE, 1),
    (13, "VR_THM_RESIDENCY_ACC", U32, NONE, 1),
    (14, "HBM_THM_RESIDENCY_ACC", U32, NONE, 1),
    (15, "GFXCLK_LOCK_STATUS", U32, NONE, 1),
    (16, "PCIE_LINK_WIDTH", U16, NONE, 1),
    (17, "PCIE_LINK_SPEED", U16, SPEED_01GTS, 1),
    (18, "XGMI_LINK_WIDTH", U16, NONE, 1),
    (19, "XGMI_LINK_SPEED", U16, SPEED_GTS, 1),
    (20, "GFX_ACTIVITY_ACC", U32, PERCENT, 1),
    (21, "MEM_ACTIVITY_ACC", U32, PERCENT, 1),
    (22, "PCIE_BANDWIDTH_ACC", U64, PERCENT, 1),
    (23, "PCIE_BANDWIDTH_INST", U64, BW, 1),
    (24, "PCIE_L0_TO_RECOV_COUNT_ACC", U64, NONE, 1),
    (25, "PCIE_REPLAY_COUNT_ACC", U64, NONE, 1),
    (26, "PCIE_REPLAY_ROVER_COUNT_ACC", U64, NONE, 1),
    (27, "PCIE_NAK_SENT_COUNT_ACC", U32, NONE, 1),
    (28, "PCIE_NAK_RCVD_COUNT_ACC", U32, NONE, 1),
    (29, "XGMI_READ_DATA_ACC", U64, DATA_KB, 8),
    (30, "XGMI_WRITE_DATA_ACC", U64, DATA_KB, 8),
    (31, "XGMI_LINK_STATUS", U16, NONE, 8),
    (32, "FIRMWARE_TIMESTAMP", U64, TIME_10NS, 1),
    (33, "CURRENT_GFXCLK", U16, CLOCK, 8),
    (34, "CURRENT_SOCCLK", U16, CLOCK, 4),
    (35, "CURRENT_VCLK0", U16, CLOCK, 4),
    (36, "CURRENT_DCLK0", U16, CLOCK, 4),
    (37, "CURRENT_UCLK", U16, CLOCK, 1),
    (39, "PCIE_LC_PERF_OTHER_END_RECOVERY", U32, NONE, 1),   # 38 is not emitted
    (40, "GFX_BUSY_INST", U32, PERCENT, 8),
    (41, "JPEG_BUSY", U16, PERCENT, 40),
    (42, "VCN_BUSY", U16, PERCENT, 4),
    (43, "GFX_BUSY_ACC", U64, PERCENT, 8),
    (44, "GFX_BELOW_HOST_LIMIT_PPT_ACC", U64, NONE, 8),
    (45, "GFX_BELOW_HOST_LIMIT_THM_ACC", U64, NONE, 8),
    (46, "GFX_LOW_UTILIZATION_ACC", U64, NONE, 8),
    (47, "GFX_BELOW_HOST_LIMIT_TOTAL_ACC", U64, NONE, 8),
]
T3 = [  # Linux 7.1
    (48, "TEMPERATURE_HBM", U16, TEMP, 8),
    (49, "TEMPERATURE_AID", U16, TEMP, 4),
    (50, "TEMPERATURE_XCD", U16, TEMP, 8),
]
# §3: struct smu_v13_0_6_partition_metrics
XCP_V11 = [
    (33, "CURRENT_GFXCLK", U16, CLOCK, 8),
    (34, "CURRENT_SOCCLK", U16, CLOCK, 4),
    (35, "CURRENT_VCLK0", U16, CLOCK, 4),
    (36, "CURRENT_DCLK0", U16, CLOCK, 4),
    (37, "CURRENT_UCLK", U16, CLOCK, 1),
    (40, "GFX_BUSY_INST", U32, PERCENT, 8),
    (41, "JPEG_BUSY", U16, PERCENT, 40),
    (42, "VCN_BUSY", U16, PERCENT, 4),
    (43, "GFX_BUSY_ACC", U64, PERCENT, 8),
    (44, "GFX_BELOW_HOST_LIMIT_PPT_ACC", U64, NONE, 8),
    (45, "GFX_BELOW_HOST_LIMIT_THM_ACC", U64, NONE, 8),
    (46, "GFX_LOW_UTILIZATION_ACC", U64, NONE, 8),
    (47, "GFX_BELOW_HOST_LIMIT_TOTAL_ACC", U64, NONE, 8),
]
XCP_XA = [  # Linux 7.0
    (9, "ACCUMULATION_COUNTER", U64, NONE, 1),
    (32, "FIRMWARE_TIMESTAMP", U64, TIME_10NS, 1),
]
LAYOUTS = ("6.19", "7.0", "7.1")
# §2.1 and §3: (attributes, structure_size)
GPU_SIZES = {"6.19": (47, 1150), "7.0": (47, 1154), "7.1": (50, 1218)}
XCP_SIZES = {"6.19": (13, 594), "7.0": (15, 626), "7.1": (15, 626)}


def gpu_table(layout):
    rows = [(i, n, (U32 if layout == "6.19" else U64) if t is None else t, u, k)
            for i, n, t, u, k in GPU_V19]
    return rows + (T3 if layout == "7.1" else [])


def xcp_table(layout):
    return XCP_V11 + (XCP_XA if layout != "6.19" else [])


def decode(blob):
    """(structure_size, format, content, attr_count, [(id, type, unit, inst, values)]), values
    None where all-ones; raises on any inconsistency."""
    size, fmt, content, count = struct.unpack_from("<HBBi", blob, 0)
    off, recs = 8, []
    for _ in range(count):
        (enc,) = struct.unpack_from("<Q", blob, off)
        off += 8
        assert enc >> 32 == 0, "encoding 0x%x: bits 32..63 set" % enc
        inst, aid, typ, unit = enc & 0x3ff, enc >> 10 & 0x3ff, enc >> 20 & 0xf, enc >> 24 & 0xff
        assert typ in FMT, "unknown type %d" % typ
        width = struct.calcsize(FMT[typ])
        vals = list(struct.unpack_from("<%d%s" % (inst, FMT[typ]), blob, off))
        off += inst * width
        ones = (1 << 8 * width) - 1 if typ in (U8, U16, U32, U64) else -1
        recs.append((aid, typ, unit, inst, [None if v == ones else v for v in vals]))
    assert off == len(blob), "records end at %d, the blob at %d" % (off, len(blob))
    return size, fmt, content, count, recs


def by_name(table, recs):
    return {row[1]: rec[4] for row, rec in zip(table, recs)}


# --- machines ----------------------------------------------------------------------------------

def machine_file(test, preset, **kernel):
    """A description file: @preset with its kernel keys replaced (per-GPU revision and layout
    dropped, so the kernel's apply)."""
    desc = json.loads(sim("dump-machine", preset, check=True).stdout)
    desc["kernel"].update(kernel)
    for g in desc["gpus"]:
        g.pop("gpu_metrics_revision", None)
        g.pop("gpu_metrics_layout", None)
    fd, path = tempfile.mkstemp(prefix="amdsmi-v19.", suffix=".json")
    test.addCleanup(os.unlink, path)
    with os.fdopen(fd, "w") as f:
        json.dump(desc, f)
    return path


class CtlMount(simtest.CtlMount):
    """simtest's CtlMount, with the dump of one GPU."""

    def state(self, bdf=GPU0):
        doc = json.loads(self.ctl("dump").stdout)
        return doc, next(g for g in doc["gpus"] if g["bdf"] == bdf)

    def metrics(self, bdf=GPU0, rel="gpu_metrics"):
        return decode(self.read(self.gpu(bdf, rel)))


class Encoding(unittest.TestCase):
    def check_records(self, table, recs):
        self.assertEqual(len(recs), len(table))
        for row, (aid, typ, unit, inst, vals) in zip(table, recs):
            self.assertEqual((aid, typ, unit, inst), (row[0], row[2], row[3], row[4]), row[1])
            self.assertEqual(len(vals), inst)

    def test_gpu_metrics_layouts(self):
        """Every layout on MI300X (13.0.6) and MI355X (13.0.12): header, sizes, each record's
        encoding against the spec, values against the simulator's state."""
        for preset in ("mi300x-8", "mi355x-8"):
            for layout in LAYOUTS:
                machine = machine_file(self, preset, gpu_metrics_revision=9,
                                       gpu_metrics_layout=layout)
                with self.subTest(preset=preset, layout=layout), \
                        CtlMount("--frozen", "-m", machine) as m:
                    blob = m.read(m.gpu(GPU0, "gpu_metrics"))
                    size, fmt, content, count, recs = decode(blob)
                    self.assertEqual((fmt, content), (1, 9))
                    self.assertEqual(size, len(blob))
                    self.assertEqual((count, size), GPU_SIZES[layout])
                    table = gpu_table(layout)
                    self.check_records(table, recs)
                    v = by_name(table, recs)
                    doc, g = m.state()
                    self.assertEqual(doc["machine"]["kernel"]["gpu_metrics_revision"], 9)
                    self.assertEqual(doc["machine"]["kernel"]["gpu_metrics_layout"], layout)
                    self.assertEqual((g["gpu_metrics_revision"], g["gpu_metrics_layout"]),
                                     (9, layout))
                    s = g["sensors"]
                    self.assertEqual(v["TEMPERATURE_HOTSPOT"], [s["temp_junction_c"]])
                    self.assertEqual(v["TEMPERATURE_MEM"], [s["temp_mem_c"]])
                    self.assertEqual(v["CURR_SOCKET_POWER"], [s["power_w"]])
                    self.assertEqual(v["AVERAGE_GFX_ACTIVITY"], [s["gfx_busy_pct"]])
                    self.assertEqual(v["AVERAGE_UMC_ACTIVITY"], [s["mem_busy_pct"]])
                    self.assertEqual(v["CURRENT_UCLK"], [s["mclk_mhz"]])
                    self.assertEqual(v["ACCUMULATION_COUNTER"], [g["accumulation_counter"]])
                    self.assertEqual(v["PCIE_LINK_WIDTH"], [16])
                    self.assertEqual(v["PCIE_LINK_SPEED"], [320])           # 32.0 GT/s
                    self.assertEqual(v["XGMI_LINK_STATUS"], [1] * 7 + [2])  # 7 peers
                    # the per-XCC arrays are the whole GPU's: 8 XCCs
                    for name in ("GFX_BUSY_INST", "GFX_BUSY_ACC", "GFX_BELOW_HOST_LIMIT_PPT_ACC",
                                 "GFX_BELOW_HOST_LIMIT_TOTAL_ACC"):
                        self.assertNotIn(None, v[name], name)
                    mi355 = preset == "mi355x-8"
                    jpeg, vcn = (20, 2) if mi355 else (32, 4)
                    self.assertEqual([x is not None for x in v["JPEG_BUSY"]],
                                     [True] * jpeg + [False] * (40 - jpeg))
                    self.assertEqual([x is not None for x in v["VCN_BUSY"]],
                                     [True] * vcn + [False] * (4 - vcn))
                    if layout == "7.1" and mi355:
                        # living: the hottest XCD is the hotspot, the hottest stack the memory
                        self.assertEqual(max(v["TEMPERATURE_XCD"]), s["temp_junction_c"])
                        self.assertEqual(max(v["TEMPERATURE_HBM"]), s["temp_mem_c"])
                        self.assertTrue(all(a < s["temp_junction_c"]
                                            for a in v["TEMPERATURE_AID"]))
                        m.ctl("sensor", GPU0, "temp_junction_c", 91)
                        m.ctl("sensor", GPU0, "temp_mem_c", 77)
                        v = by_name(table, m.metrics()[4])
                        self.assertEqual(max(v["TEMPERATURE_XCD"]), 91)
                        self.assertEqual(max(v["TEMPERATURE_HBM"]), 77)
                        self.assertEqual(v["TEMPERATURE_HOTSPOT"], [91])
                    elif layout == "7.1":
                        # 13.0.6: defined, never filled (T3)
                        for name in ("TEMPERATURE_HBM", "TEMPERATURE_AID", "TEMPERATURE_XCD"):
                            self.assertEqual(set(v[name]), {None}, name)

    def test_whole_gpu_arrays_when_partitioned(self):
        """CPX: gpu_metrics v1.9 still carries the 8 XCCs of the GPU; each partition's
        xcp_metrics v1.1 its own one, found through its render node's device link."""
        with CtlMount("--frozen", "-m", "mi355x-8") as m:
            self.assertEqual(m.write(m.gpu(GPU0, "current_compute_partition"), "CPX"), 0)
            table = gpu_table("7.1")
            v = by_name(table, m.metrics()[4])
            self.assertNotIn(None, v["GFX_BUSY_INST"])
            self.assertNotIn(None, v["GFX_BUSY_ACC"])
            # partition p: renderD(128 + p) (§1.3); its device link leads to where the kernel
            # adds the xcp kobject (the PCI function for 0, amdgpu_xcp_K for the others)
            dirs = [os.path.realpath(m.path("class/drm/renderD%d/device" % (128 + p)))
                    for p in range(8)]
            self.assertEqual(dirs[0], os.path.realpath(m.path(m.gpu(GPU0))))
            for p in range(1, 8):
                self.assertRegex(dirs[p], r"/devices/platform/amdgpu_xcp_\d+$")
            for p, d in enumerate(dirs):
                blob = m.read(os.path.relpath(d, m.root) + "/xcp/xcp_metrics")
                size, fmt, content, count, recs = decode(blob)
                self.assertEqual((fmt, content, count, size, len(blob)), (1, 1, 15, 626, 626))
                x = by_name(xcp_table("7.1"), recs)
                self.assertEqual(x["CURRENT_GFXCLK"], [v["CURRENT_GFXCLK"][p]] + [None] * 7)
                self.assertEqual(x["GFX_BUSY_ACC"], [v["GFX_BUSY_ACC"][p]] + [None] * 7)
                self.assertEqual(x["GFX_BUSY_INST"], [v["GFX_BUSY_INST"][p]] + [None] * 7)
                self.assertEqual(x["ACCUMULATION_COUNTER"], v["ACCUMULATION_COUNTER"])
                self.assertEqual(x["FIRMWARE_TIMESTAMP"], v["FIRMWARE_TIMESTAMP"])

    def test_xcp_metrics_layouts(self):
        for layout in LAYOUTS:
            machine = machine_file(self, "mi300x-8", gpu_metrics_revision=9,
                                   gpu_metrics_layout=layout)
            with self.subTest(layout=layout), CtlMount("--frozen", "-m", machine) as m:
                blob = m.read(m.gpu(GPU0, "xcp/xcp_metrics"))
                size, fmt, content, count, recs = decode(blob)
                self.assertEqual((fmt, content), (1, 1))
                self.assertEqual(size, len(blob))
                self.assertEqual((count, size), XCP_SIZES[layout])
                table = xcp_table(layout)
                self.check_records(table, recs)
                x = by_name(table, recs)
                v = by_name(gpu_table(layout), m.metrics()[4])
                # SPX: the partition is the whole GPU
                for name in ("CURRENT_GFXCLK", "CURRENT_SOCCLK", "CURRENT_UCLK", "GFX_BUSY_INST",
                             "GFX_BUSY_ACC", "GFX_BELOW_HOST_LIMIT_PPT_ACC"):
                    self.assertEqual(x[name], v[name], name)
                if layout != "6.19":
                    self.assertEqual(x["ACCUMULATION_COUNTER"], v["ACCUMULATION_COUNTER"])
        # revision 8 keeps v1.0 (488 bytes); so does an older kernel's machine (none at all)
        with CtlMount("--frozen", "-m", machine_file(self, "mi355x-8",
                                                     gpu_metrics_revision=8)) as m:
            self.assertEqual(struct.unpack_from("<HBB", m.read(m.gpu(GPU0, "xcp/xcp_metrics"))),
                             (488, 1, 0))

    def test_per_gpu(self):
        """Revision and layout per GPU, over the kernel's; dump-machine keeps them."""
        desc = json.loads(sim("dump-machine", "mi355x-8", check=True).stdout)
        for g in desc["gpus"]:
            g.pop("gpu_metrics_revision", None)
            g.pop("gpu_metrics_layout", None)
        desc["gpus"][1]["gpu_metrics_layout"] = "6.19"
        desc["gpus"][2]["gpu_metrics_layout"] = "7.0"
        desc["gpus"][3]["gpu_metrics_revision"] = 8
        fd, machine = tempfile.mkstemp(prefix="amdsmi-v19.", suffix=".json")
        self.addCleanup(os.unlink, machine)
        with os.fdopen(fd, "w") as f:
            json.dump(desc, f)
        again = json.loads(sim("dump-machine", machine, check=True).stdout)["gpus"]
        self.assertEqual([(g["gpu_metrics_revision"], g["gpu_metrics_layout"]) for g in again[:4]],
                         [(9, "7.1"), (9, "6.19"), (9, "7.0"), (8, "7.1")])
        bdfs = [g["bdf"] for g in desc["gpus"][:4]]
        with CtlMount("--frozen", "-m", machine) as m:
            sizes = [(len(m.read(m.gpu(b, "gpu_metrics"))),
                      len(m.read(m.gpu(b, "xcp/xcp_metrics")))) for b in bdfs]
            self.assertEqual(sizes, [(1218, 626), (1150, 594), (1154, 626), (3872, 488)])
            self.assertEqual([m.state(b)[1]["gpu_metrics_layout"] for b in bdfs],
                             ["7.1", "6.19", "7.0", None])

    def test_presets(self):
        names = [line.split()[0] for line in sim("list-machines", check=True).stdout.splitlines()]
        self.assertIn("mi300x-8-dkms", names)
        want = {"mi300x-8-dkms": ("6.19", "MI300X"), "mi350x-8": ("7.1", "MI350X"),
                "mi355x-8": ("7.1", "MI355X")}
        for preset, (layout, product) in want.items():
            desc = json.loads(sim("dump-machine", preset, check=True).stdout)
            self.assertEqual((desc["kernel"]["gpu_metrics_revision"],
                              desc["kernel"]["gpu_metrics_layout"]), (9, layout), preset)
            self.assertEqual(desc["gpu_defaults"]["product"] if "gpu_defaults" in desc
                             else desc["gpus"][0]["product"], product)
        with CtlMount("--frozen", "-m", "mi300x-8-dkms") as m:
            self.assertEqual(m.state()[1]["gpu_metrics_layout"], "6.19")
            for bdf in MI300X_BDFS:
                blob = m.read(m.gpu(bdf, "gpu_metrics"))
                self.assertEqual(len(blob), 1150)
                # the DKMS capture's offsets (§2.1): ACCUMULATION_COUNTER u32 at 124
                self.assertEqual(struct.unpack_from("<I", blob, 124)[0],
                                 m.state(bdf)[1]["accumulation_counter"])
        with CtlMount("--frozen", "-m", "mi300x-8") as m:     # unchanged: v1.7
            self.assertEqual(m.state()[1]["gpu_metrics_layout"], None)
            self.assertEqual(struct.unpack_from("<HBB", m.read(m.gpu(GPU0, "gpu_metrics"))),
                             (2208, 1, 7))


class Limiters(unittest.TestCase):
    def sample(self, m, layout):
        v = by_name(gpu_table(layout), m.metrics()[4])
        return {k: (v[k][0] if len(v[k]) == 1 else v[k]) for k in v}

    def delta(self, a, b, key, bits=32):
        if isinstance(a[key], list):
            return [(y - x) % (1 << bits) for x, y in zip(a[key], b[key])]
        return (b[key] - a[key]) % (1 << bits)

    def test_shares(self):
        """ctl limit: the residency counters advance by exactly the share of the accumulation
        ticks; 0 gives ppt back to its rule (power at the cap)."""
        with CtlMount("-m", "mi300x-8-dkms", "--seed", "3") as m:
            m.ctl("limit", GPU0, "ppt", 87)
            m.ctl("limit", GPU0, "socket_thermal", 30)
            m.ctl("limit", GPU0, "hbm_thermal", 50)
            m.ctl("limit", GPU0, "prochot", 5)
            self.assertEqual(m.state()[1]["limiters_pct"],
                             {"ppt": 87, "socket_thermal": 30, "hbm_thermal": 50,
                              "vr_thermal": 0, "prochot": 5})
            a = self.sample(m, "6.19")
            time.sleep(0.55)
            b = self.sample(m, "6.19")
            acc = self.delta(a, b, "ACCUMULATION_COUNTER")
            self.assertGreaterEqual(acc, 300)
            self.assertEqual(acc % 100, 0)                      # 100 ticks per 100 ms step
            frac = {k: Fraction(self.delta(a, b, k), acc) for k in
                    ("PPT_RESIDENCY_ACC", "SOCKET_THM_RESIDENCY_ACC", "HBM_THM_RESIDENCY_ACC",
                     "VR_THM_RESIDENCY_ACC", "PROCHOT_RESIDENCY_ACC")}
            self.assertEqual(frac, {"PPT_RESIDENCY_ACC": Fraction(87, 100),
                                    "SOCKET_THM_RESIDENCY_ACC": Fraction(30, 100),
                                    "HBM_THM_RESIDENCY_ACC": Fraction(50, 100),
                                    "VR_THM_RESIDENCY_ACC": 0,
                                    "PROCHOT_RESIDENCY_ACC": Fraction(5, 100)})
            # per XCC: PPT at its share, THM at the largest thermal one, TOTAL the larger
            for key, want in (("GFX_BELOW_HOST_LIMIT_PPT_ACC", Fraction(87, 100)),
                              ("GFX_BELOW_HOST_LIMIT_THM_ACC", Fraction(50, 100)),
                              ("GFX_BELOW_HOST_LIMIT_TOTAL_ACC", Fraction(87, 100))):
                self.assertEqual([Fraction(d, acc) for d in self.delta(a, b, key, 64)],
                                 [want] * 8, key)
            # another GPU is not limited
            other = MI300X_BDFS[1]
            c = by_name(gpu_table("6.19"), m.metrics(other)[4])
            time.sleep(0.25)
            d = by_name(gpu_table("6.19"), m.metrics(other)[4])
            self.assertGreater(d["ACCUMULATION_COUNTER"][0], c["ACCUMULATION_COUNTER"][0])
            self.assertEqual(d["PROCHOT_RESIDENCY_ACC"], c["PROCHOT_RESIDENCY_ACC"])

            # share 0: the power rule again, below the cap and at it
            m.ctl("limit", GPU0, "ppt", 0)
            m.ctl("sensor", GPU0, "power_w", 300)
            a = self.sample(m, "6.19")
            time.sleep(0.35)
            b = self.sample(m, "6.19")
            self.assertGreater(self.delta(a, b, "ACCUMULATION_COUNTER"), 0)
            self.assertEqual(self.delta(a, b, "PPT_RESIDENCY_ACC"), 0)
            m.ctl("sensor", GPU0, "power_w", 750)               # the cap
            a = self.sample(m, "6.19")
            time.sleep(0.35)
            b = self.sample(m, "6.19")
            acc = self.delta(a, b, "ACCUMULATION_COUNTER")
            self.assertGreater(acc, 0)
            self.assertEqual(self.delta(a, b, "PPT_RESIDENCY_ACC"), acc)

    def test_share_in_fixed_tables(self):
        """The same counters in the v1.7 table (offsets of amdgpu-sysfs.md §5.4)."""
        with CtlMount("-m", "mi300x-8") as m:
            m.ctl("limit", GPU0, "ppt", 40)
            a = struct.unpack_from("<3I", m.read(m.gpu(GPU0, "gpu_metrics")), 40)
            time.sleep(0.35)
            b = struct.unpack_from("<3I", m.read(m.gpu(GPU0, "gpu_metrics")), 40)
            acc, ppt = (b[0] - a[0]) % 2**32, (b[2] - a[2]) % 2**32
            self.assertGreater(acc, 0)
            self.assertEqual(Fraction(ppt, acc), Fraction(40, 100))

    def test_wrap(self):
        """ctl counter: u32 layouts carry the counter modulo 2^32, u64 layouts whole."""
        for layout, bits in (("6.19", 32), ("7.0", 64)):
            machine = machine_file(self, "mi300x-8", gpu_metrics_revision=9,
                                   gpu_metrics_layout=layout)
            with self.subTest(layout=layout):
                with CtlMount("--frozen", "-m", machine) as m:
                    m.ctl("counter", GPU0, "accumulation", 2**32 + 5)
                    self.assertEqual(m.state()[1]["accumulation_counter"], 2**32 + 5)
                    v = by_name(gpu_table(layout), m.metrics()[4])
                    self.assertEqual(v["ACCUMULATION_COUNTER"], [(2**32 + 5) % 2**bits])
                with CtlMount("-m", machine) as m:
                    m.ctl("counter", GPU0, "accumulation", 2**32 - 1000)    # ten steps left
                    before = by_name(gpu_table(layout), m.metrics()[4])["ACCUMULATION_COUNTER"][0]
                    self.assertTrue(2**32 - 1000 <= before < 2**32, before)
                    time.sleep(1.5)
                    after = by_name(gpu_table(layout), m.metrics()[4])["ACCUMULATION_COUNTER"][0]
                    if bits == 32:
                        self.assertLess(after, before)                      # wrapped
                    else:
                        self.assertGreater(after, 2**32)
                    self.assertEqual((after - before) % 2**bits % 100, 0)
                    self.assertGreater((after - before) % 2**bits, 1000)
        # the v1.6 to v1.8 tables carry it as u32 as well
        with CtlMount("--frozen", "-m", "mi300x-8") as m:
            m.ctl("counter", GPU0, "accumulation", 2**40 + 7)
            self.assertEqual(struct.unpack_from("<I", m.read(m.gpu(GPU0, "gpu_metrics")), 40)[0],
                             7)

    def test_bad_arguments(self):
        with CtlMount("--frozen", "-m", "mi300x-8") as m:
            for args, name, text in (
                    (("limit", GPU0, "fan", 5), "EINVAL", 'unknown limiter "fan" (ppt, '),
                    (("limit", GPU0, "ppt", 101), "ERANGE", "PERCENT: 101 is out of range"),
                    (("limit", GPU0, "ppt", "-1"), "EINVAL", 'PERCENT: "-1" is not a number'),
                    (("limit", "0000:99:00.0", "ppt", 5), "ENODEV", "no GPU at 0000:99:00.0"),
                    (("limit", "x", "ppt", 5), "EINVAL", '"x" is not a PCI address'),
                    (("limit", GPU0, "ppt"), "EINVAL", "limit BDF"),
                    (("counter", GPU0, "residency", 5), "EINVAL",
                     'unknown counter "residency" (accumulation)'),
                    (("counter", GPU0, "accumulation", 2**64), "EINVAL",
                     'VALUE: "18446744073709551616" is not a number'),
                    (("counter", GPU0, "accumulation", "1e3"), "EINVAL", "is not a number")):
                with self.subTest(args=args):
                    p = m.ctl(*args, check=False)
                    self.assertNotEqual(p.returncode, 0)
                    self.assertIn(text, p.stderr)
                    if p.returncode == 3:
                        self.assertIn(name, p.stderr)
            # nothing changed
            self.assertEqual(set(m.state()[1]["limiters_pct"].values()), {0})


class Throttle(unittest.TestCase):
    """The whole chain: amdsmi metric --throttle (two samples of the library, 100 ms apart)
    on GPUs whose limiters hold the shares ctl limit set, also across a wrap of the u32
    accumulation counter of the 6.19 layout."""

    def test_cli_throttle(self):
        cli = os.environ.get("AMDSMI_CLI", "")
        with CtlMount("-m", "mi300x-8-dkms", "--seed", "5") as m:
            m.ctl("limit", GPU0, "ppt", 87)
            m.ctl("limit", GPU0, "hbm_thermal", 25)
            m.ctl("limit", MI300X_BDFS[1], "vr_thermal", 60)
            m.ctl("counter", GPU0, "accumulation", 2**32 - 30)
            env = dict(os.environ, AMDSMI_SYSFS_ROOT=m.root)
            env.pop("AMDSMI_DEV_ROOT", None)
            p = subprocess.run([cli, "metric", "--throttle", "--json", "-g", "0,1"],
                               capture_output=True, text=True, env=env, timeout=60)
            self.assertEqual(p.returncode, 0, p.stderr)
            gpus = {g["bdf"]: g["limiters"] for g in json.loads(p.stdout)["gpus"]}
            lim = gpus[GPU0]
            self.assertEqual(lim["status"], "measured", lim)
            self.assertEqual((lim["power_pct"], lim["hbm_thermal_pct"], lim["socket_thermal_pct"],
                              lim["vr_thermal_pct"], lim["prochot_pct"]), (87, 25, 0, 0, 0))
            self.assertEqual(lim["ticks"] % 100, 0)
            self.assertEqual([(x["below_host_limit_ppt_pct"], x["below_host_limit_thm_pct"],
                               x["below_host_limit_total_pct"]) for x in lim["xcc"]],
                             [(87, 25, 87)] * 8)
            lim = gpus[MI300X_BDFS[1]]
            self.assertEqual((lim["power_pct"], lim["vr_thermal_pct"]), (0, 60))


class PfFiles(unittest.TestCase):
    """health-and-control.md §3.2, §4.2: on every amdgpu PF, never on a VF."""

    def test_pf_files(self):
        for preset, pf in (("mi300x-8", GPU0), ("mi355x-8", GPU0), ("mi300a-4", "0000:01:00.0"),
                           ("mi300x-sriov", GPU0)):
            with self.subTest(machine=preset), Mount("--frozen", "-m", preset) as m:
                for f, want in (("compute_reset_mask", "soft queue pipe full\n"),
                                ("pcie_replay_count", "0\n")):
                    st = os.stat(m.path(m.gpu(pf, f)))
                    self.assertEqual(st.st_mode & 0o777, 0o444, f)
                    self.assertEqual(m.text(m.gpu(pf, f)), want, f)
                if preset == "mi300x-sriov":
                    self.assertEqual(m.write(m.gpu(pf, "sriov_numvfs"), "2"), 0)
                    for i in range(2):
                        vf = m.gpu(vf_bdf(pf, i))
                        self.assertTrue(os.path.isdir(m.path(vf)))
                        for f in ("compute_reset_mask", "pcie_replay_count"):
                            self.assertFalse(os.path.exists(m.path(vf + "/" + f)), (vf, f))
        # guests see a VF; a gim host's PF has no amdgpu
        for preset in ("mi300x-guest-1vf", "mi300x-guest-multivf", "mi300x-gim-1vf"):
            with self.subTest(machine=preset), Mount("--frozen", "-m", preset) as m:
                bdf = os.listdir(m.path("bus/pci/drivers/amdgpu"))[0] \
                    if os.path.isdir(m.path("bus/pci/drivers/amdgpu")) else None
                gpus = [d for d in os.listdir(m.path("bus/pci/devices"))
                        if os.path.exists(m.path(m.gpu(d, "vendor")))
                        and m.value(m.gpu(d, "vendor")) == "0x1002"]
                self.assertTrue(gpus, bdf)
                for d in gpus:
                    for f in ("compute_reset_mask", "pcie_replay_count"):
                        self.assertFalse(os.path.exists(m.path(m.gpu(d, f))), (d, f))


if __name__ == "__main__":
    main()
