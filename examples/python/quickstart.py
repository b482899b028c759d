"""A notebook-style tour of the parqdb Python package (docs/python.md).

Run it from the root of the checkout after installing the package
(/usr/bin/python3 -m venv --system-site-packages .venv && .venv/bin/pip install
--no-build-isolation ./python):

    .venv/bin/python examples/python/quickstart.py [WAREHOUSE]

It builds the GloVe sample's index in WAREHOUSE (default: a temporary
folder, removed at the end), then searches it every way the API offers.
Each "# %%" marks a cell.
"""

# %% Connect and build
import sys
import tempfile

import numpy as np

import parqdb

tmp = None
if len(sys.argv) > 1:
    warehouse = sys.argv[1]
else:
    tmp = tempfile.TemporaryDirectory()
    warehouse = tmp.name + "/warehouse"
db = parqdb.connect(warehouse, catalog="")  # catalog "": SQLite inside the warehouse
if "words" not in db.indexes():
    summary = db.create_index("words", "examples/glove/glove-10k.parquet", vector_field="embedding",
                              key_fields="word", metric="cosine")  # a progress bar per stage
    print(f"built {summary['rows']} rows into {summary['nlist']} lists")
ix = db.index("words")
print(ix, "columns:", ix.columns)

# %% Near an existing row, as a DataFrame
print(ix.search_key("king", k=5).to_pandas()[["word", "rank", "_distance"]])

# %% By vector: the numpy results
q = np.asarray(ix.search_key("paris", k=1, columns=["embedding"]).to_list()[0]["embedding"], dtype=np.float32)
r = ix.search(q, k=5, columns=["word"])
print(r.keys, r.distances)

# %% A batch of queries (float32, C-contiguous: read in place), with a filter
batch = np.stack([q, -q])
df = ix.search(batch, k=3, where="rank < 2000", columns=["word", "rank"]).to_pandas()
print(df)

# %% A target recall instead of nprobe/refine (the first use calibrates the index)
print(ix.search(q, k=10, recall=0.95).to_pandas()["word"].tolist())

# %% Errors are exceptions with the HTTP API's codes
try:
    ix.search(np.ones(3))
except parqdb.WrongDimension as e:
    print(e.code, "-", e.message)
try:
    db.index("wrods")
except parqdb.IndexNotFound as e:
    print(e.code, "-", e.message)

# %% Recall and speed over settings
print(ix.bench(batch, nprobe=[1, 8, 64])[["nprobe", "qps", "recall"]])

# %% Snapshots and checks
print(ix.history()[["snapshot-id", "current"]])
print("verify ok:", ix.verify()["ok"])
print("gc (dry run):", len(db.gc(dry_run=True)["Orphans"] or []), "orphans")

ix.close()
db.close()
if tmp is not None:
    tmp.cleanup()
