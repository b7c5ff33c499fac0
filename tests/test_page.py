"""The lesson page (site/index.html) and the weave tools: chunk round trip
against notangle, links, HTML validity (tidy), headless Chromium at 375
and 1280 px, awkward inputs (one fixture each), facts and lesson boxes,
a seeded fuzz test of nw2md.py, and tools/lit on a second module."""

import os
import pathlib
import re
import shutil
import sys

import pytest

import pagelib as P
from conftest import FIXTURES, REPO, run

PAGE = os.path.join(REPO, "site", "index.html")
NW = os.path.join(REPO, "day74.nw")
TIDY = os.environ.get("TIDY", "tidy")


def read(path):
    """The text of a UTF-8 file."""
    with open(path, encoding="utf-8") as f:
        return f.read()


def fixture(name):
    """Path of a weave fixture."""
    return os.path.join(P.FIXTURES, name)


@pytest.fixture(scope="module")
def page():
    """The text of the generated page."""
    return read(PAGE)


@pytest.fixture(scope="module")
def demo():
    """The demo fixture woven with facts-good.json."""
    return P.weave_page(fixture("page-demo.nw"), fixture("facts-good.json"))


# ---- the page ---------------------------------------------------------------

def test_every_chunk_equals_notangle(page):
    """Every chunk of the page, expanded, equals notangle -R of the source."""
    problems = P.roundtrip(page, NW)
    assert not problems, "\n  ".join(problems[:10])


def test_links_and_index(page):
    """Every chunk use links to a chunk on the page; the page ends with an
    identifier index whose entries link to chunks; every relative link
    names a file; no CUDA word (__restrict__) became bold or italic."""
    ids = set(re.findall(r'\bid="([^"]+)"', page))
    hrefs = re.findall(r'class="nwuse"[^>]*href="#([^"]+)"', page)
    assert hrefs, "no chunk-use links found"
    assert sorted(set(h for h in hrefs if h not in ids)) == []
    assert 'id="nw-index"' in page, "no identifier index ('@ %def' lines)"
    entries = re.findall(r'<li id="id-[^"]+">(.*?)</li>', page)
    assert entries, "identifier index is empty"
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
    res = run([TIDY, "-q", "-e", "-utf8", "--show-warnings", "yes", path])
    problems = [l for l in res.stderr.splitlines()
                if re.search(r"- (Error|Warning): ", l)]
    if res.returncode >= 2 and not problems:
        problems.append("tidy exit %d: %s" % (res.returncode, res.stderr))
    return problems


def test_tidy(tmp_path, demo):
    """tidy finds nothing on the page and the demo (facts, boxes, details,
    figure), and does see a bad page."""
    (tmp_path / "demo.html").write_text(demo, encoding="utf-8")
    (tmp_path / "bad.html").write_text("<!DOCTYPE html><html><head><title>"
                                       "x</title></head><body><p><foo>x</p>"
                                       "</body></html>")
    assert tidy_problems(PAGE) == []
    assert tidy_problems(str(tmp_path / "demo.html")) == []
    assert tidy_problems(str(tmp_path / "bad.html")), "bad page unseen"


BROWSER_JS = os.path.join(P.FIXTURES, "..", "browser-check.js")


@pytest.mark.parametrize("width", [375, 1280])
def test_browser(width):
    """In headless Chromium: no console errors, anchors resolve, images load
    with alt text, details folded, no horizontal overflow; screenshots go
    to build/ for review."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    opts = webdriver.ChromeOptions()
    opts.binary_location = shutil.which(os.environ.get("CHROMIUM",
                                                       "chromium"))
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu",
                 "--disable-dev-shm-usage", "--hide-scrollbars",
                 "--window-size=%d,900" % max(width, 500)):
        opts.add_argument(flag)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(shutil.which(os.environ.get(
        "CHROMEDRIVER", "chromedriver"))), options=opts)
    try:
        driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
            "width": width, "height": 900, "deviceScaleFactor": 1,
            "mobile": width < 600})
        driver.get("file://" + PAGE)
        with open(BROWSER_JS) as f:
            result = driver.execute_script(f.read())
        problems = list(result["problems"])
        if result["width"] != width:
            problems.append("viewport is %s px" % result["width"])
        problems += ["console: " + e.get("message", "")[:200]
                     for e in driver.get_log("browser")
                     if e.get("level") == "SEVERE"]
        os.makedirs(os.path.join(REPO, "build"), exist_ok=True)
        driver.save_screenshot(os.path.join(REPO, "build",
                                            "screenshot-%d.png" % width))
        for what, sel in (("code", ".nwchunk"), ("figure", "img"),
                          ("details", "details"), ("index", "#nw-index")):
            driver.execute_script("const c=document.querySelector(arguments"
                                  "[0]); if (c) c.scrollIntoView();", sel)
            driver.save_screenshot(os.path.join(
                REPO, "build", "screenshot-%d-%s.png" % (width, what)))
    finally:
        driver.quit()
    assert problems == []


# ---- awkward input, one fixture each ----------------------------------------
# Each awkward-*.nw has an .expect file: lines KIND<TAB>TEXT that the page
# must show (code: an inline code span; para: in the prose; line: a line of
# code; html: in the page; absent: not in it; chunk: a chunk name; head: a
# chunk header); "\\t" stands for a tab.
AWKWARD = sorted(f[:-3] for f in os.listdir(P.FIXTURES)
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
    for expect in read(fixture(name + ".expect")).splitlines():
        if expect and not expect.startswith("#"):
            kind, text = expect.replace("\\t", "\t").split("\t", 1)
            if kind == "absent":
                assert text not in html
            else:
                assert text in seen[kind], (kind, text)


# ---- facts and lesson boxes -------------------------------------------------

def test_facts_values_stale_and_missing(demo):
    """Values replace names; stale ones are marked; missing ones say so;
    .when divs keep or drop their text by a fact's value."""
    assert re.search(r'<span class="fact"[^>]* data-fact="smem.stage2"[^>]*>'
                     r'16424</span>', demo)
    assert re.search(r'title="from evidence/compile-nvcc-13.0.txt"', demo)
    assert re.search(r'class="fact fact-stale"[^>]* data-fact="ptx.count"'
                     r'[^>]*><code>39</code>\s+<span class="stale-mark">'
                     r'\(stale\)</span>', demo), "stale marker missing"
    assert re.search(r'class="fact fact-missing"[^>]* data-fact='
                     r'"unmeasured.one"[^>]*>not yet\s+measured<', demo)
    assert "The prediction held, or the evidence could not tell" in demo
    assert re.search(r'data-fact="verdict.demo"[^>]*>no\s+measurable\s+'
                     r'effect<', demo)
    assert "sentence is hidden" not in demo and "Hidden too" not in demo
    assert 'class="when"' not in demo
    assert "[smem.stage2]" not in demo and "{.fact}" not in demo


def test_missing_and_unknown_facts(tmp_path):
    """A schema name without a value is named on stderr; one outside the
    schema stops the build, named with its source line, leaving no page."""
    out = str(tmp_path / "x.html")
    p = run([P.WEAVE, fixture("page-demo.nw"), fixture("facts-good.json"),
             out])
    assert p.returncode == 0, p.stderr
    assert "unmeasured.one" in p.stderr and "not yet measured" in p.stderr
    os.remove(out)
    p = run([P.WEAVE, fixture("facts-unknown.nw"), fixture("facts-bad.json"),
             out])
    assert p.returncode != 0, "build succeeded"
    assert "not.in.schema" in p.stderr and "facts-unknown.nw:5" in p.stderr
    assert not os.path.exists(out), "a failed build left its output"


def test_boxes_and_details(demo):
    """details fold by default; objectives, keypoints, banner are boxes."""
    assert re.search(r"<details><summary>\s*Hint 1\s*</summary>", demo)
    assert re.search(r'<details class="solution"><summary>\s*Solution with '
                     r"<code>code</code>\s*</summary>", demo)
    assert "<details open" not in demo
    assert 'class="box objectives"' in demo
    assert 'class="box keypoints"' in demo
    assert re.search(r'class="banner" role="status"', demo)
    assert re.search(r'<img src="data:image/svg\+xml;base64,[^"]+" '
                     r'alt="Two timelines', demo), "figure not embedded"


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
    failures, count = P.fuzz(seed=int(os.environ.get("FUZZ_SEED", "7474")),
                               budget_s=float(os.environ.get("FUZZ_SECONDS",
                                                             "30")))
    assert count >= 20, "only %d documents in the time budget" % count
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
    assert p.returncode == 0, p.stderr
    assert "unused.one" in p.stderr, "the summary names what is missing"
    p = run([os.path.join("tools", "lit", "weave.sh"), "tiny.nw",
             "build/facts.json", "build/index.html"], cwd=module)
    assert p.returncode == 0, p.stderr
    html = pathlib.Path(module, "build", "index.html").read_text()
    assert re.search(r'data-fact="hello.ms"[^>]*>1\.23<', html)
    assert "fast enough" in html and "too slow" not in html
    assert 'id="nw-index"' in html and 'class="nwuse"' in html
    assert P.roundtrip(html, os.path.join(module, "tiny.nw")) == []
