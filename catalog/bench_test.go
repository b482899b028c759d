package catalog_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/parqdb/parqdb/catalog"
	"github.com/parqdb/parqdb/catalog/catalogtest"
	"github.com/parqdb/parqdb/metadata"
)

// BenchmarkCommit measures one compare-and-swap commit (no metadata file):
// the catalog's own cost per commit, one writer.
func BenchmarkCommit(b *testing.B) {
	kinds := []struct {
		name string
		new  func(b *testing.B) catalog.Catalog
	}{
		{"SQLite", func(b *testing.B) catalog.Catalog {
			return must(catalog.OpenSQLite(context.Background(), filepath.Join(b.TempDir(), "catalog.db")))
		}},
		{"WarehouseLocal", func(b *testing.B) catalog.Catalog { return catalog.NewWarehouse(newLocal(b)) }},
	}
	for _, k := range kinds {
		b.Run(k.name, func(b *testing.B) {
			ctx := context.Background()
			c := k.new(b)
			defer c.Close()
			loc := func(i int) string { return fmt.Sprintf("metadata/u/%020d-x.metadata.json", i) }
			e := catalog.Entry{Name: "docs", MetadataLocation: loc(0), Source: catalogtest.Source(0)}
			if err := c.Create(ctx, e); err != nil {
				b.Fatal(err)
			}
			i := 0
			for b.Loop() {
				next := e
				next.MetadataLocation = loc(i + 1)
				if err := c.Commit(ctx, loc(i), next); err != nil {
					b.Fatal(err)
				}
				i++
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "commits/s")
		})
	}
}

// BenchmarkUpdate measures a whole Update (load, parse, successor, write,
// commit) on a small index, one writer.
func BenchmarkUpdate(b *testing.B) {
	ctx := context.Background()
	wh := newLocal(b)
	c := must(catalog.OpenSQLite(ctx, filepath.Join(b.TempDir(), "catalog.db")))
	defer c.Close()
	m := baseMetadata(b)
	if _, err := catalog.CreateIndex(ctx, c, wh, "docs", m, m.CurrentSnapshot().SourceTable); err != nil {
		b.Fatal(err)
	}
	i := 0
	for b.Loop() {
		_, _, err := catalog.Update(ctx, c, wh, "docs", func(base *metadata.Metadata, e catalog.Entry) (*metadata.Metadata, *catalog.Entry, error) {
			// Keep the index small: drop the previous snapshot each time.
			next, err := successor(base, "bench", i)
			if err != nil || len(next.Snapshots) < 3 {
				return next, nil, err
			}
			next, err = metadata.RemoveSnapshots(next, []int64{next.Snapshots[0].SnapshotID}, 0)
			return next, nil, err
		})
		if err != nil {
			b.Fatal(err)
		}
		i++
	}
}
