package query

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/parqdb/parqdb/ivf"
	"github.com/parqdb/parqdb/lvq"
)

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

func TestRouterMatchesRouteWith(t *testing.T) {
	for _, tc := range []struct{ d, roots, nlist int }{{16, 5, 60}, {50, 10, 100}, {33, 31, 980}} {
		c := testCentroids(t, uint64(tc.d), tc.d, tc.roots, tc.nlist)
		r := rand.New(rand.NewPCG(5, 5))
		for _, opt := range []ivf.RouteOptions{routeOptions, ivf.DefaultRouteOptions, {Factor: 1, MinRoots: 1}} {
			rt := newRouter(c, opt)
			var s routeScratch
			for qi := 0; qi < 200; qi++ {
				q := make([]float32, tc.d)
				for j := range q {
					q[j] = float32(r.NormFloat64() * 3)
				}
				if qi%17 == 0 { // exact ties: a query on a leaf
					copy(q, c.Leaf(int32(qi%tc.nlist)))
				}
				for _, np := range []int{1, 3, 8, 40, tc.nlist + 5} {
					want, wn := c.RouteWith(q, np, opt, nil)
					got, gn := rt.route(q, np, &s, nil)
					if !slices.Equal(got, want) || gn != wn {
						t.Fatalf("d %d nlist %d %+v query %d nprobe %d: router %v (%d distances), RouteWith %v (%d)", tc.d, tc.nlist, opt, qi, np, got, gn, want, wn)
					}
				}
			}
		}
	}
}
