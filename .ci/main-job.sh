#!/bin/bash
# SPDX-License-Identifier: MIT
#
# The main job: builds amdsmi (see build.sh) and runs `amdsmi list` and `amdsmi metric` on the
# bundled fixture tree of an 8 x MI300X server in SPX mode, then on this machine's own /sys if
# it has an AMD GPU bound to amdgpu.
#
# usage: .ci/main-job.sh [BUILDDIR]

set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

builddir=${1:-build}
.ci/build.sh "$builddir"

amdsmi=$builddir/cli/amdsmi
tree=$builddir/tests/fixtures/trees/mi300x-8-spx
if [ ! -x "$amdsmi" ]; then
        echo "main-job: $amdsmi was not built" >&2
        exit 1
fi
if [ ! -d "$tree" ]; then
        echo "main-job: the fixture tree $tree was not generated" >&2
        exit 1
fi

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

run env AMDSMI_SYSFS_ROOT="$tree" "$amdsmi" list
run env AMDSMI_SYSFS_ROOT="$tree" "$amdsmi" metric

if has_amd_gpu; then
        run env -u AMDSMI_SYSFS_ROOT -u AMDSMI_DEV_ROOT "$amdsmi" list
        run env -u AMDSMI_SYSFS_ROOT -u AMDSMI_DEV_ROOT "$amdsmi" metric
else
        echo "main-job: no AMD GPU bound to amdgpu in /sys; ran on the fixture tree only"
fi
