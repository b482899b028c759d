"""Every error is a parqdb.Error of the class of its stable code, with the
library's message; a bad call changes nothing."""

from __future__ import annotations

import shutil

import numpy as np
import pytest

import parqdb

from conftest import GLOVE


@pytest.fixture(scope="module")
def db(glove_wh):
    with parqdb.connect(glove_wh, catalog="") as db:
        yield db


@pytest.fixture(scope="module")
def ix(db):
    with db.index("words") as ix:
        yield ix


q = np.ones(50, dtype=np.float32)


@pytest.mark.parametrize("call, cls, code, text", [
    (lambda ix: ix.search(np.ones(49)), parqdb.WrongDimension, "wrong_dimension", "has dimension 50"),
    (lambda ix: ix.search(np.full(50, np.nan)), parqdb.InvalidVector, "invalid_vector", "vector[0] = NaN"),
    (lambda ix: ix.search(np.zeros((2, 50))), parqdb.InvalidVector, "invalid_vector", "vectors[0] is all zeros"),
    (lambda ix: ix.search(np.full(50, 1e39)), parqdb.InvalidVector, "invalid_vector", "not a finite float32"),
    (lambda ix: ix.search(q, k=0), parqdb.OutOfRange, "out_of_range", "k = 0 is outside [1, 1000]"),
    (lambda ix: ix.search(q, k=1001), parqdb.OutOfRange, "out_of_range", "k = 1001"),
    (lambda ix: ix.search(q, nprobe=0), parqdb.OutOfRange, "out_of_range", "nprobe = 0"),
    (lambda ix: ix.search(q, refine=101), parqdb.OutOfRange, "out_of_range", "refine = 101"),
    (lambda ix: ix.search(q, recall=1.5), parqdb.BadQuery, "invalid_argument", "recall = 1.5 is outside (0, 1]"),
    (lambda ix: ix.search(q, recall=0.9, nprobe=3), parqdb.BadQuery, "invalid_argument", "not both"),
    (lambda ix: ix.search(q, columns=["nope"]), parqdb.UnknownColumn, "unknown_column", 'column "nope" is not in the source'),
    (lambda ix: ix.search(q, where="rank >"), parqdb.FilterError, "filter_syntax", "syntax error"),
    (lambda ix: ix.search(q, where="nope > 1"), parqdb.FilterError, "filter_unknown_column", 'no source column "nope"'),
    (lambda ix: ix.search(q, where="rank > 'a'"), parqdb.FilterError, "filter_type_mismatch", "type mismatch"),
    (lambda ix: ix.search_key("no-such-word-zz"), parqdb.KeyNotFound, "key_not_found", "key [no-such-word-zz]"),
    (lambda ix: ix.search_key(["a", "b"]), parqdb.BadQuery, "invalid_argument", "key"),
    (lambda ix: ix.expire(), parqdb.BadQuery, "invalid_argument", "retain_last"),
])
def test_search_errors(ix, call, cls, code, text):
    with pytest.raises(cls) as e:
        call(ix)
    assert e.value.code == code and text in e.value.message, e.value
    assert isinstance(e.value, parqdb.Error)


def test_catalog_errors(db, tmp_path):
    with pytest.raises(parqdb.IndexNotFound, match='no index named "wrods".*did you mean|no index named "wrods"'):
        db.index("wrods")
    with pytest.raises(parqdb.SnapshotNotFound, match="snapshot 7 is not retained"):
        db.index("words", snapshot=7)
    with pytest.raises(parqdb.BadQuery, match="invalid index name"):
        db.index("Bad Name!")
    nowhere = parqdb.connect(str(tmp_path / "nowhere"), catalog="")
    assert nowhere.indexes() == []
    with pytest.raises(parqdb.WarehouseNotFound, match="no warehouse at"):
        nowhere.index("words")
    assert not (tmp_path / "nowhere").exists()
    assert isinstance(parqdb.IndexNotFound("x"), LookupError)


def test_build_errors(tmp_path):
    wh = str(tmp_path / "wh")
    db = parqdb.connect(wh, catalog="")
    with pytest.raises(parqdb.NotFound, match="no such file"):
        db.create_index("x", str(tmp_path / "missing.parquet"), "embedding", "word", progress=False)
    with pytest.raises(parqdb.SourceInvalid, match='field "nope"'):
        db.create_index("x", str(GLOVE), "nope", "word", progress=False)
    with pytest.raises(parqdb.BadQuery, match="metric"):
        db.create_index("x", str(GLOVE), "embedding", "word", metric="manhattan", progress=False)
    assert db.indexes() == []


def build(tmp_path, src):
    db = parqdb.connect(str(tmp_path / "wh"), catalog="")
    db.create_index("w", str(src), "embedding", "word", progress=False)
    return db


def test_stale(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    shutil.copy(GLOVE, src / "a.parquet")
    db = build(tmp_path, src)
    ix = db.index("w")
    assert len(ix.search(q).distances) == 10
    (src / "a.parquet").rename(src / "b.parquet")  # the recorded file is gone
    with pytest.raises(parqdb.StaleIndex, match="a.parquet"):
        db.index("w").search(q)
    r = db.refresh("w", progress=False)
    assert r["action"] != "none"
    assert len(db.index("w").search(q).distances) == 10


def test_corrupt(tmp_path):
    db = build(tmp_path, GLOVE)
    files = sorted((tmp_path / "wh" / "indexes").rglob("*.parquet"))
    assert files
    for f in files:
        f.unlink()
    with pytest.raises(parqdb.Corrupt):
        db.index("w").search(q)
