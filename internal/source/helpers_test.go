package source

import (
	"bytes"
	"context"
	"github.com/parquet-go/parquet-go"
	"math/rand/v2"
	"testing"

	"github.com/parqdb/parqdb/internal/source/sourcetest"
	"github.com/parqdb/parqdb/metadata"
)

func writeTable(t testing.TB, b *memBucket, key string, tab *sourcetest.Table) {
	t.Helper()
	var buf bytes.Buffer
	if err := tab.Write(&buf); err != nil {
		t.Fatalf("write %s: %v", key, err)
	}
	b.put(key, buf.Bytes())
}

func randVectors(r *rand.Rand, n, d int) [][]float32 {
	out := make([][]float32, n)
	for i := range out {
		v := make([]float32, d)
		for j := range v {
			v[j] = float32(r.NormFloat64())
		}
		out[i] = v
	}
	return out
}

func writeVectors(t testing.TB, b *memBucket, key string, keys []int64, vecs [][]float32, opt sourcetest.Options) {
	t.Helper()
	b.put(key, vectorFile(t, keys, vecs, opt))
}

// vectorFile returns the bytes of a source file (sourcetest.WriteVectors).
func vectorFile(t testing.TB, keys []int64, vecs [][]float32, opt sourcetest.Options) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := sourcetest.WriteVectors(&buf, keys, vecs, opt); err != nil {
		t.Fatalf("write vectors: %v", err)
	}
	return buf.Bytes()
}

func seq(from, n int) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = int64(from + i)
	}
	return out
}

func l2(field string, keys ...string) Binding {
	return Binding{VectorField: field, KeyFields: keys, Metric: metadata.MetricL2Squared}
}

// scanAll collects every row of a scan.
type scanned struct {
	locs []RowLoc
	keys [][]KeyValue
	vecs [][]float32
}

func scanAll(t testing.TB, tab *Table, l *Layout, opt ScanOptions) (scanned, error) {
	t.Helper()
	var s scanned
	err := tab.ScanWith(context.Background(), l, opt, func(b *Batch) error {
		if b.N > max(opt.BatchRows, 1) && opt.BatchRows > 0 {
			t.Errorf("batch of %d rows > %d", b.N, opt.BatchRows)
		}
		for i := 0; i < b.N; i++ {
			s.locs = append(s.locs, b.Loc(i))
			k := b.Key(i)
			for j := range k {
				k[j].Bytes = bytes.Clone(k[j].Bytes)
			}
			s.keys = append(s.keys, k)
			s.vecs = append(s.vecs, append([]float32(nil), b.Vector(i)...))
		}
		return nil
	})
	return s, err
}

func mustOpen(t testing.TB, b *memBucket, prefix string) *Table {
	t.Helper()
	tab, err := Open(context.Background(), b, prefix)
	if err != nil {
		t.Fatalf("Open(%q): %v", prefix, err)
	}
	t.Cleanup(func() { tab.Close() })
	return tab
}

func sourcetestInt64() parquet.Node { return parquet.Leaf(parquet.Int64Type) }
