"""pagecheck (litkit): what a module's page tests share (pytest, Chromium
through selenium, tidy): noweb's reading of a source and a page's chunks,
links and their targets across pages, texts and numbers of a page, a
headless Chromium that runs page_checks.js, and the checks a woven page
must pass whatever its module (check_*: each asserts).

NOWEB_LIB (default /usr/lib/noweb) finds noweb's stages; TIDY, CHROMIUM and
CHROMEDRIVER name the tools (make exports them)."""

import base64
import functools
import html
import os
import pathlib
import re
import shutil
import subprocess
import tempfile

import pytest

import litkit

WEAVE = os.path.join(litkit.DIR, "weave.sh")
NOWEB_LIB = os.environ.get("NOWEB_LIB", "/usr/lib/noweb")
# A chunk as litkit's nw2md.py marks it up, uses as <a class="nwuse">.
# (Chunks in a page's <script id="lit-chunks"> are JSON: \" never matches.)
CHUNK = re.compile(r'<div class="nwchunk"[^>]*? data-chunk="([^"]*)".*?'
                   r'<pre class="nwcode[^"]*"><code>(.*?)</code></pre>', re.S)
USE = re.compile(r'<a class="nwuse" data-chunk="([^"]*)"[^>]*>.*?</a>')


def run(cmd, **kw):
    """Run cmd (a list), capturing text."""
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


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


def weave_page(nw, facts, out=None, env=None):
    """The (first) page weave.sh makes of nw with the facts file facts
    (kept at out, other pages beside it); env: weave.sh's environment."""
    with tempfile.TemporaryDirectory() as tmp:
        path = out or os.path.join(tmp, "page.html")
        p = run([WEAVE, nw, facts, path], env=env)
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


def read_pages(first):
    """{path: text} of page_files(first), in order."""
    return {p: pathlib.Path(p).read_text(encoding="utf-8")
            for p in page_files(first)}


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
        self.checks = pathlib.Path(litkit.DIR, "page_checks.js").read_text(
            encoding="utf-8")

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


def tidy_problems(path):
    """tidy's errors and warnings on the page at path (a list of lines)."""
    res = run([os.environ.get("TIDY", "tidy"), "-q", "-e", "-utf8", path])
    problems = [l for l in res.stderr.splitlines()
                if re.search(r"- (Error|Warning): ", l)]
    return problems or (["tidy exit %d: %s" % (res.returncode, res.stderr)]
                        if res.returncode >= 2 else [])


def cut(v):
    """Code blocks and plots that page_checks.js's view() finds cut off or
    drawn wrong."""
    return [c for c in v["code"] if c["cut"]] + [
        p for p in v["plots"] if p["problem"]]


def every(view, key):
    """The items of view()[key] of all pages, each as (page file, item)."""
    return [(os.path.basename(p), x) for p, v in view["pages"].items()
            for x in v[key]]


@pytest.fixture(scope="session")
def browser():
    """One headless Chromium for the session (Browser)."""
    b = Browser()
    yield b
    b.d.quit()


def check_links_across(texts):
    """Every link to an id, on its page or on another page woven from the
    same source (prose links, chunk uses and cross-references, index
    entries, back-links), names an id that page has; links do cross pages
    where there are several; each page's navigation names every page.
    texts: {path: text} of the pages."""
    resolve, bad, across = resolver(texts), [], 0
    for path, text in texts.items():
        for href in re.findall(r'\shref="([^"]*)"', text):
            got = resolve(path, href)
            if got:
                across += got[0] != path
                if not got[1]:
                    bad.append("%s: %s" % (os.path.basename(path), href))
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


def check_plots_tables(woven, plots):
    """Every plot links results tables that show each number it draws
    (plots/NAME.values.tsv; '?': nothing ran), and names those of its own
    page (aria-describedby); plots and their tables may be on any page of
    the same source (a link FILE#ID reaches a table on another page).
    woven: {path: text} of the pages."""
    tables = {(os.path.basename(w), i): t for w, text in woven.items()
              for i, t in re.findall(r'<div id="([^"]+)" class="results-'
                                     r'table"[^>]*>(.*?)</div>', text, re.S)}
    # (page, plot name, the ids its aria-describedby names: tables on its
    # own page, body) of each figure
    figures = [(os.path.basename(w),) + f for w, t in woven.items()
               for f in re.findall(r'<figure class="plot" data-plot="([^"]+)"'
                                   r'(?: aria-describedby="([^"]+)")?>(.*?)'
                                   r'</figure>', t, re.S)]
    assert figures and len(figures) == sum(
        t.count('<figure class="plot"') for t in woven.values())
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


def check_copy_buttons(browser, paths, nw):
    """Each part of a chunk, on any page of paths, has a button copying
    `notangle -R'<chunk>'` of nw, even where the chunk uses chunks of other
    pages; other code copies its text."""
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


def check_links_permalinks(browser, paths, headings_over):
    """On each page of paths: anchors resolve, images load with alt text,
    headings and chunks link to themselves (more than headings_over in
    all), ids are unique; no network; no console errors."""
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
    assert headings > headings_over
