package vecmath

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestLVQ8Dists(t *testing.T) { withImpls(t, testLVQ8Dists) }

// testLVQ8Dists checks LVQ8Terms.Dists against Dist row by row, bit for
// bit, and its list of admitted rows against a plain filter, at sizes
// around the kernel's 16-row blocks, with clamped (negative r) rows,
// thresholds admitting none, some and all, and a non-empty idx to append
// to.
func testLVQ8Dists(t *testing.T) {
	r := rand.New(rand.NewPCG(14, 50))
	for _, n := range []int{0, 1, 2, 7, 8, 15, 16, 17, 31, 32, 33, 47, 48, 100, 255} {
		for trial := range 6 {
			q := LVQ8Terms{Norm2: 0.5 + r.Float64(), SumQ2: 2 * r.NormFloat64(), Mul: 1}
			if trial%2 == 1 {
				q.Mul = 0.5
			}
			dots := make([]float32, n)
			offs := make([]float32, n)
			scs := make([]float32, n)
			base := make([]float64, n)
			for i := range n {
				offs[i] = float32(-0.3 + 0.1*r.NormFloat64())
				scs[i] = float32(0.002 + 0.003*r.Float64())
				dots[i] = float32(100 * r.NormFloat64())
				base[i] = 0.5 + r.Float64()
				if r.IntN(8) == 0 { // r < 0: clamped to 0
					base[i] = -10
				}
			}
			want := make([]float32, n)
			for i := range n {
				want[i] = q.Dist(offs[i], scs[i], base[i], dots[i])
			}
			sorted := slices.Clone(want)
			slices.Sort(sorted)
			thrs := []float32{float32(math.Inf(1)), -1, 0}
			if n > 0 {
				thrs = append(thrs, sorted[n/2], sorted[n/5])
			}
			for _, thr := range thrs {
				got := slices.Clone(dots)
				prefix := []int32{-7, -8}
				if trial >= 3 {
					prefix = prefix[:0:0] // no capacity at all
				}
				idx := q.Dists(got, offs, scs, base, thr, slices.Clone(prefix))
				var wantIdx []int32
				for i, d := range want {
					if math.Float32bits(got[i]) != math.Float32bits(d) {
						t.Fatalf("n=%d thr=%v row %d: Dists %v (%#x), Dist %v (%#x)", n, thr, i, got[i], math.Float32bits(got[i]), d, math.Float32bits(d))
					}
					if d <= thr {
						wantIdx = append(wantIdx, int32(i))
					}
				}
				if !slices.Equal(idx[:len(prefix)], prefix) || !slices.Equal(idx[len(prefix):], wantIdx) {
					t.Fatalf("n=%d thr=%v: idx %v, want %v then %v", n, thr, idx, prefix, wantIdx)
				}
			}
		}
	}
}

// TestLVQ8DistFormula pins Dist to its definition in float64 (a change of
// the operation order would change some of these bits).
func TestLVQ8DistFormula(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 9))
	for range 10000 {
		q := LVQ8Terms{Norm2: r.Float64(), SumQ2: r.NormFloat64(), Mul: 0.5}
		off, sc := float32(r.NormFloat64()), float32(r.Float64())
		base, dot := r.Float64()*3, float32(r.NormFloat64()*50)
		prod1 := float64(off) * q.SumQ2
		prod2 := float64(sc) * 2
		prod2 *= float64(dot)
		sum := prod1
		sum += prod2
		rr := q.Norm2 + base
		rr -= sum
		want := float32(0)
		if rr > 0 {
			want = float32(rr) * q.Mul
		}
		if got := q.Dist(off, sc, base, dot); math.Float32bits(got) != math.Float32bits(want) {
			t.Fatalf("Dist = %v, want %v", got, want)
		}
	}
}

func FuzzLVQ8Dists(f *testing.F) {
	f.Add(uint64(1), uint8(17), float32(0.5))
	f.Add(uint64(2), uint8(0), float32(-1))
	f.Add(uint64(3), uint8(64), float32(100))
	f.Fuzz(func(t *testing.T, seed uint64, n uint8, thr float32) {
		if thr != thr {
			t.Skip()
		}
		r := rand.New(rand.NewPCG(seed, 1))
		q := LVQ8Terms{Norm2: r.Float64() * 4, SumQ2: r.NormFloat64() * 4, Mul: 1}
		m := int(n)
		dots, offs, scs, base := make([]float32, m), make([]float32, m), make([]float32, m), make([]float64, m)
		for i := range m {
			dots[i] = float32(r.NormFloat64() * 1e3)
			offs[i] = float32(r.NormFloat64())
			scs[i] = float32(r.Float64() * 0.01)
			base[i] = r.NormFloat64() * 2
		}
		got := slices.Clone(dots)
		idx := q.Dists(got, offs, scs, base, thr, nil)
		j := 0
		for i := range m {
			d := q.Dist(offs[i], scs[i], base[i], dots[i])
			if math.Float32bits(d) != math.Float32bits(got[i]) {
				t.Fatalf("row %d: %v, want %v", i, got[i], d)
			}
			if d <= thr {
				if j >= len(idx) || idx[j] != int32(i) {
					t.Fatalf("row %d (%v ≤ %v) missing from %v", i, d, thr, idx)
				}
				j++
			}
		}
		if j != len(idx) {
			t.Fatalf("idx %v has %d extra rows", idx, len(idx)-j)
		}
	})
}
