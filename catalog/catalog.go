// Package catalog maps index names to their current metadata file and
// source-table binding, and moves that pointer by compare-and-swap
// (index-metadata-spec "Overview"). Implementations: SQLite and PostgreSQL
// (one SQL code path) and an object-store catalog inside the warehouse.
package catalog

import (
	"context"
	"errors"

	"github.com/parqdb/parqdb/metadata"
)

// Sentinel errors, tested with errors.Is.
var (
	// ErrConflict means a Commit's expected location was not current: another
	// writer won. Callers re-read, rebuild on the new base and retry.
	ErrConflict = errors.New("catalog commit conflict")
	// ErrNotFound means no index has that name.
	ErrNotFound = errors.New("index not found")
	// ErrExists means Create found an index with that name.
	ErrExists = errors.New("index already exists")
	// ErrInvalidName means an index name breaks the rules of CheckName.
	ErrInvalidName = errors.New("invalid index name")
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
type Catalog interface {
	// Create registers a new index. It fails with ErrExists if the name is taken.
	Create(ctx context.Context, e Entry) error
	// Load returns the current entry, or ErrNotFound.
	Load(ctx context.Context, name string) (Entry, error)
	// Commit atomically replaces the entry of next.Name if and only if its
	// current metadata location equals expected; otherwise ErrConflict (or
	// ErrNotFound) and nothing changes.
	Commit(ctx context.Context, expected string, next Entry) error
	// List returns all index names in ascending order.
	List(ctx context.Context) ([]string, error)
	// Drop removes an index entry (not its files), or ErrNotFound.
	Drop(ctx context.Context, name string) error
	// Close releases resources.
	Close() error
}
