// Package sqlengine runs SQL statements in an embedded DuckDB in which
// ParqDB registers its search functions:
//
//	ivf_search(index_name, query_vector, k, nprobe := …, refine := …, recall := …, snapshot := …, columns := …, filter := …)
//	ivf_search_key(index_name, key, k, …)
//	ivf_search_where(index_name, query_vector, k, where_predicate, …)
//	ivf_search_key_where(index_name, key, k, where_predicate, …)
//	ivf_nearest(index_name, vector_expr, k, …)   -- scalar: LIST<STRUCT(_distance FLOAT, _row JSON)>
//	ivf_nearest_key(index_name, key_expr, k, …)  -- the same near each row's key
//	source(index_name)                           -- the index's source view
//
// The table functions return the index's source columns followed by
// _distance, ordered by _distance (ties by key), exactly the rows
// `parqdb search` prints; their arguments must be constants (DuckDB binds
// table functions before reading any table). ivf_nearest runs one search
// per row of another table. The options are DuckDB named arguments (NULL
// or absent: the default); the query vector is a JSON array in a string
// or a list. Each index with a local source has a view of that source's
// Parquet files under its name (SHOW TABLES lists them); source(name)
// resolves the exact name, also for names equal but for case, which
// share one (refusing) view because DuckDB's identifiers are
// case-insensitive.
//
// Without Options.ExternalAccess (the server), statements read no files
// but the indexes' source Parquet files and Options.AllowedDirs, and
// change no settings. In both modes DuckDB holds at most
// Options.MemoryLimit and spills nothing to disk. DuckDB is linked with cgo, so the engine builds only with
// -tags duckdb,duckdb_arrow; without them New returns ErrUnavailable.
package sqlengine
