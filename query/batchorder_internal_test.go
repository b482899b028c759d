package query

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/parqdb/parqdb/internal/vecmath"
	"github.com/parqdb/parqdb/metadata"
)

// TestBatchOrder: SearchBatch's chunk order is a permutation of the
// batch's positions, the identity for one chunk, else grouped by nearest
// root (each query's root is its nearest by the router's distances, the
// roots never decrease along the order, positions increase within a
// root), with a query Search would refuse counted as root 0's.
func TestBatchOrder(t *testing.T) {
	const d, nroots, nlist = 20, 7, 70
	c := testCentroids(t, 21, d, nroots, nlist)
	for _, metric := range []string{metadata.MetricL2Squared, metadata.MetricCosine} {
		ix := &Index{router: newRouter(c, routeOptions), snap: &metadata.Snapshot{Metric: metric}}
		r := rand.New(rand.NewPCG(2, 2))
		qs := make([][]float32, 300)
		for i := range qs {
			root := r.IntN(nroots)
			q := make([]float32, d)
			for j := range q {
				q[j] = c.Roots[root*d+j] + float32(r.NormFloat64()*0.3)
			}
			qs[i] = q
		}
		qs[17] = qs[17][:d-1]           // wrong dimension
		qs[250] = slices.Clone(qs[250]) // NaN
		qs[250][3] = float32(math.NaN())

		if got := ix.batchOrder(context.Background(), qs, 2, len(qs)); !slices.Equal(got, identity(len(qs))) {
			t.Fatalf("%s: one chunk: order %v, want the positions", metric, got)
		}
		got := ix.batchOrder(context.Background(), qs, 2, 100)
		if !slices.Equal(slices.Sorted(slices.Values(got)), identity(len(qs))) {
			t.Fatalf("%s: order %v is not a permutation", metric, got)
		}
		nearest := func(p int32) int {
			q := qs[p]
			if len(q) != d || p == 250 {
				return 0
			}
			if metric == metadata.MetricCosine {
				var ss float64
				for _, v := range q {
					ss += float64(v) * float64(v)
				}
				u := make([]float32, d)
				for j, v := range q {
					u[j] = float32(float64(v) / math.Sqrt(ss))
				}
				q = u
			}
			best, bd := 0, float32(math.Inf(1))
			for root := range nroots {
				if v := vecmath.L2Sq(q, c.Roots[root*d:(root+1)*d]); v < bd {
					best, bd = root, v
				}
			}
			return best
		}
		roots := map[int]bool{}
		for i, p := range got {
			roots[nearest(p)] = true
			if i == 0 {
				continue
			}
			a, b := nearest(got[i-1]), nearest(p)
			if a > b || (a == b && got[i-1] > p) {
				t.Fatalf("%s: order position %d: query %d (root %d) after %d (root %d)", metric, i, p, b, got[i-1], a)
			}
		}
		if metric == metadata.MetricL2Squared && len(roots) < nroots/2 { // (the roots are not unit vectors: under cosine a few are nearest to all)
			t.Fatalf("%s: the queries' nearest roots are %v: the test's queries are not spread", metric, roots)
		}
	}
}

func identity(n int) []int32 {
	p := make([]int32, n)
	for i := range p {
		p[i] = int32(i)
	}
	return p
}
