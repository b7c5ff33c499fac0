#!/usr/bin/env bash
# One device call: the student's commands on the H200 with today's build
# (C-compiler link), and make exercise-check's GPU path.
set -u
O=${OUT:-/tmp/out}; mkdir -p "$O"
export DAY74_NO_SETUP=1
mkdir -p /tmp/nw
deb=$(ls .devtools/noweb_*.deb | head -n 1)
dpkg -x "$deb" /tmp/nw 2>/dev/null ||
    (cd /tmp/nw && ar x "$OLDPWD/$deb" && tar xf data.tar.*)
for f in $(grep -rIl /usr/lib/noweb /tmp/nw/usr); do
    sed -i 's#/usr/lib/noweb#/tmp/nw/usr/lib/noweb#g' "$f"; done
export PATH=/tmp/nw/usr/bin:$PATH
step() { # name, command...
    local n=$1; shift
    { echo "\$ $*"; date -u +%FT%TZ; s=$(date +%s)
      timeout 240 "$@"; rc=$?
      echo "exit $rc ($(( $(date +%s) - s )) s)"; } > "$O/$n.txt" 2>&1
    tail -n 4 "$O/$n.txt"
}
nvidia-smi --query-gpu=name,compute_cap,driver_version,clocks.sm,clocks.max.sm \
  --format=csv > "$O/nvidia-smi.txt"
git rev-parse HEAD > "$O/commit.txt"
step 01-tangle make tangle
step 02-run make run
step 03-run-all make run RUN_ARGS="--kernels all --sizes 1024,4096"
cp build/source.sha256 "$O/" 2>/dev/null
step 04-memcheck compute-sanitizer --tool memcheck --error-exitcode 9 \
  build/pipelined_gemm --sizes 256 --kernels all
step 05-ex-solution make exercise-check EXERCISE=solution
step 06-ex-stub make exercise-check
cp day74.nw /tmp/day74.orig
python3 - <<'PY'
import re
src = open("day74.nw").read()
stub = re.search(r"(<<exercise: your pipelined main loop>>=\n)(.*?)(\n@\n)",
                 src, re.S)
sol = re.search(r"<<exercise solution: the pipelined main loop>>=\n(.*?)\n@\n",
                src, re.S).group(1)
loop = re.search(r"<<the thread-scope main loop>>=\n(.*?)\n@\n",
                 src, re.S).group(1)
good = sol.replace("<<the thread-scope main loop>>", loop)
bad = good.replace("__pipeline_wait_prior(kStages - 2)",
                   "__pipeline_wait_prior(kStages - 1)")
assert bad != good
for name, body in (("good", good), ("offbyone", bad)):
    open("/tmp/day74.%s.nw" % name, "w").write(
        src[:stub.start(2)] + body + src[stub.end(2):])
PY
cp /tmp/day74.good.nw day74.nw
step 07-ex-student-good make exercise-check
cp /tmp/day74.offbyone.nw day74.nw
step 08-ex-student-offbyone make exercise-check
cp /tmp/day74.orig day74.nw
step 09-exercise make exercise
ls -la build/ > "$O/build-ls.txt"
echo done
