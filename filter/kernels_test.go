package filter

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestCmpI32 checks the INT32 comparison kernels (vector and scalar) against
// a one-value-at-a-time reference, signed and unsigned, for every operator,
// at lengths around the 64-value word and literals at and past the ends of
// the type's range.
func TestCmpI32(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	lits := []int64{0, 1, -1, 7, 1000, math.MinInt32, math.MaxInt32, math.MaxUint32, math.MaxUint32 + 1,
		math.MinInt32 - 1, math.MaxInt64, math.MinInt64}
	for _, n := range []int{0, 1, 63, 64, 65, 128, 200, 513} {
		xs := make([]int32, n)
		for i := range xs {
			switch r.IntN(4) {
			case 0:
				xs[i] = int32(r.IntN(20)) - 10
			case 1:
				xs[i] = int32(r.Uint32())
			case 2:
				xs[i] = []int32{math.MinInt32, math.MaxInt32, -1, 0}[r.IntN(4)]
			default:
				xs[i] = int32(r.IntN(2000))
			}
		}
		for _, uns := range []bool{false, true} {
			for op := opEq; op <= opGe; op++ {
				ls := lits
				if n > 0 {
					ls = append(ls[:len(ls):len(ls)], int64(xs[r.IntN(n)])) // a value present
				}
				for _, lit := range ls {
					dst := make(bitset, words(n))
					for i := range dst {
						dst[i] = r.Uint64() // the kernel must overwrite every word
					}
					cmpI32(dst, xs, uns, op, lit)
					for i, x := range xs {
						v := int64(x)
						if uns {
							v = int64(uint32(x))
						}
						want := cmpResultCode(op, cmpInt64(v, lit))
						if got := dst[i>>6]>>(uint(i)&63)&1 == 1; got != want {
							t.Fatalf("n %d unsigned %v: %d op %d %d: got %v", n, uns, v, op, lit, got)
						}
					}
					if n&63 != 0 && dst[len(dst)-1]&^tailMask(n) != 0 {
						t.Fatalf("n %d: bits set past the end", n)
					}
				}
			}
		}
	}
}

func cmpInt64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
