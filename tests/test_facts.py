"""Day 74's facts: the real schema against day74.nw and the committed
evidence (litkit's gather itself: litkit/tests), tools/facts/derive.py's verdicts,
tools/gpu/gpu_facts.py on the committed GPU transcripts, and the plots that
tools/plots/plot.py draws from the gathered facts."""

import ast
import csv
import glob
import hashlib
import json
import os
import re
import shutil
import sys

import pytest

from conftest import FIXTURES, REPO, checkout, run
from tools import manifest
from tools.facts import derive
from tools.gpu import gpu_facts, lab_facts
from litkit import gather, litlib

SCHEMA = os.path.join(REPO, "tools", "facts", "schema.tsv")  # derive: @{}
# The manifest group that runs the exercise's solution: the thread-scope loop.
THREAD_SCOPE = next(g.name for g in manifest.load().groups
                    if g.kernel == "exercises/solution")


def gather_real(tmp_path, evidence):
    """gather.py on the folder evidence with the real schema and derive.py,
    of sources measured by no evidence; returns (CompletedProcess, output
    path, {name: fact} or None)."""
    out, now = str(tmp_path / "real.json"), tmp_path / "now.sha256"
    now.write_text("0" * 64 + "\n")
    p = run([sys.executable, "-m", "litkit.gather", "--schema", SCHEMA,
             "--evidence", evidence, "--source-hash", str(now), "--derive",
             "tools.facts.derive", "--out", out])
    return p, out, (json.loads(litlib.read_text(out)) if os.path.exists(out)
                    else None)


def test_real_schema_lists_every_fact_of_the_page(tmp_path):
    """The real schema parses, no evidence gives only page.evidence = none
    (and the cited facts, which need no evidence and name where they come
    from), and every [name]{.fact}
    and fact="name" of day74.nw is in it."""
    (tmp_path / "none").mkdir()
    p, _, doc = gather_real(tmp_path, str(tmp_path / "none"))
    assert p.returncode == 0, p.stderr
    none = {"text": "none", "from": "", "stale": False}
    assert doc["facts"]["page.evidence"] == none
    # Cited facts (tools/facts/cited.tsv) come from other course pages, not
    # from evidence: they are there, and every other fact is absent.
    cited = {n for n in doc["facts"] if n.startswith("cited.")}
    assert cited and all(doc["facts"][n]["text"] for n in cited)
    assert {n: doc["facts"][n]["from"] for n in cited} == {   # the tooltip
        n: gather.md_literal(s) for n, (_, s) in derive.cited().items()}
    assert all(f == none for n, f in doc["facts"].items()
               if n not in cited), "only page.evidence and the cited facts"

    nw = litlib.read_text(os.path.join(REPO, "day74.nw"))
    used = set(re.findall(r"\[([a-z0-9_.]*)\]\{\.fact\}", nw)) | set(
        re.findall(r'\bfact="([a-z0-9_.]*)"', nw))
    assert used <= set(doc["facts_schema"]), used - set(doc["facts_schema"])


def test_committed_evidence_gathers(tmp_path):
    """The committed evidence uses only schema names and gives every one
    (the manifest lays out the schema and the parse alike), and its
    verdicts are the ones the numbers give (tests/fixtures/verdicts.json;
    stages: 3 beat 2 and 4 lost, beyond the spread)."""
    p, _, doc = gather_real(tmp_path, os.path.join(REPO, "evidence"))
    assert p.returncode == 0, p.stderr
    want = set(doc["facts_schema"])
    if not glob.glob(os.path.join(REPO, "evidence", "gpu-*-wide.txt")):
        # The wide pair has not run on a GPU yet: its facts are "not yet
        # measured" until its transcripts are committed.
        want = {n for n in want if not re.match(
            r"(ncu\.)?wide\.|verdict\.wide$", n)}
    cards = manifest.load().cards   # each card's facts where it has run
    ran = {cards.get(json.load(open(f))["meta"].get("gpu")) for f in
           glob.glob(os.path.join(REPO, "evidence", "gpu-*.facts.json"))}
    want = {n for n in want if not n.startswith("card.")
            or n.split(".")[1] in ran}
    assert set(doc["facts"]) == want, want ^ set(doc["facts"])
    verdicts = {n[8:]: f["text"] for n, f in doc["facts"].items()
                if n.startswith("verdict.")}
    assert verdicts == json.loads(litlib.read_text(os.path.join(
        FIXTURES, "verdicts.json")))
    stamp = litlib.read_stamp(litlib.read_text(os.path.join(    # lab.date
        REPO, "evidence", "h200-open-points", "depths.txt")))
    assert doc["facts"]["lab.date"]["text"] == stamp["date_utc"][:10]


# derive.py's rules, case by case: (function, its arguments, its result);
# the others in tests/fixtures/derive-rules.txt
D = manifest.load().depths.exercise
RULES = [
    # prediction 1 holds only when every process lands in the band
    *(("band", ([r, lo, hi], *derive.PREDICTED_RATIO), want)
      for r, lo, hi, want in ((0.90, 0.89, 0.91, "held"),
                              (0.97, 0.96, 0.98, "failed"),
                              (0.945, 0.94, 0.955, "inconclusive"))),
    # a depth is clearly fastest only when its slowest process beat every
    # other's fastest
    ("clear_fastest", (D, 0.95, 0.96, 0.93, 0.94, 0.97, 0.98), str(D[1])),
    ("clear_fastest", (D, 0.95, 0.96, 0.93, 0.951, 0.97, 0.98), "none"),
    *ast.literal_eval(litlib.read_text(os.path.join(FIXTURES,
                                                    "derive-rules.txt")))]


@pytest.mark.parametrize("rule,args,want", RULES)
def test_derive_rules(rule, args, want):
    """Each of derive.py's rules gives its result for each case."""
    assert getattr(derive, rule)(*args) == want


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
    # Spot checks against the transcripts' CSV rows, read here directly.
    def rows(name):
        with open(os.path.join(REPO, "evidence", name)) as f:
            return list(csv.DictReader(l for l in f if not l.startswith("#")))
    row = next(r for r in rows("gpu-h200-run-sm_80.csv")
               if r["pair"] == "basic" and r["n"] == "1024")
    assert new["facts"]["run.sm_80.1024.piped_pct_cublas"] == float(
        row["piped_pct_cublas"])
    # the spread: the sm_80 run's process and the three spread processes
    assert new["facts"]["spread.2048.ratio_min"] == min(
        float(r["piped_over_sync"]) for name in ["gpu-h200-run-sm_80.csv"] + [
            f"gpu-h200-spread-{i}.csv" for i in (1, 2, 3)]
        for r in rows(name) if r["pair"] == "basic" and r["n"] == "2048")
    assert new["facts"]["pitfalls.barrier.first_run_launch_failure"] is True
    # Each fact names the transcript of the step that measured it.
    assert set(new["from"]) == set(new["facts"])
    g = manifest.load().groups[0].name       # read from g-1-R.csv
    assert new["from"][f"{g}.1.1024.ratio"] == f"evidence/gpu-h200-{g}.txt"
    assert new["from"]["run.sm_80.1024.ratio"] == (
        "evidence/gpu-h200-run-sm_80.txt")
    assert new["from"]["clock.min_mhz"] == "evidence/gpu-h200-*.csv"
    assert all(glob.glob(os.path.join(REPO, f)) for f in new["from"].values())
    os.remove(os.path.join(ev, "gpu-h200-sass.txt"))
    p = run([sys.executable, "-m", "tools.gpu.gpu_facts", ev])
    assert p.returncode == 1 and "gpu-h200-sass.txt" in p.stderr


# ---- the plots: drawn from the facts alone ----------------------------------
PLOT_FILES = [n + end for n in ("gflops", "residency", "stages")
              for end in (".svg", "-narrow.svg", ".values.tsv")]


def plot(tmp_path, facts, env=None, cwd=None):
    """tools/plots/plot.py on facts (a gathered FACTS.json) from a folder
    with no evidence/; returns (CompletedProcess, {file: bytes})."""
    out = tmp_path / "plots"
    cwd = cwd or tmp_path / "cwd"
    cwd.mkdir(parents=True, exist_ok=True)
    p = run([sys.executable, "-B", "-m", "tools.plots.plot", str(facts),
             str(out)], cwd=str(cwd), env={**(env or os.environ),
                                           "PYTHONPATH": REPO})
    return p, {f: (out / f).read_bytes() for f in PLOT_FILES
               if (out / f).exists()}


@pytest.fixture(scope="module")
def real_facts(tmp_path_factory):
    """The committed evidence gathered with the real schema: (path, facts
    as {name: text})."""
    d = tmp_path_factory.mktemp("facts")
    p, out, doc = gather_real(d, os.path.join(REPO, "evidence"))
    assert p.returncode == 0, p.stderr
    return out, {k: v["text"] for k, v in doc["facts"].items()}


@pytest.fixture(scope="module")
def clean_plots(tmp_path_factory, real_facts):
    """plot.py's files from real_facts, run with an empty HOME, no MPL*
    variable, and no evidence/ in reach."""
    d = tmp_path_factory.mktemp("plots")
    (d / "home").mkdir()
    p, got = plot(d, real_facts[0], env={
        k: v for k, v in {**os.environ, "HOME": str(d / "home")}.items()
        if not k.startswith("MPL") and k != "MATPLOTLIBRC"})
    assert p.returncode == 0 and p.stderr == "", p.stderr
    assert sorted(got) == sorted(PLOT_FILES)
    return got


def test_plotted_values_are_the_facts(real_facts, clean_plots):
    """Every number plot.py draws (NAME.values.tsv) is the page's fact for
    that point, read from FACTS.json with no evidence/ in reach: no second
    median. A row per size, residency and depth that the facts hold."""
    facts, got = real_facts[1], clean_plots
    num = lambda name: float(facts[name].replace(",", "").removesuffix("%"))

    def table(name):
        head, *rows = got[name + ".values.tsv"].decode().splitlines()
        return head.split("\t"), [r.split("\t") for r in rows]

    head, rows = table("gflops")
    sizes = {m.group(2) for k in facts for m in [re.fullmatch(
        r"(run\.sm_80|blocked)\.(\d+)\.piped_gflops", k)] if m}
    assert [r[0] for r in rows] == sorted(sizes, key=int)
    for n, *cells in rows:
        want = [f"run.sm_80.{n}.sync_gflops", f"run.sm_80.{n}.piped_gflops",
                f"blocked.{n}.sync_gflops", f"blocked.{n}.piped_gflops"]
        want.append(next((w for w in (f"run.sm_80.{n}.cublas_gflops",
                                      f"blocked.{n}.cublas_gflops")
                          if w in facts), "none"))
        assert cells == [f"{num(w):.12g}" if w in facts else "?"
                         for w in want], (n, head)
    head, rows = table("residency")
    assert [r[0] for r in rows] == [facts[f"residency.{s}.blocks_per_sm"]
                                    for s in ("1", "2", "natural")]
    for s, (_, *cells) in zip(("1", "2", "natural"), rows):
        assert [float(c) for c in cells] == [
            num(f"{stem}.{s}.{n}.{k}") for n in (2048, 4096)
            for stem in ("residency", THREAD_SCOPE)
            for k in ("gain", "gain_min", "gain_max")], s
    head, rows = table("stages")
    assert [r[0] for r in rows] == [
        str(d) for d in manifest.load().depths.exercise]
    for d, *cells in rows:
        assert [float(c) for c in cells] == [
            num(f"stages.{d}.2048.{k}") for k in (
                "gain", "gain_min", "gain_max")] + [
            num(f"exercise.stages{d}.smem")], d
    title = f"FP32 GEMM on {facts['gpu.name']}, -arch=sm_80 build"
    assert title.encode() in got["gflops.svg"]


def test_plots_ignore_user_settings(tmp_path, real_facts, clean_plots):
    """A matplotlibrc in ~/.config/matplotlib, in MPLCONFIGDIR, in
    MATPLOTLIBRC and in the working folder (fonts, decimal comma, grid,
    colours, backend) and MPLBACKEND leave every file byte for byte as
    it was; the same settings do change a plain matplotlib."""
    home, cwd = tmp_path / "home", tmp_path / "cwd2"
    for d in (home / ".config" / "matplotlib", home / "mplconfig", cwd):
        d.mkdir(parents=True)
        shutil.copy(os.path.join(FIXTURES, "matplotlibrc"), d)
    env = {**os.environ, "HOME": str(home), "MPLBACKEND": "pdf",
           "XDG_CONFIG_HOME": str(home / ".config"), "LC_ALL": "C.UTF-8",
           "MPLCONFIGDIR": str(home / "mplconfig"),
           "MATPLOTLIBRC": str(cwd / "matplotlibrc")}
    plain = run([sys.executable, "-c", "import matplotlib as m; print(m."
                 "rcParams['font.size'], m.get_backend())"], env=env,
                cwd=str(cwd))
    assert plain.stdout.split() == ["21.0", "pdf"], plain.stderr
    p, got = plot(tmp_path, real_facts[0], env=env, cwd=cwd)
    assert p.returncode == 0, p.stderr
    assert sorted(got) == sorted(PLOT_FILES)
    assert [f for f in PLOT_FILES if got[f] != clean_plots[f]] == []


def test_plots_without_gpu_facts(tmp_path):
    """With no GPU facts each drawing is a placeholder, with a warning, and
    the values are empty; with a fact missing, exit 1 naming it, nothing
    rewritten; without matplotlib, exit 1 naming the package, nothing
    written."""
    (tmp_path / "none").mkdir()
    _, out, _ = gather_real(tmp_path, str(tmp_path / "none"))
    p, got = plot(tmp_path, out)
    assert p.returncode == 0 and "warning" in p.stderr, p.stderr
    assert sorted(got) == sorted(PLOT_FILES)
    assert all(b"Not yet measured" in got[f] for f in got if ".svg" in f)
    assert all(got[f] == b"" for f in got if f.endswith(".tsv"))
    bad = tmp_path / "bad.json"
    bad.write_text('{"facts": {"gpu.name": {"text": "GPU"}}}')
    p, kept = plot(tmp_path, bad)
    assert p.returncode == 1 and "no fact like" in p.stderr, p.stderr
    assert kept == got
    fake = tmp_path / "fake" / "matplotlib"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("raise ImportError('no matplotlib')\n")
    p = run([sys.executable, "-B", "-m", "tools.plots.plot", out,
             str(tmp_path / "none-drawn")], env={
                 **os.environ, "PYTHONPATH": f"{fake.parent}:{REPO}"})
    assert p.returncode == 1 and "python3-matplotlib" in p.stderr
    assert not (tmp_path / "none-drawn").exists()


def test_gains_and_cited_facts(tmp_path):
    """A gain is the time saved in percent (no "-0.0"); cited.tsv's lines
    are NAME<TAB>VALUE<TAB>SOURCE, and a bad line is named."""
    assert [derive.gain(r) for r in (0.9, 1.1, 1.0004)] == pytest.approx(
        [10.0, -10.0, 0.0])
    assert derive.cited()["cited.day44.pct_cublas"][0] == 67.7
    bad = tmp_path / "cited.tsv"
    bad.write_text("# comment\ncited.x\tnot-a-number\tsomewhere\n")
    with pytest.raises(ValueError, match=r"cited\.tsv:2: 'not-a-number'"):
        derive.cited(str(bad))
    bad.write_text("cited.x\t1.0\n")
    with pytest.raises(ValueError, match=r"cited\.tsv:1: expected"):
        derive.cited(str(bad))


# ---- the lab notes' facts (tools/gpu/lab_facts.py, evidence/<lab.dir>) ----
LAB = os.path.join(REPO, "evidence", manifest.load().lab.dir)
LAB_FIX = os.path.join(FIXTURES, "lab")


def test_lab_facts_reproduce_the_committed_file():
    """lab_facts on the committed lab folder gives the committed facts
    file, with the values read from it unrounded, each fact's source a
    file (or a glob of them) that is there."""
    meta, facts = lab_facts.facts_for(LAB, root=REPO)
    sources = facts.sources(os.path.dirname(LAB))
    assert {"meta": meta, "facts": facts, "from": sources} == json.loads(
        litlib.read_text(LAB + ".facts.json"))
    lab = f"evidence/{os.path.basename(LAB)}/"
    assert sources["lab.cublas.kit.pedantic.4096.ms"] == (
        lab + "kit/" + lab_facts.KIT_CSV)          # a median over processes
    assert sources["lab.seed.sync_ms"] == lab + "seed.txt"
    assert sources["lab.lds.l4x4a.lanes4"] == lab + "src/lds_bench.cu"
    assert sources["lab.loops.commit_only_when_fetched.model_depth"] == (
        "tests/test_exercise.py")
    assert all(glob.glob(os.path.join(REPO, f)) for f in sources.values())
    assert meta["kind"] == "gpu" and meta["date"] == "2026-12-02T00:20:42Z"
    assert facts["lab.cublas.kit.pedantic.4096.ms"] == 2.69952
    assert facts["lab.depths.orders"] == "3<2<4 3<2<4 3<2<4 3<2<4"
    assert facts["lab.lds.16.m16.wf"] == 4.0
    assert facts["lab.lds.l4x4a.lanes4"] == 1
    assert facts["lab.loops.commit_only_when_fetched.s3.gpu"] == "missed"
    assert facts["lab.loops.commit_only_when_fetched.model_depth"] == 3


def test_lab_readers_on_fixture_lines():
    """The depth, seed and loop readers on a few evidence lines
    (tests/fixtures/lab): medians, each round's order, the seed's printed
    interval, the loop tokens and "not run" for a missing transcript."""
    m, facts = manifest.load(), lab_facts.Sourced()
    lab_facts.depth_facts(LAB_FIX, m, facts)
    assert facts["lab.depths.orders"] == "3<2<4 2<3<4"
    assert facts["lab.depths.rounds"] == 2
    assert (facts["lab.depths.3.ratio_min"],
            facts["lab.depths.3.ratio_max"]) == (0.956, 0.962)
    assert facts["lab.depths.2.piped_ms"] == pytest.approx(0.53955)
    lab_facts.seed_facts(LAB_FIX, m, facts)
    assert facts["lab.seed.piped_ms_lo"] == pytest.approx(0.5355)
    assert facts["lab.seed.piped_ms_hi"] == pytest.approx(0.5375)
    assert facts["lab.seed.rounds"] == 2
    assert (facts["lab.seed.lesson.piped_ms_min"],
            facts["lab.seed.lesson.piped_ms_max"]) == (0.541, 0.542)
    lab_facts.loop_facts(LAB_FIX, m, facts, root=REPO)
    assert [facts[f"lab.loops.{k}.gpu"] for k in (
        "wait_plus_one.s2", "no_barrier.s2", "commit_only_when_fetched.s3",
        "barrier_before_wait.s2")] == ["wrong result", "source check",
                                       "missed", "not run"]
    assert facts["lab.loops.good.passed"] is True
    assert facts["lab.loops.wait_plus_one.model_depth"] == 2


def test_lab_reader_errors(tmp_path):
    """A transcript without its exit status or whose status and FAIL lines
    disagree, or a round without one of the depths, is an error naming the
    file or folder."""
    m = manifest.load()
    shutil.copytree(LAB_FIX, tmp_path / "lab")
    d = str(tmp_path / "lab")
    bad = tmp_path / "lab" / "ex-no-barrier-s2.txt"
    for text in ("FAIL your loop x\n", "PASS x\n# exit status: 2\n",
                 "FAIL your loop x\n# exit status: 0\n"):
        bad.write_text(text)
        with pytest.raises(lab_facts.EvidenceError,
                           match="ex-no-barrier-s2"):
            lab_facts.loop_facts(d, m, lab_facts.Sourced(), root=REPO)
    os.remove(os.path.join(d, "depths-4-2.csv"))
    with pytest.raises(lab_facts.EvidenceError, match="lacks a depth"):
        lab_facts.depth_facts(d, m, lab_facts.Sourced())


def code_pages(tmp_path, m):
    """The CUDA view of tests/fixtures/ncu-lines.txt per depth in tmp_path
    as gpu-x: the last depth's other registers, the others' 10 fewer
    samples each; returns the fixture's text."""
    page = litlib.read_text(os.path.join(FIXTURES, "ncu-lines.txt"))
    for i, s in enumerate(m.depths.exercise):
        (tmp_path / f"gpu-x-ncu-lines-{s}.txt").write_text(
            page.replace("R1, R8", "R2, R8") if s == m.depths.exercise[-1]
            else page.replace('"30","0","1","500"', f'"{30 - 10 * i}",'
                              '"0","1","500"'))
    return page


def test_wait_facts_give_each_phase_test_to_its_wait(tmp_path):
    """Each SYNCS.PHASECHK counts for the wait (producer_acquire or
    consumer_wait) whose own instructions precede it most closely; tests per
    warp and K-slice are all of a wait's tests over its first one's, and its
    retry share the samples on the later tests over all (each address once).
    Per depth, the page's samples and those in each warp state of
    CODE_STALLS, summed over the kernel; depths grouped by their inner
    products (FFMA, LDS in the .nw's lines) and ordered by each count.
    A wait with no test, a test whose barrier offset says the other wait, or
    a page without an inner product is an error naming the file."""
    m = manifest.load()
    page, samples = code_pages(tmp_path, m), 150   # 0x10 counted once
    facts, b = gpu_facts.Sourced(), "ncu.basic.piped.waits.s%d." % (
        m.depths.exercise[-1])
    gpu_facts.wait_facts(str(tmp_path / "gpu-x"), facts, m)
    c = f"ncu.basic.piped.code.s{m.depths.exercise[-1]}."
    assert facts[c + "samples"] == samples
    assert (facts[c + "not_selected"], facts[c + "dispatch"],
            facts[c + "short_sb"]) == (7 + 6, 5 + 4, 9)    # "-" is 0
    assert facts[c + "per_warp_slice"] == (
        100 + 100 + 150 + 100 + 100 + 10 + 200 + 500 + 500) / 100
    *alike, other = map(str, m.depths.exercise)
    assert facts["ncu.basic.piped.code.inner_groups"] == (
        "=".join(alike) + " " + other)
    # derive.py orders the depths by these samples (a tie keeps their order)
    assert derive.order({d: facts[f"ncu.basic.piped.code.s{d}.samples"]
                         for d in m.depths.exercise}) == "<".join(
        alike[:0:-1] + alike[:1] + [other])
    assert facts[b + "acquire.tests"] == 2.5
    assert facts[b + "consumer.tests"] == 1.1
    assert facts[b + "acquire.retry_share"] == 100 * 40 / samples
    assert facts[b + "consumer.retry_share"] == 100 * 10 / samples
    assert facts["ncu.basic.piped.waits.acquire.most"] == 2.5
    assert facts["ncu.basic.piped.waits.consumer.most"] == 1.1
    assert facts["ncu.basic.piped.waits.consumer.repeats"] == 10 * len(
        m.depths.exercise)    # summed over the depths
    last = tmp_path / f"gpu-x-ncu-lines-{m.depths.exercise[-1]}.txt"
    for text, said in (
            (re.sub(r'^"281",.*\n.*\n', "", page, flags=re.M),   # no wait
             r"ncu-lines-\d\.txt: the phase test .*R2\+URZ"),
            (page.replace("[R2+URZ]", "[R2+URZ+0x8]"),
             "offset says the other wait"),
            (page.replace("PHASECHK", "X"),
             r"no phase test of wait_parity\(__consumed"),
            (page.replace("/src/day74.nw", "/src/lesson.cu"),
             "no inner product")):
        last.write_text(text)
        with pytest.raises(gpu_facts.EvidenceError, match=said):
            gpu_facts.wait_facts(str(tmp_path / "gpu-x"),
                                 gpu_facts.Sourced(), m)


def test_lane_units_read_the_pattern_switch():
    """pattern()'s cases as lanes' word indices: C's / on whole numbers,
    q and w, the default after the last case; other names refused."""
    got = lab_facts.lane_units(
        "constexpr int pattern(int p, int lane)\n{\n    switch (p) {\n"
        "    case 0: return lane / 4;\n    case 1: return 2 * q + w % 4;\n"
        "    default: return (lane % 8) ^ (lane / 8);\n    }\n}\n")
    assert got[0][:9] == [0, 0, 0, 0, 1, 1, 1, 1, 2]
    assert got[1][8:13] == [2, 3, 4, 5, 2]
    assert got[2][8:10] == [1, 0]
    with pytest.raises(lab_facts.EvidenceError, match="cannot read"):
        lab_facts.lane_units("constexpr int pattern(\ncase 0: return "
                             "lane.__class__;\n}\n")


def test_depth_code_and_depth_helpers(tmp_path):
    """The swept kernel files' inner products grouped by digest per build,
    lettered, their IMAD.HI in the depths' order, where each equals the
    lesson's, where the lesson's builds agree and where its default build
    matches the profile; a missing line or an inner product of another
    size is an error."""
    m = manifest.load()
    d = m.depths.exercise
    lesson, other = [k.name for k in m.kernels if k.swept][:2]
    sha = {lesson: ["a", "b", "a"], other: ["c", "c", "a"]}
    lines = [f"{b} {k} {s} FFMA+LDS 288 sha256 {sha[k][i]} plain "
             f"p{sha[k][i]}{b == 'jit' and i == 1} IMAD.HI "
             f"{int(s == d[1] and k == lesson)}"
             for k in (lesson, other) for i, s in enumerate(d)
             for b in ("sm_90", "jit")]
    path = tmp_path / "x-depth-code.txt"
    path.write_text("# stamp\n\n" + "\n".join(lines) + "\n\nEqual...\n")
    profile = {f"ncu.basic.piped.code.s{s}.inner_sha": f"p{x}False"
               for s, x in zip(d, sha[lesson])}
    facts = gpu_facts.Sourced(profile)
    gpu_facts.depth_code_facts(str(tmp_path / "x"), facts, m)
    for b in ("native", "stages"):
        c = f"{b}.code."
        assert {k: v for k, v in facts.items() if k.startswith(c)
                and not k.startswith("stages.code.like_")} == {
            f"{c}{lesson}.inner_groups": f"{d[0]}={d[2]} {d[1]}",
            f"{c}{lesson}.imad_hi": "0 1 0",
            **{f"{c}{lesson}.s{s}.inner": x
               for s, x in zip(d, "ABA")},
            f"{c}{other}.inner_groups": f"{d[0]}={d[1]} {d[2]}",
            **{f"{c}{other}.s{s}.inner": x for s, x in zip(d, "CCA")},
            f"{c}{other}.imad_hi": "0 0 0",
            f"{c}{other}.like_lesson": str(d[2])}
    assert facts["stages.code.like_native"] == " ".join(map(str, d))
    assert facts["stages.code.like_profile"] == f"{d[0]} {d[2]}"
    assert gpu_facts.digest(["FFMA R1", "LDS R2"]) == hashlib.sha256(
        b"FFMA R1\nLDS R2\n").hexdigest()[:16]
    for bad in (lines[:-1], lines[:-1] + [lines[-1].replace("288", "287")]):
        path.write_text("\n".join(bad) + "\n")
        with pytest.raises(gpu_facts.EvidenceError, match="depth-code"):
            gpu_facts.depth_code_facts(str(tmp_path / "x"),
                                       gpu_facts.Sourced(profile), m)


def test_lab_verdicts_follow_the_numbers():
    """From the committed lab facts: one changed wavefront count fails the
    rule, one round out of order makes the order unstable, a default mode
    faster beyond the ranges in one run gives mixed."""
    _, raw = lab_facts.facts_for(LAB, root=REPO)
    gpu = json.loads(litlib.read_text(os.path.join(
        REPO, "evidence", "gpu-h200.facts.json")))["facts"]

    def verdicts(**change):
        facts = {k: gather.Fact(v, [], False) for k, v in
                 {**gpu, **raw, **change}.items()}
        out = derive.derive(facts, [])
        return {k[8:]: v[0] for k, v in out.items()
                if k[8:] in ("lds_rule", "depth_order", "cublas_mode")}
    assert verdicts() == {"lds_rule": "held", "depth_order": "stable",
                          "cublas_mode": "pedantic faster or level"}
    got = verdicts(**{"lab.lds.16.d4.wf": 4.0,
                      "lab.depths.orders": "3<2<4 2<3<4",
                      "lab.cublas.kit2.default.4096.ms_min": 2.5,
                      "lab.cublas.kit2.default.4096.ms_max": 2.6})
    assert got == {"lds_rule": "failed", "depth_order": "unstable",
                   "cublas_mode": "mixed"}
