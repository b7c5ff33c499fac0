"""The lesson page (site/index.html) and the weave tools.

Static: every chunk equals noweb's reading of the source, links and the
identifier index, Pygments' classes, HTML validity (tidy), awkward inputs
(one fixture each), facts and lesson boxes, plots naming the tables of
their numbers, a seeded fuzz test of nw2md.py, tools/lit on a second module.
In headless Chromium at 375, 768 and 1280 px, light and dark: no sideways
page scroll; no code block overflow at 768 and 1280 px (a phone scrolls
code inside its block); every cell of every results table shown whole
(N, piped/sync and % of cuBLAS among them); captions whole; plots inline,
sized to their column, text >= 11 CSS px; WCAG AA contrast of all text;
folds closed; copy buttons copying exactly notangle -R'<chunk>'; anchors,
permalinks, no network; the print view. PAGE_SHOTS=DIR (make site-check)
also writes screenshots and print.pdf there; PAGE=FILE tests another
weave of day74.nw.
"""

import base64
import os
import pathlib
import re
import shutil
import sys

import pytest

import pagelib as P
from conftest import FIXTURES, REPO, run

PAGE = os.environ.get("PAGE", os.path.join(REPO, "site", "index.html"))
NW = os.path.join(REPO, "day74.nw")
DEMO = os.path.join(P.WEAVE_FIXTURES, "page-demo.nw")
WIDTHS, SCHEMES = (375, 768, 1280), ("light", "dark")
KEY_COLUMNS = (r"^N$", r"piped\s*/\s*sync", r"%\s*of\s*cuBLAS")
SHOTS = os.environ.get("PAGE_SHOTS")


def fixture(name):
    """Path of a weave fixture."""
    return os.path.join(P.WEAVE_FIXTURES, name)


@pytest.fixture(scope="session")
def page():
    """The text of the generated page."""
    return pathlib.Path(PAGE).read_text(encoding="utf-8")


@pytest.fixture(scope="session")
def demo(tmp_path_factory):
    """(path, text) of the demo fixture woven with facts-good.json."""
    path = str(tmp_path_factory.mktemp("demo") / "demo.html")
    return path, P.weave_page(DEMO, "facts-good.json", out=path)


@pytest.fixture(scope="session")
def browser():
    b = P.Browser()
    yield b
    b.d.quit()


@pytest.fixture(scope="session", params=[(w, s) for w in WIDTHS
                                         for s in SCHEMES],
                ids=lambda p: "%d-%s" % p)
def view(request, browser):
    """What tests/page_checks.js measures on the page at a width and scheme
    (one load each)."""
    return dict(browser.open(PAGE, *request.param).run("view"),
                scheme=request.param[1])


@pytest.fixture(scope="session", params=WIDTHS)
def demo_view(request, browser, demo):
    return browser.open(demo[0], request.param).run("view")


# ---- the page, read as text -------------------------------------------------

def test_every_chunk_equals_noweb(page):
    """Every chunk of the page, line by line, is noweb's reading of it."""
    problems = P.roundtrip(page, NW)
    assert not problems, "\n  ".join(problems[:10])


def test_links_and_index(page):
    """Every chunk use links to a chunk on the page; the identifier index
    links to chunks; relative links name files; no CUDA word
    (__restrict__) became bold or italic."""
    ids = set(re.findall(r'\bid="([^"]+)"', page))
    hrefs = re.findall(r'class="nwuse"[^>]*href="#([^"]+)"', page)
    assert hrefs and sorted(set(hrefs) - ids) == []
    entries = re.findall(r'<li id="id-[^"]+">(.*?)</li>', page)
    assert 'id="nw-index"' in page and entries
    assert [e[:80] for e in entries if 'href="#nw' not in e] == []
    assert [h for h in re.findall(r'<a [^>]*href="([^"#][^"]*)"', page)
            if not re.match(r"[a-z][a-z0-9+.-]*:", h) and not os.path.exists(
                os.path.join(os.path.dirname(PAGE), h.split("#")[0]))] == []
    assert re.findall(r"<(strong|em)>(restrict|global|device|host|shared|"
                      r"syncthreads|forceinline|launch_bounds|constant|"
                      r"align|managed)</\1>", page) == []


def test_code_is_highlighted_by_pygments(page):
    """Code carries Pygments' short classes, links stay around them."""
    for cls in ("k", "kt", "cp", "c1", "mi"):
        assert f'<span class="{cls}">' in page, cls
    assert re.search(r'<a class="nwident" href="#[^"]+">(<span class="nf">)?'
                     r'matmulTilePiped', page)


def tidy_problems(path):
    """Errors and warnings tidy reports for one HTML file."""
    res = run([os.environ.get("TIDY", "tidy"), "-q", "-e", "-utf8", path])
    problems = [l for l in res.stderr.splitlines()
                if re.search(r"- (Error|Warning): ", l)]
    return problems or (["tidy exit %d: %s" % (res.returncode, res.stderr)]
                        if res.returncode >= 2 else [])


def test_tidy(tmp_path, demo):
    """tidy finds nothing on the page and the demo, and sees a bad page."""
    bad = tmp_path / "bad.html"
    bad.write_text("<!DOCTYPE html><html><head><title>x</title></head><body>"
                   "<p><foo>x</p></body></html>")
    assert tidy_problems(PAGE) == [] and tidy_problems(demo[0]) == []
    assert tidy_problems(str(bad)), "bad page unseen"


@pytest.mark.parametrize("path", [PAGE, "demo"])
def test_plots_name_the_tables_of_their_numbers(path, page, demo):
    """Every plot names (aria-describedby) and links results tables, and
    every number it draws (NAME.values.tsv, '?' where nothing ran) is in
    them, to the precision shown there."""
    html, plots = (page, os.path.join(REPO, "build", "plots")) \
        if path == PAGE else (demo[1], fixture("plots"))
    tables = dict(re.findall(r'<div id="([^"]+)" class="results-table"[^>]*>'
                             r'(.*?)</div>', html, re.S))
    figures = re.findall(r'<figure class="plot" data-plot="([^"]+)" aria-'
                         r'describedby="([^"]+)">(.*?)</figure>', html, re.S)
    assert figures and len(figures) == html.count('<figure class="plot"')
    for name, ids, body in figures:
        assert ids.split() and set(ids.split()) <= set(tables), name
        assert all('href="#%s"' % i in body for i in ids.split()), name
        shown = P.numbers(" ".join(P.texts(" ".join(
            tables[i] for i in ids.split()), "t[dh]")))
        rows = pathlib.Path(plots, name + ".values.tsv").read_text()
        missing = [v for row in rows.splitlines()[1:] for v in
                   row.split("\t") if v != "?" and not any(
                       abs(p - float(v)) <= 0.5 * 10 ** -d + 1e-9
                       for p, d in shown)]
        assert not missing, "%s: not in the tables it names (%s): %s" % (
            name, ids, missing)


# ---- awkward input, one fixture each ----------------------------------------
# Each awkward-*.nw has an .expect file: lines KIND<TAB>TEXT that the page
# must show (code: an inline code span; para: in the prose; line: a line of
# code; html: in the page; absent: not in it; chunk: a chunk name; head: a
# chunk header); "\\t" stands for a tab.
AWKWARD = sorted(f[:-3] for f in os.listdir(P.WEAVE_FIXTURES)
                 if f.startswith("awkward-") and f.endswith(".nw"))


@pytest.mark.parametrize("name", AWKWARD)
def test_awkward_input(name):
    """The page of an awkward fixture round-trips, has valid anchors and
    shows what its .expect file says."""
    html = P.weave_page(fixture(name + ".nw"))
    assert P.roundtrip(html, fixture(name + ".nw")) == []
    assert all(re.fullmatch(r"[a-z][a-z0-9-]*", a) for a in
               re.findall(r'<div class="nwchunk" id="([^"]+)"', html))
    chunks = P.read_chunks(html)
    seen = {"code": P.texts(html, "code"), "html": html, "chunk": chunks,
            "para": " ".join(P.texts(html, "p")),
            "head": P.texts(html, "a", "nwname"),
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

def test_facts_values_stale_and_missing(demo):
    """Values replace names; stale ones are marked; missing ones say so;
    .when divs keep or drop their text by a fact's value."""
    html = demo[1]
    assert re.search(r'<span class="fact"[^>]* data-fact="smem.stage2"[^>]*>'
                     r'16424</span>', html)
    assert 'title="from evidence/compile-nvcc-13.0.txt"' in html
    assert re.search(r'class="fact fact-stale"[^>]* data-fact="ptx.count"'
                     r'[^>]*><code>39</code>\s+<span class="stale-mark">'
                     r'\(stale\)</span>', html), "stale marker missing"
    assert re.search(r'class="fact fact-missing"[^>]* data-fact='
                     r'"unmeasured.one"[^>]*>not yet\s+measured<', html)
    assert "The prediction held, or the evidence could not tell" in html
    assert re.search(r'data-fact="verdict.demo"[^>]*>no\s+measurable\s+'
                     r'effect<', html)
    for gone in ("sentence is hidden", "Hidden too", 'class="when"',
                 "[smem.stage2]", "{.fact}"):
        assert gone not in html


def test_missing_and_unknown_facts(tmp_path):
    """A schema name without a value is named on stderr; one outside the
    schema stops the build, named with its source line, leaving no page."""
    out = str(tmp_path / "x.html")
    p = run([P.WEAVE, DEMO, fixture("facts-good.json"), out],
            env=P.WEAVE_ENV)
    assert p.returncode == 0, p.stderr
    assert "unmeasured.one" in p.stderr and "not yet measured" in p.stderr
    os.remove(out)
    p = run([P.WEAVE, fixture("facts-unknown.nw"), fixture("facts-bad.json"),
             out])
    assert p.returncode != 0, "build succeeded"
    assert "not.in.schema" in p.stderr and "facts-unknown.nw:5" in p.stderr
    assert not os.path.exists(out), "a failed build left its output"


def test_boxes_details_and_tables(demo):
    """details fold by default; objectives, keypoints, banner are boxes; an
    empty banner is dropped; a wide numeric table gets a transposed copy,
    a wide text table cards; tables have no fixed column widths."""
    html = demo[1]
    assert re.search(r"<details><summary>\s*Hint 1\s*</summary>", html)
    assert re.search(r'<details class="solution"><summary>\s*Solution with '
                     r"<code>code</code>\s*</summary>", html)
    assert "<details open" not in html and "<colgroup" not in html
    assert 'class="box objectives"' in html and 'class="box keypoints"' in html
    assert html.count('class="banner" role="status"') == 1
    assert re.search(r'<img src="data:image/svg\+xml;base64,[^"]+" '
                     r'alt="Two timelines', html), "figure not embedded"
    assert 'class="table-narrow" aria-hidden="true"' in html
    assert '<td data-label="kernel file"><code>' in html


@pytest.mark.parametrize("text,option,rc,needle", [
    ("hello\n", [], 1, "not a pipeline line"),
    ("@begin code 0\n@nl\n@end code 0\n", [], 1, "without @defn"),
    ("@fatal markup: broken\n", [], 1, "earlier noweb stage"),
    ("", ["-bogus"], 2, "unknown option")])
def test_nw2md_rejects_bad_input(text, option, rc, needle):
    """Input that is not a noweb pipeline gets a clear error and exit 1; an
    unknown option is a usage error (exit 2)."""
    p = run([P.NW2MD, *option], input=text)
    assert p.returncode == rc and needle in p.stderr


def test_fuzz_backend():
    """Random noweb documents: nw2md.py never fails, keeps every line."""
    failures = P.fuzz(int(os.environ.get("FUZZ_SEED", "7474")),
                      int(os.environ.get("FUZZ_COUNT", "60")))
    assert not failures, "\n  ".join(failures[:5])


# ---- a second module, woven and tangled by tools/lit alone ------------------
# tools/lit must serve the next day's module as it is: a tiny one
# (tests/fixtures/tiny) that shares nothing with Day 74 but that folder.
LIT = os.path.join(REPO, "tools", "lit")


@pytest.fixture(scope="module")
def module(tmp_path_factory):
    """A folder holding the tiny module and a copy of tools/lit only."""
    d = str(tmp_path_factory.mktemp("day75") / "day75")
    shutil.copytree(os.path.join(FIXTURES, "tiny"), d)
    shutil.copytree(LIT, os.path.join(d, "tools", "lit"),
                    ignore=shutil.ignore_patterns("__pycache__"))
    return d


def test_lit_names_nothing_of_day74():
    """No file of tools/lit names Day 74, its source or its kernels."""
    for path in pathlib.Path(LIT).glob("*.*"):
        assert not re.search(r"day ?74|matmul|pipelined_gemm",
                             path.read_text(), re.I), path


def test_tangle(module):
    """The roots check passes, the tangle is the C meant and it runs."""
    tangle = os.path.join(module, "tools", "lit", "tangle.sh")
    assert run([tangle, "--roots", "tiny.nw", "hello.c"],
               cwd=module).returncode == 0
    p = run([tangle, "--roots", "tiny.nw", "other.c"], cwd=module)
    assert p.returncode == 1 and "hello.c" in p.stderr
    p = run([tangle, "tiny.nw", "hello.c", "build/hello.c"], cwd=module)
    assert p.returncode == 0, p.stderr
    assert pathlib.Path(module, "build", "hello.c").read_text() == (
        '#include <stdio.h>\nint main(void) { printf("hello, %d\\n", 1 << 2);'
        ' return 0; }\n')
    assert run(["cc", "-o", "build/hello", "build/hello.c"],
               cwd=module).returncode == 0
    assert run(["build/hello"], cwd=module).stdout == "hello, 4\n"


def test_gather_and_weave(module):
    """Facts gathered without a derive module, then a page woven with its
    own template: facts, .when text, chunks and the identifier index."""
    p = run([sys.executable, "-m", "tools.lit.gather", "--schema",
             "schema.tsv", "--evidence", "evidence", "--source-hash",
             "source.sha256", "--out", "build/facts.json"], cwd=module)
    assert p.returncode == 0 and "unused.one" in p.stderr, p.stderr
    p = run([os.path.join("tools", "lit", "weave.sh"), "tiny.nw",
             "build/facts.json", "build/index.html"], cwd=module)
    assert p.returncode == 0, p.stderr
    html = pathlib.Path(module, "build", "index.html").read_text()
    assert re.search(r'data-fact="hello.ms"[^>]*>1\.23<', html)
    assert "fast enough" in html and "too slow" not in html
    assert 'id="nw-index"' in html and 'class="nwuse"' in html
    assert P.roundtrip(html, os.path.join(module, "tiny.nw")) == []


# ---- in Chromium ------------------------------------------------------------

def test_no_sideways_scroll_and_folds_closed(view):
    """The page itself never scrolls sideways; hints and solutions start
    folded."""
    assert view["scrollWidth"] <= view["width"], view["culprit"]
    assert view["foldedByDefault"]


def code_problems(v):
    """Code blocks cut off at v's width: at 768 px and wider any overflow;
    narrower, blocks off screen or cut instead of scrolling."""
    if v["width"] >= 768:
        return [(c["name"], c["widest"], c["overflow"]) for c in v["code"]
                if c["overflow"] > 0]
    return [c for c in v["code"] if c["right"] > v["width"] + 0.5 or
            c["left"] < -0.5 or (c["overflow"] > 0 and
                                 c["overflowX"] not in ("auto", "scroll"))]


def test_code_blocks(view):
    """No code block overflows at 768 and 1280 px; on a phone long lines
    scroll inside their block."""
    assert view["code"] and code_problems(view) == []


def test_results_tables_whole(view):
    """Every cell of every results table shows whole, without sideways
    scrolling (the phone layouts at 375 px), N, piped/sync and % of cuBLAS
    among them; the captions of tables and figures are whole."""
    tables = view["tables"]
    assert len(tables) >= 8 and any(all(any(re.search(k, h) for h in
                                            t["headers"])
                                        for k in KEY_COLUMNS) for t in tables)
    assert [(t["id"], t["shownAs"], t["problems"][:3]) for t in tables
            if t["problems"] or t["scroll"] > 0] == []
    assert view["captions"] == []


def plot_problems(v):
    """Plots not drawn as one inline SVG of the column's width, with text
    of at least 11 CSS px."""
    out = []
    for p in v["plots"]:
        if len(p["shown"]) != 1 or p["shown"][0]["tag"] != "svg":
            out.append((p["plot"], "drawn as", p["shown"]))
            continue
        art = p["shown"][0]
        want = min(p["figureWidth"], art["maxWidth"] or p["figureWidth"])
        if abs(art["width"] - want) > 1 or not art["texts"] or art["small"]:
            out.append((p["plot"], art["cls"], art["width"], want,
                        art["small"][:4]))
    return out


def test_plots(view):
    """Every plot is one inline SVG sized to its column, text >= 11 px,
    with a visible link to the table of its numbers."""
    assert len(view["plots"]) == 3 and plot_problems(view) == []
    assert all(p["links"] for p in view["plots"])


def test_contrast_wcag_aa(view):
    """All visible text (folds open, code, tables and plots included) has
    WCAG AA contrast: 4.5:1, 3:1 for large text, in either scheme."""
    c = view["contrast"]
    assert c["checked"] > 500 and c["failures"] == []
    assert c["bodyLuminance"] < 0.05 if view["scheme"] == "dark" else \
        c["bodyLuminance"] > 0.8, "the scheme did not apply"


def test_demo_layouts(demo_view):
    """The demo: 80-column code fits from 768 px; its wide tables (numbers,
    transposed on a phone; text, cards) and plot pair fit at every width."""
    v = demo_view
    assert max(c["widest"] for c in v["code"]) == 80
    assert code_problems(v) == [] and plot_problems(v) == []
    assert v["scrollWidth"] <= v["width"] and v["captions"] == []
    assert [t["problems"] for t in v["tables"]] == [[], []]
    assert [t["shownAs"] for t in v["tables"]] == (
        [["table-narrow"], ["table-cards"]] if v["width"] < 768 else
        [["table-wide"], ["table-cards"]])


@pytest.mark.parametrize("which", ["page", "demo"])
def test_copy_buttons_copy_the_tangled_chunk(browser, demo, which):
    """Every chunk has a button copying exactly `notangle -R'<chunk>'`
    (demo: tabs, nesting, UTF-8, quotes), every part's button included;
    every other code block's button copies its text."""
    path, nw = (PAGE, NW) if which == "page" else (demo[0], DEMO)
    got = browser.open(path, 1280).run("copies")
    assert set(got["chunks"]) == set(P.source_chunks(nw))
    wrong = []
    for name, c in got["chunks"].items():
        want = P.notangle(nw, name)
        if not c["buttons"] or c["copied"] != [want] * c["buttons"] or \
                c["tangled"] != want:
            wrong.append((name, c["buttons"], c["copied"][:1], want))
    assert wrong == []
    assert got["others"] and all(o["copied"] == [o["text"].rstrip("\n") +
                                                 "\n"] for o in got["others"])


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
    assert got == P.notangle(DEMO, name)


@pytest.mark.parametrize("which", ["page", "demo"])
def test_links_permalinks_network(browser, demo, which):
    """Anchors resolve, images load with alt text, every heading and chunk
    links to itself, ids are unique; nothing comes from the network; no
    console errors."""
    b = browser.open(PAGE if which == "page" else demo[0], 1280)
    got = b.run("links")
    assert got["bad"] == [] and got["remote"] == []
    assert got["headings"] > (10 if which == "page" else 3)
    assert b.console_errors() == []
    assert not re.search(r'<(script|link|img)[^>]+(src|href)="https?:',
                         pathlib.Path(PAGE).read_text())


def test_print_view(browser):
    """Printing hides the contents list, copy buttons and phone tables,
    wraps code instead of cutting it, and marks every fold as folded."""
    b = browser.open(PAGE, 1280, media="print")
    got = b.run("print")
    assert got["chrome"] == [] and got["codeCut"] == []
    assert got["folds"] and [f for f in got["folds"]
                             if "folded" not in f[1]] == []
    if SHOTS:
        os.makedirs(SHOTS, exist_ok=True)
        pdf = b.d.execute_cdp_cmd("Page.printToPDF", {})
        pathlib.Path(SHOTS, "print.pdf").write_bytes(
            base64.b64decode(pdf["data"]))


SHOT_VIEWS = [("top", None), ("results", ".results-table"),
              ("cards", ".table-cards"), ("plot", "figure.plot"),
              ("banner", ".banner"), ("code", ".nwchunk"),
              ("exercise", "details"), ("index", "ul.nwindex")]


@pytest.mark.skipif(not SHOTS, reason="PAGE_SHOTS unset (make site-check)")
@pytest.mark.parametrize("width", [375, 1280])
@pytest.mark.parametrize("scheme", SCHEMES)
def test_screenshots(browser, width, scheme):
    """Writes PAGE_SHOTS/<width>-<scheme>-<view>.png for a reviewer, folds
    open from the exercise on."""
    b = browser.open(PAGE, width, scheme)
    os.makedirs(SHOTS, exist_ok=True)
    for view, selector in SHOT_VIEWS:
        if view == "exercise":
            b.d.execute_script("document.querySelectorAll('details')"
                               ".forEach(d => { d.open = true; })")
        path = os.path.join(SHOTS, "%d-%s-%s.png" % (width, scheme, view))
        b.shot(path, selector)
        assert os.path.getsize(path) > 1000
