#!/usr/bin/env bash
# evidence/h200-student-run/run.sh OUTDIR: the README's commands for a
# student, on the workplace's GPU machine, in a copy of the checkout without
# build/ (what a fresh clone has). Run through tools/gpu/device-run.sh
# OUTDIR evidence/h200-student-run/run.sh OUTDIR, which puts noweb on PATH
# and skips the Debian packages. Each step's transcript is stamped (date,
# host, GPU, toolkit, source hash, command) and ends with its exit status; all of them go
# into OUTDIR/student-run.tgz.
set -u
out=$1 t=/tmp/student-run w=/tmp/student
rm -rf "$t" "$w" && mkdir -p "$t" "$w"
tar -C "$PWD" --exclude=./build --exclude=./.devtools -cf - . |
    tar -C "$w" -xf -
cd "$w" || exit 1
gpu=$(nvidia-smi --query-gpu=name,compute_cap,driver_version \
      --format=csv,noheader)
step() { # step NAME COMMAND...: run COMMAND, its transcript to NAME.txt
    local n=$1 s rc
    shift
    { echo "# date_utc: $(date -u +%FT%TZ)"
      echo "# host: $(hostname)"
      echo "# gpu: $gpu"
      echo "# toolkit: $(nvcc --version | tail -n 1)"
      echo "# source_sha256: $(cat build/source.sha256 2>/dev/null ||
                                echo not yet tangled)"
      echo "# command: $*"
      s=$(date +%s)
      timeout 400 "$@"
      rc=$?
      echo "exit $rc ($(( $(date +%s) - s )) s)"; } >"$t/$n.txt" 2>&1
    echo "$n: $(tail -n 1 "$t/$n.txt")"
}
# A student's chunk: the stub of PART (1 or 2) replaced by the solution's
# code, or by it with the off-by-one wait (the lesson's Hint 2).
student() { # student PART good|offbyone: writes day74.nw
    python3 - "$@" <<'PY'
import re, sys
part, kind = sys.argv[1], sys.argv[2]
src = open("day74.nw.orig").read()
stub, sol = {
    "1": ("exercise: the stages in dynamic shared memory",
          "exercise solution: the stages in dynamic shared memory"),
    "2": ("exercise: your pipelined main loop",
          "exercise solution: the pipelined main loop")}[part]
chunk = lambda name: re.search(
    r"<<%s>>=\n(.*?)\n@" % re.escape(name), src, re.S)
body = chunk(sol).group(1)
loop = chunk("the thread-scope main loop").group(1)
body = body.replace("<<the thread-scope main loop>>", loop)
if kind == "offbyone":
    wrong = body.replace("__pipeline_wait_prior(kStages - 2)",
                         "__pipeline_wait_prior(kStages - 1)")
    assert wrong != body
    body = wrong
m = chunk(stub)
open("day74.nw", "w").write(src[:m.start(1)] + body + src[m.end(1):])
PY
}
step 01-tangle-run bash -c 'make tangle && make run'
step 02-run-all make run RUN_ARGS="--kernels all --sizes 1024,4096"
step 03-memcheck compute-sanitizer --tool memcheck --error-exitcode 9 \
    build/pipelined_gemm --sizes 256 --kernels all
step 04-exercise make exercise
step 05-check-stub make exercise-check
step 06-check-solution make exercise-check EXERCISE=solution
cp day74.nw day74.nw.orig
student 2 good && step 07-check-student make exercise-check
student 2 offbyone && step 08-check-offbyone make exercise-check
student 1 good && step 09-check-part1 make exercise-check PART=1 STAGES=6
cp day74.nw.orig day74.nw
tar czf "$out/student-run.tgz" -C "$t" .
