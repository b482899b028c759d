package vecmath

import "math"

// SmallestMaxK is the largest k SmallestK selects for, and SmallestMaxCands
// the most candidates it ranks.
const (
	SmallestMaxK     = 32
	SmallestMaxCands = 64
)

// Smallest is SmallestK's result and working memory (about 1 KiB: keep one
// per goroutine and reuse it; a call overwrites it, so it is not safe for
// concurrent use).
type Smallest struct {
	// M is the number of candidates: the values of d at most a bound T
	// that is at least the k-th smallest (k ≤ M ≤ SmallestMaxCands), so
	// that the k smallest values are among them.
	M int
	// Kth is the k-th smallest value of d.
	Kth float32
	// Idx[:M] are the candidates' positions in d, ascending.
	Idx [SmallestMaxCands + 16]int32
	// Rank[:M] are their ranks: Rank[i] is the number of values of d
	// (candidates or not) strictly below d[Idx[i]]. Every other value of
	// d is ranked at least M.
	Rank [SmallestMaxCands]int32
	vals [SmallestMaxCands + 16]float32
}

// SmallestK finds the k smallest of the values d (1 ≤ k ≤ min(len(d),
// SmallestMaxK)) into s: their k-th smallest (s.Kth) and the candidates
// that hold them with their ranks (s.Idx, s.Rank, s.M). It first bounds the
// k-th smallest from above cheaply — the values read as rows of C = 16
// columns (32 when k > 16), T = the k-th smallest of the C column minima,
// which are C distinct values of d, so T is at least d's k-th smallest —
// and ranks only the values at most T (a few more than k on values in
// random order). Ties share a rank (Rank counts strictly smaller values).
// It returns false, with s's contents unspecified, when d holds a NaN or
// more than SmallestMaxCands values are at most T; the caller then selects
// by other means. It only reads d. It panics if k is out of range. With
// AVX-512 (FastBlocked) it runs as one kernel; the portable code takes the
// same steps with the same result (Kth up to the sign of a zero).
func SmallestK(d []float32, k int, s *Smallest) bool {
	if k < 1 || k > len(d) || k > SmallestMaxK {
		panic("vecmath: SmallestK k out of range")
	}
	return smallestK(d, k, s)
}

func smallestKGeneric(d []float32, k int, s *Smallest) bool {
	c := 16
	if k > 16 {
		c = 32
	}
	var cols [32]float32
	for i := range cols[:c] {
		cols[i] = float32(math.Inf(1))
	}
	for i, v := range d {
		if v != v {
			return false
		}
		cols[i%c] = min(cols[i%c], v)
	}
	var rank [32]int32
	t := kthRanked(cols[:c], k, rank[:c])
	m := 0
	for i, v := range d {
		if v <= t {
			if m == SmallestMaxCands {
				return false
			}
			s.Idx[m], s.vals[m] = int32(i), v
			m++
		}
	}
	if m < k { // cannot happen: T is at least the k-th smallest
		return false
	}
	s.M = m
	s.Kth = kthRanked(s.vals[:m], k, s.Rank[:m])
	return true
}

// kthRanked sets rank[i] to the number of values of v strictly below v[i]
// and returns the k-th smallest of v (no NaN, 1 ≤ k ≤ len(v)): the largest
// value ranked below k (every value ranked below k is at most the k-th
// smallest, which is itself ranked below k).
func kthRanked(v []float32, k int, rank []int32) float32 {
	ranksBelowGeneric(v, len(v), rank)
	kth := float32(math.Inf(-1))
	for i, x := range v {
		if int(rank[i]) < k {
			kth = max(kth, x)
		}
	}
	return kth
}
