"""check: run a kernel file's matmulTilePiped in the CPU model of the
async-copy rules (no GPU): the copy, commit, wait and barrier rules of the
PTX ISA, checked in every interleaving of one block the model tries.

Usage: python3 -m tools.model.check FILE.cu [--stages S,S,...]
  [--sizes 64,128] [--who "your loop"] [--out build/model]

FILE.cu, a kernel file tangled from day74.nw (#line directives kept), is
compiled as host C++ (g++, or $CXX) against include/lit_gpu.h, the stand-in
for the GPU, and linked with model.cc, which runs ONE block (the grid's
last) at each size and depth, its 256 threads as coroutines, in four fixed
orders: lockstep (one primitive per turn), then each thread until it
blocks, forward, reverse and shuffled (Fisher-Yates from mt19937's raw
outputs: the same with any standard library). Prints one PASS line (and a
NOTE when no thread ever had more K-slices in flight at one depth than at
another: a loop that ignores kStages), or a FAIL line naming the depth,
size, order and what happened (thread, K-slice, stage, and the day74.nw
lines of the copy, commit, wait and barrier); exit 0 passed, 1 failed (or
did not compile or finish), 2 usage.

The rules (PTX ISA 8.5, CUDA 12.6.2, chapter 9 section titles):
- "cp.async": a copy of 4, 8 or 16 bytes, both addresses aligned to its
  size, into shared memory, asynchronous, as weak writes in no order with
  any other access. From issue to completion its words are pending: a read
  of one fails (issuer included), another copy into one fails, and a copy
  over a word another thread read fails unless that read is ordered before
  the issue (a barrier; with cuda::pipeline, the reader's consumer_release
  and the issuer's producer_acquire). A read of what such a copy
  overwrites, by a thread that saw the old bytes, fails as that race.
- "Completion Mechanisms for Asynchronous Copy Operations": a copy
  completes through the async-group way (commit_group, wait_group) or the
  mbarrier way (cuda::pipeline); the model follows one per thread and fails
  a thread that mixes them.
- "cp.async.commit_group" / "cp.async.wait_group": groups are per thread;
  wait_group N returns when at most the N newest groups are pending. Each
  copy lands at the LATEST moment allowed, the first covering wait of its
  thread; copies never committed are covered by none.
- "bar, barrier" (bar.sync, __syncthreads()): orders every thread's
  accesses before it before those after it; it completes no copy. A landed
  copy of thread u is visible to thread t only when a barrier orders u's
  wait before t's read (vector clocks). bar.sync is aligned: a release
  whose threads wait at different statements fails; a barrier a returned
  thread never reaches is a hang.
- cuda::pipeline at block scope ("cp.async.mbarrier.arrive",
  "mbarrier.test_wait/try_wait"): each thread's k-th producer_commit adds
  its copies to stage use k; they complete when every thread has committed
  use k, at the first consumer_wait that sees it, visible to the threads
  that waited (or are ordered after one); producer_acquire of use k waits
  for every release of use k - depth. A wait none can satisfy is a hang.
Shared values are checked where they reach __fmaf_rn (each shared word
holds a NaN naming it); any other use reaching C fails as a NaN in C.
Then the block's tile of C is compared with the exact product.

The orders change only which failure is met first: happens-before (vector
clocks over barriers, waits and the pipeline's arrivals) decides what
breaks a rule. Dynamic shared memory: the model first calls the file's own
entry points, day74_basic_configure and day74_basic_launch, which launch
nothing but record cudaFuncAttributeMaxDynamicSharedMemorySize and the
launch's bytes; a launch past 48 KiB not allowed that far, or past 227 KiB, fails
(static shared memory is not added: make stage-limits counts it). The
area has the launch's bytes and the alignment its declaration states, no
more: a misaligned or out-of-bounds copy fails.

What it does not prove: speed; what the hardware does beyond these rules
(a copy landing early lets a wrong loop pass on a GPU); control flow that
depends on timing or data; plain stores to shared memory; other blocks;
cuda::barrier and inline PTX (files using them do not compile here);
writes to a pending copy's source. A loop that does not finish within
TIMEOUT seconds fails as such.
"""

import argparse
import concurrent.futures
import functools
import os
import re
import shlex
import subprocess
import sys

from tools import manifest
from litkit import litlib

HERE = os.path.dirname(os.path.abspath(__file__))
LAUNCH = re.compile(r"\b([A-Za-z_]\w*)\s*<<<(.*?)>>>\s*\(")
DYNAMIC = re.compile(r"\bextern\s+__shared__\s+([^;\[\]]*?)\s*\b([A-Za-z_]\w*)"
                     r"\s*\[\s*\]\s*;")
APPENDIX = """
// Appended by tools/model/check.py: the tile the model names slices with.
extern "C" const int lit_block_k = kBlockK;
extern "C" const std::size_t lit_stage_bytes = sizeof(StageTiles);
extern "C" const int lit_threads = kThreads;
extern "C" const int lit_tile = kBlockM;
extern "C" const int lit_stages = kStages;
// The program's own path to matmulTilePiped: configure, then launch.
extern "C" int lit_launch_piped(const float* a, const float* b, float* c,
                                int n)
{
    day74_kernel_info info;
    cudaError_t err = day74_basic_configure(DAY74_PIPED, 0, &info);
    if (err == cudaSuccess)
        err = day74_basic_launch(DAY74_PIPED, a, b, c, n, 0, nullptr);
    return static_cast<int>(err);
}
"""
ORDERS = "lockstep, forward, reverse and shuffled"
TIMEOUT = 30   # seconds for one depth's run (a pass takes a few at most)
run = functools.partial(subprocess.run, capture_output=True, text=True)


def cxx():
    """The host C++ compiler: $CXX or g++, as a list."""
    return shlex.split(os.environ.get("CXX") or "g++")


def model_object(out):
    """model.cc compiled once into OUT/model.o (rebuilt when older than
    model.cc or lit_gpu.h); returns its path. RuntimeError on a failure."""
    obj = os.path.join(out, "model.o")
    srcs = [os.path.join(HERE, "model.cc"),
            os.path.join(HERE, "include", "lit_gpu.h")]
    if os.path.isfile(obj) and all(os.path.getmtime(obj) >= os.path.getmtime(
            s) for s in srcs):
        return obj
    os.makedirs(out, exist_ok=True)
    tmp = f"{obj}.{os.getpid()}.tmp"
    p = run([*cxx(), "-std=c++17", "-O1", "-c", "-I", os.path.join(
        HERE, "include"), srcs[0], "-o", tmp])
    if p.returncode:
        raise RuntimeError(p.stdout + p.stderr)
    os.replace(tmp, obj)
    return obj


def host_source(src):
    """The kernel file's text as host C++: each launch `k<<<...>>>(`
    becomes `LIT_LAUNCH(k, ...)(` (which records the launch's dynamic
    shared memory and launches nothing), each `extern __shared__ T
    name[];` becomes `LIT_DYNAMIC_SHARED(name, T);` (lit_gpu.h: a pointer
    to the launch's dynamic shared memory, on the same line), and the
    tile's constants and the program's launch are exported for the
    model."""
    text = LAUNCH.sub(r"LIT_LAUNCH(\1, \2)(", litlib.read_text(src))
    return DYNAMIC.sub(r"LIT_DYNAMIC_SHARED(\2, \1);", text) + APPENDIX


def stage_offset(binary):
    """Byte offset of matmulTilePiped's `stage` array in the shared-memory
    section (nm), or -1 when nm does not find it."""
    p = run(["nm", "-C", binary])   # lines "ADDRESS TYPE NAME"
    syms = {name: int(addr, 16) for addr, name in re.findall(
        r"^([0-9a-fA-F]+)[ \t]+\S+[ \t]+(\S.*)$", p.stdout, re.M)}
    stage = [a for name, a in syms.items()
             if name.startswith("matmulTilePiped(") and
             name.endswith("::stage")]
    if p.returncode or not stage or "__start_lit_shared" not in syms:
        return -1
    return stage[0] - syms["__start_lit_shared"]


def build(src, stages, out, obj, deep=False):
    """Compile src at `stages` and link it with the model: (binary, None),
    or (None, the compiler's messages)."""
    base = os.path.join(out, os.path.basename(src)[:-3] + f"-s{stages}")
    cc, binary = base + ".cc", base
    litlib.write_atomic(cc, host_source(src))
    tmp = f"{binary}.{os.getpid()}.tmp"
    p = run([*cxx(), "-std=c++17", "-O1", "-g", "-w", "-I", os.path.join(
        HERE, "include"), "-I", "build", f"-DSTAGES={stages}",
        *(["-DALLOW_DEEP_PIPELINE"] if deep else []), cc, obj, "-o", tmp])
    if p.returncode:
        return None, p.stdout + p.stderr
    os.replace(tmp, binary)
    return binary, None


def read_site(binary, trace):
    """The day74.nw lines of a failing read, innermost first, from the
    model's return addresses (addr2line -i: inlined calls included):
    " The read is at day74.nw:181, reached from day74.nw:1211 and
    day74.nw:1239.", or "" when addr2line finds none."""
    if not trace.split():   # addr2line with no address reads stdin
        return ""
    try:
        p = run(["addr2line", "-i", "-e", binary, *trace.split()])
    except FileNotFoundError:
        return ""
    lines = []
    for m in re.finditer(r"^(?:.*/)?(day74\.nw):(\d+)", p.stdout, re.M):
        if not lines or lines[-1] != m.group(0):
            lines.append(f"{m.group(1)}:{m.group(2)}")
    if not lines:
        return ""
    return " The read is at " + lines[0] + (", reached from " + " and ".join(
        lines[1:]) if len(lines) > 1 else "") + "."


def check(src, stages=None, sizes=(64, 128), who="the loop",
          out="build/model"):
    """Run src in the model at each depth; returns (status, lines): status
    0 passed, 1 failed; the lines say how (see the module docstring).
    stages: the depths to try (default: the exercise's, tools/manifest.toml)."""
    if stages is None:
        stages = manifest.load().depths.exercise
    try:
        obj = model_object(out)
    except RuntimeError as e:
        return 1, [f"{e}FAIL the model itself did not compile."]
    except FileNotFoundError:
        return 1, [f"FAIL no C++ compiler ({' '.join(cxx())}) for the CPU "
                   "model: install g++ (nvcc needs it too) or give CXX=..."]
    slices = ", ".join(str(s // 16) for s in sizes)
    with concurrent.futures.ThreadPoolExecutor(os.cpu_count() or 2) as pool:
        deepest = max(manifest.load().depths.exercise)
        built = list(pool.map(lambda s: build(src, s, out, obj,
                                              deep=s > deepest),
                              stages))
    flying = {}   # depth: the most K-slices one thread had in flight
    for s, (binary, err) in zip(stages, built):
        if not binary:
            return 1, [err.rstrip(), f"FAIL {who} does not compile as host "
                       f"C++ for the model at STAGES={s}: the messages above "
                       "name the lines of day74.nw."]
        try:
            p = run([binary, "--sizes", ",".join(map(str, sizes)),
                     "--stage-offset", str(stage_offset(binary))],
                    timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            return 1, [f"FAIL {who}, STAGES={s}: the model did not finish "
                       f"within {TIMEOUT} s (a loop that never ends, or a "
                       "thread that never reaches a primitive?)."]
        if p.returncode == 0 and p.stdout.startswith("PASS"):
            flying[s] = p.stdout.split()[-1]
            continue
        fields = p.stdout.rstrip("\n").split("\t")
        if len(fields) != 5 or fields[0] != "FAIL":
            return 1, [p.stdout + p.stderr + f"FAIL the model stopped at "
                       f"STAGES={s} (exit {p.returncode})."]
        when = "the launch" if fields[2] == "launch" else \
            f"{fields[2]} order"
        return 1, [f"FAIL {who}, STAGES={s}, N={fields[1]} "
                   f"({int(fields[1]) // 16} K-slices), {when}: "
                   f"{fields[3]}.{read_site(binary, fields[4])}"]
    depths = ','.join(map(str, stages))
    return 0, [f"PASS {who} keeps the copy rules (PTX ISA: cp.async, "
               f"commit_group, wait_group, bar.sync) in the CPU model at "
               f"STAGES={depths}, N = {', '.join(map(str, sizes))} "
               f"({slices} K-slices), in the {ORDERS} orders of one block's "
               "threads."] + [
        f"NOTE {who} is correct but ignores the depth: at STAGES={depths} "
        f"alike a thread had at most {flying[stages[0]]} K-slices in flight, "
        "so the extra stages sit unused (a deeper pipeline fetches further "
        "ahead: slice k + kStages - 1)."] * (
            len(stages) > 1 and len(set(flying.values())) == 1)


def main(argv):
    """The command line of the docstring; returns the exit status."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("src")
    ap.add_argument("--stages", default=",".join(
        map(str, manifest.load().depths.exercise)))
    ap.add_argument("--sizes", default="64,128")
    ap.add_argument("--who", default="the loop")
    ap.add_argument("--out", default="build/model")
    a = ap.parse_args(argv)
    try:
        stages = [int(x) for x in a.stages.split(",")]
        sizes = [int(x) for x in a.sizes.split(",")]
    except ValueError:
        ap.error("--stages and --sizes take numbers separated by commas")
    if not all(s >= 2 for s in stages) or not all(
            n > 0 and n % 64 == 0 for n in sizes):
        ap.error("stages are 2 or more; sizes are multiples of 64")
    if not os.path.isfile(a.src):
        ap.error(f"{a.src} is missing")
    status, lines = check(a.src, stages, sizes, a.who, a.out)
    print("\n".join(lines))
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
