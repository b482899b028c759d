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

func TestDotU8Blocked(t *testing.T) { withImpls(t, testDotU8Blocked) }

// testDotU8Blocked checks BlockU8's layout and DotU8Blocked against the
// float64 reference at edge sizes (rows 0, 1, 15, 16, 17, …; odd
// dimensions and D mod 4 = 1…3), and the rows past n of the last block
// at 0.
func testDotU8Blocked(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 8))
	for _, d := range []int{1, 2, 3, 4, 5, 7, 16, 17, 49, 50, 51, 64, 127, 300} {
		for _, n := range []int{0, 1, 15, 16, 17, 31, 32, 33, 100} {
			q := make([]float32, d)
			for i := range q {
				q[i] = float32(r.NormFloat64())
			}
			codes := make([]byte, n*d)
			for i := range codes {
				codes[i] = byte(r.Uint32())
			}
			nb := (n + 15) / 16
			blk := make([]byte, nb*16*d)
			for i := range blk {
				blk[i] = 0xee // BlockU8 must zero the padding rows
			}
			BlockU8(blk, codes, d)
			for i := range nb * 16 {
				for j := range d {
					want := byte(0)
					if i < n {
						want = codes[i*d+j]
					}
					if got := blk[i/16*16*d+16*j+i%16]; got != want {
						t.Fatalf("D=%d n=%d: row %d dim %d is %d in the block layout, want %d", d, n, i, j, got, want)
					}
				}
			}
			out := make([]float32, nb*16)
			DotU8Blocked(q, blk, out)
			for i := range nb * 16 {
				if i >= n {
					if out[i] != 0 {
						t.Fatalf("D=%d n=%d: padding row %d = %v", d, n, i, out[i])
					}
					continue
				}
				want, abs := refDotU(q, codes[i*d:(i+1)*d])
				check(t, "DotU8Blocked", out[i], want, abs, d)
			}
		}
	}
}

func TestL2SqBlocked(t *testing.T) { withImpls(t, testL2SqBlocked) }

// testL2SqBlocked checks BlockF32's layout and L2SqBlocked against the
// float64 reference at edge sizes, and the padding rows' distance |q|².
func testL2SqBlocked(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 9))
	for _, d := range []int{1, 2, 3, 4, 5, 7, 16, 17, 49, 50, 51, 64, 127} {
		for _, n := range []int{0, 1, 15, 16, 17, 31, 32, 33, 100} {
			q := make([]float32, d)
			for i := range q {
				q[i] = float32(r.NormFloat64())
			}
			rows := make([]float32, n*d)
			for i := range rows {
				rows[i] = float32(r.NormFloat64())
			}
			nb := (n + 15) / 16
			blk := make([]float32, nb*16*d)
			for i := range blk {
				blk[i] = 9 // BlockF32 must zero the padding rows
			}
			BlockF32(blk, rows, d)
			for i := range nb * 16 {
				for j := range d {
					want := float32(0)
					if i < n {
						want = rows[i*d+j]
					}
					if got := blk[i/16*16*d+16*j+i%16]; got != want {
						t.Fatalf("D=%d n=%d: row %d dim %d is %v in the block layout, want %v", d, n, i, j, got, want)
					}
				}
			}
			out := make([]float32, nb*16)
			L2SqBlocked(q, blk, out)
			zero := make([]float32, d)
			for i := range nb * 16 {
				row := zero
				if i < n {
					row = rows[i*d : (i+1)*d]
				}
				want, abs := refL2Sq(q, row)
				check(t, "L2SqBlocked", out[i], want, abs, d)
			}
		}
	}
}
