package source

import (
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
// touching the same pages do not decompress them again, evicting pages
// (CLOCK, as every membudget cache) down to the new bound. 0 (or less) disables the
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

// pageCache is a membudget cache of decoded pages (parquet.Page, or
// *vecPage for a vector page) bounded by bytes, charged to the process
// budget's account "pages". Cached pages are immutable and never returned
// to parquet-go's buffer pool (no Release), so a page evicted while a
// reader still slices it stays valid until the garbage collector frees it.
type pageCache struct {
	c *membudget.Cache[pageKey, any]
}

func newPageCache(max int64, b *membudget.Budget) *pageCache {
	return &pageCache{c: membudget.NewCache[pageKey, any](membudget.CacheConfig{Name: "pages", Budget: b, MaxBytes: max})}
}

func (c *pageCache) setMax(n int64) int64 { return c.c.SetMaxBytes(n) }

// get returns the cached page for k, marking it used.
func (c *pageCache) get(k pageKey) (parquet.Page, bool) {
	v, _ := c.c.Get(k)
	p, ok := v.(parquet.Page)
	return p, ok
}

// getVec returns the cached vector page for k.
func (c *pageCache) getVec(k pageKey) (*vecPage, bool) {
	v, _ := c.c.Get(k)
	p, ok := v.(*vecPage)
	return p, ok
}

// peekVec is getVec that counts nothing: a probe that falls back to
// reading looks the page up again. countHits counts the pages served.
func (c *pageCache) peekVec(k pageKey) (*vecPage, bool) {
	v, _ := c.c.Lookup(k)
	p, ok := v.(*vecPage)
	return p, ok
}

func (c *pageCache) countHits(n int) { c.c.Count(int64(n), 0) }

// put caches p under k unless it would take more than a quarter of the
// bound (one huge page should not flush everything else).
func (c *pageCache) put(k pageKey, p parquet.Page) { c.putAny(k, p, p.Size()) }

// putVec caches a decoded vector page.
func (c *pageCache) putVec(k pageKey, p *vecPage) { c.putAny(k, p, int64(4*len(p.v))) }

func (c *pageCache) putAny(k pageKey, p any, size int64) {
	size += pageEntryOverhead
	if size > c.c.MaxBytes()/4 {
		return
	}
	c.c.Put(k, p, size)
}

// counters returns the lookups that hit and missed and the bytes held.
func (c *pageCache) counters() (hits, used, misses int64) {
	st := c.c.Stats()
	return st.Hits, st.Bytes, st.Misses
}

// stats returns the cached pages and bytes (for tests).
func (c *pageCache) stats() (pages int, bytes int64) {
	st := c.c.Stats()
	return st.Entries, st.Bytes
}
