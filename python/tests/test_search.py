"""Searches from Python answer what the CLI answers for the same queries."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from conftest import cli_json, QUERIES


def same(got, want):
    """Python rows equal CLI rows: keys, columns and distances."""
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert [r["word"] for r in g] == [r["word"] for r in w]
        assert g == w


def test_by_vector_batch(cli, glove_wh, ix, queries):
    want = cli_json(cli, glove_wh, "words", "--queries", str(QUERIES), "-k", "7", "--nprobe", "12")
    r = ix.search(queries, k=7, nprobe=12)
    same(r.to_list(), want)
    assert r.distances.shape == (100, 7) and r.distances.dtype == np.float32
    assert np.array_equal(r.distances, np.array([[h["_distance"] for h in q] for q in want], dtype=np.float32))
    assert list(r.keys[3]) == [h["word"] for h in want[3]]
    df = r.to_pandas()
    assert list(df.columns) == ["_query", "word", "rank", "embedding", "_distance"]
    assert len(df) == 700 and df["_query"].tolist()[:8] == [0] * 7 + [1]


def test_by_one_vector_float64(cli, glove_wh, ix, queries):
    q = queries[5].astype(np.float64)
    want = cli_json(cli, glove_wh, "words", "--vector", "[" + ",".join(repr(float(x)) for x in queries[5]) + "]",
                    "--refine", "2", "--columns", "word")
    r = ix.search(q, refine=2, columns=["word"])
    same([r.to_list()], want)
    assert r.distances.shape == (10,)
    assert list(r.to_pandas().columns) == ["word", "_distance"]


def test_by_key(cli, glove_wh, ix):
    want = cli_json(cli, glove_wh, "words", "--near-key", "king", "-k", "5")
    r = ix.search_key("king", k=5)
    same([r.to_list()], want)
    assert r.keys[0] == "king"


def test_where(cli, glove_wh, ix, queries):
    where = "rank > 1000 AND word LIKE 'p%'"
    want = cli_json(cli, glove_wh, "words", "--queries", str(QUERIES), "--where", where, "--columns", "word,rank")
    r = ix.search(queries, where=where, columns=["word", "rank"])
    same(r.to_list(), want)
    assert all(h["rank"] > 1000 and h["word"].startswith("p") for q in r.to_list() for h in q)


def test_recall(cli, glove_wh, ix, queries):
    want = cli_json(cli, glove_wh, "words", "--queries", str(QUERIES), "--recall", "0.9")
    r = ix.search(queries, recall=0.9)
    same(r.to_list(), want)
    assert r.recall(ix.exact(queries)) >= 0.85


def test_zero_copy_input_is_not_modified(ix, queries):
    q = np.ascontiguousarray(queries[:4])
    before = q.copy()
    ix.search(q)
    assert np.array_equal(q, before)
    # a strided view (not C-contiguous) is copied and gives the same answer
    wide = np.zeros((4, 100), dtype=np.float32)
    wide[:, ::2] = q
    assert np.array_equal(ix.search(wide[:, ::2]).distances, ix.search(q).distances)


def test_four_threads(ix, queries):
    want = [ix.search(queries[i::4], k=5).to_list() for i in range(4)]
    got = [None] * 4
    errors = []

    def work(i):
        try:
            for _ in range(20):
                got[i] = ix.search(queries[i::4], k=5).to_list()
                assert got[i] == want[i]
                for j in range(i, 100, 4):
                    assert ix.search(queries[j], k=5).to_list() == want[i][(j - i) // 4]
        except BaseException as e:  # reported below
            errors.append(e)

    ts = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not errors, errors
    assert got == want


def test_bench(ix, queries):
    df = ix.bench(queries, nprobe=[1, 64])
    assert list(df.columns) == ["nprobe", "refine", "queries", "seconds", "cpu_seconds", "qps", "recall"]
    assert df["recall"].iloc[1] >= df["recall"].iloc[0] and df["recall"].iloc[1] > 0.9


def test_describe_history(ix):
    d = ix.describe()
    assert d["name"] == "words" and d["snapshot"]["snapshot-id"] == ix.snapshot_id
    assert [c["name"] for c in d["source_columns"]] == ["word", "rank", "embedding"]
    h = ix.history()
    assert h["snapshot-id"].tolist() == [1] and h["current"].tolist() == [True]
