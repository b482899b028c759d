package query_test

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/parqdb/parqdb/metadata"
	"github.com/parqdb/parqdb/query"
)

// TestSourceCodesSameResults: the source encoding scores its LVQ8 shadow
// first and reads only the vectors its bound does not rule out; the hits
// (keys and distances, bit for bit) must be those of scoring every
// vector, for both metrics, with the shadow's codes at stride and in the
// blocked layout, one query at a time and list-major, at k from 1 to 200
// — and the shadow must actually spare most vectors.
func TestSourceCodesSameResults(t *testing.T) {
	ctx := context.Background()
	defer query.SetSourceCodes(true)
	defer query.SetBlockedCodes(0)
	defer query.ResetListMajor()
	opts := []query.Options{{K: 10, NProbe: 4}, {K: 1, NProbe: 8}, {K: 3, NProbe: 40}, {K: 10, NProbe: 16, Refine: 2}, {K: 200, NProbe: 40}}
	for _, metric := range []string{metadata.MetricCosine, metadata.MetricL2Squared} {
		f := newFixture(t, metric, metadata.EncodingSource, 40)
		var qs [][]float32
		for qi := 0; qi < 120; qi++ {
			q := append([]float32(nil), f.vecs[qi*53%len(f.vecs)]...)
			if qi%2 == 1 { // off the data points
				for j := range q {
					q[j] += float32((qi*7+j)%11-5) * 0.03
				}
			}
			qs = append(qs, q)
		}
		for _, blocked := range []int32{1, 2} {
			query.SetBlockedCodes(blocked)
			ix, err := query.Open(ctx, f.env, "words", query.OpenOptions{})
			if err != nil {
				t.Fatal(err)
			}
			var scored, exact int64
			for _, o := range opts {
				o.NoRows = true
				for _, listMajor := range []bool{false, true} {
					query.SetListMajor(listMajor)
					query.SetSourceCodes(false)
					want, err := ix.SearchBatch(ctx, qs, o, 2)
					query.SetSourceCodes(true)
					if err != nil {
						t.Fatal(err)
					}
					got, err := ix.SearchBatch(ctx, qs, o, 2)
					if err != nil {
						t.Fatal(err)
					}
					for qi := range qs {
						name := fmt.Sprintf("%s blocked %d list-major %v query %d k %d nprobe %d refine %d", metric, blocked, listMajor, qi, o.K, o.NProbe, o.Refine)
						g, w := got[qi], want[qi]
						if len(g.Hits) != len(w.Hits) {
							t.Fatalf("%s: %d hits, want %d", name, len(g.Hits), len(w.Hits))
						}
						for i := range g.Hits {
							if !bytes.Equal(g.Hits[i].Key, w.Hits[i].Key) || g.Hits[i].Distance != w.Hits[i].Distance {
								t.Fatalf("%s: hit %d is %q at %v, without the shadow %q at %v", name, i, g.Hits[i].Key, g.Hits[i].Distance, w.Hits[i].Key, w.Hits[i].Distance)
							}
						}
						if w.Stats.ExactScored != w.Stats.Candidates {
							t.Fatalf("%s: without the shadow %d of %d rows scored exactly", name, w.Stats.ExactScored, w.Stats.Candidates)
						}
						if g.Stats.Candidates != w.Stats.Candidates || g.Stats.ExactScored > g.Stats.Candidates {
							t.Fatalf("%s: %d of %d rows scored exactly, without the shadow %d", name, g.Stats.ExactScored, g.Stats.Candidates, w.Stats.Candidates)
						}
						scored += g.Stats.Candidates
						exact += g.Stats.ExactScored
					}
				}
			}
			query.ResetListMajor()
			ix.Close()
			t.Logf("%s blocked %d: %d of %d rows scored exactly", metric, blocked, exact, scored)
			if exact*2 > scored {
				t.Errorf("%s blocked %d: the shadow spared only %d of %d rows", metric, blocked, scored-exact, scored)
			}
		}
	}
}
