package indexer

import (
	"context"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/parqdb/parqdb/postings"
	"github.com/parqdb/parqdb/storage"
	"github.com/parqdb/parqdb/vecfile"
	"github.com/parqdb/parqdb/verify"
)

// TestVectorsFile builds with and without the vectors file and checks that
// the file holds, at Starts[cid]+pos, the exact source vector of the pos-th
// postings row of list cid, for every row, whatever the window size (a
// tiny window makes every bucket take several passes over its spill).
func TestVectorsFile(t *testing.T) {
	ctx := context.Background()
	env, dir := testEnv(t)
	src := filepath.Join(dir, "src.parquet")
	const n, dim = 3000, 17
	vecs := writeSource(t, src, n, dim, 11)
	old := vectorsWindowBytes
	t.Cleanup(func() { vectorsWindowBytes = old })
	for _, tc := range []struct {
		name   string
		window int
		on     bool
	}{{"window 4 KiB", 4 << 10, true}, {"default window", old, true}, {"off", old, false}} {
		t.Run(tc.name, func(t *testing.T) {
			vectorsWindowBytes = tc.window
			name := map[string]string{"window 4 KiB": "small", "default window": "big", "off": "off"}[tc.name]
			res, err := Create(ctx, env, Options{
				Name: name, Source: src, VectorField: "embedding", KeyFields: []string{"id"},
				NList: 40, VectorsFile: tc.on,
			})
			if err != nil {
				t.Fatal(err)
			}
			lay := postings.SnapshotLayout(res.Metadata.CurrentSnapshot())
			key := vecfile.Location(lay.Meta)
			if !tc.on {
				if _, err := env.Warehouse.Stat(ctx, key); !errors.Is(err, storage.ErrNotExist) {
					t.Fatalf("build without VectorsFile: stat %s: %v, want not found", key, err)
				}
				return
			}
			raw, err := storage.ReadAll(ctx, env.Warehouse, lay.Manifest())
			if err != nil {
				t.Fatal(err)
			}
			m, err := postings.ParseManifest(raw)
			if err != nil {
				t.Fatal(err)
			}
			o, err := env.Warehouse.Open(ctx, key)
			if err != nil {
				t.Fatal(err)
			}
			defer o.Close()
			f, err := vecfile.Open(o, o.Size(), key)
			if err != nil {
				t.Fatal(err)
			}
			if err := f.Check(dim, n, vecfile.ManifestHash(raw)); err != nil {
				t.Fatal(err)
			}
			if err := f.Verify(ctx); err != nil {
				t.Fatal(err)
			}
			all := make([]float32, n*dim)
			if err := f.ReadRows(all, 0); err != nil {
				t.Fatal(err)
			}
			starts := vecfile.Starts(m)
			seen := make([]bool, n)
			for cid := int32(0); cid < m.NList; cid++ {
				var b postings.Batch
				for _, rg := range m.Ranges(cid) {
					po, err := env.Warehouse.Open(ctx, m.Files[rg.File].Path)
					if err != nil {
						t.Fatal(err)
					}
					data := make([]byte, rg.Length)
					if _, err := po.ReadAt(data, rg.Offset); err != nil {
						t.Fatal(err)
					}
					po.Close()
					if err := postings.DecodeRowGroup(m.Schema(), data, rg, &b); err != nil {
						t.Fatal(err)
					}
				}
				for pos := 0; pos < b.Len(); pos++ {
					id := int64(binary.BigEndian.Uint64(b.Key(pos)) ^ 1<<63)
					seen[id] = true
					row := all[(starts[cid]+int64(pos))*dim:][:dim]
					for d := range row {
						if row[d] != vecs[id][d] {
							t.Fatalf("list %d row %d (key %d) dim %d: file %v, source %v", cid, pos, id, d, row[d], vecs[id][d])
						}
					}
				}
			}
			for id, ok := range seen {
				if !ok {
					t.Fatalf("key %d in no list", id)
				}
			}
		})
	}
}

// vectorsFileChecked runs verify on index name's current snapshot and
// fails unless its vectors-file check ran and passed (every row the
// canonical source vector of its postings row, in postings order) and
// every other check passed.
func vectorsFileChecked(t *testing.T, env Env, name string) {
	t.Helper()
	rep, err := verify.Run(context.Background(), verify.Env{Warehouse: env.Warehouse, Catalog: env.Catalog}, name, verify.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range rep.Checks {
		if !c.OK() || c.Name == verify.CheckVectorsFile && c.Status != verify.StatusOK {
			t.Fatalf("snapshot %d: check %s: %s %s", rep.SnapshotID, c.Name, c.Status, c.Detail)
		}
	}
}

func vectorsFileKey(t *testing.T, env Env, name string) string {
	t.Helper()
	m, _ := current(t, env, name)
	return vecfile.Location(postings.SnapshotLayout(m.CurrentSnapshot()).Meta)
}

// TestSuccessorVectorsFile: incremental refreshes, optimize and a
// retraining refresh of an index with a vectors file each give the
// successor one that verify checks row by row (also with windows of a few
// rows, so that lists straddle windows); an index without one gets none;
// a damaged base file fails the refresh with ErrCorrupt naming the file
// and leaves the catalog where it was.
func TestSuccessorVectorsFile(t *testing.T) {
	ctx := context.Background()
	old := vectorsWindowBytes
	t.Cleanup(func() { vectorsWindowBytes = old })
	for _, window := range []int{old, 200} {
		vectorsWindowBytes = window
		env, dir := testEnv(t)
		src := filepath.Join(dir, "src")
		os.MkdirAll(src, 0o755)
		writePart(t, filepath.Join(src, "p0.parquet"), 0, 3000, 8, 1)
		if _, err := Create(ctx, env, Options{Name: "v", Source: src, VectorField: "embedding", KeyFields: []string{"id"}, NList: 16, VectorsFile: true}); err != nil {
			t.Fatal(err)
		}
		if _, err := Create(ctx, env, Options{Name: "w", Source: src, VectorField: "embedding", KeyFields: []string{"id"}, NList: 16}); err != nil {
			t.Fatal(err)
		}
		vectorsFileChecked(t, env, "v")
		for i := 1; i <= 2; i++ {
			writePart(t, filepath.Join(src, "p"+strconv.Itoa(i)+".parquet"), int64(10000*i), 150, 8, uint64(i+1))
			for _, name := range []string{"v", "w"} {
				if r, err := Refresh(ctx, env, name, RefreshOptions{}); err != nil || r.Action != ActionIncremental {
					t.Fatalf("window %d, refresh %d of %s: %+v %v", window, i, name, r, err)
				}
			}
			vectorsFileChecked(t, env, "v")
		}
		if _, err := env.Warehouse.Stat(ctx, vectorsFileKey(t, env, "w")); !errors.Is(err, storage.ErrNotExist) {
			t.Fatalf("refresh of an index without a vectors file: stat: %v, want not found", err)
		}
		if r, err := Optimize(ctx, env, "v", OptimizeOptions{}); err != nil || !r.Done {
			t.Fatalf("optimize: %+v %v", r, err)
		}
		vectorsFileChecked(t, env, "v")
		if r, err := Refresh(ctx, env, "v", RefreshOptions{Retrain: true}); err != nil || r.Action != ActionRebuild {
			t.Fatalf("retrain: %+v %v", r, err)
		}
		vectorsFileChecked(t, env, "v")

		// A damaged base file: the refresh fails, the catalog stays.
		key := vectorsFileKey(t, env, "v")
		path := filepath.Join(dir, "warehouse", filepath.FromSlash(key))
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		raw[len(raw)-vecfile.FooterSize-1] ^= 0x40
		if err := os.WriteFile(path, raw, 0o644); err != nil {
			t.Fatal(err)
		}
		before, _ := current(t, env, "v")
		writePart(t, filepath.Join(src, "p9.parquet"), 90000, 100, 8, 9)
		_, err = Refresh(ctx, env, "v", RefreshOptions{})
		if !errors.Is(err, vecfile.ErrCorrupt) || !strings.Contains(err.Error(), key) {
			t.Fatalf("refresh over a damaged vectors file: %v, want ErrCorrupt naming %s", err, key)
		}
		if after, _ := current(t, env, "v"); after.CurrentSnapshotID != before.CurrentSnapshotID {
			t.Fatalf("a failed refresh moved the catalog: snapshot %d → %d", before.CurrentSnapshotID, after.CurrentSnapshotID)
		}
	}
}
