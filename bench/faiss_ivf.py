#!/usr/bin/python3
"""FAISS peer for ParqDB's benchmarks (Debian python3-faiss, both cores).

build:  faiss_ivf.py build BASE.fvecs NLIST [sq8|flat]
        trains and adds, like `parqdb index create` (train + add, no search)
search: faiss_ivf.py search BASE.fvecs QUERIES.fvecs NLIST KIND K NPROBE[,NPROBE...] [--threads T]
            [--centroids C.fvecs [--train-sample N]] [--max-queries Q]
        trains + adds (not timed), then times the queries one thread, prints recall@K and QPS per nprobe
        --centroids: use these NLIST leaf centroids (e.g. a ParqDB index's, bench/centroids) instead of
        training k-means, behind an HNSW quantizer (M 32, efSearch 128) so that add does not need a
        BLAS brute force over NLIST (10M rows); SQ8 is trained on the first N rows (default 100000).
        The exact answer is FAISS's own brute force over BASE.
"""
import sys, time
import numpy as np
import faiss


def fvecs(path):
    a = np.fromfile(path, dtype=np.int32)
    d = a[0]
    return a.reshape(-1, d + 1)[:, 1:].copy().view(np.float32)


def make(d, nlist, kind):
    q = faiss.IndexFlatL2(d)
    if kind == "sq8":
        return faiss.IndexIVFScalarQuantizer(q, d, nlist, faiss.ScalarQuantizer.QT_8bit, faiss.METRIC_L2), q
    return faiss.IndexIVFFlat(q, d, nlist, faiss.METRIC_L2), q


def make_fixed(cents, kind):
    d = cents.shape[1]
    q = faiss.IndexHNSWFlat(d, 32)
    q.hnsw.efConstruction = 128
    q.add(cents)
    q.hnsw.efSearch = 128
    if kind == "sq8":
        idx = faiss.IndexIVFScalarQuantizer(q, d, cents.shape[0], faiss.ScalarQuantizer.QT_8bit, faiss.METRIC_L2)
    else:
        idx = faiss.IndexIVFFlat(q, d, cents.shape[0], faiss.METRIC_L2)
    return idx, q


def build(base, nlist, kind, centroids=None, train_sample=100000):
    x = fvecs(base)
    if centroids is not None:
        cents = fvecs(centroids)
        assert cents.shape[0] == nlist, f"{cents.shape[0]} centroids for nlist {nlist}"
        idx, _q = make_fixed(cents, kind)
        t0 = time.time()
        idx.train(x[:train_sample])
        t1 = time.time()
        idx.add(x)
        t2 = time.time()
        print(f"faiss build {kind} n={x.shape[0]} d={x.shape[1]} nlist={nlist} fixed centroids, hnsw quantizer threads={faiss.omp_get_max_threads()} train={t1-t0:.3f}s add={t2-t1:.3f}s", file=sys.stderr)
        idx._keep = _q
        return idx, x
    idx, _q = make(x.shape[1], nlist, kind)
    t0 = time.time()
    idx.train(x)
    t1 = time.time()
    idx.add(x)
    t2 = time.time()
    print(f"faiss build {kind} n={x.shape[0]} d={x.shape[1]} nlist={nlist} threads={faiss.omp_get_max_threads()} train={t1-t0:.3f}s add={t2-t1:.3f}s", file=sys.stderr)
    return idx, x


def search(base, queries, nlist, kind, k, nprobes, threads, gt, centroids=None, train_sample=100000, max_queries=0):
    idx, x = build(base, nlist, kind, centroids, train_sample)
    q = fvecs(queries)
    if max_queries:
        q = q[:max_queries]
    if gt is None:
        flat = faiss.IndexFlatL2(x.shape[1])
        flat.add(x)
        _, gt = flat.search(q, k)
    faiss.omp_set_num_threads(threads)
    for p in nprobes:
        idx.nprobe = p
        t0, c0 = time.time(), time.thread_time()
        # one query at a time, like an online service
        res = np.empty((q.shape[0], k), dtype=np.int64)
        for i in range(q.shape[0]):
            _, I = idx.search(q[i:i + 1], k)
            res[i] = I[0]
        dt, dc = time.time() - t0, time.thread_time() - c0
        rec = np.mean([len(set(res[i]) & set(gt[i])) / k for i in range(q.shape[0])])
        # qps_cpu divides by this thread's CPU time (one thread only): it
        # stays meaningful on a busy machine, like parqdb bench's qps_1t_cpu
        print(f"faiss {kind} nlist={nlist} nprobe={p} threads={threads} recall@{k}={rec:.4f} qps={q.shape[0]/dt:.1f} qps_cpu={q.shape[0]/dc:.1f}")


if __name__ == "__main__":
    a = sys.argv[1:]
    if a and a[0] == "build":
        build(a[1], int(a[2]), a[3] if len(a) > 3 else "sq8")
    elif a and a[0] == "search":
        opt = {"--threads": 1, "--centroids": None, "--train-sample": 100000, "--max-queries": 0}
        for name in list(opt):
            if name in a:
                i = a.index(name); opt[name] = a[i + 1]; del a[i:i + 2]
        search(a[1], a[2], int(a[3]), a[4], int(a[5]), [int(p) for p in a[6].split(",")], int(opt["--threads"]), None,
               opt["--centroids"], int(opt["--train-sample"]), int(opt["--max-queries"]))
    else:
        print(__doc__)
        sys.exit(2)
