#!/bin/bash
# SPDX-License-Identifier: MIT
#
# The main job: builds amdsmi (see build.sh) and runs `amdsmi list`, `amdsmi metric`,
# `amdsmi partition` and `amdsmi power` on a simulated 8 x MI300X server (amdsmi-sim's default
# machine, mi300x-8), then on this machine's own /sys if it has an AMD GPU bound to amdgpu. On
# the simulator, amdsmi power reads the power sources from an empty temporary state directory.
#
# The simulator runs in the first way this machine allows, and says which on stderr:
#   run       as root with FUSE and namespaces: `amdsmi-sim run -- amdsmi ...`, the simulated
#             tree mounted over /sys in a private mount namespace (amdsmi reads /sys as is);
#   mount     with FUSE only: `amdsmi-sim mount DIR`, and AMDSMI_SYSFS_ROOT=DIR;
#   snapshot  without FUSE: `amdsmi-sim snapshot DIR` (a plain directory tree of the same
#             machine), and AMDSMI_SYSFS_ROOT=DIR.
#
# usage: .ci/main-job.sh [BUILDDIR]

set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

builddir=${1:-build}
.ci/build.sh "$builddir"

amdsmi=$builddir/cli/amdsmi
sim=$builddir/sim/amdsmi-sim
machine=mi300x-8
for exe in "$amdsmi" "$sim"; do
        if [ ! -x "$exe" ]; then
                echo "main-job: $exe was not built" >&2
                exit 1
        fi
done

# Any PCI function of vendor 0x1002 bound to the amdgpu driver.
has_amd_gpu() {
        local dev driver
        for dev in /sys/bus/pci/devices/*; do
                [ "$(cat "$dev/vendor" 2>/dev/null)" = 0x1002 ] || continue
                driver=$(readlink "$dev/driver" 2>/dev/null) || continue
                [ "${driver##*/}" = amdgpu ] && return 0
        done
        return 1
}

run() {
        echo "\$ $*"
        "$@"
        echo
}

# Neither variable may leak into a run that means another root.
unset AMDSMI_SYSFS_ROOT AMDSMI_DEV_ROOT

tmp=$(mktemp -d)
mounted=
cleanup() {
        if [ -n "$mounted" ] && mountpoint -q "$mounted"; then
                fusermount3 -u "$mounted" || true
        fi
        rm -rf "$tmp"
}
trap cleanup EXIT

# Why a way of running the simulator was passed over: the first line of its error.
why() {
        local line
        line=$(head -n 1 "$tmp/err" 2>/dev/null) || true
        echo "${line:-$1}"
}

# The first way of running the simulator that works here.
if [ "$(id -u)" != 0 ]; then
        echo "not root" >"$tmp/err"
elif [ ! -c /dev/fuse ]; then
        echo "no /dev/fuse" >"$tmp/err"
fi
if [ ! -s "$tmp/err" ] && "$sim" run -m "$machine" -- true 2>"$tmp/err"; then
        echo "main-job: simulated $machine through amdsmi-sim run (its tree over /sys in a" \
             "private mount namespace)" >&2
        run "$sim" run -m "$machine" -- "$amdsmi" list
        run "$sim" run -m "$machine" -- "$amdsmi" metric
        run "$sim" run -m "$machine" -- "$amdsmi" partition -g 0
        run "$sim" run -m "$machine" -- env STATE_DIRECTORY="$tmp/state" \
                RUNTIME_DIRECTORY="$tmp/run" "$amdsmi" power
else
        echo "main-job: not amdsmi-sim run: $(why "it failed")" >&2
        root=$tmp/sys
        mkdir "$root"
        chmod 755 "$tmp"
        if [ ! -c /dev/fuse ]; then
                echo "no /dev/fuse" >"$tmp/err"
        elif ! command -v fusermount3 >/dev/null; then
                echo "no fusermount3" >"$tmp/err"
        elif "$sim" mount "$root" -m "$machine" 2>"$tmp/err"; then
                mounted=$root
        fi
        if [ -n "$mounted" ]; then
                echo "main-job: simulated $machine through amdsmi-sim mount $root and" \
                     "AMDSMI_SYSFS_ROOT" >&2
        else
                echo "main-job: not amdsmi-sim mount: $(why "it failed")" >&2
                "$sim" snapshot "$root" -m "$machine"
                echo "main-job: simulated $machine through amdsmi-sim snapshot $root (a plain" \
                     "directory tree, no FUSE) and AMDSMI_SYSFS_ROOT" >&2
        fi
        run env AMDSMI_SYSFS_ROOT="$root" "$amdsmi" list
        run env AMDSMI_SYSFS_ROOT="$root" "$amdsmi" metric
        run env AMDSMI_SYSFS_ROOT="$root" "$amdsmi" partition -g 0
        run env AMDSMI_SYSFS_ROOT="$root" STATE_DIRECTORY="$tmp/state" \
                RUNTIME_DIRECTORY="$tmp/run" "$amdsmi" power
fi

if has_amd_gpu; then
        run "$amdsmi" list
        run "$amdsmi" metric
        run "$amdsmi" partition
        run "$amdsmi" power
else
        echo "main-job: no AMD GPU bound to amdgpu in /sys; ran on the simulator only"
fi
