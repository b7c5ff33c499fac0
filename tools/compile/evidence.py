"""evidence: the compile-only evidence transcript and its facts.

Usage (from the module's root):
  python3 -m tools.compile.evidence --dir DIR --nvcc NVCC --source-hash FILE
      [--cuobjdump PATH] [--ptx ARCH ...] [--sass ARCH ...] [--stages N ...]
      [--refused-stages N] [--out-dir evidence]

Reads what the sm80 and stages checks left in DIR for the default build
(STAGES=2): sm80-check-s2.json, stage-limits.json, the ptxas -v reports
ARCH-sN.ptxas.txt, the commands (*.cmd) and the refused compile's log; runs
NVCC --version. Writes OUT-DIR/compile-nvcc-<release>.txt (the transcript:
first line "compile-only: no GPU executed anything in this file", then
date, host, source sha256, versions, commands and every count) and
OUT-DIR/compile-nvcc-<release>.facts.json (the same counts as unrounded
facts for tools/lit/gather.py; names in tools/facts/schema.tsv).
Temporary names, then renames; files that would differ only in their date
and host lines are kept as they are (no churn in git).
Exit: 0 written or unchanged; 1 an input is missing or records a failed
check (evidence is only written from passing checks); 2 usage.
"""

import argparse
import datetime
import json
import os
import re
import socket
import sys

from tools.compile import asmscan
from tools.compile.asmscan import fmt_forms
from tools.lit import litlib

FIRST_LINE = "compile-only: no GPU executed anything in this file"
STAGES = 2
MBARRIER_OPS = ("arrive", "init", "inval", "test_wait", "try_wait")
LABEL = {"piped": "matmulTilePiped", "sync": "matmulTileSync",
         "outside": "elsewhere"}


def report(path):
    """A passing check's JSON report; ValueError if missing or failing."""
    try:
        obj = json.loads(litlib.read_text(path))
    except (OSError, ValueError) as e:
        raise ValueError(f"cannot read {path} (make sm80-check stage-limits "
                         f"first): {e}") from e
    if not obj.get("ok"):
        raise ValueError(f"{path} records failed assertions; evidence is "
                         "only written from passing checks")
    return obj


def ptx_section(check, facts):
    """Transcript lines and facts of the PTX counts."""
    L = ["", f"== PTX: cp.async instructions per kernel and form "
         f"(default build, STAGES={STAGES}) =="]
    for arch, rec in check["ptx"].items():
        a = arch.replace("_", "")
        L.append(f"{arch}: {rec['total']} cp.async in all (lines containing "
                 f"'cp.async', as grep -c counts: {rec['grep_lines']})")
        facts[f"ptx.{a}.grep_lines"] = rec["grep_lines"]
        for role in ("piped", "sync", "outside"):
            r = rec[role]
            L.append(f"  {LABEL[role]:16s} {r['total']:3d}  "
                     f"{fmt_forms(r['forms']) or 'none'}")
            facts[f"ptx.{a}.{role}.total"] = r["total"]
        mb = rec["mbarrier"]["piped"]
        L.append("  (not cp.async: matmulTilePiped's mbarrier instructions: "
                 f"{fmt_forms(mb) or 'none'})")
        if int(a[2:]) >= 80:
            facts.update({f"ptx.{a}.piped.{f}": n
                          for f, n in rec["piped"]["families"].items()})
            ops = dict.fromkeys(MBARRIER_OPS + ("other",), 0)
            for form, n in mb.items():
                op = form.split(".")[1]
                ops[op if op in MBARRIER_OPS else "other"] += n
            facts.update({f"ptx.{a}.piped.mbarrier.{o}": n
                          for o, n in ops.items()})
    L.append("Assertions held: no cp.async below sm_80; from sm_80 on every "
             "cp.async is in matmulTilePiped, which holds the global-to-"
             "shared copy.")
    return L


def sass_section(check, facts):
    """Transcript lines and facts of the SASS counts."""
    L = ["", f"== SASS (cuobjdump -sass of the -arch cubins, "
         f"STAGES={STAGES}) =="]
    for arch, rec in check["sass"].items():
        for role in ("piped", "sync"):
            r = rec[role]
            L.append(f"{arch} {LABEL[role]:16s} LDGSTS={r['LDGSTS']} "
                     f"LDG={r['LDG']} STS={r['STS']}  "
                     f"({fmt_forms(r['forms']) or 'none'})")
            for op in ("LDGSTS", "LDG", "STS"):
                facts[f"sass.{arch.replace('_', '')}.{role}.{op.lower()}"] = \
                    r[op]
    return L


def ptxas_section(d, archs, depths, facts):
    """Transcript lines and facts of the ptxas -v reports."""
    L = ["", "== ptxas -v: per arch, pipeline depth and kernel ==",
         "arch   STAGES kernel            regs  smem B stack B spill B"]
    raw, spill = [], 0
    for arch in archs:
        a = arch.replace("_", "")
        for n in depths:
            path = os.path.join(d, f"{arch}-s{n}.ptxas.txt")
            text = litlib.read_text(path)
            rep = asmscan.ptxas_report(text)
            for role in ("piped", "sync"):
                ks = [v for k, v in rep.items()
                      if asmscan.kernel_role(k) == role]
                if len(ks) != 1:
                    raise ValueError(f"{path}: expected one ptxas report "
                                     f"for {LABEL[role]}")
                k = ks[0]
                sp = k["spill_store_bytes"] + k["spill_load_bytes"]
                spill += sp
                L.append(f"{arch:6s} {n:>6d} {LABEL[role]:16s} "
                         f"{k['registers']:>5d} {k['smem_bytes']:>7d} "
                         f"{k['stack_bytes']:>7d} {sp:>7d}")
                key = (f"ptxas.{a}.s{n}.piped" if role == "piped" else
                       f"ptxas.{a}.sync" if n == STAGES else None)
                if key:
                    facts[key + ".smem"] = k["smem_bytes"]
                    facts[key + ".registers"] = k["registers"]
            raw += [f"-- {path}"] + ["   " + line for line in
                                      text.splitlines()
                                      if ("ptxas" in line or "bytes" in line)
                                      and "Compile time" not in line]
    facts["ptxas.spill_bytes"] = spill
    return L + ["", "ptxas -v output, verbatim (without 'Compile time'):"] \
        + raw


def stages_section(d, limits, refused_stages, facts):
    """Transcript lines and facts of the stage limits."""
    L = ["", "== Stage limits (static shared memory per block; the ceiling "
         "is 48 KiB = 49152 bytes) =="]
    for arch, rows in limits["table"].items():
        for n, row in rows.items():
            L.append(f"{arch} STAGES={n}: matmulTilePiped "
                     f"{row['piped']['smem_bytes']} bytes, matmulTileSync "
                     f"{row['sync']['smem_bytes']} bytes")
    facts["stages.step_bytes"] = limits["step_bytes"]
    facts["stages.state_step_bytes"] = limits["state_step_bytes"]
    facts["stages.refused_at"] = limits.get("refused_stages", refused_stages)
    log = litlib.read_text(os.path.join(d, f"sm_80-s{refused_stages}"
                                           ".refused.log"))
    return L + [f"Each stage adds {limits['step_bytes']} bytes: "
                f"{limits['tile_bytes']} of tiles and "
                f"{limits['state_step_bytes']} of pipeline state.",
                f"STAGES={refused_stages} with -DALLOW_DEEP_PIPELINE: "
                f"refused, nvcc exit {limits['refused']['exit']}. The "
                "compiler's output, verbatim:"] + \
        ["   " + line for line in log.splitlines() if line.strip()]


def build(a):
    """(transcript, facts document, release) from the inputs in a.dir."""
    d = a.dir
    check = report(os.path.join(d, f"sm80-check-s{STAGES}.json"))
    limits = report(os.path.join(d, "stage-limits.json"))
    version = litlib.run_version(a.nvcc).strip()
    release, full = litlib.nvcc_version(version)
    source_hash = litlib.read_text(a.source_hash).strip()
    if not re.fullmatch(r"[0-9a-f]{64}", source_hash):
        raise ValueError(f"{a.source_hash} holds no sha256")
    now = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0)
    date = now.isoformat().replace("+00:00", "Z")
    facts = {"compile.nvcc_version": full, "compile.nvcc_release": release}
    L = [FIRST_LINE, f"date: {date}", f"host: {socket.gethostname()}",
         f"source sha256: {source_hash}",
         "  (build/source.sha256: sha256 of the clean tangled program "
         "sources)", f"made by: make evidence-compile, from {d}/", "",
         f"$ {a.nvcc} --version", version]
    if a.cuobjdump:
        try:
            tool = litlib.run_version(a.cuobjdump).strip().splitlines()
            L.append(f"cuobjdump: {a.cuobjdump}: {tool[max(len(tool) - 2, 0)]}")
        except OSError as e:
            L.append(f"cuobjdump: (not run: {e})")
    L += ["", "== Commands (each output under a temporary name, renamed) =="]
    wanted = ([f"{x}-s{STAGES}.ptx" for x in a.ptx]
              + [f"{x}-s{n}.cubin" for x in a.sass for n in a.stages]
              + [f"{x}-s{STAGES}.sass" for x in a.sass]
              + [f"sm_80-s{a.refused_stages}.refused"])
    for name in wanted:
        try:
            L.append("$ " + litlib.read_text(os.path.join(d, name + ".cmd"))
                     .strip())
        except OSError as e:
            raise ValueError(f"no record of the command that made "
                             f"{os.path.join(d, name)}") from e
    L += ptx_section(check, facts) + sass_section(check, facts)
    L += ptxas_section(d, a.sass, a.stages, facts)
    L += stages_section(d, limits, a.refused_stages, facts)
    L += ["", f"== Facts (also in compile-nvcc-{release}.facts.json) =="]
    L += [f"{k} = {v}" for k, v in sorted(facts.items())]
    meta = {"kind": "compile", "source_sha256": source_hash,
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


def main(argv=None):
    """Command-line entry point; see the module docstring. Exit status."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dir", required=True)
    ap.add_argument("--nvcc", default="nvcc")
    ap.add_argument("--cuobjdump")
    ap.add_argument("--source-hash", required=True)
    ap.add_argument("--ptx", nargs="*", default=["sm_75", "sm_80", "sm_90"])
    ap.add_argument("--sass", nargs="*", default=["sm_80", "sm_90"])
    ap.add_argument("--stages", nargs="*", type=int, default=[2, 3, 4, 5])
    ap.add_argument("--refused-stages", type=int, default=6)
    ap.add_argument("--out-dir", default="evidence")
    a = ap.parse_args(argv)
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


if __name__ == "__main__":
    sys.exit(main())
