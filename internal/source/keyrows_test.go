package source

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/parqdb/parqdb/internal/source/sourcetest"
)

// TestCheckSharedKeys: given the stable hashes rows share, CheckSharedKeys
// reports a duplicate naming both rows, and accepts hashes that only
// collide (forced with a hash that maps most keys to three values).
func TestCheckSharedKeys(t *testing.T) {
	for _, tc := range []struct {
		name    string
		keys    []int64
		collide bool
		want    []string // nil: no duplicate
	}{
		{name: "unique", keys: seq(0, 40)},
		{name: "unique, colliding hashes", keys: seq(0, 40), collide: true},
		{name: "duplicate", keys: []int64{5, 6, 7, 8, 6, 9},
			want: []string{`row 4 (key id=6)`, `same key as row 1 of file "d/a.parquet"`}},
		{name: "duplicate, colliding hashes", keys: []int64{5, 6, 7, 8, 6, 9}, collide: true,
			want: []string{`row 4 (key id=6)`, `same key as row 1 of file "d/a.parquet"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.collide {
				hashKeyForTest = func(b []byte) uint64 { return uint64(b[len(b)-1] % 3) }
				defer func() { hashKeyForTest = nil }()
			}
			ctx := context.Background()
			b := newMem()
			vecs := make([][]float32, len(tc.keys))
			for i := range vecs {
				vecs[i] = []float32{float32(i), 1}
			}
			writeVectors(t, b, "d/a.parquet", tc.keys, vecs, sourcetest.Options{RowGroupRows: 7})
			st := mustOpen(t, b, "d")
			l, err := st.Check(ctx, l2("embedding", "id"))
			if err != nil {
				t.Fatal(err)
			}
			// The shared hashes, as a build computes them.
			hs := &KeyHashes{stable: true}
			var all []uint64
			err = st.Scan(ctx, l, 0, func(bt *Batch) error {
				for i := 0; i < bt.N; i++ {
					all = append(all, hs.hash(bt.AppendKey(nil, i)))
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			slices.Sort(all)
			var shared []uint64
			for i := 1; i < len(all); i++ {
				if all[i] == all[i-1] && (len(shared) == 0 || shared[len(shared)-1] != all[i]) {
					shared = append(shared, all[i])
				}
			}
			err = CheckSharedKeys(ctx, st, l, shared)
			if tc.want == nil {
				if err != nil {
					t.Fatalf("unexpected error %v", err)
				}
				return
			}
			if !errors.Is(err, ErrDuplicateKey) {
				t.Fatalf("error %v, want ErrDuplicateKey", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Fatalf("error %q lacks %q", err, w)
				}
			}
		})
	}
}
