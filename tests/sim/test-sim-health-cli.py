#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""amdsmi ras / ras --cper / bad-pages / health / events end to end on simulator mounts: errors
injected with `amdsmi-sim ctl` (ras-inject, retire-page, cper, kfd-event) seen in each verb and
format, the exit statuses of health on each verdict (0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN,
and 3 for a usage error), what an unprivileged user reads (counts and verdicts; the CPER ring
and the bad-page threshold reported as needing root), events streamed through the simulator's
KFD shim, and garbage in the RAS files of a snapshot tree."""

import json
import os
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from simtest import CLI, GPU0, GPU1, NOBODY, SIM, CtlMount, SchemaCase, main, tmpdir  # noqa: E402

SHIM = os.path.join(os.path.dirname(SIM), "libamdsmi-sim-kfd.so")


class Case(SchemaCase):
    maxDiff = None

    def setUp(self):
        self.rt = tmpdir(self, "amdsmi-rt.")
        self.st = tmpdir(self, "amdsmi-state.")
        self.conf = tmpdir(self, "amdsmi-conf.")

    def env(self, root, **extra):
        env = dict(os.environ, AMDSMI_SYSFS_ROOT=root, RUNTIME_DIRECTORY=self.rt,
                   STATE_DIRECTORY=self.st, CONFIGURATION_DIRECTORY=self.conf)
        env.pop("AMDSMI_DEBUG", None)
        env.update(extra)
        return env

    def cli(self, root, *args, status=0, user=None, has=(), env=None):
        p = subprocess.run((user or []) + [CLI] + [str(a) for a in args],
                           env=env or self.env(root), capture_output=True, text=True,
                           timeout=120)
        what = "amdsmi %s: exit %d, stdout %r, stderr %r" % (" ".join(map(str, args)),
                                                              p.returncode, p.stdout[-3000:],
                                                              p.stderr)
        self.assertEqual(p.returncode, status, what)
        for s in has:
            self.assertIn(s, p.stdout + p.stderr, what)
        return p

    def doc(self, root, *args, status=0, user=None, has=()):
        p = self.cli(root, *(list(args) + ["--json"]), status=status, user=user, has=has)
        d = json.loads(p.stdout)
        self.assert_valid(d, "amdsmi %s --json" % " ".join(map(str, args)))
        return d

    def gpu(self, m, verb, *args, status=0, user=None):
        return self.doc(m.root, verb, "-g", "0", *args, status=status, user=user)["gpus"][0]


def block(g, name):
    return [b for b in g["ras"]["blocks"] if b["block"] == name][0]


def reasons(g):
    return {r["code"]: r for r in g["health"]["reasons"]}


class Ras(Case):
    def test_counts_in_every_format(self):
        with CtlMount() as m:
            g = self.gpu(m, "ras")
            self.assertEqual(block(g, "umc"), {"block": "umc", "source": "aca", "ue": 0,
                                               "ce": 0, "de": 0})
            self.assertEqual(g["ecc"], {"uncorrectable_total": 0, "correctable_total": 0,
                                        "deferred_total": 0})
            self.assertIn("umc", g["ras"]["features"])
            m.ctl("ras-inject", GPU0, "umc", "ue", "2")
            m.ctl("ras-inject", GPU0, "gfx", "ce", "7")
            m.ctl("ras-inject", GPU0, "umc", "de", "1")
            g = self.gpu(m, "ras")
            self.assertEqual(block(g, "umc"), {"block": "umc", "source": "aca", "ue": 2,
                                               "ce": 0, "de": 1})
            self.assertEqual(block(g, "gfx")["ce"], 7)
            self.assertEqual(g["ecc"], {"uncorrectable_total": 2, "correctable_total": 7,
                                        "deferred_total": 1})
            # another GPU's counts are its own
            g1 = self.doc(m.root, "ras", "-g", "1")["gpus"][0]
            self.assertEqual(g1["ecc"]["uncorrectable_total"], 0)
            # CSV: one row per GPU and block
            rows = self.cli(m.root, "ras", "-g", "0", "--csv").stdout.splitlines()
            self.assertEqual(rows[0], "gpu,bdf,block,source,ue,ce,de")
            self.assertIn("0,%s,umc,aca,2,0,1" % GPU0, rows)
            self.assertIn("0,%s,gfx,aca,0,7,0" % GPU0, rows)
            # the table, with the totals below it
            out = self.cli(m.root, "ras", "-g", "0").stdout
            self.assertRegex(out, r"(?m)^ +0 +%s +umc +aca +2 +0 +1$" % GPU0)
            self.assertIn("GPU 0: 2 uncorrectable, 7 correctable, 1 deferred", out)

    def test_metric_ecc_group(self):
        with CtlMount() as m:
            m.ctl("ras-inject", GPU0, "umc", "ue", "2")
            m.ctl("ras-inject", GPU0, "gfx", "ce", "4")
            d = self.doc(m.root, "metric", "-g", "0", "-e")
            self.assertEqual(d["fields"], ["ecc"])
            self.assertEqual(d["gpus"][0]["ecc"], {"uncorrectable_total": 2,
                                                   "correctable_total": 4,
                                                   "deferred_total": 0})
            rows = self.cli(m.root, "metric", "-g", "0", "-e", "--csv").stdout.splitlines()
            self.assertEqual(rows, ["gpu,bdf,ecc_uncorrectable_total,ecc_correctable_total,"
                                    "ecc_deferred_total", "0,%s,2,4,0" % GPU0])
            # not in the default output
            d = self.doc(m.root, "metric", "-g", "0")
            self.assertNotIn("ecc", d["gpus"][0])
            self.assertNotIn("ecc", self.cli(m.root, "metric", "-g", "0", "--csv").stdout)

    def test_partition_shows_the_gpu(self):
        with CtlMount() as m:
            self.assertEqual(m.write(m.gpu(GPU0, "current_compute_partition"), "CPX"), 0)
            m.ctl("ras-inject", GPU0, "umc", "ce", "3")
            p = self.cli(m.root, "ras", "-g", "0.2", "--json",
                         has=["belong to the whole GPU"])
            d = json.loads(p.stdout)
            self.assert_valid(d, "ras -g 0.2")
            self.assertEqual(d["gpus"][0]["partitions_selected"], [2])
            self.assertEqual(d["gpus"][0]["ecc"]["correctable_total"], 3)

    def test_bad_usage(self):
        with CtlMount() as m:
            self.cli(m.root, "ras", "--follow", status=2, has=["--follow needs --cper"])
            self.cli(m.root, "ras", "--cper-dir", "/nonexistent", status=2,
                     has=["--cper-dir needs --cper"])
            self.cli(m.root, "ras", "--kind", "vm_fault", status=2,
                     has=["option '--kind' is not valid for 'ras'"])
            self.cli(m.root, "bad-pages", "--cper", status=2,
                     has=["option '--cper' is not valid for 'bad-pages'"])


class Cper(Case):
    def test_records_and_files(self):
        with CtlMount() as m:
            m.ctl("cper", GPU0, "fatal")
            m.ctl("cper", GPU0, "corrected")
            g = self.gpu(m, "ras", "--cper")
            recs = g["cper"]["records"]
            self.assertEqual([(r["record_id"], r["severity"], r["notify"]) for r in recs],
                             [("0:1", "fatal", "mce"), ("0:2", "non_fatal_corrected", "cmc")])
            self.assertEqual(recs[0]["sections"][0]["type"], "crashdump")
            self.assertEqual(recs[0]["sections"][0]["fru"], "OAM0")
            self.assertRegex(recs[0]["timestamp"], r"^20[0-9-]+T[0-9:]+\.000Z$")
            self.assertEqual(g["cper"]["lost"], 0)
            rows = self.cli(m.root, "ras", "-g", "0", "--cper", "--csv").stdout.splitlines()
            self.assertEqual(rows[0], "gpu,bdf,record_id,severity,timestamp,notify,sections,"
                                      "size")
            self.assertEqual(len(rows), 3)
            self.assertTrue(rows[1].startswith("0,%s,0:1,fatal," % GPU0), rows)
            # a fatal record makes the GPU critical
            g = self.gpu(m, "health", status=2)
            self.assertIn("1 CPER record of fatal severity (last: 0:1)",
                          reasons(g)["cper_fatal"]["text"])

            # --cper-dir: one .cper file per record with its raw bytes
            out = os.path.join(tmpdir(self, "amdsmi-cper."), "dir")
            self.cli(m.root, "ras", "-g", "0", "--cper", "--cper-dir", out,
                     has=["GPU 0: 2 CPER records written to"])
            files = sorted(os.listdir(out))
            self.assertEqual(len(files), 2, files)
            self.assertTrue(all(f.endswith(".cper") for f in files), files)
            # root-only data (debugfs): readable by the writer only
            self.assertEqual({os.stat(os.path.join(out, f)).st_mode & 0o777 for f in files},
                             {0o600})
            sizes = sorted(os.path.getsize(os.path.join(out, f)) for f in files)
            self.assertEqual(sizes, sorted(r["size"] for r in recs))
            with open(os.path.join(out, files[0]), "rb") as f:
                self.assertEqual(f.read(4), b"CPER")
            # a rerun writes nothing twice; a file of the same name with other bytes stays
            with open(os.path.join(out, files[1]), "wb") as f:
                f.write(b"not this record")
            self.cli(m.root, "ras", "-g", "0", "--cper", "--cper-dir", out,
                     has=["GPU 0: 1 CPER record written to", "others were there already"])
            now = sorted(os.listdir(out))
            self.assertEqual(len(now), 3, now)
            with open(os.path.join(out, files[1]), "rb") as f:
                self.assertEqual(f.read(), b"not this record")
            # never through a symbolic link, never into another user's directory
            link = os.path.join(os.path.dirname(out), "link")
            os.symlink(out, link)
            self.cli(m.root, "ras", "-g", "0", "--cper", "--cper-dir", link, status=2,
                     has=["is a symbolic link, not a directory: refused"])
            other = os.path.join(os.path.dirname(out), "other")
            os.mkdir(other)
            os.chown(other, 65534, 65534)
            self.cli(m.root, "ras", "-g", "0", "--cper", "--cper-dir", other, status=6,
                     has=["is owned by another user"])
            self.assertEqual(os.listdir(other), [])

    def test_follow(self):
        with CtlMount() as m:
            m.ctl("cper", GPU0, "corrected")
            p = subprocess.Popen([CLI, "ras", "-g", "0", "--cper", "--follow", "--json"],
                                 env=self.env(m.root), stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True)
            try:
                first = json.loads(p.stdout.readline())
                m.ctl("cper", GPU0, "fatal")
                second = json.loads(p.stdout.readline())
                m.ctl("cper", GPU0, "uncorrected")
                third = json.loads(p.stdout.readline())
            finally:
                p.send_signal(signal.SIGINT)
                out, err = p.communicate(timeout=30)
            self.assertEqual(p.returncode, 0, err)
            self.assertEqual(out, "")   # never a record twice
            for line in (first, second, third):
                self.assert_valid(line, "ras --cper --follow --json line")
            self.assertEqual([x["record"]["record_id"] for x in (first, second, third)],
                             ["0:1", "0:2", "0:3"])
            self.assertEqual(second["record"]["severity"], "fatal")


class BadPages(Case):
    def test_pages_and_threshold(self):
        with CtlMount() as m:
            g = self.gpu(m, "bad-pages")
            self.assertEqual(g["bad_pages"], {"count": 0, "pending": 0, "unreservable": 0,
                                              "threshold": 128, "threshold_error": None,
                                              "pages": []})
            m.ctl("retire-page", GPU0, "0x1234", "R")
            m.ctl("retire-page", GPU0, "0x2000", "P")
            m.ctl("retire-page", GPU0, "0x3000", "F")
            g = self.gpu(m, "bad-pages")
            self.assertEqual(g["bad_pages"]["count"], 3)
            self.assertEqual(g["bad_pages"]["pending"], 1)
            self.assertEqual(g["bad_pages"]["unreservable"], 1)
            self.assertIn({"pfn": "0x1234", "address": "0x1234000", "size": 4096,
                           "status": "reserved"}, g["bad_pages"]["pages"])
            rows = self.cli(m.root, "bad-pages", "-g", "0", "--csv").stdout.splitlines()
            self.assertEqual(rows[0], "gpu,bdf,pfn,address,size,status")
            self.assertIn("0,%s,0x2000,0x2000000,4096,pending" % GPU0, rows)
            out = self.cli(m.root, "bad-pages", "-g", "0").stdout
            self.assertIn("GPU 0: 3 retired pages (1 pending, 1 unreservable), threshold 128",
                          out)
            self.assertRegex(out, r"(?m)^ +0 +%s +0x3000 +0x3000000 +4096 +unreservable$" % GPU0)


class HealthVerdict(Case):
    def health(self, m, status, gpu="0", user=None):
        p = self.cli(m.root, "health", "-g", gpu, "--json", status=status, user=user)
        d = json.loads(p.stdout)
        self.assert_valid(d, "health")
        return d["gpus"][0]

    def test_exit_status_of_each_verdict(self):
        with CtlMount() as m:
            g = self.health(m, 0)
            self.assertEqual(g["health"]["state"], "ok")
            r = reasons(g)
            self.assertEqual(r["ce_rate_not_evaluated"]["severity"], "info")
            self.assertEqual(r["reset_not_evaluated"]["severity"], "info")
            # every GPU ok: 0, in every format
            self.cli(m.root, "health", status=0)
            self.cli(m.root, "health", "--csv", status=0)
            # a page pending retirement: WARNING
            m.ctl("retire-page", GPU0, "0x10", "P")
            g = self.health(m, 1)
            self.assertEqual(g["health"]["state"], "warning")
            self.assertIn("bad_pages_pending", reasons(g))
            out = self.cli(m.root, "health", "-g", "0", status=1).stdout
            self.assertIn("GPU 0: warning: 1 page pending retirement", out)
            self.assertIn("note: recent GPU resets not evaluated", out)
            # an uncorrectable error: CRITICAL, the worst GPU decides over all of them
            m.ctl("ras-inject", GPU0, "umc", "ue", "1")
            g = self.health(m, 2)
            self.assertEqual(reasons(g)["uncorrectable_errors"]["severity"], "critical")
            self.cli(m.root, "health", status=2)
            self.cli(m.root, "health", "--csv", status=2,
                     has=["0,%s,critical,1,0," % GPU0])
            self.health(m, 0, gpu="1")
            # usage errors are UNKNOWN as monitoring plugins expect
            self.cli(m.root, "health", "--bogus", status=3, has=["unknown option '--bogus'"])
            self.cli(m.root, "health", "--cper", status=3,
                     has=["option '--cper' is not valid for 'health'"])
            self.cli(m.root, "health", "-g", "99", status=3, has=["GPU 99 not found"])

    def test_near_and_at_the_threshold(self):
        with CtlMount() as m:
            # 128 by default: 115 pages are 89.8 %, 116 are 90.6 %
            for i in range(115):
                m.ctl("retire-page", GPU0, hex(0x100 + i), "R")
            g = self.health(m, 0)
            self.assertNotIn("bad_pages_near_threshold", reasons(g))
            m.ctl("retire-page", GPU0, "0x1000", "R")
            g = self.health(m, 1)
            self.assertIn("116 retired pages of a threshold of 128",
                          reasons(g)["bad_pages_near_threshold"]["text"])
            # amdsmid.conf [health] moves the boundary
            with open(os.path.join(self.conf, "amdsmid.conf"), "w") as f:
                f.write("[health]\nbad_pages_warning_percent = 95\n")
            self.health(m, 0)
            with open(os.path.join(self.conf, "amdsmid.conf"), "w") as f:
                f.write("[health]\nbad_pages_warning_percent = 900\n")
            # a file that cannot be parsed: the defaults (90 %), and a warning
            self.cli(m.root, "health", "-g", "0", status=1,
                     has=["bad_pages_warning_percent 900 out of range",
                          "using the default health thresholds"])

    def test_unprivileged(self):
        with CtlMount() as m:
            m.ctl("ras-inject", GPU0, "umc", "ce", "5")
            # counts and verdicts are everyone's
            g = self.gpu(m, "ras", user=NOBODY)
            self.assertEqual(block(g, "umc")["ce"], 5)
            g = self.health(m, 0, user=NOBODY)
            r = reasons(g)
            self.assertEqual(r["cper_not_evaluated"]["text"],
                             "CPER records not evaluated: needs root (debugfs)")
            self.assertIn("needs root", r["bad_page_threshold_not_evaluated"]["text"])
            # the threshold and the CPER ring are root's: said, not a failure
            p = self.cli(m.root, "bad-pages", "-g", "0", "--json", user=NOBODY)
            d = json.loads(p.stdout)
            self.assert_valid(d, "bad-pages")
            bp = d["gpus"][0]["bad_pages"]
            self.assertIsNone(bp["threshold"])
            self.assertEqual(bp["threshold_error"], "needs root (debugfs)")
            self.assertIn({"gpu": 0, "field": "bad_pages.threshold", "errno": "EACCES",
                           "message": "needs root (debugfs)"}, d["errors"])
            d = self.doc(m.root, "ras", "-g", "0", "--cper", user=NOBODY)
            self.assertIsNone(d["gpus"][0]["cper"])
            self.assertEqual(d["errors"][0]["message"], "needs root (debugfs)")
            self.cli(m.root, "ras", "-g", "0", "--cper", user=NOBODY,
                     has=["GPU 0: cper: needs root (debugfs)"])
            # nothing to follow: no stream, the reason and exit 6
            self.cli(m.root, "ras", "-g", "0", "--cper", "--follow", user=NOBODY, status=6,
                     has=["no CPER ring of the selected GPUs can be followed: needs root"])

    def test_garbage_in_the_ras_files(self):
        snap = os.path.join(tmpdir(self, "amdsmi-snap."), "tree")
        p = subprocess.run([SIM, "snapshot", snap], capture_output=True, text=True,
                           timeout=120)
        self.assertEqual(p.returncode, 0, p.stderr)
        aca = os.path.join(snap, "bus/pci/devices", GPU0, "ras", "aca_umc")
        self.assertTrue(os.path.exists(aca), aca)
        with open(aca, "w") as f:
            f.write("ue: lots\nce: 0\n")
        d = self.doc(snap, "ras", "-g", "0")
        g = d["gpus"][0]
        self.assertEqual(block(g, "umc"), {"block": "umc", "source": "aca", "ue": None,
                                           "ce": None, "de": None})
        self.assertIn({"gpu": 0, "field": "ras.umc", "errno": "EBADMSG",
                       "message": "the count file holds garbage or is truncated"}, d["errors"])
        # the verdict of a GPU whose counts cannot be read: UNKNOWN
        p = self.cli(snap, "health", "-g", "0", status=3,
                     has=["the counts of block umc cannot be read: garbage in the count file"])
        self.assertRegex(p.stdout, r"(?m)^ +0 +%s +unknown" % GPU0)
        # no RAS at all: UNKNOWN too
        self.cli(snap, "health", "-g", "1", status=0)
        os.rename(os.path.join(snap, "bus/pci/devices", GPU1, "ras"),
                  os.path.join(snap, "bus/pci/devices", GPU1, "ras.gone"))
        self.cli(snap, "health", "-g", "1", status=3, has=["no RAS on this GPU"])


class Events(Case):
    def wait_for_subscription(self, p):
        """Until amdsmi events handles SIGINT (its handler comes after the subscriptions)."""
        for _ in range(200):
            if p.poll() is not None:
                self.fail("amdsmi events exited: %r" % (p.stderr.read(),))
            with open("/proc/%d/status" % p.pid) as f:
                caught = [int(line.split()[1], 16) for line in f if line.startswith("SigCgt:")]
            if caught and caught[0] & (1 << (signal.SIGINT - 1)):
                return
            time.sleep(0.05)
        self.fail("amdsmi events never subscribed")

    def test_stream_through_the_shim(self):
        dev = tmpdir(self, "amdsmi-dev.")
        with CtlMount("--dev-root", dev) as m:
            env = self.env(m.root, AMDSMI_DEV_ROOT=dev, AMDSMI_SIM_CTL=m.sock, LD_PRELOAD=SHIM)
            p = subprocess.Popen([CLI, "events", "-g", "0", "--json", "--kind",
                                  "thermal_throttle,gpu_post_reset"],
                                 env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                 text=True)
            try:
                self.wait_for_subscription(p)
                m.ctl("kfd-event", GPU0, "vmfault")                 # not asked for
                m.ctl("kfd-event", GPU0, "thermal_throttle", "3:7")
                m.ctl("kfd-event", GPU1, "thermal_throttle")       # another GPU's
                m.ctl("kfd-event", GPU0, "gpu_post_reset", "5", "RAS", "error")
                lines = [p.stdout.readline() for _ in range(2)]
            finally:
                p.send_signal(signal.SIGINT)
                out, err = p.communicate(timeout=30)
            self.assertEqual(p.returncode, 0, err)
            evs = [json.loads(line) for line in lines + out.splitlines()]
            for e in evs:
                self.assert_valid(e, "events --json line")
            self.assertEqual([(e["gpu"], e["kind"]) for e in evs],
                             [(0, "thermal_throttle"), (0, "gpu_post_reset")])
            self.assertEqual(evs[0]["data"], {"mask": "0x3", "counter": 7})
            self.assertEqual(evs[1]["data"], {"seq": 5, "cause": "RAS error"})
            self.assertEqual(evs[1]["partition"], 0)
            # bad kinds are usage errors naming the kinds
            self.cli(m.root, "events", "--kind", "thermal,bogus", status=2,
                     has=["invalid event kind in 'thermal,bogus'", "gpu_pre_reset"],
                     env=env)


if __name__ == "__main__":
    main()
