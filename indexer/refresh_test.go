package indexer

import (
	"bytes"
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/parqdb/parqdb/catalog"
	"github.com/parqdb/parqdb/internal/source/sourcetest"
	"github.com/parqdb/parqdb/internal/testfix"
	"github.com/parqdb/parqdb/metadata"
	"github.com/parqdb/parqdb/postings"
	"github.com/parqdb/parqdb/query"
	"github.com/parqdb/parqdb/storage"
)

// writePart writes n clustered vectors with keys first..first+n-1 to path.
func writePart(t *testing.T, path string, first int64, n, dim int, seed uint64) {
	t.Helper()
	testfix.WritePart(t, path, first, n, dim, seed, 2, sourcetest.Options{RowGroupRows: 500})
}

func current(t *testing.T, env Env, name string) (*metadata.Metadata, *postings.Manifest) {
	t.Helper()
	ctx := context.Background()
	m, _, err := catalog.LoadMetadata(ctx, env.Catalog, env.Warehouse, name)
	if err != nil {
		t.Fatal(err)
	}
	data, err := storage.ReadAll(ctx, env.Warehouse, postings.SnapshotLayout(m.CurrentSnapshot()).Manifest())
	if err != nil {
		t.Fatal(err)
	}
	man, err := postings.ParseManifest(data)
	if err != nil {
		t.Fatal(err)
	}
	return m, man
}

func TestRefresh(t *testing.T) {
	ctx := context.Background()
	env, dir := testEnv(t)
	src := filepath.Join(dir, "src")
	os.MkdirAll(src, 0o755)
	writePart(t, filepath.Join(src, "part-0.parquet"), 0, 2000, 8, 1)
	opts := Options{Name: "v", Source: src, VectorField: "embedding", KeyFields: []string{"id"}, NList: 20}
	if _, err := Create(ctx, env, opts); err != nil {
		t.Fatal(err)
	}

	// Retrain on an unchanged source trains new centroids.
	mr, _ := current(t, env, "v")
	if r, err := Refresh(ctx, env, "v", RefreshOptions{Retrain: true}); err != nil || r.Action != ActionRebuild || r.Build.ReusedCentroids {
		t.Fatalf("retrain: %+v %v", r, err)
	}
	if mr2, _ := current(t, env, "v"); mr2.CurrentSnapshot().Parameters[metadata.ParamCentroidsUUID] == mr.CurrentSnapshot().Parameters[metadata.ParamCentroidsUUID] {
		t.Fatal("retrain kept the centroid artifact")
	}

	// Unchanged source: nothing committed.
	m0, _ := current(t, env, "v")
	r, err := Refresh(ctx, env, "v", RefreshOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Action != ActionNone || r.Build != nil {
		t.Fatalf("unchanged source: %+v", r)
	}
	if m1, _ := current(t, env, "v"); m1.LastSequenceNumber != m0.LastSequenceNumber {
		t.Fatal("unchanged refresh committed")
	}

	// Append 10%: incremental, centroids kept, old postings files kept.
	writePart(t, filepath.Join(src, "part-1.parquet"), 2000, 200, 8, 2)
	r, err = Refresh(ctx, env, "v", RefreshOptions{DryRun: true})
	if err != nil || r.Action != ActionIncremental || r.Build != nil || r.AddedRows != 200 {
		t.Fatalf("dry run: %+v, %v", r, err)
	}
	if m1, _ := current(t, env, "v"); m1.LastSequenceNumber != m0.LastSequenceNumber {
		t.Fatal("dry run committed")
	}
	r, err = Refresh(ctx, env, "v", RefreshOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Action != ActionIncremental || len(r.AddedFiles) != 1 || r.AddedRows != 200 {
		t.Fatalf("append: %+v", r)
	}
	m2, man2 := current(t, env, "v")
	s0, s2 := m0.CurrentSnapshot(), m2.CurrentSnapshot()
	if s2.IndexedRows != 2200 || man2.Rows != 2200 || len(m2.Snapshots) != 3 || m2.LastSequenceNumber != 3 {
		t.Fatalf("after append: rows %d manifest %d snapshots %d seq %d", s2.IndexedRows, man2.Rows, len(m2.Snapshots), m2.LastSequenceNumber)
	}
	if s2.Parameters[metadata.ParamCentroidsUUID] != s0.Parameters[metadata.ParamCentroidsUUID] {
		t.Fatal("incremental refresh changed the centroids")
	}
	if s2.Summary["operation"] != "refresh-incremental" {
		t.Fatalf("summary %v", s2.Summary)
	}
	// A full build over the same source state reuses those centroids, and
	// searches give the same answers as after the incremental refresh.
	full, err := Create(ctx, env, Options{Name: "full", Source: src, VectorField: "embedding", KeyFields: []string{"id"}, NList: 20})
	if err != nil {
		t.Fatal(err)
	}
	if !full.ReusedCentroids {
		t.Fatal("full build over the refreshed source state did not reuse the centroids")
	}
	sameSearchResults(t, env, "v", "full", 8)

	// Rewrite a file: full rebuild with new centroids.
	writePart(t, filepath.Join(src, "part-1.parquet"), 2000, 150, 8, 3)
	r, err = Refresh(ctx, env, "v", RefreshOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Action != ActionRebuild || len(r.RewrittenFiles) != 1 {
		t.Fatalf("rewrite: %+v", r)
	}
	m3, man3 := current(t, env, "v")
	if s3 := m3.CurrentSnapshot(); s3.IndexedRows != 2150 || man3.Rows != 2150 ||
		s3.Parameters[metadata.ParamCentroidsUUID] == s2.Parameters[metadata.ParamCentroidsUUID] {
		t.Fatalf("after rewrite: %+v", s3)
	}

	// Growth beyond the drift threshold: full rebuild.
	writePart(t, filepath.Join(src, "part-2.parquet"), 5000, 1000, 8, 4)
	if r, err = Refresh(ctx, env, "v", RefreshOptions{}); err != nil || r.Action != ActionRebuild {
		t.Fatalf("growth: %+v %v", r, err)
	}
	m4, _ := current(t, env, "v")
	if len(m4.Snapshots) != 5 || m4.LastSequenceNumber != 5 {
		t.Fatalf("history: %d snapshots, last sequence %d", len(m4.Snapshots), m4.LastSequenceNumber)
	}
}

// compareSearches checks that two index snapshots answer 50 queries
// identically.
func compareSearches(t *testing.T, env Env, a string, snapA int64, b string, snapB int64, dim int) {
	t.Helper()
	ctx := context.Background()
	qe := query.Env{Warehouse: env.Warehouse, Catalog: env.Catalog}
	ia, err := query.Open(ctx, qe, a, query.OpenOptions{SnapshotID: snapA})
	if err != nil {
		t.Fatal(err)
	}
	defer ia.Close()
	ib, err := query.Open(ctx, qe, b, query.OpenOptions{SnapshotID: snapB})
	if err != nil {
		t.Fatal(err)
	}
	defer ib.Close()
	rng := rand.New(rand.NewPCG(9, 9))
	for i := 0; i < 50; i++ {
		q := make([]float32, dim)
		for j := range q {
			q[j] = float32(rng.NormFloat64() * 3)
		}
		opts := query.Options{K: 10, NProbe: 3, KeysOnly: true}
		ra, err := ia.Search(ctx, q, opts)
		if err != nil {
			t.Fatal(err)
		}
		rb, err := ib.Search(ctx, q, opts)
		if err != nil {
			t.Fatal(err)
		}
		if len(ra.Hits) != len(rb.Hits) {
			t.Fatalf("query %d: %d vs %d hits", i, len(ra.Hits), len(rb.Hits))
		}
		for j := range ra.Hits {
			if !bytes.Equal(ra.Hits[j].Key, rb.Hits[j].Key) || ra.Hits[j].Distance != rb.Hits[j].Distance {
				t.Fatalf("query %d hit %d: %v/%v vs %v/%v", i, j, ra.Hits[j].Row, ra.Hits[j].Distance, rb.Hits[j].Row, rb.Hits[j].Distance)
			}
		}
	}
}

func TestOptimize(t *testing.T) {
	ctx := context.Background()
	env, dir := testEnv(t)
	src := filepath.Join(dir, "src")
	os.MkdirAll(src, 0o755)
	writePart(t, filepath.Join(src, "p0.parquet"), 0, 3000, 8, 1)
	if _, err := Create(ctx, env, Options{Name: "v", Source: src, VectorField: "embedding", KeyFields: []string{"id"}, NList: 16}); err != nil {
		t.Fatal(err)
	}
	r, err := Optimize(ctx, env, "v", OptimizeOptions{})
	if err != nil || r.Done {
		t.Fatalf("optimize of a fresh index: %+v %v", r, err)
	}
	for i := 1; i <= 3; i++ {
		writePart(t, filepath.Join(src, "p"+strconv.Itoa(i)+".parquet"), int64(10000*i), 100, 8, uint64(i+1))
		if r, err := Refresh(ctx, env, "v", RefreshOptions{}); err != nil || r.Action != ActionIncremental {
			t.Fatalf("refresh %d: %+v %v", i, r, err)
		}
	}
	m0, man0 := current(t, env, "v")
	r, err = Optimize(ctx, env, "v", OptimizeOptions{})
	if err != nil || !r.Done {
		t.Fatalf("optimize: %+v %v", r, err)
	}
	m1, man1 := current(t, env, "v")
	if len(man1.Files) >= len(man0.Files) || man1.Rows != man0.Rows || man1.Rows != 3300 {
		t.Fatalf("files %d → %d, rows %d → %d", len(man0.Files), len(man1.Files), man0.Rows, man1.Rows)
	}
	if !catalog.SameTable(m0.CurrentSnapshot().SourceTable, m1.CurrentSnapshot().SourceTable) {
		t.Fatal("optimize changed the source binding")
	}
	// The stale-source message reads the snapshot's source file count.
	if got, want := m1.CurrentSnapshot().Summary["source-files"], m0.CurrentSnapshot().Summary["source-files"]; got != want || want != "4" {
		t.Fatalf("optimize's summary source-files %q, base %q: want both 4", got, want)
	}
	sameSnapshots(t, env, "v", m0.CurrentSnapshotID, m1.CurrentSnapshotID, 8)
}

// sameSearchResults checks that two indexes answer 50 queries identically.
func sameSearchResults(t *testing.T, env Env, a, b string, dim int) {
	t.Helper()
	compareSearches(t, env, a, 0, b, 0, dim)
}

// sameSnapshots checks that two snapshots of one index answer alike.
func sameSnapshots(t *testing.T, env Env, name string, a, b int64, dim int) {
	t.Helper()
	compareSearches(t, env, name, a, name, b, dim)
}
