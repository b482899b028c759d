#!/usr/bin/python3
"""FAISS peer for ParqDB's benchmarks (Debian python3-faiss, both cores).

build:  faiss_ivf.py build BASE.fvecs NLIST [sq8|flat]
        trains and adds, like `parqdb index create` (train + add, no search)
search: faiss_ivf.py search BASE.fvecs QUERIES.fvecs NLIST KIND K NPROBE[,NPROBE...] [--threads T]
            [--centroids C.fvecs [--train-sample N] [--quantizer hnsw|flat] [--list-ids L.i32]]
            [--max-queries Q] [--gt GT.ivecs] [--refine R[,R...]]
        trains + adds (not timed), then times the queries one thread, prints recall@K and QPS per nprobe
        --centroids: use these NLIST leaf centroids (e.g. a ParqDB index's, bench/centroids) instead of
        training k-means; --quantizer hnsw (default: HNSW M 32, efSearch 128, so that add needs no
        BLAS brute force over NLIST) or flat (exact routing; add is a BLAS brute force, fine with
        OpenBLAS). SQ8 is trained on N rows taken evenly through BASE (default 100000).
        BASE is memory-mapped and added in chunks of 1M rows: peak memory is the index, not 2x BASE.
        --list-ids: add row i to list L[i] (N little-endian int32, e.g. bench/listids' output: the
        lists a ParqDB index assigned) instead of routing it through the quantizer
        (IndexIVF.add_core with precomputed list ids): both engines then hold the same lists, and
        add costs only the SQ8 encoding. Queries are still routed by the quantizer.
        --gt: the exact answer (ids = BASE row numbers, e.g. bench/groundtruth's output); without it
        the exact answer is FAISS's own brute force over BASE.
        --refine R: also search with IndexRefineFlat (exact float32 re-rank of the best R*K, the
        analogue of parqdb --refine R; holds a copy of BASE in memory); 0 means none.
"""
import resource, sys, time
import numpy as np
import faiss


def fvecs(path):
    a = np.fromfile(path, dtype=np.int32)
    d = a[0]
    return a.reshape(-1, d + 1)[:, 1:].copy().view(np.float32)


def fvecs_map(path):
    """BASE as a memory-mapped (n, d+1) int32 array; rows()[i:j] copies rows i..j as float32."""
    d = int(np.fromfile(path, dtype=np.int32, count=1)[0])
    return np.memmap(path, dtype=np.int32, mode="r").reshape(-1, d + 1)


def rows(m, idx):
    return np.ascontiguousarray(m[idx, 1:]).view(np.float32)


def ivecs(path):
    a = np.fromfile(path, dtype=np.int32)
    return a.reshape(-1, a[0] + 1)[:, 1:]


def make(d, nlist, kind):
    q = faiss.IndexFlatL2(d)
    if kind == "sq8":
        return faiss.IndexIVFScalarQuantizer(q, d, nlist, faiss.ScalarQuantizer.QT_8bit, faiss.METRIC_L2), q
    return faiss.IndexIVFFlat(q, d, nlist, faiss.METRIC_L2), q


def make_fixed(cents, kind, quantizer="hnsw"):
    d = cents.shape[1]
    if quantizer == "flat":
        q = faiss.IndexFlatL2(d)
        q.add(cents)
    else:
        q = faiss.IndexHNSWFlat(d, 32)
        q.hnsw.efConstruction = 128
        q.add(cents)
        q.hnsw.efSearch = 128
    if kind == "sq8":
        idx = faiss.IndexIVFScalarQuantizer(q, d, cents.shape[0], faiss.ScalarQuantizer.QT_8bit, faiss.METRIC_L2)
    else:
        idx = faiss.IndexIVFFlat(q, d, cents.shape[0], faiss.METRIC_L2)
    return idx, q


_kept = []


def build(base, nlist, kind, centroids=None, train_sample=100000, quantizer="hnsw", list_ids=None):
    if centroids is not None:
        m = fvecs_map(base)
        n = m.shape[0]
        cents = fvecs(centroids)
        assert cents.shape[0] == nlist, f"{cents.shape[0]} centroids for nlist {nlist}"
        idx, _q = make_fixed(cents, kind, quantizer)
        t0, c0 = time.time(), time.process_time()
        idx.train(rows(m, np.linspace(0, n - 1, min(train_sample, n)).astype(np.int64)))
        t1, c1 = time.time(), time.process_time()
        lists = None
        if list_ids is not None:
            lists = np.fromfile(list_ids, dtype="<i4")
            assert lists.shape[0] == n, f"{list_ids}: {lists.shape[0]} list ids for {n} rows"
            assert lists.min() >= 0 and lists.max() < nlist, f"{list_ids}: list ids outside 0..{nlist - 1}"
        for i in range(0, n, 1 << 20):
            j = min(i + (1 << 20), n)
            xs = rows(m, slice(i, j))
            if lists is None:
                idx.add(xs)
            else:
                ids = np.arange(i, j, dtype=np.int64)
                li = lists[i:j].astype(np.int64)
                idx.add_core(j - i, faiss.swig_ptr(xs), faiss.swig_ptr(ids), faiss.swig_ptr(li))
        t2, c2 = time.time(), time.process_time()
        how = f"lists from {list_ids}" if lists is not None else "lists by the quantizer"
        print(f"faiss build {kind} n={n} d={m.shape[1] - 1} nlist={nlist} fixed centroids, {quantizer} quantizer, {how} threads={faiss.omp_get_max_threads()} "
              f"train={t1-t0:.3f}s add={t2-t1:.3f}s (cpu {c1-c0:.1f}s, {c2-c1:.1f}s) maxrss={resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024}MB",
              file=sys.stderr, flush=True)
        _kept.append(_q)  # the quantizer lives as long as the index (FAISS 1.15 refuses new attributes)
        return idx, m
    x = fvecs(base)
    idx, _q = make(x.shape[1], nlist, kind)
    t0 = time.time()
    idx.train(x)
    t1 = time.time()
    idx.add(x)
    t2 = time.time()
    print(f"faiss build {kind} n={x.shape[0]} d={x.shape[1]} nlist={nlist} threads={faiss.omp_get_max_threads()} train={t1-t0:.3f}s add={t2-t1:.3f}s", file=sys.stderr)
    return idx, x


def search(base, queries, nlist, kind, k, nprobes, threads, gt, centroids=None, train_sample=100000, max_queries=0,
           quantizer="hnsw", refines=(0,), list_ids=None):
    idx, x = build(base, nlist, kind, centroids, train_sample, quantizer, list_ids)
    q = fvecs(queries)
    if gt is not None:
        q = q[:gt.shape[0]]
    if max_queries:
        q = q[:max_queries]
    if gt is None:
        if x.shape[1] != q.shape[1]:  # memory-mapped BASE (with its length column)
            x = rows(x, slice(0, x.shape[0]))
        flat = faiss.IndexFlatL2(x.shape[1])
        flat.add(x)
        _, gt = flat.search(q, k)
    gt = gt[:, :k]
    searchers = []
    for r in refines:
        if r <= 0:
            searchers.append((0, idx))
            continue
        if not hasattr(search, "_flat"):
            flat = faiss.IndexFlatL2(q.shape[1])
            n = x.shape[0]
            for i in range(0, n, 1 << 20):  # the exact store, filled once
                flat.add(rows(x, slice(i, min(i + (1 << 20), n))) if x.shape[1] != q.shape[1] else x[i:i + (1 << 20)])
            search._flat = flat
        ref = faiss.IndexRefine(idx, search._flat)
        ref.k_factor = r
        searchers.append((r, ref))
    faiss.omp_set_num_threads(threads)
    for r, s in searchers:
        for p in nprobes:
            idx.nprobe = p
            t0, c0 = time.time(), time.thread_time()
            # one query at a time, like an online service
            res = np.empty((q.shape[0], k), dtype=np.int64)
            for i in range(q.shape[0]):
                _, I = s.search(q[i:i + 1], k)
                res[i] = I[0]
            dt, dc = time.time() - t0, time.thread_time() - c0
            rec = np.mean([len(set(res[i]) & set(gt[i])) / k for i in range(q.shape[0])])
            # qps_cpu divides by this thread's CPU time (one thread only): it
            # stays meaningful on a busy machine, like parqdb bench's qps_1t_cpu
            print(f"faiss {kind} nlist={nlist} nprobe={p} refine={r} threads={threads} recall@{k}={rec:.4f} qps={q.shape[0]/dt:.1f} qps_cpu={q.shape[0]/dc:.1f}", flush=True)


if __name__ == "__main__":
    a = sys.argv[1:]
    if a and a[0] == "build":
        build(a[1], int(a[2]), a[3] if len(a) > 3 else "sq8")
    elif a and a[0] == "search":
        opt = {"--threads": 1, "--centroids": None, "--train-sample": 100000, "--max-queries": 0,
               "--quantizer": "hnsw", "--gt": None, "--refine": "0", "--list-ids": None}
        for name in list(opt):
            if name in a:
                i = a.index(name); opt[name] = a[i + 1]; del a[i:i + 2]
        if opt["--quantizer"] not in ("hnsw", "flat"):
            sys.exit(f"--quantizer {opt['--quantizer']!r}: want hnsw or flat")
        if opt["--list-ids"] and not opt["--centroids"]:
            sys.exit("--list-ids needs --centroids (the lists' centroids)")
        gt = ivecs(opt["--gt"]) if opt["--gt"] else None
        search(a[1], a[2], int(a[3]), a[4], int(a[5]), [int(p) for p in a[6].split(",")], int(opt["--threads"]), gt,
               opt["--centroids"], int(opt["--train-sample"]), int(opt["--max-queries"]),
               opt["--quantizer"], [int(r) for r in opt["--refine"].split(",")], opt["--list-ids"])
    else:
        print(__doc__)
        sys.exit(2)
