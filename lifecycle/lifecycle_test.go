package lifecycle

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/parqdb/parqdb/catalog"
	"github.com/parqdb/parqdb/indexer"
	"github.com/parqdb/parqdb/internal/source/sourcetest"
	"github.com/parqdb/parqdb/internal/testfix"
	"github.com/parqdb/parqdb/metadata"
	"github.com/parqdb/parqdb/query"
	"github.com/parqdb/parqdb/storage"
)

type fixture struct {
	env Env
	src string
	wh  string
}

func writePart(t *testing.T, path string, first int64, n int, seed uint64) {
	t.Helper()
	testfix.WritePart(t, path, first, n, 4, seed, 3, sourcetest.Options{})
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	dir := t.TempDir()
	f := &fixture{src: filepath.Join(dir, "src"), wh: filepath.Join(dir, "wh")}
	os.MkdirAll(f.src, 0o755)
	writePart(t, filepath.Join(f.src, "p0.parquet"), 0, 600, 1)
	w := testfix.NewWarehouse(t, f.wh)
	f.env = Env{Warehouse: w.Bucket, Catalog: w.Catalog}
	return f
}

func (f *fixture) benv() indexer.Env {
	return indexer.Env{Warehouse: f.env.Warehouse, Catalog: f.env.Catalog}
}

func (f *fixture) create(t *testing.T, name string) {
	t.Helper()
	_, err := indexer.Create(context.Background(), f.benv(), indexer.Options{
		Name: name, Source: f.src, VectorField: "embedding", KeyFields: []string{"id"}, NList: 8, ReuseCentroids: indexer.ReuseNever,
	})
	if err != nil {
		t.Fatal(err)
	}
}

// refreshN appends a part and refreshes, n times.
func (f *fixture) refreshN(t *testing.T, name string, n int) {
	t.Helper()
	for i := 0; i < n; i++ {
		writePart(t, filepath.Join(f.src, "r"+string(rune('a'+i))+".parquet"), int64(10000*(i+1)), 20, uint64(i+10))
		if _, err := indexer.Refresh(context.Background(), f.benv(), name, indexer.RefreshOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}

func TestExpire(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	f.create(t, "v")
	f.refreshN(t, "v", 3)
	if _, err := Expire(ctx, f.env, "v", ExpireOptions{}); err == nil {
		t.Fatal("expire without a selection accepted")
	}
	dry, err := Expire(ctx, f.env, "v", ExpireOptions{RetainLast: 2, DryRun: true})
	if err != nil || len(dry.Removed) != 2 {
		t.Fatalf("dry run: %+v %v", dry, err)
	}
	res, err := Expire(ctx, f.env, "v", ExpireOptions{RetainLast: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Removed) != 2 || res.Removed[0] != 1 || res.Removed[1] != 2 {
		t.Fatalf("removed %v, want [1 2]", res.Removed)
	}
	m, _, err := catalog.LoadMetadata(ctx, f.env.Catalog, f.env.Warehouse, "v")
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Snapshots) != 2 || m.LastSequenceNumber != 4 || len(m.SnapshotLog) != 2 {
		t.Fatalf("after expire: %d snapshots, last sequence %d, %d log entries", len(m.Snapshots), m.LastSequenceNumber, len(m.SnapshotLog))
	}
	// nothing left to expire: no commit
	again, err := Expire(ctx, f.env, "v", ExpireOptions{RetainLast: 2})
	if err != nil || len(again.Removed) != 0 || again.MetadataLocation != res.MetadataLocation {
		t.Fatalf("second expire: %+v %v", again, err)
	}
	// the next snapshot id is not a reused one
	f.refreshN(t, "v", 1)
	m, _, _ = catalog.LoadMetadata(ctx, f.env.Catalog, f.env.Warehouse, "v")
	if m.CurrentSnapshotID != 5 {
		t.Fatalf("new snapshot id %d, want 5", m.CurrentSnapshotID)
	}
	// older-than keeps the current snapshot whatever its age
	later := func() time.Time { return time.Now().Add(48 * time.Hour) }
	res, err = Expire(ctx, f.env, "v", ExpireOptions{OlderThan: time.Hour, Now: later})
	if err != nil || len(res.Removed) != 2 {
		t.Fatalf("older-than removed %v (%v), want the 2 non-current snapshots", res, err)
	}
	m, _, _ = catalog.LoadMetadata(ctx, f.env.Catalog, f.env.Warehouse, "v")
	if len(m.Snapshots) != 1 || m.CurrentSnapshotID != 5 {
		t.Fatalf("older-than: %d snapshots, current %d", len(m.Snapshots), m.CurrentSnapshotID)
	}
}

func keys(infos []storage.Info) map[string]bool {
	out := map[string]bool{}
	for _, in := range infos {
		out[in.Key] = true
	}
	return out
}

func TestGC(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	f.create(t, "v")
	f.refreshN(t, "v", 2)
	// Within the grace period nothing is deleted.
	rep, err := GC(ctx, f.env, GCOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Orphans) != 0 {
		t.Fatalf("orphans within grace: %v", rep.Orphans)
	}
	// Everything is referenced while all snapshots are retained.
	rep, err = GC(ctx, f.env, GCOptions{Grace: 0, GraceSet: true, Now: func() time.Time { return time.Now().Add(time.Second) }})
	if err != nil {
		t.Fatal(err)
	}
	// Old metadata files (superseded, older than grace) are orphans; data files are not.
	for _, o := range rep.Orphans {
		if filepath.Ext(o.Key) != ".json" || filepath.Base(filepath.Dir(o.Key)) == "ivf_postings" {
			t.Fatalf("referenced data reported as orphan: %s", o.Key)
		}
	}
	// Expire the first two snapshots: their own postings become orphans,
	// but the files the current manifest still lists stay.
	if _, err := Expire(ctx, f.env, "v", ExpireOptions{RetainLast: 1}); err != nil {
		t.Fatal(err)
	}
	later := func() time.Time { return time.Now().Add(time.Minute) }
	dry, err := GC(ctx, f.env, GCOptions{DryRun: true, Grace: time.Second, Now: later})
	if err != nil {
		t.Fatal(err)
	}
	orphans := keys(dry.Orphans)
	if len(orphans) == 0 {
		t.Fatal("no orphans after expire")
	}
	rep, err = GC(ctx, f.env, GCOptions{Grace: time.Second, Now: later})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Orphans) != len(dry.Orphans) {
		t.Fatalf("gc deleted %d, dry run listed %d", len(rep.Orphans), len(dry.Orphans))
	}
	for k := range orphans {
		if _, err := f.env.Warehouse.Stat(ctx, k); err == nil {
			t.Fatalf("%s not deleted", k)
		}
	}
	// The index still opens and every file it references exists: a second
	// gc finds nothing.
	rep, err = GC(ctx, f.env, GCOptions{Grace: time.Second, Now: later})
	if err != nil || len(rep.Orphans) != 0 {
		t.Fatalf("second gc: %v %v", rep, err)
	}
	if _, err := indexer.Refresh(ctx, f.benv(), "v", indexer.RefreshOptions{Retrain: true}); err != nil {
		t.Fatalf("refresh after gc: %v", err)
	}
}

func TestGCOrphanFromFailedCommitAndDrop(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	f.create(t, "v")
	// An orphan metadata file, as a crash between write and commit leaves.
	m, _, err := catalog.LoadMetadata(ctx, f.env.Catalog, f.env.Warehouse, "v")
	if err != nil {
		t.Fatal(err)
	}
	next, err := metadata.Successor(m, *m.CurrentSnapshot(), time.Now().UnixMilli())
	if err != nil {
		t.Fatal(err)
	}
	orphan, err := catalog.WriteMetadata(ctx, f.env.Warehouse, next)
	if err != nil {
		t.Fatal(err)
	}
	later := func() time.Time { return time.Now().Add(time.Hour) }
	// Within the grace period the orphan may be a commit in flight: kept.
	rep, err := GC(ctx, f.env, GCOptions{DryRun: true})
	if err != nil || len(rep.Orphans) != 0 {
		t.Fatalf("within grace: %v %v", rep, err)
	}
	rep, err = GC(ctx, f.env, GCOptions{DryRun: true, Grace: time.Minute, Now: later})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Orphans) != 1 || rep.Orphans[0].Key != orphan {
		t.Fatalf("orphans %v, want just %s", rep.Orphans, orphan)
	}
	// Dropping the index without purge leaves its files to gc.
	if _, err := Drop(ctx, f.env, "v", false); err != nil {
		t.Fatal(err)
	}
	rep, err = GC(ctx, f.env, GCOptions{Grace: time.Minute, Now: later})
	if err != nil {
		t.Fatal(err)
	}
	left, _ := f.env.Warehouse.List(ctx, "indexes/")
	left2, _ := f.env.Warehouse.List(ctx, "metadata/")
	if len(left)+len(left2) != 0 || len(rep.Orphans) == 0 {
		t.Fatalf("after drop + gc: %d + %d files left, %d deleted", len(left), len(left2), len(rep.Orphans))
	}
}

func TestDropPurge(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	f.create(t, "v")
	res, err := Drop(ctx, f.env, "v", true)
	if err != nil {
		t.Fatal(err)
	}
	if res.Deleted == 0 {
		t.Fatal("purge deleted nothing")
	}
	if _, err := f.env.Catalog.Load(ctx, "v"); err == nil {
		t.Fatal("index still in the catalog")
	}
	if _, err := Drop(ctx, f.env, "v", true); err == nil {
		t.Fatal("dropping a missing index succeeded")
	}
}

// TestGCLeftovers leaves an unfinished write behind, as a writer killed
// between Create and Close does, and checks that gc keeps it within the
// grace period, lists it with --dry-run once older, and then removes it.
func TestGCLeftovers(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	f.create(t, "v")
	w, err := f.env.Warehouse.Create(ctx, "indexes/killed/ivf_postings/bucket-0.parquet")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write([]byte("half a file")); err != nil {
		t.Fatal(err)
	}
	// w is never closed: its writer was killed.
	rep, err := GC(ctx, f.env, GCOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Leftovers) != 0 || rep.YoungLeftovers != 1 {
		t.Fatalf("within grace: leftovers %v, young %d; want none and 1", rep.Leftovers, rep.YoungLeftovers)
	}
	later := func() time.Time { return time.Now().Add(time.Hour) }
	dry, err := GC(ctx, f.env, GCOptions{DryRun: true, Grace: time.Minute, Now: later})
	if err != nil {
		t.Fatal(err)
	}
	if len(dry.Leftovers) != 1 || !strings.HasPrefix(path.Base(dry.Leftovers[0].Name), ".parqdb-tmp:") {
		t.Fatalf("dry run leftovers = %+v, want the temporary file", dry.Leftovers)
	}
	if _, err := os.Stat(filepath.Join(f.wh, filepath.FromSlash(dry.Leftovers[0].Name))); err != nil {
		t.Fatalf("dry run removed the leftover: %v", err)
	}
	rep, err = GC(ctx, f.env, GCOptions{Grace: time.Minute, Now: later})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Leftovers) != 1 {
		t.Fatalf("gc removed %d leftovers, want 1", len(rep.Leftovers))
	}
	if _, err := os.Stat(filepath.Join(f.wh, filepath.FromSlash(dry.Leftovers[0].Name))); !os.IsNotExist(err) {
		t.Fatalf("leftover still there after gc: %v", err)
	}
	// The index is untouched: a search still works.
	f.search(t, "v")
}

// search opens index name and runs one search that must return rows.
func (f *fixture) search(t *testing.T, name string) {
	t.Helper()
	ix, err := query.Open(context.Background(), query.Env{Warehouse: f.env.Warehouse, Catalog: f.env.Catalog}, name, query.OpenOptions{})
	if err != nil {
		t.Fatalf("open %s: %v", name, err)
	}
	defer ix.Close()
	res, err := ix.Search(context.Background(), []float32{0, 0, 0, 1}, query.Options{K: 5, NProbe: 8, Refine: 2})
	if err != nil {
		t.Fatalf("search %s: %v", name, err)
	}
	if len(res.Hits) != 5 {
		t.Fatalf("search %s: %d hits, want 5", name, len(res.Hits))
	}
}

// TestDropPurgeSharedMetadata points two catalog entries at one metadata
// file; purging one must not delete what the other references.
func TestDropPurgeSharedMetadata(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	f.create(t, "v")
	f.refreshN(t, "v", 1)
	entry, err := f.env.Catalog.Load(ctx, "v")
	if err != nil {
		t.Fatal(err)
	}
	twin := entry
	twin.Name = "w"
	if err := f.env.Catalog.Create(ctx, twin); err != nil {
		t.Fatal(err)
	}
	res, err := Drop(ctx, f.env, "v", true)
	if err != nil {
		t.Fatal(err)
	}
	if res.Kept == 0 {
		t.Fatalf("purge kept nothing: %+v", res)
	}
	f.search(t, "w")
	// Everything w references still exists: gc finds it all live and
	// reads every manifest without error.
	if _, err := GC(ctx, f.env, GCOptions{DryRun: true, Grace: 0, GraceSet: true}); err != nil {
		t.Fatalf("gc after purge: %v", err)
	}
	// Dropping the last entry with purge deletes the rest.
	res, err = Drop(ctx, f.env, "w", true)
	if err != nil {
		t.Fatal(err)
	}
	left, _ := f.env.Warehouse.List(ctx, "metadata/"+res.IndexUUID+"/")
	if res.Kept != 0 || res.Deleted == 0 || len(left) != 0 {
		t.Fatalf("second purge deleted %d, kept %d, %d metadata files left", res.Deleted, res.Kept, len(left))
	}
}

// TestGCInvalidCatalogName puts a row with a name that breaks the naming
// rules into the catalog table (as another tool or an old version might):
// gc must report it as a problem, not as a usage error, and delete nothing.
func TestGCInvalidCatalogName(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	f.create(t, "v")
	db, err := sql.Open("sqlite", filepath.Join(f.wh, "catalog.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`INSERT INTO ` + catalog.Table + ` SELECT 'bad name/..', metadata_location, source_table, updated_at_ms FROM ` + catalog.Table + ` WHERE name = 'v'`); err != nil {
		t.Fatal(err)
	}
	before, _ := f.env.Warehouse.List(ctx, "")
	for _, dry := range []bool{true, false} {
		_, err := GC(ctx, f.env, GCOptions{DryRun: dry, Grace: 0, GraceSet: true, Now: func() time.Time { return time.Now().Add(time.Hour) }})
		if !errors.Is(err, ErrUnreadableEntry) || errors.Is(err, catalog.ErrInvalidName) || !strings.Contains(err.Error(), `"bad name/.."`) {
			t.Fatalf("gc (dry run %v) = %v; want ErrUnreadableEntry naming the entry, not ErrInvalidName", dry, err)
		}
	}
	after, _ := f.env.Warehouse.List(ctx, "")
	if len(after) != len(before) {
		t.Fatalf("gc deleted files: %d before, %d after", len(before), len(after))
	}
}

// TestGCCountsRetained: after expire, gc within the grace period keeps the
// expired snapshots' files and says so (Retained); once the period has
// passed, exactly those files are the orphans.
func TestGCCountsRetained(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	f.create(t, "v")
	f.refreshN(t, "v", 2)
	fresh, err := GC(ctx, f.env, GCOptions{DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Expire(ctx, f.env, "v", ExpireOptions{RetainLast: 1}); err != nil {
		t.Fatal(err)
	}
	within, err := GC(ctx, f.env, GCOptions{DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	later := func() time.Time { return time.Now().Add(time.Minute) }
	past, err := GC(ctx, f.env, GCOptions{DryRun: true, Grace: time.Second, Now: later})
	if err != nil {
		t.Fatal(err)
	}
	if len(within.Orphans) != 0 || len(within.Young) != 0 {
		t.Fatalf("within the grace period: %d orphans, %d young, want none", len(within.Orphans), len(within.Young))
	}
	if within.Retained == 0 || within.Retained != len(past.Orphans) {
		t.Fatalf("within the grace period %d retained; past it %d orphans: want the same, not 0", within.Retained, len(past.Orphans))
	}
	if cur := within.Live - within.Retained; cur != past.Live || past.Retained != 0 {
		t.Fatalf("in use by the current snapshot: %d within, %d (retained %d) past the grace period", cur, past.Live, past.Retained)
	}
	// Before expire only the two superseded metadata files are retained.
	// Expire deletes nothing and writes one metadata file: every file that
	// was live stays live, now partly retained.
	if want := fresh.Live + 1; within.Live != want || fresh.Retained != 2 {
		t.Fatalf("live %d after expire, %d before (retained %d): want %d", within.Live, fresh.Live, fresh.Retained, want)
	}
}
