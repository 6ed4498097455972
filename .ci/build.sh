#!/bin/bash
# SPDX-License-Identifier: MIT
#
# Configures (or reconfigures) and builds one build directory with the project's install
# layout and warnings as errors. Extra arguments go to meson setup.
#
# usage: .ci/build.sh BUILDDIR [MESON_OPTION...]

set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

builddir=${1:-build}
shift || true
opts=(--prefix=/usr --sysconfdir=/etc --localstatedir=/var -Dwerror=true "$@")

if [ -e "$builddir/meson-private/coredata.dat" ]; then
        meson setup --reconfigure "$builddir" "${opts[@]}"
else
        meson setup "$builddir" "${opts[@]}"
fi
meson compile -C "$builddir"
