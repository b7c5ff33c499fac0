#!/usr/bin/env bash
# tools/gpu/device-run.sh OUTDIR [COMMAND...]: what one call of the
# workplace's GPU machine (the CUDA toolkit, no noweb, no package registry)
# runs: unpacks the noweb .deb of .devtools/ into /tmp/nw (rewriting its
# library path), runs tools/gpu/evidence-gpu.sh into /tmp/ev, packs it into
# OUTDIR/evidence.tgz. With a COMMAND, runs that instead, with its status.
set -u
outdir=$1
export LIT_NO_SETUP=1
mkdir -p /tmp/nw
deb=$(ls .devtools/noweb_*.deb | head -n 1)
dpkg -x "$deb" /tmp/nw 2>/dev/null ||
    (cd /tmp/nw && ar x "$OLDPWD/$deb" && tar xf data.tar.*)
grep -rIl /usr/lib/noweb /tmp/nw/usr |
    xargs -r sed -i 's#/usr/lib/noweb#/tmp/nw/usr/lib/noweb#g'
export PATH=/tmp/nw/usr/bin:$PATH
for t in make cc nvcc ncu compute-sanitizer cuobjdump ptxas notangle python3 \
         awk timeout; do
    printf '%-18s %s\n' "$t" "$(command -v $t || echo MISSING)"
done
nvidia-smi --format=csv --query-gpu=name,compute_cap,driver_version,clocks.sm,\
clocks.max.sm,temperature.gpu,utilization.gpu
[ $# -gt 1 ] && { shift; exec "$@"; }
tools/gpu/evidence-gpu.sh /tmp/ev 2>&1 | tee /tmp/ev-log.txt
rc=${PIPESTATUS[0]}
cp build/pitfalls/report.txt /tmp/ev/pitfalls-report.txt 2>/dev/null
mkdir -p /tmp/ev/raw &&
    cp -r build/evidence-sass build/exercise /tmp/ev/raw/ 2>/dev/null
tar czf "$outdir/evidence.tgz" -C /tmp ev ev-log.txt
echo "evidence-gpu exit $rc"
