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
	"github.com/parqdb/parqdb/internal/membudget"
	"github.com/parqdb/parqdb/internal/source"
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

// DefaultFilterCacheBytes bounds the memory of cached filter bitmaps per
// index (a membudget cache: CLOCK eviction), with the per-list positions
// of their matching rows (4 bytes per matching row, charged up front) and
// the exact plan's contiguous copy of its rows' vectors (at most
// maxExactVectorBytes per predicate) and the list plan's packed lists (at
// most maxPackedBytes per predicate; packing evicts other predicates, not
// its own). The per-predicate keys of the exact plan (at most a few
// percent of the rows) are not counted.
const DefaultFilterCacheBytes = 256 << 20

// exactMinRows is the number of matching rows up to which a filtered
// search always scans the matching rows exactly.
const exactMinRows = 256

// Costs of the plan, in units of one LVQ8 candidate scored (784 bytes of
// codes on Fashion-MNIST): a float32 vector or centroid is 4 (four times
// the bytes), a probed list 8 (its lookup and loop overhead).
const (
	costVector = 4
	costList   = 8
)

// planCost estimates the work of both plans of a filtered search with m
// matching rows of n, nlist lists of which a fraction nonEmpty hold at
// least one match, at nprobe: the exact plan scores m vectors of ratio
// units each (costVector for LVQ codes, 1 when the lists hold source
// vectors); the list plan scores the leaves that hold matches until it has
// enough lists (filterRouteFactor times the lists it probes, at most the
// non-empty ones), then the target's matching rows, plus a per-list cost.
func planCost(m, n int64, nprobe, nlist int, nonEmpty, ratio float64) (exact, lists float64) {
	exact = ratio * float64(m)
	target := min(float64(nprobe)*float64(n)/float64(nlist), float64(m))
	full := max(nonEmpty*float64(nlist), 1)
	perList := float64(m) / full
	probe := min(math.Ceil(target/perList), full)
	routed := min(float64(filterRouteFactor)*probe, full)
	// A centroid is a float32 vector like the exact plan's; a list row
	// costs one unit.
	lists = ratio*routed + target + costList*probe
	return exact, lists
}

// exactPlan reports whether a filtered search with the matching rows of e
// scans them exactly (see planCost).
func (ix *Index) exactPlan(e *filterEntry, nprobe int) bool {
	m := e.info.Rows
	if m <= exactMinRows {
		return true
	}
	exact, lists := planCost(m, e.info.SourceRows, nprobe, ix.NList(), e.nonEmpty(), ix.exactCost())
	return exact <= lists
}

// exactCost is the cost of scoring one exact vector in units of one
// candidate of the lists (see planCost).
func (ix *Index) exactCost() float64 {
	if ix.schema.Encoding == metadata.EncodingSource {
		return 1
	}
	return costVector
}

// FilterInfo describes the matching rows of a predicate on an index.
type FilterInfo struct {
	Rows             int64         // source rows that match
	SourceRows       int64         // all source rows
	RowGroupsRead    int           // row groups whose filter columns were read
	RowGroupsSkipped int           // row groups skipped by their statistics
	PagesRead        int           // data pages of the filter columns decoded
	PagesSkipped     int           // data pages skipped by the page index of a row group read
	Build            time.Duration // time to compute the bitmap (once per cached predicate)
}

// filterEntry is a predicate's cached result.
type filterEntry struct {
	key  string // the canonical predicate
	once sync.Once
	rows *roaring.Bitmap
	info FilterInfo
	err  error
	size int64

	exactOnce sync.Once // the matching rows as a list, for the exact plan
	exact     *list
	exactErr  error
	// exactVecs are the exact plan's rows' vectors, contiguous at stride
	// stride(dim) in the order of exact's rows (nil above
	// maxExactVectorBytes): scored as one batch, not gathered row by row
	// from the vector store each query.
	exactVecs []float32
	// exactCodes are exactVecs encoded as LVQ8 (nil when exactVecs is, or
	// below exactCodesMinRows rows): the exact plan's first pass.
	exactCodes *exactCodes

	// Per list (by CID), the positions of its matching rows, set once per
	// list on its first probe (a list's rows keep their order when it is
	// read again); counted and nonEmptyCount tally the lists set.
	lists         []atomic.Pointer[[]int32]
	counted       atomic.Int64
	nonEmptyCount atomic.Int64

	// Per list (by CID), its matching rows packed (packList), set once on
	// a probe after the positions; nil for lists not packed. packedBytes
	// counts the bytes of the packed lists set (and of those being
	// built), at most maxPackedBytes.
	packed      []atomic.Pointer[packedList]
	packedBytes atomic.Int64
}

// packedList is a list's matching rows, packed (packList).
type packedList struct {
	l        *list // the matching rows; l.rows maps them to the list's rows
	rejected int   // rows of the list that do not match
}

// maxPackedBytes bounds the packed lists of one predicate (a variable for
// the tests).
var maxPackedBytes int64 = 64 << 20

// packedOf returns cid's packed list, or nil.
func (e *filterEntry) packedOf(cid int32) *packedList {
	if int(cid) >= len(e.packed) || cid < 0 {
		return nil
	}
	return e.packed[cid].Load()
}

// known returns the positions of cid's matching rows, or ok false when the
// list was not probed yet with this predicate.
func (e *filterEntry) known(cid int32) (pos []int32, ok bool) {
	if cid < 0 || int(cid) >= len(e.lists) {
		return nil, true
	}
	p := e.lists[cid].Load()
	if p == nil {
		return nil, false
	}
	return *p, true
}

// positions returns the positions of l's matching rows, computing them on
// the list's first use with this predicate (l.ords must be resolved).
func (e *filterEntry) positions(l *list) []int32 {
	if pos, ok := e.known(l.cid); ok {
		return pos
	}
	pos := []int32{}
	for i, o := range l.ords {
		if e.rows.Contains(uint32(o)) {
			pos = append(pos, int32(i))
		}
	}
	if e.lists[l.cid].CompareAndSwap(nil, &pos) {
		e.counted.Add(1)
		if len(pos) > 0 {
			e.nonEmptyCount.Add(1)
		}
	}
	return pos
}

// setEmpty records that the list cid holds no row.
func (e *filterEntry) setEmpty(cid int32) {
	if cid >= 0 && int(cid) < len(e.lists) && e.lists[cid].CompareAndSwap(nil, &[]int32{}) {
		e.counted.Add(1)
	}
}

// nonEmpty estimates the fraction of lists that hold a matching row: that
// of the lists probed so far once there are enough of them, else what
// uniformly spread matches would give, 1 − (1 − σ)^(n/nlist).
func (e *filterEntry) nonEmpty() float64 {
	if c := e.counted.Load(); c >= 32 || (c > 0 && int(c) == len(e.lists)) {
		return float64(e.nonEmptyCount.Load()) / float64(c)
	}
	nlist := max(len(e.lists), 1)
	sigma := float64(e.info.Rows) / float64(max(e.info.SourceRows, 1))
	return 1 - math.Pow(1-sigma, float64(e.info.SourceRows)/float64(nlist))
}

// filterCache maps canonical predicates to their entries: the built ones
// in a membudget cache (account "filters", DefaultFilterCacheBytes per
// index; an entry the budget has no room for is used by its query but not
// kept), and those being built, which concurrent callers of the same
// predicate share.
type filterCache struct {
	c  *membudget.Cache[string, *filterEntry]
	mu struct {
		sync.Mutex
		building map[string]*filterEntry
	}
}

func (c *filterCache) init(b *membudget.Budget) {
	c.c = membudget.NewCache[string, *filterEntry](membudget.CacheConfig{Name: "filters", Budget: b, MaxBytes: DefaultFilterCacheBytes})
}

func (c *filterCache) close() { c.c.Close() }

// lookup returns the cached entry of the canonical predicate key, or nil.
func (c *filterCache) lookup(key string) *filterEntry {
	e, _ := c.c.Lookup(key)
	return e
}

// charge adds size bytes (memory e's value has gained: the exact plan's
// vectors, a packed list) to e's entry, and reports whether e may keep
// them: false when the budget has no room, or e is no longer cached (then
// nothing is charged, and the caller keeps nothing it would have to
// account for). commit, when not nil, runs once the bytes are charged and
// may still refuse them (it runs under the cache's lock: it must be
// short and not call the cache).
func (c *filterCache) charge(e *filterEntry, size int64, commit func() bool) bool {
	return c.c.Grow(e.key, size, func(v *filterEntry) bool { return v == e && (commit == nil || commit()) })
}

// Filter returns what the predicate matches on this index, computing and
// caching it on first use. Errors: a predicate that does not fit the
// source schema (wrapping ErrBadQuery and the filter package's sentinel,
// with the position), or a source read error. Safe for concurrent use.
func (ix *Index) Filter(ctx context.Context, p *filter.Predicate) (FilterInfo, error) {
	e, err := ix.filterRows(ctx, p)
	if err != nil {
		return FilterInfo{}, ix.staleOr(ctx, err)
	}
	return e.info, nil
}

func (ix *Index) filterRows(ctx context.Context, p *filter.Predicate) (*filterEntry, error) {
	key := p.String()
	c := &ix.filters
	c.mu.Lock()
	e := c.mu.building[key]
	if e == nil {
		e = c.lookup(key)
	}
	if e == nil {
		e = &filterEntry{key: key}
		if c.mu.building == nil {
			c.mu.building = map[string]*filterEntry{}
		}
		c.mu.building[key] = e
		c.c.Count(0, 1)
	} else {
		c.c.Count(1, 0)
	}
	c.mu.Unlock()
	e.once.Do(func() {
		// The entry outlives this caller's context: build it to the end.
		e.err = ix.buildFilter(context.WithoutCancel(ctx), p, e)
		// Not cached after an error, so that a later call retries (a
		// read error may pass); without room this query uses e alone.
		if e.err == nil {
			c.c.Put(key, e, e.size)
		}
		c.mu.Lock()
		delete(c.mu.building, key)
		c.mu.Unlock()
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
	var read, skipped, pagesRead, pagesSkipped int
	st := make([]filter.Stats, len(prog.Columns()))
	scratch := sync.Pool{New: func() any { return prog.NewScratch() }}
	err = ix.table.ScanColumnChunks(ctx, prog.Columns(), func(file, rg int, cs []source.ChunkStats) bool {
		for i, c := range cs {
			st[i] = filter.Stats{Min: c.Min, Max: c.Max, HasMinMax: c.HasMinMax, Nulls: c.Nulls, HasNulls: c.HasNulls, Rows: c.Rows}
		}
		if prog.MayMatch(st) {
			read++
			return true
		}
		skipped++
		return false
	}, func(c *source.ColumnChunks) error {
		sc := scratch.Get().(*filter.Scratch)
		defer scratch.Put(sc)
		m, err := prog.MatchRowGroup(ctx, sc, c.Chunks, c.N)
		if err != nil {
			return err
		}
		live := c.LiveRows(m.Rows)
		base := uint32(ix.fileStart[c.File])
		for i := range live {
			live[i] += base
		}
		mu.Lock()
		rows.AddMany(live)
		pagesRead += m.PagesRead
		pagesSkipped += m.PagesSkipped
		mu.Unlock()
		return nil
	})
	if err != nil {
		return fmt.Errorf("index %q: filter %s: %w", ix.name, p.Text(), err)
	}
	rows.RunOptimize()
	e.rows = rows
	e.lists = make([]atomic.Pointer[[]int32], ix.NList())
	if ix.schema.Encoding == metadata.EncodingLVQ8 {
		e.packed = make([]atomic.Pointer[packedList], ix.NList())
	}
	e.size = int64(rows.GetSizeInBytes()) + 4*int64(rows.GetCardinality()) + 256
	e.info = FilterInfo{Rows: int64(rows.GetCardinality()), SourceRows: n, RowGroupsRead: read, RowGroupsSkipped: skipped,
		PagesRead: pagesRead, PagesSkipped: pagesSkipped, Build: time.Since(start)}
	return nil
}

// packList returns the matching rows pos (at least one) of list l (its
// ords resolved) packed for e, kept in e for the later searches, or nil
// when they are not packed: an encoding other than LVQ8, e not cached
// (evicted, or refused by the process budget), or no room within
// maxPackedBytes or the process budget. The packed list's bytes are
// charged to e's entry in the filter cache (released when e is evicted);
// other entries are evicted to keep the cache within
// DefaultFilterCacheBytes. Safe for concurrent use: one packed
// list per list is kept.
func (ix *Index) packList(e *filterEntry, l *list, pos []int32) *packedList {
	if e.packed == nil || len(pos) == 0 || l.cid < 0 || int(l.cid) >= len(e.packed) {
		return nil
	}
	if p := e.packedOf(l.cid); p != nil {
		return p
	}
	if ix.filters.lookup(e.key) != e {
		return nil
	}
	w := stride(ix.Dim())
	codeBytes := len(pos) * w
	if l.blocked {
		codeBytes = vecmath.BlockU8Len(len(pos), ix.Dim())
	}
	keyBytes := 0
	ends := l.batch.KeyEnds
	for _, i := range pos {
		start := 0
		if i > 0 {
			start = ends[i-1]
		}
		keyBytes += ends[i] - start
	}
	size := packedSize(len(pos), codeBytes, keyBytes)
	if e.packedBytes.Add(size) > maxPackedBytes {
		e.packedBytes.Add(-size)
		return nil
	}
	p := &packedList{l: packRows(l, pos, w, ix.Dim(), keyBytes), rejected: l.len() - len(pos)}
	if !ix.filters.charge(e, size, func() bool { return e.packed[l.cid].CompareAndSwap(nil, p) }) {
		// No room, e is no longer cached, or another search packed the
		// list first.
		e.packedBytes.Add(-size)
		return e.packedOf(l.cid)
	}
	return p
}

// packedSize is the memory of a packed list of n rows with codeBytes bytes
// of codes and keyBytes bytes of keys (packRows).
func packedSize(n, codeBytes, keyBytes int) int64 {
	// codes, keys; key ends, base, ords; CIDs, offsets, scales, rows
	return int64(codeBytes+keyBytes) + 8*3*int64(n) + 4*4*int64(n) + 256
}

// packRows copies rows pos of l (its ords resolved) into a list of their
// own, in l's scan layout (codes at stride w, or blocked with dim codes
// per row), per-row terms, keys and source ordinals, with rows mapping
// them back to l's rows.
func packRows(l *list, pos []int32, w, dim, keyBytes int) *list {
	n := len(pos)
	b := &l.batch
	p := &list{cid: l.cid, rows: pos, base: make([]float64, n), ords: make([]int64, n),
		maxBase: l.maxBase, maxScale: l.maxScale}
	if l.blocked {
		rows := make([]byte, 0, n*dim)
		for _, i := range pos {
			rows = l.code(rows, int(i), dim)
		}
		p.codes = make([]byte, vecmath.BlockU8Len(n, dim))
		vecmath.BlockU8(p.codes, rows, dim)
		p.blocked = true
	} else {
		p.codes = make([]byte, n*w)
	}
	pb := &p.batch
	pb.CIDs = make([]int32, n)
	pb.Offsets = make([]float32, n)
	pb.Scales = make([]float32, n)
	pb.Keys = make([]byte, 0, keyBytes)
	pb.KeyEnds = make([]int, n)
	pb.CodeLen = b.CodeLen
	for j, i := range pos {
		if !l.blocked {
			copy(p.codes[j*w:(j+1)*w], l.codes[int(i)*w:(int(i)+1)*w])
		}
		p.base[j] = l.base[i]
		p.ords[j] = l.ords[i]
		pb.CIDs[j] = b.CIDs[i]
		pb.Offsets[j] = b.Offsets[i]
		pb.Scales[j] = b.Scales[i]
		pb.Keys = append(pb.Keys, b.Key(int(i))...)
		pb.KeyEnds[j] = len(pb.Keys)
	}
	p.ordsOnce.Do(func() {}) // ords are set
	return p
}

// ScanFilterColumns reads every value of p's columns from the source, as
// the bitmap build does (typed, page by page) but with no row group or
// page skipped and nothing evaluated, and returns the number of rows
// read: the plain column scan that the cost of a new predicate (Filter)
// is measured against (parqdb bench --where). Errors as Filter's.
func (ix *Index) ScanFilterColumns(ctx context.Context, p *filter.Predicate) (int64, error) {
	prog, err := p.Check(ix.table.Schema())
	if err != nil {
		return 0, fmt.Errorf("%w: %w", ErrBadQuery, err)
	}
	var rows atomic.Int64
	scratch := sync.Pool{New: func() any { return prog.NewScratch() }}
	err = ix.table.ScanColumnChunks(ctx, prog.Columns(), nil, func(c *source.ColumnChunks) error {
		sc := scratch.Get().(*filter.Scratch)
		defer scratch.Put(sc)
		if _, err := prog.DecodeRowGroup(ctx, sc, c.Chunks, c.N); err != nil {
			return err
		}
		rows.Add(int64(c.N))
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("index %q: scan the columns of %s: %w", ix.name, p.Text(), err)
	}
	return rows.Load(), nil
}

// warmFilter computes opts.Filter's bitmap and, when the exact plan will
// answer opts' searches, its list of matching rows.
func (ix *Index) warmFilter(ctx context.Context, opts Options) error {
	e, err := ix.filterRows(ctx, opts.Filter)
	if err != nil {
		return err
	}
	o := opts.withDefaults(ix.NList())
	if e.info.Rows > 0 && ix.exactPlan(e, o.NProbe) {
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
		e.exactVecs = ix.exactVectors(ctx, e, l.ords)
		if e.exactVecs != nil && n >= exactCodesMinRows {
			codes := newExactCodes(e.exactVecs, n, ix.Dim())
			if ix.filters.charge(e, codes.bytes(), nil) {
				e.exactCodes = codes
			}
		}
	})
	return e.exact, e.exactErr
}

// maxExactVectorBytes bounds the contiguous copy of one predicate's
// matching vectors kept for the exact plan (counted in the filter cache's
// bytes).
const maxExactVectorBytes = 32 << 20

// exactVectors returns the vectors of the rows ords contiguously at stride
// stride(dim), or nil when they exceed maxExactVectorBytes or cannot be
// read now (the exact plan then gathers them per query, and reports a
// read error there).
func (ix *Index) exactVectors(ctx context.Context, e *filterEntry, ords []int64) []float32 {
	w := stride(ix.Dim())
	size := int64(len(ords)) * int64(w) * 4
	if len(ords) == 0 || size > maxExactVectorBytes {
		return nil
	}
	views, err := ix.ordViews(ctx, ords, nil, nil)
	if err != nil {
		return nil
	}
	if !ix.filters.charge(e, size, nil) {
		return nil
	}
	out := make([]float32, len(ords)*w)
	for i, v := range views {
		copy(out[i*w:(i+1)*w], v)
	}
	return out
}

// scoreExact scores the exact plan's rows from their contiguous vectors
// into s.top.
func (ix *Index) scoreExact(s *scratch, l *list, vecs []float32, half bool, st *Stats) {
	n := l.len()
	s.dists = slices.Grow(s.dists[:0], n)[:n]
	vecmath.L2SqBatch(s.qp, vecs, stride(ix.Dim()), s.dists)
	st.Candidates += int64(n)
	t := &s.top
	t.pushDists(s.dists, half, l)
}

// exactCodesMinRows is the number of matching rows from which the exact
// plan scores LVQ8 codes first (below it the float32 vectors alone cost
// about as much).
const exactCodesMinRows = 128

// exactCodes are the exact plan's rows encoded as LVQ8 (lvq.Encode8, one
// offset and scale per row), in scan layout: a first pass over them reads
// a quarter of the bytes of the float32 vectors, and bounds every row's
// exact distance, so that only the rows that may be among the k nearest
// are scored exactly.
type exactCodes struct {
	codes  []byte // row i at [i*w, (i+1)*w), w = stride(dim), zero padded
	offs   []float32
	scales []float32
	base   []float64 // D·o² + 2·o·s·Σc + s²·Σc², as list.base
	errs   []float64 // bound on ‖x − x̂‖: each coordinate rounds by at most scale/2 (plus the float32 scale's own rounding)
}

func newExactCodes(vecs []float32, n, dim int) *exactCodes {
	w := stride(dim)
	c := &exactCodes{codes: make([]byte, n*w), offs: make([]float32, n), scales: make([]float32, n),
		base: make([]float64, n), errs: make([]float64, n)}
	rd := math.Sqrt(float64(dim))
	for i := range n {
		code := c.codes[i*w : i*w+dim]
		o, sc := lvq.Encode8(code, vecs[i*w:i*w+dim])
		c.offs[i], c.scales[i] = o, sc
		s1, s2 := vecmath.SumU8(code)
		of, sf := float64(o), float64(sc)
		c.base[i] = float64(dim)*of*of + 2*of*sf*float64(s1) + sf*sf*float64(s2)
		c.errs[i] = sf / 2 * (1 + 1e-4) * rd
	}
	return c
}

func (c *exactCodes) bytes() int64 {
	return int64(len(c.codes)) + int64(len(c.offs))*(4+4+8+8)
}

// scoreExactCodes is the exact plan over LVQ8 codes: the codes give each
// row's distance d̂ to within its bound e (‖q−x‖ ∈ [√d̂ − e, √d̂ + e],
// widened by ε for the float32 dot product's rounding). The k rows of
// smallest d̂ have exact distances of at most T, the largest of their
// upper bounds, so the k-th nearest row is within T, and only the rows
// whose lower bound is at most T (plus the re-rank margin) can be among
// the k nearest: only they are scored exactly from vecs into s.top, as
// scoreExact scores every row. The test on a row is d̂ − ε ≤ (√T + e)²,
// with no square root per row.
func (ix *Index) scoreExactCodes(s *scratch, l *list, c *exactCodes, vecs []float32, k int, half bool, st *Stats) {
	n := l.len()
	w := len(s.qp)
	s.dists = slices.Grow(s.dists[:0], n)[:n]
	vecmath.DotU8Batch(s.qp, c.codes, w, s.dists)
	norm2, sumq := s.norm2, s.sumq // prepareQuery's
	var qabs float64
	for _, v := range s.q {
		qabs += math.Abs(float64(v))
	}
	// The float32 dot of D terms, each at most 255·|q_j|, is off by at most
	// D·2^-23 of 255·Σ|q_j| (any summation order); the float64 rest is
	// exact to 2^-30 of its magnitude.
	dotErr := 2 * 255 * qabs * float64(len(s.q)) / (1 << 23)
	sumq2 := 2 * sumq
	eps := func(i int) float64 { return float64(c.scales[i])*dotErr + (norm2+c.base[i])/(1<<30) }
	s.approx = slices.Grow(s.approx[:0], n)[:n]
	t := &s.top
	t.reset(k)
	for i, dot := range s.dists {
		d := norm2 + c.base[i] - (float64(c.offs[i])*sumq2 + float64(c.scales[i])*2*float64(dot))
		s.approx[i] = d
		t.push(cand{dist: float32(d), i: int32(i)})
	}
	limit := math.Inf(1)
	if best := t.best(); len(best) == k {
		limit = 0
		for _, h := range best {
			i := int(h.i)
			r := math.Sqrt(max(s.approx[i]+eps(i), 0)) + c.errs[i]
			limit = max(limit, r*r)
		}
		limit *= 1 + 4*rerankMargin
	}
	sl := math.Sqrt(limit)
	t.reset(k + 8) // spare places for the float64 re-rank
	scored := 0
	for i, d := range s.approx {
		if r := sl + c.errs[i]; d-eps(i) > r*r {
			continue
		}
		dist := vecmath.L2Sq(s.qp, vecs[i*w:(i+1)*w])
		scored++
		if half {
			dist *= 0.5
		}
		t.push(cand{dist: dist, i: int32(i), l: l}) // dropped past the threshold
	}
	st.Candidates += int64(n)
	st.Refined += int64(scored)
}

// exactViews points s.vs at the candidates' rows of vecs (the exact
// plan's contiguous vectors, at stride w), so that rerank reads them there
// instead of gathering them from the vector store.
func exactViews(s *scratch, cands []cand, vecs []float32, w int) {
	s.vs = slices.Grow(s.vs[:0], len(cands))[:len(cands)]
	for j, c := range cands {
		i := int(c.i)
		s.vs[j] = vecs[i*w : (i+1)*w : (i+1)*w]
	}
	s.vsFor = len(cands)
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
			if pos, ok := e.known(cid); ok {
				expect += float64(len(pos))
			} else {
				expect += perList
			}
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
// cost more than scoring them), the leaves not yet probed that
// may hold matching rows (those probed with e and found empty are skipped
// without a distance), visiting roots nearest first until want such leaves
// were scored (and at least routeOptions.MinRoots roots). It returns them,
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
			if pos, ok := e.known(cid); ok && len(pos) == 0 {
				continue
			}
			dst = append(dst, leafDist{vecmath.L2Sq(q, c.Leaf(cid)), cid})
			computed++
			scored++
		}
	}
	f.roots = roots
	for i := len(dst)/2 - 1; i >= 0; i-- {
		siftDownNearest(dst, i)
	}
	return dst, computed, visited == nr
}

// popNearest removes the nearest leaf from the min-heap h.
func popNearest(h []leafDist) (int32, []leafDist) {
	cid := h[0].cid
	n := len(h) - 1
	h[0] = h[n]
	h = h[:n]
	siftDownNearest(h, 0)
	return cid, h
}

// siftDownNearest restores the min-heap order (lessLeaf) below i.
func siftDownNearest(h []leafDist, i int) {
	for {
		l, r, m := 2*i+1, 2*i+2, i
		if l < len(h) && lessLeaf(h[l], h[m]) {
			m = l
		}
		if r < len(h) && lessLeaf(h[r], h[m]) {
			m = r
		}
		if m == i {
			return
		}
		h[m], h[i] = h[i], h[m]
		i = m
	}
}

func cmpLeaf(a, b leafDist) int {
	switch {
	case lessLeaf(a, b):
		return -1
	case lessLeaf(b, a):
		return 1
	}
	return 0
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
		lq := lvq.NewQuery(s.q)
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
