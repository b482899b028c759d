// Command libparqdb is ParqDB's C API: built with
//
//	go build -buildmode=c-shared -o libparqdb.so ./cmd/libparqdb
//
// it is the shared library the Python package (python/parqdb) loads with
// ctypes, so that Python runs searches and builds in process.
//
// The API is small on purpose:
//
//   - Objects (an opened warehouse and catalog, an opened index, a search
//     result, a task) are handles: positive int64s, released with
//     parqdb_release. A released or unknown handle is an error, never a crash.
//   - Every call that can fail returns its error as JSON in a string the
//     caller frees with parqdb_free: {"code": …, "message": …}, the codes
//     and messages the HTTP API answers (serving.AsError), plus "cancelled"
//     for a call stopped through its task.
//   - Management calls go through one entry point, parqdb_call(task,
//     method, args JSON): the methods and their arguments are in ops.go;
//     results are JSON.
//   - Search options are parsed once (parqdb_options) into a handle the
//     searches take. Searches (parqdb_search for a batch, parqdb_search1
//     for one vector with the fewest arguments, parqdb_search_key) read
//     the query vectors in place, check them as the HTTP API does, write
//     distances and per-query hit counts straight into caller-owned
//     buffers and return a result handle; the joined source rows are
//     fetched as JSON only when asked for (parqdb_result_rows), in the
//     encoding of rowjson.Row.
//   - A task (parqdb_task_new) carries the cancellation and progress of a
//     long call: the caller runs the call on one thread and, on another,
//     polls parqdb_task_progress and calls parqdb_task_cancel (Python does
//     it on KeyboardInterrupt). A cancelled build commits nothing.
//
// Every function is safe to call from several threads at once; the Go
// runtime runs each call on the calling thread, so a caller that releases
// its own lock (Python's GIL: ctypes does) searches in parallel.
package main
