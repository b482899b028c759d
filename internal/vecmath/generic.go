package vecmath

// Portable kernels. They use four independent accumulators so that the
// compiler keeps several additions in flight; the summation order is
// therefore not sequential (see the package comment).

func l2SqGeneric(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		d0 := a[i] - b[i]
		d1 := a[i+1] - b[i+1]
		d2 := a[i+2] - b[i+2]
		d3 := a[i+3] - b[i+3]
		s0 += d0 * d0
		s1 += d1 * d1
		s2 += d2 * d2
		s3 += d3 * d3
	}
	for ; i < len(a); i++ {
		d := a[i] - b[i]
		s0 += d * d
	}
	return (s0 + s1) + (s2 + s3)
}

func dotGeneric(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return (s0 + s1) + (s2 + s3)
}

func dotU8Generic(q []float32, code []byte) float32 {
	code = code[:len(q)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(q); i += 4 {
		s0 += q[i] * float32(code[i])
		s1 += q[i+1] * float32(code[i+1])
		s2 += q[i+2] * float32(code[i+2])
		s3 += q[i+3] * float32(code[i+3])
	}
	for ; i < len(q); i++ {
		s0 += q[i] * float32(code[i])
	}
	return (s0 + s1) + (s2 + s3)
}

func dotSumsU8Generic(q []float32, code []byte) (float32, uint32, uint32) {
	code = code[:len(q)]
	var s0, s1 float32
	var sum, sq uint32
	i := 0
	for ; i+2 <= len(q); i += 2 {
		c0, c1 := uint32(code[i]), uint32(code[i+1])
		s0 += q[i] * float32(c0)
		s1 += q[i+1] * float32(c1)
		sum += c0 + c1
		sq += c0*c0 + c1*c1
	}
	for ; i < len(q); i++ {
		c := uint32(code[i])
		s0 += q[i] * float32(c)
		sum += c
		sq += c * c
	}
	return s0 + s1, sum, sq
}

func sumU8Generic(code []byte) (sum, sumSq uint32) {
	for _, c := range code {
		v := uint32(c)
		sum += v
		sumSq += v * v
	}
	return sum, sumSq
}

func l2SqBatchGeneric(q, rows, out []float32) {
	d := len(q)
	for i := range out {
		out[i] = l2Sq(q, rows[i*d:(i+1)*d])
	}
}

func dotBatchGeneric(q, rows, out []float32) {
	d := len(q)
	for i := range out {
		out[i] = dot(q, rows[i*d:(i+1)*d])
	}
}

func dotU8BatchGeneric(q []float32, codes []byte, out []float32) {
	d := len(q)
	for i := range out {
		out[i] = dotU8(q, codes[i*d:(i+1)*d])
	}
}

func dotSumsU8BatchGeneric(q []float32, codes []byte, dots []float32, sums, sumSqs []uint32) {
	d := len(q)
	for i := range dots {
		dots[i], sums[i], sumSqs[i] = dotSumsU8(q, codes[i*d:(i+1)*d])
	}
}

// dotSumsU4SplitFrom covers code bytes j0… of one row in split form.
func dotSumsU4SplitFrom(qs []float32, code []byte, dim, j0 int) (float32, uint32, uint32) {
	h := (dim + 1) / 2
	qe, qo := qs[:h], qs[h:2*h]
	full := dim / 2
	var s0, s1 float32
	var sum, sq uint32
	for j := j0; j < full; j++ {
		lo, hi := uint32(code[j]&15), uint32(code[j]>>4)
		s0 += qe[j] * float32(lo)
		s1 += qo[j] * float32(hi)
		sum += lo + hi
		sq += lo*lo + hi*hi
	}
	if dim&1 == 1 && full >= j0 {
		lo := uint32(code[full] & 15)
		s0 += qe[full] * float32(lo)
		sum += lo
		sq += lo * lo
	}
	return s0 + s1, sum, sq
}

func dotSumsU4SplitBatchGeneric(qs []float32, dim int, codes []byte, dots []float32, sums, sumSqs []uint32) {
	h := (dim + 1) / 2
	for i := range dots {
		dots[i], sums[i], sumSqs[i] = dotSumsU4Split(qs, codes[i*h:(i+1)*h], dim)
	}
}
