package server

import (
	"bytes"
	"math"
	"slices"
	"strconv"

	"github.com/parqdb/parqdb/internal/membudget"
	"github.com/parqdb/parqdb/metadata"
	"github.com/parqdb/parqdb/query"
	"github.com/parqdb/parqdb/query/rowjson"
)

// rowJSON keeps the JSON of answered rows' source columns, so that a row
// answered again (a popular neighbour) is not encoded again: encoding the
// float lists of a row cost more than the search that found it. An entry
// is the rowjson.Row bytes of the row's columns up to and including the comma
// before "_distance" (the part that does not depend on the query), keyed
// by the index's UUID, the snapshot, the column list and the row's key. A
// snapshot pins its source state, so entries never go stale; entries of
// snapshots no longer served leave as the budget needs room. It is a
// membudget cache charged to the process memory budget (account
// "http-rows"). Safe for concurrent use.
type rowJSON struct {
	c *membudget.Cache[rowJSONKey, []byte]
}

// rowJSONKey names a row: its set (the index UUID, snapshot and column
// list, shared by the entries of one encoder) and its key.
type rowJSONKey struct{ set, row string }

// rowJSONOverhead is the bytes an entry costs besides its key and value
// (map slot, entry, headers).
const rowJSONOverhead = 80

func newRowJSON(b *membudget.Budget) *rowJSON {
	return &rowJSON{c: membudget.NewCache[rowJSONKey, []byte](membudget.CacheConfig{Name: "http-rows", Budget: b, MaxBytes: math.MaxInt64})}
}

func (c *rowJSON) close() { c.c.Close() }

func (c *rowJSON) get(set string, k []byte) ([]byte, bool) {
	return c.c.Get(rowJSONKey{set, string(k)})
}

func (c *rowJSON) put(set string, k []byte, v []byte) {
	key := rowJSONKey{set, string(k)}
	c.c.Put(key, bytes.Clone(v), int64(len(key.row)+len(v)+rowJSONOverhead))
}

// rowEncoder appends the rowjson.Row bytes of a search answer's rows, taking
// the source columns' part from a rowJSON cache.
type rowEncoder struct {
	cache *rowJSON
	set   string   // this answer's UUID, snapshot and columns
	cols  []string // the columns (read-only)
}

// newRowEncoder returns an encoder for rows of columns cols (_distance
// last) answered by ix, or nil when there is nothing to cache (no source
// column, or no cache).
func newRowEncoder(c *rowJSON, ix *query.Index, cols []string) *rowEncoder {
	if c == nil || len(cols) < 2 || cols[len(cols)-1] != metadata.ReservedField {
		return nil
	}
	p := append([]byte(ix.IndexUUID().String()), 0)
	p = strconv.AppendInt(p, ix.Snapshot().SnapshotID, 10)
	return newRowEncoderFor(c, p, cols)
}

// newRowEncoderFor returns an encoder for rows of columns cols of the
// source state named state.
func newRowEncoderFor(c *rowJSON, state []byte, cols []string) *rowEncoder {
	p := slices.Clone(state)
	for _, col := range cols {
		p = append(p, 0)
		p = append(p, col...)
	}
	return &rowEncoder{cache: c, set: string(p), cols: slices.Clone(cols)}
}

// appendRow appends row's JSON (row.AppendJSON's bytes) to b.
func (e *rowEncoder) appendRow(b []byte, row rowjson.Row) ([]byte, error) {
	if len(row.Key) == 0 { // not a joined hit: nothing names the row
		return row.AppendJSON(b)
	}
	part, ok := e.cache.get(e.set, row.Key)
	if !ok {
		// The row without _distance is "{" + the members + "}": the
		// cached part is that without its "}", plus the comma.
		n := len(row.Columns) - 1
		start := len(b)
		var err error
		if b, err = (rowjson.Row{Columns: row.Columns[:n], Values: row.Values}).AppendJSON(b); err != nil {
			return nil, err
		}
		b[len(b)-1] = ','
		e.cache.put(e.set, row.Key, b[start:])
	} else {
		b = append(b, part...)
	}
	// "_distance":d} — the tail of a row holding only _distance.
	start := len(b)
	b, err := (rowjson.Row{Columns: row.Columns[len(row.Columns)-1:], Distance: row.Distance}).AppendJSON(b)
	if err != nil {
		return nil, err
	}
	return append(b[:start], b[start+1:]...), nil
}
