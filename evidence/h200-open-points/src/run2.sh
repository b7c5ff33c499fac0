#!/usr/bin/env bash
# run2.sh RESULT_DIR -- issue 22 kit, second round (MAP 2 lanes): build,
# --dry (CPU self-test + LDS address check), A (default list: k5, k10 and
# the new k12..k17, both cuBLAS modes interleaved, 2048 and 4096, three
# processes), C (ncu of the best new candidate and k5, one launch each),
# summary table last. Same stamping and result layout as run.sh; every
# step under `timeout` and a global budget; a failing step is logged and
# the script moves on.
# Env: BUDGET (s, default 200), REPS (50), SIZES (2048,4096), LIST
# (comma list of candidates; default below).
set -u
cd "$(dirname "$0")" || exit 2
KIT=$(pwd)
RES=${1:?usage: run2.sh RESULT_DIR}
mkdir -p "$RES" || exit 2
RES=$(cd "$RES" && pwd)
BUDGET=${BUDGET:-200}
REPS=${REPS:-50}
SIZES=${SIZES:-2048,4096}
NEW=k12_128x256_k16_s2_q,k13_128x256_k16_s2_q_late,k14_128x256_k16_s3_q
NEW=$NEW,k15_128x256_k8_s4_q,k16_128x256_k16_s2_q_lean
NEW=$NEW,k17_128x256_k16_s3_q_lean
LIST=${LIST:-k5_128x256_k16_s2_z,k10_128x256_k16_s2_z_late,$NEW}
export NVIDIA_TF32_OVERRIDE=0   # no TF32 in cuBLAS, whatever the mode
SECONDS=0
STEPS=()
SRCS="sgemm_lab.cu lds_bench.cu run.sh run2.sh summary.py"
NVFLAGS="-O3 -std=c++17 -arch=sm_90 -lineinfo -Xptxas -v --split-compile 0"
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null || echo ncu)

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

# ---- build (sgemm_lab and lds_bench in parallel) -------------------------
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
step build 60 "$RES/build.txt" bash -c build
# registers / spills per kernel from the ptxas -v lines
[ -f "$RES/build_sgemm.txt" ] &&
awk '/Compiling entry function/{f=$7} /spill stores/{s=$0}
     /Used [0-9]+ registers/{match($0,/Used [0-9]+ registers/);
       print f, substr($0,RSTART,RLENGTH) ";" s}' "$RES/build_sgemm.txt" \
    | sed 's/ptxas info *://g; s/  */ /g' > "$RES/ptxas_summary.txt" 2>&1

# ---- dry (CPU self-test, LDS address/wavefront check) --------------------
[ -x sgemm_lab ] && step dry 20 "$RES/A_dry.txt" ./sgemm_lab --dry

# ---- A: three processes, default list and both cuBLAS modes --------------
if [ -x sgemm_lab ]; then
    for p in 1 2 3; do
        step "A_p$p" 35 "$RES/A_p$p.txt" ./sgemm_lab --sizes "$SIZES" \
            --reps "$REPS" --warmup 5 --only "$LIST" \
            --csv "$RES/A_times_p$p.csv" --tag "p$p"
    done
fi

# ---- C: ncu of the best new candidate (by A at 4096) and k5 --------------
CMET=smsp__sass_inst_executed_op_shared_ld.sum
CMET=$CMET,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum
CMET=$CMET,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum
CMET=$CMET,sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active
CMET=$CMET,smsp__issue_active.avg.pct_of_peak_sustained_active
CMET=$CMET,smsp__inst_executed.sum,smsp__inst_executed_pipe_fma.sum
CMET=$CMET,gpu__time_duration.sum
if [ -x sgemm_lab ]; then
    BEST=$(cat "$RES"/A_times_p*.csv 2>/dev/null | awk -F, -v new="$NEW" \
        'BEGIN{split(new, a, ","); for (i in a) isnew[a[i] ".piped"] = 1}
         $2==4096 && ($3 in isnew) {s[$3]+=$8; c[$3]++}
         END{for(k in s) print s[k]/c[k], k}' | sort -gr | head -1 \
        | awk '{sub(/\.piped$/,"",$2); print $2}')
    BEST=${BEST:-k12_128x256_k16_s2_q}
    echo "best new candidate for C: $BEST"
    step C_ncu 60 "$RES/C_ncu.txt" "$NCU" --clock-control none \
        -k regex:sgemmPiped --launch-count 2 --metrics "$CMET" \
        --section SpeedOfLight --section WarpStateStats \
        --section SchedulerStats --section LaunchStats \
        --section Occupancy -f --export "$RES/C_prof" \
        ./sgemm_lab --profile "k5_128x256_k16_s2_z,$BEST" --sizes 4096
    if [ -f "$RES/C_prof.ncu-rep" ]; then
        step C_csv 15 "$RES/C_details.csv" "$NCU" --import \
            "$RES/C_prof.ncu-rep" --csv --page details --print-units base
        step C_raw 15 "$RES/C_raw.txt" "$NCU" --import \
            "$RES/C_prof.ncu-rep" --csv --page raw --print-units base
    fi
fi

# ---- summary -------------------------------------------------------------
{
    echo "== steps (name | status | seconds), total ${SECONDS}s"
    printf '%s\n' "${STEPS[@]}"
    echo "== registers / spills"
    sed 's/_Z[0-9]*sgemm//; s/EEEvPKfS3_Pfii//; s/I3CfgILi/ /; s/ELi/,/g' "$RES/ptxas_summary.txt" 2>/dev/null
    echo "== LDS check (--dry)"
    grep '^lds:' "$RES/A_dry.txt" 2>/dev/null
} > "$RES/steps.txt"
if command -v python3 > /dev/null; then
    timeout 30 python3 summary.py "$RES" > /dev/null 2>&1 ||
        echo "summary.py failed" >> "$RES/steps.txt"
fi
cat "$RES/steps.txt"
echo
cat "$RES/summary.txt" 2>/dev/null || {
    echo "(no summary.txt: raw A CSVs follow)"
    cat "$RES"/A_times_p*.csv 2>/dev/null
}
