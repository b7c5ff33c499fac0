"""The lesson's pages (site/index.html and the pages its navigation links,
all woven from day74.nw): chunks equal noweb's reading of the source; links
within and across pages, the lab notes' shape, index, Pygments, tidy;
plots and their tables. In headless Chromium at 375, 768 and 1280 px, light
and dark, each page: layout, results tables (stale marks too), plots, WCAG
AA contrast, copy buttons, anchors, no network, the print view. Checks of
one table or plot look in all pages. litkit's own page tests (the weave on
fixtures): litkit/tests; what they share: litkit.pagecheck. PAGE_SHOTS=DIR
(make site-check) also writes screenshots and print.pdf there; PAGE=FILE
tests another weave of day74.nw (its first page)."""

import base64
import json
import os
import pathlib
import re

import pytest

from litkit.pagecheck import (WEAVE, browser, check_copy_buttons,  # noqa
                              check_links_across, check_links_permalinks,
                              check_plots_tables, cut, every, page_files,
                              pages_chunks, read_pages, resolver, roundtrip,
                              tidy_problems)

from conftest import REPO, run

PAGE = os.environ.get("PAGE", os.path.join(REPO, "site", "index.html"))
NW = os.path.join(REPO, "day74.nw")
WIDTHS, SCHEMES = (375, 768, 1280), ("light", "dark")
CONTRAST_WIDTHS = (375, 1280)   # colours do not change between these
# The gain column: the time saved, percent (older pages: piped/sync).
KEY_COLUMNS = (r"^N$", r"^gain$|piped\s*/\s*sync", r"%\s*of\s*cuBLAS")
SHOTS = os.environ.get("PAGE_SHOTS")
PAGES = page_files(PAGE)


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


@pytest.fixture(scope="session")
def pages():
    """{path: text} of the lesson's pages."""
    return read_pages(PAGE)


@pytest.fixture(scope="session")
def page(pages):
    """The text of all the lesson's pages."""
    return "".join(pages.values())


@pytest.fixture(scope="session", ids=lambda p: "%d-%s" % p,
                params=[(w, s) for w in WIDTHS for s in SCHEMES])
def view(request, browser):
    """page_checks.js's view() of each page at a width and scheme:
    {"pages": {path: view}, "scheme": scheme}."""
    return {"scheme": request.param[1], "pages": {
        p: browser.open(p, *request.param).run(
            "view", request.param[0] in CONTRAST_WIDTHS) for p in PAGES}}


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


def test_links_across_pages_resolve(pages):
    """pagecheck.check_links_across on the lesson's pages."""
    check_links_across(pages)


def test_code_is_highlighted_by_pygments(page):
    """Pygments' short classes, with identifier links around them."""
    assert [c for c in ("k", "kt", "cp", "c1", "mi")
            if f'<span class="{c}">' not in page] == []
    assert re.search(r'<a class="nwident" href="([a-z0-9_-]+\.html)?#[^"]+">'
                     r'(<span class="nf">)?matmulTilePiped', page)


def test_tidy(pages):
    """tidy finds nothing on the pages."""
    assert [(p, bad) for p in pages if (bad := tidy_problems(p))] == []


def test_plots_name_the_tables_of_their_numbers(pages):
    """pagecheck.check_plots_tables on the pages and build/plots."""
    check_plots_tables(pages, os.path.join(REPO, "build", "plots"))


# ---- in Chromium ------------------------------------------------------------

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


def test_copy_buttons_copy_the_tangled_chunk(browser):
    """pagecheck.check_copy_buttons on the lesson's pages and day74.nw."""
    check_copy_buttons(browser, PAGES, NW)


def test_links_permalinks_network(browser):
    """pagecheck.check_links_permalinks on the lesson's pages."""
    check_links_permalinks(browser, PAGES, 10)


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
