package vecmath

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// smallestInput draws n values from a few distinct ones (many ties) or
// many, with NaN, ±Inf and −0 sprinkled in at rate 1/special (none if 0).
func smallestInput(r *rand.Rand, n, distinct, special int) []float32 {
	d := make([]float32, n)
	for i := range d {
		d[i] = float32(r.IntN(distinct)) / 7
		if special == 0 {
			continue
		}
		switch r.IntN(4 * special) {
		case 0:
			d[i] = float32(math.NaN())
		case 1:
			d[i] = float32(math.Inf(1))
		case 2:
			d[i] = float32(math.Inf(-1))
		case 3:
			d[i] = float32(math.Copysign(0, -1))
		}
	}
	return d
}

// checkSmallest checks s against d by brute force: the k-th smallest, the
// candidates ascending and holding every value ranked below k, each rank a
// count of the smaller values, every other value ranked at least M.
func checkSmallest(t *testing.T, d []float32, k int, s *Smallest) {
	t.Helper()
	rankOf := func(x float32) int32 {
		var r int32
		for _, y := range d {
			if y < x {
				r++
			}
		}
		return r
	}
	sorted := slices.Clone(d)
	slices.Sort(sorted)
	if s.Kth != sorted[k-1] {
		t.Fatalf("n %d k %d: Kth %v, want %v (%v)", len(d), k, s.Kth, sorted[k-1], d)
	}
	if s.M < k || s.M > SmallestMaxCands {
		t.Fatalf("n %d k %d: M %d", len(d), k, s.M)
	}
	in := make([]bool, len(d))
	for i, p := range s.Idx[:s.M] {
		if i > 0 && p <= s.Idx[i-1] {
			t.Fatalf("n %d k %d: Idx not ascending: %v", len(d), k, s.Idx[:s.M])
		}
		in[p] = true
		if want := rankOf(d[p]); s.Rank[i] != want {
			t.Fatalf("n %d k %d: Rank[%d] (d[%d] = %v) = %d, want %d", len(d), k, i, p, d[p], s.Rank[i], want)
		}
	}
	for i, x := range d {
		r := rankOf(x)
		if !in[i] && r < int32(s.M) {
			t.Fatalf("n %d k %d: d[%d] = %v ranked %d, not a candidate (M %d)", len(d), k, i, x, r, s.M)
		}
	}
}

func TestSmallestK(t *testing.T) { withImpls(t, testSmallestK) }

func testSmallestK(t *testing.T) {
	r := rand.New(rand.NewPCG(14, 4))
	var s Smallest
	decided, undecided := 0, 0
	for _, n := range []int{1, 2, 15, 16, 17, 31, 32, 33, 42, 52, 64, 65, 100, 112, 128, 200, 1000} {
		for trial := range 40 {
			distinct := []int{1, 3, 20, 1 << 20}[trial%4]
			special := []int{0, 0, 30, 200}[trial/4%4]
			d := smallestInput(r, n, distinct, special)
			hasNaN := slices.ContainsFunc(d, func(x float32) bool { return x != x })
			for _, k := range []int{1, 2, 10, 16, 17, 20, 32, n} {
				if k > n || k > SmallestMaxK {
					continue
				}
				before := slices.Clone(d)
				ok := SmallestK(d, k, &s)
				if !slices.Equal(bitsOf(d), bitsOf(before)) {
					t.Fatalf("n %d k %d: d changed", n, k)
				}
				switch {
				case hasNaN && ok:
					t.Fatalf("n %d k %d: decided with a NaN", n, k)
				case hasNaN:
				case ok:
					checkSmallest(t, d, k, &s)
				case n <= SmallestMaxCands:
					// more than 64 candidates needs more than 64 values
					t.Fatalf("n %d k %d: undecided without a NaN", n, k)
				}
				// distinct values in random order, k ≤ 20: about k + k/2
				// candidates, rarely more than 64
				if distinct > n && !hasNaN && k <= 20 && n <= 128 {
					if ok {
						decided++
					} else {
						undecided++
					}
				}
			}
		}
	}
	if decided < 100*undecided || decided == 0 {
		t.Fatalf("decided %d, undecided %d", decided, undecided)
	}
}

func bitsOf(d []float32) []uint32 {
	b := make([]uint32, len(d))
	for i, x := range d {
		b[i] = math.Float32bits(x)
	}
	return b
}

func TestSmallestKPanics(t *testing.T) {
	for name, f := range map[string]func(){
		"k 0":        func() { SmallestK(make([]float32, 3), 0, new(Smallest)) },
		"k above n":  func() { SmallestK(make([]float32, 3), 4, new(Smallest)) },
		"k above 32": func() { SmallestK(make([]float32, 40), 33, new(Smallest)) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			f()
		}()
	}
}

func BenchmarkSmallestK(b *testing.B) {
	withImplsB(b, func(b *testing.B) {
		for _, c := range []struct{ n, k int }{{42, 10}, {100, 10}, {100, 20}, {52, 20}} {
			r := rand.New(rand.NewPCG(1, 2))
			ds := make([][]float32, 64)
			for i := range ds {
				ds[i] = smallestInput(r, c.n, 1<<20, 0)
			}
			var s Smallest
			b.Run(fmt.Sprintf("n=%d/k=%d", c.n, c.k), func(b *testing.B) {
				i := 0
				for b.Loop() {
					SmallestK(ds[i%len(ds)], c.k, &s)
					i++
				}
			})
		}
	})
}
