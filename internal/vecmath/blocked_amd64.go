//go:build !purego

package vecmath

// dotU8BlockedVNNI is DotU8Blocked over nb ≥ 1 blocks of 16 rows of g4
// groups of 4 codes, hl being U8Query.hl and s U8Query.S, prefetching
// within the first lim bytes at codes (0: none), each result added to
// out's value when acc ≠ 0 (blocked_amd64.s; AVX-512 F and VNNI).
//
//go:noescape
func dotU8BlockedVNNI(hl *int8, codes *byte, g4, nb int, s float32, out *float32, lim int, acc int)

// absMaxF32AVX512 returns max_j |q_j| over n ≥ 1 finite values
// (blocked_amd64.s).
//
//go:noescape
func absMaxF32AVX512(q *float32, n int) float32

// quantizeU8QueryAVX512 is U8Query.Set's quantization loop over n ≥ 1
// values with inv = 1/S, writing ⌈n/16⌉·32 bytes of hl: the Go loop's
// bytes, then those of zero values up to a multiple of 16
// (blocked_amd64.s).
//
//go:noescape
func quantizeU8QueryAVX512(q *float32, n int, inv float64, hl *int8)

// prefetchLines prefetches the 64-byte lines of p[0:n], n ≥ 1
// (blocked_amd64.s).
//
//go:noescape
func prefetchLines(p *byte, n int)
