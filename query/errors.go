package query

import (
	"errors"
	"fmt"
	"strings"

	"github.com/parqdb/parqdb/internal/source"

	"github.com/parqdb/parqdb/internal/errclass"
)

// Sentinel errors, tested with errors.Is.
var (
	// ErrStale means the source no longer matches the snapshot's exact
	// source state; `parqdb index refresh` brings the index up to date.
	ErrStale = errors.New("source changed since the index was built")
	// ErrNoSnapshot means the requested snapshot is not retained.
	ErrNoSnapshot = errors.New("no such snapshot")
	// ErrCorrupt means an index file disagrees with its metadata. It is of
	// the corrupt class (errclass.ErrCorrupt), as every error Open returns
	// for damaged stored data is (storedDataErr).
	ErrCorrupt = errclass.Corrupt("index is corrupt")
	// ErrBadQuery means a query vector or option is invalid.
	ErrBadQuery = errors.New("invalid query")
	// ErrKeyNotFound means --near-key named no source row.
	ErrKeyNotFound = errors.New("key not found in the source")
	// ErrKeyNotIndexed means --near-key named a key that no row the
	// snapshot indexed has, but a row of a file added to the source since
	// the build has: `parqdb index refresh` indexes it.
	ErrKeyNotIndexed = errors.New("key is only in a source file the snapshot does not index")
	// ErrSourceInvalid means a search found source rows that break the
	// source contract (ivf-index-schema §8): a duplicate or null key, a bad
	// vector. Builds refuse such sources, so the source was changed in place
	// (keeping its files' sizes and versions) or the index was built by a
	// release that did not check keys; the fix is to correct the source and
	// run `parqdb index refresh`. It is the source package's contract
	// sentinel, so every contract rule matches it.
	ErrSourceInvalid = source.ErrContract
	// ErrSourceUnreadable means a search could not read or decode a source
	// file: it was changed or removed after the index was opened, is
	// damaged, or its storage did not answer.
	ErrSourceUnreadable = source.ErrCorrupt
)

// StaleError reports a source whose state differs from the snapshot's in
// a way that stops a search: a file the snapshot recorded was removed or
// rewritten (or, for a snapshot without a recorded file list, the source's
// table-identity differs). Files added since the build do not stop a
// search (see Staleness).
type StaleError struct {
	Index      string
	SnapshotID int64
	Location   string
	// Files are the recorded files that moved, each a phrase naming the
	// file (`"a.parquet" was removed`, `"b.parquet" was rewritten (…)`).
	Files []string
	// Snapshot and Now describe the two states when Files is empty: what
	// the snapshot indexed ("2 files, 10000 rows") and what the source
	// holds now.
	Snapshot, Now string
	// Err is the failed read that revealed the change, or nil.
	Err error
}

func (e *StaleError) Error() string {
	if len(e.Files) > 0 {
		var what []string
		for i, f := range e.Files {
			if i == 3 {
				what = append(what, fmt.Sprintf("%d more files moved", len(e.Files)-3))
				break
			}
			what = append(what, "file "+f)
		}
		return fmt.Sprintf("index %q: %v: source %s: %s since snapshot %d was built; run `parqdb index refresh %s` to index its current state",
			e.Index, ErrStale, e.Location, strings.Join(what, ", "), e.SnapshotID, e.Index)
	}
	return fmt.Sprintf("index %q: %v: source %s held %s when snapshot %d was built and now holds %s (a file was added, removed or rewritten); run `parqdb index refresh %s` to index its current state",
		e.Index, ErrStale, e.Location, e.Snapshot, e.SnapshotID, e.Now, e.Index)
}

// Unwrap returns ErrStale and the failed read, if any.
func (e *StaleError) Unwrap() []error {
	if e.Err != nil {
		return []error{ErrStale, e.Err}
	}
	return []error{ErrStale}
}
