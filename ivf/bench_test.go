package ivf

import (
	"context"
	"math/rand/v2"
	"os"
	"testing"
)

// benchShape is one benchmark size. The large shapes (PARQDB_BENCH_LARGE=1)
// match the build targets: 1M × 128 with nlist 1000 and a Fashion-MNIST
// sized 60,000 × 784 with nlist 980, on synthetic clustered data.
type benchShape struct {
	name            string
	train, n, dim   int
	nlist, clusters int
}

func benchShapes() []benchShape {
	if os.Getenv("PARQDB_BENCH_LARGE") == "1" {
		return []benchShape{
			{"1Mx128_nlist1000", 100_000, 1_000_000, 128, 1000, 2000},
			{"60kx784_nlist980", 60_000, 60_000, 784, 980, 200},
		}
	}
	return []benchShape{{"5kx32_nlist64", 5000, 5000, 32, 64, 100}}
}

func benchData(s benchShape, rows int) []float32 {
	rng := rand.New(rand.NewPCG(uint64(s.dim), uint64(s.nlist)))
	return clustered(rng, rows, s.dim, s.clusters, 0.35)
}

func BenchmarkTrain(b *testing.B) {
	for _, s := range benchShapes() {
		sample := benchData(s, s.train)
		for _, workers := range []int{1, 2} {
			b.Run(s.name+"_workers"+string(rune('0'+workers)), func(b *testing.B) {
				for b.Loop() {
					if _, _, err := Train(context.Background(), sample, s.dim, TrainConfig{NList: s.nlist, Seed: 1, Workers: workers}); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(s.train)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
			})
		}
	}
}

func BenchmarkAssignBatch(b *testing.B) {
	for _, s := range benchShapes() {
		sample := benchData(s, s.train)
		c, _, err := Train(context.Background(), sample, s.dim, TrainConfig{NList: s.nlist, Seed: 1, Workers: 2})
		if err != nil {
			b.Fatal(err)
		}
		xs := benchData(s, s.n)
		out := make([]int32, s.n)
		b.Run(s.name, func(b *testing.B) {
			as := NewAssigner(c)
			for b.Loop() {
				as.AssignBatch(xs, out)
			}
			st := as.Stats()
			rows := float64(s.n) * float64(b.N)
			b.ReportMetric(rows/b.Elapsed().Seconds(), "rows/s")
			b.ReportMetric(float64(st.LeafDistances)/rows, "leafdist/row")
			b.ReportMetric(float64(st.MultiCandidate)/rows, "multi/row")
		})
		b.Run(s.name+"_parallel2", func(b *testing.B) {
			as := NewAssigner(c)
			for b.Loop() {
				if err := as.AssignParallel(context.Background(), xs, out, 2); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(s.n)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}
