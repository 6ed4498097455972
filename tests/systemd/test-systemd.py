#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Checks the OS integration files of systemd/ and their installation.

usage: test-systemd.py polkit|bus-policy|install [unittest options]

  polkit      org.amdsmi1.policy is valid against polkit's DTD and declares exactly the
              actions of ARCHITECTURE §2, with their defaults and texts; every action id that
              a C source names is declared.
  bus-policy  org.amdsmi1.conf is well formed, and a private dbus-daemon with a system bus's
              default policy plus this file enforces it: root may own org.amdsmi1 and nobody
              else may; an unprivileged caller reaches amdsmid's interfaces and the standard
              ones, and nothing else.
  install     `meson install --destdir` of the build directory puts every file where the
              install options say; the installed units (amdsmid.service and
              amdsmid-metrics.socket) pass `systemd-analyze verify`, the socket listens on
              loopback and passes its sockets named "metrics"; the service keeps
              what amdsmid needs from its sandbox and matches the D-Bus activation file; the
              tmpfiles.d lines create amdsmi's directories under `systemd-tmpfiles --root`.

env (tests/systemd/meson.build): SRCDIR, BUILDDIR, SYSTEMD_BUILDDIR, AMDSMID (the daemon
executable in the build directory), UNIT_DIR, TMPFILES_DIR, DBUS_CONF_DIR, DBUS_SERVICES_DIR,
DBUS_INTERFACES_DIR, POLKIT_ACTIONS_DIR, SBINDIR, MANDIR, MAN ("true" when man pages are
installed).

Needs root (bus-policy runs a client as nobody; install creates root-owned directories),
xmllint (libxml2-utils), polkit's DTD (polkitd), dbus-daemon, busctl, systemd-analyze and
systemd-tmpfiles (systemd), python3-dbusmock and setpriv. Without them the tests fail, they
never skip. Nothing outside a temporary directory is written.
"""

import filecmp
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import unittest
import xml.etree.ElementTree as ET

ENV = os.environ
SRCDIR = ENV.get("SRCDIR", "")
SYSTEMD_SRC = os.path.join(SRCDIR, "systemd")

BUS_NAME = "org.amdsmi1"

# ARCHITECTURE §2 (polkit actions) and §6 (which change needs which action). driver.reload
# stops everything on a whole hive: it asks every time.
ACTIONS = {
    "org.amdsmi1.partition.configure": "auth_admin_keep",
    "org.amdsmi1.power.configure": "auth_admin_keep",
    "org.amdsmi1.power.set-platform-limit": "auth_admin_keep",
    "org.amdsmi1.sriov.configure": "auth_admin_keep",
    "org.amdsmi1.vm.provision": "auth_admin_keep",
    "org.amdsmi1.driver.reload": "auth_admin",
    "org.amdsmi1.performance.configure": "auth_admin_keep",
    # a GPU reset ends the work on a whole hive, as a reload does
    "org.amdsmi1.gpu.reset": "auth_admin",
    # reads, not changes: a remote or inactive administrator may read them too
    "org.amdsmi1.health.read-privileged": ("auth_admin", "auth_admin", "auth_admin"),
    # other users' processes: an active local session sees them, as with ps
    "org.amdsmi1.process.list": ("auth_admin", "auth_admin", "yes"),
}

# ARCHITECTURE §2: amdsmid's interfaces, and the standard ones its objects implement.
OWN_INTERFACES = [
    "org.amdsmi1.Manager",
    "org.amdsmi1.Gpu",
    "org.amdsmi1.Partition",
    "org.amdsmi1.Power",
    "org.amdsmi1.Sriov",
    "org.amdsmi1.Health",
    "org.amdsmi1.Performance",
]
STD_INTERFACES = [
    "org.freedesktop.DBus.Properties",
    "org.freedesktop.DBus.Introspectable",
    "org.freedesktop.DBus.Peer",
    "org.freedesktop.DBus.ObjectManager",
]

POLKIT_DTD = "/usr/share/polkit-1/policyconfig-1.dtd"
NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]

# What Debian package brings each tool, for the failure messages.
PACKAGES = {
    "xmllint": "libxml2-utils",
    "dbus-daemon": "dbus-daemon",
    "busctl": "systemd",
    "systemd-analyze": "systemd",
    "systemd-tmpfiles": "systemd",
    "setpriv": "util-linux",
    "meson": "meson",
}


def tool(test, name):
    path = shutil.which(name)
    if not path:
        test.fail(f"{name} not found (Debian package {PACKAGES.get(name, name)})")
    return path


def need_root(test):
    if os.geteuid() != 0:
        test.fail("this test needs root (CI runs as root)")


def run(argv, **kwargs):
    return subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          timeout=kwargs.pop("timeout", 60), **kwargs)


def read_unit(path):
    """A unit or D-Bus service file as {section: [(key, value), ...]} (keys may repeat)."""
    sections = {}
    current = None
    with open(path, encoding="utf-8") as f:
        for raw in f:
            line = raw.strip()
            if not line or line[0] in "#;":
                continue
            if line.startswith("[") and line.endswith("]"):
                current = sections.setdefault(line[1:-1], [])
                continue
            if current is None or "=" not in line:
                raise ValueError(f"{path}: unexpected line {line!r}")
            key, value = line.split("=", 1)
            current.append((key.strip(), value.strip()))
    return sections


def values(sections, section, key):
    return [v for k, v in sections.get(section, []) if k == key]


def value(sections, section, key):
    found = values(sections, section, key)
    return found[-1] if found else None


def enabled(sections, section, key):
    return (value(sections, section, key) or "no").lower() in ("yes", "true", "1", "on")


def words(sections, section, key):
    out = []
    for v in values(sections, section, key):
        if v == "":
            out = []            # an empty assignment resets a list setting
        else:
            out.extend(v.split())
    return out


class Polkit(unittest.TestCase):
    path = os.path.join(SYSTEMD_SRC, "org.amdsmi1.policy")

    def setUp(self):
        self.root = ET.parse(self.path).getroot()

    def test_dtd_valid(self):
        xmllint = tool(self, "xmllint")
        self.assertTrue(os.path.exists(POLKIT_DTD),
                        f"{POLKIT_DTD} not found (Debian package polkitd)")
        r = run([xmllint, "--noout", "--nonet", "--dtdvalid", POLKIT_DTD, self.path])
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertEqual(r.stderr, "")

    def test_vendor(self):
        self.assertEqual(self.root.tag, "policyconfig")
        self.assertEqual(self.root.findtext("vendor"), "amdsmi")

    def test_actions_are_the_architecture_list(self):
        ids = [a.get("id") for a in self.root.findall("action")]
        self.assertEqual(len(ids), len(set(ids)), f"duplicate action ids: {ids}")
        self.assertEqual(sorted(ids), sorted(ACTIONS))

    def test_defaults(self):
        for action in self.root.findall("action"):
            aid = action.get("id")
            d = action.find("defaults")
            self.assertIsNotNone(d, aid)
            want = ACTIONS.get(aid)
            if not isinstance(want, tuple):
                want = ("no", "no", want)
            self.assertEqual((d.findtext("allow_any"), d.findtext("allow_inactive"),
                              d.findtext("allow_active")), want, aid)

    def test_texts(self):
        for action in self.root.findall("action"):
            aid = action.get("id")
            description = (action.findtext("description") or "").strip()
            message = (action.findtext("message") or "").strip()
            # polkit agents show the description as a title and the message as a sentence
            self.assertTrue(description, f"{aid}: no description")
            self.assertFalse(description.endswith("."), f"{aid}: {description!r}")
            self.assertTrue(message.startswith("Authentication is required to "),
                            f"{aid}: {message!r}")
            self.assertTrue(message.endswith("."), f"{aid}: {message!r}")

    def test_sources_name_declared_actions(self):
        """A C source naming an undeclared action would ask polkit for nothing it knows."""
        pattern = re.compile(r'"(org\.amdsmi1\.[a-z][a-z-]*\.[a-z][a-z-]*)"')
        unknown = []
        for top in os.listdir(SRCDIR):
            if top.startswith(".") or top in ("subprojects", "tests"):
                continue
            for dirpath, dirnames, filenames in os.walk(os.path.join(SRCDIR, top)):
                dirnames[:] = [d for d in dirnames if not d.startswith(".")]
                for name in filenames:
                    if not name.endswith((".c", ".h")):
                        continue
                    path = os.path.join(dirpath, name)
                    with open(path, encoding="utf-8", errors="replace") as f:
                        for aid in pattern.findall(f.read()):
                            if aid not in ACTIONS:
                                unknown.append(f"{os.path.relpath(path, SRCDIR)}: {aid}")
        self.assertEqual(unknown, [])


class BusPolicy(unittest.TestCase):
    path = os.path.join(SYSTEMD_SRC, "org.amdsmi1.conf")

    def test_well_formed(self):
        xmllint = tool(self, "xmllint")
        r = run([xmllint, "--noout", "--nonet", self.path])
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertEqual(r.stderr, "")

    def test_rules(self):
        root = ET.parse(self.path).getroot()
        self.assertEqual(root.tag, "busconfig")
        owners = []
        default_sends = []
        for policy in root.findall("policy"):
            for rule in policy:
                if rule.tag == "allow" and rule.get("own") is not None:
                    owners.append((policy.get("user"), policy.get("context"), rule.get("own")))
                if (policy.get("context") == "default" and rule.tag == "allow"
                        and rule.get("send_destination") is not None):
                    default_sends.append((rule.get("send_destination"),
                                          rule.get("send_interface")))
        self.assertEqual(owners, [("root", None, BUS_NAME)])
        self.assertEqual(sorted(default_sends),
                         sorted((BUS_NAME, i) for i in OWN_INTERFACES + STD_INTERFACES))

    def test_enforced_by_dbus_daemon(self):
        need_root(self)
        dbus_daemon = tool(self, "dbus-daemon")
        busctl = tool(self, "busctl")
        tool(self, "setpriv")
        r = run(["/usr/bin/python3", "-c", "import dbusmock"])
        self.assertEqual(r.returncode, 0, "python3-dbusmock is missing: " + r.stderr)

        tmp = tempfile.mkdtemp(prefix="amdsmi-bus-policy.")
        self.addCleanup(shutil.rmtree, tmp, ignore_errors=True)
        os.chmod(tmp, 0o755)            # nobody connects to the socket in it
        socket = os.path.join(tmp, "system_bus_socket")
        conf = os.path.join(tmp, "system.conf")
        # The default policy of Debian's system.conf (dbus 1.14), then the file under test.
        with open(conf, "w", encoding="utf-8") as f:
            f.write(f"""<busconfig>
  <type>system</type>
  <listen>unix:path={socket}</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow user="*"/>
    <deny own="*"/>
    <deny send_type="method_call"/>
    <allow send_type="signal"/>
    <allow send_requested_reply="true" send_type="method_return"/>
    <allow send_requested_reply="true" send_type="error"/>
    <allow receive_type="method_call"/>
    <allow receive_type="method_return"/>
    <allow receive_type="error"/>
    <allow receive_type="signal"/>
    <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus"/>
    <allow send_destination="org.freedesktop.DBus"
           send_interface="org.freedesktop.DBus.Introspectable"/>
    <allow send_destination="org.freedesktop.DBus"
           send_interface="org.freedesktop.DBus.Properties"/>
  </policy>
  <include>{self.path}</include>
</busconfig>
""")
        log = open(os.path.join(tmp, "dbus-daemon.log"), "w+", encoding="utf-8")
        self.addCleanup(log.close)
        bus = subprocess.Popen([dbus_daemon, "--config-file=" + conf, "--nofork",
                                "--print-address=1"],
                               stdout=subprocess.PIPE, stderr=log, text=True)
        self.addCleanup(stop, bus)
        address = bus.stdout.readline().strip()
        if not address:
            log.seek(0)
            self.fail("dbus-daemon did not start: " + log.read())

        def call(argv, as_nobody):
            return run((NOBODY if as_nobody else []) + [busctl, "--address=" + address, "call"]
                       + argv, timeout=20)

        def owner():
            r = call(["org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                      "NameHasOwner", "s", BUS_NAME], False)
            return r.returncode == 0 and r.stdout.strip() == "b true"

        # root owns the name (dbusmock stands in for amdsmid): only this file allows it
        mock_log = open(os.path.join(tmp, "dbusmock.log"), "w+", encoding="utf-8")
        self.addCleanup(mock_log.close)
        mock = subprocess.Popen(["/usr/bin/python3", "-m", "dbusmock", "--system", BUS_NAME,
                                 "/org/amdsmi1", "org.amdsmi1.Manager"],
                                env=dict(ENV, DBUS_SYSTEM_BUS_ADDRESS=address),
                                stdout=mock_log, stderr=subprocess.STDOUT)
        self.addCleanup(stop, mock)
        deadline = time.monotonic() + 15
        while not owner():
            if mock.poll() is not None or time.monotonic() > deadline:
                mock_log.seek(0)
                self.fail(f"root could not own {BUS_NAME}: " + mock_log.read())
            time.sleep(0.1)

        # A method on each interface, and on one that the policy does not list.
        for iface in OWN_INTERFACES + ["org.amdsmi1.Internal"]:
            r = call([BUS_NAME, "/org/amdsmi1", "org.freedesktop.DBus.Mock", "AddMethod",
                      "sssss", iface, "Probe", "", "", ""], False)
            self.assertEqual(r.returncode, 0, r.stderr)
        r = call([BUS_NAME, "/org/amdsmi1", "org.freedesktop.DBus.Mock", "AddMethod", "sssss",
                  "org.freedesktop.DBus.ObjectManager", "GetManagedObjects", "",
                  "a{oa{sa{sv}}}", "ret = {}"], False)
        self.assertEqual(r.returncode, 0, r.stderr)

        allowed = [[BUS_NAME, "/org/amdsmi1", iface, "Probe"] for iface in OWN_INTERFACES]
        allowed += [
            [BUS_NAME, "/org/amdsmi1", "org.freedesktop.DBus.Properties", "GetAll", "s",
             "org.amdsmi1.Manager"],
            [BUS_NAME, "/org/amdsmi1", "org.freedesktop.DBus.Introspectable", "Introspect"],
            [BUS_NAME, "/org/amdsmi1", "org.freedesktop.DBus.Peer", "Ping"],
            [BUS_NAME, "/org/amdsmi1", "org.freedesktop.DBus.ObjectManager",
             "GetManagedObjects"],
        ]
        for argv in allowed:
            r = call(argv, True)
            self.assertEqual(r.returncode, 0, f"nobody: {' '.join(argv)}: {r.stderr.strip()}")

        denied = [
            [BUS_NAME, "/org/amdsmi1", "org.amdsmi1.Internal", "Probe"],
            [BUS_NAME, "/org/amdsmi1", "org.freedesktop.DBus.Mock", "AddMethod", "sssss",
             "org.amdsmi1.Manager", "Other", "", "", ""],
            ["org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
             "RequestName", "su", BUS_NAME, "0"],
        ]
        for argv in denied:
            r = call(argv, True)
            self.assertNotEqual(r.returncode, 0, f"nobody: {' '.join(argv)} was allowed")
            self.assertIn("Access denied", r.stderr, f"nobody: {' '.join(argv)}")

        # root may send anything to amdsmid
        r = call([BUS_NAME, "/org/amdsmi1", "org.amdsmi1.Internal", "Probe"], False)
        self.assertEqual(r.returncode, 0, r.stderr)


def stop(proc):
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    for stream in (proc.stdout, proc.stderr):
        if stream:
            stream.close()


class Install(unittest.TestCase):
    """One DESTDIR install, shared by the checks below."""

    destdir = None
    install_error = None

    @classmethod
    def setUpClass(cls):
        cls.destdir = tempfile.mkdtemp(prefix="amdsmi-install.")
        cls.addClassCleanup(shutil.rmtree, cls.destdir, True)  # also when the rest here fails
        amdsmid = ENV.get("AMDSMID", "")
        if not amdsmid:
            cls.install_error = "the build has no amdsmid target"
            return
        if not os.path.exists(amdsmid):
            cls.install_error = (f"{amdsmid} is not built (ninja -C {ENV['BUILDDIR']} amdsmid), "
                                 "so `meson install` cannot install it")
            return
        meson = shutil.which("meson")
        if not meson:
            cls.install_error = "meson not found"
            return
        r = run([meson, "install", "-C", ENV["BUILDDIR"], "--no-rebuild",
                 "--destdir", cls.destdir], timeout=300)
        if r.returncode != 0:
            cls.install_error = "meson install failed:\n" + r.stdout + r.stderr

    def setUp(self):
        if self.install_error:
            self.fail(self.install_error)

    def installed(self, dir_var, name):
        path = self.destdir + os.path.join(ENV[dir_var], name)
        self.assertTrue(os.path.isfile(path), f"{name} is not installed in ${dir_var} "
                        f"({ENV[dir_var]})")
        return path

    def unit(self):
        return read_unit(self.installed("UNIT_DIR", "amdsmid.service"))

    def test_files_in_place(self):
        for dir_var, name, source in [
            ("DBUS_CONF_DIR", "org.amdsmi1.conf", "org.amdsmi1.conf"),
            ("POLKIT_ACTIONS_DIR", "org.amdsmi1.policy", "org.amdsmi1.policy"),
            ("TMPFILES_DIR", "amdsmi.conf", "amdsmi-tmpfiles.conf"),
            ("UNIT_DIR", "amdsmid-metrics.socket", "amdsmid-metrics.socket"),
        ]:
            path = self.installed(dir_var, name)
            self.assertTrue(filecmp.cmp(path, os.path.join(SYSTEMD_SRC, source), shallow=False),
                            f"{path} differs from systemd/{source}")
        for dir_var, name in [("UNIT_DIR", "amdsmid.service"),
                              ("DBUS_SERVICES_DIR", "org.amdsmi1.service")]:
            path = self.installed(dir_var, name)
            self.assertTrue(filecmp.cmp(path, os.path.join(ENV["SYSTEMD_BUILDDIR"], name),
                                        shallow=False), path)
            with open(path, encoding="utf-8") as f:
                self.assertEqual(re.findall(r"@[A-Za-z_]+@", f.read()), [], path)

    def test_interface_xml_installed(self):
        xml_dir = os.path.join(SYSTEMD_SRC, "dbus")
        names = sorted(n for n in os.listdir(xml_dir) if n.endswith(".xml")) \
            if os.path.isdir(xml_dir) else []
        for name in names:
            path = self.installed("DBUS_INTERFACES_DIR", name)
            self.assertTrue(filecmp.cmp(path, os.path.join(xml_dir, name), shallow=False), path)

    def test_amdsmid_installed(self):
        path = self.destdir + os.path.join(ENV["SBINDIR"], "amdsmid")
        self.assertTrue(os.path.isfile(path) and os.access(path, os.X_OK),
                        f"amdsmid is not installed in {ENV['SBINDIR']}")

    def test_libvirt_hook_installed(self):
        """The hook in libexecdir, and the link libvirt runs in its qemu.d directory."""
        hook = os.path.join(ENV["LIBEXECDIR"], "amdsmi-libvirt-hook")
        self.assertTrue(os.access(self.destdir + hook, os.X_OK), f"{hook} is not installed")
        link = self.destdir + os.path.join(ENV["QEMU_HOOKS_DIR"], "50-amdsmi")
        self.assertTrue(os.path.islink(link), f"{link} is not a link")
        self.assertEqual(os.readlink(link), hook)
        if ENV.get("MAN") == "true":
            self.assertTrue(os.path.isfile(self.destdir + os.path.join(
                ENV["MANDIR"], "man8", "amdsmi-libvirt-hook.8")))

    def test_unit(self):
        u = self.unit()
        s = "Service"
        self.assertEqual(values(u, s, "ExecStart"), [os.path.join(ENV["SBINDIR"], "amdsmid")])
        self.assertEqual(value(u, s, "Type"), "notify")
        self.assertEqual(value(u, s, "BusName"), BUS_NAME)
        self.assertNotIn(value(u, s, "WatchdogSec"), (None, "0", "infinity"))
        self.assertEqual(value(u, s, "Restart"), "on-failure")
        self.assertEqual(value(u, s, "ExecReload"), "/bin/kill -HUP $MAINPID")
        # ARCHITECTURE §2: /var/lib/amdsmi, /run/amdsmi (kept across restarts), /etc/amdsmi
        self.assertEqual(words(u, s, "StateDirectory"), ["amdsmi"])
        self.assertEqual(words(u, s, "RuntimeDirectory"), ["amdsmi"])
        self.assertEqual(value(u, s, "RuntimeDirectoryPreserve"), "yes")
        # RuntimeDirectoryMode= applies to every directory RuntimeDirectory= lists: only
        # /run/amdsmi (0755, the BMC agent writes apml/), never its 0700 lock directory
        self.assertEqual(value(u, s, "RuntimeDirectoryMode"), "0755")
        self.assertEqual(value(u, s, "StateDirectoryMode"), "0755")
        for d in words(u, s, "RuntimeDirectory") + words(u, s, "StateDirectory"):
            self.assertNotIn("/", d, "a subdirectory would get the parent's mode")
        self.assertEqual(words(u, s, "ConfigurationDirectory"), ["amdsmi"])
        self.assertIn("man:amdsmid(8)", words(u, "Unit", "Documentation"))
        self.assertEqual(words(u, "Install", "WantedBy"), ["multi-user.target"])
        self.assertEqual(words(u, "Install", "Alias"), ["dbus-org.amdsmi1.service"])

    def test_sandbox_keeps_what_amdsmid_needs(self):
        u = self.unit()
        s = "Service"
        # sysfs writes (partitions, power caps, sriov_numvfs, driver bind/unbind)
        self.assertFalse(enabled(u, s, "ProtectKernelTunables"),
                         "ProtectKernelTunables= makes /sys read-only")
        self.assertNotEqual(value(u, s, "ProtectSystem"), "strict",
                            "ProtectSystem=strict makes /sys read-only")
        for key in ("InaccessiblePaths", "ReadOnlyPaths"):
            for p in words(u, s, key):
                self.assertFalse(p.lstrip("-+").startswith(("/sys", "/proc", "/dev", "/run")),
                                 f"{key}={p}")
        # the gim VF count in /etc/modprobe.d, under ProtectSystem=full
        self.assertIn("/etc/modprobe.d",
                      [p.lstrip("-") for p in words(u, s, "ReadWritePaths")],
                      "ReadWritePaths= must hold /etc/modprobe.d")
        # the selector file of SetProfile (amdsmi apply --profile), under ProtectSystem=full
        self.assertIn("/etc/amdsmi",
                      [p.lstrip("-") for p in words(u, s, "ReadWritePaths")],
                      "ReadWritePaths= must hold /etc/amdsmi (the profile selector)")
        # the NFD feature file, under ProtectSystem=full; "-": NFD need not be installed
        self.assertIn("-/etc/kubernetes/node-feature-discovery/features.d",
                      words(u, s, "ReadWritePaths"),
                      "ReadWritePaths= must hold -/etc/kubernetes/node-feature-discovery/"
                      "features.d")
        # DRM nodes and the VFIO group nodes
        self.assertFalse(enabled(u, s, "PrivateDevices"),
                         "PrivateDevices= hides /dev/dri and /dev/vfio")
        if value(u, s, "DevicePolicy") in ("closed", "strict"):
            self.assertIn("char-drm rw", values(u, s, "DeviceAllow"),
                          "DevicePolicy= without DeviceAllow=char-drm rw")
            # the KFD SMI event stream ([health] events)
            self.assertIn("/dev/kfd rw", values(u, s, "DeviceAllow"),
                          "DevicePolicy= without DeviceAllow=/dev/kfd rw")
        # /proc/PID/fd of every process (who holds a GPU or a VF)
        self.assertIn(value(u, s, "ProtectProc"), (None, "default"),
                      "ProtectProc= hides other processes' /proc/PID/fd")
        caps = words(u, s, "CapabilityBoundingSet")
        for cap in ("CAP_SYS_ADMIN", "CAP_SYS_PTRACE", "CAP_DAC_OVERRIDE"):
            self.assertIn(cap, caps, "CapabilityBoundingSet=")
        # D-Bus, the journal, polkit, libvirt; the udev monitor (netlink, host namespace)
        families = words(u, s, "RestrictAddressFamilies")
        self.assertIn("AF_UNIX", families, "RestrictAddressFamilies=")
        self.assertIn("AF_NETLINK", families, "RestrictAddressFamilies=")
        self.assertFalse(enabled(u, s, "PrivateNetwork"),
                         "PrivateNetwork= cuts amdsmid off from udev's uevents")
        self.assertEqual(value(u, s, "User"), None, "amdsmid runs as root")

    def test_activation_matches_unit(self):
        u = self.unit()
        a = read_unit(self.installed("DBUS_SERVICES_DIR", "org.amdsmi1.service"))
        d = "D-BUS Service"
        self.assertEqual(value(a, d, "Name"), BUS_NAME)
        self.assertEqual(value(a, d, "Name"), value(u, "Service", "BusName"))
        self.assertEqual(value(a, d, "User"), "root")
        self.assertEqual(value(a, d, "Exec"), "/bin/false")
        self.assertIn(value(a, d, "SystemdService"), words(u, "Install", "Alias"))

    def test_systemd_analyze_verify(self):
        """The unit as systemd loads it: no unknown key, no bad value, the binary is there."""
        analyze = tool(self, "systemd-analyze")
        unit = self.installed("UNIT_DIR", "amdsmid.service")
        exec_start = "ExecStart=" + os.path.join(ENV["SBINDIR"], "amdsmid")
        amdsmid = self.destdir + os.path.join(ENV["SBINDIR"], "amdsmid")
        self.assertTrue(os.access(amdsmid, os.X_OK), f"{amdsmid} is not installed")
        # verify checks that ExecStart= exists: point it at the DESTDIR copy
        vdir = os.path.join(self.destdir, "verify")
        os.makedirs(vdir)
        with open(unit, encoding="utf-8") as f:
            text = f.read()
        self.assertIn(exec_start + "\n", text)
        with open(os.path.join(vdir, "amdsmid.service"), "w", encoding="utf-8") as f:
            f.write(text.replace(exec_start + "\n", "ExecStart=" + amdsmid + "\n"))
        # the metrics socket beside it: verify loads the service its Service= names
        shutil.copy(self.installed("UNIT_DIR", "amdsmid-metrics.socket"), vdir)
        # --man=no: the man pages are checked below, in the DESTDIR, not on this machine.
        # verify exits 0 on unknown keys and bad values, so any output fails the test.
        r = run([analyze, "verify", "--man=no", os.path.join(vdir, "amdsmid.service"),
                 os.path.join(vdir, "amdsmid-metrics.socket")],
                env=dict(ENV, SYSTEMD_LOG_LEVEL="info", SYSTEMD_LOG_COLOR="0",
                         SYSTEMD_PAGER="cat"))
        self.assertEqual((r.returncode, r.stdout + r.stderr), (0, ""))

    def test_metrics_socket(self):
        """amdsmid-metrics.socket: loopback only, its sockets named as amdsmid takes them and
        passed to amdsmid.service, enabled with sockets.target."""
        u = read_unit(self.installed("UNIT_DIR", "amdsmid-metrics.socket"))
        s = "Socket"
        self.assertEqual(values(u, s, "ListenStream"), ["127.0.0.1:9487", "[::1]:9487"])
        self.assertEqual(value(u, s, "FileDescriptorName"), "metrics")
        self.assertTrue(enabled(u, s, "FreeBind"))
        self.assertEqual(value(u, s, "Service"), "amdsmid.service")
        self.assertFalse(enabled(u, s, "Accept"), "amdsmid accepts the connections itself")
        self.assertEqual(words(u, "Install", "WantedBy"), ["sockets.target"])
        self.assertIn("man:amdsmid(8)", words(u, "Unit", "Documentation"))
        # the name amdsmid looks for (fleet/http-metrics.c)
        with open(os.path.join(SRCDIR, "fleet", "http-metrics.c"), encoding="utf-8") as f:
            self.assertIn('#define HTTP_FD_NAME "metrics"', f.read())
        # the sandbox lets amdsmid accept on passed TCP sockets: accept() is no socket(),
        # so RestrictAddressFamilies= need not list AF_INET; PrivateNetwork= would cut the
        # passed sockets off nothing, but IPAddressDeny= would drop the scrapers
        svc = self.unit()
        self.assertEqual(words(svc, "Service", "IPAddressDeny"), [])
        self.assertFalse(enabled(svc, "Service", "PrivateNetwork"))

    def test_documentation_installed(self):
        if ENV.get("MAN") != "true":
            return          # -Dman=false installs no page to look for
        missing = []
        for doc in words(self.unit(), "Unit", "Documentation"):
            m = re.fullmatch(r"man:([A-Za-z0-9_.-]+)\(([1-8])\)", doc)
            self.assertIsNotNone(m, doc)
            page = os.path.join(ENV["MANDIR"], "man" + m.group(2),
                                f"{m.group(1)}.{m.group(2)}")
            if not os.path.isfile(self.destdir + page):
                missing.append(page)
        self.assertEqual(missing, [], "Documentation= names pages that are not installed")

    def test_tmpfiles(self):
        need_root(self)
        tmpfiles = tool(self, "systemd-tmpfiles")
        conf = self.installed("TMPFILES_DIR", "amdsmi.conf")
        root = os.path.join(self.destdir, "tmpfiles-root")
        os.makedirs(root)
        r = run([tmpfiles, "--create", "--root=" + root, conf],
                env=dict(ENV, SYSTEMD_LOG_COLOR="0"))
        self.assertEqual((r.returncode, r.stdout + r.stderr), (0, ""))
        # the lock directory is root's alone: whoever can open a lock file can hold it
        with open(os.path.join(SRCDIR, "lib", "util", "gpu-lock.h")) as f:
            m = re.search(r"#define GPU_LOCK_DIR_MODE (0[0-7]+)", f.read())
        self.assertIsNotNone(m, "GPU_LOCK_DIR_MODE in lib/util/gpu-lock.h")
        self.assertEqual(int(m.group(1), 8), 0o700)
        modes = {"run/amdsmi": 0o755, "run/amdsmi/apml": 0o755,
                 "run/amdsmi/lock": int(m.group(1), 8), "var/lib/amdsmi": 0o755}
        for d, mode in modes.items():
            st = os.lstat(os.path.join(root, d))
            self.assertTrue(os.path.isdir(os.path.join(root, d)) and
                            not os.path.islink(os.path.join(root, d)), d)
            self.assertEqual(oct(st.st_mode & 0o7777), oct(mode), d)
            self.assertEqual((st.st_uid, st.st_gid), (0, 0), d)


SUITES = {"polkit": Polkit, "bus-policy": BusPolicy, "install": Install}

if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1] not in SUITES:
        sys.exit(f"usage: {sys.argv[0]} {'|'.join(SUITES)} [unittest options]")
    suite = SUITES[sys.argv.pop(1)]
    unittest.main(defaultTest=suite.__name__, verbosity=2)
