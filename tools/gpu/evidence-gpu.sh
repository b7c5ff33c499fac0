#!/usr/bin/env bash
# tools/gpu/evidence-gpu.sh [OUTDIR]
#
# Re-measures, on a GPU of compute capability 8.0 or newer, everything the
# page shows from a GPU, into OUTDIR (default evidence/) as transcripts that
# start with what made them (date UTC, host, GPU, compute capability,
# driver, toolkit, command, source sha256): gpu-<gpu>-run-sm_{80,90}.{txt,
# csv} (make run, N = 512..4096, default and native build), -run-default.txt
# (timed), -spread-<i>.csv and -spread.txt (N = 2048, 3 more processes),
# -exercise.{txt,csv}, -sass.txt (LDGSTS per kernel of the binaries that
# ran), -sanitizer.txt (memcheck, racecheck, synccheck, initcheck),
# -synccheck-probe.txt, -ncu.{txt,csv} (N = 2048), -pitfalls.txt, and with
# SEED_SRC set -seed.txt (the course's earlier program, built out of tree).
# Each step runs even if one before failed; temporary names, renamed when
# a step ends. Exit 1 if a step failed, 3 without a GPU. Never changes the
# GPU's clocks or settings (ncu --clock-control none). `make evidence-gpu`
# runs it, then tools/gpu/gpu_facts.py on the result.
set -u
out=${1:-evidence}
mkdir -p "$out"
ARCH_DEFAULT=sm_80
BIN=build/$ARCH_DEFAULT-2stages/pipelined_gemm
MAKE=${MAKE:-make}
failed=()

gpu_name=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null |
           head -n 1)
if [ -z "$gpu_name" ]; then
    echo "evidence-gpu: no GPU found (nvidia-smi lists none)" >&2
    exit 3
fi
slug=$(printf '%s' "$gpu_name" | tr 'A-Z' 'a-z' |
       sed -E 's/^nvidia //; s/[^a-z0-9]+/-/g; s/-+$//')
pre="$out/gpu-$slug"

"$MAKE" --no-print-directory tangle >/dev/null ||
    { echo "evidence-gpu: make tangle failed" >&2; exit 1; }
src_hash=$(cat build/source.sha256)

stamp() { # stamp COMMAND... : the provenance block of every transcript
    echo "# Day 74 GPU evidence: this ran on a GPU."
    echo "# date_utc: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "# host: $(uname -n)"
    nvidia-smi --format=csv,noheader \
        --query-gpu=name,compute_cap,driver_version,memory.total,clocks.max.sm \
        2>/dev/null | head -n 1 | awk -F', ' '{
        print "# gpu: " $1 "\n# compute_capability: " $2 "\n# driver: " $3
        print "# memory: " $4 "\n# max_sm_clock: " $5 }'
    echo "# toolkit: $(nvcc --version | tail -n 2 | tr '\n' ' ')"
    echo "# source_sha256: $src_hash"
    echo "# command: $*"
    echo
}

step() { # step NAME FILE COMMAND... : run COMMAND, transcript to FILE
    local name=$1 file=$2 t0=$SECONDS rc; shift 2
    echo "== $name" >&2
    { stamp "$@"; "$@" 2>&1; rc=$?; echo; echo "# exit status: $rc"; } \
        >"$file.tmp"
    rc=$(sed -n 's/^# exit status: //p' "$file.tmp" | tail -n 1)
    echo "# wall seconds: $((SECONDS - t0))" >>"$file.tmp"
    mv -f "$file.tmp" "$file"
    echo "   exit $rc, $((SECONDS - t0)) s -> $file" >&2
    [ "$rc" = 0 ] || failed+=("$name (exit $rc)")
}

# Build every configuration first; they share the tangle and the host object.
"$MAKE" --no-print-directory build/host/harness.o >/dev/null
for cfg in "sm_80 2" "sm_90 2" "sm_80 3" "sm_80 4"; do
    set -- $cfg
    "$MAKE" --no-print-directory build ARCH=$1 STAGES=$2 >/dev/null 2>&1 &
done
wait

# ---- make run: both architectures, N = 512 .. 4096 -------------------------
for arch in sm_80 sm_90; do
    step "run $arch" "$pre-run-$arch.txt" "$MAKE" --no-print-directory run \
        ARCH=$arch \
        RUN_ARGS="--sizes 512,1024,2048,4096 --csv $pre-run-$arch.csv"
done
timed_run() { # make run at the default sizes: the lesson promises < 15 s
    local t0 rc
    t0=$(date +%s%N)
    "$MAKE" --no-print-directory run ARCH=$ARCH_DEFAULT
    rc=$?
    echo "make run wall time: $(( ($(date +%s%N) - t0) / 1000000 )) ms"
    return $rc
}
step "run default sizes, timed" "$pre-run-default.txt" timed_run

# ---- run-to-run spread at N = 2048 -----------------------------------------
: >"$pre-spread.txt.tmp"
for i in 1 2 3; do
    step "spread $i" "$pre-spread-$i.txt" "$BIN" --sizes 2048 \
        --csv "$pre-spread-$i.csv"
    cat "$pre-spread-$i.txt" >>"$pre-spread.txt.tmp"
    rm -f "$pre-spread-$i.txt"
done
mv -f "$pre-spread.txt.tmp" "$pre-spread.txt"

# ---- the exercise ----------------------------------------------------------
step "exercise" "$pre-exercise.txt" "$MAKE" --no-print-directory exercise \
    ARCH=$ARCH_DEFAULT
[ -f build/exercise/stages.csv ] &&
    { stamp make exercise ARCH=$ARCH_DEFAULT | grep -v '^$'
      cat build/exercise/stages.csv; } >"$pre-exercise.csv"

# ---- SASS of the binaries that ran -----------------------------------------
sass_report() {
    local work=build/evidence-sass f k
    mkdir -p "$work"
    count() { # count FILE KERNEL PATTERN: lines matching PATTERN in KERNEL
        awk -v k="$2" -v p="$3" '/Function :/ {inside = index($0, k) > 0}
            inside && $0 ~ p {n++} END {print n + 0}' "$1"
    }
    cuobjdump -sass "$BIN" >"$work/sm_80.sass" &&
        cuobjdump -sass build/sm_90-2stages/pipelined_gemm \
            >"$work/sm_90.sass" || return 1
    # The sm_80 build runs on a 9.0 card as PTX the driver JIT-compiles;
    # ptxas of the same toolkit, given that PTX, shows what the JIT makes.
    cuobjdump -ptx "$BIN" | sed -n '/^\.version/,$p' >"$work/compute_80.ptx"
    ptxas -arch=sm_90 -o "$work/jit-equivalent.cubin" \
        "$work/compute_80.ptx" &&
        cuobjdump -sass "$work/jit-equivalent.cubin" \
            >"$work/jit-equivalent.sass" || return 1
    for f in sm_80 sm_90 jit-equivalent; do
        for k in matmulTileSync matmulTilePiped; do
            printf '%-16s %-16s' "$f" "$k"
            printf ' LDGSTS %3s  ARRIVES.LDGSTSBAR %3s  LDG %3s  STS %3s' \
                "$(count "$work/$f.sass" "$k" '[ \t]LDGSTS[.]')" \
                "$(count "$work/$f.sass" "$k" 'ARRIVES[.]LDGSTSBAR')" \
                "$(count "$work/$f.sass" "$k" 'LDG[.]E')" \
                "$(count "$work/$f.sass" "$k" '[^A-Z]STS')"
            printf '  LDGDEPBAR %3s  DEPBAR %3s  BAR %3s\n' \
                "$(count "$work/$f.sass" "$k" 'LDGDEPBAR')" \
                "$(count "$work/$f.sass" "$k" 'DEPBAR')" \
                "$(count "$work/$f.sass" "$k" 'BAR[.]SYNC')"
        done
    done
    cat <<'NOTE'

LDGSTS counts the copy instructions (LDGSTS.E...); ARRIVES.LDGSTSBAR is the
mbarrier arrive that producer_commit issues.
sm_80 = the SASS embedded in the default -arch=sm_80 binary (an A100 runs it)
sm_90 = the SASS of the ARCH=sm_90 binary (what ran natively here)
jit-equivalent = ptxas -arch=sm_90 on the binary's compute_80 PTX (what the
driver's JIT does for the default build on this card)

---- matmulTilePiped, sm_90 build, main loop instructions ----
NOTE
    awk '/Function :/ {inside = index($0, "matmulTilePiped") > 0} inside' \
        "$work/sm_90.sass" | grep -E 'LDGSTS|DEPBAR|BAR|SYNCS|FFMA' |
        head -n 40
}
step "sass" "$pre-sass.txt" sass_report

# ---- compute-sanitizer -----------------------------------------------------
sanitize() {
    local rc=0 tool r
    for tool in memcheck racecheck synccheck initcheck; do
        echo "---- compute-sanitizer --tool $tool"
        compute-sanitizer --tool "$tool" --error-exitcode 99 \
            "$BIN" --sizes 512 --check-only 2>&1 | grep -v '^$'
        r=${PIPESTATUS[0]}
        echo "tool $tool exit $r"
        [ "$r" = 0 ] || rc=1
    done
    return $rc
}
step "sanitizer" "$pre-sanitizer.txt" sanitize

# ---- synccheck's "Missing wait" across sizes and pipeline depths -----------
# How many reports synccheck gives against the threads launched, and which
# shared-memory barriers it names, for several numbers of K-slices, blocks
# and depths; with SEED_SRC, the course's earlier program too.
barriers() { # barriers LOG: "ADDRESS COUNT" per barrier synccheck named
    sed -n 's/.*Barrier is located at shared address \(0x[0-9a-f]*\).*/\1/p' \
        "$1" | sort | uniq -c | awk '{print $2, $1}'
}
probe() {
    local rc=0 s n log errors blocks
    echo "sanitizer: $(compute-sanitizer --version | tail -n 1)"
    printf '%-7s %-6s %-8s %-8s %-8s %s\n' stages N blocks threads errors \
        "barrier addresses (count)"
    for s in 2 3 4; do
        for n in 64 128 512; do
            [ $s != 2 ] && [ $n != 512 ] && continue
            log=build/synccheck-$s-$n.log
            compute-sanitizer --tool synccheck --print-limit 100000 \
                "build/sm_80-${s}stages/pipelined_gemm" --sizes $n \
                --check-only >"$log" 2>&1
            errors=$(sed -n 's/.*ERROR SUMMARY: \([0-9]*\) error.*/\1/p' \
                     "$log" | head -n 1)
            [ -n "$errors" ] || { errors="?"; rc=1; }
            blocks=$(( (n / 64) * (n / 64) ))
            printf '%-7s %-6s %-8s %-8s %-8s %s\n' $s $n $blocks \
                $((blocks * 256)) "$errors" \
                "$(barriers "$log" | awk '{printf "%s(%s) ", $1, $2}')"
        done
    done
    echo
    echo "---- messages and locations, stages 2, N 512 (count, text)"
    grep -E 'Barrier error|Device Frame: matmulTile' build/synccheck-2-512.log |
        sed 's/by thread.*//' | sort | uniq -c | sort -rn | head -n 10
    echo
    echo "---- warps with no report, stages 2, N 512: (block, warp) pairs"
    grep -o 'thread ([0-9]*,0,0) in block ([0-9]*,[0-9]*' \
        build/synccheck-2-512.log | tr -c '0-9\n' ' ' |
        awk '{n[$4 " " $5 " " int($1 / 32)]++} END {
            for (bx = 0; bx < 8; bx++) for (by = 0; by < 8; by++)
                for (w = 0; w < 8; w++) h[n[bx " " by " " w] + 0]++
            for (k in h) print "  warps with " k " reports: " h[k] }' | sort
    if [ -n "${SEED_SRC:-}" ] && [ -f "$SEED_SRC" ]; then
        echo
        echo "---- the course's earlier program (built out of tree, never" \
             "committed), compute-sanitizer --tool synccheck," \
             "first launch N=512"
        nvcc -std=c++17 -O3 -arch=sm_80 -lineinfo -o build/seed-probe \
            "$SEED_SRC" >/dev/null 2>&1 || rc=1
        timeout 300 compute-sanitizer --tool synccheck --print-limit 100000 \
            build/seed-probe >build/seed-probe.log 2>&1
        grep -E 'SUMMARY' build/seed-probe.log
        barriers build/seed-probe.log | awk '{print "  " $2, $1}'
        grep -E 'Barrier error' build/seed-probe.log | sort | uniq -c
    fi
    return $rc
}
step "synccheck probe" "$pre-synccheck-probe.txt" probe

# ---- Nsight Compute --------------------------------------------------------
profile() {
    ncu --clock-control none --kernel-name regex:matmulTile \
        --section SpeedOfLight --section Occupancy --section LaunchStats \
        --section WarpStateStats --section SchedulerStats --csv \
        --page details "$BIN" --sizes 2048 --check-only \
        >"$pre-ncu.csv.body" || return 1
    { stamp ncu --page details "$BIN" --sizes 2048 --check-only | grep -v '^$'
      cat "$pre-ncu.csv.body"; } >"$pre-ncu.csv.tmp"
    rm -f "$pre-ncu.csv.body"
    mv -f "$pre-ncu.csv.tmp" "$pre-ncu.csv"
    echo "details page: $pre-ncu.csv"
    echo "---- WarpStateStats raw metrics (stalls per issued instruction)"
    ncu --clock-control none --kernel-name regex:matmulTile \
        --section WarpStateStats --section Occupancy --section LaunchStats \
        --section InstructionStats --csv --page raw "$BIN" --sizes 2048 \
        --check-only
}
step "ncu" "$pre-ncu.txt" profile

# ---- the course's earlier program, timed beside this one (never committed;
# the synccheck probe above covers its sanitizer run) ------------------------
seed() {
    local i
    nvcc -std=c++17 -O3 -arch=sm_80 -lineinfo \
        -o build/seed-pipelined_gemm "$SEED_SRC" || return 1
    for i in 1 2 3; do
        echo "---- seed program, process $i"
        build/seed-pipelined_gemm || return 1
        echo "---- this module's program, process $i"
        "$BIN" --sizes 512,1024,2048 || return 1
    done
}
if [ -n "${SEED_SRC:-}" ] && [ -f "$SEED_SRC" ]; then
    step "seed comparison" "$pre-seed.txt" seed
fi

# ---- pitfalls on the GPU ---------------------------------------------------
step "pitfalls" "$pre-pitfalls.txt" "$MAKE" --no-print-directory pitfalls \
    ARCH=$ARCH_DEFAULT

echo >&2
if [ ${#failed[@]} -gt 0 ]; then
    printf 'evidence-gpu: failed steps: %s\n' "${failed[*]}" >&2
    exit 1
fi
echo "evidence-gpu: all steps passed; transcripts in $out" >&2
