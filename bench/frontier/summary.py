#!/usr/bin/python3
"""Summarises a bench/frontier/run.sh results folder: for each data set and target recall@10
(0.95, 0.99), each engine's fastest setting that reaches it, and ParqDB's ratios against FAISS
with issue 14's goals (lvq8 ≥ 20× IVF-SQ8 where SQ8 reaches the target, lvq8 ≥ 3.5× IVF-Flat,
source ≥ 3.5× IVF-Flat). Standard library only.

    summary.py RESULTS_DIR
"""
import json, os, re, sys

TARGETS = (0.95, 0.99)
FAISS = re.compile(r"nprobe=(\d+) refine=(\d+) .*recall@\d+=([0-9.]+) qps=([0-9.]+) qps_cpu=([0-9.]+)")


def parqdb_rows(path):
    rows = []
    for line in open(path):
        line = line.strip()
        if line.startswith("{"):
            r = json.loads(line)
            if r.get("recall_target"):
                continue
            rows.append((r["recall"], r["qps_1t_cpu"], f"nprobe {r['nprobe']}, refine {r['refine']}"))
    return rows


def faiss_rows(path):
    rows = []
    for line in open(path):
        m = FAISS.search(line)
        if m:
            rows.append((float(m[3]), float(m[5]), f"nprobe {m[1]}"))
    return rows


def best(rows, t):
    ok = [r for r in rows if r[0] >= t]
    return max(ok, key=lambda r: r[1]) if ok else None


def main(d):
    sets = sorted({f.split("-")[0] for f in os.listdir(d) if f.endswith((".jsonl", ".txt"))},
                  key=lambda s: ("fashion", "glove", "text").index(s) if s in ("fashion", "glove", "text") else 9)
    print("| set | target | ParqDB lvq8(+refine) | ParqDB source | FAISS IVF-SQ8 | FAISS IVF-Flat "
          "| lvq8 ÷ SQ8 (≥ 20×) | lvq8 ÷ Flat (≥ 3.5×) | source ÷ Flat (≥ 3.5×) |")
    print("|---|---:|---|---|---|---|---:|---:|---:|")
    fmt = lambda r: f"{r[2]}: {r[0]:.4f}, {r[1]:,.0f}" if r else "never reaches it"

    def ratio(a, b, goal):
        if not a or not b:
            return "—"
        x = a[1] / b[1]
        return f"**{x:.2f}×** {'met' if x >= goal else 'NOT met'}"

    for s in sets:
        p = lambda n: os.path.join(d, f"{s}-{n}")
        eng = {}
        for name, f, parse in (("lvq8", "lvq8.jsonl", parqdb_rows), ("source", "source.jsonl", parqdb_rows),
                               ("sq8", "faiss-sq8.txt", faiss_rows), ("flat", "faiss-flat.txt", faiss_rows)):
            eng[name] = parse(p(f)) if os.path.exists(p(f)) else []
        for t in TARGETS:
            b = {k: best(v, t) for k, v in eng.items()}
            print(f"| {s} | {t} | {fmt(b['lvq8'])} | {fmt(b['source'])} | {fmt(b['sq8'])} | {fmt(b['flat'])} "
                  f"| {ratio(b['lvq8'], b['sq8'], 20)} | {ratio(b['lvq8'], b['flat'], 3.5)} | {ratio(b['source'], b['flat'], 3.5)} |")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
