package indexer

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/parqdb/parqdb/internal/source"
	"github.com/parqdb/parqdb/metadata"
)

// BenchmarkKeyCheck measures what the unique-key check costs. The source
// is part-0 with N rows and part-1 with N/10 (N × dim = 100,000 × 32, or
// 1,000,000 × 128 with PARQDB_BENCH_LARGE=1):
//
//   - scan: one Scan of the whole source, as the build's scan stage does;
//   - scan+check: the same with KeyHashes.Add per batch and
//     CheckUniqueKeys at the end (what the scan stage does now);
//   - append-scan: one Scan of part-1 (what an incremental refresh reads);
//   - append-check: CheckUniqueKeys of part-1 against part-0 (what an
//     incremental refresh adds).
func BenchmarkKeyCheck(b *testing.B) {
	n, dim := 100_000, 32
	if os.Getenv("PARQDB_BENCH_LARGE") == "1" {
		n, dim = 1_000_000, 128
	}
	dir := b.TempDir()
	writeBenchPart(b, filepath.Join(dir, "part-0.parquet"), 0, n, dim, 1)
	writeBenchPart(b, filepath.Join(dir, "part-1.parquet"), int64(n), n/10, dim, 2)
	ctx := context.Background()
	t, _, err := source.OpenLocation(ctx, dir)
	if err != nil {
		b.Fatal(err)
	}
	defer t.Close()
	bind := source.Binding{VectorField: "vec", KeyFields: []string{"id"}, Metric: metadata.MetricL2Squared}
	l, err := t.Check(ctx, bind)
	if err != nil {
		b.Fatal(err)
	}
	appended := t.Select(func(f source.File) bool { return f.Key == "part-1.parquet" })
	al, err := appended.Check(ctx, bind)
	if err != nil {
		b.Fatal(err)
	}
	isOld := func(f source.File) bool { return f.Key == "part-0.parquet" }
	scan := func(t *source.Table, l *source.Layout, keys *source.KeyHashes) {
		err := t.Scan(ctx, l, 0, func(batch *source.Batch) error {
			if keys != nil {
				keys.Add(batch)
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	b.Run("scan", func(b *testing.B) {
		for b.Loop() {
			scan(t, l, nil)
		}
	})
	b.Run("scan+check", func(b *testing.B) {
		for b.Loop() {
			keys := source.NewKeyHashes()
			scan(t, l, keys)
			if err := source.CheckUniqueKeys(ctx, t, l, nil, keys); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("append-scan", func(b *testing.B) {
		for b.Loop() {
			scan(appended, al, nil)
		}
	})
	b.Run("append-check", func(b *testing.B) {
		for b.Loop() {
			if err := source.CheckUniqueKeys(ctx, t, l, isOld, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
}
