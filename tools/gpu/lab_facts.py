"""lab_facts: one device call's open points (issue 22) as facts.

facts_for(folder, m) reads evidence/<m.lab.dir>/ (its README.md says what
ran) as tools/manifest.toml's [lab] lays it out; gpu_facts.main writes
the result to evidence/<m.lab.dir>.facts.json, with each fact's file (or
a glob of the files it is a median over) as Sourced records it. Values as
measured, no verdicts (tools/facts/derive.py judges them), no sentences:

- lab.cublas.RUN.MODE.N.{ms,ms_min,ms_max,gflops}: the kit's cuBLAS in
  both math modes, median (min, max) of the processes' median ms, RUN/
  A_times_p<i>.csv;
- lab.lds.W.PATTERN.{wf,conflicts}: shared-memory wavefronts and bank
  conflicts per shared-load instruction of W bytes (kit/B_ncu_w*.txt), and
  lab.lds.PATTERN.lanes4: the most distinct W-byte units any 4 consecutive
  lanes read, from pattern() in src/lds_bench.cu;
- lab.map.MAP.wf_per_lds (kit2/C_raw.txt, the profiled kernel of each lane
  map) and lab.map.MAP.N.{ms,ms_min,ms_max} of the [lab] map candidates;
- lab.depths.S.{ratio,ratio_min,ratio_max,sync_ms,piped_ms} over the
  interleaved rounds depths-S-R.csv, lab.depths.rounds, lab.depths.orders
  (each round's depths by piped/sync, fastest first, e.g. "3<2<4");
- lab.seed.{sync_ms,piped_ms} (median printed), .piped_ms_lo/.piped_ms_hi
  (the printed values widened by half their last digit), lab.seed.rounds,
  lab.seed.lesson.{piped_ms,piped_ms_min,piped_ms_max} (seed-lesson-R.csv);
- lab.loops.LOOP.sS.gpu: what make exercise-check on the GPU said of each
  wrong loop (wrong result, source check, missed, not run),
  lab.loops.good.passed, and lab.loops.LOOP.model_depth: the depth at
  which the CPU model first fails the loop's fixture, as
  tests/test_exercise.py's LOOPS (which that test asserts) gives it.
EvidenceError for a missing or malformed file. gpu_facts.py shares its
EvidenceError, Sourced, spread and the one reader of ncu's CSV,
ncu_records.
"""

import ast
import csv
import glob
import os
import re
import statistics

from tools import manifest
from litkit import litlib
from litkit.litlib import read_stamped_csv as read_csv, read_text

KIT_CSV = "A_times_p[0-9].csv"          # one process each (not p4_8192)
LDS_NCU = "kit/B_ncu_w*.txt"
MAP_NCU = "kit2/C_raw.txt"
WAVEFRONTS = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"
CONFLICTS = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"
LOADS = "smsp__sass_inst_executed_op_shared_ld.sum"
MODEL_TESTS = os.path.join("tests", "test_exercise.py")
EXIT = re.compile(r"^# exit status: (\d+)$", re.M)
# A pattern's expression: lane, q, w, whole numbers, + - * / % ^, brackets
LANE_EXPR = re.compile(r"(?:lane|[qw]|[\d\s+*/%^()-])+")


class EvidenceError(Exception):
    """A transcript or lab file is missing or not in the expected form."""


def transcript(path):
    """The step transcript a file of evidence-gpu.sh belongs to: X.txt
    for X.csv, X-R.csv or X-natural-R-P.csv (the first X.txt that
    exists, shortest suffix stripped first); else path itself (a glob)."""
    stem = os.path.splitext(path)[0]
    while True:
        if os.path.exists(stem + ".txt"):
            return stem + ".txt"
        shorter = re.sub(r"-(?:natural|\d+)$", "", stem)
        if shorter == stem:
            return path
        stem = shorter


class Sourced(dict):
    """Facts {name: value} and where each was read: origin[name] is the
    transcript() of the file (or the glob of files) named by the writer
    that set it, of(path); None: read from no file."""

    def __init__(self, *values):
        super().__init__(*values)
        self.origin = {}

    def of(self, path):
        """A writer (w[name] = value, w.update(pairs)) of facts read from
        path, a file or a glob of the files a fact is a median over."""
        return Writer(self, path and transcript(path))

    def sources(self, ev_dir):
        """{name: "evidence/FILE"} for the names read from a file, ev_dir
        being evidence/ (a file beside it: its path from the repository; a
        fact read from no file, or from one farther away, has none)."""
        out = {n: os.path.normpath(os.path.join("evidence", os.path.relpath(
            p, ev_dir))).replace(os.sep, "/")
            for n, p in sorted(self.origin.items()) if p}
        return {n: p for n, p in out.items() if not p.startswith("..")}


class Writer:
    """Sets facts of a Sourced, each with the one origin given."""

    def __init__(self, facts, origin):
        self.facts, self.origin = facts, origin

    def __setitem__(self, name, value):
        self.facts[name] = value
        self.facts.origin[name] = self.origin

    def update(self, pairs):
        for name, value in dict(pairs).items():
            self[name] = value


def spread(prefix, values, out, names=("", "_min", "_max")):
    """out[prefix<names>] = the median, min and max of values (a
    non-empty list of numbers)."""
    for name, fn in zip(names, (statistics.median, min, max)):
        out[prefix + name] = fn(values)


def ncu_records(text, first="ID"):
    """[{column: cell}] of an ncu transcript's quoted CSV lines: each row
    under a header row (first cell `first`: "ID" a raw page, whose units
    row is left out; "Address" the source page; "Line No" its CUDA view)
    with at least its cells (a source line with commas has more: its
    first cells count). A column named again gets a ' (the CUDA view's
    second Source: the SASS). A row of a name and a value before a table
    ("File Path", "Kernel Name") is a column of each row under it.
    Nsight Compute's CSV: ncu --csv (--page raw | --page source)."""
    header, context, out = None, {}, []
    for r in csv.reader(l for l in text.splitlines() if l.startswith('"')):
        if r[0] == first:
            header = [c + "'" * r[:i].count(c) for i, c in enumerate(r)]
        elif len(r) < 4:
            context[r[0]] = r[1]
        elif header and len(r) >= len(header) and (r[0] or first != "ID"):
            out.append({**context, **dict(zip(header, r))})
    return out


def cublas_facts(d, m, facts):
    """cuBLAS in both math modes per kit run, size and mode."""
    for run in m.lab.kit_runs:
        paths = sorted(glob.glob(os.path.join(d, run, KIT_CSV)))
        if not paths:
            raise EvidenceError(f"{d}/{run}: no {KIT_CSV}")
        rows = [r for p in paths for r in read_csv(p)[1]]
        out = facts.of(os.path.join(d, run, KIT_CSV))
        for mode in m.lab.cublas_modes:
            for n in m.lab.kit_sizes:
                got = [r for r in rows if r["n"] == n
                       and r["variant"] == f"cublas_{mode}"]
                if len(got) != len(paths):
                    raise EvidenceError(f"{d}/{run}: want cublas_{mode} at "
                                        f"N = {n} once in each of {paths}")
                b = f"lab.cublas.{run}.{mode}.{n}."
                spread(b + "ms", [r["median_ms"] for r in got], out)
                out[b + "gflops"] = statistics.median(
                    r["gflops"] for r in got)
        out[f"lab.cublas.{run}.processes"] = len(paths)


def candidate_ms(d, run, name, n):
    """The processes' median ms of the kit candidate name at size n."""
    got = [r["median_ms"] for p in sorted(glob.glob(os.path.join(
        d, run, KIT_CSV))) for r in read_csv(p)[1]
        if r["n"] == n and r["variant"] == name]
    if not got:
        raise EvidenceError(f"{d}/{run}: no {name} at N = {n}")
    return got


def per_load(row, metric):
    """metric per shared-load instruction of an ncu row."""
    return (float(row[metric].replace(",", "")) /
            float(row[LOADS].replace(",", "")))


def lane_units(source):
    """{pattern: [unit index of lane 0..31]} of the switch in pattern()
    of lds_bench.cu's text: `case P: return EXPR;` and a default, EXPR in
    lane, q = lane / 8 and w = lane % 8, C integer arithmetic."""
    body = source[source.index("constexpr int pattern("):]
    body = body[:body.index("\n}\n")]
    cases = re.findall(r"(case (\d+)|default): return ([^;]+);", body)
    if not cases:
        raise EvidenceError("lds_bench.cu: no pattern() switch")
    out, last = {}, -1
    for _, p, expr in cases:   # C's / of these non-negative ints: Python's //
        if not LANE_EXPR.fullmatch(expr):
            raise EvidenceError(f"lds_bench.cu: cannot read {expr}")
        code = compile(expr.strip().replace("/", "//"), "lds_bench.cu", "eval")
        p = int(p) if p else last + 1
        out[p] = [eval(code, {"__builtins__": {}}, {"lane": k, "q": k // 8,
                                                     "w": k % 8})
                  for k in range(32)]
        last = p
    return out


def lds_facts(d, m, facts):
    """Wavefronts and conflicts per load of each pattern and width, and
    the most distinct units of any 4 consecutive lanes."""
    source = read_text(os.path.join(d, "src", "lds_bench.cu"))
    names = re.search(r"kNames\[kPatterns\] = \{(.*?)\};", source, re.S)
    if not names or re.findall(r'"(\w+)"', names.group(1)) != \
            m.lab.lds_patterns:
        raise EvidenceError("lds_bench.cu: its patterns are not the "
                            "manifest's lab.lds_patterns")
    units, out = lane_units(source), facts.of(os.path.join(d, "src",
                                                       "lds_bench.cu"))
    for p, name in enumerate(m.lab.lds_patterns):
        out[f"lab.lds.{manifest.key(name)}.lanes4"] = max(
            len(set(units[p][i:i + 4])) for i in range(0, 32, 4))
    for path in sorted(glob.glob(os.path.join(d, LDS_NCU))):
        for row in ncu_records(read_text(path)):
            k = re.match(r"void ldsKernel<(\d+), (\d+)>", row["Kernel Name"])
            if k:
                name = m.lab.lds_patterns[int(k.group(2))]
                b = f"lab.lds.{k.group(1)}.{manifest.key(name)}."
                facts.of(path).update({b + "wf": per_load(row, WAVEFRONTS),
                                       b + "conflicts": per_load(row,
                                                                 CONFLICTS)})
    missing = [(w, p) for w in m.lab.lds_widths for p in m.lab.lds_patterns
               if f"lab.lds.{w}.{manifest.key(p)}.wf" not in facts]
    if missing:
        raise EvidenceError(f"{d}/{LDS_NCU}: no profile of {missing[:3]}")


def map_facts(d, m, facts):
    """Wavefronts per shared load of each lane map's profiled kernel
    (the MAP is Cfg's last argument), and the map candidates' times."""
    path = os.path.join(d, MAP_NCU)
    for row in ncu_records(read_text(path)):
        k = re.search(r"Cfg<[^>]*, (\d+)>", row["Kernel Name"])
        if k and k.group(1) in m.lab.map:
            facts.of(path)[f"lab.map.{k.group(1)}.wf_per_lds"] = per_load(
                row, WAVEFRONTS)
    for key, name in m.lab.map.items():
        if f"lab.map.{key}.wf_per_lds" not in facts:
            raise EvidenceError(f"{d}/{MAP_NCU}: no kernel of MAP {key}")
        for n in m.lab.kit_sizes:
            spread(f"lab.map.{key}.{n}.ms",
                   candidate_ms(d, m.lab.kit_runs[-1], name + ".piped", n),
                   facts.of(os.path.join(d, m.lab.kit_runs[-1], KIT_CSV)))


def depth_facts(d, m, facts):
    """The depths, interleaved in rounds: medians, ranges, each round's
    order."""
    n, = m.sizes["one"]
    rounds = {}
    for s in m.depths.exercise:
        paths = sorted(glob.glob(os.path.join(d, f"depths-{s}-*.csv")))
        if not paths:
            raise EvidenceError(f"{d}: no depths-{s}-*.csv")
        for p in paths:
            row = next((r for r in read_csv(p)[1] if r["n"] == n), None)
            if row is None:
                raise EvidenceError(f"{p}: no row for N = {n}")
            r = re.search(r"-(\d+)\.csv$", p).group(1)
            rounds.setdefault(int(r), {})[s] = row
    if any(len(v) != len(m.depths.exercise) for v in rounds.values()):
        raise EvidenceError(f"{d}: a round lacks a depth")
    out = facts.of(os.path.join(d, "depths-*.csv"))
    for s in m.depths.exercise:
        b, rows = f"lab.depths.{s}.", [rounds[r][s] for r in sorted(rounds)]
        spread(b + "ratio", [x["piped_over_sync"] for x in rows], out)
        for col in ("sync_ms", "piped_ms"):
            out[b + col] = statistics.median(x[col + "_median"] for x in rows)
    out["lab.depths.rounds"] = len(rounds)
    out["lab.depths.orders"] = " ".join(
        "<".join(str(s) for s in sorted(v, key=lambda s: v[s][
            "piped_over_sync"])) for _, v in sorted(rounds.items()))


def seed_facts(d, m, facts):
    """The seed's printed times at N (3 decimals: an interval), beside the
    lesson's piped kernel in the same call."""
    n, = m.sizes["one"]
    text = read_text(os.path.join(d, "seed.txt"))
    got = re.findall(rf"^N={n}\s+sync ([\d.]+) ms .*piped ([\d.]+) ms",
                     text, re.M)
    if not got:
        raise EvidenceError(f"{d}/seed.txt: no N={n} line")
    half = 0.5 * 10.0 ** -len(got[0][1].split(".")[1])
    piped = [float(p) for _, p in got]
    facts.of(os.path.join(d, "seed.txt")).update({
        "lab.seed.rounds": len(got),
        "lab.seed.sync_ms": statistics.median(float(s) for s, _ in got),
        "lab.seed.piped_ms": statistics.median(piped),
        "lab.seed.piped_ms_lo": min(piped) - half,
        "lab.seed.piped_ms_hi": max(piped) + half})
    paths = sorted(glob.glob(os.path.join(d, "seed-lesson-*.csv")))
    rows = [r for p in paths for r in read_csv(p)[1] if r["n"] == n]
    if not rows:
        raise EvidenceError(f"{d}: no seed-lesson-*.csv row at N = {n}")
    spread("lab.seed.lesson.piped_ms", [r["piped_ms_median"] for r in rows],
           facts.of(os.path.join(d, "seed-lesson-*.csv")))


def model_depths(root):
    """{fixture: depth} of LOOPS in tests/test_exercise.py under root."""
    tree = ast.parse(read_text(os.path.join(root, MODEL_TESTS)))
    node = next((s.value for s in tree.body if isinstance(s, ast.Assign)
                 and [getattr(t, "id", "") for t in s.targets] == ["LOOPS"]),
                None)
    if node is None:
        raise EvidenceError(f"{MODEL_TESTS}: no LOOPS table")
    return ast.literal_eval(node)


def loop_facts(d, m, facts, root="."):
    """The wrong loops on the GPU (what make exercise-check said), the
    solution's runs, and the CPU model's depth of each loop."""
    def said(path):
        if not os.path.exists(path):
            return "not run"
        text = read_text(path)
        rc = EXIT.search(text)
        if not rc:
            raise EvidenceError(f"{path}: no exit status")
        if (rc.group(1) == "0") == ("FAIL your loop" in text):
            raise EvidenceError(f"{path}: the exit status and the FAIL "
                                "lines disagree")
        if rc.group(1) == "0":
            return "missed"
        return ("wrong result" if "FAIL your loop computed a wrong result"
                in text else "source check")
    model = model_depths(root)
    for loop, fixture in m.lab.loops.items():
        if fixture not in model:
            raise EvidenceError(f"{MODEL_TESTS}: LOOPS has no {fixture}")
        b = f"lab.loops.{manifest.key(loop)}."
        facts.of(os.path.join(root, MODEL_TESTS))[b + "model_depth"] = \
            model[fixture]
        for s in m.lab.loop_depths:
            path = os.path.join(d, f"ex-{loop}-s{s}.txt")
            out = facts.of(path if os.path.exists(path) else None)
            out[f"{b}s{s}.gpu"] = said(path)
    good = sorted(glob.glob(os.path.join(d, "ex-good-s*.txt")))
    if not good:
        raise EvidenceError(f"{d}: no ex-good-s*.txt")
    facts.of(os.path.join(d, "ex-good-s*.txt")).update({
        "lab.loops.good.runs": len(good),
        "lab.loops.good.passed": all(said(p) == "missed" for p in good)})


def facts_for(d, m=None, root="."):
    """(meta, facts) of the lab folder d, as manifest m lays it out; root:
    the repository (for tests/test_exercise.py)."""
    m = m or manifest.load()
    stamp = litlib.read_stamp(read_text(os.path.join(d, "depths.txt")))
    if not re.fullmatch(r"[0-9a-f]{64}", stamp.get("source_sha256", "")):
        raise EvidenceError(f"{d}/depths.txt: no source_sha256 stamp")
    facts = Sourced()
    for reader in (cublas_facts, lds_facts, map_facts, depth_facts,
                   seed_facts):
        reader(d, m, facts)
    loop_facts(d, m, facts, root)
    # A dated record of one call at the commit its stamps name: the page
    # says which (gather never marks pinned evidence stale).
    if not re.fullmatch(r"[0-9a-f]{7,40}", stamp.get("commit", "")):
        raise EvidenceError(f"{d}/depths.txt: no commit stamp")
    meta = {"kind": "gpu", "source_sha256": stamp["source_sha256"],
            "pinned": stamp["commit"],
            "gpu": stamp.get("gpu", ""), "date": stamp["date_utc"],
            "transcript": f"evidence/{os.path.basename(d)}/README.md"}
    return meta, facts
