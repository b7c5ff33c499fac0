"""The lesson page in Chromium at 375, 768 and 1280 px (issue 12).

What a reader on a laptop or a phone relies on: the page never scrolls
sideways; code fits at 1280 px; the results table's key columns and every
caption show whole on a phone; plot text is legible; text has WCAG AA
contrast in the light and the dark scheme; every copy button copies exactly
what notangle prints; every heading and chunk has a permalink; printing hides
the chrome and cuts no code.  Screenshots for a reviewer go to build/page/.

Run:  /usr/bin/python3 -m pytest tests/page      (after make site)
"""

import os
import re

import pytest

import pagejs as JS
from conftest import WIDTHS, chunk_names, notangle

# The results table: the columns a phone must show (regexes on headers).
RESULTS_KEY_COLUMNS = [r"^N$", r"piped\s*/\s*sync", r"%\s*of\s*cuBLAS"]
CODE_COLUMNS = 80
MIN_PLOT_TEXT_PX = 11.0


def _long_blocks(blocks):
    return [b for b in blocks if b["widest"] > CODE_COLUMNS]


# ---------------------------------------------------------------------------
# Layout
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_no_sideways_page_scroll(browser, page_path, width, scheme):
    """The page itself never scrolls sideways (code scrolls in its block)."""
    r = browser.open(page_path, width, scheme).js(JS.PAGE_WIDTH)
    assert r["scrollWidth"] <= r["innerWidth"], (
        "page scrolls sideways at %d px: scrollWidth %d; first element past "
        "the edge: %s" % (width, r["scrollWidth"], r["culprit"]))


@pytest.mark.parametrize("width", [1280, 768])
def test_code_blocks_of_80_columns_fit(browser, page_path, width):
    """At 1280 (and 768) px, no code block whose lines are all <= 80
    columns scrolls sideways."""
    blocks = browser.open(page_path, width).js(JS.CODE_BLOCKS)
    assert blocks, "no code blocks found"
    bad = [b for b in blocks if b["widest"] <= CODE_COLUMNS and b["overflow"] > 0]
    assert not bad, "%d blocks of <= %d columns overflow at %d px:\n  %s" % (
        len(bad), CODE_COLUMNS, width, "\n  ".join(
            "%s (#%s): %d columns, %d px too wide" % (
                b["name"], b["id"], b["widest"], b["overflow"]) for b in bad))


@pytest.mark.parametrize("width", [1280, 768])
def test_fixture_80_columns_fit(browser, fixture_page, width):
    """A chunk with lines of exactly 80 columns fits at 1280 and 768 px."""
    blocks = browser.open(fixture_page[0], width).js(JS.CODE_BLOCKS)
    eighty = [b for b in blocks if b["name"] == "eighty columns"]
    assert eighty and eighty[0]["widest"] == 80, blocks
    assert all(b["overflow"] <= 0 for b in blocks), [
        (b["name"], b["overflow"]) for b in blocks if b["overflow"] > 0]


def test_no_code_block_overflows_at_1280(browser, page_path, request):
    """At 1280 px no code block scrolls sideways at all.

    Expected to fail until every chunk line of day74.nw is <= 80 columns
    (the lead's reflow); the failure names the blocks still too wide.
    """
    blocks = browser.open(page_path, 1280).js(JS.CODE_BLOCKS)
    bad = [b for b in blocks if b["overflow"] > 0]
    long_blocks = _long_blocks(blocks)
    if long_blocks:
        request.node.add_marker(pytest.mark.xfail(
            reason="waits for day74.nw's reflow: %d blocks have lines over %d "
                   "columns; overflowing at 1280 px: %s" % (
                       len(long_blocks), CODE_COLUMNS, ", ".join(
                           "<<%s>> (%d columns)" % (b["name"], b["widest"])
                           for b in bad) or "none"),
            strict=False))
    assert not bad, "%d code blocks overflow at 1280 px (widest line, px too " \
        "wide):\n  %s" % (len(bad), "\n  ".join(
            "%s (#%s): %d columns, %d px" % (b["name"], b["id"], b["widest"],
                                             b["overflow"]) for b in bad))


def test_phone_code_scrolls_inside_its_block(browser, page_path):
    """At 375 px a long code line scrolls inside its block, which stays on
    screen."""
    blocks = browser.open(page_path, 375).js(JS.CODE_BLOCKS)
    bad = [b for b in blocks if b["right"] > 375.5 or b["left"] < -0.5
           or (b["overflow"] > 0 and b["overflowX"] not in ("auto", "scroll"))]
    assert not bad, "code blocks off screen or cut at 375 px: %s" % [
        (b["name"], b["left"], b["right"], b["overflowX"]) for b in bad]


@pytest.mark.parametrize("width", WIDTHS)
def test_results_table_key_columns_visible(browser, page_path, width):
    """N, piped/sync and % of cuBLAS show whole, without sideways scrolling."""
    found = browser.open(page_path, width).js(JS.KEY_COLUMNS, RESULTS_KEY_COLUMNS)
    assert found, "no table with columns matching %s" % RESULTS_KEY_COLUMNS
    for t in found:
        assert not t["problems"], "at %d px (shown as %s): %s" % (
            width, t["shownAs"], t["problems"][:8])
        assert t["wrapScroll"] <= 0, (
            "at %d px the results table scrolls sideways by %d px (shown as "
            "%s)" % (width, t["wrapScroll"], t["shownAs"]))


@pytest.mark.parametrize("width", WIDTHS)
def test_captions_whole(browser, page_path, width):
    """Table and figure captions are never cut off or pushed off screen."""
    problems = browser.open(page_path, width).js(JS.CAPTIONS)
    assert not problems, "at %d px: %s" % (width, problems)


# ---------------------------------------------------------------------------
# Plots
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("width", WIDTHS)
def test_plot_text_size_and_width(browser, page_path, width):
    """Plots are inline SVG sized to the column; their text is >= 11 CSS px."""
    plots = [p for p in browser.open(page_path, width).js(JS.PLOTS) if p["isPlot"]]
    assert plots, "no inline plots (figure.plot) on the page"
    for p in plots:
        assert p["tag"] == "svg", "%s is shown as <%s>, not inline SVG" % (
            p["plot"], p["tag"])
        want = min(p["figureWidth"], p["maxWidth"] or p["figureWidth"])
        assert abs(p["width"] - want) <= 1, (
            "%s (%s) is %.0f px wide in a %.0f px column (max %s)" % (
                p["plot"], p["cls"], p["width"], p["figureWidth"], p["maxWidth"]))
        assert p["texts"], "%s has no text" % p["plot"]
        small = [t for t in p["texts"] if t["px"] < MIN_PLOT_TEXT_PX]
        assert not small, "%s (%s) at %d px: text below %.0f px: %s" % (
            p["plot"], p["cls"], width, MIN_PLOT_TEXT_PX,
            ["%s %.1fpx" % (t["text"], t["px"]) for t in small[:6]])


def _numbers(text):
    """[(value, decimals)] of the numbers written in a text."""
    out = []
    for m in re.finditer(r"(?<![\w.])\d[\d,]*(?:\.(\d+))?", text):
        out.append((float(m.group(0).replace(",", "")), len(m.group(1) or "")))
    return out


def _values(path):
    """The plotted numbers of NAME.values.tsv (every field after the header)."""
    with open(path, encoding="utf-8") as f:
        rows = [l.split("\t") for l in f.read().splitlines()
                if l.strip() and not l.startswith("#")]
    return [float(v) for row in rows[1:] for v in row]


def test_each_plot_has_its_numbers_in_text(browser, page_path, plots_dir):
    """Every number a plot draws is written in the page's text: in the table
    its figure names (aria-describedby), else in its section's text, to the
    precision shown there."""
    b = browser.open(page_path, 1280)
    names = b.js("return [...document.querySelectorAll('figure.plot')]"
                 ".map(f => f.getAttribute('data-plot'))")
    assert names, "no plots on the page"
    checked = 0
    for name in names:
        path = os.path.join(plots_dir, name + ".values.tsv")
        assert os.path.isfile(path), "no %s (make plots writes it)" % path
        values = _values(path)
        if not values:      # a placeholder: no GPU evidence yet
            continue
        checked += 1
        alt = b.js(JS.PLOT_TEXT, name)
        shown = _numbers(alt["text"])
        missing = [v for v in values if not any(
            abs(p - v) <= 0.5 * 10 ** -d + 1e-9 for p, d in shown)]
        assert not missing, "%s: numbers not in %s: %s" % (name, alt["via"], missing)
    if not checked:
        pytest.skip("every plot is a placeholder (no GPU evidence in evidence/)")


# ---------------------------------------------------------------------------
# Colour
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("width", [375, 1280])
@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_contrast_wcag_aa(browser, page_path, width, scheme):
    """All visible text (folds opened, code and plots included) has WCAG AA
    contrast: 4.5:1, or 3:1 for large text."""
    r = browser.open(page_path, width, scheme).js(JS.CONTRAST)
    assert r["checked"] > 500, "only %d text nodes checked" % r["checked"]
    if scheme == "dark":
        assert r["bodyLuminance"] < 0.05, "the dark scheme did not apply"
    else:
        assert r["bodyLuminance"] > 0.8, "the light scheme did not apply"
    assert not r["failures"], "%s scheme, %d px:\n  %s" % (scheme, width, "\n  ".join(
        "%s: %.2f < %.1f (%d times, e.g. %r)" % (f["what"], f["ratio"], f["need"],
                                                f["count"], f["sample"])
        for f in r["failures"]))


# ---------------------------------------------------------------------------
# Copy buttons
# ---------------------------------------------------------------------------

STUB_CLIPBOARD = """
window.__copied = [];
const fake = {writeText: t => { window.__copied.push(t); return Promise.resolve(); }};
Object.defineProperty(Navigator.prototype, 'clipboard', {get: () => fake, configurable: true});
document.execCommand = () => false;
"""


def _check_copy(b, nw):
    names = chunk_names(nw)
    counts = b.js("const m = {}; for (const c of document.querySelectorAll('.nwchunk'))"
                  " { const n = c.getAttribute('data-chunk');"
                  "   m[n] = (m[n] || 0) + (c.querySelector('.nwhead .copy-button') ? 1 : 0); }"
                  " return m;")
    assert set(counts) == set(names), "chunks differ: page %s, source %s" % (
        sorted(set(counts) - set(names)), sorted(set(names) - set(counts)))
    no_button = [n for n, k in counts.items() if not k]
    assert not no_button, "chunks without a copy button: %s" % no_button
    b.js(STUB_CLIPBOARD)
    clicked = b.js("const out = {};"
                   "for (const btn of document.querySelectorAll('.nwhead .copy-button')) {"
                   "  const n = btn.closest('.nwchunk').getAttribute('data-chunk');"
                   "  window.__copied = []; btn.click();"
                   "  out[n] = (out[n] || []).concat(window.__copied); }"
                   "return out;")
    wrong = []
    for name in names:
        want = notangle(nw, name)
        got = b.js("return window.lessonPage.tangle(arguments[0])", name)
        if got != want:
            wrong.append("%s: tangle() differs from notangle: %r vs %r" % (
                name, got[:120], want[:120]))
        for text in clicked.get(name, []):
            if text != want:
                wrong.append("%s: the button copied %r, notangle prints %r" % (
                    name, text[:120], want[:120]))
        if len(clicked.get(name, [])) != counts[name]:
            wrong.append("%s: %d clicks copied %d texts" % (
                name, counts[name], len(clicked.get(name, []))))
    assert not wrong, "\n".join(wrong[:10])


def test_copy_buttons_copy_the_tangled_chunk(browser, page_path, nw_path):
    """Every chunk's button copies exactly `notangle -R'<chunk>' day74.nw`."""
    _check_copy(browser.open(page_path, 1280), nw_path)


def test_copy_buttons_on_fixture(browser, fixture_page):
    """Tabs, nested indentation, UTF-8 before a use and odd names copy as
    notangle prints them (tests/page/fixtures/page-fixture.nw)."""
    html, nw = fixture_page
    _check_copy(browser.open(html, 1280), nw)


def test_copy_buttons_on_other_code_blocks(browser, page_path):
    """Every code block outside a chunk has a button copying its text."""
    b = browser.open(page_path, 1280)
    b.js(STUB_CLIPBOARD)
    r = b.js("const out = [];"
             "for (const pre of document.querySelectorAll('main pre')) {"
             "  if (pre.closest('.nwchunk')) continue;"
             "  const box = pre.closest('.code-block');"
             "  const btn = box && box.querySelector(':scope > .copy-button');"
             "  window.__copied = []; if (btn) btn.click();"
             "  out.push({text: pre.textContent, copied: window.__copied, button: !!btn}); }"
             "return out;")
    assert r, "no code blocks outside chunks (the page has a ```sh block)"
    for blk in r:
        assert blk["button"], "no copy button on %r" % blk["text"][:60]
        assert blk["copied"] == [blk["text"].rstrip("\n") + "\n"], blk


def test_copy_reaches_the_clipboard(browser, fixture_page):
    """The button writes to the real clipboard, offline, from file://."""
    html, nw = fixture_page
    b = browser.open(html, 1280)
    try:
        b.d.execute_cdp_cmd("Browser.grantPermissions", {
            "permissions": ["clipboardReadWrite", "clipboardSanitizedWrite"]})
    except Exception as err:  # noqa: BLE001 - older Chromium
        pytest.skip("cannot grant clipboard permissions: %s" % err)
    b.js("document.querySelector('.nwhead .copy-button').click()")
    name = b.js("return document.querySelector('.nwchunk').getAttribute('data-chunk')")
    got = b.d.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "setTimeout(() => navigator.clipboard.readText().then(done, e => done('ERROR ' + e)), 200);")
    if got.startswith("ERROR"):
        pytest.skip("headless Chromium cannot read the clipboard here: %s" % got)
    assert got == notangle(nw, name)


def test_page_is_self_contained(browser, page_path):
    """No script, style, image or font comes from the network; no console
    errors."""
    b = browser.open(page_path, 1280)
    remote = b.js("return performance.getEntriesByType('resource')"
                  ".map(e => e.name).filter(n => !/^(data|file|blob|about):/.test(n))")
    assert not remote, "fetched from the network: %s" % remote
    with open(page_path, encoding="utf-8") as f:
        html = f.read()
    assert not re.search(r'<(script|link|img)[^>]+(src|href)="https?:', html)
    assert not b.console_errors()


# ---------------------------------------------------------------------------
# Permalinks
# ---------------------------------------------------------------------------

def test_permalinks_on_headings_and_chunks(browser, page_path):
    """Every heading and every chunk links to its own anchor; ids are unique."""
    b = browser.open(page_path, 1280)
    r = b.js("""
      const bad = [];
      for (const h of document.querySelectorAll('main h1, main h2, main h3, main h4')) {
        if (!h.id) { bad.push('heading without id: ' + h.textContent.trim()); continue; }
        if (!h.querySelector('a[href="#' + CSS.escape(h.id) + '"]')) bad.push('heading: ' + h.id);
      }
      for (const c of document.querySelectorAll('.nwchunk')) {
        if (!c.id || !c.querySelector('.nwhead a[href="#' + CSS.escape(c.id) + '"]')) bad.push('chunk: ' + c.id);
      }
      const ids = [...document.querySelectorAll('[id]')].map(e => e.id);
      const dup = ids.filter((x, i) => ids.indexOf(x) !== i);
      return {bad: bad, dup: [...new Set(dup)],
              headings: document.querySelectorAll('main h1, main h2, main h3').length};
    """)
    assert r["headings"] > 10
    assert not r["bad"], r["bad"][:10]
    assert not r["dup"], "duplicate ids: %s" % r["dup"][:10]


# ---------------------------------------------------------------------------
# Print
# ---------------------------------------------------------------------------

def test_print_stylesheet(browser, page_path, shots_dir):
    """Printing hides the contents list and buttons, wraps code instead of
    cutting it, and marks every hint and solution as folded."""
    b = browser.open(page_path, 1280, media="print")
    r = b.js(JS.PRINT)
    assert not r["tocShown"], "the contents list prints"
    assert r["buttonsShown"] == 0, "%d copy buttons print" % r["buttonsShown"]
    assert not r["codeCut"], "code cut off in print: %s" % r["codeCut"][:10]
    assert r["folds"], "no hints or solutions found"
    unmarked = [f["summary"] for f in r["folds"] if "folded" not in f["mark"]]
    assert not unmarked, "folds not marked as folded in print: %s" % unmarked
    assert r["narrowTablesShown"] == 0
    pdf = b.d.execute_cdp_cmd("Page.printToPDF", {"printBackground": False})
    import base64
    with open(os.path.join(shots_dir, "print.pdf"), "wb") as f:
        f.write(base64.b64decode(pdf["data"]))


# ---------------------------------------------------------------------------
# Fixture page: tables and plots built by page.lua
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("width", WIDTHS)
def test_fixture_table_and_plot(browser, fixture_page, width):
    """On the fixture page the wide table's key columns show at every width,
    its caption stays whole, the plot pair is inline and the plot's numbers
    table is the figure's description."""
    html, _ = fixture_page
    b = browser.open(html, width)
    found = b.js(JS.KEY_COLUMNS, [r"^N$", r"b\s*/\s*a", r"%\s*of\s*ref"])
    assert found and not found[0]["problems"], found
    assert found[0]["wrapScroll"] <= 0, found
    assert not b.js(JS.CAPTIONS)
    assert b.js(JS.PAGE_WIDTH)["scrollWidth"] <= width
    plots = [p for p in b.js(JS.PLOTS) if p["isPlot"]]
    assert [p["cls"] for p in plots] == ["plot-narrow" if width < 672 else "plot-wide"]
    alt = b.js(JS.PLOT_TEXT, "demo")
    assert alt["via"] == "aria-describedby #numbers-demo"
    assert [v for v, _ in _numbers(alt["text"])] == [1, 10.5, 20.25, 2, 11.5, 21.75]


# ---------------------------------------------------------------------------
# Screenshots for a reviewer
# ---------------------------------------------------------------------------

VIEWS = [("top", None), ("code", ".nwchunk"), ("table", ".table-wrap"),
         ("plot", "figure.plot"), ("exercise", "#exercise-how-deep-should-the-pipeline-be"),
         ("appendix", "#appendix-the-rest-of-the-program")]


@pytest.mark.parametrize("width", [375, 1280])
@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_screenshots(browser, page_path, shots_dir, width, scheme):
    """Writes build/page/<width>-<scheme>-<view>.png for a reviewer."""
    b = browser.open(page_path, width, scheme)
    written = []
    for view, sel in VIEWS:
        if view == "exercise":
            b.js("for (const d of document.querySelectorAll('details')) d.open = true")
        written.append(b.shot(os.path.join(
            shots_dir, "%d-%s-%s.png" % (width, scheme, view)), sel))
    assert all(os.path.getsize(p) > 1000 for p in written)
