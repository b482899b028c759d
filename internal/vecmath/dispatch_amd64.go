//go:build !purego

package vecmath

import (
	"unsafe"

	"golang.org/x/sys/cpu"
)

// Kernel selection, fixed at program start. The AVX-512 set needs F (zmm
// float and dword ops), BW (VPMADDWD, VPSADBW on zmm) and VNNI (VPDPBUSD for
// Σc²); CPUs with AVX-512 but without VNNI (Skylake-SP) use the AVX2 set,
// which needs FMA as well.
var (
	useAVX512 = cpu.X86.HasAVX512F && cpu.X86.HasAVX512BW && cpu.X86.HasAVX512VNNI
	useAVX2   = cpu.X86.HasAVX2 && cpu.X86.HasFMA
	impl      = implName()

	// pairKernel selects the two-rows-at-a-time LVQ8 and LVQ4 scan kernels (a
	// variable so that benchmarks can compare it with the one-row kernel).
	pairKernel = true

	// batch16 selects the 16-rows-at-a-time reduction of the LVQ8 dot
	// batch kernel (a variable so that tests and benchmarks can compare
	// it with the row-by-row one).
	batch16 = true
)

func implName() string {
	switch {
	case useAVX512:
		return "avx512"
	case useAVX2:
		return "avx2"
	}
	return "go"
}

// floatBlock is the granularity of the float32 and 8-bit kernels.
func floatBlock() int {
	if useAVX512 {
		return 16
	}
	return 8
}

func l2Sq(a, b []float32) float32 {
	if !useAVX2 && !useAVX512 {
		return l2SqGeneric(a, b)
	}
	m := len(a) &^ (floatBlock() - 1)
	var s float32
	if m > 0 {
		if useAVX512 {
			s = l2SqAVX512(&a[0], &b[0], m)
		} else {
			s = l2SqAVX2(&a[0], &b[0], m)
		}
	}
	if m < len(a) {
		s += l2SqGeneric(a[m:], b[m:])
	}
	return s
}

func dot(a, b []float32) float32 {
	if !useAVX2 && !useAVX512 {
		return dotGeneric(a, b)
	}
	m := len(a) &^ (floatBlock() - 1)
	var s float32
	if m > 0 {
		if useAVX512 {
			s = dotAVX512(&a[0], &b[0], m)
		} else {
			s = dotAVX2(&a[0], &b[0], m)
		}
	}
	if m < len(a) {
		s += dotGeneric(a[m:], b[m:len(a)])
	}
	return s
}

func dotU8(q []float32, code []byte) float32 {
	if !useAVX2 && !useAVX512 {
		return dotU8Generic(q, code)
	}
	m := len(q) &^ (floatBlock() - 1)
	var s float32
	if m > 0 {
		if useAVX512 {
			s = dotU8AVX512(&q[0], &code[0], m)
		} else {
			s = dotU8AVX2(&q[0], &code[0], m)
		}
	}
	if m < len(q) {
		s += dotU8Generic(q[m:], code[m:len(q)])
	}
	return s
}

func dotSumsU8(q []float32, code []byte) (float32, uint32, uint32) {
	if !useAVX2 && !useAVX512 {
		return dotSumsU8Generic(q, code)
	}
	m := len(q) &^ (floatBlock() - 1)
	var d float32
	var s, sq uint32
	if m > 0 {
		if useAVX512 {
			d, s, sq = dotSumsU8AVX512(&q[0], &code[0], m)
		} else {
			d, s, sq = dotSumsU8AVX2(&q[0], &code[0], m)
		}
	}
	if m < len(q) {
		d2, s2, sq2 := dotSumsU8Generic(q[m:], code[m:len(q)])
		d, s, sq = d+d2, s+s2, sq+sq2
	}
	return d, s, sq
}

func sumU8(c []byte) (uint32, uint32) {
	m := len(c) &^ 63
	if !useAVX512 || m == 0 {
		return sumU8Generic(c)
	}
	s, sq := sumU8AVX512(&c[0], m)
	s2, sq2 := sumU8Generic(c[m:])
	return s + s2, sq + sq2
}

// The batch forms call the assembly directly when the dimension is a whole
// number of blocks, skipping the per-call tail handling: the AVX-512 float32
// and 8-bit kernels loop over the rows in assembly (one call per batch), the
// others are called per row.

func l2SqBatch(q, rows, out []float32) {
	d := len(q)
	switch {
	case useAVX512 && d%16 == 0:
		if len(out) > 0 {
			_ = rows[len(out)*d-1]
			l2SqBatchAVX512(&q[0], &rows[0], d, len(out), &out[0])
		}
	case useAVX2 && d%8 == 0:
		for i := range out {
			out[i] = l2SqAVX2(&q[0], &rows[i*d], d)
		}
	default:
		l2SqBatchGeneric(q, rows, out)
	}
}

func l2SqViews(q []float32, views [][]float32, out []float32) {
	d := len(q)
	if useAVX512 && d%16 == 0 && len(out) > 0 {
		l2SqViewsAVX512(&q[0], unsafe.Pointer(&views[0]), d, len(out), &out[0])
		return
	}
	for i, v := range views {
		out[i] = l2Sq(q, v[:d])
	}
}

func dotBatch(q, rows, out []float32) {
	d := len(q)
	switch {
	case useAVX512 && d%16 == 0:
		for i := range out {
			out[i] = dotAVX512(&q[0], &rows[i*d], d)
		}
	case useAVX2 && d%8 == 0:
		for i := range out {
			out[i] = dotAVX2(&q[0], &rows[i*d], d)
		}
	default:
		dotBatchGeneric(q, rows, out)
	}
}

func dotU8Batch(q []float32, codes []byte, out []float32) {
	d := len(q)
	switch {
	case useAVX512 && d%16 == 0:
		if len(out) > 0 {
			_ = codes[len(out)*d-1]
			m := 0
			if batch16 {
				m = len(out) &^ 15
			}
			if m > 0 {
				dotU8Batch16AVX512(&q[0], &codes[0], d, m, &out[0])
			}
			if m < len(out) {
				dotU8BatchAVX512(&q[0], &codes[m*d], d, len(out)-m, &out[m])
			}
		}
	case useAVX2 && d%8 == 0:
		for i := range out {
			out[i] = dotU8AVX2(&q[0], &codes[i*d], d)
		}
	default:
		dotU8BatchGeneric(q, codes, out)
	}
}

// u8BatchWidth is how many leading codes of each row the AVX-512 LVQ8
// batch kernels process for dimension d (the rest is done in Go, as by
// dotSumsU8); 0 means the whole batch goes row by row through dotSumsU8.
func u8BatchWidth(d int) int {
	if !useAVX512 {
		return 0
	}
	return d &^ 15
}

func dotSumsU8Batch(q []float32, codes []byte, dots []float32, sums, sumSqs []uint32) {
	d := len(q)
	n := len(dots)
	m := u8BatchWidth(d)
	if m == 0 || n == 0 {
		dotSumsU8BatchGeneric(q, codes, dots, sums, sumSqs)
		return
	}
	allCodes, allDots, allSums, allSqs := codes, dots, sums, sumSqs
	if pairs := n &^ 1; pairs > 0 && pairKernel {
		dotSumsU8Batch2AVX512(&q[0], &codes[0], d, pairs, &dots[0], &sums[0], &sumSqs[0])
		codes, dots, sums, sumSqs = codes[pairs*d:], dots[pairs:], sums[pairs:], sumSqs[pairs:]
	}
	if len(dots) > 0 {
		dotSumsU8BatchAVX512(&q[0], &codes[0], d, len(dots), &dots[0], &sums[0], &sumSqs[0])
	}
	if m < d {
		// The last d%16 codes, added exactly as dotSumsU8 adds its Go tail.
		for i := range allDots {
			d2, s2, sq2 := dotSumsU8Generic(q[m:], allCodes[i*d+m:(i+1)*d])
			allDots[i] += d2
			allSums[i] += s2
			allSqs[i] += sq2
		}
	}
}

// dotSumsU4Split with AVX-512: whole 64-byte blocks of complete bytes in
// one pass (dotSumsU4SplitAVX512), the remaining complete bytes (fewer
// than 64) in one k-masked step added to that in float32
// (dotSumsU4SplitTailAVX512), and an odd dimension's last nibble in Go.
// The batch form follows exactly these steps, so results are bit-identical.
func dotSumsU4Split(qs []float32, code []byte, dim int) (float32, uint32, uint32) {
	if !useAVX512 {
		return dotSumsU4SplitFrom(qs, code, dim, 0)
	}
	h := (dim + 1) / 2
	full := dim / 2
	m := full &^ 63
	var d float32
	var s, sq uint32
	if m > 0 {
		d, s, sq = dotSumsU4SplitAVX512(&qs[0], h, &code[0], m)
	}
	if r := full - m; r > 0 {
		dotSumsU4SplitTailAVX512(&qs[0], h, &code[0], 1, &d, &s, &sq, m, r)
	}
	if dim&1 == 1 {
		d2, s2, sq2 := dotSumsU4SplitFrom(qs, code, dim, full)
		d, s, sq = d+d2, s+s2, sq+sq2
	}
	return d, s, sq
}

// u4BatchWidth is how many leading code bytes of each row the AVX-512 LVQ4
// block kernels process for dimension dim, as dotSumsU4Split does (whole
// 64-byte blocks of complete bytes); the k-masked tail kernel covers the
// other complete bytes, and an odd dimension's last nibble is done in Go.
func u4BatchWidth(dim int) int {
	if !useAVX512 {
		return 0
	}
	return (dim / 2) &^ 63
}

func dotSumsU4SplitBatch(qs []float32, dim int, codes []byte, dots []float32, sums, sumSqs []uint32) {
	h := (dim + 1) / 2
	n := len(dots)
	full := dim / 2
	if !useAVX512 || full == 0 || n == 0 {
		dotSumsU4SplitBatchGeneric(qs, dim, codes, dots, sums, sumSqs)
		return
	}
	m := u4BatchWidth(dim)
	if m == 0 {
		clear(dots)
		clear(sums)
		clear(sumSqs)
	} else {
		c, ds, ss, sqs := codes, dots, sums, sumSqs
		if pairs := n &^ 1; pairs > 0 && pairKernel {
			dotSumsU4SplitBatch2AVX512(&qs[0], h, &c[0], pairs, &ds[0], &ss[0], &sqs[0], m)
			c, ds, ss, sqs = c[pairs*h:], ds[pairs:], ss[pairs:], sqs[pairs:]
		}
		if len(ds) > 0 {
			dotSumsU4SplitBatchAVX512(&qs[0], h, &c[0], len(ds), &ds[0], &ss[0], &sqs[0], m)
		}
	}
	if r := full - m; r > 0 {
		dotSumsU4SplitTailAVX512(&qs[0], h, &codes[0], n, &dots[0], &sums[0], &sumSqs[0], m, r)
	}
	if dim&1 == 1 {
		for i := range dots {
			d2, s2, sq2 := dotSumsU4SplitFrom(qs, codes[i*h:(i+1)*h], dim, full)
			dots[i] += d2
			sums[i] += s2
			sumSqs[i] += sq2
		}
	}
}

// lvq8Dists runs the rows through the AVX-512 kernel, which stores its
// compacted row numbers 16 at a time (idx gets that much room).
func lvq8Dists(t LVQ8Terms, dots, offs, scs []float32, base []float64, thr float32, idx []int32) []int32 {
	n := len(dots)
	if !useAVX512 || n == 0 {
		return lvq8DistsGeneric(t, dots, offs, scs, base, thr, idx)
	}
	k := len(idx)
	if cap(idx)-k < n+16 {
		idx = append(idx[:cap(idx)], make([]int32, n+16-(cap(idx)-k))...)
	}
	idx = idx[:cap(idx)]
	_, _, _ = offs[n-1], scs[n-1], base[n-1]
	got := lvq8DistsAVX512(&dots[0], &offs[0], &scs[0], &base[0], n, t.Norm2, t.SumQ2, t.Mul, thr, &idx[k])
	return idx[:k+got]
}

func absMax(q []float32) float32 {
	if !useAVX512 || len(q) == 0 {
		return absMaxGeneric(q)
	}
	return absMaxF32AVX512(&q[0], len(q))
}

// u8Quantize: the AVX-512 loop writes whole steps of 16 dimensions, into
// hl's capacity (u8QueryCap).
func u8Quantize(q []float32, inv float64, hl []int8) {
	if !useAVX512 || len(q) == 0 || cap(hl) < u8QueryCap(len(q)) || len(hl) != 8*u8Groups(len(q)) {
		u8QuantizeGeneric(q, inv, hl)
		return
	}
	quantizeU8QueryAVX512(&q[0], len(q), inv, &hl[0])
}

// dotU8Blocked: with pf the kernel may prefetch anywhere in codes.
func dotU8Blocked(hl []int8, s float32, codes []byte, out []float32, pf, acc bool) {
	if !useAVX512 || len(out) == 0 {
		dotU8BlockedGeneric(hl, s, codes, out, acc)
		return
	}
	_ = codes[len(out)/U8BlockRows*64*len(hl)/8-1]
	lim := 0
	if pf {
		lim = len(codes)
	}
	a := 0
	if acc {
		a = 1
	}
	dotU8BlockedVNNI(&hl[0], &codes[0], len(hl)/8, len(out)/U8BlockRows, s, &out[0], lim, a)
}

// FastBlocked reports whether DotU8Blocked and L2SqBlocked have SIMD
// kernels on this CPU (AVX-512 F, BW and VNNI, which DotU8Blocked's
// VPDPBUSD needs: useAVX512); without them a caller should keep the row
// layout, whose kernels are faster than the portable blocked code.
func FastBlocked() bool { return useAVX512 }

func l2SqBlocked(q, rows, out []float32) {
	if !useAVX512 || len(out) == 0 {
		l2SqBlockedGeneric(q, rows, out)
		return
	}
	l2SqBlockedAVX512(&q[0], &rows[0], len(q), len(out)/U8BlockRows, &out[0])
}

func l2SqF64Views(q []float32, views [][]float32, out []float64) {
	if (!useAVX2 && !useAVX512) || len(q) == 0 {
		l2SqF64ViewsGeneric(q, views, out)
		return
	}
	l2SqF64ViewsAVX(&q[0], unsafe.Pointer(&views[0]), len(q), len(out), &out[0])
}

func ranksBelow(d []float32, n int, rank []int32) {
	if !useAVX512 || len(rank)%U8BlockRows != 0 {
		ranksBelowGeneric(d, n, rank)
		return
	}
	ranksBelowAVX512(&d[0], len(rank)/U8BlockRows, n, &rank[0])
}

func smallestK(d []float32, k int, s *Smallest) bool {
	if !useAVX512 {
		return smallestKGeneric(d, k, s)
	}
	m, kth := smallestAVX512(&d[0], len(d), k, &s.vals[0], &s.Idx[0], &s.Rank[0])
	if m < 0 {
		return false
	}
	s.M, s.Kth = m, kth
	return true
}

func prefetch(b []byte) {
	if len(b) > 0 {
		prefetchLines(&b[0], len(b))
	}
}
