package icesource

import (
	"context"

	"github.com/parqdb/parqdb/internal/source"
)

// OpenLocation opens a source given as a location: an iceberg:// table
// reference (its current snapshot, docs/iceberg.md) or a Parquet file or
// folder, local or s3:// (source.OpenLocation). It returns the table and
// the canonical location. It is the one way the commands that take a
// source location (index create, join) open it.
func OpenLocation(ctx context.Context, loc string) (*source.Table, string, error) {
	if IsRef(loc) {
		return Open(ctx, loc, 0)
	}
	return source.OpenLocation(ctx, loc)
}
