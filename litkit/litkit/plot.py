"""plot (litkit): a module's plots, drawn with matplotlib from the facts.

A module's PLOTTER (lit.mk runs python3 -m PLOTTER FACTS.json OUTDIR) ends
with sys.exit(litkit.plot.main(PLOTS, sys.argv[1:], needs, missing)):
PLOTS {NAME: (draw, wide height, narrow height)}, in units (points), each
draw(facts, ax, narrow) -> (title, header, rows): it draws on the
matplotlib axes ax from facts (Facts), and returns the title ("{}" gets
the fact needs' text) and the plotted values, a row per point (None: "?").
For each NAME main writes, atomically, OUTDIR/NAME.svg (wide: 720 units,
13-unit text, for a column of 39rem or more), OUTDIR/NAME-narrow.svg
(phones: 360 units) and OUTDIR/NAME.values.tsv (the values: a header
line, then a row per point), all drawn before any is written. Without
the fact needs, each drawing is a placeholder saying missing, with a
warning, and the values are empty, so the page still builds. Colours
follow the page's scheme: black is currentColor, any other #rrggbb
var(--plot-rrggbb, #rrggbb) (theme/style.css: dark twins). The output
depends on no user setting: matplotlib's own defaults (rcdefaults), its
SVG canvas without pyplot, a fresh MPLCONFIGDIR, ids from a fixed salt
per file, no date. Exit: 0 drawn; 1 a fact missing or not a number, or no
matplotlib; 2 usage.
"""

import io
import json
import os
import re
import sys
import tempfile

from litkit import litlib


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


def draw(name, make, facts, needs):
    """{file name: text} of NAME's wide and narrow drawings and values,
    make being (draw, wide height, narrow height)."""
    make, wide_h, narrow_h = make
    files = {}
    for narrow, width, height in ((False, 720, wide_h), (True, 360,
                                                         narrow_h)):
        fig = figure(width, height)
        ax = fig.add_subplot()
        ax.grid(axis="y", color="#dddddd")
        title, head, rows = make(facts, ax, narrow)
        ax.set_title(title.format(facts.get(needs, "")))
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


def placeholder(name, missing):
    """As draw, the drawings saying missing; the values are empty."""
    files = {name + ".values.tsv": ""}
    for end, width in ((".svg", 720), ("-narrow.svg", 360)):
        fig = figure(width, 120)
        fig.set_facecolor("#f6f6f6")
        fig.set_edgecolor("#bbbbbb")
        fig.set_linewidth(2)
        fig.text(0.5, 0.5, missing, ha="center", va="center",
                 color="#555555", linespacing=1.8)
        files[name + end] = svg(fig, name + end[:-4])
    return files


def main(plots, argv, needs, missing):
    """Write every plot's drawings and values (see the module docstring);
    returns the exit status."""
    if len(argv) != 2:
        print("usage: python3 -m PLOTTER FACTS.json OUTDIR", file=sys.stderr)
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
            for name, make in plots.items():
                files.update(draw(name, make, facts, needs) if needs in facts
                             else placeholder(name, missing))
            for name, text in files.items():   # all drawn: none half-done
                litlib.write_atomic(os.path.join(outdir, name), text)
        except OSError as e:   # names the file
            print(f"plot: {e}", file=sys.stderr)
            return 1
        except (KeyError, ValueError, TypeError) as e:
            print(f"plot: {path}: {e.args[0] if e.args else e}",
                  file=sys.stderr)
            return 1
    if needs not in facts:
        print(f"plot: warning: no fact {needs} in {path}; the plots in "
              f"{outdir} are placeholders", file=sys.stderr)
    return 0
