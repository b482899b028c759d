package indexer

import (
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/parqdb/parqdb/internal/vecmath"
	"github.com/parqdb/parqdb/lvq"
)

// LVQ4 sample check (docs/lvq.md, "When LVQ4 ranks poorly"): how well do
// LVQ4 codes alone rank this data? Up to lvq4CheckQueries sample rows are
// queries against the other sample rows (at most lvq4CheckWork/D·queries
// of them), exact top 10 against the top 10 by distance to the codes'
// reconstructions.
const (
	lvq4CheckQueries = 100
	lvq4CheckWork    = 200_000_000 // distance terms per pass
	// LVQ4CheckRecall is the sample recall@10 below which a build with
	// lvq4 warns.
	LVQ4CheckRecall = 0.9
)

// lvq4SampleRecall returns the recall@10 of LVQ4 codes alone on the
// training sample (n rows of dim values) and the rows it used; ok is false
// when the sample is too small to say (fewer than 100 rows).
func lvq4SampleRecall(sample []float32, dim int, seed uint64) (recall float64, rows int, ok bool) {
	n := len(sample) / max(dim, 1)
	if n < 100 || dim == 0 {
		return 0, n, false
	}
	rows = min(n, max(1000, lvq4CheckWork/(dim*lvq4CheckQueries)))
	r := rand.New(rand.NewPCG(seed, 0x1f4))
	pick := r.Perm(n)[:rows]
	slices.Sort(pick)
	base := make([]float32, rows*dim)
	dec := make([]float32, rows*dim)
	code := make([]byte, lvq.CodeLen(4, dim))
	for i, p := range pick {
		x := sample[p*dim : (p+1)*dim]
		copy(base[i*dim:], x)
		o, s := lvq.Encode4(code, x)
		lvq.Decode4(dec[i*dim:(i+1)*dim], code, o, s)
	}
	const k = 10
	nq := min(lvq4CheckQueries, rows)
	exact, approx := make([]float32, rows), make([]float32, rows)
	var hit, total int
	for qi := range nq {
		q := base[qi*dim : (qi+1)*dim]
		vecmath.L2SqBatch(q, base, dim, exact)
		vecmath.L2SqBatch(q, dec, dim, approx)
		want, got := nearest(exact, qi, k), nearest(approx, qi, k)
		for _, j := range got {
			if slices.Contains(want, j) {
				hit++
			}
		}
		total += len(want)
	}
	return float64(hit) / float64(max(total, 1)), rows, true
}

// nearest returns the indexes of the k smallest d[j], j ≠ self, ties by
// the lower j, in ascending order.
func nearest(d []float32, self, k int) []int {
	best := make([]int, 0, k+1)
	for j := range d {
		if j == self {
			continue
		}
		if len(best) == k && d[j] >= d[best[k-1]] {
			continue
		}
		i := len(best)
		for i > 0 && d[best[i-1]] > d[j] {
			i--
		}
		best = slices.Insert(best, i, j)
		if len(best) > k {
			best = best[:k]
		}
	}
	return best
}

// checkLVQ4 warns when LVQ4 codes rank the training sample poorly.
func (b *builder) checkLVQ4() {
	rec, rows, ok := lvq4SampleRecall(b.sample, b.layout.Dim, b.opts.Seed)
	if !ok || rec >= LVQ4CheckRecall {
		return
	}
	denser := ""
	if int64(rows) < b.rows {
		denser = fmt.Sprintf("; over all %d rows, denser, it is lower", b.rows)
	}
	b.warn(fmt.Sprintf("lvq4: on %d sample rows the codes alone find %.2f of each row's 10 nearest (recall@10, below %.2f%s): search with --refine 4 or more, or build with --encoding lvq8 (docs/lvq.md, \"When LVQ4 ranks poorly\")",
		rows, rec, LVQ4CheckRecall, denser))
}
