package query

import (
	"math"
	"math/rand/v2"
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
