"""summary.py OUT: the experiment's table from its CSVs and transcripts;
prints 'best: NAME', the wide candidate with the highest median
piped_pct_cublas over its processes."""
import csv, glob, os, re, statistics, sys

out = sys.argv[1]


def rows(path):
    with open(path) as f:
        return list(csv.DictReader(l for l in f if not l.startswith("#")))


print("part 1: N = 2048, per process (lesson harness: median of 20 timed "
      "launches; seed harness: mean of 10)")
p1 = {}
for f in sorted(glob.glob(f"{out}/p1/*.txt")):
    v, r = os.path.basename(f)[:-4].rsplit("-", 1)
    t = open(f).read()
    if v.startswith("seed"):
        m = re.search(r"N=2048\s+sync ([\d.]+) ms.*piped ([\d.]+) ms", t)
        if m:
            p1.setdefault(v, []).append((float(m[1]), float(m[2])))
    elif os.path.exists(f[:-4] + ".csv"):
        x = rows(f[:-4] + ".csv")[0]
        p1.setdefault(v, []).append((float(x["sync_ms_median"]),
                                     float(x["piped_ms_median"])))
for v, xs in p1.items():
    s = [a for a, _ in xs]
    p = [b for _, b in xs]
    print(f"{v:14s} sync {min(s):.4f}-{max(s):.4f}  piped "
          f"{min(p):.4f}-{max(p):.4f}  piped/sync "
          + " ".join(f"{b / a:.4f}" for a, b in xs))
print()
print("part 2: N = 4096, wide piped % of cuBLAS (pedantic) per process")
best, bv = None, -1
for v in sorted({os.path.basename(f).rsplit("-", 1)[0]
                 for f in glob.glob(f"{out}/p2/*.csv")}):
    xs = [rows(f)[0] for f in sorted(glob.glob(f"{out}/p2/{v}-*.csv"))]
    pct = [float(x["piped_pct_cublas"]) for x in xs]
    ok = all(x["correct"] == "1" and x["identical"] == "1" for x in xs)
    med = statistics.median(pct)
    print(f"{v:16s} median {med:6.2f} %  range {min(pct):.2f}-{max(pct):.2f}"
          f"  piped ms {statistics.median(float(x['piped_ms_median']) for x in xs):.4f}"
          f"  cuBLAS ms {statistics.median(float(x['cublas_ms_median']) for x in xs):.4f}"
          f"  checked {ok}  processes {len(xs)}")
    if ok and med > bv and v != "lesson90":
        best, bv = v, med
print(f"best: {best}")
