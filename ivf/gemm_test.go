package ivf

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// refDot is the scalar reference: Σ x_i c_i in float64 (exact products of
// float32 values, sequential sum) and Σ|x_i c_i| for the error bound.
func refDot(x, c []float32) (dot, abs float64) {
	for i, v := range x {
		p := float64(v) * float64(c[i])
		dot += p
		abs += math.Abs(p)
	}
	return dot, abs
}

// checkGemm runs gemmDots (both the dispatched kernel and the portable one)
// on m rows × k centroids and checks every product against refDot within
// the documented bound, that padding is zero, and that both kernels agree
// bit for bit with themselves when the rows are packed at other positions.
func checkGemm(t *testing.T, rng *rand.Rand, m, k, d int, gen func() float32) {
	t.Helper()
	xs := make([]float32, m*d)
	cs := make([]float32, k*d)
	for i := range xs {
		xs[i] = gen()
	}
	for i := range cs {
		cs[i] = gen()
	}
	a := packRows(nil, xs, m, d)
	b := packPanels(nil, cs, k, d)
	kpad := roundUp(k, gemmHalf)
	mpad := roundUp(m, gemmRows)
	if len(a) != mpad*d || len(b) != kpad*d {
		t.Fatalf("packed lengths %d, %d; want %d, %d", len(a), len(b), mpad*d, kpad*d)
	}
	out := gemmDots(a, b, d, nil)
	outGo := make([]float64, mpad*kpad)
	for p0 := 0; p0 < kpad; p0 += gemmCols {
		w := min(gemmCols, kpad-p0)
		for q := 0; q < mpad/gemmRows; q++ {
			tile, panel, o := a[q*gemmRows*d:(q+1)*gemmRows*d], b[p0*d:(p0+w)*d], outGo[q*gemmRows*kpad+p0:]
			if w == gemmCols {
				gemmTileGo(tile, panel, d, o, kpad)
			} else {
				gemmTile16Go(tile, panel, d, o, kpad)
			}
		}
	}
	g := gemmGamma(d)
	for i := range mpad {
		for j := range kpad {
			got, gotGo := out[i*kpad+j], outGo[i*kpad+j]
			if i >= m || j >= k {
				if got != 0 || gotGo != 0 {
					t.Fatalf("padding (%d,%d) = %v / %v, want 0", i, j, got, gotGo)
				}
				continue
			}
			want, abs := refDot(xs[i*d:(i+1)*d], cs[j*d:(j+1)*d])
			bound := g*abs + float64(d)*0x1p-148
			if math.Abs(got-want) > bound || math.Abs(gotGo-want) > bound {
				t.Fatalf("m=%d k=%d d=%d (%d,%d): gemm %v, portable %v, reference %v, bound %v", m, k, d, i, j, got, gotGo, want, bound)
			}
		}
	}
	// Position independence: the last row alone (tile position 0) gives
	// the same bits as inside the block.
	if m > 1 {
		last := xs[(m-1)*d:]
		a1 := packRows(nil, last, 1, d)
		o1 := gemmDots(a1, b, d, nil)
		for j := range k {
			if o1[j] != out[(m-1)*kpad+j] {
				t.Fatalf("m=%d k=%d d=%d: row %d centroid %d depends on its tile position: %v vs %v", m, k, d, m-1, j, o1[j], out[(m-1)*kpad+j])
			}
		}
	}
}

func TestGemmDots(t *testing.T) {
	t.Logf("gemm kernel: %s", gemmImpl())
	rng := rand.New(rand.NewPCG(31, 32))
	gauss := func() float32 { return float32(rng.NormFloat64()) }
	pixel := func() float32 { return float32(rng.IntN(256)) }
	wide := func() float32 { return float32(rng.NormFloat64() * math.Pow(2, float64(rng.IntN(60)-30))) }
	dims := []int{1, 2, 3, 7, 15, 16, 17, 31, 33, 63, 100, 127, 128, 129, 255, 256, 257, 511, 784, 1000, 1023, 1024}
	for _, d := range dims {
		t.Run(fmt.Sprintf("D%d", d), func(t *testing.T) {
			checkGemm(t, rng, 9, 33, d, gauss)
			checkGemm(t, rng, 8, 32, d, pixel)
			checkGemm(t, rng, 3, 5, d, wide)
		})
	}
	shapes := []struct{ m, k int }{{1, 1}, {1, 16}, {1, 32}, {7, 31}, {8, 48}, {8, 64}, {17, 65}, {40, 100}}
	for _, s := range shapes {
		t.Run(fmt.Sprintf("m%d_k%d", s.m, s.k), func(t *testing.T) {
			for _, d := range []int{1, 5, 128, 130} {
				checkGemm(t, rng, s.m, s.k, d, gauss)
			}
		})
	}
	t.Run("subnormal", func(t *testing.T) {
		tiny := func() float32 { return float32(rng.NormFloat64() * 0x1p-70) }
		checkGemm(t, rng, 9, 33, 129, tiny)
	})
}

func FuzzGemmDots(f *testing.F) {
	f.Add(uint64(1), uint8(3), uint8(5), uint16(130), false)
	f.Add(uint64(2), uint8(8), uint8(32), uint16(784), true)
	f.Fuzz(func(t *testing.T, seed uint64, m, k uint8, d uint16, pixels bool) {
		mm, kk, dd := int(m%20)+1, int(k%70)+1, int(d%1100)+1
		rng := rand.New(rand.NewPCG(seed, 7))
		gen := func() float32 { return float32(rng.NormFloat64() * 10) }
		if pixels {
			gen = func() float32 { return float32(rng.IntN(256)) }
		}
		checkGemm(t, rng, mm, kk, dd, gen)
	})
}

// BenchmarkGemmDots measures the kernel on one assignment block: 64 rows
// against 992 centroids (Fashion-MNIST sized, D = 784) and 1024 × 128.
func BenchmarkGemmDots(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, s := range []struct{ m, k, d int }{{64, 992, 784}, {64, 1024, 128}} {
		b.Run(fmt.Sprintf("%dx%dx%d_%s", s.m, s.k, s.d, gemmImpl()), func(b *testing.B) {
			a := packRows(nil, randVecs(rng, s.m, s.d, 1), s.m, s.d)
			p := packPanels(nil, randVecs(rng, s.k, s.d, 1), s.k, s.d)
			var out []float64
			for b.Loop() {
				out = gemmDots(a, p, s.d, out)
			}
			b.ReportMetric(float64(s.m*s.k*s.d)*2*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}

func TestAddWiden(t *testing.T) {
	rng := rand.New(rand.NewPCG(33, 34))
	for _, n := range []int{0, 1, 15, 16, 17, 33, 784} {
		src := randVecs(rng, n, 1, 1e3)
		dst := make([]float64, n)
		want := make([]float64, n)
		for i := range dst {
			dst[i] = rng.NormFloat64() * 1e6
			want[i] = dst[i] + float64(src[i])
		}
		addWiden(dst, src)
		for i := range dst {
			if dst[i] != want[i] {
				t.Fatalf("n=%d: dst[%d] = %v, want %v", n, i, dst[i], want[i])
			}
		}
	}
}

func TestScan(t *testing.T) {
	rng := rand.New(rand.NewPCG(35, 36))
	for _, n := range []int{0, 1, 7, 8, 16, 33, 992} {
		dots, hi, lo, kt := make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)
		for j := range n {
			dots[j] = rng.NormFloat64() * 1e4
			hi[j] = rng.NormFloat64() * 1e6
			lo[j] = hi[j] - rng.Float64()
			kt[j] = rng.Float64() * 1e-3
			if j%5 == 4 {
				hi[j], lo[j], kt[j] = math.Inf(1), math.Inf(1), 0 // padding
			}
		}
		xU := rng.Float64() * 1e3
		out := make([]float64, n)
		got := scan(dots, hi, lo, kt, xU, out)
		want := math.Inf(1)
		for j := range n {
			e := float64(xU * kt[j])
			want = min(want, float64(float64(hi[j]-2*dots[j])+e))
			if w := float64(float64(lo[j]-2*dots[j]) - e); out[j] != w {
				t.Fatalf("n=%d: out[%d] = %v, want %v", n, j, out[j], w)
			}
		}
		if got != want {
			t.Fatalf("n=%d: min = %v, want %v", n, got, want)
		}
	}
}
