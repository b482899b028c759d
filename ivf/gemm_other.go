//go:build !amd64 || purego

package ivf

func gemmTile(a, b []float32, d int, c []float64, ldc int) { gemmTileGo(a, b, d, c, ldc) }

func gemmImpl() string { return "go" }

func addWiden(dst []float64, src []float32) { addWidenGo(dst, src) }
