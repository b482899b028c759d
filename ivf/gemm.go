package ivf

import "math"

// Tiled "GEMM form" dot products: a block of rows × a block of centroids.
//
// Layouts (docs/ivf.md, "GEMM kernel"):
//   - centroids are packed in panels of gemmCols: panel p holds, for every
//     dimension t in order, the t-th elements of centroids p·gemmCols ..
//     p·gemmCols+gemmCols−1 (zero for centroids beyond k); when k rounded
//     up to gemmHalf is not a multiple of gemmCols, the last panel is a
//     half panel of gemmHalf centroids;
//   - rows are packed in tiles of gemmRows: tile q holds, for every
//     dimension t, the t-th elements of rows q·gemmRows .. (zero rows pad);
//   - the result is float64, row-major with a stride of kpad columns.
//
// Every dot product x·c is computed the same way, whatever its position in
// the tiles: for each block of gemmKC consecutive dimensions (in order), a
// float32 sum of products accumulated sequentially over t (fused or not),
// converted to float64 and added, in block order, to a float64 total that
// starts at 0. Its error is therefore at most
// (γ(min(D, gemmKC), u₃₂) + γ(nb, u₆₄)(1+γ₃₂))·Σ|x_i c_i| + D·2⁻¹⁵⁰ for nb
// blocks, which is what gemmGamma bounds.
const (
	gemmRows = 8   // rows per micro-kernel
	gemmCols = 32  // centroids per panel
	gemmHalf = 16  // centroids per half panel (the last one only)
	gemmKC   = 128 // dimensions per float32 partial sum
)

// gemmGamma returns the relative coefficient g such that a gemm dot product
// s of dimension d satisfies |s − x·c| ≤ g·Σ|x_i c_i| + d·2⁻¹⁴⁸, including
// the float64 evaluation of ‖c‖² and of the few operations that combine
// it with s and the error terms (see Assigner; 8 roundings are allowed).
func gemmGamma(d int) float64 {
	nb := (d + gemmKC - 1) / gemmKC
	return gamma(min(d, gemmKC), u32) + gamma(d+nb+8, u64)
}

func roundUp(n, m int) int { return (n + m - 1) / m * m }

// packPanels packs k centroids of dimension d (row-major in cs) into dst,
// grown as needed, and returns it with len roundUp(k, gemmHalf)·d.
func packPanels(dst, cs []float32, k, d int) []float32 {
	kpad := roundUp(k, gemmHalf)
	dst = grow(dst, kpad*d)
	for p0 := 0; p0 < kpad; p0 += gemmCols {
		w := min(gemmCols, kpad-p0) // panel width: gemmCols or gemmHalf
		panel := dst[p0*d : (p0+w)*d]
		for j := range w {
			cj := p0 + j
			if cj >= k {
				for t := range d {
					panel[t*w+j] = 0
				}
				continue
			}
			for t, v := range cs[cj*d : (cj+1)*d] {
				panel[t*w+j] = v
			}
		}
	}
	return dst
}

// packRows packs m rows of dimension d (row-major in xs) into dst, grown as
// needed, and returns it with len roundUp(m, gemmRows)·d.
func packRows(dst, xs []float32, m, d int) []float32 {
	mpad := roundUp(m, gemmRows)
	dst = grow(dst, mpad*d)
	for q := 0; q < mpad/gemmRows; q++ {
		tile := dst[q*gemmRows*d : (q+1)*gemmRows*d]
		for r := range gemmRows {
			i := q*gemmRows + r
			if i >= m {
				for t := range d {
					tile[t*gemmRows+r] = 0
				}
				continue
			}
			for t, v := range xs[i*d : (i+1)*d] {
				tile[t*gemmRows+r] = v
			}
		}
	}
	return dst
}

func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

// gemmDots sets out[i·kpad + j] to the dot product of packed row i and
// packed centroid j for every i < mpad, j < kpad (mpad = len(a)/d, kpad =
// len(b)/d); out is grown as needed and returned.
func gemmDots(a, b []float32, d int, out []float64) []float64 {
	mpad, kpad := len(a)/d, len(b)/d
	out = grow(out, mpad*kpad)
	clear(out)
	for p0 := 0; p0 < kpad; p0 += gemmCols {
		w := min(gemmCols, kpad-p0)
		panel := b[p0*d : (p0+w)*d]
		for q := 0; q < mpad/gemmRows; q++ {
			tile := a[q*gemmRows*d : (q+1)*gemmRows*d]
			if w == gemmCols {
				gemmTile(tile, panel, d, out[q*gemmRows*kpad+p0:], kpad)
			} else {
				gemmTile16(tile, panel, d, out[q*gemmRows*kpad+p0:], kpad)
			}
		}
	}
	return out
}

// gemmTile16Go is gemmTileGo for a half panel of gemmHalf centroids.
func gemmTile16Go(a, b []float32, d int, c []float64, ldc int) {
	var acc [gemmRows][gemmHalf]float32
	for kb := 0; kb < d; kb += gemmKC {
		n := min(gemmKC, d-kb)
		acc = [gemmRows][gemmHalf]float32{}
		for t := kb; t < kb+n; t++ {
			av := (*[gemmRows]float32)(a[t*gemmRows:])
			bv := (*[gemmHalf]float32)(b[t*gemmHalf:])
			for r, x := range av {
				ar := &acc[r]
				for j, y := range bv {
					ar[j] += x * y
				}
			}
		}
		for r := range gemmRows {
			row := c[r*ldc : r*ldc+gemmHalf]
			for j, v := range acc[r] {
				row[j] += float64(v)
			}
		}
	}
}

// gemmTileGo is the portable micro-kernel: c[r·ldc + j] += the dot product
// of row r of the packed tile a and centroid j of the packed panel b, in
// the blocked order described above.
func gemmTileGo(a, b []float32, d int, c []float64, ldc int) {
	var acc [gemmRows][gemmCols]float32
	for kb := 0; kb < d; kb += gemmKC {
		n := min(gemmKC, d-kb)
		acc = [gemmRows][gemmCols]float32{}
		for t := kb; t < kb+n; t++ {
			av := (*[gemmRows]float32)(a[t*gemmRows:])
			bv := (*[gemmCols]float32)(b[t*gemmCols:])
			for r, x := range av {
				ar := &acc[r]
				for j, y := range bv {
					ar[j] += x * y
				}
			}
		}
		for r := range gemmRows {
			row := c[r*ldc : r*ldc+gemmCols]
			for j, v := range acc[r] {
				row[j] += float64(v)
			}
		}
	}
}

// addWidenGo adds float64(src[i]) to dst[i] for every i < len(src).
func addWidenGo(dst []float64, src []float32) {
	dst = dst[:len(src)]
	for i, v := range src {
		dst[i] += float64(v)
	}
}

// scanGo is the candidate scan of the block path: with e = xU·kt[j],
// out[j] = (lo[j] − 2·dots[j]) − e for every j < len(dots), and it returns
// the minimum over j of (hi[j] − 2·dots[j]) + e (+Inf if empty).
func scanGo(dots, hi, lo, kt []float64, xU float64, out []float64) float64 {
	n := len(dots)
	hi, lo, kt, out = hi[:n], lo[:n], kt[:n], out[:n]
	best := math.Inf(1)
	for j, dot := range dots {
		e := xU * kt[j]
		if h := (hi[j] - 2*dot) + e; h < best {
			best = h
		}
		out[j] = (lo[j] - 2*dot) - e
	}
	return best
}
