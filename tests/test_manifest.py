"""tools/manifest.toml is the one declaration of Day 74's lists: no other
file names an experiment or types the depths as a list, the manifest
agrees with day74.nw, a bad manifest is refused, and evidence-gpu.sh lays
out its steps from it (EVIDENCE_DRY_RUN)."""

import json
import os
import re
import subprocess
import sys

import pytest

from conftest import FIXTURES, REPO, sources
from tools import manifest
from litkit import gather, litlib

# Where the lists may be written out: the lesson, the manifest, what was
# measured, test fixtures; and the page theme, for CSS's property names.
ALLOWED = ("day74.nw", "tools/manifest.toml", "evidence/", "tests/fixtures/",
           "litkit/tests/fixtures/",
           "litkit/litkit/theme/")
SEP = r"(?:,\s*|\s+)"
DEPTH_LIST = re.compile(rf"(?<![\d.,])(?<!\d\s)(?<!,\s)2{SEP}3{SEP}4"
                        rf"(?:{SEP}5)?(?!\d)(?!{SEP}\d)")
CASES = json.loads(litlib.read_text(os.path.join(FIXTURES, "manifest",
                                                 "cases.json")))


def tracked_texts():
    """{path: text} of the module's source files outside ALLOWED."""
    out = {}
    for rel in sources():
        if not rel.startswith(ALLOWED):
            try:
                out[rel] = litlib.read_text(os.path.join(REPO, rel))
            except (OSError, UnicodeDecodeError):
                pass   # a binary file names nothing
    return out


def lines_matching(pattern):
    """FILE:LINE: text of every line of tracked_texts() that pattern
    (a compiled regular expression) finds something in."""
    return [f"{rel}:{n}: {line.strip()[:70]}"
            for rel, text in tracked_texts().items()
            for n, line in enumerate(text.splitlines(), 1)
            if pattern.search(line)]


def test_only_the_manifest_names_the_experiments():
    """No file outside ALLOWED names an experiment (its root's last part,
    its synccheck name) or a group."""
    m = manifest.load()
    names = {g.name for g in m.groups} | {
        x for k in m.kernels if k.root.startswith("experiments/")
        for x in (k.root.rsplit("/", 1)[-1], k.name)}
    assert len(names) >= 10
    word = re.compile(r"(?<![\w-])(%s)(?![\w-])" % "|".join(
        map(re.escape, sorted(names))))
    assert lines_matching(word) == []


def test_no_file_types_the_depths_as_a_list():
    """The depths as a list, with spaces, commas, brackets or braces,
    appear nowhere outside ALLOWED (a longer run of numbers is no list of
    depths); the pattern's cases are in the fixture."""
    for text, hit in CASES["depth-lists"]:
        assert bool(DEPTH_LIST.search(text)) == hit, text
    assert lines_matching(DEPTH_LIST) == []


def test_the_manifest_agrees_with_the_lesson():
    """Each kernel file is a root of day74.nw and each experiments/ root
    is in the manifest; the exercise's depths run from the default to the
    source's static_assert bound; the refused depth is past the checked."""
    m = manifest.load()
    nw = litlib.read_text(os.path.join(REPO, "day74.nw"))
    roots = set(re.findall(r"^<<(.+)\.cu>>=$", nw, re.M))
    ours = {k.root for k in m.kernels}
    assert ours <= roots, ours - roots
    assert {r for r in roots if r.startswith("experiments/")} <= ours
    default = re.search(r"#define STAGES (\d+)", nw)
    bound = re.search(r"static_assert\(kStages >= (\d+) && kStages <= (\d+)",
                      nw)
    d = m.depths
    assert [int(default[1])] * 2 + [int(bound[2])] == [
        d.exercise[0], int(bound[1]), d.exercise[-1]]
    assert d.exercise == list(range(d.exercise[0], d.exercise[-1] + 1))
    assert set(d.exercise) <= set(d.compile) and d.refused > d.compile[-1]
    assert {g.kernel for g in m.groups} <= ours


@pytest.mark.parametrize("old,new,said", [
    pytest.param(*v, id=k) for k, v in CASES["bad"].items()])
def test_a_bad_manifest_is_refused(tmp_path, old, new, said):
    """A manifest with a bad list, kernel, group or syntax is refused,
    saying what is wrong."""
    text = litlib.read_text(manifest.PATH)
    assert old in text
    path = tmp_path / "manifest.toml"
    path.write_text(text.replace(old, new, 1))
    with pytest.raises(manifest.ManifestError, match=re.escape(said)):
        manifest.load(str(path))


def rows(text, m):
    """The schema lines text's lines stand for, as gather reads them."""
    return [r for line in text.splitlines()
            for r in manifest.schema_rows(line, m)]


def test_schema_rows_expand_and_an_unknown_list_fails(tmp_path):
    """@{LIST} becomes {a,b} (one value bare); a @{group.FIELD} row repeats
    per group; an unknown list is named, gather naming its line."""
    m = manifest.load()
    out = rows("x.@{depths.exercise}.@{sizes.libcu}\n"
               "@{group.name}.y\tgpu\t-\t@{group.what}\n", m)
    d = ",".join(map(str, m.depths.exercise))
    assert out[0] == f"x.{{{d}}}.{m.sizes['libcu'][0]}"
    assert out[1:] == [f"{g.name}.y\tgpu\t-\t{g.what}" for g in m.groups]
    (tmp_path / "t.tsv").write_text("a.b\tgpu\t-\td\nx.@{nope}\n")
    with pytest.raises(gather.GatherError, match=r"t\.tsv:2: .*nope"):
        gather.read_schema(str(tmp_path / "t.tsv"), manifest.schema_rows)


def test_a_row_over_an_empty_list_is_dropped(tmp_path):
    """With one kernel file swept, no other is: a row over
    @{swept_others} names no fact and is left out."""
    text = litlib.read_text(manifest.PATH)
    assert text.count("{swept = true}") == 1
    (tmp_path / "m.toml").write_text(text.replace("{swept = true}", "{}"))
    m = manifest.load(str(tmp_path / "m.toml"))
    assert rows("a.@{swept}\nb.@{swept_others}\n", m) == [
        f"a.{m.kernels[0].name}"]


def test_make_reads_the_manifest():
    """build/manifest.mk gives make the manifest's kernels and depths."""
    m, text = manifest.load(), manifest.make_text(manifest.load())
    basic = " ".join(k.root for k in m.kernels if k.pair == "basic")
    assert f"KERNELS := {basic}\n" in text
    assert f"DEPTHS := {' '.join(map(str, m.depths.compile))}\n" in text
    assert f"TOO_DEEP := {m.depths.refused}\n" in text


def test_evidence_dry_run_follows_the_manifest(tmp_path):
    """EVIDENCE_DRY_RUN=1 lists each step's command and transcript, no
    GPU: every group at every setting and process, the depths (and those
    of each swept kernel file, in both builds), the sizes;
    EVIDENCE_STEPS picks the groups' step by the manifest's name."""
    m, out = manifest.load(), str(tmp_path / "ev")
    env = {**os.environ, "EVIDENCE_DRY_RUN": "1", "PYTHON": sys.executable,
           "PATH": "/usr/bin:/bin"}
    p = subprocess.run(["bash", "tools/gpu/evidence-gpu.sh", out], cwd=REPO,
                       env=env, capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert not os.path.exists(out), "a dry run wrote transcripts"
    steps = dict(reversed(line.rsplit(" > ", 1))
                 for line in p.stdout.splitlines() if " > " in line)
    pre = f"{out}/gpu-dry-run"
    sizes = ",".join(map(str, m.sizes["residency"]))
    for g in m.groups:
        for s, n in m.residency.groups.items():
            for i in range(1, n + 1):
                cmd = steps.pop(f"{pre}-{g.name}.txt.{s}.{i}")
                assert cmd == (f"build/sm_80-2stages/{g.kernel} --sizes "
                               f"{sizes} --blocks-per-sm {s} --csv "
                               f"{pre}-{g.name}-{s}-{i}.csv")
    for d in m.depths.exercise:
        for i in range(1, m.processes + 1):
            assert f"--sizes {m.sizes['one'][0]} " in steps.pop(
                f"{pre}-stages.txt.{d}.{i}")
            for k in (k for k in m.kernels if k.swept):
                for arch, stem in (("sm_90", f"native-{k.name}"), (
                        "sm_80", f"stages-{k.name}")):
                    if k is m.kernels[0] and arch == "sm_80":
                        continue   # the lesson's: stages, above
                    stem = f"{pre}-{stem}"
                    assert steps.pop(f"{stem}.txt.{d}.{i}") == (
                        f"build/{arch}-{d}stages/{k.root} --sizes "
                        f"{m.sizes['one'][0]} --csv {stem}-{d}-{i}.csv")
    assert steps.pop(f"{pre}-depth-code.txt") == "inner_code"
    assert f"--sizes {','.join(map(str, m.sizes['run']))} " in steps[
        f"{pre}-cold.txt"]
    env["EVIDENCE_STEPS"] = m.step
    p = subprocess.run(["bash", "tools/gpu/evidence-gpu.sh", out], cwd=REPO,
                       env=env, capture_output=True, text=True)
    assert p.returncode == 0 and {os.path.basename(f).split(".")[0] for f in (
        line.rsplit(" > ", 1)[1] for line in p.stdout.splitlines()
        if " > " in line)} == {f"gpu-dry-run-{g.name}" for g in m.groups}


def test_a_group_needs_no_verdict(tmp_path):
    """A group without verdict and claim is run and described but judged
    by no verdict row; half of the pair is refused."""
    text, m = litlib.read_text(manifest.PATH), manifest.load()
    extra = (f'\n[group.extra]\nkernel = "{m.kernels[-1].root}"\n'
             'what = "w"\nhow = "h"\nruns = "r"\n')
    (tmp_path / "m.toml").write_text(text + extra)
    m2 = manifest.load(str(tmp_path / "m.toml"))
    out = rows("@{group.name}.runs\nverdict.@{group.verdict}\t"
               "@{group.claim}\n", m2)
    assert out[:len(m2.groups)] == [f"{g.name}.runs" for g in m2.groups]
    assert out[len(m2.groups):] == [f"verdict.{g.verdict_name}\t{g.claim}"
                                    for g in m.groups if g.verdict]
    assert "extra.runs" in out
    (tmp_path / "h.toml").write_text(text + extra + 'claim = "c"\n')
    with pytest.raises(manifest.ManifestError, match="group.extra"):
        manifest.load(str(tmp_path / "h.toml"))
