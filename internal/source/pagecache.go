package source

import (
	"container/list"
	"sync"

	"github.com/parquet-go/parquet-go"

	"github.com/parqdb/parqdb/internal/membudget"
)

// SuggestedPageCacheBytes is the default bound of the decoded-page cache:
// 64 MiB. SetPageCacheBytes changes it (0 disables the cache).
const SuggestedPageCacheBytes = 64 << 20

// pageEntryOverhead is charged per cached page on top of its data, so that
// many tiny pages cannot hold much more memory than the bound says.
const pageEntryOverhead = 256

// decodedPages is the process-wide cache of decompressed, decoded data
// pages that ReadRows reads rows from. It is shared by every Table so that
// one bound holds however many tables are open.
var decodedPages = newPageCache(SuggestedPageCacheBytes, membudget.Default)

// SetPageCacheBytes sets the bound, in bytes, of the process-wide cache of
// decoded source pages that ReadRows keeps so that repeated queries
// touching the same pages do not decompress them again, evicting least
// recently used pages down to the new bound. 0 (or less) disables the
// cache and drops its pages. It returns the previous
// bound. It is safe for concurrent use; see SuggestedPageCacheBytes.
func SetPageCacheBytes(n int64) (previous int64) { return decodedPages.setMax(n) }

// pageKey names one data page of one column chunk of one open file. The
// *tableFile pins the file's identity: a reopened file is a new key, so a
// rewritten object is never served from pages of its old version.
type pageKey struct {
	f        *tableFile
	rg, leaf int
	page     int // index in the column chunk's offset index
}

type pageEntry struct {
	key  pageKey
	val  any // parquet.Page, or *vecPage for a vector page
	size int64
}

// vecPage is one data page of a vector column decoded to canonical
// vectors (converted, normalised under cosine), row i at v[i*dim:]. Rows
// that violate the source contract are kept as faults and reported only
// when asked for. Immutable once cached.
type vecPage struct {
	v      []float32
	faults map[int]rowFault
}

type rowFault struct {
	rule   error
	detail string
}

// vecLeaf is the pageKey.leaf of a vector column's decoded vectors: apart
// from its raw pages, and by metric, as cosine vectors are normalised.
func vecLeaf(cosine bool) int {
	if cosine {
		return -2
	}
	return -1
}

// pageCache is an LRU of decoded pages bounded by bytes. Cached pages are
// immutable and never returned to parquet-go's buffer pool (no Release),
// so a page evicted while a reader still slices it stays valid until the
// garbage collector frees it.
type pageCache struct {
	acct *membudget.Account // the process budget's share; nil: none
	mu   struct {
		sync.Mutex
		max, used    int64
		hits, misses int64
		lru          list.List // of *pageEntry, most recent first
		m            map[pageKey]*list.Element
	}
}

func newPageCache(max int64, b *membudget.Budget) *pageCache {
	c := &pageCache{}
	if b != nil {
		c.acct = b.Account("pages", c.evict)
	}
	c.mu.max = max
	c.mu.m = map[pageKey]*list.Element{}
	return c
}

func (c *pageCache) setMax(n int64) int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	prev := c.mu.max
	c.mu.max = max(n, 0)
	c.evictLocked(c.mu.used - c.mu.max)
	return prev
}

// get returns the cached page for k, marking it recently used.
func (c *pageCache) get(k pageKey) (parquet.Page, bool) {
	p, ok := c.getAny(k).(parquet.Page)
	return p, ok
}

// getVec returns the cached vector page for k.
func (c *pageCache) getVec(k pageKey) (*vecPage, bool) {
	p, ok := c.getAny(k).(*vecPage)
	return p, ok
}

// peekVec is getVec that counts nothing: a probe that falls back to
// reading looks the page up again. countHits counts the pages served.
func (c *pageCache) peekVec(k pageKey) (*vecPage, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.mu.m[k]
	if !ok {
		return nil, false
	}
	p, ok := e.Value.(*pageEntry).val.(*vecPage)
	if ok {
		c.mu.lru.MoveToFront(e)
	}
	return p, ok
}

func (c *pageCache) countHits(n int) {
	c.mu.Lock()
	c.mu.hits += int64(n)
	c.mu.Unlock()
	for range n {
		c.acct.Hit()
	}
}

func (c *pageCache) getAny(k pageKey) any {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.mu.m[k]
	if !ok {
		c.mu.misses++
		c.acct.Miss()
		return nil
	}
	c.mu.hits++
	c.acct.Hit()
	c.mu.lru.MoveToFront(e)
	return e.Value.(*pageEntry).val
}

// put caches p under k unless it would take more than a quarter of the
// bound (one huge page should not flush everything else).
func (c *pageCache) put(k pageKey, p parquet.Page) { c.putAny(k, p, p.Size()) }

// putVec caches a decoded vector page.
func (c *pageCache) putVec(k pageKey, p *vecPage) { c.putAny(k, p, int64(4*len(p.v))) }

func (c *pageCache) putAny(k pageKey, p any, size int64) {
	size += pageEntryOverhead
	c.mu.Lock()
	if size > c.mu.max/4 {
		c.mu.Unlock()
		return
	}
	if e, ok := c.mu.m[k]; ok { // another reader decoded it meanwhile
		c.mu.lru.MoveToFront(e)
		c.mu.Unlock()
		return
	}
	c.mu.Unlock()
	// Charge the process budget without the lock: it may ask this cache
	// (evict) or others for memory back.
	if !c.acct.Reserve(size) {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.mu.m[k]; ok {
		c.mu.lru.MoveToFront(e)
		c.acct.Release(size)
		return
	}
	c.mu.m[k] = c.mu.lru.PushFront(&pageEntry{key: k, val: p, size: size})
	c.mu.used += size
	c.evictLocked(c.mu.used - c.mu.max)
}

// evict frees at least need bytes, least recently used first (the process
// budget asks for memory back).
func (c *pageCache) evict(need int64) int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.evictLocked(need)
}

func (c *pageCache) evictLocked(need int64) int64 {
	var freed int64
	for freed < need {
		e := c.mu.lru.Back()
		if e == nil {
			break
		}
		pe := c.mu.lru.Remove(e).(*pageEntry)
		delete(c.mu.m, pe.key)
		c.mu.used -= pe.size
		freed += pe.size
		c.acct.Release(pe.size)
		c.acct.Evicted()
	}
	return freed
}

// counters returns the lookups that hit and missed and the bytes held.
func (c *pageCache) counters() (hits, used, misses int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.mu.hits, c.mu.used, c.mu.misses
}

// stats returns the cached pages and bytes (for tests).
func (c *pageCache) stats() (pages int, bytes int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.mu.m), c.mu.used
}
