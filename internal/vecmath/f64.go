package vecmath

// L2SqF64 returns Σ (a_i − b_i)² for the first len(a) values of b, in
// float64 (each difference and square exact in float64, only the sums
// round): four partial sums, s_j over the dimensions i ≡ j (mod 4) below
// len(a)&^3, the last len(a) mod 4 terms added to s_0 in order, then
// (s_0 + s_1) + (s_2 + s_3). The order is part of the contract: the query
// path's float64 re-rank must give the same distances whichever kernel
// computes them. It panics if len(b) < len(a).
func L2SqF64(a, b []float32) float64 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float64
	i := 0
	for ; i+4 <= len(a); i += 4 {
		d0 := float64(a[i]) - float64(b[i])
		d1 := float64(a[i+1]) - float64(b[i+1])
		d2 := float64(a[i+2]) - float64(b[i+2])
		d3 := float64(a[i+3]) - float64(b[i+3])
		// float64(…) rounds the product: never fused into the sum
		s0 += float64(d0 * d0)
		s1 += float64(d1 * d1)
		s2 += float64(d2 * d2)
		s3 += float64(d3 * d3)
	}
	for ; i < len(a); i++ {
		d := float64(a[i]) - float64(b[i])
		s0 += float64(d * d)
	}
	return (s0 + s1) + (s2 + s3)
}

// L2SqF64Views sets out[i] = L2SqF64(q, views[i]) for every i in
// [0, len(out)), bit for bit, one call for all of them (with AVX, four
// dimensions a step in 256-bit float64 lanes). It panics unless
// len(views) == len(out) and every view holds at least len(q) values.
func L2SqF64Views(q []float32, views [][]float32, out []float64) {
	if len(views) != len(out) {
		panic("vecmath: views length mismatch")
	}
	for _, v := range views {
		if len(v) < len(q) {
			panic("vecmath: view shorter than the query")
		}
	}
	if len(out) == 0 {
		return
	}
	l2SqF64Views(q, views, out)
}

func l2SqF64ViewsGeneric(q []float32, views [][]float32, out []float64) {
	for i, v := range views {
		out[i] = L2SqF64(q, v)
	}
}
