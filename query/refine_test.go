package query_test

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"testing"

	"github.com/parqdb/parqdb/filter"
	"github.com/parqdb/parqdb/metadata"
	"github.com/parqdb/parqdb/query"
)

// refineOnOff searches 150 queries (half on the data points, half off
// them) with each of opts on the fixture of each metric, once with a
// refine setting off (set(false)) and once on, fails unless the hits (keys
// and distances, bit for bit) are the same, and passes each pair's stats
// to check. The setting is left on.
func refineOnOff(t *testing.T, set func(on bool), what string, opts []query.Options, check func(metric, name string, got, want query.Stats)) {
	t.Helper()
	ctx := context.Background()
	defer set(true)
	for _, metric := range []string{metadata.MetricCosine, metadata.MetricL2Squared} {
		f := newFixture(t, metric, metadata.EncodingLVQ8, 40)
		ix, err := query.Open(ctx, f.env, "words", query.OpenOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for qi := 0; qi < 150; qi++ {
			q := append([]float32(nil), f.vecs[qi*53%len(f.vecs)]...)
			if qi%2 == 1 { // off the data points
				for j := range q {
					q[j] += float32((qi*7+j)%11-5) * 0.03
				}
			}
			for _, o := range opts {
				o.NoRows = true
				set(false)
				want, err := ix.Search(ctx, q, o)
				set(true)
				if err != nil {
					t.Fatal(err)
				}
				got, err := ix.Search(ctx, q, o)
				if err != nil {
					t.Fatal(err)
				}
				name := fmt.Sprintf("%s query %d k %d nprobe %d refine %d", metric, qi, o.K, o.NProbe, o.Refine)
				if len(got.Hits) != len(want.Hits) {
					t.Fatalf("%s: %d hits, want %d", name, len(got.Hits), len(want.Hits))
				}
				for i := range got.Hits {
					g, w := got.Hits[i], want.Hits[i]
					if !bytes.Equal(g.Key, w.Key) || g.Distance != w.Distance {
						t.Fatalf("%s: hit %d is %q at %v, without %s %q at %v", name, i, g.Key, g.Distance, what, w.Key, w.Distance)
					}
				}
				check(metric, name, got.Stats, want.Stats)
			}
		}
		ix.Close()
	}
}

// TestRefineSkipSameResults: refine with LVQ8 re-scores the k best by code
// distance and then only the candidates whose lower bound could still beat
// them; the results (keys and distances, bit for bit) must be those of
// re-scoring every candidate, and the skipping must actually skip.
func TestRefineSkipSameResults(t *testing.T) {
	skipped, all := map[string]int64{}, map[string]int64{}
	refineOnOff(t, query.SetRefineSkip, "skipping",
		[]query.Options{{K: 10, NProbe: 4, Refine: 4}, {K: 10, NProbe: 16, Refine: 8}, {K: 3, NProbe: 8, Refine: 2}, {K: 25, NProbe: 40, Refine: 3}},
		func(metric, name string, got, want query.Stats) {
			if got.Refined > want.Refined {
				t.Fatalf("%s: refined %d, more than without skipping (%d)", name, got.Refined, want.Refined)
			}
			skipped[metric] += want.Refined - got.Refined
			all[metric] += want.Refined
		})
	for _, metric := range []string{metadata.MetricCosine, metadata.MetricL2Squared} {
		if skipped[metric] == 0 {
			t.Errorf("%s: refine skipped none of %d candidates", metric, all[metric])
		}
		t.Logf("%s: skipped %d of %d refined candidates", metric, skipped[metric], all[metric])
	}
}

// TestRefineCapSameResults checks that capping refine's candidates while
// the scan runs (refineCap: dropping those whose code distance puts their
// lower bound past any possible skip bound) changes neither the hits nor
// the candidates refine re-scores, on points and off them, for both
// metrics, at several k, nprobe and refine.
func TestRefineCapSameResults(t *testing.T) {
	refineOnOff(t, query.SetRefineCap, "the cap",
		[]query.Options{{K: 10, NProbe: 4, Refine: 4}, {K: 10, NProbe: 16, Refine: 8}, {K: 3, NProbe: 8, Refine: 2}, {K: 25, NProbe: 40, Refine: 3}, {K: 1, NProbe: 12, Refine: 16}},
		func(_, name string, got, want query.Stats) {
			if got.Refined != want.Refined {
				t.Fatalf("%s: refined %d candidates, without the cap %d", name, got.Refined, want.Refined)
			}
		})
}

// TestFirstListBoundSameResults: bounding the first list's admissions by
// its own k-th distance changes no result, with and without refine (its
// cap), at k below, near and above the lists' lengths (k ≥ a list's
// length takes the ordinary path).
func TestFirstListBoundSameResults(t *testing.T) {
	refineOnOff(t, query.SetFirstListBound, "the first list's bound",
		[]query.Options{{K: 10, NProbe: 4}, {K: 1, NProbe: 8}, {K: 3, NProbe: 8, Refine: 2}, {K: 10, NProbe: 16, Refine: 4}, {K: 40, NProbe: 12}, {K: 200, NProbe: 40, Refine: 2}},
		func(_, name string, got, want query.Stats) {
			if got.Candidates != want.Candidates {
				t.Fatalf("%s: scored %d candidates, without the bound %d", name, got.Candidates, want.Candidates)
			}
		})
}

// TestBlockedCodesAgree opens the GloVe fixture with its LVQ8 codes at
// stride and in the blocked layout and checks that every query's results
// agree: the same distance at every rank up to float32 rounding (1e-5
// relative) plus the blocked kernel's query quantization (below), the
// same keys except where two distances are that close, with refine,
// filters and packed lists too.
//
// The blocked kernel scores the query quantized to 16 bits
// (vecmath.U8Query: scale S = max|q_j|/32639, q·c off by at most
// (S/2)·Σc), so a code distance ‖q‖² + ‖x̂‖² − 2(o·Σq + s·q·c), times mul
// (½ under cosine), moves by at most mul·S·s·Σc = mul·S·Σ_j(x̂_j − o). With
// o = min_j x_j and x̂_j ≤ x_j + s/2, s = (max x − min x)/255, that is at
// most mul·S·B with B the largest Σ_j(x_j − min x) + D·(max x − min x)/510
// over the (normalised) vectors.
func TestBlockedCodesAgree(t *testing.T) {
	ctx := context.Background()
	defer query.SetBlockedCodes(0)
	f := newFixture(t, metadata.MetricCosine, metadata.EncodingLVQ8, 40)
	pred, err := filter.Parse("word >= 'm'")
	if err != nil {
		t.Fatal(err)
	}
	open := func(layout int32) *query.Index {
		query.SetBlockedCodes(layout)
		ix, err := query.Open(ctx, f.env, "words", query.OpenOptions{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ix.Close() })
		return ix
	}
	rowIx, blkIx := open(2), open(1)
	unit := func(v []float32) []float64 {
		n := 0.0
		for _, x := range v {
			n += float64(x) * float64(x)
		}
		u := make([]float64, len(v))
		for j, x := range v {
			u[j] = float64(x) / math.Sqrt(n)
		}
		return u
	}
	var bmax float64
	for _, v := range f.vecs {
		x := unit(v)
		lo, hi, sum := math.Inf(1), math.Inf(-1), 0.0
		for _, e := range x {
			lo, hi, sum = min(lo, e), max(hi, e), sum+e
		}
		bmax = max(bmax, sum-float64(len(x))*lo+float64(len(x))*(hi-lo)/510)
	}
	var qtol float64 // mul·S·B, with a 1% allowance for float32 rounding
	near := func(a, b float32) bool {
		return math.Abs(float64(a-b)) <= 1e-5*math.Max(1, math.Abs(float64(b)))+qtol
	}
	for qi := 0; qi < 200; qi++ {
		q := f.vecs[qi*37%len(f.vecs)]
		qmax := 0.0
		for _, e := range unit(q) {
			qmax = max(qmax, math.Abs(e))
		}
		qtol = 0.5 * qmax / 32639 * bmax * 1.01
		for _, o := range []query.Options{{K: 10, NProbe: 8}, {K: 10, NProbe: 16, Refine: 2}, {K: 5, NProbe: 8, Filter: pred}, {K: 50, NProbe: 40}} {
			o.NoRows = true
			want, err := rowIx.Search(ctx, q, o)
			if err != nil {
				t.Fatal(err)
			}
			got, err := blkIx.Search(ctx, q, o)
			if err != nil {
				t.Fatal(err)
			}
			if len(got.Hits) != len(want.Hits) {
				t.Fatalf("query %d %+v: %d hits blocked, %d at stride", qi, o, len(got.Hits), len(want.Hits))
			}
			for i, h := range got.Hits {
				w := want.Hits[i]
				if !near(h.Distance, w.Distance) {
					t.Fatalf("query %d %+v hit %d: distance %v blocked, %v at stride", qi, o, i, h.Distance, w.Distance)
				}
				if !bytes.Equal(h.Key, w.Key) {
					tied := (i > 0 && near(want.Hits[i-1].Distance, w.Distance)) || (i+1 < len(want.Hits) && near(want.Hits[i+1].Distance, w.Distance)) || i == len(want.Hits)-1
					if !tied {
						t.Fatalf("query %d %+v hit %d: key %q blocked, %q at stride (distance %v)", qi, o, i, h.Key, w.Key, w.Distance)
					}
				}
			}
		}
	}
}
