package ivf

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sync"
	"sync/atomic"

	"golang.org/x/sync/errgroup"

	"github.com/parqdb/parqdb/internal/vecmath"
)

// Assigner assigns vectors to leaves exactly: Assign(x) is the cid whose
// LVQ8 reconstruction is nearest to x by squared Euclidean distance, ties to
// the smaller cid, over all C leaves — the same answer as ExactNearest, at a
// fraction of its cost.
//
// How (docs/ivf.md has the error analysis): float32 dot products (package
// vecmath) give an estimate of every distance it looks at, with a rigorous
// absolute error bound derived from the norms. The root hierarchy prunes
// with the triangle inequality: a root whose leaves all lie within radius ρ
// of it, or a leaf at distance δ from its root, is skipped when the lower
// bound on its distance exceeds an upper bound on the best distance found.
// Every leaf whose estimate interval overlaps the best upper bound stays a
// candidate; one candidate is the answer; several are decided in float64
// with an error bound and, if still undecided, exactly with math/big.
// AssignBatch and AssignParallel instead estimate all leaves of 64 rows at
// a time with the tiled GEMM kernel, on rows and leaves translated by the
// leaf mean (which keeps the bound tight for data far from the origin),
// then decide the same way.
//
// An Assigner is safe for concurrent use. It holds the Centroids' decoded
// leaves; the Centroids must not be modified while it is in use.
type Assigner struct {
	c *Centroids
	p *prepared

	// fast reports that all norms are small enough for the float32 fast
	// path (no float32 overflow is possible); otherwise every call takes
	// the float64 brute-force path.
	fast bool
	gs   float64 // relative error coefficient of the fast path (see err)
	absA float64 // absolute (underflow) error of one float32 dot product

	leafU   []float64 // upper bound on ‖leaf‖
	leafK   []float64 // err_j = xU·leafK[j] + leafL[j]
	leafL   []float64
	rootU   []float64 // upper bound on ‖root‖
	radiusU []float64 // upper bound on the root radius
	deltaU  []float64 // bounds on ‖leaf − root(leaf)‖
	deltaL  []float64
	maxRoot int // largest leaf interval of a root

	// Block (GEMM) path of AssignBatch: leaves translated by mu and packed
	// for gemmDots. The estimate of ‖x−c_j‖² − ‖x'‖² is
	// e_j = ‖c'_j‖² − 2·dot_j with error at most
	// err_j = xU·gK[j] + gL[j] + transErr·(xU + ‖c'_j‖ᵤ)², expanded as
	// xU·gKT[j] + gLT[j] + transErr·xU²; gHi = ‖c'‖² + gLT and
	// gLo = ‖c'‖² − gLT (+Inf for shadowed leaves, which never win).
	gFast    bool
	mu       []float32
	gPanels  []float32
	gKT      []float64
	gHi, gLo []float64

	pool sync.Pool // *scratch

	leafDist, multi, exact atomic.Int64
}

// AssignStats counts the work an Assigner did since it was created.
type AssignStats struct {
	// LeafDistances is the number of float32 leaf distance estimates
	// computed (C per vector without any pruning).
	LeafDistances int64
	// MultiCandidate counts vectors whose float32 bounds left more than one
	// candidate, decided in float64.
	MultiCandidate int64
	// ExactFallback counts vectors that needed math/big (near or exact ties
	// between distinct reconstructions).
	ExactFallback int64
}

// Stats returns the work counters accumulated so far.
func (a *Assigner) Stats() AssignStats {
	return AssignStats{a.leafDist.Load(), a.multi.Load(), a.exact.Load()}
}

// fastLimit bounds ‖x‖² and ‖c‖² on the fast path so that no float32
// product or partial sum can overflow.
const fastLimit = 0x1p100

// NewAssigner returns an Assigner for c. It panics if c is invalid; call
// c.Validate or c.Prepare first for an error instead.
func NewAssigner(c *Centroids) *Assigner {
	p := c.prepared()
	d, nl, r := c.Dim, c.NList, c.NumRoots()
	a := &Assigner{c: c, p: p}
	a.gs = gamma(d, u32) + gamma(d+4, u64)
	a.absA = float64(d) * 0x1p-148
	g64 := gamma(d+3, u64)
	a.fast = !math.IsInf(a.gs, 0)
	a.leafU = make([]float64, nl)
	a.leafK = make([]float64, nl)
	a.leafL = make([]float64, nl)
	a.deltaU = make([]float64, nl)
	a.deltaL = make([]float64, nl)
	for j := range nl {
		n2 := p.leafNormSq[j]
		if n2 > fastLimit {
			a.fast = false
		}
		a.leafU[j] = math.Sqrt(n2*(1+g64)) * (1 + 4*u64)
		a.leafK[j] = 2 * a.gs * a.leafU[j]
		a.leafL[j] = a.gs*n2*(1+g64) + 2*a.absA
		a.deltaU[j] = p.leafRootDist[j] * (1 + g64)
		a.deltaL[j] = p.leafRootDist[j] * (1 - g64)
	}
	a.rootU = make([]float64, r)
	a.radiusU = make([]float64, r)
	for i := range r {
		if p.rootNormSq[i] > fastLimit {
			a.fast = false
		}
		a.rootU[i] = math.Sqrt(p.rootNormSq[i]*(1+g64)) * (1 + 4*u64)
		a.radiusU[i] = p.rootRadius[i] * (1 + g64)
		a.maxRoot = max(a.maxRoot, int(c.CIDOffsets[i+1]-c.CIDOffsets[i]))
	}
	a.initBlock()
	a.pool.New = func() any { return a.newScratch() }
	return a
}

// transErr bounds the effect of translating by mu in float32: with
// x' = fl(x − mu) and c' = fl(c − mu), | ‖x−c‖² − ‖x'−c'‖² | ≤
// u'(2+u')(‖x'‖ + ‖c'‖)², u' = u₃₂/(1−u₃₂) (docs/ivf.md); 2.0001·u₃₂ covers
// the u'² terms and the float64 evaluation.
const transErr = 2.0001 * u32

// initBlock prepares the block path: the translation mu (the mean of the
// leaf reconstructions, rounded to float32), the translated packed leaves
// and their error coefficients.
func (a *Assigner) initBlock() {
	c, p := a.c, a.p
	d, nl := c.Dim, c.NList
	mean := make([]float64, d)
	for j := range nl {
		for t, v := range p.leaves[j*d : (j+1)*d] {
			mean[t] += float64(v)
		}
	}
	a.mu = make([]float32, d)
	for t := range d {
		a.mu[t] = float32(mean[t] / float64(nl))
	}
	tl := make([]float32, nl*d)
	for i, v := range p.leaves {
		tl[i] = v - a.mu[i%d]
	}
	a.gPanels = packPanels(nil, tl, nl, d)
	gs := gemmGamma(d)
	g64 := gamma(d+3, u64)
	a.gFast = !math.IsInf(gs, 0)
	// Padded to the packed width: padding never wins (+Inf) and has kt 0.
	kpad := len(a.gPanels) / d
	a.gKT = make([]float64, kpad)
	a.gHi = make([]float64, kpad)
	a.gLo = make([]float64, kpad)
	for j := nl; j < kpad; j++ {
		a.gHi[j], a.gLo[j] = math.Inf(1), math.Inf(1)
	}
	for j := range nl {
		n2 := normSq64(tl[j*d : (j+1)*d])
		if !(n2 <= fastLimit) {
			a.gFast = false
		}
		cU := math.Sqrt(n2*(1+g64)) * (1 + 4*u64)
		// err_j = xU·2gs·cU + gs·n2(1+g64) + 2A + transErr·(xU² + 2xU·cU + cU²)
		a.gKT[j] = (2*gs*cU + 2*transErr*cU) * (1 + 4*u64)
		lt := (gs*n2*(1+g64) + 2*a.absA + transErr*cU*cU) * (1 + 4*u64)
		a.gHi[j], a.gLo[j] = n2+lt, n2-lt
		if p.shadow[j] {
			a.gHi[j], a.gLo[j] = math.Inf(1), math.Inf(1)
		}
	}
}

type scratch struct {
	rootDot   []float32
	rootOrder []int32
	rootE     []float64
	aL, aU    []float64
	leafDot   []float32
	leafLB    []float64 // per leaf of the current root: triangle-inequality lower bound
	allDot    []float32 // brute-force mode: dots with every leaf
	evCID     []int32
	evEst     []float64
	evErr     []float64
	cands     []int32
	d64       []float64
	dc        decider
	xt        []float32 // block path: translated rows
	apack     []float32 // block path: packed rows
	dots      []float64 // block path: gemmDots output
	est       []float64 // block path: per leaf lower bound (scan output)

	leafDist, multi, exact int64
}

func (a *Assigner) newScratch() *scratch {
	r := a.c.NumRoots()
	return &scratch{
		rootDot:   make([]float32, r),
		rootOrder: make([]int32, r),
		rootE:     make([]float64, r),
		aL:        make([]float64, r),
		aU:        make([]float64, r),
		leafDot:   make([]float32, a.maxRoot),
		leafLB:    make([]float64, a.maxRoot),
		allDot:    make([]float32, a.c.NList),
		evCID:     make([]int32, 0, a.c.NList),
		evEst:     make([]float64, 0, a.c.NList),
		evErr:     make([]float64, 0, a.c.NList),
		d64:       make([]float64, 0, a.c.NList),
	}
}

func (a *Assigner) flush(s *scratch) {
	a.leafDist.Add(s.leafDist)
	a.multi.Add(s.multi)
	a.exact.Add(s.exact)
	s.leafDist, s.multi, s.exact = 0, 0, 0
}

// Assign returns the exact nearest leaf of x (see Assigner). It returns -1
// if x contains a NaN or infinity, and panics if len(x) != Dim.
func (a *Assigner) Assign(x []float32) int32 {
	if len(x) != a.c.Dim {
		panic("ivf: Assign dimension mismatch")
	}
	s := a.pool.Get().(*scratch)
	cid := a.assign(x, s)
	a.flush(s)
	a.pool.Put(s)
	return cid
}

// AssignBatch sets out[i] to Assign(xs[i*Dim:(i+1)*Dim]) for every i in
// [0, len(out)), on the calling goroutine. It panics unless
// len(xs) == len(out)*Dim. The result does not depend on how rows are
// batched.
func (a *Assigner) AssignBatch(xs []float32, out []int32) {
	d := a.c.Dim
	if len(xs) != len(out)*d {
		panic("ivf: AssignBatch length mismatch")
	}
	s := a.pool.Get().(*scratch)
	for lo := 0; lo < len(out); lo += blockRows {
		hi := min(lo+blockRows, len(out))
		a.assignBlock(xs[lo*d:hi*d], out[lo:hi], s)
	}
	a.flush(s)
	a.pool.Put(s)
}

// blockRows is the number of rows AssignBatch assigns with one gemmDots
// call against all leaves.
const blockRows = 64

// parallelChunk is the number of rows one AssignParallel task handles.
const parallelChunk = 256

// AssignParallel is AssignBatch on up to workers goroutines (workers < 1
// means 1). The result is identical to AssignBatch. It returns ctx.Err() if
// ctx ends first, or an error wrapping ErrNonFinite that names the first row
// containing a NaN or infinity (out holds -1 for such rows).
func (a *Assigner) AssignParallel(ctx context.Context, xs []float32, out []int32, workers int) error {
	d := a.c.Dim
	if len(xs) != len(out)*d {
		return fmt.Errorf("%w: %d floats for %d rows of dimension %d", ErrInvalidConfig, len(xs), len(out), d)
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(max(workers, 1))
	for lo := 0; lo < len(out); lo += parallelChunk {
		hi := min(lo+parallelChunk, len(out))
		g.Go(func() error {
			if err := gctx.Err(); err != nil {
				return err
			}
			a.AssignBatch(xs[lo*d:hi*d], out[lo:hi])
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	if i := slices.Index(out, -1); i >= 0 {
		return fmt.Errorf("%w: row %d", ErrNonFinite, i)
	}
	return nil
}

// assign is the exact assignment of one vector using scratch s.
func (a *Assigner) assign(x []float32, s *scratch) int32 {
	if !a.fast {
		return a.assignSlow(x, s)
	}
	xx := float64(vecmath.Dot(x, x))
	if !(xx <= fastLimit) { // NaN, Inf or too large for the fast path
		return a.assignSlow(x, s)
	}
	c, p := a.c, a.p
	d := c.Dim
	gs, absA := a.gs, a.absA
	const up, dn = 1 + 4*u64, 1 - 4*u64

	// Bounds on ‖x‖²: |xx − ‖x‖²| ≤ γ‖x‖² + A.
	g32 := gamma(d, u32)
	xxHi := (xx + absA) / (1 - g32) * up
	xU := math.Sqrt(xxHi) * up

	// Root distances e_r = ‖x‖² + ‖r‖² − 2x·r with absolute error errR.
	nr := c.NumRoots()
	vecmath.DotBatch(x, c.Roots, d, s.rootDot)
	for r := range nr {
		e := xx + p.rootNormSq[r] - 2*float64(s.rootDot[r])
		sum := xU + a.rootU[r]
		errR := gs*sum*sum + 3*absA
		s.rootE[r] = e
		s.aL[r] = math.Sqrt(max(0, e-errR)) * dn
		s.aU[r] = math.Sqrt(max(0, e+errR)) * up
		s.rootOrder[r] = int32(r)
	}
	// Visit the nearest root first so that the best bound tightens early.
	slices.SortFunc(s.rootOrder, func(i, j int32) int {
		if s.rootE[i] != s.rootE[j] {
			if s.rootE[i] < s.rootE[j] {
				return -1
			}
			return 1
		}
		return int(i - j)
	})

	best := math.Inf(1) // min over evaluated leaves of est + err (shifted by −‖x‖²)
	bestAbs := math.Inf(1)
	s.evCID, s.evEst, s.evErr = s.evCID[:0], s.evEst[:0], s.evErr[:0]
	for _, r := range s.rootOrder {
		lb := max(0, (s.aL[r]-a.radiusU[r])*dn)
		if lb*lb*dn > bestAbs {
			continue
		}
		lo, hi := int(c.CIDOffsets[r]), int(c.CIDOffsets[r+1])
		// Which leaves of r survive the per-leaf bound?
		aL, aU := s.aL[r], s.aU[r]
		lbs := s.leafLB[:hi-lo]
		alive := 0
		for j := lo; j < hi; j++ {
			t := max(0, aL-a.deltaU[j], a.deltaL[j]-aU) * dn
			lb := t * t * dn
			if p.shadow[j] {
				lb = math.Inf(1)
			}
			lbs[j-lo] = lb
			if lb <= bestAbs {
				alive++
			}
		}
		if alive == 0 {
			continue
		}
		batch := 2*alive >= hi-lo
		if batch {
			vecmath.DotBatch(x, p.leaves[lo*d:hi*d], d, s.leafDot[:hi-lo])
		}
		for j := lo; j < hi; j++ {
			if lbs[j-lo] > bestAbs {
				continue
			}
			var dot float32
			if batch {
				dot = s.leafDot[j-lo]
			} else {
				dot = vecmath.Dot(x, p.leaves[j*d:(j+1)*d])
			}
			s.leafDist++
			est := p.leafNormSq[j] - 2*float64(dot)
			err := xU*a.leafK[j] + a.leafL[j]
			s.evCID = append(s.evCID, int32(j))
			s.evEst = append(s.evEst, est)
			s.evErr = append(s.evErr, err)
			if est+err < best {
				best = est + err
				bestAbs = (best + xxHi) * up
			}
		}
	}
	s.cands = s.cands[:0]
	for i, cid := range s.evCID {
		if s.evEst[i]-s.evErr[i] <= best {
			s.cands = append(s.cands, cid)
		}
	}
	return a.decide(x, s)
}

// assignBlock assigns the rows of xs (at most blockRows) without pruning:
// the rows are translated by mu, one gemmDots call gives float32-blocked dot
// products with every translated leaf, and each row keeps the leaves whose
// estimate interval overlaps the best upper bound, decided as in assign.
func (a *Assigner) assignBlock(xs []float32, out []int32, s *scratch) {
	d, nl := a.c.Dim, a.c.NList
	m := len(out)
	if !a.gFast {
		for i := range m {
			out[i] = a.assignSlow(xs[i*d:(i+1)*d], s)
		}
		return
	}
	s.xt = grow(s.xt, m*d)
	for i := range m {
		x, xt := xs[i*d:(i+1)*d], s.xt[i*d:(i+1)*d]
		for t, v := range x {
			xt[t] = v - a.mu[t]
		}
	}
	s.apack = packRows(s.apack, s.xt, m, d)
	s.dots = gemmDots(s.apack, a.gPanels, d, s.dots)
	kpad := len(a.gPanels) / d
	g64 := gamma(d+3, u64)
	s.est = grow(s.est, kpad)
	lo := s.est[:nl]
	for i := range m {
		x := xs[i*d : (i+1)*d]
		xx := normSq64(s.xt[i*d : (i+1)*d])
		if !(xx <= fastLimit) { // NaN, Inf or too large: float64 brute force
			out[i] = a.assignSlow(x, s)
			continue
		}
		xU := math.Sqrt(xx*(1+g64)) * (1 + 4*u64)
		// Common error term transErr·xU², counted once on each side.
		slack := 2 * transErr * xU * xU * (1 + 4*u64)
		best := scan(s.dots[i*kpad:(i+1)*kpad], a.gHi, a.gLo, a.gKT, xU, s.est)
		best += slack
		best += math.Abs(best) * 4 * u64 // rounding of the line above
		s.cands = s.cands[:0]
		for j, v := range lo {
			if v <= best {
				s.cands = append(s.cands, int32(j))
			}
		}
		s.leafDist += int64(nl)
		out[i] = a.decide(x, s)
	}
}

// assignSlow is the float64 brute force over every non-shadowed leaf, used
// when values are too large for the float32 fast path.
func (a *Assigner) assignSlow(x []float32, s *scratch) int32 {
	if !allFinite(x) {
		return -1
	}
	p, d := a.p, a.c.Dim
	g := gamma(d+1, u64)
	s.d64 = s.d64[:0]
	s.evCID = s.evCID[:0]
	minHi := math.Inf(1)
	for j := range a.c.NList {
		if p.shadow[j] {
			continue
		}
		v := l2Sq64(x, p.leaves[j*d:(j+1)*d])
		s.d64 = append(s.d64, v)
		s.evCID = append(s.evCID, int32(j))
		minHi = min(minHi, v*(1+g))
	}
	s.leafDist += int64(len(s.evCID))
	s.cands = s.cands[:0]
	for i, v := range s.d64 {
		if v*(1-g) <= minHi {
			s.cands = append(s.cands, s.evCID[i])
		}
	}
	return a.decide(x, s)
}

func (a *Assigner) decide(x []float32, s *scratch) int32 {
	if len(s.cands) == 1 {
		return s.cands[0]
	}
	s.multi++
	p, d := a.p, a.c.Dim
	cid, exact := s.dc.decide(x, s.cands, func(j int32) []float32 { return p.leaves[int(j)*d : (int(j)+1)*d] })
	if exact {
		s.exact++
	}
	return cid
}
