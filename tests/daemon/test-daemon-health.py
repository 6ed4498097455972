#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""amdsmid's org.amdsmi1.Health (issue 19, "4. amdsmid").

Each injection of the simulator (a UE, CEs, a retired page pending or failed, a fatal CPER
record) must change the GPU's properties, emit PropertiesChanged for what changed and the
Event signals ("health" with the verdict, "cper" with the new record), and be logged with
the GPU; the CE rate is judged against amdsmid.conf's threshold on both sides; a caller
other than root reads counts and verdicts, and the CPER records and the bad-page threshold
only when polkit allows org.amdsmi1.health.read-privileged; `amdsmi ras|bad-pages|ras --cper`
print through amdsmid what they print in-process, byte for byte.
"""
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from daemontest import (MANAGER, MI300X_BDFS, NOBODY, ROOT, BusError,  # noqa: E402
                        Daemon, gpu_path, require_daemon, wait_until)
from simtest import machine_variant  # noqa: E402

HEALTH = "org.amdsmi1.Health"
PRIVILEGED = "org.amdsmi1.health.read-privileged"
FAST = "[daemon]\npoll_interval_ms = 200\n"
STAMP = re.compile(r'"timestamp": ?"[^"]*"')


def ctl(d, *args):
    d.ctl(*[str(a) for a in args])


class Monitor:
    """busctl monitor of amdsmid's messages; messages() parses what it printed so far."""

    def __init__(self, d):
        self.d = d

    def __enter__(self):
        self.out = open(os.path.join(self.d.tmp, "monitor.json"), "w+")
        self.proc = subprocess.Popen(["busctl", "--system", "monitor", "--json=short",
                                      "org.amdsmi1"], env=self.d.env(), stdout=self.out,
                                     stderr=subprocess.DEVNULL)
        time.sleep(0.5)  # monitoring is set up
        return self

    def __exit__(self, *exc):
        self.proc.terminate()
        self.proc.wait(10)
        self.out.close()

    def messages(self):
        self.out.flush()
        with open(self.out.name) as f:
            lines = f.read().splitlines()
        msgs = []
        for line in lines:
            try:
                msgs.append(json.loads(line))
            except ValueError:
                pass  # a line being written
        return msgs

    def signals(self, path, interface, member):
        return [m for m in self.messages()
                if m.get("type") == "signal" and m.get("path") == path
                and m.get("interface") == interface and m.get("member") == member]

    def changed(self, path):
        """The Health properties each PropertiesChanged of @path named, in order."""
        out = []
        for m in self.signals(path, "org.freedesktop.DBus.Properties", "PropertiesChanged"):
            data = m["payload"]["data"]
            if data[0] == HEALTH:
                out.append(set(data[1]) | set(data[2]))
        return out

    def events(self, path, kind):
        return [json.loads(m["payload"]["data"][1])
                for m in self.signals(path, HEALTH, "Event")
                if m["payload"]["data"][0] == kind]


class Health(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        require_daemon()

    def prop(self, d, bdf, name, user=None):
        return d.get(gpu_path(bdf), HEALTH, name, user=user)

    def document(self, d, verb, user=None, gpus=None):
        if gpus is None:
            out = d.call(ROOT, MANAGER, "GetDocument", "sa{sv}", verb, 0, user=user)
        else:
            out = d.call(ROOT, MANAGER, "GetDocument", "sa{sv}", verb, 1, "gpus", "as",
                         len(gpus), *gpus, user=user)
        return json.loads(out[0])

    def test_links(self):
        """A PCIe link that retrains narrower, replays that grow and an XGMI link down make the
        GPU warning, with PropertiesChanged and Event(health); the link coming back and the
        window ending bring it back (issue 21, link health)."""
        bdf, other = MI300X_BDFS[2], MI300X_BDFS[3]
        conf = FAST + "[health]\nreset_window_minutes = 0\n"
        with Daemon(config=FAST) as d, Monitor(d) as mon:
            path = gpu_path(bdf)
            self.assertEqual(self.prop(d, bdf, "State"), "ok")
            ctl(d, "pcie-link", bdf, 8, "16.0")
            wait_until("pcie_link_degraded", lambda: "pcie_link_degraded" in
                       [r[0] for r in self.prop(d, bdf, "Reasons")])
            self.assertEqual(self.prop(d, bdf, "State"), "warning")
            (why,) = [r for r in self.prop(d, bdf, "Reasons") if r[0] == "pcie_link_degraded"]
            self.assertEqual(why[1:], ["warning", "PCIe link x8 of x16 at 16.0 GT/s"])
            events = wait_until("Event(health)", lambda: mon.events(path, "health"))
            self.assertEqual(events[-1]["state"], "warning")
            ctl(d, "pcie-link", bdf, 16, "32.0")
            wait_until("ok again", lambda: self.prop(d, bdf, "State") == "ok")

            # replays that grow: a warning for the window, logged; the health document says
            ctl(d, "pcie-replay", bdf, 100)
            wait_until("pcie_replays", lambda: "pcie_replays" in
                       [r[0] for r in self.prop(d, bdf, "Reasons")])
            doc = json.loads(d.call(ROOT, MANAGER, "GetDocument", "sa{sv}", "health", 1,
                                    "gpus", "as", 1, bdf)[0])
            self.assertEqual(doc["gpus"][0]["links"]["pcie_replays_in_window"], 100)
            self.assertIn("%s: 100 PCIe replays since the last check" % bdf, d.log())
            self.assertEqual(self.prop(d, other, "State"), "ok")

            # an XGMI link down, at both of its ends: seen within 30 checks (6 s here)
            ctl(d, "xgmi-link", other, 2, "down")
            wait_until("xgmi_link_down", lambda: "xgmi_link_down" in
                       [r[0] for r in self.prop(d, other, "Reasons")], timeout=30)
            (why,) = [r for r in self.prop(d, other, "Reasons") if r[0] == "xgmi_link_down"]
            self.assertRegex(why[2], r"^XGMI link 2 down \(6 of 7 up\)$")
            ctl(d, "xgmi-link", other, 2, "up")
            wait_until("XGMI link up", lambda: "xgmi_link_down" not in
                       [r[0] for r in self.prop(d, other, "Reasons")], timeout=30)

            # a window of 0: replays warn no more
            d.write_config(conf)
            d.call(ROOT, MANAGER, "Reload")
            wait_until("replays forgotten", lambda: "pcie_replays" not in
                       [r[0] for r in self.prop(d, bdf, "Reasons")])

    def test_xgmi_error_totals(self):
        """xgmi_error clears when read: amdsmid reads it at each check and keeps the total
        across reads, in the health document, the verdict and /metrics' family (a product
        with the counter; MI300X has none)."""
        def counter(m):
            for p in m["products"].values():
                p["xgmi_error_counter"] = True

        tmp = tempfile.mkdtemp(prefix="amdsmi-machine.")
        self.addCleanup(shutil.rmtree, tmp)
        path = machine_variant("mi300x-8", "mi300x-8-xgmi-counter", tmp, counter)
        bdf = MI300X_BDFS[4]
        with Daemon(machine=path, config=FAST) as d, Monitor(d) as mon:
            def links():
                doc = json.loads(d.call(ROOT, MANAGER, "GetDocument", "sa{sv}", "health", 1,
                                        "gpus", "as", 1, bdf)[0])
                return doc["gpus"][0]["links"]

            wait_until("counted", lambda: links()["xgmi_errors_total"] == 0)
            ctl(d, "xgmi-error", bdf, 1)
            wait_until("one error", lambda: links()["xgmi_errors_total"] == 1)
            ctl(d, "xgmi-error", bdf, 2)
            wait_until("three", lambda: links()["xgmi_errors_total"] == 3)
            # amdsmid read (and so cleared) the register: the file says none now
            self.assertEqual(d.mount.value(d.mount.gpu(bdf, "xgmi_error")), "0")
            time.sleep(1)  # more checks: the total stays
            self.assertEqual(links()["xgmi_errors_total"], 3)
            reasons = self.prop(d, bdf, "Reasons")
            self.assertIn("xgmi_errors", [r[0] for r in reasons])
            self.assertEqual(self.prop(d, bdf, "State"), "warning")
            wait_until("Event(health)", lambda: mon.events(gpu_path(bdf), "health"))
            self.assertIn("%s: XGMI errors since the last check" % bdf, d.log())
            # the other GPUs: counted, none
            self.assertEqual(self.prop(d, MI300X_BDFS[0], "State"), "ok")

    def test_initial_properties(self):
        with Daemon() as d:
            for bdf in MI300X_BDFS:
                self.assertEqual(self.prop(d, bdf, "State"), "ok")
                self.assertEqual(self.prop(d, bdf, "UncorrectableErrors"), 0)
                self.assertEqual(self.prop(d, bdf, "CorrectableErrors"), 0)
                codes = [r[0] for r in self.prop(d, bdf, "Reasons")]
                # no event stream is followed here: resets are not evaluated, and said so
                self.assertIn("reset_not_evaluated", codes)
                # a caller other than root reads them too
                self.assertEqual(self.prop(d, bdf, "State", user=NOBODY), "ok")

    def test_ue_injection(self):
        bdf = MI300X_BDFS[1]
        with Daemon(config=FAST) as d, Monitor(d) as mon:
            ctl(d, "ras-inject", bdf, "umc", "ue", 2)
            wait_until("State critical", lambda: self.prop(d, bdf, "State") == "critical")
            self.assertEqual(self.prop(d, bdf, "UncorrectableErrors"), 2)
            reasons = self.prop(d, bdf, "Reasons")
            ue = [r for r in reasons if r[0] == "uncorrectable_errors"]
            self.assertEqual(len(ue), 1, reasons)
            self.assertEqual(ue[0][1], "critical")
            self.assertIn("2 uncorrectable errors", ue[0][2])
            self.assertIn("umc 2", ue[0][2])
            # the other GPUs are untouched
            self.assertEqual(self.prop(d, MI300X_BDFS[0], "State"), "ok")

            path = gpu_path(bdf)
            changed = wait_until("PropertiesChanged", lambda: mon.changed(path))
            every = set().union(*changed)
            self.assertLessEqual({"State", "Reasons", "UncorrectableErrors"}, every)
            # only what changed: the CE count did not
            self.assertNotIn("CorrectableErrors", every)
            events = wait_until("Event(health)", lambda: mon.events(path, "health"))
            self.assertEqual(events[-1]["bdf"], bdf)
            self.assertEqual(events[-1]["state"], "critical")
            self.assertIn("uncorrectable_errors", [r["code"] for r in events[-1]["reasons"]])
            self.assertEqual((events[-1]["kind"], events[-1]["partition"]), ("health", None))
            self.assertRegex(events[-1]["text"], r"^health critical: .*uncorrectable")
            self.assertEqual(mon.events(gpu_path(MI300X_BDFS[0]), "health"), [])
            # the log says it with the GPU (HEALTH= is a journal field: not on stderr)
            log = d.log()
            self.assertIn("amdsmid: crit: %s: health ok -> critical: 2 uncorrectable errors"
                          % bdf, log)

    def test_journal_fields(self):
        """With stderr connected to "the journal" (JOURNAL_STREAM names it), a health change is
        an entry with GPU= and HEALTH=: amdsmid runs in a private mount namespace whose
        /run/systemd/journal is a directory of the test, holding its datagram socket."""
        bdf = MI300X_BDFS[7]
        with Daemon(config=FAST, start=False) as d:
            jdir = os.path.join(d.tmp, "journal")
            os.mkdir(jdir)
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
            sock.bind(os.path.join(jdir, "socket"))
            os.chmod(os.path.join(jdir, "socket"), 0o666)
            sock.setblocking(False)
            d.wrapper = ["unshare", "-m", "--propagation", "private", "--", "sh", "-c",
                         'mount -t tmpfs amdsmi-test /run/systemd && '
                         'mkdir /run/systemd/journal && mount --bind "$0" /run/systemd/journal '
                         '&& JOURNAL_STREAM=$(stat -L -c %d:%i /proc/self/fd/2) exec "$@"',
                         jdir]
            d.start()
            ctl(d, "ras-inject", bdf, "umc", "ue", 1)
            wait_until("State critical", lambda: self.prop(d, bdf, "State") == "critical")
            entries = []

            def entry():
                while True:
                    try:
                        data = sock.recv(65536).decode()
                    except BlockingIOError:
                        break
                    entries.append(dict(line.split("=", 1) for line in data.split("\n")
                                        if "=" in line))
                return [e for e in entries if e.get("HEALTH")]
            found = wait_until("a HEALTH= journal entry", entry)
            self.assertEqual(len(found), 1, found)
            e = found[0]
            self.assertEqual(e["GPU"], bdf)
            self.assertEqual(e["HEALTH"], "critical")
            self.assertEqual(e["PRIORITY"], "2")
            self.assertEqual(e["SYSLOG_IDENTIFIER"], "amdsmid")
            self.assertIn("health ok -> critical", e["MESSAGE"])
            self.assertNotIn("CHANGE", e)
            # the other entries carry no HEALTH= field
            self.assertTrue(any("ready" in x.get("MESSAGE", "") and "HEALTH" not in x
                                for x in entries))
            sock.close()

    def test_ce_injection_counts(self):
        bdf = MI300X_BDFS[2]
        with Daemon(config=FAST) as d, Monitor(d) as mon:
            ctl(d, "ras-inject", bdf, "gfx", "ce", 3)
            wait_until("CorrectableErrors 3",
                       lambda: self.prop(d, bdf, "CorrectableErrors") == 3)
            self.assertEqual(self.prop(d, bdf, "UncorrectableErrors"), 0)
            changed = wait_until("PropertiesChanged", lambda: mon.changed(gpu_path(bdf)))
            self.assertIn("CorrectableErrors", set().union(*changed))
            self.assertNotIn("UncorrectableErrors", set().union(*changed))

    def test_retired_pages(self):
        bdf = MI300X_BDFS[3]
        with Daemon(config=FAST) as d, Monitor(d) as mon:
            path = gpu_path(bdf)
            ctl(d, "retire-page", bdf, "0x1000", "P")
            wait_until("State warning", lambda: self.prop(d, bdf, "State") == "warning")
            self.assertIn(["bad_pages_pending", "warning", "1 page pending retirement"],
                          self.prop(d, bdf, "Reasons"))
            ctl(d, "retire-page", bdf, "0x2000", "F")
            wait_until("State critical", lambda: self.prop(d, bdf, "State") == "critical")
            codes = [r[0] for r in self.prop(d, bdf, "Reasons")]
            self.assertIn("bad_pages_unreservable", codes)
            events = wait_until("two Event(health)",
                                lambda: len(mon.events(path, "health")) >= 2 and
                                mon.events(path, "health"))
            self.assertEqual([e["state"] for e in events[:2]], ["warning", "critical"])
            self.assertTrue(all(e["bdf"] == bdf for e in events))
            log = d.log()
            self.assertIn("%s: health ok -> warning: 1 page pending retirement" % bdf, log)
            self.assertIn("%s: health warning -> critical" % bdf, log)

    def test_cper_fatal(self):
        bdf = MI300X_BDFS[4]
        with Daemon(config=FAST) as d, Monitor(d) as mon:
            path = gpu_path(bdf)
            ctl(d, "cper", bdf, "fatal")
            records = wait_until("Event(cper)", lambda: mon.events(path, "cper"))
            self.assertEqual(len(records), 1)
            rec = records[0]
            self.assertEqual(rec["bdf"], bdf)
            self.assertEqual(rec["severity"], "fatal")
            # the record as `amdsmi ras --cper` shows it
            doc = self.document(d, "ras-cper", gpus=[bdf])
            self.assertEqual(doc["command"], "ras")
            held = doc["gpus"][0]["cper"]["records"]
            self.assertEqual(len(held), 1)
            # plus the fields every events line has (the record keeps its own timestamp)
            event_keys = ("gpu", "bdf", "partition", "kind", "text")
            self.assertEqual((rec["gpu"], rec["partition"], rec["kind"]), (4, None, "cper"))
            self.assertEqual(rec["text"], "CPER record %s (fatal)" % held[0]["record_id"])
            self.assertEqual({k: v for k, v in rec.items() if k not in event_keys},
                             {k: v for k, v in held[0].items() if k not in event_keys})
            wait_until("State critical", lambda: self.prop(d, bdf, "State") == "critical")
            codes = [r[0] for r in self.prop(d, bdf, "Reasons")]
            self.assertIn("cper_fatal", codes)
            # a record is handed on once: a corrected one later is the second and last
            ctl(d, "cper", bdf, "corrected")
            wait_until("second Event(cper)", lambda: len(mon.events(path, "cper")) == 2)
            time.sleep(1)  # five more checks
            self.assertEqual([e["severity"] for e in mon.events(path, "cper")],
                             ["fatal", "non_fatal_corrected"])

    def test_cper_held_at_start_is_no_event(self):
        bdf = MI300X_BDFS[5]
        with Daemon(config=FAST, start=False) as d:
            ctl(d, "cper", bdf, "fatal")
            d.start()
            with Monitor(d) as mon:
                time.sleep(1)
                self.assertEqual(mon.events(gpu_path(bdf), "cper"), [])
            # ... but its verdict counts it
            self.assertEqual(self.prop(d, bdf, "State"), "critical")

    def test_driver_reload_counts_back(self):
        """A driver reload starts the counts at zero: logged, never a negative delta, and the
        CE rate counts again from the reload (the CEs before it are no rate after it)."""
        bdf = MI300X_BDFS[1]
        with Daemon(config=FAST + "[health]\nce_rate_warning_per_hour = 1000000000\n") as d:
            ctl(d, "ras-inject", bdf, "umc", "ce", 7)
            wait_until("CorrectableErrors 7", lambda: self.prop(d, bdf, "CorrectableErrors") == 7)
            drv = d.mount.path("bus/pci/drivers/amdgpu")
            with open(os.path.join(drv, "unbind"), "w") as f:
                f.write(bdf)
            wait_until("State unknown", lambda: self.prop(d, bdf, "State") == "unknown")
            with open(os.path.join(drv, "bind"), "w") as f:
                f.write(bdf)
            wait_until("CorrectableErrors 0", lambda: self.prop(d, bdf, "CorrectableErrors") == 0)
            wait_until("State ok", lambda: self.prop(d, bdf, "State") == "ok")
            self.assertIn("%s: RAS counts of block umc went back (UE 0 -> 0, CE 7 -> 0): the "
                          "driver was reloaded" % bdf, d.log())
            # one CE after the reload is one, not 1 - 7
            ctl(d, "ras-inject", bdf, "umc", "ce", 1)
            wait_until("CorrectableErrors 1", lambda: self.prop(d, bdf, "CorrectableErrors") == 1)
            self.assertEqual(self.prop(d, bdf, "State"), "ok")
            self.assertNotIn("counts_reset", [r[0] for r in self.prop(d, bdf, "Reasons")])

    def test_ce_rate_both_sides(self):
        bdf = MI300X_BDFS[6]
        # 100000 CEs an hour: one CE in the seconds amdsmid has run is below, 2000 above
        conf = FAST + "[health]\nce_rate_warning_per_hour = 100000\n"
        with Daemon(config=conf) as d:
            ctl(d, "ras-inject", bdf, "umc", "ce", 1)
            wait_until("CorrectableErrors 1", lambda: self.prop(d, bdf, "CorrectableErrors") == 1)
            time.sleep(0.5)
            self.assertEqual(self.prop(d, bdf, "State"), "ok")
            codes = [r[0] for r in self.prop(d, bdf, "Reasons")]
            self.assertNotIn("ce_rate", codes)
            self.assertNotIn("ce_rate_not_evaluated", codes)  # amdsmid has two samples
            doc = self.document(d, "health", gpus=[bdf])
            self.assertEqual(doc["gpus"][0]["health"]["state"], "ok")

            ctl(d, "ras-inject", bdf, "umc", "ce", 2000)
            wait_until("State warning", lambda: self.prop(d, bdf, "State") == "warning")
            reasons = self.prop(d, bdf, "Reasons")
            rate = [r for r in reasons if r[0] == "ce_rate"]
            self.assertEqual(len(rate), 1, reasons)
            self.assertIn("above 100000 per hour", rate[0][2])
            doc = self.document(d, "health", gpus=[bdf])
            self.assertEqual(doc["gpus"][0]["health"]["state"], "warning")
            self.assertIn("%s: health ok -> warning: 2001 correctable errors" % bdf, d.log())
            # amdsmi health through amdsmid: exit status 1 (WARNING)
            p = d.cli("health", "-g", bdf, "--json", status=1)
            self.assertEqual(json.loads(p.stdout)["gpus"][0]["health"]["state"], "warning")
            # in-process it cannot say (one sample): ok, rate not evaluated
            p = d.cli("--direct", "health", "-g", bdf, "--json", status=0)
            codes = [r["code"] for r in json.loads(p.stdout)["gpus"][0]["health"]["reasons"]]
            self.assertIn("ce_rate_not_evaluated", codes)

    def test_privileged_parts(self):
        bdf = MI300X_BDFS[0]
        with Daemon() as d:
            ctl(d, "cper", bdf, "corrected")
            ctl(d, "retire-page", bdf, "0x3000", "R")
            # root: everything, without polkit
            bp = self.document(d, "bad-pages", gpus=[bdf])["gpus"][0]["bad_pages"]
            self.assertIsInstance(bp["threshold"], int)
            self.assertIsNone(bp["threshold_error"])
            self.assertEqual(len(self.document(d, "ras-cper", gpus=[bdf])["gpus"][0]["cper"]
                                 ["records"]), 1)

            # nobody, polkit allows nothing: the rest of the document, those parts said
            doc = self.document(d, "bad-pages", user=NOBODY, gpus=[bdf])
            bp = doc["gpus"][0]["bad_pages"]
            self.assertEqual(bp["count"], 1)
            self.assertIsNone(bp["threshold"])
            self.assertEqual(bp["threshold_error"], "needs root (debugfs)")
            self.assertIn("needs root (debugfs)", json.dumps(doc["errors"]))
            doc = self.document(d, "ras-cper", user=NOBODY, gpus=[bdf])
            self.assertIsNone(doc["gpus"][0]["cper"])
            self.assertIn("needs root (debugfs)", json.dumps(doc["errors"]))
            # counts and verdicts need nothing
            self.assertEqual(self.document(d, "ras", user=NOBODY)["gpus"][0]["ecc"]
                             ["correctable_total"], 1)
            self.assertIn(self.document(d, "health", user=NOBODY)["gpus"][0]["health"]
                          ["state"], ("ok", "warning"))
            self.assertEqual(self.prop(d, bdf, "CorrectableErrors", user=NOBODY), 1)

            # polkit allows the action: the records and the threshold
            d.allow(PRIVILEGED)
            bp = self.document(d, "bad-pages", user=NOBODY, gpus=[bdf])["gpus"][0]["bad_pages"]
            self.assertIsInstance(bp["threshold"], int)
            records = self.document(d, "ras-cper", user=NOBODY, gpus=[bdf])["gpus"][0]["cper"]
            self.assertEqual([r["severity"] for r in records["records"]],
                             ["non_fatal_corrected"])
            # and the CLI as nobody through amdsmid
            p = d.cli("ras", "--cper", "-g", bdf, "--json", user=NOBODY)
            self.assertEqual(len(json.loads(p.stdout)["gpus"][0]["cper"]["records"]), 1)

            # another action allowed is not this one
            d.allow("org.amdsmi1.power.configure")
            bp = self.document(d, "bad-pages", user=NOBODY, gpus=[bdf])["gpus"][0]["bad_pages"]
            self.assertIsNone(bp["threshold"])

    def test_unknown_verb_lists_health_verbs(self):
        with Daemon() as d:
            with self.assertRaises(BusError) as cm:
                d.call(ROOT, MANAGER, "GetDocument", "sa{sv}", "nope", 0)
            self.assertIn("unknown verb 'nope'", str(cm.exception.args))
            self.assertIn("metric-ecc, ras, ras-cper, bad-pages, health", str(cm.exception.args))

    def test_documents_as_direct(self):
        """ras, ras --cper, bad-pages, metric -e, monitor (its ECC columns): through amdsmid as
        in-process, byte for byte; as root and as nobody (polkit denying: the same "needs
        root" as in-process)."""
        blind = __import__("test-daemon-documents").blind
        cases = [("ras",), ("ras", "-g", "1"), ("ras", "--cper"), ("ras", "--cper", "-g", "0"),
                 ("bad-pages",), ("bad-pages", "-g", "0"), ("metric", "-e"),
                 ("metric", "-e", "-g", "0"), ("monitor",)]
        with Daemon(sim_args=("--frozen",), start=False) as d:
            # before amdsmid starts: its first sample has them (no CE rate from them)
            ctl(d, "ras-inject", MI300X_BDFS[0], "umc", "ce", 5)
            ctl(d, "retire-page", MI300X_BDFS[0], "0x4000", "R")
            ctl(d, "cper", MI300X_BDFS[0], "corrected")
            d.start()
            # the ECC columns are there, and say the injected CEs
            self.assertIn("UE  CE", d.cli("monitor", user=blind(d)).stdout)
            doc = json.loads(d.cli("metric", "-e", "--json", "-g", "0", user=blind(d)).stdout)
            self.assertEqual(doc["command"], "metric")
            # 5 injected, 1 the corrected CPER record counts (as the driver does)
            self.assertEqual(doc["gpus"][0]["ecc"]["correctable_total"], 6)
            for user in (None, NOBODY):
                for case in cases:
                    for fmt in ((), ("--json",), ("--csv",)):
                        args = case + fmt
                        with self.subTest(user=user, args=" ".join(args)):
                            via = d.cli(*args, user=blind(d, user), status=None)
                            direct = d.cli("--direct", *args, user=user, status=None)
                            self.assertEqual(via.returncode, direct.returncode, via.stderr)
                            self.assertEqual(STAMP.sub("T", via.stdout),
                                             STAMP.sub("T", direct.stdout))
                            self.assertEqual(via.stderr, direct.stderr)
                            self.assertNotEqual(via.stdout, "")
            # health: the same document but for what only amdsmid evaluates (the CE rate, the
            # link errors that grow)
            via = json.loads(d.cli("health", "--json", user=blind(d), status=None).stdout)
            direct = json.loads(d.cli("--direct", "health", "--json", status=None).stdout)
            for doc in (via, direct):
                doc["timestamp"] = "T"
                for g in doc["gpus"]:
                    # what amdsmid counts between its checks: null in-process
                    self.assertEqual(g["links"]["pcie_replays_in_window"] is None,
                                     doc is direct)
                    g["links"]["pcie_replays_in_window"] = None
                    # MI300X has no XGMI error counter (EINVAL): null through amdsmid too
                    self.assertIsNone(g["links"]["xgmi_errors_total"])
                    g["health"]["reasons"] = [r for r in g["health"]["reasons"]
                                              if r["code"] not in ("ce_rate_not_evaluated",
                                                                   "link_errors_not_evaluated")]
            self.assertEqual(via, direct)


if __name__ == "__main__":
    unittest.main(verbosity=2)
