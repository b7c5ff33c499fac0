"""litkit's tangle.sh and weave.sh from folders of any name, on awkward prose
(litkit/tests/fixtures/tangle), << in prose and code; the package names
nothing of a module (Day 74's names, planted to show the check can
fail)."""

import os
import pathlib
import re
import shutil

import pytest

import litkit

from conftest import FIXTURES, LITKIT, run


def test_unescaped_shift_pair_caught(tmp_path):
    """An unescaped `a << 2 | b >> 1` fails; the @<< form tangles right."""
    src, out = tmp_path / "shift.nw", tmp_path / "shift.c"
    code = "int f(int a, int b) { return a %s 2 | b >> 1; }\n"
    src.write_text("Doc.\n<<shift.c>>=\n" + code % "<<" + "@\n")
    p = tool(os.path.dirname(litkit.DIR), "tangle.sh", src, "shift.c", out)
    assert p.returncode != 0, "a << ... >> pair read as a chunk use passed"
    assert not out.exists(), "a failed tangle left an output"
    src.write_text("Doc.\n<<shift.c>>=\n" + code % "@<<" + "@\n")
    p = tool(os.path.dirname(litkit.DIR), "tangle.sh", src, "shift.c", out)
    assert p.returncode == 0, p.stderr
    assert out.read_text() == code % "<<"


# ---- weave.sh and tangle.sh on awkward prose, from any folder -------------
FACTS = os.path.join(FIXTURES, "weave", "facts-empty.json")
DOC = pathlib.Path(FIXTURES, "tangle", "folder-names.nw").read_text()
PAGE_HAS = pathlib.Path(FIXTURES, "tangle", "folder-names.expect").read_text(
    encoding="utf-8").splitlines()   # what the page must hold, exactly
LINES = DOC.split("\n")
EMPTY = [i + 1 for i, l in enumerate(LINES) if l == "<<tile shape>>="]
NAMES = ["plain", "a b", "sh'\"$&;|*?()`<x>\\t\\", "url#x%20y?a=b&c=:d",
         "ünï çødé ✓"]


def tool(d, name, *args):
    """Run litkit's NAME of the copy in folder d."""
    return run([os.path.join(d, "litkit", name), *map(str, args)])


def lay_out(d, text):
    """Fill folder d with a copy of the installed litkit (as a checkout in
    d would hold it); returns `a doc.nw`, holding text."""
    shutil.copytree(litkit.DIR, d / "litkit",
                    ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(os.path.join(FIXTURES, "tangle", "fig.svg"), d)
    (d / "a doc.nw").write_text(text)
    return d / "a doc.nw"


def test_folder_names(tmp_path):
    """From any folder: awkward cases render right, empty chunks are
    warned by line, #line names the source, the page never changes."""
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
    """<< in prose fails weave and tangle by line; the @<< form weaves."""
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


# ---- litkit: the course's package names nothing of Day 74 ------------------
# Day 74's names: the day, its program's files and symbols, what it
# teaches, its own tools: a new day must not find them in the package.
# (cuobjdump and nvdisasm are the CUDA toolkit's, which cuda.mk runs.)
DAY74_NAMES = re.compile(
    r"day[ _-]?74|pipelined[ _]gemm|blocked_gemm|wide_gemm|sgemm|matmul|"
    r"cp\.async|memcpy_async|cuda::pipeline|async cop|ldgsts|"
    r"tools/(lit|gpu|compile|facts|plots|model|manifest)\b|"
    r"evidence-gpu|sm80-check|stage-limits|deep-solution", re.I)


def test_litkit_names_nothing_of_day74():
    """No file of litkit/ (the package's source) names Day 74, its program
    or its tools; the grep finds a planted name, so it can fail."""
    files = [p for p in pathlib.Path(LITKIT).rglob("*") if p.is_file()
             and not {"__pycache__", "tests", "build"} & set(p.parts)]
    assert len(files) >= 20, files
    hits = [f"{p.relative_to(LITKIT)}:{n}: {line.strip()}" for p in files
            for n, line in enumerate(p.read_text(encoding="utf-8")
                                     .splitlines(), 1)
            if DAY74_NAMES.search(line)]
    assert hits == []
    assert DAY74_NAMES.search("make DAY74_NO_SETUP=1 with cp.async")


