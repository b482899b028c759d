package source

import (
	"container/list"
	"sync"

	"github.com/parquet-go/parquet-go"
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
var decodedPages = newPageCache(SuggestedPageCacheBytes)

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
	page parquet.Page
	size int64
}

// pageCache is an LRU of decoded pages bounded by bytes. Cached pages are
// immutable and never returned to parquet-go's buffer pool (no Release),
// so a page evicted while a reader still slices it stays valid until the
// garbage collector frees it.
type pageCache struct {
	mu struct {
		sync.Mutex
		max, used int64
		lru       list.List // of *pageEntry, most recent first
		m         map[pageKey]*list.Element
	}
}

func newPageCache(max int64) *pageCache {
	c := &pageCache{}
	c.mu.max = max
	c.mu.m = map[pageKey]*list.Element{}
	return c
}

func (c *pageCache) setMax(n int64) int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	prev := c.mu.max
	c.mu.max = max(n, 0)
	c.evictLocked()
	return prev
}

// get returns the cached page for k, marking it recently used.
func (c *pageCache) get(k pageKey) (parquet.Page, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.mu.m[k]
	if !ok {
		return nil, false
	}
	c.mu.lru.MoveToFront(e)
	return e.Value.(*pageEntry).page, true
}

// put caches p under k unless it would take more than a quarter of the
// bound (one huge page should not flush everything else).
func (c *pageCache) put(k pageKey, p parquet.Page) {
	size := p.Size() + pageEntryOverhead
	c.mu.Lock()
	defer c.mu.Unlock()
	if size > c.mu.max/4 {
		return
	}
	if e, ok := c.mu.m[k]; ok { // another reader decoded it meanwhile
		c.mu.lru.MoveToFront(e)
		return
	}
	c.mu.m[k] = c.mu.lru.PushFront(&pageEntry{key: k, page: p, size: size})
	c.mu.used += size
	c.evictLocked()
}

func (c *pageCache) evictLocked() {
	for c.mu.used > c.mu.max {
		e := c.mu.lru.Back()
		if e == nil {
			break
		}
		pe := c.mu.lru.Remove(e).(*pageEntry)
		delete(c.mu.m, pe.key)
		c.mu.used -= pe.size
	}
}

// stats returns the cached pages and bytes (for tests).
func (c *pageCache) stats() (pages int, bytes int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.mu.m), c.mu.used
}
