"""Helpers of the Python tests and their --bin option, run from the module's
root (so `tools` imports as a package)."""

import os
import shutil
import subprocess

import pathspec

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURES = os.path.join(REPO, "tests", "fixtures")
# Our makes run as a user's would: no calling make's flags, tool paths, JOBS.
MAKE_ENV = {k: v for k, v in os.environ.items() if k not in (
    "MAKEFLAGS MFLAGS MAKELEVEL MAKEOVERRIDES GNUMAKEFLAGS NVCC PYTHON "
    "NOTANGLE NOROOTS NOWEAVE PANDOC TIDY CHROMIUM CHROMEDRIVER "
    "JOBS").split()}


def is_git(src):
    """True when folder src is the top of a git checkout."""
    p = subprocess.run(["git", "-C", src, "rev-parse", "--show-toplevel"],
                       capture_output=True, text=True)
    return p.returncode == 0 and os.path.samefile(p.stdout.strip(), src)


def sources(src=REPO):
    """src's source files (relative paths): what git tracks or does not
    ignore; in a copy without .git (a downloaded archive), every file but
    what .gitignore names (read by pathspec, as git reads it)."""
    if is_git(src):
        out = subprocess.run(["git", "-C", src, "ls-files", "-z", "--cached",
                              "--others", "--exclude-standard"], check=True,
                             capture_output=True).stdout.decode()
        return [n for n in out.split("\0") if n and
                os.path.isfile(os.path.join(src, n))]
    with open(os.path.join(src, ".gitignore"), encoding="utf-8") as f:
        spec = pathspec.GitIgnoreSpec.from_lines(f)
    found = []
    for top, dirs, names in os.walk(src):
        dirs[:] = [x for x in dirs if x != ".git"]
        rel = os.path.relpath(top, src).replace(os.sep, "/")
        found += [n if rel == "." else f"{rel}/{n}" for n in names]
    return sorted(n for n in found if not spec.match_file(n) and
                  os.path.isfile(os.path.join(src, n)))


def checkout(dest, src=REPO, files=None, seed=()):
    """Copy files (default: sources(src)), then seed's products that exist,
    into dest, mtimes kept, the folders' too (a product gone by the time it
    is copied is left out); returns dest. A seed with the set-up's stamp
    build/.deps-ok gets src's build/venv (litkit installed) too, as a
    link."""
    if not files:
        files = sources(src)
    seeded = [s for s in seed if os.path.isfile(os.path.join(src, s))]
    for rel in list(files) + seeded:
        os.makedirs(os.path.dirname(os.path.join(dest, rel)), exist_ok=True)
        try:
            shutil.copy2(os.path.join(src, rel), os.path.join(dest, rel))
        except FileNotFoundError:
            # a product another group of make check renamed or removed
            # since it was listed: not a source, so the copy goes without
            if rel not in seeded:
                raise
    # The folders' mtimes too (make reads evidence/'s).
    for folder in {os.path.dirname(r) for r in list(files) + seeded} - {""}:
        shutil.copystat(os.path.join(src, folder), os.path.join(dest, folder))
    venv = os.path.join(src, "build", "venv")
    if "build/.deps-ok" in seeded and os.path.isdir(venv):
        os.symlink(venv, os.path.join(dest, "build", "venv"))
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
