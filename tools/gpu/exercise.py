"""exercise: build the program at several pipeline depths and run each.

Usage: python3 -m tools.gpu.exercise [--stages S,S...] [--size 2048]
           [--arch sm_80] [--out build/exercise] [--make make]

Per stage count S (default: tools/manifest.toml's depths.exercise): builds
build/<ARCH>-<S>stages/pipelined_gemm (not build/pipelined_gemm, which
keeps the user's last build), runs it at N with --csv and prints the
exercise's table: piped/sync (< 1: the pipeline is faster), the piped
kernel's static shared memory per block (bytes) and
resident blocks per SM, also into OUT/stages.csv (unrounded) and
OUT/stages.md (exercises/README.md's format). Needs a GPU of CC >= 8.0.
Exit: 0; else the first failing step's status, after the other depths; 3
or 4 at once when the program cannot run here (no GPU, too old).
"""

import argparse
import os
import subprocess
import sys

from tools import manifest
from litkit import litlib

CANNOT_RUN = (3, 4)
# stages.csv column: (run CSV column, or provenance key when meta is true)
COLUMNS = {"piped_over_sync": ("piped_over_sync", False),
           "piped_smem_bytes": ("basic_piped_static_smem_bytes", True),
           "piped_blocks_per_sm": ("basic_piped_blocks_per_sm", True),
           "sync_blocks_per_sm": ("basic_sync_blocks_per_sm", True),
           "piped_registers": ("basic_piped_registers", True),
           "sync_ms": ("sync_ms_median", False),
           "piped_ms": ("piped_ms_median", False), "gpu": ("gpu", True)}
MD = ("| stages | piped/sync | shared memory per block (B) | blocks/SM "
      "(piped) | blocks/SM (sync) | registers (piped) |\n"
      "|---:|---:|---:|---:|---:|---:|\n")


def sweep_one(a, s):
    """Build and run depth s: (row of stages.csv or None, exit status)."""
    binary = os.path.join("build", f"{a.arch}-{s}stages", "pipelined_gemm")
    path = os.path.join(a.out, f"stages-{s}.csv")
    print(f"== STAGES={s}: {binary} --sizes {a.size}", flush=True)
    for what, cmd in (("build", [a.make, "--no-print-directory", binary,
                                 f"STAGES={s}", f"ARCH={a.arch}"]),
                      ("run", [binary, "--sizes", str(a.size), "--csv",
                               path])):
        rc = subprocess.call(cmd)
        if rc:
            print(f"exercise: the {what} with STAGES={s} failed (exit {rc})",
                  file=sys.stderr)
            return None, rc
    try:
        meta, rows = litlib.read_stamped_csv(path)
        row = next(r for r in rows if r["n"] == a.size and
                   r["pair"] == "basic")
    except (OSError, ValueError, StopIteration) as e:
        print(f"exercise: {path}: {e or 'no row for N'}", file=sys.stderr)
        return None, 1
    return {"stages": s, **{c: meta.get(k, "?") if in_meta else row[k]
                            for c, (k, in_meta) in COLUMNS.items()}}, 0


def main(argv):
    """Run the sweep; returns the exit status."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    try:
        depths = manifest.load().depths.exercise
    except manifest.ManifestError as e:
        p.error(str(e))
    p.add_argument("--stages", default=",".join(map(str, depths)))
    p.add_argument("--size", type=int, default=2048)
    p.add_argument("--arch", default="sm_80")
    p.add_argument("--out", default="build/exercise")
    p.add_argument("--make", default=os.environ.get("MAKE", "make"))
    a = p.parse_args(argv)
    if not all(x.isdigit() for x in a.stages.split(",")):
        p.error(f"--stages: {a.stages!r} is not a list of whole numbers")
    os.makedirs(a.out, exist_ok=True)
    rows, status = [], 0
    for s in map(int, a.stages.split(",")):
        row, rc = sweep_one(a, s)
        if rc in CANNOT_RUN:
            print(f"exercise: stopping: this machine cannot run the "
                  f"exercise (exit {rc})", file=sys.stderr)
            return rc
        status = status or rc
        rows += [row] if row else []
    if not rows:
        return status
    cols = ["stages", *COLUMNS]
    litlib.write_atomic(os.path.join(a.out, "stages.csv"), "".join(
        ",".join(str(r[c]) for c in cols) + "\n"
        for r in [dict(zip(cols, cols))] + rows))
    md = MD + "".join("| %(stages)s | %(piped_over_sync).4f | "
                      "%(piped_smem_bytes)s | %(piped_blocks_per_sm)s | "
                      "%(sync_blocks_per_sm)s | %(piped_registers)s |\n" % r
                      for r in rows)
    litlib.write_atomic(os.path.join(a.out, "stages.md"), md)
    print(f"\nN = {a.size}, {rows[0]['gpu']}, -arch={a.arch}\n{md}"
          f"(also in {a.out}/stages.csv and stages.md)")
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
