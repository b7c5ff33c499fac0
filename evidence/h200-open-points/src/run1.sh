#!/usr/bin/env bash
# GPU call 1 (issue 22): interleaved stage depths, the seed beside the
# lesson, the exercise's wrong loops on the GPU, then the SGEMM/LDS kit.
set -u
O=${OUT:-/tmp/out}; R=/tmp/res; mkdir -p "$O" "$R"
T0=$SECONDS
export DAY74_NO_SETUP=1
mkdir -p /tmp/nw
deb=$(ls .devtools/noweb_*.deb | head -n 1)
dpkg -x "$deb" /tmp/nw 2>/dev/null ||
    (cd /tmp/nw && ar x "$OLDPWD/$deb" && tar xf data.tar.*)
for f in $(grep -rIl /usr/lib/noweb /tmp/nw/usr); do
    sed -i 's#/usr/lib/noweb#/tmp/nw/usr/lib/noweb#g' "$f"; done
export PATH=/tmp/nw/usr/bin:$PATH
pack() { tar czf "$O/results.tgz.tmp" -C /tmp res && mv "$O/results.tgz.tmp" "$O/results.tgz"; }
stamp() { # stamp COMMAND...
  echo "# date_utc: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "# host: $(uname -n)"
  nvidia-smi --format=csv,noheader \
    --query-gpu=name,compute_cap,driver_version,clocks.sm,clocks.max.sm \
    | head -n 1 | sed 's/^/# gpu: /'
  echo "# toolkit: $(nvcc --version | tail -n 1)"
  echo "# commit: $(git rev-parse HEAD 2>/dev/null)"
  echo "# source_sha256: $(cat build/source.sha256 2>/dev/null)"
  echo "# command: $*"
}
log() { echo "[$((SECONDS - T0)) s] $*"; }
nvidia-smi > "$R/nvidia-smi.txt" 2>&1
log "build"
make --no-print-directory tangle > "$R/build.log" 2>&1
make --no-print-directory -j16 build ARCH=sm_80 STAGES=2 >> "$R/build.log" 2>&1
for s in 3 4; do
  make --no-print-directory build ARCH=sm_80 STAGES=$s >> "$R/build.log" 2>&1 &
done
make --no-print-directory build ARCH=sm_90 STAGES=2 >> "$R/build.log" 2>&1 &
nvcc -std=c++17 -O3 -arch=sm_80 -lineinfo -o /tmp/seed \
  .seed/pipelined_gemm.cu > "$R/seed-build.log" 2>&1 &
python3 .gpulab/variants.py > /dev/null
for v in good wait-plus-one no-barrier barrier-before-wait \
         refill-computed-stage commit-only-when-fetched; do
  d=/tmp/ex-$v; mkdir -p $d
  tar --exclude=./build --exclude=./.gpulab --exclude=./.seed -cf - . |
    tar -xf - -C $d
  cp /tmp/day74.$v.nw $d/day74.nw
  case $v in good) st="2 3 4";; commit-only-when-fetched) st=3;; *) st="2 3";;
  esac
  ( cd $d && make --no-print-directory tangle >/dev/null 2>&1
    for s2 in $st; do make --no-print-directory build \
      build/sm_80-${s2}stages/exercises/student ARCH=sm_80 STAGES=$s2; done \
    ) > "$R/prebuild-$v.log" 2>&1 &
done
wait
ls build/*/pipelined_gemm /tmp/ex-*/build/*/exercises/student >> "$R/build.log"
pack
log "interleaved depths (ABC x 4, N = 2048)"
{ stamp "for r in 1..4: for s in 2 3 4: build/sm_80-\${s}stages/pipelined_gemm --sizes 2048 --csv depths-\$s-\$r.csv"
  for r in 1 2 3 4; do for s in 2 3 4; do
    echo "## round $r, STAGES=$s"
    timeout 60 build/sm_80-${s}stages/pipelined_gemm --sizes 2048 \
      --csv "$R/depths-$s-$r.csv" 2>&1 | grep -v '^$'
    echo "# exit status: ${PIPESTATUS[0]}"
  done; done; } > "$R/depths.txt" 2>&1
pack
log "seed beside the lesson (3 rounds, N = 2048)"
{ stamp "for r in 1..3: /tmp/seed; build/sm_80-2stages/pipelined_gemm --sizes 2048 --csv seed-lesson-\$r.csv"
  for r in 1 2 3; do
    echo "## round $r: seed"; timeout 60 /tmp/seed 2>&1; echo "# exit status: $?"
    echo "## round $r: lesson"
    timeout 60 build/sm_80-2stages/pipelined_gemm --sizes 2048 \
      --csv "$R/seed-lesson-$r.csv" 2>&1; echo "# exit status: $?"
  done; } > "$R/seed.txt" 2>&1
pack
log "kit (SGEMM candidates, LDS.128 bench, ncu)"
left=$((430 - (SECONDS - T0)))
[ -x .gpulab/kernels/run.sh ] || chmod +x .gpulab/kernels/run.sh
BUDGET=$((left - 15)) timeout $left bash .gpulab/kernels/run.sh "$R/kernels" > "$R/kernels.log" 2>&1
echo "kit exit $?" >> "$R/kernels.log"
pack
log "exercise-check of the wrong loops (STAGES=3; good at 2,3,4)"
runex() { # variant stages
  ( cd /tmp/ex-$1 && { stamp "make exercise-check STAGES=$2 (student chunk: $1)"
    timeout 200 make --no-print-directory exercise-check STAGES=$2 2>&1
    echo "# exit status: $?"; } > "$R/ex-$1-s$2.txt" 2>&1 )
}
for v in wait-plus-one no-barrier barrier-before-wait refill-computed-stage \
         commit-only-when-fetched; do runex $v 3; done
runex wait-plus-one 2; runex no-barrier 2; runex barrier-before-wait 2
runex refill-computed-stage 2
for s in 2 3 4; do runex good $s; done
grep -H -E '^(PASS|FAIL|WARN)|exit status' "$R"/ex-*.txt > "$R/ex-summary.txt"
pack
log "done"
cat "$R/ex-summary.txt"; tail -n 40 "$R/kernels.log"
