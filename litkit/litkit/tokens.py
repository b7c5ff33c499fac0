"""tokens: the sha256 of C, C++ and CUDA sources' token streams.

Usage: python3 -m litkit.tokens FILE...    prints the hex digest
       python3 -m litkit.tokens --includes DIR ROOT...

Comments, white space and line breaks do not count (except the end of a
preprocessor directive, which ends it), and adjacent string literals count
as the one literal they are (C11 5.1.1.2, translation phase 6): re-flowing
code or splitting a string changes nothing, any other edit changes the
digest. Evidence is stamped with the sha256 of the exact text it was
measured from and with this digest (meta.source_tokens), so that
litkit/gather.py counts a later text that differs from it only in layout
as the text measured.
--includes prints, for each ROOT (a tangled file DIR/ROOT), the make line
"LIT_INCLUDES_ROOT := FILE..." of the roots and source_hash.h that it
includes (#include "FILE", found through -Ibuild), directly or not: what
its object depends on (litkit's cuda.mk).
Exit: 0 printed; 1 a FILE cannot be read (the error is printed); 2 usage.
"""

import hashlib
import re
import sys

TOKEN = re.compile(r"""
    (?P<comment>//[^\n]*|/\*.*?\*/)
  | (?P<string>(?:u8|[uUL])?"(?:\\.|[^"\\\n])*")
  | (?P<char>(?:u8|[uUL])?'(?:\\.|[^'\\\n])+')
  | (?P<space>(?:\s|\\\n)+)
  | (?P<word>\w+|.)""", re.S | re.X)


def tokens(text):
    """The tokens of text (list of str), as the module docstring says."""
    out, directive, line_start = [], False, True
    for m in TOKEN.finditer(text):
        kind, tok = m.lastgroup, m.group()
        if kind in ("space", "comment"):
            if "\n" in tok.replace("\\\n", ""):
                if directive:
                    out.append("\n")
                directive, line_start = False, True
            continue
        if kind == "string" and out and out[-1].endswith('"'):
            out[-1] = out[-1][:-1] + tok[tok.index('"') + 1:]
        else:
            out.append(tok)
        directive = directive or (line_start and tok == "#")
        line_start = False
    return out


def digest(paths):
    """sha256 (hex) of the files' token streams, in order; OSError."""
    h = hashlib.sha256()
    for path in paths:
        with open(path, encoding="utf-8") as f:
            h.update("\0".join(tokens(f.read())).encode() + b"\0\0")
    return h.hexdigest()


def includes(folder, roots):
    """{root: sorted names of the roots (and source_hash.h) that
    folder/root includes, directly or through them}; OSError."""
    known, direct = set(roots) | {"source_hash.h"}, {}
    for r in roots:
        with open(f"{folder}/{r}", encoding="utf-8") as f:
            direct[r] = set(re.findall(r'^\s*#\s*include\s*"([^"]+)"',
                                       f.read(), re.M)) & known
    out = {}
    for r in roots:
        seen, todo = set(), list(direct[r])
        while todo:
            x = todo.pop()
            if x not in seen:
                seen.add(x)
                todo += direct.get(x, ())
        out[r] = sorted(seen)
    return out


def main(argv):
    """Print the digest of the files in argv; returns the exit status."""
    if not argv or argv[0].startswith("-") and argv[0] != "--includes":
        print(__doc__.splitlines()[2], file=sys.stderr)
        return 2
    try:
        if argv[0] == "--includes" and len(argv) > 1:
            for r, found in includes(argv[1], argv[2:]).items():
                print(f"LIT_INCLUDES_{r} := {' '.join(found)}")
            return 0
        print(digest(argv))
    except OSError as e:
        print(f"tokens: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
