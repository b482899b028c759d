package sqlengine

import "github.com/parqdb/parqdb/server"

// Options configure an Engine.
type Options struct {
	// Limits bound the table functions' k, nprobe and refine (zero
	// fields: server.DefaultLimits).
	Limits server.Limits
	// Admitter, if set, admits every table-function search as one search
	// request (the server's, so that HTTP and SQL share one bound on
	// concurrent searches); its time limit is Limits.Timeout and covers
	// the wait for a running slot.
	Admitter *server.Admitter
	// OnSearch, if set, is called after every search a table function
	// runs, with the index name and the number of rows (for metrics).
	OnSearch func(index string, rows int)
}
