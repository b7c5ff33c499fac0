"""Tangling and building in scratch copies seeded with the real build (so
nothing up to date is rebuilt); make where users break it (issue 13); litkit
on awkward prose from any folder; the program's exit codes without a GPU."""

import os
import pathlib
import re
import shutil
import subprocess
import tempfile
import time

import pytest

import litkit

from litkit.pagecheck import source_chunks

from conftest import REPO, checkout, is_git, make, run, sources

PROGRAM = ["pipelined_gemm.cu", "blocked_gemm.cu", "kernels.h", "harness.h",
           "harness.c", "main.c", "wide_gemm.cu"]
CONFIG = "build/sm_80-2stages"
BIN = f"{CONFIG}/pipelined_gemm"
TANGLED = ([f"build/{n}" for n in PROGRAM] + [f"build/clean/{n}" for n in
           PROGRAM] + ["build/source_hash.h"])
KERNELS = [f"{CONFIG}/{f}" for f in ("pipelined_gemm.o", "blocked_gemm.o",
                                     "wide_gemm.o", "nvcc.cmd")]
BUILT = KERNELS + [f"{CONFIG}/main.o", BIN, "build/host/harness.o",
                   "build/host/cc.cmd"]
# What make tangle site writes that must match the real build byte for byte.
PAGE = [f"site/{p}.html" for p in ("index", "lab", "program", "record")] + [
    "build/source.sha256", "build/facts.json"] + [
    f"site/downloads/{n}" for n in PROGRAM + ["source_hash.h"]]
PROSE = "This sentence was appended by the tangle test; it is prose, not code."
ANCHOR = b"<<the CPU reference>>=\n"


@pytest.fixture(scope="module")
def scratch(tmp_path_factory):
    """A checkout seeded with the real build's products, its pages too."""
    return seeded(str(tmp_path_factory.mktemp("tangle")), BUILT + [
        p for p in PAGE if p.startswith("site/")] + ["build/model/model.o"])


def seeded(d, more=KERNELS, deps=True):
    """A checkout in d with the real build's tangles, facts, plots, more."""
    seed = [str(p.relative_to(REPO)) for top in ("clean", "pitfalls",
            "exercises", "experiments", "plots") for p in
            pathlib.Path(REPO, "build", top).rglob("*") if p.is_file()]
    seed += [f"build/{f}" for f in os.listdir(os.path.join(REPO, "build"))
             if re.search(r"\.(cu|c|h|sha256|tokens|json|mk|tsv)$", f)]
    return checkout(d, seed=seed + more + ["build/.deps-ok"] * deps)


def differ(d, rels=PAGE):
    """Files of rels and clean tangles that differ from the real build."""
    rels = rels + [os.path.join("build/clean", f) for f in os.listdir(
        os.path.join(REPO, "build", "clean")) if f.endswith((".c", ".h"))]
    return [r for r in rels if pathlib.Path(d, r).read_bytes() !=
            pathlib.Path(REPO, r).read_bytes()]


@pytest.fixture
def nw(scratch):
    """(original bytes, write) of the scratch day74.nw; put back after."""
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


def new_paragraph(t):
    """t with a prose paragraph after its first chunk."""
    return re.sub(rb"^@( .*)?$", rb"\g<0>\n" + PROSE.encode(), t, 1, re.M)


@pytest.mark.parametrize("edit,goal", [
    (new_paragraph, "all"), (lambda t: t.replace(b"Day 74", b"Day 74b", 1),
                             "build"), (lambda t: t, "build")],
    ids=["new-paragraph", "reworded", "touched"])
def test_prose_edit_rebuilds_nothing(scratch, nw, edit, goal):
    """After a prose edit make rewrites no object, binary or clean tangle
    (after a touch, no tangle) nor compiles; then make -q and -n agree."""
    original, write = nw
    assert make(scratch, goal).returncode == 0
    kept = BUILT + [t for t in TANGLED if edit is not new_paragraph or
                    "/clean/" in t or "hash" in t]
    before = snapshot(scratch, kept)
    assert len(before) == len(kept), f"make left {sorted(before)}"
    lined = snapshot(scratch, ["build/pipelined_gemm.cu"])
    time.sleep(0.01)
    write(edit(original))
    p = make(scratch, goal)
    assert p.returncode == 0, p.stderr
    same(before, snapshot(scratch, kept))
    assert not re.search(r" -c | -o |^built", p.stdout, re.M), p.stdout
    assert (snapshot(scratch, ["build/pipelined_gemm.cu"]) != lined) == (
        edit is new_paragraph), "the #line tangle"
    assert make(scratch, "-q", goal).returncode == 0, "make -q: not done"
    assert make(scratch, "-n", goal).stdout == \
        f"make: Nothing to be done for '{goal}'.\n"


@pytest.mark.parametrize("edit,mention", [
    (lambda t: t.replace(ANCHOR, ANCHOR + b"<<no such chunk>>\n", 1),
     "no such chunk"),
    (lambda t: t.rstrip(b"\n") + b"\n\n<<an orphan chunk>>=\nint orphan;\n@\n",
     "an orphan chunk"),
    (lambda t: t.replace(ANCHOR, b"<<the CPU referense>>=\n", 1),
     "the CPU referense"),
    (lambda t: t.replace(b"<<main.c>>=", b"<<mainc>>=", 1), "mainc")],
    ids=["undefined", "orphan", "misspelled", "misspelled-root"])
def test_broken_chunk_fails(scratch, nw, edit, mention):
    """A broken chunk fails make tangle twice, naming chunk and line, with
    nothing half written; after the fix make gives back the same files."""
    original, write = nw
    assert ANCHOR in original, "anchor chunk <<the CPU reference>> not found"
    files = TANGLED + ["build/tangle.mk"]
    before = snapshot(scratch, files)
    write(edit(original))
    line = 1 + next(i for i, l in enumerate(edit(original).split(b"\n"))
                    if b"<<%s>>" % mention.encode() in l)
    for attempt in (1, 2):
        p = make(scratch, "tangle")
        assert p.returncode != 0, f"make tangle succeeded (attempt {attempt})"
        assert f"day74.nw:{line}: " in p.stderr and mention in p.stderr
    same(snapshot(scratch, files), before, mtimes=False)   # none new
    for d in ("build", "build/clean"):
        assert not [n for n in os.listdir(os.path.join(scratch, d))
                    if n.startswith(".tangle.")], f"temporary files in {d}"
    write(original)
    assert make(scratch, "tangle").returncode == 0
    same({k: v for k, v in before.items() if k != "build/tangle.mk"},
         snapshot(scratch, files), mtimes=False)


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
    clean = pathlib.Path(scratch, "build/clean").rglob("*.[ch]*")
    everything = {l.strip() for p in clean for l in p.read_text().split("\n")}
    # code lines with <<< or >> and no chunk use, as noweb reads them
    lines = [x[0].strip() for defs in source_chunks(os.path.join(
        REPO, "day74.nw")).values() for d in defs for x in d if len(x) == 1
        and isinstance(x[0], str) and re.search("<<<|>>", x[0])]
    assert len(lines) >= 2, "no launch or shift lines found in day74.nw"
    assert [l for l in lines if l not in everything] == []


# ---- make where users break it (issue 13) ----------------------------------
# Folder names holding every kind of character; make refuses " and $ by name.
FOLDER = "a b'c\"d$e&f;(g)#h%20i?j=k:l ü"
TOOLKIT = "cu da'x&y;(z)#%20?q=1:ü"
NVCC = os.path.realpath(shutil.which(os.environ.get("NVCC", "nvcc")) or
                        "/usr/local/cuda/bin/nvcc")


@pytest.mark.slow
def test_any_folder_and_toolkit(tmp_path):
    """From a folder of any name make gives the real build's page and
    tangles and a program that runs; a toolkit there compiles and links."""
    d = seeded(str(tmp_path / FOLDER))
    p = make(d, "tangle", "site", "build")
    assert p.returncode == 0 and differ(d) == [], p.stderr[-2000:]
    assert run([os.path.join(d, BIN), "--help"]).returncode == 0
    assert 'name holds a " (ptxas' in make(d, "build", "ARCH=sm_86").stderr
    assert "NVCC=/a$b/nvcc cannot work" in make(d, "NVCC=/a$$b/nvcc").stderr
    d, tk = seeded(str(tmp_path / FOLDER.replace('"', ""))), tmp_path / TOOLKIT
    cuda = os.makedirs(tk) or os.path.dirname(os.path.dirname(NVCC))
    if run(["cp", "-al", os.path.dirname(NVCC), tk / "bin"]).returncode:
        pytest.skip("cannot hard-link the toolkit's bin/ here")
    for f in set(os.listdir(cuda)) - {"bin"}:
        os.symlink(os.path.join(cuda, f), tk / f)
    p = make(d, "build", "ARCH=sm_86", f"NVCC={tk}/bin/nvcc")
    assert "built build/sm_86-2stages/pipelined_gemm" in p.stdout, p.stderr


@pytest.mark.parametrize("env,arg", [({"ARCH": "x86_64"}, None), (dict(
    ARCH="x86_64", CC="false", CFLAGS="-O0 -m32", STAGES="7", NVCCFLAGS="-G",
    LDFLAGS="-static", NVCC="/bin/false", NVCC_APPEND_FLAGS="-DSTAGES=5",
    JOBS="x", PYTHON="false"), None)] + [({}, a) for a in (
        "ARCH=x86_64", "ARCH=80", "ARCH=sm_8x", "STAGES=1", "STAGES=two",
        "JOBS=0", "CC=no-such-cc")])
def test_environment_and_values(scratch, env, arg):
    """Environment variables change no command and are named in a note; a
    value that cannot work is refused by name before any compiler runs."""
    cmd = ["-n", "-W", "build/clean/kernels.h", "build"]
    want, p = make(scratch, *cmd), make(scratch, *cmd, *[arg] * bool(arg),
                                        env=env)
    assert " -c " in want.stdout
    assert [v for v in env if f"ignoring {v} from" not in p.stderr] == []
    assert (p.returncode, p.stdout) == ((2, "") if arg else (
        0, want.stdout)) and (not arg or f"{arg} cannot work" in p.stderr)


def test_nvcc_environment_ignored(scratch):
    """Each variable nvcc reads from the environment (the NVCC_* names in
    its binary; NVIDIA's manual lists NVCC_PREPEND_FLAGS, NVCC_APPEND_FLAGS,
    NVCC_CCBIN) is ignored with a note: no recipe, so no nvcc, sees it.
    The binary is the first ELF file of: nvcc on PATH, the paths a wrapper
    script names (`exec /usr/local/cuda-13.0/bin/nvcc "$@"`), CUDA's."""
    found = [p for p in [shutil.which("nvcc"), "/usr/local/cuda/bin/nvcc"]
             if p and os.path.isfile(p)]
    if not found:
        pytest.skip("no nvcc: nothing reads these variables")
    read = lambda p: pathlib.Path(p).read_bytes().decode("latin-1")
    if not read(found[0]).startswith("\x7fELF"):       # a wrapper script
        found[1:1] = re.findall(r"/\S*/nvcc\b", read(found[0]))
    elf = [read(p) for p in found
           if os.path.isfile(p) and read(p).startswith("\x7fELF")]
    assert elf, f"no nvcc binary among {found}"
    names = set(re.findall(r"\bNVCC_[A-Z_]*[A-Z]\b", elf[0]))
    assert {"NVCC_CCBIN", "NVCC_APPEND_FLAGS"} <= names
    p = make(scratch, "--eval", "nvcc-env: ; @env | grep ^NVCC_ || :",
             "nvcc-env", env=dict.fromkeys(names, "/nonexistent/g++-99"))
    assert p.returncode == 0 and "NVCC_" not in p.stdout, p.stdout
    assert [n for n in names if f"ignoring {n} from" not in p.stderr] == []


def test_quiet_unless_v1(scratch):
    """make prints a short line per product, with no command or temporary;
    make V=1 prints the commands in full."""
    obj = os.path.join(scratch, "build", "host", "harness.o")
    for args, want, unwanted in (
            ([], "\n  CC       build/host/harness.o\n", ".tmp"),
            (["V=1"], " -c build/harness.c -o build/host/harness.o.", None)):
        old = os.path.getmtime(os.path.join(scratch, "build", "clean",
                                            "harness.c")) - 10
        os.utime(obj, (old, old))   # older than its source: rebuilt
        p = make(scratch, "build", *args)
        assert p.returncode == 0 and want in "\n" + p.stdout, p.stdout
        assert unwanted is None or unwanted not in p.stdout, p.stdout


@pytest.mark.parametrize("cc,omp", [("clang", "libomp"), ("gcc", "libgomp"),
                                    ("clang -O1", "libomp")])
def test_c_compilers(scratch, cc, omp):
    """make CC=... builds warning-free, linking its OpenMP; the program runs."""
    if not shutil.which(cc.split()[0]):
        pytest.skip(f"no {cc} here")
    p = make(scratch, "build", f"CC={cc}", "V=1",
             "CFLAGS=-O3 -Wall -Wextra -Wpedantic -Werror")
    assert p.returncode == 0 and f"\n{cc} -O3" in p.stdout, p.stderr
    assert run([os.path.join(scratch, BIN), "--help"]).returncode == 0
    assert omp in run(["ldd", os.path.join(scratch, BIN)]).stdout


@pytest.mark.slow
def test_clean_with_other_goals(tmp_path):
    """clean with other goals under -j gives what they give in turn; after
    them make -q agrees (the tangle's stamp is written again); clean
    alone leaves the set-up and no empty site/."""
    d = pathlib.Path(seeded(str(tmp_path / "j")))
    for args in (["-j4", "clean", "tangle", "site"], ["-j2", "clean", "all"],
                 ["-j3", "site", "clean"]):
        assert make(d, *args).returncode == 0, args
        assert (differ(d) == []) if args[-1] != "clean" else not (
            set(os.listdir(d / "build")) - {"venv", "venv.lock"} or
            (d / "site").exists()), args   # the set-up stays; no site/
        q = make(d, "-q", *args[2:])
        assert args[-1] == "clean" or (q.returncode, q.stdout) == (0, ""), (
            "make -q after", args, q.stdout)
        assert args[-1] != "all" or run([d / BIN, "--help"]).returncode == 0


@pytest.mark.slow
@pytest.mark.parametrize("convert", [
    lambda t: t.replace(b"\n", b"\r\n"), lambda t: b"\xef\xbb\xbf" +
    b"".join(l + b"\r\n"[i % 2:] for i, l in enumerate(t.split(b"\n")))],
    ids=["crlf", "bom-mixed"])
def test_line_ends(tmp_path, convert):
    """CR line ends give the products of LF; git checks out LF anyway."""
    src = pathlib.Path(seeded(str(tmp_path / "cr")), "day74.nw")
    src.write_bytes(convert(src.read_bytes()))
    assert make(src.parent, "tangle", "site").returncode == 0
    assert differ(src.parent) == []
    git = ["git"]
    if not is_git(REPO):   # a source archive: .gitattributes all the same
        run(["git", "init", "-q", str(tmp_path / "git")])
        git += ["--git-dir", str(tmp_path / "git" / ".git"), "--work-tree",
                REPO]
    p = run([*git, "check-attr", "eol", "--", "day74.nw", "Makefile"])
    assert p.stdout.count(": eol: lf\n") == 2, p.stdout


def test_stale_evidence_warned(scratch, nw):
    """make check warns of (only) evidence of other sources (after make too)."""
    ev = {f: f.read_text() for f in pathlib.Path(scratch).glob(
        "evidence/*.facts.json")}
    now = pathlib.Path(scratch, "build/source.sha256").read_text().strip()
    tokens = pathlib.Path(scratch, "build/source.tokens").read_text().strip()
    for stale in ([], ["compile"], ["gpu"], ["compile", "gpu", "code"]):
        for f, text in ev.items():
            old = f.name[:3] in "".join(stale)   # of other sources
            text = re.sub(r'("source_sha256": ")\w+', r"\g<1>" + (
                "0" * 64 if old else now), text)
            f.write_text(re.sub(r'("source_tokens": ")\w+', r"\g<1>" + (
                "0" * 64 if old else tokens), text))
        if "code" in stale:
            assert make(scratch, "build", "facts").returncode == 0
            nw[1](nw[0].replace(b"int main(", b"int  main(", 1))
        p = make(scratch, "check", "CHECKS=")
        assert p.returncode == 0 and [k for k in ("compile", "GPU") if (
            f"the {k} evidence is of other" in p.stderr) != (
                k.lower() in stale)] == [], (stale, p.stderr)
    for f, text in ev.items():
        f.write_text(text)


def test_sources_from_the_future(tmp_path):
    """The source and the manifest dated 2 h ahead (clock skew, an archive
    from elsewhere): make warns, tangles once and finishes; the next make
    tangles nothing (no included makefile is remade in a loop)."""
    d = seeded(str(tmp_path / "future"), more=[])
    ahead = time.time() + 7200
    for f in ("day74.nw", "tools/manifest.toml"):
        os.utime(os.path.join(d, f), (ahead, ahead))
    for tangles in (1, 0):
        p = make(d, "tangle", timeout=60)
        assert p.returncode == 0 and "in the future" in p.stderr, p.stderr
        assert p.stdout.count("TANGLE") == tangles, p.stdout


@pytest.mark.slow
def test_fresh_debian():
    """As root and as a user, PATH the toolkit, /usr/bin and /bin, no pip
    registry: make all works; make check skips, saying what to install, only
    what needs cuobjdump."""
    env = {"PATH": f"{os.path.dirname(shutil.which('nvcc') or NVCC)}:"
           "/usr/bin:/bin", "LANG": "C.UTF-8", "PIP_NO_INDEX": "1"}
    who = [[]] + [["setpriv", "--reuid=65534", "--regid=65534",
                   "--clear-groups"]] * (os.geteuid() == 0)
    ds = [seeded(tempfile.mkdtemp(prefix="day74 fresh "), deps=False)
          for _ in who]
    no_tool = run(["litkit/litkit/find-tool.sh", "cuobjdump"], cwd=ds[0],
                  env={**env, "CUDA_HOME": os.path.dirname(
                      os.path.dirname(NVCC))})   # in a copy without a venv
    try:
        runs = []
        for u, d in zip(who, ds):
            os.chmod(d, 0o755)
            assert not u or run(["chown", "-R", "65534", d]).returncode == 0
            runs.append(subprocess.Popen(u + [
                "make", "all", "check", "CHECKS=compile-test"], cwd=d,
                env={**env, "HOME": d},
                text=True, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL))
        for u, p, d in zip(who, runs, ds):
            err = p.communicate(timeout=300)[1]
            assert p.returncode == 0 and differ(d, PAGE[:1]) == [], (u, err)
            assert not no_tool.returncode or re.search(
                r"pip install\b.*nvidia-cuda-cuobjdump", err) and \
                "skipping compile-test" in err, err
    finally:
        for d in ds:
            shutil.rmtree(d, ignore_errors=True)


# ---- the program without a GPU: usage errors first, then no device: exit 3 --
NO_GPU = not os.path.exists("/dev/nvidia0") and (
    shutil.which("nvidia-smi") is None or
    run(["nvidia-smi", "-L"]).returncode != 0)
NO_DEVICE = ["pipelined_gemm: no CUDA device is available",
             "compute capability 8.0"]
RESULTS = ["matches the reference", "\nGPU:"]   # what a run prints


@pytest.mark.parametrize("args,rc,out,not_out,err,not_err", [
    (["--help"], 0, ["usage: ", "--sizes"], [], [], []),
    (["--sizes", "100"], 2, [], None, ["100"], ["device"]),
    (["--frobnicate"], 2, [], [], ["--frobnicate"], [])] + [
    pytest.param(a, 3, [], RESULTS, NO_DEVICE, [], marks=pytest.mark.skipif(
        not NO_GPU, reason="a GPU is here")) for a in (
            [], ["--check-only", "--sizes", "64"])],
    ids=["help", "bad-size", "unknown-option", "no-device", "check-only"])
def test_exit(request, args, rc, out, not_out, err, not_err):
    """Exit status of --bin, what stdout and stderr must (not) hold; not_out
    None: stdout empty; "device" in stderr: the GPU was looked at too early."""
    binary = os.path.join(REPO, request.config.getoption("--bin"))
    p = run([binary, *args], timeout=60, stdin=subprocess.DEVNULL)
    assert p.returncode == rc
    assert not_out is not None or p.stdout == ""
    for text in out + err:
        assert text in (p.stdout if text in out else p.stderr), text
    for text in not_err:
        assert text not in p.stderr.lower(), text
    for text in not_out or []:
        assert text not in "\n" + p.stdout, text


def test_litkit_installed_is_the_source():
    """make installed litkit/ into build/venv: the version of its
    pyproject.toml, every file of the package as in the source."""
    src = pathlib.Path(REPO, "litkit")
    version = re.search(r'^version = "([^"]+)"',
                        (src / "pyproject.toml").read_text(), re.M)
    assert version and litkit.__version__ == version.group(1)
    assert pathlib.Path(litkit.DIR).is_relative_to(
        pathlib.Path(REPO, "build", "venv")), litkit.DIR
    for p in (src / "litkit").rglob("*"):
        if p.is_file() and "__pycache__" not in p.parts:
            got = pathlib.Path(litkit.DIR, p.relative_to(src / "litkit"))
            assert got.read_bytes() == p.read_bytes(), got
            assert os.access(got, os.X_OK) == os.access(p, os.X_OK), got


def test_example_module_copies_nothing():
    """examples/day00 uses litkit and copies nothing: none of its files
    shares three consecutive lines (of more than a few characters) with a
    file outside examples/."""
    def windows(text):
        lines = [l.strip() for l in text.splitlines() if len(l.strip()) > 12]
        return {tuple(lines[i:i + 3]) for i in range(len(lines) - 2)}
    mine = [p for p in pathlib.Path(REPO, "examples", "day00").rglob("*")
            if p.is_file() and not {"build", "site", "__pycache__"} & set(
                p.relative_to(REPO).parts)]
    assert len(mine) >= 4, mine
    seen = set()
    for rel in sources():
        if not rel.startswith("examples/"):
            try:
                seen |= windows(pathlib.Path(REPO, rel).read_text())
            except UnicodeDecodeError:
                continue
    copied = {str(f.relative_to(REPO)): sorted(windows(f.read_text()) & seen)
              for f in mine}
    assert {f: w for f, w in copied.items() if w} == {}
