package query

import (
	"cmp"
	"math"
	"slices"
	"sync/atomic"

	"github.com/parqdb/parqdb/internal/vecmath"
	"github.com/parqdb/parqdb/lvq"
	"github.com/parqdb/parqdb/metadata"
	"github.com/parqdb/parqdb/postings"
)

// srcCodes is the LVQ8 shadow of one list's exact vectors (source
// encoding): the rows' LVQ8 codes, derived in memory when the vector store
// takes the list's block (vecStore.put, fillStore; nothing is persisted), and
// each row's reconstruction error. The scan scores the codes first and
// reads the float32 vector only of the rows whose code distance leaves
// room to enter the best candidates (scoreSourceCodes): a quarter of the
// bytes per row for most rows, and the same candidates as scoring every
// vector.
type srcCodes struct {
	*list // codes, offsets, scales, base (newList's layout); no keys
	// errs[i] ≥ ‖x − x̂‖ for row i's vector x and its reconstruction
	// x̂ = o + s·c in real arithmetic (the one the code distance models),
	// and maxErr the largest.
	errs   []float32
	maxErr float32
}

// bytes returns the memory the shadow holds.
func (c *srcCodes) bytes() int64 { return c.list.bytes() + 4*int64(len(c.errs)) }

// deriveCodes returns the shadow of the n vectors of v (row i at
// v[i*w:i*w+dim]), in the blocked layout when blocked.
func deriveCodes(cid int32, v []float32, n, dim, w int, blocked bool) *srcCodes {
	b := postings.Batch{
		CIDs:    make([]int32, n),
		Codes:   make([]byte, n*dim),
		Offsets: make([]float32, n),
		Scales:  make([]float32, n),
	}
	errs := make([]float32, n)
	var maxErr float32
	for i := range n {
		b.CIDs[i] = cid
		x, code := v[i*w:i*w+dim], b.Codes[i*dim:(i+1)*dim]
		o, s := lvq.Encode8(code, x)
		b.Offsets[i], b.Scales[i] = o, s
		var e2 float64
		for j, c := range code {
			d := float64(x[j]) - (float64(o) + float64(s)*float64(c))
			e2 += d * d
		}
		// float64 rounding of e2 is below 1e-13 relative; rounding up to
		// float32 and the factor cover it
		e := float32(math.Sqrt(e2) * (1 + 1e-9))
		if float64(e) < math.Sqrt(e2) {
			e = math.Nextafter32(e, float32(math.Inf(1)))
		}
		errs[i] = e
		maxErr = max(maxErr, e)
	}
	l := newList(cid, b, metadata.EncodingLVQ8, dim, blocked) // no keys: rows are l's
	return &srcCodes{list: l, errs: errs, maxErr: maxErr}
}

// noSourceCodes turns the shadow off: the source scan then scores every
// row's float32 vector (tests and benchmarks compare both ways).
var noSourceCodes atomic.Bool

// srcBound holds a query's terms for scoring a shadow (scoreSourceCodes).
// With a = code distance / mul ≈ ‖q − x̂‖², whose rounding and (blocked)
// query quantization are within err = slack·(‖q‖² + base) + qerr·s of the
// true value (lvq8LowerBound), and e ≥ ‖x − x̂‖,
//
//	√(a − err) − e ≤ ‖q − x‖ ≤ √(a + err) + e
//
// by the triangle inequality, and the float32 kernel's distance d32 is
// within eps32 (relative) of mul·‖q − x‖².
type srcBound struct {
	terms lvq8Terms
	lb    lvq8LowerBound
	eps32 float64
}

func (ix *Index) newSrcBound(s *scratch, half bool) srcBound {
	return srcBound{
		terms: newLVQ8Terms(s, half),
		lb:    ix.newLVQ8LowerBound(s, half),
		eps32: 4 * float64(ix.Dim()+2) * 0x1p-24,
	}
}

// reach returns, for the admission bound thr (float32 units, mul
// included), √T with T = thr/(mul·(1 − eps32)): a row whose lower bound on
// ‖q − x‖ exceeds it has d32 > thr.
func (b *srcBound) reach(thr float32) float64 {
	if math.IsInf(float64(thr), 1) {
		return math.Inf(1)
	}
	return math.Sqrt(float64(thr)/(b.lb.mul*(1-b.eps32))) * (1 + 1e-12)
}

// scoreSourceCodes scores list l (its exact vectors v, at stride w, and
// their shadow c) into s.top: the code distances of all rows first; then,
// for each row whose code distance could still be within the admission
// bound, the lower bound of its exact distance; only the rows it does not
// rule out are scored exactly (vecmath.L2SqViews, bit for bit what
// L2SqBatch gives the row) and offered. A row left out has a float32 distance above
// the bound when it is passed, so it would not have been kept, and the
// candidates — and results — are those of scoring every row.
func (ix *Index) scoreSourceCodes(s *scratch, l *list, v []float32, c *srcCodes, half bool, st *Stats) {
	n := l.len()
	w := ix.vstore.w
	b := &s.srcB // the query's (prepareQuery)
	c.dots(s)
	st.Candidates += int64(n)
	t := &s.top
	offs, scs, base := c.batch.Offsets[:n], c.batch.Scales[:n], c.base[:n]
	lb := &b.lb
	errOf := func(i int) float64 { return lb.slack*(lb.norm2+base[i]) + lb.qerr*float64(scs[i]) }
	// codeThr: a row can pass only if its code distance is within the
	// bound at the list's largest error.
	codeThr := func(r float64) float32 {
		if math.IsInf(r, 1) {
			return float32(r)
		}
		u := r + float64(c.maxErr)
		return float32(lb.mul * (u*u + lb.slack*(lb.norm2+c.maxBase) + lb.qerr*float64(c.maxScale)) * (1 + 1e-6))
	}
	if t.len() == 0 && n > t.k && !noFirstListBound.Load() {
		// The first list: bound the admission by the largest upper bound
		// of the k rows (or more, on ties) nearest by code distance — k
		// rows are at least that near — so that only rows that may beat
		// it are read. (The k-th of all n rows' upper bounds is at most
		// as large, but needs a square root per row.)
		// thr −1 admits no row; s.admit is lent as the kernel's index
		// buffer so that the call allocates nothing.
		s.admit = b.terms.Dists(s.dists, offs, scs, base, -1, s.admit[:0])
		s.kd = append(s.kd[:0], s.dists...)
		kth := kthFloat(s.kd, t.k)
		var ub float64
		for i, d := range s.dists {
			if d <= kth {
				u := math.Sqrt(float64(d)/lb.mul+errOf(i)) + float64(c.errs[i])
				ub = max(ub, u*u)
			}
		}
		t.lower(float32(lb.mul * ub * (1 + b.eps32) * (1 + 1e-6)))
		ct := codeThr(b.reach(t.nearBound()))
		s.admit = slices.Grow(s.admit[:0], n)[:n]
		m := 0
		for i, d := range s.dists {
			s.admit[m] = int32(i)
			if d <= ct {
				m++
			}
		}
		s.admit = s.admit[:m]
	} else {
		s.admit = b.terms.Dists(s.dists, offs, scs, base, codeThr(b.reach(t.nearBound())), s.admit[:0])
	}
	// Nearest by code first, where a vector costs more to read than a
	// sort step: the bound then falls as early as it can, and fewer of the
	// later rows are read.
	if ix.Dim() >= sortAdmitDim {
		ds := s.dists
		slices.SortFunc(s.admit, func(a, b int32) int { return cmp.Compare(ds[a], ds[b]) })
	}
	// In runs of srcRun rows: those of a run the bound does not rule out
	// are scored in one kernel call, so that their vectors' loads overlap.
	thr := t.nearBound()
	r := b.reach(thr)
	for lo := 0; lo < len(s.admit); lo += srcRun {
		run := s.admit[lo:min(lo+srcRun, len(s.admit))]
		s.srcRows, s.srcVecs = s.srcRows[:0], s.srcVecs[:0]
		for _, i := range run {
			if !math.IsInf(r, 1) {
				a := float64(s.dists[i])/lb.mul - errOf(int(i))
				u := r + float64(c.errs[i])
				if a > u*u {
					continue // √(a − err) − e > √T
				}
			}
			s.srcRows = append(s.srcRows, i)
			s.srcVecs = append(s.srcVecs, v[int(i)*w:int(i+1)*w])
		}
		if len(s.srcRows) == 0 {
			continue
		}
		st.ExactScored += int64(len(s.srcRows))
		out := s.srcOut[:len(s.srcRows)]
		vecmath.L2SqViews(s.qp, s.srcVecs, out)
		for j, d := range out {
			if half {
				d *= 0.5
			}
			if d <= thr {
				t.pushNear(cand{dist: d, i: s.srcRows[j], l: l})
			}
		}
		if nt := t.nearBound(); nt != thr {
			thr, r = nt, b.reach(nt)
		}
	}
	clear(s.srcVecs[:cap(s.srcVecs)])
}

// sortAdmitDim is the dimension from which scoreSourceCodes sorts a list's
// admitted rows by code distance before reading their vectors (GloVe's 50
// dimensions: the sort cost 15 % of a query, more than the vectors it
// spared).
const sortAdmitDim = 128

// srcRun is how many rows scoreSourceCodes checks against the bound before
// scoring those it keeps in one call.
const srcRun = 8
