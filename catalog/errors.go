package catalog

import "errors"

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
	// ErrUnknownCatalog means Open did not recognise the catalog spec.
	ErrUnknownCatalog = errors.New("unknown catalog")
	// ErrCorrupt means the catalog's own records cannot be read (a pointer
	// object or a stored source binding that does not parse).
	ErrCorrupt = errors.New("corrupt catalog record")
)

// ErrBindingMismatch means a catalog source binding and the current
// snapshot's source-table do not identify the same table state
// (index-metadata-spec "Source Binding"); nothing was committed.
var ErrBindingMismatch = errors.New("catalog source binding does not match the current snapshot's source-table")
