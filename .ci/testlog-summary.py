#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Sums up meson's testlog.json files into one line "N passed, N failed".

usage: testlog-summary.py [--extra NAME=RESULT ...] BUILDDIR/meson-logs/testlog.json ...

Each testlog.json holds one JSON object per line, one per test, with "name" and "result".
OK and EXPECTEDFAIL pass; every other result (FAIL, SKIP, TIMEOUT, ERROR, UNEXPECTEDPASS,
INTERRUPT) fails and is printed with its name: a skipped test is a test that did not run.
A testlog that is missing or unreadable counts as one failure (its build or its test run
broke). --extra adds a result of a step outside meson (e.g. main-job=OK, main-job=FAIL).
The last line printed is always "N passed, N failed". Exit status: 0 only if nothing failed
and at least one test ran.
"""

import json
import os
import sys

PASSING = {"OK", "EXPECTEDFAIL"}


def label(path):
    """'build-asan' for 'build-asan/meson-logs/testlog.json'."""
    d = os.path.dirname(os.path.abspath(path))
    if os.path.basename(d) == "meson-logs":
        d = os.path.dirname(d)
    return os.path.basename(d) or path


def main(argv):
    passed = failed = 0
    problems = []
    logs = []
    args = list(argv)
    while args:
        a = args.pop(0)
        if a == "--extra" and args:
            name, _, result = args.pop(0).partition("=")
            if result.strip().upper() in PASSING:
                passed += 1
            else:
                failed += 1
                problems.append(f"{result.strip().upper() or 'FAIL'}: {name}")
        elif a.startswith("--extra="):
            args.insert(0, a[len("--extra="):])
            args.insert(0, "--extra")
        elif a in ("-h", "--help"):
            print(__doc__.strip())
            return 0
        else:
            logs.append(a)

    for path in logs:
        where = label(path)
        try:
            with open(path, encoding="utf-8", errors="replace") as f:
                lines = f.readlines()
        except OSError as e:
            failed += 1
            problems.append(f"ERROR ({where}): no test log: {e.strerror}: {path}")
            continue
        n = 0
        for lineno, line in enumerate(lines, 1):
            line = line.strip()
            if not line:
                continue
            try:
                t = json.loads(line)
                name, result = t["name"], str(t["result"]).upper()
            except (ValueError, KeyError, TypeError):
                failed += 1
                problems.append(f"ERROR ({where}): unreadable entry at {path}:{lineno}")
                continue
            n += 1
            if result in PASSING:
                passed += 1
            else:
                failed += 1
                problems.append(f"{result} ({where}): {name}")
        if n == 0:
            failed += 1
            problems.append(f"ERROR ({where}): no test ran: {path}")

    for p in problems:
        print(p)
    if passed + failed == 0:
        print("no test ran at all")
    print(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 and passed > 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
