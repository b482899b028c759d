"""Builds, refreshes, expiry, gc and verify from Python, checked against the CLI."""

from __future__ import annotations

import re
import shutil

import numpy as np

import parqdb
from parqdb._api import _ProgressBars

from conftest import GLOVE, QUERIES, cli_json, run_cli


def test_build_like_the_cli(cli, glove_wh, tmp_path, queries):
    wh = str(tmp_path / "wh")
    db = parqdb.connect(wh, catalog="")
    assert not (tmp_path / "wh").exists()  # connect creates nothing
    s = db.create_index("words", str(GLOVE), "embedding", "word", metric="cosine", progress=False)
    assert s["rows"] == 10000 and s["dim"] == 50 and s["encoding"] == "lvq8"
    assert db.indexes() == ["words"]
    # equal options and seed: the same index, so the same answers as the CLI's
    want = cli_json(cli, glove_wh, "words", "--queries", str(QUERIES), "--nprobe", "4")
    with db.index("words") as ix:
        assert ix.search(queries, nprobe=4).to_list() == want
        assert ix.verify()["ok"] is True
    # and the CLI reads what Python built
    assert "words" in run_cli(cli, wh, "index", "list")


def test_refresh_expire_gc(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    shutil.copy(GLOVE, src / "a.parquet")
    db = parqdb.connect(str(tmp_path / "wh"), catalog="")
    db.create_index("w", str(src), "embedding", "word", encoding="lvq4", nlist=32, progress=False)
    assert db.refresh("w", progress=False)["action"] == "none"
    ix1 = db.index("w")
    n1 = len(ix1.search_key("king", k=3))
    assert n1 == 3
    shutil.copy(GLOVE, src / "b.parquet")  # duplicate keys: refused, nothing committed
    try:
        db.refresh("w", progress=False)
    except parqdb.SourceInvalid as e:
        assert "duplicate" in e.message or "key" in e.message
    else:
        raise AssertionError("a refresh over duplicate keys succeeded")
    (src / "b.parquet").unlink()
    r = db.index("w").refresh(retrain=True, progress=False)
    assert r["action"] != "none" and r["build"]["nlist"] == 32
    h = db.index("w").history()
    assert h["snapshot-id"].tolist() == [1, 2] and h["current"].tolist() == [False, True]
    assert db.index("w", snapshot=1).snapshot_id == 1
    e = db.index("w").expire(retain_last=1)
    assert e["removed"] == [1]
    g = db.gc(dry_run=True, grace=0)
    assert g["Orphans"], g  # the files of snapshot 1
    g = db.gc(dry_run=False, grace=0)
    assert not db.gc(dry_run=True, grace=0)["Orphans"]
    assert db.index("w").verify()["ok"] is True
    db.drop_index("w", purge=True)
    assert db.indexes() == []


def test_progress_bar(tmp_path, capsys):
    db = parqdb.connect(str(tmp_path / "wh"), catalog="")
    db.create_index("w", str(GLOVE), "embedding", "word", progress=True)
    err = capsys.readouterr().err
    # the bars show the stages the 0.1 s polls saw (a stage of this small
    # build may pass between two; test_cancel waits for train's bar on a
    # larger one), and the last, commit, always
    assert "commit:" in err, err


def test_progress_bar_rate_and_units(capsys):
    """A stage first polled 10 s after it began, 1,000 rows done, shows
    about 100 rows/s in its unit (the library's elapsed seconds start the
    bar's clock), not the thousands per second of a clock started at the
    poll; a stage that counts nothing shows its time."""
    bars = _ProgressBars()
    bars.update({"stage": "assign", "unit": "rows", "elapsed": 10.0, "total": 2000, "done": 1000,
                 "warnings": []})
    bars.update({"stage": "commit", "unit": "", "elapsed": 0.0, "total": 0, "done": 0, "warnings": ["w1"]})
    bars.finish()
    err = capsys.readouterr().err
    m = re.search(r"assign:.*2000/2000 \[[^,]*, *([0-9.]+) rows/s", err)
    assert m, err
    assert 50 < float(m.group(1)) < 201, err  # 2000 rows (finished) in 10 s and a little
    assert re.search(r"commit: 00:00", err), err
    assert "it/s" not in err and "warning: w1" in err, err
