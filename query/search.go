package query

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"golang.org/x/sync/errgroup"

	"github.com/parqdb/parqdb/filter"
	"github.com/parqdb/parqdb/internal/source"
	"github.com/parqdb/parqdb/internal/vecmath"
	"github.com/parqdb/parqdb/lvq"
	"github.com/parqdb/parqdb/metadata"
	"github.com/parqdb/parqdb/postings"
	"github.com/parqdb/parqdb/storage"
)

// Ranges of the search options: the one source of truth for the library,
// the CLI (parqdb search, bench) and the HTTP and SQL front ends, which
// accept exactly these ranges (an operator may lower the server's upper
// bounds with serve --max-k, --max-nprobe and --max-batch, not raise them).
// A zero Options field selects the default; the front ends refuse an
// explicit 0 for k and nprobe.
const (
	DefaultK      = 10
	MinK          = 1
	MaxK          = 1000
	DefaultNProbe = 8
	MinNProbe     = 1
	// MaxNProbe bounds nprobe; values above an index's nlist scan every
	// list.
	MaxNProbe = 4096
	MinRefine = 0
	MaxRefine = 100
	// MaxBatch bounds the query vectors of one HTTP request; the CLI
	// searches a larger --queries file in batches of this size.
	MaxBatch = 256
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
	// NoRows skips the join and the key decoding: Hit.Row is nil and only
	// Hit.Key and Hit.Distance are set (Result.Columns still names the key
	// fields and _distance). It is the cheapest form, for benchmarks and
	// callers that join by key themselves.
	NoRows bool
	// SharedRows lets Hit.Row be the index's cached row map itself,
	// shared with other searches, instead of a copy of it: the caller
	// reads such rows and never modifies them. It saves a map copy per
	// cached row for callers that only encode rows (the HTTP server).
	SharedRows bool
	// Filter, when set, restricts the search to the source rows for which
	// the predicate is true (filtered search; see filter.go for the plan).
	// Parse it once with filter.Parse and reuse it: the matching rows are
	// computed on first use and cached per index.
	Filter *filter.Predicate
	// Recall, when > 0, is a target recall@K in (0, 1]: the search runs
	// with the cheapest nprobe and refine that met it in the index's
	// calibration (recall.go; Index.RecallSetting tells which). NProbe and
	// Refine must then be 0.
	Recall float64
}

func (o Options) withDefaults(nlist int) Options {
	if o.K == 0 {
		o.K = DefaultK
	}
	if o.NProbe == 0 {
		o.NProbe = DefaultNProbe
	}
	if o.NProbe <= MaxNProbe {
		o.NProbe = min(o.NProbe, nlist)
	}
	return o
}

func (o Options) validate() error {
	switch {
	case o.K < MinK || o.K > MaxK:
		return fmt.Errorf("%w: k = %d is outside [%d, %d]", ErrBadQuery, o.K, MinK, MaxK)
	case o.NProbe < MinNProbe || o.NProbe > MaxNProbe:
		return fmt.Errorf("%w: nprobe = %d is outside [%d, %d]", ErrBadQuery, o.NProbe, MinNProbe, MaxNProbe)
	case o.Refine < MinRefine || o.Refine > MaxRefine:
		return fmt.Errorf("%w: refine = %d is outside [%d, %d]", ErrBadQuery, o.Refine, MinRefine, MaxRefine)
	}
	return nil
}

// Hit is one search result.
type Hit struct {
	// Key is the row's encoded source key (postings.Schema.AppendKey). It
	// may alias the index's cache: do not modify it.
	Key []byte
	// Distance is the row's _distance.
	Distance float32
	// Row holds the joined source columns (or only the key columns with
	// KeysOnly), by name; nil with NoRows.
	Row map[string]any
}

// Result is the answer to one query.
type Result struct {
	// Columns lists the result columns in order; the last is _distance.
	// It may be shared with other results of the index: do not modify it.
	Columns []string
	Hits    []Hit
	Stats   Stats
}

// Stats counts the work of one query.
type Stats struct {
	LeafDistances int64 // routing distances computed (roots and leaves)
	Lists         int64 // lists probed
	Candidates    int64 // postings rows scored
	Refined       int64 // candidates re-scored exactly
	Requests      int64 // storage requests for postings (only)
	BytesRead     int64 // postings bytes fetched from storage (only)
	// VectorFileRequests and VectorFileBytes count the ranged reads of the
	// snapshot's vectors file (profile §4.2) that refine and the source
	// encoding issued for exact vectors the vector store did not hold; a
	// block found in the file's block cache costs none. The file's
	// one-time open (a HEAD and a footer read, by the first query that
	// needs it) is not counted.
	VectorFileRequests int64
	VectorFileBytes    int64
	// SourceVectorRows counts the exact vectors read from source Parquet
	// pages (each costing a decode of its page) because neither the vector
	// store nor a vectors file held them: with a vectors file it is
	// non-zero only for the filters' exact plan, which gathers by source
	// row. The source reads themselves are not in Requests or BytesRead.
	SourceVectorRows int64
	// ExactScored counts the source encoding's rows scored with their
	// exact vector; the other Candidates were ruled out by the LVQ8 shadow
	// of the vectors (srcCodes) without reading them.
	ExactScored int64
	// Rounds counts batched rounds of storage reads: one when some probed
	// list was not cached, plus one when the join read source rows.
	Rounds int64
	// CachedLists counts probed lists served from the cache.
	CachedLists int64
	// Filtered search (Options.Filter): FilterRows is the number of source
	// rows that match the predicate; FilterRejected counts the rows of the
	// probed lists that do not match, skipped without being scored
	// (Candidates counts the matching rows scored); FilterExact counts
	// queries answered by an exact scan of the matching rows (the exact
	// plan), FilterLists those answered by the list plan (a query with no
	// matching row counts in neither), and FilterWidenings the extra
	// routings over every root taken because the lists first routed to held
	// too few matching rows (see filter.go).
	FilterRows      int64
	FilterRejected  int64
	FilterExact     int64
	FilterLists     int64
	FilterWidenings int64
}

// Add accumulates s2 into s.
func (s *Stats) Add(s2 Stats) {
	s.LeafDistances += s2.LeafDistances
	s.Lists += s2.Lists
	s.Candidates += s2.Candidates
	s.Refined += s2.Refined
	s.ExactScored += s2.ExactScored
	s.Requests += s2.Requests
	s.BytesRead += s2.BytesRead
	s.VectorFileRequests += s2.VectorFileRequests
	s.VectorFileBytes += s2.VectorFileBytes
	s.SourceVectorRows += s2.SourceVectorRows
	s.Rounds += s2.Rounds
	s.CachedLists += s2.CachedLists
	s.FilterRows += s2.FilterRows
	s.FilterRejected += s2.FilterRejected
	s.FilterExact += s2.FilterExact
	s.FilterLists += s2.FilterLists
	s.FilterWidenings += s2.FilterWidenings
}

// scratch is the per-query working memory, pooled so that a warm query
// allocates little beyond its Result.
type scratch struct {
	q       []float32 // the query, normalised under cosine
	qp      []float32 // q zero-padded to the LVQ8 stride
	cids    []int32
	lists   []*list
	missing []int
	dists   []float32
	admit   []int32   // scoreList: rows within the admission bound
	approx  []float64 // the exact plan's code distances (scoreExactCodes)
	top     topK
	route   routeScratch
	filt    filterScratch // filtered search (filter.go)
	vs      [][]float32   // refine and rerank: candidates' exact vectors
	vs2     [][]float32   // refine: the vectors of its second batch
	vsFor   int           // len of the candidates refine left s.vs for; -1 none
	kd      []float32     // rerank: the candidates' distances, for selection
	d64     []float64     // rerank: the leaders' float64 distances
	norm2   float64       // ‖q‖² of s.q in float64 (prepareQuery): the LVQ8 terms, refine's bounds
	sumq    float64       // Σq of s.q in float64 (prepareQuery)

	// u8q is s.q quantized for blocked LVQ8 lists (prepareQuery, when
	// Index.blocked).
	u8q vecmath.U8Query
	// lq is s.q for the LVQ4 kernels (scoreLVQ4, the filtered LVQ4 plan),
	// Reset per query.
	lq lvq.Query

	// scoreSourceCodes: the query's bound terms (prepareQuery, on a
	// source index), a run's rows to score exactly, their vectors and
	// distances
	srcB    srcBound
	srcRows []int32
	srcVecs [][]float32
	srcOut  [srcRun]float32

	// pre holds the lists' vectors prefetchLists read for scoreSource,
	// for rerank (the store may have kept none of them); reset per search.
	pre prefetched
}

var scratchPool = sync.Pool{New: func() any { return &scratch{vsFor: -1} }}

// putScratch returns s to the pool without the vectors of its last
// source search.
func putScratch(s *scratch) {
	s.pre = prefetched{}
	scratchPool.Put(s)
}

// Search returns the approximate K nearest source rows of q. Results are
// ordered by _distance, ties by key, so equal indexes give identical
// answers wherever they are stored. Safe for concurrent use. A source file
// that no longer decodes because it was removed or rewritten after Open
// fails with a *StaleError (ErrStale), not as a damaged source.
func (ix *Index) Search(ctx context.Context, q []float32, opts Options) (*Result, error) {
	r, err := ix.search(ctx, q, opts, -1)
	return r, ix.staleOr(ctx, err)
}

// search runs the pipeline; extra, when ≥ 0, is a CID probed in addition
// to the routed ones.
func (ix *Index) search(ctx context.Context, q []float32, opts Options, extra int32) (*Result, error) {
	opts, err := ix.resolve(ctx, opts)
	if err != nil {
		return nil, err
	}
	if opts.Filter != nil {
		return ix.searchFiltered(ctx, q, opts, extra)
	}
	s := scratchPool.Get().(*scratch)
	defer putScratch(s)
	if err := ix.prepareQuery(s, q); err != nil {
		return nil, err
	}
	var st Stats
	ix.route(s, opts.NProbe, &st)
	if extra >= 0 && !slices.Contains(s.cids, extra) {
		s.cids = append(s.cids, extra)
		st.Lists++
	}
	if err := ix.readLists(ctx, s, &st); err != nil {
		return nil, err
	}
	keep, refineK := ix.keep(opts)
	if err := ix.score(ctx, s, keep, refineK, &st); err != nil {
		return nil, err
	}
	return ix.finish(ctx, s, opts, st)
}

// resolve returns opts with a target recall replaced by its calibrated
// setting and the defaults filled in, or the error that makes them
// invalid.
func (ix *Index) resolve(ctx context.Context, opts Options) (Options, error) {
	opts, err := ix.recallOptions(ctx, opts)
	if err != nil {
		return opts, err
	}
	opts = opts.withDefaults(ix.NList())
	return opts, opts.validate()
}

// keep returns how many candidates the scan keeps for opts, and refineK,
// the k of refine's cap (0: no cap).
func (ix *Index) keep(opts Options) (keep, refineK int) {
	exact := ix.schema.Encoding == metadata.EncodingSource
	keep = opts.K
	switch {
	case exact:
		// float32 scores; a few spare places so that the float64 re-rank
		// (rerank) sees every candidate that could enter the top K.
		keep = opts.K*max(opts.Refine, 1) + 8
	case opts.Refine > 0:
		keep = opts.K * opts.Refine
	}
	if opts.Refine > 0 && !exact {
		refineK = opts.K
	}
	return keep, refineK
}

// finish turns the candidates the scan left in s.top into the result:
// refine, the exact re-rank, the join.
func (ix *Index) finish(ctx context.Context, s *scratch, opts Options, st Stats) (*Result, error) {
	exact := ix.schema.Encoding == metadata.EncodingSource
	var top []cand
	if opts.Refine > 0 && !exact {
		// refine re-scores the candidates in any order and rerank sorts
		// the leaders: no need to sort the approximate order first.
		var err error
		if top, err = ix.refine(ctx, s, s.top.best(), opts.K, &st); err != nil {
			return nil, err
		}
		exact = true
	} else if exact {
		top = s.top.best() // rerank selects and sorts the leaders
	} else {
		top = s.top.sorted()
	}
	if exact {
		var err error
		if top, err = ix.rerank(ctx, s, top, opts.K, &st); err != nil {
			return nil, err
		}
	}
	if len(top) > opts.K {
		top = top[:opts.K]
	}
	return ix.join(ctx, top, opts, st)
}

// newResult returns a Result with n zero hits and st, in one allocation
// up to smallResult hits (the default k).
func newResult(n int, st Stats) *Result {
	if n > smallResult {
		return &Result{Stats: st, Hits: make([]Hit, n)}
	}
	b := &struct {
		r Result
		h [smallResult]Hit
	}{}
	b.r.Stats, b.r.Hits = st, b.h[:n:n]
	return &b.r
}

// smallResult is the most hits newResult allocates with the Result.
const smallResult = 10

// keyResultColumns returns the columns of a keys-only or row-less result:
// the key fields, then _distance. The slice is shared by every such result
// of ix (Result.Columns: do not modify it); its capacity is its length, so
// an append copies it.
func (ix *Index) keyResultColumns() []string {
	ix.keyColsOnce.Do(func() {
		keys := ix.snap.SourceKeyFields
		ix.keyCols = slices.Clip(append(append(make([]string, 0, len(keys)+1), keys...), metadata.ReservedField))
	})
	return ix.keyCols
}

// prepareQuery checks q and normalises it under cosine into s.q (as
// lvq.Normalize does: a float64 norm and a float64 division per value,
// rounded once), then sets s.qp, s.sumq and s.norm2 (in order, in float64),
// and s.u8q for the blocked layout.
func (ix *Index) prepareQuery(s *scratch, q []float32) error {
	d := ix.Dim()
	if len(q) != d {
		return fmt.Errorf("%w: query has %d values, the index has dimension %d", ErrBadQuery, len(q), d)
	}
	w := stride(d)
	s.q = slices.Grow(s.q[:0], d)[:d]
	s.qp = slices.Grow(s.qp[:0], w)[:w]
	clear(s.qp[d:])
	dst, qp := s.q, s.qp[:d]
	var ss, bad float64
	for _, v := range q {
		f := float64(v)
		ss += f * f
		bad += f - f // NaN once any value is NaN or ±Inf
	}
	if bad != 0 { // NaN
		for i, v := range q {
			if v-v != 0 { // NaN or ±Inf
				return fmt.Errorf("%w: query value %d is %v", ErrBadQuery, i, v)
			}
		}
	}
	if ix.snap.Metric == metadata.MetricCosine {
		if ss == 0 {
			return fmt.Errorf("%w: %v", ErrBadQuery, lvq.ErrZeroNorm)
		}
		n := math.Sqrt(ss) // finite: a float32's square fits a float64
		for i, v := range q {
			dst[i] = float32(float64(v) / n)
		}
	} else {
		copy(dst, q)
	}
	var sumq, norm2 float64
	for i, v := range dst {
		qp[i] = v
		f := float64(v)
		sumq += f
		norm2 += f * f
	}
	s.sumq, s.norm2 = sumq, norm2
	if ix.blocked {
		s.u8q.Set(s.q)
	}
	if ix.schema.Encoding == metadata.EncodingSource {
		s.srcB = ix.newSrcBound(s, ix.snap.Metric == metadata.MetricCosine)
	}
	return nil
}

// route selects the nprobe nearest leaves (router.route).
func (ix *Index) route(s *scratch, nprobe int, st *Stats) {
	var n int
	s.cids, n = ix.router.route(s.q, nprobe, &s.route, s.cids)
	st.LeafDistances += int64(n)
	st.Lists += int64(len(s.cids))
}

// readLists sets s.lists to the decoded postings of s.cids, from the cache
// or, for the missing ones, fetched from storage in one parallel round of
// ranged reads (adjacent ranges merged).
func (ix *Index) readLists(ctx context.Context, s *scratch, st *Stats) error {
	s.lists = slices.Grow(s.lists[:0], len(s.cids))[:len(s.cids)]
	s.missing = s.missing[:0]
	var hits int64
	for i, cid := range s.cids {
		if l := ix.cache.lookup(cid); l != nil {
			s.lists[i] = l
			hits++
		} else {
			s.lists[i] = nil
			if len(ix.manifest.Ranges(cid)) > 0 {
				s.missing = append(s.missing, i)
			}
		}
	}
	st.CachedLists += hits
	ix.cache.count(hits, int64(len(s.cids))-hits)
	if len(s.missing) == 0 {
		return nil
	}
	var ranges []postings.Range
	for _, i := range s.missing {
		ranges = append(ranges, ix.manifest.Ranges(s.cids[i])...)
	}
	data, reqs, n, err := ix.fetch(ctx, ranges)
	if err != nil {
		return err
	}
	st.Requests += reqs
	st.BytesRead += n
	st.Rounds++
	for _, i := range s.missing {
		var b postings.Batch
		for _, rg := range ix.manifest.Ranges(s.cids[i]) {
			if err := postings.DecodeRowGroup(ix.schema, data[rangeID(rg)], rg, &b); err != nil {
				return fmt.Errorf("postings %s row group %d: %w", ix.manifest.Files[rg.File].Path, rg.RowGroup, err)
			}
		}
		s.lists[i] = ix.cache.put(newList(s.cids[i], b, ix.schema.Encoding, ix.Dim(), ix.blocked))
	}
	return nil
}

type rangeKey struct {
	file int32
	off  int64
}

func rangeID(r postings.Range) rangeKey { return rangeKey{r.File, r.Offset} }

// fetch reads the byte ranges, merging adjacent ranges of one file into one
// request and issuing the requests in parallel (one round).
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
				if errors.Is(err, storage.ErrNotExist) || errors.Is(err, storage.ErrChanged) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
					// Files are opened with the manifest's sizes (no HEAD):
					// a missing, shorter or replaced file shows here.
					return fmt.Errorf("read postings %s [%d, %d): %w: the file the manifest lists (%d bytes) is missing or differs: %w; run `parqdb index verify %s`",
						ix.manifest.Files[s.file].Path, s.off, s.end, ErrCorrupt, ix.manifest.Files[s.file].Size, err, ix.name)
				}
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

// fetchParallelism bounds concurrent range requests per query; one round
// of a query at the default nprobe fits in it.
const fetchParallelism = 64

// score computes the distance of every row of the probed lists and keeps
// the best keep candidates in s.top. A row enters the heap only if it beats
// the current worst (early abandon after the distance kernel).
func (ix *Index) score(ctx context.Context, s *scratch, keep int, refineK int, st *Stats) error {
	ix.scoreBegin(s, keep, refineK)
	half := ix.snap.Metric == metadata.MetricCosine
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

// scoreBegin readies s.top for a scan that keeps keep candidates, with
// refine's cap at refineK (0: none; LVQ8 only).
func (ix *Index) scoreBegin(s *scratch, keep, refineK int) {
	s.top.reset(keep)
	if ix.schema.Encoding == metadata.EncodingLVQ8 && refineK > 0 && refineK < keep && !noRefineSkip.Load() && !noRefineCap.Load() {
		s.top.capK, s.top.capAt = refineK, ix.newRefineCap(s, ix.snap.Metric == metadata.MetricCosine)
	}
}

// scoreLVQ8 scores LVQ8 codes without decoding them:
//
//	‖q − x̂‖² = ‖q‖² − 2·o·Σq − 2·s·(q·c) + base,  base = D·o² + 2·o·s·Σc + s²·Σc²
//
// with q·c from the SIMD kernel over the cached, padded codes and base
// precomputed per row when the list was cached.
func (ix *Index) scoreLVQ8(s *scratch, half bool, st *Stats) {
	q := newLVQ8Terms(s, half)
	for i, l := range s.lists {
		if l != nil {
			if ix.prefetch && i+1 < len(s.lists) && s.lists[i+1] != nil {
				s.lists[i+1].prefetch(ix.Dim()) // its start, while this one is scored
			}
			q.scoreList(s, l, st)
		}
	}
}

// lvq8Terms are the query's terms of the LVQ8 distance (scoreLVQ8).
type lvq8Terms struct {
	vecmath.LVQ8Terms // ‖q‖², 2·Σq; Mul 0.5 for cosine's _distance, else 1
}

// newLVQ8Terms returns the terms of s.q (s.norm2 and s.sumq, set by
// prepareQuery).
func newLVQ8Terms(s *scratch, half bool) lvq8Terms {
	t := lvq8Terms{vecmath.LVQ8Terms{Norm2: s.norm2, SumQ2: 2 * s.sumq, Mul: 1}}
	if half {
		t.Mul = 0.5
	}
	return t
}

// scoreList scores every row of l with the batch kernels into s.top: the
// code dot products, then the distances (vecmath.LVQ8Terms.Dists), which
// also lists the rows within the admission bound at the list's start.
// Since the bound only falls, only those can be admitted; each is checked
// against the current bound as it is offered.
func (q lvq8Terms) scoreList(s *scratch, l *list, st *Stats) {
	n := l.len()
	if n == 0 {
		return
	}
	l.dots(s)
	st.Candidates += int64(n)
	t := &s.top
	thr := t.threshold()
	offs, scs, base := l.batch.Offsets[:n], l.batch.Scales[:n], l.base[:n]
	if t.len() == 0 && n > t.k && !noFirstListBound.Load() {
		// The first list (nearest first) would admit every row until the
		// buffer fills: bound it by its own k-th distance instead, which
		// no row past it can beat (topK.lower), and by refine's cap of its
		// capK-th.
		s.admit = q.Dists(s.dists, offs, scs, base, -1, s.admit[:0])
		// its k-th, and refine's cap at once, as trim applies it (s.kd:
		// a copy to select on, if boundOfKeep needs one)
		t.lower(t.boundOfKeep(s.dists, t.threshold(), &s.kd))
		t.capKthOK = false // the list's, not the buffer's
		thr = t.threshold()
		for i, d := range s.dists {
			if d <= thr {
				s.admit = append(s.admit, int32(i))
			}
		}
	} else {
		s.admit = q.Dists(s.dists, offs, scs, base, thr, s.admit[:0])
	}
	for _, i := range s.admit {
		d := s.dists[i]
		if d > thr {
			continue
		}
		t.push(cand{dist: d, i: i, l: l})
		thr = t.threshold()
	}
}

func (ix *Index) scoreLVQ4(s *scratch, half bool, st *Stats) {
	lq := &s.lq
	lq.Reset(s.q)
	t := &s.top
	for _, l := range s.lists {
		if l == nil {
			continue
		}
		b := &l.batch
		n := b.Len()
		if n == 0 {
			continue
		}
		s.dists = slices.Grow(s.dists[:0], n)[:n]
		lq.L2Sq4Batch(b.Codes, b.Offsets, b.Scales, s.dists)
		st.Candidates += int64(n)
		t.pushDists(s.dists, half, l)
	}
}

// scoreSource scores the rows of the lists with their exact source vectors
// from the vector store, each list's block scanned contiguously by the
// float32 SIMD kernel as IVF-Flat does (rerank makes the reported
// distances exact).
func (ix *Index) scoreSource(ctx context.Context, s *scratch, half bool, st *Stats) error {
	var hits int64 // store hits, counted once per query
	defer func() { ix.vstore.count(hits, 0) }()
	pre, err := ix.prefetchLists(ctx, s.lists, st)
	if err != nil {
		return err
	}
	s.pre = prefetched{lists: s.lists, blocks: pre}
	for i, l := range s.lists {
		if l == nil || l.len() == 0 {
			continue
		}
		if l.cid >= 0 {
			var v []float32
			if pre != nil {
				v = pre[i]
			}
			if _, err := ix.scoreSourceList(ctx, s, l, v, half, &hits, st); err != nil {
				return err
			}
			continue
		}
		// The filters' exact plan: matching rows by ordinal, not a list.
		ords, err := ix.sourceOrds(ctx, l)
		if err != nil {
			return err
		}
		if s.vs, err = ix.ordViews(ctx, ords, s.vs, st); err != nil {
			return err
		}
		n := l.len()
		s.dists = slices.Grow(s.dists[:0], n)[:n]
		for i, v := range s.vs {
			s.dists[i] = vecmath.L2Sq(s.qp, v)
		}
		clear(s.vs)
		st.Candidates += int64(n)
		s.top.pushDists(s.dists, half, l)
	}
	return nil
}

// scoreSourceList scores the rows of list l (l.cid ≥ 0) with their exact
// vectors v (prefetchLists, or read for another query), or when v is nil
// from the vector store (listVectors, counting a store hit in hits), into
// s.top. It returns the vectors it scored.
func (ix *Index) scoreSourceList(ctx context.Context, s *scratch, l *list, v []float32, half bool, hits *int64, st *Stats) ([]float32, error) {
	if v == nil {
		var err error
		if v, err = ix.listVectors(ctx, l, hits, st); err != nil {
			return nil, err
		}
	}
	if c := ix.vstore.codes(l.cid, v); c != nil && !noSourceCodes.Load() {
		ix.scoreSourceCodes(s, l, v, c, half, st)
		return v, nil
	}
	n := l.len()
	s.dists = slices.Grow(s.dists[:0], n)[:n]
	// rows and query zero padded to the store's stride
	vecmath.L2SqBatch(s.qp, v, ix.vstore.w, s.dists)
	st.Candidates += int64(n)
	st.ExactScored += int64(n)
	s.top.pushDists(s.dists, half, l)
	return v, nil
}

// refine re-scores candidates (in any order) with exact vectors (float32
// SIMD, all of a batch in one kernel call), taken from the vector store
// (candVectors), and leaves the vectors in s.vs for rerank, which selects,
// makes exact and sorts the leaders: no sort of all the candidates.
//
// With LVQ8 codes it first re-scores the k best by code distance, then only
// those of the others that could still beat them (lvq8LowerBound): their
// exact distance is provably farther than the k-th found, by a margin far
// above rounding, so they would be neither among the k best nor within
// rerank's margin, and the results are the same as re-scoring all of them.
// At refine 4 most of the extra candidates are skipped, and their vectors
// — the bulk of refine's memory traffic at large D — are never read.
func (ix *Index) refine(ctx context.Context, s *scratch, cands []cand, k int, st *Stats) ([]cand, error) {
	half := ix.snap.Metric == metadata.MetricCosine
	if err := ix.warmStore(ctx); err != nil {
		return nil, err
	}
	if err := ix.prefetchFileVectors(ctx, cands, st); err != nil {
		return nil, err
	}
	first := len(cands)
	if ix.schema.Encoding == metadata.EncodingLVQ8 && len(cands) > k && !noRefineSkip.Load() {
		// The k best by code distance first (with any tied with the k-th:
		// any k of them bound the k-th exact distance from above).
		kth := s.top.capKth // the capped buffer's k-th, when cands is its best()
		if !s.top.capKthOK || s.top.capK != k {
			s.kd = slices.Grow(s.kd[:0], len(cands))
			for _, c := range cands {
				s.kd = append(s.kd, c.dist)
			}
			kth = kthFloat(s.kd, k)
		}
		first = 0
		for j, c := range cands {
			if c.dist <= kth {
				cands[first], cands[j] = cands[j], cands[first]
				first++
			}
		}
	}
	vs, err := ix.refineViews(ctx, s, cands[:first], s.vs, half, st)
	if err != nil {
		return nil, err
	}
	s.vs = vs
	if first < len(cands) {
		var worst float32 // the k-th exact distance is at most this
		for _, c := range cands[:first] {
			worst = max(worst, c.dist)
		}
		// The float32 kernels' relative error is at most (D+2)·2⁻²⁴ in
		// the worst case (about 1e-6 in practice): the margin covers four
		// times that, at any D.
		margin := rerankMargin + max(refineSkipMargin, 4*float64(ix.Dim()+2)*0x1p-24)
		bound := float64(worst)*(1+margin) + 1e-30
		lb := ix.newLVQ8LowerBound(s, half)
		m := first
		for j := first; j < len(cands); j++ {
			if lb.of(cands[j]) <= bound {
				cands[m], cands[j] = cands[j], cands[m]
				m++
			}
		}
		if m > first {
			rest, err := ix.refineViews(ctx, s, cands[first:m], s.vs2, half, st)
			if err != nil {
				return nil, err
			}
			s.vs = append(s.vs, rest...)
			s.vs2 = rest
			clear(s.vs2)
		}
		cands = cands[:m]
	}
	st.Refined += int64(len(cands))
	s.vsFor = len(cands)
	return cands, nil
}

// noFirstListBound turns scoreList's bound on the first list off (tests
// compare both ways).
var noFirstListBound atomic.Bool

// noRefineSkip turns the skipping off (tests compare both ways).
var noRefineSkip atomic.Bool

// refineViews sets the distances of cands to their float32 exact distances
// and returns their vectors (views into the store) in vs.
func (ix *Index) refineViews(ctx context.Context, s *scratch, cands []cand, vs [][]float32, half bool, st *Stats) ([][]float32, error) {
	vs, err := ix.candVectors(ctx, cands, vs, s.pre, st)
	if err != nil {
		return nil, err
	}
	s.dists = slices.Grow(s.dists[:0], len(cands))[:len(cands)]
	vecmath.L2SqViews(s.qp, vs, s.dists) // one call: the rows' loads overlap
	for j, d := range s.dists {
		if half {
			d *= 0.5
		}
		cands[j].dist = d
	}
	return vs, nil
}

// refineSkipMargin: refine skips a candidate only when its lower bound
// exceeds the k-th exact distance by at least this relative margin (plus
// rerankMargin), far above the float32 kernel's rounding (about 1e-6).
const refineSkipMargin = 1e-3

// lvq8LowerBound bounds a candidate's exact distance from below, given its
// LVQ8 code distance. Each value of the reconstruction x̂ = o + s·c is within
// s/2 of the source value (rounding to the nearest code; docs/lvq.md),
// plus the float32 rounding of the scale, 255·s·2⁻²⁴, so ‖x − x̂‖ ≤
// 0.50002·s·√D, and by the triangle inequality ‖q − x‖ ≥ ‖q − x̂‖ − ‖x − x̂‖.
// The code distance itself is ‖q − x̂‖² up to the scoring's rounding, at most
// about 1e-6 of ‖q‖² + ‖x̂‖² (docs/lvq.md, measured); the bound allows
// max(1e-4, (D+2)·2⁻²¹) of it, two orders of magnitude more. In the
// blocked layout (Index.blocked) the code dot products are those of the
// query quantized to 16 bits (vecmath.U8Query, scale S), within (S/2)·Σc
// of q·c, so the code distance, o·2Σq + 2s·q·c apart from q and x̂'s
// norms, moves by at most s·S·Σc ≤ 255·D·S·s more: qerr·s.
type lvq8LowerBound struct {
	mul, norm2, slack, sqrtD float64
	qerr                     float64 // 255·D·S·(1 + 1e-6) when blocked, else 0
}

// newLVQ8LowerBound returns the bound for the query of s (s.norm2 = ‖q‖²,
// float64, and s.u8q, as prepareQuery sets them).
func (ix *Index) newLVQ8LowerBound(s *scratch, half bool) lvq8LowerBound {
	d := float64(ix.Dim())
	b := lvq8LowerBound{mul: 1, norm2: s.norm2, slack: max(1e-4, (d+2)*0x1p-21), sqrtD: math.Sqrt(d)}
	if ix.blocked {
		b.qerr = 255 * d * float64(s.u8q.S) * (1 + 1e-6)
	}
	if half {
		b.mul = 0.5
	}
	return b
}

// of returns a lower bound of c's exact distance (_distance units) from its
// code distance c.dist.
func (b lvq8LowerBound) of(c cand) float64 {
	i := c.i
	l := c.l
	approx := float64(c.dist) / b.mul // ‖q − x̂‖², up to rounding
	approx -= b.slack*(b.norm2+l.base[i]) + b.qerr*float64(l.batch.Scales[i])
	if approx <= 0 {
		return 0
	}
	gap := math.Sqrt(approx) - 0.50002*float64(l.batch.Scales[i])*b.sqrtD
	if gap <= 0 {
		return 0
	}
	return gap * gap * b.mul * (1 - 1e-9)
}

// refineCap lets the scan drop, while it scores, the candidates that
// refine would skip anyway (refine, lvq8LowerBound), so that refine r
// keeps fewer than r·k candidates in the top-k buffer when the codes rank
// well. With t_k the k-th best code distance so far (≥ the final one), the
// k best by code are all within t_k, and each one's exact distance is at
// most mul·U²·(1 + kernel error) with
//
//	U = √(t_k/mul + slack·(‖q‖² + maxBase) + qerr·maxScale) + 0.50002·maxScale·√D
//
// (the code distance's rounding, the blocked layout's query quantization
// and the reconstruction error, bounded over the probed lists), so refine's skip bound is at most that times
// (1 + its margin). A candidate whose code distance exceeds of(t_k) has a
// lower bound above it and would be skipped; since the cap only removes
// candidates farther by code than every kept one, the candidates refine
// re-scores — and so the results — are those of the uncapped scan
// (TestRefineSkipSameResults, TestRefineCapSameResults).
type refineCap struct {
	mul, norm2, slack, sqrtD float64
	maxBase, emax, margin    float64
	qerr                     float64 // lvq8LowerBound's qerr times maxScale
}

func (ix *Index) newRefineCap(s *scratch, half bool) refineCap {
	lb := ix.newLVQ8LowerBound(s, half)
	c := refineCap{mul: lb.mul, norm2: lb.norm2, slack: lb.slack, sqrtD: lb.sqrtD}
	var maxScale float32
	for _, l := range s.lists {
		if l != nil {
			c.maxBase = max(c.maxBase, l.maxBase)
			maxScale = max(maxScale, l.maxScale)
		}
	}
	c.emax = 0.50002 * float64(maxScale) * c.sqrtD
	c.qerr = lb.qerr * float64(maxScale)
	d := float64(ix.Dim())
	// refine's margin (and rerank's), and the float32 kernel's error on
	// the exact distances of the k best.
	c.margin = rerankMargin + max(refineSkipMargin, 4*(d+2)*0x1p-24) + 4*(d+2)*0x1p-24
	return c
}

// of returns the cap on code distances given t_k (see refineCap), rounded
// up to float32.
func (c refineCap) of(tk float32) float32 {
	u := math.Sqrt(float64(tk)/c.mul+c.slack*(c.norm2+c.maxBase)+c.qerr) + c.emax
	bound := c.mul*u*u*(1+c.margin) + 1e-30
	a := math.Sqrt(bound/(c.mul*(1-1e-9))) + c.emax
	theta := c.mul * (a*a + c.slack*(c.norm2+c.maxBase) + c.qerr) * (1 + 1e-6)
	f := float32(theta)
	if float64(f) < theta {
		f = math.Nextafter32(f, float32(math.Inf(1)))
	}
	return f
}

// noRefineCap turns the scan-time cap off (tests compare both ways).
var noRefineCap atomic.Bool

// rerankMargin is the relative margin within which float32 distances are
// re-decided in float64: far above the float32 kernels' rounding error.
const rerankMargin = 1e-4

// rerank computes exact float64 distances (rounded once to float32) for
// the candidates (in any order) that can be among the best k given their
// float32 distances, and returns those sorted by them. Candidates whose
// float32 distance is more than rerankMargin past the k-th cannot enter
// the top k.
func (ix *Index) rerank(ctx context.Context, s *scratch, cands []cand, k int, st *Stats) ([]cand, error) {
	// refine leaves the vectors of the candidates it scored in s.vs.
	reuse := s.vsFor == len(cands)
	s.vsFor = -1
	if len(cands) == 0 {
		return cands, nil
	}
	var vs [][]float32
	if reuse {
		vs = s.vs
	}
	kth := cands[0].dist
	if len(cands) <= k { // the k-th of all is the largest: no selection
		for _, c := range cands[1:] {
			kth = max(kth, c.dist)
		}
	} else {
		s.kd = slices.Grow(s.kd[:0], len(cands))
		for _, c := range cands {
			s.kd = append(s.kd, c.dist)
		}
		kth = kthFloat(s.kd, k)
	}
	limit := kth + float32(rerankMargin)*kth + 1e-30
	// Move the leaders (within the margin) to the front, with their
	// vectors.
	m := 0
	for j, c := range cands {
		if c.dist > limit {
			continue
		}
		cands[m], cands[j] = cands[j], cands[m]
		if vs != nil {
			vs[m], vs[j] = vs[j], vs[m]
		}
		m++
	}
	half := ix.snap.Metric == metadata.MetricCosine
	if !reuse {
		var err error
		if vs, err = ix.candVectors(ctx, cands[:m], s.vs, s.pre, st); err != nil {
			return nil, err
		}
		s.vs = vs
	}
	s.d64 = slices.Grow(s.d64[:0], m)[:m]
	vecmath.L2SqF64Views(s.q, vs[:m], s.d64) // one call: the rows' loads overlap
	for j, d := range s.d64 {
		cands[j].dist = exactDistance(d, half)
	}
	clear(s.vs)
	sortCands(cands[:m])
	return cands[:m], nil
}

// exactDistance returns the _distance of a squared L2 distance computed
// in float64 (rerank, the brute-force ground truths, DistancesTo): halved
// under cosine (half), then rounded once to float32.
func exactDistance(d float64, half bool) float32 {
	if half {
		d *= 0.5
	}
	return float32(d)
}

// readVectors reads the canonical source vectors of the given ordinals
// (when they do not fit the in-memory copy), counting them in
// st.SourceVectorRows when st is not nil.
func (ix *Index) readVectors(ctx context.Context, ords []int64, st *Stats) ([]float32, error) {
	if st != nil {
		st.SourceVectorRows += int64(len(ords))
	}
	locs := make([]source.RowLoc, len(ords))
	for i, o := range ords {
		locs[i] = ix.rowLoc(o)
	}
	out := make([]float32, len(ords)*ix.Dim())
	if err := ix.table.ReadVectors(ctx, ix.layout, locs, out); err != nil {
		return nil, err
	}
	return out, nil
}

// rowLoc maps a source row ordinal to its file and row.
func (ix *Index) rowLoc(ord int64) source.RowLoc {
	f, _ := slices.BinarySearch(ix.fileStart, ord+1)
	return source.RowLoc{File: int32(f - 1), Row: ord - ix.fileStart[f-1]}
}

// join attaches source columns (or just the key columns) to the hits.
func (ix *Index) join(ctx context.Context, top []cand, opts Options, st Stats) (*Result, error) {
	res := newResult(len(top), st)
	if opts.NoRows || opts.KeysOnly {
		res.Columns = ix.keyResultColumns()
		for i, c := range top {
			res.Hits[i] = Hit{Key: c.key(), Distance: c.dist}
			if opts.NoRows {
				continue
			}
			vals, err := source.DecodeKey(ix.layout.Keys, c.key())
			if err != nil {
				return nil, fmt.Errorf("%w: postings key: %v", ErrCorrupt, err)
			}
			row := make(map[string]any, len(vals))
			for j, kv := range vals {
				row[ix.layout.Keys[j].Name] = keyValueAny(kv)
			}
			res.Hits[i].Row = row
		}
		return res, nil
	}
	cols := opts.Columns
	if cols == nil {
		cols = ix.Columns()
	}
	res.Columns = append(slices.Clone(cols), metadata.ReservedField)
	if ix.keyColumns(cols) { // the postings' keys hold them: no source read
		// Shared rows come from the row cache, by list and row: a caller
		// that only reads rows decodes each key once.
		var ck string
		if opts.SharedRows {
			ck = colsKey(cols)
		}
		for i, c := range top {
			k := rowKey{list: c.l.cid + 1, ord: int64(c.i), cols: ck}
			var row map[string]any
			if opts.SharedRows {
				row = ix.rows.get(k, true)
			}
			if row == nil {
				var err error
				if row, err = ix.keyRow(c.key(), cols); err != nil {
					return nil, err
				}
				if opts.SharedRows {
					ix.rows.put(k, row)
				}
			}
			res.Hits[i] = Hit{Key: c.key(), Distance: c.dist, Row: row}
		}
		return res, nil
	}
	ck := colsKey(cols)
	todo := make([]int, len(top))
	for i := range todo {
		todo[i] = i
	}
	if ix.scalarColumns(cols) {
		var err error
		if todo, err = ix.joinFromCols(ctx, top, cols, res); err != nil {
			return nil, err
		}
	}
	var locs []source.RowLoc
	var miss []int
	for _, i := range todo {
		c := top[i]
		ords, err := ix.sourceOrds(ctx, c.l)
		if err != nil {
			return nil, err
		}
		res.Hits[i] = Hit{Key: c.key(), Distance: c.dist}
		if row := ix.rows.get(rowKey{ord: ords[c.i], cols: ck}, opts.SharedRows); row != nil {
			res.Hits[i].Row = row
			continue
		}
		locs = append(locs, ix.rowLoc(ords[c.i]))
		miss = append(miss, i)
	}
	if len(locs) > 0 {
		// A key map read from the key-rows table was made at build time:
		// read the key columns too and check each row still holds the
		// hit's key (a source rewritten in place, same sizes and times,
		// would otherwise join the wrong rows).
		readCols, extra := cols, []string(nil)
		if ix.manifest.KeyRows != nil {
			for _, k := range ix.snap.SourceKeyFields {
				if !slices.Contains(cols, k) {
					extra = append(extra, k)
				}
			}
			readCols = append(slices.Clone(cols), extra...)
		}
		rows, err := ix.table.ReadRows(ctx, locs, readCols)
		if err != nil {
			return nil, err
		}
		res.Stats.Rounds++
		for j, i := range miss {
			if ix.manifest.KeyRows != nil {
				if err := ix.checkJoinedKey(ctx, top[i].key(), rows, j); err != nil {
					return nil, err
				}
			}
			m, err := rows.Map(j)
			if err != nil {
				return nil, err
			}
			for _, k := range extra {
				delete(m, k)
			}
			res.Hits[i].Row = m
			c := top[i]
			ix.rows.put(rowKey{ord: c.l.ords[c.i], cols: ck}, m)
		}
	}
	return res, nil
}

// checkJoinedKey checks that joined row j of rows holds the hit's key
// enc, comparing the key columns' Parquet values as the source reads keys
// (source.KeyValueOf). On a mismatch the source changed in place after
// the build: a scan of the source names a duplicate key if it now has one
// (refresh), a key no row has any more wraps ErrCorrupt (verify), and a
// key that moved to another row wraps ErrStale (refresh), as the
// source-scanned key map would report them.
func (ix *Index) checkJoinedKey(ctx context.Context, enc []byte, rows *source.Rows, j int) error {
	vals, err := source.DecodeKey(ix.layout.Keys, enc)
	if err != nil {
		return fmt.Errorf("%w: postings key: %v", ErrCorrupt, err)
	}
	sch := rows.Schema(j)
	same := true
	for k, kt := range ix.layout.Keys {
		leaf, ok := sch.Lookup(kt.Name)
		if !ok {
			same = false
			break
		}
		var got source.KeyValue
		found := false
		for _, v := range rows.Rows[j] {
			if v.Column() == leaf.ColumnIndex {
				if got, err = source.KeyValueOf(kt, v); err != nil {
					same = false
				}
				found = true
				break
			}
		}
		want := vals[k]
		same = same && found && got.Int == want.Int && bytes.Equal(got.Bytes, want.Bytes)
	}
	if same {
		return nil
	}
	ki, err := source.BuildKeyIndex(context.WithoutCancel(ctx), ix.table, ix.layout)
	switch {
	case errors.Is(err, source.ErrDuplicateKey):
		return fmt.Errorf("%w; the source was changed in place or the index was built by a release that did not check keys: make the keys unique, then run `parqdb index refresh %s`",
			err, ix.name)
	case err != nil:
		return fmt.Errorf("index %q: key index: %w", ix.name, err)
	}
	if _, ok := ki.Lookup(enc); !ok {
		return fmt.Errorf("index %q: %w: a hit holds key %s, which no row of source %s has: the source was changed in place (its files kept their sizes and versions) or the index is damaged; run `parqdb index verify %s`",
			ix.name, ErrCorrupt, ix.formatKey(enc), ix.snap.SourceTable.Properties["location"], ix.name)
	}
	return fmt.Errorf("index %q: %w: the source row joined for key %s holds another key: the source %s was changed in place (its files kept their sizes and versions); run `parqdb index refresh %s`",
		ix.name, ErrStale, ix.formatKey(enc), ix.snap.SourceTable.Properties["location"], ix.name)
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

// forEachQuery runs fn for the queries 0…n-1 on up to workers goroutines
// (0: one per core), each worker taking the next queryRun queries at a
// time. The first error stops the queries not yet started and is returned
// as a *BatchError ("query i: …"); fn gets a context that is cancelled then.
func forEachQuery(ctx context.Context, n, workers int, fn func(ctx context.Context, i int) error) error {
	return forEachRun(ctx, n, workers, queryRun, func(ctx context.Context, lo, hi int) error {
		for i := lo; i < hi; i++ {
			if err := ctx.Err(); err != nil {
				return err
			}
			if err := fn(ctx, i); err != nil {
				return &BatchError{Query: i, Err: err}
			}
		}
		return nil
	})
}

// queryRun is how many consecutive queries a forEachQuery worker takes at
// a time.
const queryRun = 8

// forEachRun calls fn(lo, hi) for the consecutive runs [lo, hi) of at most
// run of 0…n-1 on up to workers goroutines (0: one per core), each worker
// taking the next run when it is done with one (not a goroutine per run:
// at a few µs a query, starting and scheduling them would cost as much as
// the searches). The calling goroutine is one of the workers: it starts
// at once, and a caller locked to its thread (a cgo call from C: Python,
// libparqdb) does not hand its P to another thread to wait. With one
// worker, or one run, only the caller works. The first error stops the
// runs not yet started and is returned; fn gets a context that is
// cancelled then.
func forEachRun(ctx context.Context, n, workers, run int, fn func(ctx context.Context, lo, hi int) error) error {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	runs := (n + run - 1) / run
	if workers == 1 || runs <= 1 {
		for lo := 0; lo < n; lo += run {
			if err := ctx.Err(); err != nil {
				return err
			}
			if err := fn(ctx, lo, min(lo+run, n)); err != nil {
				return err
			}
		}
		return nil
	}
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		next  atomic.Int64
		once  sync.Once
		first error
		wg    sync.WaitGroup
	)
	work := func() {
		for {
			lo := int(next.Add(int64(run))) - run
			if lo >= n {
				return
			}
			err := wctx.Err()
			if err == nil {
				err = fn(wctx, lo, min(lo+run, n))
			}
			if err != nil {
				once.Do(func() { first = err; cancel() })
				return
			}
		}
	}
	for range min(workers, runs) - 1 {
		wg.Go(work)
	}
	work()
	wg.Wait()
	return first
}
