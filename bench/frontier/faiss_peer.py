#!/usr/bin/python3
"""FAISS 1.15 peer for bench/frontier/run.sh: every index kind of ../shared/peers/README.md, each
swept over its search parameters, in both modes a user meets (one search call for the whole
query batch; one call per query), with T OpenMP threads (single queries with T > 1: T Python
threads calling at once, each on one OpenMP thread). One JSON line per setting on stdout.

    faiss_peer.py BASE.fvecs QUERIES.fvecs --nlist N --metric l2|cosine [--gt GT.ivecs] [-k 10]
        [--threads 1] [--kinds flat,panorama,sq8,pqfs,rabitqfs,hnsw] [--modes batch,single]
        [--nprobe 8,16,…] [--k-factor 1,2,4,8] [--ef 16,32,…] [--min-time 1]

Run it with the FAISS build of ../shared/peers on PYTHONPATH, FAISS_OPT_LEVEL set and
OPENBLAS_NUM_THREADS=1 (run.sh does). Figures: qps (wall clock) and qps_cpu (queries per
CPU-second: of the calling thread with one thread, time.thread_time; of the process with more,
time.process_time). Each timed pass is repeated until --min-time seconds have passed and the
median pass is reported, as `parqdb bench --min-time` does. recall@k is against --gt (BASE row
numbers) or, without it, FAISS's exact brute force. Cosine: vectors L2-normalised and inner
product (Panorama, l2 only in FAISS, runs L2 on the normalised vectors: the same ranking).
bytes_per_row is the serialised index (codes, ids, quantizer, the RFlat copy) over the rows.
"""
import argparse, json, statistics, sys, threading, time
import numpy as np
import faiss


def fvecs(path):
    a = np.fromfile(path, dtype=np.int32)
    return a.reshape(-1, a[0] + 1)[:, 1:].copy().view(np.float32)


def ivecs(path):
    a = np.fromfile(path, dtype=np.int32)
    return a.reshape(-1, a[0] + 1)[:, 1:]


def ints(s):
    return [int(x) for x in s.split(",") if x]


SPECS = {  # kind -> (index_factory spec, parameter swept)
    "flat": ("IVF{n},Flat", "nprobe"),
    "panorama": ("PCA{d},IVF{n},FlatPanorama", "nprobe"),
    "sq8": ("IVF{n},SQ8", "nprobe"),
    "pqfs": ("IVF{n},PQ{m}x4fs,RFlat", "nprobe"),
    "rabitqfs": ("IVF{n},RaBitQfs4,RFlat", "nprobe"),
    "hnsw": ("HNSW32", "ef"),
}


def passes(fn, min_time, cpu_clock):
    """Runs fn until min_time has passed (at least once); the median pass's (wall, cpu)."""
    walls, cpus, start = [], [], time.perf_counter()
    while True:
        w0, c0 = time.perf_counter(), cpu_clock()
        fn()
        walls.append(time.perf_counter() - w0)
        cpus.append(cpu_clock() - c0)
        if time.perf_counter() - start >= min_time:
            break
    order = sorted(range(len(walls)), key=lambda i: walls[i])
    m = order[len(order) // 2]
    return walls[m], cpus[m], len(walls)


def recall(ids, gt, k):
    found = sum(len(set(ids[i, :k]) & set(gt[i, :k])) for i in range(len(ids)))
    return found / (len(ids) * k)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("base")
    ap.add_argument("queries")
    ap.add_argument("--nlist", type=int, required=True)
    ap.add_argument("--metric", choices=("l2", "cosine"), required=True)
    ap.add_argument("--gt")
    ap.add_argument("-k", type=int, default=10)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--kinds", default="flat,panorama,sq8,pqfs,rabitqfs,hnsw")
    ap.add_argument("--modes", default="batch,single")
    ap.add_argument("--nprobe", default="4,6,8,10,12,16,20,24,32,48,64,96,128")
    ap.add_argument("--k-factor", default="1,2,4,8")
    ap.add_argument("--ef", default="16,24,32,48,64,96,128,192,256,384,512")
    ap.add_argument("--min-time", type=float, default=1.0)
    a = ap.parse_args()

    base, qs = fvecs(a.base), fvecs(a.queries)
    n, d = base.shape
    if a.metric == "cosine":
        faiss.normalize_L2(base)
        faiss.normalize_L2(qs)
    metric = faiss.METRIC_INNER_PRODUCT if a.metric == "cosine" else faiss.METRIC_L2
    faiss.omp_set_num_threads(a.threads)
    if a.gt:
        gt = ivecs(a.gt)[: len(qs)]
    else:
        exact = faiss.IndexFlat(d, metric)
        exact.add(base)
        gt = exact.search(qs, a.k)[1]
    cpu_clock = time.thread_time if a.threads == 1 else time.process_time
    common = {"engine": "faiss", "version": faiss.__version__, "opt_level": faiss.get_compile_options(),
              "threads": a.threads, "n": n, "d": d, "queries": len(qs), "k": a.k}
    for kind in a.kinds.split(","):
        spec, param = SPECS[kind]
        spec = spec.format(n=a.nlist, d=d, m=d // 2)
        m = faiss.METRIC_L2 if kind == "panorama" else metric
        try:
            ix = faiss.index_factory(d, spec, m)
        except RuntimeError as e:
            print(f"faiss_peer: {spec}: {e}", file=sys.stderr)
            continue
        w0, c0 = time.perf_counter(), time.process_time()
        ix.train(base)
        ix.add(base)
        build_s, build_cpu = time.perf_counter() - w0, time.process_time() - c0
        size = len(faiss.serialize_index(ix))
        info = dict(common, kind=kind, spec=spec, build_s=round(build_s, 2), build_cpu_s=round(build_cpu, 2),
                    bytes_per_row=round(size / n, 1))
        print(f"faiss_peer: {spec} built in {build_s:.1f} s, {size / n:.0f} B/row", file=sys.stderr)
        if param == "ef":
            grid = [{"ef": e} for e in ints(a.ef)]
        elif kind in ("pqfs", "rabitqfs"):
            grid = [{"nprobe": p, "k_factor": f} for p in ints(a.nprobe) if p <= a.nlist for f in ints(a.k_factor)]
        else:
            grid = [{"nprobe": p} for p in ints(a.nprobe) if p <= a.nlist]
        for g in grid:
            if "ef" in g:
                ix.hnsw.efSearch = g["ef"]
            else:
                faiss.extract_index_ivf(ix).nprobe = g["nprobe"]
            if "k_factor" in g:
                ix.k_factor = g["k_factor"]
            for mode in a.modes.split(","):
                if mode == "batch":
                    out = {}

                    def run():
                        out["I"] = ix.search(qs, a.k)[1]
                elif a.threads == 1:
                    out = {"I": np.empty((len(qs), a.k), dtype=np.int64)}

                    def run():
                        I = out["I"]
                        for i in range(len(qs)):
                            I[i] = ix.search(qs[i:i + 1], a.k)[1][0]
                else:
                    # single queries from T callers at once (FAISS releases the GIL while it
                    # searches), each on one OpenMP thread: one query has no batch to split
                    out = {"I": np.empty((len(qs), a.k), dtype=np.int64)}

                    def caller(w):
                        faiss.omp_set_num_threads(1)  # this thread's OpenMP setting
                        I = out["I"]
                        for i in range(w, len(qs), a.threads):
                            I[i] = ix.search(qs[i:i + 1], a.k)[1][0]

                    def run():
                        ts = [threading.Thread(target=caller, args=(w,)) for w in range(a.threads)]
                        for t in ts:
                            t.start()
                        for t in ts:
                            t.join()
                run()  # warm-up
                wall, cpu, npass = passes(run, a.min_time, cpu_clock)
                r = recall(out["I"], gt, a.k)
                print(json.dumps(dict(info, mode=mode, **g, recall=round(r, 4), qps=round(len(qs) / wall, 1),
                                      qps_cpu=round(len(qs) / cpu, 1) if cpu > 0 else 0, passes=npass)), flush=True)


if __name__ == "__main__":
    main()
