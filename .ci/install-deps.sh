#!/bin/bash
# SPDX-License-Identifier: MIT
#
# Installs everything amdsmi needs to build and test on Debian 12, and nothing else. Idempotent
# and fast on a machine that has it all already: apt is only run for packages that are missing.
# Used by README.md's commands and by .ci/run alike. Runs apt through sudo when not root.

set -euo pipefail

packages=(
        # build
        meson ninja-build pkg-config gcc libc6-dev
        libjson-c-dev libdrm-dev
        # amdsmi-sim: libfuse3 to build, fuse3 for fusermount3 (unmount in tests)
        libfuse3-dev fuse3
        # man pages
        scdoc
        # tests: unit tests, JSON schema checks, nm for the symbol lint
        libcmocka-dev python3-jsonschema binutils
        # tests: the zsh completion run in zsh (tests/cli/test-cli-help.py)
        zsh
        # amdsmid: sd-bus and sd-event, the udev monitor, amdsmid.conf; its tests: a private
        # dbus-daemon and python-dbusmock (polkitd template)
        libsystemd-dev libudev-dev libinih-dev dbus-daemon python3-dbusmock
        # systemd/ checks: xmllint, polkit's DTD, systemd-analyze and systemd-tmpfiles
        libxml2-utils polkitd systemd
        # libvirt hook: domain XML (libxml2), the libvirt API
        libxml2-dev libvirt-dev
        # amdsmid's /metrics endpoint (libmicrohttpd); its tests: promtool and a real Prometheus
        # server and node_exporter reading the textfile (their services are kept from starting)
        libmicrohttpd-dev prometheus prometheus-node-exporter
        # tests: the OpenMetrics parser of the Prometheus client (a strict second reader)
        python3-prometheus-client
        # fuzzing (.ci/fuzz.sh): clang, libFuzzer and the sanitizer runtimes
        clang-14 libclang-rt-14-dev
)

missing=()
for p in "${packages[@]}"; do
        if [ "$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null)" != installed ]; then
                missing+=("$p")
        fi
done

if [ ${#missing[@]} -eq 0 ]; then
        echo "install-deps: all ${#packages[@]} packages are installed"
        exit 0
fi

sudo=()
if [ "$(id -u)" -ne 0 ]; then
        sudo=(sudo)
fi

echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q
# No package may start a service here (prometheus would listen on :9090 and :9100): a
# policy-rc.d that refuses every start, for the time of the install, unless one exists.
policy=
if [ ! -e /usr/sbin/policy-rc.d ]; then
        policy=/usr/sbin/policy-rc.d
        printf '#!/bin/sh\nexit 101\n' | "${sudo[@]}" tee "$policy" >/dev/null
        "${sudo[@]}" chmod 755 "$policy"
        trap '"${sudo[@]}" rm -f "$policy"' EXIT
fi
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive \
        apt-get install -y -q --no-install-recommends "${missing[@]}"
