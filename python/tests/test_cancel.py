"""Ctrl-C (a real SIGINT) during a build stops it and commits nothing."""

from __future__ import annotations

import os
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
    except KeyboardInterrupt:
        print("interrupted", flush=True)
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
    assert b"interrupted\nindexes []\n" in out, out
    assert b"finished" not in out
    # nothing committed: no index, and no index files either
    db = parqdb.connect(wh, catalog="")
    assert db.indexes() == []
    assert not list((tmp_path / "wh").rglob("*.metadata.json"))
