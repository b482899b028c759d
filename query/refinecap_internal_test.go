package query

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestTopKCap checks the buffer's cap: with capK set, no candidate within
// the cap of the final capK-th best distance is lost, and the cap binds
// (fewer than k are kept when fewer than k lie within it).
func TestTopKCap(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	c := refineCap{mul: 1, norm2: 1, slack: 1e-4, sqrtD: math.Sqrt(50), maxBase: 1, emax: 0.01, margin: 2e-3}
	for round := range 50 {
		var tk topK
		tk.reset(40)
		tk.capK, tk.capAt = 10, c
		ds := make([]float32, 2000)
		l := &list{}
		for i := range ds {
			ds[i] = float32(1 + rng.Float64()*float64(10*(1+round%5)))
			tk.push(cand{dist: ds[i], i: int32(i), l: l})
		}
		kept := tk.best()
		sorted := append([]float32(nil), ds...)
		tenth := kthFloat(sorted, 10)
		cap := c.of(tenth)
		if cap < tenth {
			t.Fatalf("cap %v below the 10th best %v", cap, tenth)
		}
		// Every candidate within the final cap that is among the 40 best is
		// kept (a cap computed earlier, from a farther 10th, may have let a
		// few more in: refine skips those by their own bound); nothing past
		// the 40 best is kept.
		fortieth := kthFloat(append([]float32(nil), ds...), 40)
		keptSet := map[int32]bool{}
		for _, k := range kept {
			keptSet[k.i] = true
			if k.dist > fortieth {
				t.Fatalf("round %d: kept %v past the 40th best %v", round, k.dist, fortieth)
			}
		}
		within := 0
		for i, d := range ds {
			if d <= cap && d <= fortieth {
				within++
				if !keptSet[int32(i)] {
					t.Fatalf("round %d: candidate %d at %v within the cap %v was dropped", round, i, d, cap)
				}
			}
		}
		if within >= 40 || len(kept) >= 40 {
			t.Fatalf("round %d: %d within the cap, %d kept: the cap did not bind", round, within, len(kept))
		}
	}
}

// TestBoundOf: topK.boundOf (capK-th first, the k-th only when the cap
// does not bind) gives the bound of its definition — the k-th smallest
// when there are more than k distances, else thr, lowered to the cap of
// the capK-th smallest when capped — with ties, caps that bind and caps
// that do not, and uncapped buffers.
func TestBoundOf(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	binds, loose := 0, 0
	for trial := range 5000 {
		k := 2 + rng.IntN(40)
		var tk topK
		tk.reset(k)
		if trial%4 != 0 {
			tk.capK = 1 + rng.IntN(k-1)
			tk.capAt = refineCap{mul: 1, norm2: 1, slack: 1e-4, sqrtD: math.Sqrt(50), maxBase: 1,
				emax: []float64{0, 0.002, 0.05}[rng.IntN(3)], margin: 2e-3}
		}
		n := 1 + rng.IntN(3*k)
		ds := make([]float32, n)
		spread := []float64{0.01, 0.3, 10}[rng.IntN(3)]
		distinct := []int{3, 1 << 20}[rng.IntN(2)]
		for i := range ds {
			ds[i] = float32(1 + spread*float64(rng.IntN(distinct))/float64(distinct))
		}
		thr := float32(math.Inf(1))
		if rng.IntN(2) == 0 {
			thr = slices.Max(ds)
		}
		sorted := slices.Sorted(slices.Values(ds))
		want := thr
		if n > k {
			want = sorted[k-1]
		}
		if tk.capK > 0 && n >= tk.capK {
			c := tk.capAt.of(sorted[tk.capK-1])
			if c < want {
				binds++
			} else {
				loose++
			}
			want = min(want, c)
		}
		if got := tk.boundOf(slices.Clone(ds), thr); got != want {
			t.Fatalf("trial %d (n %d k %d capK %d): bound %v, want %v", trial, n, k, tk.capK, got, want)
		}
	}
	if binds == 0 || loose == 0 {
		t.Fatalf("the cap bound %d times and did not %d times: both cases are needed", binds, loose)
	}
}

// TestCapKthAfterBest: when the capped buffer reports its capK-th best
// after best (what refine then uses as its k-th by code), it is the capK-th
// smallest distance of the candidates best returned; admissions clear it.
func TestCapKthAfterBest(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 6))
	c := refineCap{mul: 1, norm2: 1, slack: 1e-4, sqrtD: math.Sqrt(50), maxBase: 1, emax: 0.01, margin: 2e-3}
	reported := 0
	l := &list{}
	for trial := range 2000 {
		k := 2 + rng.IntN(30)
		var tk topK
		tk.reset(2 * k)
		tk.capK, tk.capAt = k, c
		for i := range 1 + rng.IntN(400) {
			tk.push(cand{dist: float32(1 + rng.Float64()*float64(1+trial%7)), i: int32(i), l: l})
		}
		best := tk.best()
		if !tk.capKthOK {
			continue
		}
		reported++
		ds := make([]float32, len(best))
		for i, b := range best {
			ds[i] = b.dist
		}
		if len(ds) < k {
			t.Fatalf("trial %d: capK-th reported with %d candidates, capK %d", trial, len(ds), k)
		}
		if want := slices.Sorted(slices.Values(ds))[k-1]; tk.capKth != want {
			t.Fatalf("trial %d: capK-th %v, the candidates' %d-th is %v", trial, tk.capKth, k, want)
		}
		tk.push(cand{dist: 0, i: -1, l: l})
		if tk.capKthOK {
			t.Fatalf("trial %d: an admission left the capK-th standing", trial)
		}
	}
	if reported < 1000 {
		t.Fatalf("the capK-th was reported after only %d of 2000 best calls", reported)
	}
}
