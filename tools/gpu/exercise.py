"""exercise: build the program at several pipeline depths and run each.

Usage (from the module's root, as make exercise runs it):
  python3 -m tools.gpu.exercise [--stages 2,3,4] [--size 2048]
      [--arch sm_80] [--out build/exercise] [--make make]

For every stage count S this builds build/<ARCH>-<S>stages/pipelined_gemm
(make, STAGES=S), runs it at one size N with --csv, and prints the table the
exercise asks for: piped/sync (median times, < 1 means the pipeline is
faster), the pipelined kernel's static shared memory per block in bytes and
its resident blocks per SM (occupancy API). The table also goes to
OUT/stages.csv (unrounded) and
OUT/stages.md (format: exercises/README.md).

Exit: 0 when every build and run passed; otherwise the first failing step's
status, after the remaining depths ran. A machine that cannot run the
program at all (exit 3, no GPU; 4, too old) stops the sweep at once with
that status. Needs a GPU of compute capability 8.0 or newer.
"""

import argparse
import os
import subprocess
import sys

from tools.lit import litlib

CANNOT_RUN = (3, 4)   # pipelined_gemm: no device; compute capability < 8.0
# stages.csv column -> (run CSV provenance key or row column, in the row?)
COLUMNS = {"piped_over_sync": ("piped_over_sync", True),
           "piped_smem_bytes": ("piped_static_smem_bytes", False),
           "piped_blocks_per_sm": ("piped_blocks_per_sm", False),
           "sync_blocks_per_sm": ("sync_blocks_per_sm", False),
           "piped_registers": ("piped_registers", False),
           "sync_ms": ("sync_ms_median", True),
           "piped_ms": ("piped_ms_median", True), "gpu": ("gpu", False)}
MD_HEAD = ("| stages | piped/sync | shared memory per block (B) | blocks/SM "
           "(piped) | blocks/SM (sync) | registers (piped) |\n"
           "|---:|---:|---:|---:|---:|---:|\n")


def sweep_one(a, s):
    """Build and run depth s; returns (row dict or None, exit status)."""
    binary = os.path.join("build", f"{a.arch}-{s}stages", "pipelined_gemm")
    print(f"== STAGES={s}: build and run {binary} --sizes {a.size}",
          flush=True)
    # The binary itself, not `make build`: build/pipelined_gemm keeps
    # pointing at the build the user made last.
    rc = subprocess.call([a.make, "--no-print-directory", binary,
                          f"STAGES={s}", f"ARCH={a.arch}"])
    if rc:
        print(f"exercise: the build with STAGES={s} failed (exit {rc})",
              file=sys.stderr)
        return None, rc
    path = os.path.join(a.out, f"stages-{s}.csv")
    rc = subprocess.call([binary, "--sizes", str(a.size), "--csv", path])
    if rc:
        print(f"exercise: the run with STAGES={s} failed (exit {rc})",
              file=sys.stderr)
        return None, rc
    try:
        meta, rows = litlib.read_stamped_csv(path)
        row = next(r for r in rows if r["n"] == a.size)
    except (OSError, ValueError, StopIteration) as e:
        print(f"exercise: {path}: {e or 'no row for N'}", file=sys.stderr)
        return None, 1
    return {"stages": s, **{c: row[k] if in_row else meta.get(k, "?")
                            for c, (k, in_row) in COLUMNS.items()}}, 0


def main(argv):
    """Run the sweep; returns the exit status."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--stages", default="2,3,4")
    p.add_argument("--size", type=int, default=2048)
    p.add_argument("--arch", default="sm_80")
    p.add_argument("--out", default="build/exercise")
    p.add_argument("--make", default=os.environ.get("MAKE", "make"))
    a = p.parse_args(argv)
    try:
        depths = [int(s) for s in a.stages.split(",")]
    except ValueError:
        p.error(f"--stages: {a.stages!r} is not a list of whole numbers")
    os.makedirs(a.out, exist_ok=True)
    rows, status = [], 0
    for s in depths:
        row, rc = sweep_one(a, s)
        if rc in CANNOT_RUN:
            print(f"exercise: stopping: this machine cannot run the exercise"
                  f" (exit {rc})", file=sys.stderr)
            return rc
        status = status or rc
        if row:
            rows.append(row)
    if not rows:
        return status
    litlib.write_atomic(os.path.join(a.out, "stages.csv"), ",".join(
        ["stages", *COLUMNS]) + "\n" + "".join(
        ",".join(str(r[c]) for c in ["stages", *COLUMNS]) + "\n" for r in rows))
    md = MD_HEAD + "".join(
        f"| {r['stages']} | {r['piped_over_sync']:.4f} | "
        f"{r['piped_smem_bytes']} | {r['piped_blocks_per_sm']} | "
        f"{r['sync_blocks_per_sm']} | "
        f"{r['piped_registers']} |\n" for r in rows)
    litlib.write_atomic(os.path.join(a.out, "stages.md"), md)
    print(f"\nN = {a.size}, {rows[0]['gpu']}, -arch={a.arch}\n{md}"
          f"(also in {a.out}/stages.csv and stages.md)")
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
