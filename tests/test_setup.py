"""A new user's machine and habits (issue 18): the set-up runs before any
goal needs it; pip's settings cannot misdirect it; a source archive without
.git; make -n check and make check's report; the program finds its toolkit;
two makes at once; the user's init files and settings."""

import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile
import time

import pytest

import litkit

from conftest import FIXTURES, MAKE_ENV, REPO, checkout, make, run, sources

GOALS = [[], ["check"], ["sm80-check"], ["site"]]


def script(path, text):
    """Write an executable shell script at path."""
    pathlib.Path(path).parent.mkdir(parents=True, exist_ok=True)
    pathlib.Path(path).write_text("#!/bin/sh\n" + text)
    os.chmod(path, 0o755)


def as_nobody(d):
    """The command prefix that runs as a user without root (chowning d)."""
    if os.geteuid() != 0:
        return []
    assert run(["chown", "-R", "65534:65534", d]).returncode == 0
    os.chmod(d, 0o755)
    return ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]


@pytest.mark.parametrize("module,goal", [("", g) for g in GOALS] + [(
    "examples/day00", [])], ids=lambda g: " ".join(g) or "all" if isinstance(
        g, list) else g.split("/")[-1] or "day74")
def test_setup_first_without_root(tmp_path, module, goal):
    """A fresh clone, no Debian packages (dpkg-query finds none), no root:
    whatever the first goal, make stops at once with the one command an
    administrator runs; nothing was tangled; no stamp. The example module
    (no LIT_SETUP_DEPS) too."""
    top = checkout(tempfile.mkdtemp(prefix="day74-setup-"))
    d = os.path.join(top, module)
    script(f"{top}/.bin/dpkg-query", "exit 1\n")
    try:
        p = make(d, *goal, pre=as_nobody(top),
                 env={"PATH": f"{top}/.bin:{os.environ['PATH']}",
                      "HOME": top})
        made = [f for f in ("build/tangle.mk", "build/pipelined_gemm.cu",
                            "build/saxpy.c", "build/.deps-ok")
                if os.path.exists(f"{d}/{f}")]
    finally:
        shutil.rmtree(top, ignore_errors=True)
    assert p.returncode != 0, p.stdout[-500:]
    assert re.search(r"apt-get install -y --no-install-recommends.* noweb\b"
                     r".* pandoc\b", p.stderr), p.stderr
    assert "missing tool" not in p.stderr, p.stderr   # it stopped first
    assert "make stopped before" in p.stderr and made == [], made


def test_root_setup_in_a_users_checkout(tmp_path):
    """make setup as root where a user works: the Debian packages only;
    nothing in the checkout becomes root's (the user's make can write
    build/, which it makes)."""
    d = checkout(str(tmp_path / "c"))
    as_nobody(d) or pytest.skip("not root: make setup installs nothing")
    p = make(d, "setup")
    assert p.returncode == 0 and "left to" in p.stderr, p.stderr
    assert [f for f in pathlib.Path(d).rglob("*")
            if f.lstat().st_uid != 65534] == []


@pytest.mark.parametrize("module", ["", "examples/day00"])
def test_litkit_not_fetched(tmp_path, module):
    """litkit/ empty (a submodule cloned without --recurse-submodules):
    make says what is missing and the command that fetches it."""
    d = checkout(str(tmp_path), files=[f for f in sources()
                                       if not f.startswith("litkit/")])
    os.makedirs(f"{d}/litkit")
    p = make(os.path.join(d, module))
    assert p.returncode == 2 and re.search(
        r"\*\*\* litkit is missing from \S*litkit/; fetch it: git submodule "
        r"update --init", p.stderr), p.stderr


@pytest.mark.parametrize("goal,pip", [([], True), (["sm80-check"], True),
                                      (["check-all"], True), (["site"], False),
                                      (["tangle"], False)],
                         ids=["all", "sm80-check", "check-all", "site",
                              "tangle"])
def test_setup_before_the_goal(tmp_path, goal, pip):
    """Set-up runs before the first tangle, whatever the goal; goals that run
    cuobjdump (make, check, check-all, sm80-check) have it installed
    first."""
    d = checkout(str(tmp_path / "c"))
    log = tmp_path / "log"
    script(f"{d}/litkit/litkit/setup.sh",
           f'echo "setup $*" >> {log}; exit 1\n')
    real = pathlib.Path(d, "litkit/litkit/tangle.sh")
    real.rename(real.with_suffix(".real"))
    script(real, f'echo tangle >> {log}; exec "$0.real" "$@"\n')
    p = make(d, *goal)
    assert p.returncode != 0 and "set-up failed" in p.stderr, p.stderr
    assert [c for c in log.read_text().splitlines() if c != "setup --stale"
            ] == ["setup --if-root" + " --no-pip" * (not pip)]   # a query


# NVIDIA's packages in the real build/venv (where the toolkit lacks them).
NVIDIA = sorted(pathlib.Path(REPO, "build/venv").glob(
    "lib/python3*/site-packages/nvidia*"))


def venv_with(tmp_path, nvidia):
    """A copy whose toolkit lacks cuobjdump, with a copy of the real
    build/venv (litkit installed), NVIDIA's packages in it or not."""
    d = checkout(str(tmp_path / "c"))
    script(f"{d}/litkit/litkit/find-tool.sh", "echo \"$1\"; exit 1\n")
    shutil.copytree(os.path.join(REPO, "build/venv"), f"{d}/build/venv",
                    symlinks=True, ignore=None if nvidia else
                    shutil.ignore_patterns("nvidia*"))
    return d


def test_pip_settings_cannot_misdirect_setup(tmp_path):
    """PIP_USER=1, PIP_TARGET, PIP_REQUIRE_VIRTUALENV=0 (pip.conf's too)
    cannot send the cuobjdump install elsewhere: setup succeeds and stamps
    (a copy of the real venv; its packages are there, so no registry is
    asked)."""
    if not NVIDIA:
        pytest.skip("no NVIDIA packages in build/venv: the toolkit has "
                    "cuobjdump")
    d = venv_with(tmp_path, True)
    pathlib.Path(tmp_path, "pip.conf").write_text("[install]\nuser = true\n")
    p = make(d, "setup", env={
        "PIP_USER": "1", "PIP_TARGET": str(tmp_path / "t"),
        "PIP_CONFIG_FILE": str(tmp_path / "pip.conf"), "PIP_NO_INDEX": "1"})
    assert p.returncode == 0 and "could not install" not in p.stderr, \
        p.stderr
    assert os.path.exists(f"{d}/build/.deps-ok")
    assert not os.path.exists(tmp_path / "t")


def test_litkit_of_other_bytes_reinstalled(tmp_path):
    """A litkit whose files differ from the installed one's but are older
    (a release archive, an old commit): make installs it again. Caches
    (a test run's .pytest_cache, __pycache__) are no difference."""
    d = venv_with(tmp_path, False)
    for f in ("pyproject.toml", "litkit/__init__.py"):
        f = pathlib.Path(d, "litkit", f)
        f.write_text(re.sub(r'(version__? = )"[^"]+"', r'\1"0.0.1"',
                            f.read_text()))
    for f in pathlib.Path(d, "litkit").rglob("*"):
        os.utime(f, (1e9, 1e9))
    assert make(d, "tangle").returncode == 0
    assert run([f"{d}/build/venv/bin/python", "-c", "import litkit; print("
                "litkit.__version__)"]).stdout == "0.0.1\n"
    for c in ("tests/.pytest_cache/v", "litkit/__pycache__/x.pyc"):
        pathlib.Path(d, "litkit", c).parent.mkdir(parents=True)
        pathlib.Path(d, "litkit", c).write_text("cache")
    assert run(["litkit/litkit/setup.sh", "--stale"], cwd=d).returncode == 1


@pytest.mark.slow
def test_no_stamp_after_a_failed_install(tmp_path):
    """A failed pip install: make goes on but writes no stamp, so the next
    make tries again; make setup fails (exit 2)."""
    d = venv_with(tmp_path, False)
    for _ in range(2):
        p = make(d, "check", "CHECKS=stale-evidence",
                 env={"PIP_NO_INDEX": "1"})
        assert p.returncode == 0 and "could not install" in p.stderr, \
            p.stderr
        assert not os.path.exists(f"{d}/build/.deps-ok")
    assert make(d, "setup", env={"PIP_NO_INDEX": "1"}).returncode == 2
    assert not os.path.exists(f"{d}/build/.deps-ok")


# The woven pages (the Makefile's PAGES, as NAME.html in site/).
PAGES = ("index.html", "lab.html", "program.html", "record.html")


def built():
    """The real build's products (its venv, test logs and scratch aside:
    exercise-check's folder and any temporary, which other groups of make
    check write while this one copies)."""
    rels = [p.relative_to(REPO) for top in ("build", "site") for p in
            pathlib.Path(REPO, top).rglob("*") if p.is_file()]
    # relative parts only: the checkout's own path may hold "check"
    return [str(r) for r in rels if ".tmp" not in r.name and (
        r.parts[0] == "build" and not {"venv", "check", "tests", "page",
                                       "exercise-check"} & set(r.parts)
        or r.parts[0] == "site" and (r.name in PAGES or
                                     "downloads" in r.parts))]


def seeded(tmp_path):
    """A copy with the real build's stamp and products (nothing to redo)."""
    return checkout(str(tmp_path / "c"), seed=built())


@pytest.mark.slow
def test_sources_without_git(tmp_path):
    """A source archive (git archive | tar -x, no .git): the tests' file
    list is the checkout's, and a test that copies it runs there."""
    if not shutil.which("git") or run(["git", "rev-parse"]).returncode:
        pytest.skip("not a git checkout: this run is the archive case")
    d = tmp_path / "archive"
    d.mkdir()
    tracked = sources()
    checkout(str(d), files=tracked, seed=built())   # after its make
    assert os.path.isfile(d / "site/index.html")   # made, not a source
    for junk in ("build/x.o", "site/downloads/a.c",
                 "tools/__pycache__/x.pyc", "a.tmp"):
        pathlib.Path(d, junk).parent.mkdir(parents=True, exist_ok=True)
        pathlib.Path(d, junk).write_text("generated\n")
    assert sorted(sources(str(d))) == sorted(tracked)
    p = run([sys.executable, "-B", "-m", "pytest", "-q", "-p",
             "no:cacheprovider", "tests/test_tangle.py", "tests/test_setup.py",
             "-k", "line_ends and crlf or before_the_goal and tangle"],
            cwd=str(d))
    assert p.returncode == 0 and "2 passed" in p.stdout, p.stdout[-2000:]


def test_dry_run_check_reports_no_pass(tmp_path):
    """make -n check runs no test and says nothing passed."""
    d = seeded(tmp_path)
    p = make(d, "-n", "check")
    assert "passed" not in p.stdout + p.stderr, p.stdout[-1000:]
    assert not os.path.exists(f"{d}/build/check"), "a group ran"


def test_check_reports_each_group(tmp_path):
    """make check: one line per group (name, result, seconds), no compiler
    command lines; a failure's details follow, and make check fails."""
    d = seeded(tmp_path)
    line = r"^make check: {} +{} +\d+ s(  \(\d+ skipped: see \S+\))?$"
    p = make(d, "check", "CHECKS=unit-test stale-evidence")
    assert p.returncode == 0, p.stdout + p.stderr
    for g in ("unit-test", "stale-evidence"):
        assert re.search(line.format(g, "passed"), p.stdout, re.M), p.stdout
    assert re.search(r"^make check: all 2 passed", p.stdout, re.M), p.stdout
    t = pathlib.Path(d, "tests/unit/test_harness.c")
    t.write_text(t.read_text() + "\nint broken_by_the_test = ;\n")
    nw = pathlib.Path(d, "day74.nw")   # a code edit: what is stale, first
    nw.write_text(nw.read_text().replace("<<pipelined_gemm.cu>>=\n",
                                         "<<pipelined_gemm.cu>>=\nenum {};\n"))
    p = make(d, "check", "CHECKS=unit-test stale-evidence",
             pre=("sh", "-c", 'exec "$@" 2>&1', "-"))
    assert p.returncode != 0
    assert -1 < p.stdout.find("WARNING: the GPU evidence is of other") < \
        p.stdout.find("make check: (what"), p.stdout
    assert re.search(line.format("unit-test", "FAILED"), p.stdout, re.M)
    assert re.search(line.format("stale-evidence", "passed"), p.stdout,
                     re.M)
    assert "broken_by_the_test" in p.stdout, p.stdout   # the details
    assert not re.search(r"^(cc|nvcc|\S*/nvcc) ", p.stdout, re.M), p.stdout


def test_check_leaves_out_the_slow_tests(tmp_path):
    """make check leaves out the tests marked slow, counting them on the
    group's line; make check-all runs them (here one that fails)."""
    d = seeded(tmp_path)
    pathlib.Path(d, "tests/test_tiers.py").write_text(
        "import pytest\n\n\ndef test_quick():\n    pass\n\n\n"
        "@pytest.mark.slow\ndef test_slow():\n    assert 0, 'ran'\n")
    with open(os.path.join(d, "Makefile"), "a") as f:
        f.write("tiers-test:\n\t@$(TEST) tests/test_tiers.py\n")
    p = make(d, "check", "CHECKS=tiers-test")
    assert p.returncode == 0 and re.search(
        r"^make check: tiers-test +passed +\d+ s  \(1 slow: make check-all\)$",
        p.stdout, re.M), p.stdout + p.stderr
    p = make(d, "check-all", "CHECKS=tiers-test")
    assert p.returncode != 0 and re.search(
        r"^make check-all: tiers-test +FAILED", p.stdout, re.M), p.stdout
    assert "AssertionError: ran" in p.stdout, p.stdout


def test_program_finds_its_toolkit(request):
    """Without the ld.so cache (a toolkit without its ld.so.conf entry), the
    program still starts: RUNPATH names the toolkit's lib64; no GPU: exit 3,
    never 127 (a library not found)."""
    binary = os.path.join(REPO, request.config.getoption("--bin"))
    p = run(["readelf", "-d", binary])
    assert re.search(r"\((RUN)?PATH\).*\[[^]]*/lib64\]", p.stdout), p.stdout
    loader = [f for f in ("/lib64/ld-linux-x86-64.so.2",
                          "/lib/ld-linux-aarch64.so.1") if os.path.exists(f)]
    if not loader:
        pytest.skip("no known dynamic loader to run without its cache")
    p = run([loader[0], "--inhibit-cache", binary, "--check-only", "--sizes",
             "64"], env={**os.environ, "LD_LIBRARY_PATH": ""}, timeout=60)
    assert p.returncode != 127, p.stderr
    if not os.path.exists("/dev/nvidia0"):
        assert p.returncode == 3, p.stderr


@pytest.mark.slow
def test_user_settings_do_not_reach(tmp_path):
    """A ~/.config/matplotlib/matplotlibrc (tests/fixtures: decimal comma,
    grid, other fonts), MPLBACKEND, a pytest.ini with addopts in a folder
    above, PYTEST_ADDOPTS, PYTHONPATH: the plots are the real build's, byte
    for byte, and a test group runs as it should."""
    home, parent = tmp_path / "home", tmp_path / "parent"
    (home / ".config" / "matplotlib").mkdir(parents=True)
    shutil.copy(os.path.join(FIXTURES, "matplotlibrc"),
                home / ".config" / "matplotlib")
    parent.mkdir()
    (parent / "pytest.ini").write_text("[pytest]\naddopts = --cov=course\n")
    shadow = tmp_path / "shadow" / "tools"   # a package named tools
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text("raise ImportError('the shadow')\n")
    d = checkout(str(parent / "c"), seed=built())
    shutil.rmtree(f"{d}/build/plots")
    p = make(d, "plots", "facts-test", env={
        "HOME": str(home), "PYTEST_ADDOPTS": "--cov=course -x",
        "PYTHONPATH": str(shadow.parent), "MPLBACKEND": "pdf"})
    assert p.returncode == 0, p.stdout[-1500:] + p.stderr[-1500:]
    assert "inifile" not in p.stdout and " passed" in p.stdout, p.stdout
    for f in pathlib.Path(REPO, "build/plots").glob("*.svg"):
        assert pathlib.Path(d, "build/plots", f.name).read_bytes() == \
            f.read_bytes(), f.name


def pandoc3():
    """A pandoc 3 binary: $PANDOC3, or pypandoc-binary's in build/venv."""
    found = [os.environ.get("PANDOC3", "")] + sorted(map(str, pathlib.Path(
        REPO, "build/venv").glob("lib/python3*/site-packages/pypandoc/files/"
                                 "pandoc")))
    for p in filter(None, found):
        v = run([p, "--version"])
        if v.returncode == 0 and re.match(r"pandoc\S* 3\.", v.stdout):
            return p
    return None


PAGE_PARTS = ['class="plot-wide"', 'class="plot-narrow"', "data-plot=",
              'class="plot-numbers"', "figure-scroll", "aria-describedby=",
              "<figure"]


def test_pandoc3_figures(tmp_path):
    """pandoc 3 makes an image alone in its paragraph a Figure: the pages'
    plots (wide and narrow, their numbers' links) come out as with pandoc 2
    (the lesson's diagram is text in a div, no image), and no bare
    <figure><img> is left; the weave tests' demo shows what it shows with
    pandoc 2 (its diagram an <img>, its attributes in any order)."""
    p3 = pandoc3()
    if not p3:
        pytest.skip("no pandoc 3 here: build/venv/bin/python -m pip install "
                    "pypandoc-binary (or PANDOC3=/path/to/pandoc) gives one")
    fixtures = pathlib.Path(REPO, "litkit", "tests", "fixtures", "weave")
    p = run([os.path.join(litkit.DIR, "weave.sh"), fixtures / "page-demo.nw",
             fixtures / "facts-good.json", tmp_path / "demo" / "demo.html"],
            env={**os.environ, "PANDOC": p3, "SITE_EXTRA_RESOURCES": str(
                fixtures / "plots")})
    demo = "".join(f.read_text() for f in (tmp_path / "demo").glob("*.html"))
    shows = json.loads((fixtures / "page-demo.json").read_text())["shows"]
    assert p.returncode == 0 and [s for s in shows
                                  if not re.search(s, demo)] == [], p.stderr
    p = run([os.path.join(litkit.DIR, "weave.sh"), "day74.nw",
             "build/facts.json", str(tmp_path / "index.html")],
            env={**os.environ, "PANDOC": p3, "WEAVE_MD": str(tmp_path / "md"),
                 "SITE_EXTRA_RESOURCES": "build/plots"})
    assert p.returncode == 0, p.stderr
    figures = 0
    for name in ("index.html", "lab.html", "program.html"):
        page, real = (pathlib.Path(d, name).read_text() for d in (
            tmp_path, pathlib.Path(REPO, "site")))
        assert [page.count(x) for x in PAGE_PARTS] == [
            real.count(x) for x in PAGE_PARTS], name
        assert not re.search(r"<figure>\s*<img", page), name
        figures += page.count("<figure")
    assert figures >= 3   # the three plots, on whichever page


@pytest.mark.slow
def test_two_makes_at_once(tmp_path, delay=0.3):
    """A build on save beside a terminal's make: the second starts delay s
    after the first, from clean tangles and page; both succeed, the page is
    there and is the real build's, and no temporary is left."""
    d = seeded(tmp_path)
    for rel in ("site/index.html", "site/downloads", "build/site",
                "build/facts.json", "build/tangle.mk",
                "build/clean", "build/source.sha256", "build/source.tokens"):
        path = pathlib.Path(d, rel)
        shutil.rmtree(path) if path.is_dir() else path.unlink()
    runs = []
    for _ in range(2):
        runs.append(subprocess.Popen(
            ["make", "--no-print-directory", "tangle", "site"], cwd=d,
            env=MAKE_ENV, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            text=True))
        time.sleep(delay)
    outs = [p.communicate(timeout=300)[0] for p in runs]
    assert [p.returncode for p in runs] == [0, 0], outs
    for rel in ("site/index.html", "build/facts.json", "build/source.sha256"):
        assert pathlib.Path(d, rel).read_bytes() == pathlib.Path(
            REPO, rel).read_bytes(), rel
    left = [str(p) for top in ("build", "site") for p in pathlib.Path(
        d, top).rglob("*") if re.search(r"\.tmp\b|^\.tmp-|^\.tangle\.",
                                        p.name)]
    assert left == []


@pytest.mark.parametrize("edit,stale", [
    ("// A comment line added by the test: layout only.\n", False),
    ("static const int day74_test_token = 1;\n", True)],
    ids=["comment", "token"])
def test_layout_edit_keeps_the_numbers(tmp_path, edit, stale):
    """A comment line added to a kernel chunk leaves every number of the
    committed evidence current (no make step, no record); a new token stales
    them."""
    d = seeded(tmp_path)
    nw = pathlib.Path(d, "day74.nw")
    text = nw.read_text(encoding="utf-8")
    at = text.index("__global__ void __launch_bounds__(kThreads)")
    nw.write_text(text[:at] + edit + text[at:], encoding="utf-8")
    p = make(d, "facts")
    assert p.returncode == 0, p.stderr
    assert pathlib.Path(d, "build/source.sha256").read_bytes() != \
        pathlib.Path(REPO, "build/source.sha256").read_bytes()
    n, real = (sum(f["stale"] for f in json.loads(pathlib.Path(
        folder, "build/facts.json").read_text())["facts"].values())
        for folder in (d, REPO))   # (the sources now may be unmeasured)
    if stale and real == n:
        pytest.skip("every number is stale already: no evidence of these "
                    "sources' tokens")
    assert (n > real) is stale and (stale or n == real), (n, real)


def test_help_lists_every_documented_target():
    """make help: a line "  make NAME  what it does" for each target the
    Makefile, lit.mk or cuda.mk documents with ##, the check groups
    included (Day 74 uses all of litkit's but test and measure: it has no
    TESTS, no EVIDENCE_CMD)."""
    text = "".join(pathlib.Path(d, f).read_text(encoding="utf-8") for d, f in
                   ((litkit.DIR, "lit.mk"), (litkit.DIR, "cuda.mk"),
                    (REPO, "Makefile")))
    documented = {a or b for a, b in re.findall(
        r"^([a-z0-9-]+):.* ## |^## ([a-z0-9-]+): ", text, re.M)}
    p = make(REPO, "help")
    assert p.returncode == 0, p.stderr
    listed = re.findall(r"^  make ([a-z0-9-]+) +\S", p.stdout, re.M)
    assert sorted(listed) == sorted(documented - {"test", "measure"}), \
        p.stdout
    assert {"check", "check-all", "exercise-check-solution"} <= set(listed)


def test_help_after_a_litkit_change_reads_its_source(tmp_path):
    """After a pull that changed litkit, make help and make -n (which install
    nothing) read litkit's source, not the older copy in build/venv."""
    d = seeded(tmp_path)
    lit = pathlib.Path(d, "litkit", "litkit", "lit.mk")
    lit.write_text(lit.read_text(encoding="utf-8") + "\nnew-goal: ## added "
                   "by the test\n\t@echo new-goal ran\n", encoding="utf-8")
    p = make(d, "help")
    assert re.search(r"^  make new-goal +added by the test$", p.stdout,
                     re.M), p.stdout
    assert make(d, "-n", "new-goal").stdout == "echo new-goal ran\n"
    installed = pathlib.Path(litkit.DIR, "lit.mk").read_text(encoding="utf-8")
    assert "new-goal" not in installed, "make help installed litkit"
