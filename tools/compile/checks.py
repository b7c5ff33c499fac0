"""checks: what the compiler emitted, checked without a GPU.

Usage (from the module's root):
  python3 -m tools.compile.checks sm80 --dir DIR --stages N
      [--ptx ARCH ...] [--sass ARCH ...] [--source FILE] --out FILE.json
  python3 -m tools.compile.checks stages --dir DIR --refused FILE
      [--arch ARCH ...] [--stages N ...] [--tile-bytes B] [--limit B]
      [--refused-stages N] --out FILE.json

sm80 reads DIR/ARCH-sN.ptx (nvcc -ptx) and DIR/ARCH-sN.sass (cuobjdump
-sass) and asserts: below sm_80 the PTX holds no cp.async; from sm_80 on
every cp.async sits in matmulTilePiped (none in matmulTileSync, none
elsewhere) and matmulTilePiped holds a global-to-shared copy (the
pipeline's own cp.async.mbarrier.arrive proves nothing); the SASS of
matmulTilePiped holds LDGSTS. It records, without asserting, each form
per kernel and how many LDGSTS ptxas put in matmulTileSync (fusion).

stages reads DIR/ARCH-sN.ptxas.txt (nvcc -Xptxas -v) per depth and the
refused compile's record FILE ("exit=N", then the compiler's output) and
asserts: both kernels reported at every depth; matmulTilePiped grows by
one constant step per stage, --tile-bytes (8192) plus at most
MAX_STATE_STEP bytes of pipeline state; every depth within --limit
(49152); matmulTileSync constant; the refused depth stopped by the
static_assert naming the 48 KiB ceiling.

Each writes its findings as JSON to --out and a summary to the .txt beside
it (temporary names, then renames) and to stdout. Exit: 0 all hold; 1 an
assertion failed (lines "<check>: FAIL ..."); 2 usage or unreadable input.
"""

import argparse
import json
import os
import re
import sys

from tools.compile import asmscan
from tools.compile.asmscan import fmt_forms
from tools.lit import litlib

FAMILIES = ("copy", "mbarrier_arrive", "commit_group", "wait_group",
            "wait_all", "other")
MAX_STATE_STEP = 64


def arch_number(arch):
    """"sm_80" -> 80; ValueError for anything else."""
    m = re.fullmatch(r"sm_(\d+)[a-z]?", arch)
    if not m:
        raise ValueError("not an architecture name like sm_80: " + arch)
    return int(m.group(1))


def summarise(entries):
    """{"names", "forms", "families", "total"} of [(name, {form: n})]."""
    forms = {}
    for _, f in entries:
        for k, v in f.items():
            forms[k] = forms.get(k, 0) + v
    fam = dict.fromkeys(FAMILIES, 0)
    for k, v in forms.items():
        fam[asmscan.form_family(k)] += v
    return {"names": [n for n, _ in entries], "families": fam,
            "forms": dict(sorted(forms.items())), "total": sum(forms.values())}


def check_ptx(arch, text, fail):
    """Count and check the cp.async of one PTX file; fail(msg) per finding.

    Returns the record stored in the JSON for this arch.
    """
    scan = asmscan.ptx_cp_async(text)
    roles = asmscan.by_role(scan["functions"])
    rec = {r: summarise(roles[r]) for r in ("piped", "sync")}
    out = summarise(roles["outside"] + [("(outside any function)",
                                        scan["outside"])])
    out["names"] = [n for n, f in roles["outside"] if f] + (
        ["(outside any function)"] if scan["outside"] else [])
    rec.update(outside=out, grep_lines=scan["grep_lines"],
               total=sum(rec[r]["total"] for r in ("piped", "sync")) +
               out["total"])
    mb = asmscan.by_role(asmscan.ptx_cp_async(text, "mbarrier.")["functions"])
    rec["mbarrier"] = {r: summarise(mb[r])["forms"] for r in ("piped", "sync")}
    for role, name in (("piped", asmscan.PIPED), ("sync", asmscan.SYNC)):
        if not rec[role]["names"]:
            fail(f"{arch} PTX: no function named like {name}; is this the "
                 "lesson's program?")
    if arch_number(arch) < 80:
        if rec["total"]:
            where = "; ".join(f"{r}: {fmt_forms(rec[r]['forms'])}" for r in
                              ("piped", "sync", "outside") if rec[r]["total"])
            fail(f"{arch} PTX: {rec['total']} cp.async instruction(s) where "
                 f"none can exist (cp.async needs sm_80): {where}")
        return rec
    if rec["sync"]["total"]:
        fail(f"{arch} PTX: matmulTileSync holds {rec['sync']['total']} "
             f"cp.async ({fmt_forms(rec['sync']['forms'])}); its fill must "
             "go through registers")
    if out["total"]:
        fail(f"{arch} PTX: {out['total']} cp.async outside matmulTilePiped, "
             f"in {', '.join(out['names'])} ({fmt_forms(out['forms'])})")
    if rec["piped"]["names"] and rec["piped"]["families"]["copy"] == 0:
        fail(f"{arch} PTX: matmulTilePiped holds no global-to-shared "
             "cp.async (cp.async.ca/.cg.shared.global), so its fill goes "
             "through registers; found there: "
             f"{fmt_forms(rec['piped']['forms']) or 'no cp.async at all'}")
    return rec


def check_sass(arch, text, fail):
    """LDGSTS, LDG and STS per kernel in one SASS listing; fail(msg) each
    finding. Returns {"piped": {...}, "sync": {...}}."""
    scan = asmscan.sass_opcodes(text)
    if scan["arch"] and scan["arch"] != arch:
        fail(f"{arch} SASS: the listing is for {scan['arch']}, not {arch}")
    roles = asmscan.by_role(scan["functions"])
    rec = {}
    for role, name in (("piped", asmscan.PIPED), ("sync", asmscan.SYNC)):
        r = {"names": [n for n, _ in roles[role]], "forms": {}}
        for op in ("LDGSTS", "LDG", "STS"):
            r[op] = sum(f["opcodes"].get(op, 0) for _, f in roles[role])
        for _, f in roles[role]:
            for full, n in f["forms"].items():
                if full.split(".")[0] in ("LDGSTS", "LDG", "STS"):
                    r["forms"][full] = r["forms"].get(full, 0) + n
        r["forms"] = dict(sorted(r["forms"].items()))
        rec[role] = r
        if not r["names"]:
            fail(f"{arch} SASS: no function named like {name}")
    if rec["piped"]["names"] and rec["piped"]["LDGSTS"] == 0:
        fail(f"{arch} SASS: matmulTilePiped holds no LDGSTS, so no copy "
             "bypasses the registers; its global/shared traffic is "
             f"{fmt_forms(rec['piped']['forms']) or 'none'}")
    return rec


def sm80(a, fail):
    """The sm80 check: returns (result dict, summary lines)."""
    res = {"source": a.source, "stages": a.stages, "ptx": {}, "sass": {}}
    for arch in a.ptx:
        arch_number(arch)
        text = litlib.read_text(os.path.join(a.dir, f"{arch}-s{a.stages}.ptx"))
        res["ptx"][arch] = check_ptx(arch, text, fail)
    for arch in a.sass:
        text = litlib.read_text(os.path.join(a.dir, f"{arch}-s{a.stages}.sass"))
        res["sass"][arch] = check_sass(arch, text, fail)
    lines = [f"sm80-check of {a.source} (STAGES={a.stages})"]
    for arch, rec in res["ptx"].items():
        lines.append(f"  PTX {arch}: {rec['total']} cp.async instruction(s) "
                     f"(lines containing 'cp.async': {rec['grep_lines']})")
        for role in ("piped", "sync", "outside"):
            r = rec[role]
            if r["total"] or role != "outside":
                lines.append(f"    {role:7s} {r['total']:3d}  "
                             f"{fmt_forms(r['forms']) or '-'}")
        if rec["mbarrier"]["piped"]:
            lines.append("    (piped also holds, not cp.async: "
                         f"{fmt_forms(rec['mbarrier']['piped'])})")
    for arch, rec in res["sass"].items():
        p, s = rec["piped"], rec["sync"]
        lines.append(f"  SASS {arch}: matmulTilePiped LDGSTS={p['LDGSTS']} "
                     f"LDG={p['LDG']} STS={p['STS']}; matmulTileSync "
                     f"LDGSTS={s['LDGSTS']} LDG={s['LDG']} STS={s['STS']} "
                     f"({'not fused' if s['LDGSTS'] == 0 else 'FUSED'})")
        lines += [f"    {r:7s} {fmt_forms(rec[r]['forms']) or '-'}"
                  for r in ("piped", "sync")]
    return res, lines


def kernel_of(report, role):
    """The one ptxas record of role "piped"/"sync" in a report, or None."""
    hits = [v for k, v in report.items() if asmscan.kernel_role(k) == role]
    return hits[0] if len(hits) == 1 else None


def analyse_stages(reports, refused, tile, limit, fail):
    """Check the per-depth ptxas reports and the refusal; fail(msg) each.

    reports: {arch: {depth: ptxas_report dict}}; refused: (exit status,
    compiler text); tile: bytes of one stage of tiles; limit: the static
    ceiling in bytes. Returns the result dict (table, step, refusal).
    """
    table, steps = {}, set()
    for arch, by_depth in reports.items():
        rows = {}
        for n in sorted(by_depth):
            rows[n] = {}
            for role in ("piped", "sync"):
                k = kernel_of(by_depth[n], role)
                if k is None:
                    fail(f"{arch} STAGES={n}: no ptxas report for the {role}"
                         " kernel")
                    continue
                rows[n][role] = {"smem_bytes": k["smem_bytes"],
                                 "registers": k["registers"],
                                 "spill_bytes": k["spill_store_bytes"] +
                                 k["spill_load_bytes"]}
        piped = [(n, r["piped"]["smem_bytes"]) for n, r in rows.items()
                 if "piped" in r]
        for (n0, b0), (n1, b1) in zip(piped, piped[1:]):
            if n1 != n0 + 1:
                fail(f"{arch}: depths {n0} and {n1} are not consecutive")
                continue
            steps.add(b1 - b0)
            if not tile <= b1 - b0 <= tile + MAX_STATE_STEP:
                fail(f"{arch}: matmulTilePiped goes from {b0} bytes at "
                     f"STAGES={n0} to {b1} at STAGES={n1}, a step of "
                     f"{b1 - b0}; one stage of tiles is {tile}, plus at most "
                     f"{MAX_STATE_STEP} of pipeline state")
        if len(steps) > 1:
            fail(f"{arch}: the step per stage is not constant: "
                 f"{sorted(steps)}")
        for n, b in piped:
            rows[n]["piped"]["state_bytes"] = b - n * tile
            if b > limit:
                fail(f"{arch} STAGES={n}: {b} bytes exceed the {limit}-byte "
                     "static ceiling")
        sync = {r["sync"]["smem_bytes"] for r in rows.values() if "sync" in r}
        if len(sync) > 1:
            fail(f"{arch}: matmulTileSync's shared memory changes with "
                 f"STAGES: {sorted(sync)}")
        table[arch] = {str(n): r for n, r in rows.items()}
    step = steps.pop() if len(steps) == 1 else None
    status, text = refused
    msgs = asmscan.static_assert_messages(text)
    ceiling = [m for m in msgs if "48 KiB" in m]
    if status == 0:
        fail("the deepest depth compiled (exit 0); it should be refused")
    elif not ceiling:
        fail("the deepest depth was refused, but not by the 48 KiB "
             "static_assert; compiler said: " +
             (" | ".join(msgs) or text.strip()[:300]))
    return {"tile_bytes": tile, "limit_bytes": limit, "table": table,
            "step_bytes": step,
            "state_step_bytes": None if step is None else step - tile,
            "refused": {"exit": status, "all_static_asserts": msgs,
                        "static_assert": ceiling[0] if ceiling else None}}


def stages(a, fail):
    """The stages check: returns (result dict, summary lines)."""
    reports = {arch: {n: asmscan.ptxas_report(litlib.read_text(
        os.path.join(a.dir, f"{arch}-s{n}.ptxas.txt"))) for n in a.stages}
        for arch in a.arch}
    first, _, rest = litlib.read_text(a.refused).partition("\n")
    m = re.fullmatch(r"exit=(\d+)", first.strip())
    if not m:
        raise ValueError(f"{a.refused}: first line is not 'exit=N'")
    res = analyse_stages(reports, (int(m.group(1)), rest), a.tile_bytes,
                         a.limit, fail)
    res["refused_stages"] = a.refused_stages
    lines = ["stage-limits: static shared memory per block (ptxas -v)"]
    for arch, rows in res["table"].items():
        lines.append(f"  {arch}  STAGES  piped smem  piped regs  sync smem  "
                     f"(piped = STAGES x {a.tile_bytes} B + pipeline state)")
        for n, row in rows.items():
            p, s = row.get("piped", {}), row.get("sync", {})
            lines.append(f"        {n:>6s}  {p.get('smem_bytes', '?'):>10}  "
                         f"{p.get('registers', '?'):>10}  "
                         f"{s.get('smem_bytes', '?'):>9}  state "
                         f"{p.get('state_bytes', '?')} B")
    if res["step_bytes"] is not None:
        lines.append(f"  each stage adds {res['step_bytes']} bytes: "
                     f"{a.tile_bytes} of tiles, {res['state_step_bytes']} of "
                     "pipeline state")
    lines.append(f"  STAGES={a.refused_stages} with -DALLOW_DEEP_PIPELINE: "
                 f"nvcc exit {res['refused']['exit']}: "
                 f"\"{res['refused']['static_assert']}\"")
    return res, lines


def main(argv=None):
    """Command-line entry point; see the module docstring. Exit status."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="check", required=True)
    p = sub.add_parser("sm80")
    p.add_argument("--stages", required=True, type=int)
    p.add_argument("--ptx", nargs="*", default=["sm_75", "sm_80", "sm_90"])
    p.add_argument("--sass", nargs="*", default=["sm_80", "sm_90"])
    p.add_argument("--source", default="?")
    s = sub.add_parser("stages")
    s.add_argument("--refused", required=True)
    s.add_argument("--refused-stages", type=int, default=6)
    s.add_argument("--arch", nargs="*", default=["sm_80", "sm_90"])
    s.add_argument("--stages", nargs="*", type=int, default=[2, 3, 4, 5])
    s.add_argument("--tile-bytes", type=int, default=8192)
    s.add_argument("--limit", type=int, default=48 * 1024)
    for q in (p, s):
        q.add_argument("--dir", required=True)
        q.add_argument("--out", required=True)
    a = ap.parse_args(argv)
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
