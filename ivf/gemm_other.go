//go:build !amd64 || purego

package ivf

func gemmTile(a, b []float32, d int, c []float64, ldc int) { gemmTileGo(a, b, d, c, ldc) }

func gemmImpl() string { return "go" }

func addWiden(dst []float64, src []float32) { addWidenGo(dst, src) }

func scan(dots, hi, lo, kt []float64, xU float64, out []float64) float64 {
	return scanGo(dots, hi, lo, kt, xU, out)
}

func gemmTile16(a, b []float32, d int, c []float64, ldc int) { gemmTile16Go(a, b, d, c, ldc) }
