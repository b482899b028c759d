package vecmath

// LVQ8Terms are a query's terms of the LVQ8 squared distance of a row with
// offset o, scale s and code c (reconstruction x̂ = o + s·c):
//
//	‖q − x̂‖² = ‖q‖² + base − (o·2Σq + s·2·(q·c)),  base = D·o² + 2·o·s·Σc + s²·Σc²
//
// with q·c from DotU8Batch and base precomputed per row.
type LVQ8Terms struct {
	Norm2 float64 // ‖q‖²
	SumQ2 float64 // 2·Σq
	Mul   float32 // factor of the result (0.5 for cosine's _distance, else 1)
}

// Dist returns a row's LVQ8 distance from its offset, scale, base and code
// dot product:
//
//	float32(max(r, 0))·Mul,  r = (Norm2 + base) − (off·SumQ2 + (sc·2)·dot)
//
// in float64, each product rounded on its own (never fused), then rounded
// once to float32. It is the one definition the scan, the filtered plans
// and Dists share, so that they agree bit for bit.
func (t LVQ8Terms) Dist(off, sc float32, base float64, dot float32) float32 {
	a := t.Norm2 + base
	b := float64(float64(off) * t.SumQ2)
	c := float64(float64(sc) * 2 * float64(dot))
	r := a - (b + c)
	return float32(max(r, 0)) * t.Mul
}

// Dists overwrites dots[i] with Dist(offs[i], scs[i], base[i], dots[i]) for
// every row i < len(dots) and appends to idx, in increasing order, the rows
// whose distance is at most thr; it returns the extended idx. The results
// are bit-identical to Dist row by row for finite inputs (a NaN r gives 0
// here on some kernels, NaN in Dist). It panics unless offs, scs and base
// have len(dots) values.
func (t LVQ8Terms) Dists(dots, offs, scs []float32, base []float64, thr float32, idx []int32) []int32 {
	n := len(dots)
	if len(offs) != n || len(scs) != n || len(base) != n {
		panic("vecmath: LVQ8Terms.Dists length mismatch")
	}
	return lvq8Dists(t, dots, offs, scs, base, thr, idx)
}

func lvq8DistsGeneric(t LVQ8Terms, dots, offs, scs []float32, base []float64, thr float32, idx []int32) []int32 {
	offs, scs, base = offs[:len(dots)], scs[:len(dots)], base[:len(dots)]
	for i, dot := range dots {
		d := t.Dist(offs[i], scs[i], base[i], dot)
		dots[i] = d
		if d <= thr {
			idx = append(idx, int32(i))
		}
	}
	return idx
}

// U8BlockRows is the number of rows in a block of the dimension-major
// LVQ8 code layout of BlockU8 and DotU8Blocked.
const U8BlockRows = 16

// BlockU8 writes the n = len(codes)/dim rows of dim 8-bit codes
// (row-major: row i at codes[i*dim:(i+1)*dim]) into dst in the
// dimension-major block layout: rows in blocks of 16, and in block b the
// code of row 16b+r, dimension j at dst[b*16*dim + 16*j + r]; rows past n
// in the last block are zero. It panics unless len(codes) is a multiple of
// dim and len(dst) == ⌈n/16⌉·16·dim.
func BlockU8(dst, codes []byte, dim int) {
	if dim <= 0 || len(codes)%dim != 0 {
		panic("vecmath: BlockU8 length mismatch")
	}
	n := len(codes) / dim
	nb := (n + U8BlockRows - 1) / U8BlockRows
	if len(dst) != nb*U8BlockRows*dim {
		panic("vecmath: BlockU8 length mismatch")
	}
	clear(dst[n/U8BlockRows*U8BlockRows*dim:])
	for i := range n {
		blk := dst[i/U8BlockRows*U8BlockRows*dim:]
		r := i % U8BlockRows
		for j, c := range codes[i*dim : (i+1)*dim] {
			blk[U8BlockRows*j+r] = c
		}
	}
}

// DotU8Blocked sets out[i] = Σ_j q_j·float32(c_ij) for the len(out) rows
// (a multiple of 16) of codes in BlockU8's layout, len(q) dimensions. Each
// row is summed in dotU8Generic's order (four partial sums by j mod 4, the
// last len(q) mod 4 terms into the first, then (s0+s1)+(s2+s3)); with
// AVX-512 each term is fused into its partial sum (FMA), so the kernels
// agree to rounding, not bit for bit. It panics unless len(out) is a
// multiple of 16 and len(codes) == len(out)·len(q).
func DotU8Blocked(q []float32, codes []byte, out []float32) {
	if len(out)%U8BlockRows != 0 || len(codes) != len(out)*len(q) {
		panic("vecmath: DotU8Blocked length mismatch")
	}
	if len(q) == 0 {
		clear(out)
		return
	}
	dotU8Blocked(q, codes, out)
}

func dotU8BlockedGeneric(q []float32, codes []byte, out []float32) {
	d := len(q)
	for b := 0; b < len(out); b += U8BlockRows {
		blk := codes[b*d : (b+U8BlockRows)*d]
		for r := range U8BlockRows {
			var s0, s1, s2, s3 float32
			j := 0
			for ; j+4 <= d; j += 4 {
				s0 += q[j] * float32(blk[U8BlockRows*j+r])
				s1 += q[j+1] * float32(blk[U8BlockRows*(j+1)+r])
				s2 += q[j+2] * float32(blk[U8BlockRows*(j+2)+r])
				s3 += q[j+3] * float32(blk[U8BlockRows*(j+3)+r])
			}
			for ; j < d; j++ {
				s0 += q[j] * float32(blk[U8BlockRows*j+r])
			}
			out[b+r] = (s0 + s1) + (s2 + s3)
		}
	}
}

// BlockF32 is BlockU8 for float32 rows: the n = len(rows)/dim rows into
// dst dimension-major in blocks of 16 (row 16b+r, dimension j at
// dst[b*16*dim + 16*j + r]), rows past n zero. It panics unless len(rows)
// is a multiple of dim and len(dst) == ⌈n/16⌉·16·dim.
func BlockF32(dst, rows []float32, dim int) {
	if dim <= 0 || len(rows)%dim != 0 {
		panic("vecmath: BlockF32 length mismatch")
	}
	n := len(rows) / dim
	if len(dst) != (n+U8BlockRows-1)/U8BlockRows*U8BlockRows*dim {
		panic("vecmath: BlockF32 length mismatch")
	}
	clear(dst[n/U8BlockRows*U8BlockRows*dim:])
	for i := range n {
		blk := dst[i/U8BlockRows*U8BlockRows*dim:]
		r := i % U8BlockRows
		for j, v := range rows[i*dim : (i+1)*dim] {
			blk[U8BlockRows*j+r] = v
		}
	}
}

// L2SqBlocked sets out[i] = Σ_j (q_j − x_ij)² for the len(out) rows (a
// multiple of 16) of rows in BlockF32's layout, len(q) dimensions, summed
// in DotU8Blocked's order (four partial sums by j mod 4, the last len(q)
// mod 4 terms into the first, then (s0+s1)+(s2+s3); fused with AVX-512).
// It panics unless len(out) is a multiple of 16 and len(rows) ==
// len(out)·len(q).
func L2SqBlocked(q, rows, out []float32) {
	if len(out)%U8BlockRows != 0 || len(rows) != len(out)*len(q) {
		panic("vecmath: L2SqBlocked length mismatch")
	}
	if len(q) == 0 {
		clear(out)
		return
	}
	l2SqBlocked(q, rows, out)
}

func l2SqBlockedGeneric(q, rows, out []float32) {
	d := len(q)
	for b := 0; b < len(out); b += U8BlockRows {
		blk := rows[b*d : (b+U8BlockRows)*d]
		for r := range U8BlockRows {
			var s0, s1, s2, s3 float32
			j := 0
			for ; j+4 <= d; j += 4 {
				t0 := blk[U8BlockRows*j+r] - q[j]
				t1 := blk[U8BlockRows*(j+1)+r] - q[j+1]
				t2 := blk[U8BlockRows*(j+2)+r] - q[j+2]
				t3 := blk[U8BlockRows*(j+3)+r] - q[j+3]
				s0 += t0 * t0
				s1 += t1 * t1
				s2 += t2 * t2
				s3 += t3 * t3
			}
			for ; j < d; j++ {
				t := blk[U8BlockRows*j+r] - q[j]
				s0 += t * t
			}
			out[b+r] = (s0 + s1) + (s2 + s3)
		}
	}
}
