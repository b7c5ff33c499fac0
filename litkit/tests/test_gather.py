"""litkit's gather.py on fixture evidence (litkit/tests/fixtures/facts,
with the derive module fixture_derive.py there): each case's exit status,
messages and facts; pandoc reads the facts file; malformed schemas; formats;
the token digest and when evidence of other sources stays current."""

import json
import os
import shutil
import sys

import pytest

from conftest import FIXTURES, run
from litkit import gather, litlib

FIX = os.path.join(FIXTURES, "facts")
sys.path.insert(0, FIX)   # fixture_derive, for gather.gather in this process


def gather_case(tmp_path, case):
    """Run gather.py on fixture folder case; returns (CompletedProcess,
    output path, {name: fact} or None)."""
    out = str(tmp_path / f"{case}.json")
    p = run([sys.executable, "-m", "litkit.gather", "--schema",
             os.path.join(FIX, "schema.tsv"), "--evidence",
             os.path.join(FIX, case, "evidence"), "--source-hash",
             os.path.join(FIX, case, "source.sha256"), "--derive",
             "fixture_derive", "--out", out], cwd=FIX)
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
    """pandoc reads the JSON as YAML metadata, with the same names; read as
    the weave's second pass reads it (JSON input, where "a_b, c_d" would be
    an emphasis), each text and source shows as gathered (whitespace
    aside)."""
    _, out, doc = gather_case(tmp_path, "good")
    pandoc = shutil.which(os.environ.get("PANDOC", "pandoc"))
    q = run([pandoc, "-f", "markdown", "-t", "json", "--metadata-file", out],
            input="")
    assert q.returncode == 0, q.stderr
    assert set(json.loads(q.stdout)["meta"]["facts"]["c"]) == \
        set(doc["facts"])
    q = run([pandoc, "-f", "json", "-t", "plain", "--metadata-file", out,
             "--lua-filter", os.path.join(FIX, "show.lua"), "-o", os.devnull],
            input=run([pandoc, "-t", "json"], input="").stdout)
    assert q.returncode == 0, q.stderr
    shown = dict(line.split("|", 1) for line in q.stderr.split("\n") if line)
    awkward = "\"hi\": back\\slash #{b} [l],\t\u00e9t\u00e9\u2028~"
    assert shown["note.awkward"].split() == (awkward + "|evidence/"
                                             "compile-fixture.txt").split()
    assert shown["ptx.sm80.cp_async.total"] == ("7|evidence/compile-fixture"
                                                ".txt, evidence/compile_sync"
                                                "_*.txt")


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
    assert [gather.show(v, f, "x") for v, f in (
        (77.25341, "{:.1f} %"), (0.9448, "{:.3f}"), (50231.2, "{:,.0f}"),
        (True, "caught|missed"), (False, "caught|missed"), ("held", "-"))] \
        == ["77.3 %", "0.945", "50,231", "caught", "missed", "held"]
    with pytest.raises(gather.GatherError):
        gather.show(1, "caught|missed", "x")


def test_tokens_see_code_not_layout(tmp_path):
    """litkit/tokens.py: layout, comments and split strings change
    nothing; a changed token or a directive's line end does."""
    from litkit import tokens
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
def test_evidence_carries_its_token_digest(tmp_path, same_tokens):
    """Evidence whose meta.source_tokens is the current token digest is
    current (a relayout); another digest: stale."""
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
                          "fixture_derive",
                          token_path=str(tmp_path / "tok"))
    assert facts["ptx.sm80.piped.total"].stale is not same_tokens


def test_pinned_evidence_is_no_relayout(tmp_path):
    """A dated record (meta.pinned) of other sources is never stale and
    never a relayout: the page's re-flowed sentence is not about it."""
    obj = json.loads(litlib.read_text(os.path.join(
        FIX, "good", "evidence", "compile.facts.json")))
    schema = gather.read_schema(os.path.join(FIX, "schema.tsv"))
    path = tmp_path / "x.facts.json"
    for pinned, stale in (("abc1234", False), ("", True)):
        obj["meta"]["pinned"] = pinned
        path.write_text(json.dumps(obj))
        ev = gather.load_evidence(str(path), schema, "1" * 64, "2" * 64)
        assert (ev.stale, ev.relayout) == (stale, False), pinned


