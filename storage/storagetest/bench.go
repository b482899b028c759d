package storagetest

import (
	"fmt"
	"io"
	"math/rand/v2"
	"testing"

	"github.com/parqdb/parqdb/storage"
)

// BenchmarkReadAt measures ranged reads at random offsets of an 8 MiB
// object in b, for several read sizes, as a reader of Parquet row groups
// does. It reports bytes per second and, through storage.WithStats,
// requests per read.
func BenchmarkReadAt(b *testing.B, bkt storage.Bucket) {
	const size = 8 << 20
	ctx := b.Context()
	if err := storage.WriteAll(ctx, bkt, "bench/readat.bin", pattern(9, size)); err != nil {
		b.Fatal(err)
	}
	counted, stats := storage.WithStats(bkt)
	o, err := counted.Open(ctx, "bench/readat.bin")
	if err != nil {
		b.Fatal(err)
	}
	defer o.Close()
	for _, n := range []int{4 << 10, 64 << 10, 1 << 20} {
		b.Run(fmt.Sprintf("%dKiB", n>>10), func(b *testing.B) {
			r := rand.New(rand.NewPCG(uint64(n), 2))
			p := make([]byte, n)
			before := stats.Snapshot()
			b.SetBytes(int64(n))
			for b.Loop() {
				off := r.Int64N(size - int64(n) + 1)
				if k, err := o.ReadAt(p, off); k != n || (err != nil && err != io.EOF) {
					b.Fatalf("ReadAt(len %d, off %d) = %d, %v", n, off, k, err)
				}
			}
			after := stats.Snapshot()
			b.ReportMetric(float64(after.Requests-before.Requests)/float64(b.N), "requests/op")
		})
	}
}
