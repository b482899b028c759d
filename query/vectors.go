package query

import (
	"context"

	"github.com/parqdb/parqdb/internal/source"
)

// DefaultVectorCacheBytes bounds the in-memory copy of all canonical source
// vectors that refine and the source encoding use when the source is small
// enough; larger sources are read row by row on demand.
const DefaultVectorCacheBytes = 1 << 30

// allVectors loads every canonical source vector once, by source row
// ordinal, if they fit the budget; it returns nil otherwise.
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

// vectorOf returns the canonical source vector of ordinal ord.
func (ix *Index) vectorOf(ctx context.Context, ord int64) ([]float32, error) {
	all, err := ix.allVectors(ctx)
	if err != nil {
		return nil, err
	}
	if all != nil {
		d := int64(ix.Dim())
		return all[ord*d : (ord+1)*d : (ord+1)*d], nil
	}
	return ix.readVectors(ctx, []int64{ord})
}
