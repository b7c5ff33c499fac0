"""Fixtures and helpers of every test that is not C. make check runs
`python3 -m pytest tests/...` from the module's root, so `tools` imports
as a package."""

import os
import shutil
import subprocess

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURES = os.path.join(REPO, "tests", "fixtures")
# A make of our own runs without the calling make's jobserver and flags,
# and without the tool paths it exports or `make check JOBS=2` passes
# down, as a user's make would.
MAKE_ENV = {k: v for k, v in os.environ.items() if k not in
            ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES",
             "GNUMAKEFLAGS", "NVCC", "PYTHON", "NOTANGLE", "NOROOTS",
             "NOWEAVE", "PANDOC", "GNUPLOT", "TIDY", "CHROMIUM",
             "CHROMEDRIVER", "JOBS")}


def sources(repo=REPO):
    """Relative paths of the working tree's source files: what git tracks
    plus untracked files it does not ignore, as they are now (never build/
    or the generated page)."""
    out = subprocess.run(["git", "-C", repo, "ls-files", "-z", "--cached",
                          "--others", "--exclude-standard"], check=True,
                         capture_output=True).stdout.decode()
    return sorted(n for n in out.split("\0") if n and
                  os.path.isfile(os.path.join(repo, n)))


def checkout(dest, src=REPO, files=None, seed=()):
    """Copy the sources of src (or the given relative files) into dest,
    then the build products named in seed (relative paths that exist in
    src), timestamps kept so an up-to-date build stays up to date.
    Returns dest."""
    seeded = [s for s in seed if os.path.isfile(os.path.join(src, s))]
    for rel in list(files or sources(src)) + seeded:
        os.makedirs(os.path.dirname(os.path.join(dest, rel)), exist_ok=True)
        shutil.copy2(os.path.join(src, rel), os.path.join(dest, rel))
    return dest


def run(cmd, **kw):
    """Run cmd (a list) in REPO unless cwd= says otherwise, capturing text;
    returns the CompletedProcess."""
    kw.setdefault("cwd", REPO)
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def make(folder, *args, env=None, **kw):
    """`make --no-print-directory ARGS` in folder with MAKE_ENV (plus env)."""
    return run(["make", "--no-print-directory", *args], cwd=folder,
               env={**MAKE_ENV, **(env or {})}, **kw)


def pytest_addoption(parser):
    """--bin: the program binary the no-GPU tests run."""
    parser.addoption("--bin", default="build/pipelined_gemm")


@pytest.fixture
def binary(request):
    """Absolute path of the program binary given by --bin."""
    return os.path.join(REPO, request.config.getoption("--bin"))
