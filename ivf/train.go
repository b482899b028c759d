package ivf

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"

	"golang.org/x/sync/errgroup"

	"github.com/parqdb/parqdb/internal/vecmath"
	"github.com/parqdb/parqdb/lvq"
)

// Training defaults.
const (
	// DefaultIterations is the Lloyd iteration bound of every k-means run
	// when TrainConfig.Iterations is 0.
	DefaultIterations = 20
	// rootRecoveryRounds bounds the recovery of empty roots: each round
	// re-seeds every empty root by splitting the most populous one and runs
	// more Lloyd iterations; after this many rounds the flat fallback runs.
	rootRecoveryRounds = 3
	// maxSampleRows bounds the training sample so that the exact integer
	// arithmetic of the leaf allocation cannot overflow.
	maxSampleRows = math.MaxInt32
)

// TrainConfig configures Train. The zero value of every optional field
// selects its documented default.
type TrainConfig struct {
	// NList is the number of leaf centroids C (required, ≥ 1, ≤ the number
	// of sample rows).
	NList int
	// Roots is the number of root centroids R requested; 0 selects
	// DefaultRoots(NList). It is clamped to NList. The trained value may be
	// smaller after the flat fallback (TrainReport.Roots).
	Roots int
	// Seed seeds every random choice; equal samples, configurations and
	// seeds give byte-identical Centroids whatever Workers is.
	Seed uint64
	// Iterations bounds the Lloyd iterations of each k-means run
	// (0 selects DefaultIterations).
	Iterations int
	// Workers is the number of goroutines used (0 or 1: the calling
	// goroutine only). It changes speed, never the result.
	Workers int
	// Progress, if non-nil, is called after every Lloyd iteration with the
	// iterations done and the total (calls are serialised; done never
	// decreases and never exceeds total). A k-means run that converges
	// early counts its unused iterations as done. The first total is
	// ProgressTotal(); it grows if empty-root recovery or the flat
	// fallback runs more iterations. A final call has done == total.
	Progress func(done, total int)
}

// ProgressTotal is the iteration budget Train reports as its first
// Progress total: Iterations (default DefaultIterations) Lloyd iterations
// for the root k-means and for each root's leaf k-means, plus the rounds of
// boundary refinement when there is more than one root. A caller can size
// a progress display with it before training starts.
func (cfg TrainConfig) ProgressTotal() int {
	roots := min(cmp0(cfg.Roots, DefaultRoots(cfg.NList)), cfg.NList)
	total := cmp0(cfg.Iterations, DefaultIterations) * (roots + 1)
	if roots > 1 {
		total += refineRounds
	}
	return total
}

// DefaultRoots returns the default root count for nlist leaves:
// round(√nlist), at least 1.
func DefaultRoots(nlist int) int {
	return max(1, int(math.Round(math.Sqrt(float64(nlist)))))
}

// Validate reports every invalid field of cfg at once; errors wrap
// ErrInvalidConfig and name the field.
func (cfg TrainConfig) Validate() error {
	var errs []error
	if cfg.NList < 1 || cfg.NList > math.MaxInt32 {
		errs = append(errs, fmt.Errorf("%w: NList %d outside [1, 2147483647]", ErrInvalidConfig, cfg.NList))
	}
	if cfg.Roots < 0 {
		errs = append(errs, fmt.Errorf("%w: Roots %d is negative", ErrInvalidConfig, cfg.Roots))
	}
	if cfg.Iterations < 0 {
		errs = append(errs, fmt.Errorf("%w: Iterations %d is negative", ErrInvalidConfig, cfg.Iterations))
	}
	if cfg.Workers < 0 {
		errs = append(errs, fmt.Errorf("%w: Workers %d is negative", ErrInvalidConfig, cfg.Workers))
	}
	return errors.Join(errs...)
}

// TrainReport describes how training went.
type TrainReport struct {
	// Roots is the number of roots R of the result.
	Roots int
	// Flat reports that the hierarchy could not keep every root non-empty
	// and the warned flat fallback produced the result (ivf-index-schema
	// §5): flat k-means with C leaves, a hierarchy synthesised by k-means of
	// the leaves, leaves reordered by root.
	Flat bool
	// Warnings holds human-readable warnings (the flat fallback, leaves
	// that stayed empty because the sample has too few distinct rows).
	Warnings []string
	// EmptyRecovered counts empty clusters (roots or leaves) re-seeded
	// during training.
	EmptyRecovered int
}

// Train runs clustering profile 1 (docs/ivf.md, "Training") on sample, n
// rows of dim floats stored contiguously (n = len(sample)/dim), and returns
// validated Centroids. For the cosine metric the caller normalises the
// sample first; the centroids are means of the rows and are not
// renormalised.
//
//  1. Root k-means: k-means++ then Lloyd with R clusters on the whole sample.
//  2. Empty roots: up to 3 recovery rounds each re-seed every empty root by
//     splitting the most populous root (its farthest row) and rerun Lloyd.
//     If roots are still empty, the flat fallback runs (TrainReport.Flat).
//  3. Leaf budget: the exact C leaves are shared across roots in proportion
//     to their sample populations by AllocateLeaves.
//  4. Leaf k-means inside every root on the root's rows, with its budget.
//  5. Leaves are numbered root by root (root r owns one contiguous CID
//     interval) and stored as LVQ8 (lvq.Encode8 of the float centroid);
//     roots stay dense.
//
// Errors wrap ErrInvalidConfig (bad cfg or dim, or len(sample) not a
// multiple of dim), ErrSampleTooSmall (fewer rows than NList), ErrNonFinite
// (a NaN or infinite element, named by row and index) or ctx.Err().
func Train(ctx context.Context, sample []float32, dim int, cfg TrainConfig) (*Centroids, TrainReport, error) {
	return train(ctx, sample, dim, cfg, refineRounds)
}

// train is Train with refine rounds of boundary refinement (tests compare
// with 0).
func train(ctx context.Context, sample []float32, dim int, cfg TrainConfig, refine int) (*Centroids, TrainReport, error) {
	var rep TrainReport
	if err := cfg.Validate(); err != nil {
		return nil, rep, err
	}
	if dim < 1 {
		return nil, rep, fmt.Errorf("%w: dimension %d < 1", ErrInvalidConfig, dim)
	}
	if len(sample)%dim != 0 {
		return nil, rep, fmt.Errorf("%w: sample length %d is not a multiple of dimension %d", ErrInvalidConfig, len(sample), dim)
	}
	n := len(sample) / dim
	if n < cfg.NList {
		return nil, rep, fmt.Errorf("%w: %d rows for nlist %d", ErrSampleTooSmall, n, cfg.NList)
	}
	if n > maxSampleRows {
		return nil, rep, fmt.Errorf("%w: sample of %d rows exceeds %d", ErrInvalidConfig, n, maxSampleRows)
	}
	for i, v := range sample {
		if !finite32(v) {
			return nil, rep, fmt.Errorf("%w: sample row %d element %d is %v", ErrNonFinite, i/dim, i%dim, v)
		}
	}
	t := &trainer{ctx: ctx, sample: sample, n: n, dim: dim, cfg: cfg, refine: refine}
	t.iters = cmp0(cfg.Iterations, DefaultIterations)
	t.workers = max(cfg.Workers, 1)
	t.nroots = min(cmp0(cfg.Roots, DefaultRoots(cfg.NList)), cfg.NList)
	t.total = cfg.ProgressTotal()
	c, err := t.train(&rep)
	if err != nil {
		return nil, rep, err
	}
	t.progressDone()
	if err := c.Validate(); err != nil { // defensive: Train's own output must be valid
		return nil, rep, fmt.Errorf("ivf: training produced invalid centroids: %w", err)
	}
	rep.Roots = c.NumRoots()
	return c, rep, nil
}

func cmp0(v, def int) int {
	if v == 0 {
		return def
	}
	return v
}

// Seed streams of the PCG generators, one per k-means run.
const (
	streamRoots     = 0
	streamLeaf      = 1       // + root index
	streamFlat      = 1 << 40 // flat fallback leaves
	streamFlatRoots = 1<<40 + 1
)

type trainer struct {
	ctx     context.Context
	sample  []float32
	n, dim  int
	cfg     TrainConfig
	iters   int
	workers int
	nroots  int
	refine  int // boundary refinement rounds

	mu          sync.Mutex
	done, total int
}

func (t *trainer) tick(n int) {
	if t.cfg.Progress == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.done += n
	t.total = max(t.total, t.done)
	t.cfg.Progress(t.done, t.total)
}

func (t *trainer) progressDone() {
	if t.cfg.Progress == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.done = t.total
	t.cfg.Progress(t.done, t.total)
}

func (t *trainer) train(rep *TrainReport) (*Centroids, error) {
	root := &kmeans{data: t.sample, n: t.n, dim: t.dim, k: t.nroots, iters: t.iters,
		seed: t.cfg.Seed, stream: streamRoots, workers: t.workers, tick: t.tick}
	if err := root.run(t.ctx); err != nil {
		return nil, err
	}
	for round := 0; round < rootRecoveryRounds && root.empty() > 0; round++ {
		root.reseedEmpty()
		if _, err := root.assign(t.ctx); err != nil {
			return nil, err
		}
		if err := root.lloyd(t.ctx, t.iters); err != nil {
			return nil, err
		}
	}
	rep.EmptyRecovered += root.reseeded
	if e := root.empty(); e > 0 {
		rep.Flat = true
		rep.Warnings = append(rep.Warnings, fmt.Sprintf(
			"%d of %d root partitions stayed empty after %d recovery rounds (the sample has too few distinct rows); used flat k-means with a synthesised hierarchy",
			e, t.nroots, rootRecoveryRounds))
		return t.trainFlat(rep)
	}
	budget, err := AllocateLeaves(t.cfg.NList, root.counts)
	if err != nil {
		return nil, err
	}

	// Rows of every root, in sample order.
	offs := make([]int, t.nroots+1)
	for r, cnt := range root.counts {
		offs[r+1] = offs[r] + cnt
	}
	grouped := make([]float32, len(t.sample))
	next := append([]int(nil), offs[:t.nroots]...)
	for i, l := range root.labels {
		copy(grouped[next[l]*t.dim:(next[l]+1)*t.dim], t.sample[i*t.dim:(i+1)*t.dim])
		next[l]++
	}

	leafRuns := make([]*kmeans, t.nroots)
	g, gctx := errgroup.WithContext(t.ctx)
	g.SetLimit(t.workers)
	for r := range t.nroots {
		km := &kmeans{data: grouped[offs[r]*t.dim : offs[r+1]*t.dim], n: root.counts[r], dim: t.dim,
			k: budget[r], iters: t.iters, seed: t.cfg.Seed, stream: streamLeaf + uint64(r),
			workers: 1, tick: t.tick}
		leafRuns[r] = km
		g.Go(func() error { return km.run(gctx) })
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}

	cidOffsets := make([]int32, t.nroots+1)
	leaves := make([]float32, 0, t.cfg.NList*t.dim)
	emptyLeaves := 0
	for r, km := range leafRuns {
		cidOffsets[r+1] = cidOffsets[r] + int32(km.k)
		leaves = append(leaves, km.centroids...)
		rep.EmptyRecovered += km.reseeded
		emptyLeaves += km.empty()
	}
	if t.nroots > 1 && t.refine > 0 {
		counts, err := t.refineLeaves(root.centroids, cidOffsets, leaves)
		if err != nil {
			return nil, err
		}
		emptyLeaves = 0
		for _, c := range counts {
			if c == 0 {
				emptyLeaves++
			}
		}
	}
	if emptyLeaves > 0 {
		rep.Warnings = append(rep.Warnings, fmt.Sprintf(
			"%d of %d leaves have no sample rows (too few distinct rows in their roots)", emptyLeaves, t.cfg.NList))
	}
	return t.assemble(root.centroids, cidOffsets, leaves), nil
}

// Boundary refinement (step 6b, docs/ivf.md): each root's leaves were
// trained on that root's rows only, so rows near a root boundary were never
// offered to the other side's leaves. refineRounds Lloyd rounds over the
// whole sample then assign every row to its nearest leaf among the leaves
// of its refineRoots nearest roots, and move every leaf that has rows to
// their mean. Leaf ownership (the CID intervals) and the roots do not change.
const (
	refineRounds = 3
	refineRoots  = 4
)

// refineLeaves runs t.refine rounds of boundary refinement on leaves (C×dim, updated in
// place) and returns each leaf's final sample population. The result does
// not depend on t.workers: per-row work is independent of the goroutine
// that does it and the means are summed in row order (kmeans.update).
func (t *trainer) refineLeaves(roots []float32, cidOffsets []int32, leaves []float32) ([]int, error) {
	d, nr := t.dim, t.nroots
	m := min(refineRoots, nr)
	near := make([]int32, t.n*m) // each row's m nearest roots, nearest first
	err := parallelRows(t.ctx, t.n, t.workers, func(lo, hi int) {
		rd := make([]float32, nr)
		for i := lo; i < hi; i++ {
			vecmath.L2SqBatch(t.sample[i*d:(i+1)*d], roots, d, rd)
			nearestRoots(rd, near[i*m:(i+1)*m])
		}
	})
	if err != nil {
		return nil, err
	}
	km := &kmeans{data: t.sample, n: t.n, dim: d, k: t.cfg.NList, workers: t.workers,
		centroids: leaves, labels: make([]int32, t.n), counts: make([]int, t.cfg.NList)}
	maxLeaves := 0
	for r := range nr {
		maxLeaves = max(maxLeaves, int(cidOffsets[r+1]-cidOffsets[r]))
	}
	for range t.refine {
		err := parallelRows(t.ctx, t.n, t.workers, func(lo, hi int) {
			ld := make([]float32, maxLeaves)
			for i := lo; i < hi; i++ {
				x := t.sample[i*d : (i+1)*d]
				best, bestD := int32(-1), float32(0)
				for _, r := range near[i*m : (i+1)*m] {
					l0, l1 := cidOffsets[r], cidOffsets[r+1]
					dist := ld[:l1-l0]
					vecmath.L2SqBatch(x, leaves[int(l0)*d:int(l1)*d], d, dist)
					for j, dj := range dist {
						if cid := l0 + int32(j); best < 0 || dj < bestD || (dj == bestD && cid < best) {
							best, bestD = cid, dj
						}
					}
				}
				km.labels[i] = best
			}
		})
		if err != nil {
			return nil, err
		}
		clear(km.counts)
		for _, l := range km.labels {
			km.counts[l]++
		}
		km.update()
		t.tick(1)
	}
	return km.counts, nil
}

// nearestRoots sets dst to the indexes of the len(dst) smallest distances
// of rd (len(dst) ≤ len(rd)), nearest first; ties: smaller index.
func nearestRoots(rd []float32, dst []int32) {
	k, n := len(dst), 0
	for r, v := range rd {
		if n == k && !nearer(v, int32(r), rd[dst[k-1]], dst[k-1]) {
			continue
		}
		if n < k {
			n++
		}
		pos := n - 1
		for pos > 0 && nearer(v, int32(r), rd[dst[pos-1]], dst[pos-1]) {
			dst[pos] = dst[pos-1]
			pos--
		}
		dst[pos] = int32(r)
	}
}

// nearer orders (distance, index) pairs: smaller distance, then smaller index.
func nearer(a float32, ia int32, b float32, ib int32) bool {
	return a < b || (a == b && ia < ib)
}

// trainFlat is the warned flat fallback: flat k-means with C leaves, then a
// hierarchy synthesised by k-means of the C leaf centroids into at most R
// roots; roots left without leaves are dropped, and leaves are reordered
// stably by root (so each root owns a contiguous CID interval).
func (t *trainer) trainFlat(rep *TrainReport) (*Centroids, error) {
	t.mu.Lock()
	t.total = t.done + 2*t.iters
	t.mu.Unlock()
	flat := &kmeans{data: t.sample, n: t.n, dim: t.dim, k: t.cfg.NList, iters: t.iters,
		seed: t.cfg.Seed, stream: streamFlat, workers: t.workers, tick: t.tick}
	if err := flat.run(t.ctx); err != nil {
		return nil, err
	}
	rep.EmptyRecovered += flat.reseeded
	if e := flat.empty(); e > 0 {
		rep.Warnings = append(rep.Warnings, fmt.Sprintf(
			"%d of %d leaves have no sample rows (too few distinct rows)", e, t.cfg.NList))
	}
	k := min(t.nroots, t.cfg.NList)
	hier := &kmeans{data: flat.centroids, n: t.cfg.NList, dim: t.dim, k: k, iters: t.iters,
		seed: t.cfg.Seed, stream: streamFlatRoots, workers: t.workers, tick: t.tick}
	if err := hier.run(t.ctx); err != nil {
		return nil, err
	}
	var roots []float32
	cidOffsets := []int32{0}
	leaves := make([]float32, 0, t.cfg.NList*t.dim)
	for r := range k {
		if hier.counts[r] == 0 {
			continue
		}
		roots = append(roots, hier.centroids[r*t.dim:(r+1)*t.dim]...)
		for j, l := range hier.labels {
			if int(l) == r {
				leaves = append(leaves, flat.centroids[j*t.dim:(j+1)*t.dim]...)
			}
		}
		cidOffsets = append(cidOffsets, int32(len(leaves)/t.dim))
	}
	return t.assemble(roots, cidOffsets, leaves), nil
}

// assemble encodes the float leaves as LVQ8 and builds the Centroids.
func (t *trainer) assemble(roots []float32, cidOffsets []int32, leaves []float32) *Centroids {
	nl := len(leaves) / t.dim
	c := &Centroids{
		Dim:        t.dim,
		NList:      nl,
		Roots:      roots,
		CIDOffsets: cidOffsets,
		Offsets:    make([]float32, nl),
		Scales:     make([]float32, nl),
		Codes:      make([]byte, nl*t.dim),
	}
	for j := range nl {
		c.Offsets[j], c.Scales[j] = lvq.Encode8(c.Codes[j*t.dim:(j+1)*t.dim], leaves[j*t.dim:(j+1)*t.dim])
	}
	return c
}

// AllocateLeaves shares the exact budget of nlist leaves across roots with
// the given sample populations (ivf-index-schema §5): in proportion to the
// populations, at least one leaf per root, never more leaves than rows. It
// is the largest-remainder (Hamilton) method with those bounds, in exact
// integer arithmetic (quota q_r = nlist·pop_r / n, n = Σ pop):
//
//  1. b_r = max(1, ⌊q_r⌋).
//  2. While Σ b < nlist: give one leaf to the root with b_r < pop_r whose
//     shortfall q_r − b_r is largest (ties: smaller r).
//  3. While Σ b > nlist (only possible after step 1 raised roots to 1):
//     take one leaf from the root with b_r > 1 whose excess b_r − q_r is
//     largest (ties: larger r).
//
// It returns an error wrapping ErrInvalidConfig unless every pop_r ≥ 1 and
// len(pops) ≤ nlist ≤ Σ pop (then a valid allocation always exists).
func AllocateLeaves(nlist int, pops []int) ([]int, error) {
	var n int64
	for r, p := range pops {
		if p < 1 {
			return nil, fmt.Errorf("%w: root %d has population %d", ErrInvalidConfig, r, p)
		}
		n += int64(p)
	}
	if len(pops) == 0 || nlist < len(pops) || int64(nlist) > n || n > maxSampleRows {
		return nil, fmt.Errorf("%w: cannot allocate %d leaves to %d roots over %d rows", ErrInvalidConfig, nlist, len(pops), n)
	}
	c := int64(nlist)
	b := make([]int, len(pops))
	sum := 0
	for r, p := range pops {
		b[r] = max(1, int(c*int64(p)/n))
		sum += b[r]
	}
	// Scaled by n: shortfall_r·n = c·pop_r − b_r·n.
	for sum < nlist {
		best := -1
		var bestV int64
		for r, p := range pops {
			if b[r] >= p {
				continue
			}
			if v := c*int64(p) - int64(b[r])*n; best < 0 || v > bestV {
				best, bestV = r, v
			}
		}
		b[best]++
		sum++
	}
	for sum > nlist {
		best := -1
		var bestV int64
		for r, p := range pops {
			if b[r] <= 1 {
				continue
			}
			if v := int64(b[r])*n - c*int64(p); best < 0 || v >= bestV {
				best, bestV = r, v
			}
		}
		b[best]--
		sum--
	}
	return b, nil
}
