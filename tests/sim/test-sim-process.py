#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""amdsmi process end to end on simulator mounts (issue 21): 1000 real processes across the 64
partitions of 8 x MI300X in CPX, whose VRAM sums per GPU to mem_info_vram_used; -g filters of
GPUs and partitions; the table, CSV and JSON (against the schema); what nobody reads; a
process that exits between two reads; a name with control characters; an entry for a node no
GPU has; a process that holds every GPU without using them; and partition set naming the
processes that block it through the same reader."""

import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from simtest import (CLI, MI300X_BDFS, NOBODY, CtlMount, SchemaCase, main,  # noqa: E402
                     tmpdir)

CCP = "current_compute_partition"
GiB = 1 << 30


def sleepers(n, user=None):
    return [subprocess.Popen((user or []) + ["sleep", "600"]) for _ in range(n)]


def kill_all(ps):
    for p in ps:
        p.kill()
    for p in ps:
        p.wait()


def entries(doc):
    """[(gpu, partition, pid, entry)] of a process document."""
    return [(g["gpu"], e["partition"], e["pid"], e) for g in doc["gpus"] for e in g["processes"]]


class Case(SchemaCase):
    maxDiff = None

    def setUp(self):
        self.rt = tmpdir(self, "amdsmi-rt.")
        self.st = tmpdir(self, "amdsmi-state.")
        self.conf = tmpdir(self, "amdsmi-conf.")

    def cli(self, root, *args, status=0, user=None):
        env = dict(os.environ, AMDSMI_SYSFS_ROOT=root, RUNTIME_DIRECTORY=self.rt,
                   STATE_DIRECTORY=self.st, CONFIGURATION_DIRECTORY=self.conf)
        p = subprocess.run((user or []) + [CLI] + [str(a) for a in args], env=env,
                           capture_output=True, text=True, timeout=300)
        if status is not None:
            self.assertEqual(p.returncode, status,
                             "amdsmi %s: %s" % (" ".join(map(str, args)), p.stderr[-2000:]))
        return p

    def doc(self, root, *args, user=None):
        p = self.cli(root, *(list(args) + ["--json"]), user=user)
        d = json.loads(p.stdout)
        self.assert_valid(d, "amdsmi %s --json" % " ".join(map(str, args)))
        return d

    def test_thousand_in_cpx(self):
        with CtlMount("--seed", "1") as m:
            for bdf in MI300X_BDFS:
                self.assertEqual(m.write(m.gpu(bdf, CCP), "CPX"), 0)
                m.ctl("sensor", bdf, "vram_used_bytes", 0)
            ps = sleepers(1000)
            try:
                want = {}
                lines = []
                for i, p in enumerate(ps):
                    gpu, part = i % 8, i // 8 % 8
                    vram = (i + 1) * 1 << 20
                    lines.append("kfd-users add %s.%d %d %d queues=%d faults=%d" %
                                 (MI300X_BDFS[gpu], part, p.pid, vram, 1 + i % 3, i))
                    want[p.pid] = (gpu, part, vram, 1 + i % 3, i)
                self.assertEqual(m.raw(lines), "ok 0\n" * 1000)

                t0 = time.monotonic()
                doc = self.doc(m.root, "process")
                sys.stderr.write("amdsmi process --json, 1000 processes on a FUSE mount: "
                                 "%.0f ms\n" % ((time.monotonic() - t0) * 1000))
                got = {}
                for gpu, part, pid, e in entries(doc):
                    self.assertNotIn(pid, got, "one entry per process here")
                    got[pid] = (gpu, part, e["vram_bytes"], e["queues"], e["faults"])
                    self.assertTrue(e["in_use"])
                    self.assertEqual(e["name"], "sleep")
                    self.assertEqual(e["user"], "root")
                    self.assertEqual(e["cu_occupancy"], 0)
                self.assertEqual(got, want)
                # every process's VRAM sums per GPU to what the GPU says it uses
                for g in range(8):
                    used = int(m.value(m.gpu(MI300X_BDFS[g], "mem_info_vram_used")))
                    self.assertEqual(sum(v[2] for v in want.values() if v[0] == g), used)

                # -g N, -g N.P, several
                one = self.doc(m.root, "process", "-g", "3")
                self.assertEqual([g["gpu"] for g in one["gpus"]], [3])
                self.assertEqual({pid for _, _, pid, _ in entries(one)},
                                 {pid for pid, v in want.items() if v[0] == 3})
                part = self.doc(m.root, "process", "-g", "2.5,6.0")
                self.assertEqual({(g, p) for g, p, _, _ in entries(part)}, {(2, 5), (6, 0)})
                self.assertEqual(len(entries(part)),
                                 sum(1 for v in want.values() if v[:2] in ((2, 5), (6, 0))))

                # the table: one row per process (each uses one partition) and the header
                table = self.cli(m.root, "process").stdout.splitlines()
                self.assertTrue(table[0].startswith("GPU"), table[0])
                self.assertEqual(len(table), 1001)
                self.assertIn("2.5", [r.split()[0] for r in table[1:]])
                # CSV: raw bytes, the cgroup
                csv = self.cli(m.root, "process", "--csv", "-g", "0.0").stdout.splitlines()
                self.assertEqual(csv[0], "gpu,pid,name,user,vram_bytes,queues,cu_occupancy,"
                                 "sdma_usec,evicted_ms,faults,container,cgroup")
                self.assertEqual(len(csv) - 1,
                                 sum(1 for v in want.values() if v[:2] == (0, 0)))
                first = csv[1].split(",")
                self.assertEqual(int(first[4]), want[int(first[1])][2])
            finally:
                kill_all(ps)

    def test_exits_and_unprivileged(self):
        with CtlMount("--seed", "1") as m:
            mine = sleepers(2)
            theirs = sleepers(1, NOBODY)
            try:
                m.ctl("kfd-users", "add", MI300X_BDFS[0], mine[0].pid, GiB)
                m.ctl("kfd-users", "add", MI300X_BDFS[1], mine[1].pid, GiB)
                m.ctl("kfd-users", "add", MI300X_BDFS[1], theirs[0].pid, GiB)
                pids = {pid for _, _, pid, _ in entries(self.doc(m.root, "process"))}
                self.assertEqual(pids, {mine[0].pid, mine[1].pid, theirs[0].pid})
                # a watch: one compact document per sample (NDJSON)
                lines = self.cli(m.root, "process", "--json", "-w", "0.1", "-n", "2",
                                 "-g", "1").stdout.splitlines()
                self.assertEqual(len(lines), 2)
                for line in lines:
                    d = json.loads(line)
                    self.assert_valid(d, "amdsmi process --json -w")
                    self.assertEqual({pid for _, _, pid, _ in entries(d)},
                                     {mine[1].pid, theirs[0].pid})
                # nobody reads what the kernel shows it: the files are world-readable here
                doc = self.doc(m.root, "process", user=NOBODY)
                byp = {pid: e for _, _, pid, e in entries(doc)}
                self.assertEqual(set(byp), pids)
                self.assertEqual(byp[theirs[0].pid]["user"], "nobody")
                self.assertEqual(byp[mine[0].pid]["user"], "root")
                # a process that exits is gone from the next read, without an error
                mine[0].kill()
                mine[0].wait()
                p = self.cli(m.root, "process", "--json")
                self.assertNotIn('"pid": %d,' % mine[0].pid, p.stdout)
                self.assertEqual(json.loads(p.stdout)["errors"], [])
            finally:
                kill_all(mine + theirs)

    def test_odd_entries(self):
        with CtlMount("--seed", "1") as m:
            # a name with control characters, as prctl(PR_SET_NAME) allows any process
            odd = subprocess.Popen([sys.executable, "-c",
                                    "import ctypes, time\n"
                                    "ctypes.CDLL(None).prctl(15, b'\\x1b[31mred\\\\x', 0, 0, 0)\n"
                                    "print('ok', flush=True)\n"
                                    "time.sleep(600)\n"], stdout=subprocess.PIPE, text=True)
            self.addCleanup(odd.stdout.close)
            holder = sleepers(1)
            try:
                self.assertEqual(odd.stdout.readline(), "ok\n")
                m.ctl("kfd-users", "add", MI300X_BDFS[0], odd.pid, GiB, "queues=2")
                # an entry for a node no GPU has (a raw add): a note, the rest shown
                m.ctl("kfd-users", "add-raw", odd.pid, 4242, 4096)
                # a process that holds every GPU without using any (a ROCr process)
                m.ctl("kfd-users", "add", MI300X_BDFS[0], holder[0].pid, 0, "all")
                p = self.cli(m.root, "process", "--json")
                doc = json.loads(p.stdout)
                self.assert_valid(doc, "amdsmi process --json")
                self.assertIn("gpu_id 4242, which no GPU of this machine has", p.stderr)
                byp = {}
                for g, part, pid, e in entries(doc):
                    byp.setdefault(pid, []).append((g, e))
                (g, e), = byp[odd.pid]
                self.assertEqual(e["name"], "\\x1b[31mred\\\\x")
                self.assertEqual((g, e["queues"], e["vram_bytes"]), (0, 2, GiB))
                self.assertEqual(len(byp[holder[0].pid]), 8, "one entry per GPU held")
                self.assertTrue(all(not e["in_use"] and e["sdma_usec"] is None
                                    for _, e in byp[holder[0].pid]))
                # the table: the escaped name; the holder once per GPU, with "-"
                table = self.cli(m.root, "process").stdout
                self.assertIn("\\x1b[31mred\\\\x", table)
                self.assertNotIn("\x1b", table)
                rows = [r.split() for r in table.splitlines()[1:]
                        if r.split()[1] == str(holder[0].pid)]
                self.assertEqual(len(rows), 8)
                self.assertTrue(all(r[4] == "-" for r in rows), rows)

                # partition set names the blockers from the same reader
                p = self.cli(m.root, "partition", "set", "-g", "0", "--compute", "CPX",
                             status=None)
                self.assertNotEqual(p.returncode, 0)
                self.assertIn(str(holder[0].pid), p.stdout + p.stderr)
                self.assertIn("%d (?[31mred\\x)" % odd.pid, p.stderr)
                self.assertNotIn("\x1b", p.stdout + p.stderr)
            finally:
                kill_all([odd] + holder)


if __name__ == "__main__":
    main()
