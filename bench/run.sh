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
sleepers=()
# also when a step fails (set -e): amdsmid and its bus stopped, the simulator unmounted
cleanup() {
        [ ${#sleepers[@]} -eq 0 ] || kill "${sleepers[@]}" 2>/dev/null || true
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
# the peer matrix: 64 partitions, 4096 pairs (budget: 10 ms)
AMDSMI_SYSFS_ROOT=$CPX "$EXEC" -n "$RUNS" -l "amdsmi topology --json, 8 GPUs x CPX" -- "$AMDSMI" topology --json
# the host preflight of a gim host, 8 MI300X with 8 VFs each: 8 GPU and 64 VF IOMMU groups,
# RAS, bad pages, XGMI, APML, the plan of amdsmid.conf (budget: 50 ms; exits 1 or 2 with
# findings: amdsmid does not run here)
"$B/sim/amdsmi-sim" snapshot --frozen -m mi300x-gim-8vf "$PW/gim-8vf" >/dev/null
mkdir -p "$PW/doctor-conf"
STATE_DIRECTORY=$PW/state RUNTIME_DIRECTORY=$PW/run CONFIGURATION_DIRECTORY=$PW/doctor-conf \
        AMDSMI_SYSFS_ROOT=$PW/gim-8vf "$EXEC" -n "$RUNS" -x 2 \
        -l "amdsmi doctor --json, 8 GPUs x 8 VFs (gim)" -- "$AMDSMI" doctor --json
STATE_DIRECTORY=$PW/state RUNTIME_DIRECTORY=$PW/run CONFIGURATION_DIRECTORY=$PW/doctor-conf \
        AMDSMI_SYSFS_ROOT=$PW/ras "$EXEC" -n "$RUNS" -x 2 \
        -l "amdsmi doctor --json, 8 GPUs (bare metal, one hive)" -- "$AMDSMI" doctor --json
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

# amdsmi process: 1000 live processes (sleep) made KFD users across the 64 partitions of the
# CPX tree, one partition each, with VRAM, a queue, stats and counters, as KFD writes them.
# The floor is the same listings and reads with nothing else done (bench-process).
echo "== amdsmi process: 1000 processes across 64 partitions (8 x MI300X CPX, plain tree)"
cp -a "$CPX" "$PW/proc-tree"
for _ in $(seq 1000); do
        sleep 3600 >/dev/null 2>&1 &
        sleepers+=($!)
done
/usr/bin/python3 - "$PW/proc-tree" "${sleepers[@]}" <<'PY'
import os
import sys

root, pids = sys.argv[1], sys.argv[2:]
nodes = os.path.join(root, "class/kfd/kfd/topology/nodes")
ids = []
for n in sorted(os.listdir(nodes), key=int):
    with open(os.path.join(nodes, n, "gpu_id")) as f:
        gpu_id = f.read().strip()
    if gpu_id != "0":
        ids.append(gpu_id)


def put(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


for i, pid in enumerate(pids):
    g = ids[i % len(ids)]
    d = os.path.join(root, "class/kfd/kfd/proc", pid)
    put(os.path.join(d, "pasid"), "%d\n" % (32768 + i))
    put(os.path.join(d, "vram_" + g), "%d\n" % ((i % 16 + 1) << 28))
    put(os.path.join(d, "sdma_" + g), "%d\n" % (i * 3))
    put(os.path.join(d, "stats_" + g, "evicted_ms"), "0\n")
    put(os.path.join(d, "stats_" + g, "cu_occupancy"), "%d\n" % (i % 38))
    for c in ("faults", "page_in", "page_out"):
        put(os.path.join(d, "counters_" + g, c), "0\n")
    put(os.path.join(d, "queues", "0", "gpuid"), g)
    put(os.path.join(d, "queues", "0", "size"), "1048576")
    put(os.path.join(d, "queues", "0", "type"), "0")
PY
AMDSMI_SYSFS_ROOT=$PW/proc-tree "$B/bench/bench-process" 20
AMDSMI_SYSFS_ROOT=$PW/proc-tree "$EXEC" -n 20 \
        -l "amdsmi process --json, 1000 processes on 64 partitions (budget 100 ms)" -- \
        "$AMDSMI" process --json
kill "${sleepers[@]}" 2>/dev/null || true
wait "${sleepers[@]}" 2>/dev/null || true
sleepers=()

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
        # A tree rocm-smi 5.2 reads to the end (exit 0): its labels, power1_average, and every
        # gpu_metrics a zeroed 1.3 table (120 bytes), the last revision it knows. amdsmi reads
        # the same tree (its 1.3 parser), so this is the ratio of two successful runs.
        cp -a "$PW/rocm-tree" "$PW/rocm-done"
        find "$PW/rocm-done" -name gpu_metrics -type f | while read -r f; do
                { printf '\170\000\001\003'; head -c 116 /dev/zero; } > "$f"
        done
        find "$PW/rocm-done" -type d -regex '.*/hwmon/hwmon[0-9]+' | while read -r h; do
                [ ! -e "$h/power1_input" ] || cp "$h/power1_input" "$h/power1_average"
        done
        peer_ratio "$PW/rocm-done" "rocm-smi / amdsmi metric (tree rocm-smi reads to the end)" \
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
                amdsmid_start "$B/daemon/amdsmid" "$PW/rocm-done"
                peer_ratio "$PW/rocm-done" \
                        "rocm-smi / amdsmi metric through amdsmid (tree rocm-smi reads to the end)" \
                        "metric --json" "rocm-smi --showuse --showtemp --showpower --json" \
                        RUNTIME_DIRECTORY="$bus_dir/run" AMDSMI_SYSFS_ROOT="$PW/rocm-done"
                amdsmid_stop
        fi
        # What any process costs here bounds every whole-process ratio: rocm-smi against
        # /bin/true and against an empty program linked with amdsmi's libraries
        if command -v cc >/dev/null; then
                printf 'int main(void) { return 0; }\n' > "$PW/empty.c"
                cc -O2 -o "$PW/empty" "$PW/empty.c" -Wl,--no-as-needed \
                        -L"$B/lib" -Wl,-rpath,"$B/lib" -lamdsmi -ljson-c -linih -ldrm 2>/dev/null ||
                        rm -f "$PW/empty"
        fi
        out=$(unshare -m bash -c '
                set -e
                mount --bind "$1" /sys
                mount -t tmpfs tmpfs /dev/shm
                "$2" -n "$3" -l "/bin/true" -- /bin/true
                [ ! -x "$4" ] || "$2" -n "$3" -l "empty program, amdsmi'"'"'s libraries" -- "$4"
                "$2" -n "$5" -l "rocm-smi" -- sh -c "rm -f /dev/shm/rocm_smi*; exec rocm-smi --showuse --showtemp --showpower --json" || true
        ' _ "$PW/rocm-done" "$EXEC" "$RUNS" "$PW/empty" "$PEER_RUNS")
        echo "$out"
        peer=$(echo "$out" | grep '^rocm-smi' | median)
        echo "$out" | grep -v '^rocm-smi' | while read -r line; do
                t=$(echo "$line" | median)
                [ -z "$t" ] || [ -z "$peer" ] || [ "$t" -le 0 ] ||
                        echo "ceiling: rocm-smi / ${line%%:*} = $(awk -v a="$peer" -v b="$t" 'BEGIN { printf "%.0f", a / b }')x (the ratio of a run that did nothing else)"
        done
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

if [ "$(id -u)" = 0 ] && [ -e /dev/fuse ]; then
        # The simulator's recovery takes kernel.reset_ms (50 ms): what amdsmi adds is the
        # library's reader and wait (bench-reset) and, in the command, the preflight, the
        # verification and the re-application (overhead_ms: total - reset - wait; budget 50 ms).
        echo "== GPU reset on a simulator mount (mi300x-8, one hive of 8), beyond the kernel's wait"
        mnt=$PW/sim-reset
        mkdir "$mnt" "$PW/reset.run" "$PW/reset.state"
        "$B/sim/amdsmi-sim" mount --frozen "$mnt"
        RUNTIME_DIRECTORY=$PW/reset.run AMDSMI_SYSFS_ROOT=$mnt "$B/bench/bench-reset" "${RESET_RUNS:-20}" || true
        out=$(for _ in $(seq "${RESET_RUNS:-20}"); do
                RUNTIME_DIRECTORY=$PW/reset.run STATE_DIRECTORY=$PW/reset.state \
                        CONFIGURATION_DIRECTORY=$PW/reset.state AMDSMI_SYSFS_ROOT=$mnt \
                        "$AMDSMI" --direct reset -g 0 -G --json 2>/dev/null | tr -d '\n' || true
                echo
        done)
        echo "$out" | python3 -c '
import json, statistics, sys
gpus = [json.loads(l)["gpus"][0] for l in sys.stdin if l.strip()]
if not gpus:
    sys.exit("no reset document")
med = lambda k: statistics.median(g["stages_ms"][k] for g in gpus)
print("amdsmi reset -g 0 -G, %d runs (medians, ms): preflight %g, reset %g, wait %g, verify %g, "
      "reapply %g, total %g" % (len(gpus), med("preflight"), med("reset"), med("wait"),
                                med("verify"), med("reapply"), med("total")))
own = statistics.median(g["overhead_ms"] for g in gpus)
print("ratio: the tool'"'"'s own time beyond the kernel'"'"'s wait = %g ms (budget 50 ms: %s)"
      % (own, "met" if own <= 50 else "NOT met"))' || echo "the reset benchmark failed"
        fusermount3 -u "$mnt"
        mnt=
else
        echo "== GPU reset skipped (needs root and /dev/fuse)"
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

# amdsmid's Prometheus /metrics on the simulated 8 x MI300X in CPX/NPS4 (64 partitions): the
# mi300x-8 machine with every GPU in CPX, served by amdsmi-sim (living telemetry), amdsmid
# under systemd-socket-activate on a private bus with its default [metrics] interval_ms (1 s).
#   1. metrics_render() of the documents `amdsmi VERB --json` printed through that amdsmid
#   2. GET /metrics on loopback (bench-metrics' own HTTP client) alternated with
#      Manager.GetMetrics(), back to back and each after a second of quiet
#   3. windows of METRICS_WINDOW s (default 60), each after 7 s of warm-up (the clients run
#      meanwhile; with none, the sampler has stopped by then): amdsmid's CPU (utime + stime of
#      /proc/PID/stat, and the exact schedstat) idle, with one GetMetrics() client at 1 Hz (the
#      sampler's consumer) and with 10 scrapers at 1 Hz; then the same windows, plus one
#      scraper at 1 Hz, under strace, counting amdsmid's syscalls on files of the mount
#      (strace slows amdsmid: those windows are not timed)
#   4. 2 and 3's CPU windows again with amdsmid on a plain snapshot of the same machine (what
#      the reads cost without FUSE)
metrics_window=${METRICS_WINDOW:-60}
metrics_warm=7

free_port() {
        /usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# CPU time of PID: "TICKS NS" (utime + stime in clock ticks; schedstat of every thread in ns)
proc_cpu() {
        local ns=0 t v
        for t in /proc/"$1"/task/*/schedstat; do
                read -r v _ < "$t" && ns=$((ns + v))
        done
        # the fields after the command name, which is in parentheses
        echo "$(sed 's/^.*) //' "/proc/$1/stat" | awk '{ print $12 + $13 }') $ns"
}

# metrics_clients KIND SECONDS: runs the clients of a window (none, sampler, scraper, scrapers)
metrics_clients() {
        case $1 in
        none) sleep "$2" ;;
        sampler) "$B/bench/bench-metrics" dbus-client 1 "$2" ;;
        scraper) "$B/bench/bench-metrics" scrapers "$metrics_port" 1 1 "$2" ;;
        scrapers) "$B/bench/bench-metrics" scrapers "$metrics_port" 10 1 "$2" ;;
        esac
}

declare -A metrics_label=(
        [none]="no client"
        [sampler]="one GetMetrics() client at 1 Hz"
        [scraper]="1 scraper at 1 Hz"
        [scrapers]="10 scrapers at 1 Hz"
)

# metrics_cpu KIND: amdsmid's CPU over a window; sets cpu_pct[KIND]
declare -A cpu_pct=()
metrics_cpu() {
        local out=$PW/metrics-clients.out c0 c1 t0 t1 hz pct_ticks pct_ns
        metrics_clients "$1" $((metrics_warm + metrics_window + 2)) > "$out" &
        local cpid=$!
        sleep "$metrics_warm"
        t0=$(date +%s%N)
        c0=$(proc_cpu "$daemon_pid")
        sleep "$metrics_window"
        c1=$(proc_cpu "$daemon_pid")
        t1=$(date +%s%N)
        wait "$cpid" || echo "(the clients of the window failed)"
        hz=$(getconf CLK_TCK)
        read -r pct_ticks pct_ns < <(echo "$c0 $c1" | awk -v hz="$hz" -v dt=$((t1 - t0)) \
                '{ printf "%.2f %.3f\n", 100 * ($3 - $1) / hz / (dt / 1e9), 100 * ($4 - $2) / dt }')
        cpu_pct[$1]=$pct_ns
        echo "amdsmid CPU, ${metrics_label[$1]}, $(awk -v d=$((t1 - t0)) 'BEGIN { printf "%.1f", d / 1e9 }') s: $pct_ns % of one core (schedstat; /proc/PID/stat utime+stime: $pct_ticks %)"
        sed 's/^/  /' "$out"
}

# metrics_reads KIND: amdsmid's syscalls on files of the mount over a window (strace); sets
# reads[KIND] (read and pread64 calls) and prints the files read most
declare -A reads=()
metrics_reads() {
        local out=$PW/metrics-clients.out trace=$PW/strace-$1.txt
        metrics_clients "$1" $((metrics_warm + metrics_window + 2)) > "$out" &
        local cpid=$!
        sleep "$metrics_warm"
        timeout -s INT "$metrics_window" strace -f -y -o "$trace" \
                -e trace=openat,read,pread64,readlinkat,getdents64 -p "$daemon_pid" 2>/dev/null || true
        wait "$cpid" || echo "(the clients of the window failed)"
        # a call on the mount: its fd (or the directory fd of an openat) is shown <under $mnt>
        awk -v m="<$mnt" '
                index($0, m) == 0 { next }
                {
                        call = $0; sub(/^[0-9]+ +/, "", call); sub(/\(.*/, "", call)
                        n[call]++
                        if (call == "read" || call == "pread64") {
                                f = $0; sub(/^[^<]*</, "", f); sub(/>.*/, "", f)
                                sub(/.*\//, "", f); gsub(/[0-9]+/, "N", f)
                                files[f]++
                        }
                }
                END {
                        printf "%d %d %d %d %d\n", n["read"] + n["pread64"], n["openat"],
                                n["getdents64"], n["readlinkat"], n["read"] + n["pread64"] + n["openat"] + n["getdents64"] + n["readlinkat"]
                        for (f in files) printf "file %d %s\n", files[f], f
                }' "$trace" > "$trace.sum"
        local r o g l all
        read -r r o g l all < "$trace.sum"
        reads[$1]=$r
        echo "amdsmid's calls on the mount, ${metrics_label[$1]}, $metrics_window s: $r reads (read/pread64), $o openat, $g getdents64, $l readlinkat ($all in all)"
        echo "  read most: $(grep '^file ' "$trace.sum" | sort -k2,2nr | head -n 8 | awk '{ printf "%s%s %d", (NR > 1) ? ", " : "", $3, $2 }')"
        sed 's/^/  /' "$out"
}

if [ "$(id -u)" = 0 ] && [ -e /dev/fuse ] && command -v dbus-daemon >/dev/null &&
        command -v systemd-socket-activate >/dev/null; then
        echo "== amdsmid's /metrics: 8 x MI300X in CPX/NPS4 (64 partitions) on amdsmi-sim; load average $(uptime | sed 's/.*load average: //')"
        "$B/sim/amdsmi-sim" dump-machine mi300x-8 |
                /usr/bin/python3 -c 'import json, sys; m = json.load(sys.stdin); m["name"] = "mi300x-8-cpx"; [g.update(compute_partition="CPX", memory_partition="NPS4") for g in m["gpus"]]; json.dump(m, sys.stdout)' \
                > "$PW/mi300x-8-cpx.json"
        mnt=$PW/sim-metrics
        mkdir "$mnt" "$PW/metrics-docs"
        "$B/sim/amdsmi-sim" mount --seed 1 -m "$PW/mi300x-8-cpx.json" --ctl "$PW/ctl-metrics.sock" "$mnt"
        metrics_port=$(free_port)
        amdsmid_start_metrics "$B/daemon/amdsmid" "$mnt" "$metrics_port"
        for verb in list static metric ras power partition health sriov "apply --check"; do
                # shellcheck disable=SC2086
                env RUNTIME_DIRECTORY="$bus_dir/run" CONFIGURATION_DIRECTORY="$bus_dir/etc" \
                        AMDSMI_SYSFS_ROOT="$mnt" "$AMDSMI" $verb --json \
                        > "$PW/metrics-docs/${verb%% *}.json" 2>/dev/null ||
                        echo "(amdsmi $verb --json failed: the renderer goes without it)"
        done
        echo "-- metrics_render() in-process, documents that amdsmi VERB --json printed through amdsmid"
        "$B/bench/bench-metrics" render "$PW/metrics-docs" "${RENDER_RUNS:-2000}" || echo "bench-metrics render failed"
        echo "-- one scrape end to end (HTTP on loopback, bench-metrics' C client) against Manager.GetMetrics(), same amdsmid"
        "$B/bench/bench-metrics" scrape "$metrics_port" "${SCRAPE_RUNS:-2000}" "${FRESH_RUNS:-10}" 1000 ||
                echo "bench-metrics scrape failed"
        echo "-- amdsmid's CPU over ${metrics_window} s windows (budget for 10 scrapers at 1 Hz: <= 1 % of one core)"
        for kind in none sampler scrapers; do
                metrics_cpu "$kind"
        done
        if [ -n "${cpu_pct[scrapers]:-}" ]; then
                echo "ratio: amdsmid CPU with 10 scrapers at 1 Hz: ${cpu_pct[scrapers]} % of one core ($(awk -v a="${cpu_pct[scrapers]}" 'BEGIN { print (a <= 1.0) ? "met" : "NOT met" }'); idle ${cpu_pct[none]} %, one GetMetrics() client ${cpu_pct[sampler]} %)"
        fi
        if command -v strace >/dev/null; then
                echo "-- amdsmid's sysfs reads over ${metrics_window} s windows (strace on amdsmid: calls on files of the mount)"
                for kind in none sampler scraper scrapers; do
                        metrics_reads "$kind"
                done
                echo "ratio: sysfs reads, 10 scrapers / 1 scraper = $(awk -v a="${reads[scrapers]}" -v b="${reads[scraper]}" 'BEGIN { printf "%.2f", b ? a / b : 0 }')x (${reads[scrapers]} / ${reads[scraper]})"
                echo "ratio: sysfs reads, 10 scrapers / the sampler's consumer alone = $(awk -v a="${reads[scrapers]}" -v b="${reads[sampler]}" 'BEGIN { printf "%.2f", b ? a / b : 0 }')x (${reads[scrapers]} / ${reads[sampler]}; idle ${reads[none]}); claim \"no sysfs reads beyond the sampler's\": $(awk -v a="${reads[scrapers]}" -v b="${reads[sampler]}" 'BEGIN { print (a <= b * 1.05) ? "holds" : "does NOT hold" }')"
        else
                echo "(strace not installed: amdsmid's sysfs reads are not counted)"
        fi
        amdsmid_stop
        fusermount3 -u "$mnt"
        mnt=
        # what FUSE adds: the same machine as a plain tree, as the kernel's sysfs is read
        echo "-- the same on a plain snapshot of that machine (no FUSE round trips; frozen telemetry)"
        "$B/sim/amdsmi-sim" snapshot --frozen -m "$PW/mi300x-8-cpx.json" "$PW/cpx-plain" >/dev/null
        metrics_port=$(free_port)
        amdsmid_start_metrics "$B/daemon/amdsmid" "$PW/cpx-plain" "$metrics_port"
        "$B/bench/bench-metrics" scrape "$metrics_port" "${SCRAPE_RUNS:-2000}" "${FRESH_RUNS:-10}" 1000 ||
                echo "bench-metrics scrape failed"
        for kind in none scrapers; do
                metrics_cpu "$kind"
        done
        if [ -n "${cpu_pct[scrapers]:-}" ]; then
                echo "ratio: amdsmid CPU with 10 scrapers at 1 Hz, plain tree: ${cpu_pct[scrapers]} % of one core ($(awk -v a="${cpu_pct[scrapers]}" 'BEGIN { print (a <= 1.0) ? "met" : "NOT met" }'); idle ${cpu_pct[none]} %)"
        fi
        amdsmid_stop
else
        echo "== amdsmid's /metrics skipped (needs root, /dev/fuse, dbus-daemon and systemd-socket-activate)"
fi
