#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""The simulator's gpu_metrics 1.9 and xcp_metrics 1.1 against the tests' own encoder
(tests/fixtures/mkfixtures.py, written from the spec apart from both the simulator and the
library): for every layout the simulator serves (6.19, 7.0, 7.1; MI300X and MI355X), the
records of each served table must be exactly the encoder's record list of that layout, and
the encoder, given the values read from the table, must produce the served bytes, byte for
byte. Any difference in order, type, unit, instance count, size, padding or the 0xFF of an
unavailable value fails."""

import atexit
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "fixtures"))
import mkfixtures as enc  # noqa: E402
from simtest import SIM  # noqa: E402

GPU_LAYOUTS = {"6.19": enc.SMU13_GPU_ATTRS_619, "7.0": enc.SMU13_GPU_ATTRS_70,
               "7.1": enc.SMU13_GPU_ATTRS_71}
XCP_LAYOUTS = {"6.19": enc.SMU13_XCP_ATTRS_619, "7.0": enc.SMU13_XCP_ATTRS_70,
               "7.1": enc.SMU13_XCP_ATTRS_70}
TYPE_CODE = {name: code for name, (code, _fmt) in enc.ATTR_TYPES.items()}
FMT = {code: fmt for _name, (code, fmt) in enc.ATTR_TYPES.items()}


def snapshot(machine, layout, compute=None):
    """A plain snapshot of @machine serving gpu_metrics 1.9 in @layout; its root."""
    desc = json.loads(subprocess.run([SIM, "dump-machine", machine], capture_output=True,
                                     text=True, check=True, timeout=60).stdout)
    desc["kernel"]["gpu_metrics_revision"] = 9
    desc["kernel"]["gpu_metrics_layout"] = layout
    for g in desc["gpus"] + [desc.get("gpu_defaults", {})]:
        for key in ("gpu_metrics_revision", "gpu_metrics_layout"):
            g.pop(key, None)
        if compute and "product" in g:
            g["compute_partition"] = compute
    tmp = tempfile.mkdtemp(prefix="amdsmi-enc.")
    atexit.register(shutil.rmtree, tmp, ignore_errors=True)
    path = os.path.join(tmp, "machine.json")
    with open(path, "w") as f:
        json.dump(desc, f)
    root = os.path.join(tmp, "tree")
    subprocess.run([SIM, "snapshot", "--frozen", "--seed", "7", "-m", path, root], check=True,
                   capture_output=True, timeout=120)
    return root


def values(data, rec):
    """The values of one decoded record, None for all-0xFF ones."""
    _id, type_, _unit, inst, off = rec
    fmt = "<" + FMT[type_]
    width = struct.calcsize(fmt)
    out = []
    for k in range(inst):
        raw = data[off + k * width:off + (k + 1) * width]
        out.append(None if raw == b"\xff" * width else struct.unpack(fmt, raw)[0])
    return out


class Encoder(unittest.TestCase):
    def check_table(self, data, content, attrs):
        recs = enc.decode_attrs(data)
        self.assertEqual([(r[0], r[1], r[2], r[3]) for r in recs],
                         [(i, TYPE_CODE[t], enc.ATTR_UNITS[u], n) for i, _nm, t, u, n in attrs],
                         "the records of the layout, in its order")
        records = [(i, nm, t, u, n, values(data, r))
                   for (i, nm, t, u, n), r in zip(attrs, recs)]
        self.assertEqual(enc.encode_attrs(content, records), data,
                         "the encoder, given the table's values, writes the same bytes")
        return recs

    def test_layouts(self):
        for machine, compute in (("mi300x-8", None), ("mi355x-8", None), ("mi300x-8", "CPX")):
            for layout in ("6.19", "7.0", "7.1"):
                with self.subTest(machine=machine, layout=layout, compute=compute):
                    root = snapshot(machine, layout, compute)
                    devs = os.path.join(root, "bus", "pci", "devices")
                    bdfs = sorted(b for b in os.listdir(devs)
                                  if os.path.exists(os.path.join(devs, b, "gpu_metrics")))
                    self.assertEqual(len(bdfs), 8)
                    for bdf in bdfs:
                        with open(os.path.join(devs, bdf, "gpu_metrics"), "rb") as f:
                            data = f.read()
                        self.assertEqual(data[2:4], b"\x01\x09")
                        self.check_table(data, 9, GPU_LAYOUTS[layout])
                    # every partition's xcp_metrics, through its render node
                    drm = os.path.join(root, "class", "drm")
                    seen = 0
                    for node in sorted(os.listdir(drm)):
                        path = os.path.join(drm, node, "device", "xcp", "xcp_metrics")
                        if not node.startswith("renderD") or not os.path.exists(path):
                            continue
                        with open(path, "rb") as f:
                            data = f.read()
                        self.assertEqual(data[2:4], b"\x01\x01")
                        self.check_table(data, 1, XCP_LAYOUTS[layout])
                        seen += 1
                    self.assertEqual(seen, 8 * (8 if compute == "CPX" else 1))


if __name__ == "__main__":
    if not SIM or not os.access(SIM, os.X_OK):
        sys.exit("FAIL: AMDSMI_SIM is not the amdsmi-sim executable: %r" % SIM)
    unittest.main()
