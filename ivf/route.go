package ivf

import (
	"cmp"
	"math"
	"slices"
	"sync"

	"github.com/parqdb/parqdb/internal/vecmath"
)

// RouteOptions tunes how far Route descends the hierarchy.
type RouteOptions struct {
	// Factor: roots are visited nearest first until their leaves number at
	// least Factor·nprobe (and MinRoots roots were visited); 0 selects
	// DefaultRouteOptions.Factor.
	Factor int
	// MinRoots is the least number of roots visited (clamped to R); 0
	// selects DefaultRouteOptions.MinRoots.
	MinRoots int
}

// DefaultRouteOptions is what Route uses. On the GloVe sample test
// (nlist 100–400) these found the exact nprobe nearest leaves for the large
// majority of queries (docs/ivf.md lists measured overlaps).
var DefaultRouteOptions = RouteOptions{Factor: 4, MinRoots: 3}

type routeScratch struct {
	rootD  []float32
	roots  []int32
	leafD  []float32
	ranked []rankedLeaf
}

type rankedLeaf struct {
	d   float32
	cid int32
}

var routePool sync.Pool // *routeScratch

// Route returns the nprobe leaves nearest to q, nearest first, appended to
// dst[:0]: RouteWith with DefaultRouteOptions. It is safe for concurrent
// use. See RouteWith for the rule.
func (c *Centroids) Route(q []float32, nprobe int, dst []int32) []int32 {
	cids, _ := c.RouteWith(q, nprobe, DefaultRouteOptions, dst)
	return cids
}

// RouteWith routes query q from roots to leaves on the persisted
// representations (dense roots, LVQ8 leaf reconstructions), with float32
// squared-L2 distances:
//
//  1. rank all R roots by distance to q (ties: smaller root);
//  2. visit roots in that order until the visited roots own at least
//     max(nprobe, Factor·nprobe) leaves and at least MinRoots roots were
//     visited (or all roots are);
//  3. rank the leaves of the visited roots by distance (ties: smaller cid)
//     and return the first min(nprobe, C) of them, appended to dst[:0].
//
// It also returns the number of leaf distances computed. q must have Dim
// finite elements (it panics on a length mismatch; NaN distances sort
// last). nprobe < 1 returns an empty list. Safe for concurrent use.
func (c *Centroids) RouteWith(q []float32, nprobe int, opt RouteOptions, dst []int32) ([]int32, int) {
	if len(q) != c.Dim {
		panic("ivf: Route dimension mismatch")
	}
	dst = dst[:0]
	if nprobe < 1 {
		return dst, 0
	}
	p := c.prepared()
	factor := cmp0(opt.Factor, DefaultRouteOptions.Factor)
	minRoots := cmp0(opt.MinRoots, DefaultRouteOptions.MinRoots)
	nprobe = min(nprobe, c.NList)
	want := max(nprobe, factor*nprobe)
	nr := c.NumRoots()

	s, _ := routePool.Get().(*routeScratch)
	if s == nil {
		s = &routeScratch{}
	}
	defer routePool.Put(s)
	s.rootD = slices.Grow(s.rootD[:0], nr)[:nr]
	vecmath.L2SqBatch(q, c.Roots, c.Dim, s.rootD)
	s.roots = s.roots[:0]
	for r := range nr {
		s.roots = append(s.roots, int32(r))
	}
	slices.SortFunc(s.roots, func(a, b int32) int {
		return cmp.Or(cmpDist(s.rootD[a], s.rootD[b]), cmp.Compare(a, b))
	})
	s.ranked = s.ranked[:0]
	for i, r := range s.roots {
		if len(s.ranked) >= want && i >= minRoots {
			break
		}
		lo, hi := int(c.CIDOffsets[r]), int(c.CIDOffsets[r+1])
		s.leafD = slices.Grow(s.leafD[:0], hi-lo)[:hi-lo]
		vecmath.L2SqBatch(q, p.leaves[lo*c.Dim:hi*c.Dim], c.Dim, s.leafD)
		for j, d := range s.leafD {
			s.ranked = append(s.ranked, rankedLeaf{d, int32(lo + j)})
		}
	}
	computed := len(s.ranked)
	slices.SortFunc(s.ranked, func(a, b rankedLeaf) int {
		return cmp.Or(cmpDist(a.d, b.d), cmp.Compare(a.cid, b.cid))
	})
	for _, l := range s.ranked[:min(nprobe, len(s.ranked))] {
		dst = append(dst, l.cid)
	}
	return dst, computed
}

// cmpDist orders distances ascending with NaN last.
func cmpDist(a, b float32) int {
	an, bn := math.IsNaN(float64(a)), math.IsNaN(float64(b))
	switch {
	case an && bn:
		return 0
	case an:
		return 1
	case bn:
		return -1
	}
	return cmp.Compare(a, b)
}
