package query

import (
	"errors"
	"fmt"

	"github.com/parqdb/parqdb/internal/source"
)

// Sentinel errors, tested with errors.Is.
var (
	// ErrStale means the source no longer matches the snapshot's exact
	// source state; `parqdb index refresh` brings the index up to date.
	ErrStale = errors.New("source changed since the index was built")
	// ErrNoSnapshot means the requested snapshot is not retained.
	ErrNoSnapshot = errors.New("no such snapshot")
	// ErrCorrupt means an index file disagrees with its metadata.
	ErrCorrupt = errors.New("index is corrupt")
	// ErrBadQuery means a query vector or option is invalid.
	ErrBadQuery = errors.New("invalid query")
	// ErrKeyNotFound means --near-key named no source row.
	ErrKeyNotFound = errors.New("key not found in the source")
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

// StaleError reports a source whose state differs from the snapshot's.
type StaleError struct {
	Index      string
	SnapshotID int64
	Location   string
	Snapshot   string // what the snapshot indexed, e.g. "2 files, 10000 rows"
	Now        string // what the source holds now
}

func (e *StaleError) Error() string {
	return fmt.Sprintf("index %q: %v: source %s held %s when snapshot %d was built and now holds %s (a file was added, removed or rewritten); run `parqdb index refresh %s` to index its current state",
		e.Index, ErrStale, e.Location, e.Snapshot, e.SnapshotID, e.Now, e.Index)
}

func (e *StaleError) Unwrap() error { return ErrStale }
