"""make exercise-check (part 2 of the exercise): the stub and a chunk that
does not compile in a scratch copy, the five wrong loops of issue 20 in the
CPU model (tests/fixtures/exercise/loops), the solution, the GPU path
faked."""

import ast
import json
import os
import pathlib
import re
import string
import sys

import pytest

from conftest import FIXTURES, checkout, make, run
from tools import manifest
from tools.gpu import exercise_check as ec
from tools.model import check as mc

CHECK = [sys.executable, "-B", "-m", "tools.gpu.exercise_check"]
CHECK_MODEL = [sys.executable, "-B", "-m", "tools.model.check"]
LOOP_DIR = pathlib.Path(FIXTURES, "exercise", "loops")   # the loops' bodies


@pytest.fixture(scope="module")
def scratch(tmp_path_factory):
    """A checkout (no build); each test sets the chunk with chunk()."""
    return checkout(str(tmp_path_factory.mktemp("exercise")),
                    seed=["build/.deps-ok"])


def span(text, name):
    """(start, end) of the body of chunk name in text, a noweb file."""
    start = text.index(f"<<{name}>>=\n") + len(name) + 6
    return start, text.index("\n@\n", start - 1) + 1


def chunk(folder, body, name="exercise: your pipelined main loop"):
    """Set chunk name in folder's day74.nw; returns body's first line."""
    path = pathlib.Path(folder, "day74.nw")
    text = path.read_text(encoding="utf-8")
    start, end = span(text, name)
    path.write_text(text[:start] + body + text[end:], encoding="utf-8")
    return text[:start].count("\n") + 1


def own(stdout):
    """stdout without make's progress lines ("  TANGLE   day74.nw")."""
    return "".join(line for line in stdout.splitlines(True)
                   if not re.match(r"  [A-Z]+ +\S", line))


def test_stub(scratch):
    """The stub: the one line, no compiler, exit 1 (make's own: 2)."""
    want = ec.NOT_WRITTEN.format(chunk=ec.CHUNK[:-1], line=chunk(
        scratch, "DAY74_EXERCISE_NOT_YET_WRITTEN\n") - 1) + "\n"
    p = make(scratch, "exercise-check")
    assert (p.returncode, own(p.stdout)) == (2, want), p.stderr
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


# Each wrong loop (the solution's chunk, edited as a student would, in
# LOOP_DIR): the depth it must fail at; what its message must say: MESSAGES.
LOOPS = {"wait-one-too-many": 2, "no-barrier": 2, "barrier-before-wait": 2,
         "refill-computed-stage": 2, "commit-when-fetched": 3,
         "fill-before-barrier": 2, "refill-one-ahead": 2,
         "divergent-barrier": 2, "mixed-completion": 2}
MESSAGES = ast.literal_eval(pathlib.Path(
    FIXTURES, "exercise", "loop-messages.txt").read_text(encoding="utf-8"))
NO_READ = {"fill-before-barrier", "divergent-barrier", "mixed-completion"}


def tangle_student(folder):
    """make's tangle of the student's file in folder."""
    p = make(folder, "build/exercises/student.cu", "build/kernels.h")
    assert p.returncode == 0, p.stdout + p.stderr


@pytest.mark.parametrize("name", sorted(LOOPS))
def test_wrong_loop_fails_in_model(scratch, name):
    """Each wrong loop fails in the CPU model, at its depth and not before,
    naming the thread, the K-slice, the stage and lines of its chunk (the
    read's, through addr2line)."""
    depth, want = LOOPS[name], MESSAGES[name]
    body = (LOOP_DIR / f"{name}.txt").read_text(encoding="utf-8")
    first = chunk(scratch, body)
    tangle_student(scratch)
    cmd = CHECK_MODEL + ["build/exercises/student.cu", "--who", "your loop"]
    p = run(cmd, cwd=scratch)
    assert p.returncode == 1, p.stdout + p.stderr
    if name == "barrier-before-wait":   # a race: the verdict is the same
        assert run(cmd, cwd=scratch).stdout == p.stdout
    assert p.stdout.startswith(f"FAIL your loop, STAGES={depth}, "), p.stdout
    lines = "|".join(f"day74.nw:{n}" for n in range(
        first + 1, first + body.count("\n") + 1))
    assert re.search(want.replace("{L}", f"(?:{lines})"), p.stdout), p.stdout
    if name not in NO_READ:   # a read: where, in the chunk
        assert re.search(rf"\. The read is at day74\.nw:\d+, reached from "
                         rf".*(?:{lines})\.$", p.stdout.strip()), p.stdout


@pytest.mark.parametrize("name,note", [("two-barriers", False),
                                       ("one-ahead-two-barriers", True)])
def test_model_passes_two_barrier_loop(scratch, name, note):
    """Correct loops unlike the solution (a barrier either side of the
    compute) pass; the one that fetches one slice ahead at every depth is
    told that it ignores the depth, the one fetching kStages - 1 ahead not."""
    chunk(scratch, (LOOP_DIR / f"{name}.txt").read_text())
    tangle_student(scratch)
    p = run(CHECK_MODEL + ["build/exercises/student.cu"], cwd=scratch)
    assert p.returncode == 0 and p.stdout.startswith("PASS"), p.stdout
    assert ("\nNOTE the loop is correct but ignores the depth: at STAGES="
            + ",".join(map(str, manifest.load().depths.exercise)) +
            " alike a thread had at most 2" in p.stdout) == note


def test_model_times_out(scratch, monkeypatch):
    """A loop that never ends: a FAIL line naming the time limit (here
    lowered to 2 s), not a traceback."""
    chunk(scratch, (LOOP_DIR / "never-ends.txt").read_text())
    tangle_student(scratch)
    monkeypatch.chdir(scratch)
    monkeypatch.setattr(mc, "TIMEOUT", 2)
    assert mc.check("build/exercises/student.cu", [2], who="your loop") == (
        1, ["FAIL your loop, STAGES=2: the model did not finish within 2 s "
            "(a loop that never ends, or a thread that never reaches a "
            "primitive?)."])


def test_no_nvcc_still_runs_the_model():
    """Without nvcc: said so, the model still checks (no PTX, no run)."""
    p = run(CHECK + ["--exercise", "solution"],
            env={**os.environ, "NVCC": "/nonexistent/nvcc"})
    assert p.returncode == 0, p.stdout + p.stderr
    assert p.stdout.startswith(ec.NO_NVCC + "\nPASS the solution keeps the "
                               "copy rules"), p.stdout
    assert "PTX holds" not in p.stdout


def test_model_usage(tmp_path):
    """A missing file or a depth below 2: usage errors (exit 2), no run."""
    for args, text in (([str(tmp_path / "no.cu")], "no.cu is missing"),
                       (["build/exercises/solution.cu", "--stages", "1,2"],
                        "stages are 2 or more")):
        p = run(CHECK_MODEL + args)
        assert p.returncode == 2 and text in p.stderr, p.stderr


def test_wrong_loop_through_make(scratch):
    """make exercise-check runs the model: the wait one group too shallow
    passes nvcc and fails the model (no GPU needed), exit 2 from make."""
    chunk(scratch, (LOOP_DIR / "wait-one-too-many.txt").read_text())
    p = make(scratch, "exercise-check")
    assert p.returncode == 2 and "PASS your loop compiles" in p.stdout
    assert "FAIL your loop, STAGES=2, N=64" in p.stdout, p.stdout + p.stderr


def test_solution_no_gpu():
    """The solution passes every check that needs no GPU."""
    p = run(CHECK + ["--exercise", "solution", "--nvccflags",
                     "-std=c++17 -O3 -Werror all-warnings"])
    assert p.returncode == 0, p.stdout + p.stderr
    assert "FAIL" not in p.stdout and "PASS the solution compiles" in p.stdout
    # the CPU model at every depth of the exercise, a partial last stage
    # included (4 slices at 3 stages); the lesson's kernel: make pitfalls
    assert "PASS the solution keeps the copy rules (PTX ISA: cp.async, " \
        "commit_group, wait_group, bar.sync) in the CPU model at STAGES=" + \
        ",".join(map(str, manifest.load().depths.exercise)) + \
        ", N = 64, 128 (4, 8 K-slices)" in p.stdout, p.stdout


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


# Part 1: the stages in dynamic shared memory, at the deep depths.
DEEP = "exercise: the stages in dynamic shared memory"
DEEP_DEPTHS = ",".join(map(str, manifest.load().depths.deep))
# Part 1's chunk as the page's solution has it, each $NAME a part that
# DEEP_WRONG changes.
SOLUTION_BODY = string.Template(pathlib.Path(
    FIXTURES, "exercise", "deep-body.txt").read_text())
# The right values of its parts, each wrong part 1 (one part changed) with
# what the model must say, and the PTX check's cases.
CASES = json.loads(pathlib.Path(FIXTURES, "exercise",
                                "deep-cases.json").read_text())
RIGHT, DEEP_WRONG = CASES["right"], CASES["wrong"]


def deep_student(folder, **change):
    """Part 1's chunk set to the solution with `change`, tangled; returns
    the model's command for build/exercises/deep-student.cu."""
    chunk(folder, SOLUTION_BODY.substitute(RIGHT, **change), DEEP)
    p = make(folder, "build/exercises/deep-student.cu", "build/kernels.h")
    assert p.returncode == 0, p.stdout + p.stderr
    return CHECK_MODEL + ["build/exercises/deep-student.cu", "--stages",
                          DEEP_DEPTHS, "--who", "your kernel"]


def test_deep_solution_passes_model():
    """The page's part 1 passes the model at the deep depths (6 and 8
    stages: past the 48 KiB of static shared memory)."""
    p = run(CHECK_MODEL + ["build/exercises/deep-solution.cu", "--stages",
                           DEEP_DEPTHS, "--who", "the solution"])
    assert p.returncode == 0, p.stdout + p.stderr
    assert p.stdout.startswith("PASS the solution keeps the copy rules ") \
        and f"at STAGES={DEEP_DEPTHS}, N = 64, 128" in p.stdout, p.stdout


@pytest.mark.parametrize("name", sorted(DEEP_WRONG))
def test_wrong_deep_stages_fail(scratch, name):
    """Each wrong part 1 fails in the model at the deep depths, saying
    what is wrong; the same body, right, passes (the control)."""
    change, want = DEEP_WRONG[name]
    p = run(deep_student(scratch, **change), cwd=scratch)
    assert p.returncode == 1, p.stdout + p.stderr
    assert re.search(r"^FAIL your kernel, " + want, p.stdout), p.stdout


def test_unmodelled_alignment_is_said(scratch):
    """Dynamic shared memory aligned past what the model lays out (its
    area is 256-byte aligned) stops the model with exit 2 and says so, not
    with a crash (it is found on a modelled thread's own stack)."""
    p = run(deep_student(scratch, align="__align__(512) "), cwd=scratch)
    out = p.stdout + p.stderr
    assert p.returncode == 1 and "stopped at STAGES=6 (exit 2)" in out, out
    assert "dynamic shared memory aligned to 512 bytes is not modelled" in \
        out, out


def test_deep_stub_and_right_chunk(scratch):
    """make exercise-check PART=1: the stub says not yet written (the
    chunk's line); the solution's text in the student's chunk passes the
    model at the deep depths."""
    line = chunk(scratch, "DAY74_EXERCISE_NOT_YET_WRITTEN\n", DEEP) - 1
    p = make(scratch, "exercise-check", "PART=1")
    assert p.returncode == 2 and own(p.stdout) == ec.NOT_WRITTEN.format(
        chunk=ec.DEEP_CHUNK[:-1], line=line) + "\n", p.stdout + p.stderr
    p = run(deep_student(scratch), cwd=scratch)
    assert p.returncode == 0 and p.stdout.startswith("PASS your kernel"), \
        p.stdout


@pytest.mark.parametrize("ptx,status,out", CASES["ptx"])
def test_deep_ptx(capsys, ptx, status, out):
    """Part 1's PTX check: dynamic shared memory, 16-byte aligned."""
    assert ec.deep_ptx("\n" + ptx + "\n", "your kernel") == status
    assert capsys.readouterr().out.startswith(out)
