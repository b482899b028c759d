// Package testfix holds the fixtures that the tests of the pipelines
// (indexer, query, verify, lifecycle, reliability, server, cmd/parqdb)
// share: a local warehouse folder with a SQLite catalog, and Parquet source
// parts of clustered random vectors. It is for tests only.
package testfix

import (
	"bytes"
	"context"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/parqdb/parqdb/catalog"
	"github.com/parqdb/parqdb/internal/source/sourcetest"
	"github.com/parqdb/parqdb/storage"
)

// Warehouse is a local warehouse folder with the default SQLite catalog in
// it (catalog.db), as the CLI makes it.
type Warehouse struct {
	// Dir is the warehouse folder.
	Dir string
	// Bucket is the folder as a storage bucket.
	Bucket *storage.Local
	// Catalog is the SQLite catalog at Dir/catalog.db; it is closed when
	// the test ends.
	Catalog *catalog.SQL
}

// NewWarehouse makes an empty warehouse in folder dir (created if needed).
func NewWarehouse(t testing.TB, dir string) *Warehouse {
	t.Helper()
	wh, err := storage.NewLocal(dir)
	if err != nil {
		t.Fatal(err)
	}
	cat, err := catalog.OpenSQLite(context.Background(), filepath.Join(dir, "catalog.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cat.Close() })
	return &Warehouse{Dir: dir, Bucket: wh, Catalog: cat}
}

// ClusteredVectors returns keys first…first+n-1 and n vectors of dimension
// dim, each around one of six cluster centres (c, c, …, c) with c in 0…5,
// plus standard normal noise per component. The same (seed, stream) gives
// the same rows.
func ClusteredVectors(first int64, n, dim int, seed, stream uint64) ([]int64, [][]float32) {
	rng := rand.New(rand.NewPCG(seed, stream))
	keys := make([]int64, n)
	vecs := make([][]float32, n)
	for i := range vecs {
		keys[i] = first + int64(i)
		c := float32(rng.IntN(6))
		v := make([]float32, dim)
		for j := range v {
			v[j] = c + float32(rng.NormFloat64())
		}
		vecs[i] = v
	}
	return keys, vecs
}

// WriteVectors writes keys and vectors as a Parquet source part at path
// (sourcetest.WriteVectors: int64 key column "id", list<float> column
// "embedding"), atomically: a temporary file in the same folder is renamed
// into place, so a concurrent reader of the folder never sees half a file.
// The temporary name does not end in .parquet, so sources skip it.
func WriteVectors(path string, keys []int64, vecs [][]float32, opt sourcetest.Options) error {
	var buf bytes.Buffer
	if err := sourcetest.WriteVectors(&buf, keys, vecs, opt); err != nil {
		return err
	}
	tmp := path + ".tmp-" + strconv.Itoa(os.Getpid())
	if err := os.WriteFile(tmp, buf.Bytes(), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// WritePart writes ClusteredVectors(first, n, dim, seed, stream) to path
// with WriteVectors, failing the test on error.
func WritePart(t testing.TB, path string, first int64, n, dim int, seed, stream uint64, opt sourcetest.Options) {
	t.Helper()
	keys, vecs := ClusteredVectors(first, n, dim, seed, stream)
	if err := WriteVectors(path, keys, vecs, opt); err != nil {
		t.Fatal(err)
	}
}

// V1LayoutSource is the source location recorded in testdata/v1-layout.
const V1LayoutSource = "/tmp/parqdb-v1-layout/src/"

// V1Layout copies testdata/v1-layout (an index "v1" written by a release
// whose ivf_postings tables were definition version 1; its README says
// how) into a temporary folder and returns the warehouse folder (with the
// object-store catalog, `--catalog warehouse`) and the source folder (ending
// in "/"). The source location in the copied JSON files is the copy's, and
// the source file's modification time is the recorded one, so the source
// binding holds.
func V1Layout(t testing.TB) (wh, src string) {
	t.Helper()
	_, self, _, _ := runtime.Caller(0)
	from := filepath.Join(filepath.Dir(self), "testdata", "v1-layout")
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS(from)); err != nil {
		t.Fatal(err)
	}
	src = filepath.Join(dir, "src") + "/"
	err := filepath.WalkDir(filepath.Join(dir, "wh"), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Ext(p) != ".json" {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(p, bytes.ReplaceAll(data, []byte(V1LayoutSource), []byte(src)), 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	mtime := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	if err := os.Chtimes(filepath.Join(src, "part-0.parquet"), mtime, mtime); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, "wh"), src
}

// OpenV1Layout is V1Layout opened: the copy's warehouse and its
// object-store catalog (closed when the test ends).
func OpenV1Layout(t testing.TB) (*storage.Local, catalog.Catalog) {
	t.Helper()
	dir, _ := V1Layout(t)
	wh, err := storage.NewLocal(dir)
	if err != nil {
		t.Fatal(err)
	}
	cat, err := catalog.Open(context.Background(), "warehouse", wh)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cat.Close() })
	return wh, cat
}
