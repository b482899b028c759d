package icesource_test

import (
	"context"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/parqdb/parqdb/indexer"
	"github.com/parqdb/parqdb/internal/icesource"
	"github.com/parqdb/parqdb/internal/icesource/icetest"
	"github.com/parqdb/parqdb/internal/source"
	"github.com/parqdb/parqdb/metadata"
)

// BenchmarkScan compares the two ways to read an Iceberg snapshot's id and
// embedding columns: ParqDB's Parquet reader over the resolved data files
// (what the provider does: it also validates and converts each vector) and
// iceberg-go's Arrow scan (ToArrowRecords), over 20,000 rows of 128
// float32 in four data files. Both include opening the table. Run both in one invocation and compare the ratio
// (docs/benchmarks.md, "Iceberg source scan").
func BenchmarkScan(b *testing.B) {
	ctx := context.Background()
	defer func(d int) { icetest.Dim = d }(icetest.Dim)
	icetest.Dim = 128
	l := icetest.NewLake(b, "bench", "sqlite", "local")
	l.Create("items", icetest.DocsSchema(), nil)
	const n = 20000
	for first := int64(0); first < n; first += 5000 {
		l.AppendRows(icetest.IDs(first, first+5000))
	}
	b.Run("parqdb", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			tbl, _, err := icesource.Open(ctx, l.Ref(), 0)
			if err != nil {
				b.Fatal(err)
			}
			lay, err := tbl.Check(ctx, source.Binding{VectorField: "embedding", KeyFields: []string{"id"}, Metric: metadata.MetricL2Squared})
			if err != nil {
				b.Fatal(err)
			}
			var rows int
			if err := tbl.Scan(ctx, lay, 0, func(bt *source.Batch) error { rows += bt.N; return nil }); err != nil {
				b.Fatal(err)
			}
			tbl.Close()
			if rows != n {
				b.Fatalf("%d rows", rows)
			}
		}
	})
	b.Run("iceberg-go-arrow", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			tbl, err := l.Cat.LoadTable(ctx, l.Ident)
			if err != nil {
				b.Fatal(err)
			}
			_, it, err := tbl.Scan(table.WithSelectedFields("id", "embedding")).ToArrowRecords(ctx)
			if err != nil {
				b.Fatal(err)
			}
			var rows int
			for rec, err := range it {
				if err != nil {
					b.Fatal(err)
				}
				// Touch every vector value, as the ParqDB scan does.
				emb := rec.Column(1).(*array.List).ListValues().(*array.Float32)
				var s float32
				for _, x := range emb.Float32Values() {
					s += x
				}
				_ = s
				rows += int(rec.NumRows())
				rec.Release()
			}
			if rows != n {
				b.Fatalf("%d rows", rows)
			}
		}
	})
}

// BenchmarkScanDeletes is BenchmarkScan over a snapshot with row-level
// deletes: 1% of the rows deleted by a position delete file and 1% by an
// equality delete file. parqdb-uncached resolves the deletes on every open
// (the first open in a process), parqdb-cached reuses them (every later
// open of the snapshot), iceberg-go-arrow applies them in its scan.
func BenchmarkScanDeletes(b *testing.B) {
	ctx := context.Background()
	defer func(d int) { icetest.Dim = d }(icetest.Dim)
	icetest.Dim = 128
	l := icetest.NewLake(b, "bench", "sqlite", "local")
	l.Create("items", icetest.DocsSchema(), iceberg.Properties{table.WriteDeleteModeKey: table.WriteModeMergeOnRead})
	const n = 20000
	for first := int64(0); first < n; first += 5000 {
		l.AppendRows(icetest.IDs(first, first+5000))
	}
	l.DeleteWhere(iceberg.LessThan(iceberg.Reference("id"), int64(n/100)))
	var eq []int64
	for id := int64(n / 100); id < n; id += 100 {
		eq = append(eq, id+7)
	}
	l.EqualityDelete(eq)
	live := n - n/100 - len(eq)
	parqdb := func(b *testing.B, reset bool) {
		b.ReportAllocs()
		for b.Loop() {
			if reset {
				icesource.ResetDeleteCache()
			}
			tbl, _, err := icesource.Open(ctx, l.Ref(), 0)
			if err != nil {
				b.Fatal(err)
			}
			lay, err := tbl.Check(ctx, source.Binding{VectorField: "embedding", KeyFields: []string{"id"}, Metric: metadata.MetricL2Squared})
			if err != nil {
				b.Fatal(err)
			}
			var rows int
			if err := tbl.Scan(ctx, lay, 0, func(bt *source.Batch) error { rows += bt.N; return nil }); err != nil {
				b.Fatal(err)
			}
			tbl.Close()
			if rows != live {
				b.Fatalf("%d rows, want %d", rows, live)
			}
		}
	}
	b.Run("parqdb-uncached", func(b *testing.B) { parqdb(b, true) })
	b.Run("parqdb-cached", func(b *testing.B) { parqdb(b, false) })
	b.Run("iceberg-go-arrow", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			tbl, err := l.Cat.LoadTable(ctx, l.Ident)
			if err != nil {
				b.Fatal(err)
			}
			_, it, err := tbl.Scan(table.WithSelectedFields("id", "embedding")).ToArrowRecords(ctx)
			if err != nil {
				b.Fatal(err)
			}
			var rows int
			for rec, err := range it {
				if err != nil {
					b.Fatal(err)
				}
				emb := rec.Column(1).(*array.List).ListValues().(*array.Float32)
				var s float32
				for _, x := range emb.Float32Values() {
					s += x
				}
				_ = s
				rows += int(rec.NumRows())
				rec.Release()
			}
			if rows != live {
				b.Fatalf("%d rows, want %d", rows, live)
			}
		}
	})
}

// BenchmarkRefreshAfterDelete measures what a small delete costs: each
// reassign iteration deletes one row (a merge-on-read position delete,
// outside the timer) and refreshes, which reassigns every live row to the
// kept centroids; each rebuild iteration refreshes with --retrain (sample,
// train, assign). 20,000 rows of 128 float32, nlist 64. Compare the ratio.
func BenchmarkRefreshAfterDelete(b *testing.B) {
	ctx := context.Background()
	defer func(d int) { icetest.Dim = d }(icetest.Dim)
	icetest.Dim = 128
	l := icetest.NewLake(b, "bench", "sqlite", "local")
	l.Create("items", icetest.DocsSchema(), iceberg.Properties{table.WriteDeleteModeKey: table.WriteModeMergeOnRead})
	const n = 20000
	for first := int64(0); first < n; first += 5000 {
		l.AppendRows(icetest.IDs(first, first+5000))
	}
	env := parqdbEnv(b)
	if _, err := indexer.Create(ctx, env, indexer.Options{Name: "docs", Source: l.Ref(),
		VectorField: "embedding", KeyFields: []string{"id"}, NList: 64}); err != nil {
		b.Fatal(err)
	}
	next := int64(0)
	b.Run("reassign", func(b *testing.B) {
		for b.Loop() {
			b.StopTimer()
			l.DeleteWhere(iceberg.EqualTo(iceberg.Reference("id"), next))
			next++
			b.StartTimer()
			r, err := indexer.Refresh(ctx, env, "docs", indexer.RefreshOptions{})
			if err != nil || r.Action != indexer.ActionReassign {
				b.Fatalf("refresh: %v %v", r, err)
			}
		}
	})
	b.Run("rebuild", func(b *testing.B) {
		for b.Loop() {
			r, err := indexer.Refresh(ctx, env, "docs", indexer.RefreshOptions{Retrain: true})
			if err != nil || r.Action != indexer.ActionRebuild {
				b.Fatalf("refresh: %v %v", r, err)
			}
		}
	})
}
