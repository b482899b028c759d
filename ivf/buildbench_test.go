package ivf_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/parqdb/parqdb/build"
	"github.com/parqdb/parqdb/catalog"
	"github.com/parqdb/parqdb/storage"
)

// BenchmarkBuild times the whole build pipeline (Parquet in, committed
// index out; local warehouse and SQLite catalog) on the Parquet file named
// by PARQDB_BUILD_SOURCE (vector field "vec", key "id", as written by
// bench/mkdata), with nlist PARQDB_BUILD_NLIST (default 980) and
// PARQDB_BUILD_WORKERS workers (default 2). Without PARQDB_BUILD_SOURCE it
// does nothing. It reports the seconds of every stage.
func BenchmarkBuild(b *testing.B) {
	src := os.Getenv("PARQDB_BUILD_SOURCE")
	if src == "" {
		b.Log("PARQDB_BUILD_SOURCE not set: nothing to build")
		return
	}
	nlist := envInt(b, "PARQDB_BUILD_NLIST", 980)
	workers := envInt(b, "PARQDB_BUILD_WORKERS", 2)
	stages := map[string]float64{}
	for b.Loop() {
		b.StopTimer()
		dir := b.TempDir()
		wh, err := storage.NewLocal(filepath.Join(dir, "warehouse"))
		if err != nil {
			b.Fatal(err)
		}
		cat, err := catalog.OpenSQLite(context.Background(), filepath.Join(dir, "warehouse", "catalog.db"))
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		res, err := build.Create(context.Background(), build.Env{Warehouse: wh, Catalog: cat}, build.Options{
			Name: "bench", Source: src, VectorField: "vec", KeyFields: []string{"id"},
			NList: nlist, Workers: workers,
		})
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		for _, st := range res.Stages {
			stages[st.Stage] += st.Duration.Seconds()
		}
		cat.Close()
		b.StartTimer()
	}
	for st, s := range stages {
		b.ReportMetric(s/float64(b.N), st+"-s")
	}
}

func envInt(b *testing.B, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		b.Fatalf("%s: %v", name, err)
	}
	return n
}
