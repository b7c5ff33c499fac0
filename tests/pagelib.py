"""Helpers of tests/test_page.py: noweb's reading of a source, the chunks
a page shows, weaving, a headless Chromium, and seeded random noweb
documents for the fuzz test of nw2md.py."""

import base64
import functools
import html
import os
import pathlib
import random
import re
import shutil
import subprocess
import tempfile

from conftest import FIXTURES, REPO, run

WEAVE_FIXTURES = os.path.join(FIXTURES, "weave")
NW2MD = os.path.join(REPO, "tools", "lit", "nw2md.py")
WEAVE = os.path.join(REPO, "tools", "lit", "weave.sh")
NOWEB_LIB = os.environ.get("NOWEB_LIB", "/usr/lib/noweb")
# Weaves find the fixtures' plots.
WEAVE_ENV = {**os.environ, "SITE_EXTRA_RESOURCES":
             os.path.join(WEAVE_FIXTURES, "plots")}
# A chunk as tools/lit/nw2md.py marks it up, uses as <a class="nwuse">.
CHUNK = re.compile(r'<div class="nwchunk"[^>]*? data-chunk="([^"]*)".*?'
                   r'<pre class="nwcode[^"]*"><code>(.*?)</code></pre>', re.S)
USE = re.compile(r'<a class="nwuse" data-chunk="([^"]*)"[^>]*>.*?</a>')


def fixture(name):
    return os.path.join(WEAVE_FIXTURES, name)


@functools.lru_cache(maxsize=None)
def _markup(nw, flags, *stamp):
    return subprocess.run([os.path.join(NOWEB_LIB, "markup"), *flags, nw],
                          check=True, capture_output=True).stdout


def markup(nw, *flags):
    """noweb's markup of nw (-t: tabs kept), read once per file version."""
    st = os.stat(nw)
    return _markup(nw, flags, st.st_mtime_ns, st.st_size)


def notangle(nw, name):
    """`notangle -R'name' nw`, by its stages: the script cannot quote."""
    return subprocess.run([os.path.join(NOWEB_LIB, "nt"), "-R" + name],
                          input=markup(nw), check=True,
                          capture_output=True).stdout.decode()


def read_chunks(html_text):
    """{name: [definition]}, a definition a list of lines, each a list of
    code text (str) and uses (("use", name))."""
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
    """read_chunks' result as noweb's markup reads nw."""
    chunks, lines = {}, None
    for raw in markup(nw, "-t").decode().split("\n"):
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
    """Where the page's chunks differ from noweb's reading of nw."""
    page, src = read_chunks(html_text), source_chunks(nw)
    problems = ["chunk names differ: only on page %s, only in source %s" % (
        sorted(set(page) - set(src)), sorted(set(src) - set(page)))
        ] if set(page) != set(src) else []
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


def weave_page(nw, facts="facts-empty.json", out=None):
    """The page weave.sh makes of nw with a facts fixture (kept at out)."""
    with tempfile.TemporaryDirectory() as tmp:
        path = out or os.path.join(tmp, "page.html")
        p = run([WEAVE, nw, fixture(facts), path], env=WEAVE_ENV)
        assert p.returncode == 0, "weave.sh failed: " + p.stderr[-2000:]
        return pathlib.Path(path).read_text(encoding="utf-8")


def texts(html_text, tag, cls=None):
    """Plain texts of the page's <tag class=cls> (tag must not nest)."""
    return [html.unescape(re.sub(r"<[^>]+>", "", body)) for attrs, body in
            re.findall(r"<%s\b([^>]*)>(.*?)</%s>" % (tag, tag), html_text,
                       re.S)
            if cls is None or re.search(r'class="[^"]*\b%s\b' % cls, attrs)]


def numbers(text):
    """[(value, decimals)] of the numbers written in a text."""
    return [(float(m.group(0).replace(",", "")), len(m.group(1) or ""))
            for m in re.finditer(r"(?<![\w.])\d[\d,]*(?:\.(\d+))?", text)]


class Browser:
    """One headless Chromium (selenium); pages get page_checks.js as C."""

    def __init__(self):
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
        opts = webdriver.ChromeOptions()
        opts.binary_location = shutil.which(os.environ.get("CHROMIUM",
                                                           "chromium"))
        for flag in ("--headless=new", "--no-sandbox", "--disable-gpu",
                     "--disable-dev-shm-usage", "--hide-scrollbars",
                     "--window-size=1280,900"):
            opts.add_argument(flag)
        opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        self.d = webdriver.Chrome(options=opts, service=Service(
            shutil.which(os.environ.get("CHROMEDRIVER", "chromedriver"))))
        self.checks = pathlib.Path(REPO, "tests", "page_checks.js") \
            .read_text(encoding="utf-8")

    def open(self, path, width, scheme="light", media="screen"):
        self.d.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
            "width": width, "height": 900, "deviceScaleFactor": 1,
            "mobile": width < 600})
        self.d.execute_cdp_cmd("Emulation.setEmulatedMedia", {
            "media": media, "features": [
                {"name": "prefers-color-scheme", "value": scheme}]})
        self.d.get("about:blank")
        self.d.get("file://" + path)
        self.d.execute_script(self.checks)
        return self

    def run(self, check, *args):
        return self.d.execute_script(
            "return C[arguments[0]](...arguments[1])", check, args)

    def shot(self, path, selector=None):
        """A PNG of the element (or the first screen) at path."""
        clip = self.d.execute_script(
            "const e = arguments[0] && document.querySelector(arguments[0]);"
            "if (!e) return null; const r = e.getBoundingClientRect();"
            "return {x: 0, y: Math.max(0, r.top + scrollY - 16), scale: 1,"
            " width: innerWidth, height: Math.min(r.height + 32, 2400)}",
            selector)
        png = self.d.execute_cdp_cmd("Page.captureScreenshot", dict(
            clip=clip, captureBeyondViewport=True) if clip else {})
        with open(path, "wb") as f:
            f.write(base64.b64decode(png["data"]))


# ---- seeded random noweb documents for the fuzz test of nw2md.py ----------
NAME = "abcdefghijklmnopqrstuvwxyzABCXYZ0123456789_.,;:!?'\"()&*+-/%#$"
CODE = ("abcdefghijklmnopqrstuvwxyz_ABC0123456789 \t(){}[];,.+-*/%=!?'\"\\#&|"
        "^~:<>`$µ≡⟨")
WORDS = ["the", "tile", "a < b", "c > d", "x & y", "&amp;", "<b>",
         "__syncthreads()", "snake_case", "*star*", "`tick`", "\\", "$5",
         "µs", "≡", "kernel@<<<g>>>", "100%", "#1"]
PREFIXES = ["", "\t", "    ", "  x = ", "\t\tf(", "ab\t"]


def text(rng, chars, n):
    """Random text from chars, without "<<", ">>" or a trailing "<"."""
    s = "".join(rng.choice(chars) for _ in range(n))
    return re.sub(r"([<>])\1+", r"\1", s).rstrip("<@")


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
    """A line of code: text, an escape, maybe a use of a chunk."""
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


def fuzz(seed, count):
    """Check count random documents; returns the failures."""
    rng, failures = random.Random(seed), []
    with tempfile.TemporaryDirectory() as tmp:
        for n in range(count):
            path = os.path.join(tmp, "doc%d.nw" % n)
            pathlib.Path(path).write_text(document(rng), encoding="utf-8")
            p = run([os.environ.get("NOWEAVE", "noweave"), "-n", "-t",
                     "-index", "-backend", os.path.relpath(NW2MD, REPO),
                     path])   # noweave splits a backend path at spaces
            problems = (["nw2md exit %d: %s" % (p.returncode, p.stderr)]
                        if p.returncode else roundtrip(p.stdout, path))
            if n % 25 == 0 and not problems:   # now and then, a whole page
                problems = roundtrip(weave_page(path), path)
            if problems:
                keep = os.path.join(REPO, "build", "fuzz-failure-%d.nw" % n)
                os.makedirs(os.path.dirname(keep), exist_ok=True)
                shutil.copy(path, keep)
                failures.append("seed %d doc %d (%s): %s" % (
                    seed, n, keep, problems[0][:400]))
    return failures
