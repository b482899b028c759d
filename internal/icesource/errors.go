package icesource

import "errors"

// Sentinels wrapped by every error of this package.
var (
	// ErrRef: the iceberg:// reference is malformed.
	ErrRef = errors.New("bad iceberg table reference")
	// ErrCatalog: the catalog is not configured or cannot be opened.
	ErrCatalog = errors.New("iceberg catalog")
	// ErrNotFound: the namespace, table or snapshot does not exist.
	ErrNotFound = errors.New("iceberg table not found")
	// ErrUnsupported: the table uses a feature this provider does not read
	// (delete files, non-Parquet data files, data files outside the table
	// location).
	ErrUnsupported = errors.New("unsupported iceberg table")
	// ErrProperties: a source-table definition's properties break the
	// iceberg provider profile.
	ErrProperties = errors.New("invalid iceberg source-table properties")
	// ErrMoved: the table the catalog returns is not the one the index was
	// built from (another table UUID).
	ErrMoved = errors.New("iceberg table replaced")
)
