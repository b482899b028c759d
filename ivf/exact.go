package ivf

import (
	"math"
	"math/big"
)

// gamma returns a rigorous upper bound on γ(n) = n·u/(1−n·u) for unit
// roundoff u, inflated (by the factor 1.0001 and 4 float64 roundoffs) so
// that v·(1±g) in float64 brackets the true value of a sum whose relative
// error is γ(n), including the rounding of those bound computations. It
// returns +Inf when n·u is not small (no useful bound).
func gamma(n int, u float64) float64 {
	nu := float64(n) * u
	if nu >= 1e-5 && u == u64 || nu >= 0.25 {
		return math.Inf(1)
	}
	return nu/(1-nu)*1.0001 + 4*u64
}

const (
	u64 = 0x1p-53 // unit roundoff of float64
	u32 = 0x1p-24 // unit roundoff of float32
)

// exactPrec is a big.Float precision that makes every operation in
// exactL2Sq exact for float32 inputs: a difference of two float32 values
// spans at most 2^-149..2^129 (278 bits), its square 556 bits, and a sum of
// up to 2^64 squares 620 bits.
const exactPrec = 640

// exactL2Sq returns Σ (x_i − c_i)² exactly, as a big.Float.
func exactL2Sq(x, c []float32, acc, d *big.Float) *big.Float {
	acc.SetPrec(exactPrec).SetInt64(0)
	var xi, ci big.Float
	xi.SetPrec(exactPrec)
	ci.SetPrec(exactPrec)
	d.SetPrec(exactPrec)
	for i := range x {
		xi.SetFloat64(float64(x[i]))
		ci.SetFloat64(float64(c[i]))
		d.Sub(&xi, &ci)
		d.Mul(d, d)
		acc.Add(acc, d)
	}
	return acc
}

// decider picks the exact nearest among candidate leaves. Its scratch
// buffers make repeated use allocation-free; a decider is not safe for
// concurrent use.
type decider struct {
	d64       []float64
	surv      []int32
	best, cur big.Float
	tmp       big.Float
}

// decide returns, among the candidate cids (ascending or not), the one whose
// leaf (via leaf(cid)) has the smallest exact squared distance to x, ties to
// the smaller cid. It first compares float64 sums, whose relative error is
// at most g = γ(D+1), and keeps every candidate whose lower bound does not
// exceed the smallest upper bound; only if more than one survives does it
// compare exactly with math/big.
//
// It also reports whether math/big was needed.
func (dc *decider) decide(x []float32, cands []int32, leaf func(int32) []float32) (cid int32, exact bool) {
	if len(cands) == 1 {
		return cands[0], false
	}
	g := gamma(len(x)+1, u64)
	dc.d64 = dc.d64[:0]
	minHi := math.Inf(1)
	for _, cid := range cands {
		v := l2Sq64(x, leaf(cid))
		dc.d64 = append(dc.d64, v)
		minHi = min(minHi, v*(1+g))
	}
	dc.surv = dc.surv[:0]
	for i, cid := range cands {
		if dc.d64[i]*(1-g) <= minHi {
			dc.surv = append(dc.surv, cid)
		}
	}
	if len(dc.surv) == 1 {
		return dc.surv[0], false
	}
	bestCID := int32(-1)
	for _, cid := range dc.surv {
		exactL2Sq(x, leaf(cid), &dc.cur, &dc.tmp)
		if bestCID < 0 {
			dc.best.Set(&dc.cur)
			bestCID = cid
			continue
		}
		if c := dc.cur.Cmp(&dc.best); c < 0 || (c == 0 && cid < bestCID) {
			dc.best.Set(&dc.cur)
			bestCID = cid
		}
	}
	return bestCID, true
}

// ExactNearest returns the leaf cid whose LVQ8 reconstruction is nearest to
// x by squared Euclidean distance, ties to the smaller cid, by brute force
// over all C leaves: float64 sums with a rigorous error bound, and exact
// arithmetic (math/big) among the leaves that bound cannot separate. It is
// the reference the Assigner is tested against and that `verify` uses; it
// costs C·D float64 operations per call. It returns -1 when x contains a
// NaN or infinity. It panics if len(x) != c.Dim or c is invalid.
func ExactNearest(c *Centroids, x []float32) int32 {
	if len(x) != c.Dim {
		panic("ivf: ExactNearest dimension mismatch")
	}
	if !allFinite(x) {
		return -1
	}
	p := c.prepared()
	d := c.Dim
	leaf := func(cid int32) []float32 { return p.leaves[int(cid)*d : (int(cid)+1)*d] }
	g := gamma(d+1, u64)
	d64 := make([]float64, c.NList)
	minHi := math.Inf(1)
	for cid := range c.NList {
		d64[cid] = l2Sq64(x, leaf(int32(cid)))
		minHi = min(minHi, d64[cid]*(1+g))
	}
	var cands []int32
	for cid, v := range d64 {
		if v*(1-g) <= minHi {
			cands = append(cands, int32(cid))
		}
	}
	var dc decider
	cid, _ := dc.decide(x, cands, leaf)
	return cid
}

func allFinite(x []float32) bool {
	for _, v := range x {
		if !finite32(v) {
			return false
		}
	}
	return true
}
