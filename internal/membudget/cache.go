package membudget

import (
	"sync"
	"sync/atomic"
)

// CacheConfig configures a Cache.
type CacheConfig struct {
	// Name is the cache's account in the budget's Stats (several caches
	// may share a name: their counters add up).
	Name string
	// Budget is the process budget the entries are charged to; nil
	// charges none (the cache is bounded by its own limits alone).
	Budget *Budget
	// MaxBytes is the cache's own bound on the bytes of its entries,
	// within the budget's: 0 keeps nothing, math.MaxInt64 leaves the
	// budget's bound alone. SetMaxBytes changes it.
	MaxBytes int64
	// MaxEntries bounds the number of entries; 0 is no bound.
	MaxEntries int
}

// Cache maps keys to immutable values of a stated size in bytes, charged
// to a Budget's account before they are kept, and evicts with CLOCK (a
// second-chance approximation of least recently used): an entry used since
// the clock hand last passed it is skipped once, and entries nobody uses
// leave oldest first. It evicts to stay within MaxBytes and MaxEntries and
// when the budget asks for memory back; the entry a Put or Grow has just
// stored is never evicted by that call.
//
// Cache owns the locking rule of every budgeted cache: its lock is never
// held while it charges the budget (a charge may make the budget ask any
// cache, this one included, to evict), and callers never see the lock.
//
// A cache made by NewSlotCache is keyed by 0..n-1 and its lookups take no
// lock (one atomic load per key); one made by NewCache is keyed by a map
// under the lock. All methods are safe for concurrent use, also on a nil
// *Cache, which is a disabled cache: it finds nothing and keeps nothing.
type Cache[K comparable, V any] struct {
	acct       *Account
	maxEntries int
	maxBytes   atomic.Int64
	closed     atomic.Bool

	// slotted: a slot cache (NewSlotCache), whose int32 keys index slots.
	slotted bool
	slots   []atomic.Pointer[cacheEntry[K, V]]

	hits, misses atomic.Int64

	mu struct {
		sync.Mutex
		m     map[K]*cacheEntry[K, V] // nil for a slot cache
		hand  *cacheEntry[K, V]       // the clock's ring; nil when empty
		n     int
		bytes int64
	}
}

// cacheEntry is one entry, linked in the clock's ring.
type cacheEntry[K comparable, V any] struct {
	key        K
	val        V
	size       int64
	ref        atomic.Bool // used since the hand passed
	prev, next *cacheEntry[K, V]
}

// NewCache returns an empty cache keyed by a map.
func NewCache[K comparable, V any](cfg CacheConfig) *Cache[K, V] {
	c := newCache[K, V](cfg)
	c.mu.m = map[K]*cacheEntry[K, V]{}
	return c
}

// NewSlotCache returns an empty cache of the keys 0..n-1 (others are
// never kept) whose lookups take no lock.
func NewSlotCache[V any](cfg CacheConfig, n int) *Cache[int32, V] {
	c := newCache[int32, V](cfg)
	c.slotted = true
	c.slots = make([]atomic.Pointer[cacheEntry[int32, V]], n)
	return c
}

func newCache[K comparable, V any](cfg CacheConfig) *Cache[K, V] {
	c := &Cache[K, V]{maxEntries: cfg.MaxEntries}
	c.maxBytes.Store(max(cfg.MaxBytes, 0))
	if cfg.Budget != nil {
		c.acct = cfg.Budget.Account(cfg.Name, c.evict)
	}
	return c
}

// Get returns the value cached under k, counting a hit or a miss.
func (c *Cache[K, V]) Get(k K) (V, bool) {
	v, ok := c.Lookup(k)
	if ok {
		c.Count(1, 0)
	} else {
		c.Count(0, 1)
	}
	return v, ok
}

// Lookup is Get without counting: a caller that looks up many keys per
// request counts them once with Count rather than with shared atomic
// additions per key. It marks the entry used, as Get does.
func (c *Cache[K, V]) Lookup(k K) (V, bool) {
	var zero V
	if c == nil {
		return zero, false
	}
	if c.slotted {
		e := c.slotEntry(k)
		if e == nil {
			return zero, false
		}
		if !e.ref.Load() { // no write to a shared line on every hit
			e.ref.Store(true)
		}
		return e.val, true
	}
	c.mu.Lock()
	e := c.mu.m[k]
	c.mu.Unlock()
	if e == nil {
		return zero, false
	}
	if !e.ref.Load() {
		e.ref.Store(true)
	}
	return e.val, true
}

// slotOf returns the index in slots of k (a slot cache's key, an int32),
// and whether k has one.
func (c *Cache[K, V]) slotOf(k K) (int, bool) {
	i, ok := any(k).(int32) // no conversion: K is int32
	return int(i), ok && i >= 0 && int(i) < len(c.slots)
}

// slotEntry loads k's slot (a slot cache), or nil.
func (c *Cache[K, V]) slotEntry(k K) *cacheEntry[K, V] {
	i, ok := c.slotOf(k)
	if !ok {
		return nil
	}
	return c.slots[i].Load()
}

// Count adds lookups that hit and that missed to the cache's and its
// account's counters.
func (c *Cache[K, V]) Count(hits, misses int64) {
	if c == nil {
		return
	}
	if hits > 0 {
		c.hits.Add(hits)
		c.acct.Hits(hits)
	}
	if misses > 0 {
		c.misses.Add(misses)
		c.acct.Misses(misses)
	}
}

// Put caches v, of size bytes, under k and returns the value now cached
// under k with true: v, or the value another caller cached first (kept:
// entries are immutable, so the first one stands). A value over MaxBytes,
// or one the budget has no room for even after asking the caches to
// evict, is not kept: Put then returns v and false, and the caller uses v
// alone.
func (c *Cache[K, V]) Put(k K, v V, size int64) (V, bool) {
	if c == nil || c.closed.Load() {
		return v, false
	}
	if _, ok := c.slotOf(k); c.slotted && !ok {
		return v, false
	}
	if old, ok := c.Lookup(k); ok {
		return old, true
	}
	if size < 0 || size > c.maxBytes.Load() || !c.acct.Reserve(size) {
		return v, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed.Load() {
		c.acct.Release(size)
		return v, false
	}
	if e := c.findLocked(k); e != nil {
		c.acct.Release(size)
		return e.val, true
	}
	e := &cacheEntry[K, V]{key: k, val: v, size: size}
	c.insertLocked(e)
	c.evictLocked(c.mu.bytes-c.maxBytes.Load(), e)
	return v, true
}

// Grow charges n more bytes to the entry under k (memory its value has
// gained) if it is cached, stays within MaxBytes and same(its value)
// holds, evicting other entries to stay within MaxBytes. same is called
// last, under the cache's lock, so it may commit what the bytes are for
// (it must not call the cache). It reports
// whether the bytes were charged; on false (no room, or the entry was
// evicted or replaced) the
// caller must not keep what they were for.
func (c *Cache[K, V]) Grow(k K, n int64, same func(V) bool) bool {
	if c == nil || n < 0 || c.closed.Load() || !c.acct.Reserve(n) {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.findLocked(k)
	if e == nil || e.size+n > c.maxBytes.Load() || !same(e.val) {
		c.acct.Release(n)
		return false
	}
	e.size += n
	c.mu.bytes += n
	c.evictLocked(c.mu.bytes-c.maxBytes.Load(), e)
	return true
}

// Reserve charges n bytes that no entry holds yet (memory a caller is
// about to need for a value it may cache) to the cache's account, as
// Account.Reserve; Release gives them back.
func (c *Cache[K, V]) Reserve(n int64) bool {
	if c == nil {
		return false
	}
	return c.acct.Reserve(n)
}

// Release gives back n bytes charged with Reserve.
func (c *Cache[K, V]) Release(n int64) {
	if c != nil {
		c.acct.Release(n)
	}
}

// MaxBytes returns the cache's own bound in bytes.
func (c *Cache[K, V]) MaxBytes() int64 {
	if c == nil {
		return 0
	}
	return c.maxBytes.Load()
}

// SetMaxBytes changes the cache's own bound, evicting down to it, and
// returns the previous bound.
func (c *Cache[K, V]) SetMaxBytes(n int64) (previous int64) {
	if c == nil {
		return 0
	}
	prev := c.maxBytes.Swap(max(n, 0))
	c.evict(c.Bytes() - c.maxBytes.Load())
	return prev
}

// CacheStats is a cache's counters.
type CacheStats struct {
	Hits, Misses int64 // lookups counted (Get, Count)
	Entries      int
	Bytes        int64 // bytes of the entries
}

// Stats returns the cache's counters.
func (c *Cache[K, V]) Stats() CacheStats {
	if c == nil {
		return CacheStats{}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return CacheStats{Hits: c.hits.Load(), Misses: c.misses.Load(), Entries: c.mu.n, Bytes: c.mu.bytes}
}

// Bytes returns the bytes of the entries.
func (c *Cache[K, V]) Bytes() int64 { return c.Stats().Bytes }

// Close drops every entry and closes the cache's account (its counters
// stay in the budget's Stats); later Puts keep nothing.
func (c *Cache[K, V]) Close() {
	if c == nil || c.closed.Swap(true) {
		return
	}
	c.mu.Lock()
	for c.mu.hand != nil {
		c.removeLocked(c.mu.hand)
	}
	c.mu.Unlock()
	c.acct.Close()
}

// evict frees at least need bytes if it can: the cache's Evictor.
func (c *Cache[K, V]) evict(need int64) int64 {
	if need <= 0 {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.evictLocked(need, nil)
}

func (c *Cache[K, V]) findLocked(k K) *cacheEntry[K, V] {
	if c.slotted {
		return c.slotEntry(k)
	}
	return c.mu.m[k]
}

// insertLocked links e just behind the hand (the last the hand reaches)
// and indexes it.
func (c *Cache[K, V]) insertLocked(e *cacheEntry[K, V]) {
	if h := c.mu.hand; h == nil {
		e.prev, e.next = e, e
		c.mu.hand = e
	} else {
		e.prev, e.next = h.prev, h
		h.prev.next = e
		h.prev = e
	}
	if i, ok := c.slotOf(e.key); ok {
		c.slots[i].Store(e)
	} else {
		c.mu.m[e.key] = e
	}
	c.mu.n++
	c.mu.bytes += e.size
}

// removeLocked unlinks and unindexes e and releases its bytes.
func (c *Cache[K, V]) removeLocked(e *cacheEntry[K, V]) {
	if e.next == e {
		c.mu.hand = nil
	} else {
		e.prev.next = e.next
		e.next.prev = e.prev
		if c.mu.hand == e {
			c.mu.hand = e.next
		}
	}
	e.prev, e.next = nil, nil
	if i, ok := c.slotOf(e.key); ok {
		c.slots[i].Store(nil)
	} else {
		delete(c.mu.m, e.key)
	}
	c.mu.n--
	c.mu.bytes -= e.size
	c.acct.Release(e.size)
}

// evictLocked runs the clock hand until need bytes are freed and the
// entries are within MaxEntries, or every entry had its second chance;
// keep is never evicted.
func (c *Cache[K, V]) evictLocked(need int64, keep *cacheEntry[K, V]) int64 {
	var freed int64
	over := func() bool { return freed < need || (c.maxEntries > 0 && c.mu.n > c.maxEntries) }
	for steps, limit := 0, 2*c.mu.n+1; over() && c.mu.hand != nil && steps < limit; steps++ {
		e := c.mu.hand
		if e == keep || e.ref.Load() {
			if e != keep {
				e.ref.Store(false)
			}
			c.mu.hand = e.next
			continue
		}
		c.removeLocked(e)
		c.acct.Evicted()
		freed += e.size
	}
	return freed
}
