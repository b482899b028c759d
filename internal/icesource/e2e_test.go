package icesource_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/parqdb/parqdb/catalog"
	"github.com/parqdb/parqdb/filter"
	"github.com/parqdb/parqdb/indexer"
	"github.com/parqdb/parqdb/internal/icesource"
	"github.com/parqdb/parqdb/internal/icesource/icetest"
	"github.com/parqdb/parqdb/internal/source"
	"github.com/parqdb/parqdb/internal/testenv"
	"github.com/parqdb/parqdb/metadata"
	"github.com/parqdb/parqdb/postings"
	"github.com/parqdb/parqdb/query"
	"github.com/parqdb/parqdb/server"
	"github.com/parqdb/parqdb/storage"
	"github.com/parqdb/parqdb/verify"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// parqdb is a ParqDB warehouse (local folder, SQLite catalog).
func parqdb(t *testing.T) indexer.Env { return parqdbEnv(t) }

func parqdbEnv(t testing.TB) indexer.Env {
	t.Helper()
	ctx := context.Background()
	wh, err := storage.Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	cat, err := catalog.Open(ctx, "", wh)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cat.Close() })
	return indexer.Env{Warehouse: wh, Catalog: cat}
}

// checkSearch opens index name and, for a few queries, compares an
// exhaustive search (every list, exact refine) with brute force over the
// table's live rows read back through iceberg-go: the same ids, and none
// that the table deleted. It returns the index's source snapshot id.
func checkSearch(t *testing.T, env indexer.Env, name string, live map[int64][]float32) {
	t.Helper()
	ctx := context.Background()
	ix, err := query.Open(ctx, query.Env{Warehouse: env.Warehouse, Catalog: env.Catalog}, name, query.OpenOptions{})
	if err != nil {
		t.Fatalf("open %s: %v", name, err)
	}
	defer ix.Close()
	if d := server.Describe(context.Background(), ix); d.Source["provider"] != "iceberg" || !strings.HasPrefix(d.Source["location"], "iceberg://") {
		t.Fatalf("describe: source %v", d.Source)
	}
	if _, src := ix.StorageStats(); src.Requests == 0 || src.BytesRead == 0 {
		t.Fatalf("source reads not counted: %+v", src)
	}
	if got := ix.Snapshot().IndexedRows; got != int64(len(live)) {
		t.Fatalf("index has %d rows, the table %d live rows", got, len(live))
	}
	for q := int64(0); q < 5; q++ {
		qv := icetest.Vec(1000 + q)
		const k = 10
		res, err := ix.Search(ctx, qv, query.Options{K: k, NProbe: query.MaxNProbe, Refine: 4, KeysOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		var got []int64
		for _, h := range res.Hits {
			id, ok := h.Row["id"].(int64)
			if !ok {
				t.Fatalf("hit row %v: id is %T", h.Row, h.Row["id"])
			}
			if _, ok := live[id]; !ok {
				t.Fatalf("query %d returned id %d, which is not a live row of the table", q, id)
			}
			got = append(got, id)
		}
		if want := icetest.BruteForce(live, qv, k); !slices.Equal(got, want) {
			t.Fatalf("query %d: index returned %v, brute force over the live rows %v", q, got, want)
		}
	}
	checkSurfaces(t, ix, live)
}

// checkSurfaces checks the other readers of the source against the live
// rows: payload joins, the ground truth (ExactBatch), a filtered search
// (the filter's bitmap and exact plan) and its ground truth
// (ExactFilteredBatch), and key lookups (--near-key): no deleted row is
// returned by any of them, and a deleted key is not found.
func checkSurfaces(t *testing.T, ix *query.Index, live map[int64][]float32) {
	t.Helper()
	ctx := context.Background()
	keyID := func(enc []byte) int64 {
		vals, err := source.DecodeKey([]source.KeyType{{Name: "id", Kind: source.KindInt64}}, enc)
		if err != nil {
			t.Fatal(err)
		}
		return vals[0].Int
	}
	var maxID int64
	for id := range live {
		maxID = max(maxID, id)
	}
	pred, err := filter.Parse("id < 300")
	if err != nil {
		t.Fatal(err)
	}
	filtered := map[int64][]float32{}
	for id, v := range live {
		if id < 300 {
			filtered[id] = v
		}
	}
	// The bitmap holds exactly the live matching rows (its build reads
	// whole row groups, deleted rows included, and renumbers them).
	fi, err := ix.Filter(ctx, pred)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Rows != int64(len(filtered)) || fi.SourceRows != int64(len(live)) {
		t.Fatalf("filter id < 300: %d of %d rows match, want %d of %d live rows", fi.Rows, fi.SourceRows, len(filtered), len(live))
	}
	const k = 10
	var qs [][]float32
	for q := int64(0); q < 3; q++ {
		qs = append(qs, icetest.Vec(2000+q))
	}
	exact, err := ix.ExactBatch(ctx, qs, k, 1)
	if err != nil {
		t.Fatal(err)
	}
	exactF, err := ix.ExactFilteredBatch(ctx, qs, k, 1, pred)
	if err != nil {
		t.Fatal(err)
	}
	for qi, qv := range qs {
		ids := func(hs []query.Hit) (out []int64) {
			for _, h := range hs {
				out = append(out, keyID(h.Key))
			}
			return out
		}
		if got, want := ids(exact[qi]), icetest.BruteForce(live, qv, k); !slices.Equal(got, want) {
			t.Fatalf("ExactBatch query %d: %v, brute force over the live rows %v", qi, got, want)
		}
		wantF := icetest.BruteForce(filtered, qv, k)
		if got := ids(exactF[qi]); !slices.Equal(got, wantF) {
			t.Fatalf("ExactFilteredBatch query %d: %v, brute force over the live rows with id < 300 %v", qi, got, wantF)
		}
		res, err := ix.Search(ctx, qv, query.Options{K: k, NProbe: query.MaxNProbe, Refine: 4, Filter: pred, Columns: []string{"id", "title"}})
		if err != nil {
			t.Fatal(err)
		}
		var got []int64
		for _, h := range res.Hits {
			id, _ := h.Row["id"].(int64)
			if _, ok := live[id]; !ok {
				t.Fatalf("filtered query %d returned id %d, not a live row", qi, id)
			}
			if want := "doc " + string(rune('a'+id%26)); h.Row["title"] != want {
				t.Fatalf("filtered query %d: id %d joined title %v, want %q", qi, id, h.Row["title"], want)
			}
			got = append(got, id)
		}
		if !slices.Equal(got, wantF) {
			t.Fatalf("filtered query %d: %v, brute force over the live rows with id < 300 %v", qi, got, wantF)
		}
	}
	// Key lookups: a live key finds its vector, a deleted one is not found.
	found, gone := 0, 0
	for id := int64(0); id <= maxID && (found < 3 || gone < 3); id++ {
		vals, err := ix.ParseKey([]string{strconv.FormatInt(id, 10)})
		if err != nil {
			t.Fatal(err)
		}
		v, err := ix.VectorOf(ctx, vals)
		if want, ok := live[id]; ok {
			if err != nil || !slices.Equal(v, want) {
				t.Fatalf("VectorOf(live id %d) = %v, %v; want %v", id, v, err, want)
			}
			found++
		} else {
			if err == nil {
				t.Fatalf("VectorOf(deleted id %d) found a vector", id)
			}
			gone++
		}
	}
}

// hasDeletes reports whether the current snapshot's scan of l's table
// carries delete files of kind ("position", "equality" or "dv").
func hasDeletes(t *testing.T, l *icetest.Lake, kind string) bool {
	t.Helper()
	tasks, err := l.Tbl.Scan().PlanFiles(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, task := range tasks {
		if kind == "position" && len(task.DeleteFiles) > 0 || kind == "equality" && len(task.EqualityDeleteFiles) > 0 ||
			kind == "dv" && len(task.DeletionVectorFiles) > 0 {
			return true
		}
	}
	return false
}

func currentMeta(t *testing.T, env indexer.Env, name string) (*metadata.Metadata, string) {
	t.Helper()
	m, e, err := catalog.LoadMetadata(context.Background(), env.Catalog, env.Warehouse, name)
	if err != nil {
		t.Fatal(err)
	}
	return m, e.MetadataLocation
}

func refresh(t *testing.T, env indexer.Env, name, want string) *indexer.RefreshResult {
	t.Helper()
	r, err := indexer.Refresh(context.Background(), env, name, indexer.RefreshOptions{})
	if err != nil {
		t.Fatalf("refresh: %v", err)
	}
	if r.Action != want {
		t.Fatalf("refresh did %s (%s), want %s", r.Action, r.Reason, want)
	}
	return r
}

func verifyOK(t *testing.T, env indexer.Env, name string) *verify.Report {
	t.Helper()
	rep, err := verify.Run(context.Background(), verify.Env{Warehouse: env.Warehouse, Catalog: env.Catalog}, name, verify.Options{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// TestIcebergLifecycle indexes a real Iceberg table and follows it through
// appends, an overwrite, a copy-on-write delete and a merge-on-read
// (position) delete, for an iceberg-go SQL catalog on SQLite with data in
// a local folder and on PostgreSQL with data on the S3 server.
func TestIcebergLifecycle(t *testing.T) {
	for _, c := range []struct{ db, store string }{{"sqlite", "local"}, {"postgres", "s3"}} {
		t.Run(c.db+"-"+c.store, func(t *testing.T) {
			ctx := context.Background()
			l := icetest.NewLake(t, "lake-"+c.store, c.db, c.store)
			l.Create("items", icetest.DocsSchema(), nil)
			l.AppendRows(icetest.IDs(0, 600))
			env := parqdb(t)
			if _, err := indexer.Create(ctx, env, indexer.Options{Name: "docs", Source: l.Ref(),
				VectorField: "embedding", KeyFields: []string{"id"}, NList: 8}); err != nil {
				t.Fatal(err)
			}
			// The snapshot records the table, never the catalog's URI.
			m, _ := currentMeta(t, env, "docs")
			st := m.CurrentSnapshot().SourceTable
			if st.Provider != "iceberg" || st.Identifier == nil || st.Identifier.Catalog != l.Name ||
				!slices.Equal(st.Identifier.Namespace, []string{"docs"}) || st.Identifier.Name != "items" {
				t.Fatalf("source-table %+v", st)
			}
			if got, want := st.Properties["snapshot-id"], strconv.FormatInt(l.Tbl.CurrentSnapshot().SnapshotID, 10); got != want {
				t.Fatalf("snapshot-id %s, the table's current snapshot is %s", got, want)
			}
			if got := st.Properties["table-uuid"]; got != l.Tbl.Metadata().TableUUID().String() {
				t.Fatalf("table-uuid %s", got)
			}
			for k, v := range st.Properties {
				if strings.Contains(v, "sqlite") || strings.Contains(v, "postgres") || strings.Contains(v, "127.0.0.1") {
					t.Fatalf("property %s=%q leaks the catalog's address", k, v)
				}
			}
			checkSearch(t, env, "docs", l.Live())
			if rep := verifyOK(t, env, "docs"); !rep.OK() {
				t.Fatalf("verify: %+v", rep.Failed())
			}
			// Data files are immutable: source-files.json gives them one
			// version, not a clock reading.
			sf, err := indexer.ReadSourceFiles(ctx, env.Warehouse, postings.SnapshotLayout(m.CurrentSnapshot()))
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range sf.Files {
				if f.Version != "mtime:0" || !strings.HasPrefix(f.Key, "data/") {
					t.Fatalf("source-files.json entry %+v", f)
				}
			}
			refresh(t, env, "docs", indexer.ActionNone)

			// Append: readers keep the built snapshot (time travel), verify
			// calls the index stale, refresh is incremental.
			before := l.Live()
			l.AppendRows(icetest.IDs(600, 660))
			checkSearch(t, env, "docs", before)
			if rep := verifyOK(t, env, "docs"); rep.OK() {
				t.Fatal("verify passed an index whose table moved on")
			} else if c, _ := rep.Check(verify.CheckSource); c.OK() || !strings.Contains(fmt.Sprint(c), "changed since snapshot") {
				t.Fatalf("verify source check: %+v", c)
			}
			r := refresh(t, env, "docs", indexer.ActionIncremental)
			if len(r.AddedFiles) != 1 || r.AddedRows != 60 {
				t.Fatalf("incremental refresh: %+v", r)
			}
			checkSearch(t, env, "docs", l.Live())
			if rep := verifyOK(t, env, "docs"); !rep.OK() {
				t.Fatalf("verify after refresh: %+v", rep.Failed())
			}

			// A manifest rewrite makes a new snapshot with the same data
			// files: reassign (the index then binds the new snapshot).
			tx := l.Tbl.NewTransaction()
			if _, err := tx.RewriteManifests(ctx); err != nil {
				t.Fatal(err)
			}
			tbl, err := tx.Commit(ctx)
			if err != nil {
				t.Fatal(err)
			}
			l.Tbl = tbl
			refresh(t, env, "docs", indexer.ActionReassign)
			checkSearch(t, env, "docs", l.Live())
			if rep := verifyOK(t, env, "docs"); !rep.OK() {
				t.Fatalf("verify after a manifest rewrite: %+v", rep.Failed())
			}

			// Overwrite with fewer rows (ids divisible by 7 gone): rebuild,
			// and no removed row is ever returned.
			var kept []int64
			for _, id := range icetest.IDs(0, 660) {
				if id%7 != 0 {
					kept = append(kept, id)
				}
			}
			l.Overwrite(kept)
			refresh(t, env, "docs", indexer.ActionRebuild)
			checkSearch(t, env, "docs", l.Live())

			// A copy-on-write delete of 85 rows (15%, under the drift
			// threshold) rewrites the data files: the rows are reassigned to
			// the kept centroids, without retraining.
			l.DeleteWhere(iceberg.LessThan(iceberg.Reference("id"), int64(100)))
			live := l.Live()
			if len(live) != len(kept)-85 {
				t.Fatalf("after delete the table has %d live rows, want %d", len(live), len(kept)-85)
			}
			centroids := func() string {
				m, _ := currentMeta(t, env, "docs")
				return m.CurrentSnapshot().Parameters[metadata.ParamCentroidsUUID]
			}
			c0 := centroids()
			refresh(t, env, "docs", indexer.ActionReassign)
			if c := centroids(); c != c0 {
				t.Fatalf("reassign changed the centroids %s → %s", c0, c)
			}
			checkSearch(t, env, "docs", live)

			// Merge-on-read delete writes a position delete file: refresh
			// applies it (the data file's deletes changed: reassign, no
			// retrain), and the deleted row is never returned; readers of
			// the built snapshot kept it until then.
			tx = l.Tbl.NewTransaction()
			if err := tx.SetProperties(iceberg.Properties{table.WriteDeleteModeKey: table.WriteModeMergeOnRead}); err != nil {
				t.Fatal(err)
			}
			tbl, err = tx.Commit(ctx)
			if err != nil {
				t.Fatal(err)
			}
			l.Tbl = tbl
			l.DeleteWhere(iceberg.EqualTo(iceberg.Reference("id"), int64(123)))
			if n := len(l.Live()); n != len(live)-1 {
				t.Fatalf("merge-on-read delete left %d rows, want %d", n, len(live)-1)
			}
			if !hasDeletes(t, l, "position") {
				t.Fatal("the merge-on-read delete wrote no position delete file")
			}
			checkSearch(t, env, "docs", live)
			refresh(t, env, "docs", indexer.ActionReassign)
			if c := centroids(); c != c0 {
				t.Fatalf("reassign after a position delete changed the centroids %s → %s", c0, c)
			}
			live = l.Live()
			checkSearch(t, env, "docs", live)
			if rep := verifyOK(t, env, "docs"); !rep.OK() {
				t.Fatalf("verify after a position delete: %+v", rep.Failed())
			}

			// An equality delete (on field id 1, id) of rows in several data
			// files: reassign; then an append with an equality delete in
			// another snapshot of some appended and some old rows.
			l.EqualityDelete([]int64{124, 125, 400, 401, 655})
			if !hasDeletes(t, l, "equality") {
				t.Fatal("no equality delete file")
			}
			refresh(t, env, "docs", indexer.ActionReassign)
			live = l.Live()
			if len(live) != len(kept)-86-5 {
				t.Fatalf("after the equality delete %d live rows", len(live))
			}
			checkSearch(t, env, "docs", live)
			l.AppendRows(icetest.IDs(700, 720))
			l.EqualityDelete([]int64{701, 702, 130})
			refresh(t, env, "docs", indexer.ActionReassign)
			live = l.Live()
			checkSearch(t, env, "docs", live)
			if rep := verifyOK(t, env, "docs"); !rep.OK() {
				t.Fatalf("verify after equality deletes: %+v", rep.Failed())
			}

			// Compaction (a replace snapshot) applies the delete file and
			// rewrites the rows it keeps: refresh reassigns, no retrain, and
			// the deleted row is gone.
			tasks, err := l.Tbl.Scan().PlanFiles(ctx)
			if err != nil {
				t.Fatal(err)
			}
			rr, err := l.Tbl.RewriteDataFiles(ctx, []table.CompactionTaskGroup{{Tasks: tasks}}, table.RewriteDataFilesOptions{})
			if err != nil {
				t.Fatalf("compaction: %v", err)
			}
			l.Tbl = rr.Table
			if op := l.Tbl.CurrentSnapshot().Summary.Operation; op != table.OpReplace {
				t.Fatalf("compaction wrote a %s snapshot", op)
			}
			want := len(live)
			live = l.Live()
			if _, ok := live[123]; ok || len(live) != want {
				t.Fatalf("after compaction %d live rows, want %d (id 123 live: %v)", len(live), want, ok)
			}
			refresh(t, env, "docs", indexer.ActionReassign)
			if c := centroids(); c != c0 {
				t.Fatalf("reassign after compaction changed the centroids %s → %s", c0, c)
			}
			checkSearch(t, env, "docs", live)
			if rep := verifyOK(t, env, "docs"); !rep.OK() {
				t.Fatalf("verify after compaction: %+v", rep.Failed())
			}
		})
	}
}

// TestIcebergExpiredSnapshot: once the snapshot an index was built from is
// expired from the table, readers cannot time-travel to it: opening the
// index fails naming the snapshot and the fix, and refresh rebuilds on the
// current snapshot (the built one is no longer an ancestor to diff from).
func TestIcebergExpiredSnapshot(t *testing.T) {
	ctx := context.Background()
	l := icetest.NewLake(t, "lake", "sqlite", "local")
	l.Create("items", icetest.DocsSchema(), nil)
	l.AppendRows(icetest.IDs(0, 300))
	env := parqdb(t)
	if _, err := indexer.Create(ctx, env, indexer.Options{Name: "docs", Source: l.Ref(),
		VectorField: "embedding", KeyFields: []string{"id"}, NList: 4}); err != nil {
		t.Fatal(err)
	}
	l.DeleteWhere(iceberg.LessThan(iceberg.Reference("id"), int64(10)))
	tx := l.Tbl.NewTransaction()
	if err := tx.ExpireSnapshots(table.WithRetainLast(1), table.WithOlderThan(0)); err != nil {
		t.Fatal(err)
	}
	tbl, err := tx.Commit(ctx)
	if err != nil {
		t.Fatal(err)
	}
	l.Tbl = tbl
	if n := len(tbl.Metadata().Snapshots()); n != 1 {
		t.Fatalf("%d snapshots after expiry, want 1", n)
	}
	_, err = query.Open(ctx, query.Env{Warehouse: env.Warehouse, Catalog: env.Catalog}, "docs", query.OpenOptions{})
	if !errors.Is(err, icesource.ErrNotFound) || !strings.Contains(err.Error(), "expired") || !strings.Contains(err.Error(), "parqdb index refresh") {
		t.Fatalf("open at an expired snapshot: %v", err)
	}
	refresh(t, env, "docs", indexer.ActionRebuild)
	checkSearch(t, env, "docs", l.Live())
}

// TestIcebergPartitioned indexes a table partitioned by identity(title):
// its data files lie in partition folders below data/, one per value and
// append; an append adds one file per partition and refreshes
// incrementally.
func TestIcebergPartitioned(t *testing.T) {
	ctx := context.Background()
	l := icetest.NewLake(t, "lake", "sqlite", "local")
	l.CreatePartitioned("items")
	l.AppendRows(icetest.IDs(0, 520))
	env := parqdb(t)
	if _, err := indexer.Create(ctx, env, indexer.Options{Name: "docs", Source: l.Ref(),
		VectorField: "embedding", KeyFields: []string{"id"}, NList: 8}); err != nil {
		t.Fatal(err)
	}
	m, _ := currentMeta(t, env, "docs")
	if n := m.CurrentSnapshot().Summary["source-files"]; n != "26" {
		t.Fatalf("indexed %s data files, want 26 (one per title)", n)
	}
	checkSearch(t, env, "docs", l.Live())
	l.AppendRows(icetest.IDs(520, 572))
	if r := refresh(t, env, "docs", indexer.ActionIncremental); len(r.AddedFiles) != 26 || r.AddedRows != 52 {
		t.Fatalf("incremental refresh: %d files, %d rows", len(r.AddedFiles), r.AddedRows)
	}
	checkSearch(t, env, "docs", l.Live())
	if rep := verifyOK(t, env, "docs"); !rep.OK() {
		t.Fatalf("verify: %+v", rep.Failed())
	}
}

// TestIcebergSchemaEvolution: a column added to the table changes nothing
// for the index (files written before it lack the column; joins of the
// other columns work and refresh stays incremental); renaming the vector,
// key and a payload column keeps working across data files written before
// and after the rename (fields are bound by Iceberg field id,
// docs/iceberg.md §3.4): incremental refresh, a rebuild, searches equal to
// brute force, payload joins and filters by the current names, verify.
func TestIcebergSchemaEvolution(t *testing.T) {
	ctx := context.Background()
	l := icetest.NewLake(t, "lake", "sqlite", "local")
	l.Create("items", icetest.DocsSchema(), nil)
	l.AppendRows(icetest.IDs(0, 400))
	env := parqdb(t)
	if _, err := indexer.Create(ctx, env, indexer.Options{Name: "docs", Source: l.Ref(),
		VectorField: "embedding", KeyFields: []string{"id"}, NList: 4}); err != nil {
		t.Fatal(err)
	}
	evolve := func(f func(u *table.UpdateSchema)) {
		tx := l.Tbl.NewTransaction()
		u := tx.UpdateSchema(true, false)
		f(u)
		if err := u.Commit(); err != nil {
			t.Fatal(err)
		}
		tbl, err := tx.Commit(ctx)
		if err != nil {
			t.Fatal(err)
		}
		l.Tbl = tbl
	}
	evolve(func(u *table.UpdateSchema) {
		u.AddColumn([]string{"lang"}, iceberg.PrimitiveTypes.String, "", false, nil)
	})
	l.AppendRows(icetest.IDs(400, 440))
	refresh(t, env, "docs", indexer.ActionIncremental)
	checkSearch(t, env, "docs", l.Live())
	ix, err := query.Open(ctx, query.Env{Warehouse: env.Warehouse, Catalog: env.Catalog}, "docs", query.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []int64{5, 405} { // a row from before and one from after the new column
		res, err := ix.Search(ctx, icetest.Vec(q), query.Options{K: 1, NProbe: 4, Refine: 4, Columns: []string{"id", "title"}})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Hits) != 1 || res.Hits[0].Row["id"] != q || res.Hits[0].Row["title"] == nil {
			t.Fatalf("search near row %d: %+v", q, res.Hits)
		}
	}
	ix.Close()

	// Rename the vector, the key and a payload column. Data files written
	// before keep the old names; the index binds its fields by field id,
	// so refresh stays incremental and every row, old or new, is found.
	evolve(func(u *table.UpdateSchema) {
		u.RenameColumn([]string{"embedding"}, "vec")
		u.RenameColumn([]string{"id"}, "doc_id")
		u.RenameColumn([]string{"title"}, "name")
	})
	l.AppendRows(icetest.IDs(440, 450))
	refresh(t, env, "docs", indexer.ActionIncremental)
	live := l.Live()
	if len(live) != 450 {
		t.Fatalf("iceberg-go reads %d live rows after the renames", len(live))
	}
	checkRenamed := func() {
		t.Helper()
		ix, err := query.Open(ctx, query.Env{Warehouse: env.Warehouse, Catalog: env.Catalog}, "docs", query.OpenOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer ix.Close()
		pred, err := filter.Parse("doc_id < 420")
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range []int64{5, 405, 445} { // rows written before the new column, before and after the renames
			qv := icetest.Vec(q)
			res, err := ix.Search(ctx, qv, query.Options{K: 10, NProbe: query.MaxNProbe, Refine: 4, KeysOnly: true})
			if err != nil {
				t.Fatal(err)
			}
			var got []int64
			for _, h := range res.Hits {
				got = append(got, h.Row["id"].(int64))
			}
			if want := icetest.BruteForce(live, qv, 10); !slices.Equal(got, want) {
				t.Fatalf("query near %d: %v, brute force %v", q, got, want)
			}
			// Payload columns by their current names, from old and new files.
			res, err = ix.Search(ctx, qv, query.Options{K: 1, NProbe: query.MaxNProbe, Refine: 4, Columns: []string{"doc_id", "name"}})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Hits) != 1 || res.Hits[0].Row["doc_id"] != q || res.Hits[0].Row["name"] != "doc "+string(rune('a'+q%26)) {
				t.Fatalf("search near row %d with current column names: %+v", q, res.Hits)
			}
			// A filter on the renamed key column, by its current name.
			res, err = ix.Search(ctx, qv, query.Options{K: 5, NProbe: query.MaxNProbe, Refine: 4, Filter: pred, KeysOnly: true})
			if err != nil {
				t.Fatal(err)
			}
			for _, h := range res.Hits {
				if id := h.Row["id"].(int64); id >= 420 {
					t.Fatalf("filter doc_id < 420 returned %d", id)
				}
			}
		}
		if rep := verifyOK(t, env, "docs"); !rep.OK() {
			t.Fatalf("verify after the renames: %+v", rep.Failed())
		}
	}
	checkRenamed()
	// A rebuild reads the files written before the renames by field id too.
	if _, err := indexer.Refresh(ctx, env, "docs", indexer.RefreshOptions{Retrain: true}); err != nil {
		t.Fatalf("rebuild after the renames: %v", err)
	}
	checkRenamed()
}

// TestIcebergTableReplaced: a table dropped and recreated under the same
// name is another table (another UUID): readers refuse it with ErrMoved
// rather than calling its snapshot expired, and refresh rebuilds on it.
func TestIcebergTableReplaced(t *testing.T) {
	ctx := context.Background()
	l := icetest.NewLake(t, "lake", "sqlite", "local")
	l.Create("items", icetest.DocsSchema(), nil)
	l.AppendRows(icetest.IDs(0, 100))
	env := parqdb(t)
	if _, err := indexer.Create(ctx, env, indexer.Options{Name: "docs", Source: l.Ref(),
		VectorField: "embedding", KeyFields: []string{"id"}, NList: 2}); err != nil {
		t.Fatal(err)
	}
	if err := l.Cat.DropTable(ctx, l.Ident); err != nil {
		t.Fatal(err)
	}
	l.Create("items", icetest.DocsSchema(), nil)
	l.AppendRows(icetest.IDs(0, 100))
	_, err := query.Open(ctx, query.Env{Warehouse: env.Warehouse, Catalog: env.Catalog}, "docs", query.OpenOptions{})
	if !errors.Is(err, icesource.ErrMoved) || !strings.Contains(err.Error(), "parqdb index refresh") {
		t.Fatalf("open over a recreated table: %v", err)
	}
	// Like a folder deleted and written again, the table under the bound
	// name is the source now: refresh rebuilds on it.
	refresh(t, env, "docs", indexer.ActionRebuild)
	checkSearch(t, env, "docs", l.Live())
}

// TestIcebergDeletionVectors: a format v3 table whose merge-on-read deletes
// iceberg-go writes as deletion vectors (Puffin): the index applies them
// (create, refresh by reassign) and never returns a deleted row.
func TestIcebergDeletionVectors(t *testing.T) {
	ctx := context.Background()
	l := icetest.NewLake(t, "lake", "sqlite", "local")
	l.Create("items", icetest.DocsSchema(), iceberg.Properties{"format-version": "3", table.WriteDeleteModeKey: table.WriteModeMergeOnRead})
	l.AppendRows(icetest.IDs(0, 300))
	l.DeleteWhere(iceberg.LessThan(iceberg.Reference("id"), int64(10)))
	if !hasDeletes(t, l, "dv") {
		t.Fatal("the v3 merge-on-read delete wrote no deletion vector")
	}
	live := l.Live()
	if len(live) != 290 {
		t.Fatalf("iceberg-go reads %d live rows, want 290", len(live))
	}
	env := parqdb(t)
	if _, err := indexer.Create(ctx, env, indexer.Options{Name: "docs", Source: l.Ref(),
		VectorField: "embedding", KeyFields: []string{"id"}, NList: 4}); err != nil {
		t.Fatal(err)
	}
	checkSearch(t, env, "docs", live)
	l.DeleteWhere(iceberg.EqualTo(iceberg.Reference("id"), int64(150)))
	refresh(t, env, "docs", indexer.ActionReassign)
	live = l.Live()
	if _, ok := live[150]; ok || len(live) != 289 {
		t.Fatalf("after the second delete %d live rows", len(live))
	}
	checkSearch(t, env, "docs", live)
	if rep := verifyOK(t, env, "docs"); !rep.OK() {
		t.Fatalf("verify: %+v", rep.Failed())
	}
}

// TestIcebergDeleteCache: opening an index on a snapshot with deletes
// reads its delete files (and, for an equality delete, the data files'
// equality columns) once per process: a second and a third open of the
// same snapshot send the same, smaller number of source requests, which
// the index's storage statistics count (docs/iceberg.md §3.5).
func TestIcebergDeleteCache(t *testing.T) {
	ctx := context.Background()
	l := icetest.NewLake(t, "lake", "sqlite", "local")
	l.Create("items", icetest.DocsSchema(), iceberg.Properties{table.WriteDeleteModeKey: table.WriteModeMergeOnRead})
	l.AppendRows(icetest.IDs(0, 300))
	l.AppendRows(icetest.IDs(300, 400))
	l.DeleteWhere(iceberg.EqualTo(iceberg.Reference("id"), int64(3)))
	l.EqualityDelete([]int64{4, 350})
	env := parqdb(t)
	if _, err := indexer.Create(ctx, env, indexer.Options{Name: "docs", Source: l.Ref(),
		VectorField: "embedding", KeyFields: []string{"id"}, NList: 4}); err != nil {
		t.Fatal(err)
	}
	icesource.ResetDeleteCache()
	opens := func() int64 {
		ix, err := query.Open(ctx, query.Env{Warehouse: env.Warehouse, Catalog: env.Catalog}, "docs", query.OpenOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer ix.Close()
		if ix.Snapshot().IndexedRows != 397 {
			t.Fatalf("indexed %d rows, want 397", ix.Snapshot().IndexedRows)
		}
		_, src := ix.StorageStats()
		return src.Requests
	}
	first, second, third := opens(), opens(), opens()
	t.Logf("source requests per open: %d uncached, then %d, %d", first, second, third)
	if second >= first || third != second {
		t.Fatalf("source requests per open: %d uncached, then %d, %d; want the later opens equal and fewer", first, second, third)
	}
	checkSearch(t, env, "docs", l.Live())
}

// TestIcebergUpsert: one row-delta snapshot adds new versions of rows and
// an equality delete of their keys. The delete applies only to the older
// data files (strictly lower data sequence number), so each key is live
// exactly once, with its new vector: refresh reassigns without a
// duplicate-key error and searches find the new vectors, never the old.
func TestIcebergUpsert(t *testing.T) {
	ctx := context.Background()
	l := icetest.NewLake(t, "lake", "sqlite", "local")
	l.Create("items", icetest.DocsSchema(), nil)
	l.AppendRows(icetest.IDs(0, 400))
	env := parqdb(t)
	if _, err := indexer.Create(ctx, env, indexer.Options{Name: "docs", Source: l.Ref(),
		VectorField: "embedding", KeyFields: []string{"id"}, NList: 4}); err != nil {
		t.Fatal(err)
	}
	upd := []int64{3, 50, 51, 399}
	const shift = 100000
	l.Upsert(upd, shift)
	live := l.Live()
	if len(live) != 400 {
		t.Fatalf("iceberg-go reads %d live rows after the upsert, want 400", len(live))
	}
	for _, id := range upd {
		if !slices.Equal(live[id], icetest.Vec(id+shift)) {
			t.Fatalf("iceberg-go reads the old vector of upserted id %d", id)
		}
	}
	refresh(t, env, "docs", indexer.ActionReassign)
	checkSearch(t, env, "docs", live)
	// Searching at an upserted row's new and old vectors: the row is the
	// nearest only at its new vector.
	ix, err := query.Open(ctx, query.Env{Warehouse: env.Warehouse, Catalog: env.Catalog}, "docs", query.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	for _, id := range upd {
		for _, q := range [][]float32{icetest.Vec(id + shift), icetest.Vec(id)} {
			res, err := ix.Search(ctx, q, query.Options{K: 1, NProbe: query.MaxNProbe, Refine: 4, KeysOnly: true})
			if err != nil {
				t.Fatal(err)
			}
			want := icetest.BruteForce(live, q, 1)
			if len(res.Hits) != 1 || res.Hits[0].Row["id"] != want[0] {
				t.Fatalf("search near a version of id %d: %+v, brute force %v", id, res.Hits, want)
			}
		}
	}
}
