package query_test

import (
	"context"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parqdb/parqdb/catalog"
	"github.com/parqdb/parqdb/indexer"
	"github.com/parqdb/parqdb/internal/source"
	"github.com/parqdb/parqdb/metadata"
	"github.com/parqdb/parqdb/postings"
	"github.com/parqdb/parqdb/query"
)

// TestUnknownProviderRefused is issue 10 defect 7: metadata that names an
// index provider (or a provider property) ParqDB does not know was served
// as if it were parquet. Every open path — query.Open (search, bench, the
// server pool) and refresh — refuses it with an error naming the field,
// as it refuses an unknown index family; a source provider that ParqDB
// has but this binary does not link (this test does not import package
// iceberg) is refused with source.ErrNotLinked, naming the package that
// links it. Each case commits a successor
// metadata file through the catalog, so the binding check passes and only
// the provider rule can refuse it.
func TestUnknownProviderRefused(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name   string
		tamper func(s *metadata.Snapshot)
		field  string
		want   error // nil: postings.ErrProperties
	}{
		{"index provider lance", func(s *metadata.Snapshot) { s.IndexProvider.Provider = "lance" }, `index-provider.provider: "lance" is not supported`, nil},
		{"index provider property", func(s *metadata.Snapshot) {
			s.IndexProvider.Properties = map[string]string{"compression": "zstd"}
		}, `index-provider.properties: unknown property "compression"`, nil},
		{"index table property", func(s *metadata.Snapshot) {
			d := s.IndexTables[metadata.RolePostings]
			d.Properties = maps.Clone(d.Properties)
			d.Properties["format"] = "lance"
			s.IndexTables[metadata.RolePostings] = d
		}, "index-tables.ivf_postings.properties", nil},
		{"index table definition version", func(s *metadata.Snapshot) {
			d := s.IndexTables[metadata.RoleCentroids]
			d.DefinitionVersion = 2
			s.IndexTables[metadata.RoleCentroids] = d
		}, "index-tables.ivf_centroids.definition-version", nil},
		{"source provider", func(s *metadata.Snapshot) { s.SourceTable.Provider = "delta" }, `source-table.provider: "delta" is not supported`, nil},
		{"source provider not linked", func(s *metadata.Snapshot) { s.SourceTable.Provider = "iceberg" },
			`provider "iceberg" is not linked into this binary; import _ "github.com/parqdb/parqdb/iceberg"`, source.ErrNotLinked},
		{"source property", func(s *metadata.Snapshot) {
			s.SourceTable.Properties = maps.Clone(s.SourceTable.Properties)
			s.SourceTable.Properties["version-as-of"] = "3"
		}, `unknown property "version-as-of"`, nil},
	} {
		if tc.want == nil {
			tc.want = postings.ErrProperties
		}
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "src")
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			writeSynth(t, filepath.Join(dir, "a.parquet"), synthRows(1, 0, 300, 8))
			benv, env := localEnv(t)
			buildIndex(t, benv, dir, metadata.EncodingLVQ8, 4)
			ix, err := query.Open(ctx, env, "vecs", query.OpenOptions{})
			if err != nil {
				t.Fatalf("the untampered index does not open: %v", err)
			}
			ix.Close()

			// Rewrite the current snapshot and commit it with the matching
			// binding, as a writer of another implementation would.
			m, entry, err := catalog.LoadMetadata(ctx, env.Catalog, env.Warehouse, "vecs")
			if err != nil {
				t.Fatal(err)
			}
			data, err := metadata.Marshal(m)
			if err != nil {
				t.Fatal(err)
			}
			next, err := metadata.Parse(data) // a deep copy
			if err != nil {
				t.Fatal(err)
			}
			next.LastUpdatedMs++
			s := next.CurrentSnapshot()
			tc.tamper(s)
			loc, err := catalog.WriteMetadata(ctx, env.Warehouse, next)
			if err != nil {
				t.Fatalf("the tampered metadata is not valid metadata (the test must tamper only what the spec leaves to providers): %v", err)
			}
			if err := env.Catalog.Commit(ctx, entry.MetadataLocation, catalog.Entry{Name: "vecs", MetadataLocation: loc, Source: s.SourceTable}); err != nil {
				t.Fatal(err)
			}

			_, err = query.Open(ctx, env, "vecs", query.OpenOptions{})
			if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.field) {
				t.Fatalf("query.Open: %v, want %v naming %s", err, tc.want, tc.field)
			}
			if !strings.Contains(err.Error(), loc) {
				t.Errorf("query.Open error does not name the metadata file %s: %v", loc, err)
			}

			// Refresh over an appended part reads the base snapshot's tables.
			writeSynth(t, filepath.Join(dir, "b.parquet"), synthRows(2, 300, 20, 8))
			_, err = indexer.Refresh(ctx, benv, "vecs", indexer.RefreshOptions{})
			if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.field) {
				t.Fatalf("indexer.Refresh: %v, want %v naming %s", err, tc.want, tc.field)
			}
		})
	}
}

// TestOlderSnapshotUnboundSource is issue 10 defect 4 for query.Open: the
// catalog binds the current snapshot's source, so an older snapshot whose
// source-table names another location (a metadata file written by
// someone else) is refused before that location is opened.
func TestOlderSnapshotUnboundSource(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "src")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	writeSynth(t, filepath.Join(dir, "a.parquet"), synthRows(1, 0, 300, 8))
	benv, env := localEnv(t)
	buildIndex(t, benv, dir, metadata.EncodingLVQ8, 4)
	writeSynth(t, filepath.Join(dir, "b.parquet"), synthRows(2, 300, 20, 8))
	if _, err := indexer.Refresh(ctx, benv, "vecs", indexer.RefreshOptions{}); err != nil {
		t.Fatal(err)
	}
	m, entry, err := catalog.LoadMetadata(ctx, env.Catalog, env.Warehouse, "vecs")
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Snapshots) != 2 {
		t.Fatalf("%d snapshots after refresh, want 2", len(m.Snapshots))
	}
	first := m.Snapshots[0].SnapshotID

	// Moving the source is refused for the old snapshot; the current one
	// still opens.
	outside := filepath.Join(t.TempDir(), "outside.parquet")
	writeSynth(t, outside, synthRows(1, 0, 300, 8))
	data, err := metadata.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	next, err := metadata.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	next.LastUpdatedMs++
	old, _ := next.Snapshot(first)
	old.SourceTable.Properties = maps.Clone(old.SourceTable.Properties)
	old.SourceTable.Properties["location"] = outside
	loc, err := catalog.WriteMetadata(ctx, env.Warehouse, next)
	if err != nil {
		t.Fatal(err)
	}
	if err := env.Catalog.Commit(ctx, entry.MetadataLocation, catalog.Entry{Name: "vecs", MetadataLocation: loc, Source: entry.Source}); err != nil {
		t.Fatal(err)
	}
	_, err = query.Open(ctx, env, "vecs", query.OpenOptions{SnapshotID: first})
	if !errors.Is(err, catalog.ErrBindingMismatch) || !strings.Contains(err.Error(), outside) {
		t.Fatalf("Open of snapshot %d with an unbound source: %v, want ErrBindingMismatch naming %s", first, err, outside)
	}
	ix, err := query.Open(ctx, env, "vecs", query.OpenOptions{})
	if err != nil {
		t.Fatalf("the current snapshot: %v", err)
	}
	ix.Close()
}
