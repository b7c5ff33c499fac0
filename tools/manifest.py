"""manifest: Day 74's lists, read once from tools/manifest.toml.

Usage: python3 -m tools.manifest mk OUT   (build/manifest.mk, atomically)

load() gives the manifest checked (ManifestError names what is wrong):
kernel roots, depths, residency settings, sizes N, the groups run against
residency and their verdicts. `mk` writes the manifest's one generated
form, make's variables: the Makefile's KERNELS, BLOCKED_KERNELS and
depths, and the M_* lists that tools/gpu/evidence-gpu.sh reads from it.
schema_rows() expands a line of tools/facts/schema.tsv's @{...} (gather
reads it through derive.py): a list as {a,b} (a single value bare; a row
over an empty list is dropped), and a row naming @{group.FIELD} once per
group. Exit: 0; 1 a bad manifest (named); 2 usage.
"""

import functools
import os
import re
import sys
from types import SimpleNamespace

try:
    import tomllib
except ImportError:   # Python < 3.11: the tomli package, if installed
    try:
        import tomli as tomllib
    except ImportError:
        tomllib = None

from litkit import litlib

PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                    "manifest.toml")
ROOT = re.compile(r"[a-z0-9_]+(?:/[a-z0-9_][a-z0-9_-]*)*")
NAME = re.compile(r"[a-z][a-z0-9_]*")
PLACE = re.compile(r"@\{([a-z_.]+)\}")
RESIDENCY = "residency"   # the lesson's pair on the residency dial


class ManifestError(Exception):
    """The manifest or a template is not as this module expects."""


def _ints(table, key, where):
    """table[key]: a non-empty list of ascending positive ints."""
    v = table.get(key)
    if not (isinstance(v, list) and v and all(
            type(x) is int and x > 0 for x in v) and v == sorted(set(v))):
        raise ManifestError(f"{where}.{key}: want ascending positive whole "
                            f"numbers, got {v!r}")
    return v


def _settings(table, key):
    """residency.key: {setting: processes}, settings whole or "natural"."""
    v = table.get(key)
    if not (isinstance(v, dict) and v and all(
            re.fullmatch(r"[1-9][0-9]*|natural", k) and type(n) is int
            and n > 0 for k, n in v.items())):
        raise ManifestError(f"residency.{key}: want {{SETTING = PROCESSES}},"
                            f" SETTING a whole number or natural; got {v!r}")
    return v


def _kernel(root, k):
    """One [kernels] line as a namespace; ManifestError when malformed."""
    if not (ROOT.fullmatch(root) and isinstance(k, dict)):
        raise ManifestError(f"kernels: {root!r} is not a root ROOT of "
                            "day74.nw's ROOT.cu (a-z, 0-9, _, - and /)")
    extra = set(k) - {"pair", "synccheck", "as", "libcu", "ncu", "swept"}
    if extra or k.get("pair", "basic") not in ("basic", "blocked") or \
            k.get("synccheck") not in (None, "arrives", "plain") or \
            not NAME.fullmatch(k.get("ncu", "x")) or \
            k.get("ncu") in ("basic", "blocked", "wide") or \
            k.get("swept", False) not in (True, False) or \
            (k.get("swept") and k.get("pair", "basic") != "basic"):
        raise ManifestError(f"kernels: {root}: pair is basic or blocked, "
                            "synccheck arrives or plain, ncu a new name, "
                            "swept true or false (basic pair only); "
                            f"unknown: {sorted(extra)}")
    name = k.get("as", root.rsplit("/", 1)[-1].replace("-", "_"))
    return SimpleNamespace(root=root, pair=k.get("pair", "basic"),
                           synccheck=k.get("synccheck"), name=name,
                           libcu=k.get("libcu", False) is True,
                           ncu=k.get("ncu"), swept=k.get("swept", False))


def _group(name, g, roots):
    """One [group.NAME] as a namespace (verdict None when it has none);
    ManifestError when malformed."""
    judged = isinstance(g, dict) and ("verdict" in g or "claim" in g)
    fields = ("kernel", "what", "how", "runs") + (("claim",) if judged else ())
    if not (NAME.fullmatch(name) and isinstance(g, dict)) or set(g) != set(
            fields) | ({"verdict"} if judged else set()) or not all(
                isinstance(g[f], str) and g[f] for f in fields):
        raise ManifestError(f"group.{name}: want the strings kernel, what, "
                            "how, runs, and maybe a verdict table with its "
                            "claim")
    if g["kernel"] not in roots:
        raise ManifestError(f"group.{name}: kernel {g['kernel']!r} is not "
                            "under [kernels]")
    v = g.get("verdict")
    kinds = [{"name", "beats"}, {"name", "loses_to"},
             {"name", "nearer", "than"}]
    if judged and not (isinstance(v, dict) and set(v) in kinds and all(
            isinstance(x, str) and NAME.fullmatch(x) for x in v.values())):
        raise ManifestError(f"group.{name}.verdict: want {{name, beats}}, "
                            "{name, loses_to} or {name, nearer, than}")
    return SimpleNamespace(name=name, verdict=v, claim=g.get("claim"),
                           verdict_name=v and v["name"],
                           **{f: g[f] for f in fields[:4]})


def _depths(d):
    """[depths] as a namespace (.deeper: the exercise's after the
    default); ManifestError when a list is malformed or they disagree."""
    depths = SimpleNamespace(**{k: _ints(d, k, "depths") for k in (
        "exercise", "compile", "blocked", "deep")},
        refused=d.get("refused"))
    depths.deeper = depths.exercise[1:]
    if type(depths.refused) is not int or \
            depths.refused <= depths.compile[-1]:
        raise ManifestError("depths.refused: want a whole number past "
                            "depths.compile")
    if min(depths.deep) < depths.refused:
        raise ManifestError("depths.deep: want depths from depths.refused "
                            "on (what static shared memory refuses)")
    if depths.compile != list(range(depths.compile[0],
                                    depths.compile[-1] + 1)):
        raise ManifestError("depths.compile: the depths must be consecutive")
    return depths


def key(name):
    """name (a pattern or loop of [lab]) as part of a fact name: lower
    case, "-" as "_"."""
    return str(name).lower().replace("-", "_")


def _lab(t):
    """[lab] as a namespace; ManifestError when a list or table is
    missing or malformed (names must stay distinct as fact keys)."""
    lists = ("kit_runs", "cublas_modes", "kit_sizes", "lds_widths",
             "lds_patterns", "lesson_lds", "loop_depths")
    tables = ("map", "loops")
    if not (isinstance(t, dict) and isinstance(t.get("dir"), str) and all(
            isinstance(t.get(k), list) and t[k] for k in lists) and all(
            isinstance(t.get(k), dict) and t[k] for k in tables)):
        raise ManifestError(f"lab: want dir, the lists {', '.join(lists)} "
                            f"and the tables {', '.join(tables)}")
    for k in ("lds_patterns", "loops"):
        if len({key(n) for n in t[k]}) != len(t[k]) or not all(
                NAME.fullmatch(key(n)) for n in t[k]):
            raise ManifestError(f"lab.{k}: names must be distinct fact keys")
    if not set(t["lesson_lds"]) <= set(t["lds_patterns"]):
        raise ManifestError("lab.lesson_lds: not among lab.lds_patterns")
    return SimpleNamespace(**t)


@functools.lru_cache(maxsize=None)
def load(path=PATH):
    """The manifest at path as a namespace (see the module docstring):
    depths (.exercise, .compile, .blocked, .deeper: the exercise's after
    the default, .refused, .deep: part 1's dynamic shared memory, past
    .refused), residency (.dial, .groups: {setting:
    processes}), sizes ({name: [N]}), processes, kernels, groups (lists
    of namespaces; a kernel's .swept: swept over the depths beside the
    lesson's, which comes first), step (evidence-gpu's name of the
    groups' step), lab
    ([lab]: one call's open points, tools/gpu/lab_facts.py).
    ManifestError when it is missing, unreadable or inconsistent."""
    if tomllib is None:
        raise ManifestError("reading tools/manifest.toml needs Python 3.11 "
                            "(tomllib) or the tomli package")
    try:
        with open(path, "rb") as f:
            doc = tomllib.load(f)
    except (OSError, ValueError) as e:
        raise ManifestError(f"{path}: {e}") from e
    try:
        d, r, s = doc["depths"], doc["residency"], doc["sizes"]
        kernels = [_kernel(k, v) for k, v in doc["kernels"].items()]
        roots = {k.root for k in kernels}
        groups = [_group(n, g, roots) for n, g in doc["group"].items()]
        step = doc["steps"]["groups"]
        lab = _lab(doc.get("lab"))
        cards = dict(doc.get("cards", {}))
    except (KeyError, AttributeError, TypeError) as e:
        raise ManifestError(f"{path}: missing or malformed: {e}") from e
    depths = _depths(d)
    sizes = {k: _ints(s, k, "sizes") for k in s if k != "processes"}
    processes = s.get("processes")
    known = {g.name for g in groups} | {RESIDENCY}
    for g in groups:
        others = [v for k, v in (g.verdict or {}).items() if k != "name"]
        if not set(others) <= known - {g.name}:
            raise ManifestError(f"group.{g.name}.verdict: {others} are not "
                                "other groups or residency")
    if any(k.swept for k in kernels) and not kernels[0].swept:
        raise ManifestError(f"{path}: a kernel file is swept, but not the "
                            f"first, {kernels[0].root}: the others are "
                            "swept beside it")
    if not all(isinstance(k, str) and NAME.fullmatch(k)
               for k in cards.values()):
        raise ManifestError(f"{path}: [cards]: each key a fact name part")
    if [k.libcu for k in kernels if k.pair == "blocked"].count(True) != 1 \
            or type(processes) is not int or not NAME.fullmatch(step):
        raise ManifestError(f"{path}: want one blocked kernel with libcu = "
                            "true, sizes.processes a number, steps.groups "
                            "a name")
    return SimpleNamespace(
        depths=depths, sizes=sizes, processes=processes, kernels=kernels,
        groups=groups, step=step, lab=lab, cards=cards,
        residency=SimpleNamespace(
            dial=_settings(r, "dial"), groups=_settings(r, "groups")))


def synccheck(m=None):
    """[(root, fact name, arrives)] of the synccheck experiment, in order."""
    return [(k.root, k.name, k.synccheck == "arrives")
            for k in (m or load()).kernels if k.synccheck]


def make_text(m):
    """build/manifest.mk: the Makefile's lists, then the M_* lists of
    tools/gpu/evidence-gpu.sh (NAME := VALUE lines)."""
    def roots(pair):
        return " ".join(k.root for k in m.kernels if k.pair == pair)

    def pairs(settings):
        return " ".join(f"{k}:{n}" for k, n in settings.items())
    d, words = m.depths, lambda xs: " ".join(map(str, xs))
    v = {"KERNELS": roots("basic"), "BLOCKED_KERNELS": roots("blocked"),
         "EXERCISE_DEPTHS": words(d.exercise), "DEPTHS": words(d.compile),
         "BLOCKED_DEPTHS": words(d.blocked), "TOO_DEEP": d.refused,
         "DEEP_DEPTHS": words(d.deep),
         "M_EXERCISE_DEPTHS": words(d.exercise),
         "M_DEEPER_DEPTHS": words(d.deeper), "M_PROCESSES": m.processes,
         "M_DIAL": pairs(m.residency.dial),
         "M_GROUP_SETTINGS": pairs(m.residency.groups),
         "M_GROUPS": words(f"{g.name}:{g.kernel}" for g in m.groups),
         "M_GROUPS_STEP": m.step,
         "M_SYNCCHECK": words(r for r, _, _ in synccheck(m)),
         "M_LIBCU": next(k.root for k in m.kernels if k.libcu),
         "M_NCU": words(f"{k.ncu}:{k.root}" for k in m.kernels if k.ncu),
         "M_SWEPT": words(f"{k.name}:{k.root}" for k in m.kernels
                          if k.swept)}
    v.update({f"M_SIZES_{k.upper()}": ",".join(map(str, n))
              for k, n in m.sizes.items()})
    return "# Made by tools/manifest.py from tools/manifest.toml: do not " \
        "edit.\n" + "".join(f"{k} := {x}\n" for k, x in v.items())


def _lists(m):
    """{placeholder: [values]} of the lists a schema template may name."""
    out = {f"depths.{k}": getattr(m.depths, k)
           for k in ("exercise", "compile", "blocked", "deeper", "deep")}
    out.update({f"sizes.{k}": v for k, v in m.sizes.items()})
    out.update({"residency.dial": list(m.residency.dial),
                "residency.groups": list(m.residency.groups),
                "groups": [g.name for g in m.groups],
                "synccheck": [n for _, n, _ in synccheck(m)],
                "swept": [k.name for k in m.kernels if k.swept],
                "cards": list(m.cards.values())})
    out["swept_others"] = out["swept"][1:]   # beside the first, the lesson's
    lab = vars(m.lab)
    out.update({f"lab.{k}": [key(x) for x in v] for k, v in lab.items()
                if isinstance(v, (list, dict))})
    return out


def schema_rows(line, m=None):
    """The schema lines a line of schema.tsv stands for: itself (a comment,
    a plain row), or its @{...} expanded (see the module docstring);
    ManifestError for a list the manifest does not have."""
    if line.lstrip().startswith("#") or "@{" not in line:
        return [line]
    m = m or load()
    lists, out = _lists(m), []
    each = m.groups if "@{group." in line else [None]
    if "@{group.verdict}" in line or "@{group.claim}" in line:
        each = [g for g in m.groups if g.verdict]
    for g in each:
        def sub(match):
            key = match.group(1)
            if key.startswith("group.") and g is not None:
                field = key[len("group."):]
                field = "verdict_name" if field == "verdict" else field
                if field in ("name", "verdict_name", "what", "how", "runs",
                             "claim"):
                    return str(getattr(g, field))
            if key not in lists:
                raise ManifestError(f"no list @{{{key}}} in the manifest")
            vals = [str(x) for x in lists[key]]
            return vals[0] if len(vals) == 1 else "{" + ",".join(vals) + "}"
        if all(lists.get(k, [0]) for k in PLACE.findall(line)):
            out.append(PLACE.sub(sub, line))   # (an empty list: no fact)
    return out


def main(argv):
    """Command-line entry point; see the module docstring. Exit status."""
    if len(argv) != 2 or argv[0] != "mk":
        print(__doc__.splitlines()[2], file=sys.stderr)
        return 2
    try:
        litlib.write_atomic(argv[1], make_text(load()))
    except (ManifestError, OSError) as e:
        print(f"manifest: error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
