#!/bin/bash
# SPDX-License-Identifier: MIT
#
# Compares amdsmi --help and every verb's help (amdsmi VERB [SUB-VERB] --help) with the golden
# files tests/cli/golden-help/{amdsmi,VERB,VERB-SUB}.txt (diff -u). The verbs are those the
# CLI's own table lists (amdsmi __complete), so a new verb fails here until its help has a
# golden file, and a golden file of a verb that is gone fails too. After an intended change
# of a help text, regenerate them with tests/cli/update-golden.sh BUILD and review the diff.
#
# usage: test-cli-help-golden.sh AMDSMI
#        test-cli-help-golden.sh --update AMDSMI     (writes the golden files instead)
# env:   SRCDIR (the source tree)

set -euo pipefail

update=0
if [ "${1:-}" = "--update" ]; then
        update=1
        shift
fi
if [ $# -ne 1 ] || [ -z "${SRCDIR:-}" ]; then
        echo "usage: SRCDIR=... $0 [--update] AMDSMI" >&2
        exit 2
fi
amdsmi=$1
golden=$SRCDIR/tests/cli/golden-help

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$golden"

# "amdsmi" for the global help, then "VERB" and "VERB SUB" for each verb
commands=("")
while read -r verb; do
        commands+=("$verb")
        # what follows "help" is a verb, not a sub-verb
        [ "$verb" = help ] && continue
        while read -r sub; do
                [ -n "$sub" ] && commands+=("$verb $sub")
        done < <("$amdsmi" __complete "$verb" "")
done < <("$amdsmi" __complete "")
if [ ${#commands[@]} -lt 10 ]; then
        echo "FAIL: amdsmi __complete lists only ${#commands[@]} commands"
        exit 1
fi

failed=0
declare -A seen
for command in "${commands[@]}"; do
        name=${command:-amdsmi}
        name=${name// /-}
        seen[$name.txt]=1
        rc=0
        # shellcheck disable=SC2086 # the verb and sub-verb are two words
        "$amdsmi" $command --help > "$tmp/out" 2> "$tmp/err" || rc=$?
        what="amdsmi${command:+ $command} --help"
        if [ "$rc" -ne 0 ] || [ -s "$tmp/err" ]; then
                echo "FAIL $what: exit status $rc, stderr:"
                cat "$tmp/err"
                failed=1
                continue
        fi
        if [ "$update" = 1 ]; then
                cp "$tmp/out" "$golden/$name.txt"
                echo "wrote $golden/$name.txt"
        elif [ ! -f "$golden/$name.txt" ]; then
                echo "FAIL $what: no golden file golden-help/$name.txt (tests/cli/update-golden.sh)"
                failed=1
        elif ! diff -u --label "golden-help/$name.txt" --label "$what" "$golden/$name.txt" \
                "$tmp/out"; then
                echo "FAIL $what differs from golden-help/$name.txt"
                failed=1
        else
                echo "ok $what"
        fi
done
for f in "$golden"/*.txt; do
        [ -e "$f" ] || continue
        f=$(basename "$f")
        if [ -z "${seen[$f]:-}" ]; then
                if [ "$update" = 1 ]; then
                        rm "$golden/$f"
                        echo "removed golden-help/$f (no such verb)"
                else
                        echo "FAIL golden-help/$f: no such verb"
                        failed=1
                fi
        fi
done
exit "$failed"
