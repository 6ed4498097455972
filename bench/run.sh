#!/bin/bash
# SPDX-License-Identifier: MIT
#
# Runs every benchmark on the generated fixture trees and prints medians, plus ratios against
# peers measured on the same tree in the same run, and the cost of a read through amdsmi-sim
# against an empty FUSE handler (bench-sim). Never part of the test suite: timings on a
# shared 2-core machine are noisy, so they are reported, not asserted.
#
#   bench/run.sh [BUILD_DIR]        (default: build)
#
# Peers: rocm-smi (Debian package rocm-smi) reads a hard-coded /sys, so it runs in a private
# mount namespace with the fixture tree bind-mounted over /sys (needs root); amdsmi is timed
# there too, so both read the same files through the same kind of mount.
set -euo pipefail
# shellcheck source=bench/amdsmid-bus.sh
. "$(dirname "${BASH_SOURCE[0]}")/amdsmid-bus.sh"

B=$(cd "${1:-build}" && pwd)
TREES=$B/tests/fixtures/trees
SPX=$TREES/mi300x-8-spx
CPX=$TREES/mi300x-8-cpx
RUNS=${RUNS:-200}
PEER_RUNS=${PEER_RUNS:-20}
EXEC=$B/bench/bench-exec
AMDSMI=$B/cli/amdsmi

for t in "$SPX" "$CPX"; do
        [ -d "$t" ] || { echo "missing fixture tree $t: build first (ninja -C $B)" >&2; exit 1; }
done

# amdsmi power also reads the state file and the APML files, and a cap writes power1_cap: the
# power runs use their own state and runtime directories and copies of the SPX tree.
PW=$(mktemp -d)
mnt=
# also when a step fails (set -e): amdsmid and its bus stopped, the simulator unmounted
cleanup() {
        [ -z "${bus_dir:-}" ] || amdsmid_stop
        if [ -n "$mnt" ] && mountpoint -q "$mnt"; then
                fusermount3 -u "$mnt" || umount -l "$mnt" || true
        fi
        rm -rf "$PW"
}
trap cleanup EXIT
mkdir "$PW/state" "$PW/run" "$PW/state-sources" "$PW/run-sources"

echo "== in-process"
"$B/bench/bench-gpu-metrics"
AMDSMI_SYSFS_ROOT=$SPX "$B/bench/bench-discovery" 500 | sed 's/^/mi300x-8-spx: /'
AMDSMI_SYSFS_ROOT=$CPX "$B/bench/bench-discovery" 200 | sed 's/^/mi300x-8-cpx: /'
AMDSMI_SYSFS_ROOT=$SPX "$B/bench/bench-telemetry" 500 | sed 's/^/mi300x-8-spx: /'
# the fixture trees have no RAS files: a plain snapshot of the simulator's mi300x-8 has them,
# the bad-page table and the CPER ring
"$B/sim/amdsmi-sim" snapshot --frozen -m mi300x-8 "$PW/ras" >/dev/null
AMDSMI_SYSFS_ROOT=$PW/ras "$B/bench/bench-health" 500 | sed 's/^/mi300x-8 (sim snapshot): /'
cp -a "$SPX" "$PW/tree-bench"
AMDSMI_SYSFS_ROOT=$PW/tree-bench "$B/bench/bench-power" | sed 's/^/mi300x-8-spx: /'

echo "== whole process (plain snapshot tree, AMDSMI_SYSFS_ROOT)"
AMDSMI_SYSFS_ROOT=$SPX "$EXEC" -n "$RUNS" -l "amdsmi metric --json, 8 GPUs" -- "$AMDSMI" metric --json
AMDSMI_SYSFS_ROOT=$SPX "$EXEC" -n "$RUNS" -l "amdsmi list --json, 8 GPUs" -- "$AMDSMI" list --json
AMDSMI_SYSFS_ROOT=$CPX "$EXEC" -n "$RUNS" -l "amdsmi static --json, 8 GPUs x CPX" -- "$AMDSMI" static --json
AMDSMI_SYSFS_ROOT=$CPX "$EXEC" -n "$RUNS" -l "amdsmi partition --json, 8 GPUs x CPX" -- "$AMDSMI" partition --json
AMDSMI_SYSFS_ROOT=$SPX "$EXEC" -n "$RUNS" -l "amdsmi partition --json, 8 GPUs x SPX" -- "$AMDSMI" partition --json
STATE_DIRECTORY=$PW/state RUNTIME_DIRECTORY=$PW/run AMDSMI_SYSFS_ROOT=$SPX \
        "$EXEC" -n "$RUNS" -l "amdsmi power --json, 8 GPUs" -- "$AMDSMI" power --json
if [ "$(id -u)" = 0 ]; then
        # Host, two VMs and APML recorded on every GPU (in-process changes need root); each
        # change applies its cap to the copy, so the copy agrees with the recorded sources.
        cp -a "$SPX" "$PW/tree-sources"
        for src in "--host 600W" "--vm web1 450W" "--vm web2 500W" "--apml 700W"; do
                # shellcheck disable=SC2086
                log=$(STATE_DIRECTORY=$PW/state-sources RUNTIME_DIRECTORY=$PW/run-sources \
                        AMDSMI_SYSFS_ROOT=$PW/tree-sources "$AMDSMI" power set -g all $src 2>&1) ||
                        { echo "amdsmi power set -g all $src failed: $log" >&2; exit 1; }
        done
        STATE_DIRECTORY=$PW/state-sources RUNTIME_DIRECTORY=$PW/run-sources \
                AMDSMI_SYSFS_ROOT=$PW/tree-sources "$EXEC" -n "$RUNS" \
                -l "amdsmi power --json, 8 GPUs, host+2 VM+apml sources" -- "$AMDSMI" power --json
else
        echo "amdsmi power --json with sources skipped (recording sources in-process needs root)"
fi

median() { sed -n 's/.*median \([0-9]*\) us.*/\1/p'; }

# The CLI's start: --version against /bin/true (libsystemd is loaded only to talk to
# amdsmid), alternated over 3 rounds; budget 1.5x.
echo "== the CLI's start"
t=() v=()
for round in 1 2 3; do
        out=$("$EXEC" -n "$RUNS" -l "/bin/true (round $round)" -- /bin/true)
        echo "$out"
        t+=("$(echo "$out" | median)")
        out=$("$EXEC" -n "$RUNS" -l "amdsmi --version (round $round)" -- "$AMDSMI" --version)
        echo "$out"
        v+=("$(echo "$out" | median)")
done
a=$(printf '%s\n' "${t[@]}" | sort -n | sed -n 2p)
b=$(printf '%s\n' "${v[@]}" | sort -n | sed -n 2p)
if [ -n "$a" ] && [ -n "$b" ] && [ "$a" -gt 0 ]; then
        echo "ratio: amdsmi --version / /bin/true = $(awk -v a="$b" -v b="$a" 'BEGIN { printf "%.2f", a / b }')x ($b us / $a us; budget 1.5x)"
fi

# Reads through a running amdsmid (Manager.GetDocument): the same command, and the files the
# CLI opens besides its libraries and the time zone (strace, when installed).
if command -v dbus-daemon >/dev/null; then
        echo "== amdsmi metric --json through amdsmid (plain mi300x-8 SPX tree); budget 1.5 ms"
        amdsmid_start "$B/daemon/amdsmid" "$SPX"
        env RUNTIME_DIRECTORY="$bus_dir/run" AMDSMI_SYSFS_ROOT=$SPX "$EXEC" -n "$RUNS" \
                -l "amdsmi metric --json through amdsmid, 8 GPUs" -- "$AMDSMI" metric --json
        env RUNTIME_DIRECTORY="$bus_dir/run" AMDSMI_SYSFS_ROOT=$SPX "$EXEC" -n "$RUNS" \
                -l "amdsmi metric --json --direct (amdsmid running), 8 GPUs" -- \
                "$AMDSMI" --direct metric --json
        # the whole read through amdsmid (cli/dbus-mini.c, no libsystemd) against /bin/true,
        # alternated; budget 2.5x
        t=() l=()
        for round in 1 2 3; do
                out=$("$EXEC" -n "$RUNS" -l "/bin/true (round $round)" -- /bin/true)
                echo "$out"
                t+=("$(echo "$out" | median)")
                out=$(env RUNTIME_DIRECTORY="$bus_dir/run" AMDSMI_SYSFS_ROOT=$SPX "$EXEC" \
                        -n "$RUNS" -l "amdsmi list --json through amdsmid (round $round)" -- \
                        "$AMDSMI" list --json)
                echo "$out"
                l+=("$(echo "$out" | median)")
        done
        a=$(printf '%s\n' "${t[@]}" | sort -n | sed -n 2p)
        b=$(printf '%s\n' "${l[@]}" | sort -n | sed -n 2p)
        if [ -n "$a" ] && [ -n "$b" ] && [ "$a" -gt 0 ]; then
                echo "ratio: amdsmi list --json through amdsmid / /bin/true = $(awk -v a="$b" -v b="$a" 'BEGIN { printf "%.2f", a / b }')x ($b us / $a us; budget 2.5x)"
        fi
        if command -v strace >/dev/null; then
                for args in "metric --json" "--direct metric --json"; do
                        # shellcheck disable=SC2086
                        n=$(env RUNTIME_DIRECTORY="$bus_dir/run" AMDSMI_SYSFS_ROOT=$SPX \
                                strace -f -e trace=openat,open -o /dev/stdout "$AMDSMI" $args \
                                2>/dev/null | grep -v -e '"/lib' -e '"/usr/' -e '"/etc/' \
                                -e "\"$bus_dir/run" -e ENOENT -e '^.*exited' -e '"/proc/' |
                                grep -c 'open' || true)
                        echo "files opened by amdsmi $args (libraries, /etc, /proc and the runtime directory aside): $n"
                done
        else
                echo "(strace not installed: the opens are not counted)"
        fi
        amdsmid_stop
fi

# gpu_metrics 1.9 (attribute-encoded, Linux 6.19 / AMD DKMS) against 1.8 on the same 8 x MI300X
# server: plain snapshots of the simulator's mi300x-8-dkms and of the same machine serving
# 1.8, alternated so that both see the same machine noise.
echo "== gpu_metrics 1.9 against 1.8, whole process (8 x MI300X, plain snapshot trees)"
"$B/sim/amdsmi-sim" dump-machine mi300x-8-dkms |
        /usr/bin/python3 -c 'import json, sys; m = json.load(sys.stdin); m["name"] = "mi300x-8-v18"; m["kernel"]["gpu_metrics_revision"] = 8; json.dump(m, sys.stdout)' \
        > "$PW/mi300x-8-v18.json"
"$B/sim/amdsmi-sim" snapshot --frozen -m mi300x-8-dkms "$PW/v19" >/dev/null
"$B/sim/amdsmi-sim" snapshot --frozen -m "$PW/mi300x-8-v18.json" "$PW/v18" >/dev/null
v18=() v19=()
for round in 1 2 3; do
        out=$(AMDSMI_SYSFS_ROOT=$PW/v18 "$EXEC" -n "$RUNS" -l "amdsmi metric --json, 8 GPUs, gpu_metrics 1.8 (round $round)" -- "$AMDSMI" metric --json)
        echo "$out"
        v18+=("$(echo "$out" | median)")
        out=$(AMDSMI_SYSFS_ROOT=$PW/v19 "$EXEC" -n "$RUNS" -l "amdsmi metric --json, 8 GPUs, gpu_metrics 1.9 (round $round)" -- "$AMDSMI" metric --json)
        echo "$out"
        v19+=("$(echo "$out" | median)")
done
a=$(printf '%s\n' "${v18[@]}" | sort -n | sed -n 2p)
b=$(printf '%s\n' "${v19[@]}" | sort -n | sed -n 2p)
if [ -n "$a" ] && [ -n "$b" ] && [ "$a" -gt 0 ]; then
        echo "ratio: amdsmi metric --json 1.9 / 1.8 = $(awk -v a="$b" -v b="$a" 'BEGIN { printf "%.2f", a / b }')x (median of 3 rounds' medians: $b us / $a us; budget 1.1x)"
fi

# One peer against amdsmi on TREE, bind-mounted over /sys in a private mount namespace:
#   peer_ratio TREE LABEL 'AMDSMI ARGS' 'PEER COMMAND' [ENV...]
peer_ratio() {
        local tree=$1 label=$2 ours_args=$3 peer_cmd=$4 out ours peer ratio
        shift 4
        # rocm-smi leaves its mutex in /dev/shm when it fails, and the next run waits 5 s for
        # it: every peer run starts on a clean private /dev/shm (the sh and rm count as the
        # peer's, about a millisecond)
        out=$(env "$@" unshare -m bash -c '
                set -e
                mount --bind "$1" /sys
                mount -t tmpfs tmpfs /dev/shm
                "$2" -n "$4" -l "amdsmi $5" -- "$3" $5 || true
                "$2" -n "$6" -l "$7" -- sh -c "rm -f /dev/shm/rocm_smi*; exec $7" || true
        ' _ "$tree" "$EXEC" "$AMDSMI" "$RUNS" "$ours_args" "$PEER_RUNS" "$peer_cmd")
        echo "$out"
        ours=$(echo "$out" | grep '^amdsmi' | median)
        peer=$(echo "$out" | grep -v '^amdsmi' | median)
        if [ -n "$ours" ] && [ -n "$peer" ] && [ "$ours" -gt 0 ]; then
                ratio=$(awk -v a="$peer" -v b="$ours" 'BEGIN { printf "%.1f", a / b }')
                if echo "$out" | grep -v '^amdsmi' | grep -q FAILED; then
                        echo "ratio: $label >= ${ratio}x (the peer failed on this tree; its time to the failure)"
                else
                        echo "ratio: $label = ${ratio}x"
                fi
        fi
}

if command -v rocm-smi >/dev/null && [ "$(id -u)" = 0 ] && unshare -m true 2>/dev/null; then
        echo "== peers on the same tree, bind-mounted over /sys in a private mount namespace"
        # Debian's rocm-smi 5.2 predates MI300: on the tree as the kernel shows it, it fails to
        # initialise (it wants temp1_label and in0_label, which MI300 hwmon does not have).
        # With those two labels added to a copy of the tree it initialises, reads the hwmon,
        # KFD and busy files of all 8 GPUs, and aborts at gpu_metrics 1.4 and later (which it
        # does not know): both are times to a failure, lower bounds of a successful run.
        peer_ratio "$SPX" "rocm-smi / amdsmi metric" "metric --json" \
                "rocm-smi --showuse --showtemp --showpower --json"
        cp -a "$SPX" "$PW/rocm-tree"
        find "$PW/rocm-tree" -type d -regex '.*/hwmon/hwmon[0-9]+' | while read -r h; do
                [ -e "$h/temp1_label" ] || { echo edge > "$h/temp1_label"; echo 35000 > "$h/temp1_input"; }
                [ -e "$h/in0_label" ] || { echo vddgfx > "$h/in0_label"; echo 800 > "$h/in0_input"; }
        done
        peer_ratio "$PW/rocm-tree" "rocm-smi / amdsmi metric (tree with rocm-smi's labels)" \
                "metric --json" "rocm-smi --showuse --showtemp --showpower --json"
        peer_ratio "$SPX" "rocm-smi / amdsmi power" "power --json" \
                "rocm-smi --showpower --showmaxpower --json" \
                STATE_DIRECTORY="$PW/state" RUNTIME_DIRECTORY="$PW/run"
        # what an operator's `amdsmi metric --json` does where amdsmid runs: the CLI names the
        # tree amdsmid reads (so that it asks amdsmid), rocm-smi reads it over /sys
        if command -v dbus-daemon >/dev/null; then
                amdsmid_start "$B/daemon/amdsmid" "$PW/rocm-tree"
                peer_ratio "$PW/rocm-tree" \
                        "rocm-smi / amdsmi metric through amdsmid (tree with rocm-smi's labels)" \
                        "metric --json" "rocm-smi --showuse --showtemp --showpower --json" \
                        RUNTIME_DIRECTORY="$bus_dir/run" AMDSMI_SYSFS_ROOT="$PW/rocm-tree"
                amdsmid_stop
        fi
else
        echo "== peers skipped (need root, unshare -m and the rocm-smi package)"
fi

if [ "$(id -u)" = 0 ] && [ -e /dev/fuse ]; then
        echo "== amdsmi-sim against an empty FUSE handler, same run"
        out=$("$B/bench/bench-sim" "$B/sim/amdsmi-sim")
        echo "$out"
        worst=$(echo "$out" | sed -n 's/^  amdsmi-sim .* ratio \([0-9.]*\)$/\1/p' |
                sort -n | tail -n 1)
        [ -z "$worst" ] || echo "ratio: amdsmi-sim / empty FUSE handler <= ${worst}x (budget 1.5x)"
else
        echo "== amdsmi-sim skipped (needs root and /dev/fuse)"
fi

# A KFD event from its injection to the Health.Event signal at a subscriber of amdsmid, which
# follows the simulator's events through the KFD shim (as `amdsmi-sim run` runs a command).
if [ "$(id -u)" = 0 ] && [ -e /dev/fuse ] && command -v dbus-daemon >/dev/null; then
        echo "== KFD event -> Health.Event at a subscriber (mi300x-8 simulator, amdsmid)"
        mnt=$PW/sim-events
        mkdir "$mnt" "$PW/dev-events"
        : > "$PW/dev-events/kfd"
        "$B/sim/amdsmi-sim" mount --ctl "$PW/ctl-events.sock" "$mnt"
        LD_PRELOAD=$B/sim/libamdsmi-sim-kfd.so AMDSMI_DEV_ROOT=$PW/dev-events \
                AMDSMI_SIM_CTL=$PW/ctl-events.sock amdsmid_start "$B/daemon/amdsmid" "$mnt"
        "$B/bench/bench-events" "$PW/ctl-events.sock" 0000:05:00.0 "${EVENT_RUNS:-500}" || true
        amdsmid_stop
        fusermount3 -u "$mnt"
        mnt=
else
        echo "== KFD event latency skipped (needs root, /dev/fuse and dbus-daemon)"
fi

if [ "$(id -u)" = 0 ] && [ -e /dev/fuse ]; then
        echo "== compute-mode change on a simulator mount (mi300x-8), library against a bare write"
        mnt=$PW/sim
        mkdir "$mnt"
        "$B/sim/amdsmi-sim" mount --frozen "$mnt"
        RUNTIME_DIRECTORY=$PW/sim.run AMDSMI_SYSFS_ROOT=$mnt "$B/bench/bench-partition" "${SWITCH_RUNS:-10}" || true
        fusermount3 -u "$mnt"
        mnt=
else
        echo "== compute-mode change skipped (needs root and /dev/fuse)"
fi

if command -v dbus-daemon >/dev/null; then
        echo "== amdsmid on a private bus (plain mi300x-8 SPX tree), against dbus-daemon's own round trip"
        amdsmid_start "$B/daemon/amdsmid" "$SPX"
        "$B/bench/bench-daemon" "$daemon_pid" "${DAEMON_ROUNDS:-2000}" || echo "bench-daemon failed"
        amdsmid_stop
        echo "== amdsmid with health sampling (plain snapshot of the simulated mi300x-8: RAS, bad pages, CPER)"
        amdsmid_start "$B/daemon/amdsmid" "$PW/ras"
        "$B/bench/bench-daemon" "$daemon_pid" "${DAEMON_ROUNDS:-2000}" || echo "bench-daemon failed"
        amdsmid_stop
else
        echo "== amdsmid skipped (needs dbus-daemon)"
fi
