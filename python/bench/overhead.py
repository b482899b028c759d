"""The cost of calling ParqDB from Python, against the same Go calls.

    make python-lib && PYTHONPATH=python /usr/bin/python3 python/bench/overhead.py

builds the GloVe sample's index (examples/glove, cosine, the defaults) in a
temporary warehouse and times, on the same open index in the same process,
rounds of

  single: each of the 100 queries of queries-100.fvecs searched alone, from
          Python (Index.search on 1-D arrays made before the clock starts,
          a Results per query) and from Go
          (query.Index.Search in a loop: parqdb_bench_loop);
  batch:  the 100 queries tiled to a 1,000 × 50 float32 numpy batch, one
          Index.search from Python, one query.Index.SearchBatch from Go,

alternating Python and Go so that a busy machine slows both alike. It
prints per-query microseconds and queries per second by wall clock and by
process CPU time (user + system, all threads: time.process_time and
getrusage), the median of the rounds, the Python/Go ratio of those medians
and the median of the rounds' own ratios (paired); docs/python.md has runs. Options: k 10, nprobe 8 (--nprobe), the key column only (columns=["word"],
as a caller that joins by key) or every column (--all-columns). With
--go-per-batch the Go side makes one call from Python per batch (its own
clock around each), to see what entering Go for each batch costs.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import parqdb
from parqdb import _lib

REPO = Path(__file__).resolve().parents[2]


def read_fvecs(path: Path) -> np.ndarray:
    raw = np.fromfile(path, dtype=np.int32)
    d = int(raw[0])
    return raw.reshape(-1, d + 1)[:, 1:].copy().view(np.float32)


def go_loop(ix: parqdb.Index, qs: np.ndarray, opts: bytes, batch: bool, reps: int, calls: int = 1):
    """Runs reps repetitions in Go, in calls calls from Python (reps a call
    when calls is 1, one a call when it is reps), returning the wall and CPU
    seconds measured by Go around its loops, summed."""
    wall, cpu, err = ctypes.c_double(), ctypes.c_double(), ctypes.c_void_p()
    tw = tc = 0.0
    for _ in range(calls):
        if _lib.lib.parqdb_bench_loop(ix._h, qs.ctypes.data, qs.shape[0], qs.shape[1], opts, int(batch),
                                      reps // calls, ctypes.byref(wall), ctypes.byref(cpu), ctypes.byref(err)) != 0:
            _lib.raise_error(err)
        tw, tc = tw + wall.value, tc + cpu.value
    return tw, tc


def py_loop(ix: parqdb.Index, qs: np.ndarray, columns, nprobe: int, batch: bool, reps: int):
    views = list(qs)  # the 1-D queries made once, as the Go loop's views are
    c0, t0 = time.process_time(), time.perf_counter()
    for _ in range(reps):
        if batch:
            ix.search(qs, k=10, nprobe=nprobe, columns=columns)
        else:
            for q in views:
                ix.search(q, k=10, nprobe=nprobe, columns=columns)
    return time.perf_counter() - t0, time.process_time() - c0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--reps", type=int, default=20, help="passes over the queries per round (single)")
    ap.add_argument("--batch-reps", type=int, default=5, help="batches per round")
    ap.add_argument("--all-columns", action="store_true", help="join every source column (default: the key)")
    ap.add_argument("--nprobe", type=int, default=8)
    ap.add_argument("--go-per-batch", action="store_true",
                    help="the Go side enters Go once per batch, as Python does (default: once per round)")
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    a = ap.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        db = parqdb.connect(tmp + "/wh", catalog="")
        db.create_index("words", str(REPO / "examples/glove/glove-10k.parquet"), "embedding", "word",
                        metric="cosine", progress=False)
        ix = db.index("words")
        q100 = read_fvecs(REPO / "examples/glove/queries-100.fvecs")
        q1000 = np.ascontiguousarray(np.tile(q100, (10, 1)))
        columns = None if a.all_columns else ["word"]
        opts = ix._opts(10, a.nprobe, 0, None, None, columns, None)  # a handle
        out = {"columns": "all" if a.all_columns else "key", "nprobe": a.nprobe, "rounds": a.rounds}
        for mode, qs, reps in (("single", q100, a.reps), ("batch", q1000, a.batch_reps)):
            batch = mode == "batch"
            py_loop(ix, qs, columns, a.nprobe, batch, 2)  # warm: caches, vector store, allocator
            go_loop(ix, qs, opts, batch, 2)
            py, go = [], []
            for _ in range(a.rounds):
                py.append(py_loop(ix, qs, columns, a.nprobe, batch, reps))
                go.append(go_loop(ix, qs, opts, batch, reps, reps if batch and a.go_per_batch else 1))
            n = len(qs) * reps
            res = {}
            for clock, i in (("wall", 0), ("cpu", 1)):
                p = statistics.median(x[i] for x in py) / n
                g = statistics.median(x[i] for x in go) / n
                # paired: the median of each round's Python/Go ratio (the two
                # sides of a round ran back to back, on the same machine load)
                paired = statistics.median(x[i] / y[i] for x, y in zip(py, go))
                res[clock] = {"python_us": p * 1e6, "go_us": g * 1e6, "python_qps": 1 / p, "go_qps": 1 / g,
                              "ratio": p / g, "paired": paired}
            out[mode] = res
        ix.close()
        db.close()
    if a.json:
        print(json.dumps(out))
        return
    print(f"GloVe sample, k 10, nprobe {a.nprobe}, columns: {out['columns']}; median of {a.rounds} rounds")
    print(f"{'':8} {'clock':5} {'python µs/q':>12} {'go µs/q':>9} {'python q/s':>11} {'go q/s':>9} {'python/go':>10} {'paired':>7}")
    for mode in ("single", "batch"):
        for clock in ("wall", "cpu"):
            r = out[mode][clock]
            print(f"{mode:8} {clock:5} {r['python_us']:12.2f} {r['go_us']:9.2f} {r['python_qps']:11.0f} "
                  f"{r['go_qps']:9.0f} {r['ratio']:10.3f} {r['paired']:7.3f}")


if __name__ == "__main__":
    sys.exit(main())
