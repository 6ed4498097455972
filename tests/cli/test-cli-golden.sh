#!/bin/bash
# SPDX-License-Identifier: MIT
#
# Compares the human table and the CSV of `amdsmi list|static|metric|partition|power`, and the
# overview of `amdsmi` alone (overview.txt), on one fixture tree (power with empty state and runtime directories: no recorded source) with
# the golden files tests/cli/golden/TREE/VERB.{txt,csv} (diff -u). Neither form holds a time
# stamp outside watch mode, and on a clean tree nothing may go to stderr. After an intended
# change of the output, regenerate the golden files with tests/cli/update-golden.sh BUILD and
# review the diff.
#
# usage: test-cli-golden.sh AMDSMI TREE
#        test-cli-golden.sh --update AMDSMI TREE     (writes the golden files instead)
# env:   FIXTURES_DIR (the generated trees), SRCDIR (the source tree)

set -euo pipefail

update=0
if [ "${1:-}" = "--update" ]; then
        update=1
        shift
fi
if [ $# -ne 2 ] || [ -z "${FIXTURES_DIR:-}" ] || [ -z "${SRCDIR:-}" ]; then
        echo "usage: FIXTURES_DIR=... SRCDIR=... $0 [--update] AMDSMI TREE" >&2
        exit 2
fi
amdsmi=$1
tree=$2
root=$FIXTURES_DIR/$tree
golden=$SRCDIR/tests/cli/golden/$tree
if [ ! -d "$root" ]; then
        echo "no fixture tree $root" >&2
        exit 2
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
unset AMDSMI_DEV_ROOT AMDSMI_DEBUG
export AMDSMI_SYSFS_ROOT=$root
mkdir "$tmp/state" "$tmp/run"
export STATE_DIRECTORY=$tmp/state RUNTIME_DIRECTORY=$tmp/run

if [ "$update" = 1 ]; then
        mkdir -p "$golden"
elif [ ! -d "$golden" ]; then
        echo "FAIL $tree: no golden files in $golden (run tests/cli/update-golden.sh BUILD)"
        exit 1
fi

failed=0
for verb in list static metric partition power; do
        for format in txt csv; do
                args=("$verb")
                [ "$format" = csv ] && args+=(--csv)
                name="amdsmi ${args[*]} ($tree)"
                rc=0
                "$amdsmi" "${args[@]}" > "$tmp/out" 2> "$tmp/err" || rc=$?
                if [ "$rc" -ne 0 ]; then
                        echo "FAIL $name: exit status $rc"
                        cat "$tmp/err"
                        failed=1
                        continue
                fi
                if [ -s "$tmp/err" ]; then
                        echo "FAIL $name: unexpected output on stderr:"
                        cat "$tmp/err"
                        failed=1
                fi
                if [ "$update" = 1 ]; then
                        cp "$tmp/out" "$golden/$verb.$format"
                        echo "wrote $golden/$verb.$format"
                elif ! diff -u --label "golden/$tree/$verb.$format" --label "$name" \
                        "$golden/$verb.$format" "$tmp/out"; then
                        echo "FAIL $name differs from golden/$tree/$verb.$format"
                        failed=1
                else
                        echo "ok $name"
                fi
        done
done

# amdsmi alone: the overview (no system bus here, so amdsmid is not running)
name="amdsmi ($tree)"
rc=0
DBUS_SYSTEM_BUS_ADDRESS=unix:path=$tmp/no-bus "$amdsmi" > "$tmp/out" 2> "$tmp/err" || rc=$?
if [ "$rc" -ne 0 ] || [ -s "$tmp/err" ]; then
        echo "FAIL $name: exit status $rc, stderr:"
        cat "$tmp/err"
        failed=1
elif [ "$update" = 1 ]; then
        cp "$tmp/out" "$golden/overview.txt"
        echo "wrote $golden/overview.txt"
elif ! diff -u --label "golden/$tree/overview.txt" --label "$name" "$golden/overview.txt" \
        "$tmp/out"; then
        echo "FAIL $name differs from golden/$tree/overview.txt"
        failed=1
else
        echo "ok $name"
fi
exit "$failed"
