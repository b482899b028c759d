package vecmath

// LVQ8Terms are a query's terms of the LVQ8 squared distance of a row with
// offset o, scale s and code c (reconstruction x̂ = o + s·c):
//
//	‖q − x̂‖² = ‖q‖² + base − (o·2Σq + s·2·(q·c)),  base = D·o² + 2·o·s·Σc + s²·Σc²
//
// with q·c from DotU8Batch and base precomputed per row.
type LVQ8Terms struct {
	Norm2 float64 // ‖q‖²
	SumQ2 float64 // 2·Σq
	Mul   float32 // factor of the result (0.5 for cosine's _distance, else 1)
}

// Dist returns a row's LVQ8 distance from its offset, scale, base and code
// dot product:
//
//	float32(max(r, 0))·Mul,  r = (Norm2 + base) − (off·SumQ2 + (sc·2)·dot)
//
// in float64, each product rounded on its own (never fused), then rounded
// once to float32. It is the one definition the scan, the filtered plans
// and Dists share, so that they agree bit for bit.
func (t LVQ8Terms) Dist(off, sc float32, base float64, dot float32) float32 {
	a := t.Norm2 + base
	b := float64(float64(off) * t.SumQ2)
	c := float64(float64(sc) * 2 * float64(dot))
	r := a - (b + c)
	return float32(max(r, 0)) * t.Mul
}

// Dists overwrites dots[i] with Dist(offs[i], scs[i], base[i], dots[i]) for
// every row i < len(dots) and appends to idx, in increasing order, the rows
// whose distance is at most thr; it returns the extended idx. The results
// are bit-identical to Dist row by row for finite inputs (a NaN r gives 0
// here on some kernels, NaN in Dist). It panics unless offs, scs and base
// have len(dots) values.
func (t LVQ8Terms) Dists(dots, offs, scs []float32, base []float64, thr float32, idx []int32) []int32 {
	n := len(dots)
	if len(offs) != n || len(scs) != n || len(base) != n {
		panic("vecmath: LVQ8Terms.Dists length mismatch")
	}
	return lvq8Dists(t, dots, offs, scs, base, thr, idx)
}

func lvq8DistsGeneric(t LVQ8Terms, dots, offs, scs []float32, base []float64, thr float32, idx []int32) []int32 {
	offs, scs, base = offs[:len(dots)], scs[:len(dots)], base[:len(dots)]
	for i, dot := range dots {
		d := t.Dist(offs[i], scs[i], base[i], dot)
		dots[i] = d
		if d <= thr {
			idx = append(idx, int32(i))
		}
	}
	return idx
}
