"""ParqDB in process: build, search and manage vector indexes over Parquet
and Iceberg tables from Python, with numpy and pandas.

    >>> import parqdb
    >>> db = parqdb.connect("./warehouse")
    >>> db.create_index("words", "examples/glove/glove-10k.parquet",
    ...                 vector_field="embedding", key_fields="word", metric="cosine")
    >>> ix = db.index("words")
    >>> ix.search_key("king", k=5).to_pandas()

The Go library runs in this process (libparqdb, a C shared library loaded
with ctypes, and parqdb._core, a C extension for the per-call path of a
search); there is no server. See docs/python.md.
"""

from ._api import Connection, Index, Results, connect
from ._lib import open_handles
from .errors import (BadQuery, Corrupt, Error, FilterError, IndexNotFound, Internal, InvalidVector,
                     KeyNotFound, NotFound, OutOfRange, SnapshotNotFound, SourceInvalid,
                     SourceNotBound, StaleIndex, StorageUnavailable, Timeout, UnknownColumn,
                     WarehouseNotFound, WrongDimension)

__all__ = [
    "connect", "Connection", "Index", "Results", "open_handles",
    "Error", "BadQuery", "WrongDimension", "InvalidVector", "OutOfRange", "UnknownColumn",
    "FilterError", "NotFound", "IndexNotFound", "SnapshotNotFound", "KeyNotFound",
    "WarehouseNotFound", "StaleIndex", "Corrupt", "SourceInvalid", "SourceNotBound",
    "StorageUnavailable", "Timeout", "Internal",
]
__version__ = "0.1.0"
