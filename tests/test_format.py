"""Day 74's format check: make format-check covers every clean tangle but
the student's (litkit's check_format itself: litkit/tests)."""

import re

from conftest import REPO, make
from tools import manifest


def test_make_format_check_covers_every_tangle():
    """The clean tangles of the program and of every kernel file of the
    manifest, not the student's."""
    p = make(REPO, "-n", "format-check")
    files = set(re.findall(r"build/clean/\S+", p.stdout.split(
        "check_format")[-1]))
    assert p.returncode == 0 and len(files) >= 14, p.stdout + p.stderr
    assert {"build/clean/harness.c"} | {
        f"build/clean/{k.root}.cu" for k in manifest.load().kernels} <= files
    assert "build/clean/exercises/student.cu" not in files
