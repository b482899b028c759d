//go:build amd64 && !purego

package ivf

import "golang.org/x/sys/cpu"

// useGemmAVX512 selects the assembly micro-kernel (AVX-512 F).
var useGemmAVX512 = cpu.X86.HasAVX512F

// gemmTileAVX512 is gemmTileGo in assembly (gemm_amd64.s); d ≥ 1.
//
//go:noescape
func gemmTileAVX512(a, b *float32, d int, c *float64, ldc int)

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

func gemmImpl() string {
	if useGemmAVX512 {
		return "avx512"
	}
	return "go"
}
