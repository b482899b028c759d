package query

import (
	"context"

	"github.com/parqdb/parqdb/internal/source"
)

// DefaultVectorCacheBytes bounds the in-memory copy of all canonical source
// vectors that refine and the source encoding use when the source is small
// enough; larger sources are read row by row on demand.
const DefaultVectorCacheBytes = 1 << 30

// vectorReader returns a function giving the canonical source vector of
// locs[i]: from the in-memory copy of every source vector when it fits the
// budget, else read for these locations now.
func (ix *Index) vectorReader(ctx context.Context, locs []source.RowLoc) (func(i int) []float32, error) {
	dim := ix.Dim()
	if all, starts, err := ix.allVectors(ctx); err != nil {
		return nil, err
	} else if all != nil {
		return func(i int) []float32 {
			o := (starts[locs[i].File] + locs[i].Row) * int64(dim)
			return all[o : o+int64(dim)]
		}, nil
	}
	vecs := make([]float32, len(locs)*dim)
	if err := ix.table.ReadVectors(ctx, ix.layout, locs, vecs); err != nil {
		return nil, err
	}
	return func(i int) []float32 { return vecs[i*dim : (i+1)*dim] }, nil
}

// allVectors loads every canonical source vector once, if they fit the
// budget; it returns nil otherwise. starts[f] is the ordinal of file f's
// first row.
func (ix *Index) allVectors(ctx context.Context) ([]float32, []int64, error) {
	ix.vecOnce.Do(func() {
		n := ix.table.NumRows()
		dim := int64(ix.Dim())
		if ix.vecBudget < 0 || n*dim*4 > ix.vecBudget {
			return
		}
		files := ix.table.Files()
		starts := make([]int64, len(files))
		var sum int64
		for i, f := range files {
			starts[i] = sum
			sum += f.Rows
		}
		all := make([]float32, 0, n*dim)
		err := ix.table.Scan(context.WithoutCancel(ctx), ix.layout, 0, func(b *source.Batch) error {
			all = append(all, b.Vectors[:b.N*int(dim)]...)
			return nil
		})
		if err != nil {
			ix.vecErr = err
			return
		}
		ix.vecAll, ix.vecStarts = all, starts
	})
	return ix.vecAll, ix.vecStarts, ix.vecErr
}
