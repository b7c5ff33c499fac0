"""measure: make measure's recorder. Runs PROGRAM --time and writes
OUTDIR/run.txt (a header of "# key: value" lines: the command, the date,
the sources' sha256 and token digest; then what it printed) and
OUTDIR/run.facts.json (litkit's gather reads it: meta and the facts
saxpy.N.us of its "time N MICROSECONDS" lines).

Usage: python3 measure.py PROGRAM OUTDIR"""

import json
import re
import subprocess
import sys
import time

from litkit import litlib


def main(program, outdir):
    out = subprocess.run([program, "--time"], check=True, text=True,
                         capture_output=True).stdout
    meta = {"kind": "run", "date": time.strftime("%Y-%m-%dT%H:%M:%SZ",
                                                 time.gmtime()),
            "source_sha256": litlib.read_text("build/source.sha256").strip(),
            "source_tokens": litlib.read_text("build/source.tokens").strip(),
            "transcript": f"{outdir}/run.txt"}
    head = "".join(f"# {k}: {v}\n" for k, v in [
        ("command", f"{program} --time"), *meta.items()] if k != "kind")
    litlib.write_atomic(f"{outdir}/run.txt", head + out)
    facts = {f"saxpy.{n}.us": float(us)
             for n, us in re.findall(r"^time (\d+) ([\d.]+)$", out, re.M)}
    litlib.write_atomic(f"{outdir}/run.facts.json", json.dumps(
        {"meta": meta, "facts": facts}, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main(*sys.argv[1:])
