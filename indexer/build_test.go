package indexer

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/parqdb/parqdb/catalog"
	"github.com/parqdb/parqdb/internal/source/sourcetest"
	"github.com/parqdb/parqdb/internal/testfix"
	"github.com/parqdb/parqdb/metadata"
	"github.com/parqdb/parqdb/postings"
	"github.com/parqdb/parqdb/storage"
)

// testEnv is a local warehouse with a SQLite catalog in dir/warehouse.
func testEnv(t testing.TB) (Env, string) {
	t.Helper()
	dir := t.TempDir()
	w := testfix.NewWarehouse(t, filepath.Join(dir, "warehouse"))
	return Env{Warehouse: w.Bucket, Catalog: w.Catalog}, dir
}

// writeSource writes n random vectors of dimension dim with keys 0..n-1.
func writeSource(t *testing.T, path string, n, dim int, seed uint64) [][]float32 {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 1))
	keys := make([]int64, n)
	vecs := make([][]float32, n)
	for i := range vecs {
		keys[i] = int64(i)
		v := make([]float32, dim)
		c := float32(rng.IntN(8))
		for j := range v {
			v[j] = c + float32(rng.NormFloat64())
		}
		vecs[i] = v
	}
	var buf bytes.Buffer
	if err := sourcetest.WriteVectors(&buf, keys, vecs, sourcetest.Options{RowGroupRows: 700}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return vecs
}

func TestCreateCommitsValidIndex(t *testing.T) {
	ctx := context.Background()
	for _, enc := range []string{metadata.EncodingLVQ8, metadata.EncodingLVQ4, metadata.EncodingSource} {
		t.Run(enc, func(t *testing.T) {
			env, dir := testEnv(t)
			src := filepath.Join(dir, "src.parquet")
			writeSource(t, src, 3000, 17, 7)
			res, err := Create(ctx, env, Options{
				Name: "vecs", Source: src, VectorField: "embedding", KeyFields: []string{"id"},
				Encoding: enc, NList: 40,
			})
			if err != nil {
				t.Fatal(err)
			}
			if res.Rows != 3000 || res.NList != 40 || res.Dim != 17 {
				t.Fatalf("result rows %d nlist %d dim %d", res.Rows, res.NList, res.Dim)
			}
			m, e, err := catalog.LoadMetadata(ctx, env.Catalog, env.Warehouse, "vecs")
			if err != nil {
				t.Fatal(err)
			}
			if e.MetadataLocation != res.MetadataLocation {
				t.Fatalf("catalog names %s, build returned %s", e.MetadataLocation, res.MetadataLocation)
			}
			s := m.CurrentSnapshot()
			if s.IndexedRows != 3000 || s.Parameters[metadata.ParamPostingEncoding] != enc {
				t.Fatalf("snapshot %+v", s)
			}
		})
	}
}

func TestCreateIsDeterministic(t *testing.T) {
	ctx := context.Background()
	env, dir := testEnv(t)
	src := filepath.Join(dir, "src.parquet")
	writeSource(t, src, 2000, 9, 3)
	var manifests [][]byte
	for i, workers := range []int{1, 3} {
		res, err := Create(ctx, env, Options{
			Name: []string{"a", "b"}[i], Source: src, VectorField: "embedding", KeyFields: []string{"id"},
			NList: 30, Workers: workers, ReuseCentroids: ReuseNever,
		})
		if err != nil {
			t.Fatal(err)
		}
		s := res.Metadata.CurrentSnapshot()
		lay := postings.SnapshotLayout(s)
		files, err := env.Warehouse.List(ctx, lay.Table)
		if err != nil {
			t.Fatal(err)
		}
		side, err := env.Warehouse.List(ctx, lay.Meta)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, side...)
		var all []byte
		for _, f := range files {
			if filepath.Base(f.Key) == "manifest.json" {
				continue // names the files' folder, which differs per index
			}
			data, err := storage.ReadAll(ctx, env.Warehouse, f.Key)
			if err != nil {
				t.Fatal(err)
			}
			all = append(all, data...)
		}
		manifests = append(manifests, all)
	}
	if !bytes.Equal(manifests[0], manifests[1]) {
		t.Fatal("postings files differ between Workers=1 and Workers=3")
	}
}

func TestCreateRefusesBadSourceAndCommitsNothing(t *testing.T) {
	ctx := context.Background()
	env, dir := testEnv(t)
	src := filepath.Join(dir, "src.parquet")
	writeSource(t, src, 100, 4, 1)
	_, err := Create(ctx, env, Options{Name: "x", Source: src, VectorField: "embedding", KeyFields: []string{"id"}, NList: 101})
	if !errors.Is(err, ErrOptions) {
		t.Fatalf("nlist > N: got %v", err)
	}
	if names, _ := env.Catalog.List(ctx); len(names) != 0 {
		t.Fatalf("catalog has %v after a failed build", names)
	}
	left, _ := env.Warehouse.List(ctx, "indexes/")
	if len(left) != 0 {
		t.Fatalf("failed build left %d files", len(left))
	}
}

func TestSamplePositions(t *testing.T) {
	for _, tc := range []struct {
		n int64
		k int
	}{{10, 10}, {10, 3}, {1000, 999}, {1 << 40, 5}} {
		got := samplePositions(tc.n, tc.k, 1)
		if len(got) != tc.k {
			t.Fatalf("n=%d k=%d: got %d", tc.n, tc.k, len(got))
		}
		for i := range got {
			if got[i] < 0 || got[i] >= tc.n || (i > 0 && got[i] <= got[i-1]) {
				t.Fatalf("n=%d k=%d: not distinct ascending in range: %v", tc.n, tc.k, got)
			}
		}
		again := samplePositions(tc.n, tc.k, 1)
		for i := range got {
			if got[i] != again[i] {
				t.Fatal("not deterministic")
			}
		}
	}
}
