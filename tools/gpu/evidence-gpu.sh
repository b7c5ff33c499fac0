#!/usr/bin/env bash
# tools/gpu/evidence-gpu.sh [OUTDIR]: re-measures, on a GPU of compute
# capability 8.0 or newer, everything the page shows from a GPU, into OUTDIR
# (default evidence/): a transcript gpu-<gpu>-STEP.txt per step below (with
# .csv or -<i>.csv where the program wrote them), each headed by what made it
# (date UTC, host, GPU, compute capability, driver, toolkit, command, source
# sha256). Each step runs even if one before failed, under a temporary name
# until it ends. Exit 1 if a step failed, 3 without a GPU. Never changes the
# GPU's clocks or settings (ncu --clock-control none). `make evidence-gpu`
# runs it, then gpu_facts.py. The kernel files, depths, residency settings
# and sizes are tools/manifest.toml's (the M_* lines of build/manifest.mk).
# EVIDENCE_DRY_RUN=1 prints each step's command instead of running it (no GPU
# needed).
set -u
out=${1:-evidence}
MAKE=${MAKE:-make}
# The tools run in build/venv, where make installs litkit (its set-up).
"$MAKE" --no-print-directory -s deps build/manifest.mk >&2 ||
    { echo "evidence-gpu: cannot read tools/manifest.toml" >&2; exit 1; }
while read -r name _ value; do   # NAME := VALUE
    case $name in M_*) printf -v "$name" %s "$value" ;; esac
done < build/manifest.mk
dry=${EVIDENCE_DRY_RUN:-}
[ -n "$dry" ] || mkdir -p "$out"
ARCH_DEFAULT=sm_80
BIN=build/$ARCH_DEFAULT-2stages/pipelined_gemm
failed=()

gpu_name=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null |
           head -n 1)
[ -z "$dry" ] || gpu_name="dry run"
if [ -z "$gpu_name" ]; then
    echo "evidence-gpu: no GPU found (nvidia-smi lists none)" >&2
    exit 3
fi
slug=$(printf '%s' "$gpu_name" | tr 'A-Z' 'a-z' |
       sed -E 's/^nvidia //; s/[^a-z0-9]+/-/g; s/-+$//')
pre="$out/gpu-$slug"

if [ -n "$dry" ]; then src_hash=dry-run src_tokens=dry-run; else
"$MAKE" --no-print-directory tangle >/dev/null ||
    { echo "evidence-gpu: make tangle failed" >&2; exit 1; }
src_hash=$(cat build/source.sha256)
# The token digest: a later layout-only edit keeps this evidence current.
src_tokens=$(cat build/source.tokens)
fi

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
    echo "# source_tokens: $src_tokens"
    echo "# command: $*"
    echo
}

# EVIDENCE_STEPS="sass pitfalls" runs only the steps whose group is named
# (groups: run spread residency cold blocked wide exercise $M_GROUPS_STEP stages
# native sass sanitizer synccheck ncu opcodes source waits pitfalls); unset,
# all.
want() { [ -z "${EVIDENCE_STEPS:-}" ] || case " $EVIDENCE_STEPS " in
    *" $1 "*) return 0 ;; *) return 1 ;; esac; }

step() { # step NAME FILE COMMAND... : run COMMAND, transcript to FILE
    local name=$1 file=$2 t0=$SECONDS rc; shift 2
    if [ -n "$dry" ]; then printf '%s > %s\n' "$*" "$file"; return; fi
    echo "== $name" >&2
    { stamp "$@"; "$@" 2>&1; rc=$?; echo; echo "# exit status: $rc"; } \
        >"$file.tmp"
    rc=$(sed -n 's/^# exit status: //p' "$file.tmp" | tail -n 1)
    echo "# wall seconds: $((SECONDS - t0))" >>"$file.tmp"
    mv -f "$file.tmp" "$file"
    echo "   exit $rc, $((SECONDS - t0)) s -> $file" >&2
    [ "$rc" = 0 ] || failed+=("$name (exit $rc)")
}

# Build every binary first: the default's variants, native, the exercise's.
if [ -n "$dry" ]; then echo "$MAKE build-all; build sm_90 at" \
    "$M_EXERCISE_DEPTHS, $ARCH_DEFAULT at $M_DEEPER_DEPTHS"; else
"$MAKE" --no-print-directory -j8 build-all ARCH=$ARCH_DEFAULT STAGES=2 \
    >/dev/null || { echo "evidence-gpu: the build failed" >&2; exit 1; }
for cfg in $(printf "sm_90:%s " $M_EXERCISE_DEPTHS) \
           $(printf "$ARCH_DEFAULT:%s " $M_DEEPER_DEPTHS); do
    set -- ${cfg/:/ }
    "$MAKE" --no-print-directory build ARCH=$1 STAGES=$2 $(
        for k in $M_SWEPT; do echo "build/$1-$2stages/${k#*:}"; done) \
        >/dev/null 2>&1 &
done
wait
fi
VAR=build/$ARCH_DEFAULT-2stages

# ---- make run: both architectures ------------------------------------------
if want run; then
for arch in sm_80 sm_90; do
    step "run $arch" "$pre-run-$arch.txt" "$MAKE" --no-print-directory run \
        ARCH=$arch \
        RUN_ARGS="--sizes $M_SIZES_RUN --csv $pre-run-$arch.csv"
done
timed_run() { # make run at the default sizes: the lesson promises < 15 s
    local t0 rc=0
    t0=$(date +%s%N)
    "$MAKE" --no-print-directory run ARCH=$ARCH_DEFAULT || rc=$?
    echo "make run wall time: $(( ($(date +%s%N) - t0) / 1000000 )) ms"
    return $rc
}
step "run default sizes, timed" "$pre-run-default.txt" timed_run
fi

repeat() { # repeat FILE CSVSTEM COUNT COMMAND...: COUNT processes, one file
    local file=$1 stem=$2 count=$3 i parts=(); shift 3
    for i in $(seq 1 "$count"); do
        step "$(basename "$stem") $i" "$file.$i" "$@" --csv "$stem-$i.csv"
        parts+=("$file.$i")
    done
    concat "$file" "${parts[@]}"
}
concat() { # concat FILE PART...: the parts, in order, into FILE; removed
    local file=$1; shift
    if [ -n "$dry" ]; then echo "cat $* > $file"; return; fi
    cat "$@" >"$file.all"; rm -f "$@"; mv -f "$file.all" "$file"
}
dial() { # dial STEM SETTINGS COMMAND...: repeat at each SETTING:PROCESSES
    local stem=$1 settings=$2 sn parts=(); shift 2
    for sn in $settings; do
        repeat "$stem.txt.${sn%:*}" "$stem-${sn%:*}" "${sn#*:}" "$@" \
            --blocks-per-sm "${sn%:*}"
        parts+=("$stem.txt.${sn%:*}")
    done
    concat "$stem.txt" "${parts[@]}"
}
want spread && repeat "$pre-spread.txt" "$pre-spread" "$M_PROCESSES" \
    "$BIN" --sizes "$M_SIZES_ONE"

# ---- the residency dial ----------------------------------------------------
want residency && dial "$pre-residency" "$M_DIAL" "$BIN" \
    --sizes "$M_SIZES_RESIDENCY"

want cold && step "cold L2" "$pre-cold.txt" "$BIN" \
    --sizes "$M_SIZES_RUN" --cold-l2 --csv "$pre-cold.csv"

# ---- the wide pair against cuBLAS: separate processes ------------------------
# (the native sm_90 build, as the design was chosen)
WIDE_BIN=build/sm_90-2stages/pipelined_gemm
want wide && repeat "$pre-wide.txt" "$pre-wide" "$M_PROCESSES" "$WIDE_BIN" \
    --kernels wide --sizes "$M_SIZES_WIDE"

# ---- the register-blocked pair -----------------------------------------------
if want blocked; then
pair() { # pair TAG NAME BINARY SIZES ARGS...: a step of the blocked pair
    step "blocked$2" "$pre-blocked$1.txt" "$3" --kernels blocked \
        --sizes "$4" "${@:5}" --csv "$pre-blocked$1.csv"
}
pair "" "" "$BIN" "$M_SIZES_BLOCKED"
repeat "$pre-blocked-spread.txt" "$pre-blocked-spread" "$M_PROCESSES" "$BIN" \
    --kernels blocked --sizes "$M_SIZES_RESIDENCY"
pair -b1 ", 1 block per SM" "$BIN" "$M_SIZES_LARGE" --blocks-per-sm 1
pair -libcu ", cuda::pipeline" "$VAR/$M_LIBCU" "$M_SIZES_LIBCU"
pair -libcu-b1 ", cuda::pipeline, 1 block per SM" "$VAR/$M_LIBCU" \
    "$M_SIZES_LARGE" --blocks-per-sm 1
for s in $M_DEEPER_DEPTHS; do
    pair "-stages-$s" ", $s stages" \
        "build/$ARCH_DEFAULT-${s}stages/pipelined_gemm" "$M_SIZES_LARGE"
done
fi

# ---- the exercise: depths, and the solution of part 2 ------------------------
if want exercise; then
step "exercise" "$pre-exercise.txt" "$MAKE" --no-print-directory exercise \
    ARCH=$ARCH_DEFAULT
[ -z "$dry" ] && [ -f build/exercise/stages.csv ] &&
    { stamp make exercise ARCH=$ARCH_DEFAULT | grep -v '^$'
      cat build/exercise/stages.csv; } >"$pre-exercise.csv"
step "exercise solution" "$pre-solution.txt" "$VAR/exercises/solution" \
    --sizes "$M_SIZES_RESIDENCY" --csv "$pre-solution.csv"
fi

# ---- against residency: the manifest's groups, GROUP:KERNEL-FILE ------------
if want "$M_GROUPS_STEP"; then
for k in $M_GROUPS; do
    dial "$pre-${k%%:*}" "$M_GROUP_SETTINGS" "$VAR/${k#*:}" \
        --sizes "$M_SIZES_RESIDENCY"
done
fi

# ---- the depths, in separate processes (the exercise's table has one) --------
# Interleaved (2 3 4, 3 4 2, 4 2 3, ...), so a drift of the card during the
# step moves every depth alike and none always runs first; the transcript
# keeps each depth's runs together.
rotate() { # rotate I WORD...: the words from the I-th on, then the others
    local i=$(( ($1 - 1) % ($# - 1) )); shift
    set -- "$@" "$@"
    echo "${@:i+1:$# / 2}"
}
sweep() { # sweep STEM ARCH [NAME:ROOT...]: the exercise's depths of each
    # kernel file ROOT (none: the program) built for ARCH, transcripts
    # STEM[-NAME]; interleaved over the depths and the kernel files
    local stem=$1 arch=$2 i s k tag parts=(); shift 2
    [ $# -gt 0 ] || set -- :pipelined_gemm
    for i in $(seq 1 "$M_PROCESSES"); do   # each round rotated by one
        for k in $(rotate "$i" "$@"); do
            tag=$stem; [ -z "${k%%:*}" ] || tag=$stem-${k%%:*}
            for s in $(rotate "$i" $M_EXERCISE_DEPTHS); do
                step "$tag-$s $i" "$pre-$tag.txt.$s.$i" \
                    "build/$arch-${s}stages/${k#*:}" \
                    --sizes "$M_SIZES_ONE" --csv "$pre-$tag-$s-$i.csv"
            done
        done
    done
    for k in "$@"; do
        tag=$stem; [ -z "${k%%:*}" ] || tag=$stem-${k%%:*}
        parts=()
        for s in $M_EXERCISE_DEPTHS; do
            for i in $(seq 1 "$M_PROCESSES"); do
                parts+=("$pre-$tag.txt.$s.$i")
            done
        done
        concat "$pre-$tag.txt" "${parts[@]}"
    done
}
jit_sass() { # jit_sass BINARY DIR: the SASS that ptxas -arch=sm_90 makes
    # of BINARY's compute_80 PTX, as a 9.0 card's driver JIT-compiles it;
    # in DIR, one PTX module per kernel file (each from its .version line)
    local p
    rm -rf "$2" && mkdir -p "$2" || return 1
    cuobjdump -ptx "$1" | awk -v dir="$2" '
        /^\.version/ { n++; out = dir "/" n ".ptx"; on = 1 }
        /^Fatbin / { on = 0 }
        on { print > out }'
    for p in "$2"/*.ptx; do
        ptxas -arch=sm_90 -o "${p%.ptx}.cubin" "$p" &&
            cuobjdump -sass "${p%.ptx}.cubin" || return 1
    done
}
piped_code() { # piped_code < SASS: its piped kernel's instructions, one a
    # line (@!PT ones: never-executed padding)
    awk '/Function :/ { inside = index($0, "matmulTilePiped") > 0 }
        inside && /\/\*[0-9a-f]+\*\/ / && !/@!PT/ {
            sub(/^.*\*\/ +/, ""); sub(/ *;.*$/, ""); print }'
}
inner_code() { # inner_code: per swept kernel file, build and depth, its
    # piped kernel's FFMA and LDS instructions (the inner product: the
    # kernel has no others): their count and digest, the digest without
    # .reuse flags (which Nsight Compute's listing omits), and its IMAD.HI.
    # sm_90: the native binary; jit: jit_sass of the default build's
    local k s f b d
    for k in $M_SWEPT; do
        for s in $M_EXERCISE_DEPTHS; do
            f=build/sm_90-${s}stages/${k#*:}
            cuobjdump -sass "$f" >"$f.sass" || return 1
            piped_code <"$f.sass" >"$f.piped"
            d=build/$ARCH_DEFAULT-${s}stages/${k#*:}.jit
            jit_sass "build/$ARCH_DEFAULT-${s}stages/${k#*:}" "$d" \
                >"$d.sass" || return 1
            piped_code <"$d.sass" >"$d.piped"
            for b in sm_90:"$f.piped" jit:"$d.piped"; do
                grep -E '^(FFMA|LDS)[. ]' "${b#*:}" >"${b#*:}.inner"
                printf '%s %s %s FFMA+LDS %s sha256 %.16s plain %.16s' \
                    "${b%%:*}" "${k%%:*}" "$s" \
                    "$(wc -l <"${b#*:}.inner")" \
                    "$(sha256sum <"${b#*:}.inner")" \
                    "$(sed 's/[.]reuse//g' "${b#*:}.inner" | sha256sum)"
                printf ' IMAD.HI %s\n' "$(grep -c '^IMAD[.]HI' "${b#*:}")"
            done
        done
    done
    echo
    echo "Equal digests: the same instructions, registers and order."
}
# The lesson's kernel file and the others swept beside it (the manifest's
# swept ones), interleaved: the default build, then built natively for
# sm_90 (ptxas, not the driver, makes their machine code). Does the order
# follow the depth or the code? Their inner products, compared.
first=${M_SWEPT%% *}; first=${first:-:pipelined_gemm}
want stages && sweep stages "$ARCH_DEFAULT" ":${first#*:}" ${M_SWEPT#"$first"}
want native && sweep native sm_90 $M_SWEPT
{ want stages || want native; } &&
    step "depth code" "$pre-depth-code.txt" inner_code

# ---- SASS of the binaries that ran -----------------------------------------
sass_report() {
    local work=build/evidence-sass f k
    mkdir -p "$work"
    count() { # count PATTERN: lines matching it in kernel $k of $work/$f.sass
        awk -v k="$k" -v p="$1" '/Function :/ {inside = index($0, k) > 0}
            inside && $0 ~ p {n++} END {print n + 0}' "$work/$f.sass"
    }
    cuobjdump -sass "$BIN" >"$work/sm_80.sass" &&
        cuobjdump -sass build/sm_90-2stages/pipelined_gemm \
            >"$work/sm_90.sass" || return 1
    # The sm_80 build runs on a 9.0 card as PTX the driver JIT-compiles;
    # ptxas of the same toolkit, given that PTX, shows what the JIT makes.
    jit_sass "$BIN" "$work/jit" >"$work/jit-equivalent.sass" || return 1
    for f in sm_80 sm_90 jit-equivalent; do
        for k in matmulTileSync matmulTilePiped matmulBlockedSync \
                 matmulBlockedPiped; do
            printf '%-16s %-16s' "$f" "$k"
            printf ' LDGSTS %3s  ARRIVES.LDGSTSBAR %3s  LDG %3s  STS %3s' \
                "$(count '[ \t]LDGSTS[.]')" "$(count 'ARRIVES[.]LDGSTSBAR')" \
                "$(count 'LDG[.]E')" "$(count '[^A-Z]STS')"
            printf '  LDGDEPBAR %3s  DEPBAR %3s  BAR %3s\n' \
                "$(count LDGDEPBAR)" "$(count DEPBAR)" "$(count 'BAR[.]SYNC')"
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
want sass && step "sass" "$pre-sass.txt" sass_report

sanitize() {
    local rc=0 tool r
    for tool in memcheck racecheck synccheck initcheck; do
        echo "---- compute-sanitizer --tool $tool"
        compute-sanitizer --tool "$tool" --error-exitcode 99 "$BIN" \
            --kernels all --sizes "$M_SIZES_SANITIZER" --check-only 2>&1 |
            grep -v '^$'
        r=${PIPESTATUS[0]}
        echo "tool $tool exit $r"
        [ "$r" = 0 ] || rc=1
    done
    return $rc
}
want sanitizer && step "sanitizer" "$pre-sanitizer.txt" sanitize

# ---- the synccheck experiment: which synchronisation gets reported ----------
synccheck_experiment() {
    local rc=0 k log
    echo "sanitizer: $(compute-sanitizer --version | tail -n 1)"
    local n=$M_SIZES_SANITIZER blocks=$(( (M_SIZES_SANITIZER / 64) ** 2 ))
    echo "N = $n: $blocks blocks of 256 threads, $((blocks * 256)) threads"
    for k in $M_SYNCCHECK; do
        log=build/synccheck-$(basename "$k").log
        echo "---- $k"
        # Correct at three sizes, run normally: synccheck stops a launch
        # it reports, so identity is checked outside it.
        "$VAR/$k" --sizes "$M_SIZES_IDENTITY" --check-only 2>&1 |
            grep -E 'matches the reference|differs from|error'
        echo "plain run exit: ${PIPESTATUS[0]}"
        compute-sanitizer --tool synccheck --print-limit 100000 \
            "$VAR/$k" --sizes "$n" --check-only >"$log" 2>&1
        echo "reports: $(grep -c 'Barrier error detected' "$log")"
        grep -E 'ERROR SUMMARY' "$log" || rc=1
        grep -E 'Target application returned an error|launch failure' \
            "$log" | head -n 2
        grep -E 'Barrier error detected' "$log" | sort | uniq -c
        grep -E '^=+ +at ' "$log" | sed 's/+0x[0-9a-f]*//' | sort |
            uniq -c | sort -rn | head -n 3
    done
    return $rc
}
want synccheck &&
    step "synccheck experiment" "$pre-synccheck.txt" synccheck_experiment

# ---- Nsight Compute --------------------------------------------------------
NCU_METRICS=sm__throughput.avg.pct_of_peak_sustained_elapsed,\
l1tex__throughput.avg.pct_of_peak_sustained_active,\
lts__throughput.avg.pct_of_peak_sustained_elapsed,\
dram__throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes_read.sum,\
lts__t_sector_hit_rate.pct,\
sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active,\
smsp__average_warp_latency_per_inst_issued.ratio,smsp__inst_issued.sum,\
smsp__inst_executed.sum,smsp__inst_executed_pipe_fma.sum,\
smsp__warps_active.avg.per_cycle_active,smsp__cycles_active.avg,\
sm__cycles_elapsed.avg,gpu__time_duration.sum,\
l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,\
l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum,\
sm__warps_active.avg.pct_of_peak_sustained_active,\
launch__occupancy_limit_registers,launch__occupancy_limit_shared_mem,\
launch__registers_per_thread,launch__shared_mem_config_size,\
launch__waves_per_multiprocessor
for r in barrier long_scoreboard short_scoreboard mio_throttle not_selected \
         math_pipe_throttle wait dispatch_stall selected lg_throttle \
         no_instruction branch_resolving membar sleeping; do
    NCU_METRICS+=,smsp__average_warps_issue_stalled_${r}_per_issue_active.ratio
done
ncu_raw() { # ncu_raw KERNELS ARGS...: both kernels of the pair, raw CSV
    ncu --clock-control none --kernel-name "regex:$1" -c 2 \
        --metrics "$NCU_METRICS" --csv --page raw "${NCU_BIN:-$BIN}" "${@:2}"
}
rows() { # rows FILE: the quoted CSV rows of an ncu transcript, header aside
    grep '^"' "$1" | tail -n +3
}
profile() { # both pairs, the metrics above, one CSV of raw values
    ncu_raw matmulTile --sizes "$M_SIZES_NCU" --check-only >"$pre-ncu.basic" ||
        return 1
    ncu_raw matmulBlocked --kernels blocked --sizes "$M_SIZES_NCU_BLOCKED" \
        --check-only >"$pre-ncu.blocked" || return 1
    local k # the manifest's ncu kernels: their piped kernel (M_NCU)
    for k in $M_NCU; do
        NCU_BIN=$VAR/${k#*:} ncu_raw matmulTilePiped --sizes "$M_SIZES_NCU" \
            --check-only >"$pre-ncu.${k%%:*}" || return 1
    done
    { stamp ncu --metrics ... --csv --page raw "$BIN" --sizes "$M_SIZES_NCU" \
          --check-only, and --kernels blocked --sizes "$M_SIZES_NCU_BLOCKED" \
          "(then the piped kernel of: $M_NCU)" | grep -v '^$'
      grep '^"' "$pre-ncu.basic"
      rows "$pre-ncu.blocked"
      for k in $M_NCU; do rows "$pre-ncu.${k%%:*}"; done; } >"$pre-ncu.csv.tmp"
    rm -f "$pre-ncu.basic" "$pre-ncu.blocked"
    for k in $M_NCU; do rm -f "$pre-ncu.${k%%:*}"; done
    mv -f "$pre-ncu.csv.tmp" "$pre-ncu.csv"
    echo "raw metrics: $pre-ncu.csv"
}
want ncu && step "ncu" "$pre-ncu.txt" profile
wide_profile() { # the wide piped kernel's first launch, then cuBLAS's
    ncu --clock-control none --kernel-name regex:matmulWidePiped -c 1 \
        --metrics "$NCU_METRICS" --csv --page raw "$WIDE_BIN" \
        --kernels wide --sizes "$M_SIZES_NCU_WIDE" || return
    ncu --clock-control none --kernel-name-base demangled \
        --kernel-name "regex:[Ss]gemm" -c 1 --metrics "$NCU_METRICS" --csv \
        --page raw "$WIDE_BIN" --kernels wide --sizes "$M_SIZES_NCU_WIDE"
}
want wide && step "ncu wide" "$pre-wide-ncu.txt" wide_profile
opcodes() { # executed warp instructions per SASS opcode, the lesson's pair
    # and the piped kernel of each of the manifest's ncu kernels (M_NCU)
    local k
    ncu_opcodes matmulTile 2 "$BIN" || return
    for k in $M_NCU; do
        ncu_opcodes matmulTilePiped 1 "$VAR/${k#*:}" >"$pre-opcodes.tmp" ||
            return
        rows "$pre-opcodes.tmp"; rm -f "$pre-opcodes.tmp"
    done
}
ncu_opcodes() { # ncu_opcodes KERNELS COUNT BINARY
    ncu --clock-control none --kernel-name "regex:$1" -c "$2" \
        --metrics sass__inst_executed_per_opcode \
        --print-metric-instances details --csv --page raw "$3" \
        --sizes "$M_SIZES_NCU" --check-only
}
want opcodes && step "ncu opcodes" "$pre-ncu-opcodes.txt" opcodes
# warp stall samples per SASS instruction of the lesson's piped kernel:
# where cuda::pipeline's waits (SYNCS.PHASECHK and its branch) stall
want source && step "ncu source" "$pre-ncu-source.txt" \
    ncu --clock-control none --kernel-name regex:matmulTilePiped -c 1 \
    --section SourceCounters --page source --csv --print-source sass "$BIN" \
    --sizes "$M_SIZES_NCU" --check-only
# the same page's CUDA view (the SASS under each line of cuda/pipeline), at
# each depth: which of producer_acquire and consumer_wait tests again
if want waits; then
for s in $M_EXERCISE_DEPTHS; do
    step "ncu waits, $s stages" "$pre-ncu-lines-$s.txt" \
        ncu --clock-control none --kernel-name regex:matmulTilePiped -c 1 \
        --section SourceCounters --page source --csv \
        --print-source cuda,sass \
        "build/$ARCH_DEFAULT-${s}stages/pipelined_gemm" \
        --sizes "$M_SIZES_NCU" --check-only
done
fi

want pitfalls && step "pitfalls" "$pre-pitfalls.txt" \
    "$MAKE" --no-print-directory pitfalls ARCH=$ARCH_DEFAULT

echo >&2
if [ ${#failed[@]} -gt 0 ]; then
    printf 'evidence-gpu: failed steps: %s\n' "${failed[*]}" >&2
    exit 1
fi
echo "evidence-gpu: all steps passed; transcripts in $out" >&2
