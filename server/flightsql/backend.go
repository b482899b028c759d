package flightsql

import (
	"log/slog"
	"time"

	"github.com/parqdb/parqdb/server/serving"
)

// Backend is what Flight SQL serves over: the serving core of the HTTP
// server it runs next to (a *server.Server is one), whose pool, limits,
// admission and token it shares, and whose metrics count its statements.
// It is an interface so that this package does not import the HTTP front
// end. Its methods are safe for concurrent use.
type Backend interface {
	Pool() *serving.Pool
	Limits() serving.Limits
	Admitter() *serving.Admitter
	Token() serving.Token
	Logger() *slog.Logger
	// SQLAllowDirs and SQLMemory configure the SQL engine
	// (sqlengine.Options.AllowedDirs, MemoryLimit).
	SQLAllowDirs() []string
	SQLMemory() int64
	// ObserveSQL records one statement's outcome (a serving code or "ok")
	// and duration.
	ObserveSQL(code string, d time.Duration)
}
