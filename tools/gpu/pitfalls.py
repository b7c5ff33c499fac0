"""pitfalls: check that every pitfall of the lesson fails as the page says.

Usage: python3 -m tools.gpu.pitfalls [--arch sm_80] [--stages 2]
           [--compile-only] [--report build/pitfalls/report.txt]

No GPU: nvcc refuses misaligned-copy with the static_assert on the 16-byte
promise; -arch=sm_75 compiles to PTX without cp.async; the runnable
variants are built; the CPU model of the copy rules (tools/model/check.py)
passes the lesson's kernel and fails wrong-stage and barrier-for-wait (a
read before the copy landed) and unmatched-commit (the block hangs), each
with its message. On a GPU (CC >= 8.0; skipped, not failed, without
one): the capability gate refuses the sm_75 binary, the memcmp catches
wrong-stage, the memcmp or racecheck catches barrier-for-wait (which one is
recorded), the watchdog names the kernel unmatched-commit hangs. Prints
PASS/FAIL lines and "N passed, M failed"; the report keeps the transcripts.
Exit 1 on a failure.
"""

import argparse
import os
import re
import shutil
import subprocess
import sys

from litkit import litlib
from tools.model import check as model


class Checks(list):
    """The report's lines (printed as they come) and the PASS/FAIL count."""

    passed = failed = 0

    def log(self, text):
        """Add text to the report, and print it."""
        self.append(text)
        print(text, flush=True)

    def check(self, ok, good, bad):
        """Count one check and log PASS good or FAIL bad."""
        self.passed, self.failed = self.passed + bool(ok), self.failed + (
            not ok)
        self.log(("PASS " + good) if ok else ("FAIL " + bad))

    def run(self, cmd, timeout=120):
        """Run cmd (a list), log it with its output: (status, output)."""
        self.log("$ " + " ".join(cmd))
        try:
            p = subprocess.run(cmd, capture_output=True, text=True,
                               timeout=timeout)
            rc, out = p.returncode, p.stdout + p.stderr
        except subprocess.TimeoutExpired:
            rc, out = 124, f"timed out after {timeout} s"
        self.append("\n".join("    " + l for l in out.splitlines()))
        self.log(f"    (exit {rc})")
        return rc, out


def main(argv):
    """Run the checks; returns the exit status."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--arch", default="sm_80")
    ap.add_argument("--stages", default="2")
    ap.add_argument("--compile-only", action="store_true")
    ap.add_argument("--report", default="build/pitfalls/report.txt")
    a = ap.parse_args(argv)
    nvcc, c = os.environ.get("NVCC", "nvcc"), Checks()
    bindir = f"build/{a.arch}-{a.stages}stages/pitfalls"
    os.makedirs("build/pitfalls", exist_ok=True)
    c.log("== misaligned-copy: nvcc must refuse a 12-byte copy under "
          "aligned_size_t<16>")
    rc, out = c.run([nvcc, "-std=c++17", f"-arch={a.arch}", "-Ibuild", "-c",
                     "build/pitfalls/misaligned-copy.cu", "-o",
                     "build/pitfalls/misaligned.o"])
    c.check(rc != 0 and "aligned_size_t<16> promises" in out,
            f"misaligned-copy refused at compile time (nvcc exit {rc}) with "
            "the alignment message", f"misaligned-copy: nvcc exit {rc}, no "
            "alignment message")
    c.log("== wrong-arch: -arch=sm_75 compiles and its PTX has no cp.async")
    rc, _ = c.run([nvcc, "-std=c++17", "-arch=sm_75", "-Ibuild", "-ptx",
                   "build/pipelined_gemm.cu", "-o", "build/pitfalls/sm_75.ptx"])
    n = (litlib.read_text("build/pitfalls/sm_75.ptx").count("cp.async")
         if rc == 0 else "no")
    c.check(rc == 0 and n == 0, "sm_75 build: nvcc exit 0, no cp.async in "
            "the PTX", f"sm_75 build: nvcc exit {rc}, {n} cp.async")
    c.log("== the runnable variants compile")
    for v in ("wrong-stage", "barrier-for-wait", "unmatched-commit"):
        c.check(os.access(f"{bindir}/{v}", os.X_OK), f"{v} built "
                f"({bindir}/{v})", f"{v}: {bindir}/{v} missing")
    model_checks(c, int(a.stages))
    probe = 0 if a.compile_only else subprocess.call(
        [f"build/{a.arch}-{a.stages}stages/pipelined_gemm", "--sizes", "64",
         "--check-only"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    if a.compile_only or probe == 3:
        c.log("== GPU checks skipped" + ("" if a.compile_only else
              ": no CUDA device here (run 'make pitfalls' on a GPU)"))
    elif probe:
        c.check(False, "", f"the correct program itself fails here (exit "
                f"{probe}); GPU pitfall checks not run")
    else:
        gpu_checks(c, a, bindir)
    c.log(f"\n{c.passed} passed, {c.failed} failed")
    litlib.write_atomic(a.report, "\n".join(c) + "\n")
    return 1 if c.failed else 0


# (kernel file, what the model's verdict must start with) of the model checks
MODEL_CHECKS = [
    ("pipelined_gemm", "PASS the loop keeps the copy rules"),
    ("pitfalls/wrong-stage", "FAIL the loop, STAGES={s}, N=64 (4 K-slices), "
     "lockstep order: thread 0 reads stage 1's"),
    ("pitfalls/barrier-for-wait", "FAIL the loop, STAGES={s}, N=64 (4 "
     "K-slices), lockstep order: thread 0 reads stage 0's"),
    ("pitfalls/unmatched-commit", "FAIL the loop, STAGES={s}, N=64 (4 "
     "K-slices), lockstep order: the block hangs: threads 0-255 wait at "
     "consumer_wait()")]


def model_checks(c, stages):
    """The variants in the CPU model (no GPU): the lesson's kernel passes,
    each pitfall fails as MODEL_CHECKS says."""
    c.log(f"== the CPU model of the copy rules (STAGES={stages}, no GPU)")
    for name, want in MODEL_CHECKS:
        status, lines = model.check(f"build/{name}.cu", (stages,))
        c.log("\n".join("    " + l for l in lines))
        want = want.format(s=stages)
        c.check(lines[-1].startswith(want) and status == want.startswith(
            "FAIL"), f"{name}: the model says {want[:4]}, as the page says",
            f"{name}: the model's verdict is not '{want}'")


# (title, command, status, text it must print) of the plain GPU checks
GPU_CHECKS = [
    ("wrong-arch on the GPU: the capability gate refuses sm_75",
     ["build/sm_75-{stages}stages/pipelined_gemm", "--sizes", "512"], 4,
     "no cp.async"),
    ("wrong-stage: the memcmp catches it (exit 1, size named)",
     ["{bin}/wrong-stage", "--sizes", "512", "--check-only"], 1,
     "N=512: matmulTilePiped differs"),
    ("unmatched-commit: the watchdog names the hung kernel (exit 6)",
     ["{bin}/unmatched-commit", "--sizes", "512", "--check-only",
      "--timeout", "10"], 6, "matmulTilePiped did not finish")]


def gpu_checks(c, a, bindir):
    """The checks that run the variants on the GPU (see the docstring)."""
    subprocess.call([os.environ.get("MAKE", "make"), "--no-print-directory",
                     "build", "ARCH=sm_75", f"STAGES={a.stages}"],
                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for title, cmd, want, text in GPU_CHECKS:
        c.log("== " + title)
        rc, out = c.run([x.format(bin=bindir, stages=a.stages) for x in cmd])
        c.check(rc == want and text in out, title, f"{title}: exit {rc}")
    c.log("== barrier-for-wait: which check catches it")
    memcmp, run_out = c.run([f"{bindir}/barrier-for-wait", "--sizes",
                             "512,1024,2048", "--check-only"])
    # Caught by the memcmp when it names a difference, whatever a later
    # size does (the variant can also make a later launch fail).
    caught = "matmulTilePiped differs" in run_out
    race, summary = "none", "compute-sanitizer not installed"
    if shutil.which("compute-sanitizer"):
        race, out = c.run(["compute-sanitizer", "--tool", "racecheck",
                           "--error-exitcode", "99", f"{bindir}/barrier-for-"
                           "wait", "--sizes", "512", "--check-only"], 600)
        summary = " ".join(re.findall(r".*(?:RACECHECK|ERROR) SUMMARY.*",
                                      out)[-2:])
    c.log(f"    barrier-for-wait: memcmp run exit {memcmp}; racecheck exit "
          f"{race}: {summary}")
    c.check(caught or race == 99, f"barrier-for-wait caught (memcmp "
            f"{'named a difference' if caught else 'passed'}, exit {memcmp}; "
            f"racecheck exit {race})", "barrier-for-wait caught by neither "
            f"memcmp (exit {memcmp}) nor racecheck ({race})")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
