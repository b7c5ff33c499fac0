"""tools/lit/weave.sh and tangle.sh on awkward input (issue 13): folder
names with spaces, shell- and URL-special and non-ASCII characters; chunk
uses in quoted prose code; empty chunks (warned, with their line); shell
variables in prose (kept as text); << in prose (a hint, with the line)."""

import os
import pathlib
import re
import shutil

import pytest

from conftest import REPO, FIXTURES, run

FACTS = os.path.join(FIXTURES, "weave", "facts-empty.json")
DOC = """---
title: Awkward prose
---

Quoted: [[f(<<tile shape>>, 2)]] and [[g(x)]], [[<<a.c>>]] and
[[`t` <<tile shape>>]], all in one paragraph.

Shell: export PATH=$CUDA_HOME/bin:$PATH; ${HOME}/bin:${PATH};
$LD_LIBRARY_PATH:$X. Math stays math: $N/64$ and $x^2$.

![a figure](fig.svg)

<<tile shape>>=
@

<<a.c>>=
int x;
<<tile shape>>
@

<<tile shape>>=
@
"""
USE = '<a class="nwuse" data-chunk="{0}" href="#nw-{1}">⟨{0}⟩</a>'
TILE = USE.format("tile shape", "tile-shape")
PAGE_HAS = [  # what the page must hold, exactly
    f"<code>f({TILE}, 2)</code>", "<code>g(x)</code>", f"<code>`t` {TILE}",
    "<code>" + USE.format("a.c", "a-c") + "</code>",
    "export PATH=$CUDA_HOME/bin:$PATH;", "${HOME}/bin:${PATH};",
    "$LD_LIBRARY_PATH:$X.", 'encoding="application/x-tex">N/64<',
    'encoding="application/x-tex">x^2<', 'src="data:image/svg+xml']
LINES = DOC.split("\n")
EMPTY = [i + 1 for i, l in enumerate(LINES) if l == "<<tile shape>>="]
NAMES = ["plain", "a b", "sh'\"$&;|*?()`<x>\\t\\", "url#x%20y?a=b&c=:d",
         "ünï çødé ✓"]


def tool(d, name, *args):
    """Run tools/lit/NAME of the copy in folder d."""
    return run([os.path.join(d, "tools", "lit", name), *map(str, args)])


def lay_out(d, text):
    """Folder d (made) with tools/lit, site/, fig.svg and `a doc.nw`
    holding text; returns the source's path."""
    shutil.copytree(os.path.join(REPO, "tools", "lit"), d / "tools" / "lit",
                    ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(os.path.join(REPO, "site"), d / "site",
                    ignore=shutil.ignore_patterns("index.html", "downloads"))
    (d / "fig.svg").write_text('<svg xmlns="http://www.w3.org/2000/svg" '
                               'width="4" height="4"/>\n')
    (d / "a doc.nw").write_text(text)
    return d / "a doc.nw"


def test_folder_names(tmp_path):
    """From a folder of any name: the page holds every awkward case
    rendered right, the empty chunks are warned with their lines, #line
    names the source, and page and tangle are the same for every name."""
    first = None
    for name in NAMES:
        src = lay_out(tmp_path / name, DOC)
        out = src.parent / "out dir"
        out.mkdir()
        p = tool(src.parent, "weave.sh", src, FACTS, out / "page.html")
        assert p.returncode == 0, p.stderr
        page = (out / "page.html").read_text()
        assert [h for h in PAGE_HAS if h not in page] == [], name
        assert not re.search("``|[^>]⟨tile shape⟩|⟨tile shape⟩[^<]", page)
        assert [n for n in EMPTY if f"{src}:{n}: chunk <<tile shape>> is "
                "empty" not in p.stderr] == [], p.stderr
        for opt, rel in (["-L"], "a.c"), ([], "clean.c"):
            t = tool(src.parent, "tangle.sh", *opt, src, "a.c", out / rel)
            assert t.returncode == 0, t.stderr
        quoted = str(src).replace("\\", "\\\\").replace('"', '\\"')
        assert (out / "a.c").read_text().startswith('#line %d "%s"\n' % (
            LINES.index("<<a.c>>=") + 2, quoted))
        assert (out / "clean.c").read_text() == "int x;\n\n"
        first = first or page
        assert page == first, f"{name}: the page differs"


@pytest.mark.parametrize("prose", [
    "shift x << 2 here", "launch `k<<<g, b>>>(x)` so", "std::cout << x;"])
def test_shift_in_prose(tmp_path, prose):
    """<< in prose fails weave and tangle, naming the line and saying to
    write @<<; the @<< form weaves."""
    text = "Intro.\n\nSome %s.\n\n<<a.c>>=\nint x;\n@\n" % prose
    src = lay_out(tmp_path, text)
    for args in (["weave.sh", src, FACTS, tmp_path / "p.html"],
                 ["tangle.sh", "--roots", src, "a.c"]):
        p = tool(tmp_path, *args)
        assert p.returncode == 1 and f"{src}:3: unescaped <<" in p.stderr
        assert "write << as @<<" in p.stderr, p.stderr
    src.write_text(text.replace("<<", "@<<", 1))
    assert tool(tmp_path, "weave.sh", src, FACTS,
                tmp_path / "p.html").returncode == 0
    assert "&lt;&lt;" in pathlib.Path(tmp_path, "p.html").read_text()
