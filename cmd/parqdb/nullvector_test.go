package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
)

// TestNullVectorElements: a null element of a query vector is a usage
// error naming its place wherever a vector is read (--vector, .jsonl and
// Parquet query files), not a 0 (encoding/json leaves a float64 it
// decodes null into unchanged; a Parquet reader would skip it).
func TestNullVectorElements(t *testing.T) {
	wh := t.TempDir() + "/absent"
	for _, tc := range []struct{ vec, msg string }{
		{"[null, 0, 1]", "--vector: value 0 is null"},
		{"[1, 2, null]", "--vector: value 2 is null"},
		{"[1, null, null]", "--vector: value 1 is null"},
	} {
		_, errs, code := runSplit(t, "--warehouse", wh, "search", "words", "--vector", tc.vec)
		if code != exitUsage || !strings.Contains(errs, tc.msg) {
			t.Errorf("--vector %s: exit %d, %q; want exit 2 with %q", tc.vec, code, errs, tc.msg)
		}
	}
	dir := t.TempDir()
	for name, tc := range map[string]struct{ content, msg string }{
		"first":  {"[null, 1]\n", "line 1 (query 0): value 0 is null"},
		"later":  {"[1, 2]\n\n[3, null]\n", "line 3 (query 1): value 1 is null"},
		"spaces": {"[ 1 , null ]\n", "line 1 (query 0): value 1 is null"},
	} {
		p := filepath.Join(dir, name+".jsonl")
		if err := os.WriteFile(p, []byte(tc.content), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := readQueries(p, ""); err == nil || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf(".jsonl %s: %v; want %q", name, err, tc.msg)
		}
	}
	type row struct {
		V []*float32 `parquet:"v,list"`
	}
	one, two := float32(1), float32(2)
	for name, tc := range map[string]struct {
		rows []row
		msg  string
	}{
		"middle":   {[]row{{[]*float32{&one, &two}}, {[]*float32{&one, nil, &two}}}, `row 1 (query 1): column "v" element 1 is null`},
		"first":    {[]row{{[]*float32{nil, &two}}}, `row 0 (query 0): column "v" element 0 is null`},
		"empty":    {[]row{{[]*float32{&one}}, {nil}}, `row 1 (query 1): column "v" is null or empty`},
		"all null": {[]row{{[]*float32{nil}}}, `row 0 (query 0): column "v" element 0 is null`},
	} {
		p := filepath.Join(dir, name+".parquet")
		if err := parquet.WriteFile(p, tc.rows); err != nil {
			t.Fatal(err)
		}
		if _, err := readQueries(p, "v"); err == nil || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("Parquet %s: %v; want %q", name, err, tc.msg)
		}
	}
}
