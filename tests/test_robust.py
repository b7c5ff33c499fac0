"""Robust builds in scratch copies: a missing tool is named with its package
and install command; SIGINT at random moments (ROBUST_SEED, ROBUST_TRIALS),
a full disk (ulimit -f) and a read-only build/ leave products as a clean
build's (old ones older than day74.nw), then make restores all; the page
has no build date."""

import os
import pathlib
import random
import re
import shutil
import signal
import subprocess
import time

import pytest

from conftest import FIXTURES, MAKE_ENV, checkout, make, run

TMP_RE = re.compile(r"(\.tmp(\.|$)|^\.tangle\.|^tangle-err\.|^\.tmp-)")
FAR_TZ = "UTC-14"   # tomorrow for most of the day: a build date would show
EDIT_MARK = "Robust-build test edit: this paragraph moves every line below.\n"
SEED = int(os.environ.get("ROBUST_SEED", time.time()))
# Each run draws new moments (the seed is in any failure's message);
# ROBUST_TRIALS=20 tries more at once.
TRIALS = int(os.environ.get("ROBUST_TRIALS", 4))


class Copies:
    """A pristine copy of the sources (with the set-up's venv) in root, and
    scratch copies of it by label."""

    def __init__(self, root):
        self.root = root
        self.pristine = checkout(os.path.join(root, "pristine"),
                                 seed=["build/.deps-ok"])   # its venv

    def copy(self, label):
        """The scratch copy of the sources called label (made once)."""
        d = os.path.join(self.root, label)
        if not os.path.isdir(d):
            shutil.copytree(self.pristine, d, symlinks=True)
        return d


class Refs(Copies):
    """Copies, and the products of clean builds: old, and of the edit, new."""

    def __init__(self, root):
        super().__init__(root)
        self.refdir = self.copy("reference")
        t0 = time.monotonic()
        p = make(self.refdir, "tangle", "site", env={"TZ": FAR_TZ})
        self.t_full = time.monotonic() - t0
        assert p.returncode == 0, f"reference build failed: {p.stderr}"
        self.old = snapshot(self.refdir)
        d = self.copy("reference-edited")
        toggle_edit(d)
        assert make(d, "tangle", "site").returncode == 0
        self.new = snapshot(d)
        toggle_edit(d)
        t0 = time.monotonic()
        make(d, "tangle", "site")
        self.t_rewrite = time.monotonic() - t0
        shutil.rmtree(d)

    def refs_for(self, edited):
        """(reference for the source as it is now, the other one)."""
        return (self.new, self.old) if edited else (self.old, self.new)


@pytest.fixture(scope="module")
def copies(tmp_path_factory):
    """Scratch copies of the sources, no build (the missing-tool cases)."""
    return Copies(str(tmp_path_factory.mktemp("copies")))


@pytest.fixture(scope="module")
def refs(tmp_path_factory):
    """The module's reference builds; frozen files unfrozen at the end."""
    root = str(tmp_path_factory.mktemp("robust"))
    yield Refs(root)
    freeze(root, False)


def site_products(d):
    """The pages and temporary files in d/site, as paths relative to d."""
    site = os.path.join(d, "site")   # made by the weave
    return [os.path.join("site", f) for f in (
        os.listdir(site) if os.path.isdir(site) else ()) if
        f.endswith(".html") or TMP_RE.search(f)]


def snapshot(d):
    """{rel: bytes} of make's products in d (build/, site/), no temporaries."""
    rels = [str(p.relative_to(d)) for top in ("build", "site/downloads")
            for p in pathlib.Path(d, top).rglob("*") if p.is_file() and
            p.parts[len(pathlib.Path(d).parts) + 1:][:1] not in (
                ("venv",), ("venv.lock",))]
    return {rel: pathlib.Path(d, rel).read_bytes() for rel in
            rels + site_products(d) if not TMP_RE.search(
                os.path.basename(rel))}


def clean(d):
    """Remove every product from d but the set-up (build/venv, a link, and
    its stamp build/.deps-ok)."""
    freeze(os.path.join(d, "build"), False)
    for sub in ["site/downloads"] + [os.path.join("build", x) for x in (
            os.listdir(os.path.join(d, "build")) if os.path.isdir(
                os.path.join(d, "build")) else ()) if x not in (
                "venv", "venv.lock", ".deps-ok")]:
        path = os.path.join(d, sub)
        shutil.rmtree(path, ignore_errors=True) if os.path.isdir(path) and \
            not os.path.islink(path) else pathlib.Path(path).unlink(
                missing_ok=True)
    for rel in site_products(d):
        os.remove(os.path.join(d, rel))


def toggle_edit(d):
    """Insert (or remove) a prose paragraph after the front matter, which
    moves every #line; True when the source is now edited."""
    p = pathlib.Path(d, "day74.nw")
    lines = p.read_text(encoding="utf-8").splitlines(True)
    if EDIT_MARK in lines:
        i = lines.index(EDIT_MARK)
        del lines[i - 1:i + 1]
    else:
        ends = [i for i, l in enumerate(lines) if l.rstrip("\n") == "---"]
        at = ends[1] + 1 if len(ends) >= 2 and ends[0] == 0 else 0
        lines[at:at] = ["\n", EDIT_MARK]
    p.write_text("".join(lines), encoding="utf-8")
    return EDIT_MARK in lines


def aftermath(d, old, new=None):
    """Problems with d's products after a failed make (old: the reference
    of the tree before; new: the edited source's, if edited), then with
    what a plain `make tangle site` leaves: the reference (new if edited)."""
    problems, ref = [], old if new is None else new
    nw_mtime = os.stat(os.path.join(d, "day74.nw")).st_mtime_ns
    for rel, data in snapshot(d).items():
        if rel not in old and (new is None or rel not in new):
            problems.append(f"{rel}: not in the reference build")
        elif new is not None and new.get(rel) == data:
            continue
        elif data != old.get(rel):
            problems.append(f"{rel}: differs from the reference")
        elif (new is not None and rel in new and new[rel] != old[rel] and
              rel != "build/site/index.md" and os.stat(os.path.join(
                  d, rel)).st_mtime_ns >= nw_mtime):
            problems.append(f"{rel}: old content but newer than day74.nw "
                            "(make would keep it)")
    p = make(d, "tangle", "site")
    if p.returncode:
        problems.append(f"the following make failed: {p.stderr[-300:]}")
    got = snapshot(d)
    return problems + [
        f"{rel}: " + ("missing after the rebuild" if rel not in got else
                      "not in the reference" if rel not in ref else
                      "differs from the reference after the rebuild")
        for rel in sorted(set(ref) | set(got)) if got.get(rel) != ref.get(rel)]


def freeze(path, on=True):
    """chattr +i (on) or -i (off) path and all in it but links (such as a
    scratch copy's build/venv); True when it worked."""
    return bool(shutil.which("chattr")) and os.path.exists(path) and \
        run(["find", path, "!", "-type", "l", "-exec", "chattr",
             "+i" if on else "-i", "{}", "+"]).returncode == 0


# ---- missing tools ----------------------------------------------------------
with open(os.path.join(FIXTURES, "missing-tools.tsv")) as f:
    MISSING = [l.rstrip("\n").split("\t") for l in f if l[0] != "#"]
# cuobjdump is also looked for in $CUDA_HOME/bin and Python packages, and
# nvcc in /usr/local/cuda/bin, so a PATH without them cannot hide them.
BY_PATH = [c for i, c in enumerate(MISSING) if c[0] not in ("cuobjdump",
           "nvcc") and c[0] not in [m[0] for m in MISSING[:i]]]
INSTALL = {"apt": r"apt(-get)? install\b[^\n]*\b{}\b",
           "pip": r"pip install\b[^\n]*\b{}\b"}


def path_without(root, tool):
    """A PATH of one folder of links to everything on PATH but tool."""
    d = os.path.join(root, f"path-without-{tool}")
    if not os.path.isdir(d):
        os.makedirs(d)
        for folder in MAKE_ENV.get("PATH", "").split(os.pathsep):
            for f in os.listdir(folder) if os.path.isdir(folder) else ():
                src = os.path.join(folder, f)
                if f != tool and not os.path.lexists(os.path.join(d, f)) \
                        and os.path.isfile(src) and os.access(src, os.X_OK):
                    os.symlink(src, os.path.join(d, f))
    return d


def prepare(d, how):
    """Bring scratch copy d to the state a case starts from."""
    if how == "clean":
        return clean(d)
    assert make(d, "tangle").returncode == 0
    pathlib.Path(d, "site/index.html").unlink(missing_ok=True)
    shutil.rmtree(os.path.join(d, "build", "plots"), ignore_errors=True)
    if how == "cubin":
        # cuobjdump is never reached if the check works, so an empty cubin
        # newer than its sources stands in for nvcc's.
        cub = pathlib.Path(d, "build/checks/main/sm_80-s2.cubin")
        cub.parent.mkdir(parents=True, exist_ok=True)
        cub.write_bytes(b"")
        cub.with_suffix(".sass").unlink(missing_ok=True)
        assert make(d, "-q", "build/checks/main/sm_80-s2.cubin").returncode \
            == 0, "the stand-in cubin is not up to date for make"


@pytest.mark.parametrize("how,case", [("variable", c) for c in MISSING] +
                         [("PATH", c) for c in BY_PATH], ids=lambda x: x if
                         isinstance(x, str) else f"{x[0]}-{x[5][-9:]}")
def test_missing_tool(copies, how, case):
    """A missing tool fails its target, naming the tool, its package and
    the command that installs it; nothing it would make appears."""
    tool, var, pkg, kind, prep, targets, absent = case
    targets, pattern = targets.split(), INSTALL[kind]
    if how == "PATH" and not shutil.which(tool, path=MAKE_ENV.get("PATH")):
        pytest.skip(f"{tool} is not on PATH here")
    prepare(d := copies.copy("missing"), prep)
    if how == "variable":
        p = make(d, *targets, f"{var}=/nonexistent/{tool}")
    else:
        p = make(d, *targets, env={"PATH": path_without(copies.root, tool)})
    assert p.returncode != 0, "make succeeded"
    assert re.search(r"\b" + re.escape(tool) + r"\b", p.stderr)
    assert re.search(r"\b" + re.escape(pkg) + r"\b", p.stderr)
    assert re.search(pattern.format(re.escape(pkg)), p.stderr), \
        f"no install command for {pkg}: {p.stderr}"
    for a in absent.split():
        assert not os.path.exists(os.path.join(d, a)), f"{a} was written"


@pytest.mark.slow
def test_interrupts(refs):
    """SIGINT at a random moment never leaves a file make would keep, and
    the next make restores all; at least one trial really interrupts."""
    rng, d = random.Random(SEED), refs.copy("interrupt")
    assert make(d, "tangle", "site").returncode == 0
    edited, hit, problems = False, 0, []
    for i in range(TRIALS):
        if i % 2 == 0:
            clean(d)
            old, new, span = refs.refs_for(edited)[0], None, refs.t_full
        else:
            edited = toggle_edit(d)
            (new, old), span = refs.refs_for(edited), refs.t_rewrite
        # The first trial stops a clean build early, so one surely lands.
        delay = rng.uniform(0.02, max(0.1, span * 0.9)) if i else 0.5
        p = subprocess.Popen(["make", "tangle", "site"], cwd=d, env=MAKE_ENV,
                             stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL, start_new_session=True)
        time.sleep(delay)
        sent = p.poll() is None
        if sent:
            os.killpg(p.pid, signal.SIGINT)
        try:
            p.wait(timeout=120)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
            problems.append(f"trial {i + 1}: make did not stop within 120 s")
            continue
        hit += sent and p.returncode != 0
        problems += [f"trial {i + 1} (SIGINT at {delay:.2f} s, seed {SEED}): "
                     f"{x}" for x in aftermath(d, old, new)]
    assert problems == []
    assert hit, f"no trial interrupted a running make ({refs.t_full:.1f} s)"


@pytest.mark.slow
def test_full_disk(refs):
    """Under ulimit -f, make fails without a half-written file, from a clean
    tree and over a build, and the next make restores all."""
    size = {p: len(b) for p, b in refs.old.items()}
    tangles = sorted(v for p, v in size.items()
                     if re.fullmatch(r"build/[^/]+\.(cu|c|h)", p) and v > 512)
    page = max(v for p, v in size.items()
               if p.startswith("site/") and p.endswith(".html"))
    below = [v for p, v in size.items() if v < page]
    limits = [4, (tangles[0] + tangles[-1]) // 2 // 512,
              size["build/facts.json"] // 2 // 512,
              ((max(below) + page) // 2 if below else page // 2) // 512]
    d, problems = refs.copy("full-disk"), []

    def case(blocks, targets, old, new, what):
        p = make(d, *targets, timeout=300, pre=[
            "sh", "-c", f'ulimit -f {blocks} && exec "$@"', "sh"])
        found = (["make succeeded under the limit"] if p.returncode == 0
                 else []) + aftermath(d, old, new)
        problems.extend(f"{what} (ulimit -f {blocks}): {x}" for x in found)

    for blocks in limits:
        clean(d)
        case(blocks, ["tangle", "site"], refs.old, None, "clean")
    assert make(d, "tangle", "site").returncode == 0
    for blocks, targets in ((limits[1], ["tangle", "site"]),
                            (limits[3], ["site"])):
        new, old = refs.refs_for(toggle_edit(d))
        if targets == ["site"]:
            assert make(d, "tangle", "facts", "plots").returncode == 0
        case(blocks, targets, old, new, "rewrite after an edit")
    assert problems == []


@pytest.mark.slow
def test_read_only(refs):
    """With build/ read-only (empty, or built before an edit), make fails
    saying it cannot write there, half-writing nothing; make restores all."""
    d = refs.copy("read-only")
    probe = os.path.join(d, "build-probe")
    os.makedirs(probe)
    chattr = os.environ.get("ROBUST_RO_METHOD") != "bind" and freeze(probe)
    freeze(probe, False)
    ro = ["unshare", "-m" if os.geteuid() == 0 else "-rm", "sh", "-c",
          'mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" "$1" && '
          'shift && exec "$@"', "sh"]   # ro + [DIR, COMMAND...]
    bind = not chattr and shutil.which("unshare") and run(ro + [probe, "sh",
        "-c", '! touch "$1/x" 2>/dev/null', "sh", probe]).returncode == 0
    os.rmdir(probe)
    if not chattr and not bind:
        pytest.skip("neither chattr +i nor a read-only bind mount works here")
    problems = []

    def case(what, old, new=None):
        if not chattr:
            p = make(d, "tangle", "site", pre=ro + ["build"], timeout=300)
        else:
            assert freeze(os.path.join(d, "build"))
            try:
                p = make(d, "tangle", "site")
            finally:
                freeze(os.path.join(d, "build"), False)
        found = []
        if p.returncode == 0:
            found.append("make succeeded with build/ read-only")
        elif not re.search(r"\bbuild(/[^\s:'\"]*)?", p.stderr):
            found.append("the error does not name a path under build/")
        elif not [l for l in p.stderr.splitlines() if "build" in l and
                  re.search(r"Read-only|not permitted|Permission denied|"
                            r"cannot|failed", l)]:
            found.append("no line says build/ cannot be written")
        problems.extend(f"{what}: {x}" for x in found +
                        aftermath(d, old, new))

    clean(d)
    os.makedirs(os.path.join(d, "build"), exist_ok=True)
    case("empty build/", refs.old)
    assert make(d, "tangle", "site").returncode == 0
    new, old = refs.refs_for(toggle_edit(d))
    case("rewrite after an edit", old, new)
    assert problems == []


# ---- the page (parallel builds: test_tangle.test_clean_with_other_goals) ----
@pytest.mark.slow
def test_page_has_no_build_date(refs):
    """Every date or time on the pages is of the facts or the source."""
    page = "".join(b.decode("utf-8", "replace") for p, b in refs.old.items()
                   if p.startswith("site/") and p.endswith(".html"))
    allowed = refs.old.get("build/facts.json", b"").decode() + "".join(
        pathlib.Path(refs.refdir, rel).read_text(encoding="utf-8")
        for rel in ("day74.nw", "litkit/litkit/theme/template.html"))
    months = "Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec"
    pats = [r"\b\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2})?Z?)?",
            r"\b\d{4}/\d{2}/\d{2}\b", r"\b\d{1,2}:\d{2}:\d{2}\b",
            rf"\b(?:{months})[a-z]* \d{{1,2}},? \d{{4}}\b",
            rf"\b\d{{1,2}} (?:{months})[a-z]* \d{{4}}\b"]
    assert sorted({m.group(0) for pat in pats for m in re.finditer(pat, page)
                   if m.group(0) not in allowed}) == []
