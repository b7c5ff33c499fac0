"""litkit's weave on fixtures (litkit/tests/fixtures/weave): awkward input
(one fixture each), the demo (facts and lesson boxes, two pages, plots and
their tables, back-links, copy buttons, in headless Chromium at 375, 768
and 1280 px), bad marks and links, unknown facts, nw2md's errors, a seeded
fuzz test of nw2md.py, and a tiny module of its own template."""

import functools
import html
import json
import os
import pathlib
import random
import re
import shlex
import shutil
import sys
import tempfile

import pytest

import litkit
from litkit.pagecheck import (browser, check_copy_buttons,  # noqa: F401
                              check_links_across, check_links_permalinks,
                              check_plots_tables, cut, notangle, read_chunks,
                              read_pages, roundtrip, texts, tidy_problems)
from litkit import pagecheck

from conftest import FIXTURES, run

WEAVE_FIXTURES = os.path.join(FIXTURES, "weave")
DEMO = os.path.join(WEAVE_FIXTURES, "page-demo.nw")
WEAVE = pagecheck.WEAVE
# The back end (run by a Python with Pygments), as weave.sh runs it.
NW2MD = [sys.executable, os.path.join(litkit.DIR, "nw2md.py")]
# Weaves find the fixtures' plots.
WEAVE_ENV = {**os.environ, "SITE_EXTRA_RESOURCES":
             os.path.join(WEAVE_FIXTURES, "plots")}


def fixture(name):
    return os.path.join(WEAVE_FIXTURES, name)


def weave_page(nw, facts="facts-empty.json", out=None):
    """The (first) page weave.sh makes of nw with a facts fixture."""
    return pagecheck.weave_page(nw, fixture(facts), out, WEAVE_ENV)


@pytest.fixture(scope="session")
def demo(tmp_path_factory):
    """(path of its first page, text of all its pages, {path: text}) of the
    demo fixture woven with facts-good.json."""
    path = str(tmp_path_factory.mktemp("demo") / "demo.html")
    weave_page(DEMO, "facts-good.json", out=path)
    texts = read_pages(path)
    return path, "".join(texts.values()), texts


@pytest.fixture(scope="session", params=(375, 768, 1280))
def demo_view(request, browser, demo):
    return browser.open(demo[0], request.param).run("view")


def test_links_across_pages_resolve(demo):
    """pagecheck.check_links_across on the demo's two pages."""
    check_links_across(demo[2])


def test_tidy(demo):
    """tidy finds nothing on the demo's pages, sees a bad page."""
    assert [(p, bad) for p in demo[2] if (bad := tidy_problems(p))] == []
    assert tidy_problems(fixture("tidy-bad.html")), "bad page unseen"


def test_plots_name_the_tables_of_their_numbers(demo):
    """pagecheck.check_plots_tables on the demo and its plots."""
    check_plots_tables(demo[2], fixture("plots"))


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


# marked.nw: two pages, a link (#LINK) to a section marked PAGE.
MARKED = pathlib.Path(fixture("marked.nw")).read_text()


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
    schema stops the build, named with its source line and the schema
    (LIT_SCHEMA, from make), leaving no page."""
    out = str(tmp_path / "x.html")
    p = run([WEAVE, DEMO, fixture("facts-good.json"), out], env=WEAVE_ENV)
    assert p.returncode == 0, p.stderr
    assert "unmeasured.one" in p.stderr and "not yet measured" in p.stderr
    os.remove(out)
    p = run([WEAVE, fixture("facts-unknown.nw"),
             fixture("facts-bad.json"), out], env={**os.environ,
                                                   "LIT_SCHEMA": "s.tsv"})
    assert p.returncode != 0, "build succeeded"
    assert "not.in.schema" in p.stderr and "facts-unknown.nw:5" in p.stderr
    assert "schema, s.tsv: the Makefile's SCHEMA" in p.stderr, p.stderr
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
                keep = os.path.join(tempfile.gettempdir(),
                                    "fuzz-failure-%d.nw" % n)
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
# (fixtures/tiny, with its own template) that shares nothing with
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


def test_copy_buttons_copy_the_tangled_chunk(browser, demo):
    """pagecheck.check_copy_buttons on the demo: tabs, nesting, UTF-8,
    quotes, a chunk of one page using one of another."""
    check_copy_buttons(browser, list(demo[2]), DEMO)


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


def test_links_permalinks_network(browser, demo):
    """pagecheck.check_links_permalinks on the demo's pages."""
    check_links_permalinks(browser, list(demo[2]), 3)
