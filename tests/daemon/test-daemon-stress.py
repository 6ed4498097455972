#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""50 clients at once, mixing reads (Describe, GetMetrics, properties) and writes (host power
caps and compute modes on a few GPUs): every call is answered, nothing crashes, and the end
state is consistent: each GPU's properties, the device, the state file and the history
agree, and no GPU is left 'changing'."""

import json
import os
import random
import subprocess
import threading
import unittest

from daemontest import (BUS, IFACE_GPU, IFACE_PARTITION, IFACE_POWER, MANAGER, MI300X_BDFS,
                        ROOT, Daemon, gpu_path, require_daemon)

CLIENTS = 50
CALLS = 6
WRITE_GPUS = MI300X_BDFS[:3]
CAPS_W = [500, 550, 600, 650, 700]
MODES = ["SPX", "DPX", "QPX", "CPX"]


class Stress(unittest.TestCase):
    def test_fifty_clients(self):
        with Daemon() as d:
            env = d.env()
            failures = []
            written = {b: set() for b in WRITE_GPUS}
            lock = threading.Lock()

            def busctl(*args):
                return subprocess.run(["busctl", "--system", "--json=short", "--timeout=300s"] +
                                      [str(a) for a in args], env=env, capture_output=True,
                                      text=True, timeout=400)

            def client(n):
                rnd = random.Random(n)
                for _ in range(CALLS):
                    kind = rnd.choice(["describe", "metrics", "prop", "cap", "mode"])
                    bdf = rnd.choice(WRITE_GPUS if kind in ("cap", "mode") else MI300X_BDFS)
                    path = gpu_path(bdf)
                    if kind == "describe":
                        p = busctl("call", BUS, ROOT, MANAGER, "Describe")
                        ok = p.returncode == 0 and len(json.loads(
                            json.loads(p.stdout)["data"][0])["gpus"]) == 8
                    elif kind == "metrics":
                        p = busctl("call", BUS, path, IFACE_GPU, "GetMetrics")
                        ok = p.returncode == 0
                    elif kind == "prop":
                        p = busctl("get-property", BUS, path, IFACE_PARTITION, "ComputeMode")
                        ok = p.returncode == 0 and json.loads(p.stdout)["data"] in MODES
                    elif kind == "cap":
                        w = rnd.choice(CAPS_W)
                        with lock:
                            written[bdf].add(w)
                        p = busctl("call", BUS, path, IFACE_POWER, "SetSource", "sstt", "host",
                                   "", w * 1000000, 0)
                        ok = p.returncode == 0
                    else:
                        p = busctl("call", BUS, path, IFACE_PARTITION, "SetComputeMode", "st",
                                   rnd.choice(MODES), 0)
                        ok = p.returncode == 0
                    if not ok:
                        with lock:
                            failures.append((n, kind, bdf, p.returncode, p.stderr.strip()))

            threads = [threading.Thread(target=client, args=(n,)) for n in range(CLIENTS)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            self.assertEqual(failures, [])

            # the end state agrees everywhere
            doc = d.describe()
            self.assertEqual([g["changing"] for g in doc["gpus"]], [False] * 8)
            with open(os.path.join(d.state_dir, "state.json")) as f:
                state = json.load(f)
            for bdf in WRITE_GPUS:
                path = gpu_path(bdf)
                mode = d.get(path, IFACE_PARTITION, "ComputeMode")
                self.assertEqual(d.mount.value(d.mount.gpu(bdf, "current_compute_partition")),
                                 mode)
                listed = [g for g in doc["gpus"] if g["bdf"] == bdf][0]
                self.assertEqual(listed["compute_mode"], mode)
                if written[bdf]:
                    cap = d.get(path, IFACE_POWER, "CapUw")
                    self.assertIn(cap // 1000000, written[bdf])
                    hw = d.mount.gpu(bdf, "hwmon")
                    name = sorted(os.listdir(d.mount.path(hw)))[0]
                    self.assertEqual(int(d.mount.value(hw + "/" + name + "/power1_cap")), cap)
                    self.assertEqual(state["gpus"][bdf]["power"]["host"]["uw"], cap)
            # every write is in the history, none failed
            hist = [e for e in d.history() if e["via"] == "amdsmid"]
            self.assertTrue(hist)
            self.assertEqual([e for e in hist if e["result"] != "ok"], [])


if __name__ == "__main__":
    require_daemon()
    unittest.main(verbosity=2)
