"""exercise_check: check part 2 of the exercise, the pipelined main loop
written in day74.nw's chunk <<exercise: your pipelined main loop>>.

Usage: python3 -m tools.gpu.exercise_check [--exercise student|solution]
  [--arch sm_80] [--stages 2] [--nvccflags FLAGS]. Reads
build/exercises/EXERCISE.cu (make exercise-check tangles it); each step
only if the one before passed: (1) the stub's token: one line, no
compiler; (2) nvcc -ptx -arch=sm_80 (the #line tangle: errors name
day74.nw's lines; without nvcc, steps 2 and 4 are skipped, said so);
(3) the CPU model of the copy rules (tools/model/check.py, any machine):
one block at the exercise's depths of tools/manifest.toml (and --stages) and N = 64, 128, in four
thread orders, names the thread, K-slice, stage and lines of a broken
rule; (4) matmulTilePiped's PTX holds cp.async copies, commit_group,
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
import shlex
import subprocess
import sys
from collections import Counter

from tools import manifest
from tools.compile import checks
from tools.lit import litlib
from tools.model import check as model

CHUNK = "<<exercise: your pipelined main loop>>="
NOT_WRITTEN = ("not yet written: edit the chunk " + CHUNK[:-1] + " at line {} "
               "of day74.nw (exercises/README.md says how)")
NO_GPU = "no GPU here: the run and the timing were skipped"
NO_NVCC = ("nvcc not found: the sm_80 compile, the PTX check and the GPU run "
           "were skipped")
OUT = "build/exercise-check"
NOISE = 0.02   # piped/sync differences below this are run-to-run noise
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
    """Step 4 (no timeout: the program has a watchdog); the exit status."""
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
    for b in binary, lesson:
        csv = os.path.join(OUT, os.path.basename(b) + "-timing.csv")
        p = run([b, "--sizes", "2048,4096", "--csv", csv])
        if p.returncode:
            print(f"{p.stderr}FAIL the timing run of {b} failed.")
            return 1
        got.append({r["n"]: r["piped_over_sync"] for r in
                    litlib.read_stamped_csv(csv)[1] if r["pair"] == "basic"})
    rows = [(n, got[0][n], got[1][n]) for n in (2048, 4096)]
    print("Timing: piped/sync, the pipelined kernel's median time over the "
          "synchronous one's\n(below 1: the pipeline is faster).\n"
          "      N  yours  cuda::pipeline\n" + "\n".join(
              f"  {n:5d}  {y:5.3f}  {l:14.3f}" for n, y, l in rows))
    for n, y, l in rows:
        print(f"At N = {n}, {who} is {than(y, 1.0)} the synchronous kernel "
              f"and {than(y, l)} cuda::pipeline.")
    print(f"(Differences under {NOISE} are run-to-run noise. These lines go "
          "in answers.md.)")
    return 0


def main(argv):
    """The checks of the docstring, in order; returns the exit status."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--exercise", default="student",
                    choices=("student", "solution"))
    for opt, default in (("arch", "sm_80"), ("stages", "2"),
                         ("nvccflags", "-std=c++17 -O3 -lineinfo")):
        ap.add_argument("--" + opt, default=default)
    a = ap.parse_args(argv)
    src, ptx = f"build/exercises/{a.exercise}.cu", f"{OUT}/{a.exercise}.ptx"
    who = "your loop" if a.exercise == "student" else "the solution"
    if not os.path.isfile(src):
        ap.error(f"{src} is missing: make exercise-check tangles it")
    if "DAY74_EXERCISE_NOT_YET_WRITTEN" in litlib.read_text(src):
        lines = litlib.read_text("day74.nw").splitlines()
        print(NOT_WRITTEN.format(lines.index(CHUNK) + 1))
        return 1
    os.makedirs(OUT, exist_ok=True)
    try:
        p = run([os.environ.get("NVCC", "nvcc"), *shlex.split(a.nvccflags),
                 "-arch=sm_80", f"-DSTAGES={a.stages}", "-Ibuild", "-ptx",
                 src, "-o", ptx + ".tmp"])
    except FileNotFoundError:
        p = None
        print(NO_NVCC)
    if p is not None:
        print(p.stdout + p.stderr, end="")
        if p.returncode:
            print(f"FAIL {who} does not compile for sm_80: the messages "
                  "above name the lines of day74.nw to fix.")
            return 1
        os.replace(ptx + ".tmp", ptx)
        print(f"PASS {who} compiles for sm_80" + " (with the warnings above)"
              * bool(p.stdout + p.stderr) + ".")
    status, lines = model.check(
        src, sorted({*manifest.load().depths.exercise, int(a.stages)}), who=who)
    print("\n".join(lines))
    if status or p is None:
        return status
    found = ptx_findings(litlib.read_text(ptx))
    print(f"     matmulTilePiped's PTX holds {found['copy']} cp.async copies, "
          f"{found['commit_group']} cp.async.commit_group, {found['wait']} "
          f"cp.async.wait_group and {found['barrier']} bar.sync.")
    bad = [t for fam, t in PTX_PROBLEMS.items()
           if bool(found[fam]) == (fam == "mbarrier_arrive")]
    if bad:
        print(f"FAIL {who}: {bad[0]}.")
        return 1
    print("PASS they are the primitives' instructions, as part 2 asks.")
    binary = f"build/{a.arch}-{a.stages}stages/exercises/{a.exercise}"
    lesson = f"build/{a.arch}-{a.stages}stages/pipelined_gemm"
    p = run([os.environ.get("MAKE", "make"), "--no-print-directory", binary,
             lesson, f"ARCH={a.arch}", f"STAGES={a.stages}"])
    if p.returncode:
        print(f"{p.stdout}{p.stderr}FAIL make could not build {binary}.")
        return 1
    return gpu_checks(binary, lesson, who)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
