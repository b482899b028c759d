package source

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/parqdb/parqdb/internal/source/sourcetest"
	"github.com/parqdb/parqdb/storage"
)

func TestSelectView(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	for i, name := range []string{"a.parquet", "b.parquet", "c.parquet"} {
		var buf bytes.Buffer
		keys := []int64{int64(10 * i), int64(10*i + 1)}
		if err := sourcetest.WriteVectors(&buf, keys, [][]float32{{1, 2}, {3, 4}}, sourcetest.Options{}); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b, err := storage.NewLocal(dir)
	if err != nil {
		t.Fatal(err)
	}
	all, err := Open(ctx, b, "")
	if err != nil {
		t.Fatal(err)
	}
	defer all.Close()
	v := all.Select(func(f File) bool { return f.Key != "b.parquet" })
	if v.NumRows() != 4 || len(v.Files()) != 2 || v.Files()[1].Key != "c.parquet" {
		t.Fatalf("view: %d rows, files %+v", v.NumRows(), v.Files())
	}
	if v.Identity() == all.Identity() {
		t.Fatal("view has the parent's identity")
	}
	// The view's identity is the identity of a table of just those files.
	os.Remove(filepath.Join(dir, "b.parquet"))
	two, err := Open(ctx, b, "")
	if err != nil {
		t.Fatal(err)
	}
	defer two.Close()
	if two.Identity() != v.Identity() {
		t.Fatal("view identity differs from a table of the same files")
	}
	if err := v.Close(); err != nil {
		t.Fatal(err)
	}
	if all.Select(func(File) bool { return false }) != nil {
		t.Fatal("empty view is not nil")
	}
	if got := all.Files()[0].Version(); got == "" {
		t.Fatal("empty version")
	}
}
