#!/usr/bin/python3
"""FAISS 1.15 peer for bench/frontier/run.sh: every index kind of ../shared/peers/README.md, each
swept over its search parameters, in both modes a user meets (one search call for the whole
query batch; one call per query), with T OpenMP threads (single queries with T > 1: T Python
threads calling at once, each on one OpenMP thread). One JSON line per setting on stdout.

    faiss_peer.py BASE.fvecs QUERIES.fvecs --nlist N --metric l2|cosine [--gt GT.ivecs] [-k 10]
        [--threads 1] [--kinds flat,panorama,sq8,pqfs,pqfsr,rabitqfs,hnsw] [--modes batch,single]
        [--nprobe 8,16,…] [--k-factor 1,2,4,8] [--ef 16,32,…] [--min-time 1]
        [--centroids C.fvecs --list-ids L.i32 [--train-sample 200000]] [--cache DIR]

Run it with the FAISS build of ../shared/peers on PYTHONPATH, FAISS_OPT_LEVEL set and
OPENBLAS_NUM_THREADS=1 (run.sh does). Figures: qps (wall clock) and qps_cpu (queries per
CPU-second: of the calling thread with one thread, time.thread_time; of the process with more,
time.process_time). Each timed pass is repeated until --min-time seconds have passed and the
median pass is reported, as `parqdb bench --min-time` does. recall@k is against --gt (BASE row
numbers) or, without it, FAISS's exact brute force. Cosine: vectors L2-normalised and inner
product (Panorama, l2 only in FAISS, runs L2 on the normalised vectors: the same ranking).
bytes_per_row is the serialised index (codes, ids, quantizer, the RFlat copy) over the rows.

Large sets (the 10M mixture): --centroids and --list-ids give every IVF kind a ParqDB index's
leaf centroids (bench/centroids; exact routing by a flat quantizer) and lists (bench/listids: row
i goes to list L[i]) instead of FAISS's k-means and assignment, which at 10M rows would take
hours on 2 cores; the codecs (SQ8, PQ, RaBitQ, the PCA) train on --train-sample rows taken
evenly through BASE. BASE is then memory-mapped and added a list at a time. --cache DIR writes
each built index to DIR (one folder per data set: files are named by spec) and reads it back on
the next run (the two-thread run, HNSW32 above all).
"""
import argparse, json, os, statistics, sys, threading, time
import numpy as np
import faiss


def fvecs(path):
    a = np.fromfile(path, dtype=np.int32)
    return a.reshape(-1, a[0] + 1)[:, 1:].copy().view(np.float32)


def fvecs_map(path):
    """BASE as a memory-mapped (n, d+1) int32 array (row i: its dimension, then its floats)."""
    d = int(np.fromfile(path, dtype=np.int32, count=1)[0])
    return np.memmap(path, dtype=np.int32, mode="r").reshape(-1, d + 1)


def rows(m, idx, cosine):
    x = np.ascontiguousarray(m[idx, 1:]).view(np.float32)
    if cosine:
        faiss.normalize_L2(x)
    return x


def add_by_lists(ivf, x, lists, ids):
    """Adds the rows x (ids ids) to the lists given, not those ivf's quantizer would pick: for
    each list, a one-vector quantizer holding that list's centroid under the list's number answers
    the assignment (IndexIVF.add_core corrupts the fast-scan kinds' block lists; this path is
    theirs too). Equal, on a small set, to FAISS's own add with the same assignment."""
    real = ivf.quantizer
    order = np.argsort(lists, kind="stable")
    bounds = np.searchsorted(lists[order], np.arange(ivf.nlist + 1))
    c = np.empty((1, ivf.d), dtype=np.float32)
    try:
        for l in range(ivf.nlist):
            sel = order[bounds[l]:bounds[l + 1]]
            if len(sel) == 0:
                continue
            real.reconstruct(l, c[0])
            q = faiss.IndexIDMap2(faiss.IndexFlatL2(ivf.d))
            q.add_with_ids(c, np.array([l], dtype=np.int64))
            ivf.quantizer = q
            ivf.add_with_ids(np.ascontiguousarray(x[sel]), ids[sel])
    finally:
        ivf.quantizer = real


def build_fixed(kind, spec, m, metric, base, cents, lists, sample):
    """An IVF kind on fixed centroids and lists (--centroids, --list-ids); base is the memory-
    mapped BASE. Adds a million rows at a time."""
    n, d = base.shape[0], base.shape[1] - 1
    ix = faiss.index_factory(d, spec, m)
    ivf = faiss.extract_index_ivf(ix)
    pca = faiss.downcast_VectorTransform(ix.chain.at(0)) if kind == "panorama" else None
    cosine = metric == faiss.METRIC_INNER_PRODUCT
    train = rows(base, np.linspace(0, n - 1, min(sample, n)).astype(np.int64), cosine)
    cs = cents.copy()
    if cosine:
        faiss.normalize_L2(cs)
    if pca is not None:
        pca.train(train)
        train, cs = pca.apply(train), pca.apply(cs)
    faiss.downcast_index(ivf.quantizer).add(cs)  # a trained quantizer: train() fits the codec only
    ivf.train(train)
    ix.is_trained = True
    refine = faiss.downcast_index(ix.refine_index) if "RFlat" in spec else None
    for i in range(0, n, 1 << 20):
        j = min(i + (1 << 20), n)
        x = rows(base, slice(i, j), cosine)
        if refine is not None:
            refine.add(x)
        add_by_lists(ivf, pca.apply(x) if pca is not None else x, lists[i:j].astype(np.int64),
                     np.arange(i, j, dtype=np.int64))
        print(f"faiss_peer: {spec}: {j:,} of {n:,} rows added", file=sys.stderr, flush=True)
    ix.ntotal = ivf.ntotal
    return ix


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
    "pqfsr": ("IVF{n},PQ{m}x4fsr,RFlat", "nprobe"),  # the same, codes of the residual to the centroid
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
    ap.add_argument("--kinds", default="flat,panorama,sq8,pqfs,pqfsr,rabitqfs,hnsw")
    ap.add_argument("--modes", default="batch,single")
    ap.add_argument("--nprobe", default="4,6,8,10,12,16,20,24,32,48,64,96,128")
    ap.add_argument("--k-factor", default="1,2,4,8")
    ap.add_argument("--ef", default="16,24,32,48,64,96,128,192,256,384,512")
    ap.add_argument("--min-time", type=float, default=1.0)
    ap.add_argument("--centroids")
    ap.add_argument("--list-ids")
    ap.add_argument("--train-sample", type=int, default=200000)
    ap.add_argument("--cache")
    a = ap.parse_args()
    if bool(a.centroids) != bool(a.list_ids):
        sys.exit("faiss_peer: --centroids and --list-ids go together")

    qs = fvecs(a.queries)
    if a.list_ids:
        base = fvecs_map(a.base)  # added a million rows at a time, never whole in memory
        n, d = base.shape[0], base.shape[1] - 1
        ivf_kinds = [k for k in a.kinds.split(",") if SPECS[k][1] == "nprobe"]
        cents, lists = (fvecs(a.centroids), np.fromfile(a.list_ids, dtype="<i4")) if ivf_kinds else (
            np.zeros((a.nlist, d), dtype=np.float32), np.zeros(n, dtype=np.int32))
        if cents.shape != (a.nlist, d):
            sys.exit(f"faiss_peer: {a.centroids}: {cents.shape[0]} centroids of {cents.shape[1]} dimensions, "
                     f"want {a.nlist} of {d}")
        if len(lists) != n or lists.min() < 0 or lists.max() >= a.nlist:
            sys.exit(f"faiss_peer: {a.list_ids}: {len(lists)} list ids in {lists.min()}..{lists.max()}, "
                     f"want {n} in 0..{a.nlist - 1}")
        if not a.gt:
            sys.exit("faiss_peer: --list-ids needs --gt (the exact answer)")
    else:
        base = fvecs(a.base)
        n, d = base.shape
        if a.metric == "cosine":
            faiss.normalize_L2(base)
    if a.metric == "cosine":
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
    if a.cache:
        os.makedirs(a.cache, exist_ok=True)
    for kind in a.kinds.split(","):
        spec, param = SPECS[kind]
        spec = spec.format(n=a.nlist, d=d, m=d // 2)
        m = faiss.METRIC_L2 if kind == "panorama" else metric
        cached = os.path.join(a.cache, spec.replace(",", "_") + ".faissindex") if a.cache else None
        if cached and os.path.exists(cached):
            ix = faiss.read_index(cached)
            with open(cached + ".json") as f:
                built = json.load(f)
            print(f"faiss_peer: {spec} read from {cached}", file=sys.stderr)
        else:
            w0, c0 = time.perf_counter(), time.process_time()
            try:
                if a.list_ids and param == "nprobe":
                    ix = build_fixed(kind, spec, m, metric, base, cents, lists, a.train_sample)
                else:
                    ix = faiss.index_factory(d, spec, m)
                    if a.list_ids:  # HNSW32 over the memory-mapped BASE
                        for i in range(0, n, 1 << 20):
                            ix.add(rows(base, slice(i, min(i + (1 << 20), n)), a.metric == "cosine"))
                            print(f"faiss_peer: {spec}: {min(i + (1 << 20), n):,} of {n:,} rows added "
                                  f"({time.perf_counter() - w0:.0f} s)", file=sys.stderr, flush=True)
                    else:
                        ix.train(base)
                        ix.add(base)
            except RuntimeError as e:
                print(f"faiss_peer: {spec}: {e}", file=sys.stderr)
                continue
            built = {"build_s": round(time.perf_counter() - w0, 2), "build_cpu_s": round(time.process_time() - c0, 2)}
            if cached:
                faiss.write_index(ix, cached + ".tmp")
                built["bytes"] = os.path.getsize(cached + ".tmp")
                with open(cached + ".json", "w") as f:
                    json.dump(built, f)
                os.rename(cached + ".tmp", cached)
            else:
                built["bytes"] = len(faiss.serialize_index(ix))
        info = dict(common, kind=kind, spec=spec, build_s=built["build_s"], build_cpu_s=built["build_cpu_s"],
                    bytes_per_row=round(built["bytes"] / n, 1))
        if a.list_ids and param == "nprobe":
            info["lists"] = "fixed"  # ParqDB's centroids and lists
        print(f"faiss_peer: {spec} built in {built['build_s']:.1f} s, {built['bytes'] / n:.0f} B/row", file=sys.stderr)
        if param == "ef":
            grid = [{"ef": e} for e in ints(a.ef)]
        elif kind in ("pqfs", "pqfsr", "rabitqfs"):
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
            for mode in [x for x in a.modes.split(",") if x]:  # --modes "": build (and --cache) only
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
