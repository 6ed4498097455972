#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""The foundation's fixture trees, checked against the simulator (suite 'sim').

The fixture trees (tests/fixtures/mkfixtures.py) and amdsmi-sim are two independent models of
the same kernel interface, written from the spec. tests/fixtures/machines/<tree>.json describes
the machine of fixture tree <tree> in the simulator's format. For each such tree this test

  (a) runs the foundation's CLI value test, tests/cli/test-cli-fixtures.py, unchanged, on a
      simulator mount of <tree>.json (--frozen): through a FIXTURES_DIR made for it, where
      <tree> is the mount and <tree>.expected.json is the generator's, with only the values
      the spec leaves open (gpu_metrics counters, XCD unique ids) taken from the simulator;
  (b) compares `amdsmi-sim snapshot` of <tree>.json with the generated tree <tree>: the same
      paths, types, modes, link targets, and contents of every file, and gpu_metrics field by
      field; differences are printed as a diff (F = fixture tree, S = simulator).

What may differ is listed below, each with the reason the spec leaves it open. A difference
that is not listed fails the test: one of the two models is wrong, and the spec decides which.

usage: test-sim-fixtures.py TREE           (a) and (b) for one tree
       test-sim-fixtures.py --check-list TREE...
                                          every fixture tree is described and named (the
                                          trees tests/sim/meson.build runs)
env: AMDSMI_SIM, AMDSMI_CLI  the executables
     FIXTURES_DIR            the generated trees (BUILD/tests/fixtures/trees)
     SRCDIR                  the source tree
"""

import difflib
import importlib.util
import json
import os
import re
import stat
import struct
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from simtest import CLI, Mount, require_fuse, sim  # noqa: E402

FIXTURES_DIR = os.environ.get("FIXTURES_DIR", "")
SRCDIR = os.environ.get("SRCDIR", "")
MACHINES_DIR = os.path.join(SRCDIR, "tests", "fixtures", "machines")
TREE = None     # the tree under test
TESTED = []     # --check-list: the trees tests/sim/meson.build runs
CLI_TEST = os.path.join(SRCDIR, "tests", "cli", "test-cli-fixtures.py")
SIM_ARGS = ["--frozen", "--seed", "1"]

# Fixture trees without a machine description yet, and why. Every other tree must have one.
NOT_DESCRIBED = {}

# --- what the spec leaves open ------------------------------------------------------------------

# gpu_metrics fields whose value follows from the machine description: compared exactly
# (header, §5.4 sizes; sensors of the description; PCIe link; XGMI hive; partitions; padding,
# which is all-ones as the rest of the table before the firmware fills it, §5.1).
DESCRIBED_METRICS = {
    "structure_size", "format_revision", "content_revision", "temperature_hotspot",
    "temperature_mem", "curr_socket_power", "average_gfx_activity", "average_umc_activity",
    "pcie_link_width", "pcie_link_speed", "xgmi_link_width", "xgmi_link_speed",
    "current_gfxclk", "current_uclk", "num_partition", "mem_max_bandwidth", "xgmi_link_status",
    "padding", "padding1",
}
# Every other gpu_metrics field (and every field of xcp_stats[] and xcp/xcp_metrics) holds a
# counter, a timestamp or a sensor the description does not set. The spec gives units and
# layouts (§5.3, §5.4), not values ("the numbers given are illustrative", §10), so their values
# may differ. Whether each field (or array element) is available, i.e. not all-ones, may not:
# §5.1 and §5.4 say which slots are unused. Except for these arrays, where the spec does not
# say which slots a product fills:
OPEN_AVAILABILITY = {
    # one u64 per XGMI link (§5.4); nothing says whether a link reported as not available in
    # xgmi_link_status (2, §5.3), or a link the hive does not use, has data
    "xgmi_read_data_acc": "§5.4 gives 8 links, not which of them carry data",
    "xgmi_write_data_acc": "§5.4 gives 8 links, not which of them carry data",
    # one u16 per VCN instance (§5.4, NUM_VCN 4), and products with fewer VCNs (MI300A 3,
    # MI350X 2 in both models); the spec gives no VCN count per product
    "current_vclk0": "§5.4 gives 4 VCN slots, not how many a product fills",
    "current_dclk0": "§5.4 gives 4 VCN slots, not how many a product fills",
}
# KFD node properties whose value the spec does not give: §6.2 names the key (and its place in
# the key order, which is compared), the table of values does not include it.
OPEN_KFD = {
    "debug_prop": "§6.2 lists the key without a value",
    "num_cp_queues": "§6.2 lists the key without a value",
}
# Where the simulator follows the current kernel and the spec's model (and so the generator)
# an older one (health-and-control.md §3.1, §3.3 "constant values UNVERIFIED"): the weights and
# bandwidths of KFD io_links (kfd_fill_gpu_xgmi_link_to_gpu() with KFD_CRAT_XGMI_WEIGHT 15 and
# KFD_CRAT_INTRA_SOCKET_WEIGHT 13; amdgpu_xgmi_get_bandwidth() with the 32 GT/s x16 of
# amdgpu_xgmi_early_init() for GC 9.4.3/9.4.4/9.5.0: 64000 MB/s per link, not the spec's 25
# GT/s 50000), and p2p_links_count (the generator makes no p2p_links). Counted, printed on every
# run, not failed: the spec is the one to update (sim/topology.c cites the kernel).
KERNEL_OVER_SPEC_IOLINK_KEYS = {"weight", "min_bandwidth", "max_bandwidth"}
IO_LINK_PROPERTIES = re.compile(r"devices/virtual/kfd/kfd/topology/nodes/\d+/io_links/\d+/"
                                r"properties")
OPEN_KFD["p2p_links_count"] = "KFD p2p_links, which the generator does not model"
KERNEL_NOTES = []
# ... and the partition's unique_id outside SPX: "the partition's XCD unique id" (§6.2) is a
# hardware ID the description does not set (the GPU's own unique_id, in SPX, is compared).
OPEN_KFD_PARTITIONED = {"unique_id": "§6.2: the XCD's unique id, set by the hardware"}
# pp_dpm_* of the clocks the description has no current level for: the levels are compared, not
# which one carries the '*' (§4.4: the current level; the description sets sclk and mclk only).
OPEN_DPM_CURRENT = {"pp_dpm_socclk", "pp_dpm_fclk", "pp_dpm_vclk", "pp_dpm_dclk"}
# hwmonN: "X is arbitrary and not stable" (§4.1). Compared after renaming every hwmonN to the
# device it belongs to (mkfixtures.py hands the mi350x-8 ones out in a shuffled order on
# purpose).
# The PCIe link files of the bridges above a GPU (a switch, a root port, QEMU's pcie-root-port
# in a VM): the spec gives the GPU's own link (§1.1), not theirs.
OPEN_BRIDGE_LINK = re.compile(r"devices/pci[^/]+(/[0-9a-f:.]+)*/"
                              r"(current|max)_link_(speed|width)")

# Paths only the simulator has. The fixture generator models what libamdsmi reads; the
# simulator also serves what every PCI function has on a real machine and more of the kernel
# around the GPUs. These are additions, not disagreements: the fixture tree has nothing there.
SIM_ONLY = [re.compile(p) for p in (
    r"devices/pci[^/]+(/[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7])+/"
    r"(config|enable|irq|modalias|resource|uevent|iommu_group)",
    r"kernel(/iommu_groups(/\d+(/devices(/[^/]+)?)?)?)?",
    r"bus/pci/drivers/(gim|vfio-pci)(/(bind|unbind|new_id|remove_id))?",
    r"devices/system(/cpu(/online)?|/node(/online|/node\d+(/cpulist)?)?)?",
    r"class/thermal(/thermal_zone\d+)?",
    r"devices/virtual/thermal/thermal_zone\d+/subsystem",
    r"devices/virtual/kfd/kfd/proc",
    r"block|firmware|fs",
    # vfio-pci loaded, with its enable_sriov parameter
    r"module/vfio_pci(/parameters(/enable_sriov)?)?",
    # a driver registered without devices (the VMs have no CPU data-fabric function)
    r"bus/pci/drivers/k10temp(/(bind|unbind|new_id|remove_id))?",
    # amdgpu's reset capabilities and PCIe replay count of a PF (health-and-control.md §3.2,
    # §4.2), which the generator does not model
    r"devices/pci[^/]+(/[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7])+/"
    r"(compute_reset_mask|pcie_replay_count)",
    # the SR-IOV files of MI350X/MI355X PFs (gim supports their VFs; the simulator gives them
    # the capability with placeholder VF IDs, the generator models them without)
    r"devices/pci[^/]+(/[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7])+/sriov_[a-z_]+",
    # SMU 13.0.6's soft clock limits and PM policies (health-and-control.md §5.2, §5.4), which
    # the generator does not model
    r"devices/pci[^/]+(/[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7])+/"
    r"(pp_od_clk_voltage|pm_policy(/(soc_pstate|xgmi_plpd))?)",
    # amdgpu's RAS files and debugfs (health-and-control.md §1, §2, §4.1: the CPER ring, the
    # bad-page threshold, the GPU recovery), which the generator does not model
    r"devices/pci[^/]+(/[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7])+/ras(/[a-z_0-9]+)?",
    r"kernel/debug(/dri(/[^/]+(/amdgpu_ring_cper|/amdgpu_gpu_recover"
    r"|/ras(/bad_page_cnt_threshold)?)?)?)?",
    # amdgpu's XGMI files of a device in a hive (health-and-control.md §3.1) and the hive's
    # kobject, which the generator does not model
    r"devices/pci[^/]+(/[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7])+/"
    r"xgmi_(device_id|physical_id|error|num_hops|num_links|hive_info(/[a-z_0-9]+)?)",
    # the host's IOMMU units (amdsmi doctor), which the generator does not model
    r"class/iommu(/ivhd\d+)?",
    r"devices/virtual/iommu(/ivhd\d+)?",
    # KFD's p2p_links (kfd_dev_create_p2p_links(): links to the other CPU nodes through the
    # GPU's own, peer links between hives), which the generator leaves empty
    r"devices/virtual/kfd/kfd/topology/nodes/\d+/p2p_links/\d+(/properties)?",
)]

# What the simulator cannot describe yet, per tree: paths the fixture tree has and no machine
# description can give the simulator. NOT spec-open: these are gaps of the simulator, reported,
# listed here so that they are printed on every run; the test fails once one of them is no
# longer missing (remove it then).
SIM_LACKS = {}

BINARY = {"gpu_metrics", "xcp_metrics"}
KFD_NODE_PROPERTIES = re.compile(r"devices/virtual/kfd/kfd/topology/nodes/\d+/properties")


def load_mkfixtures():
    spec = importlib.util.spec_from_file_location(
        "mkfixtures", os.path.join(SRCDIR, "tests", "fixtures", "mkfixtures.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


MK = load_mkfixtures()


# --- gpu_metrics, decoded with the fixture generator's layouts of §5.4 ------------------------

def decode(layout, data):
    """name -> value (None = all-ones), lists for arrays, list of dicts for xcp_stats."""
    out = {}
    for name, kind, count, off in layout.fields:
        if isinstance(kind, MK.Layout):
            out[name] = [decode(kind, data[off + i * kind.size:off + (i + 1) * kind.size])
                         for i in range(count)]
            continue
        size = struct.calcsize("<" + kind)
        ones = (1 << (8 * size)) - 1
        vals = [struct.unpack_from("<" + kind, data, off + i * size)[0] for i in range(count)]
        vals = [None if v == ones else v for v in vals]
        out[name] = vals if count > 1 else vals[0]
    return out


def layout_of(rel, data):
    if len(data) < 4:
        return None
    _size, fmt, content = struct.unpack_from("<HBB", data)
    if rel.endswith("xcp_metrics"):
        return MK.PARTITION_METRICS_V1_0 if (fmt, content) == (1, 0) else None
    return MK.METRICS_LAYOUTS.get(content) if fmt == 1 else None


def availability(v):
    if isinstance(v, list):
        return [availability(x) for x in v]
    if isinstance(v, dict):
        return {k: availability(x) for k, x in v.items()}
    return v is not None


def merge_open(fixture, served, open_availability):
    """The served value where the spec leaves the value open: the fixture's where availability
    differs (so that the CLI test reports it), unless availability is open too."""
    if isinstance(fixture, list) and isinstance(served, list) and len(fixture) == len(served):
        return [merge_open(a, b, open_availability) for a, b in zip(fixture, served)]
    if isinstance(fixture, dict) and isinstance(served, dict):
        return {k: merge_open(v, served.get(k), open_availability) for k, v in fixture.items()}
    if (fixture is None) != (served is None) and not open_availability:
        return fixture
    return served


def compare_metrics(rel, fdata, sdata, out):
    flay, slay = layout_of(rel, fdata), layout_of(rel, sdata)
    if flay is None or flay is not slay or len(fdata) != len(sdata):
        out.append("%s: F is %s (%d bytes), S is %s (%d bytes)"
                   % (rel, flay and flay.name, len(fdata), slay and slay.name, len(sdata)))
        return
    f, s = decode(flay, fdata), decode(slay, sdata)
    for name in f:
        if name in DESCRIBED_METRICS:
            if f[name] != s[name]:
                out.append("%s: %s: F %s, S %s" % (rel, name, f[name], s[name]))
        elif name not in OPEN_AVAILABILITY and availability(f[name]) != availability(s[name]):
            out.append("%s: %s: available in F %s, in S %s"
                       % (rel, name, availability(f[name]), availability(s[name])))


# --- trees ----------------------------------------------------------------------------------

def hwmon_names(root):
    """hwmonN -> "hwmon<owner>" for every hwmon of the tree (§4.1: N is arbitrary)."""
    names = {}
    cls = os.path.join(root, "class/hwmon")
    for n in os.listdir(cls) if os.path.isdir(cls) else []:
        target = os.path.normpath(os.path.join("class/hwmon", os.readlink(os.path.join(cls, n))))
        owner = os.path.dirname(target)
        if os.path.basename(owner) == "hwmon":
            owner = os.path.dirname(owner)
        names[n] = "hwmon<%s>" % owner
    return names


def describe(root):
    """rel path (hwmon renamed) -> ("l", target) | ("d", mode) | ("f", mode, bytes or None)."""
    names = hwmon_names(root)

    def norm(s):
        return re.sub(r"(?<![^/])hwmon\d+(?![^/])", lambda m: names.get(m.group(0), m.group(0)),
                      s)

    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            full = os.path.join(dirpath, name)
            rel = norm(os.path.relpath(full, root))
            st = os.lstat(full)
            mode = stat.S_IMODE(st.st_mode)
            if stat.S_ISLNK(st.st_mode):
                out[rel] = ("l", norm(os.readlink(full)))
            elif stat.S_ISDIR(st.st_mode):
                out[rel] = ("d", mode)
            elif stat.S_ISREG(st.st_mode):
                data = None
                if mode & 0o444:
                    with open(full, "rb") as f:
                        data = f.read()
                out[rel] = ("f", mode, data)
            else:
                out[rel] = ("?", mode)
    return out


def kind(e):
    return {"l": "link", "d": "dir %04o", "f": "file %04o", "?": "special %04o"}[e[0]] % \
        (() if e[0] == "l" else (e[1],))


def text_diff(rel, fdata, sdata, out):
    try:
        fl = fdata.decode().splitlines(keepends=True)
        sl = sdata.decode().splitlines(keepends=True)
    except UnicodeDecodeError:
        out.append("%s: contents differ (binary)" % rel)
        return
    lines = list(difflib.unified_diff(fl, sl, "F/" + rel, "S/" + rel, n=0))
    out.append("%s: contents differ\n    %s" % (rel, "    ".join(
        ln if ln.endswith("\n") else ln + "\n" for ln in lines).rstrip("\n")))


def compare_kfd_properties(rel, fdata, sdata, partitioned, out):
    fl = [ln.split(" ", 1) for ln in fdata.decode().splitlines()]
    sl = [ln.split(" ", 1) for ln in sdata.decode().splitlines()]
    if [k for k, _v in fl] != [k for k, _v in sl]:
        text_diff(rel, fdata, sdata, out)
        return
    open_keys = set(OPEN_KFD) | (set(OPEN_KFD_PARTITIONED) if partitioned else set())
    for (k, fv), (_k, sv) in zip(fl, sl):
        if fv != sv and k not in open_keys:
            out.append("%s: %s: F %s, S %s" % (rel, k, fv, sv))


def io_link_kernel_values(fdata, sdata):
    """True if two io_link properties differ in weight and bandwidths only."""
    fl = [ln.split(" ", 1) for ln in fdata.decode().splitlines()]
    sl = [ln.split(" ", 1) for ln in sdata.decode().splitlines()]
    if [k for k, _v in fl] != [k for k, _v in sl]:
        return False
    fd, sd = dict(fl), dict(sl)
    keys = {k for k in fd if fd[k] != sd[k]}
    # an APU's CPU link (kfd_fill_gpu_direct_io_link_to_cpu(), connected_to_cpu on GC 9.4.3):
    # XGMI at KFD_CRAT_INTRA_SOCKET_WEIGHT and the memory bandwidth, where the spec says PCIe
    if "type" in keys and (fd["type"], sd["type"], sd["weight"], sd["max_bandwidth"]) == \
            ("2", "11", "13", "819200"):
        keys.discard("type")
    return keys <= KERNEL_OVER_SPEC_IOLINK_KEYS


def compare_trees(fixture_root, snapshot_root, expected, lacks):
    """Readable differences between the fixture tree (F) and the snapshot (S), and the
    entries of @lacks (path pattern -> reason) that matched."""
    f, s = describe(fixture_root), describe(snapshot_root)
    partitioned_nodes = {"devices/virtual/kfd/kfd/topology/nodes/%d/properties" % p["kfd_node"]
                         for g in expected["gpus"] for p in g["partitions"]
                         if g["compute_partition"]["num_partitions"] > 1}
    gpu_dirs = {g["sysfs_path"]: g for g in expected["gpus"]}
    out, lacking = [], set()
    for rel in sorted(set(f) | set(s)):
        fe, se = f.get(rel), s.get(rel)
        if se is None:
            lacked = [p for p in lacks if p.fullmatch(rel)]
            lacking.update(lacked)
            if not lacked:
                out.append("only in F: %s (%s)" % (rel, kind(fe)))
            continue
        if fe is None:
            if not any(p.fullmatch(rel) for p in SIM_ONLY):
                out.append("only in S: %s (%s)" % (rel, kind(se)))
            continue
        if fe[:2] != se[:2]:
            if fe[0] == se[0] == "l":
                out.append("%s: link F -> %s, S -> %s" % (rel, fe[1], se[1]))
            else:
                out.append("%s: F %s, S %s" % (rel, kind(fe), kind(se)))
            continue
        if fe[0] != "f" or fe[2] == se[2]:
            continue
        base, gpu = os.path.basename(rel), gpu_dirs.get(os.path.dirname(rel))
        if base in BINARY:
            compare_metrics(rel, fe[2], se[2], out)
        elif KFD_NODE_PROPERTIES.fullmatch(rel):
            compare_kfd_properties(rel, fe[2], se[2], rel in partitioned_nodes, out)
        elif IO_LINK_PROPERTIES.fullmatch(rel) and io_link_kernel_values(fe[2], se[2]):
            KERNEL_NOTES.append(rel)
        elif base in OPEN_DPM_CURRENT and fe[2].replace(b" *", b"") == se[2].replace(b" *", b"") \
                and se[2].count(b"*") == 1:
            continue
        elif OPEN_BRIDGE_LINK.fullmatch(rel) and not gpu:
            continue
        else:
            text_diff(rel, fe[2], se[2], out)
    return out, lacking


# --- the CLI test's expectations on the simulator -----------------------------------------

def expected_on_simulator(expected, root):
    """The generator's expected.json with the values the spec leaves open taken from the
    simulator at @root (read here through the VFS, not through libamdsmi); returns it and
    the number of values taken."""
    exp = json.loads(json.dumps(expected))
    taken = 0
    for g in exp["gpus"]:
        gm = g.get("gpu_metrics")
        if gm:
            with open(os.path.join(root, "bus/pci/devices", g["bdf"], "gpu_metrics"), "rb") as f:
                data = f.read()
            layout = MK.METRICS_LAYOUTS[gm["content_revision"]]
            if len(data) == layout.size:
                served = decode(layout, data)
                for name, value in gm["fields"].items():
                    if name in DESCRIBED_METRICS or name not in served:
                        continue
                    new = merge_open(value, served[name], name in OPEN_AVAILABILITY)
                    taken += new != value
                    gm["fields"][name] = new
        if g["compute_partition"]["num_partitions"] > 1:
            for p in g["partitions"]:
                path = os.path.join(root, "class/kfd/kfd/topology/nodes/%d/properties"
                                    % p["kfd_node"])
                with open(path) as f:
                    props = dict(ln.split(" ", 1) for ln in f.read().splitlines())
                if "unique_id" in props and int(props["unique_id"]) != p["unique_id"]:
                    p["unique_id"] = int(props["unique_id"])
                    taken += 1
    return exp, taken


def trees():
    return sorted(n[:-len(".expected.json")] for n in os.listdir(FIXTURES_DIR)
                  if n.endswith(".expected.json"))


def described():
    return sorted(n[:-len(".json")] for n in os.listdir(MACHINES_DIR) if n.endswith(".json"))


class Descriptions(unittest.TestCase):
    def test_every_tree_described(self):
        """Each fixture tree has a machine description and a test in meson.build, or a reason
        in NOT_DESCRIBED."""
        missing = [t for t in trees() if t not in described() and t not in NOT_DESCRIBED]
        unknown = [t for t in described() if t not in trees()]
        stale = [t for t in NOT_DESCRIBED if t in described()]
        untested = [t for t in described() if t not in TESTED]
        for t in NOT_DESCRIBED:
            print("not covered: %s (%s)" % (t, NOT_DESCRIBED[t]))
        self.assertEqual((missing, unknown, stale, untested), ([], [], [], []),
                         "(trees without a description, descriptions without a tree, "
                         "NOT_DESCRIBED entries that have one, descriptions without a test in "
                         "tests/sim/meson.build)")


class Tree(unittest.TestCase):
    maxDiff = None

    @classmethod
    def setUpClass(cls):
        with open(os.path.join(FIXTURES_DIR, TREE + ".expected.json")) as f:
            cls.expected = json.load(f)
        cls.machine = os.path.join(MACHINES_DIR, TREE + ".json")

    def test_cli_values(self):
        """(a) test-cli-fixtures.py, unchanged, on a simulator mount of the description."""
        with tempfile.TemporaryDirectory() as tmp, Mount("--machine", self.machine,
                                                          *SIM_ARGS) as m:
            os.chmod(tmp, 0o755)
            exp, taken = expected_on_simulator(self.expected, m.root)
            os.symlink(m.root, os.path.join(tmp, TREE))
            with open(os.path.join(tmp, TREE + ".expected.json"), "w") as f:
                json.dump(exp, f)
            p = subprocess.run([sys.executable, CLI_TEST, CLI, TREE],
                               env=dict(os.environ, FIXTURES_DIR=tmp), capture_output=True,
                               text=True, timeout=300, check=False)
        print("%s: %d value(s) the spec leaves open taken from the simulator"
              % (TREE, taken))
        if p.returncode != 0:
            self.fail("test-cli-fixtures.py %s on the simulator: exit status %d\n%s%s"
                      % (TREE, p.returncode, p.stdout, p.stderr))

    def test_snapshot_structure(self):
        """(b) amdsmi-sim snapshot of the description == the fixture tree, but for what the
        spec leaves open."""
        with tempfile.TemporaryDirectory() as tmp:
            snap = os.path.join(tmp, "snap")
            sim("snapshot", snap, "--machine", self.machine, *SIM_ARGS, check=True)
            lacks = SIM_LACKS.get(TREE, {})
            diffs, lacking = compare_trees(os.path.join(FIXTURES_DIR, TREE), snap,
                                           self.expected, lacks)
        for pattern in lacking:
            print("%s: NOT COMPARED, the simulator lacks it: %s: %s"
                  % (TREE, pattern.pattern, lacks[pattern]))
        if KERNEL_NOTES:
            print("%s: %d io_links with the kernel's weights and bandwidths, not the spec's "
                  "(KERNEL_OVER_SPEC_IOLINK_KEYS)" % (TREE, len(KERNEL_NOTES)))
        stale = [p.pattern for p in lacks if p not in lacking]
        if diffs or stale:
            self.fail("%s: %d difference(s) between the fixture tree (F) and the simulator "
                      "(S):\n  %s%s" % (TREE, len(diffs), "\n  ".join(diffs),
                                        "\nSIM_LACKS entries the simulator no longer lacks "
                                        "(remove them): %s" % stale if stale else ""))


def main(argv):
    global TREE, TESTED
    require_fuse()
    for name, value in (("FIXTURES_DIR", FIXTURES_DIR), ("SRCDIR", SRCDIR)):
        if not value or not os.path.isdir(value):
            sys.exit("FAIL: %s is not set to a directory: %r" % (name, value))
    if not CLI or not os.access(CLI, os.X_OK):
        sys.exit("FAIL: AMDSMI_CLI is not the amdsmi executable: %r" % CLI)
    if len(argv) >= 2 and argv[1] == "--check-list":
        TESTED = argv[2:]
        tests = unittest.defaultTestLoader.loadTestsFromTestCase(Descriptions)
    elif len(argv) >= 2 and not argv[1].startswith("-"):
        TREE = argv[1]
        if TREE not in described() or TREE not in trees():
            sys.exit("FAIL: %s is not both a fixture tree in %s and a description in %s"
                     % (TREE, FIXTURES_DIR, MACHINES_DIR))
        tests = unittest.defaultTestLoader.loadTestsFromTestCase(Tree)
    else:
        sys.exit(__doc__)
    result = unittest.TextTestRunner(verbosity=2).run(tests)
    return 0 if result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
