package vecmath

import (
	"math/rand/v2"
	"testing"
)

func TestDotU8Blocked(t *testing.T) { withImpls(t, testDotU8Blocked) }

// testDotU8Blocked checks BlockU8's layout and DotU8Blocked against the
// float64 reference at edge sizes (rows 0, 1, 15, 16, 17, …; odd
// dimensions and D mod 4 = 1…3), and the rows past n of the last block
// at 0.
func testDotU8Blocked(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 8))
	for _, d := range []int{1, 2, 3, 4, 5, 7, 16, 17, 49, 50, 51, 64, 127, 300} {
		for _, n := range []int{0, 1, 15, 16, 17, 31, 32, 33, 100} {
			q := make([]float32, d)
			for i := range q {
				q[i] = float32(r.NormFloat64())
			}
			codes := make([]byte, n*d)
			for i := range codes {
				codes[i] = byte(r.Uint32())
			}
			nb := (n + 15) / 16
			blk := make([]byte, nb*16*d)
			for i := range blk {
				blk[i] = 0xee // BlockU8 must zero the padding rows
			}
			BlockU8(blk, codes, d)
			for i := range nb * 16 {
				for j := range d {
					want := byte(0)
					if i < n {
						want = codes[i*d+j]
					}
					if got := blk[i/16*16*d+16*j+i%16]; got != want {
						t.Fatalf("D=%d n=%d: row %d dim %d is %d in the block layout, want %d", d, n, i, j, got, want)
					}
				}
			}
			out := make([]float32, nb*16)
			DotU8Blocked(q, blk, out)
			for i := range nb * 16 {
				if i >= n {
					if out[i] != 0 {
						t.Fatalf("D=%d n=%d: padding row %d = %v", d, n, i, out[i])
					}
					continue
				}
				want, abs := refDotU(q, codes[i*d:(i+1)*d])
				check(t, "DotU8Blocked", out[i], want, abs, d)
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
