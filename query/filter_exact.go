package query

import (
	"context"
	"math"
	"slices"

	"github.com/parqdb/parqdb/internal/vecmath"
	"github.com/parqdb/parqdb/lvq"
)

// exactList returns the matching rows as a list (keys and ordinals) for
// the exact plan, built once per entry.
func (ix *Index) exactList(ctx context.Context, e *filterEntry) (*list, error) {
	e.exactOnce.Do(func() {
		keys, ends, err := ix.sourceKeys(ctx)
		if err != nil {
			e.exactErr = err
			return
		}
		l := &list{cid: -1}
		n := int(e.rows.GetCardinality())
		l.ords = make([]int64, 0, n)
		l.batch.CIDs = make([]int32, n)
		l.batch.KeyEnds = make([]int, 0, n)
		it := e.rows.Iterator()
		for it.HasNext() {
			o := int64(it.Next())
			l.batch.Keys = append(l.batch.Keys, keyAt(keys, ends, o)...)
			l.batch.KeyEnds = append(l.batch.KeyEnds, len(l.batch.Keys))
			l.ords = append(l.ords, o)
		}
		l.ordsOnce.Do(func() {}) // ords are set
		e.exact = l
		e.exactVecs = ix.exactVectors(ctx, e, l.ords)
		if e.exactVecs != nil && n >= exactCodesMinRows {
			codes := newExactCodes(e.exactVecs, n, ix.Dim())
			if ix.filters.charge(e, codes.bytes(), nil) {
				e.exactCodes = codes
			}
		}
	})
	return e.exact, e.exactErr
}

// maxExactVectorBytes bounds the contiguous copy of one predicate's
// matching vectors kept for the exact plan (counted in the filter cache's
// bytes).
const maxExactVectorBytes = 32 << 20

// exactVectors returns the vectors of the rows ords contiguously at stride
// stride(dim), or nil when they exceed maxExactVectorBytes or cannot be
// read now (the exact plan then gathers them per query, and reports a
// read error there).
func (ix *Index) exactVectors(ctx context.Context, e *filterEntry, ords []int64) []float32 {
	w := stride(ix.Dim())
	size := int64(len(ords)) * int64(w) * 4
	if len(ords) == 0 || size > maxExactVectorBytes {
		return nil
	}
	views, err := ix.ordViews(ctx, ords, nil, nil)
	if err != nil {
		return nil
	}
	if !ix.filters.charge(e, size, nil) {
		return nil
	}
	out := make([]float32, len(ords)*w)
	for i, v := range views {
		copy(out[i*w:(i+1)*w], v)
	}
	return out
}

// scoreExact scores the exact plan's rows from their contiguous vectors
// into s.top.
func (ix *Index) scoreExact(s *scratch, l *list, vecs []float32, half bool, st *Stats) {
	n := l.len()
	s.dists = slices.Grow(s.dists[:0], n)[:n]
	vecmath.L2SqBatch(s.qp, vecs, stride(ix.Dim()), s.dists)
	st.Candidates += int64(n)
	t := &s.top
	t.pushDists(s.dists, half, l)
}

// exactCodesMinRows is the number of matching rows from which the exact
// plan scores LVQ8 codes first (below it the float32 vectors alone cost
// about as much).
const exactCodesMinRows = 128

// exactCodes are the exact plan's rows encoded as LVQ8 (lvq.Encode8, one
// offset and scale per row), in scan layout: a first pass over them reads
// a quarter of the bytes of the float32 vectors, and bounds every row's
// exact distance, so that only the rows that may be among the k nearest
// are scored exactly.
type exactCodes struct {
	codes  []byte // row i at [i*w, (i+1)*w), w = stride(dim), zero padded
	offs   []float32
	scales []float32
	base   []float64 // D·o² + 2·o·s·Σc + s²·Σc², as list.base
	errs   []float64 // bound on ‖x − x̂‖: each coordinate rounds by at most scale/2 (plus the float32 scale's own rounding)
}

func newExactCodes(vecs []float32, n, dim int) *exactCodes {
	w := stride(dim)
	c := &exactCodes{codes: make([]byte, n*w), offs: make([]float32, n), scales: make([]float32, n),
		base: make([]float64, n), errs: make([]float64, n)}
	rd := math.Sqrt(float64(dim))
	for i := range n {
		code := c.codes[i*w : i*w+dim]
		o, sc := lvq.Encode8(code, vecs[i*w:i*w+dim])
		c.offs[i], c.scales[i] = o, sc
		s1, s2 := vecmath.SumU8(code)
		of, sf := float64(o), float64(sc)
		c.base[i] = float64(dim)*of*of + 2*of*sf*float64(s1) + sf*sf*float64(s2)
		c.errs[i] = sf / 2 * (1 + 1e-4) * rd
	}
	return c
}

func (c *exactCodes) bytes() int64 {
	return int64(len(c.codes)) + int64(len(c.offs))*(4+4+8+8)
}

// scoreExactCodes is the exact plan over LVQ8 codes: the codes give each
// row's distance d̂ to within its bound e (‖q−x‖ ∈ [√d̂ − e, √d̂ + e],
// widened by ε for the float32 dot product's rounding). The k rows of
// smallest d̂ have exact distances of at most T, the largest of their
// upper bounds, so the k-th nearest row is within T, and only the rows
// whose lower bound is at most T (plus the re-rank margin) can be among
// the k nearest: only they are scored exactly from vecs into s.top, as
// scoreExact scores every row. The test on a row is d̂ − ε ≤ (√T + e)²,
// with no square root per row.
func (ix *Index) scoreExactCodes(s *scratch, l *list, c *exactCodes, vecs []float32, k int, half bool, st *Stats) {
	n := l.len()
	w := len(s.qp)
	s.dists = slices.Grow(s.dists[:0], n)[:n]
	vecmath.DotU8Batch(s.qp, c.codes, w, s.dists)
	norm2, sumq := s.norm2, s.sumq // prepareQuery's
	var qabs float64
	for _, v := range s.q {
		qabs += math.Abs(float64(v))
	}
	// The float32 dot of D terms, each at most 255·|q_j|, is off by at most
	// D·2^-23 of 255·Σ|q_j| (any summation order); the float64 rest is
	// exact to 2^-30 of its magnitude.
	dotErr := 2 * 255 * qabs * float64(len(s.q)) / (1 << 23)
	sumq2 := 2 * sumq
	eps := func(i int) float64 { return float64(c.scales[i])*dotErr + (norm2+c.base[i])/(1<<30) }
	s.approx = slices.Grow(s.approx[:0], n)[:n]
	t := &s.top
	t.reset(k)
	for i, dot := range s.dists {
		d := norm2 + c.base[i] - (float64(c.offs[i])*sumq2 + float64(c.scales[i])*2*float64(dot))
		s.approx[i] = d
		t.push(cand{dist: float32(d), i: int32(i)})
	}
	limit := math.Inf(1)
	if best := t.best(); len(best) == k {
		limit = 0
		for _, h := range best {
			i := int(h.i)
			r := math.Sqrt(max(s.approx[i]+eps(i), 0)) + c.errs[i]
			limit = max(limit, r*r)
		}
		limit *= 1 + 4*rerankMargin
	}
	sl := math.Sqrt(limit)
	t.reset(k + 8) // spare places for the float64 re-rank
	scored := 0
	for i, d := range s.approx {
		if r := sl + c.errs[i]; d-eps(i) > r*r {
			continue
		}
		dist := vecmath.L2Sq(s.qp, vecs[i*w:(i+1)*w])
		scored++
		if half {
			dist *= 0.5
		}
		t.push(cand{dist: dist, i: int32(i), l: l}) // dropped past the threshold
	}
	st.Candidates += int64(n)
	st.Refined += int64(scored)
}

// exactViews points s.vs at the candidates' rows of vecs (the exact
// plan's contiguous vectors, at stride w), so that rerank reads them there
// instead of gathering them from the vector store.
func exactViews(s *scratch, cands []cand, vecs []float32, w int) {
	s.vs = slices.Grow(s.vs[:0], len(cands))[:len(cands)]
	for j, c := range cands {
		i := int(c.i)
		s.vs[j] = vecs[i*w : (i+1)*w : (i+1)*w]
	}
	s.vsFor = len(cands)
}
