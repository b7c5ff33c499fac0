#!/bin/sh
# run-nvcc.sh (litkit) [--expect-fail] OUT LOG -- NVCC ARGS...
#
# One compile of the compile checks: the command goes to OUT.cmd, all the
# compiler printed to LOG, its output to OUT (through OUT.PID.tmp: two makes
# at once never share a temporary). Exit 0 when
# it exits 0, else print LOG and exit 1. --expect-fail: the compile must be
# refused; OUT then holds "exit=N" and the log (exit 1 if it succeeded).
set -u
expect_fail=0
if [ "${1:-}" = "--expect-fail" ]; then expect_fail=1; shift; fi
[ $# -ge 4 ] && [ "$3" = "--" ] || {
    echo "usage: run-nvcc.sh [--expect-fail] OUT LOG -- NVCC ARGS..." >&2
    exit 2; }
out=$1 log=$2; shift 3
mkdir -p "$(dirname "$out")" "$(dirname "$log")"
printf '%s -o %s\n' "$*" "$out" > "$out.cmd.$$.tmp"
mv -f "$out.cmd.$$.tmp" "$out.cmd"
cat "$out.cmd"
target=$out.$$.tmp
[ $expect_fail -eq 1 ] && target=$(mktemp "${TMPDIR:-/tmp}/run-nvcc.XXXXXX")
rc=0; "$@" -o "$target" > "$log.$$.tmp" 2>&1 || rc=$?
mv -f "$log.$$.tmp" "$log"
if [ $expect_fail -eq 1 ]; then
    rm -f "$target"
    if [ $rc -eq 0 ]; then
        echo "run-nvcc: this compile should be refused, but exited 0:" >&2
        sed 's/^/  /' "$log" >&2
        exit 1
    fi
    { echo "exit=$rc"; cat "$log"; } > "$out.$$.tmp" && mv -f "$out.$$.tmp" "$out"
    exit 0
fi
if [ $rc -ne 0 ]; then
    rm -f "$out.$$.tmp"
    echo "run-nvcc: nvcc exited $rc; its output:" >&2
    sed 's/^/  /' "$log" >&2
    exit 1
fi
mv -f "$out.$$.tmp" "$out"
