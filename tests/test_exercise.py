"""make exercise-check (part 2 of the exercise): the stub and a chunk that
does not compile in a scratch copy, the solution, the GPU path faked."""

import os
import pathlib
import re

import pytest

from conftest import FIXTURES, checkout, make, run
from tools.gpu import exercise_check as ec

CHECK = ["/usr/bin/python3", "-B", "-m", "tools.gpu.exercise_check"]


@pytest.fixture(scope="module")
def scratch(tmp_path_factory):
    """A checkout (no build); each test sets the chunk with chunk()."""
    return checkout(str(tmp_path_factory.mktemp("exercise")),
                    seed=["build/.deps-ok"])


def span(text, name):
    """(start, end) of the body of chunk name in text, a noweb file."""
    start = text.index(f"<<{name}>>=\n") + len(name) + 6
    return start, text.index("\n@\n", start - 1) + 1


def chunk(folder, body):
    """Set the chunk in folder's day74.nw; returns body's first line."""
    path = pathlib.Path(folder, "day74.nw")
    text = path.read_text(encoding="utf-8")
    start, end = span(text, "exercise: your pipelined main loop")
    path.write_text(text[:start] + body + text[end:], encoding="utf-8")
    return text[:start].count("\n") + 1


def test_stub(scratch):
    """The stub: the one line, no compiler, exit 1 (make's own: 2)."""
    want = ec.NOT_WRITTEN.format(
        chunk(scratch, "DAY74_EXERCISE_NOT_YET_WRITTEN\n") - 1) + "\n"
    p = make(scratch, "exercise-check")
    assert (p.returncode, p.stdout) == (2, want), p.stderr
    assert re.fullmatch(r"make: \*\*\* \[Makefile:\d+: exercise-check\] "
                        r"Error 1\n", p.stderr)
    p = run(CHECK, cwd=scratch)   # the tool itself exits 1
    assert (p.returncode, p.stdout + p.stderr) == (1, want)


def test_broken_chunk_names_day74(scratch):
    """A chunk that does not compile: nvcc names its line of day74.nw."""
    line = chunk(scratch, "for (int k = 0; k < slices; ++k)\n"
                 "    noSuchFunction(k);\n")
    p = make(scratch, "exercise-check")
    assert p.returncode == 2 and f"day74.nw({line + 1}): error" in p.stdout
    assert "FAIL your loop does not compile for sm_80" in p.stdout


def test_wait_too_shallow_warned(scratch):
    """The solution waiting for slice k with kStages - 1 groups still
    pending is a race that passes the compile checks: the check warns."""
    nw = pathlib.Path(scratch, "day74.nw").read_text(encoding="utf-8")
    loop, solution = (nw[slice(*span(nw, name))] for name in (
        "the thread-scope main loop",
        "exercise solution: the pipelined main loop"))
    chunk(scratch, solution.replace("<<the thread-scope main loop>>\n",
                                    loop.replace("(kStages - 2)",
                                                 "(kStages - 1)")))
    p = make(scratch, "exercise-check")
    assert "WARN your loop waits with cp.async.wait_group 1" in p.stdout, \
        p.stdout + p.stderr


def test_solution_no_gpu():
    """The solution passes every check that needs no GPU."""
    p = run(CHECK + ["--exercise", "solution", "--nvccflags",
                     "-std=c++17 -O3 -Werror all-warnings"])
    assert p.returncode == 0, p.stdout + p.stderr
    assert "FAIL" not in p.stdout and "PASS the solution compiles" in p.stdout
    assert "WARN" not in p.stdout


@pytest.mark.parametrize("rc,out,status", [
    (3, ec.NO_GPU + ". On a GPU", 0), (4, ec.NO_GPU + " (the card", 0),
    (1, "    N=512: differs\nFAIL your loop computed a wrong result", 1),
    (6, "FAIL your loop hung", 1),
    (0, "   2048  0.869           0.963\n   4096  0.903           0.996\n"
     "At N = 2048, your loop is faster than the synchronous kernel and "
     "faster than cuda::pipeline.\n", 0)])
def test_gpu_path(tmp_path, monkeypatch, capsys, rc, out, status):
    """Stand-ins for the two binaries (their CSVs: the H200's rows)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("STAND_IN_RC", str(rc))
    os.makedirs(ec.OUT)
    for name in "student", "lesson":
        os.symlink(os.path.join(FIXTURES, "exercise", "stand-in"), name)
    assert ec.gpu_checks("./student", "./lesson", "your loop") == status
    assert out in capsys.readouterr().out
