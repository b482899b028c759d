package query

import (
	"maps"
	"strings"
	"sync"
)

// DefaultRowCacheRows is the default number of joined source rows kept.
const DefaultRowCacheRows = 1 << 16

// rowCache keeps joined source rows (one map per row and column list) so
// that hot results are not read and decoded again: reading one row of a
// wide column decodes its whole page. Entries are evicted first in, first
// out. Rows are immutable (the index pins the source state); callers get
// shallow copies. Safe for concurrent use.
type rowCache struct {
	limit int
	mu    struct {
		sync.Mutex
		m    map[rowKey]map[string]any
		ring []rowKey
		next int
	}
}

type rowKey struct {
	ord  int64
	cols string
}

func newRowCache(limit int) *rowCache {
	c := &rowCache{limit: limit}
	c.mu.m = map[rowKey]map[string]any{}
	return c
}

func colsKey(cols []string) string { return strings.Join(cols, "\x00") }

// get returns a copy of the cached row, or nil.
func (c *rowCache) get(k rowKey) map[string]any {
	if c.limit <= 0 {
		return nil
	}
	c.mu.Lock()
	row := c.mu.m[k]
	c.mu.Unlock()
	if row == nil {
		return nil
	}
	return maps.Clone(row)
}

// put keeps a copy of row.
func (c *rowCache) put(k rowKey, row map[string]any) {
	if c.limit <= 0 {
		return
	}
	row = maps.Clone(row)
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.mu.m[k]; ok {
		return
	}
	if len(c.mu.ring) < c.limit {
		c.mu.ring = append(c.mu.ring, k)
	} else {
		delete(c.mu.m, c.mu.ring[c.mu.next])
		c.mu.ring[c.mu.next] = k
		c.mu.next = (c.mu.next + 1) % c.limit
	}
	c.mu.m[k] = row
}
