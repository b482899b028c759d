package query

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/parqdb/parqdb/internal/source"
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
