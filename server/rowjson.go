package server

import (
	"bytes"
	"slices"
	"strconv"
	"sync"

	"github.com/parqdb/parqdb/internal/membudget"
	"github.com/parqdb/parqdb/metadata"
	"github.com/parqdb/parqdb/query"
)

// rowJSON keeps the JSON of answered rows' source columns, so that a row
// answered again (a popular neighbour) is not encoded again: encoding the
// float lists of a row cost more than the search that found it. An entry
// is the JSONRow bytes of the row's columns up to and including the comma
// before "_distance" (the part that does not depend on the query), keyed
// by the index's UUID, the snapshot, the column list and the row's key. A
// snapshot pins its source state, so entries never go stale; entries of
// snapshots no longer served leave as the budget needs room. The bytes
// are charged to the process memory budget (membudget, account
// "http-rows"); evicted first in, first out. Safe for concurrent use.
type rowJSON struct {
	acct *membudget.Account
	mu   struct {
		sync.Mutex
		sets map[string]*rowSet // by rowSetKey
		fifo []rowRef
	}
}

// rowSet is the rows of one index UUID, snapshot and column list, by key.
type rowSet struct {
	name string
	rows map[string][]byte
}

type rowRef struct {
	set *rowSet
	key string
}

// rowJSONOverhead is the bytes an entry costs besides its key and value
// (map slot, FIFO slot, headers).
const rowJSONOverhead = 80

func newRowJSON(b *membudget.Budget) *rowJSON {
	c := &rowJSON{}
	c.mu.sets = map[string]*rowSet{}
	c.acct = b.Account("http-rows", c.evict)
	return c
}

func (c *rowJSON) close() { c.acct.Close() }

func entryBytes(k string, v []byte) int64 { return int64(len(k) + len(v) + rowJSONOverhead) }

// evict drops the oldest entries until need bytes are freed.
func (c *rowJSON) evict(need int64) (freed int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for freed < need && len(c.mu.fifo) > 0 {
		r := c.mu.fifo[0]
		c.mu.fifo[0] = rowRef{}
		c.mu.fifo = c.mu.fifo[1:]
		if v, ok := r.set.rows[r.key]; ok {
			delete(r.set.rows, r.key)
			if len(r.set.rows) == 0 {
				delete(c.mu.sets, r.set.name)
			}
			n := entryBytes(r.key, v)
			freed += n
			c.acct.Release(n)
			c.acct.Evicted()
		}
	}
	return freed
}

// set returns the row set named name, creating it.
func (c *rowJSON) set(name []byte) *rowSet {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.mu.sets[string(name)]
	if s == nil {
		s = &rowSet{name: string(name), rows: map[string][]byte{}}
		c.mu.sets[s.name] = s
	}
	return s
}

func (c *rowJSON) get(s *rowSet, k []byte) ([]byte, bool) {
	c.mu.Lock()
	v, ok := s.rows[string(k)]
	c.mu.Unlock()
	if ok {
		c.acct.Hit()
	} else {
		c.acct.Miss()
	}
	return v, ok
}

func (c *rowJSON) put(s *rowSet, k []byte, v []byte) {
	key := string(k)
	n := entryBytes(key, v)
	if !c.acct.Reserve(n) {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if cur := c.mu.sets[s.name]; cur == nil { // emptied by evict meanwhile
		c.mu.sets[s.name] = s
	} else {
		s = cur
	}
	if _, ok := s.rows[key]; ok {
		c.acct.Release(n)
		return
	}
	s.rows[key] = bytes.Clone(v)
	c.mu.fifo = append(c.mu.fifo, rowRef{s, key})
}

// rowEncoder appends the JSONRow bytes of a search answer's rows, taking
// the source columns' part from a rowJSON cache.
type rowEncoder struct {
	cache *rowJSON
	set   *rowSet  // this answer's UUID, snapshot and columns
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
	return &rowEncoder{cache: c, set: c.set(p), cols: slices.Clone(cols)}
}

// appendRow appends row's JSON (row.AppendJSON's bytes) to b.
func (e *rowEncoder) appendRow(b []byte, row query.JSONRow) ([]byte, error) {
	if len(row.Hit.Key) == 0 { // not a joined hit: nothing names the row
		return row.AppendJSON(b)
	}
	part, ok := e.cache.get(e.set, row.Hit.Key)
	if !ok {
		// The row without _distance is "{" + the members + "}": the
		// cached part is that without its "}", plus the comma.
		n := len(row.Columns) - 1
		start := len(b)
		var err error
		if b, err = (query.JSONRow{Columns: row.Columns[:n], Hit: row.Hit}).AppendJSON(b); err != nil {
			return nil, err
		}
		b[len(b)-1] = ','
		e.cache.put(e.set, row.Hit.Key, b[start:])
	} else {
		b = append(b, part...)
	}
	// "_distance":d} — the tail of a row holding only _distance.
	start := len(b)
	b, err := (query.JSONRow{Columns: row.Columns[len(row.Columns)-1:], Hit: row.Hit}).AppendJSON(b)
	if err != nil {
		return nil, err
	}
	return append(b[:start], b[start+1:]...), nil
}
