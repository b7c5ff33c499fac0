#!/usr/bin/env bash
# run.sh RESULT_DIR -- issue 22 kit: build, A (SGEMM vs cuBLAS, 3
# processes), B (LDS wavefronts under ncu), C (ncu of best + cuBLAS).
# Every step has a timeout and a share of a global budget; a failing step is
# logged and the script moves on. Summary table last (summary.txt).
# Env: BUDGET (s, default 360), REPS (50), SIZES (2048,4096), NO_8192=1.
set -u
cd "$(dirname "$0")" || exit 2
KIT=$(pwd)
RES=${1:?usage: run.sh RESULT_DIR}
mkdir -p "$RES" || exit 2
RES=$(cd "$RES" && pwd)
BUDGET=${BUDGET:-360}
REPS=${REPS:-50}
SIZES=${SIZES:-2048,4096}
export NVIDIA_TF32_OVERRIDE=0   # no TF32 in cuBLAS, whatever the mode
SECONDS=0
STEPS=()
SRCS="sgemm_lab.cu lds_bench.cu run.sh summary.py"
NVFLAGS="-O3 -std=c++17 -arch=sm_90 -lineinfo -Xptxas -v --split-compile 0"
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null || echo ncu)
COBJ=$(command -v cuobjdump || echo /usr/local/cuda/bin/cuobjdump)

stamp() {  # stamp FILE CMD... : write the stamp lines that begin FILE
    local out=$1
    shift
    {
        echo "# date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
        echo "# host: $(hostname)"
        echo "# gpu: $(nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader 2>&1 | head -1)"
        echo "# nvcc: $(nvcc --version 2>&1 | tail -1)"
        echo "# cmd: $*"
        echo "# env: NVIDIA_TF32_OVERRIDE=$NVIDIA_TF32_OVERRIDE"
        (cd "$KIT" && sha256sum $SRCS | sed 's/^/# sha256: /')
    } > "$out"
}

step() {  # step NAME CAP_S FILE CMD... : run CMD under timeout, log to FILE
    local name=$1 cap=$2 file=$3
    shift 3
    local left=$((BUDGET - SECONDS))
    if ((left < 10)); then
        echo ">>> SKIP $name (budget spent: ${SECONDS}s)"
        STEPS+=("$name|skipped|0")
        return 99
    fi
    local t=$((cap < left ? cap : left))
    stamp "$file" "$@"
    echo ">>> $name (timeout ${t}s) -> $(basename "$file")"
    local t0=$SECONDS
    timeout -k 5 "$t" "$@" >> "$file" 2>&1
    local rc=$?
    echo "# rc: $rc, ${SECONDS}s total, step $((SECONDS - t0))s" >> "$file"
    STEPS+=("$name|rc=$rc|$((SECONDS - t0))")
    tail -n 4 "$file" | sed 's/^/    /'
    return $rc
}

# ---- build (both in parallel) ----------------------------------------
build() {
    nvcc $NVFLAGS -o sgemm_lab sgemm_lab.cu -lcublas \
        > "$RES/build_sgemm.txt" 2>&1 &
    local p1=$!
    nvcc $NVFLAGS -o lds_bench lds_bench.cu > "$RES/build_lds.txt" 2>&1 &
    local p2=$!
    wait $p1; local r1=$?
    wait $p2; local r2=$?
    echo "sgemm_lab rc=$r1 lds_bench rc=$r2"
    cat "$RES/build_sgemm.txt" "$RES/build_lds.txt"
    return $((r1 || r2))
}
rm -f sgemm_lab lds_bench
export -f build
export NVFLAGS RES
step build 240 "$RES/build.txt" bash -c build
# registers / spills per kernel from the ptxas -v lines
[ -f "$RES/build_sgemm.txt" ] &&
awk '/Compiling entry function/{f=$7} /spill stores/{s=$0}
     /Used [0-9]+ registers/{match($0,/Used [0-9]+ registers/);
       print f, substr($0,RSTART,RLENGTH) ";" s}' "$RES/build_sgemm.txt" \
    | sed 's/ptxas info *://g; s/  */ /g' > "$RES/ptxas_summary.txt" 2>&1
if [ -x sgemm_lab ]; then
    step sass 30 "$RES/sass_counts.txt" bash -c \
        "$COBJ -sass sgemm_lab > '$RES/sgemm.sass' &&
         $COBJ -sass lds_bench > '$RES/lds.sass';
         awk '/Function :/{f=\$3}
              /LDS|LDGSTS|FFMA|BAR.SYNC|STS|LDG/{
                match(\$0,/(LDS|LDGSTS|FFMA|BAR.SYNC|STS|LDG)[.0-9A-Z]*/);
                c[f\" \"substr(\$0,RSTART,RLENGTH)]++}
              END{for(k in c) print c[k], k}' '$RES/sgemm.sass' '$RES/lds.sass' | sort -k2"
    step dry 30 "$RES/A_dry.txt" ./sgemm_lab --dry
fi

# ---- A: three processes, candidates and both cuBLAS modes interleaved --
if [ -x sgemm_lab ]; then
    for p in 1 2 3; do
        step "A_p$p" 75 "$RES/A_p$p.txt" ./sgemm_lab --sizes "$SIZES" \
            --reps "$REPS" --warmup 5 --csv "$RES/A_times_p$p.csv" --tag "p$p"
    done
fi

# ---- B: wavefronts per LDS under ncu (W=16 first, the one that matters) -
BMET=smsp__sass_inst_executed_op_shared_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum
BMET_FB=l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum
if [ -x lds_bench ]; then
    ./lds_bench --dry > "$RES/B_patterns.txt" 2>&1
    step B_ncu_w16 90 "$RES/B_ncu_w16.txt" "$NCU" --clock-control none \
        -k regex:ldsKernel --metrics "$BMET" --csv --page raw \
        --print-units base ./lds_bench --width 16
    if ! grep -q '^"0"' "$RES/B_ncu_w16.txt"; then
        # fallback: the lesson's known-good metric names (ld+st wavefronts;
        # summary.py subtracts the init stores, 256 STS.32 per block)
        step B_ncu_w16_fb 60 "$RES/B_ncu_w16_fb.txt" "$NCU" \
            --clock-control none -k regex:ldsKernel --metrics "$BMET_FB" \
            --csv --page raw --print-units base ./lds_bench --width 16
    fi
fi

# ---- C: ncu of the best candidate and cuBLAS at 4096 --------------------
if [ -x sgemm_lab ]; then
    BEST=$(cat "$RES"/A_times_p*.csv 2>/dev/null | awk -F, \
        '$2==4096 && $3 ~ /\.piped$/ {s[$3]+=$8; c[$3]++}
         END{for(k in s) print s[k]/c[k], k}' | sort -gr | head -1 \
        | awk '{sub(/\.piped$/,"",$2); print $2}')
    BEST=${BEST:-k2_128x256_k8_s3_z}
    echo "best candidate for C: $BEST"
    step C_ncu 120 "$RES/C_ncu.txt" "$NCU" --clock-control none \
        --launch-count 4 --section SpeedOfLight \
        --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis \
        --section WarpStateStats --section LaunchStats --section Occupancy \
        --section MemoryWorkloadAnalysis_Tables --section SchedulerStats \
        -f --export "$RES/C_prof" \
        ./sgemm_lab --profile "$BEST" --sizes 4096
    if [ -f "$RES/C_prof.ncu-rep" ]; then
        step C_csv 30 "$RES/C_details.csv" "$NCU" --import \
            "$RES/C_prof.ncu-rep" --csv --page details --print-units base
        step C_raw 30 "$RES/C_raw.txt" "$NCU" --import \
            "$RES/C_prof.ncu-rep" --csv --page raw --print-units base
    fi
fi

# ---- optional, if budget is left ----------------------------------------
if [ -x lds_bench ]; then
    step B_clock 30 "$RES/B_clock.txt" ./lds_bench
    step B_ncu_w8_w4 60 "$RES/B_ncu_w8w4.txt" bash -c \
        "'$NCU' --clock-control none -k regex:ldsKernel --metrics '$BMET' \
         --csv --page raw --print-units base ./lds_bench --width 8;
         '$NCU' --clock-control none -k regex:ldsKernel --metrics '$BMET' \
         --csv --page raw --print-units base ./lds_bench --width 4"
fi
if [ -x sgemm_lab ] && [ -z "${NO_8192:-}" ]; then
    step A_8192 70 "$RES/A_8192.txt" ./sgemm_lab --sizes 8192 --reps 10 \
        --warmup 2 --no-check --csv "$RES/A_times_p4_8192.csv" --tag p4
fi

if [ -x sgemm_lab ]; then
    SAN=$(command -v compute-sanitizer ||
        ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null ||
        echo compute-sanitizer)
    for tool in memcheck racecheck synccheck; do
        step "san_$tool" 60 "$RES/san_$tool.txt" "$SAN" --tool "$tool" \
            --error-exitcode 9 ./sgemm_lab --sizes 256 --check-n 256 \
            --reps 1 --warmup 0 --csv "$RES/san_${tool}_times.csv"
    done
fi

# ---- summary -------------------------------------------------------------
{
    echo "== steps (name | status | seconds), total ${SECONDS}s"
    printf '%s\n' "${STEPS[@]}"
    echo "== registers / spills"
    sed 's/_Z[0-9]*sgemm//; s/EEEvPKfS3_Pfii//; s/I3CfgILi/ /; s/ELi/,/g' "$RES/ptxas_summary.txt" 2>/dev/null
} > "$RES/steps.txt"
if command -v python3 > /dev/null; then
    timeout 60 python3 summary.py "$RES" > /dev/null 2>&1 ||
        echo "summary.py failed" >> "$RES/steps.txt"
fi
cat "$RES/steps.txt"
echo
cat "$RES/summary.txt" 2>/dev/null || {
    echo "(no summary.txt: raw A CSVs follow)"
    cat "$RES"/A_times_p*.csv 2>/dev/null
}
