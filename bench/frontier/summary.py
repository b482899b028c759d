#!/usr/bin/python3
"""Summarises a bench/frontier/run.sh results folder: for each data set, target recall@10 (0.95,
0.99), mode and thread count, each engine's fastest setting that reaches the target, and the
ratios of issue 29's goals: best ParqDB ÷ best FAISS (goal ≥ 1.0×, stretch 1.5×), ParqDB
`source` ÷ IVF-Flat Panorama (≥ 1.0×) and ÷ IVF-Flat (≥ 1.5×). Standard library only.

    summary.py RESULTS_DIR

Figures: with one thread, queries per CPU-second (ParqDB qps_1t_cpu for single queries,
qps_nt_cpu for the batch; FAISS qps_cpu); with two, queries per wall-clock second (single
queries: ParqDB qps_nt_single, that many callers of Search at once; FAISS as many Python threads).
"""
import glob, json, os, re, sys

TARGETS = (0.95, 0.99)
ORDER = ("fashion", "glove", "text", "m10m")
FAISS_KINDS = ("flat", "panorama", "sq8", "pqfs", "pqfsr", "rabitqfs", "hnsw")
NAMES = {"flat": "IVF-Flat", "panorama": "IVF-Flat Panorama", "sq8": "IVF-SQ8", "pqfs": "IVF-PQfs + RFlat",
         "pqfsr": "IVF-PQfsr + RFlat",
         "rabitqfs": "IVF-RaBitQfs + RFlat", "hnsw": "HNSW32"}


def lines(path):
    for line in open(path):
        line = line.strip()
        if line.startswith("{"):
            yield json.loads(line)


def parqdb_rows(path, threads, mode):
    rows = []
    for r in lines(path):
        if r.get("recall_target"):
            continue
        if mode == "single" and threads > 1:
            q = r.get("qps_nt_single")
            if not q:
                continue
        elif mode == "single":
            q = r.get("qps_1t_cpu") or r["qps_1t"]
        elif threads == 1:
            q = r.get("qps_nt_cpu") or r["qps_nt"]
        else:
            q = r["qps_nt"]
        setting = f"nprobe {r['nprobe']}" + (f", refine {r['refine']}" if r["refine"] else "")
        rows.append((r["recall"], q, setting))
    return rows


def faiss_rows(path, threads, mode):
    by = {}
    for r in lines(path):
        if r["mode"] != mode:
            continue
        q = r["qps_cpu"] if threads == 1 else r["qps"]
        if "ef" in r:
            setting = f"ef {r['ef']}"
        else:
            setting = f"nprobe {r['nprobe']}" + (f", k_factor {r['k_factor']}" if "k_factor" in r else "")
        by.setdefault(r["kind"], []).append((r["recall"], q, setting))
    return by


def best(rows, t):
    ok = [r for r in rows if r[0] >= t]
    return max(ok, key=lambda r: r[1]) if ok else None


def fmt(r):
    return f"{r[2]}: {r[0]:.4f}, **{r[1]:,.0f}**" if r else "never"


def fmt_kind(fa, k, t):
    """The kind's cell: its best setting, "never", or "not run" (no such kind in the results)."""
    return fmt(best(fa[k], t)) if k in fa else "not run"


def ratio(a, b, goal):
    if not a or not b:
        return "—"
    x = a[1] / b[1]
    return f"**{x:.2f}×** {'met' if x >= goal else 'NOT met'}"


def main(d):
    sets = sorted({os.path.basename(f).split("-")[0] for f in glob.glob(os.path.join(d, "*-t*.jsonl"))},
                  key=lambda s: ORDER.index(s) if s in ORDER else 9)
    print("| set | target | mode, threads | ParqDB best | ParqDB `source` | "
          + " | ".join(NAMES[k] for k in FAISS_KINDS)
          + " | best ParqDB ÷ best FAISS (≥ 1.0×) | `source` ÷ Panorama (≥ 1.0×) | `source` ÷ IVF-Flat (≥ 1.5×) |")
    print("|---|---:|---|---|---|" + "---|" * len(FAISS_KINDS) + "---:|---:|---:|")
    for s in sets:
        threads = sorted({int(re.search(r"-t(\d+)\.jsonl$", f)[1]) for f in glob.glob(os.path.join(d, f"{s}-*-t*.jsonl"))})
        for t in TARGETS:
            for th in threads:
                for mode in ("batch", "single"):
                    p = lambda n: os.path.join(d, f"{s}-{n}-t{th}.jsonl")
                    if not os.path.exists(p("faiss")):
                        continue
                    fa = faiss_rows(p("faiss"), th, mode)
                    if not fa:
                        continue
                    lv = parqdb_rows(p("lvq8"), th, mode) if os.path.exists(p("lvq8")) else []
                    so = parqdb_rows(p("source"), th, mode) if os.path.exists(p("source")) else []
                    bl, bs = best(lv, t), best(so, t)
                    bp = max((x for x in (bl, bs) if x), key=lambda r: r[1], default=None)
                    bf = {k: best(fa.get(k, []), t) for k in FAISS_KINDS}
                    top = max((x for x in bf.values() if x), key=lambda r: r[1], default=None)
                    print(f"| {s} | {t} | {mode}, {th} | {fmt(bp)} | {fmt(bs)} | "
                          + " | ".join(fmt_kind(fa, k, t) for k in FAISS_KINDS)
                          + f" | {ratio(bp, top, 1.0)} | {ratio(bs, bf['panorama'], 1.0)} | {ratio(bs, bf['flat'], 1.5)} |")
    print()
    print("| set | FAISS index | bytes per row | build s (wall) | build CPU-s |")
    print("|---|---|---:|---:|---:|")
    for s in sets:
        seen = set()
        for f in sorted(glob.glob(os.path.join(d, f"{s}-faiss-t*.jsonl"))):
            for r in lines(f):
                if r["kind"] not in seen:
                    seen.add(r["kind"])
                    fixed = " (ParqDB's lists)" if r.get("lists") == "fixed" else ""
                    print(f"| {s} | `{r['spec']}`{fixed} | {r['bytes_per_row']:,.0f} | {r['build_s']:.1f} | "
                          f"{r.get('build_cpu_s', 0):.1f} |")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
