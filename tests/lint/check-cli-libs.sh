#!/bin/bash
# SPDX-License-Identifier: MIT
#
# amdsmi(1) loads libsystemd (and its libgcrypt, lzma, zstd, lz4, libcap) only when it talks
# to amdsmid about a change (cli/sd-bus-dl.h): it is no NEEDED entry of the binary, and
# --version, a read without amdsmid (no PID file) and a read through amdsmid (cli/dbus-mini.c)
# never map it.
#
#   check-cli-libs.sh AMDSMI FIXTURE_TREE
set -euo pipefail
amdsmi=$1
tree=$2
fail=0

if readelf -d "$amdsmi" | grep -q 'NEEDED.*libsystemd'; then
        echo "FAIL: $amdsmi has libsystemd as a NEEDED library" >&2
        fail=1
fi
run=$(mktemp -d)
trap 'rm -rf "$run"' EXIT
for args in "--version" "list" "metric --json" "static --csv"; do
        # shellcheck disable=SC2086
        loaded=$(env AMDSMI_SYSFS_ROOT="$tree" RUNTIME_DIRECTORY="$run" LD_DEBUG=files \
                "$amdsmi" $args 2>&1 >/dev/null | grep -c 'file=libsystemd' || true)
        if [ "$loaded" != 0 ]; then
                echo "FAIL: amdsmi $args without amdsmid loads libsystemd" >&2
                fail=1
        fi
done
# with amdsmid's PID file naming a live process, a read asks amdsmid through dbus-mini.c (no
# libsystemd; here no bus answers, so it reads in-process), while a change asks the bus
# through sd-bus: the control that the LD_DEBUG count sees libsystemd at all
echo $$ > "$run/amdsmid.pid"
for args in "list" "metric --json"; do
        # shellcheck disable=SC2086
        loaded=$(env AMDSMI_SYSFS_ROOT="$tree" RUNTIME_DIRECTORY="$run" LD_DEBUG=files \
                DBUS_SYSTEM_BUS_ADDRESS=unix:path=/nonexistent "$amdsmi" $args 2>&1 >/dev/null |
                grep -c 'file=libsystemd' || true)
        if [ "$loaded" != 0 ]; then
                echo "FAIL: amdsmi $args with a live amdsmid PID file loads libsystemd" >&2
                fail=1
        fi
done
loaded=$(env AMDSMI_SYSFS_ROOT="$tree" RUNTIME_DIRECTORY="$run" LD_DEBUG=files \
        DBUS_SYSTEM_BUS_ADDRESS=unix:path=/nonexistent \
        "$amdsmi" power set --dry-run -g 0 --host 500 2>&1 >/dev/null |
        grep -c 'file=libsystemd' || true)
if [ "$loaded" = 0 ]; then
        echo "FAIL: amdsmi power set --dry-run with a live amdsmid PID file did not load" \
                "libsystemd" >&2
        fail=1
fi
[ "$fail" = 0 ] && echo "ok: libsystemd is loaded only to ask amdsmid for a change"
exit "$fail"
