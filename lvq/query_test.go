package lvq

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/parqdb/parqdb/internal/vecmath"
)

// l2Sq8Row is the one-row reference of L2Sq8Batch: the same combination of
// the fused one-row kernel's q·c, Σc and Σc².
func l2Sq8Row(q *Query, code []byte, offset, scale float32) float32 {
	dot, sc, sc2 := vecmath.DotSumsU8(q.q, code)
	return q.combine(dot, sc, sc2, offset, scale)
}

// exactDist is Σ (q_i − x̂_i)² in float64 over the float32 reconstruction.
func exactDist(q, xh []float32) float64 {
	var s float64
	for i := range q {
		d := float64(q[i]) - float64(xh[i])
		s += d * d
	}
	return s
}

// distBound is the documented error bound of the code-domain distance
// against exactDist (docs/lvq.md): float32 accumulation of q·c, rounding of
// the reconstruction, float64 cancellation and the final float32 rounding.
func distBound(q, xh []float32, codes []byte, o, s float32, exact float64) float64 {
	var qc, recon, mag float64
	for i := range q {
		qc += math.Abs(float64(q[i])) * float64(codes[i])
		recon += math.Abs(float64(q[i])-float64(xh[i])) * math.Abs(float64(xh[i]))
		mag += float64(q[i])*float64(q[i]) + float64(xh[i])*float64(xh[i]) + 2*math.Abs(float64(q[i])*float64(o))
	}
	n := float64(len(q) + 2)
	return n*0x1p-24*2*float64(s)*qc + 2*0x1p-24*recon + 0x1p-24*exact + 16*0x1p-52*mag*n
}

func TestQueryDistance(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 3))
	var worst8, worst4 float64
	for _, d := range []int{1, 2, 3, 7, 16, 33, 100, 128, 767, 768, 1536} {
		for rep := 0; rep < 20; rep++ {
			q := make([]float32, d)
			x := make([]float32, d)
			shift := r.NormFloat64() * 3
			for i := range q {
				q[i] = float32(r.NormFloat64() + shift)
				x[i] = float32(r.NormFloat64() + shift)
				if rep%5 == 0 {
					x[i] = q[i] // query on the vector: worst cancellation
				}
			}
			qq := NewQuery(q)
			for _, bits := range []int{8, 4} {
				code := make([]byte, CodeLen(bits, d))
				codes := make([]byte, d)
				xh := make([]float32, d)
				var o, s, got float32
				if bits == 8 {
					o, s = Encode8(code, x)
					Decode8(xh, code, o, s)
					one := []float32{0}
					qq.L2Sq8Batch(code, []float32{o}, []float32{s}, one)
					got = one[0]
					copy(codes, code)
				} else {
					o, s = Encode4(code, x)
					Decode4(xh, code, o, s)
					got = qq.L2Sq4(code, o, s)
					codes = unpack4(code, d)
				}
				want := exactDist(q, xh)
				bound := distBound(q, xh, codes, o, s, want)
				diff := math.Abs(float64(got) - want)
				if diff > bound || got < 0 {
					t.Fatalf("D=%d bits=%d: got %v want %v (diff %g > bound %g)", d, bits, got, want, diff, bound)
				}
				var scaleRef float64
				for i := range q {
					scaleRef += float64(q[i])*float64(q[i]) + float64(xh[i])*float64(xh[i])
				}
				rel := diff / scaleRef
				if bits == 8 {
					worst8 = max(worst8, rel)
				} else {
					worst4 = max(worst4, rel)
				}
			}
		}
	}
	t.Logf("worst error / (‖q‖²+‖x̂‖²): LVQ8 %.3g, LVQ4 %.3g", worst8, worst4)
}

func TestQueryBatch(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 4))
	for _, d := range []int{1, 5, 64, 257, 768} {
		const n = 300
		q := make([]float32, d)
		for i := range q {
			q[i] = float32(r.NormFloat64())
		}
		qq := NewQuery(q)
		q[0] = 1e9 // NewQuery must have copied q
		w4 := CodeLen(4, d)
		codes8, codes4 := make([]byte, n*d), make([]byte, n*w4)
		off8, sc8, off4, sc4 := make([]float32, n), make([]float32, n), make([]float32, n), make([]float32, n)
		x := make([]float32, d)
		for i := 0; i < n; i++ {
			for j := range x {
				x[j] = float32(r.NormFloat64())
			}
			off8[i], sc8[i] = Encode8(codes8[i*d:(i+1)*d], x)
			off4[i], sc4[i] = Encode4(codes4[i*w4:(i+1)*w4], x)
		}
		out := make([]float32, n)
		qq.L2Sq8Batch(codes8, off8, sc8, out)
		for i := range out {
			if want := l2Sq8Row(qq, codes8[i*d:(i+1)*d], off8[i], sc8[i]); out[i] != want {
				t.Fatalf("D=%d L2Sq8Batch[%d] = %v, want %v", d, i, out[i], want)
			}
		}
		qq.L2Sq4Batch(codes4, off4, sc4, out)
		for i := range out {
			if want := qq.L2Sq4(codes4[i*w4:(i+1)*w4], off4[i], sc4[i]); out[i] != want {
				t.Fatalf("D=%d L2Sq4Batch[%d] = %v, want %v", d, i, out[i], want)
			}
		}
	}
	defer func() {
		if recover() == nil {
			t.Fatal("mismatched batch lengths did not panic")
		}
	}()
	NewQuery(make([]float32, 4)).L2Sq8Batch(make([]byte, 8), make([]float32, 2), make([]float32, 1), make([]float32, 2))
}

// TestQueryReset: a Query reset from queries of other dimensions equals
// NewQuery of the last one, field for field, and reuses its buffers.
func TestQueryReset(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	var qq Query
	for _, d := range []int{7, 50, 1, 128, 33, 8} {
		q := make([]float32, d)
		for i := range q {
			q[i] = float32(rng.NormFloat64())
		}
		qq.Reset(q)
		want := NewQuery(q)
		if !slices.Equal(qq.q, want.q) || !slices.Equal(qq.qs, want.qs) || qq.sum != want.sum || qq.norm2 != want.norm2 {
			t.Fatalf("d %d: Reset gives %+v, NewQuery %+v", d, qq, *want)
		}
		q[0]++ // a copy: the caller's slice is its own
		if qq.q[0] == q[0] {
			t.Fatalf("d %d: Reset keeps the caller's slice", d)
		}
	}
	q := make([]float32, 64)
	if n := testing.AllocsPerRun(10, func() { qq.Reset(q) }); n != 0 {
		t.Fatalf("Reset to a smaller dimension allocates %.0f times", n)
	}
}
