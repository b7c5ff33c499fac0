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
import subprocess
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURES = os.path.join(ROOT, "tests", "fixtures", "weave")
NW2MD = os.path.join(ROOT, "tools", "lit", "nw2md.py")
WEAVE = os.path.join(ROOT, "tools", "lit", "weave.sh")
NOWEAVE = os.environ.get("NOWEAVE", "noweave")
NOWEB_LIB = os.environ.get("NOWEB_LIB", "/usr/lib/noweb")
EMPTY_FACTS = os.path.join(FIXTURES, "facts-empty.json")


class Use:
    """A reference to another chunk inside a chunk's code."""

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return "Use(%r)" % self.name


CHUNK = re.compile(r'<div class="nwchunk"[^>]*? data-chunk="([^"]*)".*?'
                   r'<pre class="nwcode[^"]*"><code>(.*?)</code></pre>', re.S)
USE = re.compile(r'<a class="nwuse" data-chunk="([^"]*)"[^>]*>.*?</a>')


def read_chunks(html_text):
    """{chunk name: [definition]} of a page, each definition a list of
    lines, each line a list of str (code text) and Use items."""
    chunks = {}
    for name, body in CHUNK.findall(html_text):
        assert body.endswith("\n") or not body, "chunk %r: no final \\n" % name
        lines = [[Use(html.unescape(x)) if i % 2 else
                  html.unescape(re.sub(r"<[^>]+>", "", x))
                  for i, x in enumerate(USE.split(raw))]
                 for raw in body.split("\n")[:-1]]
        chunks.setdefault(html.unescape(name), []).append(lines)
    return chunks


def normal(lines):
    """Lines of str and Use items with adjacent text merged, empty text
    dropped, and each Use as ("use", name): comparable."""
    out = []
    for line in lines:
        items = []
        for x in line:
            if isinstance(x, Use):
                items.append(("use", x.name))
            elif x and items and isinstance(items[-1], str):
                items[-1] += x
            elif x:
                items.append(x)
        out.append(items)
    return out


def source_chunks(nw):
    """{name: [definition]} as noweb's markup reads nw (tabs kept): each
    definition a list of lines of str and Use items."""
    res = subprocess.run([os.path.join(NOWEB_LIB, "markup"), "-t", nw],
                         stdout=subprocess.PIPE, check=True)
    chunks, lines = {}, None
    for raw in res.stdout.decode("utf-8").split("\n"):
        kw, _, arg = raw.partition(" ")
        if kw == "@begin" and arg.startswith("code"):
            lines, name = None, None
        elif kw == "@defn":
            name, lines = arg, []
        elif lines is None:
            continue
        elif kw == "@nl":
            lines.append([])
        elif kw in ("@text", "@use") and lines:
            lines[-1].append(Use(arg) if kw == "@use" else arg)
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
            a, b = normal(a), normal(b)
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


def weave_md(nw):
    """Run noweave with nw2md on nw; return (returncode, markdown, stderr)."""
    res = subprocess.run([NOWEAVE, "-n", "-t", "-index", "-backend", NW2MD, nw],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    return (res.returncode, res.stdout.decode("utf-8"),
            res.stderr.decode("utf-8"))


def weave_page(nw, facts=EMPTY_FACTS):
    """Build a full page from nw with tools/lit/weave.sh; return its HTML."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "page.html")
        res = subprocess.run([WEAVE, nw, facts, out], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE)
        if res.returncode != 0:
            raise AssertionError("weave.sh failed (%d): %s" % (
                res.returncode, res.stderr.decode("utf-8")[-2000:]))
        with open(out, encoding="utf-8") as f:
            return f.read()


def raw_blocks(markdown):
    """The HTML of each chunk's raw block in nw2md's Markdown output."""
    return re.findall(r"^```\{=html\}\n(<div class=\"nwchunk\".*?)\n```$",
                      markdown, re.M | re.S)


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
            rc, md, err = weave_md(path)
            problems = (["nw2md exit %d: %s" % (rc, err[-500:])] if rc else
                        roundtrip("\n".join(raw_blocks(md)), path))
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
