package query

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sort"
	"sync/atomic"

	"golang.org/x/sync/errgroup"

	"github.com/parqdb/parqdb/internal/source"
	"github.com/parqdb/parqdb/internal/vecmath"
	"github.com/parqdb/parqdb/ivf"
	"github.com/parqdb/parqdb/lvq"
	"github.com/parqdb/parqdb/metadata"
	"github.com/parqdb/parqdb/postings"
)

// Limits on search options.
const (
	MaxK      = 10000
	MaxRefine = 100
)

// Options tune one search.
type Options struct {
	// K is the number of results (default 10).
	K int
	// NProbe is the number of lists scanned (default 8, at most nlist).
	NProbe int
	// Refine, when > 0, re-scores the best Refine·K candidates with exact
	// source vectors and reports exact distances for them.
	Refine int
	// Columns selects the source columns joined to each result; nil means
	// every column.
	Columns []string
	// KeysOnly skips the join: results carry their key columns only.
	KeysOnly bool
}

func (o Options) withDefaults(nlist int) Options {
	if o.K == 0 {
		o.K = 10
	}
	if o.NProbe == 0 {
		o.NProbe = 8
	}
	o.NProbe = min(o.NProbe, nlist)
	return o
}

func (o Options) validate() error {
	switch {
	case o.K < 1 || o.K > MaxK:
		return fmt.Errorf("%w: k = %d is outside [1, %d]", ErrBadQuery, o.K, MaxK)
	case o.NProbe < 1:
		return fmt.Errorf("%w: nprobe = %d must be at least 1", ErrBadQuery, o.NProbe)
	case o.Refine < 0 || o.Refine > MaxRefine:
		return fmt.Errorf("%w: refine = %d is outside [0, %d]", ErrBadQuery, o.Refine, MaxRefine)
	}
	return nil
}

// Hit is one search result.
type Hit struct {
	// Key is the row's encoded source key (postings.Schema.AppendKey).
	Key []byte
	// Distance is the row's _distance.
	Distance float32
	// Row holds the joined source columns (or only the key columns with
	// KeysOnly), by name.
	Row map[string]any
}

// Result is the answer to one query.
type Result struct {
	// Columns lists the result columns in order; the last is _distance.
	Columns []string
	Hits    []Hit
	Stats   Stats
}

// Stats counts the work of one query.
type Stats struct {
	LeafDistances int64 // routing distances computed
	Lists         int64 // lists probed
	Candidates    int64 // postings rows scored
	Refined       int64 // candidates re-scored exactly
	Requests      int64 // storage requests for postings
	BytesRead     int64 // postings bytes fetched from storage
}

// Add accumulates s2 into s.
func (s *Stats) Add(s2 Stats) {
	s.LeafDistances += s2.LeafDistances
	s.Lists += s2.Lists
	s.Candidates += s2.Candidates
	s.Refined += s2.Refined
	s.Requests += s2.Requests
	s.BytesRead += s2.BytesRead
}

// Search returns the approximate K nearest source rows of q. Results are
// ordered by _distance, ties by key, so equal indexes give identical
// answers wherever they are stored.
func (ix *Index) Search(ctx context.Context, q []float32, opts Options) (*Result, error) {
	opts = opts.withDefaults(ix.NList())
	if err := opts.validate(); err != nil {
		return nil, err
	}
	qv, err := ix.prepareQuery(q)
	if err != nil {
		return nil, err
	}
	var st Stats
	cids := ix.route(qv, opts.NProbe, &st)
	lists, err := ix.readLists(ctx, cids, &st)
	if err != nil {
		return nil, err
	}
	keep := opts.K
	if opts.Refine > 0 || ix.schema.Encoding == metadata.EncodingSource {
		keep = opts.K * max(opts.Refine, 1)
	}
	top, err := ix.score(ctx, qv, lists, keep, &st)
	if err != nil {
		return nil, err
	}
	if opts.Refine > 0 && ix.schema.Encoding != metadata.EncodingSource {
		if top, err = ix.refine(ctx, qv, top, &st); err != nil {
			return nil, err
		}
	}
	if len(top) > opts.K {
		top = top[:opts.K]
	}
	return ix.join(ctx, top, opts, st)
}

// prepareQuery checks q and normalises it under cosine.
func (ix *Index) prepareQuery(q []float32) ([]float32, error) {
	if len(q) != ix.Dim() {
		return nil, fmt.Errorf("%w: query has %d values, the index has dimension %d", ErrBadQuery, len(q), ix.Dim())
	}
	for i, v := range q {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return nil, fmt.Errorf("%w: query value %d is %v", ErrBadQuery, i, v)
		}
	}
	if ix.snap.Metric != metadata.MetricCosine {
		return q, nil
	}
	out := make([]float32, len(q))
	if err := lvq.Normalize(out, q); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadQuery, err)
	}
	return out, nil
}

// route selects the nprobe nearest leaves (ivf.Centroids.RouteWith).
func (ix *Index) route(q []float32, nprobe int, st *Stats) []int32 {
	c := ix.art.Centroids
	cids, n := c.RouteWith(q, nprobe, routeOptions, nil)
	st.LeafDistances += int64(n + c.NumRoots())
	st.Lists += int64(len(cids))
	return cids
}

// readLists returns the decoded postings of cids, from the cache or, for
// the missing ones, fetched from storage in one parallel round of ranged
// reads (adjacent ranges merged).
func (ix *Index) readLists(ctx context.Context, cids []int32, st *Stats) ([]*list, error) {
	out := make([]*list, len(cids))
	var missing []int
	for i, cid := range cids {
		if l := ix.cache.get(cid); l != nil {
			out[i] = l
		} else if len(ix.manifest.Ranges(cid)) > 0 {
			missing = append(missing, i)
		}
	}
	if len(missing) == 0 {
		return out, nil
	}
	var ranges []postings.Range
	for _, i := range missing {
		ranges = append(ranges, ix.manifest.Ranges(cids[i])...)
	}
	data, reqs, n, err := ix.fetch(ctx, ranges)
	if err != nil {
		return nil, err
	}
	st.Requests += reqs
	st.BytesRead += n
	for _, i := range missing {
		l := &list{cid: cids[i]}
		for _, rg := range ix.manifest.Ranges(cids[i]) {
			if err := postings.DecodeRowGroup(ix.schema, data[rangeID(rg)], rg, &l.batch); err != nil {
				return nil, fmt.Errorf("postings %s row group %d: %w", ix.manifest.Files[rg.File].Path, rg.RowGroup, err)
			}
		}
		ix.cache.put(l)
		out[i] = l
	}
	return out, nil
}

type rangeKey struct {
	file int32
	off  int64
}

func rangeID(r postings.Range) rangeKey { return rangeKey{r.File, r.Offset} }

// fetch reads the byte ranges, merging adjacent ranges of one file into one
// request and issuing the requests in parallel.
func (ix *Index) fetch(ctx context.Context, ranges []postings.Range) (map[rangeKey][]byte, int64, int64, error) {
	slices.SortFunc(ranges, func(a, b postings.Range) int {
		return cmp.Or(cmp.Compare(a.File, b.File), cmp.Compare(a.Offset, b.Offset))
	})
	type span struct {
		file     int32
		off, end int64
		parts    []postings.Range
	}
	var spans []*span
	for _, r := range ranges {
		if n := len(spans); n > 0 && spans[n-1].file == r.File && spans[n-1].end == r.Offset {
			spans[n-1].end += r.Length
			spans[n-1].parts = append(spans[n-1].parts, r)
			continue
		}
		spans = append(spans, &span{file: r.File, off: r.Offset, end: r.Offset + r.Length, parts: []postings.Range{r}})
	}
	bufs := make([][]byte, len(spans))
	g, _ := errgroup.WithContext(ctx)
	g.SetLimit(fetchParallelism)
	var total atomic.Int64
	for i, s := range spans {
		g.Go(func() error {
			buf := make([]byte, s.end-s.off)
			if _, err := ix.files[s.file].ReadAt(buf, s.off); err != nil {
				return fmt.Errorf("read postings %s [%d, %d): %w", ix.manifest.Files[s.file].Path, s.off, s.end, err)
			}
			bufs[i] = buf
			total.Add(int64(len(buf)))
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, 0, 0, err
	}
	out := make(map[rangeKey][]byte, len(ranges))
	for i, s := range spans {
		for _, r := range s.parts {
			out[rangeID(r)] = bufs[i][r.Offset-s.off : r.Offset-s.off+r.Length]
		}
	}
	return out, int64(len(spans)), total.Load(), nil
}

// fetchParallelism bounds concurrent range requests per query.
const fetchParallelism = 16

// candidate is a scored postings row.
type candidate struct {
	dist float32
	key  []byte
}

func lessCand(a, b candidate) bool {
	if a.dist != b.dist {
		return a.dist < b.dist
	}
	return bytes.Compare(a.key, b.key) < 0
}

// topK keeps the k best candidates in a max-heap.
type topK struct {
	k int
	h []candidate
}

func (t *topK) push(c candidate) {
	if len(t.h) < t.k {
		t.h = append(t.h, c)
		t.up(len(t.h) - 1)
		return
	}
	if !lessCand(c, t.h[0]) {
		return
	}
	t.h[0] = c
	t.down(0)
}

// worst is the admission threshold once the heap is full.
func (t *topK) worst() (float32, bool) {
	if len(t.h) < t.k {
		return 0, false
	}
	return t.h[0].dist, true
}

func (t *topK) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !lessCand(t.h[p], t.h[i]) {
			break
		}
		t.h[p], t.h[i] = t.h[i], t.h[p]
		i = p
	}
}

func (t *topK) down(i int) {
	for {
		l, r, m := 2*i+1, 2*i+2, i
		if l < len(t.h) && lessCand(t.h[m], t.h[l]) {
			m = l
		}
		if r < len(t.h) && lessCand(t.h[m], t.h[r]) {
			m = r
		}
		if m == i {
			return
		}
		t.h[m], t.h[i] = t.h[i], t.h[m]
		i = m
	}
}

// sorted returns the candidates best first.
func (t *topK) sorted() []candidate {
	out := slices.Clone(t.h)
	slices.SortFunc(out, func(a, b candidate) int {
		if lessCand(a, b) {
			return -1
		}
		if lessCand(b, a) {
			return 1
		}
		return 0
	})
	return out
}

// score computes the distance of every row of the lists and keeps the
// best keep candidates.
func (ix *Index) score(ctx context.Context, q []float32, lists []*list, keep int, st *Stats) ([]candidate, error) {
	t := &topK{k: keep, h: make([]candidate, 0, keep)}
	half := ix.snap.Metric == metadata.MetricCosine
	if ix.schema.Encoding == metadata.EncodingSource {
		return ix.scoreSource(ctx, q, lists, t, half, st)
	}
	lq := lvq.NewQuery(q)
	var dists []float32
	for _, l := range lists {
		if l == nil {
			continue
		}
		b := &l.batch
		n := b.Len()
		if n == 0 {
			continue
		}
		dists = slices.Grow(dists[:0], n)[:n]
		if ix.schema.Encoding == metadata.EncodingLVQ8 {
			lq.L2Sq8Batch(b.Codes, b.Offsets, b.Scales, dists)
		} else {
			lq.L2Sq4Batch(b.Codes, b.Offsets, b.Scales, dists)
		}
		st.Candidates += int64(n)
		for i, d := range dists {
			if half {
				d *= 0.5
			}
			if w, full := t.worst(); full && d > w {
				continue
			}
			t.push(candidate{dist: d, key: b.Key(i)})
		}
	}
	return t.sorted(), nil
}

// scoreSource scores the rows of the lists with their exact source vectors.
func (ix *Index) scoreSource(ctx context.Context, q []float32, lists []*list, t *topK, half bool, st *Stats) ([]candidate, error) {
	var keys [][]byte
	for _, l := range lists {
		if l == nil {
			continue
		}
		for i := 0; i < l.batch.Len(); i++ {
			keys = append(keys, l.batch.Key(i))
		}
	}
	dists, err := ix.exactDistances(ctx, q, keys, half)
	if err != nil {
		return nil, err
	}
	st.Candidates += int64(len(keys))
	for i, k := range keys {
		t.push(candidate{dist: dists[i], key: k})
	}
	return t.sorted(), nil
}

// refine re-scores candidates with exact source vectors.
func (ix *Index) refine(ctx context.Context, q []float32, cands []candidate, st *Stats) ([]candidate, error) {
	keys := make([][]byte, len(cands))
	for i, c := range cands {
		keys[i] = c.key
	}
	dists, err := ix.exactDistances(ctx, q, keys, ix.snap.Metric == metadata.MetricCosine)
	if err != nil {
		return nil, err
	}
	st.Refined += int64(len(cands))
	out := make([]candidate, len(cands))
	for i := range cands {
		out[i] = candidate{dist: dists[i], key: keys[i]}
	}
	sort.Slice(out, func(i, j int) bool { return lessCand(out[i], out[j]) })
	return out, nil
}

// exactDistances computes the distance from q to the exact source vector of
// every key, in float64 rounded once to float32.
func (ix *Index) exactDistances(ctx context.Context, q []float32, keys [][]byte, half bool) ([]float32, error) {
	locs, err := ix.locate(ctx, keys)
	if err != nil {
		return nil, err
	}
	vector, err := ix.vectorReader(ctx, locs)
	if err != nil {
		return nil, err
	}
	out := make([]float32, len(keys))
	for i := range keys {
		d := exactL2(q, vector(i))
		if half {
			d *= 0.5
		}
		out[i] = float32(d)
	}
	return out, nil
}

func exactL2(a, b []float32) float64 {
	var s float64
	for i := range a {
		d := float64(a[i]) - float64(b[i])
		s += d * d
	}
	return s
}

// locate maps encoded keys to source row locations.
func (ix *Index) locate(ctx context.Context, keys [][]byte) ([]source.RowLoc, error) {
	ki, err := ix.keys(ctx)
	if err != nil {
		return nil, fmt.Errorf("index %q: key index: %w", ix.name, err)
	}
	locs := make([]source.RowLoc, len(keys))
	for i, k := range keys {
		vals, err := ix.schema.DecodeKey(k)
		if err != nil {
			return nil, fmt.Errorf("%w: postings key: %v", ErrCorrupt, err)
		}
		loc, ok, err := ki.LookupValues(vals)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, fmt.Errorf("%w: postings key %x has no source row", ErrCorrupt, k)
		}
		locs[i] = loc
	}
	return locs, nil
}

// join attaches source columns (or just the key columns) to the hits.
func (ix *Index) join(ctx context.Context, top []candidate, opts Options, st Stats) (*Result, error) {
	res := &Result{Stats: st, Hits: make([]Hit, len(top))}
	if opts.KeysOnly {
		res.Columns = append(slices.Clone(ix.snap.SourceKeyFields), metadata.ReservedField)
		for i, c := range top {
			vals, err := ix.schema.DecodeKey(c.key)
			if err != nil {
				return nil, fmt.Errorf("%w: postings key: %v", ErrCorrupt, err)
			}
			row := make(map[string]any, len(vals))
			for j, v := range vals {
				kt := ix.layout.Keys[j]
				kv, err := source.KeyValueOf(kt, v)
				if err != nil {
					return nil, err
				}
				row[kt.Name] = keyValueAny(kv)
			}
			res.Hits[i] = Hit{Key: c.key, Distance: c.dist, Row: row}
		}
		return res, nil
	}
	cols := opts.Columns
	if cols == nil {
		cols = ix.Columns()
	}
	res.Columns = append(slices.Clone(cols), metadata.ReservedField)
	keys := make([][]byte, len(top))
	for i, c := range top {
		keys[i] = c.key
	}
	locs, err := ix.locate(ctx, keys)
	if err != nil {
		return nil, err
	}
	rows, err := ix.table.ReadRows(ctx, locs, cols)
	if err != nil {
		return nil, err
	}
	for i, c := range top {
		m, err := rows.Map(i)
		if err != nil {
			return nil, err
		}
		res.Hits[i] = Hit{Key: c.key, Distance: c.dist, Row: m}
	}
	return res, nil
}

// keyValueAny returns a key value as the Go value a join would give
// (source.Rows.Map): bool, int32, int64, string or []byte; dates as int32
// days since 1970-01-01.
func keyValueAny(v source.KeyValue) any {
	switch v.Kind {
	case source.KindBool:
		return v.Int != 0
	case source.KindInt32, source.KindDate:
		return int32(v.Int)
	case source.KindInt64:
		return v.Int
	case source.KindString:
		return string(v.Bytes)
	default:
		return slices.Clone(v.Bytes)
	}
}

// KernelImpl names the distance kernels in use ("avx512", "avx2" or "go").
func KernelImpl() string { return vecmath.Impl() }

// routeOptions is how far routing descends the root hierarchy.
var routeOptions = ivf.DefaultRouteOptions

// SearchBatch runs Search for every query on up to workers goroutines
// (0: one per core) and returns the results in query order.
func (ix *Index) SearchBatch(ctx context.Context, qs [][]float32, opts Options, workers int) ([]*Result, error) {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	out := make([]*Result, len(qs))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(workers)
	for i, q := range qs {
		g.Go(func() error {
			r, err := ix.Search(gctx, q, opts)
			if err != nil {
				return fmt.Errorf("query %d: %w", i, err)
			}
			out[i] = r
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return out, nil
}
