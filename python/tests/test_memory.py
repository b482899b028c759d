"""A long-running process does not leak: a million searches, and indexes
and connections opened and dropped, keep RSS and the Go handles flat."""

from __future__ import annotations

import gc

import numpy as np

import parqdb


def rss_mib() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096 / 2**20


def test_million_queries_flat_rss(glove_wh):
    db = parqdb.connect(glove_wh, catalog="")
    ix = db.index("words")
    qs = np.random.default_rng(1).standard_normal((1000, 50)).astype(np.float32)
    for i in range(100_000):  # warm up: caches filled, allocator settled
        ix.search(qs[i % 1000], k=1, nprobe=1, columns=["word"])
    gc.collect()
    handles = parqdb.open_handles()
    before = rss_mib()
    samples = []
    for i in range(900_000):
        r = ix.search(qs[i % 1000], k=1, nprobe=1, columns=["word"])
        if i % 100_000 == 0:
            assert r.keys.shape == (1,)
            samples.append(rss_mib())
    del r
    gc.collect()
    after = rss_mib()
    assert parqdb.open_handles() == handles
    assert after - before < 32, (before, samples, after)  # a leak of 40 bytes a query would add 34 MiB


def test_open_close_flat(glove_wh):
    qs = np.random.default_rng(2).standard_normal((16, 50)).astype(np.float32)

    def cycle(n):
        for _ in range(n):
            db = parqdb.connect(glove_wh, catalog="")
            ix = db.index("words")
            ix.search(qs).to_pandas()
            if _ % 2:
                ix.close()  # explicit close and finalizers both release
                db.close()
        gc.collect()

    # The process's caches and the Go heap grow to their working size over
    # the first few hundred cycles, then stay there, up and down with the
    # collector (by up to ~60 MiB on a busy machine): the last windows reach
    # no higher than the first but for that (a leaked index, ~3 MiB of
    # vectors and codes, would add ~300 MiB per window).
    cycle(300)
    handles = parqdb.open_handles()
    marks = [rss_mib()]
    for _ in range(3):
        cycle(100)
        marks.append(rss_mib())
    assert parqdb.open_handles() == handles
    assert max(marks[2:]) - max(marks[:2]) < 96, marks
