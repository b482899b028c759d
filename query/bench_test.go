package query_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/parqdb/parqdb/catalog"
	"github.com/parqdb/parqdb/internal/fvecs"
	"github.com/parqdb/parqdb/internal/membudget"
	"github.com/parqdb/parqdb/metadata"
	"github.com/parqdb/parqdb/query"
	"github.com/parqdb/parqdb/storage"
)

// benchIndex opens the index to benchmark: PARQDB_BENCH_WAREHOUSE (a local
// warehouse with its SQLite catalog), PARQDB_BENCH_INDEX and
// PARQDB_BENCH_QUERIES (.fvecs) when set, else the GloVe sample built here.
func benchIndex(b *testing.B, refine int) (*query.Index, [][]float32) {
	b.Helper()
	ctx := context.Background()
	if dir := os.Getenv("PARQDB_BENCH_WAREHOUSE"); dir != "" {
		wh, err := storage.NewLocal(dir)
		if err != nil {
			b.Fatal(err)
		}
		cat, err := catalog.OpenSQLite(ctx, filepath.Join(dir, "catalog.db"))
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { cat.Close() })
		ix, err := query.Open(ctx, query.Env{Warehouse: wh, Catalog: cat}, os.Getenv("PARQDB_BENCH_INDEX"), query.OpenOptions{})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { ix.Close() })
		qs := benchQueries(b)
		return ix, qs
	}
	f := newFixture(b, metadata.MetricCosine, metadata.EncodingLVQ8, 100)
	ix, err := query.Open(ctx, f.env, "words", query.OpenOptions{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { ix.Close() })
	qs := make([][]float32, 0, 200)
	for i := 0; i < 200; i++ {
		qs = append(qs, f.vecs[i*37])
	}
	return ix, qs
}

// benchQueries reads the .fvecs file PARQDB_BENCH_QUERIES names.
func benchQueries(b testing.TB) [][]float32 {
	qs, err := fvecs.Read(os.Getenv("PARQDB_BENCH_QUERIES"), 0)
	if err != nil {
		b.Fatal(err)
	}
	return qs
}

// benchNProbe returns PARQDB_BENCH_NPROBE (a positive integer), or def
// when it is not set.
func benchNProbe(b *testing.B, def int) int {
	v := os.Getenv("PARQDB_BENCH_NPROBE")
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		b.Fatalf("PARQDB_BENCH_NPROBE=%q: want a positive integer", v)
	}
	return n
}

// BenchmarkSearch measures one warm query on one goroutine, without the
// join (NoRows) and with it. PARQDB_BENCH_NPROBE (e.g. "12") sets the
// nprobe of every case (default 8).
func BenchmarkSearch(b *testing.B) {
	ctx := context.Background()
	nprobe := benchNProbe(b, 8)
	for _, tc := range []struct {
		nprobe, refine int
		join           bool
	}{{nprobe, 0, false}, {nprobe, 2, false}, {nprobe, 4, false}, {nprobe, 0, true}} {
		b.Run(fmt.Sprintf("nprobe=%d/refine=%d/join=%v", tc.nprobe, tc.refine, tc.join), func(b *testing.B) {
			ix, qs := benchIndex(b, tc.refine)
			opts := query.Options{K: 10, NProbe: tc.nprobe, Refine: tc.refine, NoRows: !tc.join}
			if err := ix.Warm(ctx, opts); err != nil {
				b.Fatal(err)
			}
			for _, q := range qs {
				if _, err := ix.Search(ctx, q, opts); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportAllocs()
			// cpu-ns/op: the CPU time of the searching thread (Linux),
			// which stays meaningful on a busy machine where ns/op
			// includes waiting for a core.
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			b.ResetTimer()
			cpu0 := threadCPUNanos()
			i := 0
			var exact int64
			for b.Loop() {
				r, err := ix.Search(ctx, qs[i%len(qs)], opts)
				if err != nil {
					b.Fatal(err)
				}
				exact += r.Stats.ExactScored
				i++
			}
			if cpu0 >= 0 {
				b.ReportMetric(float64(threadCPUNanos()-cpu0)/float64(b.N), "cpu-ns/op")
			}
			b.ReportMetric(float64(exact)/float64(b.N), "exact-rows/op")
		})
	}
}

// BenchmarkRefineFirstTouch measures refine when the vector store does not
// fit and its exact vectors are not cached in the process yet: on the
// PARQDB_BENCH_WAREHOUSE index under a process budget of
// PARQDB_BENCH_CACHE (default 256MiB), every query of PARQDB_BENCH_QUERIES
// at nprobe PARQDB_BENCH_NPROBE (default 16) runs with refine 0 (untimed,
// to load the postings lists), with refine 0 again (qps_r0), with refine 2
// for the first time — its candidates' vectors read from the vectors file
// or the source pages, nothing cached before (qps_r2_first) — and with
// refine 2 again (qps_r2_warm). One thread, wall time; run with
// -benchtime 1x. Without PARQDB_BENCH_WAREHOUSE it is skipped.
func BenchmarkRefineFirstTouch(b *testing.B) {
	dir := os.Getenv("PARQDB_BENCH_WAREHOUSE")
	if dir == "" {
		b.Skip("PARQDB_BENCH_WAREHOUSE is not set")
	}
	ctx := context.Background()
	nprobe := benchNProbe(b, 16)
	limit := int64(256 << 20)
	if v := os.Getenv("PARQDB_BENCH_CACHE"); v != "" {
		n, err := membudget.ParseSize(v)
		if err != nil {
			b.Fatalf("PARQDB_BENCH_CACHE=%q: %v", v, err)
		}
		limit = n
	}
	wh, err := storage.NewLocal(dir)
	if err != nil {
		b.Fatal(err)
	}
	cat, err := catalog.OpenSQLite(ctx, filepath.Join(dir, "catalog.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer cat.Close()
	qs := benchQueries(b)
	for b.Loop() {
		budget := membudget.New(limit)
		ix, err := query.Open(ctx, query.Env{Warehouse: wh, Catalog: cat}, os.Getenv("PARQDB_BENCH_INDEX"), query.OpenOptions{Budget: budget})
		if err != nil {
			b.Fatal(err)
		}
		pass := func(refine int) float64 {
			opts := query.Options{K: 10, NProbe: nprobe, Refine: refine, NoRows: true}
			start := time.Now()
			for _, q := range qs {
				if _, err := ix.Search(ctx, q, opts); err != nil {
					b.Fatal(err)
				}
			}
			return float64(len(qs)) / time.Since(start).Seconds()
		}
		pass(0)
		r0 := pass(0)
		first := pass(2)
		before := budget.Stats()
		warm := pass(2)
		// Hit rates of the warm refine pass, by cache.
		for _, st := range budget.Stats() {
			for _, b0 := range before {
				if b0.Name == st.Name && st.Hits+st.Misses > b0.Hits+b0.Misses {
					h := float64(st.Hits - b0.Hits)
					b.ReportMetric(h/(h+float64(st.Misses-b0.Misses)), "hit_warm_"+strings.ReplaceAll(st.Name, " ", "_"))
				}
			}
		}
		ix.Close()
		b.ReportMetric(r0, "qps_r0")
		b.ReportMetric(first, "qps_r2_first")
		b.ReportMetric(warm, "qps_r2_warm")
		b.ReportMetric(first/r0, "ratio_first")
		b.ReportMetric(warm/r0, "ratio_warm")
	}
}

// BenchmarkSearchBatch measures SearchBatch on one worker over every query
// of benchIndex (one op: one query), list-major and per query (the
// fallback: query.SetListMajor(false)), reporting the process's CPU time
// per query (cpu-ns/op: the collector's work included).
func BenchmarkSearchBatch(b *testing.B) {
	ctx := context.Background()
	nprobe := benchNProbe(b, 8)
	for _, listMajor := range []bool{true, false} {
		b.Run(fmt.Sprintf("nprobe=%d/listmajor=%v", nprobe, listMajor), func(b *testing.B) {
			ix, qs := benchIndex(b, 0)
			opts := query.Options{K: 10, NProbe: nprobe, NoRows: true}
			defer query.ResetListMajor()
			query.SetListMajor(listMajor)
			if _, err := ix.SearchBatch(ctx, qs, opts, 1); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			cpu0, n := processCPUNanos(), 0
			for b.Loop() {
				if _, err := ix.SearchBatch(ctx, qs, opts, 1); err != nil {
					b.Fatal(err)
				}
				n += len(qs)
			}
			if cpu0 >= 0 {
				b.ReportMetric(float64(processCPUNanos()-cpu0)/float64(n), "cpu-ns/query")
			}
		})
	}
}
