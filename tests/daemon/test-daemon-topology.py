#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""amdsmi topology through amdsmid: Manager.GetTopology(), GetDocument("topology") and the CLI.

GetTopology() answers the "topology" document of every GPU, the one `amdsmi topology --json
--direct` prints (but for the timestamp); `amdsmi topology` with amdsmid running asks it (the
CLI runs blind: the simulator's tree is hidden from it) and prints what --direct prints, in
every format, byte for byte but for the JSON timestamp. On the 8 x MI300X in SPX and with
every GPU in CPX (64 partitions, the partition matrices).
"""
import json
import os
import re
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from daemontest import MANAGER, NOBODY, ROOT, Daemon, require_daemon  # noqa: E402
from simtest import cpx_machine  # noqa: E402

STAMP = re.compile(r'"timestamp": ?"[^"]*"')

CASES = [("topology",), ("topology", "-g", "0,3"), ("topology", "-g", "0.0")]
CPX_CASES = [("topology",), ("topology", "-g", "1.0,1.1,2.7")]


def blind(d, user=None):
    """The CLI in a private mount namespace where the simulator's tree is an empty tmpfs: any
    read of its own finds no GPU (as in test-daemon-documents.py)."""
    return ["unshare", "--mount", "--propagation", "private", "--", "sh", "-c",
            'mount -t tmpfs amdsmi-blind "$0" && exec "$@"', d.mount.root] + (user or [])


def unstamped(text):
    return STAMP.sub('"timestamp": "T"', text)


def stampless(doc):
    doc = dict(doc)
    doc["timestamp"] = "T"
    return doc



class Topology(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        require_daemon()

    def check_as_direct(self, d, cases):
        for case in cases:
            for fmt in ((), ("--json",), ("--csv",)):
                args = case + fmt
                with self.subTest(args=" ".join(args)):
                    via = d.cli(*args, user=blind(d, NOBODY), status=None)
                    direct = d.cli("--direct", *args, status=None)
                    self.assertEqual(via.returncode, 0, via.stderr)
                    self.assertEqual(direct.returncode, 0, direct.stderr)
                    self.assertNotEqual(via.stdout, "")
                    self.assertEqual(unstamped(via.stdout), unstamped(direct.stdout))
                    self.assertEqual(via.stderr, direct.stderr)

    def check_get_topology(self, d, n_gpus, n_partitions):
        got = json.loads(d.call(ROOT, MANAGER, "GetTopology", user=None)[0])
        direct = json.loads(d.cli("--direct", "topology", "--json").stdout)
        via = json.loads(d.cli("topology", "--json", user=blind(d, NOBODY)).stdout)
        doc = json.loads(d.call(ROOT, MANAGER, "GetDocument", "sa{sv}", "topology", 0)[0])
        self.assertEqual(stampless(got), stampless(direct))
        self.assertEqual(stampless(via), stampless(direct))
        self.assertEqual(stampless(doc), stampless(direct))
        self.assertEqual(got["command"], "topology")
        self.assertEqual(len(got["gpus"]), n_gpus)
        self.assertEqual(len(got["links"]), n_gpus * n_gpus)
        if n_partitions:
            self.assertEqual(len(got["partition_links"]["ends"]), n_partitions)
        else:
            self.assertIsNone(got["partition_links"])
        # an unprivileged caller reads it too
        nobody = json.loads(d.call(ROOT, MANAGER, "GetTopology", user=NOBODY)[0])
        self.assertEqual(stampless(nobody), stampless(got))
        return got

    def test_spx(self):
        with Daemon(sim_args=("--frozen",)) as d:
            doc = self.check_get_topology(d, 8, 0)
            self.assertEqual({p["type"] for p in doc["links"] if p["from"] != p["to"]},
                             {"XGMI"})
            self.check_as_direct(d, CASES)
            # a selector that names no GPU: the error of the in-process reading
            via = d.cli("topology", "-g", "9", user=blind(d, NOBODY), status=None)
            direct = d.cli("--direct", "topology", "-g", "9", status=None)
            self.assertEqual(via.returncode, 3, via.stderr)
            self.assertEqual(via.returncode, direct.returncode)

    def test_cpx(self):
        with Daemon(sim_args=("--frozen",)) as d0:
            machine = cpx_machine(d0.tmp)
            with Daemon(machine=machine, sim_args=("--frozen",)) as d:
                doc = self.check_get_topology(d, 8, 64)
                types = doc["partition_links"]["type"]
                self.assertEqual(types[0][1], "SAME_GPU")
                self.assertEqual(types[0][8], "XGMI")
                self.check_as_direct(d, CPX_CASES)


if __name__ == "__main__":
    unittest.main(verbosity=2)
