package query_test

import (
	"context"
	"errors"
	"testing"

	"github.com/parqdb/parqdb/metadata"
	"github.com/parqdb/parqdb/query"
)

// TestDistancesTo: the exact distance to rows named by ordinal equals the
// _distance ExactBatch (and so Search's exact paths) gives the same rows,
// under both metrics and whether or not the vector store holds the rows.
func TestDistancesTo(t *testing.T) {
	ctx := context.Background()
	for _, metric := range []string{metadata.MetricCosine, metadata.MetricL2Squared} {
		t.Run(metric, func(t *testing.T) {
			f := newFixture(t, metric, metadata.EncodingSource, 40)
			ix, err := query.Open(ctx, f.env, "words", query.OpenOptions{})
			if err != nil {
				t.Fatal(err)
			}
			defer ix.Close()
			ords := map[string]int64{}
			for o := range int64(len(f.keys)) {
				k, err := ix.KeyAt(ctx, o)
				if err != nil {
					t.Fatal(err)
				}
				ords[string(k)] = o
			}
			qs := [][]float32{append([]float32(nil), f.vecs[11]...), f.vecs[4000], f.vecs[9999]}
			qs[0][3] += 0.25 // not a row of the source
			truth, err := ix.ExactBatch(ctx, qs, 7, 1)
			if err != nil {
				t.Fatal(err)
			}
			for pass := range 2 { // the store empty, then filled by searches
				if pass == 1 {
					if _, err := ix.SearchBatch(ctx, qs, query.Options{K: 7, NProbe: 40}, 1); err != nil {
						t.Fatal(err)
					}
				}
				for qi, hits := range truth {
					want := make([]int64, len(hits))
					for i, h := range hits {
						want[i] = ords[string(h.Key)]
					}
					got, err := ix.DistancesTo(ctx, qs[qi], want)
					if err != nil {
						t.Fatal(err)
					}
					for i, h := range hits {
						if got[i] != h.Distance {
							t.Fatalf("pass %d query %d row %d: %v, ExactBatch %v", pass, qi, want[i], got[i], h.Distance)
						}
					}
				}
			}
			if _, err := ix.DistancesTo(ctx, qs[0], []int64{int64(len(f.keys))}); !errors.Is(err, query.ErrBadQuery) {
				t.Fatalf("a row past the source: %v", err)
			}
		})
	}
}
