#!/usr/bin/python3
"""FAISS peer for ParqDB's filtered-search benchmark (Debian python3-faiss).

faiss_filter.py BASE.fvecs QUERIES.fvecs U.i32 NLIST K THRESH[,THRESH...] NPROBE[,NPROBE...]

Builds IVF-SQ8 with NLIST lists (not timed), then for each threshold t
searches the rows with u < t (U.i32: one little-endian int32 per base row,
as bench/filterdata writes it) with an ID selector
(SearchParametersIVF(sel=IDSelectorBitmap, nprobe=...)), one query at a
time on one thread, and prints recall@K against brute force over the
matching rows and QPS per nprobe: wall clock (qps) and per CPU-second of
the searching thread (qps_cpu, time.thread_time(); comparable with
parqdb bench's qps_1t_cpu on a loaded machine).
"""
import sys, time
import numpy as np
import faiss


def fvecs(path):
    a = np.fromfile(path, dtype=np.int32)
    d = a[0]
    return a.reshape(-1, d + 1)[:, 1:].copy().view(np.float32)


def main(base, queries, upath, nlist, k, thresholds, nprobes):
    x = fvecs(base)
    q = fvecs(queries)
    u = np.fromfile(upath, dtype="<i4")
    assert len(u) == x.shape[0]
    d = x.shape[1]
    quant = faiss.IndexFlatL2(d)
    idx = faiss.IndexIVFScalarQuantizer(quant, d, nlist, faiss.ScalarQuantizer.QT_8bit, faiss.METRIC_L2)
    idx.train(x)
    idx.add(x)
    faiss.omp_set_num_threads(1)
    for t in thresholds:
        ids = np.nonzero(u < t)[0]
        # exact filtered ground truth: brute force over the matching rows
        flat = faiss.IndexFlatL2(d)
        flat.add(x[ids])
        kk = min(k, len(ids))
        _, gi = flat.search(q, kk)
        gt = ids[gi]
        mask = np.zeros(x.shape[0], dtype=bool)
        mask[ids] = True
        bits = np.packbits(mask, bitorder="little")
        sel = faiss.IDSelectorBitmap(x.shape[0], faiss.swig_ptr(bits))
        for p in nprobes:
            params = faiss.SearchParametersIVF(sel=sel, nprobe=p)
            res = np.empty((q.shape[0], k), dtype=np.int64)
            t0, c0 = time.time(), time.thread_time()
            for i in range(q.shape[0]):
                _, I = idx.search(q[i:i + 1], k, params=params)
                res[i] = I[0]
            dt, dc = time.time() - t0, time.thread_time() - c0
            rec = np.mean([len(set(res[i][res[i] >= 0]) & set(gt[i])) / kk for i in range(q.shape[0])])
            print(f"faiss sq8 nlist={nlist} where u<{t} rows={len(ids)} nprobe={p} recall@{k}={rec:.4f} qps={q.shape[0]/dt:.1f} qps_cpu={q.shape[0]/dc:.1f}", flush=True)


if __name__ == "__main__":
    a = sys.argv[1:]
    if len(a) != 7:
        print(__doc__)
        sys.exit(2)
    main(a[0], a[1], a[2], int(a[3]), int(a[4]), [int(t) for t in a[5].split(",")], [int(p) for p in a[6].split(",")])
