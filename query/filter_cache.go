package query

import (
	"context"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/parqdb/parqdb/filter"
	"github.com/parqdb/parqdb/internal/membudget"
	"github.com/parqdb/parqdb/internal/source"
	"github.com/parqdb/parqdb/metadata"
)

// DefaultFilterCacheBytes bounds the memory of cached filter bitmaps per
// index (a membudget cache: CLOCK eviction), with the per-list positions
// of their matching rows (4 bytes per matching row, charged up front) and
// the exact plan's contiguous copy of its rows' vectors (at most
// maxExactVectorBytes per predicate) and the list plan's packed lists (at
// most maxPackedBytes per predicate; packing evicts other predicates, not
// its own). The per-predicate keys of the exact plan (at most a few
// percent of the rows) are not counted.
const DefaultFilterCacheBytes = 256 << 20

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
	// read again).
	lists []atomic.Pointer[[]int32]

	// Per list (by CID), its matching rows packed (packList), set once on
	// a probe after the positions; nil for lists not packed. packedBytes
	// counts the bytes of the packed lists set (and of those being
	// built), at most maxPackedBytes.
	packed      []atomic.Pointer[packedList]
	packedBytes atomic.Int64
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
	e.lists[l.cid].CompareAndSwap(nil, &pos)
	return pos
}

// setEmpty records that the list cid holds no row.
func (e *filterEntry) setEmpty(cid int32) {
	if cid >= 0 && int(cid) < len(e.lists) {
		e.lists[cid].CompareAndSwap(nil, &[]int32{})
	}
}

// nonEmpty estimates the fraction of lists that hold a matching row: what
// uniformly spread matches would give, 1 − (1 − σ)^(n/nlist). It depends
// on the predicate's counts only, never on the lists earlier queries
// probed, so that the plan a query takes — and with it the answer — is the
// same whatever the process searched before (it once switched to the
// fraction among the lists probed so far, and a query's answer then
// depended on its predecessors: TestFilteredAnswerIndependentOfHistory).
func (e *filterEntry) nonEmpty() float64 {
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
		if c.mu.building[key] == e {
			delete(c.mu.building, key)
		}
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
