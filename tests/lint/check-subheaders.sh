#!/bin/bash
# SPDX-License-Identifier: MIT
#
# <amdsmi/amdsmi.h> is the only public header to include: every other header in
# include/amdsmi/ must refuse to compile on its own (its #error guard), and the umbrella must
# compile. New sub-headers are covered without touching this script.
#
# usage: check-subheaders.sh INCLUDE_DIR
# env:   CC (default cc)

set -euo pipefail

if [ $# -ne 1 ] || [ ! -f "$1/amdsmi/amdsmi.h" ]; then
        echo "usage: $0 INCLUDE_DIR (holding amdsmi/amdsmi.h)" >&2
        exit 2
fi
incdir=$1
cc=${CC:-cc}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
rc=0

compiles() {
        printf '#include <amdsmi/%s>\nint main(void) { return 0; }\n' "$1" > "$tmp/t.c"
        # shellcheck disable=SC2086 # CC may be a command line
        $cc -std=c99 -pedantic -Werror -I"$incdir" -fsyntax-only "$tmp/t.c" 2> "$tmp/err"
}

if compiles amdsmi.h; then
        echo "ok: amdsmi.h compiles on its own"
else
        cat "$tmp/err"
        echo "FAIL: amdsmi.h does not compile on its own"
        rc=1
fi

n=0
for h in "$incdir"/amdsmi/*.h; do
        name=$(basename "$h")
        [ "$name" = amdsmi.h ] && continue
        n=$((n + 1))
        if compiles "$name"; then
                echo "FAIL: <amdsmi/$name> compiles when included directly (missing #error guard)"
                rc=1
        elif grep -q 'Only <amdsmi/amdsmi.h> can be included directly' "$tmp/err"; then
                echo "ok: <amdsmi/$name> refuses direct inclusion"
        else
                cat "$tmp/err"
                echo "FAIL: <amdsmi/$name> fails for another reason than its #error guard"
                rc=1
        fi
done
if [ "$n" -eq 0 ]; then
        echo "FAIL: no sub-header found in $incdir/amdsmi"
        rc=1
fi
exit $rc
