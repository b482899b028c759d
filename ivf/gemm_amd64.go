//go:build amd64 && !purego

package ivf

import "golang.org/x/sys/cpu"

// useGemmAVX512 selects the assembly micro-kernel (AVX-512 F).
var useGemmAVX512 = cpu.X86.HasAVX512F

// gemmTileAVX512 is gemmTileGo in assembly (gemm_amd64.s); d ≥ 1.
//
//go:noescape
func gemmTileAVX512(a, b *float32, d int, c *float64, ldc int)

// gemmTile16AVX512 is gemmTile16Go in assembly (gemm_amd64.s); d ≥ 1.
//
//go:noescape
func gemmTile16AVX512(a, b *float32, d int, c *float64, ldc int)

func gemmTile16(a, b []float32, d int, c []float64, ldc int) {
	if useGemmAVX512 {
		_ = a[gemmRows*d-1]
		_ = b[gemmHalf*d-1]
		_ = c[(gemmRows-1)*ldc+gemmHalf-1]
		gemmTile16AVX512(&a[0], &b[0], d, &c[0], ldc)
		return
	}
	gemmTile16Go(a, b, d, c, ldc)
}

func gemmTile(a, b []float32, d int, c []float64, ldc int) {
	if useGemmAVX512 {
		_ = a[gemmRows*d-1]
		_ = b[gemmCols*d-1]
		_ = c[(gemmRows-1)*ldc+gemmCols-1]
		gemmTileAVX512(&a[0], &b[0], d, &c[0], ldc)
		return
	}
	gemmTileGo(a, b, d, c, ldc)
}

// addWidenAVX512 adds float64(src[i]) to dst[i] for i < n (n a positive
// multiple of 16), in gemm_amd64.s.
//
//go:noescape
func addWidenAVX512(dst *float64, src *float32, n int)

// addWiden adds float64(src[i]) to dst[i] for every i < len(src) (each sum
// rounded once, so the result matches the scalar loop bit for bit).
func addWiden(dst []float64, src []float32) {
	dst = dst[:len(src)]
	m := 0
	if useGemmAVX512 {
		m = len(src) &^ 15
		if m > 0 {
			addWidenAVX512(&dst[0], &src[0], m)
		}
	}
	addWidenGo(dst[m:], src[m:])
}

// scanAVX512 is scanGo for n a positive multiple of 8 (gemm_amd64.s).
//
//go:noescape
func scanAVX512(dots, hi, lo, kt *float64, n int, xU float64, out *float64) float64

func scan(dots, hi, lo, kt []float64, xU float64, out []float64) float64 {
	if useGemmAVX512 && len(dots) > 0 && len(dots)%8 == 0 {
		n := len(dots)
		_, _, _, _ = hi[n-1], lo[n-1], kt[n-1], out[n-1]
		return scanAVX512(&dots[0], &hi[0], &lo[0], &kt[0], n, xU, &out[0])
	}
	return scanGo(dots, hi, lo, kt, xU, out)
}

func gemmImpl() string {
	if useGemmAVX512 {
		return "avx512"
	}
	return "go"
}
