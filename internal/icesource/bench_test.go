package icesource_test

import (
	"context"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go/table"

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
