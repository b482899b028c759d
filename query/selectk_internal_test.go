package query

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/parqdb/parqdb/internal/vecmath"
)

// selectInput draws n distances from a few distinct values (ties) or many,
// with NaN, +Inf and −0 sprinkled in at rate 1/special (none if 0).
func selectInput(r *rand.Rand, n, distinct, special int) []float32 {
	d := make([]float32, n)
	for i := range d {
		d[i] = float32(r.IntN(distinct)) / 9
		if special > 0 {
			switch r.IntN(3 * special) {
			case 0:
				d[i] = float32(math.NaN())
			case 1:
				d[i] = float32(math.Inf(1))
			case 2:
				d[i] = float32(math.Copysign(0, -1))
			}
		}
	}
	return d
}

// sameFloat: equal bits, or both zeros (the selections may return either
// of −0 and +0 when they tie).
func sameFloat(a, b float32) bool {
	return math.Float32bits(a) == math.Float32bits(b) || a == 0 && b == 0
}

// TestKthFloatFast: kthFloat by vecmath.SmallestK returns what the
// quickselect returns, with ties, NaN, +Inf and −0, at lengths around
// multiples of 16, for n = 1, n = len and between.
func TestKthFloatFast(t *testing.T) {
	if !vecmath.FastBlocked() {
		t.Skip("no AVX-512: kthFloat is the quickselect")
	}
	r := rand.New(rand.NewPCG(14, 41))
	for _, m := range []int{24, 31, 32, 33, 42, 47, 52, 64, 100, 113, 128, 300} {
		for trial := range 60 {
			a := selectInput(r, m, []int{1, 3, 30, 1 << 20}[trial%4], []int{0, 0, 40, 5}[trial/4%4])
			for _, n := range []int{1, 2, 10, 16, 17, 20, 32, m} {
				if n > m {
					continue
				}
				want := kthSelect(slices.Clone(a), n)
				if got := kthFloat(slices.Clone(a), n); !sameFloat(got, want) {
					t.Fatalf("len %d, n %d: %v, quickselect %v (%v)", m, n, got, want, a)
				}
			}
		}
	}
}

// TestBoundOfFast: boundOf and the capK-th it records are the same with
// and without vecmath.SmallestK (noKthFast), capped or not; boundOfKeep
// gives them too and leaves its distances as they were.
func TestBoundOfFast(t *testing.T) {
	if !vecmath.FastBlocked() {
		t.Skip("no AVX-512")
	}
	defer noKthFast.Store(false)
	r := rand.New(rand.NewPCG(14, 42))
	for trial := range 4000 {
		k := 1 + r.IntN(40)
		var tk topK
		tk.reset(k)
		if trial%3 != 0 && k > 1 {
			tk.capK = 1 + r.IntN(k-1)
			tk.capAt = refineCap{mul: 1, norm2: 1, slack: 1e-4, sqrtD: math.Sqrt(50), maxBase: 1,
				emax: []float64{0, 0.002, 0.05}[r.IntN(3)], margin: 2e-3}
		}
		ds := selectInput(r, 1+r.IntN(4*k+40), []int{2, 40, 1 << 20}[r.IntN(3)], []int{0, 0, 60}[r.IntN(3)])
		thr := float32(math.Inf(1))
		var got, want [2]float32
		var ok [2]bool
		for i, slow := range []bool{false, true} {
			noKthFast.Store(slow)
			tk.capKth, tk.capKthOK = -1, false
			b := tk.boundOf(slices.Clone(ds), thr)
			got[i], want[i], ok[i] = b, tk.capKth, tk.capKthOK
		}
		if !sameFloat(got[0], got[1]) || !sameFloat(want[0], want[1]) || ok[0] != ok[1] {
			t.Fatalf("trial %d (n %d k %d capK %d): bound %v capKth %v (%v), quickselect %v %v (%v)",
				trial, len(ds), k, tk.capK, got[0], want[0], ok[0], got[1], want[1], ok[1])
		}
		// boundOfKeep: the same, with ds left as it was
		noKthFast.Store(trial%2 == 0)
		keep, tmp := slices.Clone(ds), []float32(nil)
		tk.capKth, tk.capKthOK = -1, false
		if b := tk.boundOfKeep(keep, thr, &tmp); !sameFloat(b, got[0]) || !sameFloat(tk.capKth, want[0]) || tk.capKthOK != ok[0] {
			t.Fatalf("trial %d (n %d k %d capK %d): boundOfKeep %v capKth %v, boundOf %v %v", trial, len(ds), k, tk.capK, b, tk.capKth, got[0], want[0])
		}
		if !slices.Equal(bitsOf32(keep), bitsOf32(ds)) {
			t.Fatalf("trial %d (n %d k %d capK %d): boundOfKeep reordered its distances", trial, len(ds), k, tk.capK)
		}
	}
}

// TestTopKFast: a query's worth of candidates (capped as refine 2 caps,
// or not) leaves the same best candidates, and the same admission bound
// after every offer, with and without vecmath.SmallestK.
func TestTopKFast(t *testing.T) {
	if !vecmath.FastBlocked() {
		t.Skip("no AVX-512")
	}
	defer noKthFast.Store(false)
	r := rand.New(rand.NewPCG(14, 43))
	for trial := range 200 {
		cs := randomCands(r, 1000)
		k := []int{1, 10, 20, 32}[trial%4]
		capK := 0
		if trial%8 >= 4 && k > 1 {
			capK = k / 2
		}
		var got [2][]cand
		var thrs [2][]float32
		for i, slow := range []bool{false, true} {
			noKthFast.Store(slow)
			var tk topK
			tk.reset(k)
			if capK > 0 {
				tk.capK, tk.capAt = capK, refineCap{mul: 1, norm2: 1, slack: 1e-4, sqrtD: math.Sqrt(50), maxBase: 1, emax: 0.002, margin: 2e-3}
			}
			for _, c := range cs {
				tk.push(c)
				thrs[i] = append(thrs[i], tk.threshold())
			}
			got[i] = slices.Clone(tk.sorted())
		}
		if !sameCands(got[0], got[1]) {
			t.Fatalf("trial %d (k %d capK %d): kept %v, quickselect %v", trial, k, capK, got[0], got[1])
		}
		if !slices.EqualFunc(thrs[0], thrs[1], sameFloat) {
			t.Fatalf("trial %d (k %d capK %d): the bounds differ", trial, k, capK)
		}
	}
}

// TestSelectByRankSmallest: selectByRank decides the same (the same
// leaves in the same order, or the same fallback) from vecmath.SmallestK's
// candidates as from the ranks of all leaves, with ties, NaN, +Inf, the
// values past n (L2SqBlocked's padding) small or large, n not a multiple
// of 16, nprobe = 1 and nprobe = n.
func TestSelectByRankSmallest(t *testing.T) {
	if !vecmath.FastBlocked() {
		t.Skip("no AVX-512: routeFlat does not rank")
	}
	defer noSmallestRoute.Store(false)
	r := rand.New(rand.NewPCG(14, 44))
	decided := 0
	for trial := range 6000 {
		n := 1 + r.IntN(rankRouteMax)
		m := (n + 15) &^ 15
		var s routeScratch
		s.dists = selectInput(r, m, []int{3, 50, 1 << 20, 1 << 20}[trial%4], []int{0, 0, 0, 80, 8}[trial%5])
		nprobe := []int{1, 2, 10, 16, 17, 20, 32, 33, n}[r.IntN(9)]
		nprobe = min(nprobe, n)
		var got [2][]int32
		var ok [2]bool
		for i, all := range []bool{false, true} {
			noSmallestRoute.Store(all)
			got[i], ok[i] = s.selectByRank(n, nprobe, nil)
		}
		if ok[0] != ok[1] || !slices.Equal(got[0], got[1]) {
			t.Fatalf("trial %d (n %d nprobe %d): %v %v, all ranked %v %v (%v)", trial, n, nprobe, got[0], ok[0], got[1], ok[1], s.dists[:n])
		}
		if ok[0] {
			decided++
		}
	}
	if decided < 1000 {
		t.Fatalf("only %d of 6000 decided by rank", decided)
	}
}

// BenchmarkKthFloat compares topK.boundOf (uncapped: the k-th, by
// vecmath.SmallestK with AVX-512 from max(kthFastMin, 2k) values) with the
// quickselect alone on distances in random order, at the sizes
// of topK's trims (limit 42 at k 10, 52 at k 20), of a first list (100)
// and of best's last trim (about 1.5k).
func BenchmarkKthFloat(b *testing.B) {
	for _, c := range []struct{ n, k int }{{12, 10}, {16, 10}, {20, 10}, {24, 10}, {42, 10}, {100, 10}, {30, 20}, {52, 20}, {100, 20}} {
		r := rand.New(rand.NewPCG(1, uint64(c.n)))
		as := make([][]float32, 64)
		for i := range as {
			as[i] = selectInput(r, c.n, 1<<20, 0)
		}
		buf := make([]float32, c.n)
		var tk topK
		tk.reset(c.k)
		for _, impl := range []string{"boundOf", "quickselect"} {
			b.Run(fmt.Sprintf("n=%d/k=%d/%s", c.n, c.k, impl), func(b *testing.B) {
				i := 0
				for b.Loop() {
					copy(buf, as[i%len(as)])
					if impl == "boundOf" {
						tk.boundOf(buf, 0)
					} else {
						kthSelect(buf, c.k)
					}
					i++
				}
			})
		}
	}
}

func bitsOf32(d []float32) []uint32 {
	b := make([]uint32, len(d))
	for i, x := range d {
		b[i] = math.Float32bits(x)
	}
	return b
}
