"""The compile checks (tools/compile/checks.py): the real reports of the
default build, the checkers on small hand-written PTX, SASS and ptxas
fixtures that must fail, and a negative control through make."""

import json
import os
import re
import sys

import pytest

from conftest import REPO, make, run

CK = os.path.join(REPO, "build", "checks", "main")
TILE = 8192
PIPED = "_Z15matmulTilePipedPKfS0_Pfi"
SYNC = "_Z14matmulTileSyncPKfS0_Pfi"
GOOD_PIPED = ["// cp.async.wait_all in a comment never counts",
              "@%p1 cp.async.cg.shared.global [%r1], [%rd1], 16, 16;",
              "cp.async.mbarrier.arrive.shared.b64 [%r2];",
              "{ .reg .pred %p; mbarrier.test_wait.parity.shared.b64 %p, "
              "[%r2], %r3; }"]
GOOD_SYNC = ["ld.global.nc.v4.f32 {%f1, %f2, %f3, %f4}, [%rd2];",
             "st.shared.v4.f32 [%r4], {%f1, %f2, %f3, %f4};"]
REFUSED_OK = ('exit=1\nday74.nw(1): error: static assertion failed with '
              '"kStages copies of both tiles plus the pipeline state exceed '
              'the 48 KiB of static shared memory a block may declare"\n')


def load(name):
    """A JSON report of the real checks."""
    with open(os.path.join(CK, name), encoding="utf-8") as f:
        return json.load(f)


def ptx(arch, *kernels):
    """A small PTX file of (name, body lines) kernels."""
    return f".version 9.0\n.target {arch}\n.address_size 64\n\n" + "".join(
        f".visible .entry {n}(\n\t.param .u64 {n}_param_0\n)\n{{\n" +
        "".join(f"\t{b}\n" for b in body) + "\tret;\n}\n\n"
        for n, body in kernels)


def sass(arch, funcs):
    """A small cuobjdump -sass listing: funcs = {name: [opcode lines]}."""
    out = [f"\n\tcode for {arch}\n\t.target\t{arch}\n"]
    for name, ops in funcs.items():
        out.append(f"\t\tFunction : {name}\n\t.headerflags\t@\"EF_CUDA_SM80\"")
        out += [f"        /*{i * 16:04x}*/                   {op} ;   "
                "/* 0x0000000000000000 */" for i, op in enumerate(ops)]
        out.append("\t\t..........\n")
    return "\n".join(out) + "\n"


def check(tmp_path, kind, files, *args):
    """Write fixture files into tmp_path and run one check on them;
    returns (CompletedProcess, JSON report or None)."""
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    out = tmp_path / "report.json"
    p = run([sys.executable, "-m", "tools.compile.checks", kind, "--dir",
             str(tmp_path), "--out", str(out), *args])
    return p, json.loads(out.read_text()) if out.exists() else None


GOOD80 = ptx("sm_80", (SYNC, GOOD_SYNC), (PIPED, GOOD_PIPED))
GOOD75 = ptx("sm_75", (SYNC, GOOD_SYNC), (PIPED, GOOD_SYNC))
SASS_OK = sass("sm_80", {PIPED: ["LDGSTS.E.BYPASS.128 [R1], [R2.64]"],
                         SYNC: ["LDG.E.128.CONSTANT R4, [R2.64]",
                                "STS.128 [R1], R4"]})


def sm80(tmp_path, ptxs, sasses=None):
    """The sm80 check on {arch: PTX} and {arch: SASS} fixtures."""
    files = {f"{a}-s2.ptx": t for a, t in ptxs.items()}
    files.update({f"{a}-s2.sass": t for a, t in (sasses or {}).items()})
    return check(tmp_path, "sm80", files, "--stages", "2", "--ptx", *ptxs,
                 "--sass", *(sasses or {}))


def test_real_sm80_report():
    """No cp.async at sm_75; at sm_80/90 every one in matmulTilePiped, with
    the global-to-shared copy; LDGSTS in its SASS; fusion recorded."""
    r = load("sm80-check-s2.json")
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
        with open(os.path.join(CK, name)) as f:
            assert "-Werror all-warnings" in f.read(), name
    for name in os.listdir(CK):
        if name.endswith((".log", ".ptxas.txt")) and "refused" not in name:
            with open(os.path.join(CK, name)) as f:
                assert not re.search(r"warning|error", f.read(), re.I), name


def test_good_fixture_passes(tmp_path):
    """A good build passes; forms are counted per kernel, comments and
    mbarrier instructions aside."""
    p, r = sm80(tmp_path, {"sm_75": GOOD75, "sm_80": GOOD80},
                {"sm_80": SASS_OK})
    assert p.returncode == 0, p.stdout + p.stderr
    assert r["ptx"]["sm_80"]["piped"]["forms"] == {
        "cp.async.cg.shared.global": 1,
        "cp.async.mbarrier.arrive.shared.b64": 1}


HELPER = (".func helper(\n\t.param .b64 x\n)\n{\n\tcp.async.cg.shared.global "
          "[%r1], [%rd1], 16;\n\tret;\n}\n")


@pytest.mark.parametrize("arch,text,expect", [
    ("sm_75", ptx("sm_75", (SYNC, GOOD_SYNC), (PIPED, GOOD_PIPED)),
     "sm_75 PTX: 2 cp.async"),
    ("sm_80", ptx("sm_80", (SYNC, GOOD_PIPED), (PIPED, GOOD_PIPED)),
     "matmulTileSync holds 2"),
    ("sm_80", GOOD80.replace(".address_size 64\n", ".address_size 64\n" +
                             HELPER), "helper"),
    ("sm_80", ptx("sm_80", (SYNC, GOOD_SYNC), (PIPED, GOOD_SYNC + [
        "cp.async.mbarrier.arrive.shared.b64 [%r2];"])),
     "holds no global-to-shared cp.async")],
    ids=["sm75", "in-sync", "outside", "register-fill"])
def test_bad_ptx_fails(tmp_path, arch, text, expect):
    """cp.async below sm_80, in matmulTileSync or outside both kernels, and a
    piped fill through registers (even with the pipeline's own arrive)
    each fail, named."""
    p, _ = sm80(tmp_path, {arch: text})
    assert p.returncode == 1 and expect in p.stderr, p.stderr


def test_sass_without_ldgsts_fails(tmp_path):
    """SASS without LDGSTS in matmulTilePiped fails."""
    bad = sass("sm_80", {PIPED: ["LDG.E.128 R4, [R2.64]", "STS.128 [R1], R4"],
                         SYNC: ["LDG.E.128 R4, [R2.64]", "STS.128 [R1], R4"]})
    p, _ = sm80(tmp_path, {"sm_80": GOOD80}, {"sm_80": bad})
    assert p.returncode == 1
    assert "matmulTilePiped holds no LDGSTS" in p.stderr


def test_fused_sync_kernel_is_recorded(tmp_path):
    """A sync kernel that ptxas fused is recorded, not failed."""
    fused = sass("sm_80", {PIPED: ["@P0 LDGSTS.E.BYPASS.128 [R1], [R2.64]"],
                           SYNC: ["LDGSTS.E.128 [R1], [R2.64]"]})
    p, r = sm80(tmp_path, {"sm_80": GOOD80}, {"sm_80": fused})
    assert p.returncode == 0, p.stderr
    assert r["sass"]["sm_80"]["sync"]["LDGSTS"] == 1
    assert r["sass"]["sm_80"]["piped"]["LDGSTS"] == 1


def test_unreadable_ptx_is_a_usage_error(tmp_path):
    """Unreadable PTX exits 2, never passes."""
    p, _ = sm80(tmp_path, {"sm_80": "not ptx {"})
    assert p.returncode == 2, p.stderr


CALL = re.compile(r"cuda::memcpy_async\(\s*(&[^,;]+?),\s*(&[^,;]+?),\s*"
                  r"cuda::aligned_size_t<16>\([^()]*\),\s*pipe\s*\);")


def test_negative_control_fails_through_make(tmp_path):
    """The program with the piped fill rewritten through registers (the
    pipeline calls kept): make sm80-check must fail, naming it."""
    with open(os.path.join(REPO, "build", "pipelined_gemm.cu")) as f:
        src, n = CALL.subn(lambda m: f"*reinterpret_cast<float4*>({m[1]}) = "
                           f"*reinterpret_cast<const float4*>({m[2]});",
                           f.read())
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
    r = load("stage-limits.json")
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


def ptxas(piped_smem):
    """A small ptxas -v report of both kernels at sm_80."""
    return "".join(
        f"ptxas info    : Compiling entry function '{n}' for 'sm_80'\n"
        f"ptxas info    : Function properties for {n}\n"
        "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
        f"ptxas info    : Used 64 registers, used 1 barriers, {b} bytes smem,"
        " 380 bytes cmem[0]\n" for n, b in ((PIPED, piped_smem), (SYNC, 8192)))


GOOD_SMEM = {2: 16424, 3: 24632, 4: 32840, 5: 41048}


@pytest.mark.parametrize("smem,refused,rc,expect", [
    (GOOD_SMEM, REFUSED_OK, 0, ""),
    ({**GOOD_SMEM, 5: 41060}, REFUSED_OK, 1, "not constant"),
    ({2: 16424, 3: 16424 + 4096}, REFUSED_OK, 1, "a step of 4096"),
    (GOOD_SMEM, "exit=0\n", 1, "exit 0"),
    (GOOD_SMEM, 'exit=1\nerror: static assertion failed with "the exercise '
     'sweeps 2, 3 and 4 stages"\n', 1, "not by the 48 KiB"),
    ({**GOOD_SMEM, 5: 49160}, REFUSED_OK, 1, "exceed")],
    ids=["good", "uneven", "small-step", "compiles", "wrong-assert", "over"])
def test_stage_limits_fixtures(tmp_path, smem, refused, rc, expect):
    """A uniform step passes; an uneven or too small step, a deepest depth
    that compiles or is refused by the wrong assertion, and a depth over
    48 KiB each fail, named."""
    files = {f"sm_80-s{n}.ptxas.txt": ptxas(b) for n, b in smem.items()}
    files["refused"] = refused
    p, _ = check(tmp_path, "stages", files, "--refused",
                 str(tmp_path / "refused"), "--arch", "sm_80", "--stages",
                 *map(str, smem), "--tile-bytes", str(TILE))
    assert p.returncode == rc and expect in p.stderr, p.stderr
