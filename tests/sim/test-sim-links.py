#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""KFD processes, XGMI and PCIe links, the KFD peer matrix (spec health-and-control.md §3, §6):
class/kfd/kfd/proc/<pid>/ as `kfd-users add` describes a process (per partition, accumulated,
every node with `all`, a gpu_id no node has with add-raw), the VRAM rule of mem_info_vram_used,
a thousand live processes on 8 GPUs in CPX; the XGMI files of a hive's devices on MI300X (SPX,
CPX) and MI300A, none on VFs or gim hosts, xgmi_error cleared by a read; the link controls and
every file they touch (gpu_metrics v1.7 and v1.9, PCI core files, config space); io_links and
p2p_links against the kernel's rules (kfd_crat.c, kfd_topology.c, amdgpu_xgmi.c)."""

import errno
import json
import os
import signal
import struct
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import simtest  # noqa: E402
from simtest import GPU0, GPU1, MI300X_BDFS, main, sim  # noqa: E402

PROC = "class/kfd/kfd/proc"
NODES = "class/kfd/kfd/topology/nodes"
CCP = "current_compute_partition"
MiB = 1 << 20

# the kernel's constants (kfd_crat.c, amdgpu_xgmi.c, amdgpu_amdkfd.c), restated here
INTRA_SOCKET_WEIGHT = 13
XGMI_WEIGHT = 15
PCIE_WEIGHT = 20
MEM_BW = 819200
XGMI_LINK_MBS = 32 * 16 * 1000 // 8
GEN_MBITS = {"2.5": 2500, "5.0": 5000, "8.0": 8000, "16.0": 16000, "32.0": 32000}


class Mount(simtest.CtlMount):
    def node_ids(self, bdf):
        """gpu_id of each partition of @bdf, by partition (location_id's low bits)."""
        nodes = sorted(self.gpu_nodes(bdf), key=lambda n: n[1]["location_id"] & 7)
        return [n[2] for n in nodes]

    def links(self, node, kind="io_links"):
        d = "%s/%d/%s" % (NODES, node, kind)
        out = []
        for name in sorted(os.listdir(self.path(d)), key=int):
            props = dict(line.split(" ") for line in self.text("%s/%s/properties" % (d, name))
                         .splitlines())
            out.append({k: int(v) for k, v in props.items()})
        return out


def sleepers(n):
    procs = [subprocess.Popen(["sleep", "600"]) for _ in range(n)]
    return procs


def kill_all(procs):
    for p in procs:
        p.kill()
    for p in procs:
        p.wait()


def machine_file(test, preset, edit):
    desc = json.loads(sim("dump-machine", preset, check=True).stdout)
    edit(desc)
    fd, path = tempfile.mkstemp(prefix="amdsmi-links.", suffix=".json")
    test.addCleanup(os.unlink, path)
    with os.fdopen(fd, "w") as f:
        json.dump(desc, f)
    return path


# --- gpu_metrics -----------------------------------------------------------------------------

def v17(blob):
    """The link fields of gpu_metrics v1.7 (amdgpu-sysfs.md §5.4; natural alignment)."""
    assert (blob[2], blob[3]) == (1, 7) and len(blob) == 2208, (blob[2], blob[3], len(blob))
    f = {}
    f["pcie_link_width"], f["pcie_link_speed"] = struct.unpack_from("<HH", blob, 68)
    f["pcie_l0_to_recov_count_acc"], f["pcie_replay_count_acc"] = \
        struct.unpack_from("<QQ", blob, 104)
    f["pcie_nak_sent_count_acc"], f["pcie_nak_rcvd_count_acc"] = \
        struct.unpack_from("<II", blob, 128)
    f["xgmi_read_data_acc"] = list(struct.unpack_from("<8Q", blob, 136))
    f["xgmi_link_status"] = list(struct.unpack_from("<8H", blob, 264))
    return f


V19_IDS = {16: "pcie_link_width", 17: "pcie_link_speed", 24: "pcie_l0_to_recov_count_acc",
           25: "pcie_replay_count_acc", 28: "pcie_nak_rcvd_count_acc",
           29: "xgmi_read_data_acc", 31: "xgmi_link_status"}
V19_FMT = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "Q", 7: "q"}


def v19(blob):
    """The same fields from a v1.9 blob (gpu-metrics-v1.9.md: attribute records)."""
    assert (blob[2], blob[3]) == (1, 9), (blob[2], blob[3])
    (count,) = struct.unpack_from("<i", blob, 4)
    off, f = 8, {}
    for _ in range(count):
        (enc,) = struct.unpack_from("<Q", blob, off)
        off += 8
        inst, aid, typ = enc & 0x3ff, enc >> 10 & 0x3ff, enc >> 20 & 0xf
        fmt = V19_FMT[typ]
        vals = list(struct.unpack_from("<%d%s" % (inst, fmt), blob, off))
        off += inst * struct.calcsize(fmt)
        if aid in V19_IDS:
            f[V19_IDS[aid]] = vals if inst > 1 else vals[0]
    return f


def metrics(m, bdf):
    blob = m.read(m.gpu(bdf, "gpu_metrics"))
    return v19(blob) if blob[3] == 9 else v17(blob)


# --- KFD processes ---------------------------------------------------------------------------

class Processes(unittest.TestCase):
    def test_described_process(self):
        with Mount("--seed", "1") as m:
            (g0,), (g1,) = m.node_ids(GPU0), m.node_ids(GPU1)
            p = sleepers(1)[0]
            try:
                m.ctl("kfd-users", "add", GPU0, p.pid, 3 * MiB, "queues=2", "sdma=17",
                      "cu_occupancy=19", "evicted_ms=23", "faults=29", "page_in=31",
                      "page_out=37")
                d = "%s/%d" % (PROC, p.pid)
                self.assertEqual(m.text("%s/vram_%d" % (d, g0)), "%d\n" % (3 * MiB))
                self.assertEqual(m.text("%s/sdma_%d" % (d, g0)), "17\n")
                for f, v in (("stats_%d/cu_occupancy", 19), ("stats_%d/evicted_ms", 23),
                             ("counters_%d/faults", 29), ("counters_%d/page_in", 31),
                             ("counters_%d/page_out", 37)):
                    self.assertEqual(m.text(d + "/" + f % g0), "%d\n" % v)
                # queues: numbered from 0, values without a newline
                self.assertEqual(sorted(os.listdir(m.path(d + "/queues"))), ["0", "1"])
                for q in ("0", "1"):
                    qd = "%s/queues/%s" % (d, q)
                    self.assertEqual(sorted(os.listdir(m.path(qd))), ["gpuid", "size", "type"])
                    self.assertEqual(m.read(qd + "/gpuid"), b"%d" % g0)
                    self.assertEqual(m.read(qd + "/size"), b"%d" % MiB)
                    self.assertEqual(m.read(qd + "/type"), b"0")
                # a second GPU accumulates into the same entry; its queues follow
                m.ctl("kfd-users", "add", GPU1, p.pid, MiB, "queues=1")
                self.assertEqual(sorted(os.listdir(m.path(d + "/queues"))), ["0", "1", "2"])
                self.assertEqual(m.read(d + "/queues/2/gpuid"), b"%d" % g1)
                self.assertEqual(sorted(n for n in os.listdir(m.path(d)) if "_" in n),
                                 sorted("%s_%d" % (k, g) for g in (g0, g1)
                                        for k in ("vram", "sdma", "stats", "counters")))
                out = m.ctl("kfd-users", "list").stdout
                self.assertIn("%s %d " % (GPU1, p.pid), out)
                dump = json.loads(m.ctl("dump").stdout)
                (proc,) = dump["kfd_processes"]
                self.assertEqual({u["bdf"]: u["vram_bytes"] for u in proc["gpus"]},
                                 {GPU0: 3 * MiB, GPU1: MiB})
                # errors
                r = m.ctl("kfd-users", "add", GPU0, p.pid, check=False)
                self.assertIn("EEXIST", r.stderr)
                r = m.ctl("kfd-users", "add", GPU0 + ".3", p.pid, check=False)
                self.assertIn("no KFD node of partition 3", r.stderr)
                self.assertIn("ENXIO", r.stderr)
                r = m.ctl("kfd-users", "add", GPU0, p.pid, "1", "color=3", check=False)
                self.assertIn("unknown \"color\"", r.stderr)
                r = m.ctl("kfd-users", "add", GPU1, p.pid, "queues=2", "5", check=False)
                self.assertIn("VRAM_BYTES comes first", r.stderr)
                # removing one GPU keeps the other's files
                m.ctl("kfd-users", "remove", GPU0, p.pid)
                self.assertFalse(os.path.exists(m.path("%s/vram_%d" % (d, g0))))
                self.assertEqual(os.listdir(m.path(d + "/queues")), ["0"])
                self.assertEqual(m.read(d + "/queues/0/gpuid"), b"%d" % g1)
            finally:
                kill_all([p])

    def test_partitions_and_vram_rule(self):
        with Mount("--seed", "1") as m:
            self.assertEqual(m.write(m.gpu(GPU0, CCP), "CPX"), 0)
            ids = m.node_ids(GPU0)
            self.assertEqual(len(ids), 8)
            base = int(m.value(m.gpu(GPU0, "mem_info_vram_used")))
            base1 = m.value(m.gpu(GPU1, "mem_info_vram_used"))
            ps = sleepers(2)
            try:
                m.ctl("kfd-users", "add", GPU0 + ".3", ps[0].pid, 5 * MiB, "queues=1")
                m.ctl("kfd-users", "add", GPU0 + ".5", ps[0].pid, 7 * MiB)
                m.ctl("kfd-users", "add", GPU0 + ".3", ps[1].pid, 11 * MiB)
                r = m.ctl("kfd-users", "add", GPU0 + ".3", ps[1].pid, check=False)
                self.assertIn("EEXIST", r.stderr)
                d = "%s/%d" % (PROC, ps[0].pid)
                # only the partitions the process was given, in node order
                self.assertEqual(sorted(n for n in os.listdir(m.path(d))
                                        if n.startswith("vram_")),
                                 sorted(["vram_%d" % ids[3], "vram_%d" % ids[5]]))
                self.assertEqual(m.value("%s/vram_%d" % (d, ids[5])), str(7 * MiB))
                self.assertEqual(m.read(d + "/queues/0/gpuid"), b"%d" % ids[3])
                # the rule: mem_info_vram_used = baseline + the processes' VRAM on the GPU
                total = 0
                for name in os.listdir(m.path(PROC)):
                    for f in os.listdir(m.path("%s/%s" % (PROC, name))):
                        if f.startswith("vram_") and int(f[5:]) in ids:
                            total += int(m.value("%s/%s/%s" % (PROC, name, f)))
                self.assertEqual(total, 23 * MiB)
                self.assertEqual(int(m.value(m.gpu(GPU0, "mem_info_vram_used"))), base + total)
                # the baseline a test can set to 0: then the sum is the file
                m.ctl("sensor", GPU0, "vram_used_bytes", 0)
                self.assertEqual(int(m.value(m.gpu(GPU0, "mem_info_vram_used"))), total)
                # each node's used_memory: the processes' VRAM on it
                for part, want in ((3, 16 * MiB), (5, 7 * MiB), (0, 0)):
                    (node,) = [n[0] for n in m.gpu_nodes(GPU0) if n[2] == ids[part]]
                    self.assertEqual(int(m.value("%s/%d/mem_banks/0/used_memory" %
                                                 (NODES, node))), want)
                # another GPU is untouched
                self.assertEqual(m.value(m.gpu(GPU1, "mem_info_vram_used")), base1)
                # one partition removed
                m.ctl("kfd-users", "remove", GPU0 + ".5", ps[0].pid)
                self.assertFalse(os.path.exists(m.path("%s/vram_%d" % (d, ids[5]))))
                self.assertEqual(int(m.value(m.gpu(GPU0, "mem_info_vram_used"))), 16 * MiB)
                # more than the GPU has
                r = m.ctl("kfd-users", "add", GPU0 + ".1", ps[1].pid, 192 << 30, check=False)
                self.assertIn("ENOSPC", r.stderr)
            finally:
                kill_all(ps)
            # gone with the processes
            for _ in range(100):
                if not os.listdir(m.path(PROC)):
                    break
                time.sleep(0.05)
            self.assertEqual(os.listdir(m.path(PROC)), [])
            self.assertEqual(int(m.value(m.gpu(GPU0, "mem_info_vram_used"))), 0)

    def test_all_nodes(self):
        """kfd_init_apertures(): a process without a device cgroup has a pdd on every node."""
        with Mount("--seed", "1") as m:
            self.assertEqual(m.write(m.gpu(GPU1, CCP), "DPX"), 0)
            every = [n[2] for n in m.kfd_nodes() if n[2]]
            self.assertEqual(len(every), 9)
            p = sleepers(1)[0]
            try:
                m.ctl("kfd-users", "add", GPU0, p.pid, MiB, "queues=1", "all")
                d = "%s/%d" % (PROC, p.pid)
                self.assertEqual(sorted(n for n in os.listdir(m.path(d))
                                        if n.startswith("stats_")),
                                 sorted("stats_%d" % i for i in every))
                self.assertEqual(os.listdir(m.path(d + "/queues")), ["0"])
                for i in every:
                    want = MiB if i == m.node_ids(GPU0)[0] else 0
                    self.assertEqual(int(m.value("%s/vram_%d" % (d, i))), want)
                # a user of every GPU: KFD refuses a partition switch on any of them
                for bdf in (GPU0, GPU1, MI300X_BDFS[7]):
                    self.assertEqual(m.write(m.gpu(bdf, CCP), "CPX"), errno.EBUSY)
                out = m.ctl("kfd-users", "list").stdout
                self.assertEqual(len(out.splitlines()), 8)
            finally:
                kill_all([p])

    def test_raw_entry(self):
        with Mount("--seed", "1") as m:
            p = sleepers(1)[0]
            try:
                m.ctl("kfd-users", "add-raw", p.pid, 4242, 99, "queues=1", "sdma=3")
                d = "%s/%d" % (PROC, p.pid)
                self.assertEqual(m.value(d + "/vram_4242"), "99")
                self.assertEqual(m.value(d + "/sdma_4242"), "3")
                self.assertEqual(m.read(d + "/queues/0/gpuid"), b"4242")
                self.assertNotIn(4242, [n[2] for n in m.kfd_nodes()])
                # a user of no GPU
                self.assertEqual(m.ctl("kfd-users", "list").stdout, "")
                self.assertEqual(m.write(m.gpu(GPU0, CCP), "DPX"), 0)
                r = m.ctl("kfd-users", "add-raw", p.pid, 4242, check=False)
                self.assertIn("EEXIST", r.stderr)
                # with a real node too
                m.ctl("kfd-users", "add", GPU1, p.pid)
                self.assertIn("vram_%d" % m.node_ids(GPU1)[0], os.listdir(m.path(d)))
            finally:
                kill_all([p])

    def test_thousand_processes(self):
        """1000 live processes across 8 GPUs x CPX (64 nodes): added fast, listed right."""
        with Mount("--seed", "1") as m:
            for bdf in MI300X_BDFS:
                self.assertEqual(m.write(m.gpu(bdf, CCP), "CPX"), 0)
                m.ctl("sensor", bdf, "vram_used_bytes", 0)
            ps = sleepers(1000)
            try:
                lines = ["kfd-users add %s.%d %d %d queues=1" % (MI300X_BDFS[i % 8], i // 8 % 8,
                                                                 p.pid, (i + 1) * 4096)
                         for i, p in enumerate(ps)]
                t0 = time.monotonic()
                out = m.raw(lines)
                took = time.monotonic() - t0
                self.assertEqual(out, "ok 0\n" * 1000)
                sys.stderr.write("1000 kfd-users add on one connection: %.2f s\n" % took)
                self.assertLess(took, 60)
                t0 = time.monotonic()
                names = os.listdir(m.path(PROC))
                self.assertEqual(sorted(map(int, names)), sorted(p.pid for p in ps))
                # every process: one vram file, the right value; the GPUs' sums
                sums = {}
                for i, p in enumerate(ps):
                    d = "%s/%d" % (PROC, p.pid)
                    (v,) = [f for f in os.listdir(m.path(d)) if f.startswith("vram_")]
                    self.assertEqual(int(m.value(d + "/" + v)), (i + 1) * 4096)
                    sums[MI300X_BDFS[i % 8]] = sums.get(MI300X_BDFS[i % 8], 0) + (i + 1) * 4096
                sys.stderr.write("listing and reading 1000 entries: %.2f s\n"
                                 % (time.monotonic() - t0))
                for bdf in MI300X_BDFS:
                    self.assertEqual(int(m.value(m.gpu(bdf, "mem_info_vram_used"))), sums[bdf])
                self.assertEqual(len(m.ctl("kfd-users", "list").stdout.splitlines()), 1000)
            finally:
                kill_all(ps)
            for _ in range(200):
                if not os.listdir(m.path(PROC)):
                    break
                time.sleep(0.05)
            self.assertEqual(os.listdir(m.path(PROC)), [])


# --- XGMI files ------------------------------------------------------------------------------

XGMI_FILES = ["xgmi_device_id", "xgmi_physical_id", "xgmi_error", "xgmi_num_hops",
              "xgmi_num_links"]


class Xgmi(unittest.TestCase):
    def check_hive(self, m, bdfs, hive_id, links):
        n = len(bdfs)
        ids, phys = set(), set()
        owner = m.path(m.gpu(bdfs[0], "xgmi_hive_info"))
        self.assertTrue(os.path.isdir(owner) and not os.path.islink(owner))
        self.assertEqual(m.text(m.gpu(bdfs[0], "xgmi_hive_info/xgmi_hive_id")),
                         "%d\n" % hive_id)
        nodes = sorted(os.listdir(owner))
        self.assertEqual(nodes, sorted(["xgmi_hive_id"] + ["node%d" % k
                                                           for k in range(1, n + 1)]))
        for k, bdf in enumerate(bdfs):
            with self.subTest(gpu=bdf):
                for f in XGMI_FILES:
                    self.assertEqual(os.stat(m.path(m.gpu(bdf, f))).st_mode & 0o777, 0o444)
                dev = m.text(m.gpu(bdf, "xgmi_device_id"))
                self.assertRegex(dev, r"^[0-9]+\n$")
                ids.add(dev)
                phys.add(m.text(m.gpu(bdf, "xgmi_physical_id")))
                hops = m.text(m.gpu(bdf, "xgmi_num_hops"))
                nl = m.text(m.gpu(bdf, "xgmi_num_links"))
                self.assertRegex(hops, r"^([0-9a-f]{2} ){%d}\n$" % n)
                want = ["00" if j == k else "41" for j in range(n)]
                self.assertEqual(hops.split(), want)
                self.assertEqual(nl.split(), ["00" if j == k else "%02x" % links
                                              for j in range(n)])
                # amdgpu_xgmi_get_hops_count(): bits 2:0
                self.assertEqual({int(h, 16) & 7 for j, h in enumerate(hops.split()) if j != k},
                                 {1})
                # MI300 and MI350 have no FICA in their data fabric: EINVAL
                self.assertEqual(m.read_errno(m.gpu(bdf, "xgmi_error")), errno.EINVAL)
                if k:
                    link = m.path(m.gpu(bdf, "xgmi_hive_info"))
                    self.assertTrue(os.path.islink(link))
                    self.assertEqual(os.path.realpath(link), os.path.realpath(owner))
                self.assertEqual(os.path.realpath(os.path.join(owner, "node%d" % (k + 1))),
                                 os.path.realpath(m.path(m.gpu(bdf))))
        self.assertEqual(len(ids), n)
        self.assertEqual(phys, {"%d\n" % i for i in range(n)})

    def test_mi300x_spx_cpx(self):
        with Mount("--seed", "1") as m:
            self.check_hive(m, MI300X_BDFS, 0x3f5a1c8e92b7d461, 1)
            for bdf in MI300X_BDFS[:2]:
                self.assertEqual(m.write(m.gpu(bdf, CCP), "CPX"), 0)
            self.check_hive(m, MI300X_BDFS, 0x3f5a1c8e92b7d461, 1)

    def test_mi300a(self):
        with Mount("--machine", "mi300a-4", "--seed", "1") as m:
            bdfs = ["0000:01:00.0", "0001:01:00.0", "0002:01:00.0", "0003:01:00.0"]
            self.check_hive(m, bdfs, 0x1d62e07bb4f09a35, 2)

    def test_none_without_amdgpu_on_a_pf_in_a_hive(self):
        for preset, bdf in (("mi300x-guest-1vf", "0000:01:00.0"),
                            ("mi300x-guest-multivf", "0000:01:00.0"),
                            ("mi300x-gim-8vf", GPU0)):
            with self.subTest(preset=preset), Mount("--machine", preset) as m:
                names = os.listdir(m.path(m.gpu(bdf)))
                self.assertEqual([n for n in names if n.startswith("xgmi")], [])

    def test_unbind_rebind(self):
        with Mount("--seed", "1") as m:
            drv = "bus/pci/drivers/amdgpu"
            self.assertEqual(m.write(drv + "/unbind", MI300X_BDFS[7]), 0)
            self.assertFalse(os.path.exists(m.path(m.gpu(MI300X_BDFS[7], "xgmi_error"))))
            owner = m.gpu(GPU0, "xgmi_hive_info")
            self.assertNotIn("node8", os.listdir(m.path(owner)))
            self.assertEqual(len(m.text(m.gpu(GPU0, "xgmi_num_hops")).split()), 7)
            self.assertEqual(m.write(drv + "/bind", MI300X_BDFS[7]), 0)
            self.assertIn("node8", os.listdir(m.path(owner)))
            self.assertEqual(len(m.text(m.gpu(GPU0, "xgmi_num_hops")).split()), 8)
            # the device that holds the hive's directory: it stays while others are in the hive
            self.assertEqual(m.write(drv + "/unbind", GPU0), 0)
            self.assertTrue(os.path.isdir(m.path(owner)))
            self.assertFalse(os.path.exists(m.path(m.gpu(GPU0, "xgmi_num_hops"))))
            self.assertEqual(m.write(drv + "/bind", GPU0), 0)
            self.assertTrue(os.path.isdir(m.path(owner)) and not os.path.islink(m.path(owner)))
            self.assertEqual(len(m.text(m.gpu(GPU0, "xgmi_num_hops")).split()), 8)
            self.assertEqual(len(m.text(m.gpu(GPU1, "xgmi_num_hops")).split()), 8)
            self.assertEqual(os.path.realpath(m.path(m.gpu(GPU1, "xgmi_hive_info"))),
                             os.path.realpath(m.path(owner)))
            # unplugged with its directory, and back: the hive's directory is made again
            m.ctl("unplug", GPU0)
            m.ctl("replug", GPU0)
            self.assertEqual(int(m.value(m.gpu(GPU0, "xgmi_hive_info/xgmi_hive_id"))),
                             0x3f5a1c8e92b7d461)
            self.assertEqual(len(os.listdir(m.path(owner))), 9)

    def test_error_cleared_by_read(self):
        def fica(desc):
            desc["products"]["MI300X"]["xgmi_error_counter"] = True
        with Mount("--machine", machine_file(self, "mi300x-8", fica)) as m:
            f = m.gpu(GPU1, "xgmi_error")
            self.assertEqual(m.text(f), "0\n")
            for status in (1, 2):
                m.ctl("xgmi-error", GPU1, status)
                self.assertEqual(m.text(f), "%d\n" % status)
                self.assertEqual(m.text(f), "0\n")       # the read cleared it
            self.assertEqual(m.text(m.gpu(GPU0, "xgmi_error")), "0\n")
            r = m.ctl("xgmi-error", GPU1, 3, check=False)
            self.assertIn("ERANGE", r.stderr)

    def test_snapshot_has_them(self):
        out = simtest.tmpdir(self, "amdsmi-links-snap.")
        sim("snapshot", out, "--machine", "mi300x-8", check=True)
        d = os.path.join(out, "bus/pci/devices", MI300X_BDFS[3])
        with open(os.path.join(d, "xgmi_num_hops")) as f:
            self.assertEqual(f.read().split(), ["41"] * 3 + ["00"] + ["41"] * 4)
        self.assertTrue(os.path.islink(os.path.join(d, "xgmi_hive_info")))
        with open(os.path.join(d, "xgmi_hive_info", "xgmi_hive_id")) as f:
            self.assertEqual(int(f.read()), 0x3f5a1c8e92b7d461)


# --- link controls ---------------------------------------------------------------------------

class LinkControls(unittest.TestCase):
    def test_xgmi_link_down_up(self):
        for preset in ("mi300x-8", "mi300x-8-dkms"):
            with self.subTest(preset=preset), Mount("--machine", preset, "--seed", "1") as m:
                self.assertEqual(metrics(m, GPU0)["xgmi_link_status"], [1] * 7 + [2])
                # link 2 of GPU0 leads to its third peer (BDF order), which reaches GPU0 by
                # its link 0
                peer = MI300X_BDFS[3]
                m.ctl("xgmi-link", GPU0, 2, "down")
                self.assertEqual(metrics(m, GPU0)["xgmi_link_status"],
                                 [1, 1, 0, 1, 1, 1, 1, 2])
                self.assertEqual(metrics(m, peer)["xgmi_link_status"], [0] + [1] * 6 + [2])
                self.assertEqual(metrics(m, GPU1)["xgmi_link_status"], [1] * 7 + [2])
                self.assertEqual(json.loads(m.ctl("dump").stdout)["gpus"][3]["links"]
                                 ["xgmi_links_down"], [0])
                before = metrics(m, GPU0)["xgmi_read_data_acc"]
                time.sleep(0.35)
                after = metrics(m, GPU0)["xgmi_read_data_acc"]
                self.assertEqual(after[2], before[2])      # nothing over a link down
                self.assertGreater(after[1], before[1])
                m.ctl("xgmi-link", GPU0, 2, "up")
                self.assertEqual(metrics(m, GPU0)["xgmi_link_status"], [1] * 7 + [2])
                self.assertEqual(metrics(m, peer)["xgmi_link_status"], [1] * 7 + [2])
                for args, name in (((GPU0, 7, "down"), "ERANGE"), ((GPU0, 1, "sideways"),
                                                                    "EINVAL")):
                    r = m.ctl("xgmi-link", *args, check=False)
                    self.assertIn(name, r.stderr)

    def test_pcie_retrain(self):
        for preset in ("mi300x-8", "mi300x-8-dkms"):
            with self.subTest(preset=preset), Mount("--machine", preset, "--seed", "1") as m:
                d = m.gpu(GPU0)
                up = os.path.basename(os.path.dirname(os.path.realpath(m.path(d))))
                m.ctl("pcie-link", GPU0, 8, "16.0")
                self.assertEqual(m.text(d + "/current_link_width"), "8\n")
                self.assertEqual(m.text(d + "/current_link_speed"), "16.0 GT/s PCIe\n")
                self.assertEqual(m.text(d + "/max_link_width"), "16\n")
                self.assertEqual(m.text(d + "/max_link_speed"), "32.0 GT/s PCIe\n")
                # the port above: the other end of the link
                self.assertEqual(m.text(m.gpu(up, "current_link_width")), "8\n")
                self.assertEqual(m.text(m.gpu(up, "current_link_speed")), "16.0 GT/s PCIe\n")
                f = metrics(m, GPU0)
                self.assertEqual((f["pcie_link_width"], f["pcie_link_speed"]), (8, 160))
                self.assertEqual(metrics(m, GPU1)["pcie_link_width"], 16)
                # config space: the PCIe capability's Link Status (speed code 4, width 8)
                with open(m.path(d + "/config"), "rb") as fp:
                    cfg = fp.read()
                cap = cfg[0x34]
                while cap:
                    if cfg[cap] == 0x10:
                        break
                    cap = cfg[cap + 1]
                self.assertTrue(cap)
                (lnksta,) = struct.unpack_from("<H", cfg, cap + 0x12)
                self.assertEqual((lnksta & 0xf, lnksta >> 4 & 0x3f), (4, 8))
                # the KFD link keeps the capability's bandwidth
                (node,) = [n[0] for n in m.gpu_nodes(GPU0)]
                self.assertEqual(m.links(node)[0]["max_bandwidth"], 64000)
                for args, name in (((GPU0, 32, "16.0"), "ERANGE"), ((GPU0, 16, "64.0"), "ERANGE"),
                                   ((GPU0, 3, "16.0"), "EINVAL"), ((GPU0, 8, "fast"), "EINVAL")):
                    r = m.ctl("pcie-link", *args, check=False)
                    self.assertIn(name, r.stderr)
                m.ctl("pcie-link", GPU0, 16, "32.0")
                self.assertEqual(m.text(d + "/current_link_speed"), "32.0 GT/s PCIe\n")
                self.assertEqual(metrics(m, GPU0)["pcie_link_speed"], 320)

    def test_pcie_replays(self):
        for preset in ("mi300x-8", "mi300x-8-dkms"):
            with self.subTest(preset=preset), Mount("--machine", preset, "--seed", "1") as m:
                self.assertEqual(m.text(m.gpu(GPU0, "pcie_replay_count")), "0\n")
                m.ctl("pcie-replay", GPU0, 5, "recov=2")
                m.ctl("pcie-replay", GPU0, 3)
                self.assertEqual(m.text(m.gpu(GPU0, "pcie_replay_count")), "8\n")
                f = metrics(m, GPU0)
                self.assertEqual((f["pcie_replay_count_acc"], f["pcie_nak_rcvd_count_acc"],
                                  f["pcie_l0_to_recov_count_acc"]), (8, 8, 2))
                self.assertEqual(metrics(m, GPU1)["pcie_replay_count_acc"], 0)
                links = json.loads(m.ctl("dump").stdout)["gpus"][0]["links"]
                self.assertEqual((links["pcie_replays"], links["pcie_recoveries"]), (8, 2))
                r = m.ctl("pcie-replay", GPU0, 1, "recover=1", check=False)
                self.assertIn("expected recov=M", r.stderr)


# --- the KFD peer matrix ---------------------------------------------------------------------

class Topology(unittest.TestCase):
    def cpu_link_max(self, m, bdf):
        speed = m.value(m.gpu(bdf, "max_link_speed")).split()[0]
        return int(m.value(m.gpu(bdf, "max_link_width"))) * GEN_MBITS[speed] // 8

    def check(self, m, apu=False):
        nodes = m.kfd_nodes()
        ncpu = sum(1 for n in nodes if not n[2])
        gpu_of = {}
        for bdf in sorted({b for b in self.bdfs}):
            for n in m.gpu_nodes(bdf):
                gpu_of[n[0]] = bdf
        for idx, props, gpu_id in nodes:
            io, p2p = m.links(idx), m.links(idx, "p2p_links")
            self.assertEqual(props["io_links_count"], len(io))
            self.assertEqual(props["p2p_links_count"], len(p2p))
            if not gpu_id:
                continue
            bdf = gpu_of[idx]
            cpu = io[0]
            if apu:
                self.assertEqual((cpu["type"], cpu["weight"], cpu["min_bandwidth"],
                                  cpu["max_bandwidth"]), (11, INTRA_SOCKET_WEIGHT, MEM_BW,
                                                          MEM_BW))
            else:
                self.assertEqual((cpu["type"], cpu["weight"], cpu["min_bandwidth"],
                                  cpu["max_bandwidth"]),
                                 (2, PCIE_WEIGHT, 2500 // 8, self.cpu_link_max(m, bdf)))
            # the CPU node has the same link back
            (back,) = [l for l in m.links(cpu["node_to"]) if l["node_to"] == idx]
            self.assertEqual({k: back[k] for k in ("type", "weight", "max_bandwidth")},
                             {k: cpu[k] for k in ("type", "weight", "max_bandwidth")})
            peers = io[1:]
            self.assertEqual([l["node_to"] for l in peers], sorted(l["node_to"] for l in peers))
            for l in peers:
                other = l["node_to"]
                later = gpu_of[max(idx, other)]
                parts_later = len(m.gpu_nodes(later))
                if parts_later == 1:
                    # the later GPU's PSP tables, at the earlier GPU's place (join order)
                    at = self.bdfs.index(gpu_of[min(idx, other)])
                    nl = int(m.text(m.gpu(later, "xgmi_num_links")).split()[at], 16)
                    hops = int(m.text(m.gpu(later, "xgmi_num_hops")).split()[at], 16) & 7
                    want = (XGMI_WEIGHT * hops, XGMI_LINK_MBS, nl * XGMI_LINK_MBS)
                elif gpu_of[other] == bdf:
                    want = (INTRA_SOCKET_WEIGHT, MEM_BW, MEM_BW)
                else:
                    want = (2 * INTRA_SOCKET_WEIGHT + XGMI_WEIGHT, 0, 0)
                self.assertEqual(l["type"], 11)
                self.assertEqual((l["weight"], l["min_bandwidth"], l["max_bandwidth"]), want,
                                 "node %d -> %d" % (idx, other))
                # symmetric
                (rev,) = [r for r in m.links(other) if r["node_to"] == idx]
                self.assertEqual((rev["weight"], rev["max_bandwidth"]),
                                 (l["weight"], l["max_bandwidth"]))
            # p2p: the other CPU nodes through the GPU's own (all GPUs share a hive here)
            self.assertEqual([l["node_to"] for l in p2p],
                             [c for c in range(ncpu) if c != cpu["node_to"]])
            for l in p2p:
                self.assertEqual((l["type"], l["weight"], l["max_bandwidth"]),
                                 (cpu["type"], cpu["weight"] + 21, 0))

    def test_mi300x_spx_and_cpx(self):
        self.bdfs = MI300X_BDFS
        with Mount("--seed", "1") as m:
            self.check(m)
            self.assertEqual(m.write(m.gpu(GPU0, CCP), "CPX"), 0)
            self.assertEqual(m.write(m.gpu(GPU1, CCP), "DPX"), 0)
            self.check(m)
            # concrete: GPU0's partitions (added last) among themselves and to GPU 2
            n0 = sorted(n[0] for n in m.gpu_nodes(GPU0))
            n2 = [n[0] for n in m.gpu_nodes(MI300X_BDFS[2])][0]
            links = {l["node_to"]: l for l in m.links(n0[0])}
            self.assertEqual(links[n0[1]]["weight"], 13)
            self.assertEqual(links[n2]["weight"], 41)
            self.assertEqual(links[n2]["max_bandwidth"], 0)

    def test_mi300a(self):
        self.bdfs = ["0000:01:00.0", "0001:01:00.0", "0002:01:00.0", "0003:01:00.0"]
        with Mount("--machine", "mi300a-4", "--seed", "1") as m:
            self.check(m, apu=True)
            (a,), (b,) = m.gpu_nodes(self.bdfs[0]), m.gpu_nodes(self.bdfs[1])
            (l,) = [x for x in m.links(a[0]) if x["node_to"] == b[0]]
            self.assertEqual((l["min_bandwidth"], l["max_bandwidth"]), (64000, 128000))

    def test_no_hive_peer_links(self):
        """GPUs of no hive: PCIe peer links in p2p_links, none in io_links."""
        def nohive(desc):
            for g in desc["gpus"]:
                g["hive_id"] = "0x0"
        with Mount("--machine", machine_file(self, "mi300x-8", nohive)) as m:
            nodes = [n for n in m.kfd_nodes() if n[2]]
            self.assertEqual(len(nodes), 8)
            first, last = nodes[0][0], nodes[-1][0]
            self.assertEqual(len(m.links(first)), 1)
            p2p = {l["node_to"]: l for l in m.links(first, "p2p_links")}
            self.assertEqual(sorted(p2p), [1] + [n[0] for n in nodes[1:]])
            l = p2p[last]
            self.assertEqual(l["type"], 2)
            self.assertIn(l["weight"], (2 * PCIE_WEIGHT, 2 * PCIE_WEIGHT + 21))
            self.assertFalse(os.path.exists(m.path(m.gpu(GPU0, "xgmi_num_hops"))))


if __name__ == "__main__":
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    main()
