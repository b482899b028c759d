package vecmath

import (
	"math"
	"math/rand/v2"
	"testing"
)

// Scalar references: sequential float64 sums of exact float64 products.

func refL2Sq(a, b []float32) (sum, abs float64) {
	for i := range a {
		d := float64(a[i]) - float64(b[i])
		sum += d * d
	}
	return sum, sum
}

func refDot(a, b []float32) (sum, abs float64) {
	for i := range a {
		p := float64(a[i]) * float64(b[i])
		sum += p
		abs += math.Abs(p)
	}
	return sum, abs
}

func unpack4(code []byte, dim int) []byte {
	out := make([]byte, dim)
	for i := range out {
		c := code[i/2]
		if i%2 == 1 {
			c >>= 4
		}
		out[i] = c & 15
	}
	return out
}

func refDotU(q []float32, c []byte) (sum, abs float64) {
	for i := range q {
		p := float64(q[i]) * float64(c[i])
		sum += p
		abs += math.Abs(p)
	}
	return sum, abs
}

func refSums(c []byte) (sum, sq uint32) {
	for _, v := range c {
		sum += uint32(v)
		sq += uint32(v) * uint32(v)
	}
	return sum, sq
}

// tolerance is the worst-case error bound of a float32 sum of n terms in any
// order (n·2^-24·Σ|t_i|), plus the float32 rounding of each term (the float64
// reference rounds none) and of the result, plus n·2^-149 for terms that
// underflow below the smallest float32 subnormal.
func tolerance(n int, abs float64) float64 {
	return float64(n+2)*0x1p-24*abs + float64(n)*0x1p-149
}

func check(t *testing.T, name string, got float32, want, abs float64, n int) {
	t.Helper()
	if d := math.Abs(float64(got) - want); d > tolerance(n, abs) || math.IsNaN(float64(got)) {
		t.Fatalf("%s: got %v want %v (diff %g > tol %g)", name, got, want, d, tolerance(n, abs))
	}
}

func checkExact(t *testing.T, name string, got float32, want float64) {
	t.Helper()
	if float64(got) != want {
		t.Fatalf("%s: got %v want exactly %v", name, got, want)
	}
}

type gen struct {
	name  string
	f32   func(r *rand.Rand) float32
	code  func(r *rand.Rand) byte
	exact bool // all sums exact in float32 in any order
}

var gens = []gen{
	{"gauss", func(r *rand.Rand) float32 { return float32(r.NormFloat64()) }, func(r *rand.Rand) byte { return byte(r.Uint32()) }, false},
	{"smallint", func(r *rand.Rand) float32 { return float32(r.IntN(17) - 8) }, func(r *rand.Rand) byte { return byte(r.Uint32()) }, true},
	{"wide", func(r *rand.Rand) float32 { return float32(r.NormFloat64() * math.Exp2(float64(r.IntN(40)-20))) }, func(r *rand.Rand) byte { return byte(r.Uint32()) }, false},
	{"extreme", func(r *rand.Rand) float32 {
		switch r.IntN(4) {
		case 0:
			return 0
		case 1:
			return float32(math.Copysign(0, -1))
		case 2:
			return math.Float32frombits(r.Uint32N(1 << 23)) // subnormal
		}
		return 255
	}, func(r *rand.Rand) byte { return []byte{0, 255, 15, 240}[r.IntN(4)] }, false},
}

func fill(r *rand.Rand, g gen, n int) ([]float32, []float32, []byte) {
	a := make([]float32, n)
	b := make([]float32, n)
	c := make([]byte, n)
	for i := range a {
		a[i], b[i], c[i] = g.f32(r), g.f32(r), g.code(r)
	}
	return a, b, c
}

func dims() []int {
	var ds []int
	for d := 0; d <= 300; d++ {
		ds = append(ds, d)
	}
	for d := 301; d <= 2048; d += 37 {
		ds = append(ds, d)
	}
	return append(ds, 511, 512, 513, 767, 768, 769, 1023, 1024, 1536, 2047, 2048)
}

func TestKernelsMatchReference(t *testing.T) {
	t.Logf("impl %s", Impl())
	withImpls(t, testKernelsMatchReference)
}

func testKernelsMatchReference(t *testing.T) {
	for _, g := range gens {
		t.Run(g.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(1, uint64(len(g.name))))
			for _, d := range dims() {
				a, b, c := fill(r, g, d)
				c4 := make([]byte, (d+1)/2)
				for i := range c4 {
					c4[i] = byte(r.Uint32())
					if 2*i+1 == d && r.IntN(2) == 0 {
						c4[i] &= 15 // both a zero and a garbage unused nibble must be ignored
					}
				}
				u4 := unpack4(c4, d)

				w, abs := refL2Sq(a, b)
				check(t, "L2Sq", L2Sq(a, b), w, abs, d)
				if g.exact {
					checkExact(t, "L2Sq", L2Sq(a, b), w)
				}
				w, abs = refDot(a, b)
				check(t, "Dot", Dot(a, b), w, abs, d)
				if g.exact {
					checkExact(t, "Dot", Dot(a, b), w)
				}
				w, abs = refDotU(a, c)
				check(t, "DotU8", DotU8(a, c), w, abs, d)
				dd, s, sq := DotSumsU8(a, c)
				check(t, "DotSumsU8", dd, w, abs, d)
				ws, wsq := refSums(c)
				if s != ws || sq != wsq {
					t.Fatalf("DotSumsU8 D=%d sums %d %d want %d %d", d, s, sq, ws, wsq)
				}
				if s, sq := SumU8(c); s != ws || sq != wsq {
					t.Fatalf("SumU8 D=%d: %d %d want %d %d", d, s, sq, ws, wsq)
				}
				if g.exact {
					checkExact(t, "DotU8", DotU8(a, c), w)
				}
				w, abs = refDotU(a, u4)
				ws, wsq = refSums(u4)
				qs := make([]float32, 2*len(c4))
				SplitQueryU4(qs, a)
				dd, s, sq = DotSumsU4Split(qs, c4, d)
				check(t, "DotSumsU4Split", dd, w, abs, d)
				if s != ws || sq != wsq {
					t.Fatalf("DotSumsU4Split D=%d sums %d %d want %d %d", d, s, sq, ws, wsq)
				}
				if g.exact {
					checkExact(t, "DotSumsU4Split", dd, w)
				}
			}
		})
	}
}

func TestBatchMatchesSingle(t *testing.T) { withImpls(t, testBatchMatchesSingle) }

func testBatchMatchesSingle(t *testing.T) {
	r := rand.New(rand.NewPCG(2, 2))
	// Every D in 0..300 and larger sizes that are not multiples of the
	// kernels' blocks (784 and 50 are the benchmark dimensions), so that the
	// batch kernels' prefix-plus-tail split is checked at every remainder.
	var dims []int
	for d := 0; d <= 300; d++ {
		dims = append(dims, d)
	}
	dims = append(dims, 383, 511, 513, 767, 768, 784, 1000, 1001, 1537, 4096)
	for _, d := range dims {
		for _, n := range []int{0, 1, 2, 3, 5, 8, 13} {
			q := make([]float32, d)
			for i := range q {
				q[i] = float32(r.NormFloat64())
			}
			rows := make([]float32, n*d)
			for i := range rows {
				rows[i] = float32(r.NormFloat64())
			}
			codes := make([]byte, n*d)
			for i := range codes {
				codes[i] = byte(r.Uint32())
			}
			w := (d + 1) / 2
			codes4 := make([]byte, n*w)
			for i := range codes4 {
				codes4[i] = byte(r.Uint32())
			}
			out := make([]float32, n)
			for i := range out {
				out[i] = float32(math.NaN())
			}
			L2SqBatch(q, rows, d, out)
			for i := range out {
				want, abs := refL2Sq(q, rows[i*d:(i+1)*d])
				check(t, "L2SqBatch", out[i], want, abs, d)
				// on whole blocks (the padded scan layouts) the batch
				// kernels accumulate each row as the single-row ones do
				if s := L2Sq(q, rows[i*d:(i+1)*d]); d%16 == 0 && s != out[i] {
					t.Fatalf("L2SqBatch D=%d row %d = %v, L2Sq = %v: not bit-identical", d, i, out[i], s)
				}
			}
			DotBatch(q, rows, d, out)
			for i := range out {
				want, abs := refDot(q, rows[i*d:(i+1)*d])
				check(t, "DotBatch", out[i], want, abs, d)
			}
			DotU8Batch(q, codes, d, out)
			for i := range out {
				want, abs := refDotU(q, codes[i*d:(i+1)*d])
				check(t, "DotU8Batch", out[i], want, abs, d)
				if s := DotU8(q, codes[i*d:(i+1)*d]); d%16 == 0 && s != out[i] {
					t.Fatalf("DotU8Batch D=%d row %d = %v, DotU8 = %v: not bit-identical", d, i, out[i], s)
				}
			}
			sums, sqs := make([]uint32, n), make([]uint32, n)
			DotSumsU8Batch(q, codes, out, sums, sqs)
			for i := range out {
				want, abs := refDotU(q, codes[i*d:(i+1)*d])
				check(t, "DotSumsU8Batch", out[i], want, abs, d)
				if sd, _, _ := DotSumsU8(q, codes[i*d:(i+1)*d]); math.Float32bits(sd) != math.Float32bits(out[i]) {
					t.Fatalf("DotSumsU8Batch D=%d row %d = %v, DotSumsU8 = %v: not bit-identical", d, i, out[i], sd)
				}
				ws, wsq := refSums(codes[i*d : (i+1)*d])
				if sums[i] != ws || sqs[i] != wsq {
					t.Fatalf("DotSumsU8Batch D=%d row %d: sums %d %d want %d %d", d, i, sums[i], sqs[i], ws, wsq)
				}
			}
			qs := make([]float32, 2*w)
			SplitQueryU4(qs, q)
			DotSumsU4SplitBatch(qs, d, codes4, out, sums, sqs)
			for i := range out {
				u := unpack4(codes4[i*w:(i+1)*w], d)
				want, abs := refDotU(q, u)
				check(t, "DotSumsU4SplitBatch", out[i], want, abs, d)
				if sd, _, _ := DotSumsU4Split(qs, codes4[i*w:(i+1)*w], d); math.Float32bits(sd) != math.Float32bits(out[i]) {
					t.Fatalf("DotSumsU4SplitBatch D=%d row %d = %v, DotSumsU4Split = %v: not bit-identical", d, i, out[i], sd)
				}
				ws, wsq := refSums(u)
				if sums[i] != ws || sqs[i] != wsq {
					t.Fatalf("DotSumsU4SplitBatch D=%d row %d: sums %d %d want %d %d", d, i, sums[i], sqs[i], ws, wsq)
				}
			}
		}
	}
}

func TestLargeSumsExact(t *testing.T) { withImpls(t, testLargeSumsExact) }

func testLargeSumsExact(t *testing.T) {
	// 65535 codes of 255: Σc² = 4,261,413,375 < 2^32 must be exact.
	c := make([]byte, 65535)
	for i := range c {
		c[i] = 255
	}
	if s, sq := SumU8(c); s != 65535*255 || sq != 65535*255*255 {
		t.Fatalf("SumU8 = %d %d", s, sq)
	}
	q := make([]float32, len(c))
	if _, s, sq := DotSumsU8(q, c); s != 65535*255 || sq != 65535*255*255 {
		t.Fatalf("DotSumsU8 = %d %d", s, sq)
	}
	const bd = 65472 // multiple of 64 for the batch kernel
	bc := make([]byte, 2*bd)
	for i := range bc {
		bc[i] = 255
	}
	dots, sums, sqs := make([]float32, 2), make([]uint32, 2), make([]uint32, 2)
	DotSumsU8Batch(make([]float32, bd), bc, dots, sums, sqs)
	for i := range sums {
		if sums[i] != bd*255 || sqs[i] != bd*255*255 {
			t.Fatalf("DotSumsU8Batch row %d = %d %d", i, sums[i], sqs[i])
		}
	}
}

func TestLengthMismatchPanics(t *testing.T) {
	cases := map[string]func(){
		"L2Sq":      func() { L2Sq(make([]float32, 3), make([]float32, 4)) },
		"Dot":       func() { Dot(make([]float32, 3), make([]float32, 2)) },
		"DotU8":     func() { DotU8(make([]float32, 3), make([]byte, 2)) },
		"L2SqBatch": func() { L2SqBatch(make([]float32, 3), make([]float32, 7), 3, make([]float32, 2)) },
	}
	for name, f := range cases {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Fatal("no panic")
				}
			}()
			f()
		})
	}
}

func TestL2SqViews(t *testing.T) { withImpls(t, testL2SqViews) }

// testL2SqViews: L2SqViews over scattered, longer views equals L2Sq on
// each view's first len(q) values, bit for bit, at every dimension.
func testL2SqViews(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 3))
	for d := 0; d <= 200; d++ {
		for _, n := range []int{0, 1, 2, 7} {
			q := make([]float32, d)
			for i := range q {
				q[i] = float32(r.NormFloat64())
			}
			pool := make([]float32, 10*(d+5))
			for i := range pool {
				pool[i] = float32(r.NormFloat64())
			}
			views := make([][]float32, n)
			for i := range views {
				at := r.IntN(10) * (d + 5)
				views[i] = pool[at : at+d+r.IntN(5)]
			}
			out := make([]float32, n)
			for i := range out {
				out[i] = float32(math.NaN())
			}
			L2SqViews(q, views, out)
			for i, v := range views {
				if want := L2Sq(q, v[:d]); out[i] != want {
					t.Fatalf("L2SqViews D=%d view %d = %v, L2Sq = %v", d, i, out[i], want)
				}
			}
		}
	}
}
