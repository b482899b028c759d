#!/usr/bin/python3
"""FAISS side of the 10M kNN-join benchmark (bench/join10m/run.sh).

faiss_batch.py BASE.fvecs CENTROIDS.fvecs LISTS.i32 NQ GT.ivecs EVERY K KIND:NPROBE[:REFINE[:NQ]][,...]

Builds each KIND (flat, sq8) on exactly a ParqDB index's lists (bench/faiss_ivf.py build with
--list-ids: fixed centroids, flat quantizer, row i added to list LISTS[i]), then searches the
first NQ rows of BASE as one batch — one `search` call, faiss.omp_get_max_threads() threads
(set OMP_NUM_THREADS) — and prints wall seconds, process CPU seconds, queries per wall second,
peak RSS and recall@K over the sampled queries 0, EVERY, 2·EVERY, … against GT (their exact
answers, bench/groundtruth). REFINE r > 0 searches through IndexRefineFlat (an exact float32
re-rank of the best r·K, the analogue of parqdb --refine r; it holds a float32 copy of BASE); a
run's NQ searches only the first NQ queries (FAISS IVF-Flat reads 4·D bytes a row, so a full
batch of it takes long). Run it with the FAISS peer on PYTHONPATH (../shared/peers).
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
        f = run.split(":")
        by_kind.setdefault(f[0], []).append((int(f[1]), int(f[2]) if len(f) > 2 else 0, int(f[3]) if len(f) > 3 else nq))
    flat = None
    for kind, settings in by_kind.items():
        idx, m = faiss_ivf.build(base, nlist, kind, cents, 200000, "flat", lists)
        for p, r, n in settings:
            q = faiss_ivf.rows(m, slice(0, n))
            s = idx
            if r > 0:
                if flat is None:  # the exact store, filled once
                    flat = faiss.IndexFlatL2(q.shape[1])
                    for i in range(0, m.shape[0], 1 << 20):
                        flat.add(faiss_ivf.rows(m, slice(i, min(i + (1 << 20), m.shape[0]))))
                s = faiss.IndexRefine(idx, flat)
                s.k_factor = r
            idx.nprobe = p
            t0, c0 = time.time(), time.process_time()
            _, ids = s.search(q, k)  # the whole batch in one call
            dt, dc = time.time() - t0, time.process_time() - c0
            sample = ids[::every][:gt.shape[0]]
            rec = np.mean([len(set(sample[j]) & set(gt[j])) / k for j in range(sample.shape[0])])
            print(f"faiss {faiss.__version__} {kind} nlist={nlist} nprobe={p} refine={r} threads={faiss.omp_get_max_threads()} queries={n} "
                  f"wall={dt:.1f}s cpu={dc:.1f}s qps={n / dt:.0f} qps_cpu={n / dc:.0f} recall@{k}={rec:.4f} (sample {sample.shape[0]}) "
                  f"maxrss={resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024}MB", flush=True)
            del s
        del idx, m


if __name__ == "__main__":
    main()
