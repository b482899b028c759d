"""Ctrl-C (a real SIGINT) during a build stops it and commits nothing."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import textwrap
import time

import parqdb

from conftest import REPO

CHILD = textwrap.dedent("""
    import sys, parqdb
    db = parqdb.connect(sys.argv[1], catalog="")
    try:
        db.create_index("big", sys.argv[2], "vec", "id", progress=True)
    except KeyboardInterrupt as e:
        print("interrupted", repr(e), flush=True)
        print("indexes", db.indexes(), flush=True)
        raise
    print("finished", flush=True)
""")


def synth(tmp_path_factory) -> str:
    d = tmp_path_factory.mktemp("synth")
    subprocess.check_call(["go", "run", "./bench/mkdata", "synth", "-n", "100000", "-d", "64", str(d)], cwd=REPO,
                          stdout=subprocess.DEVNULL)
    return str(d / "synth-100000x64.parquet")


def test_ctrl_c_during_build(tmp_path, tmp_path_factory):
    src = synth(tmp_path_factory)
    wh = str(tmp_path / "wh")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    p = subprocess.Popen([sys.executable, "-c", CHILD, wh, src], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         env=env)
    # wait until the build trains (its progress bar names the stage), then Ctrl-C
    err = b""
    os.set_blocking(p.stderr.fileno(), False)
    deadline = time.monotonic() + 120
    while b"train" not in err and p.poll() is None and time.monotonic() < deadline:
        chunk = p.stderr.read()
        if chunk:
            err += chunk
        else:
            time.sleep(0.02)
    assert b"train" in err, err
    p.send_signal(signal.SIGINT)
    out, rest = p.communicate(timeout=120)
    err += rest
    assert p.returncode != 0, (out, err)
    assert b"KeyboardInterrupt" in err, err
    # the library's cancellation stopped the build (not Python's signal
    # handler after it finished), and it left no index
    assert re.search(rb"interrupted KeyboardInterrupt\('(\w+: )?context canceled'\)\nindexes \[\]\n", out), (out, err)
    assert b"finished" not in out
    # nothing committed: no index, and no index files either
    db = parqdb.connect(wh, catalog="")
    assert db.indexes() == []
    assert not list((tmp_path / "wh").rglob("*.metadata.json"))


SEARCHER = textwrap.dedent("""
    import sys, numpy as np, parqdb
    ix = parqdb.connect(sys.argv[1], catalog="").index("words")
    qs = np.random.default_rng(3).standard_normal((400_000, 50)).astype(np.float32)
    print("searching", flush=True)
    try:
        ix.search(qs, k=100, nprobe=256, refine=4, columns=["word"])
    except KeyboardInterrupt as e:
        print("interrupted", repr(e), flush=True)
        print("still searches", len(ix.search(qs[0], k=3).distances), flush=True)
        raise
    print("finished", flush=True)
""")


def test_ctrl_c_during_batch_search(glove_wh):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    p = subprocess.Popen([sys.executable, "-c", SEARCHER, glove_wh], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, env=env)
    assert p.stdout.readline() == b"searching\n"
    time.sleep(0.5)  # into the batch: minutes of work for two cores
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=120)
    assert p.returncode != 0 and b"KeyboardInterrupt" in err, (out, err)
    # the library's cancellation stopped the batch (not Python's signal
    # handler after it finished), and the index still works
    assert b"interrupted KeyboardInterrupt('context canceled')" in out, (out, err)
    assert b"still searches 3" in out and b"finished" not in out, out
