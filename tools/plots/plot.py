"""plot: draw one of the page's plots from GPU evidence with gnuplot.

Usage: python3 -m tools.plots.plot SCRIPT.gp DATA.csv OUT.svg

Runs gnuplot (GNUPLOT, default gnuplot) on SCRIPT with in=DATA, out=OUT
and gpu=the card named in DATA's provenance header ("# gpu: ..."; for a
CSV without one, the first gpu-*-run-sm_80.csv beside it). When DATA does
not exist yet (no GPU evidence), writes a placeholder that says so and
warns, so the page still builds. Writes through a temporary file.
Exit: 0 drawn; 1 gnuplot failed; 2 usage.
"""

import glob
import os
import subprocess
import sys

from tools.lit import litlib

PLACEHOLDER = (
    '<svg xmlns="http://www.w3.org/2000/svg" width="720" height="120" '
    'viewBox="0 0 720 120"><title>Not yet measured</title><desc>No GPU '
    'evidence exists yet; run make evidence-gpu on a GPU of compute '
    'capability 8.0 or newer.</desc><rect width="720" height="120" '
    'fill="#f6f6f6" stroke="#bbbbbb"/><text x="360" y="65" '
    'font-family="sans-serif" font-size="16" text-anchor="middle" '
    'fill="#555555">Not yet measured: no GPU evidence (make evidence-gpu)'
    '</text></svg>\n')


def gpu_of(data):
    """The GPU name in data's header, or in a sibling run CSV's, or "?"."""
    for path in [data] + sorted(glob.glob(os.path.join(
            os.path.dirname(data), "gpu-*-run-sm_80.csv"))):
        gpu = litlib.read_stamp(litlib.read_text(path)).get("gpu")
        if gpu:
            return gpu
    return "?"


def main(argv):
    """Draw the plot; returns the exit status."""
    if len(argv) != 3:
        print(__doc__.splitlines()[2], file=sys.stderr)
        return 2
    script, data, out = argv
    if not os.path.exists(data):
        print(f"plot: warning: {data} does not exist (no GPU evidence yet); "
              f"{out} is a placeholder", file=sys.stderr)
        litlib.write_atomic(out, PLACEHOLDER)
        return 0
    tmp = out + ".tmp"
    os.makedirs(os.path.dirname(out) or ".", exist_ok=True)
    gnuplot = os.environ.get("GNUPLOT", "gnuplot")
    rc = subprocess.call([gnuplot, "-e", f"in='{data}'; out='{tmp}'; "
                          f"gpu='{gpu_of(data)}'", script])
    if rc:
        print(f"plot: {gnuplot} exited {rc}", file=sys.stderr)
        return 1
    os.replace(tmp, out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
