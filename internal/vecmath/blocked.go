package vecmath

// U8BlockRows is the number of rows in a block of the dimension-major
// LVQ8 code layout of BlockU8 and DotU8Blocked.
const U8BlockRows = 16

// BlockU8 writes the n = len(codes)/dim rows of dim 8-bit codes
// (row-major: row i at codes[i*dim:(i+1)*dim]) into dst in the
// dimension-major block layout: rows in blocks of 16, and in block b the
// code of row 16b+r, dimension j at dst[b*16*dim + 16*j + r]; rows past n
// in the last block are zero. It panics unless len(codes) is a multiple of
// dim and len(dst) == ⌈n/16⌉·16·dim.
func BlockU8(dst, codes []byte, dim int) { block(dst, codes, dim, "BlockU8") }

// block writes the rows of src (dim values each, row-major) into dst in
// the dimension-major layout of BlockU8, panicking (naming fn) on a length
// mismatch.
func block[T byte | float32](dst, src []T, dim int, fn string) {
	if dim <= 0 || len(src)%dim != 0 {
		panic("vecmath: " + fn + " length mismatch")
	}
	n := len(src) / dim
	if len(dst) != (n+U8BlockRows-1)/U8BlockRows*U8BlockRows*dim {
		panic("vecmath: " + fn + " length mismatch")
	}
	clear(dst[n/U8BlockRows*U8BlockRows*dim:])
	for i := range n {
		blk := dst[i/U8BlockRows*U8BlockRows*dim:]
		r := i % U8BlockRows
		for j, v := range src[i*dim : (i+1)*dim] {
			blk[U8BlockRows*j+r] = v
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
func BlockF32(dst, rows []float32, dim int) { block(dst, rows, dim, "BlockF32") }

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

// RanksBelow sets rank[i] to the number of j < n with d[j] < d[i] (float
// comparison: a NaN is below nothing and nothing is below it) for every
// i < len(rank), so that for distinct values the ranks of d[:n] are a
// permutation of 0…n−1 and the m smallest are those ranked below m. With
// AVX-512 (FastBlocked) sixteen ranks are counted at once, all n values
// against each block of 16. It panics unless n ≤ len(d), len(rank) ≤
// len(d) and len(d) is a multiple of 16.
func RanksBelow(d []float32, n int, rank []int32) {
	if n < 0 || n > len(d) || len(rank) > len(d) || len(d)%U8BlockRows != 0 {
		panic("vecmath: RanksBelow lengths")
	}
	if len(rank) == 0 {
		return
	}
	ranksBelow(d, n, rank)
}

func ranksBelowGeneric(d []float32, n int, rank []int32) {
	for i := range rank {
		c := int32(0)
		for _, v := range d[:n] {
			if v < d[i] {
				c++
			}
		}
		rank[i] = c
	}
}
