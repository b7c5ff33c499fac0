"""derive: Day 74's derived facts and every verdict on its predictions.

litkit/gather.py calls derive() (--derive tools.facts.derive), and
schema_rows() for each line of tools/facts/schema.tsv (its @{...} rows:
the manifest's lists, tools/manifest.py). Each put()
line is one fact: its name, the facts it reads, how it is computed from
their unrounded values; missing inputs, no fact ("not yet measured").
Verdicts are tokens, their sentences are in day74.nw: held / failed; no
measurable effect (the difference judged lies inside the run-to-run spread
of piped/sync, spread.2048.ratio_max - ratio_min); inconclusive (separate
processes on both sides); fused / not fused (prediction 4's question).
Depths, sizes, residency settings and the experiments' groups and claims:
tools/manifest.toml.

python3 -m tools.facts.derive FACTS: warn (stderr) of each evidence set
that the gathered facts (build/facts.json) mark as of other sources.
"""

import json
import os
import re
import sys
from tools import manifest

PREDICTED_RATIO = (0.75, 0.95)        # prediction 1: piped/sync at N = 2048
BLOCKED_TARGET = 92.0                 # % of cuBLAS the blocked pair aims at
CC80 = {"registers": 65536, "unit": 256, "warps": 64, "blocks": 32}
THREADS = 256
SPREAD = ["spread.2048.ratio_min", "spread.2048.ratio_max"]
FMA_PER_WAVEFRONT = 0.25  # 1 shared wavefront per 4 FMA instructions
SEED_FLOOR = 0.99         # issue 22: the lesson at 0.99x the seed's speed


schema_rows = manifest.schema_rows


def band(values, lo, hi):
    """held when every value lies in [lo, hi], failed when none does,
    inconclusive otherwise. values: numbers (unrounded)."""
    inside = [lo <= v <= hi for v in values]
    return "held" if all(inside) else "failed" if not any(inside) \
        else "inconclusive"


def residency_verdict(*values):
    """The gain shrinks as residency grows: at every size, piped/sync at 1
    block per SM lies below piped/sync at natural residency by more than
    the run-to-run spread. values: (max at 1 block, min at natural) per
    size, then the spread's lo and hi. held when every size agrees,
    failed when none does, inconclusive otherwise."""
    *pairs, lo, hi = values
    below = [one < nat - (hi - lo) for one, nat in zip(pairs[0::2],
                                                        pairs[1::2])]
    return ("held" if all(below) else "failed" if not any(below)
            else "inconclusive")


def gain(ratio):
    """The time a pipelined kernel saves, in percent of the synchronous
    kernel's time, from piped/sync (a ratio of median times): 100 x (1 -
    ratio); below 0 the pipelined kernel is slower. A gain of magnitude
    under 0.05 % is returned as 0.0, so that the page never shows "-0.0"."""
    g = 100 * (1 - ratio)
    return 0.0 if abs(g) < 0.05 else g


def held(ok):
    """The token for a prediction that holds when ok is true."""
    return "held" if ok else "failed"


def stages_verdict(r2, r3, r4, lo, hi):
    """Prediction 5: three stages match or beat two, four flat or worse.

    r2, r3, r4: piped/sync at 2, 3 and 4 stages; lo, hi: the spread of
    piped/sync over separate processes. Differences within hi - lo are
    noise: if both steps are, the answer is "no measurable effect".
    """
    spread = hi - lo
    if abs(r3 - r2) <= spread and abs(r4 - r3) <= spread:
        return "no measurable effect"
    return held(r3 <= r2 + spread and r4 >= r3 - spread)


def lds_wavefronts(width, lanes4):
    """Shared-memory wavefronts of one conflict-free shared load of width
    bytes (4, 8 or 16) whose lanes read at most lanes4 distinct width-byte
    words in any group of 4 consecutive lanes: max(ceil(width / 8),
    ceil(lanes4 * width / 16)), so max(2, lanes4) for LDS.128. A rule
    fitted to the H200 lab evidence (lab.lds.*, issue 22), checked by
    verdict.lds_rule; not a documented formula."""
    return max(-(-width // 8), -(-lanes4 * width // 16))


def order(ratios):
    """The depths by ratio, lowest (fastest) first, as a token "3<2<4".
    ratios: {depth: piped/sync}."""
    return "<".join(str(d) for d in sorted(ratios, key=ratios.get))


def clear_fastest(depths, *bounds):
    """The one of depths whose slowest process beat every other depth's
    fastest, or "none". bounds: each depth's piped/sync (min, max),
    flattened in the depths' order."""
    lo, hi = bounds[0::2], bounds[1::2]
    best = [d for i, d in enumerate(depths) if all(
        hi[i] < lo[j] for j in range(len(depths)) if j != i)]
    return str(best[0]) if best else "none"


def against(*bounds):
    """"faster at every depth" when, at every depth, a kernel file's
    slowest process beat the lesson's fastest (piped/sync), "slower at
    every depth" when its fastest lost to the lesson's slowest, else
    "not at every depth". bounds: per depth (its max, the lesson's min,
    its min, the lesson's max)."""
    q = [bounds[i:i + 4] for i in range(0, len(bounds), 4)]
    return "faster at every depth" if all(a < b for a, b, _, _ in q) else \
        "slower at every depth" if all(c > d for _, _, c, d in q) else \
        "not at every depth"


def interval_verdict(lo, hi, floor):
    """held when the interval [lo, hi] lies at or above floor, failed
    when it lies below, inconclusive when it straddles it."""
    return "held" if lo >= floor else "failed" if hi < floor \
        else "inconclusive"


def faster_mode(*q):
    """The faster cuBLAS math mode, judged on ranges: q holds (default
    min, max, pedantic min, max) per run and size, in ms; a mode wins a
    quadruple when its slowest process beat the other's fastest, else the
    two are level. "pedantic" or "default" when it wins every one, "MODE
    or level" when it wins some and the rest are level, "level", "mixed"."""
    won = {"pedantic" if pmax < dmin else "default" if dmax < pmin else
           "level" for dmin, dmax, pmin, pmax in zip(*[iter(q)] * 4)}
    return "mixed" if won >= {"pedantic", "default"} else " or ".join(
        sorted(won, key="level".__eq__))


def map_speed(*v):
    """The second lane map against the first: v holds the first's (min,
    max) ms per size, then the second's. faster when the second's slowest
    process beats the first's fastest at every size, slower when the
    reverse, no measurable effect otherwise."""
    half = len(v) // 2
    a, b = list(zip(v[:half:2], v[1:half:2])), list(zip(v[half::2],
                                                         v[half + 1::2]))
    if all(y[1] < x[0] for x, y in zip(a, b)):
        return "faster"
    if all(y[0] > x[1] for x, y in zip(a, b)):
        return "slower"
    return "no measurable effect"


def blocks_per_sm_cc80(registers):
    """Resident blocks per SM on compute capability 8.0 of a 256-thread
    kernel using `registers` per thread, from registers and warps alone
    (CUDA C++ Programming Guide, technical specifications: 65536
    registers per SM in units of 256 per warp, 64 warps, 32 blocks)."""
    warps = -(-THREADS // 32)
    per_warp = -(-registers * 32 // CC80["unit"]) * CC80["unit"]
    return min(CC80["registers"] // (per_warp * warps),
               CC80["warps"] // warps, CC80["blocks"])


CITED = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                     "cited.tsv")


def cited(path=CITED):
    """{name: (value, source)} of tools/facts/cited.tsv: facts the lesson
    quotes from other pages of the course, not measured here. Lines are
    NAME<TAB>VALUE<TAB>SOURCE; '#' starts a comment. ValueError names the
    line of a malformed entry."""
    out = {}
    with open(path, encoding="utf-8") as f:
        for no, line in enumerate(f, 1):
            if not line.strip() or line.startswith("#"):
                continue
            fields = line.rstrip("\n").split("\t")
            if len(fields) != 3 or not all(x.strip() for x in fields):
                raise ValueError(f"{path}:{no}: expected NAME<TAB>VALUE"
                                 "<TAB>SOURCE")
            try:
                value = float(fields[1])
            except ValueError as e:
                raise ValueError(f"{path}:{no}: {fields[1]!r} is not a "
                                 "number") from e
            out[fields[0]] = (value, fields[2])
    return out


class Put:
    """put(name, inputs, fn): the derived fact name = fn(the values of
    inputs), when every input is a fact or derived already (else no fact:
    "not yet measured"); .out {name: (value, inputs)}, .facts."""

    def __init__(self, facts):
        self.facts, self.out = facts, {}

    def __call__(self, name, inputs, fn):
        if inputs and all(i in self.facts or i in self.out for i in inputs):
            self.out[name] = (fn(*(self.out[i][0] if i in self.out else
                                   self.facts[i].value for i in inputs)),
                              inputs)

    def present(self, names):
        """The names that are facts."""
        return [n for n in names if n in self.facts]


def derive(facts, evidence):
    """{name: (value, inputs)} computed from facts ({name: Fact}) and the
    evidence list (objects with .meta and .stale), and {name: (value, [],
    source)} for the cited facts; see litkit/gather.py."""
    put, m = Put(facts), manifest.load()
    for part in (compile_facts, ncu_derived, gains):
        part(put, m)
    page_facts(put, evidence)
    for part in (verdicts, group_verdicts, lab_verdicts, depth_verdicts):
        part(put, m)
    put.out.update(card_verdicts(facts, evidence))
    return put.out


def compile_facts(put, m):
    """The compile facts' sums and differences, the FMA pipe's caps, the
    clock range, residency's slowdown, footprints, ncu's changes."""
    put("toolkit.version", ["compile.nvcc_version"], lambda v: v)
    for a in ("sm75", "sm80", "sm90"):
        put(f"ptx.{a}.cp_async.total",
            [f"ptx.{a}.{k}.total" for k in ("piped", "sync", "outside")],
            lambda *c: sum(c))
    for n in m.depths.compile:
        put(f"smem.stages{n}", [f"ptxas.sm80.s{n}.piped.smem"], lambda v: v)
    for kernel, build in (("piped", "s2.piped"), ("s4.piped", "s4.piped"),
                          ("sync", "sync")):
        put(f"occupancy.sm80.{kernel}.blocks_per_sm",
            [f"ptxas.sm80.{build}.registers"], blocks_per_sm_cc80)
    put("smem.stage_bytes", ["ptxas.sm80.s4.piped.smem",
                             "ptxas.sm80.s5.piped.smem"],
        lambda four, five: five - four)
    put("smem.fixed_bytes", ["ptxas.sm80.s4.piped.smem",
                             "ptxas.sm80.s5.piped.smem"],
        lambda four, five: five - 5 * (five - four))
    # Two caps on the FMA pipe: shared memory's (1 wavefront per 4 FMA
    # instructions) and the issue slots' (one instruction per scheduler and
    # cycle, so at most the FFMAs' share of the instructions executed).
    for k in ("sync", "piped"):
        b = f"ncu.basic.{k}."
        put(b + "fma_ceiling_pct", [b + "wavefronts_per_ffma"],
            lambda w: 100 * min(1, FMA_PER_WAVEFRONT / w))
        put(b + "ffma_issue_pct", [b + "op.ffma", b + "op.total"],
            lambda f, t: 100 * f / t)
        put(b + "per_warp_slice", [b + "op.total", "ncu.basic.warp_slices"],
            lambda t, w: t / w)
    put("ncu.basic.code_extra_per_warp_slice", [
        "ncu.basic.piped.code.s2.per_warp_slice", "ncu.basic.sync.op.total",
        "ncu.basic.warp_slices"], lambda p, s, w: p - s / w)
    put("clock.range_mhz", ["clock.min_mhz", "clock.max_mhz"],
        lambda lo, hi: f"{lo:.0f}" if lo == hi else f"{lo:.0f}–{hi:.0f}")
    for n in m.sizes["residency"]:
        put(f"residency.{n}.sync_slowdown", [f"residency.1.{n}.sync_ms",
                                             f"residency.natural.{n}.sync_ms"],
            lambda one, nat: one / nat)
    for n in m.sizes["large"]:
        put(f"run.footprint.{n}.mib", ["gpu.l2_mib"],
            lambda l2, n=n: 3 * n * n * 4 / 2**20)
    changes = {"inst": "inst_issued", "duration": "duration_ns",
               **{m: m for m in ("cpi", "warp_cycles", "cycles")}}
    for pair in ("basic", "blocked"):
        b = f"ncu.{pair}."
        for name, metric in changes.items():
            put(f"{b}{name}_change", [f"{b}sync.{metric}",
                                      f"{b}piped.{metric}"],
                lambda s, p: 100 * (p / s - 1))
        for k in ("sync", "piped"):
            put(f"{b}{k}.active_share", [f"{b}{k}.cycles",
                                         f"{b}{k}.elapsed_cycles"],
                lambda a, e: a / e)


def ncu_derived(put, m):
    """Shared-memory wavefronts and issue use from Nsight Compute's
    metrics; the card's FP32 peak and each rate's share of it."""
    # Wavefronts per 128-bit shared load, and the FMAs per such load at which
    # the shared-memory pipe (one wavefront per cycle) keeps pace with the FMA
    # pipe (4 warp instructions per cycle): wavefronts / (1/4).
    put("ncu.basic.extra_lds_per_warp_slice", [
        "ncu.basic.piped.op.lds", "ncu.basic.sync.op.lds",
        "ncu.basic.warp_slices"], lambda p, s, w: (p - s) / w)
    put("ncu.basic.sync.wavefronts_per_lds", ["ncu.basic.sync.wavefronts",
                                              "ncu.basic.sync.op.lds"],
        lambda w, lds: w / lds)
    # How busy shared memory and the issue slots were: wavefronts per SM and
    # elapsed cycle (at most 1), and instructions issued per scheduler and
    # active cycle (at most 1: one issue slot per scheduler per cycle).
    for b in ("ncu.basic.sync.", "ncu.basic.piped.", "ncu.thread.piped."):
        put(b + "wavefronts_per_sm_cycle", [b + "wavefronts", "gpu.sm_count",
                                            b + "elapsed_cycles"],
            lambda w, sms, cyc: w / (sms * cyc))
        put(b + "issue_use", [b + "inst_issued", "gpu.sm_count",
                              b + "cycles"],
            lambda n, sms, cyc: n / (4 * sms * cyc))
    put("ncu.basic.sync.fma_of_ceiling_pct", ["ncu.basic.sync.fma_pct",
                                              "ncu.basic.sync.fma_ceiling_pct"],
        lambda fma, ceiling: 100 * fma / ceiling)
    put("ncu.basic.ffma_per_lds_needed", ["ncu.basic.sync.wavefronts_per_lds"],
        lambda w: w / FMA_PER_WAVEFRONT)
    put("ncu.blocked.piped.wavefronts_per_lds", [
        "ncu.blocked.piped.wavefronts_per_ffma",
        "sass.sm90.blocked_piped.ffma", "sass.sm90.blocked_piped.lds128"],
        lambda w, ffma, lds: w * ffma / lds)
    # FP32 peak: SMs x FP32 FMA lanes per SM x 2 FLOP x clock (Programming
    # Guide, arithmetic instruction throughput: 128 lanes at CC 9.0).
    put("gpu.fp32_peak_tflops", ["gpu.sm_count", "gpu.max_sm_clock_mhz"],
        lambda sms, mhz: sms * 128 * 2 * mhz / 1e6)
    for b in ["blocked.4096."] + [f"wide.{n}." for n in m.sizes["wide"]]:
        for k in ("cublas", "piped"):
            put(f"{b}{k}_pct_peak", [f"{b}{k}_gflops",
                                     "gpu.fp32_peak_tflops"],
                lambda g, peak: g / 10 / peak)


def gains(put, m):
    """Every piped/sync ratio also as a gain (gain()), times in us, the
    stall reasons' shares."""
    facts = put.facts
    # Every piped/sync ratio also as a gain: the time saved, in percent of
    # the synchronous kernel's time (a range's ends swap: the largest ratio
    # is the smallest gain).
    suffixes = {"ratio": "gain", "ratio_min": "gain_max",
                "ratio_max": "gain_min"}
    for name in list(facts):
        stem, _, last = name.rpartition(".")
        value = facts[name].value
        if (last in suffixes and stem and not name.startswith("verdict.")
                and isinstance(value, (int, float))
                and not isinstance(value, bool)):
            put(f"{stem}.{suffixes[last]}", [name], gain)
    for n in m.sizes["run"]:
        for k in ("sync", "piped"):
            put(f"run.sm_80.{n}.{k}_us", [f"run.sm_80.{n}.{k}_ms"],
                lambda ms: 1000 * ms)
    for b in ("ncu.basic.sync.", "ncu.basic.piped.", "ncu.thread.piped."):
        reasons = [n for n in facts if n.startswith(b + "stall_cpi.")]
        for name in reasons:
            reason = name.rpartition(".")[2]
            put(f"{b}stall_share.{reason}", [name, b + "cpi"],
                lambda v, cpi: 100 * v / cpi)
            put(f"{b}stall_mcycles.{reason}", [name, b + "inst_issued"],
                lambda v, n: v * n / 1e6)


def page_facts(put, evidence):
    """The cited facts (cited.tsv) and what the page says of its evidence:
    page.evidence, page.stale, gpu.transcript, page.relayout,
    page.compile_stale, lab.date (the day of the pinned device call)."""
    facts, out, present = put.facts, put.out, put.present
    for name, (value, source) in cited().items():
        out[name] = (value, [], source)

    kinds = {e.meta["kind"] for e in evidence}
    out["page.evidence"] = (
        "gpu" if "gpu" in kinds else "compile-only" if kinds else "none",
        present(["gpu.name", "compile.nvcc_version"])[:1])
    put("page.stale", present(["gpu.name"]), lambda _: facts["gpu.name"].stale)
    # the transcript the GPU facts name as theirs (meta.transcript)
    runs = [e.meta["transcript"] for e in evidence if "gpu.name" in facts
            and e.meta.get("gpu") == facts["gpu.name"].value]
    if runs:
        out["gpu.transcript"] = (runs[0], ["gpu.name"])
    put("page.relayout", present(["gpu.name"]), lambda _: any(
        e.relayout for e in evidence if e.meta["kind"] == "gpu"))
    put("page.compile_stale", present(["compile.nvcc_version"]),
        lambda _: facts["compile.nvcc_version"].stale)
    dated = [e.meta["date"][:10] for e in evidence if e.meta.get("pinned")]
    if dated and "lab.depths.rounds" in facts:
        out["lab.date"] = (dated[0], ["lab.depths.rounds"])


def verdicts(put, m):
    """The predictions' verdicts (see the module docstring)."""
    facts, present = put.facts, put.present
    put("verdict.ratio", ["run.sm_80.2048.ratio"] + SPREAD,
        lambda r, lo, hi: band([r, lo, hi], *PREDICTED_RATIO))
    identical = [n for n in facts if n.startswith("run.")
                 and n.endswith(".identical")]
    put("verdict.memcmp", identical, lambda *same: held(all(same)))
    put("verdict.ldgsts", present(
        [f"gpu.sass.{b}.piped.ldgsts" for b in ("sm_90", "jit_equivalent")]
        + [f"sass.sm{a}.piped.ldgsts" for a in (80, 90)]),
        lambda *n: held(min(n) > 0))
    put("verdict.fusion", present(
        [f"gpu.sass.{b}.sync.ldgsts" for b in ("sm_80", "sm_90",
                                               "jit_equivalent")]
        + [f"sass.sm{a}.sync.ldgsts" for a in (80, 90)]),
        lambda *n: "fused" if max(n) > 0 else "not fused")
    one, = m.sizes["one"]
    depths = [f"stages.{d}.{one}.ratio{e}" for d in m.depths.exercise
              for e in ("", "_min", "_max")]
    put("verdict.stages", depths,
        lambda *v: stages_verdict(v[0], v[3], v[6], 0.0, max(
            v[i + 2] - v[i + 1] for i in (0, 3, 6))))
    sizes = m.sizes["residency"]
    put("verdict.residency",
        [f"residency.{b}.{n}.ratio_{e}" for n in sizes
         for b, e in (("1", "max"), ("natural", "min"))] + SPREAD,
        residency_verdict)
    arrives = [n for _, n, a in manifest.synccheck(m) if a]
    plain = [n for _, n, a in manifest.synccheck(m) if not a]
    put("verdict.synccheck",
        [f"synccheck.{k}.reports" for k in arrives + plain],
        lambda *r: held(all(r[:len(arrives)]) and not any(r[len(arrives):])))
    put("verdict.blocked_target", ["blocked.spread.4096.pct_min"],
        lambda pct: held(pct >= BLOCKED_TARGET))
    n = max(m.sizes["wide"])
    # The wide pair against cuBLAS at its largest N, per process: held when
    # its pipelined kernel reaches 100 % of cuBLAS in every process, failed
    # when below in every one, inconclusive when the processes disagree.
    put("verdict.wide", [f"wide.{n}.pct_cublas_min",
                         f"wide.{n}.pct_cublas_max"],
        lambda lo, hi: interval_verdict(lo, hi, 100))


def group_verdicts(put, m):
    """The verdict of each [group.NAME] of the manifest that has one:
    beats, loses_to (ranges apart at every residency and size), nearer
    (its median piped/sync nearer one group's than another's); the blocked
    pair's tile against the thread-scope loop's."""
    settings = list(m.residency.groups)
    for g in (g for g in m.groups if g.verdict):   # [group.NAME] verdict
        v, large = g.verdict, m.sizes["large"]
        if "nearer" in v:   # g's median nearer v["nearer"]'s than v["than"]'s
            near = [f"{x}.{b}.{n}.ratio" for b in settings for n in large
                    for x in (g.name, v["nearer"], v["than"])]
            put(f"verdict.{v['name']}", near, lambda *r: band(
                [abs(r[i] - r[i + 2]) - abs(r[i] - r[i + 1])
                 for i in range(0, len(r), 3)], 1e-12, 1e9))
            continue
        win, lose = ((g.name, v["beats"]) if "beats" in v
                     else (v["loses_to"], g.name))
        pairs = [f"{x}.{b}.{n}.ratio_{e}" for b in settings for n in large
                 for x, e in ((win, "max"), (lose, "min"))]
        put(f"verdict.{v['name']}", pairs, lambda *r: band(
            [r[i + 1] - r[i] for i in range(0, len(r), 2)], 1e-12, 1e9))
    # The blocked pair's larger tile against the lesson's, both on the
    # thread-scope loop (the exercise's solution) at the blocked pair's own
    # residency (2 blocks per SM) and at 1, at the largest N of both: "less"
    # when its median piped/sync is higher (a smaller gain) at both, "more"
    # when lower at both, else "mixed"; "not comparable" at another
    # residency.
    solution = next(g.name for g in m.groups
                    if g.kernel == "exercises/solution")
    n = max(set(m.sizes["large"]) & set(m.sizes["residency"]))
    put("verdict.blocked_tile", [
        "blocked.piped.blocks_per_sm", f"blocked.{n}.ratio",
        f"{solution}.2.{n}.ratio", f"blocked.b1.{n}.ratio",
        f"{solution}.1.{n}.ratio"], lambda bps, b2, l2, b1, l1:
        "not comparable" if bps != 2 else "less" if b2 > l2 and b1 > l1
        else "more" if b2 < l2 and b1 < l1 else "mixed")


# The verdicts judged on each card of tools/manifest.toml's [cards] apart
CARD_VERDICTS = ("ratio", "memcmp", "ldgsts", "stages", "residency",
                 "synccheck", "blocked_target", "wide")


def card_verdicts(facts, evidence):
    """{card.KEY.verdict.V: (token, [card.KEY.gpu.name])}: each verdict of
    CARD_VERDICTS and of the groups judged again on the facts of the one
    card KEY's evidence (meta.card) beside the facts no GPU made; sourced,
    and stale, as that card's gpu.name."""
    out, gpu = {}, {n for e in evidence if e.meta["kind"] == "gpu"
                    for n in e.facts}
    names = CARD_VERDICTS + tuple(g.verdict["name"] for g in
                                  manifest.load().groups if g.verdict)
    for ev in evidence:
        tag = f"card.{ev.meta.get('card')}."
        if tag + "gpu.name" not in facts:
            continue
        fact = type(facts[tag + "gpu.name"])
        view = {n: f for n, f in facts.items()
                if n not in gpu and not n.startswith("card.")}
        view.update({n: fact(v, (), ev.stale) for n, v in ev.facts.items()})
        judged = derive(view, [ev])
        for v in names:
            token = judged.get("verdict." + v)
            if token:
                out[f"{tag}verdict.{v}"] = (token[0], [tag + "gpu.name"])
    return out


def lab_verdicts(put, m):
    """The lab notes' derived facts and verdicts (one device call's open
    points, tools/gpu/lab_facts.py): cuBLAS's faster math mode, the
    wavefront rule, the lane maps, the seed, the wrong loops on the GPU
    (the depths: depth_verdicts). put: derive()'s."""
    lab = m.lab
    modes = [f"lab.cublas.{r}.{mode}.{n}.ms_{k}" for n in lab.kit_sizes
             for r in lab.kit_runs for mode in ("default", "pedantic")
             for k in ("min", "max")]
    for n in lab.kit_sizes:
        put(f"lab.cublas.{n}.faster", [x for x in modes if f".{n}." in x],
            faster_mode)
    put("verdict.cublas_mode", modes, lambda *q: re.sub(
        r"^(pedantic|default)", r"\1 faster", faster_mode(*q)))
    cases = [(w, manifest.key(p)) for w in lab.lds_widths
             for p in lab.lds_patterns]
    names = [f"lab.lds.{w}.{p}.{k}" for w, p in cases
             for k in ("wf", "conflicts")] + [
        f"lab.lds.{manifest.key(p)}.lanes4" for p in lab.lds_patterns]

    def checked(*v):   # (wf, lds_wavefronts) of each conflict-free case
        got = dict(zip(names, v))
        return [(got[f"lab.lds.{w}.{p}.wf"], lds_wavefronts(
            w, got[f"lab.lds.{p}.lanes4"])) for w, p in cases
            if got[f"lab.lds.{w}.{p}.conflicts"] == 0]
    put("lab.lds.rule_cases", names, lambda *v: len(checked(*v)))
    put("lab.lds.conflict_cases", names,
        lambda *v: len(cases) - len(checked(*v)))
    put("verdict.lds_rule", names, lambda *v: held(all(
        abs(wf - rule) < 0.01 for wf, rule in checked(*v))))
    put("lab.lds.lesson_wf", [f"lab.lds.16.{manifest.key(p)}.wf"
                              for p in lab.lesson_lds],
        lambda *wf: sum(wf) / len(wf))
    ms = {k: [f"lab.map.{k}.{n}.ms_{e}" for n in lab.kit_sizes
              for e in ("min", "max")] for k in lab.map}
    one_map, two_map = list(lab.map)[:2]
    put("verdict.map_speed", ms[one_map] + ms[two_map], map_speed)
    # the seed's printed interval over the lesson's range, ends crossed
    for end, other in (("lo", "max"), ("hi", "min")):
        put(f"lab.seed.speed_{end}", [f"lab.seed.piped_ms_{end}",
                                      f"lab.seed.lesson.piped_ms_{other}"],
            lambda seed, lesson: seed / lesson)
    put("verdict.seed", ["lab.seed.speed_lo", "lab.seed.speed_hi"],
        lambda lo, hi: interval_verdict(lo, hi, SEED_FLOOR))
    runs = [f"lab.loops.{manifest.key(x)}.s{s}.gpu" for x in lab.loops
            for s in lab.loop_depths]
    put("lab.loops.gpu_missed", runs, lambda *t: t.count("missed"))
    put("lab.loops.gpu_ran", runs,
        lambda *t: t.count("missed") + t.count("wrong result"))
    put("verdict.loops_gpu", runs + ["lab.loops.good.passed"],
        lambda *t: "control failed" if not t[-1] else "some missed"
        if "missed" in t else "all caught")


def depth_verdicts(put, m):
    """The depths' order over the lab's rounds and the committed calls,
    each swept kernel file's order, clearly fastest depth, gain span,
    first against last depth and against the lesson's, and the stages
    verdict over both calls. put: derive()'s."""
    depths, (one,) = m.depths.exercise, m.sizes["one"]
    put("verdict.depth_order", ["lab.depths.orders"],
        lambda o: "stable" if len(set(o.split())) == 1 else "unstable")
    now = [f"lab.depths.{d}.ratio" for d in depths]
    then = [f"stages.{d}.{one}.ratio" for d in depths]
    put("lab.depths.order", now, lambda *r: order(dict(zip(depths, r))))
    put("lab.depths.committed_order", then,
        lambda *r: order(dict(zip(depths, r))))
    swept = [k.name for k in m.kernels if k.swept]   # the lesson's first
    for i, k in enumerate(swept):
        for b, lesson in ((f"native.{k}.", f"native.{swept[0]}."),
                          (f"stages.{k}." if i else "stages.", "stages.")):
            mine = [f"{b}{d}.{one}.ratio" for d in depths]
            if b != "stages.":
                put(b + "order", mine, lambda *r: order(dict(zip(depths, r))))
            put(b + "clear_fastest", [f"{b}{d}.{one}.ratio_{e}" for d in
                                      depths for e in ("min", "max")],
                lambda *v: clear_fastest(depths, *v))
            put(b + "gain_span", mine, lambda *r: 100 * (max(r) - min(r)))
            put(b + "first_vs_last", [f"{b}{d}.{one}.ratio_{e}" for d in (
                depths[0], depths[-1]) for e in ("min", "max")],
                lambda lo1, hi1, lo2, hi2: "faster" if hi1 < lo2 else
                "slower" if lo1 > hi2 else "within the spread")
            if b != lesson:   # beside the lesson's, depth by depth
                put(b + "against_lesson", [
                    f"{p}{d}.{one}.ratio_{e}" for d in depths
                    for p, e in ((b, "max"), (lesson, "min"), (b, "min"),
                                 (lesson, "max"))], against)
    put("ncu.basic.piped.code.samples_order",
        [f"ncu.basic.piped.code.s{d}.samples" for d in depths],
        lambda *n: order(dict(zip(depths, n))))
    put("verdict.depth_order_calls", now + then, lambda *r: "same order"
        if order(dict(zip(depths, r))) == order(dict(zip(depths, r[3:])))
        else "other order")
    for d in depths:
        both = [f"{p}.{d}{n}.ratio_{e}" for p, n in (
            ("lab.depths", ""), ("stages", f".{one}")) for e in ("min", "max")]
        put(f"lab.depths.{d}.both_min", both, lambda *v: min(v))
        put(f"lab.depths.{d}.both_max", both, lambda *v: max(v))
    widths = [f"lab.depths.{d}.both_{e}" for d in depths
              for e in ("min", "max")]
    put("lab.depths.both_spread", widths, lambda *v: max(
        v[i + 1] - v[i] for i in range(0, len(v), 2)))
    put("verdict.stages_calls", now + ["lab.depths.both_spread"],
        lambda r2, r3, r4, sp: stages_verdict(r2, r3, r4, 0.0, sp))


def warn_stale(path):
    """Print a warning to stderr for each evidence set that the facts file
    at path (litkit/gather.py's JSON) marks stale: page.stale (the GPU
    evidence), page.compile_stale (the compile evidence). Returns 0;
    OSError or ValueError for a missing or unreadable file."""
    with open(path, encoding="utf-8") as f:
        facts = json.load(f)["facts"]
    for key, what, goal in (("stale", "GPU", "evidence-gpu"),
                            ("compile_stale", "compile", "evidence-compile")):
        if facts.get("page." + key, {}).get("text") == "yes":
            print(f"WARNING: the {what} evidence is of other sources (as "
                  "after any code edit: the tests still pass); the page "
                  f"marks it stale until make {goal} is run and committed",
                  file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(warn_stale(*sys.argv[1:]))
