package indexer

import (
	"bytes"
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/parqdb/parqdb/internal/source/sourcetest"
)

// TestCreateRefusesBadSources builds from one broken source per rule of the
// source contract (ivf-index-schema §4, §8) and checks the error text names
// the file, row, key or field and the rule, that the catalog is untouched,
// and that no file is left in the warehouse.
func TestCreateRefusesBadSources(t *testing.T) {
	vec := sourcetest.VectorNode(sourcetest.List3Nullable, false, false)
	dvec := sourcetest.VectorNode(sourcetest.List3, true, false)
	id := parquet.Leaf(parquet.Int64Type)
	good := func(i int) []any { return []any{int64(i), []any{float32(i), float32(1), float32(2)}} }
	rows := func(n int, patch func(i int, r []any)) [][]any {
		out := make([][]any, n)
		for i := range out {
			out[i] = good(i)
			if patch != nil {
				patch(i, out[i])
			}
		}
		return out
	}
	std := []sourcetest.Field{sourcetest.F("id", id), sourcetest.F("embedding", vec)}
	for _, tc := range []struct {
		name  string
		table sourcetest.Table
		opts  func(*Options)
		want  []string // substrings of the error
	}{
		{"NaN", sourcetest.Table{Fields: std, Rows: rows(50, func(i int, r []any) {
			if i == 17 {
				r[1] = []any{float32(1), float32(math.NaN()), float32(2)}
			}
		})}, nil, []string{"row 17", "id=17", "NaN"}},
		{"overflows float32", sourcetest.Table{Fields: []sourcetest.Field{sourcetest.F("id", id), sourcetest.F("embedding", dvec)}, Rows: rows(50, func(i int, r []any) {
			r[1] = []any{float64(i), 1.0, 2.0}
			if i == 9 {
				r[1] = []any{1e300, 1.0, 2.0}
			}
		})}, nil, []string{"row 9", "id=9", "Inf"}},
		{"wrong dimension", sourcetest.Table{Fields: std, Rows: rows(50, func(i int, r []any) {
			if i == 30 {
				r[1] = []any{float32(1), float32(2)}
			}
		})}, nil, []string{"row 30", "dimension"}},
		{"null vector", sourcetest.Table{Fields: std, Rows: rows(50, func(i int, r []any) {
			if i == 3 {
				r[1] = nil
			}
		})}, nil, []string{"row 3", "null"}},
		{"null element", sourcetest.Table{Fields: std, Rows: rows(50, func(i int, r []any) {
			if i == 4 {
				r[1] = []any{float32(1), nil, float32(2)}
			}
		})}, nil, []string{"row 4", "null"}},
		{"null key", sourcetest.Table{Fields: []sourcetest.Field{sourcetest.F("id", parquet.Optional(id)), sourcetest.F("embedding", vec)}, Rows: rows(50, func(i int, r []any) {
			if i == 5 {
				r[0] = nil
			}
		})}, nil, []string{"row 5", "null", "id"}},
		{"zero norm under cosine", sourcetest.Table{Fields: std, Rows: rows(50, func(i int, r []any) {
			if i == 6 {
				r[1] = []any{float32(0), float32(0), float32(0)}
			}
		})}, func(o *Options) { o.Metric = "cosine" }, []string{"row 6", "id=6", "zero-norm"}},
		{"_distance column", sourcetest.Table{Fields: append(std[:2:2], sourcetest.F("_distance", parquet.Leaf(parquet.FloatType))), Rows: rows(50, nil)}, nil, []string{"_distance"}},
		{"missing vector field", sourcetest.Table{Fields: std, Rows: rows(50, nil)}, func(o *Options) { o.VectorField = "nope" }, []string{`"nope"`}},
		{"vector field of the wrong type", sourcetest.Table{Fields: std, Rows: rows(50, nil)}, func(o *Options) { o.VectorField = "id"; o.KeyFields = []string{"id"} }, []string{"vector"}},
		{"missing key field", sourcetest.Table{Fields: std, Rows: rows(50, nil)}, func(o *Options) { o.KeyFields = []string{"nope"} }, []string{`"nope"`}},
		{"unsupported key type", sourcetest.Table{Fields: []sourcetest.Field{sourcetest.F("id", parquet.Leaf(parquet.DoubleType)), sourcetest.F("embedding", vec)}, Rows: rows(50, func(i int, r []any) { r[0] = float64(i) })}, nil, []string{`"id"`, "key"}},
		{"empty source", sourcetest.Table{Fields: std, Rows: nil}, func(o *Options) { o.NList = 1 }, []string{"empty"}},
		{"nlist above N", sourcetest.Table{Fields: std, Rows: rows(50, nil)}, func(o *Options) { o.NList = 51 }, []string{"nlist 51", "50 rows"}},
		{"vector field used as key", sourcetest.Table{Fields: std, Rows: rows(50, nil)}, func(o *Options) { o.KeyFields = []string{"embedding"} }, []string{"embedding", "key"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			env, dir := testEnv(t)
			if tc.name == "_distance column" {
				for i := range tc.table.Rows {
					tc.table.Rows[i] = append(tc.table.Rows[i], float32(0))
				}
			}
			var buf bytes.Buffer
			if err := tc.table.Write(&buf); err != nil {
				t.Fatal(err)
			}
			src := filepath.Join(dir, "bad.parquet")
			if err := os.WriteFile(src, buf.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			o := Options{Name: "bad", Source: src, VectorField: "embedding", KeyFields: []string{"id"}, NList: 4}
			if tc.opts != nil {
				tc.opts(&o)
			}
			_, err := Create(ctx, env, o)
			if err == nil {
				t.Fatal("build succeeded")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
			if names, _ := env.Catalog.List(ctx); len(names) != 0 {
				t.Errorf("catalog has %v after a failed build", names)
			}
			for _, p := range []string{"indexes/", "metadata/"} {
				if left, _ := env.Warehouse.List(ctx, p); len(left) != 0 {
					t.Errorf("failed build left %d files under %s", len(left), p)
				}
			}
		})
	}
}
