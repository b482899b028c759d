package vecmath

import (
	"bytes"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestDotU8Blocked(t *testing.T) { withImpls(t, testDotU8Blocked) }

// testDotU8Blocked checks BlockU8's layout (and U8BlockedCode's reading
// of it), and DotU8Blocked against the exact integer sum of the quantized
// query (bit for bit) and against the float64 dot product of the float
// query within U8Query's bound, at edge sizes (rows 0, 1, 15, 16, 17, …;
// D mod 4 = 0…3; odd and even group counts; block counts odd and even),
// with the rows past n of the last block at 0.
func testDotU8Blocked(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 8))
	var u U8Query
	for _, d := range []int{1, 2, 3, 4, 5, 7, 8, 9, 16, 17, 49, 50, 51, 64, 127, 128, 255, 256, 257, 260, 511, 512, 513, 784} {
		for _, n := range []int{0, 1, 15, 16, 17, 31, 32, 33, 48, 100, 300} {
			q := make([]float32, d)
			for i := range q {
				q[i] = float32(r.NormFloat64())
			}
			codes := make([]byte, n*d)
			for i := range codes {
				codes[i] = byte(r.Uint32())
			}
			nb := (n + 15) / 16
			g := (d + 3) / 4
			blk := make([]byte, BlockU8Len(n, d))
			if len(blk) != nb*16*4*g {
				t.Fatalf("D=%d n=%d: BlockU8Len %d, want %d", d, n, len(blk), nb*16*4*g)
			}
			for i := range blk {
				blk[i] = 0xee // BlockU8 must zero the padding
			}
			BlockU8(blk, codes, d)
			for i := range nb * 16 {
				for j := range 4 * g {
					want := byte(0)
					if i < n && j < d {
						want = codes[i*d+j]
					}
					// chunk c of 256 dimensions, g_c groups, after the
					// whole earlier chunks of 64 groups
					c, jc := j/256, j%256
					gc := min(64, g-64*c)
					if got := blk[nb*64*64*c+i/16*64*gc+64*(jc/4)+4*(i%16)+jc%4]; got != want {
						t.Fatalf("D=%d n=%d: row %d dim %d is %d in the block layout, want %d", d, n, i, j, got, want)
					}
				}
				if i < n {
					if got := U8BlockedCode(nil, blk, i, d); !bytes.Equal(got, codes[i*d:(i+1)*d]) {
						t.Fatalf("D=%d n=%d: U8BlockedCode(row %d) = %v, want %v", d, n, i, got, codes[i*d:(i+1)*d])
					}
				}
			}
			u.Set(q)
			out := make([]float32, nb*16)
			DotU8Blocked(&u, blk, out)
			for i := range nb * 16 {
				if i >= n {
					if out[i] != 0 {
						t.Fatalf("D=%d n=%d: padding row %d = %v", d, n, i, out[i])
					}
					continue
				}
				c := codes[i*d : (i+1)*d]
				if want := u8BlockedExact(&u, c); math.Float32bits(out[i]) != math.Float32bits(want) {
					t.Fatalf("D=%d n=%d row %d: %v, want S·float32(Σ qi·c) = %v", d, n, i, out[i], want)
				}
				want, _ := refDotU(q, c)
				if diff, tol := math.Abs(float64(out[i])-want), u8BlockedBound(&u, c, want); diff > tol {
					t.Fatalf("D=%d n=%d row %d: %v, float64 dot %v (diff %g > bound %g)", d, n, i, out[i], want, diff, tol)
				}
			}
		}
	}
}

// u8BlockedExact is DotU8Blocked's result for one row of codes c: per
// chunk of 256 dimensions S_c·float32(Σ qi_j·c_j), the sum exact in int64
// (and within int32), the chunks' results added in order in float32.
func u8BlockedExact(u *U8Query, c []byte) float32 {
	var out float32
	for lo := 0; lo < len(c); lo += 256 {
		var acc int64
		for j := lo; j < min(lo+256, len(c)); j++ {
			acc += int64(u.Int(j)) * int64(c[j])
		}
		if acc != int64(int32(acc)) {
			panic("u8BlockedExact: sum overflows int32")
		}
		if lo == 0 {
			out = u.Scale(lo) * float32(acc)
		} else {
			out += u.Scale(lo) * float32(acc)
		}
	}
	return out
}

// u8BlockedBound bounds |DotU8Blocked − q·c| for the float query q that u
// was set from: U8Query's (S/2)·Σc (with a 1e-6 relative allowance for
// the float64 division by S in Set), plus the two float32 roundings of
// the result (int32 to float32, the product by S), 2⁻²³ of it, and a
// subnormal allowance.
func u8BlockedBound(u *U8Query, c []byte, want float64) float64 {
	var sum float64
	for _, v := range c {
		sum += float64(v)
	}
	// (chunked: the chunks' results' roundings and additions, 2⁻²³ of each
	// partial sum, bounded by 2⁻²³·chunks·(|want| + S/2·Σc) with margin)
	chunks := float64((len(c) + 255) / 256)
	return 0.5*float64(u.S)*sum*(1+1e-6)*(1+chunks*0x1p-21) + chunks*0x1p-22*math.Abs(want) + 0x1p-140
}

func TestU8QuerySet(t *testing.T) { withImpls(t, testU8QuerySet) }

// testU8QuerySet checks the quantized query: S = max|q|/32639 (0 for a
// zero query), |q_j − S·qi_j| ≤ S/2, |qi_j| ≤ 32639 with the largest |q_j|
// at 32639, h_j in [−127, 127], l_j = qi_j − 256·h_j in [−128, 127], the
// padding of the last group 0, the bytes those of the portable loop (for
// the AVX-512 one), and the memory reused (dimensions vary).
func testU8QuerySet(t *testing.T) {
	r := rand.New(rand.NewPCG(10, 10))
	var u U8Query
	for it := range 2000 {
		d := 1 + r.IntN(U8BlockedMaxDim)
		if it%5 == 0 {
			d = 1 + r.IntN(4*U8BlockedMaxDim) // chunked
		}
		q := make([]float32, d)
		scale := math.Ldexp(1, r.IntN(200)-100)
		for i := range q {
			q[i] = float32(r.NormFloat64() * scale)
		}
		if it%10 == 0 {
			clear(q) // S = 0
		}
		u.Set(q)
		m := 0.0
		for _, v := range q {
			m = max(m, math.Abs(float64(v)))
		}
		if want := float32(m / 32639); u.S != want {
			t.Fatalf("D=%d: S = %v, want %v", d, u.S, want)
		}
		if u.Dim() != d || len(u.hl) != 8*((d+3)/4) {
			t.Fatalf("D=%d: Dim %d, %d bytes", d, u.Dim(), len(u.hl))
		}
		for lo := 0; lo < d; lo += 256 { // the kernels' bytes are the portable loop's, chunk by chunk
			qc := q[lo:min(lo+256, d)]
			m := 0.0
			for _, v := range qc {
				m = max(m, math.Abs(float64(v)))
			}
			if s := u.Scale(lo); s != float32(m/32639) {
				t.Fatalf("D=%d: chunk at %d has scale %v, want %v", d, lo, s, float32(m/32639))
			}
			if u.Scale(lo) == 0 {
				continue
			}
			want := make([]int8, 8*((len(qc)+3)/4))
			u8QuantizeGeneric(qc, 1/float64(u.Scale(lo)), want)
			if got := u.hl[2*lo : 2*lo+len(want)]; !slices.Equal(got, want) {
				t.Fatalf("D=%d chunk at %d: bytes %v, portable loop %v", d, lo, got, want)
			}
		}
		top := int32(0)
		for j, v := range q {
			qi := u.Int(j)
			h, l := u.hl[8*(j/4)+j%4], u.hl[8*(j/4)+4+j%4]
			if h < -127 || qi < -32639 || qi > 32639 {
				t.Fatalf("D=%d dim %d: qi %d (h %d, l %d) out of range", d, j, qi, h, l)
			}
			sc := u.Scale(j)
			if e := math.Abs(float64(v) - float64(sc)*float64(qi)); e > 0.5*float64(sc)*(1+1e-9) || (sc == 0 && qi != 0) || sc > u.S {
				t.Fatalf("D=%d dim %d: q %v, S_c·qi = %v·%d (error %g > S_c/2, S %v)", d, j, v, sc, qi, e, u.S)
			}
			top = max(top, qi, -qi)
		}
		if u.S != 0 && top != 32639 {
			t.Fatalf("D=%d: largest |qi| %d, want 32639", d, top)
		}
		for j := d; j < 4*((d+3)/4); j++ {
			if u.Int(j) != 0 {
				t.Fatalf("D=%d: padding dim %d has qi %d", d, j, u.Int(j))
			}
		}
	}
}

// TestDotU8BlockedImpls checks that every kernel set gives the generic
// kernel's bits, on random dimensions 1…256, block counts 1…9 and codes,
// with queries of random scale, zero queries (S = 0), extreme codes (all
// 0 or 255) and extreme finite queries (near ±MaxFloat32, where products
// overflow to ±Inf in both, and tiny or subnormal ones).
func TestDotU8BlockedImpls(t *testing.T) { withImpls(t, testDotU8BlockedImpls) }

func testDotU8BlockedImpls(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 11))
	var u U8Query
	for it := range 3000 {
		d := 1 + r.IntN(127)
		if it%4 == 0 {
			d = 1 + r.IntN(U8BlockedMaxDim)
		}
		nb := 1 + r.IntN(9)
		q := make([]float32, d)
		scale := math.Ldexp(1, r.IntN(40)-20)
		switch it % 8 {
		case 1:
			scale = 0
		case 2:
			scale = math.MaxFloat32 / 4
		case 3:
			scale = 0x1p-140
		}
		for i := range q {
			q[i] = float32(max(-math.MaxFloat32, min(math.MaxFloat32, r.NormFloat64()*scale)))
		}
		if it%8 == 4 {
			for i := range q {
				q[i] = float32(math.MaxFloat32)
				if r.IntN(2) == 0 {
					q[i] = -q[i]
				}
			}
		}
		blk := make([]byte, BlockU8Len(16*nb, d))
		for i := range blk {
			blk[i] = byte(r.Uint32())
			switch it % 5 {
			case 1:
				blk[i] = 255
			case 2:
				blk[i] = 0
			}
		}
		u.Set(q)
		want := make([]float32, 16*nb)
		dotU8BlockedGeneric(u.hl, u.S, blk, want, false)
		got := make([]float32, 16*nb)
		DotU8Blocked(&u, blk, got)
		for i := range got {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) || math.IsNaN(float64(got[i])) {
				t.Fatalf("it %d D=%d nb=%d S=%v row %d: %v, generic %v", it, d, nb, u.S, i, got[i], want[i])
			}
		}
		// Added to earlier values (DotU8Blocked's later chunks): one
		// float32 addition each, the same bits in both.
		for i := range want {
			want[i] = float32(r.NormFloat64() * scale)
			got[i] = want[i]
		}
		dotU8BlockedGeneric(u.hl, u.S, blk, want, true)
		dotU8Blocked(u.hl, u.S, blk, got, it%2 == 0, true)
		for i := range got {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				t.Fatalf("it %d D=%d nb=%d S=%v row %d, added: %v, generic %v", it, d, nb, u.S, i, got[i], want[i])
			}
		}
	}
}

func TestL2SqBlocked(t *testing.T) { withImpls(t, testL2SqBlocked) }

// testL2SqBlocked checks BlockF32's layout and L2SqBlocked against the
// float64 reference at edge sizes, and the padding rows' distance |q|².
func testL2SqBlocked(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 9))
	for _, d := range []int{1, 2, 3, 4, 5, 7, 16, 17, 49, 50, 51, 64, 127} {
		for _, n := range []int{0, 1, 15, 16, 17, 31, 32, 33, 100} {
			q := make([]float32, d)
			for i := range q {
				q[i] = float32(r.NormFloat64())
			}
			rows := make([]float32, n*d)
			for i := range rows {
				rows[i] = float32(r.NormFloat64())
			}
			nb := (n + 15) / 16
			blk := make([]float32, nb*16*d)
			for i := range blk {
				blk[i] = 9 // BlockF32 must zero the padding rows
			}
			BlockF32(blk, rows, d)
			for i := range nb * 16 {
				for j := range d {
					want := float32(0)
					if i < n {
						want = rows[i*d+j]
					}
					if got := blk[i/16*16*d+16*j+i%16]; got != want {
						t.Fatalf("D=%d n=%d: row %d dim %d is %v in the block layout, want %v", d, n, i, j, got, want)
					}
				}
			}
			out := make([]float32, nb*16)
			L2SqBlocked(q, blk, out)
			zero := make([]float32, d)
			for i := range nb * 16 {
				row := zero
				if i < n {
					row = rows[i*d : (i+1)*d]
				}
				want, abs := refL2Sq(q, row)
				check(t, "L2SqBlocked", out[i], want, abs, d)
			}
		}
	}
}

// BenchmarkU8QuerySet is the per-query quantization at GloVe's D = 50,
// per kernel set.
func BenchmarkU8QuerySet(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 1))
	q := make([]float32, 50)
	for i := range q {
		q[i] = float32(r.NormFloat64())
	}
	withImplsB(b, func(b *testing.B) {
		var u U8Query
		for b.Loop() {
			u.Set(q)
		}
	})
}

// TestDotU8BlockedBoundTight checks that U8Query's bound (S/2)·Σc is
// reached, not only respected: with every q_j/S just below k_j + ½ (so
// that every rounding goes the same way, by almost S/2) and every code
// 255, DotU8Blocked is off the float64 dot by at least 0.95 of the bound
// and by at most the bound.
func TestDotU8BlockedBoundTight(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 13))
	for _, d := range []int{4, 17, 50, 127} {
		const s = 0x1p-10 // S, exactly: the largest q_j is 32639·S
		q := make([]float32, d)
		q[0] = 32639 * s
		for j := 1; j < d; j++ {
			q[j] = float32((float64(r.IntN(60000)-30000) + 0.49) * s)
		}
		var u U8Query
		u.Set(q)
		if u.S != s {
			t.Fatalf("D=%d: S = %v, want %v", d, u.S, s)
		}
		codes := make([]byte, 16*d)
		for i := range codes {
			codes[i] = 255
		}
		blk := make([]byte, BlockU8Len(16, d))
		BlockU8(blk, codes, d)
		out := make([]float32, 16)
		DotU8Blocked(&u, blk, out)
		want, _ := refDotU(q, codes[:d])
		bound := 0.5 * s * 255 * float64(d)
		if diff := math.Abs(float64(out[0]) - want); diff > u8BlockedBound(&u, codes[:d], want) || diff < 0.95*bound*float64(d-1)/float64(d) {
			t.Fatalf("D=%d: %v, float64 dot %v: off by %g, bound %g", d, out[0], want, diff, bound)
		}
	}
}

// TestPrefetch: the prefetch hints take any codes and slices — empty,
// shorter than a block, one or two blocks, chunked — without reading or
// changing them (no panic, the bytes unchanged).
func TestPrefetch(t *testing.T) {
	for _, d := range []int{1, 50, 256, 784} {
		for _, n := range []int{0, 1, 16, 17, 40} {
			codes := make([]byte, BlockU8Len(n, d))
			for i := range codes {
				codes[i] = byte(i)
			}
			for _, cut := range []int{len(codes), len(codes) / 2, min(1, len(codes)), 0} {
				PrefetchU8Blocked(codes[:cut], d)
			}
			for i, c := range codes {
				if c != byte(i) {
					t.Fatalf("d %d n %d: byte %d changed", d, n, i)
				}
			}
		}
	}
	for _, n := range []int{0, 1, 15, 16, 64, 1000} {
		f := make([]float64, n)
		PrefetchSlice(f, 64)
		PrefetchSlice(f, 0)
		PrefetchSlice(f[:0], 5)
		PrefetchSlice(make([]float32, n), n+3)
	}
}
