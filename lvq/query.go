package lvq

import "github.com/parqdb/parqdb/internal/vecmath"

// Query holds a query vector with the terms the code-domain distance needs
// once per query: Σq and ‖q‖², both in float64. A Query is immutable after
// NewQuery and safe for concurrent use.
type Query struct {
	q     []float32
	qs    []float32 // q deinterleaved for the LVQ4 kernels (vecmath.SplitQueryU4)
	sum   float64
	norm2 float64
}

// NewQuery returns a Query over a copy of q.
func NewQuery(q []float32) *Query {
	qq := new(Query)
	qq.Reset(q)
	return qq
}

// Reset makes qq a Query over a copy of q, as NewQuery(q) would return,
// reusing qq's buffers: a searcher keeps one Query and resets it per
// query instead of allocating.
func (qq *Query) Reset(q []float32) {
	qq.q = append(qq.q[:0], q...)
	n := 2 * ((len(q) + 1) / 2)
	if cap(qq.qs) < n {
		qq.qs = make([]float32, n)
	}
	qq.qs = qq.qs[:n]
	vecmath.SplitQueryU4(qq.qs, q)
	qq.sum, qq.norm2 = 0, 0
	for _, v := range q {
		f := float64(v)
		qq.sum += f
		qq.norm2 += f * f
	}
}

// Dim returns the dimension of the query.
func (q *Query) Dim() int { return len(q.q) }

// L2Sq4 returns the squared L2 distance between the query and the LVQ4
// vector (code of CodeLen(4, q.Dim()) bytes, offset, scale) in the code
// domain, as L2Sq8Batch does for one LVQ8 row. It panics if the code length
// does not match.
func (q *Query) L2Sq4(code []byte, offset, scale float32) float32 {
	dot, sc, sc2 := vecmath.DotSumsU4Split(q.qs, code, len(q.q))
	return q.combine(dot, sc, sc2, offset, scale)
}

// L2Sq8Batch sets out[i] to the squared L2 distance between the query and
// the LVQ8 vector of row i (code codes[i*D:(i+1)*D], offset offsets[i],
// scale scales[i]) in the code domain:
//
//	‖q − x̂‖² = ‖q‖² − 2(o·Σq + s·q·c) + D·o² + 2·o·s·Σc + s²·Σc²
//
// with q·c accumulated in float32 by one fused pass over the code that also
// yields Σc and Σc² exactly, and the rest in float64. It approximates the
// distance to the reconstruction of Decode8; docs/lvq.md bounds the
// difference. It panics unless offsets, scales and out have the same
// length n and len(codes) == n*D.
func (q *Query) L2Sq8Batch(codes []byte, offsets, scales []float32, out []float32) {
	d := len(q.q)
	checkBatch(len(codes), d, offsets, scales, out)
	// One kernel call per chunk of rows; the per-row terms stay on the stack.
	const chunk = 256
	var dots [chunk]float32
	var sums, sqs [chunk]uint32
	for start := 0; start < len(out); start += chunk {
		k := min(chunk, len(out)-start)
		vecmath.DotSumsU8Batch(q.q, codes[start*d:(start+k)*d], dots[:k], sums[:k], sqs[:k])
		for i := 0; i < k; i++ {
			out[start+i] = q.combine(dots[i], sums[i], sqs[i], offsets[start+i], scales[start+i])
		}
	}
}

// L2Sq4Batch is L2Sq8Batch for LVQ4 rows of CodeLen(4, D) bytes each.
func (q *Query) L2Sq4Batch(codes []byte, offsets, scales []float32, out []float32) {
	w := (len(q.q) + 1) / 2
	checkBatch(len(codes), w, offsets, scales, out)
	const chunk = 256
	var dots [chunk]float32
	var sums, sqs [chunk]uint32
	for start := 0; start < len(out); start += chunk {
		k := min(chunk, len(out)-start)
		vecmath.DotSumsU4SplitBatch(q.qs, len(q.q), codes[start*w:(start+k)*w], dots[:k], sums[:k], sqs[:k])
		for i := 0; i < k; i++ {
			out[start+i] = q.combine(dots[i], sums[i], sqs[i], offsets[start+i], scales[start+i])
		}
	}
}

func checkBatch(codesLen, w int, offsets, scales, out []float32) {
	if len(offsets) != len(out) || len(scales) != len(out) || codesLen != w*len(out) {
		panic("lvq: batch length mismatch")
	}
}

func (q *Query) combine(dot float32, sc, sc2 uint32, offset, scale float32) float32 {
	o, s := float64(offset), float64(scale)
	r := q.norm2 - 2*(o*q.sum+s*float64(dot)) +
		float64(len(q.q))*o*o + 2*o*s*float64(sc) + s*s*float64(sc2)
	if r < 0 {
		// Cancellation can leave a tiny negative value for a query on the
		// reconstruction; distances are never negative.
		r = 0
	}
	return float32(r)
}
