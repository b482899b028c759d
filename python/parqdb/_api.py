"""Connection, Index and Results: the parqdb API (see docs/python.md)."""

from __future__ import annotations

import ctypes
import json
import os
import sys
import time
import weakref
from ctypes import byref, c_int64, c_void_p
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Sequence, Union

import numpy as np

from . import _core, _lib

if TYPE_CHECKING:
    import pandas
from .errors import BadQuery, WarehouseNotFound

# The variables that configure warehouses, catalogs and sources
# (cmd/libparqdb/ops.go, envPrefixes).
_ENV_PREFIXES = ("PARQDB_", "AWS_", "PG")

Key = Union[str, int, float, bytes, Sequence[Any]]


def connect(warehouse: Optional[str] = None, catalog: Optional[str] = None) -> Connection:
    """Connects to a warehouse and its catalog, as the CLI's --warehouse and
    --catalog name them.

    ``warehouse`` is a local folder or ``s3://bucket/prefix``; None takes
    PARQDB_WAREHOUSE (default ``./warehouse``). ``catalog`` is ``""`` for the
    SQLite catalog inside the warehouse, ``sqlite:PATH``, ``postgres://…``
    or ``"warehouse"``; None takes PARQDB_CATALOG. S3 and PostgreSQL are
    configured by the same environment as the CLI (docs/storage.md).
    Nothing is opened until first use, and only :meth:`Connection.create_index`
    creates a missing warehouse. The variables are read as ``os.environ``
    holds them at this call.
    """
    environ = {k: v for k, v in os.environ.items() if k.startswith(_ENV_PREFIXES)}
    r = _lib.call("connect", {"warehouse": warehouse, "catalog": catalog, "environ": environ})
    return Connection(r["db"], warehouse, catalog)


class _Handle:
    """A Go object: closed by close(), by ``with``, or when collected."""

    _h: int

    def __init__(self, handle: int) -> None:
        self._h = handle
        self._finalizer = weakref.finalize(self, _lib.release, handle)

    def close(self) -> None:
        """Releases the Go object now (idempotent)."""
        self._finalizer()

    @property
    def closed(self) -> bool:
        return not self._finalizer.alive

    def __enter__(self):
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


class Connection(_Handle):
    """An opened warehouse and catalog (from :func:`connect`). Safe to use
    from several threads."""

    def __init__(self, handle: int, warehouse: Optional[str], catalog: Optional[str]) -> None:
        super().__init__(handle)
        self.warehouse = warehouse
        self.catalog = catalog

    def __repr__(self) -> str:
        return f"parqdb.Connection(warehouse={self.warehouse!r}, catalog={self.catalog!r})"

    def indexes(self) -> List[str]:
        """Returns the names of the catalog's indexes, sorted: none for a
        warehouse that does not exist yet (create_index makes it; opening an
        index there raises WarehouseNotFound)."""
        try:
            return _lib.call("indexes", {"db": self._h})
        except WarehouseNotFound:
            return []

    def create_index(
        self,
        name: str,
        source: str,
        vector_field: str,
        key_fields: Union[str, Sequence[str]],
        metric: str = "l2_squared",
        encoding: str = "lvq8",
        nlist: Optional[int] = None,
        vectors_file: bool = False,
        progress: bool = True,
        seed: Optional[int] = None,
        workers: Optional[int] = None,
    ) -> Dict[str, Any]:
        """Builds an index over a Parquet source and commits its first snapshot
        (``parqdb index create``; docs/build.md).

        ``source`` is a Parquet file or folder, local or ``s3://…``, or an
        Iceberg table ``iceberg://CATALOG/NAMESPACE/TABLE``. ``metric`` is
        ``l2_squared`` or ``cosine``; ``encoding`` ``lvq8``, ``lvq4`` or
        ``source``; ``nlist`` None picks the default. ``progress`` shows a
        progress bar per stage (tqdm: terminal or Jupyter). Ctrl-C
        (KeyboardInterrupt) stops the build and commits nothing.
        Returns the build summary (rows, nlist, stage seconds, …).
        """
        if isinstance(key_fields, str):
            key_fields = [key_fields]
        args = {
            "db": self._h, "name": name, "source": source, "vector_field": vector_field,
            "key_fields": list(key_fields), "metric": metric, "encoding": encoding,
            "nlist": nlist or 0, "vectors_file": bool(vectors_file),
            "seed": seed or 0, "workers": workers or 0,
        }
        bars = _ProgressBars() if progress else None
        try:
            r = _lib.call_long("create_index", args, bars.update if bars else None)
            if bars:
                bars.finish()
            return r
        finally:
            if bars:
                bars.close()

    def index(self, name: str, snapshot: Optional[int] = None) -> Index:
        """Opens index ``name`` at its current snapshot, or at a retained
        ``snapshot`` id."""
        r = _lib.call("open_index", {"db": self._h, "name": name, "snapshot": snapshot or 0})
        return Index(self, r)

    def refresh(self, name: str, retrain: bool = False, dry_run: bool = False,
                progress: bool = True) -> Dict[str, Any]:
        """Brings index ``name`` up to date with its source (``parqdb index
        refresh``; works on a stale index, which cannot be opened): nothing,
        an incremental update or a rebuild (``retrain``). Ctrl-C stops it and
        commits nothing. Returns the action taken and the source change."""
        bars = _ProgressBars() if progress else None
        try:
            r = _lib.call_long("refresh", {"db": self._h, "name": name, "retrain": retrain, "dry_run": dry_run},
                               bars.update if bars else None)
            if bars:
                bars.finish()
            return r
        finally:
            if bars:
                bars.close()

    def drop_index(self, name: str, purge: bool = False) -> Dict[str, Any]:
        """Removes index ``name`` from the catalog; ``purge`` also deletes its files."""
        return _lib.call("drop", {"db": self._h, "name": name, "purge": purge})

    def gc(self, dry_run: bool = True, grace: Optional[float] = None) -> Dict[str, Any]:
        """Finds (and unless ``dry_run``, deletes) warehouse files no index
        references, older than ``grace`` seconds (default: the CLI's)."""
        return _lib.call("gc", {"db": self._h, "dry_run": dry_run, "grace_seconds": grace})


def _pad(x: Optional[int]) -> int:
    return 0 if x is None else int(x)


def _options_json(k: int, nprobe: Optional[int], refine: int, where: Optional[str], recall: Optional[float],
                  columns: Optional[tuple], workers: Optional[int], exact: bool) -> bytes:
    o: Dict[str, Any] = {"k": k, "refine": refine, "workers": workers or 0}
    if nprobe is not None:
        o["nprobe"] = nprobe
    if where:
        o["where"] = where
    if recall is not None:
        o["recall"] = recall
    if columns is not None:
        o["columns"] = list(columns)
    if exact:
        o["exact"] = True
    return json.dumps(o).encode()


def _release_all(handles: Dict[Any, int]) -> None:
    for h in list(handles.values()):
        _lib.release(h)
    handles.clear()


_F32 = np.dtype(np.float32)


_MAX_OPTIONS = 256  # the option sets an Index keeps parsed
# Batches of at least this many queries run on a worker thread that Ctrl-C
# cancels (smaller ones take milliseconds: the thread would cost more).
_CANCELLABLE_BATCH = 4096


class Index(_Handle, _core.IndexCore):
    """An opened index snapshot (from :meth:`Connection.index`). Searches
    release the GIL, so several threads search it at once."""

    def __init__(self, db: Connection, info: Dict[str, Any]) -> None:
        super().__init__(info["ix"])
        self._db = db  # keeps the connection open while the index is
        self.name: str = info["name"]
        self.dim: int = info["dim"]
        self.nlist: int = info["nlist"]
        self.metric: str = info["metric"]
        self.snapshot_id: int = info["snapshot_id"]
        self.key_fields: List[str] = list(info["key_fields"])
        self.columns: List[str] = list(info["columns"])
        #: Why the snapshot misses source data added since its build ("" when it does not).
        self.stale: str = info["stale"]
        # the parsed search options by their arguments: library handles
        self._optids: Dict[tuple, int] = {}
        weakref.finalize(self, _release_all, self._optids)

    def __repr__(self) -> str:
        return f"parqdb.Index({self.name!r}, snapshot={self.snapshot_id}, dim={self.dim})"

    def _opts(self, k: int, nprobe: Optional[int], refine: int, where: Optional[str],
              recall: Optional[float], columns: Optional[Sequence[str]], workers: Optional[int],
              exact: bool = False) -> int:
        """The handle of these search options, parsed once per Index."""
        key = _core.options_key(k, nprobe, refine, where, recall, columns, workers, exact)
        h = self._optids.get(key)
        if h is not None:
            return h
        for name, v in (("k", k), ("nprobe", nprobe), ("refine", refine), ("workers", workers)):
            if v is not None and (isinstance(v, bool) or not isinstance(v, (int, np.integer))):
                raise BadQuery(f"{name} must be an integer, not {v!r}", "invalid_argument")
        cols = None
        if columns is not None:  # the key columns too, for Results.keys
            cols = tuple(columns) + tuple(f for f in self.key_fields if f not in columns)
        h = _lib.options(_options_json(int(k), None if nprobe is None else int(nprobe), int(refine or 0),
                                       where, recall, cols, workers, exact))
        if len(self._optids) >= _MAX_OPTIONS:
            self._forget()  # the C search's memo holds one of the handles
            _release_all(self._optids)
        old = self._optids.setdefault(key, h)
        if old != h:  # another thread registered them first
            _lib.release(h)
        return old

    # search is IndexCore's (parqdb/_core.c): one float32 vector under
    # options used before runs there, every other call here.
    def _search(self, q: Any, k: int, nprobe: Optional[int], refine: int, where: Optional[str],
                recall: Optional[float], columns: Optional[Sequence[str]], workers: Optional[int]) -> Results:
        opt = self._opts(k, nprobe, refine, where, recall, columns, workers)
        if type(q) is np.ndarray and q.dtype is _F32 and q.flags.c_contiguous:
            arr = q  # read in place
        else:
            with np.errstate(over="ignore"):  # an overflow becomes inf: invalid_vector
                arr = np.ascontiguousarray(q, dtype=np.float32)
        if arr.ndim == 1:
            return _core.search_vector(self, self._h, arr, opt, int(k), columns)
        if arr.ndim != 2:
            raise BadQuery(f"q must be a vector or a 2-D batch of vectors, not {arr.ndim}-D", "invalid_argument")
        if arr.shape[0] == 0:
            raise BadQuery("the batch holds no query vectors", "invalid_argument")
        return self._search_batch(arr, opt, k, columns)

    def _search_batch(self, arr: np.ndarray, opt: int, k: int, columns: Optional[Sequence[str]]) -> Results:
        n, d = arr.shape
        dist = np.empty((n, k), dtype=np.float32)
        counts = np.empty(n, dtype=np.int32)

        def run(task: int) -> int:
            res, err = c_int64(), c_void_p()
            if _lib.lib.parqdb_search(self._h, task, arr.ctypes.data, n, d, opt, dist.ctypes.data, int(k),
                                      counts.ctypes.data, byref(res), byref(err)) != 0:
                _lib.raise_error(err)
            return res.value

        # a large batch runs on a worker thread, so that Ctrl-C stops it
        h = _lib.run_cancellable(run, name="search") if n >= _CANCELLABLE_BATCH else run(0)
        return Results(self, h, dist, counts, columns)

    def search_key(
        self,
        key: Key,
        k: int = 10,
        nprobe: Optional[int] = None,
        refine: int = 0,
        where: Optional[str] = None,
        recall: Optional[float] = None,
        columns: Optional[Sequence[str]] = None,
    ) -> Results:
        """Searches near the source row whose key is ``key`` (a value, or a
        sequence with one value per key field); the row itself comes first."""
        if isinstance(key, (list, tuple)):
            kj = json.dumps([_key_json(x) for x in key])
        else:
            kj = json.dumps(_key_json(key))
        opt = self._opts(k, nprobe, refine, where, recall, columns, None)
        dist = np.empty((1, k), dtype=np.float32)
        counts = np.empty(1, dtype=np.int32)
        res, err = c_int64(), c_void_p()
        if _lib.lib.parqdb_search_key(self._h, 0, kj.encode(), opt, dist.ctypes.data, int(k), counts.ctypes.data,
                                      byref(res), byref(err)) != 0:
            _lib.raise_error(err)
        return Results(self, res.value, np.append(dist[0], np.float32(counts[0])), None, columns)

    def exact(self, q: Any, k: int = 10, where: Optional[str] = None) -> Results:
        """The exact ``k`` nearest rows by brute force over every row (ground
        truth for recall; keys and distances, no source columns)."""
        arr = np.ascontiguousarray(q, dtype=np.float32)
        opt = self._opts(k, None, 0, where, None, None, None, exact=True)
        if arr.ndim == 1:
            r = self._search_batch(arr.reshape(1, -1), opt, k, None)
            r._buf, r._counts = np.append(r._buf[0], np.float32(r._counts[0])), None
            return r
        return self._search_batch(arr, opt, k, None)

    def describe(self) -> Dict[str, Any]:
        """The index's current snapshot, metadata location and source columns
        (``parqdb index describe``)."""
        return _lib.call("describe", {"db": self._db._h, "name": self.name})

    def history(self) -> pandas.DataFrame:
        """The retained snapshots as a pandas DataFrame, oldest first, with a
        ``current`` column (``parqdb index history``)."""
        import pandas as pd

        h = _lib.call("history", {"db": self._db._h, "name": self.name})
        df = pd.json_normalize(h["snapshots"])
        if len(df):
            df["current"] = df["snapshot-id"] == h["current_snapshot_id"]
        return df

    def refresh(self, retrain: bool = False, dry_run: bool = False, progress: bool = True) -> Dict[str, Any]:
        """Brings the index up to date with its source: :meth:`Connection.refresh`.
        This Index keeps reading its snapshot; open the index again for the new one."""
        return self._db.refresh(self.name, retrain=retrain, dry_run=dry_run, progress=progress)

    def expire(self, retain_last: Optional[int] = None, older_than: Optional[float] = None,
               dry_run: bool = False) -> Dict[str, Any]:
        """Removes old snapshots: all but the ``retain_last`` newest and/or
        those older than ``older_than`` seconds (the current one stays)."""
        if not retain_last and not older_than:
            raise BadQuery("expire: give retain_last (≥ 1) or older_than (seconds > 0)", "invalid_argument")
        return _lib.call("expire", {"db": self._db._h, "name": self.name, "retain_last": _pad(retain_last),
                                    "older_than_seconds": float(older_than or 0), "dry_run": dry_run})

    def verify(self, snapshot: Optional[int] = None, exhaustive: bool = False) -> Dict[str, Any]:
        """Checks the index files against the metadata and the source
        (``parqdb index verify``); the report's ``ok`` is the verdict."""
        return _lib.call_long("verify", {"db": self._db._h, "name": self.name,
                                         "snapshot": _pad(snapshot), "exhaustive": exhaustive})

    def bench(self, queries: Any, k: int = 10, nprobe: Sequence[int] = (1, 2, 4, 8, 16, 32),
              refine: Sequence[int] = (0,), where: Optional[str] = None, repeat: int = 1) -> pandas.DataFrame:
        """Measures recall@k and speed over a grid of nprobe × refine on a
        batch of ``queries`` (``parqdb bench``): a DataFrame with nprobe,
        refine, queries, seconds, cpu_seconds, qps and recall (against
        :meth:`exact`)."""
        import pandas as pd

        qs = np.ascontiguousarray(queries, dtype=np.float32)
        truth = self.exact(qs, k=k, where=where)
        rows = []
        for r in refine:
            for p in nprobe:
                best = None
                for _ in range(max(1, repeat)):
                    c0, t0 = time.process_time(), time.perf_counter()
                    got = self.search(qs, k=k, nprobe=p, refine=r, where=where, columns=self.key_fields)
                    t1, c1 = time.perf_counter(), time.process_time()
                    if best is None or t1 - t0 < best[0]:
                        best = (t1 - t0, c1 - c0, got)
                secs, cpu, got = best
                rows.append({"nprobe": p, "refine": r, "queries": len(qs), "seconds": secs, "cpu_seconds": cpu,
                             "qps": len(qs) / secs, "recall": got.recall(truth)})
        return pd.DataFrame(rows)


def _key_json(x: Any) -> Any:
    if isinstance(x, bytes):
        return x.decode()
    if isinstance(x, np.generic):
        return x.item()
    return x


class Results(_core.ResultsCore):
    """The answer of one search: ``distances`` and ``keys`` as numpy arrays
    (shape (hits,) for one query; (queries, k) for a batch, padded with NaN
    and None), rows as :meth:`to_list` or :meth:`to_pandas`. The rows stay
    in the library until the Results is closed or collected."""

    # The fields are ResultsCore's (parqdb/_core.c), set by
    # Results(ix, handle, buf, counts, columns): for one query buf holds k
    # distances, then the number of hits; for a batch buf is (queries, k)
    # and counts the hits per query. Collecting a Results releases its handle.
    __slots__ = ("__weakref__",)

    def close(self) -> None:
        """Releases the rows the library holds for these results (idempotent)."""
        h, self._h = self._h, 0
        if h and _lib is not None and _lib.lib is not None:
            _lib.lib.parqdb_release(h)

    def __enter__(self) -> Results:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    @property
    def single(self) -> bool:
        """True for the answer to one query vector or key."""
        return self._counts is None

    @property
    def counts(self) -> np.ndarray:
        """The number of hits of each query (int32)."""
        if self._counts is None:
            return np.array([int(self._buf[-1])], dtype=np.int32)
        return self._counts

    def __len__(self) -> int:
        return int(self.counts.sum())

    def __repr__(self) -> str:
        return f"parqdb.Results(queries={len(self.counts)}, hits={len(self)})"

    @property
    def distances(self) -> np.ndarray:
        """The _distance of each hit (float32)."""
        if self._counts is None:
            return self._buf[: int(self._buf[-1])]
        return self._buf

    def _all_rows(self) -> List[List[Dict[str, Any]]]:
        if self._rows is None:
            if not self._h:
                raise BadQuery("these results are closed", "invalid_argument")
            out = c_void_p()
            if _lib.lib.parqdb_result_rows(self._h, byref(out)) != 0:
                _lib.raise_error(out)
            self._rows = json.loads(_lib.take_string(out))
        return self._rows

    @property
    def keys(self) -> np.ndarray:
        """The key of each hit: its key field's value, or a tuple for a
        composite key (an object array)."""
        kf = self._ix.key_fields
        rows = self._all_rows()

        def key(r: Dict[str, Any]) -> Any:
            return r[kf[0]] if len(kf) == 1 else tuple(r[f] for f in kf)

        if self.single:
            out = np.empty(len(rows[0]), dtype=object)
            for i, r in enumerate(rows[0]):
                out[i] = key(r)
            return out
        out = np.full(self._buf.shape, None, dtype=object)
        for i, qr in enumerate(rows):
            for j, r in enumerate(qr):
                out[i, j] = key(r)
        return out

    def _visible(self, r: Dict[str, Any]) -> Dict[str, Any]:
        if self._columns is None:
            return r
        return {c: r[c] for c in [*self._columns, "_distance"]}

    def to_list(self) -> Union[List[Dict[str, Any]], List[List[Dict[str, Any]]]]:
        """The rows as dicts of the source columns and _distance: a list for
        one query, a list of lists for a batch."""
        rows = [[self._visible(r) for r in qr] for qr in self._all_rows()]
        return rows[0] if self.single else rows

    def to_pandas(self) -> pandas.DataFrame:
        """The rows as a DataFrame: the source columns and _distance, after a
        _query column (the query's position) for a batch."""
        import pandas as pd

        rows = self._all_rows()
        flat = []
        for i, qr in enumerate(rows):
            for r in qr:
                v = self._visible(r)
                flat.append(v if self.single else {"_query": i, **v})
        cols = [*(self._columns if self._columns is not None else self._ix.columns), "_distance"]
        if not self.single:
            cols = ["_query"] + cols
        df = pd.DataFrame(flat, columns=cols)
        df["_distance"] = df["_distance"].astype(np.float32)
        return df

    def recall(self, truth: Results) -> float:
        """The mean share of ``truth``'s keys (e.g. :meth:`Index.exact`) these
        results hold, per query."""
        r = _lib.lib.parqdb_result_recall(self._h, truth._h)
        if r < 0:
            raise BadQuery("recall: the two results answer different query counts", "invalid_argument")
        return float(r)


class _ProgressBars:
    """One tqdm bar per build stage (terminal or Jupyter: tqdm.auto), in the
    stage's unit (rows, iterations, buckets), its clock started when the
    stage did (the library's ``elapsed``), so that the rate is the stage's
    however late the first poll; a stage that counts nothing (commit)
    shows its time."""

    def __init__(self) -> None:
        self.stage: Optional[str] = None
        self.bar = None
        self.warned = 0

    def update(self, p: Dict[str, Any]) -> None:
        from tqdm.auto import tqdm

        if p["stage"] and p["stage"] != self.stage:
            self.finish()  # a new stage: the previous one is done
            self.stage = p["stage"]
            unit = p.get("unit", "")
            counted = bool(p["total"] or p["done"] or unit)
            self.bar = tqdm(total=p["total"] or None, desc=p["stage"], leave=True,
                            unit=f" {unit}" if unit else "it",
                            bar_format=None if counted else "{desc}: {elapsed}")
            # the stage's own clock: tqdm's starts now, maybe seconds later
            self.bar.start_t = self.bar.last_print_t = self.bar.start_t - p.get("elapsed", 0.0)
        if self.bar is not None:
            if p["total"] and self.bar.total != p["total"]:
                self.bar.total = p["total"]
            self.bar.n = p["done"]
            self.bar.refresh()
        for w in p["warnings"][self.warned:]:
            tqdm.write(f"warning: {w}", file=sys.stderr)
        self.warned = len(p["warnings"])

    def finish(self) -> None:
        """Shows the current stage as complete and closes its bar."""
        if self.bar is not None and self.bar.total:
            self.bar.n = self.bar.total
            self.bar.refresh()
        self.close()

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None


# The C path of single-vector searches calls the library loaded above.
_core.bind(ctypes.cast(_lib.lib.parqdb_search1, c_void_p).value,
           ctypes.cast(_lib.lib.parqdb_release_many, c_void_p).value, Results, _lib.raise_error_handle)
