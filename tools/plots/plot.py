"""plot: Day 74's plots, drawn with matplotlib (litkit.plot) from the facts.

Usage: python3 -m tools.plots.plot FACTS.json OUTDIR

gflops, residency and stages: each drawing, and its values, from the facts
of FACTS.json as the page prints them; nothing here computes one. Without
GPU facts (gpu.name) each drawing is a placeholder, with a warning, so the
page still builds. Files, colours, settings and exit status: litkit/plot.py.
"""

import math
import sys

from tools import manifest
from litkit import plot

BLUE, ORANGE, GREY = "#1b6ac9", "#d9541e", "#888888"
STATIC_SMEM_KIB = 48   # CUDA's limit on static shared memory per block


def gflops(f, ax, narrow):
    """GFLOP/s against N: the lesson's pair (sm_80 build), the blocked pair
    and cuBLAS (from the lesson's run, else the blocked pair's)."""
    sizes = f.keys_like(r"(?:run\.sm_80|blocked)\.(\d+)\.piped_gflops")
    x = [int(n) for n in sizes]
    series = [("cuBLAS SGEMM (FP32)", "#555555", "^", ("run.sm_80",
                                                       "blocked"), "cublas"),
              ("matmulBlockedPiped", BLUE, "o", ("blocked",), "piped"),
              ("matmulBlockedSync", "#7a4fb0", "s", ("blocked",), "sync"),
              ("matmulTilePiped", "#1d8a5a", "D", ("run.sm_80",), "piped"),
              ("matmulTileSync", ORANGE, "v", ("run.sm_80",), "sync")]
    cols = []
    for label, colour, marker, sources, kind in series:
        ys = [next((f.fact(f"{s}.{n}.{kind}_gflops") for s in sources
                    if f"{s}.{n}.{kind}_gflops" in f), None) for n in sizes]
        ax.plot(x, [math.nan if y is None else y / 1e3 for y in ys],
                color=colour, marker=marker, markersize=8, linewidth=2,
                label=label.replace(")", ", pedantic)"))
        cols.append(ys)
    ax.set_xscale("log", base=2)
    ax.set_xticks(x, sizes)
    ax.minorticks_off()
    ax.set_ylim(bottom=0)
    ax.set_xlabel("matrix size N" if narrow else
                  "matrix size N (N × N × N product)")
    ax.set_ylabel("TFLOP/s (median)" if narrow else
                  "TFLOP/s (median of the timed launches)")
    title = ("FP32 GEMM, {}" if narrow else
             "FP32 GEMM on {}, -arch=sm_80 build")
    head = ["N"] + [s[0] for s in reversed(series)]
    return title, head, [[n, *row[::-1]] for n, row in zip(sizes,
                                                            zip(*cols))]


def gain(f, ax, x, base, **style):
    """The gain facts base.{gain,gain_min,gain_max} (time the pipeline
    saves, percent of the synchronous kernel's time: derive.gain) at each x
    with the range as error bars; the row of values."""
    got = [[f.fact(f"{b}.{k}") for k in ("gain", "gain_min", "gain_max")]
           for b in base]
    mid, lo, hi = zip(*got)
    ax.errorbar(x, mid, yerr=[[m - l for m, l in zip(mid, lo)],
                              [h - m for m, h in zip(mid, hi)]],
                linewidth=2, markersize=8, capsize=4, **style)
    return got


def residency(f, ax, narrow):
    """The gain against resident blocks per SM for cuda::pipeline
    (residency.*) and the thread-scope loop (the manifest's group of the
    exercise's solution) at N = 2048 and 4096: the median over the
    processes, with their range."""
    loop = next(g.name for g in manifest.load().groups
                if g.kernel == "exercises/solution")
    settings = sorted(f.keys_like(loop + r"\.(\w+)\.2048\.gain"),
                      key=lambda s: f.fact(f"residency.{s}.blocks_per_sm"))
    x = [f.fact(f"residency.{s}.blocks_per_sm") for s in settings]
    head, rows = ["blocks per SM"], [[int(v)] for v in x]
    for n, colour, marker in ((2048, BLUE, "o"), (4096, ORANGE, "s")):
        for stem, name, dash, face in (("residency", "cuda::pipeline", "-",
                                        colour), (loop, "thread-scope",
                                                  "--", "none")):
            got = gain(f, ax, x, [f"{stem}.{s}.{n}" for s in settings],
                        color=colour, linestyle=dash, marker=marker,
                        markerfacecolor=face, label=f"{name}, N = {n}")
            head += [f"{w} {name} N={n}" for w in ("gain %", "min",
                                                   "max")]
            rows = [r + g for r, g in zip(rows, got)]
    ax.axhline(0, color=GREY, linestyle=":", linewidth=1)
    ax.set_xticks(x, [f"{v:g}" + (" (natural)" if s == "natural" else "")
                      for v, s in zip(x, settings)])
    ax.set_xlim(0.5, max(x) + 0.5)
    ax.set_ylim(-5, 50)
    ax.yaxis.set_major_formatter("{x:.0f}")
    ax.set_xlabel("resident blocks per SM" if narrow else
                  "resident blocks per SM (--blocks-per-sm; the last is "
                  "natural)")
    ax.set_ylabel("gain (%)" if narrow else
                  "time saved by the pipeline, % (median)")
    title = ("Residency, {}" if narrow else
             "The pipeline's gain against residency, {}")
    return title, head, rows


def stages(f, ax, narrow):
    """The gain at N = 2048 (percent; median over the processes, with their
    range)
    and the shared memory per block against the pipeline depth."""
    depths = f.keys_like(r"stages\.(\d+)\.2048\.gain")
    x = [int(d) for d in depths]
    got = gain(f, ax, x, [f"stages.{d}.2048" for d in depths], color=BLUE,
               marker="o", label="gain")
    smem = [f.fact(f"exercise.stages{d}.smem") for d in depths]
    ax.axhline(0, color=GREY, linestyle=":", linewidth=1)
    ax.set_xticks(x)
    ax.set_xlim(x[0] - 0.5, x[-1] + 0.5)
    ax.set_ylim(-5, 15)
    ax.yaxis.set_major_formatter("{x:.0f}")
    ax2 = ax.twinx()
    ax2.plot(x, [b / 1024 for b in smem], color=ORANGE, marker="s",
             markersize=8, linewidth=2, label="shared memory per block")
    ax2.axhline(STATIC_SMEM_KIB, color="#aa0000", linestyle=":")
    ax2.text(x[0] - 0.4, STATIC_SMEM_KIB + 1, f"{STATIC_SMEM_KIB} KiB static "
             "limit", color="#aa0000")
    ax2.set_ylim(0, 60)
    ax2.set_ylabel("shared memory per block (KiB)" if narrow else
                   "static shared memory per block (KiB)")
    ax.set_xlabel("pipeline stages, N = 2048" if narrow else
                  "pipeline stages (STAGES), N = 2048")
    ax.set_ylabel("gain (%)" if narrow else
                  "time saved by the pipeline, % (median)")
    head = ["stages", "gain % at N=2048", "min", "max",
            "shared memory per block (B)"]
    return ("Pipeline depth, {}" if narrow else "Pipeline depth on {}",
            head, [[d] + g + [s] for d, g, s in zip(x, got, smem)])


PLOTS = {"gflops": (gflops, 440, 500), "residency": (residency, 420, 440),
         "stages": (stages, 420, 440)}


if __name__ == "__main__":
    sys.exit(plot.main(PLOTS, sys.argv[1:], "gpu.name", "Not yet measured: "
                       "no GPU evidence\n(make evidence-gpu)"))
