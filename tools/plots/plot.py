"""plot: draw one of the page's plots from GPU evidence with gnuplot.

Usage: python3 -m tools.plots.plot SCRIPT.gp DATA.csv OUT.svg

Runs gnuplot (GNUPLOT) on SCRIPT with in=DATA, out=OUT and gpu=the card in
DATA's provenance header ("# gpu: ...") or a sibling run CSV's. Without
DATA (no GPU evidence yet) it draws a placeholder saying so, with a
warning, so the page still builds. Writes through a temporary file.
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


def main(argv):
    """Draw the plot; returns the exit status."""
    if len(argv) != 3:
        print(__doc__.splitlines()[2], file=sys.stderr)
        return 2
    script, data, out = argv
    if not os.path.exists(data):
        print(f"plot: warning: no {data} (no GPU evidence yet); {out} is a "
              "placeholder", file=sys.stderr)
        litlib.write_atomic(out, PLACEHOLDER)
        return 0
    gpu = next((g for p in [data] + sorted(glob.glob(os.path.join(
        os.path.dirname(data), "gpu-*-run-sm_80.csv")))
        for g in [litlib.read_stamp(litlib.read_text(p)).get("gpu")] if g),
        "?")
    os.makedirs(os.path.dirname(out) or ".", exist_ok=True)
    rc = subprocess.call([os.environ.get("GNUPLOT", "gnuplot"), "-e",
                          f"in='{data}'; out='{out}.tmp'; gpu='{gpu}'",
                          script])
    if rc:
        print(f"plot: gnuplot exited {rc}", file=sys.stderr)
        return 1
    os.replace(out + ".tmp", out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
