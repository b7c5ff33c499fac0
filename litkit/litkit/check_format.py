"""check_format FILE...: tangled C/CUDA fits 80 columns and the style.

Usage: python3 -m litkit.check_format [--style FILE] FILE...
Reports lines over 80 columns (tabs to stops of 8) and hunks that
clang-format (CLANG_FORMAT, default clang-format-14, else clang-format)
changes under the style (--style FILE; default: this package's
clang-format file, the course's C/CUDA style), #pragma
indentation aside (noweb indents them with the chunk's use). Exit: 0
clean; 1 a problem; 2 usage, a missing file, or clang-format failing.
"""

import argparse
import difflib
import os
import shutil
import subprocess
import sys

STYLE = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                     "clang-format")
LIMIT = 80


def comparable(line):
    """The line as compared: a #pragma without its indentation."""
    return line.lstrip() if line.lstrip().startswith("#pragma") else line


def problems(path, binary, style):
    """The report lines of one file."""
    with open(path, encoding="utf-8", newline="") as f:
        text = f.read()
    res = subprocess.run([binary, "--style=file:" + style,
                          "--assume-filename=" + path], input=text,
                         capture_output=True, text=True)
    if res.returncode:
        raise RuntimeError(f"{binary} failed on {path}: {res.stderr.strip()}")
    have, want = text.splitlines(), res.stdout.splitlines()
    widths = [len(l.expandtabs(8)) for l in have]   # tabs to stops of 8
    out = [f"{path}:{i}: {w} columns (limit {LIMIT})"
           for i, w in enumerate(widths, 1) if w > LIMIT]
    matcher = difflib.SequenceMatcher(None, [comparable(l) for l in have],
                                      [comparable(l) for l in want], False)
    for group in matcher.get_grouped_opcodes(1):
        out.append(f"@@ {path}:{group[0][1] + 1} (clang-format wants) @@")
        for tag, i1, i2, j1, j2 in group:
            out += ["  " + l for l in have[i1:i2]] if tag == "equal" else (
                ["- " + l for l in have[i1:i2]] +
                ["+ " + l for l in want[j1:j2]])
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="+", metavar="FILE")
    ap.add_argument("--style", default=STYLE)
    args = ap.parse_args()
    binary = shutil.which(os.environ.get("CLANG_FORMAT", "clang-format-14")) \
        or shutil.which("clang-format")
    if not binary or not os.path.isfile(args.style):
        print("check_format: no clang-format (apt-get install clang-format-14)"
              f" or no style file {args.style}", file=sys.stderr)
        return 2
    bad = 0
    for path in args.files:
        try:
            report = problems(path, binary, args.style)
        except (OSError, UnicodeDecodeError, RuntimeError) as err:
            print(f"check_format: {err}", file=sys.stderr)
            return 2
        bad += bool(report)
        print("\n".join(report), end="\n" if report else "")
    print(f"check_format: {len(args.files)} files, {bad} with problems",
          file=sys.stderr if bad else sys.stdout)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
