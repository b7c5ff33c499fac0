"""checks: what the compiler emitted for the lesson's kernels, no GPU needed.

python3 -m tools.compile.checks CHECK --dir DIR ... (options: see main)
  sm80      DIR/[blocked-]ARCH-sN.ptx, .sass: no cp.async below sm_80; from
            sm_80 all in piped kernels, each with a global-to-shared copy
            (an mbarrier arrive is none) and LDGSTS; no LDGSTS in
            matmulBlockedSync. Records forms, FFMA, LDS.128, fusion.
  stages    DIR/[blocked-]ARCH-sN.ptxas.txt per depth, --refused ("exit=N",
            then nvcc's output): the piped kernel grows by one stage of
            tiles (4 kBlockK (kBlockM + kBlockN) of --tile-source) plus
            at most MAX_STATE_STEP bytes a stage, within LIMIT; the sync
            kernel is constant; the refused depth hits the 48 KiB
            static_assert; the blocked pair spills nothing, its sync kernel
            holds one stage (--blocked-source's constants), its piped one N
            (dynamic), past LIMIT at some depth, with OPT_IN.
  evidence  OUT-DIR/compile-nvcc-<release>.txt (transcript) and .facts.json
            from both reports (passing, of the lesson's program: LESSON) and
            every kernel file's ptxas -v, kept when only date and host change.
Depths by default: tools/manifest.toml's (the blocked pair's with
--blocked-source); --refused by default: DIR/sm_80-sN.refused.
sm80 and stages write JSON to --out and a summary to the .txt beside it
and to stdout. Exit: 0 all hold; 1 an assertion failed (evidence: an
input is missing or failed); 2 usage or unreadable input.
"""

import argparse
import json
import os
import re
import socket
import sys
import time
from collections import Counter

from tools import manifest
from tools.facts import derive
from litkit import litlib

KERNELS = {"piped": "matmulTilePiped", "sync": "matmulTileSync",
           "blocked_piped": "matmulBlockedPiped",
           "blocked_sync": "matmulBlockedSync", "wide_piped": "matmulWidePiped",
           "wide_sync": "matmulWideSync"}
TILE, BLOCKED = ("piped", "sync"), ("blocked_piped", "blocked_sync")
FAMILIES = ("copy", "mbarrier_arrive", "commit_group", "wait_group",
            "wait_all", "other")
SASS_OPS = ("LDGSTS", "LDG", "STS")
SASS_COLS = (*SASS_OPS, "FFMA", "LDS128")
LESSON = "build/pipelined_gemm.cu build/blocked_gemm.cu"   # what evidence
MAX_STATE_STEP = 64
LIMIT = 48 * 1024   # bytes of static shared memory a block may declare
OPT_IN = "cudaFuncAttributeMaxDynamicSharedMemorySize"   # to go past LIMIT
# A PTX function header (".visible .entry NAME(", ".func (.param..) NAME(").
PTX_HEADER = re.compile(
    r"^\s*(?:\.(?:visible|extern|weak)\s+)*\.(entry|func)\b(.*)$")
PTX_NAME = re.compile(r"([A-Za-z_$%][\w$%]*)\s*(?:\(|$)")
# The global-to-shared copy forms: .ca/.cg, with or without ::cta, and bulk.
COPY = re.compile(r"^cp\.async\.(?:(?:ca|cg)\.shared(?:::\w+)?\.global"
                  r"|bulk\.shared(?:::\w+)?\.global)")
# A SASS line: /*0120*/   @!P0 LDGSTS.E.BYPASS.128 [R3], [R4.64] ;
SASS_INSN = re.compile(r"^\s*/\*[0-9a-fA-F]{4,}\*/\s+(?:@!?U?P\w+\s+)?"
                       r"([A-Z][A-Z0-9_]*(?:\.[A-Z0-9_]+)*)")
PTXAS_ENTRY = re.compile(
    r"ptxas info\s*: Compiling entry function '([^']+)' for '(\w+)'")
PTXAS_SPILL = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill "
                         r"stores, (\d+) bytes spill loads")
PTXAS_USED = re.compile(r"ptxas info\s*: Used (\d+) registers(.*)$")
SPILLS = ("stack", "spill_stores", "spill_loads", "spill_bytes")


def kernel_role(name):
    """The KERNELS key a (mangled) function name or None names, else
    "outside" (also for a name naming two)."""
    roles = [r for r, k in KERNELS.items() if k in (name or "")]
    return roles[0] if len(roles) == 1 else "outside"


def by_role(per_function):
    """{function: value} regrouped as {role: [(function, value)]}."""
    out = {r: [] for r in (*KERNELS, "outside")}
    for name, value in sorted(per_function.items()):
        out[kernel_role(name)].append((name, value))
    return out


def fmt_forms(forms):
    """"2 x A, 1 x B" for a {form: count} dict ("" when empty)."""
    return ", ".join(f"{n} x {k}" for k, n in sorted(forms.items()))


def ptx_count(text, prefix="cp.async"):
    """The PTX instructions whose mnemonic with qualifiers (form) starts
    with prefix: {"functions": {name: {form: n}} (all, if only with {}),
    "outside": {form: n}, "grep_lines": lines holding prefix}; comments and
    "@%p" guards aside. ValueError when braces or a comment do not close."""
    functions, outside, current, pending, depth = {}, Counter(), None, None, 0
    # A block comment within a line becomes a space, one over several lines
    # leaves its line breaks; all after an unclosed "/*" is comment.
    code = re.sub(r"/\*.*?\*/", lambda m: "\n" * (len(m[0].splitlines()) - 1)
                  or " ", text, flags=re.S)
    code, in_comment, _ = code.partition("/*")
    for line in code.splitlines():
        line = line.split("//", 1)[0]
        m = PTX_HEADER.match(line) if depth == 0 else None
        if m:   # a .func may declare its return parameter first
            n = PTX_NAME.search(re.sub(r"^\s*\([^)]*\)", "", m.group(2)))
            pending = n.group(1) if n else None
            if pending:
                functions.setdefault(pending, Counter())
        for stmt in re.split(r"[;{}]", line) if prefix in line else ():
            op = (re.sub(r"^@!?%?\w+\s+", "", stmt.strip()).split() or [""])[0]
            if op.startswith(prefix):
                (functions[current] if depth and current else outside)[op] += 1
        opened, closed = line.count("{"), line.count("}")
        if depth == 0 and pending and ";" in line and not opened:
            if not functions[pending]:   # a declaration without a body
                del functions[pending]
            pending = None
        if depth == 0 and opened and pending:
            current, pending = pending, None
        depth += opened - closed
        if depth < 0:
            raise ValueError("unbalanced braces in PTX (more '}' than '{')")
        if depth == 0 and closed:
            current = None
    if depth or in_comment:
        raise ValueError("PTX ends inside a function or a comment")
    return {"functions": {k: dict(v) for k, v in functions.items()},
            "outside": dict(outside),
            "grep_lines": sum(prefix in x for x in text.splitlines())}


def form_family(form):
    """The FAMILIES entry of a cp.async form (copy: global to shared)."""
    if COPY.match(form):
        return "copy"
    for fam in ("mbarrier.arrive", "commit_group", "wait_group", "wait_all"):
        if form.startswith("cp.async." + fam):
            return fam.replace(".", "_")
    return "other"


def sass_opcodes(text):
    """Instruction forms per function of a `cuobjdump -sass` listing:
    {"arch": "sm_80" or None, "functions": {name: {LDGSTS.E.BYPASS.128:
    n}}}. ValueError when it names no function."""
    arch, current, functions = None, None, {}
    for line in text.splitlines():
        m = re.match(r"^\s*code for (sm_\d+\w*)", line)
        arch = arch or (m and m.group(1))
        if m := re.match(r"^\s*Function\s*:\s*(\S+)", line):
            current = functions.setdefault(m.group(1), Counter())
        elif (m := SASS_INSN.match(line)) and current is not None:
            current[m.group(1)] += 1
    if not functions:
        raise ValueError("no 'Function :' in the SASS (did cuobjdump fail?)")
    return {"arch": arch, "functions": functions}


def ptxas_report(text):
    """Per kernel in `nvcc -Xptxas -v` output: {name: {"registers" (per
    thread), "smem_bytes" (static, per block), SPILLS (bytes per thread;
    spill_bytes: stores plus loads)}}. ValueError for a kernel without
    "Used N registers"."""
    kernels, current = {}, None
    for line in text.splitlines():
        if m := PTXAS_ENTRY.search(line):
            current = kernels[m.group(1)] = dict.fromkeys(SPILLS, 0)
        elif current is None:
            continue
        elif m := PTXAS_SPILL.search(line):
            current.update(zip(SPILLS, map(int, m.groups())),
                           spill_bytes=int(m.group(2)) + int(m.group(3)))
        elif m := PTXAS_USED.search(line):
            smem = re.search(r"(\d+) bytes smem", m.group(2))
            current.update(registers=int(m.group(1)),
                           smem_bytes=int(smem.group(1)) if smem else 0)
            current = None
    for name, k in kernels.items():
        if "registers" not in k:
            raise ValueError("ptxas report: no 'Used N registers' for " + name)
    return kernels


def summarise(entries):
    """{"names", "forms", "families", "total"} of [(name, {form: n})]."""
    forms = sum((Counter(f) for _, f in entries), Counter())
    fam = dict.fromkeys(FAMILIES, 0)
    for k, v in forms.items():
        fam[form_family(k)] += v
    return {"names": [n for n, _ in entries], "families": fam,
            "forms": dict(sorted(forms.items())), "total": sum(forms.values())}


def check_ptx(arch, text, fail, want=TILE):
    """The cp.async of one PTX file, counted and checked for the kernels
    of roles want; fail(message) per finding. Returns the JSON record."""
    scan = ptx_count(text)
    roles = by_role(scan["functions"])
    rec = {r: summarise(roles[r]) for r in want}
    out = summarise(roles["outside"] + [("", scan["outside"])])
    out["names"] = [n for n, f in roles["outside"] if f] + (
        ["(outside any function)"] if scan["outside"] else [])
    rec.update(outside=out, grep_lines=scan["grep_lines"],
               total=sum(rec[r]["total"] for r in want) + out["total"])
    mb = by_role(ptx_count(text, "mbarrier.")["functions"])
    rec["mbarrier"] = {r: summarise(mb[r])["forms"] for r in want}
    for role in want:
        if not rec[role]["names"]:
            fail(f"{arch} PTX: no function named like {KERNELS[role]}; is "
                 "this the lesson's program?")
    if int(re.sub(r"\D", "", arch) or 0) < 80:
        if rec["total"]:
            where = "; ".join(f"{r}: {fmt_forms(rec[r]['forms'])}" for r in
                              (*want, "outside") if rec[r]["total"])
            fail(f"{arch} PTX: {rec['total']} cp.async instruction(s) where "
                 f"none can exist (cp.async needs sm_80): {where}")
        return rec
    for role in (r for r in want if r.endswith("sync")):
        if rec[role]["total"]:
            fail(f"{arch} PTX: {KERNELS[role]} holds {rec[role]['total']} "
                 f"cp.async ({fmt_forms(rec[role]['forms'])}); its fill must"
                 " go through registers")
    if out["total"]:
        fail(f"{arch} PTX: {out['total']} cp.async outside the kernels, "
             f"in {', '.join(out['names'])} ({fmt_forms(out['forms'])})")
    for role in (r for r in want if r.endswith("piped")):
        if rec[role]["names"] and rec[role]["families"]["copy"] == 0:
            fail(f"{arch} PTX: {KERNELS[role]} holds no global-to-shared "
                 "cp.async (cp.async.ca/.cg.shared.global), so its fill goes"
                 " through registers; found there: "
                 f"{fmt_forms(rec[role]['forms']) or 'no cp.async at all'}")
    return rec


def check_sass(arch, text, fail, want=TILE):
    """SASS_COLS (SASS_OPS with their forms) per kernel of roles want in one
    SASS listing; fail(message) for a piped kernel without LDGSTS or a
    blocked sync kernel with some. Returns {role: {...}}."""
    scan = sass_opcodes(text)
    if scan["arch"] and scan["arch"] != arch:
        fail(f"{arch} SASS: the listing is for {scan['arch']}, not {arch}")
    roles, rec = by_role(scan["functions"]), {}
    for role in want:
        forms = summarise(roles[role])["forms"]
        r = rec[role] = {op: sum(n for k, n in forms.items()
                                 if k.split(".")[0] == op)
                         for op in SASS_COLS[:-1]}
        r.update(names=[n for n, _ in roles[role]], LDS128=sum(
            n for k, n in forms.items() if k in ("LDS.128", "LDS.U.128")),
            forms={k: n for k, n in forms.items()
                   if k.split(".")[0] in SASS_OPS})
        if not r["names"]:
            fail(f"{arch} SASS: no function named like {KERNELS[role]}")
        elif role.endswith("piped") and r["LDGSTS"] == 0:
            fail(f"{arch} SASS: {KERNELS[role]} holds no LDGSTS, so no copy "
                 "bypasses the registers; its global/shared traffic is "
                 f"{fmt_forms(r['forms']) or 'none'}")
        elif role == "blocked_sync" and r["LDGSTS"]:
            fail(f"{arch} SASS: {KERNELS[role]} holds {r['LDGSTS']} LDGSTS: "
                 "ptxas fused its fill, so the blocked pair compares "
                 "nothing")
    return rec


def sm80(a, fail):
    """The sm80 check of a's files: (result dict, summary lines)."""
    def read(arch, ext):   # the lesson's file, then the blocked pair's
        return "\n".join(litlib.read_text(os.path.join(
            a.dir, f"{u}{arch}-s{a.stages}.{ext}")) for u in units)
    want, units = (TILE + BLOCKED, ("", "blocked-")) if a.blocked else (
        TILE, ("",))
    res = {"source": a.source, "stages": a.stages, "blocked": a.blocked,
           "ptx": {x: check_ptx(x, read(x, "ptx"), fail, want) for x in a.ptx},
           "sass": {x: check_sass(x, read(x, "sass"), fail, want)
                    for x in a.sass}}
    lines = [f"sm80-check of {a.source} (STAGES={a.stages})"]
    for arch, rec in res["ptx"].items():
        lines.append(f"  PTX {arch}: {rec['total']} cp.async instruction(s) "
                     f"(lines containing 'cp.async': {rec['grep_lines']})")
        lines += [f"    {KERNELS.get(r, r):18s} {rec[r]['total']:3d}  "
                  f"{fmt_forms(rec[r]['forms']) or '-'}" for r in
                  (*want, "outside") if rec[r]["total"] or r != "outside"]
        lines += [f"    ({KERNELS[r]} also holds, not cp.async: "
                  f"{fmt_forms(rec['mbarrier'][r])})" for r in want
                  if rec["mbarrier"][r]]
    for arch, rec in res["sass"].items():
        lines.append(f"  SASS {arch}: " + (
            "ptxas fused matmulTileSync's LDG + STS into an LDGSTS"
            if rec["sync"]["LDGSTS"] else "matmulTileSync keeps its LDG + "
            "STS (ptxas fused none into an LDGSTS)") + " (recorded, not "
            "checked)")
        lines += [f"    {KERNELS[r]:18s} " + " ".join(
            f"{op}={rec[r][op]}" for op in SASS_COLS)
            + f"  {fmt_forms(rec[r]['forms']) or '-'}" for r in want]
    return res, lines


def stage_bytes(source, prefix):
    """Bytes of one stage of a pair's float tiles, 4 K (M + N), from the
    constexpr ints prefixK, prefixM, prefixN in source (text): kBlock for
    the lesson's pair, kBlocked for the blocked one; ValueError when one
    is missing."""
    c = dict(re.findall(rf"constexpr\s+int\s+({prefix}[KMN])\s*=\s*(\d+)"
                        r"\s*;", source))
    if len(c) != 3:
        raise ValueError(f"the source lacks constexpr int {prefix}K, "
                         f"{prefix}M or {prefix}N")
    k, m, n = (int(c[prefix + x]) for x in "KMN")
    return 4 * k * (m + n)


def analyse_blocked(reports, source, fail):
    """Check the blocked pair's ptxas reports ({arch: {depth: report}})
    against source, its file's and the launch path's text; fail(message)
    per finding; ValueError from stage_bytes. Returns the result dict."""
    table, over, stage = {}, set(), stage_bytes(source, "kBlocked")
    for arch, by_depth in reports.items():
        table[arch] = {}
        for n in sorted(by_depth):
            ks = {kernel_role(f): dict(k) for f, k in by_depth[n].items()}
            if not all(r in ks for r in BLOCKED):
                fail(f"{arch} STAGES={n}: no ptxas report for the blocked pair")
                continue
            row = table[arch][str(n)] = {r: ks[r] for r in BLOCKED}
            p, q = row.values()
            p.update(dynamic_bytes=n * stage,
                     total_bytes=n * stage + p["smem_bytes"])
            over |= {n} if p["total_bytes"] > LIMIT else set()
            if p["spill_bytes"] + q["spill_bytes"]:
                fail(f"{arch} STAGES={n}: the blocked pair spills "
                     f"{p['spill_bytes'] + q['spill_bytes']} bytes")
            if q["smem_bytes"] != stage:
                fail(f"{arch} STAGES={n}: matmulBlockedSync declares "
                     f"{q['smem_bytes']} bytes of shared memory, not one "
                     f"stage ({stage} from kBlockedK, kBlockedM, kBlockedN)")
    if not over:
        fail(f"matmulBlockedPiped fits the {LIMIT}-byte static ceiling at "
             "every depth: nothing calls for dynamic shared memory")
    elif OPT_IN not in source:
        fail(f"matmulBlockedPiped needs more than {LIMIT} bytes from "
             f"STAGES={min(over)} on, but its source never sets {OPT_IN}")
    return {"stage_bytes": stage, "table": table,
            "over_limit_from": min(over, default=None)}


# CUDA C++ Programming Guide, "Technical Specifications per Compute
# Capability": shared memory per SM (bytes), per block with the opt-in,
# reserved per block by the system; registers and warps are those of
# tools/facts/derive.py's rule, the same on 8.0 and 9.0.
SMEM_PER_SM = {"sm_80": 164 * 1024, "sm_90": 228 * 1024}
SMEM_OPT_IN = {"sm_80": 163 * 1024, "sm_90": 227 * 1024}
SMEM_RESERVED = 1024


def blocks_per_sm(arch, registers, smem_bytes):
    """Resident blocks per SM of a 256-thread kernel using
    `registers` per thread and `smem_bytes` of shared memory per block
    (static plus dynamic) on arch (sm_80, sm_90): the least of the
    register, warp, block and shared-memory limits (module constants);
    0 past the opt-in limit (the launch fails)."""
    if smem_bytes > SMEM_OPT_IN[arch]:
        return 0
    return min(derive.blocks_per_sm_cc80(registers),
               SMEM_PER_SM[arch] // (smem_bytes + SMEM_RESERVED))


def deep_rows(a, fail, tile):
    """Part 1's dynamic version at a.deep_stages: {arch: {depth: {...}}}
    from DIR/deep-ARCH-sN.ptxas.txt, and the summary lines."""
    table, lines = {}, ["  part 1, the stages in dynamic shared memory "
                        "(exercises/deep-solution.cu): STAGES x "
                        f"{tile} B dynamic + static pipeline state"]
    for arch in a.arch:
        for n in a.deep_stages:
            ks = by_role(ptxas_report(litlib.read_text(os.path.join(
                a.dir, f"deep-{arch}-s{n}.ptxas.txt"))))
            if len(ks["piped"]) != 1:
                fail(f"{arch} STAGES={n}: no ptxas report for the deep "
                     "piped kernel")
                continue
            p = ks["piped"][0][1]
            total = p["smem_bytes"] + n * tile
            row = dict(p, dynamic_bytes=n * tile, total_bytes=total,
                       blocks_per_sm=blocks_per_sm(arch, p["registers"],
                                                   total))
            table.setdefault(arch, {})[str(n)] = row
            lines.append(
                f"  {arch} STAGES={n}: matmulTilePiped {p['registers']} "
                f"regs, {p['smem_bytes']} B static + {n * tile} B dynamic "
                f"= {total} B, {row['blocks_per_sm']} blocks/SM; spills "
                f"{p['spill_bytes']} B")
    return table, lines


def reports(a, unit, depths):
    """{arch: {depth: ptxas_report}} of a's unit (prefix) at depths."""
    return {arch: {n: ptxas_report(litlib.read_text(os.path.join(
        a.dir, f"{unit}{arch}-s{n}.ptxas.txt"))) for n in depths}
        for arch in a.arch}


def depth_table(a, fail, tile):
    """({arch: {depth: {role: ptxas report}}}, the piped kernel's steps
    of shared memory per stage) of the lesson's pair: fail(message) when
    a report is missing, depths are not consecutive, a step is not one
    stage of tiles plus a little state, or a depth exceeds the ceiling."""
    table, steps = {}, set()
    for arch, by_depth in reports(a, "", a.stages).items():
        rows = {}
        for n in sorted(by_depth):
            ks = by_role(by_depth[n])
            rows[n] = {r: ks[r][0][1] for r in TILE if len(ks[r]) == 1}
            for role in (r for r in TILE if r not in rows[n]):
                fail(f"{arch} STAGES={n}: no ptxas report for the {role}"
                     " kernel")
        piped = [(n, r["piped"]["smem_bytes"]) for n, r in rows.items()
                 if "piped" in r]
        for (n0, b0), (n1, b1) in zip(piped, piped[1:]):
            steps.add(b1 - b0)
            if n1 != n0 + 1:
                fail(f"{arch}: depths {n0} and {n1} are not consecutive")
            elif not tile <= b1 - b0 <= tile + MAX_STATE_STEP:
                fail(f"{arch}: matmulTilePiped goes from {b0} bytes at "
                     f"STAGES={n0} to {b1} at STAGES={n1}, a step of "
                     f"{b1 - b0}; one stage of tiles is {tile}, plus at most "
                     f"{MAX_STATE_STEP} of pipeline state")
        if len(steps) > 1:
            fail(f"{arch}: the step per stage is not constant: "
                 f"{sorted(steps)}")
        for n, b in piped:
            rows[n]["piped"]["state_bytes"] = b - n * tile
            if b > LIMIT:
                fail(f"{arch} STAGES={n}: {b} bytes exceed the {LIMIT}-byte "
                     "static ceiling")
        if len({r["sync"]["smem_bytes"] for r in rows.values()
                if "sync" in r}) > 1:
            fail(f"{arch}: matmulTileSync's shared memory changes with STAGES")
        table[arch] = {str(n): r for n, r in rows.items()}
    return table, steps


def stages(a, fail):
    """The stages check of a's files: fail(message) per finding; returns
    (result dict, summary lines)."""
    first, _, text = litlib.read_text(a.refused).partition("\n")
    m = re.fullmatch(r"exit=(\d+)", first.strip())
    if not m:
        raise ValueError(f"{a.refused}: first line is not 'exit=N'")
    status = int(m.group(1))
    tile = stage_bytes(litlib.read_text(a.tile_source), "kBlock")
    table, steps = depth_table(a, fail, tile)
    step = steps.pop() if len(steps) == 1 else None
    msgs = re.findall(r'static assertion failed with "((?:[^"\\]|\\.)*)"',
                      text)
    ceiling = [m for m in msgs if "48 KiB" in m]
    if status == 0:
        fail("the deepest depth compiled (exit 0); it should be refused")
    elif not ceiling:
        fail("the deepest depth was refused, but not by the 48 KiB "
             "static_assert; compiler said: " +
             (" | ".join(msgs) or text.strip()[:300]))
    res = {"tile_bytes": tile, "limit_bytes": LIMIT, "table": table,
           "source": " ".join(filter(None, (a.tile_source,
                                            a.blocked_source))),
           "step_bytes": step, "refused_stages": a.refused_stages,
           "state_step_bytes": None if step is None else step - tile,
           "refused": {"exit": status, "all_static_asserts": msgs,
                       "static_assert": ceiling[0] if ceiling else None}}
    lines = stage_lines(table, tile, step, a.refused_stages, status,
                        res["refused"]["static_assert"])
    if a.deep_stages:
        res["deep"], more = deep_rows(a, fail, tile)
        lines += more
    if a.blocked_stages:
        res["blocked"] = b = analyse_blocked(reports(
            a, "blocked-", a.blocked_stages), litlib.read_text(
                a.blocked_source) + litlib.read_text(a.tile_source), fail)
        lines += blocked_lines(b)
    return res, lines


def stage_lines(table, tile, step, refused, status, static_assert):
    """stage-limits' summary of the lesson's pair and the refused depth."""
    lines = ["stage-limits: static shared memory per block (ptxas -v)"]
    for arch, rows in table.items():
        lines.append(f"  {arch}  STAGES  piped smem  piped regs  sync smem  "
                     f"(piped = STAGES x {tile} B + pipeline state)")
        lines += [f"        {n:>6s}  {p.get('smem_bytes', '?'):>10}  "
                  f"{p.get('registers', '?'):>10}  "
                  f"{s.get('smem_bytes', '?'):>9}  state "
                  f"{p.get('state_bytes', '?')} B" for n, row in rows.items()
                  for p, s in [(row.get("piped", {}), row.get("sync", {}))]]
    if step is not None:
        lines.append(f"  each stage adds {step} bytes: {tile} of tiles, "
                     f"{step - tile} of pipeline state")
    lines.append(f"  STAGES={refused} with -DALLOW_DEEP_PIPELINE: "
                 f"nvcc exit {status}: \"{static_assert}\"")
    return lines


def blocked_lines(b):
    """stage-limits' summary of the blocked pair (analyse_blocked's b)."""
    lines = [f"  blocked pair: one stage = 4 x kBlockedK x (kBlockedM"
             f" + kBlockedN) = {b['stage_bytes']} B, dynamic"]
    for arch, rows in b["table"].items():
        for n, (p, q) in ((n, r.values()) for n, r in rows.items()):
            t = p["total_bytes"]
            lines.append(
                f"  {arch} STAGES={n}: matmulBlockedPiped {p['registers']}"
                f" regs, {p['smem_bytes']} B static + {p['dynamic_bytes']}"
                " B dynamic" + (t > LIMIT and " (over 48 KiB: opt-in)" or
                                t == LIMIT and " (= the 48 KiB ceiling)"
                                or "") + f"; matmulBlockedSync "
                f"{q['registers']} regs, {q['smem_bytes']} B; spills "
                f"{p['spill_bytes'] + q['spill_bytes']} B")
    return lines


# ---- the compile evidence, from the reports of both checks ---------------
FIRST_LINE = "compile-only: no GPU executed anything in this file"
STAGES = 2
MBARRIER_OPS = ("arrive", "init", "inval", "test_wait", "try_wait")


def facts_of(check, limits, release, full, ptxas):
    """The facts of the checks' JSON reports and of ptxas ({arch: {kernel:
    ptxas_report}} of every kernel file): {name: number or token}."""
    facts = {"compile.nvcc_version": full, "compile.nvcc_release": release}
    for arch, rec in check["ptx"].items():
        a = "ptx." + arch.replace("_", "")
        facts[a + ".grep_lines"] = rec["grep_lines"]
        facts.update({f"{a}.{r}.total": rec[r]["total"]
                      for r in (*KERNELS, "outside") if r in rec})
        if int(arch[3:]) >= 80:
            ops = dict.fromkeys(MBARRIER_OPS + ("other",), 0)
            for form, n in rec["mbarrier"]["piped"].items():
                op = form.split(".")[1]
                ops[op if op in MBARRIER_OPS else "other"] += n
            facts.update({f"{a}.piped.{f}": n for f, n in
                          rec["piped"]["families"].items()})
            facts.update({f"{a}.piped.mbarrier.{o}": n
                          for o, n in ops.items()})
    for arch, rec in check["sass"].items():
        facts.update({f"sass.{arch.replace('_', '')}.{r}.{op.lower()}":
                      rec[r][op] for r in KERNELS if r in rec
                      for op in SASS_COLS})
    blocked = limits.get("blocked")
    spill = 0
    for table, (piped, sync) in [(limits["table"], TILE)] + (
            [(blocked["table"], BLOCKED)] if blocked else []):
        for arch, rows in table.items():
            for n, row in rows.items():
                base = f"ptxas.{arch.replace('_', '')}.s{n}.{piped}"
                facts[base + ".smem"] = row[piped]["smem_bytes"]
                facts[base + ".registers"] = row[piped]["registers"]
                spill += row[piped]["spill_bytes"] + row[sync]["spill_bytes"]
                if "dynamic_bytes" in row[piped]:
                    facts[f"stages.blocked.s{n}.dynamic_bytes"] = \
                        row[piped]["dynamic_bytes"]
    for arch, kernels in ptxas.items():   # no table holds the wide pair
        for name, k in kernels.items():
            role = kernel_role(name)
            facts.update({f"ptxas.{arch.replace('_', '')}.{role}."
                          f"{r.removesuffix('_bytes')}": k[r] for r in
                          ("registers", "smem_bytes", *SPILLS[:3])})
            spill += k["spill_bytes"] if role.startswith("wide") else 0
    if blocked:
        facts["stages.blocked.stage_bytes"] = blocked["stage_bytes"]
    facts.update({"ptxas.spill_bytes": spill,
                  "stages.step_bytes": limits["step_bytes"],
                  "stages.state_step_bytes": limits["state_step_bytes"],
                  "stages.refused_at": limits["refused_stages"]})
    return facts


def heading(a, date, source_hash, version):
    """The compile evidence transcript's first lines: what made it, when,
    where, from which sources, with which nvcc and cuobjdump."""
    L = [FIRST_LINE, f"date: {date}", f"host: {socket.gethostname()}",
         f"source sha256: {source_hash}", "  (build/source.sha256: sha256 "
         "of the clean tangled program sources)",
         f"made by: make evidence-compile, from {a.dir}/", "",
         f"$ {a.nvcc} --version", version]
    if a.cuobjdump:
        try:
            tool = litlib.run_version(a.cuobjdump).strip().splitlines()
            L.append(f"cuobjdump: {a.cuobjdump}: {tool[max(len(tool) - 2, 0)]}")
        except OSError as e:
            L.append(f"cuobjdump: (not run: {e})")
    return L


def build(a):
    """(transcript, facts document, release) from the inputs in a.dir."""
    def read(name):
        return litlib.read_text(os.path.join(a.dir, name))

    def report(name):   # (JSON, text) of a passing check's report
        obj = json.loads(read(name + ".json"))
        if not obj.get("ok"):
            raise ValueError(f"{name} records failed assertions; evidence is "
                             "only written from passing checks")
        return obj, read(name + ".txt")
    check, check_text = report(f"sm80-check-s{STAGES}")
    limits, limits_text = report("stage-limits")
    for r in (check, limits):
        if r.get("source") != LESSON:
            raise ValueError(f"{r.get('source')} are not the lesson's "
                             f"program ({LESSON})")
    sass, refused = sorted(limits["table"]), limits["refused_stages"]
    cubins = [f"{u}{x}-s{n}" for u, r in (("", limits),
                                          ("blocked-", limits.get("blocked")))
              if r for x in sass for n in sorted(map(int, r["table"][sass[0]]))
              ] + [f"wide-{x}-s{STAGES}" for x in sass]
    both = ("", "blocked-") if check.get("blocked") else ("",)
    version = litlib.run_version(a.nvcc).strip()
    release, full = litlib.nvcc_version(version)
    source_hash = litlib.read_text(a.source_hash).strip()
    if not re.fullmatch(r"[0-9a-f]{64}", source_hash):
        raise ValueError(f"{a.source_hash} holds no sha256")
    date = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    L = heading(a, date, source_hash, version)
    L += ["", "== Commands (each output under a temporary name, renamed) =="]
    L += ["$ " + read(name + ".cmd").strip() for name in
          [f"{u}{x}-s{STAGES}.ptx" for u in both for x in check["ptx"]]
          + [c + ".cubin" for c in cubins]
          + [f"{u}{x}-s{STAGES}.sass" for u in both for x in check["sass"]]
          + [f"sm_80-s{refused}.refused"]]
    L += ["", "== The checks' reports ==", check_text + limits_text,
          "== ptxas -v, verbatim (without 'Compile time') =="]
    for c in cubins:
        path = os.path.join(a.dir, c + ".ptxas.txt")
        L += [f"-- {path}"] + ["   " + x for x in litlib.read_text(
            path).splitlines() if "Compile time" not in x]
    L += ["", f"== STAGES={refused} with -DALLOW_DEEP_PIPELINE: the "
          "compiler's output, verbatim =="]
    L += [x for x in read(f"sm_80-s{refused}.refused.log").splitlines() if x]
    facts = facts_of(check, limits, release, full, {x: {
        k: v for u in ("", "blocked-", "wide-") for k, v in ptxas_report(
            read(f"{u}{x}-s{STAGES}.ptxas.txt")).items()} for x in sass})
    L += ["", f"== Facts (also in compile-nvcc-{release}.facts.json) =="]
    L += [f"{k} = {v}" for k, v in sorted(facts.items())]
    tokens = litlib.read_text(a.source_tokens).strip()
    if not re.fullmatch(r"[0-9a-f]{64}", tokens):
        raise ValueError(f"{a.source_tokens} holds no token digest")
    meta = {"kind": "compile", "source_sha256": source_hash,
            "source_tokens": tokens,
            "toolkit": f"nvcc {full}", "gpu": "none (compile-only)",
            "date": date, "transcript": os.path.join(
                a.out_dir, f"compile-nvcc-{release}.txt")}
    return "\n".join(L) + "\n", {"meta": meta, "facts": facts}, release


def unchanged(path, text):
    """True when path holds text apart from its date and host lines."""
    def strip(t):
        return re.sub(r'(?m)^(date: |host: |\s*"date": ).*$', "", t)
    try:
        return strip(litlib.read_text(path)) == strip(text)
    except OSError:
        return False


def evidence(a):
    """Write the compile evidence (see the module docstring); exit status."""
    try:
        text, facts, release = build(a)
    except (OSError, ValueError) as e:
        print(f"evidence-compile: {e}", file=sys.stderr)
        return 1
    base = os.path.join(a.out_dir, f"compile-nvcc-{release}")
    facts_text = json.dumps(facts, indent=1, sort_keys=True) + "\n"
    if unchanged(base + ".facts.json", facts_text) and \
            unchanged(base + ".txt", text):
        print(f"evidence-compile: {base}.txt and .facts.json unchanged apart "
              "from date and host; kept")
        return 0
    # Facts first: whoever sees the new transcript finds its facts in place.
    litlib.write_atomic(base + ".facts.json", facts_text)
    litlib.write_atomic(base + ".txt", text)
    print(f"evidence-compile: wrote {base}.txt and {base}.facts.json")
    return 0


def main(argv=None):
    """Command-line entry point; see the module docstring. Exit status."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="check", required=True)
    p, s, e = map(sub.add_parser, ("sm80", "stages", "evidence"))
    p.add_argument("--stages", required=True, type=int)
    p.add_argument("--ptx", nargs="*", default=["sm_75", "sm_80", "sm_90"])
    p.add_argument("--sass", nargs="*", default=["sm_80", "sm_90"])
    p.add_argument("--source", default="?")
    p.add_argument("--blocked", action="store_true")
    s.add_argument("--refused", help="default: DIR/sm_80-sN.refused, N "
                   "the manifest's refused depth")
    try:
        depths = manifest.load().depths
    except manifest.ManifestError as e:
        ap.error(str(e))
    s.add_argument("--refused-stages", type=int, default=depths.refused)
    s.add_argument("--arch", nargs="*", default=["sm_80", "sm_90"])
    s.add_argument("--stages", nargs="*", type=int, default=depths.compile)
    s.add_argument("--tile-source", required=True)
    s.add_argument("--blocked-stages", nargs="*", type=int,
                   help="default: the manifest's with --blocked-source")
    s.add_argument("--blocked-source")
    s.add_argument("--deep-stages", nargs="*", type=int, default=[])
    e.add_argument("--nvcc", default="nvcc")
    e.add_argument("--cuobjdump")
    e.add_argument("--source-hash", required=True)
    e.add_argument("--source-tokens", required=True,
                   help="build/source.tokens: litkit/tokens.py's digest")
    e.add_argument("--out-dir", default="evidence")
    for q in (p, s, e):
        q.add_argument("--dir", required=True)
    for q in (p, s):
        q.add_argument("--out", required=True)
    a = ap.parse_args(argv)
    if a.check == "stages":
        a.refused = a.refused or os.path.join(
            a.dir, f"sm_80-s{a.refused_stages}.refused")
        if a.blocked_stages is None:
            a.blocked_stages = depths.blocked if a.blocked_source else []
    if a.check == "stages" and a.blocked_stages and not a.blocked_source:
        ap.error("--blocked-stages needs --blocked-source")
    if a.check == "evidence":
        return evidence(a)
    name = {"sm80": "sm80-check", "stages": "stage-limits"}[a.check]
    failures = []
    try:
        res, lines = (sm80 if a.check == "sm80" else stages)(a, failures.append)
    except (OSError, ValueError) as e:
        print(f"{name}: cannot read the inputs: {e}", file=sys.stderr)
        return 2
    res.update(failures=failures, ok=not failures)
    lines += [f"{name}: FAIL {f}" for f in failures]
    lines.append(f"{name}: " + (f"{len(failures)} assertion(s) failed"
                                if failures else "all assertions hold"))
    text = "\n".join(lines) + "\n"
    litlib.write_atomic(a.out, json.dumps(res, indent=1, sort_keys=True) + "\n")
    litlib.write_atomic(os.path.splitext(a.out)[0] + ".txt", text)
    (sys.stderr if failures else sys.stdout).write(text)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
