package catalog

import (
	"errors"
	"fmt"

	"github.com/parqdb/parqdb/internal/errclass"
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
	// ErrUnknownCatalog means Open did not recognise the catalog spec.
	ErrUnknownCatalog = errors.New("unknown catalog")
	// ErrNoWarehouse means OpenEnv found no warehouse where its spec points
	// (NoWarehouseError says what is missing).
	ErrNoWarehouse = errors.New("no warehouse")
	// ErrCorrupt means the catalog's own records cannot be read (a pointer
	// object or a stored source binding that does not parse). It is of the
	// corrupt class (errclass.ErrCorrupt).
	ErrCorrupt = errclass.Corrupt("corrupt catalog record")
)

// ErrBindingMismatch means a catalog source binding and the current
// snapshot's source-table do not identify the same table state
// (index-metadata-spec "Source Binding"); nothing was committed.
var ErrBindingMismatch = errors.New("catalog source binding does not match the current snapshot's source-table")

// NotFoundError is the error of a Load or Drop of a name that the catalog
// does not hold; errors.Is(err, ErrNotFound) matches it. Front ends read
// Name to suggest the nearest name the catalog holds.
type NotFoundError struct {
	Catalog string // the catalog, as its String names it
	Name    string // the name asked for
}

func (e *NotFoundError) Error() string {
	return fmt.Sprintf("%s has no index named %q: %v", e.Catalog, e.Name, ErrNotFound)
}

func (e *NotFoundError) Unwrap() error { return ErrNotFound }
