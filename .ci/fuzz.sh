#!/bin/bash
# SPDX-License-Identifier: MIT
#
# Builds every fuzz target of tests/fuzz/meson.build (the one list of them) with clang and
# libFuzzer, AddressSanitizer and UndefinedBehaviorSanitizer, in BUILDDIR (default
# build-fuzz), and fuzzes each for its share of one total budget, seeded with a copy of its
# checked-in corpus (nothing is written into the source tree). On a crash, a leak, a timeout
# or a sanitizer report it prints the reproducer's path and bytes and fails. Without clang it
# fails too: the step is never skipped silently.
#
# usage: .ci/fuzz.sh [BUILDDIR]
# env:   FUZZ_BUDGET     total seconds of fuzzing, shared by the targets (default 600)
#        FUZZ_MAX_TIME   at most this many seconds per target (default 30)
#        FUZZ_TARGETS    only these targets (space-separated names, default all)
#        FUZZ_RESULTS    a file to write one line NAME=OK|FAIL per target into (for .ci/run)
#        CC              the compiler (default clang-14)
#
# To fuzz one target for longer, see README.md, "Fuzzing".

set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

builddir=${1:-build-fuzz}
budget=${FUZZ_BUDGET:-600}
max_time=${FUZZ_MAX_TIME:-30}
cc=${CC:-clang-14}
results=${FUZZ_RESULTS:-}

fail() {
        echo "fuzz: $*" >&2
        exit 1
}

command -v "$cc" >/dev/null ||
        fail "$cc not found: install clang-14 and libclang-rt-14-dev (.ci/install-deps.sh)"
# libFuzzer and the sanitizer runtimes (libclang-rt-14-dev)
echo 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { return 0; }' |
        "$cc" -x c -fsanitize=fuzzer,address,undefined -o /dev/null - 2>/dev/null ||
        fail "$cc cannot link -fsanitize=fuzzer,address,undefined: install libclang-rt-14-dev"

# A separate build directory: everything instrumented for coverage (fuzzer-no-link) and the
# sanitizers; the targets linked with libFuzzer (-Dfuzzing=true). b_lundef=false: clang
# leaves the sanitizer runtime of the shared library to the executables.
# shellcheck disable=SC2054 # (address,undefined is one value)
opts=(-Dfuzzing=true -Dman=false -Dtests=true -Dbuildtype=debugoptimized
      -Db_sanitize=address,undefined -Db_lundef=false -Dc_args=-fsanitize=fuzzer-no-link)
if [ -e "$builddir/meson-private/coredata.dat" ]; then
        meson configure "$builddir" "${opts[@]}" >/dev/null
else
        CC=$cc meson setup "$builddir" "${opts[@]}" >/dev/null
fi

# The targets and their corpus, from the tests meson defines for them (suite fuzz-regress):
# NAME EXECUTABLE CORPUS per line.
mapfile -t targets < <(meson introspect --tests "$builddir" | /usr/bin/python3 -c '
import json, os, sys
wanted = set(os.environ.get("FUZZ_TARGETS", "").split())
for t in json.load(sys.stdin):
    if not any(s.split(":")[-1] == "fuzz-regress" for s in t["suite"]) or (wanted and t["name"] not in wanted):
        continue
    corpus = [a for a in t["cmd"][1:] if not a.startswith("-")]
    print(t["name"], t["cmd"][0], corpus[0] if corpus else "")
')
[ ${#targets[@]} -gt 0 ] || fail "no fuzz target in $builddir (FUZZ_TARGETS=${FUZZ_TARGETS:-})"

names=()
for t in "${targets[@]}"; do
        names+=("${t%% *}")
done
echo "fuzz: building ${#names[@]} targets in $builddir with $cc"
meson compile -C "$builddir" "${names[@]}" >"$builddir/fuzz-build.log" 2>&1 || {
        tail -n 40 "$builddir/fuzz-build.log"
        fail "the build failed (full log: $builddir/fuzz-build.log)"
}

echo "fuzz: ${#targets[@]} targets, a budget of ${budget} s, at most ${max_time} s each"
fuzz_start=$SECONDS
left_targets=${#targets[@]}

work=$(mktemp -d "${TMPDIR:-/tmp}/amdsmi-fuzz.XXXXXX")
trap 'rm -rf "$work"' EXIT
[ -z "$results" ] || : >"$results"

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:allocator_may_return_null=1:detect_stack_use_after_return=1:strict_string_checks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
failed=0
for t in "${targets[@]}"; do
        read -r name exe corpus <<<"$t"
        dir="$work/$name"
        mkdir -p "$dir/corpus" "$dir/artifacts"
        [ -z "$corpus" ] || cp -r "$corpus"/. "$dir/corpus/"
        start=$SECONDS
        # the rest of the budget shared by the targets left (start-up and corpus loading
        # count too), at least 1 s each
        per=$(((budget - (start - fuzz_start)) / left_targets))
        [ "$per" -le "$max_time" ] || per=$max_time
        [ "$per" -ge 1 ] || per=1
        left_targets=$((left_targets - 1))
        # -timeout: one input taking longer is a hang (a crash); -rss_limit_mb: a leak or a
        # runaway allocation; the library's and the simulator's messages are not needed
        rc=0
        (cd "$dir" && TMPDIR="$dir" "$exe" -max_total_time="$per" -timeout=20 \
                -rss_limit_mb=2560 -max_len=8192 -print_final_stats=1 \
                -artifact_prefix="$dir/artifacts/" corpus) >"$dir/log" 2>&1 || rc=$?
        execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$dir/log" | tail -n 1)
        mapfile -t artifacts < <(find "$dir/artifacts" -type f | sort)
        if [ "$rc" -eq 0 ] && [ ${#artifacts[@]} -eq 0 ] && [ -n "$execs" ]; then
                echo "fuzz: $name: OK, ${execs} inputs in $((SECONDS - start)) s (-max_total_time=$per)"
                [ -z "$results" ] || echo "$name=OK" >>"$results"
                continue
        fi
        failed=1
        [ -z "$results" ] || echo "$name=FAIL" >>"$results"
        echo "fuzz: $name: FAILED (exit status $rc, ${execs:-no} inputs)"
        echo "---- last lines of its log ($dir/log):"
        grep -v '^#[0-9]' "$dir/log" | tail -n 60
        for a in "${artifacts[@]}"; do
                keep="${TMPDIR:-/tmp}/$name-$(basename "$a")"
                cp "$a" "$keep"
                echo "---- reproducer: $keep ($(stat -c %s "$a") bytes; run: $exe $keep)"
                od -A x -t x1z -v "$a" | head -n 64
                echo "---- base64:"
                base64 -w 76 "$a" | head -n 40
        done
done

if [ "$failed" -ne 0 ]; then
        echo "fuzz: FAILED (a reproducer goes into the target's corpus directory once fixed)"
        exit 1
fi
echo "fuzz: every target ran without a finding"
