#!/bin/bash
# .exp/run.sh OUT: issue 37's experiments, in one device call. Part 1: the
# lesson's pipelined kernel against the seed's, 2 x 2 (kernel x harness)
# plus the seed program on the lesson's inputs, N = 2048, 3 rounds rotated.
# Part 2: wide-pair candidates against cuBLAS (pedantic), N = 4096, 3 rounds
# rotated; then Nsight Compute of the best candidate and of cuBLAS.
# PARTS ("1 2") chooses; DEADLINE (epoch seconds) stops starting processes.
set -u
out=$1 b=.exp/bin deadline=${DEADLINE:-$(( $(date +%s) + 100000 ))}
mkdir -p "$out/p1" "$out/p2"
{ echo "date_utc: $(date -u +%FT%TZ)"; echo "host: $(uname -n)"
  nvidia-smi --format=csv,noheader --query-gpu=name,compute_cap,\
driver_version,memory.total,clocks.max.sm,power.limit
  echo "toolkit: $(nvcc --version | tail -n 1)"
  echo "lesson sources sha256: $(cat build/source.sha256 2>/dev/null ||
                                 cat .exp/source.sha256)"
  echo "commit: $(cat .exp/commit)"
  sha256sum $b/* | sed 's#  # #'; } > "$out/stamp.txt"
pack() { python3 .exp/summary.py "$out" >"$out/summary.txt"
         tar czf "$OUT/exp.tgz" -C "$out" .; }
left() { [ "$(date +%s)" -lt "$deadline" ]; }
rot() { local i=$1; shift; local a=("$@") n=$# j
  for ((j = 0; j < n; j++)); do echo "${a[(i + j) % n]}"; done; }
t0=$SECONDS
if [[ " ${PARTS:-1 2} " == *" 1 "* ]]; then
for r in 1 2 3; do for v in $(rot $r lesson pg_seed pg_seed_lct seed \
    seed_rand); do
  left || break 2
  f=$out/p1/$v-$r; echo "== p1 $v $r $((SECONDS - t0)) s"
  case $v in
  seed*) timeout 90 $b/$v >$f.txt 2>&1 ;;
  *) timeout 90 $b/$v --sizes 2048 --csv $f.csv >$f.txt 2>&1 ;;
  esac; echo "exit $?" >>$f.txt
done; done
pack
fi
[[ " ${PARTS:-1 2} " == *" 2 "* ]] || exit 0
W="lesson90 wide_k16s2_r232 wide_k16s2_r200 wide_k16s3 wide_k8s2 wide_k8s3 \
wide_k8s4 wide_k8s4_r232"
for r in 1 2 3; do for v in $(rot $r $W); do
  left || break 2
  f=$out/p2/$v-$r; echo "== p2 $v $r $((SECONDS - t0)) s"
  timeout 90 $b/$v --kernels wide --sizes 4096 --csv $f.csv >$f.txt 2>&1
  echo "exit $?" >>$f.txt
done; done
pack
best=$(sed -n 's/^best: //p' "$out/summary.txt")
for k in best cublas; do
  left || break
  echo "== ncu $k ($best) $((SECONDS - t0)) s"
  if [ $k = best ]; then sel=(--kernel-name regex:matmulWidePiped)
  else sel=(--kernel-name-base demangled --kernel-name "regex:[Ss]gemm"); fi
  timeout 60 ncu --clock-control none "${sel[@]}" -c 1 \
    --section SpeedOfLight --section WarpStateStats \
    --section InstructionStats --section LaunchStats --section Occupancy \
    --section SchedulerStats --csv --page details $b/$best --kernels wide \
    --sizes 4096 >"$out/p2/ncu-$k.csv" 2>&1
done
echo "== done $((SECONDS - t0)) s"
pack
