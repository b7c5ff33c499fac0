"""Helpers of the weave tests: run the tools, read chunks back, fuzz.

Chunks are read from the page by their markup (see tools/lit/nw2md.py):
  <div class="nwchunk" data-chunk="NAME"> ... <pre class="nwcode"><code>TEXT
where TEXT holds chunk uses as <a class="nwuse" data-chunk="USED">.
"""

import html
import os
import random
import re
import shutil
import tempfile
import time

from conftest import run

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURES = os.path.join(ROOT, "tests", "fixtures", "weave")
NW2MD = os.path.join(ROOT, "tools", "lit", "nw2md.py")
WEAVE = os.path.join(ROOT, "tools", "lit", "weave.sh")
NOWEB_LIB = os.environ.get("NOWEB_LIB", "/usr/lib/noweb")
CHUNK = re.compile(r'<div class="nwchunk"[^>]*? data-chunk="([^"]*)".*?'
                   r'<pre class="nwcode[^"]*"><code>(.*?)</code></pre>', re.S)
USE = re.compile(r'<a class="nwuse" data-chunk="([^"]*)"[^>]*>.*?</a>')


def read_chunks(html_text):
    """{chunk name: [definition]} of a page, each definition a list of
    lines, each a list of code text (str) and uses (("use", name))."""
    chunks = {}
    for name, body in CHUNK.findall(html_text):
        assert body.endswith("\n") or not body, "chunk %r: no final \\n" % name
        lines = [[("use", html.unescape(x)) if i % 2 else
                  html.unescape(re.sub(r"<[^>]+>", "", x))
                  for i, x in enumerate(USE.split(raw)) if i % 2 or x]
                 for raw in body.split("\n")[:-1]]
        chunks.setdefault(html.unescape(name), []).append(lines)
    return chunks


def source_chunks(nw):
    """read_chunks' result as noweb's markup reads nw (tabs kept)."""
    chunks, lines = {}, None
    for raw in run([os.path.join(NOWEB_LIB, "markup"), "-t", nw],
                   check=True).stdout.split("\n"):
        kw, _, arg = raw.partition(" ")
        if kw == "@defn":
            name, lines = arg, []
        elif lines is None:
            continue
        elif kw == "@nl":
            lines.append([])
        elif kw == "@use" and lines:
            lines[-1].append(("use", arg))
        elif kw == "@text" and arg and lines:   # markup splits at << too
            if lines[-1] and isinstance(lines[-1][-1], str):
                lines[-1][-1] += arg
            else:
                lines[-1].append(arg)
        elif kw == "@end":
            chunks.setdefault(name, []).append(lines[:-1] if lines and
                                               not lines[-1] else lines)
            lines = None
    return chunks


def roundtrip(html_text, nw):
    """Problems where the chunks on a page differ from noweb's reading of
    nw: the same names, and each definition line for line."""
    page, src = read_chunks(html_text), source_chunks(nw)
    problems = []
    if set(page) != set(src):
        problems.append("chunk names differ: only on page %s, only in "
                        "source %s" % (sorted(set(page) - set(src)),
                                       sorted(set(src) - set(page))))
    for name in sorted(set(page) & set(src)):
        for i, (a, b) in enumerate(zip(page[name], src[name])):
            if a != b:
                at = next((k for k, (x, y) in enumerate(zip(a, b)) if x != y),
                          min(len(a), len(b)))
                problems.append("chunk %r part %d, line %d: page %r, source "
                                "%r" % (name, i + 1, at + 1, a[at:at + 1],
                                        b[at:at + 1]))
        if len(page[name]) != len(src[name]):
            problems.append("chunk %r: %d parts on the page, %d in the "
                            "source" % (name, len(page[name]), len(src[name])))
    return problems


def weave_page(nw, facts=os.path.join(FIXTURES, "facts-empty.json")):
    """The HTML page tools/lit/weave.sh makes of nw (AssertionError if it
    fails)."""
    with tempfile.TemporaryDirectory() as tmp:
        p = run([WEAVE, nw, facts, os.path.join(tmp, "page.html")])
        assert p.returncode == 0, "weave.sh failed: " + p.stderr[-2000:]
        with open(os.path.join(tmp, "page.html"), encoding="utf-8") as f:
            return f.read()


def texts(html_text, tag, cls=None):
    """Texts (tags stripped, entities decoded) of all <tag class=cls>
    elements of a page, in order; tag must not nest in itself."""
    return [html.unescape(re.sub(r"<[^>]+>", "", body)) for attrs, body in
            re.findall(r"<%s\b([^>]*)>(.*?)</%s>" % (tag, tag), html_text,
                       re.S)
            if cls is None or re.search(r'class="[^"]*\b%s\b' % cls, attrs)]


# ---- seeded random noweb documents for the fuzz test of nw2md.py ----------
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
            words.insert(0, "[[%s]]" % text(rng, "abcxyz_%+",
                                            rng.randint(1, 4)))
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


def fuzz(seed, budget_s):
    """Check random documents until budget_s passes (at most 400); returns
    (failures, number checked)."""
    rng = random.Random(seed)
    failures, n, start = [], 0, time.time()
    with tempfile.TemporaryDirectory() as tmp:
        while time.time() - start < budget_s and n < 400:
            path = os.path.join(tmp, "doc%d.nw" % n)
            with open(path, "w", encoding="utf-8") as f:
                f.write(document(rng))
            p = run([os.environ.get("NOWEAVE", "noweave"), "-n", "-t",
                     "-index", "-backend", os.path.relpath(NW2MD, ROOT),
                     path])   # noweave splits a backend path at spaces
            problems = (["nw2md exit %d: %s" % (p.returncode, p.stderr)]
                        if p.returncode else roundtrip(p.stdout, path))
            if n % 25 == 0 and not problems:   # now and then, a whole page
                problems = roundtrip(weave_page(path), path)
            if problems:
                keep = os.path.join(ROOT, "build",
                                    "fuzz-failure-%d.nw" % len(failures))
                os.makedirs(os.path.dirname(keep), exist_ok=True)
                shutil.copy(path, keep)
                failures.append("seed %d doc %d (%s): %s" % (
                    seed, n, keep, problems[0][:400]))
            n += 1
    return failures, n
