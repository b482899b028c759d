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
	// ExternalAccess lets statements read and write files and URLs with
	// the rights of the process (read_parquet('data/*.parquet'), COPY … TO,
	// s3:// through DuckDB's httpfs, which DuckDB may download and load):
	// for the local `parqdb sql`, which runs as its user. Servers leave it
	// false: then statements reach only the indexes' sources (one view per
	// index) and AllowedDirs.
	ExternalAccess bool
	// AllowedDirs are directories whose files statements may read (and
	// write) with external access off, through DuckDB's
	// allowed_directories; each must exist.
	AllowedDirs []string
}
