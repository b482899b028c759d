package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
)

// dupRow is a source row of the tests below.
type dupRow struct {
	ID        int64     `parquet:"id"`
	Embedding []float32 `parquet:"embedding,list"`
}

func dupRows(first, n int) []dupRow {
	rows := make([]dupRow, n)
	for i := range rows {
		x := float32(first + i)
		rows[i] = dupRow{ID: int64(first + i), Embedding: []float32{x, x * x / 100, 1, float32(i % 7)}}
	}
	return rows
}

// writeDupRows writes rows without compression, so that changing a key
// keeps the file's size.
func writeDupRows(t *testing.T, path string, rows []dupRow) {
	t.Helper()
	var buf bytes.Buffer
	w := parquet.NewGenericWriter[dupRow](&buf, parquet.Compression(&parquet.Uncompressed))
	if _, err := w.Write(rows); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestIndexCreateRefusesDuplicateKeys runs `parqdb index create` over a
// source whose id 999 appears twice (in two files) and checks exit 1, a
// message naming both rows and the key, and that no index exists.
func TestIndexCreateRefusesDuplicateKeys(t *testing.T) {
	dir := t.TempDir()
	wh, src := filepath.Join(dir, "wh"), filepath.Join(dir, "src")
	if err := os.MkdirAll(src, 0o755); err != nil {
		t.Fatal(err)
	}
	a, b := dupRows(900, 200), dupRows(1100, 100)
	b[42].ID = 999 // a[99] has id 999
	writeDupRows(t, filepath.Join(src, "a.parquet"), a)
	writeDupRows(t, filepath.Join(src, "b.parquet"), b)
	_, errs, code := runSplit(t, "--warehouse", wh, "index", "create", "dup", "--source", src,
		"--vector-field", "embedding", "--key-fields", "id", "--nlist", "4")
	if code != exitProblem {
		t.Fatalf("index create: exit %d, want %d: %s", code, exitProblem, errs)
	}
	for _, want := range []string{`file "b.parquet": row 42 (key id=999)`, "duplicate source key", `row 99 of file "a.parquet"`} {
		if !strings.Contains(errs, want) {
			t.Errorf("message %q lacks %q", errs, want)
		}
	}
	// Nothing committed: the failed first create leaves no warehouse.
	if _, err := os.Stat(wh); !os.IsNotExist(err) {
		t.Errorf("the failed create left the warehouse %s: %v", wh, err)
	}
}

// TestSearchDuplicateKeyInSource changes a source in place after the build
// (keeping its size and modification time, so the index still opens) to
// repeat a key; search must exit 1 naming both rows and the fix.
func TestSearchDuplicateKeyInSource(t *testing.T) {
	dir := t.TempDir()
	wh, src := filepath.Join(dir, "wh"), filepath.Join(dir, "src.parquet")
	rows := dupRows(0, 300)
	writeDupRows(t, src, rows)
	if _, errs, code := runSplit(t, "--warehouse", wh, "index", "create", "dup", "--source", src,
		"--vector-field", "embedding", "--key-fields", "id", "--nlist", "4"); code != exitOK {
		t.Fatalf("index create: exit %d: %s", code, errs)
	}
	st, err := os.Stat(src)
	if err != nil {
		t.Fatal(err)
	}
	rows[200].ID = 17
	writeDupRows(t, src, rows)
	if err := os.Chtimes(src, st.ModTime(), st.ModTime()); err != nil {
		t.Fatal(err)
	}
	if st2, err := os.Stat(src); err != nil || st2.Size() != st.Size() {
		t.Fatalf("the rewritten source must keep its size: %v", err)
	}
	v := rows[200].Embedding
	_, errs, code := runSplit(t, "--warehouse", wh, "search", "dup", "--vector", fmt.Sprintf("[%g, %g, %g, %g]", v[0], v[1], v[2], v[3]), "-k", "3")
	if code != exitProblem {
		t.Fatalf("search: exit %d, want %d: %s", code, exitProblem, errs)
	}
	for _, want := range []string{"duplicate source key", "row 200 (key id=17)", "row 17 of file", "parqdb index refresh dup"} {
		if !strings.Contains(errs, want) {
			t.Errorf("message %q lacks %q", errs, want)
		}
	}
}
