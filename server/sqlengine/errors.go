package sqlengine

import "errors"

// ErrUnavailable means this binary was built without DuckDB.
var ErrUnavailable = errors.New("SQL needs the DuckDB build of parqdb, bin/parqdb-sql: make build-sql (or go build -tags duckdb,duckdb_arrow -o bin/parqdb-sql ./cmd/parqdb; see docs/serve.md)")

// ErrSQL marks an error in the statement itself (parse, bind, or a bad
// table function argument): a client error, not a server failure.
var ErrSQL = errors.New("SQL error")
