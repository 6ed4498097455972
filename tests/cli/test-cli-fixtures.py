#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Cross-checks what amdsmi(1) prints for one fixture tree against <tree>.expected.json.

usage: test-cli-fixtures.py AMDSMI TREE [unittest options]
       test-cli-fixtures.py --check-list TREE...
env:   FIXTURES_DIR  the generated trees (BUILD/tests/fixtures/trees)

Runs `amdsmi list|static|metric --json` with AMDSMI_SYSFS_ROOT=FIXTURES_DIR/TREE (and no
AMDSMI_DEV_ROOT, so nothing comes from an ioctl) and compares every value with the fixture
generator's description of the tree, converting units here, independently of the CLI:
µW -> W, m°C -> °C, Hz -> MHz, gpu_metrics energy counts (2^-16 J) -> J, 10 ns -> ns,
0.1 GT/s -> GT/s, GB/s -> bytes/s. The generator describes the tree from the interface notes;
the CLI reads it through libamdsmi; neither side is derived from the other, so a mismatch is a
bug in one of them.

--check-list fails when FIXTURES_DIR holds a tree that is not named (tests/cli/meson.build
lists the trees, one test each; a new tree must be added there).
"""

import json
import os
import subprocess
import sys
import unittest
from decimal import Decimal
from fractions import Fraction

AMDSMI = None
TREE = None
FIXTURES_DIR = os.environ.get("FIXTURES_DIR", "")

# gpu_metrics in the CLI's JSON -> the raw field(s) of the table it comes from, and the unit
# conversion (a factor; "energy" = 2^-16 J per count). Raw names are the C field names of
# amdgpu's gpu_metrics_v1_x structs; the first one present in the table's layout is used.
# A CLI key whose raw fields are all absent from the layout must be null.
GM_SCALARS = {
    ("temperatures", "edge_c"): (["temperature_edge"], 1),
    ("temperatures", "hotspot_c"): (["temperature_hotspot"], 1),
    ("temperatures", "mem_c"): (["temperature_mem"], 1),
    ("temperatures", "vrgfx_c"): (["temperature_vrgfx"], 1),
    ("temperatures", "vrsoc_c"): (["temperature_vrsoc"], 1),
    ("temperatures", "vrmem_c"): (["temperature_vrmem"], 1),
    ("socket_power_w",): (["curr_socket_power", "average_socket_power"], 1),
    ("energy_j",): (["energy_accumulator"], "energy"),
    ("energy_accumulator",): (["energy_accumulator"], 1),
    ("activity", "gfx_pct"): (["average_gfx_activity"], 1),
    ("activity", "umc_pct"): (["average_umc_activity"], 1),
    ("activity", "mm_pct"): (["average_mm_activity"], 1),
    ("activity", "gfx_acc"): (["gfx_activity_acc"], 1),
    ("activity", "mem_acc"): (["mem_activity_acc"], 1),
    ("mem_max_bandwidth_bytes_per_s",): (["mem_max_bandwidth"], 10**9),
    ("system_clock_counter_ns",): (["system_clock_counter"], 1),
    ("firmware_timestamp_ns",): (["firmware_timestamp"], 10),
    ("throttle", "status"): (["throttle_status"], 1),
    ("throttle", "indep_status"): (["indep_throttle_status"], 1),
    ("throttle", "gfxclk_lock_status"): (["gfxclk_lock_status"], 1),
    ("throttle", "accumulation_counter"): (["accumulation_counter"], 1),
    ("throttle", "prochot_residency_acc"): (["prochot_residency_acc"], 1),
    ("throttle", "ppt_residency_acc"): (["ppt_residency_acc"], 1),
    ("throttle", "socket_thm_residency_acc"): (["socket_thm_residency_acc"], 1),
    ("throttle", "vr_thm_residency_acc"): (["vr_thm_residency_acc"], 1),
    ("throttle", "hbm_thm_residency_acc"): (["hbm_thm_residency_acc"], 1),
    ("clocks", "mem_clock_mhz"): (["current_uclk"], 1),
    ("clocks", "avg_gfx_clock_mhz"): (["average_gfxclk_frequency"], 1),
    ("clocks", "avg_soc_clock_mhz"): (["average_socclk_frequency"], 1),
    ("clocks", "avg_mem_clock_mhz"): (["average_uclk_frequency"], 1),
    ("fan_speed_rpm",): (["current_fan_speed"], 1),
    ("voltages", "soc_mv"): (["voltage_soc"], 1),
    ("voltages", "gfx_mv"): (["voltage_gfx"], 1),
    ("voltages", "mem_mv"): (["voltage_mem"], 1),
    ("pcie", "width"): (["pcie_link_width"], 1),
    ("pcie", "speed_gts"): (["pcie_link_speed"], Fraction(1, 10)),
    ("pcie", "bandwidth_acc_gb_per_s"): (["pcie_bandwidth_acc"], 1),
    ("pcie", "bandwidth_gb_per_s_acc"): (["pcie_bandwidth_acc"], 1),
    ("pcie", "bandwidth_inst_gb_per_s"): (["pcie_bandwidth_inst"], 1),
    ("pcie", "l0_to_recov_count_acc"): (["pcie_l0_to_recov_count_acc"], 1),
    ("pcie", "replay_count_acc"): (["pcie_replay_count_acc"], 1),
    ("pcie", "replay_rover_count_acc"): (["pcie_replay_rover_count_acc"], 1),
    ("pcie", "nak_sent_count_acc"): (["pcie_nak_sent_count_acc"], 1),
    ("pcie", "nak_rcvd_count_acc"): (["pcie_nak_rcvd_count_acc"], 1),
    ("pcie", "lc_perf_other_end_recovery"): (["pcie_lc_perf_other_end_recovery"], 1),
    ("xgmi", "width"): (["xgmi_link_width"], 1),
    ("xgmi", "speed_gbps"): (["xgmi_link_speed"], 1),
}
# Arrays: trailing unavailable slots dropped, inner ones null, null when none has a value.
GM_ARRAYS = {
    ("temperatures", "hbm_c"): "temperature_hbm",
    ("activity", "vcn_pct"): "vcn_activity",
    ("activity", "jpeg_pct"): "jpeg_activity",
    ("clocks", "gfx_clock_mhz"): "current_gfxclk",
    ("clocks", "soc_clock_mhz"): "current_socclk",
    ("clocks", "vclk0_mhz"): "current_vclk0",
    ("clocks", "dclk0_mhz"): "current_dclk0",
    ("xgmi", "read_data_kb"): "xgmi_read_data_acc",
    ("xgmi", "write_data_kb"): "xgmi_write_data_acc",
    ("xgmi", "link_status"): "xgmi_link_status",
}
# Objects that are null when every one of their values is unavailable.
GM_NULLABLE_GROUPS = ("pcie", "xgmi")
# Keys the fixed layouts (1.3 to 1.8) do not carry as fields of their own: the newer
# temperatures (null), the counter width, the per-XCC arrays of the whole GPU (the
# partitions' entries end to end) and how an attribute-encoded table was read (null);
# checked by test_gpu_metrics_derived.
GM_DERIVED = {
    ("temperatures", "aid_c"), ("temperatures", "xcd_c"), ("temperatures", "mid_c"),
    ("throttle", "accumulation_counter_bits"),
    ("activity", "xcc_gfx_busy_pct"), ("activity", "xcc_gfx_busy_acc"),
    ("throttle", "xcc_below_host_limit_ppt_acc"), ("throttle", "xcc_below_host_limit_thm_acc"),
    ("throttle", "xcc_below_host_limit_total_acc"), ("throttle", "xcc_low_utilization_acc"),
    ("attributes",),
    ("xgmi", "links"), ("xgmi", "link_state"),
}
# The per-XCC arrays of the whole GPU: CLI path -> the xcp_stats field of each partition
# (v1.7's single gfx_below_host_limit_acc is the total one)
GM_XCC = {
    ("activity", "xcc_gfx_busy_pct"): "gfx_busy_inst",
    ("activity", "xcc_gfx_busy_acc"): "gfx_busy_acc",
    ("throttle", "xcc_below_host_limit_ppt_acc"): "gfx_below_host_limit_ppt_acc",
    ("throttle", "xcc_below_host_limit_thm_acc"): "gfx_below_host_limit_thm_acc",
    ("throttle", "xcc_below_host_limit_total_acc"): "gfx_below_host_limit_total_acc",
    ("throttle", "xcc_low_utilization_acc"): "gfx_low_utilization_acc",
}
# Per-partition entries (xcp_stats[]): CLI key -> raw field of the entry.
XCP_FIELDS = {
    "gfx_busy_pct": "gfx_busy_inst",
    "jpeg_busy_pct": "jpeg_busy",
    "vcn_busy_pct": "vcn_busy",
    "gfx_busy_acc": "gfx_busy_acc",
    "gfx_below_host_limit_acc": "gfx_below_host_limit_acc",
    "gfx_below_host_limit_ppt_acc": "gfx_below_host_limit_ppt_acc",
    "gfx_below_host_limit_thm_acc": "gfx_below_host_limit_thm_acc",
    "gfx_low_utilization_acc": "gfx_low_utilization_acc",
    "gfx_below_host_limit_total_acc": "gfx_below_host_limit_total_acc",
}
# Raw fields the CLI does not show (the header, counts handled apart, v1.3's second VCN).
GM_NOT_SHOWN = {"structure_size", "format_revision", "content_revision", "num_partition",
                "xcp_stats", "average_vclk0_frequency", "average_dclk0_frequency",
                "average_vclk1_frequency", "average_dclk1_frequency", "current_vclk1",
                "current_dclk1"}


def run_cli(*args):
    env = {k: v for k, v in os.environ.items()
           if k not in ("AMDSMI_DEV_ROOT", "AMDSMI_DEBUG")}
    env["AMDSMI_SYSFS_ROOT"] = os.path.join(FIXTURES_DIR, TREE)
    p = subprocess.run([AMDSMI] + list(args), env=env, capture_output=True, text=True,
                       check=False, timeout=60)
    return p


def load_doc(verb):
    p = run_cli(verb, "--json")
    where = "amdsmi %s --json on %s" % (verb, TREE)
    if p.returncode != 0:
        raise AssertionError("%s: exit status %d: %s" % (where, p.returncode, p.stderr))
    if p.stderr:
        raise AssertionError("%s: unexpected stderr: %s" % (where, p.stderr))
    # Decimal keeps the printed digits exactly (energy_j has micro-joule digits).
    return json.loads(p.stdout, parse_float=Decimal)


def exact(v):
    """A JSON number as an exact Fraction (None stays None)."""
    if v is None or isinstance(v, bool):
        return v
    if isinstance(v, (int, Decimal)):
        return Fraction(v)
    return v


def na_array(raw, factor=1):
    """The CLI form of a raw array: trailing None dropped, None if nothing is left."""
    if raw is None:
        return None
    if not isinstance(raw, list):
        raw = [raw]
    items = list(raw)
    while items and items[-1] is None:
        items.pop()
    if not items:
        return None
    return [None if x is None else Fraction(x) * factor for x in items]


def hexid(v, digits):
    return "0x%0*x" % (digits, v)


def unique_id(text):
    """The one spelling of a unique_id in every verb: 0x and 16 lower-case hex digits."""
    return None if text is None else hexid(int(text, 16), 16)


def gfx_target(version):
    """KFD's gfx_target_version as its LLVM name: 90402 -> gfx942, 90010 -> gfx90a."""
    return "gfx%d%x%x" % (version // 10000, version // 100 % 100, version % 100)


def smc_dotted(version):
    """The kernel's decoding of the SMC (PMFW) version: [program.]major.minor.debug."""
    b = [(version >> s) & 0xff for s in (24, 16, 8, 0)]
    return ".".join(str(x) for x in (b if b[0] else b[1:]))


def trim(items):
    """An array without its trailing nulls (None if nothing is left)."""
    items = list(items)
    while items and items[-1] is None:
        items.pop()
    return items or None


XGMI_STATE = {0: "down", 1: "up", 2: "n/a", None: "n/a"}


def link_speed_gts(text):
    """"32.0 GT/s PCIe" -> 32 (GT/s)."""
    return Fraction(Decimal(text.split()[0]))


def or_null(s):
    """The CLI shows an empty sysfs string as null (not available)."""
    return s if s else None


class FixtureTree(unittest.TestCase):
    maxDiff = None

    @classmethod
    def setUpClass(cls):
        root = os.path.join(FIXTURES_DIR, TREE)
        with open(root + ".expected.json", encoding="utf-8") as f:
            cls.exp = json.load(f)
        cls.egpus = sorted(cls.exp["gpus"], key=lambda g: g["index"])
        cls.docs = {verb: load_doc(verb) for verb in ("list", "static", "metric")}

    def gpus(self, verb):
        return self.docs[verb]["gpus"]

    def each_gpu(self, verb, check):
        """Runs check(expected, printed) per GPU, each a subtest named by GPU index and BDF."""
        got = self.gpus(verb)
        self.assertEqual(len(got), len(self.egpus), "%s: number of GPUs" % verb)
        for e, g in zip(self.egpus, got):
            with self.subTest(verb=verb, gpu=e["index"], bdf=e["bdf"]):
                check(e, g)

    # --- documents as a whole ---------------------------------------------------------------

    def test_documents(self):
        for verb, doc in self.docs.items():
            with self.subTest(verb=verb):
                self.assertEqual(doc["schema"], "amdsmi/1")
                self.assertEqual(doc["command"], verb)
                self.assertEqual(doc["errors"], [], "a clean tree reports no errors")

    def test_gpu_order(self):
        want = [e["bdf"] for e in self.egpus]
        self.assertEqual(len(want), self.exp["gpu_count"])
        by_address = sorted(self.egpus, key=lambda e: (e["domain"], e["bus"], e["devfn"]))
        self.assertEqual(want, [e["bdf"] for e in by_address], "expected.json not in BDF order")
        for verb in self.docs:
            with self.subTest(verb=verb):
                self.assertEqual([g["bdf"] for g in self.gpus(verb)], want)
                self.assertEqual([g["gpu"] for g in self.gpus(verb)], list(range(len(want))))

    # --- list ---------------------------------------------------------------------------------

    def test_list(self):
        def check(e, g):
            self.assertEqual(g["product"], e["product"])
            self.assertEqual(g["role"], e["role"])
            self.assertEqual(g["driver"], e["driver"])
            self.assertEqual(g["partition_count"], e["compute_partition"]["num_partitions"])
            self.assertEqual(g["compute_mode"], e["compute_partition"]["current"])
            self.assertEqual(g["memory_mode"], e["memory_partition"]["current"])
            self.assertEqual(g["unique_id"], unique_id(e["unique_id"]))

        self.each_gpu("list", check)

    # --- static -------------------------------------------------------------------------------

    def test_static_identity(self):
        hive = self.exp["xgmi_hive_id"]

        def check(e, g):
            self.assertEqual(g["product"], e["product"])
            self.assertEqual(g["vendor_id"], hexid(e["vendor_id"], 4))
            self.assertEqual(g["device_id"], hexid(e["device_id"], 4))
            self.assertEqual(g["subsystem_vendor_id"], hexid(e["subsystem_vendor_id"], 4))
            self.assertEqual(g["subsystem_device_id"], hexid(e["subsystem_device_id"], 4))
            self.assertEqual(g["revision"], hexid(e["revision"], 2))
            self.assertEqual(g["class"], hexid(e["pci_class"], 6))
            self.assertEqual(g["is_vf"], e["sriov"]["is_vf"])
            self.assertEqual(g["role"], e["role"])
            self.assertEqual(g["driver"], e["driver"])
            self.assertEqual(g["driver_name"], e["driver"])
            if e["sriov"]["physfn"]:
                self.assertIsNotNone(g["physfn_bdf"])
            else:
                self.assertIsNone(g["physfn_bdf"])
            self.assertEqual(g["numa_node"], e["numa_node"] if e["numa_node"] >= 0 else None)
            self.assertEqual(g["card_minor"], int(e["card"][len("card"):]))
            self.assertEqual(g["render_minor"], int(e["render"][len("renderD"):]))
            self.assertEqual(g["hive_id"], hexid(hive, 16) if hive else None)
            self.assertEqual(g["unique_id"], unique_id(e["unique_id"]))
            # the partitions' unique_id is spelled as the GPU's
            for q in g["partitions"] or []:
                if q["unique_id"] is not None:
                    self.assertRegex(q["unique_id"], r"^0x[0-9a-f]{16}$")
            if g["unique_id"] is not None:
                self.assertRegex(g["unique_id"], r"^0x[0-9a-f]{16}$")
            self.assertEqual(g["serial_number"], e["serial"])
            fru = e["fru"] or {}
            self.assertEqual(g["fru"], {k: or_null(fru.get(k)) for k in
                                        ("product_name", "product_number", "manufacturer",
                                         "fru_id")})
            self.assertEqual(g["vbios"], {"version": e["vbios"], "build": e["vbios_build"]})
            self.assertEqual(g["compute_mode"], e["compute_partition"]["current"])
            self.assertEqual(g["memory_mode"], e["memory_partition"]["current"])

        self.each_gpu("static", check)

    def test_static_pcie(self):
        def check(e, g):
            link = e["pcie"]
            self.assertIsNotNone(g["pcie"])
            self.assertEqual(exact(g["pcie"]["current_speed_gts"]),
                             link_speed_gts(link["current_link_speed"]))
            self.assertEqual(g["pcie"]["current_width"], link["current_link_width"])
            self.assertEqual(exact(g["pcie"]["max_speed_gts"]),
                             link_speed_gts(link["max_link_speed"]))
            self.assertEqual(g["pcie"]["max_width"], link["max_link_width"])

        self.each_gpu("static", check)

    def test_static_memory(self):
        def check(e, g):
            m = e["memory"]
            self.assertEqual(g["memory"], {"vram_total_bytes": m["vram_total"],
                                           "vis_vram_total_bytes": m["vis_vram_total"],
                                           "gtt_total_bytes": m["gtt_total"]})

        self.each_gpu("static", check)

    def test_static_firmware(self):
        def check(e, g):
            fw = g["firmware"]
            self.assertIsNotNone(fw)
            self.assertEqual({f["name"]: f["version"] for f in fw}, e["firmware"])
            # one form: the hex string the table shows, the dotted form where it is known
            for f in fw:
                with self.subTest(firmware=f["name"]):
                    self.assertEqual(f["version_hex"], "0x%x" % f["version"])
                    self.assertEqual(f["version_dotted"],
                                     smc_dotted(f["version"]) if f["name"] == "smc" else None)
            if "smc" in e["firmware"]:
                self.assertRegex(next(f for f in fw if f["name"] == "smc")["version_dotted"],
                                 r"^[0-9]+\.[0-9]+\.[0-9]+$")
            self.assertEqual(len(fw), len(e["firmware"]), "a firmware listed twice")
            # AMDSMI_DEV_ROOT is unset: nothing may come from the INFO ioctl
            self.assertEqual({f["source"] for f in fw}, {"sysfs"})

        self.each_gpu("static", check)

    def test_static_partitions(self):
        def check(e, g):
            parts = e["partitions"]
            self.assertEqual(len(parts), e["compute_partition"]["num_partitions"])
            self.assertEqual(g["partition_count"], len(parts))
            self.assertEqual(len(g["partitions"]), len(parts))
            for p, q in zip(parts, g["partitions"]):
                with self.subTest(partition=p["partition"]):
                    self.assertEqual(q["partition"], p["partition"])
                    self.assertEqual(q["kfd_node"], p["kfd_node"])
                    self.assertEqual(q["kfd_gpu_id"], p["gpu_id"])
                    self.assertEqual(q["render_minor"], p["render_minor"])
                    self.assertEqual(q["simd_count"], p["simd_count"])
                    self.assertEqual(q["compute_units"], p["simd_count"] // 4)
                    self.assertEqual(q["compute_units"], p["cu_count"])
                    self.assertEqual(q["xcc_count"], p["num_xcc"])
                    self.assertEqual(q["memory_bytes"], p["memory_bytes"])
                    self.assertEqual(q["gfx_target_version"], p["gfx_target_version"])
                    self.assertEqual(q["gfx_target"], gfx_target(p["gfx_target_version"]))
                    self.assertIn(q["gfx_target"], ("gfx942", "gfx950"))
                    self.assertEqual(q["unique_id"],
                                     hexid(p["unique_id"], 16) if p["unique_id"] else None)
            self.assertEqual(sum(p["num_xcc"] for p in parts),
                             e["compute_partition"]["xcc_per_partition"] * len(parts))

        self.each_gpu("static", check)

    # --- metric: hwmon and pm files -----------------------------------------------------------

    def test_metric_power(self):
        def check(e, g):
            hw = e["hwmon"]
            pw = g["power"]
            if hw is None:
                self.assertEqual(pw, {"power_w": None, "cap_w": None, "cap_min_w": None,
                                      "cap_max_w": None, "cap_default_w": None,
                                      "cap_writable": None, "ppt1": None})
                return
            v = hw["values"]

            def watts(name):
                return Fraction(v[name], 10**6) if name in v else None

            self.assertEqual(exact(pw["power_w"]), watts("power1_input"))
            self.assertEqual(exact(pw["cap_w"]), watts("power1_cap"))
            self.assertEqual(exact(pw["cap_min_w"]), watts("power1_cap_min"))
            self.assertEqual(exact(pw["cap_max_w"]), watts("power1_cap_max"))
            self.assertEqual(exact(pw["cap_default_w"]), watts("power1_cap_default"))
            self.assertEqual(pw["cap_writable"], hw["modes"]["power1_cap"] == "0644")
            caps = e["power_caps_w"]
            self.assertEqual(exact(pw["cap_w"]), caps["cap"])
            self.assertEqual(exact(pw["cap_max_w"]), caps["max"])
            if "power2_cap" not in v:
                self.assertIsNone(pw["ppt1"])
                self.assertIsNone(caps["ppt1"])
            else:
                self.assertEqual({k: exact(x) for k, x in pw["ppt1"].items()},
                                 {"cap_w": watts("power2_cap"),
                                  "cap_min_w": watts("power2_cap_min"),
                                  "cap_max_w": watts("power2_cap_max"),
                                  "cap_default_w": watts("power2_cap_default")})
                self.assertEqual(exact(pw["ppt1"]["cap_w"]), caps["ppt1"]["cap"])
            board = Fraction(v["in2_input"]) if v.get("in2_label") == "vddboard" else None
            self.assertEqual(exact(g["voltages"]["board_mv"]), board)

        self.each_gpu("metric", check)

    def test_metric_temperatures(self):
        def check(e, g):
            hw = e["hwmon"]
            temps, limits = {}, {}
            if hw is not None:
                v = hw["values"]
                chans = sorted(int(k[4:-6]) for k in v
                               if k.startswith("temp") and k.endswith("_input"))
                for n in chans:
                    label = v.get("temp%d_label" % n) or "temp%d" % n

                    def celsius(attr, n=n):
                        key = "temp%d_%s" % (n, attr)
                        return Fraction(v[key], 1000) if key in v else None

                    temps[label + "_c"] = celsius("input")
                    limits[label] = {"crit_c": celsius("crit"),
                                     "crit_hyst_c": celsius("crit_hyst"),
                                     "emergency_c": celsius("emergency")}
            self.assertEqual({k: exact(x) for k, x in g["temperatures"].items()}, temps)
            self.assertEqual({k: {a: exact(x) for a, x in d.items()}
                              for k, d in g["temperature_limits"].items()}, limits)

        self.each_gpu("metric", check)

    def test_metric_clocks_usage_memory(self):
        def check(e, g):
            hw = e["hwmon"]
            clocks = {"gfx_clock_mhz": None, "mem_clock_mhz": None}
            if hw is not None:
                v = hw["values"]
                for k, label in v.items():
                    if k.startswith("freq") and k.endswith("_label") and label in ("sclk",
                                                                                   "mclk"):
                        mhz = Fraction(v[k[:-len("_label")] + "_input"], 10**6)
                        clocks[{"sclk": "gfx_clock_mhz", "mclk": "mem_clock_mhz"}[label]] = mhz
                # the hwmon clocks are the current DPM levels
                self.assertEqual(clocks["gfx_clock_mhz"], e["dpm_levels_mhz"]["sclk"]["current"])
                self.assertEqual(clocks["mem_clock_mhz"], e["dpm_levels_mhz"]["mclk"]["current"])
            self.assertEqual({k: exact(x) for k, x in g["clocks"].items()}, clocks)
            busy = e["busy"] or {}
            self.assertEqual(g["usage"], {"gpu_busy_pct": busy.get("gpu_busy_percent"),
                                          "mem_busy_pct": busy.get("mem_busy_percent")})
            self.assertEqual(g["memory"], {"vram_used_bytes": e["memory"]["vram_used"],
                                           "vram_total_bytes": e["memory"]["vram_total"]})

        self.each_gpu("metric", check)

    # --- metric: gpu_metrics ------------------------------------------------------------------

    def test_gpu_metrics(self):
        def check(e, g):
            gm, got = e["gpu_metrics"], g["gpu_metrics"]
            if gm is None:
                self.assertIsNone(got)
                return
            self.assertIsNotNone(got, "gpu_metrics missing")
            f = gm["fields"]
            self.assertEqual(got["format_revision"], gm["format_revision"])
            self.assertEqual(got["content_revision"], gm["content_revision"])
            self.assertEqual((f["format_revision"], f["content_revision"]),
                             (gm["format_revision"], gm["content_revision"]))
            shown = set()

            def lookup(path):
                o = got
                for k in path[:-1]:
                    o = o[k]
                    if o is None:    # a nullable group: checked below
                        return None
                return o[path[-1]]

            # every key the CLI prints is known here
            printed = set()
            for k, v in got.items():
                if isinstance(v, dict):
                    printed |= {(k, k2) for k2 in v}
                elif k not in ("format_revision", "content_revision", "partitions") + \
                        GM_NULLABLE_GROUPS:
                    printed.add((k,))
            for grp in GM_NULLABLE_GROUPS:
                if got[grp] is None:
                    printed |= {p for p in list(GM_SCALARS) + list(GM_ARRAYS) if p[0] == grp}
            self.assertEqual(printed - set(GM_SCALARS) - set(GM_ARRAYS) - GM_DERIVED, set(),
                             "gpu_metrics keys this test does not know")

            for path, (names, factor) in GM_SCALARS.items():
                with self.subTest(field=".".join(path)):
                    name = next((n for n in names if n in f), None)
                    raw = f.get(name) if name else None
                    shown.add(name)
                    if raw is None:
                        want = None
                    elif factor == "energy":
                        want = Fraction(raw, 1 << 16)
                    else:
                        want = Fraction(raw) * factor
                    val = exact(lookup(path))
                    if factor == "energy" and want is not None and val is not None:
                        # printed in micro-joules: within 1 µJ of the exact value
                        self.assertLessEqual(abs(val - want), Fraction(1, 10**6),
                                             "%s J, expected %s J" % (float(val), float(want)))
                    else:
                        self.assertEqual(val, want)
            for path, name in GM_ARRAYS.items():
                with self.subTest(field=".".join(path)):
                    shown.add(name)
                    val = lookup(path)
                    if val is not None and path[0] == "xgmi":
                        val = trim(val)  # padded to the length of every per-link array
                    self.assertEqual(None if val is None else [exact(x) for x in val],
                                     na_array(f.get(name)))
            for grp in GM_NULLABLE_GROUPS:
                with self.subTest(group=grp):
                    names = [GM_SCALARS[p][0][0] for p in GM_SCALARS if p[0] == grp]
                    names += [n for p, n in GM_ARRAYS.items() if p[0] == grp]
                    if all(na_array(f.get(n)) is None for n in names):
                        self.assertIsNone(got[grp])
                    else:
                        self.assertIsNotNone(got[grp])
            self.assertEqual({n for n in f if not n.startswith("padding")}
                             - shown - GM_NOT_SHOWN, set(),
                             "gpu_metrics fields the CLI does not show")

        self.each_gpu("metric", check)

    def test_gpu_metrics_xgmi_links(self):
        """Every per-link array has one length (links), link_state decodes link_status."""
        def check(e, g):
            x = (g["gpu_metrics"] or {}).get("xgmi")
            if x is None:
                return
            f = e["gpu_metrics"]["fields"]
            arrays = {k: x[k] for k in ("read_data_kb", "write_data_kb", "link_status",
                                         "link_state") if x[k] is not None}
            if not arrays:
                self.assertIsNone(x["links"])
                return
            self.assertEqual({k: len(v) for k, v in arrays.items()},
                             {k: x["links"] for k in arrays})
            want = max(len(na_array(f.get(n)) or []) for n in
                       ("xgmi_read_data_acc", "xgmi_write_data_acc", "xgmi_link_status"))
            self.assertEqual(x["links"], want)
            raw = f.get("xgmi_link_status")
            if na_array(raw) is None:
                self.assertIsNone(x["link_state"])
            else:
                self.assertEqual(x["link_state"], [XGMI_STATE[v] for v in raw[:want]])

        self.each_gpu("metric", check)

    def test_gpu_metrics_derived(self):
        def check(e, g):
            gm, got = e["gpu_metrics"], g["gpu_metrics"]
            if gm is None:
                return
            f, rev = gm["fields"], gm["content_revision"]
            for key in ("aid_c", "xcd_c", "mid_c"):
                self.assertIsNone(got["temperatures"][key])
            self.assertIsNone(got["attributes"])
            self.assertEqual(got["throttle"]["accumulation_counter_bits"],
                             32 if rev >= 6 else None)
            num = f.get("num_partition")
            stats = f.get("xcp_stats", [])[:num if num is not None else 8]
            for path, name in GM_XCC.items():
                if rev == 7 and name == "gfx_below_host_limit_total_acc":
                    name = "gfx_below_host_limit_acc"
                want = []
                for raw in stats:
                    busy = na_array(raw.get("gfx_busy_inst")) or []
                    acc = na_array(raw.get("gfx_busy_acc")) or []
                    vals = na_array(raw.get(name)) or []
                    for j in range(8):
                        if (j < len(busy) and busy[j] is not None) or \
                                (j < len(acc) and acc[j] is not None):
                            want.append(vals[j] if j < len(vals) else None)
                want = want[:8]
                while want and want[-1] is None:
                    want.pop()
                val = got[path[0]][path[1]]
                with self.subTest(field=".".join(path)):
                    self.assertEqual(None if val is None else [exact(x) for x in val],
                                     want or None)

        self.each_gpu("metric", check)

    def test_gpu_metrics_partitions(self):
        def check(e, g):
            gm, got = e["gpu_metrics"], g["gpu_metrics"]
            if gm is None:
                return
            f = gm["fields"]
            if "xcp_stats" not in f:
                self.assertIsNone(got["partitions"], "no xcp_stats before v1.6")
                return
            num = f["num_partition"]
            self.assertEqual(num, e["compute_partition"]["num_partitions"])
            parts = got["partitions"]
            self.assertEqual([p["partition"] for p in parts], list(range(num)),
                             "one entry per valid partition, none past num_partition")
            for i, p in enumerate(parts):
                raw = f["xcp_stats"][i]
                with self.subTest(partition=i):
                    self.assertEqual(set(p) - {"partition"}, set(XCP_FIELDS))
                    for key, name in XCP_FIELDS.items():
                        want = na_array(raw.get(name))
                        val = p[key]
                        self.assertEqual(None if val is None else [exact(x) for x in val],
                                         want, key)
                    # gfx_busy_inst[j] is the j-th XCC of the partition
                    busy = p["gfx_busy_pct"]
                    self.assertEqual(len(busy), e["partitions"][i]["num_xcc"])
            # the entries past num_partition are all-ones in the table
            for raw in f["xcp_stats"][num:]:
                self.assertTrue(all(na_array(x) is None for x in raw.values()))

        self.each_gpu("metric", check)


def check_list(names):
    trees = sorted(n[:-len(".expected.json")] for n in os.listdir(FIXTURES_DIR)
                   if n.endswith(".expected.json"))
    missing = [t for t in trees if t not in names]
    gone = [t for t in names if t not in trees]
    for t in missing:
        print("fixture tree %s has no CLI test: add it to tests/cli/meson.build" % t)
    for t in gone:
        print("tests/cli/meson.build names %s, which is not in %s" % (t, FIXTURES_DIR))
    if not trees:
        print("no fixture trees in %r" % FIXTURES_DIR)
    return 1 if missing or gone or not trees else 0


def main(argv):
    global AMDSMI, TREE
    if not FIXTURES_DIR or not os.path.isdir(FIXTURES_DIR):
        print("FIXTURES_DIR is not set to the fixture trees", file=sys.stderr)
        return 2
    if len(argv) >= 2 and argv[1] == "--check-list":
        return check_list(argv[2:])
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    AMDSMI, TREE = argv[1], argv[2]
    if not os.path.isdir(os.path.join(FIXTURES_DIR, TREE)):
        print("no fixture tree %s in %s" % (TREE, FIXTURES_DIR), file=sys.stderr)
        return 2
    prog = unittest.main(argv=[argv[0] + " " + TREE] + argv[3:], exit=False, verbosity=2)
    return 0 if prog.result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
