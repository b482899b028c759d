//go:build !purego

package filter

import "golang.org/x/sys/cpu"

// useAVX2 selects the AVX2 kernels for INT32 columns, fixed at start.
var useAVX2 = cpu.X86.HasAVX2

// ltInt32AVX2 sets dst[w] bit j to lit > xs[64w+j]^bias (signed).
//
//go:noescape
func ltInt32AVX2(dst *uint64, xs *int32, words int, lit, bias int32)

// eqInt32AVX2 sets dst[w] bit j to lit == xs[64w+j]^bias.
//
//go:noescape
func eqInt32AVX2(dst *uint64, xs *int32, words int, lit, bias int32)

// cmpInt32Fast sets the full words of dst (the first len(xs)/64) from xs
// with the AVX2 kernel for x < lit (eq false) or x == lit (eq true), lit
// already biased, and returns how many values it did.
func cmpInt32Fast(dst bitset, xs []int32, lit, bias int32, eq bool) int {
	full := min(len(xs)>>6, len(dst))
	if !useAVX2 || full == 0 {
		return 0
	}
	if eq {
		eqInt32AVX2(&dst[0], &xs[0], full, lit, bias)
	} else {
		ltInt32AVX2(&dst[0], &xs[0], full, lit, bias)
	}
	return full << 6
}
