#!/bin/bash
# .exp/sass_compare.sh: the hot loop of each pipelined kernel of part 1 as
# the H200/H100 driver compiles it (ptxas -arch=sm_90 of the binary's
# compute_80 PTX, as evidence-gpu's jit_sass), registers, and instructions
# per warp and K-slice (the loop body: from the back-branch's target to the
# back-branch), by opcode.
set -eu
CUOBJDUMP=${CUOBJDUMP:-build/venv/lib/python3.11/site-packages/nvidia/cu13/bin/cuobjdump}
w=$(mktemp -d)
for v in lesson pg_seed pg_seed_lct seed; do
  mkdir -p $w/$v
  $CUOBJDUMP -ptx .exp/bin/$v | awk -v d=$w/$v '/^\.version/ {n++; o=d "/" n ".ptx"; on=1} /^Fatbin /{on=0} on {print > o}'
  for p in $w/$v/*.ptx; do
    grep -q matmulTilePiped $p || continue
    regs=$(ptxas -arch=sm_90 -v -o $w/$v.cubin $p 2>&1 | grep -A3 "Piped" |
           grep -o "Used [0-9]* registers" | grep -o "[0-9]*")
    $CUOBJDUMP -sass $w/$v.cubin > $w/$v.sass
  done
  awk '/Function :/ { inside = index($0, "matmulTilePiped") > 0 }
       inside && /\/\*[0-9a-f]+\*\/ / { match($0, /\/\*[0-9a-f]+\*\//)
         a = substr($0, RSTART + 2, RLENGTH - 4); sub(/^.*\*\/ +/, "")
         sub(/ *;.*$/, ""); print a "\t" $0 }' $w/$v.sass > $w/$v.k
  # the loop: the last backward branch before the epilogue's stores
  back=$(awk -F'\t' '$2 ~ /BRA 0x/ { t = $2; sub(/.*BRA 0x/, "", t)
         if (strtonum("0x" t) < strtonum("0x" $1)) { b = $1; tg = t } }
         END { print tg " " b }' $w/$v.k)
  set -- $back
  awk -F'\t' -v s=$1 -v e=$2 'strtonum("0x" $1) >= strtonum("0x" s) &&
      strtonum("0x" $1) <= strtonum("0x" e) && $2 !~ /^@!PT/ {print $2}' \
      $w/$v.k > $w/$v.loop
  printf '%s: %s registers; loop 0x%s-0x%s, %d instructions in the loop body (one trip a warp and K-slice; retry paths of the waits included):' $v $regs $1 $2 \
    $(wc -l < $w/$v.loop)
  sed -E 's/^@!?P[0-9T] //; s/[ .].*//' $w/$v.loop | sort | uniq -c |
    sort -k1,1nr -k2 | awk '{printf " %s %s", $2, $1} END {print ""}'
  printf '  shared loads:'; grep -oE '^LDS[.0-9A-Z]*' $w/$v.loop | sort |
    uniq -c | awk '{printf " %s %s", $2, $1} END {print ""}'
done
rm -rf $w
