package knnjoin_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/parqdb/parqdb/knnjoin"
)

// BenchmarkJoinGlove self-joins the GloVe sample (10,000 queries, k 10,
// --self, nprobe 8) into a local folder: one op is a whole join, plan to
// commit; queries/s is reported.
func BenchmarkJoinGlove(b *testing.B) {
	f := newFixtureTB(b)
	dir := b.TempDir()
	o := gloveOptions("")
	o.Self = true
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		o.Output = filepath.Join(dir, fmt.Sprint(i))
		if _, _, err := knnjoin.Join(context.Background(), f.env, o, knnjoin.RunOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*len(f.rows))/b.Elapsed().Seconds(), "queries/s")
}
