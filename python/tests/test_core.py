"""The C path of a single-vector search (parqdb/_core.c): the same answers
as the Python path and as a batch, errors raised as from the library,
hostile arguments refused without a crash, and every Results' handle
released however it is dropped."""

from __future__ import annotations

import ctypes
import gc
import inspect
import weakref

import numpy as np
import pytest

import parqdb
from parqdb import _core, _lib


def test_single_equals_batch_row(ix, queries):
    """Each query alone (the C path, options parsed by the first) answers
    what its row of the batch answers."""
    batch = ix.search(queries, k=6, nprobe=10, columns=["word"])
    for i, q in enumerate(queries):
        r = ix.search(q, k=6, nprobe=10, columns=["word"])
        assert r.single and r.distances.dtype == np.float32
        assert np.array_equal(r.distances, batch.distances[i])
        assert list(r.keys) == list(batch.keys[i])
        assert r.to_list() == batch.to_list()[i]


@pytest.mark.parametrize("convert", [
    lambda q: q.astype(np.float64),            # converted
    lambda q: list(map(float, q)),              # a list
    lambda q: np.repeat(q, 2)[::2],             # strided: copied
    lambda q: q.reshape(1, -1)[0],              # a view of a 2-D array
])
def test_inputs_the_c_path_does_not_take(ix, queries, convert):
    want = ix.search(queries[3], k=5, columns=("word",))
    got = ix.search(convert(queries[3]), k=5, columns=("word",))
    assert np.allclose(got.distances, want.distances, rtol=0, atol=1e-6)
    assert list(got.keys) == list(want.keys)


def test_arguments_that_equal_the_cached_ones(ix, queries):
    """k given as a numpy integer or columns as a tuple find the options a
    plain int and a list registered, and answer alike."""
    want = ix.search(queries[7], k=4, columns=["word"]).to_list()
    assert ix.search(queries[7], k=np.int64(4), columns=["word"]).to_list() == want
    assert ix.search(queries[7], k=4, columns=("word",)).to_list() == want


def test_memo_of_the_last_options(ix, queries):
    """The C path remembers the last call's options: a columns list changed
    in place, or other arguments, are new options; so are the options
    after Index._opts released every handle (257 option sets), which it
    only may because it drops the memo first."""
    cols = ["word"]
    a = ix.search(queries[2], k=3, columns=cols)
    assert ix.search(queries[2], k=3, columns=cols).to_list() == a.to_list()
    cols.append("rank")  # the same list, other columns
    b = ix.search(queries[2], k=3, columns=cols)
    assert set(b.to_list()[0]) == {"word", "rank", "_distance"}
    cols[:] = ["rank"]
    c = ix.search(queries[2], k=3, columns=cols)
    assert set(c.to_list()[0]) == {"rank", "_distance"}
    assert list(c.keys) == list(a.keys)
    assert ix.search(queries[2], k=4, columns=cols).keys.shape == (4,)
    memo_cols = ["word"]
    want = ix.search(queries[5], k=3, nprobe=9, columns=memo_cols).to_list()
    for nprobe in range(1, 300):  # more option sets than an Index keeps: all released
        ix.search(queries[0], k=1, nprobe=nprobe, columns=["word"])
        ix.search(queries[5], k=3, nprobe=9, columns=memo_cols)  # the memo, each time
    assert ix.search(queries[5], k=3, nprobe=9, columns=memo_cols).to_list() == want


@pytest.mark.parametrize("q, cls, text", [
    (np.full(50, np.nan, dtype=np.float32), parqdb.InvalidVector, "vector[0] = NaN"),
    (np.ones(49, dtype=np.float32), parqdb.WrongDimension, "has dimension 50"),
    (np.zeros(50, dtype=np.float32), parqdb.InvalidVector, "all zeros"),
])
def test_errors_from_the_c_path(ix, q, cls, text):
    ix.search(np.ones(50, dtype=np.float32), k=3)  # the options are parsed: the next calls run in C
    handles = parqdb.open_handles()
    for _ in range(2):
        with pytest.raises(cls) as e:
            ix.search(q, k=3)
        assert text in e.value.message
    assert parqdb.open_handles() == handles  # the error handles are released too


@pytest.mark.parametrize("args", [
    (None, None, None, None, None, None),
    ("ix", 1, [1.0] * 50, 1, 10, None),
    ("ix", 1, np.ones(50), 1, 10, None),                  # float64
    ("ix", 1, np.ones((2, 50), dtype=np.float32), 1, 10, None),
    ("ix", 1, np.ones(50, dtype=np.float32), "1", 10, None),
])
def test_search_vector_refuses_bad_arguments(args):
    with pytest.raises(TypeError):
        _core.search_vector(*args)


def test_search_vector_bad_k(ix):
    opt = ix._opts(10, None, 0, None, None, None, None)
    for k in (0, -1, 2**40):
        with pytest.raises((ValueError, OverflowError)):
            _core.search_vector(ix, ix._h, np.ones(50, dtype=np.float32), opt, k, None)
    # another k than the options' sizes the buffer wrong: the library refuses it
    for k in (3, 11):
        with pytest.raises(parqdb.BadQuery, match=f"a distance buffer for k = {k}, and options of k = 10"):
            _core.search_vector(ix, ix._h, np.ones(50, dtype=np.float32), opt, k, None)
    assert len(_core.search_vector(ix, ix._h, np.ones(50, dtype=np.float32), opt, 10, None).distances) == 10
    # the same check guards the batch and key calls of the C API
    dist, counts, res, err = np.empty((2, 3), np.float32), np.empty(2, np.int32), ctypes.c_int64(), ctypes.c_void_p()
    qs = np.ones((2, 50), dtype=np.float32)
    assert _lib.lib.parqdb_search(ix._h, 0, qs.ctypes.data, 2, 50, opt, dist.ctypes.data, 3, counts.ctypes.data,
                                  ctypes.byref(res), ctypes.byref(err)) == 1
    with pytest.raises(parqdb.BadQuery, match="a distance buffer for k = 3, and options of k = 10"):
        _lib.raise_error(err)
    assert _lib.lib.parqdb_search_key(ix._h, 0, b'"king"', opt, dist.ctypes.data, 3, counts.ctypes.data,
                                      ctypes.byref(res), ctypes.byref(err)) == 1
    with pytest.raises(parqdb.BadQuery, match="a distance buffer for k = 3"):
        _lib.raise_error(err)


@pytest.mark.parametrize("call, text", [
    (lambda ix, q: ix.search(), "missing required argument 'q'"),
    (lambda ix, q: ix.search(q, kk=3), "unexpected keyword argument 'kk'"),
    (lambda ix, q: ix.search(q, 3, k=3), "multiple values for argument 'k'"),
    (lambda ix, q: ix.search(q=q, q2=q), "unexpected keyword argument 'q2'"),
    (lambda ix, q: ix.search(q, 1, 2, 3, 4, 5, 6, 7, 8), "at most 8 arguments"),
])
def test_search_arguments(ix, queries, call, text):
    with pytest.raises(TypeError, match=text):
        call(ix, queries[0])


def test_search_by_position_and_keyword(ix, queries):
    """Every parameter by position or by name, in any order, answers alike."""
    q = queries[9]
    want = ix.search(q, k=4, nprobe=12, columns=["word"]).to_list()
    assert ix.search(q, 4, 12, 0, None, None, ["word"], None).to_list() == want
    assert ix.search(columns=["word"], nprobe=12, k=4, q=q).to_list() == want
    assert ix.search(q, 4, columns=["word"], nprobe=12).to_list() == want
    sig = inspect.signature(parqdb.Index.search)
    assert list(sig.parameters) == ["self", "q", "k", "nprobe", "refine", "where", "recall", "columns", "workers"]
    assert sig.parameters["k"].default == 10 and "nearest source rows" in parqdb.Index.search.__doc__


def test_search_vector_wrong_arity():
    with pytest.raises(TypeError):
        _core.search_vector()


def test_results_constructor_checks_its_arguments():
    with pytest.raises(TypeError):
        parqdb.Results()
    with pytest.raises(TypeError):
        parqdb.Results(None, "not a handle", None, None, None)


def test_results_released_however_dropped(ix, queries):
    ix.search(queries[0])  # options parsed
    gc.collect()
    handles = parqdb.open_handles()
    kept = [ix.search(q) for q in queries]  # one query each
    kept += [ix.search(queries[:10]) for _ in range(5)]  # batches
    assert parqdb.open_handles() == handles + 105
    refs = [weakref.ref(r) for r in kept]
    kept[0].close()
    kept[0].close()  # idempotent
    with pytest.raises(parqdb.BadQuery):
        kept[0].to_list()
    # a Results in a reference cycle is freed by the collector
    kept[1]._rows = [[{"self": kept[1]}]]
    del kept
    gc.collect()
    assert all(r() is None for r in refs)
    assert parqdb.open_handles() == handles


def test_results_fields(ix, queries):
    r = ix.search(queries[2], k=3, columns=["word"])
    assert r._ix is ix and r._h > 0 and r._counts is None and r._columns == ("word",)
    assert r._buf.shape == (4,) and int(r._buf[-1]) == len(r) == 3
    assert r._buf is r._buf  # made from the inline floats once
    # past the inline floats (k + 1 > 32) the distances are a numpy array
    # from the start; both give the CLI's distances
    big = ix.search(queries[2], k=40, columns=["word"])
    assert big._buf.shape == (41,) and len(big) == 40
    assert np.array_equal(big.distances[:3], r.distances)
    with pytest.raises(AttributeError):
        r.anything = 1  # no __dict__: the fields are fixed
