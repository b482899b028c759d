package query

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"reflect"
	"slices"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/parquet-go/parquet-go"

	"github.com/parqdb/parqdb/internal/membudget"
	"github.com/parqdb/parqdb/internal/source"
)

// joinColsFillShare sets when a row group's scalar columns are decoded
// whole: once joins have asked for 1/joinColsFillShare of its rows (or
// more) one by one. Decoding a whole column chunk costs about as much as
// reading that many rows singly, and every later join of the row group is
// then a slice lookup.
const joinColsFillShare = 256

// joinCols keeps the scalar (non-repeated leaf) source columns that joins
// ask for decoded per source row group, in columnar form: one Go value
// per row, the value a join returns. Entries are kept in a membudget cache
// charged to the process memory budget (account "join-columns"); a column
// the budget has no room for is not kept and the join reads its rows from
// the source instead. The source state is pinned by the index, so entries
// never go stale. Safe for concurrent use.
type joinCols struct {
	c  *membudget.Cache[colKey, *colChunk]
	mu struct {
		sync.Mutex
		reads   map[rgKey]int64 // rows joined singly, by row group
		filling map[rgKey]bool  // a fill in progress
	}
}

type rgKey struct {
	file int32
	rg   int
}

type colKey struct {
	rgKey
	col string
}

// colChunk is one column of one row group: vals[r-first] is row r's value.
type colChunk struct {
	first int64
	vals  []any
	bytes int64
	// checked[r] is set once row r's key was found equal to its hit's
	// postings key (first key field's chunk only): a snapshot's postings
	// give an ordinal always the same key, so the check is done once.
	checked []atomic.Bool
}

// newJoinCols returns a cache charged to b (nil: membudget.Default).
func newJoinCols(b *membudget.Budget) *joinCols {
	if b == nil {
		b = membudget.Default
	}
	c := &joinCols{c: membudget.NewCache[colKey, *colChunk](membudget.CacheConfig{Name: "join-columns", Budget: b, MaxBytes: math.MaxInt64})}
	c.mu.reads = map[rgKey]int64{}
	c.mu.filling = map[rgKey]bool{}
	return c
}

// close releases everything the cache holds.
func (c *joinCols) close() { c.c.Close() }

// lookup returns the cached chunks of cols for row group k (nil when any
// is missing), counting one hit or miss.
func (c *joinCols) lookup(k rgKey, cols []string, dst []*colChunk) []*colChunk {
	dst = dst[:0]
	for _, col := range cols {
		ch, ok := c.c.Lookup(colKey{k, col})
		if !ok {
			c.c.Count(0, 1)
			return nil
		}
		dst = append(dst, ch)
	}
	c.c.Count(1, 0)
	return dst
}

// note counts n rows of row group k (of rows rows) joined singly and
// reports whether the caller should now fill it (it then owns the fill and
// must call filled).
func (c *joinCols) note(k rgKey, n, rows int64) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.mu.reads[k] += n
	if c.mu.filling[k] || c.mu.reads[k]*joinColsFillShare < rows {
		return false
	}
	c.mu.filling[k] = true
	return true
}

// filled ends a fill of row group k, keeping the chunks (by column) that
// the budget has room for.
func (c *joinCols) filled(k rgKey, chunks map[string]*colChunk) {
	for col, ch := range chunks {
		c.c.Put(colKey{k, col}, ch, ch.bytes)
	}
	c.mu.Lock()
	delete(c.mu.filling, k)
	c.mu.reads[k] = 0
	c.mu.Unlock()
}

// scalarColumns reports whether every column of cols is a top-level leaf
// that is not repeated (a join returns a scalar for it) in every source
// file's schema as the first file has it.
func (ix *Index) scalarColumns(cols []string) bool {
	sch := ix.table.Schema()
	for _, c := range cols {
		ok := false
		for _, fld := range sch.Fields() {
			if fld.Name() == c {
				ok = fld.Leaf() && !fld.Repeated()
				break
			}
		}
		if !ok {
			return false
		}
	}
	return true
}

// fillJoinCols decodes columns cols of row group rg (rows [first,
// first+n) of file) into columnar chunks: it reads the column chunks
// whole (source.ScanColumns) and turns each value into the Go value a
// row join gives, through the same projected schema (source.Rows.Map).
func (ix *Index) fillJoinCols(ctx context.Context, file int32, rg int, first, n int64, cols []string) (map[string]*colChunk, error) {
	one, err := ix.table.ReadRows(ctx, []source.RowLoc{{File: file, Row: first}}, cols)
	if err != nil {
		return nil, err
	}
	sch := one.Schema(0)
	out := make(map[string]*colChunk, len(cols))
	for _, c := range cols {
		out[c] = &colChunk{first: first, vals: make([]any, n), bytes: n * int64(unsafe.Sizeof(any(nil)))}
	}
	if ch := out[ix.layout.Keys[0].Name]; ch != nil {
		ch.checked = make([]atomic.Bool, n)
		ch.bytes += n
	}
	seen := false
	err = ix.table.ScanColumns(ctx, cols, func(f, r int, _ []source.ChunkStats) bool {
		return f == int(file) && r == rg
	}, func(b *source.ColumnBatch) error {
		if b.FirstRow != first || int64(b.N) != n {
			return fmt.Errorf("row group %d of file %d: %d rows from %d, want %d from %d", rg, file, b.N, b.FirstRow, n, first)
		}
		seen = true
		row := make(parquet.Row, len(cols))
		m := make(map[string]any, len(cols))
		for i := 0; i < b.N; i++ {
			for j := range cols {
				v := b.Values[j][i]
				row[j] = v.Level(0, v.DefinitionLevel(), j)
			}
			clear(m)
			if err := sch.Reconstruct(&m, row); err != nil {
				return fmt.Errorf("reconstruct row %d: %w", first+int64(i), err)
			}
			for _, c := range cols {
				v := m[c]
				ch := out[c]
				ch.vals[i] = v
				ch.bytes += scalarBytes(v)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if !seen {
		return nil, fmt.Errorf("row group %d of file %d: not scanned", rg, file)
	}
	return out, nil
}

// scalarBytes estimates the heap a scalar join value holds beyond its
// interface word pair.
func scalarBytes(v any) int64 {
	switch x := v.(type) {
	case nil, bool:
		return 0
	case string:
		return int64(len(x)) + 16
	case []byte:
		return int64(cap(x)) + 24
	}
	return 16
}

// sameJoinValue reports whether a (a key value as keyValueAny gives it)
// equals b (the joined value).
func sameJoinValue(a, b any) bool {
	switch x := a.(type) {
	case []byte:
		y, ok := b.([]byte)
		return ok && bytes.Equal(x, y)
	case int64, int32, string, bool:
		return a == b // comparable: no panic, whatever b holds
	}
	return reflect.DeepEqual(a, b)
}

// joinFromCols answers the hits of top it can from the columnar cache
// (scalar columns cols only) and returns the positions of the others.
// It fills a row group's columns (cols and, when joined keys are checked,
// the key fields) once joins have asked for enough of its rows.
func (ix *Index) joinFromCols(ctx context.Context, top []cand, cols []string, res *Result) ([]int, error) {
	fill := cols
	check := ix.manifest.KeyRows != nil
	if check {
		for _, k := range ix.snap.SourceKeyFields {
			if !slices.Contains(fill, k) {
				fill = append(slices.Clone(fill), k)
			}
		}
	}
	type group struct {
		k        rgKey
		first, n int64
		chunks   []*colChunk // by fill column, nil until looked up
		hits     []int
	}
	var groups []group
	var miss []int
	rowOf := make([]int64, len(top))
	for i, c := range top {
		ords, err := ix.sourceOrds(ctx, c.l)
		if err != nil {
			return nil, err
		}
		loc := ix.rowLoc(ords[c.i])
		if ix.table.HasDeletes(loc.File) {
			// Row groups of a file with deleted rows (an Iceberg
			// merge-on-read table) hold rows the live numbering skips:
			// the row path maps them.
			miss = append(miss, i)
			continue
		}
		rg, first, n, err := ix.table.RowGroupOf(loc)
		if err != nil {
			return nil, err
		}
		k := rgKey{loc.File, rg}
		g := slices.IndexFunc(groups, func(g group) bool { return g.k == k })
		if g < 0 {
			g = len(groups)
			groups = append(groups, group{k: k, first: first, n: n})
		}
		groups[g].hits = append(groups[g].hits, i)
		rowOf[i] = loc.Row
	}
	for gi := range groups {
		g := &groups[gi]
		g.chunks = ix.jcols.lookup(g.k, fill, nil)
		if g.chunks == nil && ix.jcols.note(g.k, int64(len(g.hits)), g.n) {
			// The budget must have room for the columns before they are
			// decoded (a lower bound: one interface value per row and
			// column), so a row group too large for it costs no decoding.
			est := g.n * int64(len(fill)) * int64(unsafe.Sizeof(any(nil)))
			if !ix.jcols.c.Reserve(est) {
				ix.jcols.filled(g.k, nil)
				miss = append(miss, g.hits...)
				continue
			}
			// A failed fill (a file whose schema differs, say) leaves the
			// rows to the row path, which reads and reports them itself.
			chunks, err := ix.fillJoinCols(ctx, g.k.file, g.k.rg, g.first, g.n, fill)
			ix.jcols.c.Release(est)
			if err != nil && ctx.Err() != nil {
				ix.jcols.filled(g.k, nil)
				return nil, ctx.Err()
			}
			ix.jcols.filled(g.k, chunks)
			g.chunks = ix.jcols.lookup(g.k, fill, nil)
		}
		if g.chunks == nil {
			miss = append(miss, g.hits...)
			continue
		}
		for _, i := range g.hits {
			r := rowOf[i] - g.first
			if check && !ix.sameKey(top[i].key(), fill, g.chunks, r) {
				miss = append(miss, i) // the source changed in place: the row path names it
				continue
			}
			row := make(map[string]any, len(cols))
			for j, col := range cols {
				row[col] = g.chunks[j].vals[r]
			}
			res.Hits[i] = Hit{Key: top[i].key(), Distance: top[i].dist, Row: row}
		}
	}
	slices.Sort(miss)
	return miss, nil
}

// sameKey reports whether row r of chunks (by column of fill) holds the
// key enc.
func (ix *Index) sameKey(enc []byte, fill []string, chunks []*colChunk, r int64) bool {
	first := slices.Index(fill, ix.layout.Keys[0].Name)
	if first < 0 {
		return false
	}
	checked := chunks[first].checked
	if checked != nil && checked[r].Load() {
		return true
	}
	vals, err := source.DecodeKey(ix.layout.Keys, enc)
	if err != nil {
		return false
	}
	for j, kv := range vals {
		c := slices.Index(fill, ix.layout.Keys[j].Name)
		if c < 0 || !sameJoinValue(keyValueAny(kv), chunks[c].vals[r]) {
			return false
		}
	}
	if checked != nil {
		checked[r].Store(true)
	}
	return true
}
