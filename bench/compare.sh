#!/bin/bash
# SPDX-License-Identifier: MIT
#
# Two builds of amdsmi in one run: the read verbs as whole processes, the documents in-process
# and amdsmid's GetMetrics round trip, each alternated between the builds over ROUNDS rounds
# so that both see the same machine noise. Prints each round's medians and, per benchmark, the
# ratio NEW / OLD of the median of the rounds' medians. For a change that must not cost
# anything (a refactoring): build the commit before it in a worktree, then
#
#   bench/compare.sh OLD_BUILD_DIR NEW_BUILD_DIR
#
# The fixture trees are NEW's. Never part of the test suite: timings are reported, not
# asserted.
set -euo pipefail
# shellcheck source=bench/amdsmid-bus.sh
. "$(dirname "${BASH_SOURCE[0]}")/amdsmid-bus.sh"

OLD=$(cd "${1:?usage: compare.sh OLD_BUILD_DIR NEW_BUILD_DIR}" && pwd)
NEW=$(cd "${2:?usage: compare.sh OLD_BUILD_DIR NEW_BUILD_DIR}" && pwd)
RUNS=${RUNS:-200}
ROUNDS=${ROUNDS:-3}
TREES=$NEW/tests/fixtures/trees
SPX=$TREES/mi300x-8-spx
CPX=$TREES/mi300x-8-cpx
EXEC=$NEW/bench/bench-exec

for t in "$SPX" "$CPX"; do
        [ -d "$t" ] || { echo "missing fixture tree $t: build first (ninja -C $NEW)" >&2; exit 1; }
done

W=$(mktemp -d)
# also when a step fails (set -e): amdsmid and its bus stopped first
trap '[ -z "${bus_dir:-}" ] || amdsmid_stop; rm -rf "$W"' EXIT
mkdir "$W/state" "$W/run"

median() { sed -n 's/.*median \([0-9.]*\) us.*/\1/p' | head -n 1; }
middle() { printf '%s\n' "$@" | sort -g | sed -n "$(( ($# + 1) / 2 ))p"; }

# amdsmid moved from the top of the build tree to daemon/ with the core/ layout
daemon_of() { if [ -x "$1/daemon/amdsmid" ]; then echo "$1/daemon/amdsmid"; else echo "$1/amdsmid"; fi; }

# compare LABEL COMMAND... : COMMAND with @B@ replaced by each build directory
compare() {
        local label=$1 old=() new=() out
        shift
        for round in $(seq "$ROUNDS"); do
                for which in old new; do
                        local b=$OLD
                        [ "$which" = new ] && b=$NEW
                        out=$("${@//@B@/$b}")
                        echo "  $which round $round: $out"
                        if [ "$which" = old ]; then old+=("$(echo "$out" | median)"); else new+=("$(echo "$out" | median)"); fi
                done
        done
        local a b
        a=$(middle "${old[@]}")
        b=$(middle "${new[@]}")
        if [ -n "$a" ] && [ -n "$b" ]; then
                echo "ratio: $label new / old = $(awk -v a="$b" -v b="$a" 'BEGIN { printf "%.2f", a / b }')x ($b us / $a us)"
        fi
}

exec_verb() { # TREE LABEL VERB...: one whole-process benchmark of amdsmi VERB on TREE
        local tree=$1 label=$2
        shift 2
        compare "$label" env STATE_DIRECTORY="$W/state" RUNTIME_DIRECTORY="$W/run" \
                AMDSMI_SYSFS_ROOT="$tree" "$EXEC" -n "$RUNS" -l "$label" -- @B@/cli/amdsmi "$@"
}

echo "== whole process (plain snapshot trees, AMDSMI_SYSFS_ROOT), $ROUNDS rounds of $RUNS runs"
exec_verb "$SPX" "amdsmi list --json, 8 GPUs" list --json
exec_verb "$CPX" "amdsmi static --json, 8 GPUs x CPX" static --json
exec_verb "$SPX" "amdsmi metric --json, 8 GPUs" metric --json
exec_verb "$SPX" "amdsmi metric, 8 GPUs (table)" metric
exec_verb "$CPX" "amdsmi partition --json, 8 GPUs x CPX" partition --json
exec_verb "$SPX" "amdsmi power --json, 8 GPUs" power --json
exec_verb "$SPX" "amdsmi sriov --json, 8 GPUs" sriov --json
if [ "$(id -u)" = 0 ]; then
        # a change in-process: locks, the state file, the cap and the history (core's change
        # runner), on a copy of the tree that both builds write
        cp -a "$SPX" "$W/tree-change"
        mkdir "$W/state-change"
        compare "amdsmi power set --direct -g all --host 600W" env STATE_DIRECTORY="$W/state-change" \
                RUNTIME_DIRECTORY="$W/run" AMDSMI_SYSFS_ROOT="$W/tree-change" "$EXEC" -n "$RUNS" \
                -l "amdsmi power set --direct -g all --host 600W" -- \
                @B@/cli/amdsmi power set --direct -g all --host 600W
else
        echo "amdsmi power set skipped (in-process changes need root)"
fi

echo "== in-process: one GPU's telemetry and the metric document (bench-telemetry)"
for round in $(seq "$ROUNDS"); do
        for b in "$OLD" "$NEW"; do
                echo "  $([ "$b" = "$OLD" ] && echo old || echo new) round $round:"
                AMDSMI_SYSFS_ROOT=$SPX "$b/bench/bench-telemetry" 500 | sed 's/^/    /'
        done
done

if command -v dbus-daemon >/dev/null; then
        echo "== amdsmid on a private bus (plain mi300x-8 SPX tree): bench-daemon"
        for round in $(seq "$ROUNDS"); do
                for b in "$OLD" "$NEW"; do
                        amdsmid_start "$(daemon_of "$b")" "$SPX"
                        echo "  $([ "$b" = "$OLD" ] && echo old || echo new) round $round:"
                        "$NEW/bench/bench-daemon" "$daemon_pid" "${DAEMON_ROUNDS:-1000}" 2>&1 | sed 's/^/    /' ||
                                echo "    bench-daemon failed"
                        amdsmid_stop
                done
        done
else
        echo "== amdsmid skipped (needs dbus-daemon)"
fi
