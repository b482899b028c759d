package query

import (
	"context"

	"github.com/parqdb/parqdb/internal/source"
)

// DefaultVectorCacheBytes bounds allVectors, the copy of every source
// vector by ordinal that only the ground truth (ExactBatch,
// ExactFilteredBatch) uses, when OpenOptions.VectorCacheBytes is 0. It
// does not bound the vector store (vecstore.go), the exact source vectors
// per list that refine and the source encoding use: with
// VectorCacheBytes 0 only the memory budget (OpenOptions.Budget) bounds
// that.
const DefaultVectorCacheBytes = 1 << 30

// allVectors loads every canonical source vector once, by source row
// ordinal, if they fit the budget; it returns nil otherwise. Only the
// brute-force ground truth uses it; searches use the vector store.
func (ix *Index) allVectors(ctx context.Context) ([]float32, error) {
	ix.vecOnce.Do(func() {
		n := ix.table.NumRows()
		dim := int64(ix.Dim())
		if ix.vecBudget < 0 || n*dim*4 > ix.vecBudget {
			return
		}
		all := make([]float32, n*dim)
		// Scan may deliver row groups in any order: place rows by ordinal.
		err := ix.table.Scan(context.WithoutCancel(ctx), ix.layout, 0, func(b *source.Batch) error {
			o := (ix.fileStart[b.File] + b.FirstRow) * dim
			copy(all[o:o+int64(b.N)*dim], b.Vectors[:int64(b.N)*dim])
			return nil
		})
		if err != nil {
			ix.vecErr = err
			return
		}
		ix.vecAll = all
	})
	return ix.vecAll, ix.vecErr
}

// vectorOf returns the canonical source vector of ordinal ord, from the
// vector store when it holds it, else read from the source (one row: it
// does not fill the store).
func (ix *Index) vectorOf(ctx context.Context, ord int64) ([]float32, error) {
	v := make([]float32, ix.vstore.w)
	if err := ix.gatherVectors(ctx, []int64{ord}, v, nil); err != nil {
		return nil, err
	}
	return v[:ix.Dim():ix.Dim()], nil
}
