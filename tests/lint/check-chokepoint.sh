#!/bin/bash
# SPDX-License-Identifier: MIT
#
# One chokepoint for hardware access (ARCHITECTURE §4, anchors §9 item 16): every sysfs access
# goes through lib/sysfs.c and every amdgpu ioctl through lib/drm-ioctl.c, so that
# AMDSMI_SYSFS_ROOT / AMDSMI_DEV_ROOT redirect all of it. This check fails when
#   - a C source outside lib/sysfs.c, lib/drm-ioctl.c, sim/, tests/ and bench/ holds a string
#     literal path starting with /sys or /dev/dri ("/sys", "/sys/bus/...", "/dev/dri/card0");
#   - a file lib/*.c other than sysfs.c and drm-ioctl.c calls open(), openat(), opendir(),
#     fopen() or another call that opens a path.
# Comments are stripped first (with the C preprocessor in -fpreprocessed mode), so prose that
# mentions /sys is fine.
#
# usage: check-chokepoint.sh SRCROOT
#        check-chokepoint.sh --self-test     (proves that the check can fail)
# env:   CC (default cc), used only to strip comments

set -euo pipefail
export LC_ALL=C

cc=${CC:-cc}

# Prints a C file without its comments as "LINE:text" (the line numbers of the source, kept
# through the preprocessor's line markers); falls back to the raw file if the compiler refuses.
strip_comments() {
        # shellcheck disable=SC2086 # CC may be a command line
        { $cc -fpreprocessed -dD -E -x c "$1" 2>/dev/null || cat "$1"; } | awk '
                /^# [0-9]+ "/ { n = $2 - 1; next }
                { n++; print n ":" $0 }'
}

path_re='"/(sys|dev/dri)(/|")'
open_re='(^|[^A-Za-z0-9_.>])(open|open64|openat|openat2|creat|opendir|fopen|fopen64|freopen|scandir)[[:space:]]*\('

check_tree() {
        local root=$1 bad=0 f rel hits

        while IFS= read -r -d '' f; do
                rel=${f#"$root"/}
                case $rel in
                lib/sysfs.c | lib/drm-ioctl.c | sim/* | tests/* | bench/*) continue ;;
                esac
                hits=$(strip_comments "$f" | grep -E "$path_re" || true)
                if [ -n "$hits" ]; then
                        echo "FAIL: $rel: literal /sys or /dev/dri path outside the chokepoint:"
                        echo "$hits" | sed 's/^/    /'
                        bad=1
                fi
                case $rel in
                lib/*/*) ;;
                lib/procfs.c) ;; # /proc/PID/comm: not sysfs; the library's one /proc reader
                lib/*.c)
                        hits=$(strip_comments "$f" | grep -E "$open_re" || true)
                        if [ -n "$hits" ]; then
                                echo "FAIL: $rel: opens a path itself; use lib/sysfs.c (sysfs_*, devfs_open):"
                                echo "$hits" | sed 's/^/    /'
                                bad=1
                        fi
                        ;;
                esac
        done < <(find "$root" \
                \( -name .git -o -name subprojects -o -name node_modules \
                   -o -exec test -e '{}/meson-private' \; \) -prune \
                -o -type f \( -name '*.c' -o -name '*.h' \) -print0 | sort -z)
        return $bad
}

self_test() {
        local t rc=0
        t=$(mktemp -d)
        # shellcheck disable=SC2064 # expand now
        trap "rm -rf '$t'" EXIT
        mkdir -p "$t/lib" "$t/cli" "$t/sim" "$t/tests" "$t/include/amdsmi"

        # allowed everywhere: comments, other strings, the chokepoint itself, sim/ and tests/
        cat > "$t/lib/sysfs.c" <<'EOF'
static const char *root = "/sys";
int f(void) { return open("/sys/bus/pci", 0); }
EOF
        cat > "$t/lib/ctx.c" <<'EOF'
/* The root defaults to "/sys"; see open() in sysfs.c. */
static const char *dev = "/dev"; /* fopen("/dev/dri/card0") */
int devfs_open(void *ctx, const char *p, int fl);
int g(void) { return devfs_open(0, "dri/renderD128", 0); }
EOF
        echo 'const char *p = "/sys/class/drm";' > "$t/sim/sim.c"
        echo 'const char *p = "/dev/dri/card0";' > "$t/tests/test.c"
        echo '/* "/sys" */' > "$t/include/amdsmi/amdsmi.h"
        if ! check_tree "$t" > "$t/out"; then
                cat "$t/out"
                echo "FAIL: self-test: a clean tree was rejected"
                rc=1
        fi

        # each of these must be caught
        local -a bad=(
                'cli/a.c:const char *p = "/sys/bus/pci/devices";'
                'cli/b.c:#define ROOT "/sys"'
                'include/amdsmi/c.h:static const char *d = "/dev/dri";'
                'lib/d.c:int f(void) { return open(p, 0); }'
                'lib/e.c:void *f(void) { return opendir (p); }'
                'lib/f.c:void *f(void) { return fopen(p, "re"); }'
        )
        local entry file
        for entry in "${bad[@]}"; do
                file=${entry%%:*}
                mkdir -p "$t/bad"
                rm -rf "${t:?}/bad"/*
                mkdir -p "$t/bad/$(dirname "$file")"
                printf '%s\n' "${entry#*:}" > "$t/bad/$file"
                if check_tree "$t/bad" > "$t/out"; then
                        echo "FAIL: self-test: not caught: $entry"
                        rc=1
                else
                        echo "ok: caught $file"
                fi
        done
        return $rc
}

if [ "${1:-}" = --self-test ]; then
        self_test
        exit
fi
if [ $# -ne 1 ] || [ ! -d "$1" ]; then
        echo "usage: $0 SRCROOT | --self-test" >&2
        exit 2
fi
root=$(cd "$1" && pwd)
if check_tree "$root"; then
        echo "ok: no /sys or /dev/dri access outside lib/sysfs.c and lib/drm-ioctl.c"
else
        exit 1
fi
