package source

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/parqdb/parqdb/internal/source/sourcetest"
	"github.com/parqdb/parqdb/metadata"
)

// multiFile writes 3 files of 40, 0 and 55 rows in row groups of 7, with
// payload columns: a string, an optional int, a nested list and a struct.
func multiFile(t testing.TB, b *memBucket, dim int) (rows map[RowLoc][]any) {
	r := rand.New(rand.NewPCG(5, 6))
	f := sourcetest.F
	fields := []sourcetest.Field{
		f("title", parquet.String()),
		f("id", parquet.Leaf(parquet.Int64Type)),
		f("emb", sourcetest.VectorNode(sourcetest.List3Nullable, false, false)),
		f("n", parquet.Optional(parquet.Leaf(parquet.Int32Type))),
		f("tags", parquet.Optional(parquet.List(parquet.String()))),
		f("meta", sourcetest.Group(true, false, f("x", parquet.Leaf(parquet.DoubleType)), f("y", parquet.Optional(parquet.String())))),
	}
	rows = map[RowLoc][]any{}
	id := int64(0)
	for fi, n := range []int{40, 0, 55} {
		tab := &sourcetest.Table{Fields: fields, RowGroupRows: 7, PageBufferSize: 128}
		for i := range n {
			vec := make([]float32, dim)
			for j := range vec {
				vec[j] = float32(r.NormFloat64())
			}
			var nv any
			if i%3 != 0 {
				nv = int32(i)
			}
			var tags any
			if i%4 != 0 {
				tags = []string{fmt.Sprint("t", i), "x"}[:i%2+1]
			}
			var y any
			if i%2 == 0 {
				y = "why"
			}
			row := []any{fmt.Sprintf("doc %d/%d", fi, i), id, vec, nv, tags, map[string]any{"x": float64(i) / 2, "y": y}}
			tab.Rows = append(tab.Rows, row)
			rows[RowLoc{int32(fi), int64(i)}] = row
			id++
		}
		writeTable(t, b, fmt.Sprintf("m/part-%d.parquet", fi), tab)
	}
	return rows
}

func TestReadRows(t *testing.T) {
	b := newMem()
	want := multiFile(t, b, 6)
	st := mustOpen(t, b, "m")
	if st.NumRows() != 95 || len(st.Files()) != 3 {
		t.Fatalf("NumRows %d files %d", st.NumRows(), len(st.Files()))
	}
	r := rand.New(rand.NewPCG(7, 8))
	var locs []RowLoc
	for range 60 {
		fi := []int32{0, 2}[r.IntN(2)]
		locs = append(locs, RowLoc{fi, int64(r.IntN([]int{40, 0, 55}[fi]))})
	}
	locs = append(locs, locs[3], RowLoc{2, 54}, RowLoc{0, 0}) // repeats and edges
	for _, cols := range [][]string{nil, {"meta", "id", "tags"}, {"n"}} {
		t.Run(fmt.Sprint(cols), func(t *testing.T) {
			got, err := st.ReadRows(context.Background(), locs, cols)
			if err != nil {
				t.Fatal(err)
			}
			names := cols
			if names == nil {
				names = []string{"title", "id", "emb", "n", "tags", "meta"}
			}
			if !reflect.DeepEqual(got.Columns, names) {
				t.Fatalf("columns %v", got.Columns)
			}
			idx := map[string]int{"title": 0, "id": 1, "emb": 2, "n": 3, "tags": 4, "meta": 5}
			for i, loc := range locs {
				m, err := got.Map(i)
				if err != nil {
					t.Fatal(err)
				}
				if len(m) != len(names) {
					t.Fatalf("row %d: %d fields %v", i, len(m), m)
				}
				for _, name := range names {
					w := want[loc][idx[name]]
					if !sameValue(m[name], w) {
						t.Fatalf("loc %v field %s = %#v, want %#v", loc, name, m[name], w)
					}
				}
			}
		})
	}
	if _, err := st.ReadRows(context.Background(), []RowLoc{{1, 0}}, nil); !errors.Is(err, ErrRowLoc) {
		t.Errorf("row in an empty file: %v", err)
	}
	if _, err := st.ReadRows(context.Background(), []RowLoc{{0, 3}}, []string{"nope"}); !errors.Is(err, ErrMissingField) {
		t.Errorf("missing column: %v", err)
	}
	if _, err := st.ReadRows(context.Background(), []RowLoc{{3, 0}}, nil); !errors.Is(err, ErrRowLoc) {
		t.Errorf("file out of range: %v", err)
	}
}

// sameValue compares a reconstructed value with what sourcetest wrote.
func sameValue(got, want any) bool {
	return fmt.Sprint(normalize(got)) == fmt.Sprint(normalize(want))
}

func normalize(v any) any {
	switch x := v.(type) {
	case nil:
		return nil
	case []byte:
		return string(x)
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			out[k] = normalize(e)
		}
		return out
	}
	rv := reflect.ValueOf(v)
	if rv.Kind() == reflect.Slice {
		out := make([]any, rv.Len())
		for i := range out {
			out[i] = normalize(rv.Index(i).Interface())
		}
		return out
	}
	if rv.Kind() == reflect.Pointer {
		if rv.IsNil() {
			return nil
		}
		return normalize(rv.Elem().Interface())
	}
	return v
}

func TestReadVectors(t *testing.T) {
	for _, metric := range []string{metadata.MetricL2Squared, metadata.MetricCosine} {
		t.Run(metric, func(t *testing.T) {
			b := newMem()
			multiFile(t, b, 6)
			st := mustOpen(t, b, "m")
			bind := l2("emb", "id")
			bind.Metric = metric
			l, err := st.Check(context.Background(), bind)
			if err != nil {
				t.Fatal(err)
			}
			all, err := scanAll(t, st, l, ScanOptions{BatchRows: 5})
			if err != nil {
				t.Fatal(err)
			}
			byLoc := map[RowLoc][]float32{}
			for i, loc := range all.locs {
				byLoc[loc] = all.vecs[i]
			}
			r := rand.New(rand.NewPCG(9, 10))
			locs := make([]RowLoc, 50)
			for i := range locs {
				locs[i] = all.locs[r.IntN(len(all.locs))]
			}
			dst := make([]float32, len(locs)*6)
			if err := st.ReadVectors(context.Background(), l, locs, dst); err != nil {
				t.Fatal(err)
			}
			for i, loc := range locs {
				if !reflect.DeepEqual(dst[i*6:(i+1)*6], byLoc[loc]) {
					t.Fatalf("loc %v: %v, want %v", loc, dst[i*6:(i+1)*6], byLoc[loc])
				}
			}
			if metric == metadata.MetricCosine {
				v := byLoc[RowLoc{0, 1}]
				var ss float64
				for _, x := range v {
					ss += float64(x) * float64(x)
				}
				if ss < 0.999999 || ss > 1.000001 {
					t.Errorf("cosine vector norm² %v", ss)
				}
			}
			// One row at a time, now that its page is decoded: the
			// single-row path copies it from the page cache.
			for _, loc := range locs {
				h0, _, _ := decodedPages.counters()
				one := make([]float32, 6)
				if err := st.ReadVectors(context.Background(), l, []RowLoc{loc}, one); err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(one, byLoc[loc]) {
					t.Fatalf("loc %v alone: %v, want %v", loc, one, byLoc[loc])
				}
				h1, _, _ := decodedPages.counters()
				if h1 <= h0 {
					t.Fatalf("loc %v alone: not served from the decoded-page cache", loc)
				}
			}
			if err := st.ReadVectors(context.Background(), l, locs, dst[:5]); !errors.Is(err, ErrBinding) {
				t.Errorf("short dst: %v", err)
			}
			if err := st.ReadVectors(context.Background(), l, locs[:1], dst[:5]); !errors.Is(err, ErrBinding) {
				t.Errorf("short dst, one row: %v", err)
			}
		})
	}
}

func TestKeyIndex(t *testing.T) {
	b := newMem()
	multiFile(t, b, 4)
	st := mustOpen(t, b, "m")
	l, err := st.Check(context.Background(), l2("emb", "id", "title"))
	if err != nil {
		t.Fatal(err)
	}
	ki, err := BuildKeyIndex(context.Background(), st, l)
	if err != nil {
		t.Fatal(err)
	}
	if ki.Len() != 95 || ki.Identity() != st.Identity() {
		t.Fatalf("Len %d identity %s", ki.Len(), ki.Identity())
	}
	all, err := scanAll(t, st, l, ScanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i, k := range all.keys {
		loc, ok := ki.Lookup(AppendKey(nil, k))
		if !ok || loc != all.locs[i] {
			t.Fatalf("Lookup(%v) = %v %v, want %v", k, loc, ok, all.locs[i])
		}
		loc2, ok, err := ki.LookupValues([]parquet.Value{k[0].ParquetValue(), k[1].ParquetValue()})
		if err != nil || !ok || loc2 != loc {
			t.Fatalf("LookupValues = %v %v %v", loc2, ok, err)
		}
	}
	absent := AppendKey(nil, []KeyValue{{Kind: KindInt64, Int: 1000}, {Kind: KindString, Bytes: []byte("doc 0/0")}})
	if _, ok := ki.Lookup(absent); ok {
		t.Error("absent key found")
	}
	if _, _, err := ki.LookupValues([]parquet.Value{parquet.Int64Value(1)}); !errors.Is(err, ErrBinding) {
		t.Errorf("short key: %v", err)
	}
}

// TestKeyIndexCollisions forces hash collisions to exercise the exact path.
func TestKeyIndexCollisions(t *testing.T) {
	b := newMem()
	multiFile(t, b, 4)
	st := mustOpen(t, b, "m")
	l, err := st.Check(context.Background(), l2("emb", "id"))
	if err != nil {
		t.Fatal(err)
	}
	hashKeyForTest = func(b []byte) uint64 { return uint64(b[len(b)-1] % 3) }
	defer func() { hashKeyForTest = nil }()
	ki, err := BuildKeyIndex(context.Background(), st, l)
	if err != nil {
		t.Fatal(err)
	}
	if len(ki.exact) != 95 {
		t.Fatalf("%d exact keys, want 95", len(ki.exact))
	}
	all, err := scanAll(t, st, l, ScanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i, k := range all.keys {
		if loc, ok := ki.Lookup(AppendKey(nil, k)); !ok || loc != all.locs[i] {
			t.Fatalf("Lookup(%v) = %v %v, want %v", k, loc, ok, all.locs[i])
		}
	}
	if _, ok := ki.Lookup(AppendKey(nil, []KeyValue{{Kind: KindInt64, Int: 1000}})); ok {
		t.Error("absent key found")
	}
}

// TestKeyIndexDuplicates checks that duplicate keys are reported with both rows.
func TestKeyIndexDuplicates(t *testing.T) {
	b := newMem()
	writeVectors(t, b, "d/a.parquet", []int64{1, 2, 3}, [][]float32{{1}, {2}, {3}}, sourcetest.Options{})
	writeVectors(t, b, "d/b.parquet", []int64{4, 2}, [][]float32{{1}, {2}}, sourcetest.Options{})
	st := mustOpen(t, b, "d")
	l, err := st.Check(context.Background(), l2("embedding", "id"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = BuildKeyIndex(context.Background(), st, l)
	if !errors.Is(err, ErrDuplicateKey) {
		t.Fatalf("BuildKeyIndex: %v, want ErrDuplicateKey", err)
	}
	for _, want := range []string{`file "d/b.parquet"`, "row 1", "key id=2", `row 1 of file "d/a.parquet"`} {
		if !bytes.Contains([]byte(err.Error()), []byte(want)) {
			t.Errorf("%q lacks %q", err, want)
		}
	}
}

// TestReadVectorsPageCache: ReadVectors decodes each page holding a
// wanted row once and serves later reads of rows in that page (the same
// rows or others) from the decoded-page cache, with the same vectors as
// Scan; a row that violates the source contract fails only when it is
// read, naming its file and row, while its page neighbours read fine.
func TestReadVectorsPageCache(t *testing.T) {
	ctx := context.Background()
	defer SetPageCacheBytes(SetPageCacheBytes(64 << 20))
	b := newMem()
	multiFile(t, b, 6)
	st := mustOpen(t, b, "m")
	l, err := st.Check(ctx, l2("emb", "id"))
	if err != nil {
		t.Fatal(err)
	}
	all, err := scanAll(t, st, l, ScanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	read := func(locs []RowLoc) []float32 {
		dst := make([]float32, len(locs)*6)
		if err := st.ReadVectors(ctx, l, locs, dst); err != nil {
			t.Fatal(err)
		}
		for i, loc := range locs {
			if want := all.vecs[slices.Index(all.locs, loc)]; !reflect.DeepEqual(dst[i*6:(i+1)*6], want) {
				t.Fatalf("loc %v: %v, want %v", loc, dst[i*6:(i+1)*6], want)
			}
		}
		return dst
	}
	locs := []RowLoc{{0, 3}, {2, 50}, {0, 30}}
	read(locs)
	hits0, _, misses0 := decodedPages.counters()
	read(locs)
	hits1, _, misses1 := decodedPages.counters()
	if misses1 != misses0 || hits1 < hits0+int64(len(locs)) {
		t.Fatalf("second read: hits %d → %d, misses %d → %d: want every page from the cache", hits0, hits1, misses0, misses1)
	}

	// A null vector and a NaN in one page of one row group.
	vecs := randVectors(rand.New(rand.NewPCG(1, 2)), 20, 4)
	vecs[3] = nil
	vecs[7][2] = float32(math.NaN())
	writeVectors(t, b, "bad/part-0.parquet", seq(0, 20), vecs, sourcetest.Options{})
	bt := mustOpen(t, b, "bad")
	// Check reads footers only; the rows are checked when read.
	bl, err := bt.Check(ctx, l2("embedding", "id"))
	if err != nil {
		t.Fatal(err)
	}
	{
		dst := make([]float32, 8)
		if err := bt.ReadVectors(ctx, bl, []RowLoc{{0, 2}, {0, 4}}, dst); err != nil {
			t.Fatalf("good rows beside bad ones: %v", err)
		}
		if !reflect.DeepEqual(dst[:4], vecs[2]) || !reflect.DeepEqual(dst[4:], vecs[4]) {
			t.Fatalf("good rows: %v, want %v %v", dst, vecs[2], vecs[4])
		}
		for row, rule := range map[int64]error{3: ErrNullVector, 7: ErrNaN} {
			err := bt.ReadVectors(ctx, bl, []RowLoc{{0, row}}, dst[:4])
			var se *Error
			if !errors.Is(err, rule) || !errors.As(err, &se) || se.Row != row || se.File != "bad/part-0.parquet" {
				t.Errorf("row %d: %v, want %v naming the file and row", row, err, rule)
			}
		}
	}
}
