"""Seeded random noweb documents for the nw2md fuzz test.

Each document has a few chunks (random names with punctuation and [[quotes]],
continuations, nesting, tabs, @@ and @<< escapes, HTML and Markdown
specials in prose and code).  nw2md must exit 0 and every chunk on the page,
expanded, must equal notangle's output.  A failing document is kept in
build/fuzz-failure-N.nw.  Standard library only, so runs are reproducible
from the seed alone (FUZZ_SEED).
"""

import os
import random
import shutil
import tempfile
import time

import pagelib as P

NAME_CHARS = "abcdefghijklmnopqrstuvwxyzABCXYZ0123456789_.,;:!?'\"()&*+-/%#$"
CODE_CHARS = ("abcdefghijklmnopqrstuvwxyz_ABC0123456789 \t(){}[];,.+-*/%=!?"
              "'\"\\#&|^~:<>`$µ≡⟨")
DOC_WORDS = ["the", "tile", "a < b", "c > d", "x & y", "&amp;", "<b>",
             "__syncthreads()", "snake_case", "*star*", "`tick`", "\\", "$5",
             "µs", "≡", "kernel@<<<g>>>", "100%", "#1"]


def rand_text(rng, chars, n):
    """Random text from chars with no '<<', '>>' or '@' hazards."""
    s = "".join(rng.choice(chars) for _ in range(n))
    while "<<" in s or ">>" in s:
        s = s.replace("<<", "<").replace(">>", ">")
    return s


def rand_name(rng, taken):
    """A fresh random chunk name: words, punctuation, maybe a [[quote]]."""
    while True:
        words = [rand_text(rng, NAME_CHARS, rng.randint(1, 8))
                 for _ in range(rng.randint(1, 4))]
        if rng.random() < 0.3:
            words.insert(rng.randint(0, len(words)),
                         "[[%s]]" % rand_text(rng, "abcxyz_%+", rng.randint(1, 4)))
        name = " ".join(words)
        if name not in taken:
            taken.add(name)
            return name


def rand_code_line(rng, usable):
    """One line of code: text, maybe a use of a chunk in usable."""
    kind = rng.random()
    if kind < 0.05:
        return "@@" + rand_text(rng, CODE_CHARS, rng.randint(0, 10))
    if kind < 0.1:
        return ""
    parts = [rand_text(rng, CODE_CHARS, rng.randint(0, 30))]
    if rng.random() < 0.15:
        parts.append("kernel@<<<grid, block>>>(x);")
    if usable and rng.random() < 0.4:
        prefix = rng.choice(["", "\t", "    ", "  x = ", "\t\tf(", "ab\t"])
        parts = [prefix, "<<%s>>" % rng.choice(usable)]
        if rng.random() < 0.5:
            parts.append(rand_text(rng, CODE_CHARS, rng.randint(1, 10)))
    line = "".join(parts)
    # noweb hazards: a use right after '<' or '@', or right before '>'
    line = line.replace("<<<<", "< <<").replace("@<<" + "<", "@<<<")
    if line.startswith("@") and not line.startswith("@@"):
        line = " " + line
    return line


def fix_use_edges(line):
    """Keep text from gluing onto a use: no '<' or '@' before, '>' after."""
    out, i = [], 0
    while True:
        j = line.find("<<", i)
        if j < 0:
            out.append(line[i:])
            break
        k = line.find(">>", j + 2)
        if k < 0:
            out.append(line[i:])
            break
        before = line[i:j]
        if line[j - 1:j] == "@" and j > 0:
            out.append(line[i:k + 2])     # an escape, copied as is
            i = k + 2
            continue
        if before.endswith("<"):
            before = before[:-1] + " "
        out.append(before + line[j:k + 2])
        i = k + 2
        if line[i:i + 1] == ">":
            out.append(" ")
    return "".join(out)


def rand_doc(rng):
    """A random noweb document (text)."""
    taken = set()
    names = [rand_name(rng, taken) for _ in range(rng.randint(1, 6))]
    defs = []
    for i, name in enumerate(names):
        for _ in range(rng.randint(1, 3)):
            body = [fix_use_edges(rand_code_line(rng, names[i + 1:]))
                    for _ in range(rng.randint(0, 6))]
            defs.append((name, body))
    rng.shuffle(defs)
    out = []
    for name, body in defs:
        words = [rng.choice(DOC_WORDS) for _ in range(rng.randint(0, 12))]
        if rng.random() < 0.5:
            words.append("[[%s]]" % rand_text(rng, "abc_<>&*`$ ", rng.randint(1, 8))
                         .replace("]", ""))
        out.append("Prose " + " ".join(words) + "\n\n")
        out.append("<<%s>>=\n" % name)
        out.extend(line + "\n" for line in body)
        defs_line = "@ %def " + " ".join(rng.sample(
            ["x", "kernel", "tile", "__restrict__", "a_b"], 2)) \
            if rng.random() < 0.3 else "@"
        out.append(defs_line + "\n")
    return "".join(out)


def check(path):
    """Problems found weaving the document at path (empty list if none)."""
    rc, md, err = P.weave_md(path)
    if rc != 0:
        return ["nw2md exit %d: %s" % (rc, err[-500:])]
    return P.roundtrip("\n".join(P.raw_blocks(md)), path)


def run(seed, budget_s):
    """Check random documents until budget_s passes; return (failures, n)."""
    rng = random.Random(seed)
    failures, n, start = [], 0, time.time()
    with tempfile.TemporaryDirectory() as tmp:
        while time.time() - start < budget_s and n < 400:
            path = os.path.join(tmp, "doc%d.nw" % n)
            with open(path, "w", encoding="utf-8") as f:
                f.write(rand_doc(rng))
            problems = check(path)
            if n % 25 == 0 and not problems:   # now and then, the full page
                problems = P.roundtrip(P.weave_page(path), path)
            if problems:
                os.makedirs("build", exist_ok=True)
                keep = "build/fuzz-failure-%d.nw" % len(failures)
                shutil.copy(path, keep)
                failures.append("seed %d doc %d (%s): %s" % (
                    seed, n, keep, problems[0][:400]))
            n += 1
    return failures, n
