"""S3 warehouses and sources with a PostgreSQL catalog (the repository's
test servers, scripts/services.sh), and an Iceberg source
(examples/iceberg), configured by the environment as for the CLI."""

from __future__ import annotations

import hashlib
import os
import subprocess

import pytest

import parqdb

from conftest import GLOVE, QUERIES, REPO, cli_json


WHERE = "rank > 1000 AND word LIKE 'p%'"


@pytest.fixture()
def environ(services):
    saved = dict(os.environ)
    os.environ.update(services)
    try:
        yield services
    finally:
        os.environ.clear()
        os.environ.update(saved)


def put_s3(env, key: str, path) -> None:
    """Uploads a file to the S3 test server (signed as scripts/services.sh does)."""
    data = open(path, "rb").read()
    subprocess.run(
        ["curl", "-sS", "--fail-with-body", "-X", "PUT", "--aws-sigv4", "aws:amz:us-east-1:s3",
         "--user", f'{env["AWS_ACCESS_KEY_ID"]}:{env["AWS_SECRET_ACCESS_KEY"]}',
         "-H", f"x-amz-content-sha256: {hashlib.sha256(data).hexdigest()}", "--data-binary", f"@{path}",
         f'{env["AWS_ENDPOINT_URL_S3"]}/parqdb/{key}'],
        check=True, capture_output=True)


def test_s3_warehouse_and_source_postgres_catalog(environ, cli, glove_wh, queries):
    put_s3(environ, "sources/glove/glove-10k.parquet", GLOVE)
    # the warehouse and catalog of the environment (PARQDB_WAREHOUSE=s3://…, PARQDB_CATALOG=postgres://…)
    db = parqdb.connect()
    db.create_index("words", "s3://parqdb/sources/glove/glove-10k.parquet", "embedding", "word", metric="cosine",
                    progress=False)
    assert db.indexes() == ["words"]
    want = cli_json(cli, glove_wh, "words", "--queries", str(QUERIES), "--where", WHERE)
    with db.index("words") as ix:
        # a selective predicate: the exact plan in every process (a broad one's
        # plan depends on what the process's caches hold: query/filter.go)
        assert ix.search(queries, where=WHERE).to_list() == want
        assert ix.search_key("king").keys[0] == "king"
        assert ix.verify()["ok"] is True
    # a second connection (another client) sees the same catalog
    assert parqdb.connect(environ["PARQDB_WAREHOUSE"], environ["PARQDB_CATALOG"]).indexes() == ["words"]


def test_env_changes_after_import_are_seen(environ, tmp_path):
    os.environ["PARQDB_WAREHOUSE"] = "s3://parqdb/other"
    with pytest.raises(parqdb.WarehouseNotFound):
        parqdb.connect(catalog="warehouse").index("words")
    os.environ["AWS_ENDPOINT_URL_S3"] = "http://127.0.0.1:1"  # nothing listens there
    with pytest.raises(parqdb.StorageUnavailable) as e:
        parqdb.connect(catalog="warehouse").indexes()
    assert "127.0.0.1:1" in e.value.message and e.value.code == "storage_unavailable", e.value


def test_iceberg_source(cli, glove_wh, tmp_path, queries, monkeypatch):
    out = subprocess.run(["go", "run", "./examples/iceberg", "-parquet", str(GLOVE), "-dir", str(tmp_path / "lake")],
                         cwd=REPO, check=True, capture_output=True, text=True).stdout
    for line in out.splitlines():
        if line.startswith("export "):
            k, v = line[len("export "):].split("=", 1)
            monkeypatch.setenv(k, v)
    db = parqdb.connect(str(tmp_path / "wh"), catalog="")
    s = db.create_index("words", "iceberg://lake/docs/words", "embedding", "word", metric="cosine", progress=False)
    assert s["rows"] == 10000
    want = cli_json(cli, glove_wh, "words", "--queries", str(QUERIES), "-k", "5")
    with db.index("words") as ix:
        assert [[h["word"] for h in q] for q in ix.search(queries, k=5).to_list()] == \
            [[h["word"] for h in q] for q in want]
        assert ix.describe()["snapshot"]["source-table"]["provider"] == "iceberg"
