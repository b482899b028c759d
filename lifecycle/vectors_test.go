package lifecycle

import (
	"context"
	"testing"
	"time"

	"github.com/parqdb/parqdb/catalog"
	"github.com/parqdb/parqdb/indexer"
	"github.com/parqdb/parqdb/postings"
	"github.com/parqdb/parqdb/vecfile"
)

// TestGCKeepsVectorsFile: the vectors file of a retained snapshot's
// postings folder is live (gc leaves it, however old); a refresh writes
// its successor's own; once no retained snapshot uses its folder it is an
// orphan, while the successor's stays.
func TestGCKeepsVectorsFile(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	_, err := indexer.Create(ctx, f.benv(), indexer.Options{
		Name: "v", Source: f.src, VectorField: "embedding", KeyFields: []string{"id"}, NList: 8, VectorsFile: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	current := func() string {
		m, _, err := catalog.LoadMetadata(ctx, f.env.Catalog, f.env.Warehouse, "v")
		if err != nil {
			t.Fatal(err)
		}
		return vecfile.Location(postings.SnapshotLayout(m.CurrentSnapshot()).Meta)
	}
	first := current()
	later := func() time.Time { return time.Now().Add(time.Minute) }
	if _, err := GC(ctx, f.env, GCOptions{Grace: time.Second, Now: later}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.env.Warehouse.Stat(ctx, first); err != nil {
		t.Fatalf("gc deleted the current snapshot's vectors file %s: %v", first, err)
	}
	f.refreshN(t, "v", 1)
	second := current()
	if second == first {
		t.Fatalf("the refresh kept the postings folder of %s", first)
	} else if _, err := f.env.Warehouse.Stat(ctx, second); err != nil {
		t.Fatalf("the refresh wrote no vectors file %s: %v", second, err)
	}
	if _, err := Expire(ctx, f.env, "v", ExpireOptions{RetainLast: 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := GC(ctx, f.env, GCOptions{Grace: time.Second, Now: later}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.env.Warehouse.Stat(ctx, first); err == nil {
		t.Fatalf("the expired snapshot's vectors file %s survived gc", first)
	}
	if _, err := f.env.Warehouse.Stat(ctx, second); err != nil {
		t.Fatalf("gc deleted the current snapshot's vectors file %s: %v", second, err)
	}
}
