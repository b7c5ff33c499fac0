"""Seeded random noweb documents for the nw2md.py fuzz test.

Each document has a few chunks: random names with punctuation and
[[quotes]], continuations, nesting, tabs, @@ and @<< escapes, HTML and
Markdown specials in prose and code. nw2md.py must exit 0 and every chunk
on the page must be noweb's own reading of the source. A failing document
is kept as build/fuzz-failure-N.nw; a seed (FUZZ_SEED) reproduces a run.
"""

import os
import random
import shutil
import tempfile
import time

import pagelib as P

NAME = "abcdefghijklmnopqrstuvwxyzABCXYZ0123456789_.,;:!?'\"()&*+-/%#$"
CODE = ("abcdefghijklmnopqrstuvwxyz_ABC0123456789 \t(){}[];,.+-*/%=!?'\"\\#&|"
        "^~:<>`$µ≡⟨")
WORDS = ["the", "tile", "a < b", "c > d", "x & y", "&amp;", "<b>",
         "__syncthreads()", "snake_case", "*star*", "`tick`", "\\", "$5",
         "µs", "≡", "kernel@<<<g>>>", "100%", "#1"]
PREFIXES = ["", "\t", "    ", "  x = ", "\t\tf(", "ab\t"]


def text(rng, chars, n):
    """Random text from chars, with no "<<", ">>" or trailing "<"."""
    s = "".join(rng.choice(chars) for _ in range(n))
    while "<<" in s or ">>" in s:
        s = s.replace("<<", "<").replace(">>", ">")
    return s.rstrip("<@")


def name(rng, taken):
    """A fresh chunk name: words, punctuation, maybe a [[quote]]."""
    while True:
        words = [text(rng, NAME, rng.randint(1, 8)) or "n"
                 for _ in range(rng.randint(1, 4))]
        if rng.random() < 0.3:
            words.insert(0, "[[%s]]" % text(rng, "abcxyz_%+", rng.randint(1, 4)))
        n = " ".join(words).replace("[[]]", "q")
        if n not in taken:
            taken.add(n)
            return n


def code_line(rng, usable):
    """One line of code: text, an escape, maybe a use of a chunk."""
    r = rng.random()
    if r < 0.05:
        return "@@" + text(rng, CODE, rng.randint(0, 10))
    if r < 0.1:
        return ""
    line = text(rng, CODE, rng.randint(0, 30))
    if rng.random() < 0.15:
        line += " kernel@<<<grid, block>>>(x);"
    if usable and rng.random() < 0.4:
        tail = text(rng, CODE, rng.randint(1, 10)).lstrip(">")
        line = (rng.choice(PREFIXES) + "<<%s>>" % rng.choice(usable) +
                (" " + tail if rng.random() < 0.5 else ""))
    return " " + line if line.startswith("@") and \
        not line.startswith("@@") else line


def document(rng):
    """A random noweb document (text)."""
    taken = set()
    names = [name(rng, taken) for _ in range(rng.randint(1, 6))]
    defs = [(n, [code_line(rng, names[i + 1:])
                 for _ in range(rng.randint(0, 6))])
            for i, n in enumerate(names) for _ in range(rng.randint(1, 3))]
    rng.shuffle(defs)
    out = []
    for n, body in defs:
        prose = [rng.choice(WORDS) for _ in range(rng.randint(0, 12))]
        if rng.random() < 0.5:
            prose.append("[[%s]]" % (text(rng, "abc_<>&*`$ ", rng.randint(
                1, 8)).replace("]", "").strip() or "q"))
        out += ["Prose " + " ".join(prose) + "\n\n", "<<%s>>=\n" % n]
        out += [line + "\n" for line in body]
        out.append("@ %def " + " ".join(rng.sample(
            ["x", "kernel", "tile", "__restrict__", "a_b"], 2)) + "\n"
            if rng.random() < 0.3 else "@\n")
    return "".join(out)


def run(seed, budget_s):
    """Check random documents until budget_s passes (at most 400); returns
    (failures, number checked)."""
    rng = random.Random(seed)
    failures, n, start = [], 0, time.time()
    with tempfile.TemporaryDirectory() as tmp:
        while time.time() - start < budget_s and n < 400:
            path = os.path.join(tmp, "doc%d.nw" % n)
            with open(path, "w", encoding="utf-8") as f:
                f.write(document(rng))
            rc, md, err = P.weave_md(path)
            problems = (["nw2md exit %d: %s" % (rc, err[-500:])] if rc else
                        P.roundtrip("\n".join(P.raw_blocks(md)), path))
            if n % 25 == 0 and not problems:   # now and then, a whole page
                problems = P.roundtrip(P.weave_page(path), path)
            if problems:
                keep = os.path.join(P.ROOT, "build",
                                    "fuzz-failure-%d.nw" % len(failures))
                os.makedirs(os.path.dirname(keep), exist_ok=True)
                shutil.copy(path, keep)
                failures.append("seed %d doc %d (%s): %s" % (
                    seed, n, keep, problems[0][:400]))
            n += 1
    return failures, n
