#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Power caps (spec amdgpu-sysfs.md §4.2, §4.3, §9 rule 4) through write(2): microwatts in,
kstrtou32 (EINVAL, ERANGE), truncation to whole watts, the range check, 0 re-applies; the
platform (BMC) limit lowers what power1_cap reports and what the GPU draws; PPT1 on MI350."""

import errno
import json
import os
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from simtest import GPU0, GPU1, Mount, main, sim  # noqa: E402


def hwmon(m, bdf):
    d = m.gpu(bdf, "hwmon")
    return "%s/%s/" % (d, os.listdir(m.path(d))[0])


class Power(unittest.TestCase):
    def test_power1_cap(self):
        with Mount("--seed", "1") as m:
            h = hwmon(m, GPU0)
            self.assertEqual(m.value(h + "power1_cap"), "750000000")
            self.assertEqual(m.value(h + "power1_cap_max"), "750000000")
            self.assertEqual(m.value(h + "power1_cap_min"), "0")
            self.assertEqual(m.value(h + "power1_cap_default"), "750000000")
            self.assertEqual(m.write(h + "power1_cap", "500000000\n"), 0)
            self.assertEqual(m.value(h + "power1_cap"), "500000000")
            self.assertEqual(m.write(h + "power1_cap", "749999999"), 0)     # truncated
            self.assertEqual(m.value(h + "power1_cap"), "749000000")
            self.assertEqual(m.write(h + "power1_cap", "0"), 0)             # re-applies
            self.assertEqual(m.value(h + "power1_cap"), "749000000")
            self.assertEqual(m.write(h + "power1_cap", "999999"), 0)        # 0 W as well
            self.assertEqual(m.value(h + "power1_cap"), "749000000")
            for value, err in (("751000000", errno.EINVAL), ("4294967295", errno.EINVAL),
                               ("4294967296", errno.ERANGE), ("99999999999", errno.ERANGE),
                               ("abc", errno.EINVAL), ("-1", errno.EINVAL),
                               ("500 W", errno.EINVAL), ("0x1000", errno.EINVAL),
                               ("\n", errno.EINVAL)):
                self.assertEqual(m.write(h + "power1_cap", value), err, value)
            self.assertEqual(m.value(h + "power1_cap"), "749000000")
            self.assertEqual(m.value(hwmon(m, GPU1) + "power1_cap"), "750000000")
            self.assertFalse(os.path.exists(m.path(h + "power2_cap")))
            # a shell's echo works the same
            self.assertEqual(os.system("echo 600000000 > " + m.path(h + "power1_cap")), 0)
            self.assertEqual(m.value(h + "power1_cap"), "600000000")

    def test_cap_min(self):
        with tempfile.TemporaryDirectory() as tmp:
            desc = json.loads(sim("dump-machine", "mi300x-8", check=True).stdout)
            desc["gpus"][0]["power_cap_limits_w"] = {"min": 200, "max": 750, "default": 700}
            path = os.path.join(tmp, "m.json")
            with open(path, "w") as f:
                json.dump(desc, f)
            with Mount("--machine", path, "--seed", "1") as m:
                h = hwmon(m, GPU0)
                self.assertEqual(m.value(h + "power1_cap"), "750000000")
                self.assertEqual(m.value(h + "power1_cap_default"), "700000000")
                self.assertEqual(m.write(h + "power1_cap", "0"), errno.EINVAL)   # below min
                self.assertEqual(m.write(h + "power1_cap", "199999999"), errno.EINVAL)
                self.assertEqual(m.write(h + "power1_cap", "200000000"), 0)

    def test_platform_limit(self):
        with Mount("--platform-limit", GPU0 + "=400") as m:
            h = hwmon(m, GPU0)
            self.assertEqual(m.value(h + "power1_cap"), "400000000")
            self.assertEqual(m.write(h + "power1_cap", "600000000"), 0)
            self.assertEqual(m.value(h + "power1_cap"), "400000000")
            self.assertEqual(m.write(h + "power1_cap", "300000000"), 0)
            self.assertEqual(m.value(h + "power1_cap"), "300000000")
            self.assertEqual(m.write(h + "power1_cap", "700000000"), 0)
            self.assertEqual(m.value(h + "power1_cap_max"), "750000000")
            deadline = time.time() + 1
            while time.time() < deadline:
                self.assertLessEqual(int(m.value(h + "power1_input")), 400000000)
                time.sleep(0.05)

    def test_reset_busy(self):
        with Mount("--in-reset", GPU0, "--seed", "1") as m:
            h = hwmon(m, GPU0)
            for f in ("power1_input", "power1_cap", "temp2_input"):
                self.assertEqual(m.read_errno(h + f), errno.EBUSY, f)
            self.assertEqual(m.write(h + "power1_cap", "500000000"), errno.EBUSY)
            self.assertEqual(m.value(h + "power1_label"), "PPT")

    def test_ppt1(self):
        with Mount("--machine", "mi350x-8", "--seed", "1") as m:
            bdf = "0000:05:00.0"
            h = hwmon(m, bdf)
            self.assertEqual(m.value(h + "power2_label"), "PPT1")
            self.assertEqual(m.value(h + "power2_cap"), "1300000000")
            self.assertEqual(m.value(h + "power2_cap_min"), "1000000000")
            self.assertEqual(m.value(h + "power2_cap_max"), "1400000000")
            self.assertEqual(m.write(h + "power2_cap", "1350999999"), 0)
            self.assertEqual(m.value(h + "power2_cap"), "1350000000")
            self.assertEqual(m.write(h + "power2_cap", "999000000"), errno.EINVAL)
            self.assertEqual(m.write(h + "power2_cap", "0"), errno.EINVAL)     # below min
            self.assertEqual(m.value(h + "power1_cap"), "1000000000")


if __name__ == "__main__":
    main()
