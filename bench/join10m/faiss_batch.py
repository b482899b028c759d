#!/usr/bin/python3
"""FAISS side of the 10M kNN-join benchmark (bench/join10m/run.sh).

faiss_batch.py BASE.fvecs CENTROIDS.fvecs LISTS.i32 NQ GT.ivecs EVERY K KIND:NPROBE[,KIND:NPROBE...]

Builds each KIND (flat, sq8) on exactly a ParqDB index's lists (bench/faiss_ivf.py build with
--list-ids: fixed centroids, flat quantizer, row i added to list LISTS[i]), then searches the
first NQ rows of BASE as one batch — one `search` call, faiss.omp_get_max_threads() threads
(set OMP_NUM_THREADS) — and prints wall seconds, process CPU seconds, queries per wall second,
peak RSS and recall@K over the sampled queries 0, EVERY, 2·EVERY, … against GT (their exact
answers, bench/groundtruth). Run it with the FAISS peer on PYTHONPATH (../shared/peers).
"""
import os, resource, sys, time
import numpy as np
import faiss

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import faiss_ivf  # noqa: E402


def main():
    base, cents, lists, nq, gt, every, k, runs = sys.argv[1:9]
    nq, every, k = int(nq), int(every), int(k)
    gt = faiss_ivf.ivecs(gt)[:, :k]
    nlist = faiss_ivf.fvecs(cents).shape[0]
    by_kind = {}
    for run in runs.split(","):
        kind, p = run.split(":")
        by_kind.setdefault(kind, []).append(int(p))
    for kind, nprobes in by_kind.items():
        idx, m = faiss_ivf.build(base, nlist, kind, cents, 200000, "flat", lists)
        q = faiss_ivf.rows(m, slice(0, nq))
        for p in nprobes:
            idx.nprobe = p
            t0, c0 = time.time(), time.process_time()
            _, ids = idx.search(q, k)  # the whole batch in one call
            dt, dc = time.time() - t0, time.process_time() - c0
            sample = ids[::every][:gt.shape[0]]
            rec = np.mean([len(set(sample[j]) & set(gt[j])) / k for j in range(sample.shape[0])])
            print(f"faiss {faiss.__version__} {kind} nlist={nlist} nprobe={p} threads={faiss.omp_get_max_threads()} queries={nq} "
                  f"wall={dt:.1f}s cpu={dc:.1f}s qps={nq / dt:.0f} recall@{k}={rec:.4f} (sample {sample.shape[0]}) "
                  f"maxrss={resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024}MB", flush=True)
        del idx, m


if __name__ == "__main__":
    main()
