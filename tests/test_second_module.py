"""The course-generic toolchain, tools/lit, tangles, gathers the facts of
and weaves a tiny second module (tests/fixtures/tiny) that shares nothing
with Day 74 but that folder: the next day's module can reuse it as it is."""

import os
import re
import shutil
import sys

import pytest

import pagelib as P
from conftest import FIXTURES, REPO, checkout, run

LIT = os.path.join(REPO, "tools", "lit")


@pytest.fixture(scope="module")
def module(tmp_path_factory):
    """A folder holding the tiny module and a copy of tools/lit only."""
    d = str(tmp_path_factory.mktemp("day75"))
    tiny = os.path.join(FIXTURES, "tiny")
    checkout(d, src=tiny, files=[os.path.relpath(os.path.join(p, f), tiny)
                                 for p, _, fs in os.walk(tiny) for f in fs])
    shutil.copytree(LIT, os.path.join(d, "tools", "lit"),
                    ignore=shutil.ignore_patterns("__pycache__"))
    return d


def test_lit_names_nothing_of_day74():
    """No file of tools/lit names Day 74, its source or its kernels."""
    for name in os.listdir(LIT):
        if os.path.isfile(os.path.join(LIT, name)):
            with open(os.path.join(LIT, name), encoding="utf-8") as f:
                text = f.read()
            assert not re.search(r"day ?74|matmul|pipelined_gemm", text, re.I), \
                name


def test_tangle(module):
    """The roots check passes, the tangle is the C meant and it runs."""
    tangle = os.path.join(module, "tools", "lit", "tangle.sh")
    assert run([tangle, "--roots", "tiny.nw", "hello.c"],
               cwd=module).returncode == 0
    p = run([tangle, "--roots", "tiny.nw", "other.c"], cwd=module)
    assert p.returncode == 1 and "hello.c" in p.stderr
    p = run([tangle, "tiny.nw", "hello.c", "build/hello.c"], cwd=module)
    assert p.returncode == 0, p.stderr
    with open(os.path.join(module, "build", "hello.c")) as f:
        assert f.read() == ('#include <stdio.h>\nint main(void) { printf('
                            '"hello, %d\\n", 1 << 2); return 0; }\n')
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
    with open(os.path.join(module, "build", "index.html")) as f:
        html = f.read()
    assert re.search(r'data-fact="hello.ms"[^>]*>1\.23<', html)
    assert "fast enough" in html and "too slow" not in html
    assert 'id="nw-index"' in html and 'class="nwuse"' in html
    assert P.roundtrip(html, os.path.join(module, "tiny.nw")) == []
