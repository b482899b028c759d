package ivf

import (
	"context"
	"math"
	"math/rand/v2"
	"sync"

	"golang.org/x/sync/errgroup"

	"github.com/parqdb/parqdb/internal/vecmath"
)

// kmeans is seeded Lloyd k-means used by training. Training need not be
// exact, so distances are float32 (‖c‖² − 2x·c via vecmath.DotBatch);
// determinism holds because every per-row result is computed the same way
// whatever the number of workers, and every reduction (centroid sums, the
// k-means++ weight total) runs sequentially in row order in float64.
type kmeans struct {
	data    []float32 // n*dim
	n, dim  int
	k       int
	iters   int
	seed    uint64
	stream  uint64
	workers int
	tick    func(n int) // called with 1 after each Lloyd iteration (with the unused rest of the budget on an early stop); may be nil

	centroids []float32 // k*dim
	labels    []int32
	counts    []int
	dist      []float32 // squared distance of each row to its centroid
	xx        []float32 // ‖x‖² per row
	packed    []float32 // data packed once for gemmDots (packRows layout)
	reseeded  int       // empty clusters re-seeded
}

// chunkRows is the fixed row partition of parallel loops: results never
// depend on it, it only bounds task granularity.
const chunkRows = 1024

// parallelRows runs fn on [lo, hi) row ranges on up to workers goroutines.
func parallelRows(ctx context.Context, n, workers int, fn func(lo, hi int)) error {
	if workers <= 1 || n <= chunkRows {
		if err := ctx.Err(); err != nil {
			return err
		}
		fn(0, n)
		return nil
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(workers)
	for lo := 0; lo < n; lo += chunkRows {
		hi := min(lo+chunkRows, n)
		g.Go(func() error {
			if err := gctx.Err(); err != nil {
				return err
			}
			fn(lo, hi)
			return nil
		})
	}
	return g.Wait()
}

func (km *kmeans) row(i int) []float32 { return km.data[i*km.dim : (i+1)*km.dim] }

// run trains: k-means++ initialisation, then up to iters Lloyd iterations
// (see lloyd). On return labels, counts and dist match centroids.
func (km *kmeans) run(ctx context.Context) error {
	km.centroids = make([]float32, km.k*km.dim)
	km.labels = make([]int32, km.n)
	km.counts = make([]int, km.k)
	km.dist = make([]float32, km.n)
	km.xx = make([]float32, km.n)
	for i := range km.n {
		km.xx[i] = vecmath.Dot(km.row(i), km.row(i))
	}
	km.packed = packRows(nil, km.data, km.n, km.dim)
	defer func() { km.packed = nil }()
	if err := km.initPlusPlus(ctx); err != nil {
		return err
	}
	if _, err := km.assign(ctx); err != nil {
		return err
	}
	return km.lloyd(ctx, km.iters)
}

// lloyd runs up to iters Lloyd iterations — update the centroids, re-seed
// empty clusters, reassign — stopping early when no label changed and
// nothing was re-seeded. labels, counts and dist must match centroids on
// entry and do again on return.
func (km *kmeans) lloyd(ctx context.Context, iters int) error {
	for it := range iters {
		km.update()
		reseeded := km.reseedEmpty()
		changed, err := km.assign(ctx)
		if err != nil {
			return err
		}
		stop := !changed && !reseeded
		if km.tick != nil {
			// An early stop counts the unused iterations as done, so
			// that progress moves evenly towards its total.
			n := 1
			if stop {
				n = iters - it
			}
			km.tick(n)
		}
		if stop {
			break
		}
	}
	return nil
}

// empty returns the number of clusters without rows.
func (km *kmeans) empty() int {
	n := 0
	for _, c := range km.counts {
		if c == 0 {
			n++
		}
	}
	return n
}

// initPlusPlus is k-means++ seeding (Arthur & Vassilvitskii): the first
// centroid is a uniformly random row, each next one a row drawn with
// probability proportional to its squared distance to the nearest chosen
// centroid. When every remaining weight is zero (duplicates) the next row is
// drawn uniformly. The generator is PCG(seed, stream).
func (km *kmeans) initPlusPlus(ctx context.Context) error {
	rng := rand.New(rand.NewPCG(km.seed, km.stream))
	first := rng.IntN(km.n)
	copy(km.centroids[:km.dim], km.row(first))
	minD := km.dist // reused as the weight array
	cur := km.centroids[:km.dim]
	if err := parallelRows(ctx, km.n, km.workers, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			minD[i] = vecmath.L2Sq(km.row(i), cur)
		}
	}); err != nil {
		return err
	}
	for c := 1; c < km.k; c++ {
		var total float64
		for _, w := range minD {
			total += float64(w)
		}
		pick := -1
		if total > 0 && !math.IsInf(total, 0) {
			target := rng.Float64() * total
			var acc float64
			for i, w := range minD {
				acc += float64(w)
				if acc > target && w > 0 {
					pick = i
					break
				}
			}
			if pick < 0 { // rounding at the end of the walk
				for i := km.n - 1; i >= 0; i-- {
					if minD[i] > 0 {
						pick = i
						break
					}
				}
			}
		}
		if pick < 0 {
			pick = rng.IntN(km.n)
		}
		cur := km.centroids[c*km.dim : (c+1)*km.dim]
		copy(cur, km.row(pick))
		if c == km.k-1 {
			break
		}
		if err := parallelRows(ctx, km.n, km.workers, func(lo, hi int) {
			for i := lo; i < hi; i++ {
				minD[i] = min(minD[i], vecmath.L2Sq(km.row(i), cur))
			}
		}); err != nil {
			return err
		}
	}
	return nil
}

// assign labels every row with its nearest centroid (ties to the smaller
// index) and reports whether any label changed. Distances come from the
// GEMM kernel: ‖c‖² − 2x·c in float64 from the kernel's blocked dot
// products, which depend only on the row and the centroid, never on the
// row's position in a block or on the worker that computed it.
func (km *kmeans) assign(ctx context.Context) (bool, error) {
	d := km.dim
	cn := make([]float64, km.k)
	for j := range km.k {
		cn[j] = normSq64(km.centroids[j*d : (j+1)*d])
	}
	panels := packPanels(nil, km.centroids, km.k, d)
	kpad := len(panels) / d
	nChunks := (km.n + chunkRows - 1) / chunkRows
	changedChunk := make([]bool, nChunks)
	err := parallelRows(ctx, km.n, km.workers, func(lo, hi int) {
		var apack []float32
		var dots []float64
		for blo := lo; blo < hi; blo += blockRows {
			bhi := min(blo+blockRows, hi)
			if km.packed != nil { // blo is a multiple of gemmRows
				apack = km.packed[blo*d : roundUp(bhi, gemmRows)*d]
			} else {
				apack = packRows(apack, km.data[blo*d:bhi*d], bhi-blo, d)
			}
			dots = gemmDots(apack, panels, d, dots)
			for i := blo; i < bhi; i++ {
				row := dots[(i-blo)*kpad : (i-blo)*kpad+km.k]
				best, bestJ := math.Inf(1), int32(0)
				for j, dt := range row {
					if s := cn[j] - 2*dt; s < best {
						best, bestJ = s, int32(j)
					}
				}
				if km.labels[i] != bestJ {
					changedChunk[i/chunkRows] = true
					km.labels[i] = bestJ
				}
				km.dist[i] = float32(max(0, float64(km.xx[i])+best))
			}
		}
	})
	if err != nil {
		return false, err
	}
	clear(km.counts)
	for _, l := range km.labels {
		km.counts[l]++
	}
	for _, ch := range changedChunk {
		if ch {
			return true, nil
		}
	}
	return false, nil
}

// update sets every non-empty centroid to the mean of its rows, summed in
// float64 in row order. With several workers each sums a range of
// dimensions (every sum still runs over the rows in order, so the result
// does not depend on the number of workers).
func (km *kmeans) update() {
	d := km.dim
	sums := make([]float64, km.k*d)
	sumDims := func(t0, t1 int) {
		for i := range km.n {
			l := int(km.labels[i])
			addWiden(sums[l*d+t0:l*d+t1], km.data[i*d+t0:i*d+t1])
		}
	}
	w := min(km.workers, d)
	if w <= 1 || km.n*d < 1<<20 {
		sumDims(0, d)
	} else {
		var wg sync.WaitGroup
		for p := range w {
			wg.Go(func() { sumDims(p*d/w, (p+1)*d/w) })
		}
		wg.Wait()
	}
	for j := range km.k {
		if km.counts[j] == 0 {
			continue
		}
		inv := 1 / float64(km.counts[j])
		c := km.centroids[j*d : (j+1)*d]
		for t := range c {
			c[t] = float32(sums[j*d+t] * inv)
		}
	}
}

// reseedEmpty re-seeds every empty cluster (ascending index) by splitting
// the most populous cluster that still has a row at positive distance from
// its centroid (ties to the smaller index): the empty centroid moves to that
// cluster's farthest row (ties to the smaller row). Each donor gives at most
// one row per call. It reports whether any cluster was re-seeded.
func (km *kmeans) reseedEmpty() bool {
	empty := false
	for _, c := range km.counts {
		if c == 0 {
			empty = true
			break
		}
	}
	if !empty {
		return false
	}
	far := make([]int, km.k)
	farD := make([]float32, km.k)
	for j := range far {
		far[j] = -1
	}
	for i, l := range km.labels {
		if d := km.dist[i]; d > 0 && (far[l] < 0 || d > farD[l]) {
			far[l], farD[l] = i, d
		}
	}
	did := false
	for j := range km.k {
		if km.counts[j] != 0 {
			continue
		}
		donor := -1
		for t := range km.k {
			if far[t] >= 0 && (donor < 0 || km.counts[t] > km.counts[donor]) {
				donor = t
			}
		}
		if donor < 0 || km.counts[donor] < 2 {
			break
		}
		copy(km.centroids[j*km.dim:(j+1)*km.dim], km.row(far[donor]))
		km.counts[donor]--
		km.counts[j] = 1
		far[donor] = -1
		km.reseeded++
		did = true
	}
	return did
}
