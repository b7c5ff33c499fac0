#!/bin/bash
# .exp/final.sh: one device call: make evidence-gpu at these sources (its
# tools/gpu/device-run.sh: $OUT/evidence.tgz), then the experiments
# (.exp/run.sh: $OUT/exp.tgz) until DEADLINE_S (560) seconds into the call.
deadline=$(( $(date +%s) + ${DEADLINE_S:-560} ))
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
bash tools/gpu/device-run.sh "$OUT" >/tmp/ev-run.log 2>&1
echo "evidence-gpu done at $SECONDS s"; grep -E '^   exit [1-9]|failed|passed' /tmp/ev-run.log | tail -n 8
cp build/sm_80-2stages/pipelined_gemm .exp/bin/lesson
cp build/sm_90-2stages/pipelined_gemm .exp/bin/lesson90
DEADLINE=$deadline bash .exp/run.sh /tmp/exp 2>&1 | tail -n 4
cat /tmp/exp/summary.txt; echo "call seconds: $SECONDS"
