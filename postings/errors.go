package postings

import (
	"errors"
	"fmt"

	"github.com/parqdb/parqdb/internal/errclass"
)

// Sentinel errors. Every error returned by this package that is caused by
// bad input wraps exactly one of them; test with errors.Is. ErrCorrupt and
// ErrManifest, which only stored tables and manifests cause, are of the
// corrupt class (errclass.ErrCorrupt).
var (
	// ErrSchema means a Schema or a key value does not satisfy the profile.
	ErrSchema = errors.New("postings: invalid schema")
	// ErrCorrupt means a Parquet file, a fetched byte range or a table's
	// contents break the profile or the IVF table rules.
	ErrCorrupt = errclass.Corrupt("postings: corrupt table")
	// ErrManifest means a postings manifest is invalid.
	ErrManifest = errclass.Corrupt("postings: invalid manifest")
	// ErrOrder means a writer was called out of order (CIDs not ascending,
	// a row with another CID, a call after Close).
	ErrOrder = errors.New("postings: write out of order")
	// ErrFileFull means a bucket file cannot take another row group; the
	// caller starts the next file of the bucket.
	ErrFileFull = errors.New("postings: bucket file full")
	// ErrProperties means table-definition properties break the profile.
	ErrProperties = errors.New("postings: invalid provider properties")
)

// Error names the table, field or manifest path an invalid input came from.
type Error struct {
	// Where names the place, e.g. "manifest row-groups[3]" or
	// "ivf_centroids row 17 code".
	Where string
	// Msg says what is wrong.
	Msg string
	// Err is the sentinel (or a cause wrapping it).
	Err error
}

func (e *Error) Error() string { return fmt.Sprintf("%s: %s: %s", e.Err, e.Where, e.Msg) }

func (e *Error) Unwrap() error { return e.Err }

func errorf(sentinel error, where, format string, args ...any) error {
	return &Error{Where: where, Msg: fmt.Sprintf(format, args...), Err: sentinel}
}
