package query

import (
	"bytes"
	"math"
	"math/bits"
	"slices"
	"sync/atomic"

	"github.com/parqdb/parqdb/internal/vecmath"
)

// cand is a scored postings row: row i of list l.
type cand struct {
	dist float32
	i    int32
	l    *list
}

func (c cand) key() []byte { return c.l.batch.Key(int(c.i)) }

// lessCand orders candidates by distance, then key: a strict total order,
// since the keys of an index's rows are unique. The distance test inlines;
// keys are compared only on a tie.
func lessCand(a, b cand) bool {
	return a.dist < b.dist || a.dist == b.dist && keyLess(a, b)
}

func keyLess(a, b cand) bool { return bytes.Compare(a.key(), b.key()) < 0 }

func compareCand(a, b cand) int {
	switch {
	case a.dist < b.dist:
		return -1
	case a.dist > b.dist:
		return 1
	}
	return bytes.Compare(a.key(), b.key())
}

// topK keeps the k best candidates (by lessCand) of those offered. It is a
// threshold-pruned buffer rather than a heap: an offered candidate no
// farther than the admission bound is appended (no sifting), and when the
// buffer holds limit candidates a selection (selectCands, quickselect)
// keeps the k best and lowers the bound to the k-th distance. The bound is
// never below the k-th best distance of all candidates offered so far, so
// no candidate of the final k best is ever refused, and best() selects
// exactly the set a bounded heap would keep. With capK set (refine's cap,
// refineCap) the bound may also fall below the k-th best, to
// capAt.of(capK-th best): candidates past it are dropped, so best() may
// return fewer than k; selections then also run every capEvery admissions.
type topK struct {
	k     int
	limit int     // buffer length that triggers a selection (≥ 2k)
	thr   float32 // admission bound: +Inf until the first selection
	h     []cand
	ds    []float32 // trim: the buffer's distances, for selection
	sel   vecmath.Smallest
	out   []cand // sortByRank

	// capK > 0 caps the bound further at each selection with
	// capAt.of(the capK-th best distance), refine's cap (refineCap).
	capK  int
	capAt refineCap
	since int // admissions since the last selection (with capK)

	// capKth is the capK-th best distance of the buffer when capKthOK
	// (set by a capped selection, cleared by an admission): refine's k-th
	// by code after best (Index.refine).
	capKth   float32
	capKthOK bool

	// near is a max-heap of the k smallest distances offered through
	// pushNear: their k-th bounds the final k-th at every moment, not only
	// at selections (nearBound).
	near []float32
}

// capEvery is how many admissions the buffer takes between selections
// when it is capped: the cap tightens as the capK-th best distance falls,
// and a capped buffer may never fill to limit.
const capEvery = 32

func (t *topK) reset(k int) {
	t.k = k
	t.capKthOK = false
	t.limit = max(2*k, k+32)
	t.thr = float32(math.Inf(1))
	t.capK = 0
	t.near = t.near[:0]
	// Drop the list pointers held from the last query; trim and best clear
	// the rows they drop, so nothing past len(t.h) holds one.
	clear(t.h)
	t.h = t.h[:0]
}

// threshold is the admission bound: a candidate farther than it cannot be
// among the k best. It is +Inf until the buffer first fills, then the k-th
// best distance at the last selection.
func (t *topK) threshold() float32 { return t.thr }

// lower lowers the admission bound to thr, which must be at least the
// k-th best distance of the candidates offered so far or about to be
// offered before the next selection (e.g. the k-th of a list's distances
// that are all offered next): candidates farther than it could not be
// among the k best.
func (t *topK) lower(thr float32) { t.thr = min(t.thr, thr) }

// len is the number of candidates in the buffer.
func (t *topK) len() int { return len(t.h) }

// full reports whether at least k candidates were kept.
func (t *topK) full() bool { return len(t.h) >= t.k }

// push offers c, which is dropped if it is farther than the threshold.
func (t *topK) push(c cand) {
	if c.dist > t.thr {
		return
	}
	t.h = append(t.h, c)
	t.capKthOK = false
	if len(t.h) >= t.limit {
		t.trim()
	} else if t.capK > 0 {
		if t.since++; t.since >= capEvery {
			t.trim()
		}
	}
}

// pushNear offers c as push does and keeps its distance among the k
// smallest offered through pushNear (nearBound).
func (t *topK) pushNear(c cand) {
	t.push(c)
	d, h := c.dist, t.near
	if len(h) < t.k {
		h = append(h, d)
		for j := len(h) - 1; j > 0; { // sift up
			p := (j - 1) / 2
			if h[p] >= h[j] {
				break
			}
			h[p], h[j] = h[j], h[p]
			j = p
		}
		t.near = h
		return
	}
	if d >= h[0] {
		return
	}
	h[0] = d
	for j := 0; ; { // sift down
		m, l := j, 2*j+1
		if l < len(h) && h[l] > h[m] {
			m = l
		}
		if r := l + 1; r < len(h) && h[r] > h[m] {
			m = r
		}
		if m == j {
			break
		}
		h[m], h[j] = h[j], h[m]
		j = m
	}
}

// nearBound is the admission bound, lowered to the k-th smallest distance
// offered through pushNear once k were: a candidate farther than it
// cannot be among the k best of those offered.
func (t *topK) nearBound() float32 {
	if len(t.near) < t.k {
		return t.thr
	}
	return min(t.thr, t.near[0])
}

// pushDists offers row i of list l at distance dists[i] (halved for
// cosine's _distance when half), for every row the kernel scored.
func (t *topK) pushDists(dists []float32, half bool, l *list) {
	for i, d := range dists {
		if half {
			d *= 0.5
		}
		t.push(cand{dist: d, i: int32(i), l: l})
	}
}

// trim lowers the threshold to the k-th best distance of the buffer and
// drops the candidates farther than it (selecting on the distances alone:
// candidates tied with the k-th stay, so more than k may remain; when the
// ties would leave no room, it keeps exactly the k best).
func (t *topK) trim() {
	t.since = 0
	capped := t.capK > 0 && t.capK < t.k && len(t.h) >= t.capK
	if len(t.h) <= t.k && !capped {
		return
	}
	t.ds = t.ds[:0]
	for _, c := range t.h {
		t.ds = append(t.ds, c.dist)
	}
	thr := t.boundOf(t.ds, t.thr)
	n := 0
	for _, c := range t.h { // branch-free compaction
		t.h[n] = c
		inc := 0
		if c.dist <= thr {
			inc = 1
		}
		n += inc
	}
	if n > t.k && n >= (t.k+t.limit)/2 { // many ties with the k-th
		selectCands(t.h[:n], t.k)
		n = t.k
	}
	clear(t.h[n:])
	t.h = t.h[:n]
	t.thr = thr
}

// boundOf returns the bound that distances ds (reordered) set, given the
// current bound thr ≥ them: their k-th smallest when there are more than
// k (else thr), lowered to refine's cap of their capK-th smallest when
// capped (0 < capK < k, at least capK of them). Capped with more than k
// distances, one vecmath.SmallestK for the k smallest gives both (the
// capK-th is the largest of those ranked below capK); otherwise the
// capK-th is selected first, and the k-th only when at least k distances
// are at most the cap (else the cap is the bound).
func (t *topK) boundOf(ds []float32, thr float32) float32 { return t.bound(ds, thr, nil) }

// boundOfKeep is boundOf leaving ds as it is: the vecmath.SmallestK paths
// only read it, the others select on a copy in *tmp.
func (t *topK) boundOfKeep(ds []float32, thr float32, tmp *[]float32) float32 {
	return t.bound(ds, thr, tmp)
}

// bound is boundOf, selecting on a copy of ds in *tmp when tmp is not nil
// and a selection would reorder ds.
func (t *topK) bound(ds []float32, thr float32, tmp *[]float32) float32 {
	mutable := func() []float32 {
		if tmp != nil {
			*tmp = append((*tmp)[:0], ds...)
			ds, tmp = *tmp, nil
		}
		return ds
	}
	if !(t.capK > 0 && t.capK < t.k && len(ds) >= t.capK) {
		if len(ds) <= t.k {
			return thr
		}
		if t.smallest(ds, t.k) {
			return t.sel.Kth
		}
		return kthSelect(mutable(), t.k)
	}
	t.capKthOK = true
	// one SmallestK for two selections: worth it from k+1 distances
	if len(ds) > t.k && useSmallest(t.k) && vecmath.SmallestK(ds, t.k, &t.sel) {
		s := &t.sel
		capKth := float32(math.Inf(-1))
		for i, r := range s.Rank[:s.M] {
			if int(r) < t.capK {
				capKth = max(capKth, ds[s.Idx[i]])
			}
		}
		t.capKth = capKth
		return min(s.Kth, t.capAt.of(capKth)) // the k-th, if at most the cap
	}
	t.capKth = kthFloat(mutable(), t.capK)
	c := t.capAt.of(t.capKth)
	if len(ds) <= t.k {
		return min(thr, c)
	}
	n := 0
	for _, d := range ds {
		inc := 0
		if d <= c {
			inc = 1
		}
		n += inc
	}
	if n < t.k { // the k-th smallest is above c
		return c
	}
	return kthFloat(ds, t.k) // at most c
}

// smallest runs vecmath.SmallestK for the n smallest of a into t.sel when
// kthFloat would (AVX-512, n ≤ vecmath.SmallestMaxK, at least kthFastMin
// values) and reports whether it decided.
func (t *topK) smallest(a []float32, n int) bool {
	return kthFast(a, n) && vecmath.SmallestK(a, n, &t.sel)
}

// best returns the (at most) k best candidates, in no particular order.
func (t *topK) best() []cand {
	t.trim()
	if len(t.h) > t.k {
		selectCands(t.h, t.k)
		clear(t.h[t.k:])
		t.h = t.h[:t.k]
	}
	return t.h
}

// sorted returns the k best candidates best first; the buffer is spent.
func (t *topK) sorted() []cand {
	if t.capK == 0 && len(t.h) > t.k && t.sortByRank() {
		return t.h
	}
	h := t.best()
	sortCands(h)
	return h
}

// sortByRank leaves the k best candidates in t.h, best first, from the
// ranks of their distances (vecmath.SmallestK, uncapped buffer of more
// than k), and reports whether it could: when the ranks below k are
// exactly 0…k−1 once each, the k best by distance are distinct and
// strictly nearer than every other candidate, so placing each at its rank
// is what best and sortCands give (no key is compared). On ties, a NaN or
// no SmallestK it returns false with t.h as it was.
func (t *topK) sortByRank() bool {
	t.ds = t.ds[:0]
	for _, c := range t.h {
		t.ds = append(t.ds, c.dist)
	}
	if !useSmallest(t.k) || !vecmath.SmallestK(t.ds, t.k, &t.sel) {
		return false
	}
	s := &t.sel
	var order [vecmath.SmallestMaxK]int32
	var slot [vecmath.SmallestMaxK + 1]int32
	best, ok := orderByRank(order[:0], s.Rank[:s.M], s.Idx[:s.M], t.k, slot[:])
	if !ok {
		return false
	}
	t.out = t.out[:0]
	for _, i := range best {
		t.out = append(t.out, t.h[i])
	}
	n := copy(t.h, t.out)
	clear(t.out) // the list pointers live on in t.h only
	clear(t.h[n:])
	t.h = t.h[:n]
	return true
}

// orderByRank appends to dst the positions ranked 0…k−1, in rank order:
// position pos[i] (i itself when pos is nil) has rank rank[i], the number
// of values strictly below its own. Each position goes to slot[min(rank,
// k)] without a branch (place k is a sink for the rest), so that slot,
// working memory of at least k+1 values, holds the order when every rank
// below k occurs exactly once. Otherwise — ties share a rank, a NaN ranks
// below nothing — it returns dst unchanged and false.
func orderByRank(dst, rank, pos []int32, k int, slot []int32) ([]int32, bool) {
	slot = slot[:k+1]
	for i := range slot {
		slot[i] = -1
	}
	kk, cnt := int32(k), int32(0)
	for i, r := range rank {
		p := int32(i)
		if pos != nil {
			p = pos[i]
		}
		slot[min(r, kk)] = p
		cnt += int32(uint32(r-kk) >> 31) // r < k (0 ≤ r, k < 2³¹)
	}
	if cnt != kk || slices.Contains(slot[:k], -1) {
		return dst, false
	}
	return append(dst, slot[:k]...), true
}

// sortCands sorts h by lessCand: by insertion up to 32 candidates (no
// call per comparison: lessCand inlines), else slices.SortFunc.
func sortCands(h []cand) {
	if len(h) > 32 {
		slices.SortFunc(h, compareCand)
		return
	}
	for i := 1; i < len(h); i++ {
		for j := i; j > 0 && lessCand(h[j], h[j-1]); j-- {
			h[j], h[j-1] = h[j-1], h[j]
		}
	}
}

// selectCands reorders h so that h[:n] holds its n best candidates (by
// lessCand) with the n-th best at h[n-1]: quickselect with a median-of-3
// pivot, finished by insertion sort on short ranges, falling back to a sort
// when the partitions keep coming out lopsided. 1 ≤ n ≤ len(h).
func selectCands(h []cand, n int) {
	lo, hi := 0, len(h) // the n-th best is in h[lo:hi]; h[:lo] ≤ it ≤ h[hi:]
	for budget := 2 * bits.Len(uint(len(h))); hi-lo > 12; budget-- {
		if budget == 0 {
			slices.SortFunc(h[lo:hi], compareCand)
			return
		}
		p := partitionCands(h, lo, hi)
		switch {
		case p == n-1:
			return
		case p < n-1:
			lo = p + 1
		default:
			hi = p
		}
	}
	for i := lo + 1; i < hi; i++ {
		for j := i; j > lo && lessCand(h[j], h[j-1]); j-- {
			h[j], h[j-1] = h[j-1], h[j]
		}
	}
}

// partitionCands partitions h[lo:hi] (at least 3 long) around the median
// of its first, middle and last candidates and returns the pivot's final
// place p: h[lo:p] are better than h[p], h[p+1:hi] worse.
func partitionCands(h []cand, lo, hi int) int {
	a, m, b := lo, lo+(hi-lo)/2, hi-1
	if lessCand(h[m], h[a]) {
		h[m], h[a] = h[a], h[m]
	}
	if lessCand(h[b], h[m]) {
		h[b], h[m] = h[m], h[b]
		if lessCand(h[m], h[a]) {
			h[m], h[a] = h[a], h[m]
		}
	}
	// h[a] ≤ h[m] ≤ h[b]: the median goes last, as the pivot.
	h[m], h[b] = h[b], h[m]
	pv := h[b]
	i := lo
	for j := lo; j < b; j++ {
		if lessCand(h[j], pv) {
			h[i], h[j] = h[j], h[i]
			i++
		}
	}
	h[i], h[b] = h[b], h[i]
	return i
}

// kthFastMin is the fewest values kthFloat selects the n-th of with
// vecmath.SmallestK, with at least 2n: below, the quickselect is as fast
// (BenchmarkKthFloat).
const kthFastMin = 24

// noKthFast turns the vecmath.SmallestK paths of kthFloat, boundOf and
// sorted off (tests compare both ways).
var noKthFast atomic.Bool

// kthFloat returns the n-th smallest value of a (1 ≤ n ≤ len(a)), which
// it may reorder. With AVX-512, n ≤ vecmath.SmallestMaxK and at least
// kthFastMin values, vecmath.SmallestK selects it (a cheap bound, then
// only the few values below it ranked) unless a holds a NaN or too many
// values fall below the bound; otherwise a quickselect (kthSelect). Both
// return the same value (up to the sign of a zero).
func kthFloat(a []float32, n int) float32 {
	if kthFast(a, n) {
		var s vecmath.Smallest
		if vecmath.SmallestK(a, n, &s) {
			return s.Kth
		}
	}
	return kthSelect(a, n)
}

// kthFast reports whether kthFloat(a, n) tries vecmath.SmallestK.
func kthFast(a []float32, n int) bool { return len(a) >= max(kthFastMin, 2*n) && useSmallest(n) }

// useSmallest reports whether vecmath.SmallestK is to select the n
// smallest (AVX-512, n ≤ vecmath.SmallestMaxK, not turned off).
func useSmallest(n int) bool {
	return n <= vecmath.SmallestMaxK && vecmath.FastBlocked() && !noKthFast.Load()
}

// kthSelect returns the n-th smallest value of a (1 ≤ n ≤ len(a)),
// reordering a: quickselect with a median-of-3 pivot, finished by
// insertion sort on short ranges, falling back to a sort when the
// partitions keep coming out lopsided.
func kthSelect(a []float32, n int) float32 {
	lo, hi := 0, len(a)
	for budget := 2 * bits.Len(uint(len(a))); hi-lo > 12; budget-- {
		if budget == 0 {
			slices.Sort(a[lo:hi])
			return a[n-1]
		}
		m, b := lo+(hi-lo)/2, hi-1
		if a[m] < a[lo] {
			a[m], a[lo] = a[lo], a[m]
		}
		if a[b] < a[m] {
			a[b], a[m] = a[m], a[b]
			if a[m] < a[lo] {
				a[m], a[lo] = a[lo], a[m]
			}
		}
		a[m], a[b] = a[b], a[m]
		pv := a[b]
		i := lo
		for j := lo; j < b; j++ {
			// branch-free Lomuto step: the comparison is unpredictable
			v := a[j]
			a[j] = a[i]
			a[i] = v
			inc := 0
			if v < pv {
				inc = 1
			}
			i += inc
		}
		a[i], a[b] = a[b], a[i]
		switch {
		case i == n-1:
			return pv
		case i < n-1:
			lo = i + 1
		default:
			hi = i
		}
	}
	for i := lo + 1; i < hi; i++ {
		for j := i; j > lo && a[j] < a[j-1]; j-- {
			a[j], a[j-1] = a[j-1], a[j]
		}
	}
	return a[n-1]
}
