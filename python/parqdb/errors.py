"""The exceptions of parqdb: one class per stable error code.

Every error a call raises is a :class:`Error` carrying ``code``, the same
stable code the HTTP API answers (docs/serve.md, "Errors"), and ``message``,
the same text. Catch a family (``BadQuery``, ``NotFound``, …) or ``Error``.
"""

from __future__ import annotations

from typing import Dict, Type


class Error(Exception):
    """A ParqDB error: ``code`` is the stable error code, ``message`` the text."""

    code: str = "internal"

    def __init__(self, message: str, code: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code

    def __str__(self) -> str:
        return f"{self.code}: {self.message}"


class BadQuery(Error, ValueError):
    """The request is invalid: an argument, a vector, a range or a predicate."""

    code = "invalid_argument"


class WrongDimension(BadQuery):
    """A query vector's length differs from the index dimension."""

    code = "wrong_dimension"


class InvalidVector(BadQuery):
    """A query vector holds NaN or infinity, or has zero norm under cosine."""

    code = "invalid_vector"


class OutOfRange(BadQuery):
    """k, nprobe, refine or recall is outside its range."""

    code = "out_of_range"


class UnknownColumn(BadQuery):
    """A requested column is not a source column."""

    code = "unknown_column"


class FilterError(BadQuery):
    """The ``where`` predicate is invalid (syntax, column or type)."""

    code = "filter_syntax"


class NotFound(Error, LookupError):
    """Something named does not exist: an index, a snapshot, a key, a warehouse."""

    code = "not_found"


class IndexNotFound(NotFound):
    """No index has that name."""

    code = "index_not_found"


class SnapshotNotFound(NotFound):
    """The snapshot is not retained."""

    code = "snapshot_not_found"


class KeyNotFound(NotFound):
    """No source row has that key (``key_not_indexed``: only a newer file has it)."""

    code = "key_not_found"


class WarehouseNotFound(NotFound):
    """The warehouse or its catalog does not exist (create_index makes one)."""

    code = "warehouse_not_found"


class StaleIndex(Error):
    """The source changed since the snapshot was built: refresh the index."""

    code = "stale_index"


class Corrupt(Error):
    """An index file is missing or disagrees with the metadata."""

    code = "index_corrupt"


class SourceInvalid(Error):
    """Source rows break the source contract, or a source file does not decode."""

    code = "source_invalid"


class SourceNotBound(Error, PermissionError):
    """The snapshot reads a source the catalog does not bind."""

    code = "source_not_bound"


class StorageUnavailable(Error, OSError):
    """Reading the warehouse or the source failed."""

    code = "storage_unavailable"


class Timeout(Error, TimeoutError):
    """The call exceeded its time limit."""

    code = "timeout"


class Internal(Error):
    """A failure that is no other class (a bug, or an unexpected condition)."""

    code = "internal"


_BY_CODE: Dict[str, Type[Error]] = {
    "malformed_json": BadQuery,
    "invalid_argument": BadQuery,
    "wrong_dimension": WrongDimension,
    "invalid_vector": InvalidVector,
    "out_of_range": OutOfRange,
    "unknown_column": UnknownColumn,
    "filter_syntax": FilterError,
    "filter_unknown_column": FilterError,
    "filter_type_mismatch": FilterError,
    "sql_error": BadQuery,
    "index_not_found": IndexNotFound,
    "snapshot_not_found": SnapshotNotFound,
    "key_not_found": KeyNotFound,
    "key_not_indexed": KeyNotFound,
    "not_found": NotFound,
    "warehouse_not_found": WarehouseNotFound,
    "stale_index": StaleIndex,
    "index_corrupt": Corrupt,
    "source_invalid": SourceInvalid,
    "source_not_bound": SourceNotBound,
    "storage_unavailable": StorageUnavailable,
    "unavailable": StorageUnavailable,
    "timeout": Timeout,
    "internal": Internal,
}


def error_for(code: str, message: str) -> Error:
    """Returns the exception of error ``code`` (Internal for an unknown code)."""
    return _BY_CODE.get(code, Internal)(message, code)
