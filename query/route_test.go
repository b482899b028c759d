package query

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/parqdb/parqdb/internal/vecmath"
	"github.com/parqdb/parqdb/ivf"
	"github.com/parqdb/parqdb/lvq"
)

// referenceRoute is the two-stage rule that router.route refines, written
// plainly: rank all R roots by float32 squared L2 distance to q (ties:
// smaller root); visit them in that order until the visited roots own at
// least max(nprobe, Factor·nprobe) leaves and at least MinRoots roots were
// visited (or all roots are); rank the leaves of the visited roots (ties:
// smaller CID) and return the first min(nprobe, C).
func referenceRoute(c *ivf.Centroids, q []float32, nprobe int, opt routeBudget) []int32 {
	if nprobe < 1 {
		return nil
	}
	nprobe = min(nprobe, c.NList)
	want := max(nprobe, opt.Factor*nprobe)
	nr := c.NumRoots()
	rootD := make([]float32, nr)
	vecmath.L2SqBatch(q, c.Roots, c.Dim, rootD)
	roots := make([]int32, nr)
	for r := range roots {
		roots[r] = int32(r)
	}
	slices.SortFunc(roots, func(a, b int32) int { return cmp.Or(cmp.Compare(rootD[a], rootD[b]), cmp.Compare(a, b)) })
	var ranked []leafDist
	for i, r := range roots {
		if len(ranked) >= want && i >= opt.MinRoots {
			break
		}
		for cid := c.CIDOffsets[r]; cid < c.CIDOffsets[r+1]; cid++ {
			ranked = append(ranked, leafDist{vecmath.L2Sq(q, c.Leaf(cid)), cid})
		}
	}
	slices.SortFunc(ranked, func(a, b leafDist) int { return cmp.Or(cmp.Compare(a.d, b.d), cmp.Compare(a.cid, b.cid)) })
	out := make([]int32, 0, nprobe)
	for _, l := range ranked[:min(nprobe, len(ranked))] {
		out = append(out, l.cid)
	}
	return out
}

// testCentroids makes a valid hierarchy: nroots roots owning uneven,
// contiguous leaf ranges; leaves LVQ8-encoded from seeded points.
func testCentroids(t *testing.T, seed uint64, d, nroots, nlist int) *ivf.Centroids {
	r := rand.New(rand.NewPCG(seed, 1))
	c := &ivf.Centroids{Dim: d, NList: nlist, CIDOffsets: []int32{0}}
	for i := 1; i < nroots; i++ {
		c.CIDOffsets = append(c.CIDOffsets, int32(i*nlist/nroots+r.IntN(2)))
	}
	c.CIDOffsets = append(c.CIDOffsets, int32(nlist))
	c.Roots = make([]float32, nroots*d)
	for i := range c.Roots {
		c.Roots[i] = float32(r.NormFloat64() * 3)
	}
	c.Codes = make([]byte, nlist*d)
	for cid := 0; cid < nlist; cid++ {
		root := slices.IndexFunc(c.CIDOffsets[1:], func(o int32) bool { return int32(cid) < o })
		x := make([]float32, d)
		for j := range x {
			x[j] = c.Roots[root*d+j] + float32(r.NormFloat64())
		}
		o, s := lvq.Encode8(c.Codes[cid*d:(cid+1)*d], x)
		c.Offsets, c.Scales = append(c.Offsets, o), append(c.Scales, s)
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	return c
}

// exactLeaves ranks every leaf of c by the routing kernel's distance to q
// (ties: smaller CID) and returns the first nprobe with their distances.
func exactLeaves(c *ivf.Centroids, q []float32, nprobe int) ([]int32, []float32) {
	all := make([]leafDist, c.NList)
	out := make([]float32, 1)
	for cid := range c.NList {
		vecmath.L2SqBatch(q, c.Leaf(int32(cid)), c.Dim, out)
		all[cid] = leafDist{out[0], int32(cid)}
	}
	slices.SortFunc(all, func(a, b leafDist) int { return cmp.Or(cmp.Compare(a.d, b.d), cmp.Compare(a.cid, b.cid)) })
	all = all[:min(nprobe, c.NList)]
	cids, ds := make([]int32, len(all)), make([]float32, len(all))
	for i, l := range all {
		cids[i], ds[i] = l.cid, l.d
	}
	return cids, ds
}

func leafDists(c *ivf.Centroids, q []float32, cids []int32) []float32 {
	ds := make([]float32, len(cids))
	for i, cid := range cids {
		ds[i] = vecmath.L2Sq(q, c.Leaf(cid))
	}
	return ds
}

// rounding is the tolerance of a dot-form leaf distance for query q.
func rounding(rt *router, q []float32) float64 {
	var qn2 float64
	for _, x := range q {
		qn2 += float64(x) * float64(x)
	}
	return distTol * (qn2 + rt.maxRn2)
}

// TestRouterExact: with nlist ≤ exactNList (the default: every index) the
// router returns the nprobe nearest leaves of all C — position by position
// at the brute-force float32 distance to the reconstruction, up to the
// dot form's rounding (distTol) — whatever the budget, while pruning computes fewer distances than C on clustered
// centroids; above exactNList (budgeted) its i-th leaf is never farther
// than the i-th leaf of referenceRoute with the same budget (it
// descends at least as far, and pruning drops only leaves that cannot
// rank).
func TestRouterExact(t *testing.T) {
	for _, tc := range []struct{ d, roots, nlist int }{{16, 5, 60}, {50, 10, 100}, {33, 31, 980}, {160, 40, 1600}, {256, 20, 400}} {
		c := testCentroids(t, uint64(tc.d), tc.d, tc.roots, tc.nlist)
		r := rand.New(rand.NewPCG(5, 5))
		for _, exact := range []bool{true, false} {
			rt := newRouter(c, routeOptions)
			rt.flat = false // TestRouteFlat compares the flat routing with this
			if exact {
				rt.exactNList = tc.nlist
			} else {
				rt.exactNList = 0
			}
			var s routeScratch
			var computed, calls int
			for qi := 0; qi < 200; qi++ {
				q := make([]float32, tc.d)
				for j := range q {
					q[j] = float32(r.NormFloat64() * 3)
				}
				if qi%3 == 0 { // near a root, as real queries are
					root := r.IntN(tc.roots)
					for j := range q {
						q[j] = c.Roots[root*tc.d+j] + float32(r.NormFloat64())
					}
				}
				if qi%17 == 0 { // exact ties: a query on a leaf
					copy(q, c.Leaf(int32(qi%tc.nlist)))
				}
				for _, np := range []int{1, 3, 8, 40, tc.nlist + 5} {
					got, n := rt.route(q, np, &s, nil)
					computed += n
					calls++
					tol := rounding(rt, q)
					if len(slices.Compact(slices.Sorted(slices.Values(got)))) != len(got) {
						t.Fatalf("nlist %d query %d nprobe %d: duplicate leaves %v", tc.nlist, qi, np, got)
					}
					if exact {
						want, wd := exactLeaves(c, q, np)
						gd := leafDists(c, q, got)
						if len(got) != len(want) {
							t.Fatalf("d %d nlist %d query %d nprobe %d: %d leaves, want %d", tc.d, tc.nlist, qi, np, len(got), len(want))
						}
						for i := range gd {
							if math.Abs(float64(gd[i])-float64(wd[i])) > tol {
								t.Fatalf("d %d nlist %d query %d nprobe %d: leaf %d is %d at %g, exact %d at %g", tc.d, tc.nlist, qi, np, i, got[i], gd[i], want[i], wd[i])
							}
						}
						continue
					}
					ref := referenceRoute(c, q, np, routeOptions)
					gd, rd := leafDists(c, q, got), leafDists(c, q, ref)
					if len(gd) != len(rd) {
						t.Fatalf("nlist %d query %d nprobe %d: %d leaves, referenceRoute %d", tc.nlist, qi, np, len(gd), len(rd))
					}
					for i := range gd {
						if float64(gd[i]) > float64(rd[i])+tol {
							t.Fatalf("nlist %d query %d nprobe %d: leaf %d at %g, referenceRoute's at %g", tc.nlist, qi, np, i, gd[i], rd[i])
						}
					}
				}
			}
			if exact && !rt.flat && computed >= calls*tc.nlist {
				t.Errorf("nlist %d: %d distances in %d routings: no leaf pruned", tc.nlist, computed, calls)
			}
		}
	}
}

// TestPruneBound: the bound never prunes a leaf closer than worst, and
// prunes one clearly farther.
func TestPruneBound(t *testing.T) {
	for _, tc := range []struct {
		dq, r float64
		worst float32
		want  bool
	}{
		{10, 2, 63, true},     // gap 8: 64 > 63
		{10, 2, 64, false},    // equal: kept
		{10, 2, 64.01, false}, // within the slack
		{2, 10, 0, false},     // query inside the ball
		{10, 10, 0, false},
	} {
		if got := pruned(tc.dq, tc.r, tc.worst, 0); got != tc.want {
			t.Errorf("pruned(%g, %g, %g) = %v, want %v", tc.dq, tc.r, tc.worst, got, tc.want)
		}
	}
	if pruned(10, 2, 63, 1) {
		t.Error("pruned(10, 2, 63, tol 1): the absolute tolerance is ignored")
	}
}

// TestRouteFlat: small-D routing over every leaf in one call (routeFlat)
// with the row kernel over the padded leaves returns the same leaves in
// the same order as the pruned descent over the roots, including exact
// ties (duplicated leaves, queries on a leaf), at every nprobe up to past
// nlist, and counts nlist distances; with the blocked kernel (another sum
// order) its i-th leaf is at the descent's i-th distance up to rounding.
func TestRouteFlat(t *testing.T) {
	for _, tc := range []struct{ d, roots, nlist int }{{16, 5, 60}, {50, 10, 100}, {33, 16, 256}, {127, 3, 7}, {1, 2, 40}} {
		c := testCentroids(t, uint64(tc.d)+7, tc.d, tc.roots, tc.nlist)
		// Exact ties: every fifth leaf copies its predecessor's code.
		for cid := 5; cid < tc.nlist; cid += 5 {
			copy(c.Codes[cid*tc.d:(cid+1)*tc.d], c.Codes[(cid-1)*tc.d:cid*tc.d])
			c.Offsets[cid], c.Scales[cid] = c.Offsets[cid-1], c.Scales[cid-1]
		}
		for _, blocked := range []bool{false, true} {
			flat := newRouter(c, routeOptions)
			if !flat.flat {
				t.Fatalf("d %d nlist %d: not routed flat", tc.d, tc.nlist)
			}
			if blocked && flat.blkLeaf == nil {
				flat.blkLeaf = make([]float32, blockRows(tc.nlist)*tc.d)
				vecmath.BlockF32(flat.blkLeaf, flat.leaves, tc.d)
			} else if !blocked {
				flat.blkLeaf = nil
			}
			tree := newRouter(c, routeOptions)
			tree.flat = false
			r := rand.New(rand.NewPCG(9, uint64(tc.nlist)))
			var s1, s2 routeScratch
			for qi := range 150 {
				q := make([]float32, tc.d)
				for j := range q {
					q[j] = float32(r.NormFloat64() * 3)
				}
				if qi%4 == 0 {
					copy(q, c.Leaf(int32(r.IntN(tc.nlist))))
				}
				for _, np := range []int{1, 2, 5, 12, 33, tc.nlist - 1, tc.nlist, tc.nlist + 3} {
					if np < 1 {
						continue
					}
					got, n := flat.route(q, np, &s1, nil)
					want, _ := tree.route(q, np, &s2, nil)
					if n != tc.nlist {
						t.Fatalf("flat routing counted %d distances, want %d", n, tc.nlist)
					}
					if !blocked {
						if !slices.Equal(got, want) {
							t.Fatalf("d %d nlist %d query %d nprobe %d: flat %v, descent %v", tc.d, tc.nlist, qi, np, got, want)
						}
						continue
					}
					if len(got) != len(want) || len(slices.Compact(slices.Sorted(slices.Values(got)))) != len(got) {
						t.Fatalf("d %d nlist %d query %d nprobe %d: blocked flat %v, descent %v", tc.d, tc.nlist, qi, np, got, want)
					}
					gd, wd := leafDists(c, q, got), leafDists(c, q, want)
					tol := rounding(flat, q)
					for i := range gd {
						if math.Abs(float64(gd[i])-float64(wd[i])) > tol {
							t.Fatalf("d %d nlist %d query %d nprobe %d: leaf %d is %d at %g, descent's %d at %g", tc.d, tc.nlist, qi, np, i, got[i], gd[i], want[i], wd[i])
						}
					}
				}
			}
		}
	}
}

// BenchmarkRouteFlat routes queries over 100 leaves of 50 dimensions (the
// GloVe sample's shape) at nprobe 12, flat and by the descent.
func BenchmarkRouteFlat(b *testing.B) {
	c := testCentroids(&testing.T{}, 50, 50, 10, 100)
	r := rand.New(rand.NewPCG(1, 2))
	qs := make([][]float32, 64)
	for i := range qs {
		qs[i] = make([]float32, 50)
		for j := range qs[i] {
			qs[i][j] = float32(r.NormFloat64() * 3)
		}
	}
	for _, mode := range []string{"flat", "flat-rank-all", "flat-buffer", "descent"} {
		rt := newRouter(c, routeOptions)
		rt.flat = mode != "descent"
		b.Run(mode, func(b *testing.B) {
			// flat: by rank with AVX-512, from vecmath.SmallestK's
			// candidates; flat-rank-all: every leaf ranked
			noRankRoute.Store(mode == "flat-buffer")
			noSmallestRoute.Store(mode == "flat-rank-all")
			defer noRankRoute.Store(false)
			defer noSmallestRoute.Store(false)
			var s routeScratch
			var dst []int32
			i := 0
			for b.Loop() {
				dst, _ = rt.route(qs[i%len(qs)], 12, &s, dst)
				i++
			}
		})
	}
}

// TestRouteRankSameResults: routeFlat's selection by rank (selectByRank)
// returns the sorted buffer's leaves in its order, with exact ties between
// leaves (where it must give way to the buffer), queries on a leaf, and
// nprobe from 1 to NList; and it does decide most queries itself.
func TestRouteRankSameResults(t *testing.T) {
	if !vecmath.FastBlocked() {
		t.Skip("selection by rank is used only with the blocked kernels (AVX-512)")
	}
	decided, asked := 0, 0
	for _, tc := range []struct{ d, roots, nlist int }{{16, 5, 60}, {50, 10, 100}, {33, 16, 128}, {127, 3, 7}, {1, 2, 40}, {8, 4, 200}} {
		c := testCentroids(t, uint64(tc.d)+11, tc.d, tc.roots, tc.nlist)
		for cid := 7; cid < tc.nlist; cid += 7 { // exact ties
			copy(c.Codes[cid*tc.d:(cid+1)*tc.d], c.Codes[(cid-1)*tc.d:cid*tc.d])
			c.Offsets[cid], c.Scales[cid] = c.Offsets[cid-1], c.Scales[cid-1]
		}
		rt := newRouter(c, routeOptions)
		if !rt.flat || rt.blkLeaf == nil {
			t.Fatalf("d %d nlist %d: not routed flat and blocked", tc.d, tc.nlist)
		}
		r := rand.New(rand.NewPCG(10, uint64(tc.nlist)))
		var s1, s2 routeScratch
		for qi := range 150 {
			q := make([]float32, tc.d)
			for j := range q {
				q[j] = float32(r.NormFloat64() * 3)
			}
			if qi%4 == 0 {
				copy(q, c.Leaf(int32(r.IntN(tc.nlist))))
			}
			for _, np := range []int{1, 2, 5, 12, 33, tc.nlist - 1, tc.nlist} {
				if np < 1 || np > tc.nlist {
					continue
				}
				got, _ := rt.route(q, np, &s1, nil)
				noRankRoute.Store(true)
				want, _ := rt.route(q, np, &s2, nil)
				noRankRoute.Store(false)
				if !slices.Equal(got, want) {
					t.Fatalf("d %d nlist %d query %d nprobe %d: by rank %v, sorted buffer %v", tc.d, tc.nlist, qi, np, got, want)
				}
				if tc.nlist > rankRouteMax {
					continue
				}
				// selectByRank itself: when it decides, the buffer's answer.
				m := blockRows(tc.nlist)
				s1.dists = slices.Grow(s1.dists[:0], m)[:m]
				vecmath.L2SqBlocked(q, rt.blkLeaf, s1.dists)
				out, ok := s1.selectByRank(tc.nlist, np, nil)
				asked++
				if ok {
					decided++
					if !slices.Equal(out, want) {
						t.Fatalf("d %d nlist %d query %d nprobe %d: selectByRank %v, sorted buffer %v", tc.d, tc.nlist, qi, np, out, want)
					}
				}
			}
		}
	}
	if decided*4 < asked { // ties every 7th leaf send many to the buffer
		t.Fatalf("selectByRank decided %d of %d selections", decided, asked)
	}
	t.Logf("selectByRank decided %d of %d selections", decided, asked)
}
