"""plot: draw one of the page's plots from GPU evidence with gnuplot.

Usage: python3 -m tools.plots.plot NAME EVIDENCE_PREFIX OUTDIR

NAME is gflops, residency or stages; EVIDENCE_PREFIX is the GPU's
evidence prefix (evidence/gpu-h200). Writes, each through a temporary file,
OUTDIR/NAME.values.tsv (the plotted numbers: a header line of labels, then
a row per point; the page shows them as the plot's text alternative) and,
drawn from it by gnuplot with tools/plots/NAME.gp and restyled for the page
by svg_for_page, OUTDIR/NAME.svg (wide, laptops) and NAME-narrow.svg (phones).
Without the evidence (no GPU run yet) both drawings are placeholders that
say so, with a warning, so the page still builds. Values are as measured;
nothing here rounds a number the page prints.
Exit: 0 drawn; 1 gnuplot failed or the evidence is malformed; 2 usage.
"""

import glob
import os
import statistics
import subprocess
import sys
import tempfile

from tools.gpu import gpu_facts
from tools.lit import litlib
from tools.plots import svg_for_page

HERE = os.path.dirname(os.path.abspath(__file__))


def rows(path, pair="basic"):
    """{n: row} of pair's rows in the stamped CSV at path."""
    return {r["n"]: r for r in litlib.read_stamped_csv(path)[1]
            if r.get("pair", pair) == pair}


def gflops_table(pre):
    """GFLOP/s against N: both pairs and cuBLAS (row-major A, from the
    lesson's run; column-major A, from the blocked pair's run, where the
    lesson's pair did not run)."""
    basic = rows(f"{pre}-run-sm_80.csv")
    blocked = rows(f"{pre}-blocked.csv", "blocked")
    head = ["N", "matmulTileSync", "matmulTilePiped", "matmulBlockedSync",
            "matmulBlockedPiped", "cuBLAS SGEMM (FP32)"]
    out = []
    for n in sorted(set(basic) | set(blocked)):
        b, k = basic.get(n), blocked.get(n)
        out.append([n] + [r[c] if r else "?" for r, c in (
            (b, "sync_gflops"), (b, "piped_gflops"), (k, "sync_gflops"),
            (k, "piped_gflops"))] + [(b or k)["cublas_gflops"]])
    return head, out


def over_processes(pattern, n):
    """(median, min, max) of piped/sync at n over the CSVs matching pattern
    (one per process, read by gpu_facts), and the first one's metadata."""
    paths = sorted(glob.glob(pattern))
    if not paths:   # no evidence yet: main draws a placeholder
        raise FileNotFoundError(f"{pattern}: no CSV")
    r = gpu_facts.repeated(paths, n, "piped_over_sync", pattern)
    return (statistics.median(r), min(r), max(r)), \
        litlib.read_stamped_csv(paths[0])[0]


def residency_table(pre):
    """piped/sync against resident blocks per SM (1, 2, natural) at
    N = 2048 and 4096, for cuda::pipeline (residency-*) and the
    thread-scope loop (mechanism-*): median over processes, min, max."""
    series = [(m, n) for n in (2048, 4096) for m in ("residency",
                                                      "mechanism")]
    head = ["blocks per SM"] + [
        f"{w} {'cuda::pipeline' if m == 'residency' else 'thread-scope'} "
        f"N={n}" for m, n in series for w in ("piped/sync", "min", "max")]
    out = []
    for setting in ("1", "2", "natural"):
        line = []
        for m, n in series:
            stats, meta = over_processes(f"{pre}-{m}-{setting}-*.csv", n)
            line += stats
        out.append([int(meta["basic_piped_blocks_per_sm"])] + line)
    return head, out


def stages_table(pre):
    """piped/sync at N = 2048 (median over processes, min, max) and the
    shared memory per block against the depth."""
    smem = {r["stages"]: r["piped_smem_bytes"] for r in
            litlib.read_stamped_csv(f"{pre}-exercise.csv")[1]}
    head = ["stages", "piped/sync at N=2048", "min", "max",
            "shared memory per block (B)"]
    return head, [[d, *over_processes(f"{pre}-stages-{d}-*.csv", 2048)[0],
                   smem[d]] for d in sorted(smem)]


TABLES = {"gflops": gflops_table, "residency": residency_table,
          "stages": stages_table}

PLACEHOLDER = (
    '<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="120" '
    'viewBox="0 0 {w} 120"><rect width="{w}" height="120" fill="#f6f6f6" '
    'stroke="#bbbbbb"/><text x="{x}" y="55" font-family="sans-serif" '
    'font-size="14" text-anchor="middle" fill="#555555">Not yet measured: '
    'no GPU evidence</text><text x="{x}" y="80" font-family="sans-serif" '
    'font-size="14" text-anchor="middle" fill="#555555">(make '
    'evidence-gpu)</text></svg>\n')


def draw(name, values, gpu, out, narrow):
    """Run gnuplot for one drawing, then restyle it; raises on failure."""
    fd, raw = tempfile.mkstemp(dir=os.path.dirname(out) or ".",
                               prefix=".tmp-", suffix=".svg")   # 2 makes

    os.close(fd)
    # -d: no ~/.gnuplot (set decimalsign, set grid...); neither GNUPLOT_LIB
    # nor GNUTERM, nor the user's locale, reaches the drawing.
    cmd = [os.environ.get("GNUPLOT", "gnuplot"), "-d", "-e",
           f"in='{values}'; out='{raw}'; gpu='{gpu}'; narrow={narrow}",
           os.path.join(HERE, name + ".gp")]
    env = {k: v for k, v in os.environ.items() if not k.startswith(
        ("GNUPLOT", "GNUTERM", "LC_", "LANG"))}
    try:
        subprocess.run(cmd, check=True, env={**env, "LC_ALL": "C"})
        if svg_for_page.main(["svg_for_page", os.path.basename(
                out)[:-4], raw, out]) != 0:
            raise RuntimeError(f"svg_for_page failed on {raw}")
    finally:
        if os.path.exists(raw):
            os.remove(raw)


def main(argv):
    """Write NAME's numbers and drawings; returns the exit status."""
    if len(argv) != 3 or argv[0] not in TABLES:
        print(__doc__.splitlines()[2], file=sys.stderr)
        return 2
    name, pre, outdir = argv
    wide, narrow, values = (os.path.join(outdir, name + end) for end in (
        ".svg", "-narrow.svg", ".values.tsv"))
    try:
        head, table = TABLES[name](pre)
        meta = litlib.read_stamp(litlib.read_text(f"{pre}-run-sm_80.csv"))
    except OSError as e:
        print(f"plot: warning: {e} (no GPU evidence yet); {wide} is a "
              "placeholder", file=sys.stderr)
        for path, w in ((wide, 720), (narrow, 360)):
            litlib.write_atomic(path, PLACEHOLDER.format(w=w, x=w // 2))
        litlib.write_atomic(values, "")
        return 0
    except (KeyError, ValueError, gpu_facts.EvidenceError) as e:
        print(f"plot: {pre}: {e}", file=sys.stderr)
        return 1
    litlib.write_atomic(values, "".join(
        "\t".join(str(c) for c in line) + "\n" for line in [head] + table))
    try:
        for path, is_narrow in ((wide, 0), (narrow, 1)):
            draw(name, values, meta.get("gpu", "?"), path, is_narrow)
    except (OSError, RuntimeError, subprocess.CalledProcessError) as e:
        print(f"plot: {name}: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
