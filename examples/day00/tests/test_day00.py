"""Day 0's checks (make check): the program tangled from day00.nw runs
and is right, its kernel compiled to PTX, and its pages hold every chunk,
the measured facts, the verdict and the plot, with links that resolve."""

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
    """build/saxpy exits 0 and names the source hash make tangled; --time
    prints a time per size."""
    p = subprocess.run([os.path.join(HERE, "build", "saxpy")],
                       capture_output=True, text=True)
    want = read("build/source.sha256").strip()
    assert p.returncode == 0, p.stderr
    assert p.stdout == f"saxpy: 1000 elements correct (source {want})\n"
    p = subprocess.run([os.path.join(HERE, "build", "saxpy"), "--time"],
                       capture_output=True, text=True)
    assert re.fullmatch(r"(time \d+ \d+\.\d{3}\n){4}", p.stdout), p.stdout


def test_pages_links_and_chunks_resolve():
    """Every in-page link of the two pages names an id on its page or the
    other; every chunk of day00.nw is on a page; the download is the
    tangled file."""
    pages = {p: read(f"site/{p}.html") for p in ("index", "notes")}
    ids = {p: set(re.findall(r'\bid="([^"]+)"', t)) for p, t in pages.items()}
    for p, text in pages.items():
        for f, frag in re.findall(r'\bhref="(?:(\w+)\.html)?#([^"]+)"', text):
            assert frag in ids[f or p], (p, f, frag)
    chunks = set(re.findall(r"^<<(.+)>>=$", read("day00.nw"), re.M))
    shown = {html.unescape(n) for n in re.findall(r"⟨(.+?)⟩",
                                                   "".join(pages.values()))}
    assert len(chunks) == 5 and chunks <= shown, (chunks, shown)
    assert "Generated from <code>day00.nw</code>" in pages["index"]
    assert read("site/downloads/saxpy.c") == read("build/clean/saxpy.c")


def test_facts_verdict_and_plot():
    """The notes page shows the committed evidence's time at 10^6 elements
    as schema.tsv formats it, the verdict's one sentence, and the plot
    drawn from the facts."""
    notes, facts = read("site/notes.html"), read("evidence/run.facts.json")
    us = float(re.search(r'"saxpy.1000000.us": ([\d.]+)', facts).group(1))
    shown = re.search(r'data-fact="saxpy.1000000.us"[^>]*>([^<]*)<', notes)
    assert shown and shown.group(1) == "%.2f" % us
    assert ("It held:" in notes) != ("It failed:" in notes)
    assert '<figure class="plot" data-plot="time"' in notes
    assert f"1000000\t{shown.group(1)}\n" in read("build/plots/time.values.tsv")


def test_kernel_compiled_to_ptx():
    """build/checks/sm_80.ptx (litkit: nvcc, no GPU) holds the kernel as an
    entry point, compiled with warnings as errors."""
    assert re.search(r"^\.visible \.entry \w*saxpyKernel\w*\(",
                     read("build/checks/sm_80.ptx"), re.M)
    assert "-Werror all-warnings" in read("build/checks/sm_80.ptx.cmd")
