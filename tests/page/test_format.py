"""tools/format/check-format and the tangled sources (issue 12).

The check fails on a tangled line over 80 columns and on any difference
from clang-format under the repository's .clang-format.  The tests of the
check itself run on small files written here; the test of the real tangled
sources (build/clean, from make tangle) is expected to fail until the lead
has reflowed and reformatted day74.nw's chunks.

Run:  /usr/bin/python3 -m pytest tests/page/test_format.py
"""

import glob
import os
import shutil
import subprocess

import pytest

from conftest import ROOT

CHECK = os.path.join(ROOT, "tools", "format", "check-format")
STYLE = os.path.join(ROOT, ".clang-format")

pytestmark = pytest.mark.skipif(
    not (shutil.which("clang-format-14") or shutil.which("clang-format")),
    reason="clang-format missing: apt-get install clang-format-14")

GOOD_C = """\
#include <stddef.h>

static int clamp(int v, int lo, int hi)
{
    if (v < lo)
        return lo;
    return v > hi ? hi : v;
}

int day74_sum(const int *xs, size_t n)
{
    int s = 0;
    for (size_t i = 0; i < n; ++i) {
        s += clamp(xs[i], -100, 100);
    }
    return s;
}
"""

GOOD_CU = """\
constexpr int kThreads = 256;

__global__ void __launch_bounds__(kThreads)
scaleAndShift(const float* __restrict__ a, const float* __restrict__ b,
              float* __restrict__ c, int n)
{
    const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
    if (i < n)
        c[i] = 2.0f * a[i] + b[i];
}

extern "C" int day74_threads(void) { return kThreads; }
"""


def run(*files, summary=False):
    cmd = [CHECK] + (["--summary"] if summary else []) + list(files)
    res = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    return res.returncode, res.stdout.decode("utf-8") + res.stderr.decode("utf-8")


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


def test_style_file_is_clang_format_14_clean():
    """clang-format accepts the .clang-format (no unknown keys)."""
    res = subprocess.run([shutil.which("clang-format-14") or "clang-format",
                          "--style=file:" + STYLE, "--dump-config"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert res.returncode == 0, res.stderr.decode()
    cfg = res.stdout.decode()
    for want in ("IndentWidth:     4", "ColumnLimit:     80", "UseTab:          Never"):
        assert want in cfg, want


def test_check_passes_code_in_the_style(tmp_path):
    """Code written in the house style passes (C and CUDA)."""
    rc, out = run(write(tmp_path, "good.c", GOOD_C), write(tmp_path, "good.cu", GOOD_CU))
    assert rc == 0, out


def test_check_fails_on_a_line_over_80_columns(tmp_path):
    """A line of 81 columns fails and is named with its width."""
    long_line = "    /* " + "x" * 71 + " */\n"      # 81 columns
    text = GOOD_C.replace("    int s = 0;\n", "    int s = 0;\n" + long_line)
    path = write(tmp_path, "long.c", text)
    rc, out = run(path)
    assert rc == 1, out
    assert "%s:13: 81 columns (limit 80)" % path in out, out


def test_check_counts_tabs_to_stops_of_8(tmp_path):
    """A tab counts to the next multiple of 8, as an editor shows it."""
    text = GOOD_C.replace("    int s = 0;\n",
                          "    int s = 0;\n\t\t\t\t\t\t\t\t/* " + "y" * 15 + " */\n")
    rc, out = run(write(tmp_path, "tabs.c", text))
    assert rc == 1 and "85 columns" in out, out


def test_check_fails_on_a_clang_format_difference(tmp_path):
    """Code off the style fails, and the hunk shows what clang-format wants."""
    text = GOOD_C.replace("    return v > hi ? hi : v;", "  return v>hi ? hi : v;")
    rc, out = run(write(tmp_path, "style.c", text))
    assert rc == 1, out
    assert "-   return v>hi ? hi : v;" in out and "+     return v > hi ? hi : v;" in out, out
    assert "1 lines differ from clang-format (0 of them beside a line over 80, " \
           "1 style only)" in out, out


def test_check_usage_errors(tmp_path):
    """A missing file or style file is a usage error (2), not a pass."""
    rc, _ = run(str(tmp_path / "missing.c"))
    assert rc == 2
    res = subprocess.run([CHECK, "--style", str(tmp_path / "none"),
                          write(tmp_path, "a.c", GOOD_C)], stderr=subprocess.PIPE)
    assert res.returncode == 2


def _tangled():
    files = sorted(glob.glob(os.path.join(ROOT, "build", "clean", "*.c")) +
                   glob.glob(os.path.join(ROOT, "build", "clean", "*.h")) +
                   glob.glob(os.path.join(ROOT, "build", "clean", "*.cu")))
    if not files:
        pytest.skip("no tangled sources in build/clean: run make tangle")
    return files


@pytest.mark.xfail(reason="waits for the lead: day74.nw's chunks still have "
                          "lines over 80 columns and differ from clang-format",
                   strict=False)
def test_tangled_sources_follow_the_style():
    """Every tangled file is within 80 columns and clang-format clean."""
    rc, out = run(*_tangled(), summary=True)
    assert rc == 0, out
