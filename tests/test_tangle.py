"""Tangling day74.nw and compiling what comes out, in a scratch copy of
the module seeded with the real build (timestamps kept), so the real
build/ is never touched and nothing up to date is rebuilt; and the
program's exit codes on a machine without a GPU."""

import os
import pathlib
import re
import shutil
import subprocess
import time

import pytest

from conftest import REPO, checkout, make, run

PROGRAM = ["pipelined_gemm.cu", "kernels.h", "harness.h", "harness.c",
           "main.c"]
CONFIG = "build/sm_80-2stages"
TANGLED = ([f"build/{n}" for n in PROGRAM] + [f"build/clean/{n}" for n in
           PROGRAM] + ["build/source_hash.h"])
BUILT = [f"{CONFIG}/pipelined_gemm.o", f"{CONFIG}/main.o",
         f"{CONFIG}/pipelined_gemm", "build/host/harness.o"]
PROSE = "This sentence was appended by the tangle test; it is prose, not code."
ANCHOR = b"<<the CPU reference>>=\n"


@pytest.fixture(scope="module")
def scratch(tmp_path_factory):
    """A checkout seeded with the real build's products; day74.nw is put
    back after each test that edits it."""
    d = str(tmp_path_factory.mktemp("tangle"))
    checkout(d, seed=TANGLED + BUILT + ["build/source.sha256",
                                        "build/.roots-ok"])
    return d


@pytest.fixture
def nw(scratch):
    """(read, write) of the scratch day74.nw; restored and re-tangled after
    the test."""
    path = pathlib.Path(scratch, "day74.nw")
    original = path.read_bytes()
    yield original, path.write_bytes
    path.write_bytes(original)
    assert make(scratch, "tangle").returncode == 0


def snapshot(root, rels):
    """{rel: (bytes, mtime_ns)} of the files of rels that exist."""
    return {rel: (p.read_bytes(), p.stat().st_mtime_ns) for rel in rels
            for p in [pathlib.Path(root, rel)] if p.is_file()}


def same(before, after, mtimes=True):
    """Assert every file of before is in after, same bytes (and mtime)."""
    for rel, (data, mtime) in before.items():
        assert rel in after, f"{rel} disappeared"
        assert after[rel][0] == data, f"{rel} changed its content"
        if mtimes:
            assert after[rel][1] == mtime, f"{rel} was rewritten"


def test_tangle_is_idempotent(scratch):
    """make tangle writes every program source; a second one, and one after
    day74.nw is touched, keep every byte and every mtime."""
    p = make(scratch, "tangle")
    assert p.returncode == 0, p.stderr
    before = snapshot(scratch, TANGLED)
    assert sorted(before) == sorted(TANGLED)
    assert make(scratch, "tangle").returncode == 0
    same(before, snapshot(scratch, TANGLED))
    now = time.time()
    os.utime(os.path.join(scratch, "day74.nw"), (now, now))
    assert make(scratch, "tangle").returncode == 0
    same(before, snapshot(scratch, TANGLED))


@pytest.mark.parametrize("src,extra", [
    ("build/harness.c", []),
    ("build/main.c", ["-I{cuda}/include", '-DDAY74_BUILD_ARCH="sm_80"'])])
def test_c_compiles_without_warnings(scratch, src, extra):
    """The C sources compile with -Wall -Wextra -Wpedantic -Werror,
    silently."""
    cuda = os.environ.get("CUDA_HOME", "/usr/local/cuda")
    p = run([os.environ.get("CC", "cc"), "-std=c11", "-O3", "-Wall",
             "-Wextra", "-Wpedantic", "-Werror", "-fopenmp", "-Ibuild",
             *[e.format(cuda=cuda) for e in extra], "-c", src, "-o",
             "/dev/null"], cwd=scratch)
    assert p.returncode == 0 and not p.stderr.strip(), p.stderr


def test_prose_edit_rebuilds_nothing(scratch, nw):
    """make build, a prose edit, make build: no object, binary or clean
    tangle changes, and no compiler runs."""
    original, write = nw
    assert make(scratch, "build").returncode == 0
    objs = snapshot(scratch, BUILT)
    assert len(objs) == 4, f"make build left {sorted(objs)}"
    clean = snapshot(scratch, [t for t in TANGLED if "/clean/" in t] +
                     ["build/source_hash.h"])
    lined = snapshot(scratch, ["build/pipelined_gemm.cu"])
    lines = original.split(b"\n")
    at = next(i for i, l in enumerate(lines) if l == b"@" or
              l.startswith(b"@ "))
    write(b"\n".join(lines[:at + 1] + [PROSE.encode()] + lines[at + 1:]))
    p = make(scratch, "build")
    assert p.returncode == 0, p.stderr
    same(objs, snapshot(scratch, BUILT))
    same(clean, snapshot(scratch, list(clean)))
    compiled = [l for l in p.stdout.splitlines() if " -c " in l or " -o " in l]
    assert not compiled, "make build ran compilers"
    assert snapshot(scratch, ["build/pipelined_gemm.cu"]) != lined, \
        "the edit did not reach the #line tangle, so this proved nothing"


@pytest.mark.parametrize("edit,mention", [
    (lambda t: t.replace(ANCHOR, ANCHOR + b"<<no such chunk>>\n", 1),
     "no such chunk"),
    (lambda t: t.rstrip(b"\n") + b"\n\n<<an orphan chunk>>=\nint orphan;\n@\n",
     "an orphan chunk"),
    (lambda t: t.replace(ANCHOR, b"<<the CPU referense>>=\n", 1),
     "the CPU referense")], ids=["undefined", "orphan", "misspelled"])
def test_broken_chunk_fails(scratch, nw, edit, mention):
    """An undefined chunk, an orphan chunk or a misspelled definition fails
    make tangle twice, naming the chunk; nothing is half written, and
    the next make after the fix gives back the same files."""
    original, write = nw
    assert ANCHOR in original, "anchor chunk <<the CPU reference>> not found"
    files = TANGLED + ["build/.roots-ok"]
    before = snapshot(scratch, files)
    write(edit(original))
    for attempt in (1, 2):
        p = make(scratch, "tangle")
        assert p.returncode != 0, f"make tangle succeeded (attempt {attempt})"
        assert mention in p.stderr
    for rel, (data, _) in snapshot(scratch, files).items():
        assert rel in before and data == before[rel][0], rel
    for d in ("build", "build/clean"):
        assert not [n for n in os.listdir(os.path.join(scratch, d))
                    if n.startswith(".tangle.")], f"temporary files in {d}"
    write(original)
    assert make(scratch, "tangle").returncode == 0
    same({k: v for k, v in before.items() if k != "build/.roots-ok"},
         snapshot(scratch, files), mtimes=False)


def angle_lines(nw):
    """Code lines of nw holding <<< or >> that are not chunk uses,
    unescaped."""
    out, in_code = [], False
    for raw in nw.decode().splitlines():
        if re.match(r"^<<.*>>=\s*$", raw):
            in_code = True
        elif raw == "@" or raw.startswith("@ "):
            in_code = False
        elif in_code and not re.fullmatch(r"\s*<<[^>]*>>\s*", raw):
            line = raw.replace("@<<", "<<").replace("@>>", ">>")
            if "<<<" in line or ">>" in line:
                out.append(line.strip())
    return out


def test_launches_and_shifts_intact(scratch):
    """Kernel launches <<<...>>> and shifts reach the tangles intact."""
    texts = {rel: pathlib.Path(scratch, rel).read_text()
             for rel in TANGLED[:-1]}
    for rel in ("build/pipelined_gemm.cu", "build/clean/pipelined_gemm.cu"):
        for kern in ("matmulTileSync", "matmulTilePiped"):
            assert re.search(kern + r"<<<grid, kThreads, [^,<>]+, stream>>>"
                             r"\(a, b, c, n\);", texts[rel]), rel
    assert "z ^= z >> 31;" in texts["build/clean/harness.c"]
    for rel, t in texts.items():
        assert "@<<" not in t, f"{rel} holds an escaped @<<"
        assert not re.search(r"^\s*<<[^<>=]+>>\s*$", t, re.M), \
            f"{rel} holds an unexpanded chunk use"
    everything = set()
    for r in run(["noroots", "day74.nw"], cwd=scratch).stdout.splitlines():
        everything.update(l.strip() for l in run(
            ["notangle", f"-R{r[2:-2]}", "day74.nw"],
            cwd=scratch).stdout.splitlines())
    lines = angle_lines(pathlib.Path(REPO, "day74.nw").read_bytes())
    assert len(lines) >= 2, "no launch or shift lines found in day74.nw"
    assert [l for l in lines if l not in everything] == []


def test_unescaped_shift_pair_caught(tmp_path):
    """An unescaped `a << 2 | b >> 1` fails loudly; the @<< form tangles to
    the C meant."""
    src, out = tmp_path / "shift.nw", str(tmp_path / "shift.c")
    tangle = os.path.join(REPO, "tools", "lit", "tangle.sh")
    code = "int f(int a, int b) { return a %s 2 | b >> 1; }\n"
    src.write_text("Doc.\n<<shift.c>>=\n" + code % "<<" + "@\n")
    p = run([tangle, str(src), "shift.c", out])
    assert p.returncode != 0, "a << ... >> pair read as a chunk use passed"
    assert not os.path.exists(out), "a failed tangle left an output"
    src.write_text("Doc.\n<<shift.c>>=\n" + code % "@<<" + "@\n")
    p = run([tangle, str(src), "shift.c", out])
    assert p.returncode == 0, p.stderr
    with open(out) as f:
        assert f.read() == code % "<<"


# ---- the program without a GPU: usage errors and --help before any device
# work; with no device, the documented message and exit 3 -----------------
NO_GPU = not os.path.exists("/dev/nvidia0") and (
    shutil.which("nvidia-smi") is None or
    run(["nvidia-smi", "-L"]).returncode != 0)
NO_DEVICE = ["pipelined_gemm: no CUDA device is available",
             "compute capability 8.0"]


RESULTS = ["matches the reference", "\nGPU:"]   # what a run prints


@pytest.mark.parametrize("args,rc,out,not_out,err,not_err", [
    (["--help"], 0, ["usage: ", "--sizes"], [], [], []),
    (["--sizes", "100"], 2, [], None, ["100"], ["device"]),
    (["--frobnicate"], 2, [], [], ["--frobnicate"], []),
    pytest.param([], 3, [], RESULTS, NO_DEVICE, [], marks=pytest.mark.skipif(
        not NO_GPU, reason="a GPU is here")),
    pytest.param(["--check-only", "--sizes", "64"], 3, [], RESULTS,
                 NO_DEVICE, [], marks=pytest.mark.skipif(not NO_GPU,
                                                         reason="a GPU"))],
    ids=["help", "bad-size", "unknown-option", "no-device", "check-only"])
def test_exit(binary, args, rc, out, not_out, err, not_err):
    """Exit status; what stdout and stderr must and must not hold (not_out
    None: stdout empty; "device" in stderr: looked at the GPU too early)."""
    p = run([binary, *args], timeout=60, stdin=subprocess.DEVNULL)
    assert p.returncode == rc
    assert not_out is not None or p.stdout == ""
    for text in out + err:
        assert text in (p.stdout if text in out else p.stderr), text
    for text in not_err:
        assert text not in p.stderr.lower(), text
    for text in not_out or []:
        assert text not in "\n" + p.stdout, text
