#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""amdsmid's Node Feature Discovery labels (amdsmid(8) KUBERNETES), in a features.d directory
that [kubernetes] nfd_features names: the file's format (an expiry directive first, in the
future and at most 5 minutes ahead; only feature.node.kubernetes.io/amdsmi-gpu.* labels with
valid values; no amd.com/; 0644; no temporary file left), labels that follow a live partition
change, a selector change (profile, sync-state) and a pending memory mode, a file left alone
while nothing changes but rewritten every minute (also when the periodic check is slower),
removal when amdsmid stops or the configuration moves the file, a gim host (PFs counted, not
VFs), and directories refused (world-writable, a symbolic link) with a log line, written once
they are fixed."""

import calendar
import os
import re
import stat
import time
import unittest

from daemontest import (GPU0, IFACE_PARTITION, MANAGER, ROOT, Daemon, gpu_path, require_daemon,
                        tmpdir, wait_until)

PREFIX = "feature.node.kubernetes.io/amdsmi-gpu."
VALUE = re.compile(r"^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$")
EXPIRY_S = 300


def config(path, extra=""):
    return ("[daemon]\npoll_interval_ms = 200\n\n[kubernetes]\nnfd_features = %s\n\n"
            "[profile back]\ncompute_mode = SPX\n\n"
            "[profile nps4]\nmemory_mode = NPS4\n%s" % (path, extra))


def write_selector(d, name):
    path = os.path.join(d.config_dir, "profile")
    with open(path + ".tmp", "w") as f:
        f.write(name + "\n")
    os.chmod(path + ".tmp", 0o644)
    os.rename(path + ".tmp", path)


def read(path):
    """The labels of the feature file at @path (None while there is none), checked line by
    line as nfd-worker and nfd-master read them; the expiry time in "expiry"."""
    try:
        with open(path) as f:
            text = f.read()
    except FileNotFoundError:
        return None
    lines = text.split("\n")
    assert text.endswith("\n"), text
    assert "amd.com/" not in text, text
    m = re.match(r"^# \+expiry-time=(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)$", lines[0])
    assert m, "the first line is no expiry directive: %r" % lines[0]
    labels = {"expiry": calendar.timegm(time.strptime(m.group(1), "%Y-%m-%dT%H:%M:%SZ"))}
    for line in lines[1:-1]:
        if line.startswith("#"):
            assert not line.startswith("# +"), line  # one directive only
            continue
        name, sep, value = line.partition("=")
        assert sep and name.startswith(PREFIX), line
        short = name.split("/", 1)[1]
        assert len(short) <= 63 and VALUE.match(short), line
        assert len(value) <= 63 and VALUE.match(value), line
        assert name[len(PREFIX):] not in labels, "twice: " + line
        labels[name[len(PREFIX):]] = value
    return labels


def wait_labels(path, want, timeout=60):
    """The labels once every key of @want has its value there (None: absent)."""
    def ok():
        labels = read(path)
        if labels is None:
            return None
        return labels if all(labels.get(k) == v for k, v in want.items()) else None
    return wait_until("labels %s in %s (now %s)" % (want, path, read(path)), ok, timeout)


class Nfd(unittest.TestCase):
    maxDiff = None

    @classmethod
    def setUpClass(cls):
        require_daemon()

    def features_dir(self, mode=0o755):
        root = tmpdir(self, "amdsmid-nfd.")
        path = os.path.join(root, "features.d")
        os.mkdir(path)
        os.chmod(path, mode)
        return path

    def test_labels_follow_the_gpus(self):
        fdir = self.features_dir()
        path = os.path.join(fdir, "amdsmi")
        with Daemon(config=config(path)) as d:
            labels = wait_labels(path, {"sync-state": "success"})
            now = time.time()
            self.assertEqual({k: v for k, v in labels.items() if k != "expiry"}, {
                "present": "true", "count": "8", "product": "MI300X", "role": "baremetal",
                "partitions": "8", "partition-layout": "spx_nps1", "sync-state": "success"})
            self.assertGreater(labels["expiry"], now)
            self.assertLessEqual(labels["expiry"], now + EXPIRY_S + 5)
            # what nfd-worker reads: one file, 0644, no temporary file beside it
            self.assertEqual(os.listdir(fdir), ["amdsmi"])
            st = os.stat(path)
            self.assertEqual(stat.S_IMODE(st.st_mode), 0o644)
            self.assertEqual(st.st_uid, os.geteuid())
            self.assertIn("writing the NFD feature file " + path, d.log())

            # nothing changes: the file is left alone (rewritten once a minute only)
            ino, mtime = st.st_ino, st.st_mtime_ns
            time.sleep(1.5)
            st = os.stat(path)
            self.assertEqual((st.st_ino, st.st_mtime_ns), (ino, mtime))

            # a live SPX -> CPX change of one GPU: 8 more partitions, a mixed layout
            d.call(gpu_path(GPU0), IFACE_PARTITION, "SetComputeMode", "st", "cpx", 0)
            labels = wait_labels(path, {"partition-layout": "mixed", "partitions": "15"})
            self.assertNotEqual(os.stat(path).st_ino, ino)

            # a profile through the selector file: profile and sync state follow
            write_selector(d, "back")
            wait_labels(path, {"profile": "back", "sync-state": "success",
                               "partition-layout": "spx_nps1", "partitions": "8"})
            self.assertEqual(d.get(gpu_path(GPU0), IFACE_PARTITION, "ComputeMode"), "SPX")

            # NPS4 is requested, in force after a driver reload: the layout stays, the
            # pending layout and the sync state say what is to come
            write_selector(d, "nps4")
            labels = wait_labels(path, {"profile": "nps4", "sync-state": "reload-required",
                                        "partition-layout-pending": "spx_nps4"})
            self.assertEqual(labels["partition-layout"], "spx_nps1")
            self.assertEqual(d.get(ROOT, MANAGER, "SyncState"), "reload-required")
            self.assertEqual(sorted(os.listdir(fdir)), ["amdsmi"])

            # a clean stop: the labels go with amdsmid
            self.assertEqual(d.stop(), 0)
            self.assertEqual(os.listdir(fdir), [])
            self.assertIn("NFD feature file %s removed" % path, d.log())

    def test_rewritten_every_minute(self):
        # a periodic check slower than the expiry: amdsmid's own timer keeps the labels alive
        fdir = self.features_dir()
        path = os.path.join(fdir, "amdsmi")
        conf = config(path).replace("poll_interval_ms = 200", "poll_interval_ms = 600000")
        with Daemon(config=conf):
            first = wait_labels(path, {"present": "true"})
            ino, start = os.stat(path).st_ino, time.monotonic()
            wait_until("the file rewritten", lambda: os.stat(path).st_ino != ino, timeout=75)
            took = time.monotonic() - start
            self.assertGreater(took, 50)
            second = read(path)
            self.assertGreaterEqual(second["expiry"] - first["expiry"], 55)
            self.assertEqual(os.listdir(fdir), ["amdsmi"])

    def test_reload_moves_and_disables(self):
        first, second = self.features_dir(), self.features_dir()
        a, b = os.path.join(first, "amdsmi"), os.path.join(second, "gpus")
        with Daemon(config=config(a)) as d:
            wait_labels(a, {"present": "true"})
            d.write_config(config(b))
            d.call(ROOT, MANAGER, "Reload")
            wait_labels(b, {"present": "true", "count": "8"})
            self.assertEqual(os.listdir(first), [])  # nfd-worker must not read both
            d.write_config(config("no"))
            d.call(ROOT, MANAGER, "Reload")
            wait_until("the file removed", lambda: not os.path.exists(b))
            time.sleep(0.5)
            self.assertEqual(os.listdir(first) + os.listdir(second), [])

    def test_gim_host(self):
        fdir = self.features_dir()
        path = os.path.join(fdir, "amdsmi")
        with Daemon(machine="mi300x-gim-8vf", config=config(path)) as d:
            labels = wait_labels(path, {"present": "true"})
            # the 8 PFs are the GPUs; their 64 VFs serve VMs and are not counted
            self.assertEqual((labels["count"], labels["product"], labels["role"],
                              labels["partition-layout"], labels["partitions"]),
                             ("8", "MI300X", "host-pf", "cpx_nps4", "0"), labels)
            self.assertNotIn("profile", labels)
            self.assertEqual(labels["sync-state"], d.get(ROOT, MANAGER, "SyncState"))

    def test_unsafe_directories(self):
        # writable by everyone: anyone could put labels there or replace ours
        fdir = self.features_dir(mode=0o777)
        os.chmod(fdir, 0o777)
        path = os.path.join(fdir, "amdsmi")
        # a symbolic link to a good directory
        real = self.features_dir()
        link = os.path.join(os.path.dirname(real), "link.d")
        os.symlink(real, link)
        with Daemon(config=config(path)) as d:
            wait_until("the refusal logged", lambda: "writable by others" in d.log())
            self.assertIn("cannot write the NFD feature file " + path, d.log())
            time.sleep(0.5)
            self.assertEqual(os.listdir(fdir), [])
            # logged once, not at every check
            self.assertEqual(d.log().count("writable by others"), 1, d.log())
            # fixed: written at the next check, and said so
            os.chmod(fdir, 0o755)
            wait_labels(path, {"present": "true"})
            self.assertIn("the NFD feature file %s is written again" % path, d.log())

            d.write_config(config(os.path.join(link, "amdsmi")))
            d.call(ROOT, MANAGER, "Reload")
            wait_until("the link refused", lambda: "is a symbolic link" in d.log())
            time.sleep(0.5)
            self.assertEqual(os.listdir(real), [])
            self.assertFalse(os.path.exists(path))  # the old file went with the old setting


if __name__ == "__main__":
    unittest.main(verbosity=2)
