package ivf_test

import (
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/parqdb/parqdb/catalog"
	"github.com/parqdb/parqdb/indexer"
	"github.com/parqdb/parqdb/storage"
)

// BenchmarkBuild times the whole build pipeline (Parquet in, committed
// index out; local warehouse and SQLite catalog) on the Parquet file named
// by PARQDB_BUILD_SOURCE (vector field "vec", key "id", as written by
// bench/mkdata), with nlist PARQDB_BUILD_NLIST (default 980) and
// PARQDB_BUILD_WORKERS workers (default 2). Without PARQDB_BUILD_SOURCE it
// builds a generated 20,000 × 32 source with nlist 100, so that the
// benchmark always runs the pipeline. It reports the seconds of every stage.
func BenchmarkBuild(b *testing.B) {
	src := os.Getenv("PARQDB_BUILD_SOURCE")
	defNList := 980
	if src == "" {
		src, defNList = filepath.Join(b.TempDir(), "gen.parquet"), 100
		writeGenerated(b, src, 20000, 32)
	}
	nlist := envInt(b, "PARQDB_BUILD_NLIST", defNList)
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
		res, err := indexer.Create(context.Background(), indexer.Env{Warehouse: wh, Catalog: cat}, indexer.Options{
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

type genRow struct {
	ID  int64     `parquet:"id"`
	Vec []float32 `parquet:"vec,list"`
}

// writeGenerated writes n seeded clustered vectors of dimension dim.
func writeGenerated(b *testing.B, path string, n, dim int) {
	rng := rand.New(rand.NewPCG(5, 5))
	rows := make([]genRow, n)
	for i := range rows {
		c := float32(rng.IntN(16))
		v := make([]float32, dim)
		for j := range v {
			v[j] = c + float32(rng.NormFloat64())
		}
		rows[i] = genRow{ID: int64(i), Vec: v}
	}
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	w := parquet.NewGenericWriter[genRow](f)
	if _, err := w.Write(rows); err != nil {
		b.Fatal(err)
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
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
