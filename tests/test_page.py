"""The lesson's pages (site/index.html and the pages its navigation links,
all woven from day74.nw) and the weave tools: chunks equal noweb's reading of
the source; links within and across pages, back-links, index, Pygments,
tidy; awkward input (one fixture each); facts and lesson boxes; plots and
their tables; a seeded fuzz test of nw2md.py; litkit on a second module.
In headless Chromium at 375, 768 and 1280 px, light and dark, each page:
layout, results tables, plots, WCAG AA contrast, copy buttons, anchors, no
network, the print view. Checks of one table or plot look in all pages.
PAGE_SHOTS=DIR (make site-check) also writes screenshots and print.pdf
there; PAGE=FILE tests another weave of day74.nw (its first page)."""

import base64
import functools
import html
import json
import os
import pathlib
import random
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

import pytest

import litkit

from conftest import FIXTURES, REPO, run

PAGE = os.environ.get("PAGE", os.path.join(REPO, "site", "index.html"))
NW = os.path.join(REPO, "day74.nw")
DEMO = os.path.join(FIXTURES, "weave", "page-demo.nw")
WIDTHS, SCHEMES = (375, 768, 1280), ("light", "dark")
CONTRAST_WIDTHS = (375, 1280)   # colours do not change between these
# The gain column: the time saved, percent (older pages: piped/sync).
KEY_COLUMNS = (r"^N$", r"^gain$|piped\s*/\s*sync", r"%\s*of\s*cuBLAS")
SHOTS = os.environ.get("PAGE_SHOTS")

# ---- helpers: noweb's reading, a page's chunks, weaving, Chromium -----------
WEAVE_FIXTURES = os.path.join(FIXTURES, "weave")
# The installed litkit's back end (run by a Python with Pygments) and weave.
NW2MD = [sys.executable, os.path.join(litkit.DIR, "nw2md.py")]
WEAVE = os.path.join(litkit.DIR, "weave.sh")
NOWEB_LIB = os.environ.get("NOWEB_LIB", "/usr/lib/noweb")
# Weaves find the fixtures' plots.
WEAVE_ENV = {**os.environ, "SITE_EXTRA_RESOURCES":
             os.path.join(WEAVE_FIXTURES, "plots")}
# A chunk as litkit's nw2md.py marks it up, uses as <a class="nwuse">.
# (Chunks in a page's <script id="lit-chunks"> are JSON: \" never matches.)
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


def pages_chunks(texts):
    """(read_chunks' result of all the pages' texts, pages in order; the
    names of chunks with parts on more than one page)."""
    chunks, where = {}, {}
    for i, text in enumerate(texts):
        for name, defs in read_chunks(text).items():
            chunks.setdefault(name, []).extend(defs)
            where.setdefault(name, set()).add(i)
    return chunks, {n for n, w in where.items() if len(w) > 1}


def roundtrip(html_text, nw, chunks=None, spread=()):
    """Where the page's chunks (or chunks, from pages_chunks) differ from
    noweb's reading of nw; a chunk of spread is compared part for part in
    any order (its pages need not follow the source's order)."""
    page, src = chunks or read_chunks(html_text), source_chunks(nw)
    problems = ["chunk names differ: only on page %s, only in source %s" % (
        sorted(set(page) - set(src)), sorted(set(src) - set(page)))
        ] if set(page) != set(src) else []
    for name in sorted(set(page) & set(src)):
        mine, theirs = page[name], src[name]
        if name in spread:
            mine, theirs = sorted(mine, key=repr), sorted(theirs, key=repr)
        for i, (a, b) in enumerate(zip(mine, theirs)):
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
    """The (first) page weave.sh makes of nw with a facts fixture (kept at
    out, other pages beside it)."""
    with tempfile.TemporaryDirectory() as tmp:
        path = out or os.path.join(tmp, "page.html")
        p = run([WEAVE, nw, fixture(facts), path], env=WEAVE_ENV)
        assert p.returncode == 0, "weave.sh failed: " + p.stderr[-2000:]
        return pathlib.Path(path).read_text(encoding="utf-8")


def page_files(first):
    """The pages woven with the page first, in order: the links of its
    navigation (nav.lit-pages; itself where it has no link), else first
    alone."""
    if not os.path.exists(first):
        return [first]
    nav = re.search(r'<nav class="lit-pages"[^>]*>(.*?)</nav>', pathlib.Path(
        first).read_text(encoding="utf-8"), re.S)
    items = re.findall(r"<li>(.*?)</li>", nav.group(1), re.S) if nav else []
    return [os.path.join(os.path.dirname(first), html.unescape(h[0]))
            if h else first for h in (re.findall(r'href="([^"]+)"', i)
                                      for i in items)] or [first]


PAGES = page_files(PAGE)


def read_pages(first):
    """{path: text} of page_files(first), in order."""
    return {p: pathlib.Path(p).read_text(encoding="utf-8")
            for p in page_files(first)}


def test_lesson_links_reach_lab_notes(pages):
    """Each lesson link into the lab notes lands on a note in their shape
    (question, what ran, result, verdict, what it means for the lesson),
    which links back to the lesson and on to the record."""
    lesson, lab = (pages[p] for p in PAGES[:2])
    heads = list(re.finditer(r'<h([23])[^>]*\bid="(lab-[^"]+)"', lab))
    notes = {m[2]: lab[m.end():next((n.start() for n in heads[i + 1:]
                                      if n[1] <= m[1]), len(lab))]
             for i, m in enumerate(heads)}
    linked = set(re.findall(r'href="lab\.html#(lab-[^"]+)"', lesson))
    assert linked and linked <= set(notes), linked - set(notes)
    for name in linked:
        parts = re.findall(r"<strong>(Question|What ran|Result|Verdict|For "
                           r"the lesson)\.", notes[name])
        assert parts[:5] == ["Question", "What ran", "Result", "Verdict",
                             "For the lesson"], (name, parts)
        assert 'href="index.html#' in notes[name], name
        assert 'href="record.html#record-' in notes[name], name


def resolver(pages):
    """resolve(path, href) for pages ({path: text}): for a link to "#id" or
    "FILE#id" (FILE one of the pages) from page path, (the page it names,
    whether that page has the id); None for any other link."""
    ids = {p: set(re.findall(r'\bid="([^"]+)"', t)) for p, t in pages.items()}
    files = {os.path.basename(p): p for p in pages}

    def resolve(path, href):
        name, hash_, frag = html.unescape(href).partition("#")
        if not hash_ or (name and name not in files):
            return None
        target = files[name] if name else path
        return target, frag in ids[target]
    return resolve


def unresolved(pages):
    """(the links to ids of pages ({path: text}) whose page lacks the id,
    as "page: href"; the number of links to another page)."""
    resolve, bad, across = resolver(pages), [], 0
    for path, text in pages.items():
        for href in re.findall(r'\shref="([^"]*)"', text):
            got = resolve(path, href)
            if got:
                across += got[0] != path
                if not got[1]:
                    bad.append("%s: %s" % (os.path.basename(path), href))
    return bad, across


def texts(html_text, tag, cls=None):
    """Plain texts of the page's <tag class=cls> (tag must not nest)."""
    return [html.unescape(re.sub(r"<[^>]+>", "", body)) for attrs, body in
            re.findall(r"<%s\b([^>]*)>(.*?)</%s>" % (tag, tag), html_text, re.S)
            if cls is None or re.search(r'class="[^"]*\b%s\b' % cls, attrs)]


def numbers(text):
    """[(value, decimals)] of the numbers written in a text, a sign (- or
    U+2212) in front of a number included."""
    return [(float(m.group(0).replace(",", "").replace("\u2212", "-")),
             len(m.group(1) or "")) for m in re.finditer(
                 r"(?<![\w.])[-\u2212]?\d[\d,]*(?:\.(\d+))?", text)]


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
        self.d.get(pathlib.Path(path).as_uri())
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


@pytest.fixture(scope="session")
def pages():
    """{path: text} of the lesson's pages."""
    return read_pages(PAGE)


@pytest.fixture(scope="session")
def page(pages):
    """The text of all the lesson's pages."""
    return "".join(pages.values())


@pytest.fixture(scope="session")
def demo(tmp_path_factory):
    """(path of its first page, text of all its pages, {path: text}) of the
    demo fixture woven with facts-good.json."""
    path = str(tmp_path_factory.mktemp("demo") / "demo.html")
    weave_page(DEMO, "facts-good.json", out=path)
    texts = read_pages(path)
    return path, "".join(texts.values()), texts


@pytest.fixture(scope="session")
def browser():
    b = Browser()
    yield b
    b.d.quit()


@pytest.fixture(scope="session", ids=lambda p: "%d-%s" % p,
                params=[(w, s) for w in WIDTHS for s in SCHEMES])
def view(request, browser):
    """page_checks.js's view() of each page at a width and scheme:
    {"pages": {path: view}, "scheme": scheme}."""
    return {"scheme": request.param[1], "pages": {
        p: browser.open(p, *request.param).run(
            "view", request.param[0] in CONTRAST_WIDTHS) for p in PAGES}}


@pytest.fixture(scope="session", params=WIDTHS)
def demo_view(request, browser, demo):
    return browser.open(demo[0], request.param).run("view")


# ---- the page, read as text -------------------------------------------------

def test_every_chunk_equals_noweb(pages):
    """Every chunk, all pages together, as noweb reads it."""
    problems = roundtrip(None, NW, *pages_chunks(pages.values()))
    assert not problems, "\n  ".join(problems[:10])


def test_links_and_index(pages, page):
    """Chunk uses and index entries link to chunks, on their page or
    another; the index is on one page; relative links name files; no CUDA
    word (__restrict__) became bold or italic."""
    resolve = resolver(pages)
    uses = [(p, h) for p, t in pages.items()
            for h in re.findall(r'class="nwuse"[^>]*href="([^"]+)"', t)]
    assert uses and [u for u in uses if not (resolve(*u) or (0, 0))[1]] == []
    index = [t for t in pages.values() if 'id="nw-index"' in t]
    assert len(index) == 1
    entries = re.findall(r'<li id="id-[^"]+">(.*?)</li>', index[0])
    assert entries and [e[:80] for e in entries if not re.search(
        r'href="([a-z0-9_-]+\.html)?#nw', e)] == []
    assert [h for h in re.findall(r'<a [^>]*href="([^"#][^"]*)"', page)
            if not re.match(r"[a-z][a-z0-9+.-]*:", h) and not os.path.exists(
                os.path.join(os.path.dirname(PAGE), h.split("#")[0]))] == []
    assert re.findall(r"<(strong|em)>(restrict|global|device|host|shared|"
                      r"syncthreads|forceinline|launch_bounds|constant|"
                      r"align|managed)</\1>", page) == []


@pytest.mark.parametrize("which", ["page", "demo"])
def test_links_across_pages_resolve(pages, demo, which):
    """Every link to an id, on its page or on another page woven from the
    same source (prose links, chunk uses and cross-references, index
    entries, back-links), names an id that page has; links do cross pages
    where there are several; each page's navigation names every page."""
    texts = pages if which == "page" else demo[2]
    bad, across = unresolved(texts)
    assert bad == []
    assert across > 0 or len(texts) == 1
    files = [os.path.basename(p) for p in texts]
    for path, text in texts.items():
        nav = re.findall(r'<nav class="lit-pages"[^>]*>(.*?)</nav>', text,
                         re.S)
        assert len(nav) == (len(texts) > 1), path
        if nav:
            links = re.findall(r'href="([^"]+)"', nav[0])
            assert links == [f for f in files if f != os.path.basename(
                path)] and nav[0].count("<li>") == len(files), path


def test_code_is_highlighted_by_pygments(page):
    """Pygments' short classes, with identifier links around them."""
    assert [c for c in ("k", "kt", "cp", "c1", "mi")
            if f'<span class="{c}">' not in page] == []
    assert re.search(r'<a class="nwident" href="([a-z0-9_-]+\.html)?#[^"]+">'
                     r'(<span class="nf">)?matmulTilePiped', page)


def tidy_problems(path):
    res = run([os.environ.get("TIDY", "tidy"), "-q", "-e", "-utf8", path])
    problems = [l for l in res.stderr.splitlines()
                if re.search(r"- (Error|Warning): ", l)]
    return problems or (["tidy exit %d: %s" % (res.returncode, res.stderr)]
                        if res.returncode >= 2 else [])


def test_tidy(pages, demo):
    """tidy finds nothing on the pages and the demo's, sees a bad page."""
    assert [(p, bad) for p in list(pages) + list(demo[2])
            if (bad := tidy_problems(p))] == []
    assert tidy_problems(fixture("tidy-bad.html")), "bad page unseen"


def page_figures(html_text):
    """[(plot name, described ids, body)] of one page: the ids its
    aria-describedby names (tables on its own page; none when every table
    it links is on another page)."""
    figures = re.findall(r'<figure class="plot" data-plot="([^"]+)"'
                         r'(?: aria-describedby="([^"]+)")?>(.*?)</figure>',
                         html_text, re.S)
    assert len(figures) == html_text.count('<figure class="plot"')
    return figures


@pytest.mark.parametrize("path", ["page", "demo"])
def test_plots_name_the_tables_of_their_numbers(path, pages, demo):
    """Every plot links results tables that show each number it draws
    (NAME.values.tsv; '?': nothing ran), and names those of its own page
    (aria-describedby); plots and their tables may be on any page of the
    same source (a link FILE#ID reaches a table on another page)."""
    woven, plots = (pages, os.path.join(REPO, "build", "plots")) \
        if path == "page" else (demo[2], fixture("plots"))
    tables = {(os.path.basename(w), i): t for w, text in woven.items()
              for i, t in re.findall(r'<div id="([^"]+)" class="results-'
                                     r'table"[^>]*>(.*?)</div>', text, re.S)}
    figures = [(os.path.basename(w),) + f for w, t in woven.items()
               for f in page_figures(t)]
    assert figures
    for page, name, described, body in figures:
        links = re.findall(r'<p class="plot-numbers">.*?</p>', body, re.S)
        targets = [((f or page), i) for f, i in re.findall(
            r'href="([a-z0-9_-]+\.html)?#([^"]+)"', " ".join(links))]
        assert targets and set(targets) <= set(tables), (name, targets)
        assert sorted(described.split()) == sorted(
            i for f, i in targets if f == page), name
        shown = numbers(" ".join(texts(" ".join(
            tables[t] for t in targets), "t[dh]")))
        rows = pathlib.Path(plots, name + ".values.tsv").read_text()
        missing = [v for row in rows.splitlines()[1:] for v in
                   row.split("\t") if v != "?" and not any(
                       abs(p - float(v)) <= 0.5 * 10 ** -d + 1e-9
                       for p, d in shown)]
        assert not missing, "%s: not in the tables it names (%s): %s" % (
            name, targets, missing)


# ---- awkward input, one fixture each ----------------------------------------
# awkward-X.nw's page shows each line KIND<TAB>TEXT of awkward-X.expect
# ("\\t": a tab): code (an inline code span), para (prose), line (of code),
# html (in the page), absent (not in it), chunk (a name), head (a header).
AWKWARD = sorted(f[:-3] for f in os.listdir(WEAVE_FIXTURES)
                 if f.startswith("awkward-") and f.endswith(".nw"))


@pytest.mark.parametrize("name", AWKWARD)
def test_awkward_input(name):
    """Round trip, valid anchors, and what the .expect file says."""
    html = weave_page(fixture(name + ".nw"))
    assert roundtrip(html, fixture(name + ".nw")) == []
    assert all(re.fullmatch(r"[a-z][a-z0-9-]*", a) for a in
               re.findall(r'<div class="nwchunk" id="([^"]+)"', html))
    chunks = read_chunks(html)
    seen = {"code": texts(html, "code"), "html": html, "chunk": chunks,
            "para": " ".join(texts(html, "p")),
            "head": texts(html, "a", "nwname"),
            "line": ["".join(x if isinstance(x, str) else "<<%s>>" % x[1]
                             for x in line) for defs in chunks.values()
                     for d in defs for line in d]}
    for expect in pathlib.Path(fixture(name + ".expect")).read_text() \
            .splitlines():
        if expect and not expect.startswith("#"):
            kind, text = expect.replace("\\t", "\t").split("\t", 1)
            assert (text not in html) if kind == "absent" else \
                text in seen[kind], (kind, text)


# ---- facts and lesson boxes -------------------------------------------------
# The demo shows fact values, stale ones marked, missing ones saying so,
# .when text kept or dropped by a fact; folded details, boxes, an embedded
# figure; a wide numeric table's transposed copy, a wide text table's cards.
DEMO_SHOWS, DEMO_LACKS = json.loads(pathlib.Path(
    fixture("page-demo.json")).read_text()).values()


def test_demo_facts_boxes_and_tables(demo):
    """The demo shows DEMO_SHOWS, none of DEMO_LACKS, and one banner (an
    empty one dropped) on each page (all-pages); tables have no fixed
    column widths."""
    html = demo[1]
    assert [p for p in DEMO_SHOWS if not re.search(p, html)] == []
    assert [t for t in DEMO_LACKS if t in html] == []
    assert [t.count('class="banner" role="status"') for t in
            demo[2].values()] == [1] * len(demo[2]) != [1]


def test_demo_back_links_and_pages(demo):
    """The demo's pages: a marked section with its subsections on the
    second page, the next top-level section back on the first.  On the
    second, the section linked from the first page says "Linked from"
    with a link to each linking section (the page's top before any
    heading); the first page has no such line; a chunk of the first page
    that uses the second page's chunks carries their code."""
    first, notes = demo[2].values()
    heads = [[" ".join(h.split()) for h in texts(t, "h1") + texts(t, "h2")]
             for t in (first, notes)]
    assert "Tabs and nesting" in heads[1] and "Eighty columns" in heads[0]
    assert [h for h in heads[1] if h.startswith("A name with")] and not [
        h for h in heads[0] if h.startswith(("A name with", "Tabs"))]
    assert '<div class="lit-backlinks">' not in first
    lines = re.findall(r'<div class="lit-backlinks">(.*?)</div>', notes, re.S)
    assert len(lines) == 1 and re.findall(r'href="([^"]+)"', lines[0]) == [
        "demo.html", "demo.html#results"]
    assert re.search(r"<h1[^>]*>.*?Tabs and nesting.*?</h1>\s*<div class="
                     r'"lit-backlinks">', notes, re.S)
    data = re.findall(r'<script type="application/json" id="lit-chunks">'
                      r"(.*?)</script>", first, re.S)
    assert len(data) == 1 and {re.search(r'data-chunk="([^"]*)"', c)[1] for
                               c in json.loads(data[0])} == {"nested",
                                                             "inner"}
    assert '<script type="application/json"' not in notes


MARKED = """---
lit-pages:
  - {name: index, title: One}
  - {name: two, title: Two}
---

Intro, [a link](#LINK).

# A section {#a PAGE}

Text.
"""


def marked(link="a", page="page=two", text="Text.\n"):
    """MARKED with its link's target, its section's mark and its text."""
    return MARKED.replace("LINK", link).replace("PAGE", page).replace(
        "Text.\n", text)


@pytest.mark.parametrize("source,env,needles,line", [
    (marked(link="nowhere"), {}, ["'#nowhere'"], 7),
    (marked(page="page=three"), {}, ["page=three is not in lit-pages"], 9),
    (marked(), {"WEAVE_PAGES": "index"}, ["expects 'index'"], None),
    (marked(page="", text='Text.\n::: {.details summary="Hint"}\nHidden.\n'
            ':::\n'), {"WEAVE_PAGES": "index two"},
     ["fenced div read as text", "'::: {.details summary="], None)],
    ids=["dangling-link", "unknown-page", "other-list", "fence-as-text"])
def test_bad_marks_and_links_fail(tmp_path, source, env, needles, line):
    """A link to no id, an undeclared page, another list of pages than the
    caller's, a fenced div right after text (pandoc reads it as text): the
    weave fails naming the source line (quoting the fence), writes no page."""
    src = tmp_path / "marked.nw"
    src.write_text(source)
    out = tmp_path / "out" / "index.html"
    p = run([WEAVE, str(src), fixture("facts-empty.json"), str(out)],
            env={**WEAVE_ENV, **env})
    assert p.returncode == 1 and all(
        n in p.stderr for n in needles), p.stderr
    assert line is None or "%s:%d" % (src, line) in p.stderr, p.stderr
    assert not out.parent.exists() or os.listdir(out.parent) == []
    if env:
        return      # the good source: once is enough
    src.write_text(marked())
    assert run([WEAVE, str(src), fixture("facts-empty.json"), str(out)],
               env=WEAVE_ENV).returncode == 0
    assert sorted(os.listdir(out.parent)) == ["index.html", "index.md",
                                              "two.html"]


def test_missing_and_unknown_facts(tmp_path):
    """A schema name without a value is named on stderr; one outside the
    schema stops the build, named with its source line, leaving no page."""
    out = str(tmp_path / "x.html")
    p = run([WEAVE, DEMO, fixture("facts-good.json"), out], env=WEAVE_ENV)
    assert p.returncode == 0, p.stderr
    assert "unmeasured.one" in p.stderr and "not yet measured" in p.stderr
    os.remove(out)
    p = run([WEAVE, fixture("facts-unknown.nw"),
             fixture("facts-bad.json"), out])
    assert p.returncode != 0, "build succeeded"
    assert "not.in.schema" in p.stderr and "facts-unknown.nw:5" in p.stderr
    assert not os.path.exists(out), "a failed build left its output"


@pytest.mark.parametrize("text,option,rc,needle", [
    ("hello\n", [], 1, "not a pipeline line"),
    ("@begin code 0\n@nl\n@end code 0\n", [], 1, "without @defn"),
    ("@fatal markup: broken\n", [], 1, "earlier noweb stage"),
    ("", ["-bogus"], 2, "unknown option")])
def test_nw2md_rejects_bad_input(text, option, rc, needle):
    """Not a noweb pipeline: a clear error, exit 1; a bad option: exit 2."""
    p = run([*NW2MD, *option], input=text)
    assert p.returncode == rc and needle in p.stderr


# ---- seeded random noweb documents for the fuzz test of nw2md.py ----------
# Characters of chunk names and code, prose words, code lines' prefixes.
NAME, CODE, WORDS, PREFIXES = json.loads(pathlib.Path(
    fixture("fuzz.json")).read_text(encoding="utf-8")).values()


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
        # noweave splits -backend at spaces: a script beside runs nw2md.py
        pathlib.Path(tmp, "nw2md").write_text(
            '#!/bin/sh\nexec %s "$@"\n' % shlex.join(NW2MD))
        os.chmod(os.path.join(tmp, "nw2md"), 0o755)
        for n in range(count):
            path = os.path.join(tmp, "doc%d.nw" % n)
            pathlib.Path(path).write_text(document(rng), encoding="utf-8")
            p = run([os.environ.get("NOWEAVE", "noweave"), "-n", "-t",
                     "-index", "-backend", "./nw2md", path], cwd=tmp)
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


def test_fuzz_backend():
    """Random noweb documents: nw2md.py never fails, keeps every line."""
    failures = fuzz(int(os.environ.get("FUZZ_SEED", "7474")),
                      int(os.environ.get("FUZZ_COUNT", "60")))
    assert not failures, "\n  ".join(failures[:5])


def test_page_tests_in_any_folder(browser, demo, tmp_path, monkeypatch):
    """A checkout in a folder named with a space, #, ? and %: the fuzz test
    runs nw2md.py from there, and Chromium opens a page there."""
    d = tmp_path / "c#course dir?%41"
    d.mkdir()
    monkeypatch.setattr(sys.modules[__name__], "NW2MD", [
        sys.executable, shutil.copy(NW2MD[1], d)])
    assert fuzz(74, 2) == []
    page = shutil.copy(demo[0], d)
    assert browser.open(page, 1280).d.title == html.unescape(re.search(
        r"<title>(.*?)</title>", demo[1], re.S).group(1).strip())


# ---- a second module, woven and tangled by the installed litkit -----------
# litkit must serve the next day's module as it is: a tiny one
# (tests/fixtures/tiny, with its own template) that shares nothing with
# Day 74 but the installed package (examples/day00 is a whole module).


@pytest.fixture(scope="module")
def module(tmp_path_factory):
    """A folder holding the tiny module only."""
    d = str(tmp_path_factory.mktemp("day75") / "day75")
    shutil.copytree(os.path.join(FIXTURES, "tiny"), d)
    return d


def test_tangle(module):
    """The roots check passes, the tangle is the C meant and it runs."""
    sh = functools.partial(run, cwd=module)
    tangle = os.path.join(litkit.DIR, "tangle.sh")
    assert sh([tangle, "--roots", "tiny.nw", "hello.c"]).returncode == 0
    p = sh([tangle, "--roots", "tiny.nw", "other.c"])
    assert p.returncode == 1 and "hello.c" in p.stderr
    p = sh([tangle, "tiny.nw", "hello.c", "build/hello.c"])
    assert p.returncode == 0, p.stderr
    assert pathlib.Path(module, "build", "hello.c").read_text() == (
        '#include <stdio.h>\nint main(void) { printf("hello, %d\\n", 1 << 2);'
        ' return 0; }\n')
    assert sh(["cc", "-o", "build/hello", "build/hello.c"]).returncode == 0
    assert sh(["build/hello"]).stdout == "hello, 4\n"


def test_gather_and_weave(module):
    """Facts gathered without a derive module, then a page woven with its
    own template: facts, .when text, chunks and the identifier index."""
    sh = functools.partial(run, cwd=module)
    p = sh([sys.executable, "-m", "litkit.gather", "--schema",
            "schema.tsv", "--evidence", "evidence", "--source-hash",
            "source.sha256", "--out", "build/facts.json"])
    assert p.returncode == 0 and "unused.one" in p.stderr, p.stderr
    p = sh([WEAVE, "tiny.nw", "build/facts.json",
            "build/index.html"], env={**os.environ, "SITE_DIR": "site"})
    assert p.returncode == 0, p.stderr
    html = pathlib.Path(module, "build", "index.html").read_text()
    assert re.search(r'data-fact="hello.ms"[^>]*>1\.23<', html)
    assert "fast enough" in html and "too slow" not in html
    assert 'id="nw-index"' in html and 'class="nwuse"' in html
    assert roundtrip(html, os.path.join(module, "tiny.nw")) == []


# ---- in Chromium ------------------------------------------------------------

def cut(v):
    """Code blocks and plots that page_checks.js's view() finds cut off or
    drawn wrong."""
    return [c for c in v["code"] if c["cut"]] + [
        p for p in v["plots"] if p["problem"]]


def every(view, key):
    """The items of view()[key] of all pages, each as (page file, item)."""
    return [(os.path.basename(p), x) for p, v in view["pages"].items()
            for x in v[key]]


def test_fits_and_folds(view):
    """On each page: no sideways page scroll; code blocks fit (a phone
    scrolls inside them) and keep the text's colour; plots fit and link
    their tables; folds start closed.  The three plots are on some page."""
    for path, v in view["pages"].items():
        assert v["scrollWidth"] <= v["width"], (path, v["culprit"])
        assert v["foldedByDefault"], path
        assert cut(v) == [], path
        assert [c["name"] for c in v["code"] if c["tinted"]] == [], path
    assert every(view, "code") and len(every(view, "plots")) == 3
    assert all(p["links"] for _, p in every(view, "plots"))


def test_results_tables_whole(view):
    """Every cell of every results table (N, the gain, % of cuBLAS among
    them, on whichever page) and every caption shows whole, without
    sideways scrolling."""
    tables = [t for _, t in every(view, "tables")]
    assert len(tables) >= 8 and any(all(any(re.search(k, h) for h in
                                            t["headers"])
                                        for k in KEY_COLUMNS) for t in tables)
    assert [(p, t["id"], t["shownAs"], t["problems"][:3])
            for p, t in every(view, "tables")
            if t["problems"] or t["scroll"] > 0] == []
    assert every(view, "captions") == []


def test_stale_marks_keep_tables_whole(browser, tmp_path):
    """After a code edit each number shows "(stale)" (here every fact of
    build/facts.json): every results table and caption still shows whole
    and no page scrolls sideways, at every width (page.js's phone layout
    takes any overflow, a pixel's too)."""
    facts = json.loads(pathlib.Path(REPO, "build/facts.json").read_text())
    for v in facts["facts"].values():
        v["stale"] = True
    f, first = tmp_path / "facts.json", str(tmp_path / "index.html")
    f.write_text(json.dumps(facts))
    p = run([WEAVE, NW, str(f), first], env={**os.environ, "SITE_EXTRA_"
             "RESOURCES": os.path.join(REPO, "build", "plots")})
    pages = [q for q in page_files(first) if "results-table" in
             pathlib.Path(q).read_text()]
    assert p.returncode == 0 and sum(pathlib.Path(q).read_text().count(
        '"stale-mark"') for q in pages) > 100, p.stderr[-2000:]
    views = {(w, os.path.basename(q)): browser.open(q, w).run("view", False)
             for w in WIDTHS for q in pages}
    assert [(k, t["id"], t["problems"][:2]) for k, v in views.items() for t
            in v["tables"] if t["problems"] or t["scroll"] > 0] == []
    assert [k for k, v in views.items() if v["captions"] or
            v["scrollWidth"] > v["width"]] == []


def test_contrast_wcag_aa(view):
    """All visible text of each page, folds open: 4.5:1, 3:1 for large
    text; each page in the scheme asked for (at CONTRAST_WIDTHS)."""
    if not all(v["contrast"] for v in view["pages"].values()):
        pytest.skip("contrast is checked at 375 and 1280 px only (the "
                    "colours are the same between)")
    for path, v in view["pages"].items():
        c = v["contrast"]
        assert c["checked"] > 50 and c["failures"] == [], path
        assert c["bodyLuminance"] < 0.05 if view["scheme"] == "dark" else \
            c["bodyLuminance"] > 0.8, "the scheme did not apply: " + path
    assert sum(v["contrast"]["checked"] for v in view["pages"].values()) \
        > 500


def test_demo_layouts(demo_view):
    """80-column code fits from 768 px; wide tables (numbers transposed on
    a phone; text as cards) and the plot pair fit at every width."""
    v = demo_view
    assert max(c["widest"] for c in v["code"]) == 80
    assert cut(v) == []
    assert v["scrollWidth"] <= v["width"] and v["captions"] == []
    assert [t["problems"] for t in v["tables"]] == [[], []]
    assert [t["shownAs"] for t in v["tables"]] == [[
        "table-narrow" if v["width"] < 768 else "table-wide"], ["table-cards"]]


@pytest.mark.parametrize("which", ["page", "demo"])
def test_copy_buttons_copy_the_tangled_chunk(browser, demo, which):
    """Each part of a chunk, on any page, has a button copying `notangle
    -R'<chunk>'`, even where the chunk uses chunks of other pages (demo:
    tabs, nesting, UTF-8, quotes, a chunk of one page using one of another);
    other code copies its text."""
    paths, nw = (PAGES, NW) if which == "page" else (list(demo[2]), DEMO)
    got = {p: browser.open(p, 1280).run("copies") for p in paths}
    names = {n for g in got.values() for n in g["chunks"]}
    assert names == set(source_chunks(nw))
    want = {name: notangle(nw, name) for name in names}
    assert [(os.path.basename(p), n, c["buttons"], c["copied"][:1], want[n])
            for p, g in got.items() for n, c in g["chunks"].items()
            if not c["buttons"] or c["copied"] != [want[n]] * c["buttons"] or
            c["tangled"] != want[n]] == []
    others = [o for g in got.values() for o in g["others"]]
    assert others and all(o["copied"] == [o["text"].rstrip("\n") + "\n"]
                          for o in others)


def test_copy_reaches_the_clipboard(browser, demo):
    """The button writes to the real clipboard, offline, from file://."""
    b = browser.open(demo[0], 1280)
    b.d.execute_cdp_cmd("Browser.grantPermissions", {"permissions": [
        "clipboardReadWrite", "clipboardSanitizedWrite"]})
    name = b.d.execute_script(
        "document.querySelector('.nwhead .copy-button').click();"
        "return document.querySelector('.nwchunk').dataset.chunk")
    got = b.d.execute_async_script(
        "const done = arguments[0]; setTimeout(() => navigator.clipboard"
        ".readText().then(done, e => done('ERROR ' + e)), 200);")
    assert got == notangle(DEMO, name)


@pytest.mark.parametrize("which", ["page", "demo"])
def test_links_permalinks_network(browser, demo, which):
    """On each page: anchors resolve, images load with alt text, headings
    and chunks link to themselves, ids are unique; no network; no console
    errors."""
    paths = PAGES if which == "page" else list(demo[2])
    headings = 0
    for path in paths:
        b = browser.open(path, 1280)
        got = b.run("links")
        assert got["bad"] == [] and got["remote"] == [], path
        headings += got["headings"]
        assert [e["message"] for e in b.d.get_log("browser")
                if e.get("level") == "SEVERE"] == [], path
        assert not re.search(r'<(script|link|img)[^>]+(src|href)="https?:',
                             pathlib.Path(path).read_text()), path
    assert headings > (10 if which == "page" else 3)


def test_print_view(browser):
    """Printing each page hides the contents, the navigation, copy buttons
    and phone tables, wraps code instead of cutting it, and marks every
    fold as folded."""
    folds = []
    for path in PAGES:
        b = browser.open(path, 1280, media="print")
        got = b.run("print")
        assert got["chrome"] == [] and got["codeCut"] == [], path
        folds += got["folds"]
        if SHOTS and path == PAGE:
            os.makedirs(SHOTS, exist_ok=True)
            pdf = b.d.execute_cdp_cmd("Page.printToPDF", {})
            pathlib.Path(SHOTS, "print.pdf").write_bytes(
                base64.b64decode(pdf["data"]))
    assert folds and [f for f in folds if "folded" not in f[1]] == []


SHOT_VIEWS = [("top", None), ("results", ".results-table"),
              ("cards", ".table-cards"), ("plot", "figure.plot"),
              ("banner", ".banner"), ("code", ".nwchunk"),
              ("exercise", "details"), ("index", "ul.nwindex")]


@pytest.mark.skipif(not SHOTS, reason="PAGE_SHOTS unset (make site-check)")
@pytest.mark.parametrize("width", [375, 1280])
@pytest.mark.parametrize("scheme", SCHEMES)
def test_screenshots(browser, width, scheme):
    """PAGE_SHOTS/<width>-<scheme>-<view>.png, folds open from exercise."""
    b = browser.open(PAGE, width, scheme)
    os.makedirs(SHOTS, exist_ok=True)
    for view, selector in SHOT_VIEWS:
        if view == "exercise":
            b.d.execute_script("document.querySelectorAll('details')"
                               ".forEach(d => { d.open = true; })")
        path = os.path.join(SHOTS, "%d-%s-%s.png" % (width, scheme, view))
        b.shot(path, selector)
        assert os.path.getsize(path) > 1000
