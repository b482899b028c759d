package vecmath

// L2Sq returns the squared Euclidean distance Σ (a_i − b_i)². It panics if
// len(a) != len(b).
func L2Sq(a, b []float32) float32 {
	if len(a) != len(b) {
		panic("vecmath: L2Sq length mismatch")
	}
	if len(a) == 0 {
		return 0
	}
	return l2Sq(a, b)
}

// Dot returns the inner product Σ a_i·b_i. It panics if len(a) != len(b).
func Dot(a, b []float32) float32 {
	if len(a) != len(b) {
		panic("vecmath: Dot length mismatch")
	}
	if len(a) == 0 {
		return 0
	}
	return dot(a, b)
}

// DotU8 returns Σ q_i·float32(code_i) for 8-bit codes, one byte per
// dimension. It panics if len(code) != len(q).
func DotU8(q []float32, code []byte) float32 {
	if len(code) != len(q) {
		panic("vecmath: DotU8 length mismatch")
	}
	if len(q) == 0 {
		return 0
	}
	return dotU8(q, code)
}

// DotSumsU8 returns in one pass over code the three quantities an LVQ8
// distance needs: Σ q_i·c_i, Σ c_i and Σ c_i². It panics if
// len(code) != len(q). len(q) must be below 2^16 so that Σ c_i² fits in 32
// bits.
func DotSumsU8(q []float32, code []byte) (dot float32, sum, sumSq uint32) {
	if len(code) != len(q) {
		panic("vecmath: DotSumsU8 length mismatch")
	}
	if len(q) == 0 {
		return 0, 0, 0
	}
	return dotSumsU8(q, code)
}

// DotSumsU8Batch sets dots[i], sums[i], sumSqs[i] to DotSumsU8(q, row i)
// for the n = len(dots) rows codes[i*D:(i+1)*D], D = len(q). It panics
// unless sums and sumSqs have length n and len(codes) == n*D. It is the
// LVQ8 scan kernel: one call per row group avoids per-row call overhead.
// Its results are bit-identical to DotSumsU8 row by row.
func DotSumsU8Batch(q []float32, codes []byte, dots []float32, sums, sumSqs []uint32) {
	n := len(dots)
	if len(sums) != n || len(sumSqs) != n || len(codes) != n*len(q) {
		panic("vecmath: DotSumsU8Batch length mismatch")
	}
	if len(q) == 0 {
		clear(dots)
		clear(sums)
		clear(sumSqs)
		return
	}
	dotSumsU8Batch(q, codes, dots, sums, sumSqs)
}

// SplitQueryU4 writes q in the deinterleaved form the split 4-bit kernels
// take: with h = ceil(len(q)/2), dst[j] = q[2j] and dst[h+j] = q[2j+1] (0
// when 2j+1 == len(q)). It panics unless len(dst) == 2h. Pairing a code
// byte's low nibble with dst[j] and its high nibble with dst[h+j] avoids
// unpacking nibbles into dimension order for every row.
func SplitQueryU4(dst, q []float32) {
	h := (len(q) + 1) / 2
	if len(dst) != 2*h {
		panic("vecmath: SplitQueryU4 length mismatch")
	}
	for j := 0; j < h; j++ {
		dst[j] = q[2*j]
		if 2*j+1 < len(q) {
			dst[h+j] = q[2*j+1]
		} else {
			dst[h+j] = 0
		}
	}
}

// DotSumsU4Split is DotSumsU4 with the query given in split form qs (see
// SplitQueryU4) for dim dimensions. It panics unless
// len(qs) == 2*ceil(dim/2) and len(code) == ceil(dim/2).
func DotSumsU4Split(qs []float32, code []byte, dim int) (dot float32, sum, sumSq uint32) {
	h := (dim + 1) / 2
	if dim < 0 || len(qs) != 2*h || len(code) != h {
		panic("vecmath: DotSumsU4Split length mismatch")
	}
	if dim == 0 {
		return 0, 0, 0
	}
	return dotSumsU4Split(qs, code, dim)
}

// DotSumsU4SplitBatch sets dots[i], sums[i], sumSqs[i] to
// DotSumsU4Split(qs, row i, dim) for the n = len(dots) rows of
// ceil(dim/2) bytes in codes. It is the LVQ4 scan kernel; its results are
// bit-identical to DotSumsU4Split row by row.
func DotSumsU4SplitBatch(qs []float32, dim int, codes []byte, dots []float32, sums, sumSqs []uint32) {
	h := (dim + 1) / 2
	n := len(dots)
	if dim < 0 || len(qs) != 2*h || len(sums) != n || len(sumSqs) != n || len(codes) != n*h {
		panic("vecmath: DotSumsU4SplitBatch length mismatch")
	}
	if dim == 0 {
		clear(dots)
		clear(sums)
		clear(sumSqs)
		return
	}
	dotSumsU4SplitBatch(qs, dim, codes, dots, sums, sumSqs)
}

// SumU8 returns Σ c and Σ c² over 8-bit codes. The sums are exact as long
// as len(code) < 2^16 (Σ c² < 2^32).
func SumU8(code []byte) (sum, sumSq uint32) {
	return sumU8(code)
}

// L2SqBatch sets out[i] = L2Sq(q, rows[i*dim:(i+1)*dim]) for every i in
// [0, len(out)). It panics unless dim == len(q) and len(rows) == len(out)*dim.
func L2SqBatch(q []float32, rows []float32, dim int, out []float32) {
	checkBatch(len(q), dim, len(rows), dim, len(out))
	if dim == 0 {
		clear(out)
		return
	}
	l2SqBatch(q, rows, out)
}

// L2SqViews sets out[i] = L2Sq(q, views[i][:len(q)]) for every i in
// [0, len(out)): L2SqBatch over scattered rows (e.g. candidates' vectors
// in a store), one call for all of them. It panics unless len(views) ==
// len(out) and every view holds at least len(q) values.
func L2SqViews(q []float32, views [][]float32, out []float32) {
	if len(views) != len(out) {
		panic("vecmath: views length mismatch")
	}
	for _, v := range views {
		if len(v) < len(q) {
			panic("vecmath: view shorter than the query")
		}
	}
	if len(q) == 0 {
		clear(out)
		return
	}
	l2SqViews(q, views, out)
}

// DotBatch sets out[i] = Dot(q, rows[i*dim:(i+1)*dim]) for every i in
// [0, len(out)). It panics unless dim == len(q) and len(rows) == len(out)*dim.
func DotBatch(q []float32, rows []float32, dim int, out []float32) {
	checkBatch(len(q), dim, len(rows), dim, len(out))
	if dim == 0 {
		clear(out)
		return
	}
	dotBatch(q, rows, out)
}

// DotU8Batch sets out[i] = DotU8(q, codes[i*dim:(i+1)*dim]) for every i in
// [0, len(out)). It panics unless dim == len(q) and len(codes) == len(out)*dim.
func DotU8Batch(q []float32, codes []byte, dim int, out []float32) {
	checkBatch(len(q), dim, len(codes), dim, len(out))
	if dim == 0 {
		clear(out)
		return
	}
	dotU8Batch(q, codes, out)
}

func checkBatch(qlen, dim, rowsLen, rowLen, n int) {
	if dim < 0 || qlen != dim || rowsLen != n*rowLen {
		panic("vecmath: batch length mismatch")
	}
}

// Impl names the kernel set in use: "avx512", "avx2" or "go". It is meant
// for logs and benchmark reports.
func Impl() string { return impl }
