package query

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/parqdb/parqdb/internal/vecmath"
	"github.com/parqdb/parqdb/lvq"
	"github.com/parqdb/parqdb/metadata"
	"github.com/parqdb/parqdb/postings"
)

// lvq8Batch returns n random LVQ8 rows of dimension dim.
func lvq8Batch(r *rand.Rand, n, dim int) postings.Batch {
	b := postings.Batch{CodeLen: dim}
	for i := range n {
		b.CIDs = append(b.CIDs, 3)
		b.Keys = append(b.Keys, byte(i))
		b.KeyEnds = append(b.KeyEnds, len(b.Keys))
		b.Offsets = append(b.Offsets, float32(r.NormFloat64()))
		b.Scales = append(b.Scales, float32(r.Float64()/100))
		for range dim {
			b.Codes = append(b.Codes, byte(r.IntN(256)))
		}
	}
	return b
}

// TestLVQ8ScanLayout checks the LVQ8 scan layouts at dimensions that are
// and are not multiples of the kernel block: at stride, each row's code,
// then zeros up to the stride; blocked, each row's code in
// vecmath.BlockU8's place and list.code's rows; and scoreLVQ8 over either
// gives the lvq package's distance for every row (blocked, within the
// query quantization's bound: vecmath.U8Query moves q·c by at most
// (S/2)·Σc, so the distance ‖q‖² + ‖x̂‖² − 2(o·Σq + s·q·c) by at most
// s·S·Σc).
func TestLVQ8ScanLayout(t *testing.T) {
	for _, blocked := range []bool{false, true} {
		for _, dim := range []int{1, 7, 16, 50, 129} {
			r := rand.New(rand.NewPCG(uint64(dim), 1))
			const n = 37
			b := lvq8Batch(r, n, dim)
			codes := b.Codes
			l := newList(3, b, metadata.EncodingLVQ8, dim, blocked)
			w := stride(dim)
			if blocked {
				g := (dim + 3) / 4 // groups of 4 dimensions
				if len(l.codes) != 48*4*g || !l.blocked {
					t.Fatalf("dim %d: %d code bytes, want 3 blocks of 16 rows of %d", dim, len(l.codes), 4*g)
				}
				for i := range 48 {
					for j := range 4 * g {
						want := byte(0)
						if i < n && j < dim {
							want = codes[i*dim+j]
						}
						if c := l.codes[i/16*64*g+64*(j/4)+4*(i%16)+j%4]; c != want {
							t.Fatalf("dim %d row %d dim %d: %d, want %d", dim, i, j, c, want)
						}
					}
				}
			} else if len(l.codes) != n*w {
				t.Fatalf("dim %d: %d code bytes, want %d rows of %d", dim, len(l.codes), n, w)
			}
			for i := range n {
				if got := l.code(nil, i, dim); !slices.Equal(got, codes[i*dim:(i+1)*dim]) {
					t.Fatalf("dim %d blocked %v: code(%d) = %v, want %v", dim, blocked, i, got, codes[i*dim:(i+1)*dim])
				}
				if blocked {
					continue
				}
				row := l.codes[i*w : (i+1)*w]
				for j, c := range row {
					if j < dim && c != codes[i*dim+j] || j >= dim && c != 0 {
						t.Fatalf("dim %d row %d byte %d: %d", dim, i, j, c)
					}
				}
			}
			q := make([]float32, dim)
			for j := range q {
				q[j] = float32(r.NormFloat64())
			}
			// as prepareQuery leaves it: q, and q zero-padded to the stride
			s := &scratch{q: q, qp: append(append([]float32(nil), q...), make([]float32, w-dim)...), lists: []*list{l}}
			s.sumQuery()
			s.u8q.Set(q)
			s.top.reset(n)
			(&Index{}).scoreLVQ8(s, false, &Stats{})
			if got := s.top.best(); len(got) != n {
				t.Fatalf("dim %d: %d candidates, want %d", dim, len(got), n)
			}
			lq := lvq.NewQuery(q)
			for _, c := range s.top.h {
				i := int(c.i)
				one := []float32{0}
				lq.L2Sq8Batch(codes[i*dim:(i+1)*dim], l.batch.Offsets[i:i+1], l.batch.Scales[i:i+1], one)
				want := one[0]
				tol := 1e-5 * math.Max(1, float64(want))
				if blocked {
					sum := 0.0
					for _, v := range codes[i*dim : (i+1)*dim] {
						sum += float64(v)
					}
					tol += float64(l.batch.Scales[i]) * float64(s.u8q.S) * sum
				}
				if math.Abs(float64(c.dist-want)) > tol {
					t.Errorf("dim %d blocked %v row %d: distance %v, lvq says %v", dim, blocked, i, c.dist, want)
				}
			}
		}
	}
}

// BenchmarkLVQ8ScanLayout compares the LVQ8 scan kernel over 1,000 rows
// padded to the stride (the layout newList builds) with the same rows
// unpadded. Padding stays while the unpadded form is slower: vecmath's LVQ8
// kernels finish the last D mod 16 codes of each row in Go.
func BenchmarkLVQ8ScanLayout(b *testing.B) {
	for _, d := range []int{50, 100, 784} {
		const n = 1000
		r := rand.New(rand.NewPCG(1, 2))
		w := stride(d)
		q := make([]float32, d)
		qp := make([]float32, w)
		for i := range q {
			q[i] = float32(r.NormFloat64())
			qp[i] = q[i]
		}
		codes := make([]byte, n*d)
		for i := range codes {
			codes[i] = byte(r.IntN(256))
		}
		padded := make([]byte, n*w)
		for i := range n {
			copy(padded[i*w:], codes[i*d:(i+1)*d])
		}
		out := make([]float32, n)
		b.Run(fmt.Sprintf("D=%d/padded", d), func(b *testing.B) {
			for b.Loop() {
				vecmath.DotU8Batch(qp, padded, w, out)
			}
		})
		b.Run(fmt.Sprintf("D=%d/unpadded", d), func(b *testing.B) {
			for b.Loop() {
				vecmath.DotU8Batch(q, codes, d, out)
			}
		})
	}
}
