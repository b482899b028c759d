package query

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/parqdb/parqdb/internal/membudget"
	"github.com/parqdb/parqdb/internal/source"
)

// DefaultRowCacheRows is the default number of joined source rows kept.
const DefaultRowCacheRows = 1 << 16

// rowCache keeps joined source rows (one map per row and column list) so
// that hot results are not read and decoded again: reading one row of a
// wide column decodes its whole page. It holds at most limit rows, and
// charges each row's estimated size (rowBytes) to the process budget's
// account "rows": a row the budget has no room for is not kept, and the
// budget may ask for bytes back (evict). Entries are evicted first in,
// first out. Rows are immutable (the index pins the source state); callers
// get shallow copies. Safe for concurrent use.
type rowCache struct {
	limit int
	acct  *membudget.Account // nil: no process budget
	mu    struct {
		sync.Mutex
		m     map[rowKey]*rowEntry
		order []rowKey // keys of m, oldest first
	}
}

type rowKey struct {
	ord  int64
	cols string
}

type rowEntry struct {
	row  map[string]any
	size int64 // bytes charged to acct
}

// newRowCache returns a cache of at most limit rows (<= 0 disables it)
// charged to b (nil: not charged).
func newRowCache(limit int, b *membudget.Budget) *rowCache {
	c := &rowCache{limit: limit}
	c.mu.m = map[rowKey]*rowEntry{}
	if limit > 0 && b != nil {
		c.acct = b.Account("rows", c.evict)
	}
	return c
}

func colsKey(cols []string) string { return strings.Join(cols, "\x00") }

// get returns a copy of the cached row (the cached map itself when
// shared: see Options.SharedRows), or nil.
func (c *rowCache) get(k rowKey, shared bool) map[string]any {
	if c.limit <= 0 {
		return nil
	}
	c.mu.Lock()
	e := c.mu.m[k]
	c.mu.Unlock()
	if e == nil {
		c.acct.Miss()
		return nil
	}
	c.acct.Hit()
	if shared {
		return e.row
	}
	return maps.Clone(e.row)
}

// put keeps a copy of row if the process budget has room for it.
func (c *rowCache) put(k rowKey, row map[string]any) {
	if c.limit <= 0 {
		return
	}
	c.mu.Lock()
	_, ok := c.mu.m[k]
	c.mu.Unlock()
	if ok {
		return
	}
	e := &rowEntry{row: maps.Clone(row), size: rowBytes(k, row)}
	// Reserve may call evict: never with c.mu held.
	if !c.acct.Reserve(e.size) {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.mu.m[k]; ok {
		c.acct.Release(e.size)
		return
	}
	c.mu.m[k] = e
	c.mu.order = append(c.mu.order, k)
	for len(c.mu.m) > c.limit {
		c.popLocked()
	}
}

// evict frees at least need bytes if it can, oldest rows first (the
// process budget asks).
func (c *rowCache) evict(need int64) int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	var freed int64
	for freed < need && len(c.mu.order) > 0 {
		freed += c.popLocked()
	}
	return freed
}

// popLocked drops the oldest row and returns its size.
func (c *rowCache) popLocked() int64 {
	k := c.mu.order[0]
	c.mu.order = c.mu.order[1:]
	e := c.mu.m[k]
	delete(c.mu.m, k)
	c.acct.Release(e.size)
	c.acct.Evicted()
	return e.size
}

// rowBytes estimates the memory of a cached row: the map and its entries,
// the key, and each value's data (valueBytes).
func rowBytes(k rowKey, row map[string]any) int64 {
	n := int64(96 + len(k.cols))
	for name, v := range row {
		n += 32 + int64(len(name)) + valueBytes(v)
	}
	return n
}

// valueBytes estimates the memory of a joined value beyond its interface
// header: string and byte data, list elements, nested groups.
func valueBytes(v any) int64 {
	switch x := v.(type) {
	case nil:
		return 0
	case string:
		return 16 + int64(len(x))
	case []byte:
		return 24 + int64(len(x))
	case []float32:
		return 24 + 4*int64(len(x))
	case []float64:
		return 24 + 8*int64(len(x))
	case []any:
		n := int64(24)
		for _, e := range x {
			n += 16 + valueBytes(e)
		}
		return n
	case map[string]any:
		n := int64(48)
		for name, e := range x {
			n += 32 + int64(len(name)) + valueBytes(e)
		}
		return n
	default:
		return 16
	}
}

// keyColumns reports whether every column of cols is a source key field:
// such a join is answered from the keys the postings carry, reading no
// source page (and no key index).
func (ix *Index) keyColumns(cols []string) bool {
	for _, c := range cols {
		if !slices.Contains(ix.snap.SourceKeyFields, c) {
			return false
		}
	}
	return true
}

// keyRow returns the columns cols (key fields, see keyColumns) of the row
// with encoded key key, with the Go values a join would give.
func (ix *Index) keyRow(key []byte, cols []string) (map[string]any, error) {
	vals, err := source.DecodeKey(ix.layout.Keys, key)
	if err != nil {
		return nil, fmt.Errorf("%w: postings key: %v", ErrCorrupt, err)
	}
	row := make(map[string]any, len(cols))
	for j, kv := range vals {
		if name := ix.layout.Keys[j].Name; slices.Contains(cols, name) {
			row[name] = keyValueAny(kv)
		}
	}
	return row, nil
}
