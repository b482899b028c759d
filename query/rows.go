package query

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/parqdb/parqdb/internal/membudget"
	"github.com/parqdb/parqdb/internal/source"
)

// DefaultRowCacheRows is the default number of joined source rows kept.
const DefaultRowCacheRows = 1 << 16

// rowCache keeps joined source rows (one map per row and column list) so
// that hot results are not read and decoded again: reading one row of a
// wide column decodes its whole page. It is a membudget cache of at most
// limit rows, each charged its estimated size (rowBytes) to the process
// budget's account "rows". Rows are immutable (the index pins the source
// state); callers get shallow copies. Safe for concurrent use.
type rowCache struct {
	c *membudget.Cache[rowKey, map[string]any] // nil: disabled
}

// rowKey names a cached row: a joined source row by its ordinal (list 0),
// or the key columns of row ord of list cid, decoded from the postings key
// (list cid+1; see Index.join).
type rowKey struct {
	list int32
	ord  int64
	cols string
}

// newRowCache returns a cache of at most limit rows (<= 0 disables it)
// charged to b (nil: not charged).
func newRowCache(limit int, b *membudget.Budget) *rowCache {
	c := &rowCache{}
	if limit > 0 {
		c.c = membudget.NewCache[rowKey, map[string]any](membudget.CacheConfig{Name: "rows", Budget: b, MaxBytes: math.MaxInt64, MaxEntries: limit})
	}
	return c
}

func colsKey(cols []string) string { return strings.Join(cols, "\x00") }

// get returns a copy of the cached row (the cached map itself when
// shared: see Options.SharedRows), or nil.
func (c *rowCache) get(k rowKey, shared bool) map[string]any {
	row, ok := c.c.Get(k)
	if !ok || shared {
		return row
	}
	return maps.Clone(row)
}

// put keeps a copy of row if the process budget has room for it.
func (c *rowCache) put(k rowKey, row map[string]any) {
	if _, ok := c.c.Lookup(k); ok || c.c == nil {
		return
	}
	c.c.Put(k, maps.Clone(row), rowBytes(k, row))
}

func (c *rowCache) close() { c.c.Close() }

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
