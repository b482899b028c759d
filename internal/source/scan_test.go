package source

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/parqdb/parqdb/internal/source/sourcetest"
)

func TestScanShapes(t *testing.T) {
	const n, d = 53, 5
	r := rand.New(rand.NewPCG(1, 2))
	vecs := randVectors(r, n, d)
	for _, shape := range sourcetest.Shapes {
		for _, double := range []bool{false, true} {
			for _, dict := range []bool{false, true} {
				v1 := dict // dictionary pages with V1 data pages, as pyarrow writes them
				name := fmt.Sprintf("%s/double=%v/dict=%v", shape, double, dict)
				t.Run(name, func(t *testing.T) {
					tab := &sourcetest.Table{
						Fields: []sourcetest.Field{
							sourcetest.F("id", sourcetestInt64()),
							sourcetest.F("vec", sourcetest.VectorNode(shape, double, dict)),
						},
						RowGroupRows:   16,
						PageBufferSize: 64,
						DataPageV1:     v1,
					}
					for i := range n {
						var v any = vecs[i]
						if double {
							f := make([]float64, d)
							for j := range f {
								f[j] = float64(vecs[i][j])
							}
							v = f
						}
						tab.Rows = append(tab.Rows, []any{int64(i * 3), v})
					}
					b := newMem()
					writeTable(t, b, "t.parquet", tab)
					st := mustOpen(t, b, "t.parquet")
					l, err := st.Check(context.Background(), l2("vec", "id"))
					if err != nil {
						t.Fatal(err)
					}
					wantShape := map[sourcetest.Shape]string{sourcetest.List2: "2-level list", sourcetest.Repeated: "repeated"}[shape]
					if wantShape == "" {
						wantShape = "3-level list"
					}
					if s, dbl := l.Shape(0); s != wantShape || dbl != double {
						t.Fatalf("shape %q double=%v, want %q %v", s, dbl, wantShape, double)
					}
					if got := st.Files()[0].RowGroups; got != 4 {
						t.Fatalf("%d row groups, want 4", got)
					}
					if l.Dim != d {
						t.Fatalf("inferred Dim %d, want %d", l.Dim, d)
					}
					for _, w := range []int{1, 3} {
						got, err := scanAll(t, st, l, ScanOptions{BatchRows: 7, Workers: w})
						if err != nil {
							t.Fatalf("workers=%d: %v", w, err)
						}
						if len(got.vecs) != n {
							t.Fatalf("workers=%d: %d rows, want %d", w, len(got.vecs), n)
						}
						for i := range n {
							if got.locs[i] != (RowLoc{0, int64(i)}) {
								t.Fatalf("row %d at %v", i, got.locs[i])
							}
							if got.keys[i][0].Int != int64(i*3) {
								t.Fatalf("row %d key %v", i, got.keys[i])
							}
							for j := range d {
								if got.vecs[i][j] != vecs[i][j] {
									t.Fatalf("row %d vec %v, want %v", i, got.vecs[i], vecs[i])
								}
							}
						}
					}
				})
			}
		}
	}
}
