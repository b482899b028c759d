package query

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/parqdb/parqdb/internal/membudget"
	"github.com/parqdb/parqdb/internal/vecmath"
	"github.com/parqdb/parqdb/metadata"
	"github.com/parqdb/parqdb/postings"
)

// list is the decoded postings of one CID in scan layout. It is immutable
// once cached, except for ords, which is resolved once on first need.
type list struct {
	cid   int32
	batch postings.Batch // keys; LVQ4 codes; LVQ8 codes moved to codes

	// LVQ8 scan layout: row i's code is codes[i*stride:(i+1)*stride], zero
	// padded past D so that the SIMD kernels need no scalar tail, and
	// base[i] = D·o² + 2·o·s·Σc + s²·Σc², the part of ‖q − x̂‖² that does
	// not depend on q (lvq.Query.L2Sq8 expands the distance the same way).
	codes []byte
	// blocked: codes are in vecmath.BlockU8's layout instead (blocks of
	// 16 rows, groups of 4 dimensions, each row's 4 codes of a group
	// contiguous; D rounded up to 4, no stride padding), which
	// vecmath.DotU8Blocked scores with the query quantized to 16 bits
	// (scratch.u8q) in exact integer arithmetic (VNNI): small-D indexes
	// on CPUs with that kernel (Index.blocked).
	blocked bool
	base    []float64
	// maxBase and maxScale bound base[i] and batch.Scales[i] over the rows
	// (refineCap's bound; a packed list keeps its list's, which bound its
	// rows too).
	maxBase  float64
	maxScale float32

	ordsOnce sync.Once
	ords     []int64 // source row ordinal of each row
	ordsErr  error

	// rows is set on a packed list (filter.go, packList: the rows of list
	// cid that match a predicate, copied contiguously): rows[i] is the row
	// of list cid that row i was copied from. Row i's vector in the vector
	// store, whose blocks follow the postings order, is row rows[i] of
	// cid's block. Nil for a list of postings.
	rows []int32
}

// storeRow returns the row of list l.cid's vector store block that holds
// row i's vector.
func (l *list) storeRow(i int32) int32 {
	if l.rows != nil {
		return l.rows[i]
	}
	return i
}

func (l *list) len() int { return l.batch.Len() }

func (l *list) bytes() int64 {
	b := &l.batch
	return int64(len(b.Codes)+len(l.codes)+len(b.Keys)+8*(2*len(b.KeyEnds)+len(l.base))) +
		int64(4*(len(b.CIDs)+len(b.Offsets)+len(b.Scales))) + 256
}

// stride returns the LVQ8 scan row length for dimension d: d rounded up to
// a multiple of 16, the AVX-512 block (AVX2's 8 divides it).
func stride(d int) int { return (d + 15) &^ 15 }

// blockRows rounds n up to whole blocks of vecmath.U8BlockRows rows.
func blockRows(n int) int {
	return (n + vecmath.U8BlockRows - 1) / vecmath.U8BlockRows * vecmath.U8BlockRows
}

// newList turns a decoded batch into scan layout: LVQ8 codes at stride,
// or in the blocked layout when blocked.
func newList(cid int32, b postings.Batch, enc string, dim int, blocked bool) *list {
	l := &list{cid: cid, batch: b}
	if enc != metadata.EncodingLVQ8 {
		return l
	}
	n, w := b.Len(), stride(dim)
	l.base = make([]float64, n)
	for i := 0; i < n; i++ {
		sc, sc2 := vecmath.SumU8(b.Codes[i*dim : (i+1)*dim])
		o, s := float64(b.Offsets[i]), float64(b.Scales[i])
		l.base[i] = float64(dim)*o*o + 2*o*s*float64(sc) + s*s*float64(sc2)
		l.maxBase = max(l.maxBase, l.base[i])
		l.maxScale = max(l.maxScale, b.Scales[i])
	}
	switch {
	case blocked:
		l.codes = make([]byte, vecmath.BlockU8Len(n, dim))
		vecmath.BlockU8(l.codes, b.Codes[:n*dim], dim)
		l.blocked = true
	case w == dim:
		l.codes = b.Codes
	default:
		l.codes = make([]byte, n*w)
		for i := 0; i < n; i++ {
			copy(l.codes[i*w:], b.Codes[i*dim:(i+1)*dim])
		}
	}
	l.batch.Codes = nil
	return l
}

// dots sets s.dists to the code dot products q·c of l's n rows (LVQ8):
// s.qp over the rows at stride, or s.u8q (s.q quantized, within
// (S/2)·Σc of q·c: vecmath.U8Query) over the blocked layout.
func (l *list) dots(s *scratch) {
	n := l.len()
	if l.blocked {
		m := blockRows(n)
		s.dists = slices.Grow(s.dists[:0], m)[:m]
		vecmath.DotU8Blocked(&s.u8q, l.codes, s.dists)
		s.dists = s.dists[:n]
		return
	}
	s.dists = slices.Grow(s.dists[:0], n)[:n]
	vecmath.DotU8Batch(s.qp, l.codes, len(s.qp), s.dists)
}

// prefetch asks the CPU to start loading what scoring l reads first: the
// head of its blocked codes and of its rows' terms (a hint; row layout:
// nothing). Index.prefetch says when it pays.
func (l *list) prefetch(dim int) {
	if !l.blocked {
		return
	}
	vecmath.PrefetchU8Blocked(l.codes, dim)
	vecmath.PrefetchSlice(l.batch.Offsets, 64)
	vecmath.PrefetchSlice(l.batch.Scales, 64)
	vecmath.PrefetchSlice(l.base, 64)
}

// code appends row i's dim codes to dst.
func (l *list) code(dst []byte, i, dim int) []byte {
	if !l.blocked {
		w := len(l.codes) / max(l.len(), 1)
		return append(dst, l.codes[i*w:i*w+dim]...)
	}
	return vecmath.U8BlockedCode(dst, l.codes, i, dim)
}

// sourceOrds returns the source row ordinal of every row of l, looking
// each key up once in the index's key map.
func (ix *Index) sourceOrds(ctx context.Context, l *list) ([]int64, error) {
	l.ordsOnce.Do(func() {
		ki, err := ix.keys(ctx)
		if err != nil {
			l.ordsErr = fmt.Errorf("index %q: key index: %w", ix.name, err)
			return
		}
		ords := make([]int64, l.len())
		for i := range ords {
			loc, ok := ki.Lookup(l.batch.Key(i))
			if !ok {
				l.ordsErr = fmt.Errorf("index %q: %w: list %d holds key %s, which no row of source %s has: the source was changed in place (its files kept their sizes and versions) or the index is damaged; run `parqdb index verify %s`",
					ix.name, ErrCorrupt, l.cid, ix.formatKey(l.batch.Key(i)), ix.snap.SourceTable.Properties["location"], ix.name)
				return
			}
			ords[i] = ix.fileStart[loc.File] + loc.Row
		}
		l.ords = ords
	})
	return l.ords, l.ordsErr
}

// cache holds decoded lists by CID up to a byte budget (per index),
// charged to the process budget's account "postings": a membudget slot
// cache, whose reads take no lock (one atomic load per probed list). It is
// safe for concurrent use.
type cache struct {
	budget int64                          // bytes; < 0 disables the cache
	c      *membudget.Cache[int32, *list] // nil when disabled
}

func newCache(budget int64, nlist int, b *membudget.Budget) *cache {
	c := &cache{budget: budget}
	if budget >= 0 {
		c.c = membudget.NewSlotCache[*list](membudget.CacheConfig{Name: "postings", Budget: b, MaxBytes: budget}, nlist)
	}
	return c
}

func (c *cache) get(cid int32) *list {
	l, _ := c.c.Get(cid)
	return l
}

// lookup is get without counting; a query counts its lookups once (count).
func (c *cache) lookup(cid int32) *list {
	l, _ := c.c.Lookup(cid)
	return l
}

// count adds a query's hits and misses to the counters.
func (c *cache) count(hits, misses int64) { c.c.Count(hits, misses) }

// put caches l and returns the cached list for its CID (an earlier one if
// another query cached it first). A list the budget has no room for is
// returned uncached.
func (c *cache) put(l *list) *list {
	got, _ := c.c.Put(l.cid, l, l.bytes())
	return got
}

func (c *cache) close() { c.c.Close() }
