"""The compile checks (tools/compile/checks.py): the real reports of the
default build, the checks on small PTX, SASS and ptxas fixtures that must
fail (tests/fixtures/compile), and a negative control through make."""

import json
import os
import re
import sys

import pytest

from conftest import FIXTURES, REPO, make, run
from tools.lit import litlib

CK = os.path.join(REPO, "build", "checks", "main")
FIX = os.path.join(FIXTURES, "compile")
TILE = 8192


def read(name, folder=FIX):
    """The text of a file in folder (the compile fixtures by default)."""
    return litlib.read_text(os.path.join(folder, name))


def check(tmp_path, kind, files, *args):
    """Write {name: text} into tmp_path, run one check on them; returns
    (CompletedProcess, JSON report or None)."""
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    out = tmp_path / "report.json"
    p = run([sys.executable, "-m", "tools.compile.checks", kind, "--dir",
             str(tmp_path), "--out", str(out), *args])
    return p, json.loads(out.read_text()) if out.exists() else None


def sm80(tmp_path, ptxs, sasses=()):
    """The sm80 check on {arch: PTX fixture} and {arch: SASS fixture}."""
    files = {f"{a}-s2.ptx": read(t) for a, t in ptxs.items()}
    files.update({f"{a}-s2.sass": read(t) for a, t in dict(sasses).items()})
    return check(tmp_path, "sm80", files, "--stages", "2", "--ptx", *ptxs,
                 "--sass", *dict(sasses))


def test_real_sm80_report():
    """No cp.async at sm_75; at sm_80/90 every one in matmulTilePiped, with
    the global-to-shared copy; LDGSTS in its SASS; fusion recorded."""
    r = json.loads(litlib.read_text(os.path.join(CK, "sm80-check-s2.json")))
    assert os.path.exists(os.path.join(CK, "sm_75-s2.ptx.cmd")), \
        "nvcc exited 0 at sm_75 and its command is kept"
    s75 = r["ptx"]["sm_75"]
    assert s75["total"] == 0 and s75["grep_lines"] == 0
    assert s75["piped"]["names"] and s75["sync"]["names"]
    for arch in ("sm_80", "sm_90"):
        a, s = r["ptx"][arch], r["sass"][arch]
        assert a["total"] == a["piped"]["total"] > 0
        assert a["sync"]["total"] == 0 and a["outside"]["total"] == 0
        assert a["piped"]["families"]["copy"] > 0
        assert s["piped"]["LDGSTS"] > 0
        assert isinstance(s["sync"]["LDGSTS"], int)
        assert s["sync"]["LDG"] + s["sync"]["LDGSTS"] > 0
    assert r["ok"] and not r["failures"]


def test_compiles_are_warning_free():
    """Every compile check ran with warnings as errors and printed none."""
    cmds = [f for f in os.listdir(CK) if f.endswith(".cmd") and
            not f.endswith(".sass.cmd")]
    assert len(cmds) >= 12
    for name in cmds:
        assert "-Werror all-warnings" in read(name, CK), name
    for name in os.listdir(CK):
        if name.endswith((".log", ".ptxas.txt")) and "refused" not in name:
            assert not re.search(r"warning|error", read(name, CK), re.I), name


GOOD = {"sm_80": "good-sm_80.ptx"}


@pytest.mark.parametrize("ptx,sass,rc,expect,want", [
    ({"sm_75": "good-sm_75.ptx", **GOOD}, {"sm_80": "good-sm_80.sass"}, 0,
     "", {("ptx", "sm_80", "piped", "forms"): {
         "cp.async.cg.shared.global": 1,
         "cp.async.mbarrier.arrive.shared.b64": 1}}),
    ({"sm_75": "bad-sm75.ptx"}, {}, 1, "sm_75 PTX: 2 cp.async", {}),
    ({"sm_80": "bad-in-sync.ptx"}, {}, 1, "matmulTileSync holds 2", {}),
    ({"sm_80": "bad-outside.ptx"}, {}, 1, "helper", {}),
    ({"sm_80": "bad-register-fill.ptx"}, {}, 1,
     "holds no global-to-shared cp.async", {}),
    (GOOD, {"sm_80": "bad-no-ldgsts.sass"}, 1,
     "matmulTilePiped holds no LDGSTS", {}),
    (GOOD, {"sm_80": "fused.sass"}, 0, "",
     {("sass", "sm_80", "sync", "LDGSTS"): 1,
      ("sass", "sm_80", "piped", "LDGSTS"): 1}),
    ({"sm_80": "not-ptx.ptx"}, {}, 2, "cannot read", {})],
    ids=["good", "sm75", "in-sync", "outside", "register-fill",
         "no-ldgsts", "fused", "unreadable"])
def test_sm80_fixtures(tmp_path, ptx, sass, rc, expect, want):
    """A good build passes, forms counted per kernel (comments and mbarrier
    instructions aside); cp.async below sm_80, in matmulTileSync or outside
    both kernels, a piped fill through registers (even with the pipeline's
    own arrive) and piped SASS without LDGSTS each fail, named; a sync
    kernel that ptxas fused is recorded, not failed; unreadable PTX is a
    usage error (2), never a pass."""
    p, r = sm80(tmp_path, ptx, sass)
    assert p.returncode == rc and expect in p.stderr, p.stderr
    for path, value in want.items():
        node = r
        for key in path:
            node = node[key]
        assert node == value, path


# A copy (its size inline or a named cuda::aligned_size_t), and the name.
CALL = re.compile(r"cuda::memcpy_async\(\s*([^,;]+?),\s*([^,;]+?),\s*"
                  r"[^,;()]*(?:\([^()]*\))?,\s*pipe\s*\);")
SIZE = re.compile(r"const auto \w+ = cuda::aligned_size_t<16>\([^()]*\);\n")


def test_negative_control_fails_through_make(tmp_path):
    """The program with the piped fill rewritten through registers (the
    pipeline calls kept): make sm80-check must fail, naming it."""
    src, n = CALL.subn(lambda m: f"*reinterpret_cast<float4*>({m[1]}) = "
                       f"*reinterpret_cast<const float4*>({m[2]});",
                       SIZE.sub("", read("pipelined_gemm.cu",
                                         os.path.join(REPO, "build"))))
    assert n > 0 and "memcpy_async" not in src, "the program changed shape"
    cu, d = tmp_path / "pipelined_gemm.cu", tmp_path / "checks"
    cu.write_text(src)
    p = make(REPO, "sm80-check", f"CHECK_CU={cu}",
             f"CHECK_DEPS={cu} build/clean/kernels.h", f"CHECK_DIR={d}")
    out = p.stdout + p.stderr
    assert p.returncode != 0, out[-2000:]
    assert (d / "sm_80-s2.ptx").exists() and "sm80-check: FAIL" in out, \
        "it compiled: the failure is the check's, not nvcc's"
    for arch in ("sm_80", "sm_90"):
        assert (f"FAIL {arch} PTX: matmulTilePiped holds no global-to-shared"
                " cp.async") in out and "through registers" in out
        assert f"FAIL {arch} SASS: matmulTilePiped holds no LDGSTS" in out
    assert not (d / "sm80-check-s2.json").exists(), "no passing report left"


def test_real_stage_limits():
    """2..5 reported, one constant step of tiles plus a little state, all
    within 48 KiB, the sync kernel constant, 6 refused by the ceiling."""
    r = json.loads(litlib.read_text(os.path.join(CK, "stage-limits.json")))
    for arch in ("sm_80", "sm_90"):
        rows = r["table"][arch]
        assert sorted(rows) == ["2", "3", "4", "5"]
        smem = [rows[n]["piped"]["smem_bytes"] for n in ("2", "3", "4", "5")]
        steps = [b - a for a, b in zip(smem, smem[1:])]
        assert all(s > 0 for s in steps)
        assert len(set(steps)) == 1 and 0 <= steps[0] - TILE <= 64
        assert all(b == int(n) * TILE + rows[n]["piped"]["state_bytes"] and
                   rows[n]["piped"]["state_bytes"] < TILE
                   for n, b in zip(("2", "3", "4", "5"), smem))
        assert all(b <= 49152 for b in smem)
        assert len({row["sync"]["smem_bytes"] for row in rows.values()}) == 1
    assert r["refused"]["exit"] != 0
    assert "48 KiB" in (r["refused"]["static_assert"] or "")
    assert r["step_bytes"] == TILE + r["state_step_bytes"]


GOOD_SMEM = {2: 16424, 3: 24632, 4: 32840, 5: 41048}
WRONG = ('exit=1\nerror: static assertion failed with "the exercise sweeps '
         '2, 3 and 4 stages"\n')


@pytest.mark.parametrize("smem,refused,rc,expect", [
    (GOOD_SMEM, None, 0, ""),
    ({**GOOD_SMEM, 5: 41060}, None, 1, "not constant"),
    ({2: 16424, 3: 16424 + 4096}, None, 1, "a step of 4096"),
    (GOOD_SMEM, "exit=0\n", 1, "exit 0"),
    (GOOD_SMEM, WRONG, 1, "not by the 48 KiB"),
    ({**GOOD_SMEM, 5: 49160}, None, 1, "exceed")],
    ids=["good", "uneven", "small-step", "compiles", "wrong-assert", "over"])
def test_stage_limits_fixtures(tmp_path, smem, refused, rc, expect):
    """A uniform step passes; an uneven or too small step, a deepest depth
    that compiles or is refused by the wrong assertion, and a depth over
    48 KiB each fail, named."""
    files = {f"sm_80-s{n}.ptxas.txt": read("ptxas-template.txt").replace(
        "{smem}", str(b)) for n, b in smem.items()}
    files["refused"] = refused or read("refused-ok.txt")
    p, _ = check(tmp_path, "stages", files, "--refused",
                 str(tmp_path / "refused"), "--arch", "sm_80", "--stages",
                 *map(str, smem), "--tile-bytes", str(TILE))
    assert p.returncode == rc and expect in p.stderr, p.stderr
