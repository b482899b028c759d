package source

import (
	"bytes"
	"context"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/parqdb/parqdb/internal/source/sourcetest"
)

// fashionRow is the row of bench/mkdata's Fashion-MNIST files.
type fashionRow struct {
	ID    int64     `parquet:"id"`
	Label int32     `parquet:"label"`
	Vec   []float32 `parquet:"vec,list"`
}

// fashionFile is the default path of bench/mkdata's Fashion-MNIST train
// file; the benchmark uses it when present.
const fashionFile = "/tmp/bd/fashion-train.parquet"

// fashionBytes returns the Fashion-MNIST train file when present, else a
// synthetic file of the same shape (784 pixel values 0..255, mostly 0,
// Snappy, one row group): 10,000 rows, or 60,000 with PARQDB_BENCH_LARGE=1.
func fashionBytes(b *testing.B) []byte {
	if data, err := os.ReadFile(fashionFile); err == nil {
		return data
	}
	n := 10_000
	if os.Getenv("PARQDB_BENCH_LARGE") == "1" {
		n = 60_000
	}
	r := rand.New(rand.NewPCG(3, 4))
	var buf bytes.Buffer
	w := parquet.NewGenericWriter[fashionRow](&buf, parquet.Compression(&parquet.Snappy), parquet.MaxRowsPerRowGroup(65536))
	batch := make([]fashionRow, 0, 1024)
	for i := range n {
		v := make([]float32, 784)
		for j := range v {
			if r.IntN(2) == 0 {
				v[j] = float32(r.IntN(256))
			}
		}
		batch = append(batch, fashionRow{ID: int64(i), Label: int32(r.IntN(10)), Vec: v})
		if len(batch) == cap(batch) || i == n-1 {
			if _, err := w.Write(batch); err != nil {
				b.Fatal(err)
			}
			batch = batch[:0]
		}
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	return buf.Bytes()
}

// BenchmarkReadRows measures the join of a search result to its source
// rows: 10 random rows of a Fashion-MNIST-shaped source (784-dim vectors,
// Snappy pages), with two scalar columns and with every column. "cold"
// draws new rows each time (pages may still come from the decoded-page
// cache); "warm" repeats one set of rows, so every page comes from the
// cache; "nocache" draws new rows with the cache disabled.
func BenchmarkReadRows(b *testing.B) {
	mb := newMem()
	mb.put("fashion.parquet", fashionBytes(b))
	st := mustOpen(b, mb, "fashion.parquet")
	n := st.NumRows()
	for _, c := range []struct {
		name string
		cols []string
	}{
		{"id,label", []string{"id", "label"}},
		{"all", nil},
	} {
		for _, mode := range []string{"cold", "warm", "nocache"} {
			warm := mode == "warm"
			b.Run(c.name+"/"+mode, func(b *testing.B) {
				size := int64(SuggestedPageCacheBytes)
				if mode == "nocache" {
					size = 0
				}
				prev := SetPageCacheBytes(size)
				defer SetPageCacheBytes(prev)
				r := rand.New(rand.NewPCG(9, 9))
				locs := make([]RowLoc, 10)
				draw := func() {
					for i := range locs {
						locs[i] = RowLoc{Row: r.Int64N(n)}
					}
				}
				draw()
				b.ResetTimer()
				for range b.N {
					if !warm {
						draw()
					}
					rows, err := st.ReadRows(context.Background(), locs, c.cols)
					if err != nil || len(rows.Rows) != len(locs) {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkReadVectorsCold measures the cold exact-vector path behind
// `source`-encoding search and refine: one ReadVectors call for 3,000
// random rows of a 384-d source (12,000 rows in two row groups, zstd
// pages of ≈ 1 MB), the decoded-page cache off, with and without an
// offset index. It reports the pages decoded per call (pages/op).
func BenchmarkReadVectorsCold(b *testing.B) {
	ctx := context.Background()
	const n, dim = 12_000, 384
	r := rand.New(rand.NewPCG(29, 2))
	vecs := randVectors(r, n, dim)
	file := vectorFile(b, seq(0, n), vecs, sourcetest.Options{Codec: &parquet.Zstd, PageBufferSize: 1 << 20, RowGroupRows: n / 2})
	locs := make([]RowLoc, 3000)
	for i := range locs {
		locs[i] = RowLoc{Row: r.Int64N(n)}
	}
	dst := make([]float32, len(locs)*dim)
	for _, strip := range []bool{false, true} {
		name := "offset-index"
		data := file
		if strip {
			name, data = "no-offset-index", stripPageIndex(b, data)
		}
		b.Run(name, func(b *testing.B) {
			mb := newMem()
			mb.put("s/part-0.parquet", data)
			st := mustOpen(b, mb, "s")
			l, err := st.Check(ctx, l2("embedding", "id"))
			if err != nil {
				b.Fatal(err)
			}
			defer SetPageCacheBytes(SetPageCacheBytes(0))
			p0 := vecPagesRead.Load()
			b.ResetTimer()
			for range b.N {
				if err := st.ReadVectors(ctx, l, locs, dst); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(vecPagesRead.Load()-p0)/float64(b.N), "pages/op")
		})
	}
}
