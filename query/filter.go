package query

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/parqdb/parqdb/filter"
	"github.com/parqdb/parqdb/internal/vecmath"
	"github.com/parqdb/parqdb/lvq"
	"github.com/parqdb/parqdb/metadata"
)

// Filtered search (Options.Filter) returns the K rows nearest to the query
// among the source rows for which the predicate is true: the answer of a
// brute force over the matching rows, approximated like an unfiltered
// search, and never fewer than min(K, matching rows) rows.
//
// The plan:
//
//  1. The matching rows are a Roaring bitmap over source row ordinals,
//     computed on the predicate's first use by reading only its columns
//     (row groups whose footer statistics rule out a match are skipped)
//     and cached per index, keyed by the predicate's canonical form, up to
//     DefaultFilterCacheBytes. For each list it probes, a search also
//     records once per predicate the positions of the list's matching
//     rows, so a list with no match is never routed to again and the rows
//     that do not match are never scored.
//  2. No matching row: an empty result.
//  3. The exact plan scans the matching rows' source vectors, with exact
//     distances (recall 1), from a contiguous copy made on its first use
//     (up to maxExactVectorBytes). It runs when it is estimated to cost no more
//     than the list plan (planCost: rows and centroids scored).
//  4. The list plan routes among the lists that hold matching rows: it
//     probes them nearest first until they hold as many matching rows as
//     an unfiltered search at NProbe scores candidates (NProbe·n/nlist),
//     scoring only the matching rows; lists known to hold no match cost
//     nothing, not even a routing distance. It continues while fewer than
//     K (or K·Refine) matching rows were found, up to every list: a search
//     that probed every list has seen every matching row.
//  5. Packed lists (LVQ8): the first search that probes a list with a
//     predicate copies the list's matching rows (codes and per-row terms,
//     keys, source ordinals) contiguously into a packed list kept in the
//     predicate's entry, so that later searches score them with the same
//     batch kernel as an unfiltered search, reading neither the postings
//     cache nor the rows that do not match. Packed lists are charged to
//     the filter cache and the process budget, up to maxPackedBytes per
//     predicate; past it (or without room) a list is scored from the
//     postings as in 4.
//
// By file: filter_cache.go holds the bitmaps and their cache (1),
// filter_plan.go the cost model choosing between 3 and 4, filter_exact.go
// the exact plan (3), filter_pack.go the packed lists (5), and this file
// the list plan's loop (4); leafheap.go the heap its routing pops from.

// searchFiltered runs a filtered search (see the plan above); extra, when
// ≥ 0, is a CID probed in addition to the routed ones.
func (ix *Index) searchFiltered(ctx context.Context, q []float32, opts Options, extra int32) (*Result, error) {
	e, err := ix.filterRows(ctx, opts.Filter)
	if err != nil {
		return nil, err
	}
	s := scratchPool.Get().(*scratch)
	defer putScratch(s)
	defer s.filt.release()
	if err := ix.prepareQuery(s, q); err != nil {
		return nil, err
	}
	st := Stats{FilterRows: e.info.Rows}
	if e.info.Rows == 0 {
		return ix.join(ctx, nil, opts, st)
	}
	half := ix.snap.Metric == metadata.MetricCosine
	if ix.exactPlan(e, opts.NProbe) {
		l, err := ix.exactList(ctx, e)
		if err != nil {
			return nil, err
		}
		s.lists = append(s.lists[:0], l)
		s.top.reset(opts.K + 8) // spare places for the float64 re-rank
		switch {
		case e.exactCodes != nil:
			ix.scoreExactCodes(s, l, e.exactCodes, e.exactVecs, opts.K, half, &st)
		case e.exactVecs != nil:
			ix.scoreExact(s, l, e.exactVecs, half, &st)
		default:
			if err := ix.scoreSource(ctx, s, half, &st); err != nil {
				return nil, err
			}
		}
		st.FilterExact++
		cands := s.top.best() // any order: rerank sorts the leaders
		if e.exactVecs != nil {
			exactViews(s, cands, e.exactVecs, stride(ix.Dim()))
		}
		top, err := ix.rerank(ctx, s, cands, opts.K, &st)
		if err != nil {
			return nil, err
		}
		return ix.join(ctx, top[:min(len(top), opts.K)], opts, st)
	}
	exact := ix.schema.Encoding == metadata.EncodingSource
	keep := opts.K
	switch {
	case exact:
		keep = opts.K*max(opts.Refine, 1) + 8
	case opts.Refine > 0:
		keep = opts.K * opts.Refine
	}
	if err := ix.searchLists(ctx, s, e, opts.NProbe, keep, extra, &st); err != nil {
		return nil, err
	}
	var top []cand
	if exact || opts.Refine > 0 {
		top = s.top.best() // rerank selects and sorts the leaders
	} else {
		top = s.top.sorted()
	}
	if opts.Refine > 0 && !exact {
		if top, err = ix.refine(ctx, s, top, opts.K, &st); err != nil {
			return nil, err
		}
		exact = true
	}
	if exact {
		if top, err = ix.rerank(ctx, s, top, opts.K, &st); err != nil {
			return nil, err
		}
	}
	if len(top) > opts.K {
		top = top[:opts.K]
	}
	return ix.join(ctx, top, opts, st)
}

// filterScratch is the per-query memory of the list plan.
type filterScratch struct {
	probed []bool     // by CID
	order  []leafDist // routed leaves, nearest first
	roots  []leafDist // root distances (cid holds the root)
	pos    [][]int32  // matching positions of each list of scratch.lists
	packed []*list    // packed lists probed in a round (packList)
}

// release drops the references to lists' positions held past a query.
func (f *filterScratch) release() {
	clear(f.pos)
	clear(f.packed)
}

// searchLists is the list plan: it probes the lists that may hold matching
// rows, nearest first, until they hold target matching rows (what an
// unfiltered search at nprobe scores) and s.top holds keep of them, or no
// list is left, scoring only the matching rows into s.top.
func (ix *Index) searchLists(ctx context.Context, s *scratch, e *filterEntry, nprobe, keep int, extra int32, st *Stats) error {
	nlist := ix.NList()
	st.FilterLists++
	s.top.reset(keep)
	target := min(int64(math.Ceil(float64(nprobe)*float64(e.info.SourceRows)/float64(nlist))), e.info.Rows)
	// Expected matching rows of a list not probed yet, and the leaves to
	// route to: Factor times the lists the target needs.
	perList := float64(e.info.Rows) / max(e.nonEmpty()*float64(nlist), 1)
	want := filterRouteFactor * int(math.Ceil(float64(target)/perList))
	s.filt.probed = slices.Grow(s.filt.probed[:0], nlist)[:nlist]
	clear(s.filt.probed)
	var matched int64
	order := s.filt.order[:0] // a min-heap of the routed leaves not taken yet
	allRoots := false
	for round := 0; ; round++ {
		if len(order) == 0 {
			if allRoots {
				break // every list that may hold a match was probed
			}
			var n int
			order, n, allRoots = ix.matchRoute(s.q, e, want, &s.filt, order[:0])
			st.LeafDistances += int64(n)
			if round > 0 {
				st.FilterWidenings++
			}
			want = nlist // a second routing visits every root
		}
		// Take lists nearest first until they should hold the target.
		s.cids = s.cids[:0]
		if round == 0 && extra >= 0 && int(extra) < nlist && !s.filt.probed[extra] {
			s.filt.probed[extra] = true
			s.cids = append(s.cids, extra)
		}
		expect := float64(matched)
		// Take enough for the kept candidates too (keep > target with
		// refine on a small index), not one list per round.
		goal := float64(min(max(target, int64(keep)), e.info.Rows))
		for len(order) > 0 && (expect < goal || len(s.cids) == 0) {
			var cid int32
			cid, order = popNearest(order)
			if s.filt.probed[cid] {
				continue
			}
			s.filt.probed[cid] = true
			s.cids = append(s.cids, cid)
			// the estimate even for a list whose matches an earlier query
			// counted: what a query takes must not depend on its
			// predecessors (TestFilteredAnswerIndependentOfHistory)
			expect += perList
		}
		if len(s.cids) == 0 {
			continue
		}
		st.Lists += int64(len(s.cids))
		// Lists packed for e need no postings.
		s.filt.packed = s.filt.packed[:0]
		if e.packed != nil {
			n := 0
			for _, cid := range s.cids {
				if p := e.packedOf(cid); p != nil {
					s.filt.packed = append(s.filt.packed, p.l)
					matched += int64(p.l.len())
					st.FilterRejected += int64(p.rejected)
					continue
				}
				s.cids[n] = cid
				n++
			}
			s.cids = s.cids[:n]
			st.CachedLists += int64(len(s.filt.packed))
		}
		if err := ix.readLists(ctx, s, st); err != nil {
			return err
		}
		s.filt.pos = slices.Grow(s.filt.pos[:0], len(s.lists))[:len(s.lists)]
		for i, l := range s.lists {
			s.filt.pos[i] = nil
			if l == nil { // a list without rows
				e.setEmpty(s.cids[i])
				continue
			}
			if _, err := ix.sourceOrds(ctx, l); err != nil {
				return err
			}
			pos := e.positions(l)
			matched += int64(len(pos))
			st.FilterRejected += int64(l.len() - len(pos))
			if p := ix.packList(e, l, pos); p != nil {
				s.lists[i] = p.l // scored whole (scoreMatching)
				continue
			}
			s.filt.pos[i] = pos
		}
		for _, p := range s.filt.packed {
			s.lists = append(s.lists, p)
			s.filt.pos = append(s.filt.pos, nil)
		}
		if err := ix.scoreMatching(ctx, s, st); err != nil {
			return err
		}
		if matched >= target && s.top.full() {
			break
		}
	}
	s.filt.order = order
	return nil
}

// filterRouteFactor is how many leaves the list plan scores per list it
// expects to probe (routeOptions.Factor, 16, for unfiltered routing). The
// list plan needs more lists than nprobe at low selectivity (21 for
// nprobe 2 at 10 % on Fashion-MNIST), so 16 per list made it compute 50 %
// more routing distances than an unfiltered search; with 6, recall@10
// fell by at most 0.002 on Fashion-MNIST at 10 % (uniform and one class)
// and the routing distances by a third to a half (docs/benchmarks.md).
const filterRouteFactor = 6

// matchRoute appends to dst, as a min-heap by distance (popNearest takes
// them nearest first: a search takes a few of them, so sorting them all
// cost more than scoring them), the leaves not yet probed, visiting roots
// nearest first until want leaves were scored (and at least
// routeOptions.MinRoots roots). Leaves an earlier query found empty for e
// are scored too: skipping them changed which leaves the budget reached,
// and so the answer, with the process's history. It returns them,
// the distances computed, and whether every root was visited.
func (ix *Index) matchRoute(q []float32, e *filterEntry, want int, f *filterScratch, dst []leafDist) ([]leafDist, int, bool) {
	c := ix.art.Centroids
	nr := c.NumRoots()
	roots := slices.Grow(f.roots[:0], nr)[:nr]
	for r := range nr {
		roots[r] = leafDist{vecmath.L2Sq(q, c.Root(r)), int32(r)}
	}
	slices.SortFunc(roots, cmpLeaf)
	computed, visited := nr, 0
	scored := 0
	for _, rd := range roots {
		if scored >= want && visited >= routeOptions.MinRoots {
			break
		}
		visited++
		for cid := c.CIDOffsets[rd.cid]; cid < c.CIDOffsets[rd.cid+1]; cid++ {
			if f.probed[cid] {
				continue
			}
			dst = append(dst, leafDist{vecmath.L2Sq(q, c.Leaf(cid)), cid})
			computed++
			scored++
		}
	}
	f.roots = roots
	heapifyNearest(dst)
	return dst, computed, visited == nr
}

// scoreMatching scores the matching rows of s.lists (positions s.filt.pos) into
// s.top, which it does not reset. A packed list (LVQ8; its rows all match)
// is scored whole by the batch kernel, as an unfiltered search scores a
// list. Of the others, a list of which at least a quarter of the rows
// match is scored whole by the batch kernel and only its matching rows
// offered; otherwise each matching row is scored alone.
func (ix *Index) scoreMatching(ctx context.Context, s *scratch, st *Stats) error {
	half := ix.snap.Metric == metadata.MetricCosine
	mul := float32(1)
	if half {
		mul = 0.5
	}
	t := &s.top
	switch ix.schema.Encoding {
	case metadata.EncodingLVQ8:
		q := newLVQ8Terms(s, half)
		w := len(s.qp)
		for li, l := range s.lists {
			if l != nil && l.rows != nil {
				q.scoreList(s, l, st)
				continue
			}
			pos := s.filt.pos[li]
			if len(pos) == 0 {
				continue
			}
			offs, scs, base := l.batch.Offsets, l.batch.Scales, l.base
			thr := t.threshold()
			dist := func(i int32, dot float32) {
				if d := q.Dist(offs[i], scs[i], base[i], dot); d <= thr {
					t.push(cand{dist: d, i: i, l: l})
					thr = t.threshold()
				}
			}
			if n := l.len(); 4*len(pos) >= n || l.blocked {
				l.dots(s) // the blocked layout scores whole blocks only
				for _, i := range pos {
					dist(i, s.dists[i])
				}
			} else {
				for _, i := range pos {
					dist(i, vecmath.DotU8(s.qp, l.codes[int(i)*w:(int(i)+1)*w]))
				}
			}
			st.Candidates += int64(len(pos))
		}
	case metadata.EncodingLVQ4:
		lq := &s.lq
		lq.Reset(s.q)
		cl := lvq.CodeLen(4, ix.Dim())
		for li, l := range s.lists {
			b := &l.batch
			for _, i := range s.filt.pos[li] {
				d := lq.L2Sq4(b.Codes[int(i)*cl:(int(i)+1)*cl], b.Offsets[i], b.Scales[i]) * mul
				if d <= t.threshold() {
					t.push(cand{dist: d, i: i, l: l})
				}
			}
			st.Candidates += int64(len(s.filt.pos[li]))
		}
	default:
		vecs, err := ix.allVectors(ctx)
		if err != nil {
			return err
		}
		dim := int64(ix.Dim())
		for li, l := range s.lists {
			pos := s.filt.pos[li]
			if len(pos) == 0 {
				continue
			}
			var read []float32
			if vecs == nil {
				ords := make([]int64, len(pos))
				for j, i := range pos {
					ords[j] = l.ords[i]
				}
				if read, err = ix.readVectors(ctx, ords, st); err != nil {
					return err
				}
			}
			for j, i := range pos {
				var v []float32
				if vecs != nil {
					o := l.ords[i]
					v = vecs[o*dim : (o+1)*dim]
				} else {
					v = read[int64(j)*dim : int64(j+1)*dim]
				}
				d := vecmath.L2Sq(s.q, v) * mul
				if d <= t.threshold() {
					t.push(cand{dist: d, i: i, l: l})
				}
			}
			st.Candidates += int64(len(pos))
		}
	}
	return nil
}

// ExactFilteredBatch is ExactBatch restricted to the source rows that
// match p: the ground truth of filtered search (brute force over the
// matching rows). Hits carry Key and Distance only.
func (ix *Index) ExactFilteredBatch(ctx context.Context, qs [][]float32, k int, workers int, p *filter.Predicate) (_ [][]Hit, err error) {
	defer func() { err = ix.staleOr(ctx, err) }()
	if k < 1 || k > MaxK {
		return nil, fmt.Errorf("%w: k = %d is outside [1, %d]", ErrBadQuery, k, MaxK)
	}
	e, err := ix.filterRows(ctx, p)
	if err != nil {
		return nil, err
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
	ords := make([]int64, 0, e.info.Rows)
	it := e.rows.Iterator()
	for it.HasNext() {
		ords = append(ords, int64(it.Next()))
	}
	dim := int64(ix.Dim())
	half := ix.snap.Metric == metadata.MetricCosine
	out := make([][]Hit, len(qs))
	err = forEachQuery(ctx, len(qs), workers, func(_ context.Context, qi int) error {
		s := scratchPool.Get().(*scratch)
		defer scratchPool.Put(s)
		if err := ix.prepareQuery(s, qs[qi]); err != nil {
			return err
		}
		best := make([]ordDist, len(ords))
		for i, o := range ords {
			best[i] = ordDist{vecmath.L2Sq(s.q, vecs[o*dim:(o+1)*dim]), o}
		}
		best, _ = trimBestOrEmpty(best, k+8)
		hits := make([]Hit, 0, len(best))
		for _, b := range best {
			d := vecmath.L2SqF64(s.q, vecs[b.ord*dim:(b.ord+1)*dim])
			hits = append(hits, Hit{Key: keyAt(keys, ends, b.ord), Distance: exactDistance(d, half)})
		}
		slices.SortFunc(hits, func(a, b Hit) int {
			return cmp.Or(cmp.Compare(a.Distance, b.Distance), bytes.Compare(a.Key, b.Key))
		})
		out[qi] = hits[:min(k, len(hits))]
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

func trimBestOrEmpty(best []ordDist, keep int) ([]ordDist, float32) {
	if len(best) == 0 {
		return best, 0
	}
	return trimBest(best, keep)
}
