package vecmath

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestRanksBelow(t *testing.T) { withImpls(t, testRanksBelow) }

// testRanksBelow: every rank counts the values among the first n strictly
// below it (a plain double loop), with ties, NaNs, infinities and ±0, at
// sizes around 16-value blocks and n both below and equal to len(d).
func testRanksBelow(t *testing.T) {
	r := rand.New(rand.NewPCG(77, 1))
	for _, blocks := range []int{1, 2, 3, 4, 5, 7, 8, 16} {
		for trial := range 20 {
			m := 16 * blocks
			d := make([]float32, m)
			distinct := []int{2, 5, 1 << 20}[trial%3]
			for i := range d {
				d[i] = float32(r.IntN(distinct)) / 7
				switch r.IntN(40) {
				case 0:
					d[i] = float32(math.NaN())
				case 1:
					d[i] = float32(math.Inf(1))
				case 2:
					d[i] = float32(math.Copysign(0, -1))
				}
			}
			for _, n := range []int{0, 1, m - 17 + r.IntN(17), m} {
				n = max(n, 0)
				rank := make([]int32, m)
				for i := range rank {
					rank[i] = -5
				}
				RanksBelow(d, n, rank)
				for i := range rank {
					want := int32(0)
					for _, v := range d[:n] {
						if v < d[i] {
							want++
						}
					}
					if rank[i] != want {
						t.Fatalf("%d values, n %d: rank[%d] (%v) = %d, want %d", m, n, i, d[i], rank[i], want)
					}
				}
			}
		}
	}
}

func TestRanksBelowPanics(t *testing.T) {
	for name, f := range map[string]func(){
		"not blocks": func() { RanksBelow(make([]float32, 15), 3, make([]int32, 3)) },
		"n too big":  func() { RanksBelow(make([]float32, 16), 17, make([]int32, 16)) },
		"rank long":  func() { RanksBelow(make([]float32, 16), 3, make([]int32, 17)) },
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
