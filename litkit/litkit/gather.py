"""gather: the measured facts of a lesson, as pandoc metadata.

Usage: python3 -m litkit.gather --schema SCHEMA.tsv --evidence DIR
           --source-hash FILE --out FACTS.json [--derive MODULE]
           [--token-hash FILE]

SCHEMA: NAME<TAB>PRODUCER<TAB>FORMAT<TAB>DESCRIPTION lines; PRODUCER a
meta.kind or "derived"; {a,b} in NAME gives one line per choice, named by
{1}, {2}... in the other fields; MODULE's schema_rows(line), if it has
one, first gives the lines a line stands for (a module's own lists).
DIR/*.facts.json: {"meta": {"kind", "source_sha256", "date", "transcript",
...}, "facts": {name: unrounded number, boolean or one-line token of at
most MAX_WORDS words}, optional "from": {name: the file it was read from,
where not meta.transcript}}; meta may add "rank" (a whole number; 0, the
default, first) and "card" (KEY: its facts are also card.KEY.NAME where
the schema names that). MODULE's derive(facts, evidence) returns {name:
(value, [names read])}, or (value, [], SOURCE) for a fact from no evidence,
SOURCE saying where it comes from. Of two files giving a fact, fresh
evidence wins, then the lower rank, then the later date, then the later
name. FORMAT shows a
value: "-" as it is, "{:.1f} %" a Python format, "A|B" a boolean. OUT
(written atomically): {"facts_schema": {name: description}, "facts":
{name: {"text", "from", "stale"}}}, "text" and "from" as Markdown that
shows them as they are (md_literal: pandoc reads metadata strings as
Markdown). Evidence is current when its source_sha256 is --source-hash's,
or its meta.source_tokens (the token digest of the sources it measured,
litkit/tokens.py) is --token-hash's: a layout-only edit never stales a
number.

Exit: 0 written (stale evidence warned about); 1 an error ("gather: error:
..."): unknown fact name (nearest named), bad schema, facts.json or value;
2 usage.
"""

import argparse
import collections
import difflib
import glob
import importlib
import itertools
import json
import os
import re
import string
import sys

from litkit import litlib

NAME_RE = re.compile(r"^[a-z0-9][a-z0-9_]*(?:\.[a-z0-9_]+)*$")
DERIVED = "derived"
MAX_WORDS = 6
MAX_CHARS = 120


class GatherError(Exception):
    """A problem that stops the gathering; its text is the user's message."""


Entry = collections.namedtuple("Entry", "producer fmt desc")
Fact = collections.namedtuple("Fact", "value sources stale")
# relayout: current through its token digest only (see above).
Evidence = collections.namedtuple("Evidence",
                                  "path meta facts stale relayout origin")


def expand_braces(name, desc):
    """[(name, desc)] for each choice of name's {a,b} groups, {1}, {2}...
    in desc replaced by the choice; GatherError for a bad group."""
    parts = re.split(r"(\{[^{}]*\})", name)
    if any(c in p for p in parts[0::2] for c in "{}"):
        raise GatherError(f"unbalanced braces in schema name {name!r}")
    groups = [p[1:-1].split(",") for p in parts[1::2]]
    if any("" in alt for alt in groups):
        raise GatherError(f"empty alternative in schema name {name!r}")
    template = "{}".join(parts[0::2])   # no brace outside the groups
    return [(template.format(*c), re.sub(
        r"\{(\d+)\}", lambda m: c[int(m.group(1)) - 1]
        if 0 < int(m.group(1)) <= len(c) else m.group(0), desc))
        for c in itertools.product(*groups)]


def check_format(fmt):
    """Raise GatherError unless fmt is "-", "A|B" or a one-field format."""
    try:
        if fmt == "-" or re.fullmatch(r"[^|{}]+\|[^|{}]+", fmt) or [
                f for _, f, _, _ in string.Formatter().parse(fmt)
                if f is not None] == [""]:
            return
    except ValueError as e:
        raise GatherError(f"format {fmt!r}: {e}") from e
    raise GatherError(f"format {fmt!r} needs exactly one {{}} field")


def read_schema(path, rows=None):
    """{name: Entry} of the schema file, in file order, each of its lines
    through rows(line) -> [lines] (default: the line itself); GatherError
    naming file and line for a bad line, name or format, or a name twice."""
    schema = {}
    try:
        lines = litlib.read_text(path).splitlines()
    except OSError as e:
        raise GatherError(f"cannot read the schema: {e}") from e
    for no, line in ((no, row) for no, text in enumerate(lines, 1)
                     for row in schema_rows(rows, text, f"{path}:{no}")):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        fields = [f.strip() for f in line.split("\t")]
        if len(fields) != 4 or not all(fields):
            raise GatherError(f"{path}:{no}: expected NAME<TAB>PRODUCER"
                              "<TAB>FORMAT<TAB>DESCRIPTION")
        raw, producer, fmt, desc = fields
        try:
            check_format(fmt)
            expanded = zip(expand_braces(raw, desc),
                           expand_braces(raw, producer))
        except GatherError as e:
            raise GatherError(f"{path}:{no}: {e}") from e
        for (name, d), (_, producer) in expanded:
            if not NAME_RE.match(name):
                raise GatherError(f"{path}:{no}: {name!r} is not a legal fact"
                                  " name (a-z, 0-9, '_', separated by '.')")
            if name in schema:
                raise GatherError(f"{path}:{no}: fact {name!r} is listed twice")
            schema[name] = Entry(producer, fmt, d)
    if not schema:
        raise GatherError(f"{path}: the schema lists no fact")
    return schema


def schema_rows(rows, line, where):
    """rows(line), or [line] without rows; GatherError naming where."""
    try:
        return rows(line) if rows else [line]
    except Exception as e:   # the module's own error, whatever its class
        raise GatherError(f"{where}: {e}") from e


def check_value(value, where):
    """Raise GatherError unless value is a number, a boolean or a token."""
    if isinstance(value, (bool, int, float)):
        return
    if not isinstance(value, str):
        raise GatherError(f"{where} is a {type(value).__name__}; a fact is a "
                          "number, a boolean or a short token")
    if (len(value.split()) > MAX_WORDS or len(value) > MAX_CHARS
            or "\n" in value or not value.strip()):
        raise GatherError(f"{where} = {value[:60]!r} is not a short token "
                          f"(one line, at most {MAX_WORDS} words): sentences "
                          "belong in the lesson's source")


def load_evidence(path, schema, raw=None, tokens=None):
    """One facts.json, checked against the schema, as Evidence: stale when
    made from sources whose sha256 is not raw (the current sources') and
    whose meta.source_tokens is not tokens (the token digest now), unless
    meta.pinned names the commit it records (a dated record, never stale
    nor a relayout); a relayout when it is current but its sha256 is not
    raw. GatherError for bad JSON or meta, an unknown fact name (with the
    nearest legal ones), a fact of another producer, a bad value or a bad
    "from"."""
    try:
        obj = json.loads(litlib.read_text(path))
    except (OSError, ValueError) as e:
        raise GatherError(f"{path}: not a readable JSON file: {e}") from e
    if not (isinstance(obj, dict) and isinstance(obj.get("meta"), dict)
            and isinstance(obj.get("facts"), dict)):
        raise GatherError(f"{path}: expected \"meta\" and \"facts\" objects")
    meta = obj["meta"]
    if not all(isinstance(v, str) for v in meta.values()) or not all(
            meta.get(k, "").strip() for k in ("kind", "source_sha256", "date")):
        raise GatherError(f"{path}: meta.kind, .source_sha256 and .date must "
                          "be there, and every meta value a string")
    kinds = {e.producer for e in schema.values() if e.producer != DERIVED}
    if meta["kind"] not in kinds:
        raise GatherError(f"{path}: meta.kind is {meta['kind']!r}, not one "
                          f"of {', '.join(sorted(kinds))}")
    if not re.fullmatch(r"[0-9a-fA-F]{64}", meta["source_sha256"].strip()):
        raise GatherError(f"{path}: meta.source_sha256 is not a sha256")
    for name, value in obj["facts"].items():
        if name not in schema:
            near = difflib.get_close_matches(name, list(schema), 3, 0.6)
            hint = f"; did you mean {' or '.join(near)}?" if near else ""
            raise GatherError(f"{path}: unknown fact name {name!r} (not in "
                              f"the schema){hint}; if the schema's names "
                              "changed, measure again")
        if schema[name].producer != meta["kind"]:
            raise GatherError(f"{path}: fact {name!r} is "
                              f"{schema[name].producer}, not {meta['kind']}")
        check_value(value, f"{path}: fact {name!r}")
    origin = obj.get("from", {})
    if not (isinstance(origin, dict) and all(
            n in obj["facts"] and isinstance(f, str) and f.strip()
            for n, f in origin.items())):
        raise GatherError(f"{path}: \"from\" must map names of its facts "
                          "to file names")
    h = meta["source_sha256"].strip().lower()
    same = h == raw or bool(tokens) and meta.get(
        "source_tokens", "").strip().lower() == tokens
    # meta.pinned (a commit): a dated record of a run of that commit's
    # sources, which the page names; never compared with today's sources,
    # so neither stale nor a relayout.
    pinned = bool(meta.get("pinned", "").strip())
    return Evidence(path, meta, obj["facts"], not (same or pinned),
                    same and h != raw, origin)


def merge(evidence, schema=()):
    """({name: Fact}, notes) from the Evidence list; see the docstring."""
    ranked = sorted(evidence, key=lambda e: (
        not e.stale, -int(e.meta.get("rank", "0")), e.meta["date"], e.path))
    facts, owner, notes = {}, {}, []
    for ev in ranked:
        card = "card.%s." % ev.meta["card"] if "card" in ev.meta else None
        for name, value in ev.facts.items():
            if name in owner:
                notes.append(f"{name}: {ev.path} replaces {owner[name]}")
            facts[name] = Fact(value, (ev.origin.get(name) or ev.meta.get(
                "transcript") or ev.path,), ev.stale)
            owner[name] = ev.path
            if card and card + name in schema:
                facts[card + name] = facts[name]
    return facts, notes


def add_derived(module, facts, evidence, schema):
    """Add what module.derive computes to facts (in place), with the
    sources and staleness of the facts it read (or the source it names);
    GatherError for a name the schema does not list as derived."""
    if not module:
        return
    for name, (value, inputs, *named) in module.derive(
            facts, evidence).items():
        if name not in schema or schema[name].producer != DERIVED:
            raise GatherError(f"{module} made {name!r}, which the schema "
                              "does not list as derived")
        check_value(value, f"derived fact {name!r}")
        sources = tuple(named) or tuple(dict.fromkeys(
            s for i in inputs for s in facts[i].sources))
        facts[name] = Fact(value, sources, any(facts[i].stale for i in inputs))


def md_literal(text):
    """text as Markdown that pandoc shows as it is: the characters that
    could start emphasis, code or a link (\\ ` * _ [ ]) escaped. Pandoc
    reads a --metadata-file's strings as Markdown, and in a second pass over
    JSON input without intraword underscores, so "sm_80, sm_90" would lose
    both underscores to an emphasis."""
    return re.sub(r"([\\`*_\[\]])", r"\\\1", text)


def show(value, fmt, name):
    """The text value is shown as under format fmt (see above) in the
    page; GatherError when it does not fit."""
    if fmt == "-":
        return value if isinstance(value, str) else json.dumps(value)
    if "|" in fmt and "{" not in fmt:
        if not isinstance(value, bool):
            raise GatherError(f"fact {name!r} = {value!r} is not a boolean "
                              f"(format {fmt!r})")
        return fmt.split("|")[0 if value else 1]
    if isinstance(value, bool):
        raise GatherError(f"fact {name!r} is a boolean; format {fmt!r}")
    try:
        return fmt.format(value)
    except (ValueError, TypeError) as e:
        raise GatherError(f"fact {name!r} = {value!r} does not fit format "
                          f"{fmt!r}: {e}") from e


def read_hash(path, log):
    """The source sha256 in path (lower-case), or None with a warning."""
    try:
        h = litlib.read_text(path).strip().lower()
    except OSError as e:
        h = str(e)
    if re.fullmatch(r"[0-9a-f]{64}", h):
        return h
    print(f"gather: WARNING: {path} holds no sha256 ({h[:60]}); all evidence"
          " counts as stale", file=log)
    return None


def gather(schema_path, evidence_dir, hash_path, out_path, derive=None,
           log=sys.stderr, token_path=None):
    """Do the whole job; returns the {name: Fact} written. GatherError."""
    module = derive and importlib.import_module(derive)
    schema = read_schema(schema_path, getattr(module, "schema_rows", None))
    raw = read_hash(hash_path, log)
    tokens = read_hash(token_path, log) if token_path else None
    evidence = [load_evidence(p, schema, raw, tokens) for p in
                sorted(glob.glob(os.path.join(evidence_dir, "*.facts.json")))]
    for ev in evidence:
        if ev.stale:
            print(f"gather: WARNING: stale evidence {ev.path}: made from "
                  f"sources {ev.meta['source_sha256'][:12]}..., the current "
                  f"tangle is {(raw or 'unknown')[:12]}...: the pages mark "
                  "its numbers (stale) until it is made again", file=log)
    facts, notes = merge(evidence, schema)
    for n in notes:
        print("gather: note: " + n, file=log)
    add_derived(module, facts, evidence, schema)
    shown = {n: {"text": md_literal(show(f.value, schema[n].fmt, n)),
                 "from": md_literal(", ".join(f.sources)), "stale": f.stale}
             for n, f in sorted(facts.items())}
    doc = {"facts_schema": {n: e.desc for n, e in schema.items()},
           "facts": shown}
    litlib.write_atomic(out_path, json.dumps(doc, indent=1, sort_keys=True,
                                             ensure_ascii=False) + "\n")
    missing = [n for n in schema if n not in facts]
    print(f"gather: wrote {out_path}: {len(facts)} of {len(schema)} facts "
          f"from {len(evidence)} evidence file(s); {len(missing)} not yet "
          "measured, which a page shows as such" + (
              f" ({', '.join(missing[:4])}"
              f"{', ...' if len(missing) > 4 else ''})"
              if missing else ""), file=log)
    return facts


def main(argv=None):
    """Command-line entry point; see the module docstring. Exit status."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for option in ("--schema", "--evidence", "--source-hash", "--out"):
        ap.add_argument(option, required=True)
    ap.add_argument("--derive", help="module with derive(facts, evidence) "
                    "and maybe schema_rows(line)")
    ap.add_argument("--token-hash", help="the sources' token digest")
    a = ap.parse_args(argv)
    try:
        gather(a.schema, a.evidence, a.source_hash, a.out, a.derive,
               token_path=a.token_hash)
    except GatherError as e:
        print(f"gather: error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
