"""gpu_facts: the GPU transcripts of evidence-gpu.sh as a facts file.

Usage: python3 -m tools.gpu.gpu_facts [EVIDENCE_DIR]   (default: evidence)

Reads EVIDENCE_DIR/gpu-<gpu>-*.{txt,csv} of each GPU there and writes
EVIDENCE_DIR/gpu-<gpu>.facts.json for tools/lit/gather.py (temporary name,
rename). Values are as measured, unrounded: times in ms, rates in GFLOP/s,
ratios piped/sync (< 1: the pipeline is faster), bytes, counts, booleans,
tokens; no verdicts (tools/facts/derive.py) and no sentences (day74.nw).
One reader per transcript; the tables say which CSV column or provenance
key becomes which fact. Exit: 0; 1 a transcript is missing or malformed
(named); 2 usage.
"""

import csv
import glob
import json
import os
import re
import sys

from tools.lit import litlib

SIZES = (512, 1024, 2048, 4096)
SANITIZER_N = 512
# run CSV column -> fact run.<arch>.<n>.<fact>
RUN_COLUMNS = {**{f"{k}_ms_median": f"{k}_ms" for k in ("sync", "piped",
                                                         "cublas")},
               **{c: c for c in ("sync_gflops", "piped_gflops",
                                 "cublas_gflops", "sync_pct_cublas",
                                 "piped_pct_cublas", "identical")},
               "piped_over_sync": "ratio"}
# run CSV provenance key -> fact build.<arch>.<fact>
BUILD_KEYS = {
    "piped_registers": "piped_registers", "sync_registers": "sync_registers",
    "piped_ptx_version": "ptx_version",
    "piped_binary_version": "binary_version"}
# provenance key of the sm_80 run CSV -> (fact, divisor)
CARD_KEYS = {
    "sm_count": ("gpu.sm_count", 1), "regs_per_sm": ("gpu.regs_per_sm", 1),
    "smem_per_sm_bytes": ("gpu.smem_per_sm_kib", 1024),
    "l2_bytes": ("gpu.l2_mib", 2**20), "timed_launches": ("run.reps", 1),
    "piped_blocks_per_sm": ("run.blocks_per_sm", 1)}
# exercise CSV column -> fact exercise.stages<s>.<fact>
EXERCISE_COLUMNS = {"piped_over_sync": "ratio", "piped_smem_bytes": "smem",
                    "piped_blocks_per_sm": "blocks_per_sm"}
# ncu raw metric -> fact ncu.<kernel>.<fact>
NCU_METRICS = {
    "smsp__average_warp_latency_per_inst_issued.ratio": "cpi",
    "launch__registers_per_thread": "registers",
    "sm__maximum_warps_per_active_cycle_pct": "theoretical_occupancy",
    "sm__warps_active.avg.pct_of_peak_sustained_active": "achieved_occupancy",
    "launch__occupancy_limit_shared_mem": "smem_block_limit",
    "smsp__inst_executed.sum": "instructions"}
STALL = re.compile(
    r"smsp__average_warps_issue_stalled_(\w+?)_per_issue_active\.ratio$")
STALLS_SHOWN = ("barrier", "long_scoreboard", "short_scoreboard",
                "mio_throttle", "not_selected")
LIMITS = ("registers", "shared_mem", "warps", "blocks", "barriers")


class EvidenceError(Exception):
    """A transcript is missing or not in the expected form."""


def read(path, csv_too=False):
    """The text of path, or (csv_too) its (meta, rows) as a stamped CSV;
    OSError or ValueError naming path when it cannot be read."""
    return (litlib.read_stamped_csv if csv_too else litlib.read_text)(path)


def row_for(rows, key, value, path):
    """The row whose column key equals value; EvidenceError if none."""
    for row in rows:
        if row.get(key) == value:
            return row
    raise EvidenceError(f"{path}: no row with {key} = {value}")


def run_facts(pre, facts):
    """The results tables of both builds and the card's properties."""
    for arch in ("sm_80", "sm_90"):
        path = f"{pre}-run-{arch}.csv"
        meta, rows = read(path, True)
        for n in SIZES:
            row = row_for(rows, "n", n, path)
            for col, name in RUN_COLUMNS.items():
                value = row[col]
                facts[f"run.{arch}.{n}.{name}"] = (
                    value == 1 if name == "identical" else value)
        for key, name in BUILD_KEYS.items():
            facts[f"build.{arch}.{name}"] = litlib.number(meta[key])
        if arch == "sm_80":
            for key, (name, div) in CARD_KEYS.items():
                value = litlib.number(meta[key])
                facts[name] = value if div == 1 else value / div


def spread_facts(pre, facts):
    """piped/sync at N = 2048 over the run and the separate processes."""
    ratios = [facts["run.sm_80.2048.ratio"]]
    for path in sorted(glob.glob(f"{pre}-spread-*.csv")):
        ratios.append(row_for(read(path, True)[1], "n", 2048, path)
                      ["piped_over_sync"])
    if len(ratios) < 4:
        raise EvidenceError(f"{pre}-spread-*.csv: need 3 spread runs, "
                            f"found {len(ratios) - 1}")
    facts["spread.2048.runs"] = len(ratios)
    facts["spread.2048.ratio_min"] = min(ratios)
    facts["spread.2048.ratio_max"] = max(ratios)


def exercise_facts(pre, facts):
    """The stage sweep, one fact per depth and column."""
    path = f"{pre}-exercise.csv"
    rows = read(path, True)[1]
    if sorted(r["stages"] for r in rows) != [2, 3, 4]:
        raise EvidenceError(f"{path}: stage counts are not 2, 3, 4")
    for row in rows:
        for col, name in EXERCISE_COLUMNS.items():
            facts[f"exercise.stages{row['stages']}.{name}"] = row[col]


def sass_facts(pre, facts):
    """LDGSTS per build and kernel in the binaries that ran."""
    rows = re.findall(r"^(sm_80|sm_90|jit-equivalent)\s+matmulTile(\w+)\s+"
                      r"LDGSTS\s+(\d+)", read(f"{pre}-sass.txt"), re.M)
    if len(rows) != 6:
        raise EvidenceError(f"{pre}-sass.txt: expected 6 LDGSTS counts, "
                            f"found {len(rows)}")
    for build, kernel, count in rows:
        facts[f"gpu.sass.{build.replace('-', '_')}.{kernel.lower()}.ldgsts"] = \
            int(count)


def sanitizer_facts(pre, facts):
    """Errors per compute-sanitizer tool, and the first synccheck report."""
    text = read(f"{pre}-sanitizer.txt")
    for block in re.split(r"^---- compute-sanitizer --tool ", text,
                          flags=re.M)[1:]:
        m = (re.search(r"ERROR SUMMARY: (\d+) error", block) or
             re.search(r"RACECHECK SUMMARY: .*\((\d+) error", block))
        if not m:
            raise EvidenceError(f"{pre}-sanitizer.txt: no summary for "
                                f"{block.split()[0]}")
        facts[f"sanitizer.{block.split()[0]}.errors"] = int(m.group(1))
    missing = [t for t in ("memcheck", "racecheck", "synccheck", "initcheck")
               if f"sanitizer.{t}.errors" not in facts]
    if missing:
        raise EvidenceError(f"{pre}-sanitizer.txt: no run of {missing}")
    facts["sanitizer.threads"] = (SANITIZER_N // 64) ** 2 * 256
    first = re.search(r"Barrier error detected\. ([^\n]*)\n.*?Device Frame: "
                      r"([^\n]*?)\+0x[0-9a-f]+ in ", text, re.S)
    if first:
        facts["sanitizer.synccheck.first_message"] = first.group(1).strip()
        facts["sanitizer.synccheck.first_function"] = first.group(2).strip()


def probe_facts(pre, facts):
    """synccheck's reports across depths and sizes, and the seed program."""
    if not os.path.exists(f"{pre}-synccheck-probe.txt"):
        return
    text = read(f"{pre}-synccheck-probe.txt")
    rows = re.findall(r"^(\d)\s+(\d+)\s+\d+\s+(\d+)\s+(\d+)\s+((?:0x[0-9a-f]+"
                      r"\(\d+\)\s*)+)$", text, re.M)
    for stages, n, threads, errors, _ in rows:
        facts[f"synccheck.s{stages}.n{n}.threads"] = int(threads)
        facts[f"synccheck.s{stages}.n{n}.errors"] = int(errors)
    if rows:
        facts["sanitizer.synccheck.probes"] = len(rows)
        facts["sanitizer.synccheck.one_per_thread"] = all(
            r[2] == r[3] for r in rows)
        facts["sanitizer.synccheck.barriers"] = max(
            len(r[4].split()) for r in rows)
    seed = text.partition("earlier program")[2]
    m = re.search(r"ERROR SUMMARY: (\d+) error", seed)
    if m:
        facts["seed.synccheck.errors"] = int(m.group(1))
        facts["seed.synccheck.missing_wait"] = "Missing wait" in seed


def ncu_facts(pre, facts):
    """Nsight Compute's numbers per kernel, from the raw page."""
    path = f"{pre}-ncu.txt"
    lines = [l for l in read(path).splitlines() if l.startswith('"')]
    rows = list(csv.reader(lines))
    header = next((r for r in rows if r[0] == "ID"), None)
    if header is None:
        raise EvidenceError(f"{path}: no raw metrics table")
    seen = set()
    for r in rows:
        if len(r) != len(header) or r[0] in ("ID", ""):
            continue
        d = {k: v.replace(",", "") for k, v in zip(header, r)}
        kernel = re.search(r"matmulTile(Piped|Sync)", d["Kernel Name"])
        if not kernel:
            continue
        b = f"ncu.{kernel.group(1).lower()}."
        seen.add(kernel.group(1))
        for metric, name in NCU_METRICS.items():
            if d.get(metric, "") not in ("", "n/a"):
                facts[b + name] = litlib.number(d[metric])
        stalls = {m.group(1): float(v) for k, v in d.items()
                  for m in [STALL.match(k)] if m and v not in ("", "n/a")}
        for s in STALLS_SHOWN:
            facts[b + "stall_" + s] = stalls.get(s, 0.0)
        top = sorted(((v, s) for s, v in stalls.items() if s != "selected"),
                     reverse=True)[:3]
        for i, (v, s) in enumerate(top, 1):
            facts[f"{b}top{i}_stall"] = s.replace("_", " ")
            facts[f"{b}top{i}_cpi"] = v
        limits = {k: float(d[f"launch__occupancy_limit_{k}"]) for k in LIMITS}
        facts[b + "blocks_per_sm"] = int(min(limits.values()))
        facts[b + "block_limit"] = " and ".join(
            k.replace("_", " ") for k, v in limits.items()
            if v == min(limits.values()))
        if d.get("launch__shared_mem_config_size"):
            facts[b + "smem_config_kib"] = \
                float(d["launch__shared_mem_config_size"]) / 1024
    if seen != {"Sync", "Piped"}:
        raise EvidenceError(f"{path}: profiles for {sorted(seen)}, want both")


def pitfall_facts(pre, facts):
    """How many pitfall checks passed, and what caught the barrier variant."""
    text = read(f"{pre}-pitfalls.txt")
    m = re.search(r"^(\d+) passed, (\d+) failed", text, re.M)
    if not m:
        raise EvidenceError(f"{pre}-pitfalls.txt: no summary line")
    facts["pitfalls.passed"], facts["pitfalls.failed"] = map(int, m.groups())
    m = re.search(r"barrier-for-wait: memcmp run exit (\d+); racecheck exit "
                  r"(\S+)", text)
    if m:
        facts["pitfalls.barrier.memcmp_caught"] = m.group(1) == "1"
        facts["pitfalls.barrier.racecheck_caught"] = m.group(2) == "99"


def facts_for(pre):
    """(meta, facts) of the transcripts with prefix pre (.../gpu-<gpu>)."""
    stamp = litlib.read_stamp(read(f"{pre}-run-sm_80.txt"))
    toolkit = litlib.nvcc_version(stamp.get("toolkit", ""))[1]
    facts = {"gpu.name": stamp["gpu"],
             "gpu.compute_capability": stamp["compute_capability"],
             "gpu.driver": stamp["driver"], "gpu.toolkit": toolkit,
             "gpu.date": stamp["date_utc"][:10],
             "gpu.source_hash": stamp["source_sha256"][:12]}
    for reader in (run_facts, spread_facts, exercise_facts, sass_facts,
                   sanitizer_facts, probe_facts, ncu_facts, pitfall_facts):
        reader(pre, facts)
    wall = re.search(r"make run wall time: (\d+) ms",
                     read(f"{pre}-run-default.txt"))
    if wall:
        facts["run.default.wall_s"] = int(wall.group(1)) / 1000
    meta = {"kind": "gpu", "source_sha256": stamp["source_sha256"],
            "gpu": stamp["gpu"], "toolkit": stamp["toolkit"],
            "date": stamp["date_utc"],
            "transcript": f"evidence/{os.path.basename(pre)}-run-sm_80.txt"}
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
        pre = run[:-len("-run-sm_80.txt")]
        try:
            meta, facts = facts_for(pre)
        except (EvidenceError, KeyError, OSError, ValueError) as e:
            print(f"gpu_facts: {pre}: {e!s}", file=sys.stderr)
            return 1
        litlib.write_atomic(pre + ".facts.json", json.dumps(
            {"meta": meta, "facts": facts}, indent=1, sort_keys=True,
            ensure_ascii=False) + "\n")
        print(f"gpu_facts: {len(facts)} facts -> {pre}.facts.json")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
