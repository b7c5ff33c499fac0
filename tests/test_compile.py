"""The compile checks (tools/compile/checks.py): the real reports of the
default build, the checks on small PTX, SASS and ptxas fixtures that must
fail (tests/fixtures/compile), and a negative control through make."""

import json
import os
import pathlib
import re
import sys
from functools import reduce

import pytest

from conftest import FIXTURES, REPO, checkout, make, run
from tools import manifest
from tools.compile import checks
from litkit import litlib

CK = os.path.join(REPO, "build", "checks", "main")
FIX = os.path.join(FIXTURES, "compile")
TILE = 8192   # one stage of the fixtures' tiles (tile-sizes.h)


def read(name, folder=FIX):
    """The text of a file in folder (the compile fixtures by default)."""
    return litlib.read_text(os.path.join(folder, name))


def check(tmp_path, kind, files, *args):
    """Run one check on {name: text} written into tmp_path: (process, JSON
    report or None)."""
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    out = tmp_path / "report.json"
    p = run([sys.executable, "-m", "tools.compile.checks", kind, "--dir",
             str(tmp_path), "--out", str(out), *args])
    return p, json.loads(out.read_text()) if out.exists() else None


def cases(test):
    """The cases of test in cases.json ({test: {id: [arguments]}})."""
    return [pytest.param(*v, id=k) for k, v in json.loads(read(
        "cases.json"))[test].items()]


def test_real_sm80_report():
    """No cp.async at sm_75; from sm_80 all in piped kernels, with a copy
    and LDGSTS, none in matmulBlockedSync; one K-slice's FFMA, LDS.128."""
    r = json.loads(read("sm80-check-s2.json", CK))
    for u in ("", "blocked-"):
        assert os.path.exists(os.path.join(CK, f"{u}sm_75-s2.ptx.cmd")), \
            "nvcc exited 0 at sm_75 and its command is kept"
    s75 = r["ptx"]["sm_75"]
    assert s75["total"] == 0 and s75["grep_lines"] == 0
    assert all(s75[k]["names"] for k in checks.TILE + checks.BLOCKED)
    # (K, TM, TN): a thread's FFMA per K-slice K*TM*TN, LDS.128 K*(TM+TN)/4
    shape = {"": (16, 4, 4), "blocked_": (16, 8, 8)}
    for arch in ("sm_80", "sm_90"):
        a, s = r["ptx"][arch], r["sass"][arch]
        assert a["total"] == a["piped"]["total"] + a["blocked_piped"]["total"]
        assert a["sync"]["total"] == a["blocked_sync"]["total"] == 0
        assert a["outside"]["total"] == 0
        assert s["sync"]["LDG"] + s["sync"]["LDGSTS"] > 0
        assert s["blocked_sync"]["LDGSTS"] == 0 < s["blocked_sync"]["LDG"]
        for pair, (k, tm, tn) in shape.items():
            assert a[pair + "piped"]["families"]["copy"] > 0
            assert s[pair + "piped"]["LDGSTS"] > 0
            for role in (pair + "piped", pair + "sync"):
                assert s[role]["FFMA"] == k * tm * tn, (arch, role)
                assert s[role]["LDS128"] == k * (tm + tn) // 4, (arch, role)
    assert r["ok"] and not r["failures"] and r["blocked"]


def test_compiles_are_warning_free():
    """Every compile check ran with warnings as errors and printed none (the
    sm80 check's PTX and cubins at least; the stage limits' if made)."""
    cmds = [f for f in os.listdir(CK) if f.endswith(".cmd") and
            not f.endswith(".sass.cmd")]
    assert {f"{u}{a}-s2.{k}.cmd" for u in ("", "blocked-") for a, k in (
        ("sm_75", "ptx"), ("sm_80", "ptx"), ("sm_90", "ptx"),
        ("sm_80", "cubin"), ("sm_90", "cubin"))} <= set(cmds)
    for name in cmds:
        assert "-Werror all-warnings" in read(name, CK), name
    for name in os.listdir(CK):
        if name.endswith((".log", ".ptxas.txt")) and "refused" not in name:
            assert not re.search(r"warning|error", read(name, CK), re.I), name


@pytest.mark.parametrize("ptx,sass,rc,expect,want", cases("sm80"))
def test_sm80_fixtures(tmp_path, ptx, sass, rc, expect, want):
    """A good build passes, its forms counted per kernel; each fault fails,
    named; a fused sync kernel is recorded, not failed; unreadable PTX is a
    usage error (2), never a pass."""
    files = {f"{a}-s2.{ext}": read(f) for ext, fixtures in
             (("ptx", ptx), ("sass", sass)) for a, f in fixtures.items()}
    p, r = check(tmp_path, "sm80", files, "--stages", "2", "--ptx", *ptx,
                 "--sass", *sass)
    assert p.returncode == rc and expect in p.stderr, p.stderr
    for path, value in want.items():
        assert reduce(lambda n, k: n[k], path.split("/"), r) == value, path


# cuda::memcpy_async(dst, src, size, pipe) and __pipeline_memcpy_async(dst,
# src, size), each a 16-byte copy: rewritten as a copy through registers.
CALL = re.compile(r"(?:cuda::|__pipeline_)memcpy_async\(\s*([^,;]+?),\s*"
                  r"([^,;]+?),\s*([^;]+?)\);")


@pytest.mark.parametrize("which,kernel", [
    ("pipelined", "matmulTilePiped"), ("blocked", "matmulBlockedPiped")])
def test_negative_control_fails_through_make(tmp_path, which, kernel):
    """A piped fill rewritten through registers (pipeline calls kept) in a
    copy's tangled file: make sm80-check fails, naming that kernel and no
    other."""
    tangled = f"build/{which}_gemm.cu"
    src, n = CALL.subn(lambda m: f"*reinterpret_cast<float4*>({m[1]}) = "
                       f"*reinterpret_cast<const float4*>({m[2]});" + "".join(
                           f" (void)({x});" for x in m[3].split(",")), read(
                           tangled, REPO))
    assert n >= 2 and "memcpy_async" not in src, "the program changed shape"
    # The real tangles, and the other file's products as make check built
    # them (not compiled again); the edited file newer than all of them.
    other = "blocked-sm_*-s2.*" if which == "pipelined" else "sm_*-s2.*"
    seed = [str(p.relative_to(REPO)) for p in [
        *pathlib.Path(REPO, "build").glob("*.*"), *pathlib.Path(
            REPO, "build/clean").rglob("*.*"), *pathlib.Path(CK).glob(other)]
        if p.is_file()]
    d = pathlib.Path(checkout(str(tmp_path / "c"), seed=seed))
    (d / tangled).write_text(src)
    os.utime(d / "build/clean" / os.path.basename(tangled))
    p = make(d, "sm80-check")
    out, ck = p.stdout + p.stderr, d / "build/checks/main"
    assert p.returncode != 0, out[-2000:]
    assert (ck / "sm_80-s2.ptx").exists() and "sm80-check: FAIL" in out, \
        "it compiled: the failure is the check's, not nvcc's"
    for arch in ("sm_80", "sm_90"):
        assert (f"FAIL {arch} PTX: {kernel} holds no global-to-shared"
                " cp.async") in out and "through registers" in out
        assert f"FAIL {arch} SASS: {kernel} holds no LDGSTS" in out
    assert len(re.findall("FAIL", out)) == 4, out[-2000:]
    assert not (ck / "sm80-check-s2.json").exists(), "no passing report left"
    ptx = re.findall(r"^  PTX +build/checks/main/(\S+)$", p.stdout, re.M)
    assert ptx and all(x.startswith("blocked-") == (which == "blocked")
                       for x in ptx), ("only the edited file compiles "
                                       "again (after make sm80-check)", ptx)


@pytest.mark.slow
def test_every_kernel_file_builds():
    """make build-all: every kernel file of the manifest (pitfalls,
    experiments, the solution) compiles and links."""
    p = make(REPO, "build-all")
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-2000:]
    config = "build/sm_80-2stages"
    for k in manifest.load().kernels:
        assert os.access(os.path.join(REPO, config, k.root), os.X_OK), k.root


@pytest.mark.slow
def test_real_stage_limits():
    """The manifest's depths reported, one constant step of tiles (from the
    source's constants) plus a little state, all within 48 KiB, the sync
    kernel constant, the refused depth refused by the ceiling; the blocked
    pair's stage 16 x (128 + 128) floats, over 48 KiB from 4 (make builds
    the report here: make check leaves this test out); its compiles are
    warning-free."""
    p = make(REPO, os.path.join("build", "checks", "main", "stage-limits.json"))
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-2000:]
    r, m = json.loads(read("stage-limits.json", CK)), manifest.load().depths
    cmds = set(os.listdir(CK))
    assert [f"{u}{a}-s{n}.cubin.cmd" for a in ("sm_80", "sm_90") for u, ns in (
        ("", m.compile), ("blocked-", m.blocked), ("deep-", m.deep))
        for n in ns if f"{u}{a}-s{n}.cubin.cmd" not in cmds] == []
    test_compiles_are_warning_free()
    depths, blocked = ([str(n) for n in d] for d in (m.compile, m.blocked))
    tile = checks.stage_bytes(read("pipelined_gemm.cu", os.path.join(
        REPO, "build", "clean")), "kBlock")
    assert r["tile_bytes"] == tile == TILE and r["refused_stages"] == \
        m.refused
    bp = r["blocked"]
    assert bp["stage_bytes"] == 16384 and bp["over_limit_from"] == 4
    assert r["refused"]["exit"] != 0
    assert "48 KiB" in (r["refused"]["static_assert"] or "")
    assert r["step_bytes"] == TILE + r["state_step_bytes"]
    for arch in ("sm_80", "sm_90"):
        rows = r["table"][arch]
        assert sorted(rows) == depths
        smem = [rows[n]["piped"]["smem_bytes"] for n in depths]
        steps = [b - a for a, b in zip(smem, smem[1:])]
        assert all(s > 0 for s in steps)
        assert len(set(steps)) == 1 and 0 <= steps[0] - TILE <= 64
        assert all(b == int(n) * TILE + rows[n]["piped"]["state_bytes"] and
                   rows[n]["piped"]["state_bytes"] < TILE
                   for n, b in zip(depths, smem))
        assert all(b <= 49152 for b in smem)
        assert len({row["sync"]["smem_bytes"] for row in rows.values()}) == 1
        assert sorted(bp["table"][arch]) == blocked
        for n, row in bp["table"][arch].items():
            assert row["blocked_sync"]["smem_bytes"] == bp["stage_bytes"]
            assert row["blocked_piped"]["dynamic_bytes"] == int(n) * 16384
            assert row["blocked_piped"]["smem_bytes"] == 0
            assert row["blocked_piped"]["spill_bytes"] == 0
            assert row["blocked_sync"]["spill_bytes"] == 0


@pytest.mark.parametrize("smem,refused,rc,expect", cases("stages"))
def test_stage_limits_fixtures(tmp_path, smem, refused, rc, expect):
    """A uniform step passes; an uneven or small step, a deepest depth that
    compiles or fails another assertion, a depth over 48 KiB fail, named."""
    files = {f"sm_80-s{n}.ptxas.txt": read("ptxas-template.txt").replace(
        "{smem}", str(b)) for n, b in smem.items()}
    files["refused"] = read(refused)
    p, _ = check(tmp_path, "stages", files, "--refused",
                 str(tmp_path / "refused"), "--arch", "sm_80", "--stages",
                 *smem, "--tile-source", os.path.join(FIX, "tile-sizes.h"))
    assert p.returncode == rc and expect in p.stderr, p.stderr


BLOCKED_SRC = read("blocked-sizes.h") + checks.OPT_IN


@pytest.mark.parametrize("depths,sync_smem,spill,cut,expect",
                         cases("blocked-stages"))
def test_blocked_stage_fixtures(depths, sync_smem, spill, cut, expect):
    """A stage is 4 K (M + N) bytes, matmulBlockedSync's; N dynamic; a spill,
    another sync size, no opt-in (cut Max) or no depth past 48 KiB fail."""
    fails, k = [], {"registers": 100, "spill_bytes": spill}
    r = checks.analyse_blocked({"sm_80": {n: {
        "_Z18matmulBlockedPipedPKfS0_Pfi": {**k, "smem_bytes": 0},
        "_Z17matmulBlockedSyncPKfS0_Pfi": {**k, "smem_bytes": sync_smem}}
        for n in depths}}, BLOCKED_SRC.replace(cut, ""), fails.append)
    assert all(expect in f for f in fails) and bool(fails) == bool(expect)
    assert r["table"]["sm_80"]["3"]["blocked_piped"]["dynamic_bytes"] == \
        49152
    with pytest.raises(ValueError):
        checks.stage_bytes(BLOCKED_SRC.replace("kBlockedK", "kK"), "kBlocked")
    assert checks.stage_bytes(read("tile-sizes.h"), "kBlock") == TILE


@pytest.mark.parametrize("ptx,sass,expect", cases("sm80-blocked"))
def test_sm80_blocked_fixtures(tmp_path, ptx, sass, expect):
    """--blocked checks the blocked pair (fixtures renamed) beside a good
    lesson pair; ptxas fusing matmulBlockedSync fails."""
    files = {"sm_80-s2.ptx": read("good-sm_80.ptx"),
             "sm_80-s2.sass": read("good-sm_80.sass")}
    files.update({f"blocked-{k}": read(f).replace("Tile", "Blocked")
                  for k, f in (("sm_80-s2.ptx", ptx), ("sm_80-s2.sass", sass))})
    p, r = check(tmp_path, "sm80", files, "--stages", "2", "--ptx", "sm_80",
                 "--sass", "sm_80", "--blocked")
    out = p.stdout + p.stderr
    assert p.returncode == bool(expect) and expect in out, out
    assert out.count("FAIL") == bool(expect) and r["ptx"]["sm_80"][
        "blocked_piped"]["names"] == ["_Z15matmulBlockedPipedPKfS0_Pfi"]
