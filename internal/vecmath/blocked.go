package vecmath

import (
	"math"
	"unsafe"
)

// U8BlockRows is the number of rows in a block of the LVQ8 code layout of
// BlockU8 and DotU8Blocked.
const U8BlockRows = 16

// U8BlockedMaxDim is the largest dimension of one chunk of BlockU8's
// layout and U8Query: DotU8Blocked's integer sum Σ_j c_j·qi_j over a
// chunk, with |qi_j| ≤ 32639 and c_j ≤ 255, stays within int32 while
// D·255·32639 < 2³¹, i.e. up to D = 258; 256 keeps a margin. Larger
// dimensions are split into chunks of 256 (the last one shorter), each
// with its own query scale, whose float32 results are added.
const U8BlockedMaxDim = 256

// u8ChunkGroups is the number of groups of 4 dimensions in a whole chunk.
const u8ChunkGroups = U8BlockedMaxDim / 4

// u8Groups is the number of groups of 4 dimensions of BlockU8's layout
// for dimension dim (dim rounded up to a multiple of 4, over 4).
func u8Groups(dim int) int { return (dim + 3) / 4 }

// u8Chunks is the number of chunks of dimension dim: ⌈dim/256⌉.
func u8Chunks(dim int) int { return (dim + U8BlockedMaxDim - 1) / U8BlockedMaxDim }

// BlockU8Len returns the length of BlockU8's layout of n rows of dim
// codes: ⌈n/16⌉ blocks of 16 rows of dim codes rounded up to a multiple
// of 4.
func BlockU8Len(n, dim int) int {
	return (n + U8BlockRows - 1) / U8BlockRows * U8BlockRows * 4 * u8Groups(dim)
}

// BlockU8 writes the n = len(codes)/dim rows of dim 8-bit codes
// (row-major: row i at codes[i*dim:(i+1)*dim]) into dst in the block
// layout of DotU8Blocked. Up to 256 dimensions: rows in blocks of 16,
// dimensions in groups of 4 (G = ⌈dim/4⌉ groups), and each row's 4 codes
// of a group contiguous, so that the code of row 16b+r, dimension 4g+t is
// at dst[b*64*G + 64*g + 4*r + t]. Above 256 the dimensions are split
// into chunks of 256 (64 groups; the last chunk holds the rest, G_c
// groups), each laid out so over all ⌈n/16⌉ blocks, chunk after chunk:
// dimension 256c + 4g + t of row 16b+r is at
// dst[nb*64*64*c + b*64*G_c + 64*g + 4*r + t], nb = ⌈n/16⌉. The codes of
// the dimensions past dim (up to 4G) and of the rows past n in the last
// block are zero. It panics unless dim > 0, len(codes) is a multiple of
// dim and len(dst) == BlockU8Len(n, dim).
func BlockU8(dst, codes []byte, dim int) {
	if dim <= 0 || len(codes)%dim != 0 {
		panic("vecmath: BlockU8 length mismatch")
	}
	n := len(codes) / dim
	if len(dst) != BlockU8Len(n, dim) {
		panic("vecmath: BlockU8 length mismatch")
	}
	clear(dst)
	nb := (n + U8BlockRows - 1) / U8BlockRows
	for c := range u8Chunks(dim) {
		lo, hi := c*U8BlockedMaxDim, min((c+1)*U8BlockedMaxDim, dim)
		chunk := dst[nb*64*u8ChunkGroups*c:]
		bs := 64 * u8Groups(hi-lo) // bytes per block of the chunk
		for i := range n {
			blk := chunk[i/U8BlockRows*bs:]
			r := i % U8BlockRows
			for j, v := range codes[i*dim+lo : i*dim+hi] {
				blk[64*(j/4)+4*r+j%4] = v
			}
		}
	}
}

// U8BlockedCode appends row i's dim codes, from codes in BlockU8's
// layout, to dst.
func U8BlockedCode(dst, codes []byte, i, dim int) []byte {
	nb := len(codes) / (64 * u8Groups(dim))
	for c := range u8Chunks(dim) {
		lo, hi := c*U8BlockedMaxDim, min((c+1)*U8BlockedMaxDim, dim)
		bs := 64 * u8Groups(hi-lo)
		chunk := codes[nb*64*u8ChunkGroups*c:]
		blk := chunk[i/U8BlockRows*bs : (i/U8BlockRows+1)*bs]
		r := i % U8BlockRows
		for j := range hi - lo {
			dst = append(dst, blk[64*(j/4)+4*r+j%4])
		}
	}
	return dst
}

// U8Query is a float32 query quantized for DotU8Blocked: q_j ≈ S_c·qi_j
// with the integers qi_j = round(q_j/S_c) in [−32639, 32639], S_c =
// max |q_j| / 32639 over the dimensions j of q_j's chunk c (dimensions
// 256c…256c+255: one chunk up to 256 dimensions, U8BlockedMaxDim), each
// split into two signed bytes qi_j = 256·h_j + l_j (h_j = ⌊(qi_j +
// 128)/256⌋ in [−127, 127], l_j in [−128, 127]) for VPDPBUSD. Rounding
// q_j to the nearest multiple of S_c moves it by at most S_c/2 ≤ S/2
// (S = max_c S_c), so for codes c
//
//	|Σ_j S_c·qi_j·c_j − Σ_j q_j·c_j| ≤ (S/2)·Σ_j c_j,
//
// about 2⁻¹⁶·max|q_j|·Σc_j (while S is a normal float32, i.e. max|q_j| ≥
// 32639·2⁻¹²⁶; below that the rounding of S adds up to 32639·2⁻¹⁵⁰ per
// dimension). Set it once per query; the zero value is the query of
// dimension 0.
type U8Query struct {
	// S is the largest chunk scale (the only one up to 256 dimensions):
	// qi_j·S_c approximates q_j. A chunk's scale is 0 when every q_j of
	// it is 0 (or its max|q_j|/32639 rounds to 0 in float32), and then
	// every qi_j of it is 0.
	S   float32
	dim int
	// cs holds the scale S_c of each chunk.
	cs []float32
	// hl holds, for each group g of 4 dimensions, h of dimensions 4g…4g+3
	// at hl[8g:8g+4] and l at hl[8g+4:8g+8]; 0 past dim.
	hl []int8
}

// u8QueryMax is the largest |qi_j|: 256·127 + 127, so that h_j ≤ 127.
const u8QueryMax = 32639

// Set quantizes q (finite values) into u, reusing u's memory.
func (u *U8Query) Set(q []float32) {
	u.dim = len(q)
	n := 8 * u8Groups(len(q))
	if c := u8QueryCap(len(q)); cap(u.hl) < c {
		u.hl = make([]int8, c)
	}
	u.hl = u.hl[:n]
	u.cs = u.cs[:0]
	u.S = 0
	for lo := 0; lo < len(q); lo += U8BlockedMaxDim {
		qc := q[lo:min(lo+U8BlockedMaxDim, len(q))]
		hl := u.hl[2*lo : 2*lo+8*u8Groups(len(qc))]
		s := float32(float64(absMax(qc)) / u8QueryMax)
		u.cs = append(u.cs, s)
		u.S = max(u.S, s)
		if s == 0 {
			clear(hl)
			continue
		}
		u8Quantize(qc, 1/float64(s), hl)
	}
}

// Scale returns S_c, the scale of dimension j's chunk (q_j ≈ S_c·qi_j).
func (u *U8Query) Scale(j int) float32 { return u.cs[j/U8BlockedMaxDim] }

// u8QueryCap is the capacity U8Query.Set gives hl for dimension d: room
// for the AVX-512 loop's whole steps of 16 dimensions (32 bytes each), at
// least 8·⌈d/4⌉.
func u8QueryCap(d int) int { return 32 * ((d + 15) / 16) }

// absMaxGeneric returns max_j |q_j| for finite q (0 for an empty q),
// comparing the bits: for finite values the order of |v|'s bits is the
// order of |v| (four chains of max).
func absMaxGeneric(q []float32) float32 {
	var m0, m1, m2, m3 uint32
	j := 0
	for ; j+4 <= len(q); j += 4 {
		m0 = max(m0, math.Float32bits(q[j])&0x7fffffff)
		m1 = max(m1, math.Float32bits(q[j+1])&0x7fffffff)
		m2 = max(m2, math.Float32bits(q[j+2])&0x7fffffff)
		m3 = max(m3, math.Float32bits(q[j+3])&0x7fffffff)
	}
	for ; j < len(q); j++ {
		m0 = max(m0, math.Float32bits(q[j])&0x7fffffff)
	}
	return math.Float32frombits(max(m0, m1, m2, m3))
}

// u8QuantizeGeneric sets hl (8·⌈len(q)/4⌉ bytes, U8Query's layout) to the
// h and l bytes of qi_j = round(q_j·inv), inv = 1/S, and the last group's
// padding to 0.
//
// q_j·(1/S) in float64 is within 32639·2⁻⁵¹ of q_j/S: rounding it to the
// nearest integer (halves away from 0: trunc(x + copysign(0.5, x)),
// without branches, as signs are random) leaves |q_j − S·qi_j| ≤ S/2 but
// for that. |q_j/S| ≤ 1.5·32639 even when S is subnormal (S is rounded to
// nearest and not 0), where the clamp may act.
func u8QuantizeGeneric(q []float32, inv float64, hl []int8) {
	clear(hl[len(hl)-8:])
	for g := 0; 4*g < len(q); g++ {
		hl := hl[8*g : 8*g+8 : 8*g+8]
		for t, v := range q[4*g : min(4*g+4, len(q))] {
			x := float64(v) * inv
			half := math.Float64frombits(math.Float64bits(x)&(1<<63) | math.Float64bits(0.5))
			qi := min(max(int32(x+half), -u8QueryMax), u8QueryMax)
			h := (qi + 128) >> 8 // ⌊(qi+128)/256⌋
			hl[t&3] = int8(h)
			hl[4+t&3] = int8(qi - 256*h)
		}
	}
}

// Dim returns the dimension of the query u was set to.
func (u *U8Query) Dim() int { return u.dim }

// Int returns qi_j, the quantized value of dimension j (q_j ≈ S·qi_j).
func (u *U8Query) Int(j int) int32 {
	return 256*int32(u.hl[8*(j/4)+j%4]) + int32(u.hl[8*(j/4)+4+j%4])
}

// DotU8Blocked sets out[i] to the dot product of the quantized query u
// (U8Query: within (S/2)·Σ_j c_ij of the float query's q·c_i) with row
// i's codes, for the len(out) rows (a multiple of 16) of codes in
// BlockU8's layout: per chunk c, S_c·float32(Σ_j qi_j·c_ij) over its
// dimensions, the integer sum exact (int32, see U8BlockedMaxDim), and the
// chunks' float32 results added in chunk order, so that every kernel gives
// the same bits. It panics unless len(out) is a multiple of 16 and
// len(codes) == BlockU8Len(len(out), u.Dim()).
func DotU8Blocked(u *U8Query, codes []byte, out []float32) {
	if len(out)%U8BlockRows != 0 || len(codes) != BlockU8Len(len(out), u.dim) {
		panic("vecmath: DotU8Blocked length mismatch")
	}
	if u.dim == 0 {
		clear(out)
		return
	}
	if len(u.cs) == 1 {
		// (no prefetch: one chunk's blocks are read in address order,
		// which the CPU's own prefetchers follow)
		dotU8Blocked(u.hl, u.S, codes, out, false, false)
		return
	}
	// Chunk after chunk, over slices of at most u8ChunkRows rows: the
	// first chunk's results into out, each next one's added to them.
	nb := len(out) / U8BlockRows
	for b0 := 0; b0 < nb; b0 += u8ChunkRows / U8BlockRows {
		b1 := min(nb, b0+u8ChunkRows/U8BlockRows)
		o := out[b0*U8BlockRows : b1*U8BlockRows]
		for c, s := range u.cs {
			lo, hi := c*U8BlockedMaxDim, min((c+1)*U8BlockedMaxDim, u.dim)
			g := u8Groups(hi - lo)
			chunk := codes[nb*64*u8ChunkGroups*c:]
			// (to the end of the codes: the kernel reads b1−b0 blocks and
			// may prefetch the next chunk's, read next)
			blk := chunk[b0*64*g:]
			hl := u.hl[2*lo : 2*lo+8*g]
			dotU8Blocked(hl, s, blk, o, true, c > 0)
		}
	}
}

// u8ChunkRows is how many rows DotU8Blocked scores at a time over chunked
// dimensions: their results stay in the core's cache while each next
// chunk's are added to them.
const u8ChunkRows = 256

// dotU8BlockedGeneric sets out to s·float32(Σ_j qi_j·c_ij) (with acc,
// adds it to out, one float32 addition) for the len(out) rows of the
// first blocks of codes, blocks of 16 rows of len(hl)/8 groups (one
// chunk); codes may go on past them (with pf, dotU8Blocked's kernel may
// prefetch there).
func dotU8BlockedGeneric(hl []int8, s float32, codes []byte, out []float32, acc bool) {
	g4 := len(hl) / 8
	bs := 64 * g4
	for b := 0; b < len(out); b += U8BlockRows {
		blk := codes[b/U8BlockRows*bs : (b/U8BlockRows+1)*bs]
		for r := range U8BlockRows {
			var sum int32
			for g := range g4 {
				c := blk[64*g+4*r : 64*g+4*r+4]
				hl := hl[8*g : 8*g+8]
				for t, v := range c {
					sum += int32(v) * (256*int32(hl[t]) + int32(hl[4+t]))
				}
			}
			v := float32(s * float32(sum)) // (the conversion keeps it from fusing with +)
			if acc {
				v += out[b+r]
			}
			out[b+r] = v
		}
	}
}

// BlockF32 writes the n = len(rows)/dim float32 rows into dst
// dimension-major in blocks of 16 rows: row 16b+r, dimension j at
// dst[b*16*dim + 16*j + r], rows past n zero. It panics unless len(rows)
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
// in four partial sums by j mod 4, the last len(q) mod 4 terms into the
// first, then (s0+s1)+(s2+s3) (fused with AVX-512).
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

// prefetchHead is how many bytes of each of the two first blocks
// PrefetchU8Blocked prefetches.
const prefetchHead = 512

// PrefetchU8Blocked asks the CPU to start loading the codes DotU8Blocked
// reads first from codes (BlockU8's layout of dimension dim): the head of
// its first two blocks, one stream each, so that a scan about to reach
// another list (Index.scoreLVQ8) does not wait for memory at its start.
// A hint: it reads nothing and changes nothing.
func PrefetchU8Blocked(codes []byte, dim int) {
	bs := 64 * u8Groups(min(dim, U8BlockedMaxDim)) // bytes per block of the first chunk
	for b := 0; b < 2 && b*bs < len(codes); b++ {
		blk := codes[b*bs:]
		prefetch(blk[:min(len(blk), bs, prefetchHead)])
	}
}

// PrefetchSlice is PrefetchU8Blocked for the first n values of s.
func PrefetchSlice[T any](s []T, n int) {
	if n = min(n, len(s)); n > 0 {
		prefetch(unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), n*int(unsafe.Sizeof(s[0]))))
	}
}
