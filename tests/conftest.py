"""Helpers of the Python tests and their --bin option, run from the module's
root (so `tools` imports as a package)."""

import os
import shutil
import subprocess

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURES = os.path.join(REPO, "tests", "fixtures")
# Our makes run as a user's would: no calling make's flags, tool paths, JOBS.
MAKE_ENV = {k: v for k, v in os.environ.items() if k not in (
    "MAKEFLAGS MFLAGS MAKELEVEL MAKEOVERRIDES GNUMAKEFLAGS NVCC PYTHON "
    "NOTANGLE NOROOTS NOWEAVE PANDOC GNUPLOT TIDY CHROMIUM CHROMEDRIVER "
    "JOBS").split()}


def checkout(dest, src=REPO, files=None, seed=()):
    """Copy files (default: src's sources, what git tracks or does not ignore),
    then seed's products that exist, into dest, mtimes kept; returns dest."""
    if not files:
        out = subprocess.run(["git", "-C", src, "ls-files", "-z", "--cached",
                              "--others", "--exclude-standard"], check=True,
                             capture_output=True).stdout.decode()
        files = [n for n in out.split("\0") if n and
                 os.path.isfile(os.path.join(src, n))]
    seeded = [s for s in seed if os.path.isfile(os.path.join(src, s))]
    for rel in list(files) + seeded:
        os.makedirs(os.path.dirname(os.path.join(dest, rel)), exist_ok=True)
        shutil.copy2(os.path.join(src, rel), os.path.join(dest, rel))
    return dest


def run(cmd, **kw):
    """Run cmd (a list) in REPO unless cwd= says otherwise, capturing text."""
    kw.setdefault("cwd", REPO)
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def make(folder, *args, env=None, pre=(), **kw):
    """[PRE...] `make --no-print-directory ARGS` in folder, MAKE_ENV + env."""
    return run([*pre, "make", "--no-print-directory", *args], cwd=folder,
               env={**MAKE_ENV, **(env or {})}, **kw)


def pytest_addoption(parser):
    """--bin: the program binary the no-GPU tests run."""
    parser.addoption("--bin", default="build/pipelined_gemm")
