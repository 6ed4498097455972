#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""amdsmid's VM provisioning on org.amdsmi1.Manager (PrepareVm, ReleaseVm, ListVms): VFs
reserved for a domain, those the host binds (managed='no') bound to vfio-pci and given back,
the domain's vm power source joining the arbitration, a VF another domain holds refused with
its name, the VF count of a PF under a domain refused, all or nothing on failures,
reservations kept across a restart, gim hosts (recorded, explained), authorisation."""

import json
import os
import re
import subprocess
import time
import unittest

from daemontest import (BUS, CLI, GPU0, GPU1, MANAGER, NOBODY, ROOT, SIM, Daemon, gpu_path,
                        require_daemon, vf_bdf)

W = 1000000
UUID1 = "c7a5fdbd-cdaf-9455-926a-d65c16db1809"
UUID2 = "6695eb01-f6a4-8304-79aa-97f2502e193f"
IFACE_POWER = "org.amdsmi1.Power"
IFACE_SRIOV = "org.amdsmi1.Sriov"


def opts_args(opts):
    """busctl's arguments of an a{sv} from a dict of (signature, value)."""
    out = [len(opts)]
    for k, (sig, val) in opts.items():
        out += [k, sig]
        if sig == "as":
            out += [len(val)] + list(val)
        elif sig == "a{st}":
            out += [len(val)]
            for a, b in val.items():
                out += [a, b]
        elif sig == "b":
            out += ["true" if val else "false"]
        else:
            out += [val]
    return out


def schema_errors(test, doc):
    """Checks @doc against amdsmi-1.schema.json (python3-jsonschema)."""
    import jsonschema
    with open(os.environ["AMDSMI_SCHEMA"]) as f:
        schema = json.load(f)
    errors = [("/".join(map(str, e.absolute_path)), e.message[:200])
              for e in jsonschema.Draft202012Validator(schema).iter_errors(doc)]
    test.assertEqual(errors, [], "not a valid amdsmi/1 document")


class Vm(unittest.TestCase):
    def prepare(self, d, name, uuid, vfs, opts=None, user=None):
        args = [name, uuid, len(vfs)] + list(vfs) + opts_args(opts or {})
        return json.loads(d.call(ROOT, MANAGER, "PrepareVm", "ssasa{sv}", *args, user=user)[0])

    def prepare_error(self, d, name, uuid, vfs, user=None):
        """(error name, message) of a PrepareVm with no options that must fail (dbus-python:
        dbus-send cannot write an a{sv})."""
        script = ("import dbus, sys, json\n"
                  "a = json.loads(sys.argv[1])\n"
                  "m = dbus.SystemBus().get_object('org.amdsmi1', '/org/amdsmi1')\n"
                  "try:\n"
                  "    m.PrepareVm(a[0], a[1], dbus.Array(a[2], signature='s'),\n"
                  "                dbus.Dictionary({}, signature='sv'),\n"
                  "                dbus_interface='org.amdsmi1.Manager')\n"
                  "except dbus.exceptions.DBusException as e:\n"
                  "    print(json.dumps([e.get_dbus_name(), e.get_dbus_message()]))\n"
                  "    sys.exit(0)\n"
                  "sys.exit('PrepareVm succeeded')\n")
        p = subprocess.run((user or []) + ["/usr/bin/python3", "-c", script,
                                           json.dumps([name, uuid, vfs])],
                           env=d.env(), capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        return tuple(json.loads(p.stdout))

    def release(self, d, uuid, user=None):
        return json.loads(d.call(ROOT, MANAGER, "ReleaseVm", "s", uuid, user=user)[0])

    def vms(self, d):
        return json.loads(d.call(ROOT, MANAGER, "ListVms", user=NOBODY)[0])["vms"]

    def test_prepare_and_release(self):
        with Daemon(machine="mi300x-sriov") as d:
            vfs = d.with_vfs(GPU0, 2)
            self.assertEqual([d.driver(v) for v in vfs], [None, None])
            # vf 0 is managed='no' (the host binds it), vf 1 is libvirt's
            r = self.prepare(d, "web1", UUID1, vfs, {"unmanaged": ("as", [vfs[0]]),
                                                      "power_cap_uw": ("t", 450 * W)})
            self.assertEqual((r["operation"], r["name"], r["uuid"], r["result"]),
                             ("prepare", "web1", UUID1, None))
            self.assertIn("VF %s: none -> vfio-pci" % vfs[0], r["messages"])
            self.assertEqual(d.driver(vfs[0]), "vfio-pci")
            self.assertIsNone(d.driver(vfs[1]))
            # the vm source binds: min(host none, vm 450 W)
            self.assertEqual(d.device_cap(GPU0), 450 * W)
            self.assertEqual(d.get(gpu_path(GPU0), IFACE_POWER, "EffectiveSource"), "vm")
            explain = json.loads(d.call(gpu_path(GPU0), IFACE_POWER, "Explain")[0])
            self.assertEqual([(s["source"], s["vm"], s["vf_bdf"], s["cap_w"])
                              for s in explain["sources"]], [("vm", "web1", vfs[0], 450)])
            # listed for everyone
            (v,) = self.vms(d)
            self.assertEqual((v["name"], v["uuid"], v["cap_w"]), ("web1", UUID1, 450))
            self.assertEqual([(f["bdf"], f["pf_bdf"], f["bound_by_amdsmid"], f["driver"])
                              for f in v["vfs"]],
                             [(vfs[0], GPU0, True, "vfio-pci"), (vfs[1], GPU0, False, "none")])
            self.assertEqual(v["power"], [{"pf_bdf": GPU0, "source": "vm", "key": "web1",
                                           "cap_w": 450}])
            # the VF count of that PF is not changed under the domain, FORCE or not
            for flags in (0, 2):
                name, msg = d.call_error(gpu_path(GPU0), IFACE_SRIOV, "SetNumVfs", "uint32:0",
                                         "uint64:%d" % flags)
                self.assertEqual(name, "org.amdsmi1.Error.Busy")
                self.assertIn("is assigned to domain web1", msg)
            # a second domain asking for a held VF: refused, naming the holder; nothing changes
            name, msg = self.prepare_error(d, "db2", UUID2, [vfs[1]])
            self.assertEqual(name, "org.amdsmi1.Error.Busy")
            self.assertIn("VF %s is held by domain web1 (%s)" % (vfs[1], UUID1), msg)
            self.assertEqual(len(self.vms(d)), 1)

            # release: the driver back, the source gone, the default cap applied again
            r = self.release(d, UUID1)
            self.assertEqual((r["operation"], r["result"]), ("release", None))
            self.assertIsNone(d.driver(vfs[0]))
            self.assertEqual(d.device_cap(GPU0), 750 * W)
            self.assertEqual(d.get(gpu_path(GPU0), IFACE_POWER, "EffectiveSource"), "default")
            self.assertEqual(self.vms(d), [])
            # a second release: nothing held, a success that says so
            r = self.release(d, UUID1)
            self.assertEqual(r["released"], False)
            # now the other domain may have it, and the VF count may change again
            self.prepare(d, "db2", UUID2, [vfs[1]])
            self.release(d, UUID2)
            d.call(gpu_path(GPU0), IFACE_SRIOV, "SetNumVfs", "ut", 0, 0)
            # every step in the history
            changes = [(e["change"], e["result"]) for e in d.history()
                       if e["change"].startswith("vm_")]
            self.assertEqual(changes, [("vm_prepare", "ok"), ("vm_release", "ok"),
                                       ("vm_prepare", "ok"), ("vm_release", "ok")])

    def test_per_vf_caps_and_two_gpus(self):
        with Daemon(machine="mi300x-sriov") as d:
            a = d.with_vfs(GPU0, 2)
            b = d.with_vfs(GPU1, 1)
            self.prepare(d, "big", UUID1, [a[0], a[1], b[0]],
                         {"power_cap_uw": ("t", 500 * W),
                          "vf_power_caps": ("a{st}", {a[1]: 300 * W})})
            # GPU 0: the smallest of its VFs' caps; GPU 1: the domain's
            self.assertEqual(d.device_cap(GPU0), 300 * W)
            self.assertEqual(d.device_cap(GPU1), 500 * W)
            # another domain's source on GPU 0: the minimum rule over VMs
            self.assertEqual(len(self.vms(d)), 1)
            self.release(d, UUID1)
            self.assertEqual((d.device_cap(GPU0), d.device_cap(GPU1)),
                             (750 * W, 750 * W))

    def test_all_or_nothing(self):
        with Daemon(machine="mi300x-sriov") as d:
            vfs = d.with_vfs(GPU0, 2)
            # the second bind fails (its driver_override cannot be written): the first is undone
            rel = "bus/pci/devices/%s/driver_override" % vfs[1]
            p = subprocess.run([SIM, "ctl", "--mount", d.mount.root, "inject", rel, "EIO",
                                "once", "write"], capture_output=True, text=True)
            self.assertEqual(p.returncode, 0, p.stderr)
            args = ["web1", UUID1, 2, vfs[0], vfs[1]] + opts_args(
                {"unmanaged": ("as", vfs), "power_cap_uw": ("t", 400 * W)})
            p = d.busctl("call", BUS, ROOT, MANAGER, "PrepareVm", "ssasa{sv}", *args, check=False)
            self.assertNotEqual(p.returncode, 0)
            self.assertIn("cannot bind VF %s to vfio-pci" % vfs[1], p.stderr)
            self.assertEqual([d.driver(v) for v in vfs], [None, None])
            self.assertEqual(d.device_cap(GPU0), 750 * W)
            self.assertEqual(self.vms(d), [])

    def test_refusals(self):
        with Daemon(machine="mi300x-sriov") as d:
            vfs = d.with_vfs(GPU0, 1)
            for args, err, text in (
                    (("web1", "nonsense", [vfs[0]]), "InvalidArgument", "is not a UUID"),
                    (("", UUID1, [vfs[0]]), "InvalidArgument", "bad domain name"),
                    (("web1", UUID1, []), "InvalidArgument", "no VF given"),
                    (("web1", UUID1, [GPU0]), "InvalidArgument", "is not a VF of this host"),
                    (("web1", UUID1, ["0000:99:00.0"]), "NotFound", "no AMD GPU function"),
                    (("web1", UUID1, ["zz"]), "InvalidArgument", "is not a PCI address"),
                    (("web1", UUID1, [vfs[0], vfs[0]]), "InvalidArgument", "given twice")):
                name, msg = self.prepare_error(d, *args)
                self.assertEqual(name, "org.amdsmi1.Error." + err, msg)
                self.assertIn(text, msg)
            p = d.busctl("call", BUS, ROOT, MANAGER, "PrepareVm", "ssasa{sv}", "web1", UUID1, 1,
                         vfs[0], 1, "colour", "s", "blue", check=False)
            self.assertIn("unknown option \"colour\"", p.stderr)
            p = d.busctl("call", BUS, ROOT, MANAGER, "PrepareVm", "ssasa{sv}", "web1", UUID1, 1,
                         vfs[0], 1, "power_cap_uw", "t", 0, check=False)
            self.assertIn("is not a power cap", p.stderr)
            name, _ = d.call_error(ROOT, MANAGER, "ReleaseVm", "string:x")
            self.assertEqual(name, "org.amdsmi1.Error.InvalidArgument")
            # unprivileged: vm.provision is polkit's to grant
            name, msg = self.prepare_error(d, "web1", UUID1, [vfs[0]], user=NOBODY)
            self.assertEqual(name, "org.amdsmi1.Error.PermissionDenied")
            d.allow("org.amdsmi1.vm.provision")
            self.prepare(d, "web1", UUID1, [vfs[0]], user=NOBODY)
            self.assertEqual(len(self.vms(d)), 1)
            self.assertEqual(self.vms(d)[0]["vfs"][0]["bdf"], vfs[0])

    def test_damaged_reservation(self):
        """Each field of a reservation damaged in turn: the others are read, the damaged one is
        kept verbatim, its VFs and the VF count are left alone (StateDamaged), and ReleaseVm of
        its UUID drops it."""
        with Daemon(machine="mi300x-sriov") as d:
            vfs = d.with_vfs(GPU0, 3)
            other = d.with_vfs(GPU1, 1)  # db2's, on another PF
            self.prepare(d, "web1", UUID1, [vfs[0]], {"unmanaged": ("as", [vfs[0]]),
                                                      "power_cap_uw": ("t", 450 * W)})
            self.prepare(d, "db2", UUID2, other)
            path = os.path.join(d.state_dir, "state.json")
            with open(path) as f:
                good = json.load(f)
            rec = good["vms"][UUID1]
            fields = [(k,) for k in rec if k != "created_usec"] + \
                     [("vfs", 0, k) for k in rec["vfs"][0]] + [("vfs", 0), ()]
            self.assertGreaterEqual(len(fields), 8)
            for where in fields:
                doc = json.loads(json.dumps(good))
                if not where:
                    doc["vms"][UUID1] = "broken"
                else:
                    o = doc["vms"][UUID1]
                    for part in where[:-1]:
                        o = o[part]
                    o[where[-1]] = {"broken": True} if where[-1] != "bind" else "yes"
                    if where[-1] in ("bind", "bound"):
                        continue  # booleans read leniently: not damage
                d.stop()
                with open(path, "w") as f:
                    json.dump(doc, f)
                d.start()
                # the other domain is read; the damaged one is listed as damaged
                listed = json.loads(d.call(ROOT, MANAGER, "ListVms", user=NOBODY)[0])
                self.assertEqual([v["uuid"] for v in listed["vms"]], [UUID2], where)
                self.assertEqual([x["uuid"] for x in listed["damaged"]], [UUID1], where)
                p = subprocess.run([CLI, "vm", "--json"], env=d.env(), capture_output=True,
                                   text=True, timeout=60)
                self.assertEqual(p.returncode, 0, p.stderr)
                cli_doc = json.loads(p.stdout)
                schema_errors(self, cli_doc)
                self.assertTrue(any(UUID1 in e["message"] and "damaged" in e["message"]
                                    for e in cli_doc["errors"]), cli_doc["errors"])
                # the VF count waits, whatever the flags
                name, msg = d.call_error(gpu_path(GPU0), IFACE_SRIOV, "SetNumVfs", "uint32:0",
                                         "uint64:2")
                self.assertEqual(name, "org.amdsmi1.Error.StateDamaged", (where, msg))
                self.assertIn(UUID1, msg)
                # its VF is not handed to another domain: the record names it, or its PF,
                # or no address at all
                name, msg = self.prepare_error(d, "other", "1" * 32, [vfs[0]])
                self.assertEqual(name, "org.amdsmi1.Error.StateDamaged", (where, msg))
                # another change of the state keeps the damaged record verbatim
                self.release(d, UUID2)
                with open(path) as f:
                    self.assertEqual(json.load(f)["vms"][UUID1], doc["vms"][UUID1], where)
                # a record that names no PCI address at all may hold any VF
                if re.search(r"[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]",
                             json.dumps(doc["vms"][UUID1])):
                    self.prepare(d, "db2", UUID2, other)
                    self.release(d, UUID2)
                else:
                    name, msg = self.prepare_error(d, "db2", UUID2, other)
                    self.assertEqual(name, "org.amdsmi1.Error.StateDamaged", (where, msg))
            # the drop, through the CLI: named by its UUID
            p = subprocess.run([CLI, "vm", "release", "--force", UUID1], env=d.env(),
                               capture_output=True, text=True, timeout=60)
            self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
            self.assertIn("damaged reservation of %s was dropped" % UUID1, p.stdout)
            with open(path) as f:
                self.assertNotIn(UUID1, json.load(f).get("vms", {}))
            self.assertEqual([(e["change"], e["new"]) for e in d.history()
                              if e["change"] == "vm_release"][-1],
                             ("vm_release", "damaged %s" % UUID1))
            # the whole section damaged: no advice that cannot work
            d.stop()
            doc = json.loads(json.dumps(good))
            doc["vms"] = "x"
            with open(path, "w") as f:
                json.dump(doc, f)
            d.start()
            listed = json.loads(d.call(ROOT, MANAGER, "ListVms", user=NOBODY)[0])
            self.assertEqual(listed["damaged"], [{"uuid": None,
                                                  "problem": "\"vms\" is not an object"}])
            name, msg = d.call_error(gpu_path(GPU0), IFACE_SRIOV, "SetNumVfs", "uint32:0",
                                     "uint64:2")
            self.assertEqual(name, "org.amdsmi1.Error.StateDamaged", msg)
            self.assertIn("until it is repaired or removed", msg)
            self.assertNotIn("release --force", msg)
            p = subprocess.run([CLI, "vm"], env=d.env(), capture_output=True, text=True,
                               timeout=60)
            self.assertIn("\"vms\" section of the state file is damaged", p.stderr)
            self.assertNotIn("release --force", p.stderr)
            with open(path) as f:
                self.assertEqual(json.load(f)["vms"], "x")
            # a file that cannot be read at all: its reservations are unknown, so the same
            d.stop()
            text = json.dumps(good)[:-10]
            with open(path, "w") as f:
                f.write(text)
            d.start()
            listed = json.loads(d.call(ROOT, MANAGER, "ListVms", user=NOBODY)[0])
            self.assertEqual([x["uuid"] for x in listed["damaged"]], [None])
            name, msg = d.call_error(gpu_path(GPU0), IFACE_SRIOV, "SetNumVfs", "uint32:0",
                                     "uint64:2")
            self.assertEqual(name, "org.amdsmi1.Error.StateDamaged", msg)
            name, msg = self.prepare_error(d, "db3", "2" * 32, [vfs[2]])
            self.assertEqual(name, "org.amdsmi1.Error.StateDamaged", msg)
            p = subprocess.run([CLI, "vm"], env=d.env(), capture_output=True, text=True,
                               timeout=60)
            self.assertIn("damaged", p.stderr)
            with open(path) as f:
                self.assertEqual(f.read(), text)

    def test_kept_across_restarts_and_reconnect(self):
        with Daemon(machine="mi300x-sriov") as d:
            vfs = d.with_vfs(GPU0, 2)
            self.prepare(d, "web1", UUID1, [vfs[0]], {"unmanaged": ("as", [vfs[0]]),
                                                      "power_cap_uw": ("t", 420 * W)})
            d.stop()
            d.start()
            (v,) = self.vms(d)
            self.assertEqual((v["name"], v["vfs"][0]["bound_by_amdsmid"]), ("web1", True))
            # the refusal holds after the restart too
            name, _ = self.prepare_error(d, "db2", UUID2, [vfs[0]])
            self.assertEqual(name, "org.amdsmi1.Error.Busy")
            # reconnect: nothing changes for a recorded domain; a missing one is recorded
            r = self.prepare(d, "web1", UUID1, [vfs[0]], {"reconnect": ("b", True)})
            self.assertEqual(r["operation"], "reconnect")
            r = self.prepare(d, "db2", UUID2, [vfs[1]], {"reconnect": ("b", True)})
            self.assertEqual(d.driver(vfs[1]), None)  # recorded, not bound
            self.assertEqual(sorted(v["name"] for v in self.vms(d)), ["db2", "web1"])
            # the release after the restart gives back what the first start bound
            self.release(d, UUID1)
            self.assertIsNone(d.driver(vfs[0]))
            self.assertEqual(d.device_cap(GPU0), 750 * W)
            self.release(d, UUID2)
            self.assertEqual(self.vms(d), [])

    def test_cli(self):
        with Daemon(machine="mi300x-sriov") as d:
            vfs = d.with_vfs(GPU0, 2)
            p = d.cli("vm", user=NOBODY)
            self.assertIn("no domain holds a VF", p.stderr)
            self.prepare(d, "web1", UUID1, vfs, {"unmanaged": ("as", [vfs[0]]),
                                                  "vf_power_caps": ("a{st}", {vfs[1]: 400 * W})})
            # through amdsmid and from the state file: the same document
            via = json.loads(d.cli("vm", "--json", user=NOBODY).stdout)
            direct = json.loads(d.cli("vm", "--json", "--direct").stdout)
            self.assertEqual(via["vms"], direct["vms"])
            self.assertEqual((via["schema"], via["command"]), ("amdsmi/1", "vm"))
            schema_errors(self, via)
            schema_errors(self, direct)
            (v,) = via["vms"]
            self.assertEqual([(f["bdf"], f["gpu"], f["pf_gpu"], f["bound_by_amdsmid"],
                               f["cap_w"]) for f in v["vfs"]],
                             [(vfs[0], 8, 0, True, None), (vfs[1], 9, 0, False, 400)])
            table = d.cli("vm").stdout.splitlines()
            self.assertTrue(table[0].startswith("DOMAIN"), table)
            self.assertEqual(len(table), 3)
            self.assertIn("web1", table[1])
            csv = d.cli("vm", "--csv").stdout.splitlines()
            self.assertEqual(csv[0], "name,uuid,vf,gpu,pf_gpu,driver,bound_by_amdsmid,cap_w")
            self.assertEqual(csv[2], "web1,%s,%s,9,0,none,false,400" % (UUID1, vfs[1]))
            # release: only with --force, by name or UUID, through amdsmid
            p = d.cli("vm", "release", "web1", status=2)
            self.assertIn("--force", p.stderr)
            p = d.cli("vm", "release", "nosuch", "--force", status=3)
            self.assertIn("no domain 'nosuch' holds a VF", p.stderr)
            p = d.cli("vm", "release", UUID1.upper(), "--force")
            self.assertIn("VF %s: vfio-pci -> none" % vfs[0], p.stdout)
            self.prepare(d, "web1", UUID1, [vfs[1]])
            doc = json.loads(d.cli("vm", "release", "web1", "--force", "--json").stdout)
            self.assertEqual((doc["command"], doc["release"]["operation"]), ("vm release", "release"))
            schema_errors(self, doc)
            self.assertEqual(self.vms(d), [])
            self.assertIsNone(d.driver(vfs[0]))

    def test_libvirt_reconcile(self):
        """amdsmid follows libvirt (here its test:///FILE driver, read at start): a reservation
        of a domain that no longer runs is released, a running domain with AMD VFs and no
        reservation is recorded with its metadata's cap."""
        with Daemon(machine="mi300x-sriov", config="[libvirt]\nuri = none\n") as d:
            vfs = d.with_vfs(GPU0, 2)
            # "old" was started while amdsmid ran; then amdsmid went down and old stopped
            self.prepare(d, "old", UUID2, [vfs[1]], {"unmanaged": ("as", [vfs[1]]),
                                                     "power_cap_uw": ("t", 500 * W)})
            self.assertEqual(d.driver(vfs[1]), "vfio-pci")
            d.stop()
            node = os.path.join(d.tmp, "libvirt-node.xml")
            with open(node, "w") as f:
                f.write("<node><domain type='test'><name>web1</name><uuid>%s</uuid>"
                        "<metadata><amdsmi:gpu xmlns:amdsmi='urn:amdsmi:libvirt:1' "
                        "power-cap-watts='450'/></metadata>"
                        "<memory>1048576</memory><os><type>hvm</type></os><devices>"
                        "<hostdev mode='subsystem' type='pci' managed='yes'><source>"
                        "<address domain='0x0000' bus='0x05' slot='0x02' function='0x0'/>"
                        "</source></hostdev></devices></domain></node>" % UUID1)
            d.write_config("[libvirt]\nuri = test://%s\n" % node)
            d.start()
            deadline = time.monotonic() + 20
            while time.monotonic() < deadline:
                vms = self.vms(d)
                if [v["name"] for v in vms] == ["web1"]:
                    break
                time.sleep(0.2)
            self.assertEqual([(v["name"], v["uuid"], v["cap_w"], [f["bdf"] for f in v["vfs"]])
                              for v in vms], [("web1", UUID1, 450, [vfs[0]])])
            self.assertIsNone(d.driver(vfs[1]))  # old's VF given back
            self.assertEqual(d.device_cap(GPU0), 450 * W)
            doc = json.loads(d.call(ROOT, MANAGER, "ListVms")[0])
            self.assertEqual(doc["libvirt"], {"uri": "test://" + node, "connected": True,
                                              "error": None})
            log = d.log()
            self.assertIn("domain old (%s) is not running: releasing its 1 VF" % UUID2, log)
            self.assertIn("domain web1 (%s) runs with 1 VF amdsmid had no reservation of" % UUID1,
                          log)

    def test_libvirt_unreachable(self):
        with Daemon(machine="mi300x-sriov",
                    config="[libvirt]\nuri = test:///nonexistent/node.xml\n") as d:
            deadline = time.monotonic() + 20
            while time.monotonic() < deadline:
                lv = json.loads(d.call(ROOT, MANAGER, "ListVms")[0])["libvirt"]
                if lv["error"]:
                    break
                time.sleep(0.2)
            self.assertEqual((lv["uri"], lv["connected"]), ("test:///nonexistent/node.xml", False))
            self.assertTrue(lv["error"])
            self.assertIn("cannot see the libvirt domains of test:///nonexistent/node.xml", d.log())
            # amdsmid works on: reservations through the methods
            vfs = d.with_vfs(GPU0, 1)
            self.prepare(d, "web1", UUID1, vfs)
            self.release(d, UUID1)

    def test_gim_host_records_power(self):
        with Daemon(machine="mi300x-gim-8vf") as d:
            vfs = [vf_bdf(GPU0, i) for i in range(2)]
            r = self.prepare(d, "web1", UUID1, vfs, {"unmanaged": ("as", vfs),
                                                      "power_cap_uw": ("t", 450 * W)})
            self.assertEqual(r["result"], None)
            self.assertTrue(any("gim applies no cap through sysfs" in m for m in r["messages"]),
                            r["messages"])
            self.assertEqual([d.driver(v) for v in vfs], ["vfio-pci", "vfio-pci"])
            explain = json.loads(d.call(gpu_path(GPU0), IFACE_POWER, "Explain")[0])
            self.assertEqual([(s["source"], s["vm"]) for s in explain["sources"]],
                             [("vm", "web1")])
            self.release(d, UUID1)
            explain = json.loads(d.call(gpu_path(GPU0), IFACE_POWER, "Explain")[0])
            self.assertEqual(explain["sources"], [])


if __name__ == "__main__":
    require_daemon()
    unittest.main(verbosity=2)
