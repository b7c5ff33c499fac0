"""gpu_facts: the GPU transcripts of evidence-gpu.sh as a facts file.

Usage: python3 -m tools.gpu.gpu_facts [EVIDENCE_DIR]   (default: evidence)

Reads EVIDENCE_DIR/gpu-<gpu>-*.{txt,csv} of each GPU there, writes
EVIDENCE_DIR/gpu-<gpu>.facts.json (atomically) for litkit/gather.py,
its "from" naming each fact's step transcript (lab_facts.Sourced);
and, when there, the manifest's lab folder EVIDENCE_DIR/<lab.dir>/ (one
call's open points, tools/gpu/lab_facts.py) as EVIDENCE_DIR/<lab.dir>
.facts.json.
Values as measured, unrounded: times in ms, rates in GFLOP/s, ratios
piped/sync (< 1: the pipeline is faster), percentages, bytes, counts, MHz,
booleans, tokens; no verdicts (tools/facts/derive.py), no sentences. Exit:
0; 1 a transcript missing or malformed (named); 2 usage. Sizes, settings,
depths and kernel files: tools/manifest.toml.
"""

import glob
import hashlib
import json
import os
import re
import statistics
import sys

from tools import manifest
from tools.gpu import lab_facts
from tools.gpu.lab_facts import (EvidenceError, Sourced, ncu_records,
                                  read_csv, read_text, spread)
from litkit import litlib

# run CSV column -> fact <prefix>.<n>.<fact>
ROW_COLUMNS = {c: c.replace("_median", "") for c in (
    "sync_ms_median", "piped_ms_median", "cublas_ms_median", "sync_gflops",
    "piped_gflops", "cublas_gflops", "sync_pct_cublas", "piped_pct_cublas",
    "identical", "blocks", "waves")}
ROW_COLUMNS.update(piped_over_sync="ratio", piped_mhz="mhz")
# provenance key of the sm_80 run CSV -> (fact, divisor)
CARD_KEYS = {
    "sm_count": ("gpu.sm_count", 1), "regs_per_sm": ("gpu.regs_per_sm", 1),
    "smem_per_sm_bytes": ("gpu.smem_per_sm_kib", 1024),
    "l2_bytes": ("gpu.l2_mib", 2**20), "timed_launches": ("run.reps", 1),
    "max_sm_clock_mhz": ("gpu.max_sm_clock_mhz", 1),
    "basic_piped_blocks_per_sm": ("run.sm_80.blocks_per_sm", 1)}
# kernel provenance fields: run.<arch>.<kind>_<field>
KERNEL_KEYS = ("registers", "blocks_per_sm", "ptx_version", "binary_version")
WIDE_COLUMNS = {c: c for c in ("piped_gflops", "sync_gflops",
                               "cublas_gflops")}
WIDE_COLUMNS.update(piped_over_sync="ratio", piped_pct_cublas="pct_cublas")
EXERCISE_COLUMNS = {"piped_over_sync": "ratio", "piped_smem_bytes": "smem",
                    "piped_blocks_per_sm": "blocks_per_sm"}
# ncu raw metric -> fact ncu.<pair>.<kernel>.<fact>
NCU_METRICS = {
    "sm__throughput.avg.pct_of_peak_sustained_elapsed": "sm_pct",
    "l1tex__throughput.avg.pct_of_peak_sustained_active": "l1tex_pct",
    "lts__throughput.avg.pct_of_peak_sustained_elapsed": "l2_pct",
    "dram__throughput.avg.pct_of_peak_sustained_elapsed": "dram_pct",
    "lts__t_sector_hit_rate.pct": "l2_hit_pct",
    "sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active": "fma_pct",
    "smsp__average_warp_latency_per_inst_issued.ratio": "cpi",
    "smsp__inst_issued.sum": "inst_issued",
    "smsp__inst_executed_pipe_fma.sum": "ffma",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared.sum": "wavefronts",
    "smsp__warps_active.avg.per_cycle_active": "warps_per_scheduler",
    "smsp__cycles_active.avg": "cycles",
    "sm__cycles_elapsed.avg": "elapsed_cycles",
    "gpu__time_duration.sum": "duration_ns",
    "launch__registers_per_thread": "registers"}
SASS_NAMES = {"TileSync": "sync", "TilePiped": "piped",
              "BlockedSync": "blocked_sync", "BlockedPiped": "blocked_piped"}
STALL = re.compile(
    r"smsp__average_warps_issue_stalled_(\w+?)_per_issue_active\.ratio$")
# Nsight Compute's stall reasons kept per reason for the lesson's pair
# (warp cycles per issued instruction; Profiling Guide, "Warp Stall Reasons")
STALL_REASONS = ("barrier", "branch_resolving", "dispatch_stall",
                 "lg_throttle", "long_scoreboard", "math_pipe_throttle",
                 "membar", "mio_throttle", "no_instruction", "not_selected",
                 "selected", "short_scoreboard", "sleeping", "wait")
KERNELS = {"matmulTileSync": "basic.sync", "matmulTilePiped": "basic.piped",
           "matmulBlockedSync": "blocked.sync",
           "matmulBlockedPiped": "blocked.piped"}
OPCODES = ("FFMA", "LDS", "SYNCS", "ARRIVES", "LDGSTS", "LDG", "STS", "BAR")
# Nsight Compute's warp states kept per depth (the source page's columns
# stall_NAME: samples of warps in that state; Profiling Guide, "Warp Stall
# Reasons"): ready but another warp issued, dispatch stall, and waiting on
# a short-scoreboard result (shared memory, MIO)
CODE_STALLS = ("not_selected", "dispatch", "short_sb")


def stalls(row):
    """{reason: text} of an ncu row's stall columns (STALL: warp cycles
    per issued instruction) that hold a value, in column order."""
    return {s.group(1): v for k, v in row.items()
            for s in [STALL.match(k)] if s and v}


def profiles(path):
    """The rows of an ncu raw-page transcript, their numbers' thousands
    separators dropped."""
    return [{k: v.replace(",", "") for k, v in row.items()}
            for row in ncu_records(read_text(path))]


def row_for(rows, n, path, pair="basic"):
    """The row of pair at size n; EvidenceError if none."""
    for row in rows:
        if row.get("n") == n and row.get("pair") == pair:
            return row
    raise EvidenceError(f"{path}: no {pair} row for N = {n}")


def rows_facts(path, prefix, sizes, facts, pair="basic"):
    """The ROW_COLUMNS of pair's rows at sizes as <prefix>.<n>.<fact>;
    returns (the CSV's provenance, the writer of facts read from it)."""
    (meta, rows), out = read_csv(path), facts.of(path)
    for n in sizes:
        row = row_for(rows, n, path, pair)
        for col, name in ROW_COLUMNS.items():
            out[f"{prefix}.{n}.{name}"] = (row[col] == 1 if name ==
                                           "identical" else row[col])
    return meta, out


def run_facts(pre, facts, m):
    """The lesson's pair in both builds and with a cold L2, the card, the
    kernels, the SM clocks sampled in every run CSV, and piped/sync at
    N = 2048 over the run and the separate processes."""
    for arch in ("sm_80", "sm_90"):
        meta, out = rows_facts(f"{pre}-run-{arch}.csv", f"run.{arch}",
                               m.sizes["run"], facts)
        for kind in ("sync", "piped"):
            for key in KERNEL_KEYS:
                out[f"run.{arch}.{kind}_{key}"] = litlib.number(
                    meta[f"basic_{kind}_{key}"])
        if arch == "sm_80":
            for key, (name, div) in CARD_KEYS.items():
                value = litlib.number(meta[key])
                out[name] = value if div == 1 else value / div
    seen = [row[c] for p in sorted(glob.glob(f"{pre}-*.csv"))
            if "sync_mhz" in read_text(p) for row in read_csv(p)[1]
            for c in ("sync_mhz", "piped_mhz", "cublas_mhz") if row[c] > 0]
    if not seen:
        raise EvidenceError(f"{pre}-*.csv: no SM clock sampled")
    facts.of(f"{pre}-*.csv").update({"clock.min_mhz": min(seen),
                                     "clock.max_mhz": max(seen)})
    n, = m.sizes["one"]
    ratios = [facts[f"run.sm_80.{n}.ratio"]] + repeated(
        sorted(glob.glob(f"{pre}-spread-*.csv")), n, "piped_over_sync",
        f"{pre}-spread-*.csv")
    facts.of(f"{pre}-spread.csv").update({
        f"spread.{n}.runs": len(ratios), f"spread.{n}.ratio_min":
        min(ratios), f"spread.{n}.ratio_max": max(ratios)})
    rows_facts(f"{pre}-cold.csv", "cold", m.sizes["run"], facts)


def repeated(paths, n, column, path_desc, pair="basic"):
    """column at size n of pair in each CSV of paths; EvidenceError if none."""
    if not paths:
        raise EvidenceError(f"{path_desc}: no CSV")
    return [row_for(read_csv(p)[1], n, p, pair)[column] for p in paths]


def median_facts(pre, stem, settings, sizes, facts, name=None):
    """Median and range of piped/sync (and the median times) over the
    processes of <pre>-<stem>-<setting>-<i>.csv, as
    <name>.<setting>.<n>.{ratio,ratio_min,ratio_max,sync_ms,piped_ms};
    <name>.runs: the most processes of a setting (name: stem's)."""
    name, runs, out = name or stem, 0, facts.of(f"{pre}-{stem}.csv")
    for setting in settings:
        desc = f"{pre}-{stem}-{setting}"
        paths = sorted(glob.glob(desc + "-*.csv"))
        for n in sizes:
            b = f"{name}.{setting}.{n}."
            spread(b + "ratio", repeated(paths, n, "piped_over_sync", desc),
                   out)
            for kind in ("sync", "piped"):
                out[f"{b}{kind}_ms"] = statistics.median(
                    repeated(paths, n, f"{kind}_ms_median", desc))
        runs = max(runs, len(paths))
    out[f"{name}.runs"] = runs


def process_facts(pre, facts, m):
    """Runs repeated in separate processes: the residency dial (the control
    once; residency.runs counts the others' processes), each group of the
    manifest at its settings, the exercise's depths (built for sm_80, and
    natively for sm_90: native.NAME.*, and stages.NAME.* of each other
    swept kernel file)."""
    sizes = m.sizes["residency"]
    median_facts(pre, "residency", m.residency.dial, sizes, facts)
    for setting in m.residency.dial:
        path = sorted(glob.glob(f"{pre}-residency-{setting}-*.csv"))[0]
        facts.of(path)[f"residency.{setting}.blocks_per_sm"] = \
            litlib.number(read_csv(path)[0]["basic_piped_blocks_per_sm"])
    for stem in (g.name for g in m.groups):
        median_facts(pre, stem, m.residency.groups, sizes, facts)
        path = f"{pre}-{stem}-natural-1.csv"
        meta = read_csv(path)[0]
        for key in ("blocks_per_sm", "registers"):
            facts.of(path)[f"{stem}.natural.{key}"] = litlib.number(
                meta[f"basic_piped_{key}"])
    depths = [str(d) for d in m.depths.exercise]
    median_facts(pre, "stages", depths, m.sizes["one"], facts)
    for i, k in enumerate(k for k in m.kernels if k.swept):
        median_facts(pre, f"native-{k.name}", depths, m.sizes["one"],
                     facts, f"native.{k.name}")
        if i:   # the lesson's default build: stages, above
            median_facts(pre, f"stages-{k.name}", depths, m.sizes["one"],
                         facts, f"stages.{k.name}")


def digest(lines):
    """The first 16 hex digits of the sha256 of lines (strings), each
    ended by a newline: as evidence-gpu.sh's inner_code prints them."""
    return hashlib.sha256("".join(x + "\n" for x in lines).encode()
                          ).hexdigest()[:16]


def depth_code_facts(pre, facts, m):
    """The inner products of the swept kernel files (<pre>-depth-code.txt),
    per build: BUILD.code.NAME (BUILD native: the sm_90 binaries; stages:
    ptxas -arch=sm_90 on the default build's PTX, the driver's JIT).
    .inner_groups: the depths whose piped kernels have the same FFMA and
    LDS instructions, registers and order (equal digests: "2=4 3" puts 2
    and 4 together); .imad_hi: its IMAD.HI per depth ("0 1 0"); .sS.inner:
    a letter per distinct inner product of the build, over all swept files
    (A the lesson's at the first depth); .like_lesson, for each but the
    first (the lesson's), the depths where it equals the lesson's, or
    "none". stages.code.like_native: the depths where the lesson's two
    builds ran one inner product; .like_profile: those where the default
    build's equals what Nsight Compute listed (its digest without .reuse
    flags against ncu.basic.piped.code.sS.inner_sha). EvidenceError when a
    file, build or depth has no line, or the FFMA and LDS count differs
    (an inner product of another size is no longer the one compared)."""
    path = f"{pre}-depth-code.txt"
    rows = {(b, k, int(s)): (int(n), sha, plain, int(hi))
            for b, k, s, n, sha, plain, hi in re.findall(
                r"^(sm_90|jit) (\w+) (\d+) FFMA\+LDS (\d+) sha256 (\w+) "
                r"plain (\w+) IMAD\.HI (\d+)$", read_text(path), re.M)}
    out = facts.of(path)
    swept = [k.name for k in m.kernels if k.swept]
    depths = m.depths.exercise
    got = {(b, k): [rows.get((b, k, d)) for d in depths]
           for b in ("sm_90", "jit") for k in swept}
    if any(None in v for v in got.values()) or len(
            {r[0] for v in got.values() for r in v}) != 1:
        raise EvidenceError(f"{path}: want a line per build, kernel file "
                            "and depth, each with one FFMA+LDS count")
    for b, stem in (("sm_90", "native"), ("jit", "stages")):
        letters = {}
        for k in swept:
            c = f"{stem}.code.{k}."
            groups = {}
            for d, r in zip(depths, got[(b, k)]):
                groups.setdefault(r[1], []).append(str(d))
                letters.setdefault(r[1], chr(ord("A") + len(letters)))
                out[f"{c}s{d}.inner"] = letters[r[1]]
            out[c + "inner_groups"] = " ".join(map("=".join,
                                                     groups.values()))
            out[c + "imad_hi"] = " ".join(str(r[3]) for r in got[(b, k)])
            if k != swept[0]:
                out[c + "like_lesson"] = " ".join(
                    str(d) for d, r, l in zip(depths, got[(b, k)],
                                              got[(b, swept[0])])
                    if r[1] == l[1]) or "none"
    lesson = swept[0]
    out["stages.code.like_native"] = " ".join(
        str(d) for d, j, n in zip(depths, got[("jit", lesson)],
                                  got[("sm_90", lesson)])
        if j[1] == n[1]) or "none"
    out["stages.code.like_profile"] = " ".join(
        str(d) for d, j in zip(depths, got[("jit", lesson)])
        if j[2] == facts[f"ncu.basic.piped.code.s{d}.inner_sha"]) or "none"


def resource_facts(meta, pair, out):
    """PAIR.{sync,piped}.{registers,blocks_per_sm,smem_bytes} from a run
    CSV's metadata row (its PAIR_KIND_* columns: ptxas's registers per
    thread, the occupancy API's blocks per SM, static plus dynamic shared
    memory in bytes)."""
    for kind in ("sync", "piped"):
        for key in ("registers", "blocks_per_sm"):
            out[f"{pair}.{kind}.{key}"] = litlib.number(
                meta[f"{pair}_{kind}_{key}"])
        out[f"{pair}.{kind}.smem_bytes"] = sum(
            litlib.number(meta[f"{pair}_{kind}_{k}_smem_bytes"])
            for k in ("static", "dynamic"))


def blocked_facts(pre, facts, m):
    """The register-blocked pair: sizes, spread, 1 block/SM, libcu++, the
    exercise's deeper depths."""
    meta, out = rows_facts(f"{pre}-blocked.csv", "blocked",
                           m.sizes["blocked"], facts, "blocked")
    out["blocked.stages"] = litlib.number(meta["stages"])
    resource_facts(meta, "blocked", out)
    paths = sorted(glob.glob(f"{pre}-blocked-spread-*.csv"))
    out["blocked.spread.runs"] = len(paths) + 1
    for n in m.sizes["residency"]:
        for col, name in (("piped_over_sync", "ratio"),
                          ("piped_pct_cublas", "pct")):
            got = [facts[f"blocked.{n}.{ROW_COLUMNS[col]}"]] + repeated(
                paths, n, col, f"{pre}-blocked-spread", "blocked")
            b = f"blocked.spread.{n}.{name}"
            facts.of(f"{pre}-blocked-spread.csv").update({
                b + "_min": min(got), b + "_max": max(got)})
    large = m.sizes["large"]
    for stem, name, sizes in (
            ("b1", "b1", large), ("libcu", "libcu", m.sizes["libcu"]),
            *((f"stages-{s}", f"s{s}", large) for s in m.depths.deeper),
            ("libcu-b1", "libcu_b1", large)):
        rows_facts(f"{pre}-blocked-{stem}.csv", f"blocked.{name}", sizes,
                   facts, "blocked")


def wide_facts(pre, facts, m):
    """The wide pair over its separate processes: per size, the median,
    min and max of piped and sync GFLOP/s, piped/sync and the piped
    kernel's share of cuBLAS (wide.N.*), the processes (wide.runs), its
    kernels' registers and shared memory; Nsight Compute's metrics of the
    wide piped kernel and of cuBLAS (ncu.wide.{piped,cublas}.*, with
    issue_pct: issued instructions per scheduler cycle, percent). Evidence
    made before the pair existed has no wide transcript: no facts then,
    and the page says "not yet measured"."""
    paths = sorted(glob.glob(f"{pre}-wide-[0-9]*.csv"))
    if not paths and not os.path.exists(f"{pre}-wide.txt"):
        return
    if not paths:
        raise EvidenceError(f"{pre}-wide-*.csv: no CSV")
    out = facts.of(paths[0])
    resource_facts(read_csv(paths[0])[0], "wide", out)
    out["wide.runs"] = len(paths)
    for n in m.sizes["wide"]:
        for col, name in WIDE_COLUMNS.items():
            spread(f"wide.{n}.{name}",
                   repeated(paths, n, col, f"{pre}-wide", "wide"), out)
    path = f"{pre}-wide-ncu.txt"
    if not os.path.exists(path):
        return
    smsps, seen, out = facts["gpu.sm_count"] * 4, [], facts.of(path)
    for d in profiles(path):
        kernel = d["Kernel Name"].split("(")[0]
        kind = "piped" if kernel == "matmulWidePiped" else "cublas"
        b = f"ncu.wide.{kind}."
        got = {name: float(d[k]) for k, name in NCU_METRICS.items()}
        out.update({b + k: v for k, v in got.items()})
        out[b + "issue_pct"] = 100 * got["inst_issued"] / (
            got["cycles"] * smsps)
        out.update({f"{b}stall.{s}": float(v) for s, v in stalls(d).items()})
        if kind == "cublas":
            out[b + "kernel"] = kernel
        seen.append(kind)
    if sorted(seen) != ["cublas", "piped"]:
        raise EvidenceError(f"{path}: want one profile of matmulWidePiped "
                            f"and one of cuBLAS, got {seen}")


def exercise_facts(pre, facts, m):
    """The stage sweep, and the solution of part 2."""
    path = f"{pre}-exercise.csv"
    rows = read_csv(path)[1]
    if sorted(r["stages"] for r in rows) != m.depths.exercise:
        raise EvidenceError(f"{path}: stage counts are not "
                            f"{m.depths.exercise}")
    for row in rows:
        for col, name in EXERCISE_COLUMNS.items():
            facts.of(path)[f"exercise.stages{row['stages']}.{name}"] = \
                row[col]
    rows_facts(f"{pre}-solution.csv", "solution", m.sizes["residency"],
               facts)


def sass_facts(pre, facts, m):
    """LDGSTS per build and kernel in the binaries that ran."""
    rows = re.findall(r"^(sm_80|sm_90|jit-equivalent)\s+matmul(\w+?)\s+"
                      r"LDGSTS\s+(\d+)", read_text(f"{pre}-sass.txt"), re.M)
    if len(rows) != 12:
        raise EvidenceError(f"{pre}-sass.txt: expected 12 LDGSTS counts, "
                            f"found {len(rows)}")
    for build, kernel, count in rows:
        facts.of(f"{pre}-sass.txt")[f"gpu.sass.{build.replace('-', '_')}."
                                    f"{SASS_NAMES[kernel]}.ldgsts"] = \
            int(count)


def sanitizer_facts(pre, facts, m):
    """Errors per compute-sanitizer tool over every kernel at N = 256;
    the synccheck experiment's reports per kernel file, and identity in
    plain runs."""
    kernels, text = manifest.synccheck(m), read_text(f"{pre}-sanitizer.txt")
    out = facts.of(f"{pre}-sanitizer.txt")
    for block in re.split(r"^---- compute-sanitizer --tool ", text,
                          flags=re.M)[1:]:
        m = (re.search(r"RACECHECK SUMMARY: .*\((\d+) error", block) or
             re.search(r"ERROR SUMMARY: (\d+) error", block))
        if not m:
            raise EvidenceError(f"{pre}-sanitizer.txt: no summary for "
                                f"{block.split()[0]}")
        out[f"sanitizer.{block.split()[0]}.errors"] = int(m.group(1))
    missing = [t for t in ("memcheck", "racecheck", "synccheck", "initcheck")
               if f"sanitizer.{t}.errors" not in facts]
    if missing:
        raise EvidenceError(f"{pre}-sanitizer.txt: no run of {missing}")
    text, out = (read_text(f"{pre}-synccheck.txt"),
                 facts.of(f"{pre}-synccheck.txt"))
    m = re.search(r"N = \d+: \d+ blocks of \d+ threads, (\d+) threads", text)
    if not m:
        raise EvidenceError(f"{pre}-synccheck.txt: no thread count")
    out["synccheck.threads"] = int(m.group(1))
    blocks = re.split(r"^---- (\S+)$", text, flags=re.M)[1:]
    found = dict(zip(blocks[0::2], blocks[1::2]))
    for kernel, name, _ in kernels:
        if kernel not in found:
            raise EvidenceError(f"{pre}-synccheck.txt: no {kernel}")
        body = found[kernel]
        reports = re.search(r"^reports: (\d+)$", body, re.M)
        plain = re.search(r"^plain run exit: (\d+)$", body, re.M)
        if not reports or not plain:
            raise EvidenceError(f"{pre}-synccheck.txt: {kernel} incomplete")
        out[f"synccheck.{name}.reports"] = int(reports.group(1))
        out[f"synccheck.{name}.identical"] = (
            plain.group(1) == "0" and "byte-identical" in body and
            "differs" not in body)


def ncu_pairs(m):
    """(pair_of(row): the fact prefix PAIR.KERNEL of an ncu row's kernel,
    None for another; the prefixes every profile must give). The
    manifest's ncu kernels (the thread-scope loop) add their piped kernel,
    told apart by the process that ran it: NAME.piped."""
    extra = {k.root.rsplit("/", 1)[-1]: k.ncu for k in m.kernels if k.ncu}

    def pair_of(d):
        kernel = d["Kernel Name"].split("(")[0]
        if kernel == "matmulTilePiped" and d["Process Name"] in extra:
            return f"{extra[d['Process Name']]}.piped"
        return KERNELS.get(kernel)
    return pair_of, [*KERNELS.values(),
                     *(f"{p}.piped" for p in extra.values())]


def ncu_facts(pre, facts, m):
    """Nsight Compute's raw metrics per kernel (ncu_pairs) and what
    follows from them: warp cycles (CPI times issued instructions), the
    cycles they predict over the warps per scheduler, wavefronts per FFMA,
    the stall reasons (STALL_REASONS, warp cycles per issued instruction)
    and the three largest. Then opcode_facts."""
    path, (pair_of, wanted) = f"{pre}-ncu.csv", ncu_pairs(m)
    schedulers, out = facts["gpu.sm_count"] * 4, facts.of(path)
    for d in profiles(path):
        pair = pair_of(d)
        if pair is None:
            continue
        b = f"ncu.{pair}."
        got = {name: float(d[m]) for m, name in NCU_METRICS.items()}
        out.update({b + k: v for k, v in got.items()})
        out[b + "warp_cycles"] = got["cpi"] * got["inst_issued"]
        out[b + "cycles_predicted"] = facts[b + "warp_cycles"] / (
            got["warps_per_scheduler"] * schedulers)
        out[b + "wavefronts_per_ffma"] = got["wavefronts"] / got["ffma"]
        stall = stalls(d)
        if not b.startswith("ncu.blocked."):
            out.update({f"{b}stall_cpi.{s}": float(v) for s, v in
                        stall.items() if s in STALL_REASONS})
        top = sorted(((float(v), s) for s, v in stall.items()
                      if s != "selected"), reverse=True)[:3]
        for i, (v, s) in enumerate(top, 1):
            out[f"{b}top{i}_stall"] = s.replace("_", " ")
            out[f"{b}top{i}_cpi"] = v
    missing = [k for k in wanted if f"ncu.{k}.cpi" not in facts]
    if missing:
        raise EvidenceError(f"{path}: no profile of {missing}")
    opcode_facts(pre, facts, m)


def opcode_facts(pre, facts, m):
    """The lesson's pair's executed warp instructions per SASS opcode at
    its N (and the ncu kernels' piped kernels'), with the difference
    between the kernels per warp-slice: (N/64)^2 blocks of 8 warps, each
    over N/16 K-slices (the lesson's tile), against the lesson's sync
    kernel: ncu.NAME.extra_per_warp_slice."""
    n, = m.sizes["ncu"]
    warp_slices = (n // 64) ** 2 * 8 * (n // 16)
    path, (pair_of, wanted) = f"{pre}-ncu-opcodes.txt", ncu_pairs(m)
    counts, out = {}, facts.of(path)
    for d in ncu_records(read_text(path)):
        if d["Kernel Name"].startswith("matmulTile"):
            counts[pair_of(d)] = {
                m.group(1): int(m.group(2).replace(",", "")) for m in
                re.finditer(r"([A-Z0-9]+): ([\d,]+)",
                            d["sass__inst_executed_per_opcode"])}
    if set(counts) != set(wanted) - {"blocked.sync", "blocked.piped"}:
        raise EvidenceError(f"{path}: want the lesson's kernels and the "
                            "piped kernels of the manifest's ncu kernels")
    for pair, ops in counts.items():
        b = f"ncu.{pair}.op."
        for op in OPCODES:
            out[b + op.lower()] = ops.get(op, 0)
        out[b + "total"] = sum(ops.values())
    sync = counts["basic.sync"]
    out["ncu.basic.warp_slices"] = warp_slices
    for pair, piped in counts.items():
        if pair == "basic.sync":
            continue
        b = f"ncu.{pair.split('.')[0]}."
        out[b + "extra_per_warp_slice"] = (
            sum(piped.values()) - sum(sync.values())) / warp_slices
        out[f"ncu.{pair}.syncs_per_warp_slice"] = (
            piped.get("SYNCS", 0) / warp_slices)
        out[b + "extra_other_per_warp_slice"] = (
            sum(v for k, v in piped.items() if k not in OPCODES) -
            sum(v for k, v in sync.items() if k not in OPCODES)) / warp_slices


def source_facts(pre, facts, m):
    """Where the lesson's pipelined kernel's warps stall, from Nsight
    Compute's warp-state samples per SASS instruction (its source page) at
    N: ncu.basic.piped.src.samples (all samples), and as percent of them
    .wait_share at its waits (each SYNCS.PHASECHK, the mbarrier phase test
    of cuda::pipeline's waits, and the branch after it that loops until the
    phase flips), .wait_long_sb_share (of those, stalled on the long
    scoreboard: the branch waiting for the test's result) and .timer_share
    at reads of the global timer (CS2R ... SR_GLOBALTIMER*), one before
    each wait's first test (its back-off's start). No table: EvidenceError.
    """
    path = f"{pre}-ncu-source.txt"
    table = ncu_records(read_text(path), "Address")

    def num(row, col):
        return float(row[col].replace(",", "") or 0)
    every = "Warp Stall Sampling (All Samples)"
    total = sum(num(r, every) for r in table)
    waits = [r for i, r in enumerate(table)
             if "SYNCS.PHASECHK" in r["Source"] or i and "SYNCS.PHASECHK"
             in table[i - 1]["Source"] and "BRA" in r["Source"]]
    if not total or not waits:
        raise EvidenceError(f"{path}: no samples or no waits")
    b = "ncu.basic.piped.src."
    facts.of(path).update({
        b + "samples": total,
        b + "wait_share": 100 * sum(num(r, every) for r in waits) / total,
        b + "wait_long_sb_share": 100 * sum(
            num(r, "stall_long_sb") for r in waits) / total,
        b + "timer_share": 100 * sum(num(r, every) for r in table if
                                     "SR_GLOBALTIMER" in r["Source"]) / total})


# The two waits of cuda::pipeline, by the CUDA line they start at
WAITS = {"acquire": "wait_parity(__consumed_phase_parity)",
         "consumer": "wait_parity(__produced_phase_parity)"}
# A CUDA-view row's counts: runs, samples, samples per CODE_STALLS state
COUNTS = ("Instructions Executed", "Warp Stall Sampling (All Samples)",
          *("stall_" + x for x in CODE_STALLS))


def code_page(path):
    """(sass, starts) of an ncu source page's CUDA view (path, one depth;
    under each CUDA line, the SASS it compiled to): sass {address: (text,
    *COUNTS, in the inner product: an FFMA or LDS of a line of the .nw)},
    each address once; starts [(address, wait)] of the SASS under each
    line of a wait of WAITS."""
    sass, starts, owner = {}, [], None
    for r in ncu_records(read_text(path), "Line No"):
        if r["Line No"]:        # a CUDA line: is it one of the two waits?
            owner = next((k for k, v in WAITS.items() if v in r["Source"]),
                         None)
        elif r["Address"] != "...":
            address = int(r["Address"], 16)
            if owner:
                starts.append((address, owner))
            sass.setdefault(address, (r["Source'"], *(
                0 if r[c] == "-" else int(r[c].replace(",", ""))
                for c in COUNTS), r.get("File Path", "").endswith(".nw") and
                r["Source'"].split()[0].startswith(("FFMA", "LDS"))))
    return sass, starts


def wait_tests(path, sass, starts):
    """{wait: [(runs, samples)] of its phase tests}: each SYNCS.PHASECHK
    belongs to the wait whose own instructions precede it most closely,
    and its operand's offset must agree (+0x8: producer_acquire);
    EvidenceError when a wait has no test or an offset disagrees."""
    waits = {k: [] for k in WAITS}
    for address, (text, runs, seen, *_) in sorted(sass.items()):
        before = [a for a in starts if a[0] <= address]
        if "SYNCS.PHASECHK" not in text or not before:
            continue
        k = max(before)[1]
        if ("+0x8]" in text) != (k == "acquire"):
            raise EvidenceError(f"{path}: the phase test {text.strip()}"
                                f" follows {WAITS[k]}, but its barrier "
                                "offset says the other wait")
        waits[k].append((runs, seen))
    for k, tests in waits.items():
        if not tests or not tests[0][0]:
            raise EvidenceError(f"{path}: no phase test of {WAITS[k]}")
    return waits


def wait_facts(pre, facts, m):
    """Which of cuda::pipeline's two waits tests its barrier more than once,
    at each depth S of the exercise: the source page's CUDA view
    ($pre-ncu-lines-S.txt, code_page) lists, under each line, the SASS it
    compiled to. producer_acquire waits with wait_parity on the stage's
    __consumed barrier, consumer_wait on its __produced one (cuda/pipeline
    of the CUDA toolkit: struct __pipeline_stage, 8-byte barriers, so
    __consumed sits 8 bytes into a stage); wait_tests. Facts per depth,
    per wait: ncu.basic.piped.waits.sS.{acquire,consumer}.tests, tests per
    warp and K-slice (all its tests' executions over its first test's: the
    counting pass, which instruments the kernel), and .retry_share,
    percent of the page's warp samples (each instruction once) on its
    tests after the first (the sampling pass); over the depths,
    ncu.basic.piped.waits.acquire.{fewest,most} and .consumer.most of the
    tests, and .consumer.repeats, the executions of consumer_wait's tests
    after the first (an integer). The same page gives each depth's machine
    code, whole-kernel: ncu.basic.piped.code.sS.samples, the page's warp
    samples, and .sS.NAME, those in each warp state of CODE_STALLS;
    .sS.per_warp_slice, its warp instructions executed per warp and
    K-slice; .inner_groups, the depths whose inner products (the FFMA and
    LDS instructions of the .nw's lines, in address order) are the same,
    register for register ("2=4 3": 2 and 4 alike, 3 another);
    .sS.inner_sha, its digest(). EvidenceError when a page has no samples
    or no inner product, or as wait_tests says."""
    b, c = "ncu.basic.piped.waits.", "ncu.basic.piped.code."
    repeats, groups = 0, {}
    for s in m.depths.exercise:
        path = f"{pre}-ncu-lines-{s}.txt"
        (sass, starts), out = code_page(path), facts.of(path)
        for i, name in enumerate(("samples",) + CODE_STALLS):
            out[f"{c}s{s}.{name}"] = sum(x[2 + i] for x in sass.values())
        inner = [x[0].strip() for _, x in sorted(sass.items()) if x[-1]]
        out[f"{c}s{s}.inner_sha"] = digest(inner)
        groups.setdefault(tuple(inner), []).append(str(s))
        samples = facts[f"{c}s{s}.samples"]
        if not samples or not inner:
            raise EvidenceError(f"{path}: no warp samples or no inner "
                                "product (FFMA, LDS in the .nw's lines)")
        waits = wait_tests(path, sass, starts)
        for k, tests in waits.items():
            out[f"{b}s{s}.{k}.tests"] = sum(t[0] for t in tests) / tests[0][0]
            out[f"{b}s{s}.{k}.retry_share"] = 100 * sum(
                t[1] for t in tests[1:]) / samples
        consumer = waits["consumer"]
        repeats += sum(t[0] for t in consumer[1:])
        out[f"{c}s{s}.per_warp_slice"] = sum(
            x[1] for x in sass.values()) / consumer[0][0]

    def tests(k):
        return [facts[f"{b}s{s}.{k}.tests"] for s in m.depths.exercise]
    facts.of(f"{pre}-ncu-lines-*.txt").update({
        b + "acquire.fewest": min(tests("acquire")),
        b + "acquire.most": max(tests("acquire")),
        b + "consumer.most": max(tests("consumer")),
        b + "consumer.repeats": repeats,
        c + "inner_groups": " ".join("=".join(g) for g in groups.values())})


def pitfall_facts(pre, facts, m):
    """How many pitfall checks passed, and what caught the barrier variant
    (in this run, and whether a launch failed in the first run)."""
    text, out = (read_text(f"{pre}-pitfalls.txt"),
                 facts.of(f"{pre}-pitfalls.txt"))
    m = re.search(r"^(\d+) passed, (\d+) failed", text, re.M)
    if not m:
        raise EvidenceError(f"{pre}-pitfalls.txt: no summary line")
    out["pitfalls.passed"], out["pitfalls.failed"] = map(int, m.groups())
    out["pitfalls.barrier.memcmp_caught"] = (
        "barrier-for-wait caught (memcmp named a difference" in text)
    m = re.search(r"racecheck exit (\S+)\)", text)
    out["pitfalls.barrier.racecheck_caught"] = bool(m and m.group(1) == "99")
    first = f"{pre}-pitfalls-first-run.txt"
    if os.path.exists(first):
        t = read_text(first)
        facts.of(first).update({
            "pitfalls.first_run.date": litlib.read_stamp(t)["date_utc"][:10],
            "pitfalls.barrier.first_run_launch_failure": "barrier-for-wait"
            in t and "unspecified launch failure" in t})


def facts_for(pre, m=None):
    """(meta, facts) of the transcripts with prefix pre (.../gpu-<gpu>),
    read as manifest m (default: tools/manifest.toml) lays them out."""
    m = m or manifest.load()
    stamp = litlib.read_stamp(read_text(f"{pre}-run-sm_80.txt"))
    toolkit = litlib.nvcc_version(stamp.get("toolkit", ""))[1]
    facts = Sourced()
    facts.of(f"{pre}-run-sm_80.txt").update({"gpu.name": stamp["gpu"],
                  "gpu.compute_capability": stamp["compute_capability"],
                  "gpu.driver": stamp["driver"], "gpu.toolkit": toolkit,
                  "gpu.date": stamp["date_utc"][:10],
                  "gpu.source_hash": stamp["source_sha256"][:12]})
    for reader in (run_facts, process_facts, blocked_facts, wide_facts,
                   exercise_facts, sass_facts, sanitizer_facts, ncu_facts,
                   source_facts, wait_facts, depth_code_facts,
                   pitfall_facts):
        reader(pre, facts, m)
    wall = re.search(r"make run wall time: (\d+) ms",
                     read_text(f"{pre}-run-default.txt"))
    if wall:
        facts.of(f"{pre}-run-default.txt")["run.default.wall_s"] = int(
            wall.group(1)) / 1000
    meta = {"kind": "gpu", "source_sha256": stamp["source_sha256"],
            "gpu": stamp["gpu"], "toolkit": stamp["toolkit"],
            "date": stamp["date_utc"],
            "transcript": f"evidence/{os.path.basename(pre)}-run-sm_80.txt"}
    if stamp.get("source_tokens"):   # (transcripts from before it: none)
        meta["source_tokens"] = stamp["source_tokens"]
    if stamp["gpu"] in m.cards:   # gather: card.KEY.*; rank 0 the main card
        meta["card"] = m.cards[stamp["gpu"]]
        meta["rank"] = str(list(m.cards).index(stamp["gpu"]))
    return meta, facts


def main(argv):
    """Write one facts file per GPU found; returns the exit status."""
    if len(argv) > 1:
        print("usage: python3 -m tools.gpu.gpu_facts [EVIDENCE_DIR]",
              file=sys.stderr)
        return 2
    ev = argv[0] if argv else "evidence"
    runs = sorted(glob.glob(os.path.join(ev, "gpu-*-run-sm_80.txt")))
    if not runs:
        print(f"gpu_facts: no gpu-*-run-sm_80.txt in {ev}/", file=sys.stderr)
        return 1
    for run in runs:
        if write_facts(run[:-len("-run-sm_80.txt")], facts_for):
            return 1
    try:
        lab = os.path.join(ev, manifest.load().lab.dir)
    except manifest.ManifestError as e:
        print(f"gpu_facts: {e!s}", file=sys.stderr)
        return 1
    return write_facts(lab, lab_facts.facts_for) if os.path.isdir(lab) else 0


def write_facts(pre, read):
    """PRE.facts.json from read(PRE) -> (meta, facts); returns the exit
    status: 1, with a message, when the evidence cannot be read."""
    try:
        meta, facts = read(pre)
    except (EvidenceError, manifest.ManifestError, KeyError, OSError,
            ValueError) as e:
        print(f"gpu_facts: {pre}: {e!s}", file=sys.stderr)
        return 1
    doc = {"meta": meta, "facts": facts}
    if isinstance(facts, Sourced):  # each fact's transcript, for its title
        doc["from"] = facts.sources(os.path.dirname(pre))
    litlib.write_atomic(pre + ".facts.json", json.dumps(
        doc, indent=1, sort_keys=True, ensure_ascii=False) + "\n")
    print(f"gpu_facts: {len(facts)} facts -> {pre}.facts.json")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
