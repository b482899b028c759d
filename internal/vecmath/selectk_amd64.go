//go:build !purego

package vecmath

// smallestAVX512 is SmallestK for n ≥ k values (1 ≤ k ≤ SmallestMaxK): it
// returns the number of candidates and the k-th smallest, or m < 0 when d
// holds a NaN (−1) or there are more than SmallestMaxCands candidates
// (−2). vals and idx get SmallestMaxCands+16 entries of room (the
// compaction stores 16 at a time), rank SmallestMaxCands.
//
//go:noescape
func smallestAVX512(d *float32, n, k int, vals *float32, idx, rank *int32) (m int, kth float32)
