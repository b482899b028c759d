// Package sqlengine runs SQL statements in an embedded DuckDB in which
// ParqDB registers the table function
//
//	ivf_search(index VARCHAR, query_vector VARCHAR, k INTEGER [, nprobe INTEGER [, refine INTEGER]])
//
// returning the index's source columns followed by _distance, ordered by
// _distance (ties by key), exactly the rows `parqdb search` prints. The
// query vector is a JSON array in a string ('[0.1, 0.2, …]'): DuckDB table
// functions registered from Go cannot take LIST arguments. Named
// arguments columns := 'a,b' and snapshot := N select source columns and
// a retained snapshot. ivf_search_key(index, key, k [, nprobe, refine])
// searches near the source row with that key (comma-separated for
// composite keys), like `parqdb search --near-key`.
//
// ivf_search_where(index, query_vector, k, where [, nprobe, refine,
// snapshot]) and ivf_search_key_where(index, key, k, where [, …]) are
// filtered searches (`parqdb search --where`): the k nearest rows among
// those for which the predicate is true. A SQL WHERE on ivf_search filters
// after the top-k instead: Go table functions get no filter push-down.
//
// DuckDB is linked with cgo, so the engine builds only with
// -tags duckdb,duckdb_arrow; without them New returns ErrUnavailable.
// All arguments of the table functions must be constants.
package sqlengine
