package icesource

import (
	"context"

	"github.com/parqdb/parqdb/internal/source"
	"github.com/parqdb/parqdb/metadata"
	"github.com/parqdb/parqdb/storage"
)

// Importing this package links the iceberg provider: query, verify,
// artifact and indexer then open iceberg source tables (source.Lookup).
func init() { source.Register(Provider, provider{}) }

// provider is the source.Provider of Iceberg tables.
type provider struct{}

func (provider) Scheme() string { return Scheme }

func (provider) OpenLocation(ctx context.Context, loc string) (*source.Table, string, error) {
	return Open(ctx, loc, 0)
}

func (provider) CheckProperties(props map[string]string) error { return CheckProperties(props) }

func (provider) OpenBound(ctx context.Context, props map[string]string, wrap func(storage.Bucket) storage.Bucket) (*source.Table, error) {
	return OpenBound(ctx, props, wrap)
}

func (provider) Version(props map[string]string) int64 { return SnapshotID(props) }

func (provider) CurrentVersion(ctx context.Context, props map[string]string) (int64, error) {
	return CurrentSnapshotID(ctx, props["location"])
}

func (provider) Drift(ctx context.Context, props map[string]string, from int64) (int64, bool, error) {
	return Drift(ctx, props["location"], from)
}

func (provider) IdentityOf(props map[string]string, keys []string, sizes, rows []int64) string {
	return IdentityOf(props["table-uuid"], SnapshotID(props), keys, sizes, rows)
}

func (provider) Identifier(props map[string]string) *metadata.TableIdentifier {
	r, err := ParseRef(props["location"])
	if err != nil {
		return nil
	}
	return &metadata.TableIdentifier{Catalog: r.Catalog, Namespace: r.Namespace, Name: r.Table}
}
