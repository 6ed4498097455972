#!/bin/bash
# SPDX-License-Identifier: MIT
#
# Builds one build directory (see build.sh) and runs every test suite in it. The results are
# in BUILDDIR/meson-logs/testlog.json, which .ci/testlog-summary.py counts; a testlog left
# over from an earlier run is removed first, so a broken build never reports old results.
#
# The suites run with TMPDIR set to a fresh empty directory (on /dev/shm when it is writable,
# as on the developers' machines). Every test removes what it makes there, also when it fails;
# whatever is left after `meson test` is listed and fails the check: its result,
# "tmpdir-clean=OK" or "tmpdir-clean=FAIL", goes into BUILDDIR/meson-logs/tmpdir-check.txt
# (for .ci/run's summary), and this script exits non-zero. The directory is removed afterwards
# (a simulator still mounted in it unmounted first), so a leak does not outlive the run.
#
# usage: .ci/build-and-test.sh BUILDDIR [MESON_OPTION...]
# env:   MESON_TEST_TIMEOUT_MULTIPLIER (default 1)

set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

builddir=${1:-build}
check=$builddir/meson-logs/tmpdir-check.txt
rm -f "$builddir/meson-logs/testlog.json" "$check"
.ci/build.sh "$@"

base=${TMPDIR:-/tmp}
if [ -d /dev/shm ] && [ -w /dev/shm ]; then
        base=/dev/shm
fi
testtmp=$(mktemp -d "$base/amdsmi-ci-tmpdir.XXXXXX")
# like /tmp: tests that drop privileges (setpriv as nobody) reach their directories in it
chmod 1777 "$testtmp"

# The mount points at or below $1, deepest first (/proc/self/mounts escapes a space as \040).
mounts_below() {
        awk -v d="$1" '{ gsub(/\\040/, " ", $2) }
                $2 == d || index($2, d "/") == 1 { print length($2) "\t" $2 }' /proc/self/mounts |
                sort -rn | cut -f 2-
}

remove_testtmp() {
        local m
        while read -r m; do
                [ -n "$m" ] || continue
                fusermount3 -u "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true
        done < <(mounts_below "$testtmp")
        rm -rf "$testtmp"
}
trap remove_testtmp EXIT

rc=0
TMPDIR=$testtmp meson test -C "$builddir" --print-errorlogs \
        --timeout-multiplier "${MESON_TEST_TIMEOUT_MULTIPLIER:-1}" || rc=$?

mapfile -t left < <(find "$testtmp" -mindepth 1 -maxdepth 1 -printf '%f\n' | sort)
mapfile -t mounted < <(mounts_below "$testtmp")
if [ ${#left[@]} -eq 0 ] && [ ${#mounted[@]} -eq 0 ]; then
        echo "tmpdir-clean=OK" >"$check"
        echo "tmpdir check: the tests left nothing in TMPDIR"
else
        echo "tmpdir-clean=FAIL" >"$check"
        echo "tmpdir check: FAILED: the tests left ${#left[@]} entries in TMPDIR ($testtmp):"
        for m in "${mounted[@]}"; do
                echo "  still mounted: $m"
        done
        # what is left, two levels deep (the prefix of a name says which test made it), with
        # its type (find -printf %y: d directory, f file, s socket, l link)
        { find "$testtmp" -mindepth 1 -maxdepth 2 -printf '  %P (%y)\n' 2>&1 | sort |
                head -n 200; } || true
        [ "$rc" -ne 0 ] || rc=1
fi
exit "$rc"
