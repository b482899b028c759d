package filter

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/parquet-go/parquet-go"
)

// Scratch is the reusable memory of MatchRowGroup and DecodeRowGroup. A
// Scratch serves one call at a time; keep one per goroutine.
type Scratch struct {
	b     batch
	decs  []decoder  // per column, for DecodeRowGroup (and BOOLEAN pages)
	ms    []matcher  // per column, for MatchRowGroup
	lb    []leafBits // per leaf, its result over the row group
	valid []bitset   // per column, the rows read and not NULL
	alive bitset     // the rows the conjuncts evaluated so far leave possible
	hits  []uint32
	st    []Stats
}

// NewScratch returns an empty Scratch for p.
func (p *Program) NewScratch() *Scratch {
	return &Scratch{b: batch{vecs: make([]vector, len(p.cols))}, decs: make([]decoder, len(p.cols)),
		ms: make([]matcher, len(p.cols)), lb: make([]leafBits, len(p.leaves)), valid: make([]bitset, len(p.cols)),
		st: make([]Stats, len(p.cols))}
}

// RowGroupMatch is what MatchRowGroup found in one row group.
type RowGroupMatch struct {
	// Rows are the matching rows' offsets within the row group, ascending;
	// the slice belongs to the Scratch and is valid until its next use.
	Rows         []uint32
	PagesRead    int // data pages decoded
	PagesSkipped int // data pages skipped by the page index (no row to evaluate in them)
}

// pageIndex is the page index of one column chunk, when it has a usable one.
type pageIndex struct {
	ci    parquet.ColumnIndex
	first []int64 // first row of each page, then the row count
}

// loadPageIndex returns the chunk's column and offset indexes, or nil when
// it has none or they do not describe the chunk's rows consistently.
func loadPageIndex(cc parquet.ColumnChunk, rows int) *pageIndex {
	ci, err := cc.ColumnIndex()
	if err != nil || ci == nil {
		return nil
	}
	oi, err := cc.OffsetIndex()
	if err != nil || oi == nil {
		return nil
	}
	n := oi.NumPages()
	if n == 0 || ci.NumPages() != n {
		return nil
	}
	first := make([]int64, n+1)
	for i := range n {
		first[i] = oi.FirstRowIndex(i)
		if (i == 0 && first[i] != 0) || (i > 0 && first[i] <= first[i-1]) || first[i] >= int64(rows) {
			return nil
		}
	}
	first[n] = int64(rows)
	return &pageIndex{ci: ci, first: first}
}

// stats returns the statistics of page i of a chunk of column col.
func (px *pageIndex) stats(col column, optional bool, i int) (s Stats) {
	s.Rows = px.first[i+1] - px.first[i]
	switch {
	case px.ci.NullPage(i):
		s.Nulls, s.HasNulls = s.Rows, true
		return s
	case !optional:
		s.HasNulls = true
	case px.ci.NullCount(i) > 0:
		s.Nulls, s.HasNulls = px.ci.NullCount(i), true
	}
	lo, hi := px.ci.MinValue(i), px.ci.MaxValue(i)
	if lo.IsNull() || hi.IsNull() || !kindFits(col.typ, lo.Kind()) || !kindFits(col.typ, hi.Kind()) {
		return s
	}
	if col.typ == typeString && len(hi.ByteArray()) == 0 {
		return s // an absent bound may read as empty: do not trust it
	}
	s.Min, s.Max, s.HasMinMax = lo, hi, true
	return s
}

// segment is a run of rows [from, to) inside which every column stays in one
// page, with what the page statistics decide for it.
type segment struct {
	from, to int
	class    uint8 // segNone, segAll or segEval
}

const (
	segNone uint8 = iota // no row can match
	segAll               // every row matches
	segEval              // the rows must be evaluated
)

// MatchRowGroup evaluates the program over one row group, given its column
// chunks (one per entry of Columns, in that order) and row count. It uses
// the chunks' page indexes (column and offset indexes), when they have
// them, to skip the pages in which no row can match and to take whole the
// runs of rows in which every row matches, and decodes only the remaining
// pages, typed, evaluating the predicate a vector of rows at a time. A
// decode error names the column; a decoder panic is returned as an error.
func (p *Program) MatchRowGroup(ctx context.Context, s *Scratch, chunks []parquet.ColumnChunk, rows int) (m RowGroupMatch, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("parquet decoder panic: %v", r)
		}
	}()
	if len(chunks) != len(p.cols) {
		return m, fmt.Errorf("%d column chunks for %d filter columns", len(chunks), len(p.cols))
	}
	pxs := make([]*pageIndex, len(chunks))
	for j, cc := range chunks {
		pxs[j] = loadPageIndex(cc, rows)
	}
	segs := p.segments(s, chunks, pxs, rows)
	need := false
	for _, sg := range segs {
		need = need || sg.class == segEval
	}
	s.hits = s.hits[:0]
	if !need {
		for _, sg := range segs {
			if sg.class == segAll {
				for r := sg.from; r < sg.to; r++ {
					s.hits = append(s.hits, uint32(r))
				}
			}
		}
		for _, px := range pxs {
			if px != nil {
				m.PagesSkipped += len(px.first) - 1
			}
		}
		m.Rows = s.hits
		return m, nil
	}
	nw := words(rows)
	for li, e := range p.leaves {
		for h := range halves(e) {
			s.lb[li][h] = grow(s.lb[li][h], nw)
			clear(s.lb[li][h])
		}
	}
	for j := range s.valid {
		s.valid[j] = grow(s.valid[j], nw)
		clear(s.valid[j])
	}
	s.b.n = rows
	s.b.lb, s.b.valid = s.lb, s.valid
	// The conjuncts of the root, one after the other: once some leave no
	// row possible, the pages (or whole columns) of the others are not
	// read, since those rows are false whatever the others say.
	done := make([]bool, len(p.cols))
	var alive bitset
	for ci, e := range p.conjuncts {
		for _, j := range p.conjCols[ci] {
			if done[j] {
				continue
			}
			done[j] = true
			read, skipped, err := p.matchChunk(ctx, s, j, chunks[j], pxs[j], segs, alive, rows)
			m.PagesRead += read
			m.PagesSkipped += skipped
			if err != nil {
				return m, err
			}
		}
		if len(p.conjuncts) == 1 {
			break
		}
		t, f := p.evalVec(&s.b, e)
		s.b.put(f)
		if alive == nil {
			s.alive = grow(s.alive, nw)
			alive = s.alive
			copy(alive, t)
		} else {
			for w := range alive {
				alive[w] &= t[w]
			}
		}
		s.b.put(t)
		any := false
		for _, sg := range segs {
			any = any || (sg.class == segEval && anyInRange(alive, sg.from, sg.to))
		}
		if !any {
			break // no row left to evaluate: the remaining columns are not read
		}
	}
	for j, d := range done {
		if !d && pxs[j] != nil {
			m.PagesSkipped += len(pxs[j].first) - 1
		}
	}
	var t bitset
	if alive != nil {
		t = s.b.get()
		copy(t, alive)
	} else {
		var f bitset
		t, f = p.evalVec(&s.b, p.root)
		s.b.put(f)
	}
	// Rows of the segments the statistics decided take that decision.
	for _, sg := range segs {
		switch sg.class {
		case segNone:
			clearRange(t, sg.from, sg.to)
		case segAll:
			setRange(t, sg.from, sg.to)
		}
	}
	s.b.put(t)
	s.hits = appendSet(s.hits, t, 0)
	m.Rows = s.hits
	return m, nil
}

// segments splits the row group at every page boundary of every column
// with a page index and classifies each run by the pages' statistics.
func (p *Program) segments(s *Scratch, chunks []parquet.ColumnChunk, pxs []*pageIndex, rows int) []segment {
	var cuts []int
	for _, px := range pxs {
		if px != nil {
			for _, r := range px.first {
				cuts = append(cuts, int(r))
			}
		}
	}
	if len(cuts) == 0 {
		return []segment{{0, rows, segEval}}
	}
	cuts = append(cuts, 0, rows)
	slices.Sort(cuts)
	cuts = slices.Compact(cuts)
	page := make([]int, len(pxs))
	var segs []segment
	for i := 0; i+1 < len(cuts); i++ {
		from, to := cuts[i], cuts[i+1]
		for j, px := range pxs {
			if px == nil {
				s.st[j] = Stats{}
				continue
			}
			for px.first[page[j]+1] <= int64(from) {
				page[j]++
			}
			s.st[j] = px.stats(p.cols[j], optional(chunks[j]), page[j])
		}
		t, f, u := p.root.may(s.st)
		class := segEval
		switch {
		case !t:
			class = segNone
		case !f && !u:
			class = segAll
		}
		if n := len(segs); n > 0 && segs[n-1].class == class {
			segs[n-1].to = to
			continue
		}
		segs = append(segs, segment{from, to, class})
	}
	return segs
}

// decodeChunk decodes every page of the chunk into vector j.
func (p *Program) decodeChunk(ctx context.Context, s *Scratch, j int, cc parquet.ColumnChunk, rows int) (read int, err error) {
	col := p.cols[j]
	v := &s.b.vecs[j]
	v.reset(col.typ, col.typ != typeBool && cc.Type().Kind() == parquet.Int32, col.unsigned)
	d := &s.decs[j]
	d.dict = nil // dictionaries belong to their chunk
	pages := cc.Pages()
	defer pages.Close()
	for {
		if err := ctx.Err(); err != nil {
			return read, err
		}
		pg, err := pages.ReadPage()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return read, fmt.Errorf("column %q: %w", col.name, err)
		}
		err = d.appendPage(v, col, pg)
		parquet.Release(pg)
		if err != nil {
			return read, err
		}
		read++
	}
	if v.n != rows {
		return read, fmt.Errorf("column %q: %d values for %d rows", col.name, v.n, rows)
	}
	return read, nil
}

// DecodeRowGroup decodes every value of the program's columns in one row
// group as MatchRowGroup does, with no page skipped and nothing evaluated:
// the plain column scan that the cost of a bitmap build is measured
// against. It returns the pages decoded.
func (p *Program) DecodeRowGroup(ctx context.Context, s *Scratch, chunks []parquet.ColumnChunk, rows int) (pages int, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("parquet decoder panic: %v", r)
		}
	}()
	for j, cc := range chunks {
		read, err := p.decodeChunk(ctx, s, j, cc, rows)
		pages += read
		if err != nil {
			return pages, err
		}
	}
	return pages, nil
}

// optional reports whether the chunk's column may hold NULLs (true when
// the chunk does not say).
func optional(cc parquet.ColumnChunk) bool {
	if n, ok := cc.(interface{ Node() parquet.Node }); ok && n.Node() != nil {
		return n.Node().Optional()
	}
	return true
}

// rangeMask returns the bits of word w that lie in [from, to).
func rangeMask(w, from, to int) uint64 {
	lo, hi := max(from-w<<6, 0), min(to-w<<6, 64)
	if hi <= lo {
		return 0
	}
	m := ^uint64(0) << uint(lo)
	if hi < 64 {
		m &= 1<<uint(hi) - 1
	}
	return m
}

func setRange(b bitset, from, to int) {
	for w := from >> 6; w<<6 < to; w++ {
		b[w] |= rangeMask(w, from, to)
	}
}

func clearRange(b bitset, from, to int) {
	for w := from >> 6; w<<6 < to; w++ {
		b[w] &^= rangeMask(w, from, to)
	}
}
