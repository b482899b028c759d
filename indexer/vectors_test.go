package indexer

import (
	"context"
	"encoding/binary"
	"errors"
	"path/filepath"
	"testing"

	"github.com/parqdb/parqdb/metadata"
	"github.com/parqdb/parqdb/postings"
	"github.com/parqdb/parqdb/storage"
	"github.com/parqdb/parqdb/vecfile"
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
			loc := res.Metadata.CurrentSnapshot().IndexTables[metadata.RolePostings].Properties["location"]
			key := vecfile.Location(loc)
			if !tc.on {
				if _, err := env.Warehouse.Stat(ctx, key); !errors.Is(err, storage.ErrNotExist) {
					t.Fatalf("build without VectorsFile: stat %s: %v, want not found", key, err)
				}
				return
			}
			raw, err := storage.ReadAll(ctx, env.Warehouse, loc+postings.ManifestName)
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
