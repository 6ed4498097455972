#!/bin/bash
# SPDX-License-Identifier: MIT
#
# Regenerates tests/cli/golden/<tree>/<verb>.{txt,csv} from a build directory: builds the CLI
# and the fixture trees there, then writes what `amdsmi list|static|metric|partition|power`
# (table and --csv) and `amdsmi` alone (overview.txt) print on every tree, and every verb's
# help (tests/cli/golden-help/). Review the diff before committing it: the golden files are what
# test-cli-golden.sh compares the output with.
#
# usage: tests/cli/update-golden.sh BUILD

set -euo pipefail

if [ $# -ne 1 ] || [ ! -f "$1/build.ninja" ]; then
        echo "usage: $0 BUILD (a configured meson build directory)" >&2
        exit 2
fi
build=$(cd "$1" && pwd)
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SRCDIR=$(cd "$here/../.." && pwd)
FIXTURES_DIR=$build/tests/fixtures/trees
export SRCDIR FIXTURES_DIR

ninja -C "$build" cli/amdsmi tests/fixtures/fixtures.stamp

trees=()
for d in "$FIXTURES_DIR"/*/; do
        trees+=("$(basename "$d")")
done
if [ ${#trees[@]} -eq 0 ]; then
        echo "no fixture trees in $FIXTURES_DIR" >&2
        exit 1
fi
for tree in "${trees[@]}"; do
        "$here/test-cli-golden.sh" --update "$build/cli/amdsmi" "$tree"
done

# the help of every verb (not per tree)
"$here/test-cli-help-golden.sh" --update "$build/cli/amdsmi"

# golden files of trees that no longer exist
for d in "$here"/golden/*/; do
        [ -d "$d" ] || continue
        name=$(basename "$d")
        if [ ! -d "$FIXTURES_DIR/$name" ]; then
                rm -r "$d"
                echo "removed golden/$name (no such fixture tree)"
        fi
done
