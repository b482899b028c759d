package query

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"sync/atomic"

	"github.com/parqdb/parqdb/internal/vecmath"
	"github.com/parqdb/parqdb/lvq"
	"github.com/parqdb/parqdb/metadata"
)

// SearchBatch runs Search for every query on up to workers goroutines
// (0: one per core) and returns the results in query order, equal to
// Search's for each query. An error of one query is a *BatchError naming
// it by its 0-based position in qs.
//
// Without a filter, on LVQ8 and source indexes whose codes or vectors
// outgrow the caches (listMajor), it scans list-major: the queries are
// taken in chunks (batchChunk; grouped by nearest root when they make
// more than one, batchOrder), each chunk's queries are prepared, routed
// and scored on their nearest list, and every other list the chunk probes
// is then scanned once for all of the chunk's queries that probe it, one
// after the other, so that its codes are read from memory once and then
// from the core's cache. Refine, the exact re-rank and the join then run
// per query.
func (ix *Index) SearchBatch(ctx context.Context, qs [][]float32, opts Options, workers int) ([]*Result, error) {
	return ix.SearchBatchFunc(ctx, qs, opts, workers, nil)
}

// SearchBatchFunc is SearchBatch that also calls each (when not nil) with
// every query's position in qs and result, on the goroutine that searched
// it, as soon as it is found: from several goroutines at once, in no
// particular order, once per query that succeeded (a caller copying the
// results out does it in parallel and while they are in the core's
// cache). The results are returned as SearchBatch returns them.
func (ix *Index) SearchBatchFunc(ctx context.Context, qs [][]float32, opts Options, workers int,
	each func(i int, r *Result)) ([]*Result, error) {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	out := make([]*Result, len(qs))
	if !ix.listMajor(opts, len(qs)) {
		err := forEachQuery(ctx, len(qs), workers, func(ctx context.Context, i int) error {
			r, err := ix.Search(ctx, qs[i], opts)
			out[i] = r
			if err == nil && each != nil {
				each(i, r)
			}
			return err
		})
		if err != nil {
			return nil, err
		}
		return out, nil
	}
	// The options are the same for every query: checked once, and an
	// error in them is the first query's, as Search would report it.
	opts, err := ix.resolve(ctx, opts)
	if err != nil {
		return nil, &BatchError{Query: 0, Err: ix.staleOr(ctx, err)}
	}
	chunk := batchChunk(len(qs), workers)
	pos := ix.batchOrder(ctx, qs, workers, chunk)
	err = forEachRun(ctx, len(qs), workers, chunk, func(ctx context.Context, lo, hi int) error {
		return ix.searchChunk(ctx, qs, pos[lo:hi], opts, out, each)
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// BatchError is the error of one query of a batch (SearchBatch): Query
// is its 0-based position in the batch.
type BatchError struct {
	Query int
	Err   error
}

func (e *BatchError) Error() string { return fmt.Sprintf("query %d: %v", e.Query, e.Err) }

func (e *BatchError) Unwrap() error { return e.Err }

// forceListMajor: 0 lets listMajor decide, 1 forces the list-major scan,
// 2 the per-query one (tests and benchmarks compare them).
var forceListMajor atomic.Int32

// listMajorMinBytes is the size of an index's scanned codes (LVQ8) or
// vectors (source) from which SearchBatch scans list-major: below it the
// lists stay in the core's caches between queries anyway, and the per-query
// scan, which takes each query's lists nearest first, admits fewer
// candidates (about 5 % less CPU on the GloVe sample, 0.5 MB of codes).
const listMajorMinBytes = 8 << 20

// listMajor reports whether SearchBatch scans list-major for n queries
// with opts: not with a filter (its own plan per query), nor on LVQ4
// (a per-query decoder), nor for a single query, nor on an index whose
// codes fit in cache (listMajorMinBytes).
func (ix *Index) listMajor(opts Options, n int) bool {
	switch forceListMajor.Load() {
	case 1:
		return opts.Filter == nil && ix.schema.Encoding != metadata.EncodingLVQ4
	case 2:
		return false
	}
	if opts.Filter != nil || n < 2 {
		return false
	}
	bytes := ix.snap.IndexedRows * int64(ix.Dim())
	switch ix.schema.Encoding {
	case metadata.EncodingLVQ8:
	case metadata.EncodingSource:
		bytes *= 4
	default:
		return false
	}
	return bytes >= listMajorMinBytes
}

// maxBatchChunk bounds the queries scanned together: each holds a scratch
// (its query, routes, candidates) until its chunk is done.
const maxBatchChunk = 1024

// batchChunk returns the queries per chunk for n queries on workers: as
// many as fit (the more queries share a list, the fewer times it is read),
// split so that every worker has a chunk.
func batchChunk(n, workers int) int {
	return max(1, min(maxBatchChunk, (n+workers-1)/workers))
}

// batchOrder returns the batch's positions in the order SearchBatch
// takes them in chunks of chunk queries: 0…n−1 when they make one chunk;
// else grouped by nearest root centroid (squared L2 to the query,
// normalised under cosine; then by position), so that a chunk's queries
// probe fewer lists and two workers' chunks fewer of the same ones: a
// list is then read from memory by fewer chunks. Results do not depend on
// it (each query's own lists are scanned in the same order in any chunk).
// A query that Search would refuse (its dimension, a value not finite)
// counts as the first root's, so that the first such query by position
// is still the batch's error with one worker.
func (ix *Index) batchOrder(ctx context.Context, qs [][]float32, workers, chunk int) []int32 {
	pos := make([]int32, len(qs))
	if len(qs) <= chunk {
		for i := range pos {
			pos[i] = int32(i)
		}
		return pos
	}
	c := ix.router.c
	d, nr := c.Dim, c.NumRoots()
	cosine := ix.snap.Metric == metadata.MetricCosine
	keys := make([]uint64, len(qs))
	for i := range keys {
		keys[i] = uint64(i)
	}
	// (an error here is the context's, which the scan then reports; the
	// keys not set yet keep root 0)
	_ = forEachRun(ctx, len(qs), workers, 256, func(_ context.Context, lo, hi int) error {
		dists := make([]float32, nr)
		var unit []float32
		for i := lo; i < hi; i++ {
			q := qs[i]
			if len(q) != d {
				continue
			}
			if cosine {
				unit = slices.Grow(unit[:0], d)[:d]
				if lvq.Normalize(unit, q) != nil { // not finite, or zero
					continue
				}
				q = unit
			}
			vecmath.L2SqBatch(q, c.Roots, d, dists)
			best := 0
			for r, v := range dists {
				if v < dists[best] { // (a query with a NaN is NaN from every root: root 0)
					best = r
				}
			}
			keys[i] |= uint64(best) << 32
		}
		return nil
	})
	slices.Sort(keys)
	for i, k := range keys {
		pos[i] = int32(uint32(k))
	}
	return pos
}

// searchChunk searches the queries of qs at positions pos (a chunk of the
// batch) list-major into out at those positions, calling each (when not
// nil) as SearchBatchFunc does.
func (ix *Index) searchChunk(ctx context.Context, qs [][]float32, pos []int32, opts Options, out []*Result,
	each func(int, *Result)) error {
	ss := make([]*scratch, len(pos))
	sts := make([]Stats, len(pos))
	defer func() {
		for _, s := range ss {
			if s != nil {
				scratchPool.Put(s)
			}
		}
	}()
	keep, refineK := ix.keep(opts)
	half := ix.snap.Metric == metadata.MetricCosine
	type probe struct {
		l *list
		q int32
	}
	for j, p := range pos {
		s := scratchPool.Get().(*scratch)
		ss[j] = s
		if err := ix.prepareQuery(s, qs[p]); err != nil {
			return &BatchError{Query: int(p), Err: err}
		}
		ix.route(s, opts.NProbe, &sts[j])
		if err := ix.readLists(ctx, s, &sts[j]); err != nil {
			return &BatchError{Query: int(p), Err: ix.staleOr(ctx, err)}
		}
		ix.scoreBegin(s, keep, refineK)
	}
	var terms []lvq8Terms
	var hits []int64
	if ix.schema.Encoding == metadata.EncodingLVQ8 {
		terms = make([]lvq8Terms, len(pos))
		for j, s := range ss {
			terms[j] = newLVQ8Terms(s, half)
		}
	} else {
		hits = make([]int64, len(pos))
		defer func() {
			var h int64
			for _, n := range hits {
				h += n
			}
			ix.vstore.count(h, 0)
		}()
	}
	// The probes of a list follow each other (below): a source list's
	// vectors are taken once for them all, even when the store cannot
	// keep them.
	lastCID, lastV := int32(-1), []float32(nil)
	scoreOne := func(j int, l *list) error {
		if terms != nil {
			terms[j].scoreList(ss[j], l, &sts[j])
			return nil
		}
		var v []float32
		if l.cid == lastCID {
			v = lastV
		}
		v, err := ix.scoreSourceList(ctx, ss[j], l, v, half, &hits[j], &sts[j])
		if err != nil {
			return &BatchError{Query: int(pos[j]), Err: ix.staleOr(ctx, err)}
		}
		lastCID, lastV = l.cid, v
		return nil
	}
	// Each query's nearest list first, on its own: the admission bound
	// then starts at a near list's k-th distance, as in Search, instead of
	// a far list's. Then the other probes bucketed by list (CID order,
	// queries in order within a list).
	count := make([]int32, ix.NList()+1)
	for j, s := range ss {
		for i, l := range s.lists {
			switch {
			case l == nil || l.len() == 0:
				s.lists[i] = nil
			case i == 0:
				if err := scoreOne(j, l); err != nil {
					return err
				}
				s.lists[i] = nil
			default:
				count[l.cid+1]++
			}
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	for c := 1; c < len(count); c++ {
		count[c] += count[c-1]
	}
	probes := make([]probe, count[len(count)-1])
	for j, s := range ss {
		for _, l := range s.lists {
			if l != nil {
				probes[count[l.cid]] = probe{l, int32(j)}
				count[l.cid]++
			}
		}
	}
	for _, p := range probes {
		if err := scoreOne(int(p.q), p.l); err != nil {
			return err
		}
	}
	for j, s := range ss {
		if err := ctx.Err(); err != nil {
			return err
		}
		r, err := ix.finish(ctx, s, opts, sts[j])
		if err != nil {
			return &BatchError{Query: int(pos[j]), Err: ix.staleOr(ctx, err)}
		}
		out[pos[j]] = r
		if each != nil {
			each(int(pos[j]), r)
		}
	}
	return nil
}
