package catalog

import (
	"context"

	"github.com/parqdb/parqdb/metadata"
)

// Entry is the catalog's record of one index.
type Entry struct {
	Name string
	// MetadataLocation is the warehouse-relative location of the current
	// metadata file.
	MetadataLocation string
	// Source is the catalog-bound source table; it must match the current
	// snapshot's source-table.
	Source metadata.TableDefinition
}

// Catalog is safe for concurrent use by many goroutines and processes.
//
// Every method checks names with CheckName (ErrInvalidName) and locations
// with location.Check before any I/O. Entries are values: a returned Entry
// shares nothing with the catalog.
type Catalog interface {
	// Create registers a new index. It fails with ErrExists if the name is
	// taken. A dropped name may be created again.
	Create(ctx context.Context, e Entry) error
	// Load returns the current entry, or ErrNotFound.
	Load(ctx context.Context, name string) (Entry, error)
	// Commit atomically replaces the entry of next.Name (location and
	// source binding) if and only if its current metadata location equals
	// expected; otherwise ErrConflict (or ErrNotFound) and nothing changes.
	// Of any number of concurrent Commits with the same expected location,
	// at most one succeeds.
	Commit(ctx context.Context, expected string, next Entry) error
	// List returns all index names in ascending byte order.
	List(ctx context.Context) ([]string, error)
	// Drop removes an index entry (not its files), or ErrNotFound.
	Drop(ctx context.Context, name string) error
	// String describes the catalog for messages; it never contains a
	// password or other credential.
	String() string
	// Close releases resources.
	Close() error
}
