"""The facts pipeline: tools/lit/gather.py on fixture evidence, the real
schema against day74.nw, tools/facts/derive.py's verdicts, and
tools/gpu/gpu_facts.py on the committed GPU transcripts."""

import json
import os
import re
import shutil
import sys

import pytest

from conftest import FIXTURES, REPO, checkout, run
from tools.facts import derive
from tools.lit import gather, litlib

FIX = os.path.join(FIXTURES, "facts")
SCHEMA = os.path.join(REPO, "tools", "facts", "schema.tsv")


def gather_case(tmp_path, case, evidence=None, schema=None):
    """Run gather.py on fixture folder case (or on evidence=DIR); returns
    (CompletedProcess, output path, {name: fact} or None)."""
    out = str(tmp_path / f"{case}.json")
    p = run([sys.executable, "-m", "tools.lit.gather", "--schema",
             schema or os.path.join(FIX, "schema.tsv"), "--evidence",
             evidence or os.path.join(FIX, case, "evidence"),
             "--source-hash", os.path.join(FIX, case if case in os.listdir(
                 FIX) else "good", "source.sha256"),
             "--derive", "tools.facts.derive", "--out", out])
    return p, out, (json.loads(litlib.read_text(out)) if os.path.exists(out)
                    else None)


@pytest.mark.parametrize("case", sorted(
    c for c in os.listdir(FIX) if os.path.isdir(os.path.join(FIX, c))))
def test_fixture_case(tmp_path, case):
    """Each fixture folder's evidence gathers as its expect.json says: exit
    status, stderr lines, schema descriptions and facts (null: absent)."""
    want = json.loads(litlib.read_text(os.path.join(FIX, case, "expect.json")))
    p, out, doc = gather_case(tmp_path, case)
    assert p.returncode == want["rc"], (want["why"], p.stderr)
    for line in want.get("stderr", []):
        assert line in p.stderr, (want["why"], line)
    assert not [f for f in os.listdir(tmp_path) if "tmp" in f]
    if want["rc"]:
        assert not os.path.exists(out), "a failed gather wrote its output"
        return
    for name, desc in want.get("schema", {}).items():
        assert doc["facts_schema"][name] == desc, name
    for name, fact in want["facts"].items():
        if fact is None:
            assert name not in doc["facts"], name
        else:
            assert {k: doc["facts"][name][k] for k in fact} == fact, name


def test_pandoc_reads_the_facts(tmp_path):
    """pandoc reads the JSON as YAML metadata, with the same names."""
    _, out, doc = gather_case(tmp_path, "good")
    pandoc = shutil.which(os.environ.get("PANDOC", "pandoc"))
    q = run([pandoc, "-f", "markdown", "-t", "json", "--metadata-file", out],
            input="")
    assert q.returncode == 0, q.stderr
    assert set(json.loads(q.stdout)["meta"]["facts"]["c"]) == \
        set(doc["facts"])


@pytest.mark.parametrize("line,expect", [
    ("a.b\tcompile\t{:.1f\td", "format"), ("a.b\tcompile\t{}{}\td", "one {}"),
    ("a.{b,}\tcompile\t-\td", "empty alternative"),
    ("A.b\tcompile\t-\td", "not a legal fact name"),
    ("a.b\tcompile\t-\td\na.b\tgpu\t-\td", "listed twice")])
def test_malformed_schema_fails(tmp_path, line, expect):
    """A malformed schema line is refused, naming the file and line."""
    path = tmp_path / "schema.tsv"
    path.write_text(line + "\n")
    with pytest.raises(gather.GatherError, match=expect):
        gather.read_schema(str(path))


def test_formats_show_values_once():
    """FORMAT is the one place a value is rounded or worded."""
    assert gather.show(77.25341, "{:.1f} %", "x") == "77.3 %"
    assert gather.show(0.9448, "{:.3f}", "x") == "0.945"
    assert gather.show(50231.2, "{:,.0f}", "x") == "50,231"
    assert gather.show(True, "caught|missed", "x") == "caught"
    assert gather.show(False, "caught|missed", "x") == "missed"
    assert gather.show("held", "-", "x") == "held"
    with pytest.raises(gather.GatherError):
        gather.show(1, "caught|missed", "x")


def test_real_schema_lists_every_fact_of_the_page(tmp_path):
    """The real schema parses, no evidence gives only page.evidence = none,
    and every [name]{.fact} and fact="name" of day74.nw is in it."""
    (tmp_path / "none").mkdir()
    p, _, doc = gather_case(tmp_path, "real", evidence=str(tmp_path / "none"),
                            schema=SCHEMA)
    assert p.returncode == 0, p.stderr
    none = {"text": "none", "from": "", "stale": False}
    assert doc["facts"]["page.evidence"] == none
    assert all(f == none for f in doc["facts"].values()), "only page.evidence"

    nw = litlib.read_text(os.path.join(REPO, "day74.nw"))
    used = set(re.findall(r"\[([a-z0-9_.]*)\]\{\.fact\}", nw)) | set(
        re.findall(r'\bfact="([a-z0-9_.]*)"', nw))
    assert used <= set(doc["facts_schema"]), used - set(doc["facts_schema"])


def test_committed_evidence_gathers(tmp_path):
    """The committed evidence uses only schema names, and its verdicts are
    the ones the numbers give."""
    p, _, doc = gather_case(tmp_path, "real", evidence=os.path.join(
        REPO, "evidence"), schema=SCHEMA)
    assert p.returncode == 0, p.stderr
    verdicts = {n[8:]: f["text"] for n, f in doc["facts"].items()
                if n.startswith("verdict.")}
    assert verdicts == {   # stages: 3 beat 2 and 4 lost, beyond the spread
        "stages": "held", "memcmp": "held", "fusion": "not fused",
        "ratio": "failed", "ldgsts": "held", "residency": "held",
        "mechanism": "held", "synccheck": "held", "blocked_target": "held",
            "barrier": "held", "prefetch": "held", "position": "failed"}


@pytest.mark.parametrize("r,lo,hi,want", [
    (0.90, 0.89, 0.91, "held"), (0.97, 0.96, 0.98, "failed"),
    (0.945, 0.94, 0.955, "inconclusive")])
def test_band_verdict(r, lo, hi, want):
    """Prediction 1 holds only when every process lands in the band."""
    assert derive.band([r, lo, hi], *derive.PREDICTED_RATIO) == want


@pytest.mark.parametrize("r2,r3,r4,want", [
    (0.9448, 0.9450, 0.9479, "no measurable effect"),
    (0.95, 0.93, 0.94, "held"), (0.93, 0.95, 0.95, "failed"),
    (0.95, 0.95, 0.92, "failed")])
def test_stages_verdict(r2, r3, r4, want):
    """Prediction 5: differences inside the spread (0.004) are no effect."""
    assert derive.stages_verdict(r2, r3, r4, 0.9434, 0.9476) == want


def test_blocks_per_sm_cc80():
    """The CC 8.0 occupancy rules: 64 registers give 4 blocks, 70 give 3."""
    assert [derive.blocks_per_sm_cc80(r) for r in (32, 64, 70, 128)] == \
        [8, 4, 3, 2]


def test_memcmp_verdict_fails_on_one_difference():
    """One size whose outputs differ fails prediction 2."""
    facts = {f"run.sm_80.{n}.identical": gather.Fact(n != 1024, [], False)
             for n in (512, 1024)}
    assert derive.derive(facts, [])["verdict.memcmp"][0] == "failed"


def test_gpu_facts_reproduce_the_committed_file(tmp_path):
    """gpu_facts.py on the committed transcripts gives the committed facts
    file, with unrounded values."""
    ev = str(tmp_path / "ev")
    checkout(ev, src=os.path.join(REPO, "evidence"), files=[
        f for f in os.listdir(os.path.join(REPO, "evidence"))
        if f.startswith("gpu-") and not f.endswith(".facts.json")])
    p = run([sys.executable, "-m", "tools.gpu.gpu_facts", ev])
    assert p.returncode == 0, p.stderr
    new = json.loads(litlib.read_text(os.path.join(ev, "gpu-h200.facts.json")))
    assert new == json.loads(litlib.read_text(os.path.join(
        REPO, "evidence", "gpu-h200.facts.json")))
    assert new["facts"]["run.sm_80.1024.piped_pct_cublas"] == 76.4557507
    assert new["facts"]["spread.2048.ratio_min"] == 0.961345682
    assert new["facts"]["pitfalls.barrier.first_run_launch_failure"] is True
    os.remove(os.path.join(ev, "gpu-h200-sass.txt"))
    p = run([sys.executable, "-m", "tools.gpu.gpu_facts", ev])
    assert p.returncode == 1 and "gpu-h200-sass.txt" in p.stderr


def test_tokens_see_code_not_layout(tmp_path):
    """tools/lit/tokens.py: layout, comments and split strings change
    nothing; a changed token or a directive's line end does."""
    from tools.lit import tokens
    base = ('#define A 1\nint f(void) { return A; } /* x */\n'
            'const char *s = "ab";\n')
    same = ['#define A 1\nint f(void)\n{\n    return A;\n}\n'
            'const char *s =\n    "a" // y\n    "b";\n']
    other = [base.replace("return A", "return A + 0"),
             base.replace('"ab"', '"a b"'),
             base.replace("#define A 1\n", "#define A 1 ")]
    assert all(tokens.tokens(t) == tokens.tokens(base) for t in same)
    assert all(tokens.tokens(t) != tokens.tokens(base) for t in other)


@pytest.mark.parametrize("same_tokens", [True, False])
def test_same_text_keeps_evidence_current(tmp_path, same_tokens):
    """Evidence of other sources is current, and a relayout, only when
    SOURCES.tsv gives its sha256 the current token digest."""
    ev = os.path.join(FIX, "good", "evidence")
    measured = json.loads(litlib.read_text(os.path.join(
        ev, "compile.facts.json")))["meta"]["source_sha256"]
    (tmp_path / "now").write_text("1" * 64 + "\n")
    (tmp_path / "tok").write_text("2" * 64 + "\n")
    (tmp_path / "sources.tsv").write_text(
        f"# header\n{measured}\t{'2' if same_tokens else '3'}" + "2" * 63 +
        "\tabc1234\n")
    facts = gather.gather(os.path.join(FIX, "schema.tsv"), ev,
                          str(tmp_path / "now"), str(tmp_path / "out.json"),
                          "tools.facts.derive", token_path=str(
                              tmp_path / "tok"),
                          table_path=str(tmp_path / "sources.tsv"))
    assert facts["ptx.sm80.piped.total"].stale is not same_tokens


@pytest.mark.parametrize("same_tokens", [True, False])
def test_evidence_carries_its_token_digest(tmp_path, same_tokens):
    """Evidence whose meta.source_tokens is the current token digest is
    current (a relayout) without any SOURCES.tsv; another digest: stale."""
    ev = tmp_path / "evidence"
    ev.mkdir()
    obj = json.loads(litlib.read_text(os.path.join(
        FIX, "good", "evidence", "compile.facts.json")))
    obj["meta"]["source_tokens"] = "2" * 64
    (ev / "compile.facts.json").write_text(json.dumps(obj))
    (tmp_path / "now").write_text("1" * 64 + "\n")
    (tmp_path / "tok").write_text(("2" if same_tokens else "3") * 64 + "\n")
    facts = gather.gather(os.path.join(FIX, "schema.tsv"), str(ev),
                          str(tmp_path / "now"), str(tmp_path / "out.json"),
                          "tools.facts.derive",
                          token_path=str(tmp_path / "tok"))
    assert facts["ptx.sm80.piped.total"].stale is not same_tokens
