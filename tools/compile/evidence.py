"""evidence: the compile-only evidence transcript and its facts.

Usage (from the module's root):
  python3 -m tools.compile.evidence --dir DIR --nvcc NVCC --source-hash FILE
      [--cuobjdump PATH] [--ptx ARCH ...] [--sass ARCH ...] [--stages N ...]
      [--refused-stages N] [--out-dir evidence]

Reads what the sm80 and stages checks (tools/compile/checks.py) left in DIR
for the default build (STAGES=2): their reports (.json, .txt), the ptxas -v
reports, the commands (*.cmd) and the refused compile's log; runs NVCC
--version. Writes OUT-DIR/compile-nvcc-<release>.txt, the transcript (first
line "compile-only: no GPU executed anything in this file", then date,
host, source sha256, versions, commands, the checks' reports and the
compilers' output verbatim), and OUT-DIR/compile-nvcc-<release>.facts.json,
the counts as unrounded facts for tools/lit/gather.py (names in
tools/facts/schema.tsv). Temporary names, then renames; files that would
differ only in their date and host lines are kept (no churn in git).
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

from tools.lit import litlib

FIRST_LINE = "compile-only: no GPU executed anything in this file"
STAGES = 2
MBARRIER_OPS = ("arrive", "init", "inval", "test_wait", "try_wait")


def report(d, name):
    """(JSON, text) of a passing check's report; ValueError otherwise."""
    try:
        obj = json.loads(litlib.read_text(os.path.join(d, name + ".json")))
        text = litlib.read_text(os.path.join(d, name + ".txt"))
    except (OSError, ValueError) as e:
        raise ValueError(f"cannot read the {name} report (make sm80-check "
                         f"stage-limits first): {e}") from e
    if not obj.get("ok"):
        raise ValueError(f"{name} records failed assertions; evidence is "
                         "only written from passing checks")
    return obj, text


def facts_of(check, limits, release, full):
    """The facts of the checks' JSON reports: {name: number or token}."""
    facts = {"compile.nvcc_version": full, "compile.nvcc_release": release}
    for arch, rec in check["ptx"].items():
        a = arch.replace("_", "")
        facts[f"ptx.{a}.grep_lines"] = rec["grep_lines"]
        for role in ("piped", "sync", "outside"):
            facts[f"ptx.{a}.{role}.total"] = rec[role]["total"]
        if int(a[2:]) >= 80:
            for fam, n in rec["piped"]["families"].items():
                facts[f"ptx.{a}.piped.{fam}"] = n
            ops = dict.fromkeys(MBARRIER_OPS + ("other",), 0)
            for form, n in rec["mbarrier"]["piped"].items():
                op = form.split(".")[1]
                ops[op if op in MBARRIER_OPS else "other"] += n
            facts.update({f"ptx.{a}.piped.mbarrier.{o}": n
                          for o, n in ops.items()})
    for arch, rec in check["sass"].items():
        for role in ("piped", "sync"):
            for op in ("LDGSTS", "LDG", "STS"):
                facts[f"sass.{arch.replace('_', '')}.{role}.{op.lower()}"] = \
                    rec[role][op]
    spill = 0
    for arch, rows in limits["table"].items():
        for n, row in rows.items():
            for role, key in (("piped", f"s{n}.piped"), ("sync", "sync")):
                if role == "piped" or int(n) == STAGES:
                    base = f"ptxas.{arch.replace('_', '')}.{key}"
                    facts[base + ".smem"] = row[role]["smem_bytes"]
                    facts[base + ".registers"] = row[role]["registers"]
                spill += row[role]["spill_bytes"]
    facts["ptxas.spill_bytes"] = spill
    facts["stages.step_bytes"] = limits["step_bytes"]
    facts["stages.state_step_bytes"] = limits["state_step_bytes"]
    facts["stages.refused_at"] = limits["refused_stages"]
    return facts


def build(a):
    """(transcript, facts document, release) from the inputs in a.dir."""
    d = a.dir
    check, check_text = report(d, f"sm80-check-s{STAGES}")
    limits, limits_text = report(d, "stage-limits")
    version = litlib.run_version(a.nvcc).strip()
    release, full = litlib.nvcc_version(version)
    source_hash = litlib.read_text(a.source_hash).strip()
    if not re.fullmatch(r"[0-9a-f]{64}", source_hash):
        raise ValueError(f"{a.source_hash} holds no sha256")
    now = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0)
    date = now.isoformat().replace("+00:00", "Z")
    L = [FIRST_LINE, f"date: {date}", f"host: {socket.gethostname()}",
         f"source sha256: {source_hash}", "  (build/source.sha256: sha256 "
         "of the clean tangled program sources)",
         f"made by: make evidence-compile, from {d}/", "",
         f"$ {a.nvcc} --version", version]
    if a.cuobjdump:
        try:
            tool = litlib.run_version(a.cuobjdump).strip().splitlines()
            L.append(f"cuobjdump: {a.cuobjdump}: {tool[max(len(tool) - 2, 0)]}")
        except OSError as e:
            L.append(f"cuobjdump: (not run: {e})")
    L += ["", "== Commands (each output under a temporary name, renamed) =="]
    for name in ([f"{x}-s{STAGES}.ptx" for x in a.ptx]
                 + [f"{x}-s{n}.cubin" for x in a.sass for n in a.stages]
                 + [f"{x}-s{STAGES}.sass" for x in a.sass]
                 + [f"sm_80-s{a.refused_stages}.refused"]):
        try:
            L.append("$ " + litlib.read_text(os.path.join(d, name + ".cmd"))
                     .strip())
        except OSError as e:
            raise ValueError(f"no record of the command that made "
                             f"{os.path.join(d, name)}") from e
    L += ["", "== The checks' reports ==", check_text + limits_text,
          "== ptxas -v, verbatim (without 'Compile time') =="]
    for x in a.sass:
        for n in a.stages:
            path = os.path.join(d, f"{x}-s{n}.ptxas.txt")
            L += [f"-- {path}"] + ["   " + line for line in
                                   litlib.read_text(path).splitlines()
                                   if "Compile time" not in line]
    L += ["", f"== STAGES={a.refused_stages} with -DALLOW_DEEP_PIPELINE: "
          "the compiler's output, verbatim =="]
    L += [line for line in litlib.read_text(os.path.join(
        d, f"sm_80-s{a.refused_stages}.refused.log")).splitlines() if line]
    facts = facts_of(check, limits, release, full)
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
