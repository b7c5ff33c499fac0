#!/bin/sh
# tools/compile/run-nvcc.sh [--expect-fail] OUT LOG -- NVCC ARGS...
#
# Runs one compile for the compile checks and keeps what a transcript needs:
#   OUT.cmd  the exact command, with "-o OUT" as it would be typed
#   LOG      everything the compiler printed (e.g. the ptxas -v report)
#   OUT      the compiler's output, written as OUT.tmp and renamed, so an
#            interrupted or failed compile never leaves a half OUT behind.
# Exit 0 when the compiler exits 0; otherwise print LOG and exit 1.
# --expect-fail: the compile is meant to be refused. OUT becomes a text file
# "exit=N" plus the log; exit 0 when the compiler failed, 1 (with the log)
# when it unexpectedly succeeded.
set -u
expect_fail=0
if [ "${1:-}" = "--expect-fail" ]; then expect_fail=1; shift; fi
[ $# -ge 4 ] && [ "$3" = "--" ] || {
    echo "usage: run-nvcc.sh [--expect-fail] OUT LOG -- NVCC ARGS..." >&2
    exit 2; }
out=$1 log=$2; shift 3
mkdir -p "$(dirname "$out")" "$(dirname "$log")"
printf '%s -o %s\n' "$*" "$out" > "$out.cmd.tmp" && mv -f "$out.cmd.tmp" "$out.cmd"
cat "$out.cmd"
target=$out.tmp
[ $expect_fail -eq 1 ] && target=$(mktemp "${TMPDIR:-/tmp}/run-nvcc.XXXXXX")
rc=0; "$@" -o "$target" > "$log.tmp" 2>&1 || rc=$?
mv -f "$log.tmp" "$log"
if [ $expect_fail -eq 1 ]; then
    rm -f "$target"
    if [ $rc -eq 0 ]; then
        echo "run-nvcc: expected this compile to be refused, but it exited 0:" >&2
        sed 's/^/  /' "$log" >&2
        exit 1
    fi
    { echo "exit=$rc"; cat "$log"; } > "$out.tmp" && mv -f "$out.tmp" "$out"
    exit 0
fi
if [ $rc -ne 0 ]; then
    rm -f "$out.tmp"
    echo "run-nvcc: nvcc exited $rc; its output:" >&2
    sed 's/^/  /' "$log" >&2
    exit 1
fi
mv -f "$out.tmp" "$out"
