#!/usr/bin/env python3
"""Tests of the lesson page and of the weave tools (make site-check).

  run.py --page site/index.html --nw day74.nw [--only SUBSTRING]

Groups: chunk round trip against notangle, links and files on disk, HTML
validity (tidy), headless Chromium at 375 and 1280 px, awkward inputs (one
fixture each), facts and lesson boxes, and a seeded fuzz test of nw2md.
Prints one line per test and ends with 'N passed, M failed'; exits 1 on any
failure.
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pagelib as P  # noqa: E402
import fuzz  # noqa: E402

TESTS = []
ARGS = None
TIDY = os.environ.get("TIDY", "tidy")

# Warnings from tidy that this page accepts, with the reason.
TIDY_ACCEPTED = [
    # pandoc's own <table> output and our header are fine HTML5; none yet.
]


def test(fn):
    """Register a test function (it raises AssertionError on failure)."""
    TESTS.append(fn)
    return fn


def read(path):
    """The text of a UTF-8 file."""
    with open(path, encoding="utf-8") as f:
        return f.read()


def fixture(name):
    """Path of a fixture file."""
    return os.path.join(P.FIXTURES, name)


# --------------------------------------------------------------------------
# 1. Chunk round trip
# --------------------------------------------------------------------------

@test
def roundtrip_page():
    """Every chunk of the page, expanded, equals notangle -R of the source."""
    problems = P.roundtrip(read(ARGS.page), ARGS.nw)
    assert not problems, "\n  ".join(problems[:10])


@test
def roundtrip_every_chunk_has_an_anchor():
    """Every chunk use on the page links to a chunk on the page."""
    html = read(ARGS.page)
    ids = set(re.findall(r'\bid="([^"]+)"', html))
    hrefs = re.findall(r'class="nwuse"[^>]*href="#([^"]+)"', html)
    assert hrefs, "no chunk-use links found"
    missing = sorted(set(h for h in hrefs if h not in ids))
    assert not missing, "uses link to missing anchors: %s" % missing[:10]


# --------------------------------------------------------------------------
# Links to files and lint of the prose
# --------------------------------------------------------------------------

@test
def page_has_identifier_index():
    """The page ends with an identifier index whose entries link to chunks."""
    html = read(ARGS.page)
    assert 'id="nw-index"' in html, "no identifier index (add '@ %def' lines)"
    entries = re.findall(r'<li id="id-[^"]+">(.*?)</li>', html)
    assert entries, "identifier index is empty"
    bad = [e[:80] for e in entries if 'href="#nw' not in e]
    assert not bad, "index entries without a chunk link: %s" % bad[:5]


@test
def relative_links_exist_on_disk():
    """Every relative link (downloads, other files) names an existing file."""
    html = read(ARGS.page)
    base = os.path.dirname(os.path.abspath(ARGS.page))
    bad = []
    for href in re.findall(r'<a [^>]*href="([^"#][^"]*)"', html):
        if re.match(r"[a-z][a-z0-9+.-]*:", href):
            continue
        if not os.path.exists(os.path.join(base, href.split("#")[0])):
            bad.append(href)
    assert not bad, "links to missing files: %s" % bad


@test
def no_identifier_eaten_by_emphasis():
    """No CUDA word like __restrict__ turned into bold or italic by Markdown."""
    html = read(ARGS.page)
    words = r"(restrict|global|device|host|shared|syncthreads|forceinline|" \
            r"launch_bounds|constant|align|managed)"
    bad = re.findall(r"<(strong|em)>%s</\1>" % words, html)
    assert not bad, "write these in [[...]] or backticks: %s" % bad


# --------------------------------------------------------------------------
# 3. HTML validity
# --------------------------------------------------------------------------

def tidy_problems(path):
    """Errors and unaccepted warnings tidy reports for one HTML file."""
    if not os.path.isfile(path):
        return ["no such file: %s" % path]
    res = subprocess.run([TIDY, "-q", "-e", "-utf8", "--show-warnings", "yes",
                          path], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out = res.stderr.decode("utf-8", "replace")
    problems = []
    for line in out.splitlines():
        m = re.search(r"- (Error|Warning): (.*)", line)
        if not m:
            continue
        if m.group(1) == "Warning" and any(re.search(a, m.group(2))
                                           for a in TIDY_ACCEPTED):
            continue
        problems.append(line)
    if res.returncode >= 2 and not problems:
        problems.append("tidy exit %d: %s" % (res.returncode, out[:500]))
    return problems


@test
def tidy_page():
    """tidy reports no errors and no unaccepted warnings on the page."""
    problems = tidy_problems(ARGS.page)
    assert not problems, "\n  ".join(problems[:20])
    with tempfile.TemporaryDirectory() as tmp:   # the checker sees errors
        bad = os.path.join(tmp, "bad.html")
        with open(bad, "w") as f:
            f.write("<!DOCTYPE html><html><head><title>x</title></head>"
                    "<body><p><foo>x</p></body></html>")
        assert tidy_problems(bad), "tidy found nothing wrong in a bad page"


@test
def tidy_demo_page():
    """tidy is clean on the demo fixture (facts, boxes, details, figure)."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "demo.html")
        with open(path, "w", encoding="utf-8") as f:
            f.write(P.weave_page(fixture("page-demo.nw"),
                                 fixture("facts-good.yaml")))
        problems = tidy_problems(path)
    assert not problems, "\n  ".join(problems[:20])


# --------------------------------------------------------------------------
# 2. Headless Chromium
# --------------------------------------------------------------------------

BROWSER_JS = r"""
const problems = [];
for (const a of document.querySelectorAll('a[href^="#"]')) {
  const id = decodeURIComponent(a.getAttribute('href').slice(1));
  if (!id || !document.getElementById(id)) problems.push('no target for #' + id);
}
for (const img of document.images) {
  if (!img.complete || img.naturalWidth === 0) problems.push('image does not load: ' + img.src.slice(0, 60));
  if (!(img.getAttribute('alt') || '').trim()) problems.push('image without alt: ' + img.src.slice(0, 60));
}
for (const d of document.querySelectorAll('details')) {
  if (d.open) problems.push('details open by default: ' + d.textContent.slice(0, 40));
}
const sw = document.documentElement.scrollWidth;
if (sw > window.innerWidth) {
  let widest = '';
  for (const el of document.body.querySelectorAll('*')) {
    const r = el.getBoundingClientRect();
    if (r.right > window.innerWidth + 1 && !el.closest('pre, table')) {
      widest = el.tagName + '.' + el.className + ' ' + (el.textContent || '').slice(0, 40);
      break;
    }
  }
  problems.push('horizontal overflow: scrollWidth ' + sw + ' > innerWidth ' + window.innerWidth + ' ' + widest);
}
return {problems: problems, width: window.innerWidth, links: document.links.length};
"""


def browser(width):
    """Load the page at a viewport width; return (problems, screenshots)."""
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        raise AssertionError("selenium missing for %s: apt-get install "
                             "--no-install-recommends python3-selenium"
                             % sys.executable)
    opts = webdriver.ChromeOptions()
    opts.binary_location = _which(os.environ.get("CHROMIUM", "chromium"))
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu",
                 "--disable-dev-shm-usage", "--hide-scrollbars",
                 "--window-size=%d,900" % max(width, 500)):
        opts.add_argument(flag)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    service = Service(_which(os.environ.get("CHROMEDRIVER", "chromedriver")))
    driver = webdriver.Chrome(service=service, options=opts)
    try:
        driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
            "width": width, "height": 900, "deviceScaleFactor": 1,
            "mobile": width < 600})
        driver.get("file://" + os.path.abspath(ARGS.page))
        result = driver.execute_script(BROWSER_JS)
        problems = list(result["problems"])
        if result["width"] != width:
            problems.append("viewport is %s px, wanted %d" % (result["width"],
                                                              width))
        for entry in driver.get_log("browser"):
            if entry.get("level") == "SEVERE":
                problems.append("console: " + entry.get("message", "")[:200])
        os.makedirs("build", exist_ok=True)
        shots = ["build/screenshot-%d.png" % width]
        driver.save_screenshot(shots[0])
        # more views for review: the first code chunk, figure, index
        for what, sel in (("code", ".nwchunk"), ("figure", "img"),
                          ("details", "details"), ("index", "#nw-index")):
            driver.execute_script(
                "const c=document.querySelector(arguments[0]);"
                "if (c) c.scrollIntoView();", sel)
            shots.append("build/screenshot-%d-%s.png" % (width, what))
            driver.save_screenshot(shots[-1])
        return problems, shots
    finally:
        driver.quit()


def _which(cmd):
    """Absolute path of a command on PATH (or cmd itself)."""
    for d in os.environ.get("PATH", "").split(os.pathsep):
        p = os.path.join(d, cmd)
        if os.path.isfile(p) and os.access(p, os.X_OK):
            return p
    return cmd


@test
def browser_375():
    """At 375 px: no console errors, anchors resolve, images load, no overflow."""
    problems, _ = browser(375)
    assert not problems, "\n  ".join(problems[:20])


@test
def browser_1280():
    """At 1280 px: no console errors, anchors resolve, images load, no overflow."""
    problems, _ = browser(1280)
    assert not problems, "\n  ".join(problems[:20])


# --------------------------------------------------------------------------
# 4. Awkward input, one fixture each
# --------------------------------------------------------------------------

def awkward(name):
    """Weave a fixture, check its round trip, return its HTML."""
    nw = fixture(name)
    html = P.weave_page(nw)
    problems = P.roundtrip(html, nw)
    assert not problems, "\n  ".join(problems)
    return html


def code_lines(html):
    """All lines of code text of all chunks, uses shown as <<name>>."""
    out = []
    for name, defs in P.read_chunks(html).items():
        for d in defs:
            for line in d:
                out.append("".join(x if isinstance(x, str)
                                   else "<<%s>>" % x.name for x in line))
    return out


@test
def awkward_quoted_code_in_prose():
    """[[...]] in prose becomes inline code with its exact text."""
    html = awkward("awkward-quote.nw")
    spans = P.texts(html, "code")
    for want in ("__syncthreads()", "a[i] = b[[j]]", "x < y && y > z",
                 "`tick`"):
        assert want in spans, "no <code>%s</code> in %s" % (want, spans)


@test
def awkward_underscores():
    """Identifiers with underscores survive in prose and code."""
    html = awkward("awkward-underscores.nw")
    spans = P.texts(html, "code")
    for want in ("__restrict__", "__syncthreads", "kBlock_K"):
        assert want in spans, "no <code>%s</code>" % want
    assert "snake_case_word" in html
    assert "<strong>restrict</strong>" not in html
    lines = code_lines(html)
    assert "__global__ void k(float *__restrict__ a) {" in lines, lines
    assert "    int snake_case_name = a_b_c__;" in lines, lines
    assert 'id="id-snake-case-name"' in html, "index entry missing"


@test
def awkward_angle_brackets_and_ampersands():
    """<, > and & in prose and code show as themselves, never as markup."""
    html = awkward("awkward-specials.nw")
    paras = " ".join(P.texts(html, "p"))
    for want in ("a < b", "c > d", "x & y", "the entity &amp; stays"):
        assert want in paras, "prose lost %r: %s" % (want, paras[:300])
    spans = P.texts(html, "code")
    for want in ("<notatag>", "List<int>", "a && b"):
        assert want in spans, "no <code>%s</code> in %s" % (want, spans)
    lines = code_lines(html)
    for want in ("if (a < b && c > d) x &= y >> 2;",
                 's = "</code></pre><b>not bold</b>";', "```", "```{=html}",
                 "/* <!-- not a comment --> */"):
        assert want in lines, "code lost %r: %s" % (want, lines)
    assert "<b>not bold</b>" not in html


@test
def awkward_chunk_name_with_punctuation():
    """A chunk name full of punctuation gets a valid anchor and its links."""
    html = awkward("awkward-name.nw")
    name = 'fill stage [[s]] with cp.async (16-byte "cg", <aligned> & fast!)'
    chunks = P.read_chunks(html)
    assert name in chunks, sorted(chunks)
    anchors = re.findall(r'<div class="nwchunk" id="([^"]+)"', html)
    assert all(re.fullmatch(r"[a-z][a-z0-9-]*", a) for a in anchors), anchors
    heads = P.texts(html, "a", "nwname")
    assert '⟨fill stage s with cp.async (16-byte "cg", <aligned> & fast!)⟩' \
        in heads, heads


@test
def awkward_at_signs():
    """@@ at line start shows one @, other @ stay, @<< shows <<."""
    html = awkward("awkward-at.nw")
    lines = code_lines(html)
    for want in ("@ at the start of a line", "  @@ indented keeps both",
                 "mail me@example.org", "kernel<<<grid, block>>>(x);",
                 "a << b;"):
        assert want in lines, "code lost %r: %s" % (want, lines)


@test
def awkward_tabs():
    """Tabs in code stay tabs on the page, also inside nested chunks."""
    html = awkward("awkward-tab.nw")
    lines = code_lines(html)
    assert "\treturn 1;\t/* tab */" in lines, lines
    assert "\t<<inner>>" in lines and "\tb" in lines, lines


# --------------------------------------------------------------------------
# Facts and lesson boxes
# --------------------------------------------------------------------------

@test
def facts_values_stale_and_missing():
    """Values replace names; stale ones are marked; missing say so."""
    html = P.weave_page(fixture("page-demo.nw"), fixture("facts-good.yaml"))
    assert re.search(r'<span class="fact"[^>]* data-fact="smem.stage2"[^>]*>'
                     r'16424</span>', html), "value of smem.stage2 missing"
    assert re.search(r'title="from evidence/compile-nvcc-13.0.txt"', html)
    assert re.search(r'class="fact fact-stale"[^>]* data-fact="ptx.count"'
                     r'[^>]*><code>39</code>\s+<span class="stale-mark">'
                     r'\(stale\)</span>', html), "stale marker missing"
    assert re.search(r'class="fact fact-missing"[^>]* data-fact='
                     r'"unmeasured.one"[^>]*>not yet\s+measured<', html)
    assert re.search(r'<div class="fact"[^>]* data-fact="block.table"[^>]*>'
                     r'\s*<table', html), "block fact did not become a table"
    assert "[smem.stage2]" not in html and "{.fact}" not in html


@test
def facts_missing_value_warns_on_stderr():
    """A schema name without a value is named on stderr."""
    with tempfile.TemporaryDirectory() as tmp:
        res = subprocess.run([P.WEAVE, fixture("page-demo.nw"),
                              fixture("facts-good.yaml"),
                              os.path.join(tmp, "x.html")],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    err = res.stderr.decode("utf-8")
    assert res.returncode == 0, err
    assert "unmeasured.one" in err and "not yet measured" in err, err


@test
def facts_unknown_name_fails_the_build():
    """A name outside facts_schema stops the build and is named."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "x.html")
        res = subprocess.run([P.WEAVE, fixture("facts-unknown.nw"),
                              fixture("facts-bad.yaml"), out],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        err = res.stderr.decode("utf-8")
        assert res.returncode != 0, "build succeeded"
        assert "not.in.schema" in err, err
        assert not os.path.exists(out), "a failed build left its output"


@test
def boxes_and_details():
    """details fold by default; objectives, keypoints, banner are boxes."""
    html = P.weave_page(fixture("page-demo.nw"), fixture("facts-good.yaml"))
    assert re.search(r"<details><summary>\s*Hint 1\s*</summary>", html)
    assert re.search(r'<details class="solution"><summary>\s*Solution with '
                     r"<code>code</code>\s*</summary>", html)
    assert "<details open" not in html
    assert 'class="box objectives"' in html and 'class="box keypoints"' in html
    assert re.search(r'class="banner" role="status"', html)
    assert re.search(r'<img src="data:image/svg\+xml;base64,[^"]+" '
                     r'alt="Two timelines', html), "figure not embedded"


@test
def nw2md_rejects_bad_input():
    """Input that is not a noweb pipeline gets a clear error and exit 1."""
    for text, needle in (("hello\n", "not a pipeline line"),
                         ("@begin code 0\n@nl\n@end code 0\n", "without @defn"),
                         ("@fatal markup: broken\n", "earlier noweb stage")):
        res = subprocess.run([P.NW2MD], input=text.encode(),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        err = res.stderr.decode()
        assert res.returncode == 1 and needle in err, (text, res.returncode,
                                                       err)
    res = subprocess.run([P.NW2MD, "-bogus"], stdin=subprocess.DEVNULL,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert res.returncode == 2 and b"unknown option" in res.stderr


# --------------------------------------------------------------------------
# 5. Fuzz
# --------------------------------------------------------------------------

@test
def fuzz_backend():
    """Random noweb documents: nw2md never fails and keeps every code line."""
    failures, count = fuzz.run(seed=int(os.environ.get("FUZZ_SEED", "7474")),
                               budget_s=float(os.environ.get("FUZZ_SECONDS",
                                                             "30")))
    assert count >= 20, "only %d documents in the time budget" % count
    assert not failures, "\n  ".join(failures[:5])


def main():
    """Run the tests, print one line each and the summary."""
    global ARGS
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--page", default="site/index.html")
    ap.add_argument("--nw", default="day74.nw")
    ap.add_argument("--only", default="", help="run tests whose name has this")
    ARGS = ap.parse_args()
    passed = failed = 0
    for fn in TESTS:
        if ARGS.only not in fn.__name__:
            continue
        start = time.time()
        try:
            fn()
        except AssertionError as err:
            failed += 1
            print("FAIL %s: %s" % (fn.__name__, err))
        except Exception:  # a crash in a test is a failure, with its trace
            failed += 1
            print("FAIL %s: crashed\n%s" % (fn.__name__,
                                            traceback.format_exc()))
        else:
            passed += 1
            print("ok   %s (%.1f s)" % (fn.__name__, time.time() - start))
        sys.stdout.flush()
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
