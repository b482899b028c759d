//go:build !purego

package vecmath

// dotU8BlockedVNNI is DotU8Blocked over nb ≥ 1 blocks of 16 rows of g4
// groups of 4 codes, hl being U8Query.hl and s U8Query.S (blocked_amd64.s;
// AVX-512 F and VNNI).
//
//go:noescape
func dotU8BlockedVNNI(hl *int8, codes *byte, g4, nb int, s float32, out *float32)
