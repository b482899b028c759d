package reliability_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/parqdb/parqdb/catalog"
	"github.com/parqdb/parqdb/indexer"
	"github.com/parqdb/parqdb/metadata"
	"github.com/parqdb/parqdb/storage"
)

// TestGCCollectsUncommittedMetadata: a writer killed between writing a
// metadata file and committing it leaves the file as an orphan, and a gc
// whose grace period has passed must delete it — also when the file keeps
// the current last-sequence-number, as an expire's successor does.
func TestGCCollectsUncommittedMetadata(t *testing.T) {
	for _, tc := range []struct {
		name string
		next func(base *metadata.Metadata) (*metadata.Metadata, error)
	}{
		{"expire", func(base *metadata.Metadata) (*metadata.Metadata, error) {
			return metadata.RemoveSnapshots(base, []int64{base.Snapshots[0].SnapshotID}, time.Now().UnixMilli())
		}},
		{"refresh", func(base *metadata.Metadata) (*metadata.Metadata, error) {
			s := *base.CurrentSnapshot()
			return metadata.Successor(base, s, time.Now().UnixMilli())
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			e := localBackend(t, "local", "").open(t)
			src := newSource(t)
			if _, err := indexer.Create(ctx, buildEnv(e), createOptions("ix", src)); err != nil {
				t.Fatal(err)
			}
			if err := writePart(filepath.Join(src, "p000001.parquet"), 10_000, 30, 2); err != nil {
				t.Fatal(err)
			}
			if _, err := indexer.Refresh(ctx, buildEnv(e), "ix", indexer.RefreshOptions{}); err != nil {
				t.Fatal(err)
			}
			base, _, err := catalog.LoadMetadata(ctx, e.Catalog, e.Warehouse, "ix")
			if err != nil {
				t.Fatal(err)
			}
			next, err := tc.next(base)
			if err != nil {
				t.Fatal(err)
			}
			time.Sleep(20 * time.Millisecond) // a later modification time than the current file's
			loc, err := catalog.WriteMetadata(ctx, e.Warehouse, next)
			if err != nil {
				t.Fatal(err)
			}
			// The writer dies here, before its commit.
			collect(t, e, "ix")
			if _, err := e.Warehouse.Stat(ctx, loc); !errors.Is(err, storage.ErrNotExist) {
				t.Errorf("the uncommitted metadata file %s is still there after gc (stat: %v)", loc, err)
			}
		})
	}
}
