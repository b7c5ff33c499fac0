"""exercise_check: check part 2 of the exercise, the pipelined main loop
written in day74.nw's chunk <<exercise: your pipelined main loop>>, or
(--exercise deep-student, deep-solution) part 1, the stages in dynamic
shared memory of <<exercise: the stages in dynamic shared memory>>: the
same steps, with the model at the exercise's and the deep depths of
tools/manifest.toml, step 2 at the deepest, and step 4 checking that the
PTX declares 16-byte aligned dynamic shared memory (.extern .shared).

Usage: python3 -m tools.gpu.exercise_check [--exercise student|solution]
  [--arch sm_80] [--stages 2] [--nvccflags FLAGS]. Reads
build/exercises/EXERCISE.cu (make exercise-check tangles it); each step
only if the one before passed: (1) the stub's token: one line, no
compiler; (2) nvcc -ptx -arch=sm_80 (the #line tangle: errors name
day74.nw's lines; without nvcc, steps 2 and 4 are skipped, said so);
(3) the CPU model of the copy rules (tools/model/check.py, any machine):
one block at the manifest's exercise depths (and --stages), N = 64, 128,
four thread orders, names the thread, K-slice, stage and lines of a
broken rule, and notes a loop that ignores the depth; (4) matmulTilePiped's PTX holds cp.async copies, commit_group,
wait_group, bar.sync, no mbarrier arrive (cuda::pipeline, named as
such); (5) make builds it and the lesson's binary; it runs at 3 sizes
--check-only, exit 3 or 4 (no GPU, too old) ending the check, passed;
both run at N = 2048, 4096 (CSV in OUT) and piped/sync compared.
Exit: 0 passed; 1 not written, does not compile, breaks a copy rule,
wrong PTX, wrong results or a failed run; 2 usage.
"""

import argparse
import functools
import os
import re
import shlex
import subprocess
import sys
from collections import Counter

from tools import manifest
from tools.compile import checks
from litkit import litlib
from tools.model import check as model

CHUNK = "<<exercise: your pipelined main loop>>="
DEEP_CHUNK = "<<exercise: the stages in dynamic shared memory>>="
NOT_WRITTEN = ("not yet written: edit the chunk {chunk} at line {line} of "
               "day74.nw (exercises/README.md says how)")
EXTERN = re.compile(r"^\s*\.extern \.shared \.align (\d+) \.b8 (\S+)\[\];",
                    re.M)
NO_GPU = "no GPU here: the run and the timing were skipped"
NO_NVCC = ("nvcc not found: the sm_80 compile, the PTX check and the GPU run "
           "were skipped")
OUT = "build/exercise-check"
# piped/sync differences below this are run-to-run noise: on the H200 the
# lesson's ratio at N = 2048 moved by at most 0.005 between processes and
# between two calls (evidence/h200-open-points: lab.depths.both_spread).
NOISE = 0.005
PTX_PROBLEMS = {  # family: what its absence (mbarrier: presence) means
    "mbarrier_arrive": "its copies complete on an mbarrier: that is "
    "cuda::pipeline, the lesson's way; part 2 asks for __pipeline_memcpy_async"
    ", __pipeline_commit, __pipeline_wait_prior and __syncthreads()",
    "copy": "it issues no cp.async (__pipeline_memcpy_async)",
    "commit_group": "it commits no group (__pipeline_commit), so no wait "
    "can count its copies",
    "wait": "it never waits (__pipeline_wait_prior), so the compute reads "
    "tiles before they land",
    "barrier": "it has no __syncthreads(): __pipeline_wait_prior waits for "
    "this thread's own copies only, so a thread reads tile elements other "
    "threads are still copying, and refills a stage others still compute on"}
RUN_FAILS = {  # the program's exit status: what it means for the loop
    1: "computed a wrong result (above: the size, the element, the values): "
    "a tile was read before every thread's copies landed, or refilled while "
    "other threads still computed on it.",
    6: "hung, and the watchdog stopped it: a wait for a group never "
    "committed, or a __syncthreads() that not every thread reaches?"}
run = functools.partial(subprocess.run, capture_output=True, text=True)


def ptx_findings(ptx):
    """{family: count} in matmulTilePiped's PTX: copy, commit_group, wait,
    mbarrier_arrive, barrier."""
    piped, bars = (checks.by_role(checks.ptx_count(ptx, x)["functions"])[
        "piped"] for x in ("cp.async", "bar"))
    fam = checks.summarise(piped)["families"]
    return Counter(fam, wait=fam["wait_group"] + fam["wait_all"],
                   barrier=checks.summarise(bars)["total"])


def gpu_checks(binary, lesson, who):
    """Step 5 (no timeout: the program has a watchdog); the exit status.
    lesson None (part 1): binary's piped/sync alone, no comparison."""
    def than(x, y):  # ratio x against y, NOISE either way
        return ("faster than" if x < y - NOISE else "slower than"
                if x > y + NOISE else "as fast as")
    p = run([binary, "--sizes", "512,1024,2048", "--check-only"])
    if p.returncode in (3, 4):
        print(NO_GPU + " (the card is older than sm_80)" * (p.returncode == 4)
              + ". On a GPU this command also runs and times it.")
        return 0
    print("".join("    " + l + "\n" for l in p.stderr.splitlines()), end="")
    if p.returncode:
        print(f"FAIL {who} " + RUN_FAILS.get(p.returncode,
                                             f"failed (exit {p.returncode})."))
        return 1
    print(f"PASS {who} gives the synchronous kernel's bytes (memcmp) and "
          "matches the CPU reference at N = 512, 1024 and 2048.")
    got = []
    for b in [binary] + [lesson] * bool(lesson):
        csv = os.path.join(OUT, os.path.basename(b) + "-timing.csv")
        p = run([b, "--sizes", "2048,4096", "--csv", csv])
        if p.returncode:
            print(f"{p.stderr}FAIL the timing run of {b} failed.")
            return 1
        got.append({r["n"]: r["piped_over_sync"] for r in
                    litlib.read_stamped_csv(csv)[1] if r["pair"] == "basic"})
    rows = [(n, got[0][n], got[-1][n]) for n in (2048, 4096)]
    print(f"Timing of {binary}: piped/sync, the pipelined kernel's median "
          "time over\nthe synchronous one's (below 1: the pipeline is "
          "faster).\n"
          "      N  yours" + "  cuda::pipeline" * bool(lesson) + "\n" +
          "\n".join(f"  {n:5d}  {y:5.3f}" + f"  {l:14.3f}" * bool(lesson)
                    for n, y, l in rows))
    for n, y, l in rows:
        print(f"At N = {n}, {who} is {than(y, 1.0)} the synchronous kernel"
              + f" and {than(y, l)} cuda::pipeline" * bool(lesson) + ".")
    print(f"(Differences under {NOISE} are run-to-run noise. These lines go "
          "in answers.md.)")
    return 0


def main(argv):
    """The checks of the docstring, in order; returns the exit status."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--exercise", default="student", choices=(
        "student", "solution", "deep-student", "deep-solution"))
    for opt, default in (("arch", "sm_80"), ("stages", "2"),
                         ("nvccflags", "-std=c++17 -O3 -lineinfo")):
        ap.add_argument("--" + opt, default=default)
    a = ap.parse_args(argv)
    src, ptx = f"build/exercises/{a.exercise}.cu", f"{OUT}/{a.exercise}.ptx"
    deep = a.exercise.startswith("deep-")
    who = ("your kernel" if deep else "your loop") if a.exercise.endswith(
        "student") else "the solution"
    depths = manifest.load().depths
    stages = sorted({*depths.exercise, *(depths.deep if deep else ()),
                     int(a.stages)})
    # nvcc at the deepest depth; past the exercise's, it must be allowed
    ptx_stages = max(stages) if deep else int(a.stages)
    allow = ["-DALLOW_DEEP_PIPELINE"] * (ptx_stages > max(depths.exercise))
    if not os.path.isfile(src):
        ap.error(f"{src} is missing: make exercise-check tangles it")
    if "DAY74_EXERCISE_NOT_YET_WRITTEN" in litlib.read_text(src):
        lines = litlib.read_text("day74.nw").splitlines()
        chunk = DEEP_CHUNK if deep else CHUNK
        print(NOT_WRITTEN.format(chunk=chunk[:-1],
                                 line=lines.index(chunk) + 1))
        return 1
    os.makedirs(OUT, exist_ok=True)
    try:
        p = run([os.environ.get("NVCC", "nvcc"), *shlex.split(a.nvccflags),
                 "-arch=sm_80", f"-DSTAGES={ptx_stages}", *allow, "-Ibuild",
                 "-ptx", src, "-o", ptx + ".tmp"])
    except FileNotFoundError:
        p = None
        print(NO_NVCC)
    if p is not None:
        print(p.stdout + p.stderr, end="")
        if p.returncode:
            print(f"FAIL {who} does not compile for sm_80 at STAGES="
                  f"{ptx_stages}: the messages above name the lines of "
                  "day74.nw to fix.")
            return 1
        os.replace(ptx + ".tmp", ptx)
        print(f"PASS {who} compiles for sm_80 at STAGES={ptx_stages}" +
              ", the deepest checked" * deep +
              " (with the warnings above)" * bool(p.stdout + p.stderr) + ".")
    status, lines = model.check(src, stages, who=who)
    print("\n".join(lines))
    if status or p is None:
        return status
    return (deep_ptx if deep else piped_ptx)(litlib.read_text(ptx), who) \
        or gpu_run(a, who, deep)


def piped_ptx(ptx, who):
    """Part 2's PTX check: 1 (and a FAIL line) unless matmulTilePiped's
    PTX holds the primitives' instructions (PTX_PROBLEMS), else 0."""
    found = ptx_findings(ptx)
    print(f"     matmulTilePiped's PTX holds {found['copy']} cp.async copies, "
          f"{found['commit_group']} cp.async.commit_group, {found['wait']} "
          f"cp.async.wait_group and {found['barrier']} bar.sync.")
    bad = [t for fam, t in PTX_PROBLEMS.items()
           if bool(found[fam]) == (fam == "mbarrier_arrive")]
    if bad:
        print(f"FAIL {who}: {bad[0]}.")
        return 1
    print("PASS they are the primitives' instructions, as part 2 asks.")
    return 0


def deep_ptx(ptx, who):
    """Part 1's PTX check: 1 (and a FAIL line) unless the PTX declares
    dynamic shared memory aligned to 16 bytes or more, else 0."""
    found = [(int(al), name) for al, name in EXTERN.findall(ptx)]
    if not found:
        print(f"FAIL {who}: the PTX declares no dynamic shared memory "
              "(.extern .shared): the stages are not in it.")
        return 1
    if min(al for al, _ in found) < 16:
        print(f"FAIL {who}: the PTX declares dynamic shared memory aligned "
              f"to {min(al for al, _ in found)} bytes; the 16-byte cp.async "
              "needs 16.")
        return 1
    print(f"PASS the PTX declares dynamic shared memory (.extern .shared "
          f".align {found[0][0]}), as part 1 asks.")
    return 0


def gpu_run(a, who, deep):
    """Step 5: build the file and the lesson's binary, run and time.
    Part 1 asks a built lesson binary first whether there is a GPU (exit
    3 or 4: none, or too old), and builds nothing when there is none."""
    binary = f"build/{a.arch}-{a.stages}stages/exercises/{a.exercise}"
    lesson = f"build/{a.arch}-{a.stages}stages/pipelined_gemm"
    probe = next((b for b in (lesson, "build/pipelined_gemm")
                  if os.path.isfile(b)), None)
    if deep and probe:
        rc = run([probe, "--sizes", "512", "--check-only"]).returncode
        if rc in (3, 4):
            print(NO_GPU + " (the card is older than sm_80)" * (rc == 4) +
                  ". On a GPU this command also runs and times it.")
            return 0
    p = run([os.environ.get("MAKE", "make"), "--no-print-directory", binary,
             *([] if deep else [lesson]), f"ARCH={a.arch}",
             f"STAGES={a.stages}", *(["ALLOW_DEEP_PIPELINE=1"] * (
                 int(a.stages) > max(manifest.load().depths.exercise)))])
    if p.returncode:
        print(f"{p.stdout}{p.stderr}FAIL make could not build {binary}.")
        return 1
    return gpu_checks(binary, None if deep else lesson, who)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
