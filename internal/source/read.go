package source

import (
	"context"
	"fmt"
	"io"
	"sort"

	"github.com/parquet-go/parquet-go"
	"golang.org/x/sync/errgroup"

	"github.com/parqdb/parqdb/internal/pqnode"
)

// readWorkers bounds the row groups ReadRows and ReadVectors fetch at once.
const readWorkers = 8

// Rows is the result of ReadRows.
type Rows struct {
	// Columns are the top-level field names, in output order.
	Columns []string
	// Rows[i] holds the row at locs[i]: the leaf values of Columns in
	// order, with repetition and definition levels, column indexes
	// numbering the leaves of Schema(i). Values own their bytes.
	Rows []parquet.Row

	file    []int32
	schemas map[int32]*parquet.Schema
}

// Schema returns the projected schema of row i (the Columns of the file it
// came from); pass it to Reconstruct, or use Map.
func (r *Rows) Schema(i int) *parquet.Schema { return r.schemas[r.file[i]] }

// Map returns row i as field name → Go value (nil for null; lists as
// slices; groups as maps; dates as int32 days).
func (r *Rows) Map(i int) (map[string]any, error) {
	m := map[string]any{}
	if err := r.Schema(i).Reconstruct(&m, r.Rows[i]); err != nil {
		return nil, fmt.Errorf("reconstruct row %d: %w", i, err)
	}
	return m, nil
}

// rgGroup is the requested rows of one row group.
type rgGroup struct {
	file, rg int
	rows     []int64 // rows within the file, ascending, unique
}

// groupLocs sorts locs by file and row group.
func (t *Table) groupLocs(locs []RowLoc) ([]rgGroup, error) {
	idx := make([]int, len(locs))
	for i, loc := range locs {
		if loc.File < 0 || int(loc.File) >= len(t.files) || loc.Row < 0 || loc.Row >= t.files[loc.File].physRows() {
			return nil, &Error{Source: t.desc, Row: -1, Rule: ErrRowLoc, Detail: fmt.Sprintf("locs[%d] = {File: %d, Row: %d}", i, loc.File, loc.Row)}
		}
		idx[i] = i
	}
	sort.Slice(idx, func(a, b int) bool {
		la, lb := locs[idx[a]], locs[idx[b]]
		return la.File < lb.File || la.File == lb.File && la.Row < lb.Row
	})
	var groups []rgGroup
	for _, i := range idx {
		loc := locs[i]
		f := t.files[loc.File]
		rg := f.locate(loc.Row)
		n := len(groups)
		if n == 0 || groups[n-1].file != int(loc.File) || groups[n-1].rg != rg {
			groups = append(groups, rgGroup{file: int(loc.File), rg: rg})
			n++
		}
		g := &groups[n-1]
		if k := len(g.rows); k == 0 || g.rows[k-1] != loc.Row {
			g.rows = append(g.rows, loc.Row)
		}
	}
	return groups, nil
}

// seekablePages opens a column chunk's pages with its offset index loaded
// (when the file has one) so that SeekToRow skips whole pages.
func seekablePages(cc parquet.ColumnChunk) parquet.Pages {
	if fc, ok := cc.(*parquet.FileColumnChunk); ok {
		_ = safely(func() error { _, err := fc.OffsetIndex(); return err })
	}
	return cc.Pages()
}

// ReadRows reads the rows at locs (any order, repeats allowed) with the
// given top-level columns (nil = every top-level field of the first file,
// in its order). It reads only the row groups holding the rows and, within
// them, only the pages holding them (via the offset index), decoding each
// page at most once per call and taking it from the decoded-page cache
// (SetPageCacheBytes) when enabled; it fetches up to 8 row groups at once. It fails with ErrRowLoc for a location
// outside the table and ErrMissingField when a file lacks a column.
func (t *Table) ReadRows(ctx context.Context, locs []RowLoc, columns []string) (*Rows, error) {
	if columns == nil {
		for _, c := range t.schemaFile().pf.Root().Columns() {
			columns = append(columns, c.Name())
		}
	}
	locs, err := t.physLocs(locs)
	if err != nil {
		return nil, err
	}
	groups, err := t.groupLocs(locs)
	if err != nil {
		return nil, err
	}
	out := &Rows{Columns: columns, Rows: make([]parquet.Row, len(locs)), file: make([]int32, len(locs)), schemas: map[int32]*parquet.Schema{}}
	// Per file: the leaf columns to read, and the projected schema.
	leaves := map[int][]int{}
	for _, g := range groups {
		if _, ok := leaves[g.file]; ok {
			continue
		}
		f := t.files[g.file]
		var fields []parquet.Field
		var ls []int
		for _, name := range columns {
			c := f.column(name)
			if c == nil {
				return nil, &Error{Source: t.desc, File: f.Key, Row: -1, Field: name, Rule: ErrMissingField, Detail: f.missingField()}
			}
			if c.Name() != name {
				fields = append(fields, renamedField{c, name})
			} else {
				fields = append(fields, c)
			}
			ls = appendLeaves(ls, c)
		}
		leaves[g.file] = ls
		out.schemas[int32(g.file)] = parquet.NewSchema("row", pqnode.Group(fields...))
	}
	results := make([]map[int64]parquet.Row, len(groups))
	eg, ectx := errgroup.WithContext(ctx)
	eg.SetLimit(readWorkers)
	for gi := range groups {
		eg.Go(func() error {
			m, err := t.readGroupRows(ectx, groups[gi], leaves[groups[gi].file])
			results[gi] = m
			return err
		})
	}
	if err := eg.Wait(); err != nil {
		return nil, err
	}
	byFile := map[int32][]int{} // group indexes per file, for lookup
	for gi, g := range groups {
		byFile[int32(g.file)] = append(byFile[int32(g.file)], gi)
	}
	used := make(map[RowLoc]bool, len(locs))
	for i, loc := range locs {
		f := t.files[loc.File]
		rg := f.locate(loc.Row)
		for _, gi := range byFile[loc.File] {
			if groups[gi].rg == rg {
				row := results[gi][loc.Row]
				if used[loc] {
					row = row.Clone()
				}
				used[loc] = true
				out.Rows[i] = row
				break
			}
		}
		out.file[i] = loc.File
	}
	return out, nil
}

func appendLeaves(dst []int, c *parquet.Column) []int {
	if c.Leaf() {
		return append(dst, c.Index())
	}
	for _, k := range c.Columns() {
		dst = appendLeaves(dst, k)
	}
	return dst
}

// readGroupRows reads the rows of one row group, leaf column by leaf
// column, and assembles them.
func (t *Table) readGroupRows(ctx context.Context, g rgGroup, leaves []int) (map[int64]parquet.Row, error) {
	f := t.files[g.file]
	chunks := f.pf.RowGroups()[g.rg].ColumnChunks()
	rows := make([]parquet.Row, len(g.rows))
	lens := make([]int, len(g.rows))
	for out, leaf := range leaves {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		for ri := range rows {
			lens[ri] = len(rows[ri])
		}
		var paged bool
		err := safely(func() (err error) {
			paged, err = t.readLeafPaged(f, g, leaf, out, chunks[leaf], rows)
			return err
		})
		if err == nil && !paged {
			for ri := range rows {
				rows[ri] = rows[ri][:lens[ri]]
			}
			err = safely(func() error { return t.readLeafSeek(f, g, out, chunks[leaf], rows) })
		}
		if err != nil {
			return nil, &Error{Source: t.desc, File: f.Key, Row: -1, Rule: ErrCorrupt,
				Detail: fmt.Sprintf("read column %d of row group %d", leaf, g.rg), Err: err}
		}
	}
	m := make(map[int64]parquet.Row, len(g.rows))
	for ri, row := range g.rows {
		m[row] = rows[ri]
	}
	return m, nil
}

// readLeafPaged appends leaf column leaf (numbered out in the output) of
// the rows g.rows to rows, decoding each page that holds them at most once
// and taking pages from the decoded-page cache when it has them. It
// returns false, having read nothing for certain, when the chunk has no
// offset index or its pages disagree with it (a row split across pages);
// the caller then reads the leaf with readLeafSeek.
func (t *Table) readLeafPaged(f *tableFile, g rgGroup, leaf, out int, cc parquet.ColumnChunk, rows []parquet.Row) (bool, error) {
	fc, ok := cc.(*parquet.FileColumnChunk)
	if !ok {
		return false, nil
	}
	oi, err := fc.OffsetIndex()
	if err != nil || oi == nil || oi.NumPages() == 0 {
		return false, nil
	}
	start := f.rgStart[g.rg]
	chunkRows := f.rgStart[g.rg+1] - start
	np := oi.NumPages()
	var pages parquet.Pages
	defer func() {
		if pages != nil {
			pages.Close()
		}
	}()
	buf := make([]parquet.Value, 64)
	cur, curIdx := parquet.Page(nil), -1
	for ri, row := range g.rows {
		rel := row - start
		pi := sort.Search(np, func(i int) bool { return oi.FirstRowIndex(i) > rel }) - 1
		if pi < 0 {
			return false, fmt.Errorf("row %d precedes the first page of the offset index", rel)
		}
		first := oi.FirstRowIndex(pi)
		if pi != curIdx {
			key := pageKey{f: f, rg: g.rg, leaf: leaf, page: pi}
			p, ok := decodedPages.get(key)
			if !ok {
				end := chunkRows
				if pi+1 < np {
					end = oi.FirstRowIndex(pi + 1)
				}
				if pages == nil {
					pages = cc.Pages()
				}
				if err := pages.SeekToRow(first); err != nil {
					return false, err
				}
				if p, err = pages.ReadPage(); err != nil {
					return false, err
				}
				if p.NumRows() != end-first {
					return false, nil
				}
				decodedPages.put(key, p)
			}
			cur, curIdx = p, pi
		}
		vr := cur.Slice(rel-first, rel-first+1).Values()
		got := 0
		for {
			n, err := vr.ReadValues(buf)
			for _, v := range buf[:n] {
				rows[ri] = append(rows[ri], v.Clone().Level(v.RepetitionLevel(), v.DefinitionLevel(), out))
			}
			got += n
			if err == io.EOF {
				break
			}
			if err != nil {
				return false, err
			}
			if n == 0 {
				return false, fmt.Errorf("page reader made no progress")
			}
		}
		if got == 0 {
			return false, fmt.Errorf("no values for row %d in page %d", rel, pi)
		}
	}
	return true, nil
}

// readLeafSeek appends leaf column out of the rows g.rows to rows by
// seeking the chunk's pages to each row (without an offset index, by
// reading from the chunk's start).
func (t *Table) readLeafSeek(f *tableFile, g rgGroup, out int, cc parquet.ColumnChunk, rows []parquet.Row) error {
	start := f.rgStart[g.rg]
	buf := make([]parquet.Value, 64)
	pages := seekablePages(cc)
	defer pages.Close()
	for ri, row := range g.rows {
		if err := pages.SeekToRow(row - start); err != nil {
			return err
		}
		first := true
	pagesLoop:
		for {
			p, err := pages.ReadPage()
			if err == io.EOF && !first {
				break
			}
			if err != nil {
				return err
			}
			vr := p.Values()
			for {
				n, err := vr.ReadValues(buf)
				for _, v := range buf[:n] {
					if !first && v.RepetitionLevel() == 0 {
						parquet.Release(p)
						break pagesLoop
					}
					first = false
					rows[ri] = append(rows[ri], v.Clone().Level(v.RepetitionLevel(), v.DefinitionLevel(), out))
				}
				if err == io.EOF {
					break
				}
				if err != nil {
					return err
				}
				if n == 0 {
					return fmt.Errorf("page reader made no progress")
				}
			}
			parquet.Release(p)
		}
	}
	return nil
}

// ReadVectors writes the canonical vectors (converted, normalised under
// cosine; exactly as Scan delivers them) of the rows at locs into
// dst[i*l.Dim:(i+1)*l.Dim]. len(dst) must be len(locs)*l.Dim. A row that
// violates the source contract fails with an *Error naming its file and
// row (the key is not read). It decodes each vector page holding a wanted
// row at most once per call and no other page (taking pages from the
// decoded-page cache when it has them) where the row group's vector chunk
// has an offset index; without one it reads the chunk once, in order, up
// to its last wanted row. Up to 8 row groups are read at once.
func (t *Table) ReadVectors(ctx context.Context, l *Layout, locs []RowLoc, dst []float32) error {
	if err := t.checkLayout(l); err != nil {
		return err
	}
	D := l.Dim
	if len(dst) != len(locs)*D {
		return &Error{Source: t.desc, Row: -1, Rule: ErrBinding, Detail: fmt.Sprintf("dst holds %d values, want %d", len(dst), len(locs)*D)}
	}
	locs, err := t.physLocs(locs)
	if err != nil {
		return err
	}
	if len(locs) == 1 { // one row (a near-key search's query): no grouping
		file, row := int(locs[0].File), locs[0].Row
		rg := t.files[file].locate(row)
		if oi, ok := t.vecOffsets(l, file, rg); ok {
			if vp, i, ok := t.cachedVector(l, file, rg, oi, row); ok {
				copy(dst, vp.v[i*D:(i+1)*D])
				decodedPages.countHits(1)
				return nil
			}
		}
	}
	groups, err := t.groupLocs(locs)
	if err != nil {
		return err
	}
	// Where each (file,row) goes in dst.
	where := make(map[RowLoc][]int, len(locs))
	for i, loc := range locs {
		where[loc] = append(where[loc], i)
	}
	// Rows whose pages are all decoded already are copied here, on the
	// calling goroutine: a warm refine then neither waits for workers nor
	// spends CPU outside the searching thread. Only the rest is read by
	// workers.
	rest := groups[:0:0]
	for _, g := range groups {
		if !t.readVectorsCached(l, g, where, dst) {
			rest = append(rest, g)
		}
	}
	if len(rest) == 0 { // all cached: no workers (a served near-key lookup)
		return nil
	}
	eg, ectx := errgroup.WithContext(ctx)
	eg.SetLimit(readWorkers)
	for _, g := range rest {
		eg.Go(func() error {
			cc := t.files[g.file].pf.RowGroups()[g.rg].ColumnChunks()[l.files[g.file].vec.col]
			if ok, err := t.readVectorsPaged(ectx, l, g, cc, where, dst); ok || err != nil {
				return err
			}
			return t.readVectorsSeq(ectx, l, g, cc, where, dst)
		})
	}
	return eg.Wait()
}

// readVectorsCached copies the vectors of g's rows into dst if every page
// holding them is in the decoded-page cache (and none of them is a row that
// breaks the contract); it reports whether it did. It does no I/O.
func (t *Table) readVectorsCached(l *Layout, g rgGroup, where map[RowLoc][]int, dst []float32) bool {
	D := l.Dim
	type hit struct {
		vp  *vecPage
		row int
	}
	oi, ok := t.vecOffsets(l, g.file, g.rg)
	if !ok {
		return false
	}
	hits := make([]hit, 0, len(g.rows))
	for _, row := range g.rows {
		vp, i, ok := t.cachedVector(l, g.file, g.rg, oi, row)
		if !ok {
			return false
		}
		hits = append(hits, hit{vp, i})
	}
	for k, row := range g.rows {
		h := hits[k]
		for _, j := range where[RowLoc{File: int32(g.file), Row: row}] {
			copy(dst[j*D:(j+1)*D], h.vp.v[h.row*D:(h.row+1)*D])
		}
	}
	decodedPages.countHits(len(hits))
	return true
}

// vecOffsets returns the offset index of the vector column chunk of row
// group rg of file file, if it has one with pages.
func (t *Table) vecOffsets(l *Layout, file, rg int) (parquet.OffsetIndex, bool) {
	fc, ok := t.files[file].pf.RowGroups()[rg].ColumnChunks()[l.files[file].vec.col].(*parquet.FileColumnChunk)
	if !ok {
		return nil, false
	}
	var oi parquet.OffsetIndex
	if err := safely(func() error { var err error; oi, err = fc.OffsetIndex(); return err }); err != nil || oi == nil || oi.NumPages() == 0 {
		return nil, false
	}
	return oi, true
}

// cachedVector finds the vector of physical row row (in row group rg of
// file file, whose vector offsets are oi) in the decoded-page cache: its
// page and index in the page, if the page is there and the row does not
// break the contract. It does no I/O and counts no hit.
func (t *Table) cachedVector(l *Layout, file, rg int, oi parquet.OffsetIndex, row int64) (*vecPage, int, bool) {
	f := t.files[file]
	rel := row - f.rgStart[rg]
	pi := sort.Search(oi.NumPages(), func(i int) bool { return oi.FirstRowIndex(i) > rel }) - 1
	if pi < 0 {
		return nil, 0, false
	}
	vp, ok := decodedPages.peekVec(pageKey{f: f, rg: rg, leaf: vecLeaf(l.cosine), page: pi})
	if !ok {
		return nil, 0, false
	}
	i := int(rel - oi.FirstRowIndex(pi))
	if _, bad := vp.faults[i]; bad || (i+1)*l.Dim > len(vp.v) {
		return nil, 0, false
	}
	return vp, i, true
}

// readVectorsPaged is ReadVectors for the rows of one row group whose
// vector chunk has an offset index: each page holding a wanted row is
// decoded once (and no other page: the offset index names where each
// starts) to canonical vectors and kept in the decoded-page cache, so rows
// near earlier ones (and the same rows again) cost a copy. It returns
// false, having written nothing it will not overwrite, when the chunk has
// no offset index or its pages disagree with it; the caller then reads
// the chunk with readVectorsSeq, which also reports any corruption.
func (t *Table) readVectorsPaged(ctx context.Context, l *Layout, g rgGroup, cc parquet.ColumnChunk, where map[RowLoc][]int, dst []float32) (bool, error) {
	fc, ok := cc.(*parquet.FileColumnChunk)
	if !ok {
		return false, nil
	}
	var oi parquet.OffsetIndex
	if err := safely(func() error { var err error; oi, err = fc.OffsetIndex(); return err }); err != nil || oi == nil || oi.NumPages() == 0 {
		return false, nil
	}
	f := t.files[g.file]
	fl := &l.files[g.file]
	D := l.Dim
	start := f.rgStart[g.rg]
	chunkRows := f.rgStart[g.rg+1] - start
	np := oi.NumPages()
	var pages parquet.Pages
	defer func() {
		if pages != nil {
			_ = pages.Close()
		}
	}()
	if pb := t.prefetchPages(ctx, l, g, fc, oi); pb != nil {
		pages = fc.PagesFrom(pb)
	}
	var cur *vecPage
	curIdx := -1
	var first int64
	for _, row := range g.rows {
		if err := ctx.Err(); err != nil {
			return false, err
		}
		rel := row - start
		pi := sort.Search(np, func(i int) bool { return oi.FirstRowIndex(i) > rel }) - 1
		if pi < 0 {
			return false, nil
		}
		if pi != curIdx {
			first = oi.FirstRowIndex(pi)
			end := chunkRows
			if pi+1 < np {
				end = oi.FirstRowIndex(pi + 1)
			}
			key := pageKey{f: f, rg: g.rg, leaf: vecLeaf(l.cosine), page: pi}
			vp, ok := decodedPages.getVec(key)
			if !ok {
				if pages == nil {
					pages = cc.Pages()
				}
				if vp = decodeVecPage(pages, &fl.vec, first, int(end-first), D, l.cosine); vp == nil {
					return false, nil
				}
				decodedPages.putVec(key, vp)
			}
			cur, curIdx = vp, pi
		}
		i := int(rel - first)
		if ft, bad := cur.faults[i]; bad {
			return true, &Error{Source: t.desc, File: f.Key, Row: row, Field: l.VectorField, Rule: ft.rule, Detail: ft.detail}
		}
		for _, j := range where[RowLoc{File: int32(g.file), Row: row}] {
			copy(dst[j*D:(j+1)*D], cur.v[i*D:(i+1)*D])
		}
	}
	return true, nil
}

// pageFetchers bounds the concurrent requests of prefetchPages, and
// prefetchMax the bytes it reads for one row group (more: no prefetch).
const (
	pageFetchers = 8
	prefetchMax  = 64 << 20
)

// prefetchPages fetches, concurrently, the bytes of the pages of vector
// chunk fc (row group g.rg) that holding g's rows readVectorsPaged will
// decode (those not in the decoded-page cache), each with the look-ahead
// its page reader takes (readBufferSize, within the chunk), adjacent
// pages merged into one request: over an object store a cold read then
// waits for one round of requests instead of two requests a page in turn.
// It returns the pages' reader, or nil when fewer than two pages are
// needed or a fetch fails (the pages are then read as before, which
// reports the error).
func (t *Table) prefetchPages(ctx context.Context, l *Layout, g rgGroup, fc *parquet.FileColumnChunk, oi parquet.OffsetIndex) *pageBytes {
	f := t.files[g.file]
	lo, hi, ok := chunkRange(f.pf, g.rg, fc.Column())
	if !ok {
		return nil
	}
	start := f.rgStart[g.rg]
	np := oi.NumPages()
	var ranges []byteRange
	if first := oi.Offset(0); lo < first { // a dictionary page before the first data page
		ranges = append(ranges, byteRange{off: lo, end: first + readBufferSize})
	}
	last := -1
	for _, row := range g.rows {
		pi := sort.Search(np, func(i int) bool { return oi.FirstRowIndex(i) > row-start }) - 1
		if pi < 0 || pi == last {
			continue
		}
		last = pi
		if _, ok := decodedPages.getVec(pageKey{f: f, rg: g.rg, leaf: vecLeaf(l.cosine), page: pi}); ok {
			continue
		}
		off := oi.Offset(pi)
		r := byteRange{off: off, end: off + oi.CompressedPageSize(pi) + readBufferSize}
		if n := len(ranges); n > 0 && r.off <= ranges[n-1].end {
			ranges[n-1].end = max(ranges[n-1].end, r.end)
		} else {
			ranges = append(ranges, r)
		}
	}
	if len(ranges) < 2 {
		return nil
	}
	hi = min(hi, f.Size)
	var total int64
	for i := range ranges {
		r := &ranges[i]
		r.off, r.end = max(r.off, lo), min(r.end, hi)
		if r.end <= r.off || i > 0 && r.off < ranges[i-1].end {
			return nil // an offset index that does not describe the chunk
		}
		if total += r.end - r.off; total > prefetchMax {
			return nil
		}
	}
	eg, ectx := errgroup.WithContext(ctx)
	eg.SetLimit(pageFetchers)
	for i := range ranges {
		r := &ranges[i]
		eg.Go(func() error {
			if err := ectx.Err(); err != nil {
				return err
			}
			r.b = make([]byte, r.end-r.off)
			n, err := f.obj.ReadAt(r.b, r.off)
			if err == io.EOF && int64(n) == r.end-r.off {
				err = nil
			}
			return err
		})
	}
	if eg.Wait() != nil {
		return nil
	}
	return &pageBytes{r: f.obj, ranges: ranges}
}

// byteRange is the bytes [off, end) of a file, read into b.
type byteRange struct {
	off, end int64
	b        []byte
}

// pageBytes is the io.ReaderAt of a file whose pages prefetchPages read:
// a read inside one of its ranges (ascending, disjoint) is served from
// memory, the rest of any read from r.
type pageBytes struct {
	r      io.ReaderAt
	ranges []byteRange
}

func (p *pageBytes) ReadAt(b []byte, off int64) (int, error) {
	i := sort.Search(len(p.ranges), func(i int) bool { return p.ranges[i].end > off })
	if i == len(p.ranges) || p.ranges[i].off > off {
		return p.r.ReadAt(b, off)
	}
	n := copy(b, p.ranges[i].b[off-p.ranges[i].off:])
	if n == len(b) {
		return n, nil
	}
	m, err := p.r.ReadAt(b[n:], off+int64(n))
	return n + m, err
}

// decodeVecPage decodes the n rows of the page of pages (a vector chunk of
// shape s) starting at row first, reading that one page and no other, or
// returns nil when the page does not hold exactly those rows or cannot be
// decoded (the caller falls back to reading the chunk in order).
func decodeVecPage(pages parquet.Pages, s *vecShape, first int64, n, D int, cosine bool) *vecPage {
	var p parquet.Page
	if err := safely(func() error {
		if err := pages.SeekToRow(first); err != nil {
			return err
		}
		var err error
		p, err = pages.ReadPage()
		return err
	}); err != nil {
		return nil
	}
	if p.NumRows() != int64(n) {
		parquet.Release(p)
		return nil
	}
	// The page holds exactly the offset index's rows, so the cursor reads
	// it alone: its last row ends where the page does, and looking for the
	// next row's start must not decode the next page.
	var c vecCursor
	c.reset(s, &onePage{p: p})
	defer c.close()
	vp := &vecPage{v: make([]float32, n*D)}
	tmp := make([]float32, D)
	for r := 0; r < n; r++ {
		rs, err := c.readRow(tmp)
		if err != nil {
			return nil
		}
		fault := func(rule error, detail string) {
			if vp.faults == nil {
				vp.faults = map[int]rowFault{}
			}
			vp.faults[r] = rowFault{rule, detail}
		}
		if detail, rule := vectorFault(rs, tmp, D, cosine); rule != nil {
			fault(rule, detail)
			continue
		}
		copy(vp.v[r*D:], tmp)
	}
	return vp
}

// vectorFault is the source-contract rule (with its detail) that a row
// read as rs into tmp breaks, or nil.
func vectorFault(rs rowStatus, tmp []float32, D int, cosine bool) (string, error) {
	switch {
	case rs.null:
		return "", ErrNullVector
	case rs.count != D:
		return fmt.Sprintf("%d elements, want %d", rs.count, D), ErrDimension
	case rs.nullElem >= 0:
		return fmt.Sprintf("element %d", rs.nullElem), ErrNullElement
	}
	return checkVector(tmp, cosine)
}

// onePage is the Pages of a single page, which its reader takes over.
type onePage struct{ p parquet.Page }

func (o *onePage) ReadPage() (parquet.Page, error) {
	if o.p == nil {
		return nil, io.EOF
	}
	p := o.p
	o.p = nil
	return p, nil
}

func (o *onePage) SeekToRow(int64) error { return fmt.Errorf("onePage: seek not supported") }

func (o *onePage) Close() error {
	if o.p != nil {
		parquet.Release(o.p)
		o.p = nil
	}
	return nil
}

// readVectorsSeq is ReadVectors for the rows of one row group read in
// order from the start of its vector chunk, each page decoded once, up to
// the last wanted row: the path for a chunk without an offset index (with
// none, parquet-go can only seek to a row by decoding every page before
// it, so seeking row by row would decode the chunk's first pages once per
// row). A wanted row that violates the source contract, or a chunk that
// cannot be decoded, fails with an *Error naming the file and row.
func (t *Table) readVectorsSeq(ctx context.Context, l *Layout, g rgGroup, cc parquet.ColumnChunk, where map[RowLoc][]int, dst []float32) error {
	f := t.files[g.file]
	D := l.Dim
	start := f.rgStart[g.rg]
	pages := cc.Pages()
	if fc, ok := cc.(*parquet.FileColumnChunk); ok {
		if lo, hi, ok := chunkRange(f.pf, g.rg, fc.Column()); ok {
			pages = fc.PagesFrom(&readAhead{r: f.obj, hi: hi, off: lo})
		}
	}
	var c vecCursor
	c.reset(&l.files[g.file].vec, pages)
	defer c.close()
	tmp := make([]float32, D)
	next := 0 // index in g.rows of the next wanted row
	for row := start; next < len(g.rows); row++ {
		if (row-start)&1023 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		fail := func(rule error, detail string, cause error) error {
			return &Error{Source: t.desc, File: f.Key, Row: row, Field: l.VectorField, Rule: rule, Detail: detail, Err: cause}
		}
		rs, err := c.readRow(tmp)
		if err == io.EOF {
			return fail(ErrCorrupt, "the column chunk ends before this row", nil)
		}
		if err != nil {
			return fail(ErrCorrupt, "read vector", err)
		}
		if row != g.rows[next] {
			continue
		}
		next++
		if detail, rule := vectorFault(rs, tmp, D, l.cosine); rule != nil {
			return fail(rule, detail, nil)
		}
		for _, i := range where[RowLoc{File: int32(g.file), Row: row}] {
			copy(dst[i*D:(i+1)*D], tmp)
		}
	}
	return nil
}

// seqReadBlock is the size of readAhead's reads: a pass over a vector
// chunk without an offset index makes a few large requests instead of
// about two per page (over S3: a 46 MB chunk of 1 MB pages took 134
// requests, one after the other).
const seqReadBlock = 8 << 20

// readAhead is the io.ReaderAt of one forward pass over the bytes [off,
// hi) of r (a column chunk): it reads them in blocks of up to
// seqReadBlock bytes, each once, and serves ReadAt calls inside the
// current block from memory. A read behind the block fetches again.
type readAhead struct {
	r     io.ReaderAt
	hi    int64
	off   int64 // of buf
	buf   []byte
	block int64 // 0: seqReadBlock
}

func (a *readAhead) ReadAt(p []byte, off int64) (int, error) {
	n := 0
	for n < len(p) {
		o := off + int64(n)
		if o < a.off || o >= a.off+int64(len(a.buf)) {
			if o >= a.hi {
				return n, io.EOF
			}
			if a.block == 0 {
				a.block = seqReadBlock
			}
			size := min(a.block, a.hi-o)
			if int64(cap(a.buf)) < size {
				a.buf = make([]byte, size)
			}
			m, err := a.r.ReadAt(a.buf[:size], o)
			a.buf, a.off = a.buf[:m], o
			if err == io.EOF {
				a.hi = o + int64(m) // the object ends there
			}
			if m == 0 || err != nil && err != io.EOF {
				if err == nil {
					err = io.ErrUnexpectedEOF
				}
				return n, err
			}
		}
		n += copy(p[n:], a.buf[o-a.off:])
	}
	return n, nil
}

// chunkRange returns the byte range of column col's chunk in row group
// rg of pf, as its metadata declares it.
func chunkRange(pf *parquet.File, rg, col int) (lo, hi int64, ok bool) {
	md := pf.Metadata()
	if rg >= len(md.RowGroups) || col >= len(md.RowGroups[rg].Columns) {
		return 0, 0, false
	}
	m := md.RowGroups[rg].Columns[col].MetaData
	lo = m.DataPageOffset
	if m.DictionaryPageOffset > 0 && m.DictionaryPageOffset < lo {
		lo = m.DictionaryPageOffset
	}
	if lo < 0 || m.TotalCompressedSize <= 0 {
		return 0, 0, false
	}
	return lo, lo + m.TotalCompressedSize, true
}
