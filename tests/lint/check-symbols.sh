#!/bin/bash
# SPDX-License-Identifier: MIT
#
# Keeps the ABI of libamdsmi in agreement with itself:
#   - every symbol libamdsmi.so exports starts with amdsmi_ and carries an AMDSMI_* version;
#   - the exported names and the names in libamdsmi.sym are the same set;
#   - libamdsmi.sym has no duplicates and is sorted (LC_ALL=C) within each version node;
#   - with gcc (CC set): the functions the public headers declare (static inline ones aside)
#     are exactly the names in libamdsmi.sym.
#
# usage: check-symbols.sh LIBAMDSMI_SO LIBAMDSMI_SYM INCLUDE_DIR
# env:   NM (default nm), CC (a gcc command line; empty skips the header comparison)

set -euo pipefail
export LC_ALL=C

if [ $# -ne 3 ]; then
        echo "usage: $0 LIBAMDSMI_SO LIBAMDSMI_SYM INCLUDE_DIR" >&2
        exit 2
fi
lib=$1
symfile=$2
incdir=$3
nm=${NM:-nm}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# Loops below run in pipelines (subshells): failures are recorded in a file.
fail() {
        echo "FAIL: $*"
        touch "$tmp/failed"
}

# --- what the library exports ---------------------------------------------------------------
# "0000000000012345 T amdsmi_version@@AMDSMI_1"; version nodes themselves are type A.
"$nm" -D --defined-only "$lib" | awk '$2 != "A" { print $3 }' > "$tmp/exported-raw"
if [ ! -s "$tmp/exported-raw" ]; then
        fail "$lib exports no symbol at all"
        exit 1
fi
while read -r sym; do
        name=${sym%%@*}
        case $name in
        amdsmi_*) ;;
        *) fail "exported symbol without the amdsmi_ prefix: $sym" ;;
        esac
        case $sym in
        *@AMDSMI_*) ;;
        *) fail "exported symbol without an AMDSMI_* version: $sym" ;;
        esac
        echo "$name" >> "$tmp/exported-unsorted"
done < "$tmp/exported-raw"
sort "$tmp/exported-unsorted" > "$tmp/exported"

# --- what the version script lists ----------------------------------------------------------
# Drop /* */ comments and the "} PARENT;" node ends, then every "name;" is a symbol.
sed -E -e ':a;N;$!ba' -e 's,/\*[^*]*\*+([^/*][^*]*\*+)*/,,g' "$symfile" \
        | sed -e 's/}[[:space:]]*[A-Za-z0-9_.]*[[:space:]]*;/}/g' > "$tmp/sym-clean"
node=0
tr '\n}' ' \n' < "$tmp/sym-clean" | while IFS= read -r block; do
        node=$((node + 1))
        printf '%s\n' "$block" | grep -oE '[A-Za-z_][A-Za-z0-9_]*[[:space:]]*;' \
                | tr -d ' \t;' > "$tmp/node-$node" || true
        if ! sort -c "$tmp/node-$node" 2>/dev/null; then
                fail "$symfile: names of version node $node are not sorted (LC_ALL=C):"
                diff -u "$tmp/node-$node" <(sort "$tmp/node-$node") || true
        fi
        cat "$tmp/node-$node" >> "$tmp/sym-all"
done
touch "$tmp/sym-all"
sort "$tmp/sym-all" > "$tmp/sym"
dups=$(uniq -d "$tmp/sym")
if [ -n "$dups" ]; then
        fail "$symfile lists names more than once:"
        sed 's/^/  /' <<< "$dups"
fi
sort -u -o "$tmp/sym" "$tmp/sym"
if [ ! -s "$tmp/sym" ]; then
        fail "no symbol found in $symfile"
fi

only_lib=$(comm -23 "$tmp/exported" "$tmp/sym")
only_sym=$(comm -13 "$tmp/exported" "$tmp/sym")
if [ -n "$only_lib" ]; then
        fail "exported by $(basename "$lib") but missing from $(basename "$symfile"):"
        sed 's/^/  /' <<< "$only_lib"
fi
if [ -n "$only_sym" ]; then
        fail "listed in $(basename "$symfile") but not exported (undefined, or not _public_):"
        sed 's/^/  /' <<< "$only_sym"
fi

# --- what the public headers declare --------------------------------------------------------
if [ -n "${CC:-}" ]; then
        printf '#include <amdsmi/amdsmi.h>\n' > "$tmp/decl.c"
        # shellcheck disable=SC2086 # CC is a command line
        $CC -std=gnu11 -I"$incdir" -fsyntax-only -aux-info "$tmp/aux" "$tmp/decl.c"
        # "/* .../include/amdsmi/amdsmi-ctx.h:33:NC */ extern int amdsmi_ctx_new (struct ...);"
        grep -F '/amdsmi/amdsmi' "$tmp/aux" | grep -E '\*/ extern ' \
                | sed -E 's/.*[ *](amdsmi_[A-Za-z0-9_]+) \(.*/\1/' | sort -u > "$tmp/declared"
        only_hdr=$(comm -23 "$tmp/declared" "$tmp/sym")
        only_sym=$(comm -13 "$tmp/declared" "$tmp/sym")
        if [ -n "$only_hdr" ]; then
                fail "declared in include/amdsmi/ but missing from $(basename "$symfile"):"
                sed 's/^/  /' <<< "$only_hdr"
        fi
        if [ -n "$only_sym" ]; then
                fail "listed in $(basename "$symfile") but declared in no public header:"
                sed 's/^/  /' <<< "$only_sym"
        fi
        echo "headers declare $(wc -l < "$tmp/declared") functions"
else
        echo "note: CC is not gcc, header declarations not compared"
fi

echo "$(wc -l < "$tmp/exported") exported, $(wc -l < "$tmp/sym") in $(basename "$symfile")"
[ ! -e "$tmp/failed" ]

