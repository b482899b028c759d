package indexer

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"
)

type benchRow struct {
	ID  int64     `parquet:"id"`
	Vec []float32 `parquet:"vec,list"`
}

// writeBenchPart writes n clustered vectors with keys first.. to path.
func writeBenchPart(b testing.TB, path string, first int64, n, dim int, seed uint64) {
	b.Helper()
	rng := rand.New(rand.NewPCG(seed, 7))
	centers := make([]float32, 256*dim)
	crng := rand.New(rand.NewPCG(1, 1)) // same mixture for every part
	for i := range centers {
		centers[i] = float32(crng.NormFloat64())
	}
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	w := parquet.NewGenericWriter[benchRow](f, parquet.MaxRowsPerRowGroup(65536))
	rows := make([]benchRow, 0, 4096)
	for i := 0; i < n; i++ {
		c := rng.IntN(256)
		v := make([]float32, dim)
		for j := range v {
			v[j] = centers[c*dim+j] + 0.3*float32(rng.NormFloat64())
		}
		rows = append(rows, benchRow{ID: first + int64(i), Vec: v})
		if len(rows) == cap(rows) || i == n-1 {
			if _, err := w.Write(rows); err != nil {
				b.Fatal(err)
			}
			rows = rows[:0]
		}
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkRefreshVsBuild measures, in one run, a full build of N rows and
// an incremental refresh after appending N/10 rows, and reports their
// ratio (issue 6: at most 0.2 at 1M rows). N is 1,000,000 × 128 with
// PARQDB_BENCH_LARGE=1, else 20,000 × 32.
func BenchmarkRefreshVsBuild(b *testing.B) {
	n, dim := 20000, 32
	if os.Getenv("PARQDB_BENCH_LARGE") != "" {
		n, dim = 1_000_000, 128
	}
	ctx := context.Background()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		env, dir := testEnv(b)
		src := filepath.Join(dir, "src")
		os.MkdirAll(src, 0o755)
		parts := 10
		for p := 0; p < parts; p++ {
			writeBenchPart(b, filepath.Join(src, fmt.Sprintf("part-%02d.parquet", p)), int64(p*n/parts), n/parts, dim, uint64(p+1))
		}
		b.StartTimer()
		t0 := time.Now()
		if _, err := Create(ctx, env, Options{Name: "v", Source: src, VectorField: "vec", KeyFields: []string{"id"}}); err != nil {
			b.Fatal(err)
		}
		full := time.Since(t0)
		b.StopTimer()
		writeBenchPart(b, filepath.Join(src, "part-99.parquet"), int64(n), n/10, dim, 99)
		b.StartTimer()
		t1 := time.Now()
		r, err := Refresh(ctx, env, "v", RefreshOptions{})
		if err != nil {
			b.Fatal(err)
		}
		inc := time.Since(t1)
		if r.Action != ActionIncremental {
			b.Fatalf("refresh did %s: %s", r.Action, r.Reason)
		}
		b.ReportMetric(full.Seconds(), "build-s")
		b.ReportMetric(inc.Seconds(), "refresh-s")
		b.ReportMetric(inc.Seconds()/full.Seconds(), "refresh/build")
	}
}
