package main

import (
	"math/rand/v2"
	"testing"
)

// TestMeasure checks the bound the tool reports: re-ranking every row
// exactly (refine·k ≥ N) finds the exact answer whatever the codes, and
// codes whose step is large against the gaps between neighbours (a tight
// cluster far from the origin in one dimension) rank worse with LVQ4 than
// with LVQ8.
func TestMeasure(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const n, d, k = 400, 16, 10
	gen := func() []float32 {
		v := make([]float32, d)
		for i := range v {
			v[i] = float32(rng.NormFloat64())
		}
		v[0] += 100 // one large coordinate: LVQ's step is ~range/levels
		return v
	}
	base := make([][]float32, n)
	for i := range base {
		base[i] = gen()
	}
	qs := make([][]float32, 20)
	for i := range qs {
		qs[i] = gen()
	}
	res := measure(base, qs, k, []int{0, n / k})
	got := map[[2]int]float64{}
	for _, r := range res {
		got[[2]int{r.bits, r.refine}] = r.recall
	}
	for _, bits := range []int{4, 8} {
		if r := got[[2]int{bits, n / k}]; r != 1 {
			t.Errorf("lvq%d refine %d (every row re-ranked): recall %.3f, want 1", bits, n/k, r)
		}
	}
	if got[[2]int{4, 0}] >= got[[2]int{8, 0}] {
		t.Errorf("codes alone: lvq4 recall %.3f not below lvq8 %.3f on data with a step ≫ neighbour gaps", got[[2]int{4, 0}], got[[2]int{8, 0}])
	}
	if got[[2]int{4, 0}] > 0.8 {
		t.Errorf("lvq4 codes alone: recall %.3f; expected the coarse step to lose neighbours", got[[2]int{4, 0}])
	}
}
