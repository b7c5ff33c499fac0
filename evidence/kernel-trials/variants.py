"""Writes the experiment's kernel-file variants into .exp/src (never
committed: two of them carry the seed's kernel text, read at build time
from .seed/pipelined_gemm.cu).

Part 1 (the lesson's pipelined kernel against the seed's), each a copy of
build/pipelined_gemm.cu with only matmulTilePiped replaced:
  pg_seed.cu      the seed's matmulTilePiped and its own computeTile
  pg_seed_lct.cu  the seed's matmulTilePiped calling the lesson's computeTile
  seed_rand.cu    the seed program with the lesson's random inputs
Part 2 (the wide pair against cuBLAS), copies of build/wide_gemm.cu:
  wide_kKsS[_rR].cu  K-slice K, S stages, register budget R (__maxnreg__)
"""
import re
import sys

seed = open(".seed/pipelined_gemm.cu").read()
lesson = open("build/pipelined_gemm.cu").read()


def function(text, head):
    """The text of the function starting at the line holding head, up to
    its closing brace at column 0."""
    start = text.index(head)
    start = text.rindex("\n", 0, start) + 1
    depth, i = 0, text.index("{", start)
    while True:
        depth += {"{": 1, "}": -1}.get(text[i], 0)
        i += 1
        if depth == 0:
            return start, i + 1


# the seed's kernel and inner product
s0, s1 = function(seed, "void matmulTilePiped(")
seed_piped = seed[s0:s1]
c0, c1 = function(seed, "void computeTile(")
seed_ct = seed[c0:c1].replace("computeTile", "seedComputeTile")
# the lesson's kernel, from its signature to the closing brace
l0 = lesson.index("__global__ void __launch_bounds__(kThreads)\nmatmulTilePiped")
l1 = function(lesson, "matmulTilePiped(const float* __restrict__ a")[1]
out = ".exp/src/"
open(out + "pg_seed_lct.cu", "w").write(
    lesson[:l0] + seed_piped.replace("__global__ void", "__global__ void")
    + lesson[l1:])
open(out + "pg_seed.cu", "w").write(
    lesson[:l0] + seed_ct + "\n" + seed_piped.replace(
        "computeTile(", "seedComputeTile(") + lesson[l1:])
# the seed with the lesson's inputs (uniform in (0, 1], splitmix64, seed 74)
rand = """{
            unsigned long long st = 74;
            auto next = [&st] {
                unsigned long long z = (st += 0x9E3779B97F4A7C15ull);
                z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
                z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
                z ^= z >> 31;
                return (float)((z >> 40) + 1) * (1.0f / 16777216.0f);
            };
            for (size_t i = 0; i < elems; ++i) h_a[i] = next();
            for (size_t i = 0; i < elems; ++i) h_b[i] = next();
        }"""
pat = re.compile(r"for \(size_t i = 0; i < elems; \+\+i\) \{\n\s*h_a\[i\].*?\n"
                 r"\s*h_b\[i\].*?\n\s*\}", re.S)
assert pat.search(seed), "seed inputs not found"
open(out + "seed_rand.cu", "w").write(pat.sub(rand, seed, count=1))

wide = open("build/wide_gemm.cu").read()
for k, s, r in ((16, 2, 0), (8, 4, 0), (8, 3, 0), (16, 3, 0), (8, 2, 0),
                (8, 4, 232), (16, 2, 232), (16, 2, 200)):
    w = wide.replace("constexpr int kWideK = 16;", f"constexpr int kWideK = {k};")
    w = w.replace("constexpr int kStages = 2;", f"constexpr int kStages = {s};")
    assert w.count("__launch_bounds__(kWideThreads, 1)") == 2
    w = w.replace("static_assert(kStages == 2,", "static_assert(kStages >= 2,")
    if r:
        w = w.replace("__launch_bounds__(kWideThreads, 1)\nmatmulWidePiped",
                      f"__maxnreg__({r})\n"
                      "matmulWidePiped")
    name = f"wide_k{k}s{s}" + (f"_r{r}" if r else "")
    open(out + name + ".cu", "w").write(w)
    print(name)
