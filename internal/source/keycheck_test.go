package source

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/parqdb/parqdb/internal/source/sourcetest"
)

// TestCheckUniqueKeys runs CheckUniqueKeys over small tables, with the real
// hash and with one that makes most keys collide (so that the exact
// comparison decides), with hashes collected by a Scan and without.
func TestCheckUniqueKeys(t *testing.T) {
	for _, tc := range []struct {
		name  string
		files map[string][]int64 // d/<name> → keys
		old   []string           // files already indexed
		want  []string           // substrings of the error; nil: no duplicate
	}{
		{name: "unique", files: map[string][]int64{"a.parquet": seq(0, 50), "b.parquet": seq(50, 50)}},
		{name: "same file", files: map[string][]int64{"a.parquet": {5, 6, 7, 8, 6, 9}},
			want: []string{`file "d/a.parquet": row 4 (key id=6)`, `same key as row 1 of file "d/a.parquet"`}},
		{name: "across files", files: map[string][]int64{"a.parquet": seq(0, 50), "b.parquet": {100, 101, 49}},
			want: []string{`file "d/b.parquet": row 2 (key id=49)`, `same key as row 49 of file "d/a.parquet"`}},
		{name: "new against old", files: map[string][]int64{"a.parquet": seq(0, 50), "b.parquet": {100, 7}}, old: []string{"d/a.parquet"},
			want: []string{`file "d/b.parquet": row 1 (key id=7)`, `same key as row 7 of file "d/a.parquet", which the index already holds`}},
		{name: "new among themselves", files: map[string][]int64{"a.parquet": seq(0, 50), "b.parquet": {100, 101}, "c.parquet": {102, 101}}, old: []string{"d/a.parquet"},
			want: []string{`file "d/c.parquet": row 1 (key id=101)`, `same key as row 1 of file "d/b.parquet"`}},
		{name: "old duplicates are not this check's", files: map[string][]int64{"a.parquet": {1, 2, 1}, "b.parquet": {3, 4}}, old: []string{"d/a.parquet"}},
		{name: "new repeats an old duplicate", files: map[string][]int64{"a.parquet": {1, 2, 1}, "b.parquet": {3, 1}}, old: []string{"d/a.parquet"},
			want: []string{`file "d/b.parquet": row 1 (key id=1)`, `same key as row 0 of file "d/a.parquet"`}},
	} {
		for _, collide := range []bool{false, true} {
			for _, collected := range []bool{false, true} {
				name := tc.name
				if collide {
					name += "/colliding hashes"
				}
				if collected {
					name += "/hashes from Scan"
				}
				t.Run(name, func(t *testing.T) {
					if collide {
						hashKeyForTest = func(b []byte) uint64 { return uint64(b[len(b)-1] % 3) }
						defer func() { hashKeyForTest = nil }()
					}
					ctx := context.Background()
					b := newMem()
					for f, keys := range tc.files {
						vecs := make([][]float32, len(keys))
						for i := range vecs {
							vecs[i] = []float32{float32(i), 1}
						}
						writeVectors(t, b, "d/"+f, keys, vecs, sourcetest.Options{RowGroupRows: 7})
					}
					st := mustOpen(t, b, "d")
					l, err := st.Check(ctx, l2("embedding", "id"))
					if err != nil {
						t.Fatal(err)
					}
					old := func(f File) bool {
						for _, o := range tc.old {
							if f.Key == o {
								return true
							}
						}
						return false
					}
					var hs *KeyHashes
					if collected {
						hs = NewKeyHashes()
						fresh := st.Select(func(f File) bool { return !old(f) })
						fl, err := fresh.Check(ctx, l2("embedding", "id"))
						if err != nil {
							t.Fatal(err)
						}
						if err := fresh.Scan(ctx, fl, 0, func(b *Batch) error { hs.Add(b); return nil }); err != nil {
							t.Fatal(err)
						}
						if int64(hs.Len()) != fresh.NumRows() {
							t.Fatalf("KeyHashes holds %d rows, want %d", hs.Len(), fresh.NumRows())
						}
					}
					err = CheckUniqueKeys(ctx, st, l, old, hs)
					if tc.want == nil {
						if err != nil {
							t.Fatalf("unique keys refused: %v", err)
						}
						return
					}
					if !errors.Is(err, ErrDuplicateKey) || !errors.Is(err, ErrContract) {
						t.Fatalf("CheckUniqueKeys: %v, want ErrDuplicateKey", err)
					}
					for _, w := range tc.want {
						if !strings.Contains(err.Error(), w) {
							t.Errorf("%q lacks %q", err, w)
						}
					}
				})
			}
		}
	}
}

// TestCheckUniqueKeysNullKey checks that the key-only scan still enforces
// the null-key rule and names the row.
func TestCheckUniqueKeysNullKey(t *testing.T) {
	ctx := context.Background()
	b := newMem()
	writeTable(t, b, "n/a.parquet", &sourcetest.Table{
		Fields: []sourcetest.Field{sourcetest.F("id", optionalInt64()), sourcetest.F("embedding", sourcetest.VectorNode(sourcetest.List3, false, false))},
		Rows:   [][]any{{int64(1), []any{float32(1)}}, {nil, []any{float32(2)}}},
	})
	st := mustOpen(t, b, "n")
	l, err := st.Check(ctx, l2("embedding", "id"))
	if err != nil {
		t.Fatal(err)
	}
	err = CheckUniqueKeys(ctx, st, l, nil, nil)
	if !errors.Is(err, ErrNullKey) || !strings.Contains(err.Error(), "row 1") {
		t.Fatalf("CheckUniqueKeys: %v, want ErrNullKey at row 1", err)
	}
}

func optionalInt64() parquet.Node { return parquet.Optional(parquet.Leaf(parquet.Int64Type)) }
