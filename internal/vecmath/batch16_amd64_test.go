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
	for _, d := range []int{1, 15, 16, 17, 32, 48, 50, 64, 80, 112, 128, 144, 192, 784} {
		for _, n := range []int{0, 1, 15, 16, 17, 31, 32, 33, 47, 100} {
			w, real := d, d
			if d == 50 {
				w = 64 // the scan layout: 50 values zero padded to 64
			}
			q := make([]float32, w)
			for i := range real {
				q[i] = float32(r.NormFloat64())
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
