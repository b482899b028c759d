package query_test

import (
	"context"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/parqdb/parqdb/internal/membudget"
	"github.com/parqdb/parqdb/metadata"
	"github.com/parqdb/parqdb/query"
)

// joinStats returns the "join-columns" counters of b.
func joinStats(b *membudget.Budget) membudget.Stats {
	for _, s := range b.Stats() {
		if s.Name == "join-columns" {
			return s
		}
	}
	return membudget.Stats{}
}

// TestJoinColumnsCached: joins of scalar columns are answered from the
// row groups' columns decoded whole (once enough of a row group's rows
// were asked for), with the same rows as the row-by-row join (an index
// whose budget has no room for them), nulls included; once decoded, a
// join reads no source byte; the memory is charged to the budget.
func TestJoinColumnsCached(t *testing.T) {
	ctx := context.Background()
	src := filepath.Join(t.TempDir(), "attr.parquet")
	rows := attrRows(2000, 8) // 4 row groups of 500
	writeAttr(t, src, rows)
	benv, env := localEnv(t)
	buildIndex(t, benv, src, metadata.EncodingLVQ8, 20)
	cached, none := membudget.New(1<<30), membudget.New(0)
	ix, err := query.Open(ctx, env, "vecs", query.OpenOptions{Budget: cached})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	ref, err := query.Open(ctx, env, "vecs", query.OpenOptions{Budget: none, RowCacheRows: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer ref.Close()
	cols := []string{"cat", "price", "bucket", "side", "id"}
	qs := filterQueries(rows, 40)
	search := func(ix *query.Index, q []float32) *query.Result {
		r, err := ix.Search(ctx, q, query.Options{K: 20, NProbe: 4, Columns: cols})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	for round := range 2 {
		_, src0 := ix.StorageStats()
		for qi, q := range qs {
			got, want := search(ix, q), search(ref, q)
			if !reflect.DeepEqual(got.Columns, want.Columns) || len(got.Hits) != len(want.Hits) {
				t.Fatalf("round %d query %d: columns %v, %d hits; want %v, %d", round, qi, got.Columns, len(got.Hits), want.Columns, len(want.Hits))
			}
			for i := range got.Hits {
				g, w := got.Hits[i], want.Hits[i]
				if string(g.Key) != string(w.Key) || g.Distance != w.Distance || !reflect.DeepEqual(g.Row, w.Row) {
					t.Fatalf("round %d query %d hit %d: %v %v %v, the row join gives %v %v %v", round, qi, i, g.Key, g.Distance, g.Row, w.Key, w.Distance, w.Row)
				}
			}
		}
		_, src1 := ix.StorageStats()
		if round == 1 && src1.BytesRead != src0.BytesRead {
			t.Errorf("round 2 read %d source bytes, want none (the columns are decoded)", src1.BytesRead-src0.BytesRead)
		}
	}
	// A caller changing a returned row does not change later answers.
	search(ix, qs[0]).Hits[0].Row["bucket"] = int32(-1)
	if got, want := search(ix, qs[0]), search(ref, qs[0]); !reflect.DeepEqual(got.Hits[0].Row, want.Hits[0].Row) {
		t.Errorf("after a caller changed a returned row: %v, want %v", got.Hits[0].Row, want.Hits[0].Row)
	}
	st := joinStats(cached)
	if st.Bytes <= 0 || st.Hits == 0 {
		t.Errorf("join-columns cache: %+v, want bytes charged and hits", st)
	}
	if st := joinStats(none); st.Bytes != 0 {
		t.Errorf("a zero budget holds %d bytes of joined columns", st.Bytes)
	}
}

// BenchmarkJoinColumns: a warm search of 10 hits joining four scalar
// columns from the row group columns (cols), against returning the key
// only (keys: no source read).
func BenchmarkJoinColumns(b *testing.B) {
	ctx := context.Background()
	src := filepath.Join(b.TempDir(), "attr.parquet")
	rows := attrRows(2000, 8)
	writeAttr(b, src, rows)
	benv, env := localEnv(b)
	buildIndex(b, benv, src, metadata.EncodingLVQ8, 20)
	qs := filterQueries(rows, 200)
	for _, tc := range []struct {
		name string
		cols []string
	}{
		{"keys", []string{"id"}},
		{"cols", []string{"id", "bucket", "cat", "price"}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			ix, err := query.Open(ctx, env, "vecs", query.OpenOptions{Budget: membudget.New(1 << 30)})
			if err != nil {
				b.Fatal(err)
			}
			defer ix.Close()
			opts := query.Options{K: 10, NProbe: 4, Columns: tc.cols}
			for range 2 {
				for _, q := range qs {
					if _, err := ix.Search(ctx, q, opts); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := ix.Search(ctx, qs[i%len(qs)], opts); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
