package sqlengine

import (
	"github.com/parqdb/parqdb/internal/membudget"
	"github.com/parqdb/parqdb/server/serving"
)

// MinMemoryLimit is the smallest Options.MemoryLimit: 16 MiB.
const MinMemoryLimit = 16 << 20

// DefaultMemoryLimit is the SQL engine's memory bound when
// Options.MemoryLimit is 0: half of the process cache budget
// (membudget.Default, --cache-size), at least 256 MiB. It is read when the
// engine opens, so set the budget first.
func DefaultMemoryLimit() int64 {
	return max(membudget.Default.Limit()/2, 256<<20)
}

// Options configure an Engine.
type Options struct {
	// Limits bound the table functions' k, nprobe and refine (zero
	// fields: serving.DefaultLimits).
	Limits serving.Limits
	// Admitter, if set, admits every table-function search as one search
	// request (the server's, so that HTTP and SQL share one bound on
	// concurrent searches); its time limit is Limits.Timeout and covers
	// the wait for a running slot.
	Admitter *serving.Admitter
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
	// MemoryLimit bounds the memory DuckDB holds for all statements
	// together (its memory_limit), in bytes; 0 is DefaultMemoryLimit(),
	// and less than MinMemoryLimit is an error. Nothing spills to disk (no
	// temporary directory): a statement that needs more fails with a
	// sql_error that says so, and the engine keeps answering.
	MemoryLimit int64
	// AllowedDirs are directories whose files statements may read (and
	// write) with external access off, through DuckDB's
	// allowed_directories; each must exist.
	AllowedDirs []string
}
