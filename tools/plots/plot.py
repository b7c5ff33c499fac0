"""plot: the page's plots, drawn with matplotlib from the gathered facts.

Usage: python3 -m tools.plots.plot FACTS.json OUTDIR

For NAME in gflops, residency and stages writes, each atomically,
OUTDIR/NAME.svg (wide: 720 units, 13-unit text, for a column of 39rem or
more), OUTDIR/NAME-narrow.svg (phones: 360 units) and OUTDIR/NAME.values.tsv
(the plotted numbers: a header line, then a row per point, "?" where a
kernel did not run). Every number is a fact of FACTS.json (litkit/
gather.py) as the page prints it; nothing here computes one. Without GPU
facts (gpu.name) each drawing is a placeholder, with a warning, so the page
still builds. Colours follow the page's scheme: black is currentColor, any
other #rrggbb var(--plot-rrggbb, #rrggbb) (litkit/theme/style.css: dark twins).
The output depends on no user setting: matplotlib's own defaults
(rcdefaults), its SVG canvas without pyplot, a fresh MPLCONFIGDIR, ids from
a fixed salt per file, no date. Exit: 0 drawn; 1 a fact missing or not a
number, or no matplotlib; 2 usage.
"""

import io
import json
import math
import os
import re
import sys
import tempfile

from tools import manifest
from litkit import litlib

BLUE, ORANGE, GREY = "#1b6ac9", "#d9541e", "#888888"
STATIC_SMEM_KIB = 48   # CUDA's limit on static shared memory per block


class Facts(dict):
    """{name: text} of FACTS.json; fact(name) is its number (float)."""

    def fact(self, name):
        if name not in self:
            raise KeyError(f"no fact {name}")
        text = self[name]
        try:
            return float(str(text).replace(",", "").removesuffix("%"))
        except ValueError:
            raise ValueError(f"fact {name} is not a number: {text!r}")

    def keys_like(self, pattern):
        """The first group of each fact name pattern matches, sorted."""
        found = {m.group(1) for k in self for m in [re.fullmatch(pattern, k)]
                 if m}
        if not found:
            raise KeyError(f"no fact like {pattern}")
        return sorted(found, key=lambda k: (not k.isdigit(), k.zfill(9)))


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


def svg(fig, salt):
    """fig as SVG text in the page's colours, its ids unique to salt."""
    import matplotlib
    for i, artist in enumerate(fig.findobj()):
        artist.set_gid(f"{salt}-{i}")
    out = io.StringIO()
    with matplotlib.rc_context({"svg.hashsalt": salt}):
        fig.savefig(out, format="svg", metadata={
            k: None for k in ("Date", "Creator", "Format", "Type")})
    text = re.sub(r"(?<=: )#([0-9a-f]{6})\b", lambda m: "currentColor" if
                  m.group(1) == "000000" else f"var(--plot-{m.group(1)}, "
                  f"#{m.group(1)})", out.getvalue())
    # HTML takes no <style> in an inline SVG (the page's CSS sets round
    # joins) nor a size in pt (the page's CSS sizes it by its viewBox).
    return re.sub(r' width="[\d.]+pt" height="[\d.]+pt"|\s*<defs>\s*'
                  r'<style .*?</style>\s*</defs>', "", text, count=2,
                  flags=re.S)


def figure(width, height):
    """An empty figure of width x height units (points) on the SVG canvas."""
    from matplotlib.backends.backend_svg import FigureCanvasSVG
    from matplotlib.figure import Figure
    fig = Figure(figsize=(width / 72, height / 72), dpi=72,
                 layout="constrained")
    FigureCanvasSVG(fig)
    return fig


def draw(name, facts):
    """{file name: text} of NAME's wide and narrow drawings and values."""
    make, wide_h, narrow_h = PLOTS[name]
    files = {}
    for narrow, width, height in ((False, 720, wide_h), (True, 360,
                                                         narrow_h)):
        fig = figure(width, height)
        ax = fig.add_subplot()
        ax.grid(axis="y", color="#dddddd")
        title, head, rows = make(facts, ax, narrow)
        ax.set_title(title.format(facts["gpu.name"]))
        handles, labels = (sum(x, []) for x in zip(*(
            a.get_legend_handles_labels() for a in fig.axes)))
        fig.axes[-1].legend(handles, labels, **(
            dict(loc="upper center", bbox_to_anchor=(0.5, -0.2),
                 frameon=False) if narrow else dict(loc="lower right")))
        end = "-narrow.svg" if narrow else ".svg"
        files[name + end] = svg(fig, name + end[:-4])
    files[name + ".values.tsv"] = "".join(
        "\t".join("?" if c is None else f"{c:.12g}" if isinstance(c, float)
                  else str(c) for c in line) + "\n" for line in [head] + rows)
    return files


def placeholder(name, facts):
    """As draw, saying that nothing was measured; the values are empty."""
    files = {name + ".values.tsv": ""}
    for end, width in ((".svg", 720), ("-narrow.svg", 360)):
        fig = figure(width, 120)
        fig.set_facecolor("#f6f6f6")
        fig.set_edgecolor("#bbbbbb")
        fig.set_linewidth(2)
        fig.text(0.5, 0.5, "Not yet measured: no GPU evidence\n"
                 "(make evidence-gpu)", ha="center", va="center",
                 color="#555555", linespacing=1.8)
        files[name + end] = svg(fig, name + end[:-4])
    return files


def main(argv):
    """Write every plot's drawings and values; returns the exit status."""
    if len(argv) != 2:
        print(__doc__.splitlines()[2], file=sys.stderr)
        return 2
    path, outdir = argv
    with tempfile.TemporaryDirectory() as config:
        os.environ["MPLCONFIGDIR"] = config   # no user matplotlibrc or cache
        try:
            import matplotlib
        except ImportError as e:
            print(f"plot: {e}: apt-get install --no-install-recommends "
                  "python3-matplotlib", file=sys.stderr)
            return 1
        matplotlib.rcdefaults()
        matplotlib.rcParams.update({
            "font.family": "DejaVu Sans", "font.size": 13,
            "axes.titlesize": 13,
            "svg.fonttype": "none", "figure.facecolor": "none",
            "axes.facecolor": "none", "legend.facecolor": "white",
            "legend.framealpha": 1})
        try:
            facts = Facts((k, v["text"]) for k, v in json.loads(
                litlib.read_text(path))["facts"].items())
            files = {}
            for name in PLOTS:
                files.update((draw if "gpu.name" in facts else placeholder)(
                    name, facts))
            for name, text in files.items():   # all drawn: none half-done
                litlib.write_atomic(os.path.join(outdir, name), text)
        except OSError as e:   # names the file
            print(f"plot: {e}", file=sys.stderr)
            return 1
        except (KeyError, ValueError, TypeError) as e:
            print(f"plot: {path}: {e.args[0] if e.args else e}",
                  file=sys.stderr)
            return 1
    if "gpu.name" not in facts:
        print(f"plot: warning: no GPU facts in {path}; the plots in "
              f"{outdir} are placeholders (make evidence-gpu)",
              file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
