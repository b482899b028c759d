package source

import (
	"context"
	"errors"
	"flag"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/parqdb/parqdb/internal/source/sourcetest"
)

var update = flag.Bool("update", false, "rewrite testdata files")

// TestScanStreams checks that Scan reads a file row group by row group:
// when the first batch arrives only a small part of the file has been
// read, and the reads grow with the batches delivered.
func TestScanStreams(t *testing.T) {
	b := newMem()
	r := rand.New(rand.NewPCG(11, 12))
	const n, d, per = 2000, 64, 100
	writeVectors(t, b, "big.parquet", seq(0, n), randVectors(r, n, d), sourcetest.Options{RowGroupRows: per})
	size := int64(len(b.objs["big.parquet"]))
	st := mustOpen(t, b, "big.parquet")
	l, err := st.Check(context.Background(), l2("embedding", "id"))
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []int{1, 2} {
		b.mu.Lock()
		b.reads = 0
		b.mu.Unlock()
		var first int64 = -1
		rows := 0
		err = st.ScanWith(context.Background(), l, ScanOptions{BatchRows: 50, Workers: w}, func(bt *Batch) error {
			if first < 0 {
				b.mu.Lock()
				first = b.reads
				b.mu.Unlock()
			}
			rows += bt.N
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		// 20 row groups: the first batch needs at most a few of them.
		if limit := size / 4; first > limit {
			t.Errorf("workers=%d: %d of %d bytes read before the first batch (limit %d)", w, first, size, limit)
		}
		if rows != n || b.reads < size/2 {
			t.Errorf("workers=%d: %d rows, %d bytes read in all", w, rows, b.reads)
		}
	}
	// A callback error stops the scan at once and is returned as is.
	stop := errors.New("stop")
	calls := 0
	err = st.ScanWith(context.Background(), l, ScanOptions{BatchRows: 50, Workers: 3}, func(*Batch) error {
		calls++
		if calls == 3 {
			return stop
		}
		return nil
	})
	if err != stop || calls != 3 {
		t.Errorf("stop: err %v after %d calls", err, calls)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := st.Scan(ctx, l, 0, func(*Batch) error { return nil }); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled scan: %v", err)
	}
}

// goldens are the committed sample sources in testdata/: one per vector
// shape, also the fuzz seeds. Regenerate with go test -run TestGolden -update.
var goldens = map[string]func() *sourcetest.Table{
	"list3_float.parquet":       func() *sourcetest.Table { return golden(sourcetest.List3, false, false, false) },
	"list3_item_double.parquet": func() *sourcetest.Table { return golden(sourcetest.List3Item, true, false, false) },
	"list3_nullable_dict_v1.parquet": func() *sourcetest.Table {
		return golden(sourcetest.List3Nullable, false, true, true)
	},
	"list2_float.parquet":     func() *sourcetest.Table { return golden(sourcetest.List2, false, false, false) },
	"repeated_double.parquet": func() *sourcetest.Table { return golden(sourcetest.Repeated, true, true, false) },
	// LZ4_RAW pages, so that the fuzzer mutates LZ4 blocks too.
	"list3_float_lz4.parquet": func() *sourcetest.Table {
		tab := golden(sourcetest.List3, false, false, false)
		tab.Codec = &parquet.Lz4Raw
		return tab
	},
}

func golden(shape sourcetest.Shape, double, dict, v1 bool) *sourcetest.Table {
	tab := &sourcetest.Table{
		Fields: []sourcetest.Field{
			sourcetest.F("id", parquet.Leaf(parquet.Int64Type)),
			sourcetest.F("vec", sourcetest.VectorNode(shape, double, dict)),
			sourcetest.F("text", parquet.Optional(parquet.String())),
		},
		RowGroupRows: 4, PageBufferSize: 64, DataPageV1: v1,
	}
	for i := range 10 {
		v := []float64{float64(i), -0.5, 1e-3 * float64(i)}
		var vec any = v
		if !double {
			vec = []float32{float32(v[0]), float32(v[1]), float32(v[2])}
		}
		var text any
		if i%2 == 0 {
			text = "row"
		}
		tab.Rows = append(tab.Rows, []any{int64(100 + i), vec, text})
	}
	return tab
}

// TestGolden reads the committed sample sources.
func TestGolden(t *testing.T) {
	for name, gen := range goldens {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join("testdata", name)
			if *update {
				f, err := os.Create(path)
				if err != nil {
					t.Fatal(err)
				}
				if err := gen().Write(f); err != nil {
					t.Fatal(err)
				}
				f.Close()
			}
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			b := newMem()
			b.put(name, data)
			st := mustOpen(t, b, name)
			l, err := st.Check(context.Background(), l2("vec", "id"))
			if err != nil {
				t.Fatal(err)
			}
			got, err := scanAll(t, st, l, ScanOptions{BatchRows: 3})
			if err != nil {
				t.Fatal(err)
			}
			if len(got.vecs) != 10 || l.Dim != 3 {
				t.Fatalf("%d rows, dim %d", len(got.vecs), l.Dim)
			}
			for i, v := range got.vecs {
				want := []float32{float32(i), -0.5, float32(1e-3 * float64(i))}
				if v[0] != want[0] || v[1] != want[1] || v[2] != want[2] || got.keys[i][0].Int != int64(100+i) {
					t.Fatalf("row %d: %v key %v, want %v", i, v, got.keys[i], want)
				}
			}
		})
	}
}

// FuzzSource opens, checks, scans and reads arbitrary bytes as a source:
// no input may panic or hang. Every codec is fuzzed, LZ4_RAW included (its
// corrupt blocks used to grow memory without bound; internal/pagecodec
// bounds every decoder).
func FuzzSource(f *testing.F) {
	for name := range goldens {
		data, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte("PAR1PAR1"))
	f.Fuzz(func(t *testing.T, data []byte) {
		b := newMem()
		b.put("f.parquet", data)
		st, err := Open(context.Background(), b, "f.parquet")
		if err != nil {
			return
		}
		defer st.Close()
		if st.NumRows() > 1e6 {
			return
		}
		l, err := st.Check(context.Background(), l2("vec", "id"))
		if err != nil || l.Dim > 1<<16 {
			return
		}
		_ = st.Scan(context.Background(), l, 3, func(*Batch) error { return nil })
		_, _ = st.ReadRows(context.Background(), []RowLoc{{0, 0}, {0, st.NumRows() - 1}}, nil)
		dst := make([]float32, 2*l.Dim)
		_ = st.ReadVectors(context.Background(), l, []RowLoc{{0, 0}, {0, st.NumRows() - 1}}, dst)
		_, _ = BuildKeyIndex(context.Background(), st, l)
	})
}
