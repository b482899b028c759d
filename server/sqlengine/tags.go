//go:build duckdb && !duckdb_arrow

package sqlengine

// The engine streams results through duckdb-go's Arrow interface, which
// that module compiles only with its duckdb_arrow tag: build with
// -tags duckdb,duckdb_arrow.
var _ = build_with_tags_duckdb_and_duckdb_arrow
