//go:build purego || !amd64

package vecmath

const impl = "go"

func l2Sq(a, b []float32) float32         { return l2SqGeneric(a, b) }
func dot(a, b []float32) float32          { return dotGeneric(a, b) }
func dotU8(q []float32, c []byte) float32 { return dotU8Generic(q, c) }
func sumU8(c []byte) (uint32, uint32)     { return sumU8Generic(c) }
func l2SqBatch(q, rows, out []float32)    { l2SqBatchGeneric(q, rows, out) }
func l2SqViews(q []float32, views [][]float32, out []float32) {
	for i, v := range views {
		out[i] = l2SqGeneric(q, v[:len(q)])
	}
}
func dotBatch(q, rows, out []float32)               { dotBatchGeneric(q, rows, out) }
func dotU8Batch(q []float32, c []byte, o []float32) { dotU8BatchGeneric(q, c, o) }
func dotSumsU8(q []float32, c []byte) (float32, uint32, uint32) {
	return dotSumsU8Generic(q, c)
}
func dotSumsU8Batch(q []float32, codes []byte, dots []float32, sums, sumSqs []uint32) {
	dotSumsU8BatchGeneric(q, codes, dots, sums, sumSqs)
}

func dotSumsU4Split(qs []float32, code []byte, dim int) (float32, uint32, uint32) {
	return dotSumsU4SplitFrom(qs, code, dim, 0)
}

func dotSumsU4SplitBatch(qs []float32, dim int, codes []byte, dots []float32, sums, sumSqs []uint32) {
	dotSumsU4SplitBatchGeneric(qs, dim, codes, dots, sums, sumSqs)
}

func lvq8Dists(t LVQ8Terms, dots, offs, scs []float32, base []float64, thr float32, idx []int32) []int32 {
	return lvq8DistsGeneric(t, dots, offs, scs, base, thr, idx)
}

func absMax(q []float32) float32                     { return absMaxGeneric(q) }
func u8Quantize(q []float32, inv float64, hl []int8) { u8QuantizeGeneric(q, inv, hl) }

func dotU8Blocked(hl []int8, s float32, codes []byte, out []float32, _, acc bool) {
	dotU8BlockedGeneric(hl, s, codes, out, acc)
}

// FastBlocked reports whether DotU8Blocked and L2SqBlocked have SIMD
// kernels (never in this build).
func FastBlocked() bool { return false }

func l2SqBlocked(q, rows, out []float32) { l2SqBlockedGeneric(q, rows, out) }

func l2SqF64Views(q []float32, views [][]float32, out []float64) {
	l2SqF64ViewsGeneric(q, views, out)
}

func ranksBelow(d []float32, n int, rank []int32) { ranksBelowGeneric(d, n, rank) }

func smallestK(d []float32, k int, s *Smallest) bool { return smallestKGeneric(d, k, s) }

func prefetch([]byte) {}
