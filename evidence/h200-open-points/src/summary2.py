#!/usr/bin/env python3
"""Summary of a kit run (issue 22): reads the result folder given as argv[1].

A: A_times_p*.csv (one per process) -> per variant and size the median,
   min and max over processes of the per-process median ms and of
   pct_cublas_best; cuBLAS default vs pedantic; check failures.
B: B_ncu_w*.txt (ncu --csv --page raw lines) -> wavefronts per shared load
   instruction and bank conflicts per instruction, per (width, pattern),
   beside the pattern table the program printed.
C: C_details.csv (ncu --csv --page details) -> a few metrics per kernel.
Writes summary.txt into the folder and prints it. Never raises on missing
or partial files: says what is missing instead.
"""
import csv
import glob
import io
import os
import re
import statistics
import sys


def read_csv_rows(path):
    """Rows (dicts) of a CSV file that may begin with '#' stamp lines."""
    with open(path, errors="replace") as f:
        lines = [ln for ln in f if not ln.startswith("#")]
    return list(csv.DictReader(io.StringIO("".join(lines))))


def quoted_csv(path):
    """Rows of the quoted CSV lines (ncu --csv) inside a transcript."""
    with open(path, errors="replace") as f:
        lines = [ln for ln in f if ln.startswith('"')]
    return list(csv.DictReader(io.StringIO("".join(lines))))


def num(s):
    try:
        return float(str(s).replace(",", ""))
    except ValueError:
        return float("nan")


def part_a(out, res):
    files = sorted(glob.glob(os.path.join(res, "A_times_p*.csv")))
    if not files:
        out.append("A: no A_times_p*.csv (step failed or skipped)")
        return None
    by = {}
    for path in files:
        try:
            for r in read_csv_rows(path):
                key = (int(r["n"]), r["variant"])
                by.setdefault(key, []).append(r)
        except (OSError, KeyError, ValueError) as e:
            out.append(f"A: cannot read {path}: {e}")
    out.append(f"A: {len(files)} processes: "
               + " ".join(os.path.basename(f) for f in files))
    out.append(f"{'n':>5} {'variant':34} {'procs':>5} {'ms med':>8} "
               f"{'GF/s':>8} {'%best med':>9} {'min':>7} {'max':>7} "
               f"{'%def':>7} {'%ped':>7} {'%peak':>6}")
    best = None
    for (n, var) in sorted(by):
        rs = by[(n, var)]
        ms = [num(r["median_ms"]) for r in rs]
        pb = [num(r["pct_cublas_best"]) for r in rs]
        pd = [num(r["pct_cublas_default"]) for r in rs]
        pp = [num(r["pct_cublas_pedantic"]) for r in rs]
        pk = [num(r["pct_peak"]) for r in rs]
        gf = [num(r["gflops"]) for r in rs]
        out.append(
            f"{n:5d} {var:34} {len(rs):5d} {statistics.median(ms):8.4f} "
            f"{statistics.median(gf):8.1f} {statistics.median(pb):9.2f} "
            f"{min(pb):7.2f} {max(pb):7.2f} {statistics.median(pd):7.2f} "
            f"{statistics.median(pp):7.2f} {statistics.median(pk):6.2f}")
        if n == 4096 and var.endswith(".piped"):
            m = statistics.median(pb)
            if best is None or m > best[1]:
                best = (var, m, min(pb), max(pb))
    for n in sorted({k[0] for k in by}):
        d = by.get((n, "cublas_default"), [])
        p = by.get((n, "cublas_pedantic"), [])
        if d and p:
            md = [num(r["median_ms"]) for r in d]
            mp = [num(r["median_ms"]) for r in p]
            out.append(f"A: n={n} cuBLAS default ms {min(md):.4f}.."
                       f"{max(md):.4f}, pedantic {min(mp):.4f}.."
                       f"{max(mp):.4f} (faster by median: "
                       f"{'default' if statistics.median(md) <= statistics.median(mp) else 'pedantic'})")
    if best:
        out.append(f"A: best piped at 4096: {best[0]} median {best[1]:.2f} "
                   f"% of the faster cuBLAS (processes {best[2]:.2f}.."
                   f"{best[3]:.2f}); beats cuBLAS in every process: "
                   f"{'YES' if best[2] >= 100 else 'no'}")
    fails = 0
    total = 0
    for path in sorted(glob.glob(os.path.join(res, "A_times_p*.csv.checks"))):
        for r in read_csv_rows(path):
            total += 1
            if r.get("verdict") != "pass":
                fails += 1
                out.append(f"A: CHECK FAIL {r}")
    out.append(f"A: checks {total - fails}/{total} pass")
    return best


def part_b(out, res):
    files = sorted(glob.glob(os.path.join(res, "B_ncu_w*.txt")))
    if not files:
        out.append("B: no B_ncu_w*.txt (step failed or skipped)")
        return
    names = {}
    for path in glob.glob(os.path.join(res, "B_patterns.txt")):
        with open(path, errors="replace") as f:
            for ln in f:
                p = ln.strip().split(",")
                if len(p) >= 10 and p[0].isdigit():
                    names[(int(p[1]), int(p[2]))] = p[3:]
    clock = {}
    for path in glob.glob(os.path.join(res, "B_clock.txt")):
        with open(path, errors="replace") as f:
            for ln in f:
                p = ln.strip().split(",")
                if len(p) == 4 and p[0].isdigit():
                    clock[(int(p[0]), int(p[1]))] = p[3]
    out.append(f"{'W':>3} {'P':>3} {'name':9} {'dist':>4} {'dq0..3':>9} "
               f"{'bytes':>5} {'inst':>10} {'wavefr':>11} {'wf/inst':>7} "
               f"{'confl/inst':>10} {'cyc/ld':>7}")
    for path in files:
        rows = quoted_csv(path)
        for r in rows:
            if not str(r.get("ID", "")).isdigit():
                continue
            m = re.search(r"ldsKernel<(\d+),\s*(\d+)>", r.get("Kernel Name", ""))
            if not m:
                continue
            w, p = int(m.group(1)), int(m.group(2))
            inst = num(r.get("smsp__sass_inst_executed_op_shared_ld.sum"))
            wf = num(r.get("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"))
            cf = num(r.get("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"))
            g = re.match(r"\(?\s*(\d+)", r.get("Grid Size", ""))
            grid = int(g.group(1)) if g else 0
            if inst != inst:  # fallback run: known count, 16 warps x 4096
                inst = grid * 16 * 4096
            if wf != wf:  # ld+st total minus the init stores
                wf = num(r.get("l1tex__data_pipe_lsu_wavefronts_mem_shared.sum")) - grid * 256
            if cf != cf:
                cf = num(r.get("l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum"))
            nm = names.get((w, p), ["?", "?", "?", "?", "?", "?", "?"])
            out.append(f"{w:3d} {p:3d} {nm[0]:9} {nm[1]:>4} "
                       f"{'/'.join(nm[2:6]):>9} {nm[6]:>5} {inst:10.0f} "
                       f"{wf:11.0f} {wf / inst if inst else float('nan'):7.3f} "
                       f"{cf / inst if inst else float('nan'):10.3f} "
                       f"{clock.get((w, p), '-'):>7}")


C_KEYS = ["Duration", "Compute (SM) Throughput", "Memory Throughput",
          "Registers Per Thread", "Achieved Occupancy", "Theoretical Occupancy",
          "Issue Slots Busy", "Executed Ipc Active", "L1/TEX Hit Rate",
          "L2 Hit Rate", "DRAM Throughput", "Block Limit Registers",
          "Block Limit Shared Mem", "Warp Cycles Per Issued Instruction",
          "Grid Size", "Block Size", "Dynamic Shared Memory Per Block",
          "SM Frequency"]


def part_c(out, res):
    path = os.path.join(res, "C_details.csv")
    if not os.path.exists(path):
        out.append("C: no C_details.csv (step failed or skipped)")
        return
    rows = quoted_csv(path)
    kern = {}
    order = []
    for r in rows:
        k = (r.get("ID"), r.get("Kernel Name", "")[:60])
        if k not in kern:
            kern[k] = {}
            order.append(k)
        mn = r.get("Metric Name", "")
        if mn in C_KEYS and mn not in kern[k]:
            kern[k][mn] = f"{r.get('Metric Value', '')} {r.get('Metric Unit', '')}".strip()
    for k in order:
        out.append(f"C: [{k[0]}] {k[1]}")
        for mn in C_KEYS:
            if mn in kern[k]:
                out.append(f"C:     {mn}: {kern[k][mn]}")
    raw = os.path.join(res, "C_raw.txt")
    if os.path.exists(raw):
        for r in quoted_csv(raw):
            if str(r.get("ID", "")).isdigit():
                for key in ("sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active",
                            "smsp__issue_active.avg.pct_of_peak_sustained_active",
                            "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
                            "launch__registers_per_thread",
                            "launch__occupancy_limit_registers",
                            "smsp__inst_executed.sum",
                            "smsp__inst_executed_pipe_fma.sum",
                            "gpu__time_duration.sum"):
                    if key in r:
                        out.append(f"C: [{r['ID']}] {key} = {r[key]}")
                # warp stall reasons (WarpStateStats), largest first
                stalls = []
                for key, val in r.items():
                    m = re.match(r"smsp__average_warps?_(?:latency_)?issue_"
                                 r"stalled_(\w+?)(?:_per_issue_active)?"
                                 r"\.ratio$", key or "")
                    if m and num(val) == num(val):
                        stalls.append((num(val), m.group(1)))
                stalls.sort(reverse=True)
                if stalls:
                    out.append(f"C: [{r['ID']}] stalls/issue: " + ", ".join(
                        f"{nm} {v:.2f}" for v, nm in stalls[:8]))
                inst = num(r.get("smsp__sass_inst_executed_op_shared_ld.sum"))
                wf = num(r.get("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"))
                out.append(f"C: [{r['ID']}] {r.get('Kernel Name', '')[:50]} "
                           f"shared ld inst {inst:.0f} wavefronts {wf:.0f} "
                           f"wf/inst {wf / inst if inst else float('nan'):.3f}")


def main():
    if len(sys.argv) != 2 or not os.path.isdir(sys.argv[1]):
        print("usage: summary.py RESULT_DIR", file=sys.stderr)
        return 2
    res = sys.argv[1]
    out = []
    for part in (part_a, part_b, part_c):
        try:
            part(out, res)
        except Exception as e:  # keep going: the run is the only try
            out.append(f"{part.__name__}: error {type(e).__name__}: {e}")
        out.append("")
    text = "\n".join(out)
    tmp = os.path.join(res, ".summary.txt.tmp")
    with open(tmp, "w") as f:
        f.write(text + "\n")
    os.replace(tmp, os.path.join(res, "summary.txt"))
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
