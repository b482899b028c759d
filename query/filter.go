package query

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/parqdb/parqdb/filter"
	"github.com/parqdb/parqdb/internal/source"
	"github.com/parqdb/parqdb/internal/vecmath"
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
//     DefaultFilterCacheBytes.
//  2. No matching row: an empty result.
//  3. Few matching rows (exactRows): an exact scan of the matching rows'
//     source vectors, with exact distances; recall 1.
//  4. Otherwise the routed lists are scanned and a candidate enters the
//     top k only if its row matches. The initial nprobe is NProbe scaled
//     by 1/selectivity (so that about as many matching candidates are
//     scored as an unfiltered search scores candidates), and it doubles
//     while the probed lists hold fewer matching rows than the candidates
//     the search keeps (K, or K·Refine) or than half the candidates an
//     unfiltered search scores (nprobe·n/nlist), up to every list: so a
//     search that probed every list has seen every matching row.

// DefaultFilterCacheBytes bounds the memory of cached filter bitmaps per
// index (least recently built evicted first). The per-predicate lists of
// the exact plan (keys of at most a few percent of the rows) and per-list
// match counts are not counted.
const DefaultFilterCacheBytes = 256 << 20

// exactMinRows is the number of matching rows up to which a filtered
// search always scans the matching rows exactly.
const exactMinRows = 256

// exactRows reports whether a filtered search with m matching rows of n
// scans them exactly. Scanning lists at selectivity σ = m/n probes
// min(nprobe/σ, nlist) lists of about n/nlist candidates; the exact scan
// scores m vectors, each costing ratio candidates (4 for LVQ codes: float32
// against 8-bit codes; 1 when the lists hold source vectors). The exact
// scan runs when it costs no more (roughly σ² ≤ nprobe/(ratio·nlist)), and
// it is exact.
func exactRows(m, n int64, nprobe, nlist int, ratio float64) bool {
	if m <= exactMinRows {
		return true
	}
	sigma := float64(m) / float64(n)
	lists := min(float64(nprobe)/sigma, float64(nlist))
	return ratio*float64(m) <= lists*float64(n)/float64(nlist)
}

// exactCost is the cost of scoring one exact vector in units of one
// candidate of the lists (see exactRows).
func (ix *Index) exactCost() float64 {
	if ix.schema.Encoding == metadata.EncodingSource {
		return 1
	}
	return 4
}

// FilterInfo describes the matching rows of a predicate on an index.
type FilterInfo struct {
	Rows             int64         // source rows that match
	SourceRows       int64         // all source rows
	RowGroupsRead    int           // row groups whose filter columns were read
	RowGroupsSkipped int           // row groups skipped by their statistics
	Build            time.Duration // time to compute the bitmap (once per cached predicate)
}

// filterEntry is a predicate's cached result.
type filterEntry struct {
	once sync.Once
	rows *roaring.Bitmap
	info FilterInfo
	err  error
	size int64

	exactOnce sync.Once // the matching rows as a list, for the exact plan
	exact     *list
	exactErr  error

	countsOnce sync.Once
	counts     []atomic.Int32 // matching rows per CID, -1 until counted
}

// listMatches returns how many rows of l match, counted once per list
// (l.ords must be resolved).
func (e *filterEntry) listMatches(l *list, nlist int) int {
	e.countsOnce.Do(func() {
		e.counts = make([]atomic.Int32, nlist)
		for i := range e.counts {
			e.counts[i].Store(-1)
		}
	})
	if l.cid < 0 || int(l.cid) >= len(e.counts) {
		return 0
	}
	if c := e.counts[l.cid].Load(); c >= 0 {
		return int(c)
	}
	c := 0
	for _, o := range l.ords {
		if e.rows.Contains(uint32(o)) {
			c++
		}
	}
	e.counts[l.cid].Store(int32(c))
	return c
}

// filterCache maps canonical predicates to their entries, bounded by bytes.
type filterCache struct {
	mu struct {
		sync.Mutex
		m     map[string]*filterEntry
		order []string // insertion order, for eviction
		size  int64
	}
}

// Filter returns what the predicate matches on this index, computing and
// caching it on first use. Errors: a predicate that does not fit the
// source schema (wrapping ErrBadQuery and the filter package's sentinel,
// with the position), or a source read error. Safe for concurrent use.
func (ix *Index) Filter(ctx context.Context, p *filter.Predicate) (FilterInfo, error) {
	e, err := ix.filterRows(ctx, p)
	if err != nil {
		return FilterInfo{}, err
	}
	return e.info, nil
}

func (ix *Index) filterRows(ctx context.Context, p *filter.Predicate) (*filterEntry, error) {
	key := p.String()
	c := &ix.filters
	c.mu.Lock()
	if c.mu.m == nil {
		c.mu.m = map[string]*filterEntry{}
	}
	e := c.mu.m[key]
	if e == nil {
		e = &filterEntry{}
		c.mu.m[key] = e
		c.mu.order = append(c.mu.order, key)
	}
	c.mu.Unlock()
	e.once.Do(func() {
		// The entry outlives this caller's context: build it to the end.
		e.err = ix.buildFilter(context.WithoutCancel(ctx), p, e)
		c.mu.Lock()
		defer c.mu.Unlock()
		if e.err != nil {
			// Not cached: a later call retries (a read error may pass).
			delete(c.mu.m, key)
			if i := slices.Index(c.mu.order, key); i >= 0 {
				c.mu.order = slices.Delete(c.mu.order, i, i+1)
			}
			return
		}
		c.mu.size += e.size
		for c.mu.size > DefaultFilterCacheBytes && len(c.mu.order) > 1 {
			old := c.mu.order[0]
			c.mu.order = c.mu.order[1:]
			if old == key {
				c.mu.order = append(c.mu.order, key)
				continue
			}
			if o := c.mu.m[old]; o != nil {
				c.mu.size -= o.size
				delete(c.mu.m, old)
			}
		}
	})
	if e.err != nil {
		return nil, e.err
	}
	return e, nil
}

// buildFilter checks p against the source schema and computes its bitmap
// by scanning the predicate's columns.
func (ix *Index) buildFilter(ctx context.Context, p *filter.Predicate, e *filterEntry) error {
	start := time.Now()
	prog, err := p.Check(ix.table.Schema())
	if err != nil {
		return fmt.Errorf("%w: %w", ErrBadQuery, err)
	}
	n := ix.table.NumRows()
	if n > math.MaxUint32 {
		return fmt.Errorf("%w: filters support sources of up to %d rows; this one has %d", ErrBadQuery, uint32(math.MaxUint32), n)
	}
	var mu sync.Mutex
	rows := roaring.New()
	read, skipped := 0, 0
	st := make([]filter.Stats, len(prog.Columns()))
	err = ix.table.ScanColumns(ctx, prog.Columns(), func(file, rg int, cs []source.ChunkStats) bool {
		for i, c := range cs {
			st[i] = filter.Stats{Min: c.Min, Max: c.Max, HasMinMax: c.HasMinMax, Nulls: c.Nulls, HasNulls: c.HasNulls, Rows: c.Rows}
		}
		if prog.MayMatch(st) {
			read++
			return true
		}
		skipped++
		return false
	}, func(b *source.ColumnBatch) error {
		base := uint32(ix.fileStart[b.File] + b.FirstRow)
		var hits []uint32
		for i := 0; i < b.N; i++ {
			if prog.EvalColumns(b.Values, i) {
				hits = append(hits, base+uint32(i))
			}
		}
		mu.Lock()
		rows.AddMany(hits)
		mu.Unlock()
		return nil
	})
	if err != nil {
		return fmt.Errorf("index %q: filter %s: %w", ix.name, p.Text(), err)
	}
	rows.RunOptimize()
	e.rows = rows
	e.size = int64(rows.GetSizeInBytes()) + 256
	e.info = FilterInfo{Rows: int64(rows.GetCardinality()), SourceRows: n, RowGroupsRead: read, RowGroupsSkipped: skipped, Build: time.Since(start)}
	return nil
}

// warmFilter computes opts.Filter's bitmap and, when the exact plan will
// answer opts' searches, its list of matching rows.
func (ix *Index) warmFilter(ctx context.Context, opts Options) error {
	e, err := ix.filterRows(ctx, opts.Filter)
	if err != nil {
		return err
	}
	o := opts.withDefaults(ix.NList())
	if e.info.Rows > 0 && exactRows(e.info.Rows, e.info.SourceRows, o.NProbe, ix.NList(), ix.exactCost()) {
		_, err = ix.exactList(ctx, e)
	}
	return err
}

// exactList returns the matching rows as a list (keys and ordinals) for
// the exact plan, built once per entry.
func (ix *Index) exactList(ctx context.Context, e *filterEntry) (*list, error) {
	e.exactOnce.Do(func() {
		keys, ends, err := ix.sourceKeys(ctx)
		if err != nil {
			e.exactErr = err
			return
		}
		l := &list{cid: -1}
		n := int(e.rows.GetCardinality())
		l.ords = make([]int64, 0, n)
		l.batch.CIDs = make([]int32, n)
		l.batch.KeyEnds = make([]int, 0, n)
		it := e.rows.Iterator()
		for it.HasNext() {
			o := int64(it.Next())
			l.batch.Keys = append(l.batch.Keys, keyAt(keys, ends, o)...)
			l.batch.KeyEnds = append(l.batch.KeyEnds, len(l.batch.Keys))
			l.ords = append(l.ords, o)
		}
		l.ordsOnce.Do(func() {}) // ords are set
		e.exact = l
	})
	return e.exact, e.exactErr
}

// searchFiltered runs a filtered search (see the plan above); extra, when
// ≥ 0, is a CID probed in addition to the routed ones.
func (ix *Index) searchFiltered(ctx context.Context, q []float32, opts Options, extra int32) (*Result, error) {
	e, err := ix.filterRows(ctx, opts.Filter)
	if err != nil {
		return nil, err
	}
	s := scratchPool.Get().(*scratch)
	defer scratchPool.Put(s)
	defer func() { s.allow = nil }()
	if err := ix.prepareQuery(s, q); err != nil {
		return nil, err
	}
	st := Stats{FilterRows: e.info.Rows}
	if e.info.Rows == 0 {
		return ix.join(ctx, nil, opts, st)
	}
	half := ix.snap.Metric == metadata.MetricCosine
	nlist := ix.NList()
	if exactRows(e.info.Rows, e.info.SourceRows, opts.NProbe, nlist, ix.exactCost()) {
		l, err := ix.exactList(ctx, e)
		if err != nil {
			return nil, err
		}
		s.lists = append(s.lists[:0], l)
		s.top.reset(opts.K + 8) // spare places for the float64 re-rank
		if err := ix.scoreSource(ctx, s, half, &st); err != nil {
			return nil, err
		}
		st.FilterExact++
		top, err := ix.rerank(ctx, s, s.top.sorted(), opts.K)
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
	s.allow = e.rows
	s.top.reset(keep)
	scaled := math.Ceil(float64(opts.NProbe) * float64(e.info.SourceRows) / float64(e.info.Rows))
	np := int(min(scaled, float64(nlist)))
	probed := make(map[int32]bool, np)
	// An unfiltered search at nprobe scores about this many candidates;
	// the filtered one widens until the probed lists hold at least half as
	// many matching rows (a predicate correlated with the vectors leaves
	// the lists near the query with few), and at least keep.
	target := float64(opts.NProbe) * float64(e.info.SourceRows) / float64(nlist) / 2
	matched := 0
	var routed []int32
	for round := 0; ; round++ {
		var n int
		routed, n = ix.router.route(s.q, np, &s.route, routed)
		st.LeafDistances += int64(n + ix.art.Centroids.NumRoots())
		s.cids = s.cids[:0]
		for _, cid := range routed {
			if !probed[cid] {
				probed[cid] = true
				s.cids = append(s.cids, cid)
			}
		}
		if round == 0 && extra >= 0 && !probed[extra] {
			probed[extra] = true
			s.cids = append(s.cids, extra)
		}
		st.Lists += int64(len(s.cids))
		if err := ix.readLists(ctx, s, &st); err != nil {
			return nil, err
		}
		for _, l := range s.lists {
			if l != nil {
				if _, err := ix.sourceOrds(ctx, l); err != nil {
					return nil, err
				}
				matched += e.listMatches(l, nlist)
			}
		}
		if err := ix.scoreMore(ctx, s, half, &st); err != nil {
			return nil, err
		}
		if (len(s.top.h) >= keep && float64(matched) >= target) || len(probed) >= nlist || np >= nlist {
			break
		}
		np = min(2*np, nlist)
		st.FilterWidenings++
	}
	top := s.top.sorted()
	if opts.Refine > 0 && !exact {
		if top, err = ix.refine(ctx, s, top, &st); err != nil {
			return nil, err
		}
		exact = true
	}
	if exact {
		if top, err = ix.rerank(ctx, s, top, opts.K); err != nil {
			return nil, err
		}
	}
	if len(top) > opts.K {
		top = top[:opts.K]
	}
	return ix.join(ctx, top, opts, st)
}

// scoreMore scores s.lists into s.top without resetting it, so that the
// rounds of a widening search accumulate.
func (ix *Index) scoreMore(ctx context.Context, s *scratch, half bool, st *Stats) error {
	switch ix.schema.Encoding {
	case metadata.EncodingSource:
		return ix.scoreSource(ctx, s, half, st)
	case metadata.EncodingLVQ8:
		ix.scoreLVQ8(s, half, st)
	default:
		ix.scoreLVQ4(s, half, st)
	}
	return nil
}

// ExactFilteredBatch is ExactBatch restricted to the source rows that
// match p: the ground truth of filtered search (brute force over the
// matching rows). Hits carry Key and Distance only.
func (ix *Index) ExactFilteredBatch(ctx context.Context, qs [][]float32, k int, workers int, p *filter.Predicate) ([][]Hit, error) {
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
			d := exactL2(s.q, vecs[b.ord*dim:(b.ord+1)*dim])
			if half {
				d *= 0.5
			}
			hits = append(hits, Hit{Key: keyAt(keys, ends, b.ord), Distance: float32(d)})
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
