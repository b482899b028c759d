"""Fixtures: the CLI built from this tree, the GloVe sample indexed by the
CLI into a warehouse of the session, and the repository's S3 + PostgreSQL
servers (scripts/services.sh)."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
from pathlib import Path

import numpy as np
import pytest

import parqdb

REPO = Path(__file__).resolve().parents[2]
GLOVE = REPO / "examples" / "glove" / "glove-10k.parquet"
QUERIES = REPO / "examples" / "glove" / "queries-100.fvecs"


def read_fvecs(path: Path) -> np.ndarray:
    """Reads a .fvecs file (each vector: int32 dimension, then floats)."""
    raw = np.fromfile(path, dtype=np.int32)
    d = int(raw[0])
    return raw.reshape(-1, d + 1)[:, 1:].copy().view(np.float32)


@pytest.fixture(scope="session")
def cli(tmp_path_factory) -> str:
    """The parqdb CLI: PARQDB_CLI (make test-python: bin/parqdb), else built."""
    if os.environ.get("PARQDB_CLI"):
        return os.environ["PARQDB_CLI"]
    out = tmp_path_factory.mktemp("bin") / "parqdb"
    subprocess.check_call(["go", "build", "-o", str(out), "./cmd/parqdb"], cwd=REPO)
    return str(out)


def run_cli(cli: str, warehouse: str, *args: str, env=None) -> str:
    """Runs the CLI on warehouse (its SQLite catalog) and returns stdout."""
    cmd = [cli, "--warehouse", warehouse, "--catalog=", *args]
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if p.returncode != 0:
        raise AssertionError(f"{shlex.join(cmd)}: exit {p.returncode}: {p.stderr}")
    return p.stdout


@pytest.fixture(scope="session")
def glove_wh(cli, tmp_path_factory) -> str:
    """A warehouse with index words over the GloVe sample, made by the CLI."""
    wh = str(tmp_path_factory.mktemp("glove") / "wh")
    run_cli(cli, wh, "index", "create", "words", "--source", str(GLOVE), "--vector-field", "embedding",
            "--key-fields", "word", "--metric", "cosine", "--quiet")
    return wh


@pytest.fixture(scope="session")
def queries() -> np.ndarray:
    return read_fvecs(QUERIES)


def cli_json(cli: str, wh: str, *args: str):
    """The JSON Lines of `parqdb search … --format json`, parsed."""
    out = run_cli(cli, wh, "search", *args, "--format", "json")
    return [json.loads(line)["results"] for line in out.splitlines()]


@pytest.fixture(scope="session")
def services(tmp_path_factory):
    """S3 (versitygw) and PostgreSQL started by scripts/services.sh; yields
    the environment its env file sets."""
    d = tmp_path_factory.mktemp("services")
    os.chmod(d, 0o755)
    for p in d.parents:  # PostgreSQL runs as user postgres when we are root
        if str(p).startswith(os.environ.get("TMPDIR", "/tmp")):
            os.chmod(p, os.stat(p).st_mode | 0o011)
    p = subprocess.run([str(REPO / "scripts" / "services.sh"), "start", str(d)], capture_output=True, text=True)
    if p.returncode != 0:
        raise AssertionError(f"services.sh start: {p.stdout}{p.stderr}")
    env = {}
    for line in (d / "env").read_text().splitlines():
        if line.startswith("export "):
            for kv in shlex.split(line[len("export "):]):
                k, v = kv.split("=", 1)
                env[k] = v
    try:
        yield env
    finally:
        subprocess.run([str(REPO / "scripts" / "services.sh"), "stop", str(d)], capture_output=True)


@pytest.fixture(scope="module")
def ix(glove_wh):
    """Index words of glove_wh, open for a test module."""
    db = parqdb.connect(glove_wh, catalog="")
    with db.index("words") as ix:
        yield ix
    db.close()
