"""litkit's check_format (make format-check: clean tangles but the
student's): over 80 columns or clang-format's changes fail, #pragmas aside."""

import json
import os
import pathlib
import re
import sys

import pytest

import litkit

from conftest import FIXTURES, run

CHECK = [sys.executable, "-m", "litkit.check_format"]
GOOD = pathlib.Path(FIXTURES, "format", "good.cu").read_text()


def check(tmp_path, old="", new=""):
    """(exit, output) of check_format on GOOD, first `old` made `new`."""
    (tmp_path / "x.cu").write_text(GOOD.replace(old, new, 1))
    p = run([*CHECK, str(tmp_path / "x.cu")])
    return p.returncode, p.stdout + p.stderr


def test_the_style_passes_pragmas_indented_or_not(tmp_path):
    """A #pragma passes indented or not; clang-format 14 reads the style."""
    assert check(tmp_path)[0] == 0, check(tmp_path)[1]
    assert check(tmp_path, "        #pragma", "#pragma")[0] == 0
    p = run(["clang-format-14", "--style=file:" + os.path.join(
        litkit.DIR, "clang-format"), "--dump-config"])
    assert p.returncode == 0 and "ColumnLimit:     80" in p.stdout


@pytest.mark.parametrize("old,new,said", json.loads(pathlib.Path(
    FIXTURES, "format", "violations.json").read_text()))
def test_a_violation_fails(tmp_path, old, new, said):
    """Over 80 columns (tab stops of 8) or an indented #define fails, named."""
    rc, out = check(tmp_path, old, new)
    assert rc == 1 and re.search(said, out), out


def test_usage_errors(tmp_path):
    """A missing file or style file is exit 2."""
    assert run([*CHECK, str(tmp_path / "none.c")]).returncode == 2
    (tmp_path / "a.c").write_text("int x;\n")
    assert run([*CHECK, "--style", str(tmp_path / "none"),
                str(tmp_path / "a.c")]).returncode == 2
