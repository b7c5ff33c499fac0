"""Helpers shared by the weave tests: run the tools, read chunks back.

Chunks are read from the page by their markup (see tools/lit/nw2md.py):
  <div class="nwchunk" data-chunk="NAME"> ... <pre class="nwcode"><code>TEXT
where TEXT holds chunk uses as <a class="nwuse" data-chunk="USED"> (or
<span class="nwuse"> when the used chunk is undefined).
"""

import html.parser
import os
import re
import subprocess
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURES = os.path.join(ROOT, "tests", "fixtures", "weave")
NW2MD = os.path.join(ROOT, "tools", "lit", "nw2md.py")
WEAVE = os.path.join(ROOT, "tools", "lit", "weave.sh")
NOWEAVE = os.environ.get("NOWEAVE", "noweave")
NOTANGLE = os.environ.get("NOTANGLE", "notangle")
NOWEB_LIB = os.environ.get("NOWEB_LIB", "/usr/lib/noweb")
EMPTY_FACTS = os.path.join(FIXTURES, "facts-empty.json")


class Use:
    """A reference to another chunk inside a chunk's code."""

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return "Use(%r)" % self.name


class ChunkReader(html.parser.HTMLParser):
    """Collect every chunk definition on a page, in page order."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.defs = []          # [(name, [str | Use])]
        self.stack = []         # open tags: (tag, role)
        self.current = None     # items of the chunk being read
        self.in_code = False
        self.skip = 0           # depth inside an nwuse element

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        classes = (a.get("class") or "").split()
        role = None
        if tag == "div" and "nwchunk" in classes:
            self.current = []
            self.defs.append((a.get("data-chunk"), self.current))
            role = "chunk"
        elif tag == "pre" and "nwcode" in classes and self.current is not None:
            self.in_code = True
            role = "code"
        elif self.in_code and "nwuse" in classes and not self.skip:
            self.current.append(Use(a.get("data-chunk")))
            self.skip = 1
            role = "use"
        elif self.skip:
            self.skip += 1
        self.stack.append((tag, role))

    def handle_endtag(self, tag):
        while self.stack:
            t, role = self.stack.pop()
            if role == "use":
                self.skip = 0
            elif self.skip:
                self.skip -= 1
            if role == "code":
                self.in_code = False
            if role == "chunk":
                self.current = None
            if t == tag:
                break

    def handle_data(self, data):
        if self.in_code and not self.skip and self.current is not None:
            self.current.append(data)


def read_chunks(html_text):
    """Map chunk name -> list of definitions, each a list of lines of items."""
    reader = ChunkReader()
    reader.feed(html_text)
    reader.close()
    chunks = {}
    for name, items in reader.defs:
        lines, line = [], []
        for item in items:
            if isinstance(item, Use):
                line.append(item)
                continue
            parts = item.split("\n")
            for k, part in enumerate(parts):
                if part:
                    line.append(part)
                if k < len(parts) - 1:
                    lines.append(line)
                    line = []
        if line:
            raise AssertionError("chunk %r: last line has no newline: %r"
                                 % (name, line))
        chunks.setdefault(name, []).append(lines)
    return chunks


def width(text, col=0):
    """Column reached after text starting at col, with tab stops of 8.

    Like noweb, it counts bytes of UTF-8, not characters.
    """
    for ch in text:
        col = (col // 8 + 1) * 8 if ch == "\t" else col + len(ch.encode())
    return col


def expand(chunks, name, keep_tabs, indent=0, column=0, depth=0):
    """Expand chunk name the way notangle does (without the final newline).

    indent is the width each continuation line is indented by; column is
    where the first line starts (the caller's column at the use).
    keep_tabs=True models 'notangle -t8' (indentation in tabs and spaces);
    False models plain 'notangle' (indentation in spaces).  Plain notangle
    also expands tabs inside the text, which this does not model: roundtrip()
    compares that mode only for chunks without tabs.
    """
    if depth > 100:
        raise AssertionError("chunk nesting deeper than 100 at %r" % name)
    if name not in chunks:
        raise AssertionError("chunk %r is used but not on the page" % name)
    lines = [line for d in chunks[name] for line in d]
    out = []
    for i, line in enumerate(lines):
        lead = ""
        if i and line:
            lead = ("\t" * (indent // 8) + " " * (indent % 8)
                    if keep_tabs else " " * indent)
        text = ""
        for item in line:
            if isinstance(item, Use):
                here = width(lead + text) if i else width(text, column)
                text += expand(chunks, item.name, keep_tabs, here, here,
                               depth + 1)
            else:
                text += item
        out.append(lead + text)
    return "\n".join(out)


def has_tab(chunks, name, seen=None):
    """True when chunk name, or a chunk it uses, has a tab in its text."""
    seen = set() if seen is None else seen
    if name in seen or name not in chunks:
        return False
    seen.add(name)
    for d in chunks[name]:
        for line in d:
            for item in line:
                if isinstance(item, Use):
                    if has_tab(chunks, item.name, seen):
                        return True
                elif "\t" in item:
                    return True
    return False


def tangle_page(chunks, name, keep_tabs):
    """What notangle would print for chunk name, built from the page."""
    return expand(chunks, name, keep_tabs) + "\n"


def first_difference(got, want):
    """A short description of where two texts first differ."""
    a, b = got.split("\n"), want.split("\n")
    for i in range(max(len(a), len(b))):
        x = a[i] if i < len(a) else "<missing>"
        y = b[i] if i < len(b) else "<missing>"
        if x != y:
            return "line %d: page %r, notangle %r" % (i + 1, x, y)
    return "no difference"


def notangle(nw, name, keep_tabs):
    """Output of notangle [-t8] -R name on file nw.

    Runs notangle's own two stages (markup | nt) without its shell script,
    whose eval cannot pass a chunk name holding a single quote.
    """
    if os.path.basename(NOTANGLE) != "notangle" or "'" not in name:
        cmd = [NOTANGLE] + (["-t8"] if keep_tabs else []) + ["-R" + name, nw]
        res = subprocess.run(cmd, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE)
        return res.stdout.decode("utf-8")
    markup = subprocess.run([os.path.join(NOWEB_LIB, "markup")] +
                            (["-t"] if keep_tabs else []) + [nw],
                            stdout=subprocess.PIPE, check=True)
    res = subprocess.run([os.path.join(NOWEB_LIB, "nt")] +
                         (["-t8"] if keep_tabs else []) + ["-R" + name],
                         input=markup.stdout, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
    return res.stdout.decode("utf-8")


def chunk_names(nw):
    """Names of all chunks defined in nw, from noweb's markup stage."""
    res = subprocess.run([os.path.join(NOWEB_LIB, "markup"), nw], stdout=subprocess.PIPE,
                         check=True)
    return {line[6:] for line in res.stdout.decode("utf-8").split("\n")
            if line.startswith("@defn ")}


def roundtrip(html_text, nw):
    """Compare every chunk on the page with notangle; return problems."""
    chunks = read_chunks(html_text)
    problems = []
    expected = chunk_names(nw)
    if set(chunks) != expected:
        problems.append("chunk names differ: only on page %s, only in source %s"
                        % (sorted(set(chunks) - expected),
                           sorted(expected - set(chunks))))
    for name in sorted(set(chunks) & expected):
        modes = (True,) if has_tab(chunks, name) else (True, False)
        for keep_tabs in modes:
            want = notangle(nw, name, keep_tabs)
            got = tangle_page(chunks, name, keep_tabs)
            if got != want:
                problems.append("chunk %r (notangle%s): %s" % (
                    name, " -t8" if keep_tabs else "",
                    first_difference(got, want)))
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


VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link",
        "meta", "source", "track", "wbr"}


class TextOf(html.parser.HTMLParser):
    """Collect the text of elements matching a tag (and optional class)."""

    def __init__(self, tag, cls=None):
        super().__init__(convert_charrefs=True)
        self.tag, self.cls = tag, cls
        self.found, self.depth, self.buf = [], 0, []

    def handle_starttag(self, tag, attrs):
        classes = (dict(attrs).get("class") or "").split()
        if tag in VOID:
            return
        if self.depth:
            self.depth += 1
        elif tag == self.tag and (self.cls is None or self.cls in classes):
            self.depth, self.buf = 1, []

    def handle_endtag(self, tag):
        if self.depth:
            self.depth -= 1
            if not self.depth:
                self.found.append("".join(self.buf))

    def handle_data(self, data):
        if self.depth:
            self.buf.append(data)


def texts(html_text, tag, cls=None):
    """Texts of all <tag class=cls> elements of a page, in order."""
    p = TextOf(tag, cls)
    p.feed(html_text)
    p.close()
    return p.found
