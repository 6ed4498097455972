#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""The D-Bus contract: `amdsmid --bus-introspect=INTERFACE` (the vtables the daemon serves)
must equal the checked-in systemd/dbus/INTERFACE.xml, and the names ARCHITECTURE §6 fixes
must be in it. After a deliberate change of an interface: `ninja update-dbus-xml`."""

import difflib
import os
import subprocess
import sys
import unittest
import xml.etree.ElementTree as ET

AMDSMID = os.environ.get("AMDSMID", "")
XML_DIR = os.environ.get("AMDSMI_DBUS_XML", "")

# ARCHITECTURE §6: members and signatures tests outside the repository rely on (they may grow,
# never change)
CONTRACT = {
    "org.amdsmi1.Manager": {
        "methods": {"Describe": ("", "s"), "Reload": ("", ""), "GetHistory": ("u", "s"),
                    "GetGpuByBdf": ("s", "o"), "GetGpuByIndex": ("u", "o"),
                    "CheckIndexes": ("as", "as"), "GetTopology": ("", "s")},
        "properties": {"Version": "s"},
    },
    "org.amdsmi1.Gpu": {
        "methods": {"GetMetrics": ("", "s")},
        "properties": {"Bdf": "s", "Product": "s", "UniqueId": "s", "Role": "s"},
    },
    "org.amdsmi1.Partition": {
        "methods": {"Plan": ("ss", "s"), "SetComputeMode": ("st", None),
                    "SetMemoryMode": ("st", None), "ReloadDriver": ("t", None)},
        "properties": {"ComputeMode": "s", "MemoryMode": "s", "PendingMemoryMode": "s",
                       "AvailableComputeModes": "as"},
    },
    "org.amdsmi1.Power": {
        "methods": {"Explain": ("", "s"), "SetSource": ("sstt", None),
                    "ClearSource": ("sst", None)},
        "properties": {"CapUw": "t", "EffectiveSource": "s"},
    },
    "org.amdsmi1.Sriov": {
        "methods": {"ListVfs": ("", "s"), "SetNumVfs": ("ut", None), "BindVf": ("st", None),
                    "ReleaseVf": ("st", None)},
        "properties": {"TotalVfs": "u", "NumVfs": "u"},
    },
    "org.amdsmi1.Health": {
        "methods": {},
        "properties": {"State": "s", "Reasons": "a(sss)", "UncorrectableErrors": "t",
                       "CorrectableErrors": "t"},
        "signals": {"Event": "ss"},
    },
    "org.amdsmi1.Performance": {
        "methods": {"Explain": ("", "s"), "SetPerformanceLevel": ("st", "s"),
                    "SetDeterminism": ("ut", "s"), "SetClockLimit": ("ssut", "s"),
                    "ResetClocks": ("t", "s"), "SetPolicy": ("sst", "s")},
        "properties": {"PerformanceLevel": "s", "SocPstate": "s", "XgmiPlpd": "s"},
    },
}


def introspect(iface):
    p = subprocess.run([AMDSMID, "--bus-introspect=" + iface], capture_output=True, text=True,
                       timeout=60)
    if p.returncode != 0:
        raise AssertionError("amdsmid --bus-introspect=%s: exit %d: %s"
                             % (iface, p.returncode, p.stderr))
    return p.stdout


class Introspect(unittest.TestCase):
    def test_checked_in_xml_matches(self):
        for iface in CONTRACT:
            with self.subTest(interface=iface):
                live = introspect(iface)
                path = os.path.join(XML_DIR, iface + ".xml")
                with open(path) as f:
                    saved = f.read()
                if live != saved:
                    diff = "".join(difflib.unified_diff(saved.splitlines(True),
                                                        live.splitlines(True), path, "amdsmid"))
                    self.fail("%s differs from amdsmid --bus-introspect=%s "
                              "(ninja update-dbus-xml after a deliberate change):\n%s"
                              % (path, iface, diff))

    def test_contract(self):
        for iface, want in CONTRACT.items():
            with self.subTest(interface=iface):
                root = ET.fromstring(introspect(iface))
                nodes = root.findall("interface")
                self.assertEqual([n.get("name") for n in nodes], [iface])
                node = nodes[0]
                methods = {}
                for m in node.findall("method"):
                    ins = "".join(a.get("type") for a in m.findall("arg")
                                  if a.get("direction", "in") == "in")
                    outs = "".join(a.get("type") for a in m.findall("arg")
                                   if a.get("direction") == "out")
                    methods[m.get("name")] = (ins, outs)
                for name, (ins, outs) in want["methods"].items():
                    self.assertIn(name, methods)
                    self.assertEqual(methods[name][0], ins, name)
                    if outs is not None:
                        self.assertEqual(methods[name][1], outs, name)
                props = {p.get("name"): (p.get("type"), p.get("access"))
                         for p in node.findall("property")}
                for name, sig in want["properties"].items():
                    self.assertEqual(props.get(name), (sig, "read"), name)
                signals = {s.get("name"): "".join(a.get("type") for a in s.findall("arg"))
                           for s in node.findall("signal")}
                for name, sig in want.get("signals", {}).items():
                    self.assertEqual(signals.get(name), sig, name)

    def test_all_and_unknown(self):
        root = ET.fromstring(introspect("all"))
        self.assertEqual([n.get("name") for n in root.findall("interface")], list(CONTRACT))
        p = subprocess.run([AMDSMID, "--bus-introspect=org.amdsmi1.Nope"], capture_output=True,
                           text=True)
        self.assertNotEqual(p.returncode, 0)
        self.assertIn('unknown interface "org.amdsmi1.Nope"', p.stderr)
        self.assertEqual(p.stdout, "")


if __name__ == "__main__":
    if not AMDSMID or not os.access(AMDSMID, os.X_OK) or not os.path.isdir(XML_DIR):
        sys.exit("FAIL: AMDSMID and AMDSMI_DBUS_XML must name amdsmid and systemd/dbus")
    unittest.main(verbosity=2)
