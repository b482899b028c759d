"""Loading libparqdb (the C API of cmd/libparqdb) and calling it.

ctypes releases the GIL for every foreign call, and so does _core (the
single-vector search, in C), so searches and builds from several Python
threads run in parallel in Go.
"""

from __future__ import annotations

import ctypes
import json
import os
import threading
from ctypes import POINTER, byref, c_char_p, c_double, c_int, c_int32, c_int64, c_void_p
from typing import Any, Callable, Optional

from . import _core
from .errors import error_for

_HERE = os.path.dirname(os.path.abspath(__file__))


def _load() -> ctypes.CDLL:
    path = os.environ.get("PARQDB_LIB") or os.path.join(_HERE, "libparqdb.so")
    if not os.path.exists(path):
        raise ImportError(
            f"parqdb: the shared library {path} is missing; build it with `make python` "
            "in the ParqDB checkout (or set PARQDB_LIB to a libparqdb.so)"
        )
    lib = ctypes.CDLL(path)
    lib.parqdb_free.argtypes = [c_void_p]
    lib.parqdb_free.restype = None
    lib.parqdb_release.argtypes = [c_int64]
    lib.parqdb_release.restype = c_int
    lib.parqdb_release_many.argtypes = [c_void_p, c_int64]
    lib.parqdb_release_many.restype = None
    lib.parqdb_handles.argtypes = []
    lib.parqdb_handles.restype = c_int64
    lib.parqdb_task_new.argtypes = []
    lib.parqdb_task_new.restype = c_int64
    lib.parqdb_task_cancel.argtypes = [c_int64]
    lib.parqdb_task_cancel.restype = None
    lib.parqdb_task_progress.argtypes = [c_int64]
    lib.parqdb_task_progress.restype = c_void_p
    lib.parqdb_call.argtypes = [c_int64, c_char_p, c_char_p, POINTER(c_void_p)]
    lib.parqdb_call.restype = c_int
    lib.parqdb_options.argtypes = [c_char_p, POINTER(c_void_p)]
    lib.parqdb_options.restype = c_int64
    lib.parqdb_search.argtypes = [
        c_int64, c_int64, c_void_p, c_int64, c_int64, c_int64,
        c_void_p, c_int64, c_void_p, POINTER(c_int64), POINTER(c_void_p),
    ]
    lib.parqdb_search.restype = c_int
    lib.parqdb_search1.argtypes = [c_int64, c_void_p, c_int64, c_int64, c_void_p, c_int64]
    lib.parqdb_search1.restype = c_int64
    lib.parqdb_error.argtypes = [c_int64]
    lib.parqdb_error.restype = c_void_p
    lib.parqdb_search_key.argtypes = [
        c_int64, c_int64, c_char_p, c_int64, c_void_p, c_int64, c_void_p, POINTER(c_int64), POINTER(c_void_p),
    ]
    lib.parqdb_search_key.restype = c_int
    lib.parqdb_result_rows.argtypes = [c_int64, POINTER(c_void_p)]
    lib.parqdb_result_rows.restype = c_int
    lib.parqdb_result_recall.argtypes = [c_int64, c_int64]
    lib.parqdb_result_recall.restype = c_double
    lib.parqdb_bench_loop.argtypes = [
        c_int64, c_void_p, c_int64, c_int64, c_int64, c_int, c_int64,
        POINTER(c_double), POINTER(c_double), POINTER(c_void_p),
    ]
    lib.parqdb_bench_loop.restype = c_int
    return lib


lib = _load()


def take_string(p: c_void_p) -> bytes:
    """Returns the C string p points to and frees it."""
    try:
        return ctypes.string_at(p.value)
    finally:
        lib.parqdb_free(p.value)


def raise_error(p: c_void_p) -> None:
    """Raises the parqdb.Error whose JSON p points to (and frees it)."""
    e = json.loads(take_string(p))
    if e["code"] == "cancelled":
        raise KeyboardInterrupt(e["message"])
    raise error_for(e["code"], e["message"])


def raise_error_handle(h: int) -> None:
    """Raises the parqdb.Error of error handle -h (parqdb_search1)."""
    raise_error(c_void_p(lib.parqdb_error(-h)))


def options(text: bytes) -> int:
    """Registers search options (JSON) and returns their handle."""
    err = c_void_p()
    h = lib.parqdb_options(text, byref(err))
    if h == 0:
        raise_error(err)
    return int(h)


def call(method: str, args: dict, task: int = 0) -> Any:
    """Runs a management method of the C API (cmd/libparqdb/ops.go)."""
    out = c_void_p()
    rc = lib.parqdb_call(task, method.encode(), json.dumps(args).encode(), byref(out))
    if rc != 0:
        raise_error(out)
    return json.loads(take_string(out))


def release(handle: int) -> None:
    """Closes the Go object of handle (a no-op for one already released)."""
    if lib is not None:
        lib.parqdb_release(handle)


def open_handles() -> int:
    """Returns the number of Go objects the process holds (for leak checks),
    after releasing those of collected results."""
    _core.flush()
    return int(lib.parqdb_handles())


def progress(task: int) -> Optional[dict]:
    p = lib.parqdb_task_progress(task)
    if not p:
        return None
    return json.loads(take_string(c_void_p(p)))


def call_long(method: str, args: dict, on_progress: Optional[Callable[[dict], None]] = None) -> Any:
    """Runs a long management method under a task (run_cancellable)."""
    return run_cancellable(lambda task: call(method, args, task), on_progress, name=method)


def run_cancellable(fn: Callable[[int], Any], on_progress: Optional[Callable[[dict], None]] = None,
                    name: str = "call") -> Any:
    """Runs fn(task) on a worker thread under a new task, polling its
    progress; a KeyboardInterrupt cancels the task (a build then commits
    nothing, a search stops), waits for the call to stop and is raised
    again."""
    task = int(lib.parqdb_task_new())
    box: dict = {}
    # The worker sets done last. The caller waits on it rather than on
    # Thread.join, which a KeyboardInterrupt can leave reporting a running
    # thread as stopped (CPython gh-90882).
    done = threading.Event()

    def work() -> None:
        try:
            box["result"] = fn(task)
        except BaseException as e:  # re-raised on the calling thread
            box["error"] = e
        finally:
            done.set()

    t = threading.Thread(target=work, name=f"parqdb-{name}", daemon=True)
    try:
        t.start()
        try:
            while not done.wait(0.1):
                if on_progress is not None:
                    p = progress(task)
                    if p is not None:
                        on_progress(p)
        except KeyboardInterrupt:
            lib.parqdb_task_cancel(task)
            while True:
                try:
                    done.wait()
                    break
                except KeyboardInterrupt:
                    pass
            if isinstance(box.get("error"), KeyboardInterrupt):
                raise box["error"]  # the library's "cancelled": the call stopped
            raise
        if on_progress is not None:
            p = progress(task)
            if p is not None:
                on_progress(p)
    finally:
        release(task)
    if "error" in box:
        raise box["error"]
    return box["result"]
