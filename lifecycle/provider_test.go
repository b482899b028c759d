package lifecycle

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/parqdb/parqdb/catalog"
	"github.com/parqdb/parqdb/metadata"
	"github.com/parqdb/parqdb/postings"
)

// TestGCRefusesUnknownProvider is issue 10 defect 7 for gc: a retained
// snapshot whose index tables another provider lays out (here "lance",
// with a file in its postings folder that no parquet manifest lists) made
// gc treat that provider's files as orphans. gc now stops before deleting
// anything, naming the index, the snapshot and the field.
func TestGCRefusesUnknownProvider(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	f.create(t, "a")
	m, entry, err := catalog.LoadMetadata(ctx, f.env.Catalog, f.env.Warehouse, "a")
	if err != nil {
		t.Fatal(err)
	}
	data, err := metadata.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	next, err := metadata.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	next.LastUpdatedMs++
	s := next.CurrentSnapshot()
	s.IndexProvider.Provider = "lance"
	loc, err := catalog.WriteMetadata(ctx, f.env.Warehouse, next)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.env.Catalog.Commit(ctx, entry.MetadataLocation, catalog.Entry{Name: "a", MetadataLocation: loc, Source: s.SourceTable}); err != nil {
		t.Fatal(err)
	}
	post := s.IndexTables[metadata.RolePostings].Properties["location"]
	lanceFile := filepath.Join(f.wh, filepath.FromSlash(post), "data.lance")
	if err := os.WriteFile(lanceFile, []byte("a table of another provider"), 0o644); err != nil {
		t.Fatal(err)
	}

	_, err = GC(ctx, f.env, GCOptions{Grace: time.Nanosecond, GraceSet: true, Now: func() time.Time { return time.Now().Add(time.Hour) }})
	if !errors.Is(err, postings.ErrProperties) || !strings.Contains(err.Error(), `index "a"`) || !strings.Contains(err.Error(), "index-provider.provider") {
		t.Fatalf("gc over an index of provider lance: %v, want ErrProperties naming the index and the field", err)
	}
	if _, err := os.Stat(lanceFile); err != nil {
		t.Fatalf("gc deleted a file of the lance provider's table: %v", err)
	}
}
