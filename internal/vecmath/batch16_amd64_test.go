//go:build !purego

package vecmath

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestDotU8Batch16 checks the 16-rows-at-a-time LVQ8 dot kernel against
// the row-by-row batch kernel and DotU8, bit for bit, at row counts around
// its blocks and at dimensions that are whole blocks (the padded scan
// layout, incl. D = 50 padded to 64 with a zero query tail) or not (the
// generic path).
func TestDotU8Batch16(t *testing.T) {
	if !useAVX512 {
		t.Skipf("the kernel is used only with avx512; this CPU uses %s", Impl())
	}
	defer func(b bool) { batch16 = b }(batch16)
	r := rand.New(rand.NewPCG(16, 16))
	// {w, real}: rows of w codes, the query's values past real ±0 (the
	// padded scan layout, e.g. D = 50 in 64).
	for _, dims := range [][2]int{{1, 1}, {15, 15}, {16, 16}, {17, 17}, {32, 32}, {48, 48}, {64, 50}, {64, 52}, {64, 53},
		{64, 56}, {64, 60}, {64, 64}, {80, 80}, {112, 112}, {128, 116}, {128, 128}, {144, 144}, {192, 184}, {784, 784}} {
		w, real := dims[0], dims[1]
		d := real
		for _, n := range []int{0, 1, 15, 16, 17, 31, 32, 33, 47, 100} {
			q := make([]float32, w)
			for i := range real {
				q[i] = float32(r.NormFloat64())
			}
			if real < w && n%2 == 1 {
				q[w-1] = float32(math.Copysign(0, -1)) // a −0 in the zero tail
			}
			codes := make([]byte, n*w)
			for i := range n {
				for j := range real {
					codes[i*w+j] = byte(r.Uint32())
				}
				if i%7 == 3 { // a row of zero codes: its products are ±0
					clear(codes[i*w : (i+1)*w])
				}
			}
			batch16 = true
			got := make([]float32, n)
			DotU8Batch(q, codes, w, got)
			batch16 = false
			rows := make([]float32, n)
			DotU8Batch(q, codes, w, rows)
			for i := range n {
				one := DotU8(q, codes[i*w:(i+1)*w])
				if math.Float32bits(got[i]) != math.Float32bits(rows[i]) || (w%16 == 0 && math.Float32bits(got[i]) != math.Float32bits(one)) {
					t.Fatalf("D=%d n=%d row %d: 16-row kernel %v (%#x), row kernel %v (%#x), DotU8 %v", d, n, i, got[i], math.Float32bits(got[i]), rows[i], math.Float32bits(rows[i]), one)
				}
				want, abs := refDotU(q, codes[i*w:(i+1)*w])
				check(t, "DotU8Batch", got[i], want, abs, w)
			}
		}
	}
}

// BenchmarkDotU8BatchRows measures the LVQ8 dot batch kernel on a
// GloVe-sized list (112 rows of 50 codes padded to 64), per row, with the
// 16-row reduction and without.
func BenchmarkDotU8BatchRows(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 1))
	const n, w = 112, 64
	q := make([]float32, w)
	for i := range 50 {
		q[i] = float32(r.NormFloat64())
	}
	codes := make([]byte, n*w)
	for i := range n {
		for j := range 50 {
			codes[i*w+j] = byte(r.Uint32())
		}
	}
	out := make([]float32, n)
	defer func(v bool) { batch16 = v }(batch16)
	for _, on := range []bool{true, false} {
		batch16 = on
		b.Run(map[bool]string{true: "batch16", false: "rows"}[on], func(b *testing.B) {
			for b.Loop() {
				DotU8Batch(q, codes, w, out)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/row")
		})
	}
}

// BenchmarkDotU8BlockedRows is BenchmarkDotU8BatchRows's list in
// BlockU8's layout (50 codes per row, padded to 52) with the quantized
// query (U8Query).
func BenchmarkDotU8BlockedRows(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 1))
	const n, d = 112, 50
	q := make([]float32, d)
	for i := range q {
		q[i] = float32(r.NormFloat64())
	}
	codes := make([]byte, n*d)
	for i := range codes {
		codes[i] = byte(r.Uint32())
	}
	blk := make([]byte, BlockU8Len(n, d))
	BlockU8(blk, codes, d)
	var u U8Query
	u.Set(q)
	out := make([]float32, n)
	for b.Loop() {
		DotU8Blocked(&u, blk, out)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/row")
}
