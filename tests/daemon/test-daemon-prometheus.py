#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""amdsmid's Prometheus endpoint and textfile (amdsmid(8) METRICS), with real components.

amdsmid runs under systemd-socket-activate, which listens on free loopback ports and passes
the sockets named "metrics" as amdsmid-metrics.socket does (a first connection starts it).
The tests check the HTTP statuses (200, 404, 405, 431, HEAD), the OpenMetrics negotiation,
that slow and idle connections stall neither D-Bus nor other scrapers, [metrics] identity,
`promtool check metrics` on every simulator preset, the cache within interval_ms, a real
Prometheus server scraping amdsmid (a gauge, a counter's rate(), the info join, the series of
the 8 partitions after a live SPX -> CPX change) and the textfile read by a real
node_exporter.

Tools: systemd-socket-activate (systemd), promtool and prometheus (prometheus),
prometheus-node-exporter. A test whose tool is missing is skipped, and fails under CI
(CI=true): there the tools are installed (.ci/install-deps.sh).
"""

import http.client
import json
import os
import re
import shutil
import socket
import stat
import subprocess
import threading
import time
import unittest
import urllib.parse
import urllib.request

from daemontest import (GPU0, NOBODY, SIM, BusError, Daemon, gpu_path, mkdtemp, remove_tree,
                        require_daemon, wait_until)

PARTITION = "org.amdsmi1.Partition"
OPENMETRICS = "application/openmetrics-text; version=1.0.0; charset=utf-8"
TEXT = "text/plain; version=0.0.4; charset=utf-8"
# what Prometheus 2.42 sends
PROMETHEUS_ACCEPT = ("application/openmetrics-text;version=1.0.0,application/openmetrics-text;"
                     "version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1")


def need_tool(test, name, package):
    path = shutil.which(name)
    if path:
        return path
    if os.environ.get("CI"):
        test.fail("%s is missing (Debian package %s): CI must have it" % (name, package))
    test.skipTest("%s is missing (Debian package %s)" % (name, package))


def free_port(family=socket.AF_INET, host="127.0.0.1"):
    with socket.socket(family, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def ipv6_loopback():
    try:
        with socket.socket(socket.AF_INET6, socket.SOCK_STREAM) as s:
            s.bind(("::1", 0))
        return True
    except OSError:
        return False


def request(port, method="GET", path="/metrics", headers=None, host="127.0.0.1", timeout=30):
    """(status, headers dict with lower-case names, body bytes)"""
    c = http.client.HTTPConnection(host, port, timeout=timeout)
    try:
        c.request(method, path, headers=headers or {})
        r = c.getresponse()
        return r.status, {k.lower(): v for k, v in r.getheaders()}, r.read()
    finally:
        c.close()


def scrape(port, accept=None, **kw):
    status, headers, body = request(port, headers={"Accept": accept} if accept else None, **kw)
    if status != 200:
        raise AssertionError("GET /metrics: %d %r" % (status, body[:200]))
    return headers, body.decode()


def samples(text, family):
    """{labels string: value} of @family's samples (no timestamps: two fields)."""
    out = {}
    for line in text.splitlines():
        m = re.match(r"^%s(\{[^}]*\})? (\S+)$" % re.escape(family), line)
        if m:
            out[m.group(1) or ""] = float(m.group(2))
    return out


class Exporter(Daemon):
    """A Daemon started under systemd-socket-activate on free loopback ports: self.port (IPv4)
    and, with ipv6=True, self.port6 ([::1])."""

    def __init__(self, ipv6=False, **kw):
        super().__init__(start=False, **kw)
        self.ipv6 = ipv6
        self.port = None
        self.port6 = None

    def _setup(self):
        super()._setup()
        activate = shutil.which("systemd-socket-activate")
        if not activate:
            raise AssertionError("systemd-socket-activate is missing (Debian package systemd)")
        self.port = free_port()
        listen = ["-l", "127.0.0.1:%d" % self.port]
        names = ["metrics"]
        if self.ipv6:
            self.port6 = free_port(socket.AF_INET6, "::1")
            listen += ["-l", "[::1]:%d" % self.port6]
            names.append("metrics")
        # systemd-socket-activate passes only the variables named with -E
        keys = sorted(self.env(kfd=self.use_kfd, NOTIFY_SOCKET="x"))
        self.wrapper = ([activate] + listen + ["--fdname=" + ":".join(names)]
                        + ["-E" + k for k in keys])
        self.start(wait=False)
        # it execs amdsmid on the first connection: this one is answered once amdsmid runs
        first = {}

        def poke():
            try:
                first["status"] = request(self.port, path="/", timeout=60)[0]
            except OSError as e:
                first["error"] = e

        def listening():
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return True
            except OSError:
                if self.proc.poll() is not None:
                    raise AssertionError("systemd-socket-activate exited: " + self.log())
                return False

        # the connection that checks it listens already starts amdsmid
        wait_until("systemd-socket-activate listening", listening)
        t = threading.Thread(target=poke)
        t.start()
        self.wait_ready()
        t.join(60)
        if first.get("status") != 200:
            raise AssertionError("the first connection got %r: %s" % (first, self.log()))


class Http(unittest.TestCase):
    def test_statuses(self):
        with Exporter(ipv6=ipv6_loopback()) as d:
            headers, text = scrape(d.port)
            self.assertEqual(headers["content-type"], TEXT)
            self.assertEqual(samples(text, "amdsmi_up"), {"": 1.0})
            self.assertEqual(len(samples(text, "amdsmi_gpu_power_watts")), 8)
            # HEAD: the same headers, no body
            status, h, body = request(d.port, "HEAD")
            self.assertEqual((status, body), (200, b""))
            self.assertEqual(h["content-type"], TEXT)
            self.assertEqual(int(h["content-length"]), len(text.encode()))
            # the connection is kept alive (Prometheus reuses its own): three scrapes, one
            # TCP connection
            c = http.client.HTTPConnection("127.0.0.1", d.port, timeout=30)
            try:
                for _ in range(3):
                    c.request("GET", "/metrics")
                    r = c.getresponse()
                    self.assertEqual(r.status, 200)
                    self.assertGreater(len(r.read()), 1000)
                    self.assertFalse(r.will_close, r.getheaders())
                    self.assertNotEqual((r.getheader("connection") or "").lower(), "close")
                # a 404 keeps it too
                c.request("GET", "/nothing")
                r = c.getresponse()
                r.read()
                self.assertEqual((r.status, r.will_close), (404, False))
            finally:
                c.close()
            # the root page names /metrics; query strings are no other path
            status, h, body = request(d.port, path="/")
            self.assertEqual(status, 200)
            self.assertTrue(h["content-type"].startswith("text/plain"), h)
            self.assertIn(b"/metrics", body)
            self.assertEqual(request(d.port, path="/metrics?x=1")[0], 200)
            for path in ("/metric", "/metrics/", "/index.html", "/../metrics", "/METRICS"):
                status, h, body = request(d.port, path=path)
                self.assertEqual(status, 404, path)
                self.assertIn(b"/metrics", body)
            for method in ("POST", "PUT", "DELETE", "OPTIONS", "PATCH"):
                status, h, body = request(d.port, method, headers={"Content-Length": "0"})
                self.assertEqual(status, 405, method)
                self.assertEqual(h.get("allow"), "GET, HEAD", method)
            # a POST with a body is answered without reading it
            status, h, _ = request(d.port, "POST", headers={"Content-Length": "5"})
            self.assertEqual(status, 405)
            # header fields beyond the connection's memory: 431, as MHD answers
            status, h, _ = request(d.port, headers={"X-Big": "a" * 20000})
            self.assertEqual(status, 431)
            status, h, _ = request(d.port, headers={"X-%d" % i: "b" * 100 for i in range(200)})
            self.assertEqual(status, 431)
            # the endpoint still serves, and the IPv6 loopback socket too
            self.assertEqual(scrape(d.port)[1].count("# HELP amdsmi_up "), 1)
            if d.port6:
                self.assertEqual(scrape(d.port6, host="::1")[0]["content-type"], TEXT)
            # bad requests are logged at debug level only: none reached amdsmid's log
            # (systemd-socket-activate's "Listening on 127.0.0.1:PORT" lines may hold them)
            log = "\n".join(line for line in d.log().splitlines()
                             if not line.startswith("Listening on "))
            self.assertNotRegex(log, r"\b40[45]\b")
            self.assertIn("metrics endpoint: serving /metrics on %d socket"
                          % (2 if d.port6 else 1), log)

    def test_openmetrics(self):
        with Exporter() as d:
            h, om = scrape(d.port, accept="application/openmetrics-text; version=1.0.0")
            self.assertEqual(h["content-type"], OPENMETRICS)
            self.assertEqual(om.splitlines()[-1], "# EOF")
            self.assertTrue(om.endswith("# EOF\n"))
            self.assertIn("# UNIT amdsmi_gpu_power_watts watts", om)
            # what Prometheus itself asks for
            h, _ = scrape(d.port, accept=PROMETHEUS_ACCEPT)
            self.assertEqual(h["content-type"], OPENMETRICS)
            # text/plain preferred, or nothing said: the text format, without # EOF
            for accept in (None, "text/plain", "*/*",
                           "application/openmetrics-text;q=0.1,text/plain;q=0.9"):
                h, text = scrape(d.port, accept=accept)
                self.assertEqual(h["content-type"], TEXT, accept)
                self.assertNotIn("# EOF", text)
            # the same series either way (OpenMetrics names a counter's family without _total
            # and may add _created samples)
            def names(t):
                return {re.split(r"[{ ]", line)[0] for line in t.splitlines()
                        if line and not line.startswith("#")} - {
                    n for n in re.findall(r"^(\S+_created)[{ ]", t, re.M)}
            self.assertEqual(names(om), names(text))
            self.assertGreaterEqual(len(names(text)), 15)

    def test_slow_and_idle_connections(self):
        """A slowloris client and 50 idle connections stall neither D-Bus nor other scrapers;
        the idle ones are closed after the connection timeout."""
        with Exporter() as d:
            scrape(d.port)
            idle = [socket.create_connection(("127.0.0.1", d.port), timeout=30)
                    for _ in range(50)]
            slow = socket.create_connection(("127.0.0.1", d.port), timeout=30)
            slow.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Slow: ")
            try:
                for _ in range(6):
                    slow.sendall(b"a")  # a byte at a time: a request that never ends
                    t0 = time.monotonic()
                    d.busctl("get-property", "org.amdsmi1", "/org/amdsmi1",
                             "org.amdsmi1.Manager", "Version")
                    dbus_s = time.monotonic() - t0
                    self.assertLess(dbus_s, 2.0, "a D-Bus call took %.3f s" % dbus_s)
                    t0 = time.monotonic()
                    _, text = scrape(d.port, timeout=10)
                    self.assertEqual(samples(text, "amdsmi_up"), {"": 1.0})
                    self.assertLess(time.monotonic() - t0, 5.0)
                    time.sleep(0.5)
                # the idle connections (nothing sent) are closed by amdsmid after its 10 s
                # connection timeout; the slow one, once it stops sending
                deadline = time.monotonic() + 25
                for s in idle + [slow]:
                    s.settimeout(max(0.1, deadline - time.monotonic()))
                    try:
                        data = s.recv(4096)
                    except socket.timeout:
                        self.fail("a connection stayed open beyond the connection timeout")
                    except ConnectionResetError:
                        data = b""
                    self.assertEqual(data, b"")
            finally:
                for s in idle + [slow]:
                    s.close()
            self.assertEqual(samples(scrape(d.port)[1], "amdsmi_up"), {"": 1.0})

    def test_no_socket_no_endpoint(self):
        # started without a socket: amdsmid runs as before, says so at debug level only
        with Daemon(env={"AMDSMI_DEBUG": "1"}) as d:
            d.describe()
            log = d.log()
            self.assertIn("metrics endpoint: no socket named metrics passed", log)
            self.assertNotIn("serving /metrics", log)


class Families(unittest.TestCase):
    def test_identity(self):
        with Exporter() as d:
            info = samples(scrape(d.port)[1], "amdsmi_gpu_info")
            self.assertEqual(len(info), 8)
            for labels in info:
                self.assertRegex(labels, r'serial="[^"]+"')
                self.assertRegex(labels, r'unique_id="0x[0-9a-f]{16}"')
        with Exporter(config="[metrics]\nidentity = no\n") as d:
            text = scrape(d.port)[1]
            info = samples(text, "amdsmi_gpu_info")
            self.assertEqual(len(info), 8)
            for labels in info:
                self.assertRegex(labels, r'product="MI300X"')
                self.assertNotIn("serial=", labels)
                self.assertNotIn("unique_id=", labels)
            self.assertNotIn("serial=", text)
            self.assertNotIn("unique_id=", text)

    def test_promtool_every_preset(self):
        promtool = need_tool(self, "promtool", "prometheus")
        machines = [line.split()[0] for line in subprocess.run(
            [SIM, "list-machines"], capture_output=True, text=True, check=True).stdout.splitlines()
            if line.strip()]
        self.assertGreaterEqual(len(machines), 10, machines)
        for machine in machines:
            with self.subTest(machine=machine), Exporter(machine=machine) as d:
                text = scrape(d.port)[1]
                p = subprocess.run([promtool, "check", "metrics"], input=text,
                                   capture_output=True, text=True, timeout=60)
                self.assertEqual((p.returncode, p.stdout + p.stderr), (0, ""), machine)
                self.assertEqual(samples(text, "amdsmi_up"), {"": 1.0}, machine)
                self.assertGreaterEqual(len(samples(text, "amdsmi_gpu_info")), 1, machine)
                # no sentinel leaks: every value is a number Prometheus takes
                for line in text.splitlines():
                    if line and not line.startswith("#"):
                        self.assertNotRegex(line.rsplit(" ", 1)[1], r"^(-1|nan|NaN)$", line)

    def test_cached_within_interval(self):
        """Scrapes within [metrics] interval_ms get the same rendering, byte for byte, while
        the simulated telemetry moves; the next period's differs."""
        with Exporter(config="[metrics]\ninterval_ms = 4000\n") as d:
            t0 = time.monotonic()
            first = scrape(d.port)[1]
            results = []

            def scraper():
                for _ in range(5):
                    results.append(scrape(d.port)[1])

            threads = [threading.Thread(target=scraper) for _ in range(4)]
            for t in threads:
                t.start()
            for t in threads:
                t.join(30)
            om = scrape(d.port, accept="application/openmetrics-text")[1]
            again = scrape(d.port, accept="application/openmetrics-text")[1]
            within = time.monotonic() - t0
            self.assertLess(within, 3.5, "the scrapes took too long to be in one period")
            self.assertEqual(len(results), 20)
            for r in results:
                self.assertEqual(r, first)
            self.assertEqual(om, again)
            # the next period: a new collection (the energy counters moved)
            time.sleep(4.5 - within)
            later = scrape(d.port)[1]
            self.assertNotEqual(later, first)
            self.assertNotEqual(samples(later, "amdsmi_gpu_energy_joules_total"),
                                samples(first, "amdsmi_gpu_energy_joules_total"))
            dur = samples(later, "amdsmi_scrape_duration_seconds")[""]
            self.assertGreater(dur, 0)
            self.assertLess(dur, 4.0)


class OpenWatch:
    """inotify IN_OPEN on the files of some directories (any process): what was opened."""
    IN_OPEN = 0x20

    def __init__(self, *dirs):
        import ctypes
        import ctypes.util
        self.libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
        self.fd = self.libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
        if self.fd < 0:
            raise OSError(ctypes.get_errno(), "inotify_init1")
        self.dirs = {}
        for d in dirs:
            wd = self.libc.inotify_add_watch(self.fd, d.encode(), self.IN_OPEN)
            if wd < 0:
                raise OSError(ctypes.get_errno(), "inotify_add_watch " + d)
            self.dirs[wd] = d

    def opened(self):
        """The paths opened since the last call."""
        import struct
        out = []
        while True:
            try:
                data = os.read(self.fd, 65536)
            except BlockingIOError:
                return out
            off = 0
            while off < len(data):
                wd, _, _, n = struct.unpack_from("iIII", data, off)
                name = data[off + 16:off + 16 + n].rstrip(b"\0").decode()
                out.append(os.path.join(self.dirs.get(wd, "?"), name))
                off += 16 + n

    def close(self):
        os.close(self.fd)


class DeviceNodes(unittest.TestCase):
    def test_scrapes_open_no_device_node(self):
        """Scrapes (and the textfile) never open /dev/kfd or a DRM node: an inotify watch on
        the device root sees none, while an in-process `amdsmi static` (which asks the render
        node for the firmware versions) is seen, so the watch works."""
        with Exporter(config="[metrics]\ninterval_ms = 200\n") as d:
            dri = os.path.join(d.dev_dir, "dri")
            os.makedirs(dri, exist_ok=True)
            for minor in range(128, 136):
                open(os.path.join(dri, "renderD%d" % minor), "w").close()
            watch = OpenWatch(d.dev_dir, dri)
            self.addCleanup(watch.close)
            for _ in range(4):
                scrape(d.port)
                scrape(d.port, accept="application/openmetrics-text")
                time.sleep(0.25)  # a new collection each time
            d.cli("metric", "--prometheus")
            self.assertEqual(watch.opened(), [])
            # the control: the CLI in-process opens the render node
            d.cli("--direct", "static", "-g", "0", status=None)
            self.assertIn(os.path.join(dri, "renderD128"), watch.opened())


class Health(unittest.TestCase):
    def test_injected_errors_reach_the_families(self):
        """An uncorrectable error injected into a GPU's RAS counts shows in the ECC counter
        and turns its health series critical, without a restart."""
        with Exporter(config="[metrics]\ninterval_ms = 200\n") as d:
            text = scrape(d.port)[1]
            key = '{gpu="%s",state="critical"}' % GPU0
            self.assertEqual(samples(text, "amdsmi_gpu_health")[key], 0)
            ue = '{gpu="%s",block="umc",severity="uncorrectable"}' % GPU0
            before = samples(text, "amdsmi_gpu_ecc_errors_total").get(ue, 0)
            d.ctl("ras-inject", GPU0, "umc", "ue", "2")
            wait_until("the critical series", lambda: samples(
                scrape(d.port)[1], "amdsmi_gpu_health")[key] == 1, timeout=20)
            text = scrape(d.port)[1]
            self.assertEqual(samples(text, "amdsmi_gpu_ecc_errors_total")[ue], before + 2)
            ok = '{gpu="%s",state="ok"}' % GPU0
            self.assertEqual(samples(text, "amdsmi_gpu_health")[ok], 0)


class ThroughAmdsmid(unittest.TestCase):
    def test_cli_prints_what_metrics_answers(self):
        """amdsmi metric --prometheus through amdsmid prints /metrics' bytes (one collection:
        a long interval), without reading the GPUs itself (its mount namespace has an empty
        tree where the simulator is); GetDocumentText("openmetrics") is the OpenMetrics
        rendering; options, and GetDocument, are refused."""
        with Exporter(config="[metrics]\ninterval_ms = 10000\n") as d:
            scraped = scrape(d.port)[1]
            blind = ["unshare", "--mount", "--propagation", "private", "--", "sh", "-c",
                     'mount -t tmpfs amdsmi-blind "$0" && exec "$@"', d.mount.root]
            p = d.cli("metric", "--prometheus", user=blind)
            self.assertEqual(p.stdout, scraped)
            self.assertEqual(p.stderr, "")
            # as another user: the same text (the endpoint is open to every local user too)
            p = d.cli("metric", "--prometheus", user=blind + NOBODY)
            self.assertEqual(p.stdout, scraped)
            # -g: the documents of those GPUs, rendered by the CLI (through amdsmid)
            p = d.cli("metric", "--prometheus", "-g", "1", user=blind)
            self.assertEqual(len(samples(p.stdout, "amdsmi_gpu_info")), 1)
            text = d.call("/org/amdsmi1", "org.amdsmi1.Manager", "GetDocumentText",
                          "sa{sv}", "openmetrics", 0)
            om = scrape(d.port, accept="application/openmetrics-text")[1]
            self.assertEqual(text[0], om)
            self.assertTrue(text[0].endswith("# EOF\n"))
            self.assertEqual(text[1], [])
            with self.assertRaisesRegex(BusError, "prometheus takes no options"):
                d.call("/org/amdsmi1", "org.amdsmi1.Manager", "GetDocumentText", "sa{sv}",
                       "prometheus", 1, "gpus", "as", 1, "0")
            with self.assertRaisesRegex(BusError, "unknown verb 'prometheus'"):
                d.call("/org/amdsmi1", "org.amdsmi1.Manager", "GetDocument", "sa{sv}",
                       "prometheus", 0)


class PrometheusServer(unittest.TestCase):
    def query(self, port, q):
        url = "http://127.0.0.1:%d/api/v1/query?%s" % (port, urllib.parse.urlencode({"query": q}))
        with urllib.request.urlopen(url, timeout=10) as r:
            doc = json.load(r)
        self.assertEqual(doc["status"], "success", doc)
        return doc["data"]["result"]

    def test_prometheus_scrapes_amdsmid(self):
        prometheus = need_tool(self, "prometheus", "prometheus")
        with Exporter(config="[metrics]\ninterval_ms = 500\n") as d:
            tmp = mkdtemp("amdsmi-prometheus.")
            self.addCleanup(remove_tree, tmp)
            conf = os.path.join(tmp, "prometheus.yml")
            with open(conf, "w") as f:
                f.write("global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
                        "scrape_configs:\n  - job_name: amdsmi\n    static_configs:\n"
                        "      - targets: ['127.0.0.1:%d']\n" % d.port)
            port = free_port()
            log = open(os.path.join(tmp, "prometheus.log"), "w+")
            self.addCleanup(log.close)
            proc = subprocess.Popen([prometheus, "--config.file=" + conf,
                                     "--storage.tsdb.path=" + os.path.join(tmp, "data"),
                                     "--web.listen-address=127.0.0.1:%d" % port],
                                    stdout=log, stderr=subprocess.STDOUT, cwd=tmp)

            def stop():
                proc.terminate()
                try:
                    proc.wait(20)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
            self.addCleanup(stop)

            def ready():
                if proc.poll() is not None:
                    log.seek(0)
                    raise AssertionError("prometheus exited: " + log.read())
                try:
                    with urllib.request.urlopen("http://127.0.0.1:%d/-/ready" % port,
                                                timeout=2) as r:
                        return r.status == 200
                except OSError:
                    return False
            wait_until("prometheus ready", ready, timeout=60)

            def healthy():
                t = self.query(port, 'up{job="amdsmi"}')
                return t and t[0]["value"][1] == "1"
            wait_until("prometheus scraping amdsmid", healthy, timeout=30)
            # a gauge
            power = self.query(port, "amdsmi_gpu_power_watts")
            self.assertEqual(len(power), 8, power)
            for s in power:
                self.assertEqual(s["metric"]["sensor"], "socket")
                self.assertGreater(float(s["value"][1]), 0)
            # a counter's rate(): the simulated GPUs draw power, so energy grows
            rate = wait_until("a rate of the energy counters", lambda: self.query(
                port, "rate(amdsmi_gpu_energy_joules_total[5s]) > 0"), timeout=30)
            self.assertEqual(len(rate), 8, rate)
            # the info join: product from amdsmi_gpu_info
            joined = self.query(port, "amdsmi_gpu_power_watts * on(gpu) group_left(product) "
                                      "amdsmi_gpu_info")
            self.assertEqual(len(joined), 8, joined)
            self.assertEqual({s["metric"]["product"] for s in joined}, {"MI300X"})
            # SPX -> CPX through amdsmid, live: 8 partitions' series for that GPU, no restart
            sel = 'amdsmi_partition_gfx_busy_ratio{gpu="%s"}' % GPU0
            before = self.query(port, sel)
            self.assertEqual(len(before), 1, before)
            pid = d.proc.pid
            d.call(gpu_path(GPU0), PARTITION, "SetComputeMode", "st", "cpx", 0)

            def cpx():
                parts = self.query(port, sel)
                return parts if len({s["metric"]["partition"] for s in parts}) == 8 else None
            parts = wait_until("8 partition series of %s" % GPU0, cpx, timeout=60)
            self.assertEqual(sorted(int(s["metric"]["partition"]) for s in parts),
                             list(range(8)))
            mode = self.query(port, 'amdsmi_gpu_partition_info{gpu="%s"}' % GPU0)
            self.assertEqual(mode[0]["metric"]["compute_mode"], "CPX")
            self.assertIsNone(d.proc.poll())
            self.assertEqual(d.proc.pid, pid)
            # Prometheus negotiated OpenMetrics and found nothing to complain about
            log.seek(0)
            self.assertNotIn("level=warn", log.read())


class Textfile(unittest.TestCase):
    def test_node_exporter_reads_it(self):
        node_exporter = need_tool(self, "prometheus-node-exporter", "prometheus-node-exporter")
        promtool = need_tool(self, "promtool", "prometheus")
        tmp = mkdtemp("amdsmi-textfile.", 0o755)
        self.addCleanup(remove_tree, tmp)
        tdir = os.path.join(tmp, "node-exporter")
        path = os.path.join(tdir, "amdsmi.prom")
        conf = "[metrics]\ninterval_ms = 200\ntextfile = %s\n" % path
        # no socket at all: the textfile alone
        with Daemon(config=conf) as d:
            # the directory does not exist: one warning, however many intervals pass
            wait_until("the warning", lambda: "cannot write the metrics textfile" in d.log())
            time.sleep(1.0)
            self.assertEqual(d.log().count("cannot write the metrics textfile"), 1, d.log())
            self.assertIn("its directory does not exist", d.log())
            os.mkdir(tdir)
            wait_until("the textfile", lambda: os.path.exists(path))
            wait_until("the log", lambda: "is written again" in d.log())
            st = os.stat(path)
            self.assertEqual(stat.S_IMODE(st.st_mode), 0o644)
            self.assertTrue(stat.S_ISREG(os.lstat(path).st_mode))
            # rewritten every interval
            mtime = st.st_mtime_ns
            wait_until("a new write", lambda: os.stat(path).st_mtime_ns != mtime)
            with open(path) as f:
                text = f.read()
            p = subprocess.run([promtool, "check", "metrics"], input=text, capture_output=True,
                               text=True, timeout=60)
            self.assertEqual((p.returncode, p.stdout + p.stderr), (0, ""))
            # no timestamps, one HELP per family, the text format
            for line in text.splitlines():
                if line and not line.startswith("#"):
                    self.assertRegex(line, r'^[a-z_]+(\{[^}]*\})? \S+$', line)
            helps = re.findall(r"^# HELP (\S+)", text, re.M)
            self.assertEqual(len(helps), len(set(helps)))
            self.assertNotIn("# EOF", text)

            port = free_port()
            log = open(os.path.join(tmp, "node-exporter.log"), "w+")
            self.addCleanup(log.close)
            ne = subprocess.Popen([node_exporter, "--collector.disable-defaults",
                                   "--collector.textfile",
                                   "--collector.textfile.directory=" + tdir,
                                   "--web.listen-address=127.0.0.1:%d" % port],
                                  stdout=log, stderr=subprocess.STDOUT)

            def stop():
                ne.terminate()
                ne.wait(20)
            self.addCleanup(stop)

            def node_metrics():
                if ne.poll() is not None:
                    log.seek(0)
                    raise AssertionError("node_exporter exited: " + log.read())
                try:
                    return scrape(port)[1]
                except OSError:
                    return None
            for _ in range(5):  # while amdsmid rewrites the file, every 200 ms
                out = wait_until("node_exporter", node_metrics)
                self.assertEqual(samples(out, "node_textfile_scrape_error"), {"": 0.0}, out)
                self.assertIn('node_textfile_mtime_seconds{file="%s"}' % path, out)
                self.assertEqual(len(samples(out, "amdsmi_gpu_power_watts")), 8)
                self.assertEqual(samples(out, "amdsmi_up"), {"": 1.0})
                time.sleep(0.15)
            # the sampler runs all along for the textfile: still running after 5 periods
            # without any other consumer
            self.assertIn("writing the metrics textfile %s every 200 ms" % path, d.log())
        # no temporary file left behind
        self.assertEqual(sorted(os.listdir(tdir)), ["amdsmi.prom"])


class Docs(unittest.TestCase):
    """docs/prometheus/: the example scrape configuration and alert rules as promtool checks
    them, and the alerts' unit tests (when each fires)."""
    src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "docs",
                       "prometheus")

    def promtool(self, *args, cwd=None):
        promtool = need_tool(self, "promtool", "prometheus")
        p = subprocess.run([promtool] + list(args), capture_output=True, text=True, timeout=60,
                           cwd=cwd or self.src)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        return p.stdout

    def test_rules(self):
        out = self.promtool("check", "rules", "amdsmi-alerts.yml")
        self.assertIn("SUCCESS: 8 rules found", out)
        # the families the rules name are amdsmid's
        with open(os.path.join(self.src, "amdsmi-alerts.yml")) as f:
            used = set(re.findall(r"\b(amdsmi_[a-z_]+)", f.read()))
        self.assertTrue({"amdsmi_gpu_health", "amdsmi_gpu_throttle_seconds_total",
                         "amdsmi_gpu_config_in_sync", "amdsmi_up"} <= used, used)
        self.assertIn("SUCCESS", self.promtool("test", "rules", "amdsmi-alerts.test.yml"))

    def test_config(self):
        # the whole check (rule files, credential files) on a copy whose files exist
        tmp = mkdtemp("amdsmi-promconf.")
        self.addCleanup(remove_tree, tmp)
        with open(os.path.join(self.src, "prometheus.yml")) as f:
            text = f.read()
        self.assertIn("localhost:9487", text)
        for name in ("amdsmi-proxy-ca.pem", "amdsmi-token"):
            self.assertIn("/etc/prometheus/" + name, text)
            text = text.replace("/etc/prometheus/" + name, os.path.join(tmp, name))
            with open(os.path.join(tmp, name), "w") as f:
                f.write("x\n")
        with open(os.path.join(tmp, "prometheus.yml"), "w") as f:
            f.write(text)
        shutil.copy(os.path.join(self.src, "amdsmi-alerts.yml"), tmp)
        out = self.promtool("check", "config", "prometheus.yml", cwd=tmp)
        self.assertIn("SUCCESS: 8 rules found", out)


if __name__ == "__main__":
    require_daemon()
    unittest.main()
