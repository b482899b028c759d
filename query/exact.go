package query

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/parqdb/parqdb/internal/source"
	"github.com/parqdb/parqdb/internal/vecmath"
	"github.com/parqdb/parqdb/metadata"
)

// ErrTooLarge means the source's vectors do not fit the in-memory budget
// that an operation needs (OpenOptions.VectorCacheBytes).
var ErrTooLarge = errors.New("source vectors exceed the vector cache budget")

// Warm prepares, once, what searches with opts need beyond the postings:
// the key → row map (for joins, refine and the source encoding), the
// vector store filled in one pass when every vector fits its budget (for
// refine, the source encoding and filters; vecstore.go), and for
// opts.Filter its matching rows (Filter), and for opts.Recall the
// snapshot's calibration (Calibration). Searches
// do this lazily on first use; Warm lets a caller pay for it up front, so
// that a query's storage rounds are only its own. Safe for concurrent use.
func (ix *Index) Warm(ctx context.Context, opts Options) error {
	// With Options.Recall, warm for the setting it picks (calibrating
	// the snapshot now if it has no calibration).
	opts, err := ix.recallOptions(ctx, opts)
	if err != nil {
		return err
	}
	needVectors := opts.Refine > 0 || ix.schema.Encoding == metadata.EncodingSource || opts.Filter != nil
	needKeys := !(opts.KeysOnly || opts.NoRows)
	if needVectors && !needKeys {
		// Exact vectors by list need the key → row map, unless the store
		// will not be filled whole and the vectors file serves them.
		fromFile, err := ix.vectorsFromFile(ctx, opts)
		if err != nil {
			return err
		}
		needKeys = !fromFile
	}
	if needKeys {
		if _, err := ix.keys(ctx); err != nil {
			return fmt.Errorf("index %q: key index: %w", ix.name, err)
		}
	}
	if needVectors {
		if err := ix.warmStore(ctx); err != nil {
			return err
		}
	}
	if opts.Filter != nil {
		return ix.warmFilter(ctx, opts)
	}
	return nil
}

// sourceKeys returns every source row's encoded key by ordinal, scanning
// the source once.
func (ix *Index) sourceKeys(ctx context.Context) (keys []byte, ends []int, err error) {
	ix.skOnce.Do(func() {
		ix.skErr = ix.table.Scan(context.WithoutCancel(ctx), ix.layout, 0, func(b *source.Batch) error {
			for i := 0; i < b.N; i++ {
				ix.skKeys = b.AppendKey(ix.skKeys, i)
				ix.skEnds = append(ix.skEnds, len(ix.skKeys))
			}
			return nil
		})
	})
	return ix.skKeys, ix.skEnds, ix.skErr
}

// KeyAt returns the encoded key of the source row with ordinal ord (rows
// numbered from 0 across the source files in order), for reading ground
// truth given as row numbers. The first call scans the source keys.
func (ix *Index) KeyAt(ctx context.Context, ord int64) ([]byte, error) {
	keys, ends, err := ix.sourceKeys(ctx)
	if err != nil {
		return nil, err
	}
	if ord < 0 || ord >= int64(len(ends)) {
		return nil, fmt.Errorf("%w: row %d is outside the source's %d rows", ErrBadQuery, ord, len(ends))
	}
	return keyAt(keys, ends, ord), nil
}

// ExactBatch returns the exact k nearest source rows of every query by
// brute force over all source vectors, with the same ordering (distance,
// then key) and _distance as Search: the ground truth for recall. Hits carry
// Key and Distance only. It needs the source vectors in memory
// (ErrTooLarge otherwise) and runs on up to workers goroutines (0: one per
// core).
func (ix *Index) ExactBatch(ctx context.Context, qs [][]float32, k int, workers int) (_ [][]Hit, err error) {
	defer func() { err = ix.staleOr(ctx, err) }()
	if k < 1 || k > MaxK {
		return nil, fmt.Errorf("%w: k = %d is outside [1, %d]", ErrBadQuery, k, MaxK)
	}
	vecs, err := ix.allVectors(ctx)
	if err != nil {
		return nil, err
	}
	if vecs == nil {
		return nil, fmt.Errorf("index %q: %w (%d rows × %d dimensions)", ix.name, ErrTooLarge, ix.table.NumRows(), ix.Dim())
	}
	keys, ends, err := ix.sourceKeys(ctx)
	if err != nil {
		return nil, err
	}
	keyOf := func(o int64) []byte { return keyAt(keys, ends, o) }
	out := make([][]Hit, len(qs))
	err = forEachQuery(ctx, len(qs), workers, func(_ context.Context, qi int) error {
		s := scratchPool.Get().(*scratch)
		defer scratchPool.Put(s)
		if err := ix.prepareQuery(s, qs[qi]); err != nil {
			return err
		}
		out[qi] = ix.exact(s, vecs, keyOf, k)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// keyAt returns the encoded key of source row o from sourceKeys' keys and
// ends (row o's key ends at ends[o]), capped so that appends copy.
func keyAt(keys []byte, ends []int, o int64) []byte {
	start := 0
	if o > 0 {
		start = ends[o-1]
	}
	return keys[start:ends[o]:ends[o]]
}

type ordDist struct {
	d   float32
	ord int64
}

// exact scans every vector in float32, keeps the best k+spare by a bounded
// selection, then re-decides the leaders in float64 like rerank.
func (ix *Index) exact(s *scratch, vecs []float32, keyOf func(int64) []byte, k int) []Hit {
	dim := ix.Dim()
	n := len(vecs) / dim
	half := ix.snap.Metric == metadata.MetricCosine
	keep := k + 8
	var best []ordDist
	const chunk = 1024
	s.dists = slices.Grow(s.dists[:0], chunk)[:chunk]
	worst, trimmed := float32(0), false
	for start := 0; start < n; start += chunk {
		m := min(chunk, n-start)
		vecmath.L2SqBatch(s.q, vecs[start*dim:(start+m)*dim], dim, s.dists[:m])
		for i, d := range s.dists[:m] {
			if trimmed && d > worst {
				continue
			}
			best = append(best, ordDist{d, int64(start + i)})
			if len(best) >= 8*keep {
				best, worst = trimBest(best, keep)
				trimmed = true
			}
		}
	}
	best, _ = trimBest(best, keep)
	kth := best[min(k, len(best))-1].d
	limit := kth + float32(rerankMargin)*kth + 1e-30
	hits := make([]Hit, 0, len(best))
	for _, b := range best {
		if b.d > limit {
			break
		}
		d := vecmath.L2SqF64(s.q, vecs[b.ord*int64(dim):(b.ord+1)*int64(dim)])
		hits = append(hits, Hit{Key: keyOf(b.ord), Distance: exactDistance(d, half)})
	}
	slices.SortFunc(hits, func(a, b Hit) int {
		return cmp.Or(cmp.Compare(a.Distance, b.Distance), bytes.Compare(a.Key, b.Key))
	})
	return hits[:min(k, len(hits))]
}

// trimBest sorts best by distance, keeps the first keep and returns the
// admission threshold (the keep-th distance).
func trimBest(best []ordDist, keep int) ([]ordDist, float32) {
	slices.SortFunc(best, func(a, b ordDist) int { return cmp.Or(cmp.Compare(a.d, b.d), cmp.Compare(a.ord, b.ord)) })
	best = best[:min(keep, len(best))]
	return best, best[len(best)-1].d
}

// DistancesTo returns the exact _distance from q to each source row of
// ords (ordinals, as KeyAt takes them), in float64 rounded once to
// float32 as Search's exact distances are: for checking a ground truth
// given as row numbers against the queries it is said to answer. The
// vectors come from the vector store when it holds them, else from the
// source.
func (ix *Index) DistancesTo(ctx context.Context, q []float32, ords []int64) ([]float32, error) {
	rows := ix.table.NumRows()
	for _, o := range ords {
		if o < 0 || o >= rows {
			return nil, fmt.Errorf("%w: row %d is outside the source's %d rows", ErrBadQuery, o, rows)
		}
	}
	s := scratchPool.Get().(*scratch)
	defer scratchPool.Put(s)
	if err := ix.prepareQuery(s, q); err != nil {
		return nil, err
	}
	w := ix.vstore.w
	vs := make([]float32, len(ords)*w)
	if err := ix.gatherVectors(ctx, ords, vs, nil); err != nil {
		return nil, err
	}
	half := ix.snap.Metric == metadata.MetricCosine
	out := make([]float32, len(ords))
	for i := range out {
		out[i] = exactDistance(vecmath.L2SqF64(s.q, vs[i*w:i*w+ix.Dim()]), half)
	}
	return out, nil
}
