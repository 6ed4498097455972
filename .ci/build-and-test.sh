#!/bin/bash
# SPDX-License-Identifier: MIT
#
# Builds one build directory (see build.sh) and runs every test suite in it. The results are
# in BUILDDIR/meson-logs/testlog.json, which .ci/testlog-summary.py counts; a testlog left
# over from an earlier run is removed first, so a broken build never reports old results.
#
# usage: .ci/build-and-test.sh BUILDDIR [MESON_OPTION...]
# env:   MESON_TEST_TIMEOUT_MULTIPLIER (default 1)

set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

builddir=${1:-build}
rm -f "$builddir/meson-logs/testlog.json"
.ci/build.sh "$@"
meson test -C "$builddir" --print-errorlogs \
        --timeout-multiplier "${MESON_TEST_TIMEOUT_MULTIPLIER:-1}"
