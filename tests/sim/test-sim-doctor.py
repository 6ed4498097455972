#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""amdsmi doctor on simulator machines built for it: every check in both states (ok, and warn
or fail), through `amdsmi-sim run -- amdsmi doctor --direct --json`: the simulator's own
/proc/cmdline, /proc/interrupts (and /proc/modules where the kernel has one) and /etc/group
are bind-mounted in run's private mount namespace. The exit status is checked each time: 0
every check ok, 1 a warning, 2 a failure."""

import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from simtest import (CLI, GPU0, GPU1, MI300X_BDFS, SIM, SchemaCase, machine_variant, main,  # noqa: E402
                     tmpdir)


class DoctorTest(SchemaCase):
    def setUp(self):
        self.dir = tmpdir(self, "amdsmi-doctor.")
        self.rt = tmpdir(self, "amdsmi-rt.")
        self.st = tmpdir(self, "amdsmi-state.")
        self.conf = tmpdir(self, "amdsmi-conf.")

    def variant(self, base, edit):
        return machine_variant(base, "doctor-%s" % self.id().split(".")[-1], self.dir, edit)

    def doctor(self, machine, status, *args, before="", runner=""):
        """amdsmi doctor --direct --json in `amdsmi-sim run` of @machine (after the shell
        commands @before, which can use $SIM ctl); the document, its exit status checked."""
        env = dict(os.environ, RUNTIME_DIRECTORY=self.rt, STATE_DIRECTORY=self.st,
                   CONFIGURATION_DIRECTORY=self.conf, SIM=SIM, CLI=CLI)
        env.pop("AMDSMI_SYSFS_ROOT", None)
        env.pop("DBUS_SYSTEM_BUS_ADDRESS", None)
        script = '%s\nexec %s "$CLI" doctor --direct --json %s' % (before, runner, " ".join(args))
        p = subprocess.run([SIM, "run", "-m", machine, "--", "sh", "-ec", script], env=env,
                           capture_output=True, text=True, timeout=120)
        what = "doctor on %s: exit %d, stderr %r, stdout %r" % (machine, p.returncode,
                                                                 p.stderr, p.stdout[-2000:])
        self.assertEqual(p.returncode, status, what)
        self.stderr = p.stderr
        doc = json.loads(p.stdout)
        self.assert_valid(doc, "amdsmi doctor --json")
        self.assertEqual(doc["exit_code"], status)
        counts = {}
        for c in doc["checks"]:
            counts[c["status"]] = counts.get(c["status"], 0) + 1
        for k in ("ok", "warn", "fail", "not_applicable"):
            self.assertEqual(doc["summary"][k], counts.get(k, 0))
        return doc

    def check(self, doc, cid, bdf=None):
        found = [c for c in doc["checks"] if c["id"] == cid and c["bdf"] == bdf]
        self.assertEqual(len(found), 1, "%s %s in %r" % (cid, bdf, doc["checks"]))
        return found[0]

    def statuses(self, doc):
        return {(c["id"], c["bdf"]): c["status"] for c in doc["checks"]}

    # --- the defaults: a host ready for everything (amdsmid aside) --------------------------

    def test_defaults(self):
        doc = self.doctor("mi300x-8", 1)
        bad = [(c["id"], c["bdf"], c["status"]) for c in doc["checks"]
               if c["status"] not in ("ok", "not_applicable")]
        # amdsmid does not run here: the only warning
        self.assertEqual(bad, [("amdsmid", None, "warn")])
        self.assertEqual(self.check(doc, "amdsmid")["fix"], "systemctl enable --now amdsmid")
        iommu = self.check(doc, "iommu")
        self.assertEqual(iommu["status"], "ok")
        self.assertIn("amd_iommu=on iommu=pt", iommu["evidence"]["cmdline"])
        self.assertEqual(len(iommu["evidence"]["iommu_units"]), 8)
        self.assertEqual(self.check(doc, "interrupt_remapping")["status"], "ok")
        for bdf in MI300X_BDFS:
            self.assertEqual(self.check(doc, "iommu_group", bdf)["status"], "ok")
            self.assertEqual(self.check(doc, "xgmi_links", bdf)["status"], "ok")
            self.assertEqual(self.check(doc, "ras", bdf)["status"], "ok")
            self.assertEqual(self.check(doc, "bad_pages", bdf)["status"], "ok")
            self.assertEqual(self.check(doc, "power_cap", bdf)["status"], "not_applicable")
        self.assertEqual(self.check(doc, "hive_versions")["status"], "ok")
        self.assertEqual(self.check(doc, "device_access")["status"], "ok")
        # -g limits the per-GPU checks
        doc = self.doctor("mi300x-8", 1, "-g", "1")
        self.assertEqual({c["bdf"] for c in doc["checks"] if c["gpu"] is not None}, {GPU1})

    # --- IOMMU ------------------------------------------------------------------------------

    def test_iommu_off(self):
        def edit(m):
            m["host"]["iommu"] = False
            m["host"]["cmdline"] = "BOOT_IMAGE=/vmlinuz root=/dev/sda1 ro amd_iommu=off"
        doc = self.doctor(self.variant("mi300x-8", edit), 2)
        c = self.check(doc, "iommu")
        self.assertEqual(c["status"], "fail")
        self.assertIn("amd_iommu=off", c["summary"])
        self.assertIn("amd_iommu=on iommu=pt", c["fix"])
        self.assertEqual(c["evidence"]["iommu_units"], [])
        # no IOMMU: no group either
        self.assertEqual(self.check(doc, "iommu_group", GPU0)["status"], "fail")

    def test_iommu_without_pt(self):
        def edit(m):
            m["host"]["cmdline"] = "BOOT_IMAGE=/vmlinuz root=/dev/sda1 ro quiet"
        doc = self.doctor(self.variant("mi300x-8", edit), 1)
        self.assertEqual(self.check(doc, "iommu")["status"], "warn")

    def test_no_interrupt_remapping(self):
        def edit(m):
            m["host"]["interrupt_remapping"] = False
            m["host"]["cmdline"] += " intremap=off"
        doc = self.doctor(self.variant("mi300x-8", edit), 2)
        c = self.check(doc, "interrupt_remapping")
        self.assertEqual(c["status"], "fail")
        self.assertIn("intremap=off", c["summary"])
        self.assertEqual(c["evidence"]["remapped_irq_lines"], 0)
        self.assertGreater(c["evidence"]["plain_irq_lines"], 8)

    def test_group_shared(self):
        def edit(m):
            m["gpus"][0]["iommu_group_with"] = GPU1
        doc = self.doctor(self.variant("mi300x-8", edit), 1)
        for bdf, other in ((GPU0, GPU1), (GPU1, GPU0)):
            c = self.check(doc, "iommu_group", bdf)
            self.assertEqual(c["status"], "warn")
            self.assertEqual(c["evidence"]["other_devices"], [other])
            self.assertIn("ACS", c["fix"])
        self.assertEqual(self.check(doc, "iommu_group", MI300X_BDFS[2])["status"], "ok")

    def test_vf_groups(self):
        doc = self.doctor("mi300x-gim-8vf", 1)
        vfs = [c for c in doc["checks"] if c["id"] == "iommu_group" and
               not c["bdf"].endswith(":00.0")]
        self.assertEqual(len(vfs), 64)
        self.assertTrue(all(c["status"] == "ok" for c in vfs))
        # a GPU sharing a VF's group: the VF cannot go to a VM alone
        def edit(m):
            m["gpus"][1]["iommu_group_with"] = GPU0
        doc = self.doctor(self.variant("mi300x-gim-8vf", edit), 1)
        self.assertEqual(self.check(doc, "iommu_group", GPU1)["status"], "warn")

    # --- vfio-pci, gim ----------------------------------------------------------------------

    def test_vfio_pci(self):
        doc = self.doctor("mi300x-gim-8vf", 1)
        self.assertEqual(self.check(doc, "vfio_pci")["status"], "ok")

        def edit(m):
            m["host"]["vfio_pci"] = False
            m["kernel"]["vfio_pci_ids"] = None
        doc = self.doctor(self.variant("mi300x-gim-8vf", edit), 2)
        c = self.check(doc, "vfio_pci")
        self.assertEqual(c["status"], "fail")
        self.assertIn("modprobe vfio-pci", c["fix"])
        # bare metal without VFs: not needed
        doc = self.doctor(self.variant("mi300x-8", edit), 1)
        self.assertEqual(self.check(doc, "vfio_pci")["status"], "not_applicable")

    def test_gim_vf_num(self):
        doc = self.doctor("mi300x-gim-8vf", 1)
        c = self.check(doc, "gim_vf_num")
        self.assertEqual(c["status"], "ok")
        self.assertEqual(c["evidence"]["vf_num"], "8,8,8,8,8,8,8,8")
        with open(os.path.join(self.conf, "amdsmid.conf"), "w") as f:
            f.write("[gpu %s]\nnum_vfs = 8\n" % GPU0)
        self.assertEqual(self.check(self.doctor("mi300x-gim-8vf", 1), "gim_vf_num")["status"],
                         "ok")
        with open(os.path.join(self.conf, "amdsmid.conf"), "w") as f:
            f.write("[gpu %s]\nnum_vfs = 4\n" % GPU1)
        c = self.check(self.doctor("mi300x-gim-8vf", 1), "gim_vf_num")
        self.assertEqual(c["status"], "warn")
        self.assertIn("%s: 4 desired, gim 8" % GPU1, c["summary"])
        self.assertIn("amdsmi sriov set -g %s --num-vfs 4 --persist" % GPU1, c["fix"])
        self.assertEqual(self.check(self.doctor("mi300x-8", 1), "gim_vf_num")["status"],
                         "not_applicable")

    # --- the hive ---------------------------------------------------------------------------

    def test_firmware_mismatch(self):
        def edit(m):
            m["gpus"][3]["firmware"] = {"sos": "0x00a10007"}
        doc = self.doctor(self.variant("mi300x-8", edit), 1)
        c = self.check(doc, "hive_versions")
        self.assertEqual(c["status"], "warn")
        self.assertIn("sos", c["summary"])
        self.assertIn(MI300X_BDFS[3], c["summary"])
        diff = c["evidence"]["differences"]
        self.assertEqual(len(diff), 1)
        self.assertEqual(diff[0]["other_value"], "0x00a10007")

    def test_xgmi_link_down(self):
        doc = self.doctor("mi300x-8", 2, before='"$SIM" ctl xgmi-link %s 2 down' % GPU0)
        c = self.check(doc, "xgmi_links", GPU0)
        self.assertEqual(c["status"], "fail")
        self.assertEqual(c["summary"], "XGMI link 2 down (6 of 7 up)")
        self.assertEqual(self.check(doc, "xgmi_links", GPU1)["status"], "ok")

    # --- users' access ----------------------------------------------------------------------

    def test_device_access(self):
        def no_members(m):
            m["host"]["kfd_mode"] = "0660"
            m["host"]["render_members"] = ""
        doc = self.doctor(self.variant("mi300x-8", no_members), 1)
        c = self.check(doc, "device_access")
        self.assertEqual(c["status"], "warn")
        self.assertIn("no member", c["summary"])
        self.assertIn("usermod -aG render", c["fix"])
        self.assertEqual(c["evidence"]["nodes"][0]["group"], "render")
        self.assertEqual(c["evidence"]["nodes"][0]["mode"], "0660")

        def members(m):
            m["host"]["kfd_mode"] = "0660"
            m["host"]["render_members"] = "alice,bob"
        c = self.check(self.doctor(self.variant("mi300x-8", members), 1), "device_access")
        self.assertEqual(c["status"], "ok")
        self.assertEqual(c["evidence"]["nodes"][0]["members"], "alice,bob")

        def root_only(m):
            m["host"]["kfd_mode"] = "0600"
            m["host"]["kfd_group"] = "root"
        c = self.check(self.doctor(self.variant("mi300x-8", root_only), 1), "device_access")
        self.assertEqual(c["status"], "warn")
        self.assertIn("only root", c["summary"])
        self.assertIn("udev", c["fix"])

    # --- RAS, bad pages, power ---------------------------------------------------------------

    def test_ras(self):
        # amdgpu.ras_enable=0: no RAS context, so no ras/ directory and no bad-page table
        def off(m):
            m["kernel"]["ras_enable"] = False
            m["host"]["cmdline"] += " amdgpu.ras_enable=0"
        doc = self.doctor(self.variant("mi300x-8", off), 1)
        for bdf in MI300X_BDFS:
            c = self.check(doc, "ras", bdf)
            self.assertEqual(c["status"], "warn")
            self.assertIn("ras_enable", c["fix"])
            self.assertEqual(self.check(doc, "bad_pages", bdf)["status"], "not_applicable")
        # ras/ of one GPU unreadable: that GPU only
        doc = self.doctor("mi300x-8", 1,
                          before='"$SIM" ctl inject /sys/bus/pci/devices/%s/ras 2 always open'
                          % GPU0)
        self.assertEqual(self.check(doc, "ras", GPU0)["status"], "warn")
        self.assertEqual(self.check(doc, "ras", GPU1)["status"], "ok")

        def no_umc(m):
            m["kernel"]["ras_blocks"] = ["gfx", "sdma"]
        doc = self.doctor(self.variant("mi300x-8", no_umc), 1)
        c = self.check(doc, "ras", GPU0)
        self.assertEqual(c["status"], "warn")
        self.assertIn("UMC", c["summary"])

    def test_bad_pages(self):
        def edit(m):
            m["kernel"]["bad_page_threshold"] = 10
            m["gpus"][0]["ras"] = {"bad_pages": [{"pfn": hex(0x100 + i), "status": "R"}
                                                 for i in range(9)]}
            m["gpus"][1]["ras"] = {"bad_pages": [{"pfn": hex(0x100 + i), "status": "R"}
                                                 for i in range(10)]}
            m["gpus"][2]["ras"] = {"bad_pages": [{"pfn": "0x100", "status": "R"}]}
        doc = self.doctor(self.variant("mi300x-8", edit), 2)
        c = self.check(doc, "bad_pages", GPU0)
        self.assertEqual(c["status"], "warn")
        self.assertEqual(c["evidence"]["retired_pages"], 9)
        self.assertEqual(c["evidence"]["threshold"], 10)
        c = self.check(doc, "bad_pages", GPU1)
        self.assertEqual(c["status"], "fail")
        self.assertIn("RMA", c["fix"])
        self.assertEqual(self.check(doc, "bad_pages", MI300X_BDFS[2])["status"], "ok")

    def test_power_cap_above_apml(self):
        os.makedirs(os.path.join(self.rt, "apml"), exist_ok=True)
        with open(os.path.join(self.rt, "apml", GPU0), "w") as f:
            f.write("500W\n")
        with open(os.path.join(self.rt, "apml", GPU1), "w") as f:
            f.write("800W\n")
        doc = self.doctor("mi300x-8", 1)
        c = self.check(doc, "power_cap", GPU0)
        self.assertEqual(c["status"], "warn")
        self.assertEqual(c["evidence"]["apml_limit_w"], 500)
        self.assertIn("--apml 500W", c["fix"])
        self.assertEqual(self.check(doc, "power_cap", GPU1)["status"], "ok")

    def test_unprivileged(self):
        # another user than root in-process: the threshold (debugfs) is unknown, and said so
        env_user = "setpriv --reuid=65534 --regid=65534 --clear-groups"
        doc = self.doctor("mi300x-8", 1, before="", runner=env_user)
        c = self.check(doc, "bad_pages", GPU0)
        self.assertEqual(c["status"], "ok")
        self.assertIn("needs root", c["summary"])
        self.assertIsNone(c["evidence"]["threshold"])
        self.assertIn("not root: the bad-page thresholds (debugfs) are not read", self.stderr)

    # --- formats ----------------------------------------------------------------------------

    def test_table_and_csv(self):
        def edit(m):
            m["host"]["interrupt_remapping"] = False
        path = self.variant("mi300x-8", edit)
        env = dict(os.environ, RUNTIME_DIRECTORY=self.rt, STATE_DIRECTORY=self.st,
                   CONFIGURATION_DIRECTORY=self.conf)
        p = subprocess.run([SIM, "run", "-m", path, "--", CLI, "doctor", "--direct"], env=env,
                           capture_output=True, text=True, timeout=120)
        self.assertEqual(p.returncode, 2, p.stderr)
        lines = p.stdout.splitlines()
        self.assertTrue(lines[0].startswith("STATUS"))
        ir = [i for i, l in enumerate(lines) if " interrupt_remapping " in l][0]
        self.assertTrue(lines[ir].startswith("fail"))
        self.assertIn("fix: ", lines[ir + 1])
        self.assertRegex(lines[-1], r"^\d+ ok, 1 warn, 1 fail, \d+ not applicable$")
        p = subprocess.run([SIM, "run", "-m", path, "--", CLI, "doctor", "--direct", "--csv"],
                           env=env, capture_output=True, text=True, timeout=120)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertEqual(p.stdout.splitlines()[0], "id,gpu,bdf,status,summary,fix")
        # a usage error is UNKNOWN, as for health
        p = subprocess.run([SIM, "run", "--", CLI, "doctor", "--bogus"], env=env,
                           capture_output=True, text=True, timeout=120)
        self.assertEqual(p.returncode, 3, p.stderr)


if __name__ == "__main__":
    main()
