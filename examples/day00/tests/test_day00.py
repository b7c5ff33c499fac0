"""Day 0's checks (make check): the program tangled from day00.nw runs
and is right, its kernel compiled to PTX, and its page holds every chunk,
with links that resolve."""

import html
import os
import re
import subprocess

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def read(rel):
    """The text of a file of this module."""
    with open(os.path.join(HERE, rel), encoding="utf-8") as f:
        return f.read()


def test_program_runs_right():
    """build/saxpy exits 0 and names the source hash make tangled."""
    p = subprocess.run([os.path.join(HERE, "build", "saxpy")],
                       capture_output=True, text=True)
    want = read("build/source.sha256").strip()
    assert p.returncode == 0, p.stderr
    assert p.stdout == f"saxpy: 1000 elements correct (source {want})\n"


def test_page_links_and_chunks_resolve():
    """Every in-page link of site/index.html names an id on it; every chunk
    of day00.nw is on the page, and the download is the tangled file."""
    page = read("site/index.html")
    ids = set(re.findall(r'\bid="([^"]+)"', page))
    links = set(re.findall(r'\bhref="#([^"]+)"', page))
    assert links and links <= ids, sorted(links - ids)
    chunks = set(re.findall(r"^<<(.+)>>=$", read("day00.nw"), re.M))
    shown = {html.unescape(n) for n in re.findall(r"⟨(.+?)⟩", page)}
    assert len(chunks) == 4 and chunks <= shown, (chunks, shown)
    assert "Generated from <code>day00.nw</code>" in page
    assert read("site/downloads/saxpy.c") == read("build/clean/saxpy.c")


def test_kernel_compiled_to_ptx():
    """build/ptx/sm_80.ptx (litkit's cuda.mk: nvcc, no GPU) holds the kernel
    as an entry point, compiled with warnings as errors."""
    assert re.search(r"^\.visible \.entry \w*saxpyKernel\w*\(",
                     read("build/ptx/sm_80.ptx"), re.M)
    assert "-Werror all-warnings" in read("build/ptx/sm_80.ptx.cmd")
