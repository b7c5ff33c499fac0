#!/usr/bin/env bash
# tools/gpu/pitfalls.sh [--arch sm_80] [--stages 2] [--compile-only] [--report FILE]
#
# Checks that every pitfall of the lesson fails the way the page says:
#   compile-only (no GPU needed)
#     misaligned-copy   nvcc refuses it, with the static_assert that explains
#                       the 16-byte promise;
#     wrong-arch        -arch=sm_75 compiles (exit 0) to PTX with no cp.async;
#     the runnable variants compile.
#   on a GPU of compute capability >= 8.0
#     wrong-arch        the sm_75 binary's capability gate refuses (exit 4);
#     wrong-stage       the memcmp against the sync kernel fails (exit 1) and
#                       names the size;
#     barrier-for-wait  recorded: whether memcmp (exit 1) or racecheck caught
#                       it, or neither;
#     unmatched-commit  the watchdog names the hung kernel (exit 6) instead of
#                       hanging.
# Without a GPU the GPU part is skipped with a message, not failed.
# Prints PASS/FAIL per check, then "N passed, M failed"; exit 1 on a failure.
# The report (default build/pitfalls/report.txt) keeps every transcript.
set -u
arch=sm_80 stages=2 compile_only=0 report=build/pitfalls/report.txt
while [ $# -gt 0 ]; do
    case $1 in
    --arch) arch=$2; shift ;;
    --stages) stages=$2; shift ;;
    --compile-only) compile_only=1 ;;
    --report) report=$2; shift ;;
    *) echo "pitfalls.sh: unknown option $1" >&2; exit 2 ;;
    esac
    shift
done
NVCC=${NVCC:-nvcc}
dir=build/pitfalls
bindir=build/$arch-${stages}stages/pitfalls
mkdir -p "$dir"
pass=0 fail=0
: >"$report.tmp"
log() { printf '%s\n' "$*" | tee -a "$report.tmp"; }
ok() { pass=$((pass + 1)); log "PASS $*"; }
bad() { fail=$((fail + 1)); log "FAIL $*"; }
section() { log ""; log "== $*"; }

# ---- compile-only ----------------------------------------------------------
section "misaligned-copy: nvcc must refuse a 12-byte copy under aligned_size_t<16>"
out=$("$NVCC" -std=c++17 -arch="$arch" -Ibuild -c build/pitfalls/misaligned-copy.cu -o "$dir/misaligned.o" 2>&1); rc=$?
printf '%s\n' "$out" | grep -E 'error|static assertion' | sed 's/^/    /' | tee -a "$report.tmp" >/dev/null
if [ $rc -ne 0 ] && printf '%s' "$out" | grep -q 'aligned_size_t<16> promises'; then
    ok "misaligned-copy refused at compile time (nvcc exit $rc) with the alignment message"
else
    bad "misaligned-copy: nvcc exit $rc, alignment message $(printf '%s' "$out" | grep -c 'aligned_size_t<16> promises') times"
fi

section "wrong-arch: -arch=sm_75 compiles and its PTX has no cp.async"
"$NVCC" -std=c++17 -arch=sm_75 -Ibuild -ptx build/pipelined_gemm.cu -o "$dir/sm_75.ptx" >"$dir/sm_75.log" 2>&1; rc=$?
n75=$(grep -c 'cp\.async' "$dir/sm_75.ptx" 2>/dev/null || true)
if [ $rc -eq 0 ] && [ "${n75:-x}" = 0 ]; then
    ok "sm_75 build: nvcc exit 0, 0 cp.async lines in the PTX"
else
    bad "sm_75 build: nvcc exit $rc, ${n75:-no} cp.async lines"
fi

section "the runnable variants compile"
for v in wrong-stage barrier-for-wait unmatched-commit; do
    if [ -x "$bindir/$v" ]; then ok "$v built ($bindir/$v)"; else bad "$v: $bindir/$v missing"; fi
done

# ---- GPU -------------------------------------------------------------------
gpu_run() { # gpu_run NAME TIMEOUT COMMAND... ; sets rc and out
    local name=$1 limit=$2; shift 2
    log "\$ $*"
    out=$(timeout "$limit" "$@" 2>&1); rc=$?
    printf '%s\n' "$out" | sed 's/^/    /' >>"$report.tmp"
    log "    (exit $rc)"
}
if [ $compile_only = 0 ]; then
    build/$arch-${stages}stages/pipelined_gemm --sizes 64 --check-only >/dev/null 2>&1; probe=$?
    if [ $probe -eq 3 ]; then
        section "GPU checks skipped: no CUDA device on this machine (run 'make pitfalls' on a GPU)"
    elif [ $probe -ne 0 ]; then
        bad "the correct program itself fails here (exit $probe); GPU pitfall checks not run"
    else
        section "wrong-arch on the GPU: the capability gate refuses the sm_75 build"
        make --no-print-directory build ARCH=sm_75 STAGES="$stages" >"$dir/sm_75-build.log" 2>&1
        gpu_run wrong-arch 120 "build/sm_75-${stages}stages/pipelined_gemm" --sizes 512
        if [ $rc -eq 4 ] && printf '%s' "$out" | grep -q 'no cp.async'; then ok "sm_75 binary refused (exit 4)"; else bad "sm_75 binary: exit $rc"; fi

        section "wrong-stage: the memcmp catches it"
        gpu_run wrong-stage 120 "$bindir/wrong-stage" --sizes 512 --check-only
        if [ $rc -eq 1 ] && printf '%s' "$out" | grep -q 'N=512: matmulTilePiped differs'; then ok "wrong-stage caught by memcmp (exit 1, size named)"; else bad "wrong-stage: exit $rc"; fi

        section "barrier-for-wait: which check catches it"
        gpu_run barrier-for-wait 120 "$bindir/barrier-for-wait" --sizes 512,1024,2048 --check-only
        memcmp_rc=$rc
        if command -v compute-sanitizer >/dev/null 2>&1; then
            gpu_run barrier-racecheck 600 compute-sanitizer --tool racecheck --error-exitcode 99 "$bindir/barrier-for-wait" --sizes 512 --check-only
            race_rc=$rc
            race_summary=$(printf '%s' "$out" | grep -E 'RACECHECK SUMMARY|ERROR SUMMARY' | tail -n 2 | tr '\n' ' ')
        else
            race_rc=none race_summary="compute-sanitizer not installed"
        fi
        log "    barrier-for-wait: memcmp run exit $memcmp_rc; racecheck exit $race_rc: $race_summary"
        if [ $memcmp_rc -eq 1 ] || [ "$race_rc" = 99 ]; then
            ok "barrier-for-wait caught (memcmp exit $memcmp_rc, racecheck exit $race_rc)"
        else
            bad "barrier-for-wait caught by neither memcmp (exit $memcmp_rc) nor racecheck (exit $race_rc)"
        fi

        section "unmatched-commit: the watchdog names the hung kernel"
        gpu_run unmatched-commit 120 "$bindir/unmatched-commit" --sizes 512 --check-only --timeout 10
        if [ $rc -eq 6 ] && printf '%s' "$out" | grep -q 'matmulTilePiped did not finish'; then ok "unmatched-commit: watchdog exit 6 naming matmulTilePiped"; else bad "unmatched-commit: exit $rc"; fi
    fi
fi
log ""
log "$pass passed, $fail failed"
mv -f "$report.tmp" "$report"
[ $fail -eq 0 ]
