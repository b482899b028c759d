#!/usr/bin/python3
"""Re-checks the recall of the ParqDB settings that bench/frontier/summary.py picks, from the output
of `parqdb search --queries` (not `bench`'s own count) against an exact answer computed here with
numpy: for each data set of a results folder, each target and mode (one thread), the fastest lvq8
and `source` settings that reach the target are searched again, each query's 10 keys mapped back
to base rows, and recall@10 is counted against the brute-force top 10 (float64 over the .fvecs the
FAISS peer read, which are the index's canonical vectors); on the 10M mixture, too large for that
here, against bench/groundtruth's exact answer (gt1k.ivecs, float64 brute force in Go). Prints a
Markdown table.

    recheck.py RESULTS_DIR PARQDB WORKDIR [TEXT_DIR]

WORKDIR is run.sh's (its wh/ warehouse, fashion/ and glove/ folders); Debian's python3-numpy.
"""
import json, os, re, subprocess, sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import summary  # noqa: E402


def fvecs(path):
    a = np.fromfile(path, dtype=np.int32)
    d = a[0]
    return a.reshape(-1, d + 1)[:, 1:].view(np.float32)


def exact_top(base, queries, k, cosine):
    """Row numbers of each query's k nearest base rows (squared L2; cosine: rows are unit)."""
    b = base.astype(np.float64)
    bn = (b * b).sum(1)
    out = []
    for lo in range(0, len(queries), 256):
        q = queries[lo:lo + 256].astype(np.float64)
        if cosine:
            q /= np.linalg.norm(q, axis=1, keepdims=True)
        d = bn[None, :] - 2 * q @ b.T
        part = np.argpartition(d, k, axis=1)[:, :k]
        for i, p in enumerate(part):
            out.append(set(p[np.argsort(d[i, p], kind="stable")].tolist()))
    return out


def search(parqdb, wh, ix, queries, nprobe, refine, key):
    cmd = [parqdb, "--warehouse", wh, "search", ix, "--queries", queries, "-k", "10",
           "--nprobe", str(nprobe), "--refine", str(refine), "--columns", key, "--format", "json"]
    res = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    out = []
    for line in res.splitlines():
        r = json.loads(line)
        out.append([h[key] for h in r["results"]])
    return out


def main(d, parqdb, work, text):
    sets = {
        "fashion": dict(base=f"{work}/fashion/fashion-train.fvecs", q=f"{work}/fashion/fashion-q1k.fvecs",
                        cosine=False, key="id"),
        "glove": dict(base=f"{work}/glove/glove-base.fvecs", q=f"{work}/glove/glove-q1k.fvecs",
                      cosine=True, key="word", keys=f"{work}/glove/glove-keys.txt"),
        "text": dict(base=f"{text}/text-base.fvecs", q=f"{text}/text-queries.fvecs", cosine=True, key="id"),
        "m10m": dict(q=f"{work}/m10m/mixture-10000000x96-queries.fvecs", gt=f"{work}/m10m/gt1k.ivecs",
                     cosine=False, key="id"),
    }
    print("| set | target | mode | index | setting | `bench` recall@10 | `parqdb search` recall@10 (exact answer) |")
    print("|---|---:|---|---|---|---:|---:|")
    for s, c in sets.items():
        if not os.path.exists(os.path.join(d, f"{s}-lvq8-t1.jsonl")) or not os.path.exists(c["q"]):
            continue
        if "gt" in c:
            g = np.fromfile(c["gt"], dtype=np.int32)
            truth = [set(r[:10].tolist()) for r in g.reshape(-1, g[0] + 1)[:, 1:]]
        else:
            truth = exact_top(fvecs(c["base"]), fvecs(c["q"]), 10, c["cosine"])
        row = None
        if "keys" in c:
            row = {}
            for i, line in enumerate(open(c["keys"], encoding="utf-8")):
                row[line.rstrip("\n")] = i
        seen = {}
        for t in summary.TARGETS:
            for mode in ("batch", "single"):
                for enc in ("lvq8", "source"):
                    b = summary.best(summary.parqdb_rows(os.path.join(d, f"{s}-{enc}-t1.jsonl"), 1, mode), t)
                    if not b:
                        continue
                    m = re.fullmatch(r"nprobe (\d+)(?:, refine (\d+))?", b[2])
                    nprobe, refine = int(m[1]), int(m[2] or 0)
                    got = seen.get((enc, nprobe, refine))
                    if got is None:
                        keys = search(parqdb, f"{work}/wh", f"{s}-{enc}", c["q"], nprobe, refine, c["key"])
                        hits = 0
                        for i, ks in enumerate(keys):
                            rows = {row[json.dumps(k, ensure_ascii=False)] if row is not None else int(k) for k in ks}
                            hits += len(rows & truth[i])
                        got = seen[(enc, nprobe, refine)] = hits / (10 * len(keys))
                    print(f"| {s} | {t} | {mode} | {s}-{enc} | {b[2]} | {b[0]:.4f} | {got:.4f} |")


if __name__ == "__main__":
    if len(sys.argv) not in (4, 5):
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4] if len(sys.argv) == 5 else "")
