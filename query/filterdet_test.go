package query_test

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/parqdb/parqdb/filter"
	"github.com/parqdb/parqdb/metadata"
	"github.com/parqdb/parqdb/query"
)

// TestFilteredAnswerIndependentOfHistory: a filtered search answers the
// same whatever the process searched before — the first query on a fresh
// index, the same query after a batch of others, and a batch on two
// workers all agree, keys and distances bit for bit (the plan a query takes
// must not depend on what earlier queries left in the caches).
func TestFilteredAnswerIndependentOfHistory(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, metadata.MetricCosine, metadata.EncodingLVQ8, 64)
	var qs [][]float32
	for i := 0; i < 200; i++ {
		qs = append(qs, f.vecs[i*37%len(f.vecs)])
	}
	for _, where := range []string{"rank > 5000", "rank > 500", "rank < 9000 AND rank > 100"} {
		open := func() (*query.Index, query.Options) {
			ix, err := query.Open(ctx, f.env, "words", query.OpenOptions{})
			if err != nil {
				t.Fatal(err)
			}
			p, err := filter.Parse(where)
			if err != nil {
				t.Fatal(err)
			}
			return ix, query.Options{K: 10, NProbe: 8, NoRows: true, Filter: p}
		}
		// each query alone on a fresh index: no history at all
		want := make([]*query.Result, len(qs))
		for i := range qs {
			if i%20 != 0 {
				continue
			}
			ix, o := open()
			r, err := ix.Search(ctx, qs[i], o)
			if err != nil {
				t.Fatal(err)
			}
			want[i] = r
			ix.Close()
		}
		ix, o := open()
		for pass := range 2 {
			got, err := ix.SearchBatch(ctx, qs, o, 2)
			if err != nil {
				t.Fatal(err)
			}
			for i, w := range want {
				if w == nil {
					continue
				}
				name := fmt.Sprintf("where %q pass %d query %d", where, pass, i)
				g := got[i]
				if len(g.Hits) != len(w.Hits) {
					t.Fatalf("%s: %d hits, alone on a fresh index %d", name, len(g.Hits), len(w.Hits))
				}
				for j := range g.Hits {
					if !bytes.Equal(g.Hits[j].Key, w.Hits[j].Key) || g.Hits[j].Distance != w.Hits[j].Distance {
						t.Fatalf("%s: hit %d is %q at %v, alone on a fresh index %q at %v; stats %+v, alone %+v", name, j, g.Hits[j].Key, g.Hits[j].Distance, w.Hits[j].Key, w.Hits[j].Distance, g.Stats, w.Stats)
					}
				}
			}
		}
		ix.Close()
	}
}
