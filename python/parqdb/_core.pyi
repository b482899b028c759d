"""Types of parqdb._core (parqdb/_core.c): the per-call path of a search."""

from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

from ._api import Index, Results

class ResultsCore:
    _ix: Index
    _h: int
    _buf: np.ndarray
    _counts: Optional[np.ndarray]
    _columns: Optional[Tuple[str, ...]]
    _rows: Optional[List[List[Dict[str, Any]]]]
    def __init__(self, ix: Index, handle: int, buf: np.ndarray, counts: Optional[np.ndarray],
                 columns: Optional[Sequence[str]]) -> None: ...

class IndexCore:
    def search(self, q: Any, k: int = 10, nprobe: Optional[int] = None, refine: int = 0,
               where: Optional[str] = None, recall: Optional[float] = None,
               columns: Optional[Sequence[str]] = None, workers: Optional[int] = None) -> Results: ...
    def _forget(self) -> None: ...

def bind(search1: int, release_many: int, results: type, raise_error_handle: Callable[[int], None]) -> None: ...
def options_key(k: Any, nprobe: Any, refine: Any, where: Any, recall: Any, columns: Optional[Sequence[str]],
                workers: Any, exact: bool) -> tuple: ...
def search_vector(ix: Index, ix_handle: int, q: np.ndarray, opt: int, k: int,
                  columns: Optional[Sequence[str]]) -> Results: ...
def flush() -> None: ...
