// Package serving is the serving core shared by ParqDB's front ends — the
// HTTP API (package server), the SQL table functions (server/sqlengine)
// and Flight SQL (server/flightsql): the Pool of opened snapshots, the
// Admitter that bounds the searches in flight, the request Limits, the
// Token clients present, and the stable error codes every failure is
// classified into (AsError, Code). It holds no HTTP handler, so the SQL
// front ends do not import package server.
package serving
