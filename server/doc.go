// Package server is ParqDB's network front end: an HTTP JSON API (and,
// built with -tags duckdb,duckdb_arrow, Arrow Flight SQL in
// server/flightsql) over the search pipeline in package query. It holds no
// index logic and no state beyond caches, so any number of replicas can
// serve the same warehouse and catalog.
//
// The pieces, in request order (what HTTP shares with the SQL front ends
// is in package server/serving):
//
//   - auth.go: the bearer-token check (serving.Token, constant time; the
//     loopback rule, serving.CheckListen: a listener on a non-loopback
//     address needs a token).
//   - http.go: routes, JSON errors with the stable codes of
//     serving.AsError, limits (serving.Limits), access logs (log/slog) and
//     Prometheus metrics (metrics.go).
//   - request.go: decoding and validating a search request;
//     strictjson.go: no field given twice, names matched exactly.
//   - admission (serving.Admitter: a bounded number of running and queued
//     searches, shared with SQL; 503 overloaded beyond), the rows-per-answer
//     limit, the shared query slots, and the time limit that covers the
//     whole request, encoding and writing the answer included (504;
//     load.go encodes and writes the answer).
//   - the opened indexes (serving.Pool): it opens an index on first use,
//     polls the catalog for newly committed snapshots, opens a new snapshot
//     in the background while the old one keeps serving, swaps them
//     atomically and closes the old one when its last in-flight request
//     ends.
//
// The OpenAPI document, openapi.yaml, is embedded and served at
// /openapi.yaml; docs/serve.md describes operations.
package server
