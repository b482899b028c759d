package query

import (
	"cmp"
	"math"
	"slices"
	"sort"
	"sync/atomic"

	"github.com/parqdb/parqdb/internal/vecmath"
	"github.com/parqdb/parqdb/ivf"
)

// routeBudget bounds how far budgeted routing descends the hierarchy:
// roots are visited nearest first until Factor·nprobe leaf distances were
// computed and at least MinRoots roots were visited.
type routeBudget struct{ Factor, MinRoots int }

// routeOptions is the descent budget of two-stage routing: roots are
// visited nearest first while fewer than 16·nprobe leaf distances were
// computed or fewer than 6 roots were visited. Leaves that a triangle-
// inequality bound proves farther than the nprobe-th best so far are
// skipped without computing their distance and do not count against the
// budget (router.route).
var routeOptions = routeBudget{Factor: 16, MinRoots: 6}

// routeSlack widens the pruning bound so that float32 rounding in the
// distance kernel (relative error far below 1e-4 for finite vectors) can
// never prune a leaf that belongs in the result.
const routeSlack = 1e-3

// distTol, times |q|² + max |x̂|², bounds the rounding error of a dot-form
// leaf distance (router.codeLeafDistance) with a wide margin; pruning adds it.
const distTol = 1e-5

// router is the query router: it routes queries over the persisted
// representations of ivf.Centroids (dense roots, LVQ8 leaf
// reconstructions, float32 squared L2, ties to the smaller CID). Budgeted,
// it ranks the roots, visits them nearest first within the descent budget
// and keeps the nearest leaves of the visited roots (the two-stage rule of
// referenceRoute in route_test.go), with two changes that only ever add
// true nearest leaves: a leaf whose lower bound (|q−root| − |leaf−root|)²
// exceeds the nprobe-th best distance found so far is skipped (it cannot be
// among the nearest), and skipped leaves do not count against the budget.
// When every root is visited (nlist ≤ exactNList, or the budget is never
// reached) the result is exactly the nprobe nearest leaves of all C. It
// keeps the nprobe best in a bounded heap instead of sorting every visited
// leaf. It is immutable and safe for concurrent use.
type router struct {
	c      *ivf.Centroids
	leaves []float32 // LVQ8 reconstructions by CID, dense
	// Below codeRouteDim: the reconstructions and the roots zero padded to
	// w = stride(Dim) values per row (queries alike, routeScratch.qp), so
	// that the float32 SIMD kernel runs with no scalar tail.
	w       int
	padLeaf []float32
	padRoot []float32
	rn2     []float64 // |reconstruction|² by CID
	maxRn2  float64
	leafR   []float32 // |leaf − its root|, rounded down
	rootR   []float32 // max leafR over the root's leaves, rounded up
	opt     routeBudget
	// exactNList: indexes with at most this many lists are routed over all
	// roots (no budget), exactly.
	exactNList int
	// flat: below codeRouteDim with at most flatNList lists, every leaf's
	// distance is computed in one batch call, without the roots (routeFlat).
	flat bool
	// blkLeaf: with flat and the blocked kernels (vecmath.FastBlocked), the
	// reconstructions in vecmath.BlockF32's layout, which routeFlat scores
	// instead of padLeaf.
	blkLeaf []float32
	// ord: from codeRouteDim, each root's leaves (CIDs) at its CID range,
	// by leafR descending (ties: smaller CID), and ordCodes their codes in
	// that order (a second copy of the codes, nlist·D bytes): the leaves
	// that the triangle bound does not prune are then a prefix of the
	// root's, scored in one batch call without computing the pruned ones.
	ord      []int32
	ordCodes []byte
}

// flatNList is the nlist up to which small-D routing (below codeRouteDim)
// computes every leaf distance in one batch call instead of ranking the
// roots and pruning: at the GloVe sample's 100 × 50 the roots, their sort
// and the per-leaf heap cost more than the 100 distances (docs/search.md,
// Routing). The result is the same: the nprobe nearest leaves of all C by
// the same kernel's distances, ties to the smaller CID.
const flatNList = 256

// defaultExactNList is the nlist up to which routing ignores the descent
// budget and returns the exact nprobe nearest leaves (docs/search.md,
// Routing): every index, since leaf distances come from the LVQ8 codes
// (a quarter of the bytes of float32 leaves) and pruning skips most leaves
// where the bound is strong. The budgeted mode stays for tests and tuning.
const defaultExactNList = math.MaxInt32

func newRouter(c *ivf.Centroids, opt routeBudget) *router {
	r := &router{c: c, opt: opt, leaves: make([]float32, 0, c.NList*c.Dim), exactNList: defaultExactNList}
	for cid := 0; cid < c.NList; cid++ {
		r.leaves = append(r.leaves, c.Leaf(int32(cid))...)
	}
	d := c.Dim
	nr := c.NumRoots()
	r.leafR = make([]float32, c.NList)
	r.rn2 = make([]float64, c.NList)
	for cid := range c.NList {
		var n2 float64
		for _, x := range r.leaves[cid*d : (cid+1)*d] {
			n2 += float64(x) * float64(x)
		}
		r.rn2[cid] = n2
		r.maxRn2 = max(r.maxRn2, n2)
	}
	if d < codeRouteDim {
		r.w = stride(d)
		r.padLeaf = padRows(r.leaves, d, r.w)
		r.padRoot = padRows(c.Roots, d, r.w)
		r.flat = c.NList <= flatNList
		if r.flat && vecmath.FastBlocked() {
			r.blkLeaf = make([]float32, blockRows(c.NList)*d)
			vecmath.BlockF32(r.blkLeaf, r.leaves, d)
		}
	}
	r.rootR = make([]float32, nr)
	for root := range nr {
		rv := c.Roots[root*d : (root+1)*d]
		var maxR float64
		for cid := c.CIDOffsets[root]; cid < c.CIDOffsets[root+1]; cid++ {
			lv := r.leaves[int(cid)*d : int(cid+1)*d]
			var ss float64
			for j, x := range lv {
				t := float64(x) - float64(rv[j])
				ss += t * t
			}
			dist := math.Sqrt(ss)
			r.leafR[cid] = float32(dist)
			maxR = max(maxR, dist)
		}
		r.rootR[root] = float32(maxR)
	}
	if d >= codeRouteDim {
		r.ord = make([]int32, c.NList)
		r.ordCodes = make([]byte, 0, c.NList*d)
		for root := range nr {
			lo, hi := c.CIDOffsets[root], c.CIDOffsets[root+1]
			ord := r.ord[lo:hi]
			for i := range ord {
				ord[i] = lo + int32(i)
			}
			slices.SortStableFunc(ord, func(a, b int32) int { return cmp.Compare(r.leafR[b], r.leafR[a]) })
			for _, cid := range ord {
				r.ordCodes = append(r.ordCodes, c.Codes[int(cid)*d:int(cid+1)*d]...)
			}
		}
	}
	return r
}

// padRows copies rows of d values into rows of w ≥ d values, zero padded.
func padRows(rows []float32, d, w int) []float32 {
	n := len(rows) / d
	out := make([]float32, n*w)
	for i := range n {
		copy(out[i*w:i*w+d], rows[i*d:(i+1)*d])
	}
	return out
}

type rootDist struct {
	d float32
	r int32
}

type leafDist struct {
	d   float32
	cid int32
}

// lessLeaf orders by distance, then CID; distances of finite vectors are
// never NaN.
func lessLeaf(a, b leafDist) bool { return a.d < b.d || (a.d == b.d && a.cid < b.cid) }

// routeScratch is per-query routing memory (part of scratch).
type routeScratch struct {
	rootD    []float32
	qp       []float32 // the query zero padded to router.w (below codeRouteDim)
	roots    []rootDist
	rootKeys []uint64 // route: the roots' sort keys
	dists    []float32
	dots     []float32 // route: the code dot products of a root's leaves
	heap     []leafDist
	rank     []int32 // selectByRank
	slot     []int32 // selectByRank
	sel      vecmath.Smallest
}

// rankRouteMax is the most leaves routeFlat selects by rank
// (selectByRank: n² comparisons, sixteen at a time); above it, and
// without AVX-512, the sorted buffer.
const rankRouteMax = 128

// noRankRoute turns selectByRank off (tests compare both ways).
var noRankRoute atomic.Bool

// noSmallestRoute makes selectByRank rank every leaf (tests compare both
// ways).
var noSmallestRoute atomic.Bool

// selectByRank appends the nprobe nearest of the n leaves of s.dists (its
// length a multiple of 16, as L2SqBlocked left it) to dst, nearest first,
// from their ranks: each leaf ranked r < nprobe goes to place r, without
// branches. When those ranks are not exactly 0…nprobe−1 once each — ties
// (equal distances share a rank) or a NaN — it returns dst unchanged and
// false, and the caller's sorted buffer decides. Otherwise every leaf
// outside is strictly farther than every one inside and no two inside are
// equal, so the result is routeFlat's (nearest first, ties by CID) bit for
// bit.
//
// The ranks come from vecmath.SmallestK when nprobe ≤ SmallestMaxK: only
// the few candidates at most its bound are ranked, and every other leaf
// is ranked at least their number (≥ nprobe), so it would go to the sink
// below and count nothing: the same outcome as ranking all n. On a NaN
// (or too many candidates), and above SmallestMaxK, every leaf is ranked
// (vecmath.RanksBelow, n²/16 vector compares).
func (s *routeScratch) selectByRank(n, nprobe int, dst []int32) ([]int32, bool) {
	s.slot = slices.Grow(s.slot[:0], nprobe+1)[:nprobe+1]
	if nprobe <= vecmath.SmallestMaxK && !noSmallestRoute.Load() && vecmath.SmallestK(s.dists[:n], nprobe, &s.sel) {
		return orderByRank(dst, s.sel.Rank[:s.sel.M], s.sel.Idx[:s.sel.M], nprobe, s.slot)
	}
	s.rank = slices.Grow(s.rank[:0], len(s.dists))[:len(s.dists)]
	vecmath.RanksBelow(s.dists, n, s.rank)
	return orderByRank(dst, s.rank[:n], nil, nprobe, s.slot)
}

// pruned reports whether a leaf at distance at least dq − r from q (the
// triangle inequality: dq = |q − root|, r = |leaf − root|) is certainly
// farther than worst, with a relative slack and an absolute one (tol) for
// the rounding of the dot-form distances.
func pruned(dq, r float64, worst float32, tol float64) bool {
	gap := dq - r
	if gap <= 0 {
		return false
	}
	return gap*gap*(1-routeSlack) > float64(worst)+tol
}

// codeRouteDim is the dimension from which leaf distances are computed
// from the LVQ8 codes (a quarter of the bytes), leaf by leaf with the
// triangle-inequality bound; below it the float32 reconstructions are small
// enough that the direct distance is cheaper (GloVe, 50 dims: the dot form
// cost about a third of the queries per CPU-second at nprobe 4), and every
// leaf of a visited root is computed in one batch call over the padded
// reconstructions (no per-leaf bound: a call and a bound test per leaf cost
// more than the distance).
const codeRouteDim = 128

// codeLeafDistance is |q − reconstruction(cid)|² computed, for Dim ≥
// codeRouteDim, from the LVQ8 code:
// |q|² + |x̂|² − 2(offset·Σq + scale·q·code), in float64 around one float32
// dot product (dot: the query's with leaf cid's code,
// vecmath.DotU8), clamped at 0. It equals the float32 distance to the
// reconstruction up to rounding (relative to |q|² + |x̂|², about 1e-6).
func (rt *router) codeLeafDistance(qn2, qsum float64, cid int, dot float32) float32 {
	c := rt.c
	dist := qn2 + rt.rn2[cid] - 2*(float64(c.Offsets[cid])*qsum+float64(c.Scales[cid])*float64(dot))
	return float32(max(dist, 0))
}

// route appends the nprobe nearest leaves to dst[:0], nearest first, and
// returns them with the number of routing distances computed (roots and
// leaves).
func (rt *router) route(q []float32, nprobe int, s *routeScratch, dst []int32) ([]int32, int) {
	c, d := rt.c, rt.c.Dim
	dst = dst[:0]
	nprobe = min(nprobe, c.NList)
	if nprobe < 1 {
		return dst, 0
	}
	want := max(nprobe, rt.opt.Factor*nprobe)
	if c.NList <= rt.exactNList {
		want = math.MaxInt
		if rt.flat {
			return rt.routeFlat(q, nprobe, s, dst), c.NList
		}
	}
	nr := c.NumRoots()
	s.rootD = slices.Grow(s.rootD[:0], nr)[:nr]
	lq := q // the query for the leaves' distances
	if d < codeRouteDim {
		s.qp = slices.Grow(s.qp[:0], rt.w)[:rt.w]
		copy(s.qp, q)
		clear(s.qp[d:])
		lq = s.qp
		vecmath.L2SqBatch(s.qp, rt.padRoot, rt.w, s.rootD)
	} else {
		vecmath.L2SqBatch(q, c.Roots, d, s.rootD)
	}
	// Sorted as keys (distance bits, root): a squared distance is never
	// negative (−0 is taken as 0), and the bits of non-negative float32s
	// order as the values do, then the root breaks ties.
	s.rootKeys = s.rootKeys[:0]
	for r, dist := range s.rootD {
		if dist == 0 {
			dist = 0
		}
		s.rootKeys = append(s.rootKeys, uint64(math.Float32bits(dist))<<32|uint64(r))
	}
	slices.Sort(s.rootKeys)
	s.roots = s.roots[:0]
	for _, k := range s.rootKeys {
		s.roots = append(s.roots, rootDist{math.Float32frombits(uint32(k >> 32)), int32(uint32(k))})
	}
	var qn2, qsum float64
	for _, x := range q {
		qn2 += float64(x) * float64(x)
		qsum += float64(x)
	}
	tol := distTol * (qn2 + rt.maxRn2)
	h := s.heap[:0] // max-heap of the nprobe best
	computed := 0
	for i, rd := range s.roots {
		if computed >= want && i >= rt.opt.MinRoots {
			break
		}
		dq := math.Sqrt(float64(rd.d))
		if len(h) == nprobe && pruned(dq, float64(rt.rootR[rd.r]), h[0].d, tol) {
			continue
		}
		lo, hi := int(c.CIDOffsets[rd.r]), int(c.CIDOffsets[rd.r+1])
		if rt.padLeaf != nil {
			// Small D: every leaf of the root in one batch call (cheaper
			// than a bound test and a call per leaf).
			w := rt.w
			s.dists = slices.Grow(s.dists[:0], hi-lo)[:hi-lo]
			vecmath.L2SqBatch(lq, rt.padLeaf[lo*w:hi*w], w, s.dists)
			computed += hi - lo
			for j, dist := range s.dists {
				l := leafDist{dist, int32(lo + j)}
				if len(h) < nprobe {
					h = append(h, l)
					siftUpLeaf(h, len(h)-1)
				} else if lessLeaf(l, h[0]) {
					h[0] = l
					siftDownLeaf(h, 0, false)
				}
			}
			continue
		}
		// The root's leaves by leafR descending (rt.ord): pruned is
		// monotone in leafR, so those that the bound as it stands now (it
		// only falls) does not prune are a prefix, found by bisection and
		// scored in one batch call (the same bits as one call per leaf,
		// vecmath.DotU8Batch). Leaves are then taken in that order.
		ord := rt.ord[lo:hi]
		p := len(ord)
		if len(h) == nprobe {
			p = sort.Search(len(ord), func(j int) bool {
				return pruned(dq, float64(rt.leafR[ord[j]]), h[0].d, tol)
			})
		}
		if p == 0 {
			continue
		}
		s.dots = slices.Grow(s.dots[:0], p)[:p]
		vecmath.DotU8Batch(lq, rt.ordCodes[lo*d:(lo+p)*d], d, s.dots)
		for j, cid := range ord[:p] {
			if len(h) == nprobe && pruned(dq, float64(rt.leafR[cid]), h[0].d, tol) {
				continue
			}
			computed++
			l := leafDist{rt.codeLeafDistance(qn2, qsum, int(cid), s.dots[j]), cid}
			if len(h) < nprobe {
				h = append(h, l)
				siftUpLeaf(h, len(h)-1)
			} else if lessLeaf(l, h[0]) {
				h[0] = l
				siftDownLeaf(h, 0, false)
			}
		}
	}
	slices.SortFunc(h, func(a, b leafDist) int {
		if lessLeaf(a, b) {
			return -1
		}
		if lessLeaf(b, a) {
			return 1
		}
		return 0
	})
	for _, l := range h {
		dst = append(dst, l.cid)
	}
	s.heap = h
	return dst, computed + nr
}

// routeFlat appends the nprobe (1 ≤ nprobe ≤ NList) nearest leaves of all
// C to dst, nearest first (ties: smaller CID), from one batch call over the
// padded reconstructions, kept by insertion into a sorted buffer of nprobe:
// leaves come in CID order, so a leaf at a distance equal to the worst kept
// one loses, and one equal to a kept one goes after it.
func (rt *router) routeFlat(q []float32, nprobe int, s *routeScratch, dst []int32) []int32 {
	n, w := rt.c.NList, rt.w
	if rt.blkLeaf != nil {
		m := blockRows(n)
		s.dists = slices.Grow(s.dists[:0], m)[:m]
		vecmath.L2SqBlocked(q, rt.blkLeaf, s.dists)
		if n <= rankRouteMax && !noRankRoute.Load() {
			if out, ok := s.selectByRank(n, nprobe, dst); ok {
				return out
			}
		}
		s.dists = s.dists[:n]
	} else {
		s.qp = slices.Grow(s.qp[:0], w)[:w]
		copy(s.qp, q)
		clear(s.qp[len(q):])
		s.dists = slices.Grow(s.dists[:0], n)[:n]
		vecmath.L2SqBatch(s.qp, rt.padLeaf, w, s.dists)
	}
	h := slices.Grow(s.heap[:0], nprobe)[:nprobe]
	for cid, dist := range s.dists[:nprobe] {
		j := cid
		for ; j > 0 && h[j-1].d > dist; j-- {
			h[j] = h[j-1]
		}
		h[j] = leafDist{dist, int32(cid)}
	}
	worst := h[nprobe-1].d
	for cid := nprobe; cid < n; cid++ {
		dist := s.dists[cid]
		if !(dist < worst) {
			continue
		}
		j := nprobe - 1
		for ; j > 0 && h[j-1].d > dist; j-- {
			h[j] = h[j-1]
		}
		h[j] = leafDist{dist, int32(cid)}
		worst = h[nprobe-1].d
	}
	for _, l := range h {
		dst = append(dst, l.cid)
	}
	s.heap = h
	return dst
}
