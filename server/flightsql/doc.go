// Package flightsql serves Arrow Flight SQL over the pool of a Backend (a
// server.Server; this package imports only its serving core,
// server/serving): every statement runs in an embedded DuckDB (package
// sqlengine) in which ParqDB registers the table function ivf_search, and
// results stream back as Arrow record batches.
//
// DuckDB is linked with cgo, so the real implementation builds only with
// -tags duckdb,duckdb_arrow; without the tags Available is false and Serve
// returns sqlengine.ErrUnavailable. Clients authenticate with the server's
// token as "authorization: Bearer <token>" metadata or by HTTP basic auth
// (any user name, the token as password) through the Flight handshake.
package flightsql
