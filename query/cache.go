package query

import (
	lru "container/list"
	"context"
	"fmt"
	"sync"

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
	base  []float64

	ordsOnce sync.Once
	ords     []int64 // source row ordinal of each row
	ordsErr  error
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

// newList turns a decoded batch into scan layout.
func newList(cid int32, b postings.Batch, enc string, dim int) *list {
	l := &list{cid: cid, batch: b}
	if enc != metadata.EncodingLVQ8 {
		return l
	}
	n, w := b.Len(), stride(dim)
	if w == dim {
		l.codes = b.Codes
	} else {
		l.codes = make([]byte, n*w)
		for i := 0; i < n; i++ {
			copy(l.codes[i*w:], b.Codes[i*dim:(i+1)*dim])
		}
	}
	l.batch.Codes = nil
	l.base = make([]float64, n)
	for i := 0; i < n; i++ {
		sc, sc2 := vecmath.SumU8(l.codes[i*w : i*w+dim])
		o, s := float64(b.Offsets[i]), float64(b.Scales[i])
		l.base[i] = float64(dim)*o*o + 2*o*s*float64(sc) + s*s*float64(sc2)
	}
	return l
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
				l.ordsErr = fmt.Errorf("%w: postings key %x of cid %d has no source row", ErrCorrupt, l.batch.Key(i), l.cid)
				return
			}
			ords[i] = ix.fileStart[loc.File] + loc.Row
		}
		l.ords = ords
	})
	return l.ords, l.ordsErr
}

// cache holds decoded lists up to a byte budget, evicting the least
// recently used. It is safe for concurrent use.
type cache struct {
	mu struct {
		sync.Mutex
		byCID map[int32]*lru.Element
		lru   *lru.List // front = most recent; values are *entry
		size  int64
	}
	budget int64
}

type entry struct {
	l    *list
	size int64
}

func newCache(budget int64) *cache {
	c := &cache{budget: budget}
	c.mu.byCID = map[int32]*lru.Element{}
	c.mu.lru = lru.New()
	return c
}

func (c *cache) get(cid int32) *list {
	if c.budget < 0 {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.mu.byCID[cid]
	if !ok {
		return nil
	}
	c.mu.lru.MoveToFront(e)
	return e.Value.(*entry).l
}

// put caches l and returns the cached list for its CID (an earlier one if
// another query cached it first).
func (c *cache) put(l *list) *list {
	if c.budget < 0 {
		return l
	}
	size := l.bytes()
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.mu.byCID[l.cid]; ok {
		return e.Value.(*entry).l
	}
	c.mu.byCID[l.cid] = c.mu.lru.PushFront(&entry{l: l, size: size})
	c.mu.size += size
	for c.mu.size > c.budget && c.mu.lru.Len() > 1 {
		back := c.mu.lru.Back()
		e := back.Value.(*entry)
		c.mu.lru.Remove(back)
		delete(c.mu.byCID, e.l.cid)
		c.mu.size -= e.size
	}
	return l
}
