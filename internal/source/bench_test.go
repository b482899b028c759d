package source

import (
	"bytes"
	"context"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/parqdb/parqdb/internal/source/sourcetest"
	"github.com/parqdb/parqdb/metadata"
)

// BenchmarkScan measures Scan throughput over list<float> vectors of
// dimension 768: 10k rows by default, 100k with PARQDB_BENCH_LARGE=1.
// It reports rows/s and the rate of vector bytes (4·768 per row) as MB/s.
func BenchmarkScan(b *testing.B) {
	n := 10_000
	if os.Getenv("PARQDB_BENCH_LARGE") == "1" {
		n = 100_000
	}
	const d = 768
	r := rand.New(rand.NewPCG(1, 1))
	keys := seq(0, n)
	vecs := randVectors(r, n, d)
	var buf bytes.Buffer
	if err := sourcetest.WriteVectors(&buf, keys, vecs, sourcetest.Options{RowGroupRows: 8192}); err != nil {
		b.Fatal(err)
	}
	vecs = nil
	mb := newMem()
	mb.put("bench.parquet", buf.Bytes())
	st := mustOpen(b, mb, "bench.parquet")
	for _, c := range []struct {
		name    string
		metric  string
		workers int
	}{
		{"l2/workers=1", metadata.MetricL2Squared, 1},
		{"l2/workers=2", metadata.MetricL2Squared, 2},
		{"cosine/workers=1", metadata.MetricCosine, 1},
	} {
		b.Run(c.name, func(b *testing.B) {
			bind := l2("embedding", "id")
			bind.Metric = c.metric
			l, err := st.Check(context.Background(), bind)
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(n) * d * 4)
			b.ResetTimer()
			for range b.N {
				rows := 0
				err := st.ScanWith(context.Background(), l, ScanOptions{Workers: c.workers}, func(bt *Batch) error {
					rows += bt.N
					return nil
				})
				if err != nil || rows != n {
					b.Fatal(rows, err)
				}
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}
