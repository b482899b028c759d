package query

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/parqdb/parqdb/internal/hugepage"
	"github.com/parqdb/parqdb/internal/membudget"
	"github.com/parqdb/parqdb/internal/source"
)

// vecStore keeps the exact (canonical: converted to float32, normalised
// under cosine) source vectors of an index's lists, laid out per list: row
// i of list cid is blocks[cid][i*w:(i+1)*w], in the postings order of the
// list, its first dim values the vector and the rest zero (w = stride(dim),
// a multiple of 16, so that the SIMD kernels need no scalar tail, as for
// LVQ8 codes), so that the source encoding scans a list's vectors
// contiguously with the float32 SIMD kernels, exactly as IVF-Flat does.
// Queries are zero padded alike (scratch.qp).
//
// When every vector fits the budget, the first use fills the whole store
// in one pass over the source (fill) and keeps it as one entry of the
// store's cache (its blocks share one allocation, so they leave together);
// otherwise a list's block is read on demand (the rows of that list only)
// and kept as an entry of its own. The cache is a membudget slot cache
// (CLOCK, lock-free reads), charged to the process budget's account
// "vectors". It is safe for concurrent use; blocks are immutable once
// stored.
type vecStore struct {
	dim, w int
	budget int64 // bytes; < 0 disables the store
	// c holds each list's block under its CID and the whole fill under
	// fillKey (nlist); nil when the store is disabled.
	c       *membudget.Cache[int32, *storeBlocks]
	fillKey int32

	// shadow: each stored block also keeps its LVQ8 shadow (srcCodes,
	// in the blocked layout when blocked), charged with it: set for the
	// source encoding (setShadow) before the first put.
	shadow, blocked bool

	fillOnce sync.Once
	fillErr  error
	// full is set once the whole store was filled (and kept).
	full atomic.Bool
}

// storeBlocks is one entry of the store: one list's block (v, and its
// shadow c), or the whole fill (all, where, and the shadows by CID).
type storeBlocks struct {
	v []float32
	c *srcCodes // v's shadow, when the store keeps them
	// codes is the shadow of each of all's blocks, when the store keeps
	// them.
	codes []*srcCodes
	// all is every list's block, by CID, in one allocation (fillStore).
	all [][]float32
	// where maps a source ordinal to its list and row: it lets a vector
	// be found by ordinal (filters' exact plan, SearchNearKey).
	where []place
}

// place is a source row's list (cid) and row within it.
type place struct{ cid, pos int32 }

// listVecsOverhead is charged per stored block on top of its vectors.
const listVecsOverhead = 64

func newVecStore(budget int64, nlist, dim int, b *membudget.Budget) *vecStore {
	s := &vecStore{dim: dim, w: stride(dim), budget: budget, fillKey: int32(nlist)}
	if budget >= 0 {
		s.c = membudget.NewSlotCache[*storeBlocks](membudget.CacheConfig{Name: "vectors", Budget: b, MaxBytes: budget}, nlist+1)
	}
	return s
}

// setShadow makes the store keep an LVQ8 shadow of every block it stores
// (source encoding), in the blocked layout when blocked.
func (s *vecStore) setShadow(blocked bool) { s.shadow, s.blocked = true, blocked }

// fits reports whether rows vectors (in nlist blocks) fit the budget, with
// the ordinal map of a full fill (and the shadows), and whether the
// process budget could hold them.
func (s *vecStore) fits(rows int64, nlist int, limit int64) bool {
	perRow := int64(s.w)*4 + 8
	if s.shadow {
		perRow += shadowRowBytes(s.dim)
	}
	need := rows*perRow + int64(nlist)*listVecsOverhead
	return s.budget >= 0 && need <= s.budget && need <= limit
}

// shadowRowBytes is about what a shadow keeps per row of dimension dim:
// the code (rounded up to the blocked layout's groups of 4 or the stride),
// offset, scale, base, error and list id.
func shadowRowBytes(dim int) int64 { return int64(stride(dim)) + 4 + 4 + 8 + 4 + 4 }

// codes returns the shadow of cid's stored block if v is that block, else
// nil (v was not stored, or the store keeps no shadows).
func (s *vecStore) codes(cid int32, v []float32) *srcCodes {
	if !s.shadow || len(v) == 0 || cid < 0 || cid >= s.fillKey {
		return nil
	}
	if f := s.filled(); f != nil && len(f.all[cid]) > 0 && &f.all[cid][0] == &v[0] {
		return f.codes[cid]
	}
	if b, ok := s.c.Lookup(cid); ok && len(b.v) > 0 && &b.v[0] == &v[0] {
		return b.c
	}
	return nil
}

// get returns the stored block of cid, or nil, counting a hit or a miss.
func (s *vecStore) get(cid int32) []float32 {
	v := s.lookup(cid)
	if v == nil {
		s.count(0, 1)
	} else {
		s.count(1, 0)
	}
	return v
}

// filled returns the whole fill while the store holds it, or nil.
func (s *vecStore) filled() *storeBlocks {
	if !s.full.Load() {
		return nil
	}
	f, _ := s.c.Lookup(s.fillKey)
	return f
}

// lookup is get without counting: a query counts its lookups once (count),
// not with shared atomic counters per list.
func (s *vecStore) lookup(cid int32) []float32 {
	if cid < 0 || cid >= s.fillKey {
		return nil
	}
	if f := s.filled(); f != nil && f.all[cid] != nil {
		return f.all[cid]
	}
	b, ok := s.c.Lookup(cid)
	if !ok {
		return nil
	}
	return b.v
}

// count adds a query's lookups to the counters.
func (s *vecStore) count(hits, misses int64) { s.c.Count(hits, misses) }

// put stores v as the block of cid (unless another caller stored one
// first, which is returned instead). A block that the budget (or the
// process budget) has no room for is returned without being stored.
func (s *vecStore) put(cid int32, v []float32) []float32 {
	if cid < 0 || cid >= s.fillKey {
		return v
	}
	b := &storeBlocks{v: v}
	size := int64(len(v))*4 + listVecsOverhead
	if s.shadow && len(v) > 0 {
		b.c = deriveCodes(cid, v, len(v)/s.w, s.dim, s.w, s.blocked)
		size += b.c.bytes()
	}
	b, _ = s.c.Put(cid, b, size)
	return b.v
}

// vecAt returns the vector of source ordinal o from the whole fill f, or
// nil when its list holds no block.
func (s *vecStore) vecAt(f *storeBlocks, o int64) []float32 {
	p := f.where[o]
	if p.cid < 0 || f.all[p.cid] == nil {
		return nil
	}
	w := s.w
	return f.all[p.cid][int(p.pos)*w : int(p.pos+1)*w : int(p.pos+1)*w]
}

// bytes returns the bytes the stored blocks are charged.
func (s *vecStore) bytes() int64 { return s.c.Bytes() }

func (s *vecStore) close() { s.c.Close() }

// VectorStoreStats describes an index's store of exact source vectors.
type VectorStoreStats struct {
	Hits, Misses int64 // list lookups served from the store, and not
	Bytes        int64 // bytes held
	Budget       int64 // bytes allowed (< 0: disabled)
	Full         bool  // every list's vectors were loaded in one pass
}

// VectorStoreStats returns the counters of the index's exact-vector store
// (used by the source encoding and refine).
func (ix *Index) VectorStoreStats() VectorStoreStats {
	s := ix.vstore
	st := s.c.Stats()
	return VectorStoreStats{Hits: st.Hits, Misses: st.Misses, Bytes: st.Bytes, Budget: s.budget, Full: s.full.Load()}
}

// warmStore fills the whole store once, if every vector fits its budget;
// otherwise it does nothing and lists are read on demand. The fill runs to
// its end whatever the caller's context: the store outlives the caller.
func (ix *Index) warmStore(ctx context.Context) error {
	s := ix.vstore
	s.fillOnce.Do(func() {
		if !s.fits(ix.table.NumRows(), ix.NList(), ix.budget.Limit()) {
			return
		}
		s.fillErr = ix.fillStore(context.WithoutCancel(ctx))
	})
	return s.fillErr
}

// fillStore reads every list's keys (its postings), maps them to source
// ordinals, then scans the source once and scatters each vector into its
// list's block: one sequential pass, no per-row reads, and peak memory is
// the store itself.
func (ix *Index) fillStore(ctx context.Context) error {
	s, dim, nlist := ix.vstore, ix.Dim(), ix.NList()
	w := s.w
	n := ix.table.NumRows()
	where := make([]place, n)
	for i := range where {
		where[i].cid = -1
	}
	blocks := make([][]float32, nlist)
	lens := make([]int, nlist)
	sc := scratchPool.Get().(*scratch)
	defer scratchPool.Put(sc)
	const chunk = 256
	for start := 0; start < nlist; start += chunk {
		sc.cids = sc.cids[:0]
		for cid := start; cid < min(start+chunk, nlist); cid++ {
			sc.cids = append(sc.cids, int32(cid))
		}
		var st Stats
		if err := ix.readLists(ctx, sc, &st); err != nil {
			return err
		}
		for _, l := range sc.lists {
			if l == nil || l.len() == 0 {
				continue
			}
			ords, err := ix.sourceOrds(ctx, l)
			if err != nil {
				return err
			}
			lens[l.cid] = len(ords)
			for pos, o := range ords {
				if o < 0 || o >= n {
					return fmt.Errorf("index %q: %w: list %d row %d maps to source row %d of %d", ix.name, ErrCorrupt, l.cid, pos, o, n)
				}
				where[o] = place{l.cid, int32(pos)}
			}
		}
		clear(sc.lists)
	}
	// One allocation for every block, in list order, advised for huge
	// pages: a query streams through many lists' blocks, and with 4 KiB
	// pages it took a TLB miss every 4 KiB (21 % of a text-set query at
	// nprobe 448; docs/benchmarks.md, "Huge pages").
	total := 0
	for _, m := range lens {
		total += m * w
	}
	arena := hugepage.Float32s(total)
	for cid, m := range lens {
		if m > 0 {
			blocks[cid], arena = arena[:m*w:m*w], arena[m*w:]
		}
	}
	err := ix.table.Scan(ctx, ix.layout, 0, func(b *source.Batch) error {
		first := ix.fileStart[b.File] + b.FirstRow
		for i := 0; i < b.N; i++ {
			p := where[first+int64(i)]
			if p.cid < 0 {
				continue
			}
			copy(blocks[p.cid][int(p.pos)*w:int(p.pos)*w+dim], b.Vectors[i*dim:(i+1)*dim])
		}
		return nil
	})
	if err != nil {
		return err
	}
	// The fill is one entry (its blocks share one allocation): the
	// vectors, a block's overhead per list and the ordinal map.
	size := int64(total)*4 + n*8
	for _, v := range blocks {
		if v != nil {
			size += listVecsOverhead
		}
	}
	var codes []*srcCodes
	if s.shadow {
		codes = make([]*srcCodes, len(blocks))
		for cid, v := range blocks {
			if len(v) > 0 {
				codes[cid] = deriveCodes(int32(cid), v, len(v)/w, dim, w, s.blocked)
				size += codes[cid].bytes()
			}
		}
	}
	if _, ok := s.c.Put(s.fillKey, &storeBlocks{all: blocks, where: where, codes: codes}, size); ok {
		s.full.Store(true)
	}
	return nil
}

// listVectors returns the exact vectors of list l (row i at
// [i*w:(i+1)*w], zero padded) from the store, reading only that list's rows from
// the source on a miss (counted here; a hit increments *hits, which the
// caller adds to the store's counters once). Lists that are not an index list (cid < 0, the
// filters' exact plan) are gathered by ordinal.
func (ix *Index) listVectors(ctx context.Context, l *list, hits *int64, st *Stats) ([]float32, error) {
	if err := ix.warmStore(ctx); err != nil {
		return nil, err
	}
	if v := ix.vstore.lookup(l.cid); v != nil {
		*hits++ // counted by the caller, once per query
		return v, nil
	}
	ix.vstore.count(0, 1)
	if l.cid >= 0 {
		vf, err := ix.vectorsFile(ctx)
		if err != nil {
			return nil, err
		}
		if vf != nil {
			v, err := ix.fileListVectors(vf, l, st)
			if err != nil {
				return nil, err
			}
			return ix.vstore.put(l.cid, v), nil
		}
	}
	ords, err := ix.sourceOrds(ctx, l)
	if err != nil {
		return nil, err
	}
	v := make([]float32, len(ords)*ix.vstore.w)
	if err := ix.gatherVectors(ctx, ords, v, st); err != nil {
		return nil, err
	}
	return ix.vstore.put(l.cid, v), nil
}

// prefetched is what prefetchLists read for one search: blocks[i], when
// not nil, holds the exact vectors of lists[i] as listVectors returns them.
type prefetched struct {
	lists  []*list
	blocks [][]float32
}

// of returns the block read for list l, or nil.
func (p prefetched) of(l *list) []float32 {
	if p.blocks == nil {
		return nil
	}
	for i, x := range p.lists {
		if x == l {
			return p.blocks[i]
		}
	}
	return nil
}

// prefetchBytes bounds the vectors one batched source read of
// prefetchLists gathers (a query's probed lists may be many and large).
const prefetchBytes = 64 << 20

// prefetchLists reads the exact vectors of the index lists among lists
// (nil entries skipped) that the store lacks, when they come from source
// pages (no vectors file): in batched ReadVectors calls of up to
// prefetchBytes of vectors, so that a cold query decodes each source page
// it needs about once, not once per list (without an offset index a call
// decodes its row groups' vector chunks from their start up to the last
// row it wants). It returns the blocks as listVectors does, by position in
// lists (nil where the store held the list), counting each as a store
// miss, or nil when fewer than two lists miss.
func (ix *Index) prefetchLists(ctx context.Context, lists []*list, st *Stats) ([][]float32, error) {
	if err := ix.warmStore(ctx); err != nil {
		return nil, err
	}
	if ix.vstore.filled() != nil {
		return nil, nil // filled whole: it holds every list (one lookup, not one a list)
	}
	var miss []int
	for i, l := range lists {
		if l != nil && l.cid >= 0 && l.rows == nil && l.len() > 0 && ix.vstore.lookup(l.cid) == nil {
			miss = append(miss, i)
		}
	}
	if len(miss) < 2 {
		return nil, nil
	}
	if vf, err := ix.vectorsFile(ctx); err != nil || vf != nil {
		return nil, err // the vectors file serves a list by its postings positions
	}
	dim, w := ix.Dim(), ix.vstore.w
	out := make([][]float32, len(lists))
	var ords []int64
	for len(miss) > 0 {
		ords = ords[:0]
		n := 0 // the lists of this read: miss[:n]
		for ; n < len(miss); n++ {
			l := lists[miss[n]]
			if n > 0 && (len(ords)+l.len())*dim*4 > prefetchBytes {
				break
			}
			o, err := ix.sourceOrds(ctx, l)
			if err != nil {
				return nil, err
			}
			ords = append(ords, o...)
		}
		v, err := ix.readVectors(ctx, ords, st)
		if err != nil {
			return nil, err
		}
		for _, i := range miss[:n] {
			l := lists[i]
			b := make([]float32, l.len()*w)
			for r := range l.len() {
				copy(b[r*w:r*w+dim], v[r*dim:(r+1)*dim])
			}
			v = v[l.len()*dim:]
			ix.vstore.count(0, 1)
			out[i] = ix.vstore.put(l.cid, b)
		}
		miss = miss[n:]
	}
	return out, nil
}

// gatherVectors writes the vectors of ords into dst as zero-padded rows
// of w values: from the store when it was filled whole and still holds
// their lists, else read from the source in one batched call for the rest.
func (ix *Index) gatherVectors(ctx context.Context, ords []int64, dst []float32, st *Stats) error {
	dim := ix.Dim()
	s := ix.vstore
	w := s.w
	var miss []int64
	var missAt []int
	f := s.filled()
	for j, o := range ords {
		if f != nil {
			if v := s.vecAt(f, o); v != nil {
				copy(dst[j*w:(j+1)*w], v)
				continue
			}
		}
		miss = append(miss, o)
		missAt = append(missAt, j)
	}
	if len(miss) == 0 {
		return nil
	}
	v, err := ix.readVectors(ctx, miss, st)
	if err != nil {
		return err
	}
	for i, j := range missAt {
		copy(dst[j*w:j*w+dim], v[i*dim:(i+1)*dim])
		clear(dst[j*w+dim : (j+1)*w])
	}
	return nil
}

// ordViews sets vs[j] to the exact vector of source ordinal ords[j]: a
// view into the store when it was filled whole, else rows read from the
// source in one batched call.
func (ix *Index) ordViews(ctx context.Context, ords []int64, vs [][]float32, st *Stats) ([][]float32, error) {
	if err := ix.warmStore(ctx); err != nil {
		return nil, err
	}
	dim := ix.Dim()
	s := ix.vstore
	w := s.w
	vs = slices.Grow(vs[:0], len(ords))[:len(ords)]
	var miss []int64
	var missAt []int
	f := s.filled()
	for j, o := range ords {
		if f != nil {
			if v := s.vecAt(f, o); v != nil {
				vs[j] = v
				continue
			}
		}
		miss = append(miss, o)
		missAt = append(missAt, j)
	}
	if len(miss) > 0 {
		read, err := ix.readVectors(ctx, miss, st)
		if err != nil {
			return nil, err
		}
		pad := make([]float32, len(miss)*w)
		for i, j := range missAt {
			copy(pad[i*w:i*w+dim], read[i*dim:(i+1)*dim])
			vs[j] = pad[i*w : (i+1)*w : (i+1)*w]
		}
	}
	return vs, nil
}

// candVectors sets vs[j] to the exact vector of cands[j]: a view into the
// store for candidates whose list is stored, and, for the others, rows
// read in one batched call (never a whole list) from the snapshot's
// vectors file when it has one (by postings position), else from the
// source.
func (ix *Index) candVectors(ctx context.Context, cands []cand, vs [][]float32, pre prefetched, st *Stats) ([][]float32, error) {
	if err := ix.warmStore(ctx); err != nil {
		return nil, err
	}
	w := ix.vstore.w
	vs = slices.Grow(vs[:0], len(cands))[:len(cands)]
	var miss []int64
	var missAt []int
	var last *list
	var lastV []float32
	var hits, misses int64
	var vf *vecFileState
	var fileCands []cand
	var fileAt []int
	for j, c := range cands {
		if c.l != last {
			last, lastV = c.l, ix.vstore.lookup(c.l.cid)
			switch {
			case lastV != nil:
				hits++
			case pre.of(c.l) != nil: // read by this search, not stored
				lastV = pre.of(c.l)
			default:
				misses++
				if vf == nil && c.l.cid >= 0 {
					var err error
					if vf, err = ix.vectorsFile(ctx); err != nil {
						return nil, err
					}
				}
			}
		}
		if lastV != nil {
			r := int(c.l.storeRow(c.i))
			vs[j] = lastV[r*w : (r+1)*w : (r+1)*w]
			continue
		}
		if vf != nil && c.l.cid >= 0 {
			fileCands = append(fileCands, c)
			fileAt = append(fileAt, j)
			continue
		}
		ords, err := ix.sourceOrds(ctx, c.l)
		if err != nil {
			return nil, err
		}
		miss = append(miss, ords[c.i])
		missAt = append(missAt, j)
	}
	ix.vstore.count(hits, misses)
	if len(fileCands) > 0 {
		if err := ix.fileCandVectors(ctx, vf, fileCands, fileAt, vs, st); err != nil {
			return nil, err
		}
	}
	if len(miss) > 0 {
		read := make([]float32, len(miss)*w)
		if err := ix.gatherVectors(ctx, miss, read, st); err != nil {
			return nil, err
		}
		for i, j := range missAt {
			vs[j] = read[i*w : (i+1)*w : (i+1)*w]
		}
	}
	return vs, nil
}
