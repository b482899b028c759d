// Command openbench measures what opening an index costs: wall time and
// storage requests of query.Open (median of -n opens), then of the first
// join's preparation (Warm: the key → row map) and of a cold first query
// with a join, on a freshly opened index.
//
//	openbench [-n 5] [-catalog C] WAREHOUSE INDEX QUERIES.fvecs
//
// WAREHOUSE is a folder or s3://bucket/prefix (AWS_* environment for S3).
package main

import (
	"context"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"slices"
	"time"

	"github.com/parqdb/parqdb/catalog"
	_ "github.com/parqdb/parqdb/iceberg" // indexes of Iceberg tables too, as the CLI
	"github.com/parqdb/parqdb/query"
	"github.com/parqdb/parqdb/storage"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "openbench:", err)
		os.Exit(1)
	}
}

func run() error {
	n := flag.Int("n", 5, "opens to time")
	catFlag := flag.String("catalog", os.Getenv("PARQDB_CATALOG"), "catalog (as parqdb --catalog; env PARQDB_CATALOG)")
	flag.Parse()
	if flag.NArg() != 3 {
		return errors.New("usage: openbench [-n 5] [-catalog C] WAREHOUSE INDEX QUERIES.fvecs")
	}
	ctx := context.Background()
	var counts *storage.Stats
	e, err := catalog.OpenEnv(ctx, catalog.EnvSpec{Warehouse: flag.Arg(0), Catalog: *catFlag,
		Wrap: func(b storage.Bucket) storage.Bucket {
			wh, c := storage.WithStats(b)
			counts = c
			return wh
		}})
	if err != nil {
		return err
	}
	defer e.Close()
	wh, cat := e.Warehouse, e.Catalog
	q, err := firstVector(flag.Arg(2))
	if err != nil {
		return err
	}
	env := query.Env{Warehouse: wh, Catalog: cat}
	var times []time.Duration
	var reqs int64
	for i := 0; i < *n; i++ {
		r0 := counts.Snapshot().Requests
		t0 := time.Now()
		ix, err := query.Open(ctx, env, flag.Arg(1), query.OpenOptions{})
		if err != nil {
			return err
		}
		times = append(times, time.Since(t0))
		_, src := ix.StorageStats()
		reqs = counts.Snapshot().Requests - r0 + src.Requests
		ix.Close()
	}
	slices.Sort(times)
	fmt.Printf("open: median %.1f ms (min %.1f, max %.1f) over %d opens, %d requests (warehouse incl. catalog + source footers)\n",
		ms(times[len(times)/2]), ms(times[0]), ms(times[len(times)-1]), *n, reqs)

	ix, err := query.Open(ctx, env, flag.Arg(1), query.OpenOptions{})
	if err != nil {
		return err
	}
	defer ix.Close()
	w0, s0 := ix.StorageStats()
	t0 := time.Now()
	opts := query.Options{K: 10, NProbe: 16, Columns: []string{"id"}}
	if err := ix.Warm(ctx, query.Options{K: 10, Columns: []string{"id"}}); err != nil {
		return err
	}
	w1, s1 := ix.StorageStats()
	fmt.Printf("key map (first join): %.1f ms, %d warehouse requests (%.1f MB), %d source requests (%.1f MB)\n",
		ms(time.Since(t0)), w1.Requests-w0.Requests, mb(w1.BytesRead-w0.BytesRead), s1.Requests-s0.Requests, mb(s1.BytesRead-s0.BytesRead))

	ix2, err := query.Open(ctx, env, flag.Arg(1), query.OpenOptions{})
	if err != nil {
		return err
	}
	defer ix2.Close()
	w0, s0 = ix2.StorageStats()
	t0 = time.Now()
	r, err := ix2.Search(ctx, q, opts)
	if err != nil {
		return err
	}
	w1, s1 = ix2.StorageStats()
	fmt.Printf("cold first joined query (nprobe 16): %.1f ms, %d postings/join rounds + %d key-map request(s), %d warehouse requests, %d source requests\n",
		ms(time.Since(t0)), r.Stats.Rounds, w1.Requests-w0.Requests-r.Stats.Requests, w1.Requests-w0.Requests, s1.Requests-s0.Requests)
	return nil
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
func mb(b int64) float64         { return float64(b) / 1e6 }

func firstVector(path string) ([]float32, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var d uint32
	if err := binary.Read(f, binary.LittleEndian, &d); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if d == 0 || d > 1<<20 {
		return nil, fmt.Errorf("%s: dimension %d", path, d)
	}
	bits := make([]uint32, d)
	if err := binary.Read(f, binary.LittleEndian, bits); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	v := make([]float32, d)
	for i, b := range bits {
		v[i] = math.Float32frombits(b)
	}
	return v, nil
}
