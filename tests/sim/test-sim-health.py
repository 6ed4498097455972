#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Health files of amdsmi-sim (issue 19; spec health-and-control.md §1, §2, §4.4, §7.1), through
the kernel's VFS and parsed here independently of the simulator: ras/ (features, version,
schema, event_state, aca_<block> or <block>_err_count), gpu_vram_bad_pages read at any offset
as the kernel's bin attribute, the debugfs CPER ring (header words, whole CPER records, the
wrap), bad_page_cnt_threshold; the control socket's ras-inject, retire-page, cper and
kfd-event; a reset ("Query currently inaccessible") and a driver reload (counts from zero);
machine JSON presets; and the KFD SMI events through the LD_PRELOAD shim (libamdsmi-sim-kfd.so)
with a client that opens $AMDSMI_DEV_ROOT/kfd, ioctls, writes its mask and reads events."""

import errno
import fcntl
import json
import os
import re
import select
import struct
import subprocess
import sys
import tempfile
import textwrap
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import simtest  # noqa: E402
from simtest import GPU0, GPU1, SIM, main  # noqa: E402

SHIM = os.path.join(os.path.dirname(SIM), "libamdsmi-sim-kfd.so")
ACA_BLOCKS = ["gfx", "jpeg", "mmhub", "sdma", "umc", "vcn", "xgmi_wafl"]
BLOCK_BITS = {"umc": 0, "sdma": 1, "gfx": 2, "mmhub": 3, "athub": 4, "pcie_bif": 5, "hdp": 6,
              "xgmi_wafl": 7, "df": 8, "smn": 9, "sem": 10, "mp0": 11, "mp1": 12, "fuse": 13,
              "mca": 14, "vcn": 15, "jpeg": 16}
RECORD = re.compile(rb"0x([0-9a-f]{8}) : 0x00001000 : ([RPF])\n")
EVENT_STATE = re.compile(r"current seqno: (\d+)\n"
                         r"Fatal Error: count:(\d+), last_seqno:(\d+)\n"
                         r"Poison Creation: count:(\d+), last_seqno:(\d+)\n"
                         r"Poison Consumption: count:(\d+), last_seqno:(\d+)\n\Z")
GUID = {
    "MCE": "e8f56ffe-919c-4cc5-ba88-65abe14913bb",
    "CMC": "2dce8bb1-bdd7-450e-b9ad-9cf4ebd4f890",
    "CRASHDUMP": "32ac0c78-2623-48f6-b0d0-7365725fd6ae",
    "NONSTD": "32ac0c78-2623-48f6-81a2-ac691780551d",
}


def guid(b):
    """A little-endian EFI GUID as text."""
    a, b1, c = struct.unpack_from("<IHH", b)
    d = b[8:16]
    return "%08x-%04x-%04x-%s-%s" % (a, b1, c, d[:2].hex(), d[2:].hex())


def parse_counts(text):
    """{"ue": N, "ce": N[, "de": N]} of a count file, in its order."""
    out = {}
    for line in text.splitlines():
        k, v = line.split(": ")
        out[k] = int(v)
    return out


def parse_cper(data, off=0):
    """One CPER record at @off (UEFI N.2.1 / amd_cper.h, packed): its fields."""
    (sig, rev, sig_end, sec_cnt, sev, valid, length) = struct.unpack_from("<4sHIHIII", data, off)
    ts = data[off + 24:off + 32]
    r = {
        "signature": sig, "revision": rev, "signature_end": sig_end, "sec_cnt": sec_cnt,
        "severity": sev, "valid": valid, "length": length,
        "timestamp": (ts[0], ts[1], ts[2], ts[3], ts[4], ts[5], ts[6], ts[7]),
        "platform_id": data[off + 32:off + 48].rstrip(b"\0"),
        "partition_id": data[off + 48:off + 64],
        "creator_id": data[off + 64:off + 80].rstrip(b"\0"),
        "notify": guid(data[off + 80:off + 96]),
        "record_id": data[off + 96:off + 104].rstrip(b"\0"),
        "tail": data[off + 104:off + 128],
        "sections": [],
    }
    for i in range(sec_cnt):
        d = off + 128 + 72 * i
        sec_off, sec_len, minor, major, dvalid, _res, flags = struct.unpack_from("<IIBBBBI",
                                                                                  data, d)
        r["sections"].append({
            "offset": sec_off, "length": sec_len, "minor": minor, "major": major,
            "valid": dvalid, "flags": flags, "type": guid(data[d + 16:d + 32]),
            "fru_id": data[d + 32:d + 48], "severity": struct.unpack_from("<I", data, d + 48)[0],
            "fru_text": data[d + 52:d + 72].rstrip(b"\0"),
            "body": data[off + sec_off:off + sec_off + sec_len],
        })
    return r


class Health(simtest.CtlMount):
    def ras(self, bdf=GPU0, name=""):
        return self.gpu(bdf, "ras" + ("/" + name if name else ""))

    def dbg(self, bdf=GPU0, name=""):
        return "kernel/debug/dri/%s%s" % (bdf, "/" + name if name else "")

    def counts(self, block, bdf=GPU0, aca=True):
        return parse_counts(self.text(self.ras(bdf, ("aca_%s" if aca else "%s_err_count") % block)))

    def pread(self, rel, size, off):
        fd = os.open(self.path(rel), os.O_RDONLY)
        try:
            return os.pread(fd, size, off)
        finally:
            os.close(fd)

    def read_all(self, rel, chunk=4096):
        fd = os.open(self.path(rel), os.O_RDONLY)
        out = b""
        try:
            while True:
                b = os.read(fd, chunk)
                if not b:
                    return out
                out += b
        finally:
            os.close(fd)

    def ring(self, bdf=GPU0):
        """(rptr, wptr, driver wptr, bytes from rptr to wptr)."""
        data = self.read_all(self.dbg(bdf, "amdgpu_ring_cper"))
        rptr, wptr, dwptr = struct.unpack_from("<III", data)
        return rptr, wptr, dwptr, data[12:]


def write_machine(tmp, base, kernel=None, gpu=None, all_gpus=None):
    """A machine file: @base's description with kernel settings and the first GPU's (or every
    GPU's) keys replaced."""
    desc = json.loads(simtest.sim("dump-machine", base, check=True).stdout)
    desc["kernel"].update(kernel or {})
    if gpu:
        desc["gpus"][0].update(gpu)
    for g in desc["gpus"] if all_gpus else []:
        g.update(all_gpus)
    path = os.path.join(tmp, "machine.json")
    with open(path, "w") as f:
        json.dump(desc, f)
    return path


class Files(unittest.TestCase):
    def test_aca_files(self):
        with Health("--frozen") as m:
            names = sorted(os.listdir(m.path(m.ras())))
            self.assertEqual(names, sorted(["aca_" + b for b in ACA_BLOCKS] +
                                           ["event_state", "features", "gpu_vram_bad_pages",
                                            "schema", "version"]))
            for b in ACA_BLOCKS:
                self.assertEqual(m.read(m.ras(name="aca_" + b)), b"ue: 0\nce: 0\nde: 0\n")
            # the block bits, socket id 0 in bits 31:29; the second GPU of the hive is socket 1
            mask = sum(1 << BLOCK_BITS[b] for b in ACA_BLOCKS)
            self.assertEqual(m.read(m.ras(name="features")), b"feature mask: 0x%x\n" % mask)
            self.assertEqual(m.read(m.ras(GPU1, "features")),
                             b"feature mask: 0x%x\n" % (mask | 1 << 29))
            self.assertRegex(m.text(m.ras(name="version")), r"\Atable version: 0x[0-9a-f]+\n\Z")
            self.assertEqual(m.read(m.ras(name="schema")), b"schema: 0x8\n")
            self.assertEqual(EVENT_STATE.match(m.text(m.ras(name="event_state"))).groups(),
                             ("0",) * 7)
            self.assertEqual(m.read(m.ras(name="gpu_vram_bad_pages")), b"")
            for f in os.listdir(m.path(m.ras())):
                self.assertEqual(os.stat(m.path(m.ras(name=f))).st_mode & 0o777, 0o444, f)

    def test_apu_and_legacy_and_guest(self):
        with Health("--machine", "mi300a-4") as m:
            bdf = "0000:01:00.0"
            names = sorted(os.listdir(m.path(m.ras(bdf))))
            # MI300A: GFX, SDMA and MMHUB only; no bad-page table
            self.assertEqual(names, ["aca_gfx", "aca_mmhub", "aca_sdma", "event_state",
                                     "features", "schema", "version"])
            self.assertEqual(m.read(m.ras(bdf, "features")), b"feature mask: 0xe\n")
            self.assertTrue(os.path.exists(m.path(m.dbg(bdf, "amdgpu_ring_cper"))))
            self.assertFalse(os.path.exists(m.path(m.dbg(bdf, "ras"))))
        with tempfile.TemporaryDirectory() as tmp:
            path = write_machine(tmp, "mi300x-8", kernel={"ras_aca": False,
                                                          "ras_blocks": ["umc", "gfx",
                                                                         "xgmi_wafl"]})
            with Health("--machine", path) as m:
                names = sorted(os.listdir(m.path(m.ras())))
                self.assertEqual(names, ["event_state", "features", "gfx_err_count",
                                         "gpu_vram_bad_pages", "schema", "umc_err_count",
                                         "version", "xgmi_wafl_err_count"])
                # only UMC has de:
                self.assertEqual(m.read(m.ras(name="umc_err_count")), b"ue: 0\nce: 0\nde: 0\n")
                self.assertEqual(m.read(m.ras(name="gfx_err_count")), b"ue: 0\nce: 0\n")
                # no ACA: no CPER ring; the threshold is still there
                self.assertFalse(os.path.exists(m.path(m.dbg(name="amdgpu_ring_cper"))))
                self.assertEqual(m.read(m.dbg(name="ras/bad_page_cnt_threshold")), b"128\n")
                self.assertEqual(m.ctl("cper", GPU0, "fatal", check=False).returncode, 3)
        with Health("--machine", "mi300x-guest-1vf") as m:
            bdf = "0000:01:00.0"
            names = sorted(n for n in os.listdir(m.path(m.ras(bdf))) if "err_count" in n)
            self.assertEqual(names, ["gfx_err_count", "sdma_err_count", "umc_err_count"])

    def test_debugfs(self):
        with Health() as m:
            st = os.stat(m.path("kernel/debug"))
            self.assertEqual((st.st_mode & 0o777, st.st_uid), (0o700, 0))
            # the primary minor's name is a link to the device's directory
            card = min(int(c[4:]) for c in os.listdir(m.path(m.gpu(GPU0, "drm")))
                       if c.startswith("card"))
            self.assertEqual(os.readlink(m.path("kernel/debug/dri/%d" % card)), GPU0)
            self.assertEqual(sorted(os.listdir(m.path(m.dbg()))),
                             ["amdgpu_gpu_recover", "amdgpu_ring_cper", "ras"])
            self.assertEqual(m.read(m.dbg(name="ras/bad_page_cnt_threshold")), b"128\n")
            self.assertEqual(os.stat(m.path(m.dbg(name="amdgpu_ring_cper"))).st_size,
                             0x100000 + 12)
            self.assertEqual(m.ring(), (0, 0, 0, b""))
            # a user other than root cannot enter debugfs
            p = subprocess.run(simtest.NOBODY + ["cat", m.path(m.dbg(name="amdgpu_ring_cper"))],
                               capture_output=True)
            self.assertNotEqual(p.returncode, 0)
            self.assertIn(b"Permission denied", p.stderr)


class Injections(unittest.TestCase):
    def test_ras_inject_reset_reload(self):
        with Health() as m:
            m.ctl("ras-inject", GPU0, "umc", "ce", "5")
            m.ctl("ras-inject", GPU0, "umc", "ue")
            m.ctl("ras-inject", GPU0, "gfx", "de", "2")
            self.assertEqual(m.counts("umc"), {"ue": 1, "ce": 5, "de": 0})
            self.assertEqual(m.counts("gfx"), {"ue": 0, "ce": 0, "de": 2})
            self.assertEqual(m.counts("umc", GPU1), {"ue": 0, "ce": 0, "de": 0})
            # a deferred error is a poison creation event
            self.assertEqual(EVENT_STATE.match(m.text(m.ras(name="event_state"))).groups(),
                             ("1", "0", "0", "1", "1", "0", "0"))
            for args, code, text in (
                    (("ras-inject", GPU0, "frob", "ue"), 3, "unknown RAS block"),
                    (("ras-inject", GPU0, "athub", "ue"), 3, "has no RAS on athub"),
                    (("ras-inject", GPU0, "umc", "xe"), 3, "expected ue, ce or de"),
                    (("ras-inject", GPU0, "umc", "ue", "-1"), 3, "is not a number"),
                    (("ras-inject", "0000:99:00.0", "umc", "ue"), 3, "no GPU at")):
                p = m.ctl(*args, check=False)
                self.assertEqual(p.returncode, code, args)
                self.assertIn(text, p.stderr)
            # in reset: the count files are inaccessible, the others are not
            m.ctl("reset", GPU0, "begin")
            for b in ACA_BLOCKS:
                self.assertEqual(m.read(m.ras(name="aca_" + b)),
                                 b"Query currently inaccessible\n")
            self.assertTrue(m.text(m.ras(name="features")).startswith("feature mask: "))
            m.ctl("reset", GPU0, "end")
            self.assertEqual(m.counts("umc"), {"ue": 1, "ce": 5, "de": 0})
            # a driver reload starts the counts anew; retired pages stay (EEPROM)
            m.ctl("retire-page", GPU0, "0x1234", "R")
            m.ctl("cper", GPU0, "corrected")
            drv = "bus/pci/drivers/amdgpu/"
            self.assertEqual(m.write(drv + "unbind", GPU0), 0)
            self.assertFalse(os.path.exists(m.path(m.ras())))
            self.assertFalse(os.path.exists(m.path(m.dbg())))
            self.assertEqual(m.ctl("ras-inject", GPU0, "umc", "ue", check=False).returncode, 3)
            self.assertEqual(m.write(drv + "bind", GPU0), 0)
            self.assertEqual(m.counts("umc"), {"ue": 0, "ce": 0, "de": 0})
            self.assertEqual(m.counts("gfx"), {"ue": 0, "ce": 0, "de": 0})
            self.assertEqual(EVENT_STATE.match(m.text(m.ras(name="event_state"))).groups(),
                             ("0",) * 7)
            self.assertEqual(m.read(m.ras(name="gpu_vram_bad_pages")),
                             b"0x00001234 : 0x00001000 : R\n")
            self.assertEqual(m.ring()[3], b"")

    def test_bad_pages(self):
        with Health() as m:
            rel = m.ras(name="gpu_vram_bad_pages")
            pages = [(0x100 + 3 * i, "RPF"[i % 3]) for i in range(300)]
            for pfn, s in pages:
                m.ctl("retire-page", GPU0, hex(pfn), s)
            # a pending page gets reserved
            m.ctl("retire-page", GPU0, hex(pages[1][0]), "R")
            pages[1] = (pages[1][0], "R")
            whole = m.read_all(rel)
            self.assertEqual(len(whole), 28 * len(pages))
            recs = [(int(a, 16), s.decode()) for a, s in RECORD.findall(whole)]
            self.assertEqual(recs, pages)
            for i in range(0, len(whole), 28):
                self.assertRegex(whole[i:i + 28], RECORD.pattern + rb"\Z")
            # the kernel's bin read: records ceil(off / 28) up to (off + count - 1) / 28,
            # count at most a page
            for off, size in ((0, 28), (0, 29), (0, 56), (1, 100), (27, 29), (28, 28),
                              (28, 57), (4088, 4096), (100, 10000), (28 * 299, 100),
                              (28 * 300, 28), (5, 0)):
                count = min(size, 4096)
                start, end = -(-off // 28), (off + count - 1) // 28 if count else 0
                want = b"".join(whole[i * 28:(i + 1) * 28]
                                for i in range(start, min(end, len(pages))))
                self.assertEqual(m.pread(rel, size, off), want, (off, size))
            # a read of a page serves 146 records, the next read goes on from there
            fd = os.open(m.path(rel), os.O_RDONLY)
            try:
                self.assertEqual(len(os.read(fd, 4096)), 146 * 28)
                self.assertEqual(os.read(fd, 4096), whole[146 * 28:292 * 28])
            finally:
                os.close(fd)
            for args, text in ((("retire-page", GPU0, "0x1", "X"), "expected R"),
                               (("retire-page", GPU0, "zz", "R"), "not a page frame"),
                               (("retire-page", GPU0, "0x7fffffff", "R"), "beyond the GPU")):
                p = m.ctl(*args, check=False)
                self.assertEqual(p.returncode, 3, args)
                self.assertIn(text, p.stderr)

    def test_threshold_record(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = write_machine(tmp, "mi300x-8", kernel={"bad_page_threshold": 2})
            with Health("--machine", path) as m:
                for pfn in (1, 2):
                    m.ctl("retire-page", GPU0, str(pfn), "R")
                self.assertEqual(m.ring()[3], b"")
                m.ctl("retire-page", GPU0, "3", "R")        # over the threshold: RMA
                data = m.ring()[3]
                r = parse_cper(data)
                self.assertEqual((r["severity"], r["notify"], r["length"], len(data)),
                                 (1, GUID["MCE"], 472, 472))
                self.assertEqual(r["sections"][0]["flags"], 0x9)   # primary, exceed threshold
                self.assertEqual(r["sections"][0]["type"], GUID["NONSTD"])


class Cper(unittest.TestCase):
    def check_record(self, r, kind, rid):
        sev = {"fatal": 1, "corrected": 2, "uncorrected": 0}[kind]
        self.assertEqual((r["signature"], r["revision"], r["signature_end"], r["sec_cnt"]),
                         (b"CPER", 0x100, 0xFFFFFFFF, 1))
        self.assertEqual(r["severity"], sev)
        self.assertEqual(r["valid"], 0x3)
        self.assertEqual(r["length"], 376 if kind == "fatal" else 472)
        now = time.gmtime()
        sec, mi, hour, flag, day, month, year, century = r["timestamp"]
        self.assertEqual((flag, century * 100 + year, month), (0, now.tm_year, now.tm_mon))
        self.assertTrue(0 <= sec < 60 and 0 <= mi < 60 and 0 <= hour < 24 and 1 <= day <= 31)
        self.assertEqual(r["platform_id"], b"0x1002:0x74A1")
        self.assertEqual(r["partition_id"], b"\0" * 16)
        self.assertEqual(r["creator_id"], b"amdgpu")
        self.assertEqual(r["notify"], GUID["CMC"] if kind == "corrected" else GUID["MCE"])
        self.assertEqual(r["record_id"], b"0:%X" % rid)
        self.assertEqual(r["tail"], b"\0" * 24)
        s = r["sections"][0]
        self.assertEqual((s["offset"], s["minor"], s["major"], s["valid"]), (200, 1, 0x22, 2))
        self.assertEqual(s["length"], 176 if kind == "fatal" else 272)
        self.assertEqual(s["flags"], 0x11 if kind == "uncorrected" else 0x1)
        self.assertEqual(s["type"], GUID["CRASHDUMP"] if kind == "fatal" else GUID["NONSTD"])
        self.assertEqual((s["severity"], s["fru_text"], s["fru_id"]), (sev, b"OAM0", b"\0" * 16))
        if kind == "fatal":
            self.assertEqual(struct.unpack_from("<HH", s["body"], 128), (1, 32))
        else:
            self.assertEqual(struct.unpack_from("<Q", s["body"], 0)[0], 0x104)
            self.assertEqual(guid(s["body"][64:80]), GUID["NONSTD"])
            self.assertEqual(struct.unpack_from("<HH", s["body"], 128), (1, 128))

    def test_records(self):
        with Health() as m:
            kinds = ["fatal", "corrected", "uncorrected", "fatal"]
            for k in kinds:
                m.ctl("cper", GPU0, k)
            rptr, wptr, dwptr, data = m.ring()
            self.assertEqual((rptr, wptr, dwptr), (0, len(data) // 4, len(data) // 4))
            off = 0
            for i, k in enumerate(kinds):
                r = parse_cper(data, off)
                self.check_record(r, k, i + 1)
                off += r["length"]
            self.assertEqual(off, len(data))
            # the driver counted what it reported
            self.assertEqual(m.counts("umc"), {"ue": 2, "ce": 1, "de": 1})
            ras = json.loads(m.ctl("dump").stdout)["gpus"][0]["ras"]
            self.assertEqual(ras["counts"]["umc"], {"ue": 2, "ce": 1, "de": 1})
            self.assertEqual(ras["cper_ring"], {"bytes": 0x100000, "rptr": 0,
                                                "wptr": len(data) // 4, "records": 4})
            self.assertTrue(ras["aca"])
            self.assertEqual(EVENT_STATE.match(m.text(m.ras(name="event_state"))).groups(),
                             ("3", "2", "3", "1", "2", "0", "0"))
            # reads: offset and size multiples of 4; offsets count from rptr
            rel = m.dbg(name="amdgpu_ring_cper")
            for off, size in ((1, 4), (0, 6)):
                with self.assertRaises(OSError) as cm:
                    m.pread(rel, size, off)
                self.assertEqual(cm.exception.errno, errno.EINVAL)
            self.assertEqual(m.pread(rel, 8, 4), struct.pack("<II", wptr, dwptr))
            self.assertEqual(m.pread(rel, 16, 12 + 376), data[376:392])
            self.assertEqual(m.pread(rel, 64, 12 + len(data)), b"")
            self.assertEqual(m.ctl("cper", GPU0, "fatal", "--bad-page-threshold").returncode, 0)
            for args, text in ((("cper", GPU0, "mild"), "expected fatal"),
                               (("cper", GPU0, "corrected", "--bad-page-threshold"),
                                "is fatal")):
                p = m.ctl(*args, check=False)
                self.assertEqual(p.returncode, 3)
                self.assertIn(text, p.stderr)

    def test_wrap(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = write_machine(tmp, "mi300x-8", kernel={"cper_ring_bytes": 4096})
            with Health("--machine", path) as m:
                n = 30      # 30 records of 472 or 376 bytes in a 4096-byte ring
                for i in range(n):
                    m.ctl("cper", GPU0, "corrected" if i % 2 else "fatal")
                rptr, wptr, dwptr, data = m.ring()
                self.assertEqual(os.stat(m.path(m.dbg(name="amdgpu_ring_cper"))).st_size,
                                 4096 + 12)
                self.assertLess(len(data), 4096)
                self.assertEqual(len(data), ((wptr - rptr) % 1024) * 4)
                self.assertNotEqual(rptr, 0)
                # whole records from rptr, the newest last, ids counting on
                off, ids = 0, []
                while off < len(data):
                    r = parse_cper(data, off)
                    self.assertEqual(r["signature"], b"CPER")
                    ids.append(int(r["record_id"].split(b":")[1], 16))
                    off += r["length"]
                self.assertEqual(off, len(data))
                self.assertEqual(ids, list(range(n - len(ids) + 1, n + 1)))
                # one more record does not fit without dropping the oldest
                self.assertGreater(len(data) + 472, 4096 - 4)


class Presets(unittest.TestCase):
    def test_machine_json(self):
        ras = {"counts": {"umc": {"ue": 1, "ce": 7, "de": 2}, "gfx": {"ce": 3}},
               "bad_pages": [{"pfn": "0x00abcdef", "status": "P"},
                             {"pfn": "0x00000010", "status": "F"}],
               "cper": ["corrected", "fatal"]}
        with tempfile.TemporaryDirectory() as tmp:
            path = write_machine(tmp, "mi300x-8", gpu={"ras": ras})
            dumped = json.loads(simtest.sim("dump-machine", path, check=True).stdout)
            self.assertEqual(dumped["gpus"][0]["ras"]["counts"]["gfx"],
                             {"ue": 0, "ce": 3, "de": 0})
            self.assertEqual(dumped["gpus"][0]["ras"]["bad_pages"], ras["bad_pages"])
            self.assertEqual(dumped["gpus"][0]["ras"]["cper"], ras["cper"])
            with Health("--machine", path) as m:
                self.assertEqual(m.counts("umc"), {"ue": 1, "ce": 7, "de": 2})
                self.assertEqual(m.counts("gfx"), {"ue": 0, "ce": 3, "de": 0})
                self.assertEqual(m.read(m.ras(name="gpu_vram_bad_pages")),
                                 b"0x00abcdef : 0x00001000 : P\n0x00000010 : 0x00001000 : F\n")
                data = m.ring()[3]
                self.assertEqual([parse_cper(data, 0)["severity"],
                                  parse_cper(data, 472)["severity"]], [2, 1])
            bad = [({"ras": {"counts": {"athub": {"ue": 1}}}}, "gpus[0].ras.counts.athub"),
                   ({"ras": {"counts": {"umc": {"xe": 1}}}}, "gpus[0].ras.counts.umc.xe"),
                   ({"ras": {"bad_pages": [{"pfn": "0x1", "status": "Q"}]}},
                    "gpus[0].ras.bad_pages[0].status"),
                   ({"ras": {"bad_pages": [{"pfn": "0x7fffffff", "status": "R"}]}},
                    "gpus[0].ras.bad_pages[0].pfn"),
                   ({"ras": {"cper": ["bad"]}}, "gpus[0].ras.cper[0]"),
                   ({"ras": {"what": 1}}, "gpus[0].ras.what")]
            for gpu, field in bad:
                path = write_machine(tmp, "mi300x-8", gpu=gpu)
                p = simtest.sim("dump-machine", path)
                self.assertEqual(p.returncode, 3, gpu)
                self.assertIn(field, p.stderr)
            path = write_machine(tmp, "mi300x-8", kernel={"cper_ring_bytes": 5000})
            p = simtest.sim("dump-machine", path)
            self.assertEqual(p.returncode, 3)
            self.assertIn("kernel.cper_ring_bytes", p.stderr)


# A KFD SMI events client: opens $AMDSMI_DEV_ROOT/kfd, GET_VERSION, SMI_EVENTS for the gpu_id
# in argv[1], writes the mask in argv[2], says "ready", then prints what it reads (repr per
# read) until it reads "quit" on stdin (then what is left to read), or a number of lines in
# argv[3] (-1: it reads nothing before "quit").
CLIENT = textwrap.dedent(r"""
    import fcntl, os, select, struct, sys
    K = ord("K")
    GET_VERSION = (2 << 30) | (8 << 16) | (K << 8) | 0x01
    SMI_EVENTS = (3 << 30) | (8 << 16) | (K << 8) | 0x1F
    fd = os.open(os.environ["AMDSMI_DEV_ROOT"] + "/kfd", os.O_RDWR)
    v = bytearray(8)
    fcntl.ioctl(fd, GET_VERSION, v)
    print("version %d.%d" % struct.unpack("<II", v), flush=True)
    a = bytearray(struct.pack("<II", int(sys.argv[1]), 0))
    try:
        fcntl.ioctl(fd, SMI_EVENTS, a)
    except OSError as e:
        print("errno %d" % e.errno, flush=True)
        sys.exit(0)
    anon = struct.unpack("<II", a)[1]
    try:
        os.read(anon, 64)
        print("read empty: no error", flush=True)
    except BlockingIOError:
        pass
    os.write(anon, struct.pack("<Q", int(sys.argv[2], 0)))
    print("ready", flush=True)
    want = int(sys.argv[3]) if len(sys.argv) > 3 else 0
    p = select.poll()
    if want >= 0:
        p.register(anon, select.POLLIN)
    p.register(0, select.POLLIN)
    got = b""
    while True:
        ev = dict(p.poll(60000))
        if not ev:
            print("timeout", flush=True)
            break
        if ev.get(0):
            sys.stdin.readline()
            while True:
                try:
                    b = os.read(anon, 4096)
                except BlockingIOError:
                    break
                if not b:
                    break
                got += b
            break
        if ev.get(anon):
            got += os.read(anon, 4096)
            if want and got.count(b"\n") >= want:
                break
    print(repr(got), flush=True)
""")


def mask(*events):
    return hex(sum(1 << (e - 1) for e in events))


class Events(unittest.TestCase):
    def start(self, m, dev, gpu_id, ev_mask, lines=0):
        env = dict(os.environ, AMDSMI_DEV_ROOT=dev, AMDSMI_SIM_CTL=m.sock, LD_PRELOAD=SHIM)
        p = subprocess.Popen([sys.executable, "-c", CLIENT, str(gpu_id), ev_mask, str(lines)],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
        self.assertEqual(p.stdout.readline().strip(), "version 1.17")
        return p

    def finish(self, p):
        if p.poll() is None:
            p.stdin.write("quit\n")
            p.stdin.flush()
        out = p.communicate(timeout=90)[0].strip().splitlines()
        p.stdin.close()
        p.stdout.close()
        return eval(out[-1])        # the bytes the client read

    def test_events_through_shim(self):
        with tempfile.TemporaryDirectory() as dev, Health("--dev-root", dev) as m:
            self.assertEqual(os.stat(os.path.join(dev, "kfd")).st_size, 0)
            ids = [n[2] for n in m.gpu_nodes(GPU0)]
            self.assertEqual(len(ids), 1)
            # an unknown gpu_id: EINVAL as the kernel
            p = self.start(m, dev, 12345, "0x1")
            self.assertEqual(p.stdout.readline().strip(), "errno %d" % errno.EINVAL)
            p.wait(timeout=30)
            p.stdin.close()
            p.stdout.close()
            # thermal throttle and resets only; a VM fault is not in the mask
            p = self.start(m, dev, ids[0], mask(2, 3, 4))
            self.assertEqual(p.stdout.readline().strip(), "ready")
            # the client holds /dev/kfd: a KFD user of every GPU
            self.assertEqual(m.write(m.gpu(GPU1, "current_compute_partition"), "CPX"),
                             errno.EBUSY)
            # ... listed as KFD makes it at open: a device of every node
            proc = "class/kfd/kfd/proc/%d" % p.pid
            files = os.listdir(m.path(proc))
            nodes = [n[2] for n in m.gpu_nodes(GPU0) + m.gpu_nodes(GPU1)]
            for gid in nodes:
                self.assertIn("vram_%d" % gid, files)
                self.assertEqual(m.text(proc + "/vram_%d" % gid).strip(), "0")
            self.assertIn("pasid", files)
            m.ctl("kfd-event", GPU0, "vmfault")
            m.ctl("kfd-event", GPU0, "thermal_throttle")
            m.ctl("reset", GPU0, "begin")
            m.ctl("reset", GPU0, "end")
            m.ctl("kfd-event", GPU1, "thermal_throttle")        # another GPU's
            m.ctl("kfd-event", GPU0, "gpu_post_reset", "5", "RAS", "error")
            got = self.finish(p)
            self.assertEqual(got.decode().splitlines(),
                             ["2 1:1", "3 1 user trigger", "4 1 ", "4 5 RAS error"])
            # the client is gone: the switch goes through, its proc/<pid>/ went with it
            self.assertEqual(m.write(m.gpu(GPU1, "current_compute_partition"), "CPX"), 0)
            self.assertFalse(os.path.exists(m.path(proc)))

    def test_every_kind_and_overflow(self):
        with tempfile.TemporaryDirectory() as dev, Health("--dev-root", dev) as m:
            gid = m.gpu_nodes(GPU0)[0][2]
            p = self.start(m, dev, gid, hex((1 << 13) - 1 | 1 << 63), lines=13)
            self.assertEqual(p.stdout.readline().strip(), "ready")
            for kind in ("vmfault", "thermal_throttle", "gpu_pre_reset", "gpu_post_reset",
                         "migrate_start", "migrate_end", "page_fault_start", "page_fault_end",
                         "queue_eviction", "queue_restore", "unmap_from_gpu", "process_start",
                         "process_end"):
                m.ctl("kfd-event", GPU0, kind, "pid=77")
            lines = self.finish(p).decode().splitlines()
            ns = r"\d+ -77"
            want = [r"1 4d:amdsmi-sim", r"2 1:1", r"3 1 user trigger", r"4 1 ",
                    r"5 %s @7f0000000\(200\) 0->%x 0:%x 0" % (ns, gid, gid),
                    r"6 %s @7f0000000\(200\) 0->%x 0 0" % (ns, gid),
                    r"7 %s @7f0000000\(%x\) W" % (ns, gid), r"8 %s @7f0000000\(%x\) M" % (ns, gid),
                    r"9 %s %x 0" % (ns, gid), r"a %s %x R" % (ns, gid),
                    r"b %s @7f0000000\(200\) %x 0" % (ns, gid), r"c 4d amdsmi-sim",
                    r"d 4d amdsmi-sim"]
            self.assertEqual(len(lines), 13, lines)
            for line, pat in zip(lines, want):
                self.assertRegex(line, "^" + pat + "$")
            # a client that does not read: its 1024-byte fifo fills, the rest is dropped
            p = self.start(m, dev, gid, mask(2), lines=-1)
            self.assertEqual(p.stdout.readline().strip(), "ready")
            for i in range(60):      # 21 or 22 bytes each: more than 1024
                m.ctl("kfd-event", GPU0, "thermal_throttle", "%016x:%x" % (i, i))
            got = self.finish(p)
            self.assertLessEqual(len(got), 1024)
            self.assertGreater(len(got), 1024 - 30)
            n = got.count(b"\n")
            self.assertEqual(got.decode().splitlines(),
                             ["2 %016x:%x" % (i, i) for i in range(n)])

    def test_partitions_and_processes(self):
        with tempfile.TemporaryDirectory() as dev, Health("--dev-root", dev) as m:
            self.assertEqual(m.write(m.gpu(GPU0, "current_compute_partition"), "CPX"), 0)
            ids = [n[2] for n in m.gpu_nodes(GPU0)]
            self.assertEqual(len(ids), 8)
            # a client of partition 3 (mask: thermal, resets, migrate start; no ALL_PROCESS)
            p = self.start(m, dev, ids[3], mask(2, 3, 5), lines=-1)
            self.assertEqual(p.stdout.readline().strip(), "ready")
            m.ctl("kfd-event", GPU0 + ".2", "thermal_throttle", "2:2")     # another partition
            m.ctl("kfd-event", GPU0 + ".3", "thermal_throttle", "3:3")
            m.ctl("kfd-event", GPU0, "migrate_start", "pid=%d" % os.getpid())   # not its process
            m.ctl("kfd-event", GPU0 + ".3", "migrate_start", "pid=%d" % p.pid, "x")   # its own
            m.ctl("reset", GPU0, "begin")                                   # every partition
            m.ctl("reset", GPU0, "end")
            self.assertEqual(self.finish(p), b"2 3:3\n5 x\n3 1 user trigger\n")
            p = subprocess.run([sys.executable, "-c", CLIENT, str(ids[0]), "0x1"],
                               capture_output=True, text=True, timeout=60,
                               env=dict(os.environ, AMDSMI_DEV_ROOT=dev, LD_PRELOAD=SHIM,
                                        AMDSMI_SIM_CTL=""))
            self.assertEqual(p.stdout.split("\n")[:2], ["version 1.17",
                                                        "errno %d" % errno.ENODEV])
            p = self.start(m, dev, ids[0], "0x1", lines=-1)
            self.assertEqual(p.stdout.readline().strip(), "ready")
            # a GPU that leaves its driver ends its streams: the client reads what was queued
            # and then the end of the stream
            m.ctl("kfd-event", GPU0 + ".0", "vmfault")
            self.assertEqual(m.write("bus/pci/drivers/amdgpu/unbind", GPU0), 0)
            self.assertEqual(self.finish(p), b"1 0:amdsmi-sim\n")

    def test_run_preloads_the_shim(self):
        script = textwrap.dedent("""
            import os, subprocess, sys
            assert os.path.exists(os.environ["AMDSMI_DEV_ROOT"] + "/kfd")
            assert "libamdsmi-sim-kfd.so" in os.environ["LD_PRELOAD"]
            gid = open("/sys/class/kfd/kfd/topology/nodes/2/gpu_id").read().strip()
            p = subprocess.Popen([sys.executable, "-c", sys.argv[1], gid, "0x4", "1"],
                                 stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
            assert p.stdout.readline().strip() == "version 1.17"
            assert p.stdout.readline().strip() == "ready"
            subprocess.run([sys.argv[2], "ctl", "kfd-event", "0000:05:00.0", "gpu_pre_reset"],
                           check=True)
            print(p.communicate(timeout=30)[0].strip().splitlines()[-1])
        """)
        p = subprocess.run([SIM, "run", "--", sys.executable, "-c", script, CLIENT, SIM],
                           capture_output=True, text=True, timeout=120)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stdout.strip(), repr(b"3 1 user trigger\n"))


if __name__ == "__main__":
    main()
