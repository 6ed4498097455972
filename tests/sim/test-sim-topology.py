#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""amdsmi topology on the simulated 8 x MI300X (mi300x-8: one XGMI hive), in SPX and with every
GPU in CPX, against the spec's rules (health-and-control §3.3) and against the KFD files read
here independently of the library:

- one hive: every pair of distinct GPUs is XGMI, the diagonal SELF (hops 0, weight 0);
- weight and bandwidth are the io_link's from the first partition of one GPU to the other's,
  hops the hive's xgmi_num_hops (bits 2:0). The kernel's rules (kfd_crat.c
  kfd_fill_gpu_xgmi_link_to_gpu, amdgpu_xgmi_get_bandwidth, which the simulator follows): in
  SPX weight = KFD_CRAT_XGMI_WEIGHT (15) x hops, min bandwidth one link (32 GT/s x 16 lanes:
  64 000 MB/s), max a whole number of links; in a partition mode, across GPUs, weight =
  2 x KFD_CRAT_INTRA_SOCKET_WEIGHT (13) + 15 x hops and no bandwidth (0);
- in CPX: 64 partitions, two of one GPU SAME_GPU (hops 0, weight 13), of two GPUs XGMI with
  their GPUs' values;
- per GPU: numa_node and local_cpulist as the PCI device says, one hive id for all;
- --csv has one row per pair, the table a matrix per property; the documents are amdsmi/1.
"""
import csv
import io
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from simtest import CLI, Mount, SchemaCase, cpx_machine, main, tmpdir  # noqa: E402

TOPOLOGY = "class/kfd/kfd/topology/nodes"
XGMI_WEIGHT = 15         # KFD_CRAT_XGMI_WEIGHT, per hop
INTRA_SOCKET_WEIGHT = 13  # KFD_CRAT_INTRA_SOCKET_WEIGHT
LINK_MBPS = 64000        # one XGMI link: 32 GT/s x 16 lanes / 8


def props(text):
    out = {}
    for line in text.splitlines():
        k, _, v = line.partition(" ")
        out[k] = int(v)
    return out


class Kfd:
    """The KFD topology of a mount read here: node -> (bdf, partition), and the links."""

    def __init__(self, m):
        self.m = m
        bdfs = {}
        for bdf in os.listdir(m.path("bus/pci/devices")):
            dom, bus, devfn = bdf.split(":")
            dev, fn = devfn.split(".")
            bdfs[(int(dom, 16), int(bus, 16) << 8 | int(dev, 16) << 3 | int(fn))] = bdf
        self.nodes = {}
        gpu_nodes = {}
        for n in os.listdir(m.path(TOPOLOGY)):
            p = props(m.text("%s/%s/properties" % (TOPOLOGY, n)))
            if p.get("simd_count", 0) == 0:
                continue
            gpu_nodes[int(n)] = p
        # partitions of one GPU: location_id (bus << 8 | devfn, function 0) ORed with the
        # partition index
        by_gpu = {}
        for n, p in gpu_nodes.items():
            loc = p["location_id"]
            by_gpu.setdefault(bdfs[(p["domain"], loc & ~0x7)], []).append((loc & 0x7, n))
        for bdf, parts in by_gpu.items():
            for part, n in sorted(parts):
                self.nodes[n] = (bdf, part)
        self.node_of = {v: k for k, v in self.nodes.items()}

    def links(self, node):
        out = {}
        d = "%s/%d/io_links" % (TOPOLOGY, node)
        for m in os.listdir(self.m.path(d)):
            p = props(self.m.text("%s/%s/properties" % (d, m)))
            out[p["node_to"]] = p
        return out



class Case(SchemaCase):
    maxDiff = None

    def cli(self, m, *args):
        env = dict(os.environ, AMDSMI_SYSFS_ROOT=m.root, RUNTIME_DIRECTORY=self.rt)
        p = subprocess.run([CLI, "--direct", "topology"] + list(args), env=env,
                           capture_output=True, text=True, timeout=120)
        self.assertEqual(p.returncode, 0, p.stderr)
        return p.stdout

    def doc(self, m, *args):
        d = json.loads(self.cli(m, "--json", *args))
        self.assert_valid(d, "amdsmi topology --json")
        self.assertEqual(d["errors"], [])
        return d

    def setUp(self):
        self.rt = tmpdir(self, "amdsmi-rt.")

    def check_gpus(self, m, doc, kfd):
        bdfs = sorted({bdf for bdf, _ in kfd.nodes.values()})
        self.assertEqual([g["bdf"] for g in doc["gpus"]], bdfs)
        hives = {g["hive_id"] for g in doc["gpus"]}
        self.assertEqual(len(hives), 1)
        self.assertIsNotNone(hives.pop())
        for g in doc["gpus"]:
            dev = "bus/pci/devices/%s/" % g["bdf"]
            self.assertEqual(g["numa_node"], int(m.value(dev + "numa_node")))
            self.assertEqual(g["cpu_affinity"], m.value(dev + "local_cpulist"))

    def check_gpu_pairs(self, doc, kfd, partitioned=False):
        bdfs = [g["bdf"] for g in doc["gpus"]]
        n = len(bdfs)
        self.assertEqual(len(doc["links"]), n * n)
        for p in doc["links"]:
            a, b = int(p["from"]), int(p["to"])
            if a == b:
                self.assertEqual((p["type"], p["hops"], p["weight"]), ("SELF", 0, 0), p)
                continue
            link = kfd.links(kfd.node_of[(bdfs[a], 0)])[kfd.node_of[(bdfs[b], 0)]]
            self.assertEqual(link["type"], 11)
            self.assertEqual(p["type"], "XGMI", p)
            self.assertEqual(p["weight"], link["weight"], p)
            self.assertGreaterEqual(p["hops"], 1)
            self.assertEqual(p["min_bandwidth_mbps"], link["min_bandwidth"])
            self.assertEqual(p["max_bandwidth_mbps"], link["max_bandwidth"])
            if partitioned:
                self.assertEqual(p["weight"], 2 * INTRA_SOCKET_WEIGHT + XGMI_WEIGHT * p["hops"],
                                 p)
                self.assertEqual((p["min_bandwidth_mbps"], p["max_bandwidth_mbps"]), (0, 0), p)
            else:
                self.assertEqual(p["weight"], XGMI_WEIGHT * p["hops"], p)
                self.assertEqual(p["min_bandwidth_mbps"], LINK_MBPS)
                self.assertEqual(p["max_bandwidth_mbps"] % LINK_MBPS, 0)

    def test_spx(self):
        with Mount("--machine", "mi300x-8", "--frozen") as m:
            kfd = Kfd(m)
            self.assertEqual(len(kfd.nodes), 8)
            doc = self.doc(m)
            self.check_gpus(m, doc, kfd)
            self.check_gpu_pairs(doc, kfd)
            self.assertIsNone(doc["partition_links"])
            # CSV: one row per pair
            rows = list(csv.DictReader(io.StringIO(self.cli(m, "--csv"))))
            self.assertEqual(len(rows), 64)
            self.assertEqual({r["level"] for r in rows}, {"gpu"})
            self.assertEqual(sum(r["type"] == "SELF" for r in rows), 8)
            # the table: a matrix per property
            table = self.cli(m)
            for title in ("LINK TYPE", "HOPS", "WEIGHT", "XGMI LINKS", "BANDWIDTH"):
                self.assertIn("\n" + title, table)
            self.assertIn("GPU7  XGMI  XGMI  XGMI  XGMI  XGMI  XGMI  XGMI  SELF", table)

    def test_cpx(self):
        tmp = tmpdir(self, "amdsmi-machine.")
        with Mount("--machine", cpx_machine(tmp), "--frozen") as m:
            kfd = Kfd(m)
            self.assertEqual(len(kfd.nodes), 64)
            doc = self.doc(m)
            self.check_gpus(m, doc, kfd)
            self.check_gpu_pairs(doc, kfd, partitioned=True)
            pl = doc["partition_links"]
            bdfs = [g["bdf"] for g in doc["gpus"]]
            self.assertEqual(pl["ends"], ["%d.%d" % (g, p) for g in range(8) for p in range(8)])
            checked = 0
            for i, fe in enumerate(pl["ends"]):
                fg, fp = map(int, fe.split("."))
                links = kfd.links(kfd.node_of[(bdfs[fg], fp)])
                for j, te in enumerate(pl["ends"]):
                    tg, tp = map(int, te.split("."))
                    got = {k: pl[k][i][j] for k in ("type", "hops", "weight",
                                                    "min_bandwidth_mbps", "max_bandwidth_mbps")}
                    if i == j:
                        self.assertEqual((got["type"], got["hops"], got["weight"]),
                                         ("SELF", 0, 0))
                        continue
                    link = links[kfd.node_of[(bdfs[tg], tp)]]
                    self.assertEqual(link["type"], 11)
                    self.assertEqual(got["weight"], link["weight"], (fe, te))
                    self.assertEqual(got["max_bandwidth_mbps"], link["max_bandwidth"])
                    if fg == tg:
                        self.assertEqual((got["type"], got["hops"]), ("SAME_GPU", 0), (fe, te))
                        self.assertEqual(got["weight"], INTRA_SOCKET_WEIGHT, (fe, te))
                    else:
                        self.assertEqual(got["type"], "XGMI", (fe, te))
                        self.assertEqual(got["weight"],
                                         2 * INTRA_SOCKET_WEIGHT + XGMI_WEIGHT * got["hops"])
                    checked += 1
            self.assertEqual(checked, 64 * 63)
            # -g N.P: those partitions
            sel = self.doc(m, "-g", "0.1,3.7")
            self.assertEqual(sel["partition_links"]["ends"], ["0.1", "3.7"])
            self.assertEqual(sel["partition_links"]["type"], [["SELF", "XGMI"],
                                                              ["XGMI", "SELF"]])
            rows = list(csv.DictReader(io.StringIO(self.cli(m, "--csv"))))
            self.assertEqual(len(rows), 64 + 64 * 64)
            self.assertEqual(sum(r["type"] == "SAME_GPU" for r in rows), 8 * 8 * 7)


if __name__ == "__main__":
    main()
