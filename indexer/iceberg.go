package indexer

import (
	"context"

	"github.com/parqdb/parqdb/internal/icesource"
	"github.com/parqdb/parqdb/internal/source"
	"github.com/parqdb/parqdb/metadata"
	"github.com/parqdb/parqdb/postings"
)

// openSource opens a source given as a location: an iceberg:// table
// reference (its current snapshot, docs/iceberg.md) or a Parquet file or
// folder (the parquet provider). It returns the canonical location.
func openSource(ctx context.Context, loc string) (*source.Table, string, error) {
	if icesource.IsRef(loc) {
		return icesource.Open(ctx, loc, 0)
	}
	return source.OpenLocation(ctx, loc)
}

// tableDefinition is the source-table definition of an opened source: the
// provider's own for a provider table (with the catalog identifier of an
// Iceberg table), else the parquet provider's location and identity.
func tableDefinition(t *source.Table, loc string) metadata.TableDefinition {
	if d := t.Definition(); d != nil {
		def := metadata.TableDefinition{Provider: d.Provider, Properties: d.Properties}
		if r, err := icesource.ParseRef(d.Properties["location"]); err == nil && d.Provider == icesource.Provider {
			def.Identifier = &metadata.TableIdentifier{Catalog: r.Catalog, Namespace: r.Namespace, Name: r.Table}
		}
		return def
	}
	return metadata.TableDefinition{
		Provider: postings.Provider,
		Properties: map[string]string{
			"definition-version": "1",
			"location":           loc,
			"table-identity":     t.Identity(),
		},
	}
}
