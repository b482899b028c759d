//go:build linux

package indexer

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// cpuSeconds is this process's user+system CPU time.
func cpuSeconds(b testing.TB) float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

// BenchmarkShardedVsSingle measures, in one run, a single-process build
// and a sharded build of the same source (10 files, 4 shards run one after
// the other in this process, then the commit), and reports wall and CPU
// seconds per step and their ratios: the coordinator's share (plan/single,
// the part that does not spread over machines), the total overhead
// (sharded CPU / single CPU) and the critical path on 4 machines
// (plan + slowest shard + commit) over the single build. N is
// 1,000,000 × 128 with PARQDB_BENCH_LARGE=1, else 20,000 × 32.
func BenchmarkShardedVsSingle(b *testing.B) {
	n, dim := 20000, 32
	if os.Getenv("PARQDB_BENCH_LARGE") != "" {
		n, dim = 1_000_000, 128
	}
	const parts, shards = 10, 4
	ctx := context.Background()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		env, dir := testEnv(b)
		src := filepath.Join(dir, "src")
		os.MkdirAll(src, 0o755)
		for p := 0; p < parts; p++ {
			writeBenchPart(b, filepath.Join(src, fmt.Sprintf("part-%02d.parquet", p)), int64(p*n/parts), n/parts, dim, uint64(p+1))
		}
		b.StartTimer()
		type step struct{ wall, cpu float64 }
		measure := func(fn func() error) step {
			t0, c0 := time.Now(), cpuSeconds(b)
			if err := fn(); err != nil {
				b.Fatal(err)
			}
			return step{time.Since(t0).Seconds(), cpuSeconds(b) - c0}
		}
		opts := Options{Name: "single", Source: src, VectorField: "vec", KeyFields: []string{"id"}, ReuseCentroids: ReuseNever}
		single := measure(func() error { _, err := Create(ctx, env, opts); return err })
		opts.Name = "sharded"
		var loc string
		plan := measure(func() error {
			pr, err := Plan(ctx, env, opts, shards)
			if pr != nil {
				loc = pr.Location
			}
			return err
		})
		var shardMax, shardSum step
		for s := range shards {
			st := measure(func() error { _, err := BuildShard(ctx, env, loc, s, ShardOptions{}); return err })
			shardSum.wall += st.wall
			shardSum.cpu += st.cpu
			shardMax.wall = max(shardMax.wall, st.wall)
			shardMax.cpu = max(shardMax.cpu, st.cpu)
		}
		commit := measure(func() error { _, err := CommitPlan(ctx, env, loc, CommitOptions{}); return err })
		b.ReportMetric(single.wall, "single-s")
		b.ReportMetric(single.cpu, "single-cpu-s")
		b.ReportMetric(plan.cpu, "plan-cpu-s")
		b.ReportMetric(shardSum.cpu, "shards-cpu-s")
		b.ReportMetric(shardMax.cpu, "shard-max-cpu-s")
		b.ReportMetric(commit.cpu, "commit-cpu-s")
		b.ReportMetric(plan.cpu/single.cpu, "plan/single-cpu")
		b.ReportMetric((plan.cpu+shardSum.cpu+commit.cpu)/single.cpu, "sharded/single-cpu")
		b.ReportMetric((plan.cpu+shardMax.cpu+commit.cpu)/single.cpu, "critical/single-cpu")
	}
}
