#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""amdsmi(1) on damaged sysfs trees: one damage at a time, nothing else lost, no crash.

usage: test-cli-corrupt.py AMDSMI [unittest options]
env:   FIXTURES_DIR  the generated trees;  SRCDIR  the source tree (for the JSON Schema)

Copies the 8-GPU SPX fixture tree once, records what the CLI prints on the intact copy, then
damages one file per case (restoring it afterwards) the way a driver or a failing SMU does,
and checks: the exit status (a problem with one field or one GPU is not a failure of the
command: 0, cli/exit-codes.h), the damaged value null with an "errors" entry carrying the
errno, every other value of every GPU exactly as before, warnings on stderr and never on
stdout in table and CSV mode, and no crash (a sanitizer report also counts as one, so an
ASan/UBSan build directory checks memory safety on these inputs as well).
"""

import copy
import csv
import io
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import unittest

import jsonschema

AMDSMI = None
FIXTURES_DIR = os.environ.get("FIXTURES_DIR", "")
SRCDIR = os.environ.get("SRCDIR", "")
TREE = "mi300x-8-spx"
VERBS = ("list", "static", "metric")
DAMAGED = 2     # the GPU most cases damage (the one before and the ones after must not care)
SANITIZER_REPORTS = ("AddressSanitizer", "LeakSanitizer", "runtime error:")


def copy_file(src, dst):
    """shutil.copy2, but a write-only sysfs attribute (bind, rescan...), which the owner may
    not read unless root, becomes an empty file of the same mode."""
    try:
        return shutil.copy2(src, dst)
    except PermissionError:
        with open(dst, "wb"):
            pass
        shutil.copymode(src, dst)
        return dst


class Corrupt(unittest.TestCase):
    maxDiff = None

    @classmethod
    def setUpClass(cls):
        with open(os.path.join(SRCDIR, "cli/schema/amdsmi-1.schema.json"), encoding="utf-8") as f:
            cls.validator = jsonschema.Draft202012Validator(json.load(f))
        with open(os.path.join(FIXTURES_DIR, TREE + ".expected.json"), encoding="utf-8") as f:
            cls.exp = sorted(json.load(f)["gpus"], key=lambda g: g["index"])
        cls.tmp = tempfile.mkdtemp(prefix="amdsmi-corrupt-")
        cls.addClassCleanup(shutil.rmtree, cls.tmp, True)  # also when the rest here fails
        cls.root = os.path.join(cls.tmp, TREE)
        shutil.copytree(os.path.join(FIXTURES_DIR, TREE), cls.root, symlinks=True,
                        copy_function=copy_file)
        cls.base = {}
        for verb in VERBS:
            p = cls.run_cli([verb, "--json"])
            if p.returncode != 0 or p.stderr:
                raise AssertionError("intact tree: amdsmi %s: %d %s" % (verb, p.returncode,
                                                                       p.stderr))
            doc = json.loads(p.stdout)
            if doc["errors"]:
                raise AssertionError("intact tree: amdsmi %s: errors %s" % (verb, doc["errors"]))
            cls.base[verb] = doc["gpus"]

    @classmethod
    def run_cli(cls, args):
        env = {k: v for k, v in os.environ.items()
               if k not in ("AMDSMI_DEV_ROOT", "AMDSMI_DEBUG")}
        env["AMDSMI_SYSFS_ROOT"] = cls.root
        return subprocess.run([AMDSMI] + list(args), env=env, capture_output=True, text=True,
                              check=False, timeout=60)

    # --- helpers ----------------------------------------------------------------------------

    def gpu_dir(self, k):
        return self.exp[k]["sysfs_path"]

    def hwmon_dir(self, k):
        return "%s/hwmon/%s" % (self.exp[k]["sysfs_path"], self.exp[k]["hwmon"]["name"])

    def damage(self, rel, data):
        """Replaces the file rel (relative to the tree, symlinks followed) with data until the
        end of the test."""
        path = os.path.realpath(os.path.join(self.root, rel))
        self.assertTrue(path.startswith(os.path.realpath(self.root) + os.sep), path)
        with open(path, "rb") as f:
            old = f.read()
        mode = os.stat(path).st_mode & 0o7777

        def restore():
            os.chmod(path, mode | 0o200)
            with open(path, "wb") as f:
                f.write(old)
            os.chmod(path, mode)

        self.addCleanup(restore)
        os.chmod(path, mode | 0o200)
        with open(path, "wb") as f:
            f.write(data(old) if callable(data) else data)
        os.chmod(path, mode)

    def cli(self, args, status=0):
        """Runs amdsmi; checks the exit status and that it did not crash."""
        p = self.run_cli(args)
        what = "amdsmi %s: exit %d, stderr %r" % (" ".join(args), p.returncode, p.stderr)
        self.assertGreaterEqual(p.returncode, 0, "killed by a signal: " + what)
        for s in SANITIZER_REPORTS:
            self.assertNotIn(s, p.stderr, what)
        self.assertEqual(p.returncode, status, what)
        return p

    def doc(self, verb, status=0):
        p = self.cli([verb, "--json"], status)
        doc = json.loads(p.stdout)
        errors = sorted(self.validator.iter_errors(doc), key=lambda e: list(e.absolute_path))
        self.assertEqual([("/".join(map(str, e.absolute_path)), e.message) for e in errors], [],
                         "amdsmi %s --json: not valid amdsmi/1" % verb)
        self.assertEqual(p.stderr, "", "with --json, warnings go into the document")
        return doc

    def human(self, verb, stderr_has=(), status=0):
        """Table and CSV: the warnings on stderr, stdout only data. @return the CSV rows."""
        rows = None
        for fmt in ([], ["--csv"]):
            p = self.cli([verb] + fmt, status)
            what = "amdsmi %s %s" % (verb, " ".join(fmt))
            for s in stderr_has:
                self.assertIn(s, p.stderr, what)
            self.assertNotIn("amdsmi:", p.stdout, what + ": a message on stdout")
            for s in stderr_has:
                self.assertNotIn(s, p.stdout, what + ": a message on stdout")
            if fmt:
                rows = list(csv.DictReader(io.StringIO(p.stdout)))
            else:
                self.assertTrue(p.stdout.startswith("GPU"), what + ": " + p.stdout[:200])
        return rows

    def assert_error(self, doc, gpu, field, errno):
        entries = [e for e in doc["errors"] if e["gpu"] == gpu and e["field"] == field]
        self.assertEqual([e["errno"] for e in entries], [errno],
                         "errors entry for GPU %s %s: %s" % (gpu, field, doc["errors"]))
        self.assertTrue(entries[0]["message"])

    def assert_message(self, doc, *words):
        """Some entry of "errors" contains every one of words."""
        msgs = [e["message"] for e in doc["errors"]]
        self.assertTrue(any(all(w in m for w in words) for m in msgs),
                        "no error message with %s in %s" % (words, msgs))

    def expect_gpus(self, verb, doc, changes=None, skip=None):
        """doc's GPUs are the intact ones, but for changes {(gpu, path): value} and without
        the GPU at index skip (those after it renumbered)."""
        want = copy.deepcopy(self.base[verb])
        for (k, path), value in (changes or {}).items():
            o = want[k]
            for key in path[:-1]:
                o = o[key]
            o[path[-1]] = value
        if skip is not None:
            del want[skip]
            for i, g in enumerate(want):
                g["gpu"] = i
        self.assertEqual(doc["gpus"], want, "amdsmi %s: other values changed" % verb)

    # --- hwmon ------------------------------------------------------------------------------

    def test_power_cap_empty(self):
        # the driver's answer when the SMU query fails: success, an empty line (spec §4.2)
        self.damage(self.hwmon_dir(DAMAGED) + "/power1_cap", b"\n")
        doc = self.doc("metric")
        self.assert_error(doc, DAMAGED, "power.cap_w", "ENOMSG")
        self.assert_message(doc, "power1_cap", self.exp[DAMAGED]["bdf"])
        self.expect_gpus("metric", doc, {(DAMAGED, ("power", "cap_w")): None})
        rows = self.human("metric", ["power1_cap", "empty value"])
        self.assertEqual([r["cap_w"] for r in rows],
                         ["" if k == DAMAGED else "750" for k in range(len(self.exp))])
        for verb in ("list", "static"):     # they do not read hwmon
            self.expect_gpus(verb, self.doc(verb))

    def test_power_input_garbage(self):
        self.damage(self.hwmon_dir(DAMAGED) + "/power1_input", b"garbage\n")
        doc = self.doc("metric")
        self.assert_error(doc, DAMAGED, "power.power_w", "EBADMSG")
        self.assert_message(doc, "power1_input", self.exp[DAMAGED]["bdf"])
        self.expect_gpus("metric", doc, {(DAMAGED, ("power", "power_w")): None})
        rows = self.human("metric", ["power1_input"])
        self.assertEqual(rows[DAMAGED]["power_w"], "")

    def test_temperature_garbage(self):
        self.damage(self.hwmon_dir(DAMAGED) + "/temp3_input", b"12abc\n")
        doc = self.doc("metric")
        self.assert_error(doc, DAMAGED, "temperatures.mem_c", "EBADMSG")
        self.expect_gpus("metric", doc, {(DAMAGED, ("temperatures", "mem_c")): None})
        self.human("metric", ["temp3_input"])

    # --- gpu_metrics ------------------------------------------------------------------------

    def metrics_case(self, data, errno, *words):
        self.damage(self.gpu_dir(DAMAGED) + "/gpu_metrics", data)
        doc = self.doc("metric")
        self.assert_error(doc, DAMAGED, "gpu_metrics", errno)
        self.assert_message(doc, self.exp[DAMAGED]["bdf"] + "/gpu_metrics", *words)
        self.expect_gpus("metric", doc, {(DAMAGED, ("gpu_metrics",)): None})
        rows = self.human("metric", ["gpu_metrics"])
        self.assertEqual(rows[DAMAGED]["energy_j"], "")
        self.assertNotEqual(rows[DAMAGED]["power_w"], "", "hwmon values are still shown")
        return doc

    def test_gpu_metrics_truncated(self):
        self.metrics_case(lambda b: b[:100], "EBADMSG", "malformed")

    def test_gpu_metrics_empty(self):
        self.metrics_case(b"", "EBADMSG", "malformed")

    def test_gpu_metrics_unknown_revision(self):
        # format_revision 2 (byte 2 of the header): a layout this library does not know
        def fmt2(b):
            b = bytearray(b)
            b[2] = 2
            return bytes(b)
        self.metrics_case(fmt2, "EOPNOTSUPP", "unsupported", "revision", "2.")

    def test_gpu_metrics_fixed_table_as_1_9(self):
        # a fixed-layout table that says 1.9: its bytes are no records (the reason names
        # where they stop making sense)
        def rev9(b):
            b = bytearray(b)
            b[3] = 9
            return bytes(b)
        self.metrics_case(rev9, "EBADMSG", "malformed", "1.9", "offset")

    def test_gpu_metrics_size_lies(self):
        # structure_size (bytes 0-1 of the header) larger than the file
        def bigger(b):
            b = bytearray(b)
            struct.pack_into("<H", b, 0, len(b) + 64)
            return bytes(b)
        self.metrics_case(bigger, "EBADMSG", "malformed")

    # --- KFD topology -----------------------------------------------------------------------

    def damage_kfd(self):
        node = self.exp[DAMAGED]["partitions"][0]["kfd_node"]
        rel = "class/kfd/kfd/topology/nodes/%d/properties" % node
        self.damage(rel, b"garbage\n")
        return rel

    def test_kfd_properties_garbage(self):
        rel = self.damage_kfd()
        for verb in ("list", "static"):
            with self.subTest(verb=verb):
                doc = self.doc(verb)
                self.assert_message(doc, rel)
                got, base = doc["gpus"], self.base[verb]
                self.assertEqual([g["bdf"] for g in got], [g["bdf"] for g in base])
                # the damaged GPU: identity as before, partitions unknown (null, not empty)
                g = got[DAMAGED]
                self.assertIsNone(g["partition_count"])
                self.assertTrue(any(e["gpu"] == DAMAGED and e["field"] == "partition_count"
                                    and e["errno"] == "EBADMSG" for e in doc["errors"]),
                                doc["errors"])
                if verb == "static":
                    self.assertIsNone(g["partitions"])
                ident = {k: v for k, v in base[DAMAGED].items()
                         if k not in ("partition_count", "partitions", "hive_id")}
                self.assertEqual({k: g[k] for k in ident}, ident)
                # every GPU keeps its identity
                for g, b in zip(got, base):
                    self.assertEqual({k: g[k] for k in ("bdf", "product", "unique_id",
                                                        "compute_mode", "memory_mode")},
                                     {k: b[k] for k in ("bdf", "product", "unique_id",
                                                        "compute_mode", "memory_mode")})
                self.human(verb, [rel])
        # metric never reads the KFD topology
        self.expect_gpus("metric", self.doc("metric"))

    def test_kfd_properties_garbage_other_gpus(self):
        # One malformed KFD node costs only its own GPU its partitions (partition_count null,
        # with an errors entry); every other GPU keeps its partitions and hive id.
        self.damage_kfd()
        for verb in ("list", "static"):
            doc = self.doc(verb)
            for k, (g, b) in enumerate(zip(doc["gpus"], self.base[verb])):
                if k != DAMAGED:
                    self.assertEqual(g, b, "amdsmi %s: GPU %d changed" % (verb, k))

    # --- identity ---------------------------------------------------------------------------

    def test_vendor_garbage(self):
        # one GPU with an unreadable vendor ID is skipped with a warning; the others stay
        gone = 3
        bdf = self.exp[gone]["bdf"]
        self.damage(self.gpu_dir(gone) + "/vendor", b"garbage\n")
        for verb in VERBS:
            with self.subTest(verb=verb):
                doc = self.doc(verb)
                self.assert_message(doc, bdf)
                self.expect_gpus(verb, doc, skip=gone)
                rows = self.human(verb, [bdf])
                self.assertEqual([r["bdf"] for r in rows],
                                 [e["bdf"] for e in self.exp if e["bdf"] != bdf])
        # and it cannot be selected
        p = self.cli(["-g", bdf, "list"], 3)
        self.assertIn("no AMD GPU at " + bdf, p.stderr)

    def test_unique_id_empty(self):
        self.damage(self.gpu_dir(DAMAGED) + "/unique_id", b"\n")
        for verb in ("list", "static"):
            with self.subTest(verb=verb):
                doc = self.doc(verb)
                # the partition's unique id comes from KFD and stays
                self.expect_gpus(verb, doc, {(DAMAGED, ("unique_id",)): None})
                rows = self.human(verb)
                self.assertEqual(rows[DAMAGED]["unique_id"], "")
        self.expect_gpus("metric", self.doc("metric"))


def main(argv):
    global AMDSMI
    if len(argv) < 2 or not os.path.isdir(FIXTURES_DIR) or not os.path.isdir(SRCDIR):
        print(__doc__, file=sys.stderr)
        return 2
    AMDSMI = argv[1]
    prog = unittest.main(argv=[argv[0]] + argv[2:], exit=False, verbosity=2)
    return 0 if prog.result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
