"""A module of declarations (the course's example, examples/day00 beside
litkit, copied with litkit into a scratch folder): renaming a root is one
edit of the Makefile, and every rule the root's name implies follows
(object, link, its header's dependency, download, help text)."""

import os
import re
import shutil

import pytest

from conftest import LITKIT, run

EXAMPLE = os.path.join(os.path.dirname(LITKIT), "examples", "day00")


@pytest.mark.skipif(not os.path.isdir(EXAMPLE), reason="no examples/day00")
def test_renaming_a_root_is_one_edit(tmp_path):
    """saxpy.c renamed axpy.c in the source and in PROGRAMS only: make
    builds build/axpy (with the source hash it includes), offers
    site/downloads/axpy.c, and make -q then agrees; make help names no
    root; a source hash change rebuilds the object."""
    shutil.copytree(LITKIT, tmp_path / "litkit", ignore=shutil.ignore_patterns(
        "build", "__pycache__", "*.egg-info"))
    d = tmp_path / "examples" / "day00"
    shutil.copytree(EXAMPLE, d, ignore=shutil.ignore_patterns("build",
                                                                "site"))
    nw, mk = d / "day00.nw", d / "Makefile"
    nw.write_text(nw.read_text().replace("<<saxpy.c>>=", "<<axpy.c>>="))
    mk.write_text(mk.read_text().replace("PROGRAMS   := saxpy.c",
                                         "PROGRAMS   := axpy.c"))
    env = {k: v for k, v in os.environ.items() if not k.startswith("MAKE")}
    p = run(["make", "all"], cwd=d, env=env)
    assert p.returncode == 0, p.stdout[-1500:] + p.stderr[-1500:]
    assert run([str(d / "build" / "axpy")], cwd=d).stdout.startswith(
        "saxpy: 1000 elements correct (source ")
    assert (d / "site" / "downloads" / "axpy.c").exists()
    assert run(["make", "-q", "all"], cwd=d, env=env).returncode == 0
    help_ = run(["make", "help"], cwd=d, env=env).stdout
    assert "make build " in help_ and not re.search(r"saxpy|axpy", help_)
    (d / "build" / "source_hash.h").touch()
    p = run(["make", "build"], cwd=d, env=env)
    assert "CC       build/sm_80/axpy.o" in p.stdout, p.stdout
