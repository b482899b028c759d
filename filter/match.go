package filter

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding"
)

// The bitmap build (MatchRowGroup) evaluates each leaf of the predicate (a
// comparison, IN, BETWEEN or LIKE on one column) directly on the values of
// each decoded page: the page's own typed array (plain-encoded pages are
// little-endian arrays that parquet-go decodes in place), or, for
// dictionary pages, the dictionary evaluated once per entry and mapped
// through the page's indexes. No value is copied into a row-group vector,
// which is what the plain column scan (DecodeRowGroup) does and the build
// must not cost more than. The leaves' results, one bitset per leaf over
// the row group's rows, are then combined by evalVec.

// leafBits is one leaf's result over the rows of a row group: for
// BETWEEN, x ≥ lo in [0] and x ≤ hi in [1]; for the others, [0] only.
type leafBits [2]bitset

// indexLeaves numbers the leaves of the program's tree and lists them per
// column, so that a Scratch can hold one result per leaf.
func (p *Program) indexLeaves() {
	p.colLeaves = make([][]int, len(p.cols))
	var visit func(e eval)
	add := func(e eval, c int) int {
		li := len(p.leaves)
		p.leaves = append(p.leaves, e)
		p.colLeaves[c] = append(p.colLeaves[c], li)
		return li
	}
	visit = func(e eval) {
		switch e := e.(type) {
		case *andEval:
			visit(e.l)
			visit(e.r)
		case *orEval:
			visit(e.l)
			visit(e.r)
		case *notEval:
			visit(e.x)
		case *cmpEval:
			e.li = add(e, e.c)
		case *inEval:
			e.li = add(e, e.c)
		case *betweenEval:
			e.li = add(e, e.c)
		case *likeEval:
			e.li = add(e, e.c)
		}
	}
	visit(p.root)
	p.conjuncts = nil
	var split func(e eval)
	split = func(e eval) {
		if a, ok := e.(*andEval); ok {
			split(a.l)
			split(a.r)
			return
		}
		p.conjuncts = append(p.conjuncts, e)
	}
	split(p.root)
	p.conjCols = make([][]int, len(p.conjuncts))
	for i, e := range p.conjuncts {
		seen := make([]bool, len(p.cols))
		var cols func(e eval)
		cols = func(e eval) {
			c := -1
			switch e := e.(type) {
			case *andEval:
				cols(e.l)
				cols(e.r)
			case *orEval:
				cols(e.l)
				cols(e.r)
			case *notEval:
				cols(e.x)
			case *nullEval:
				c = e.c
			case *cmpEval:
				c = e.c
			case *inEval:
				c = e.c
			case *betweenEval:
				c = e.c
			case *likeEval:
				c = e.c
			}
			if c >= 0 && !seen[c] {
				seen[c] = true
				p.conjCols[i] = append(p.conjCols[i], c)
			}
		}
		cols(e)
	}
}

// halves returns how many bitsets leaf e has (2 for BETWEEN).
func halves(e eval) int {
	if _, ok := e.(*betweenEval); ok {
		return 2
	}
	return 1
}

// leafKernel sets dst (words(v.n) words) to half h of leaf e's result over
// the rows of v: the rows for which the leaf's test is true, NULL rows
// excluded.
func leafKernel(e eval, h int, v *vector, dst, tmp bitset) {
	switch e := e.(type) {
	case *cmpEval:
		if e.v.null {
			clear(dst)
			return
		}
		cmpVector(dst, e.col, v, opCodes[e.op], e.v)
	case *inEval:
		if e.ints != nil {
			inVector(dst, tmp, v, e.ints)
			return
		}
		clear(dst)
		for _, lit := range e.vs {
			cmpVector(tmp, e.col, v, opEq, lit)
			for w := range dst {
				dst[w] |= tmp[w]
			}
		}
	case *betweenEval:
		lit, op := e.lo, opGe
		if h == 1 {
			lit, op = e.hi, opLe
		}
		if lit.null {
			clear(dst)
			return
		}
		cmpVector(dst, e.col, v, op, lit)
	case *likeEval:
		likeVector(dst, v, e.prefix, e.exact)
	}
}

// matcher is a column's page state during a build: the dictionary of the
// chunk being read and each of the column's leaves evaluated over it.
type matcher struct {
	dict     parquet.Dictionary
	dictVec  vector
	dictBits []leafBits // per entry of Program.colLeaves[column]
	view     vector     // the current page's values, viewed in place
	boolVec  vector     // a BOOLEAN page's rows, decoded
	dense    bitset     // a leaf over the page's non-NULL values
	rowBits  bitset     // the same spread over the page's rows
	tmp      bitset
}

// grow returns b resized to n words (contents undefined).
func grow(b bitset, n int) bitset {
	if cap(b) < n {
		return make(bitset, n, n+n/4)
	}
	return b[:n]
}

// viewPage sets v to a view of a page's values (no NULLs in it), without
// copying the fixed-width ones. It returns the number of values.
func viewPage(v *vector, col column, data *encoding.Values, kind parquet.Kind) (int, error) {
	// v's slices view the previous page, which was released to
	// parquet-go's pools and may now hold another goroutine's page: drop
	// them before reset appends to any (a string column's offsets).
	v.i32, v.ints, v.floats, v.f32, v.data, v.offs = nil, nil, nil, nil, nil, nil
	v.reset(col.typ, kind == parquet.Int32, col.unsigned)
	switch kind {
	case parquet.Int32:
		v.i32 = data.Int32()
		v.n = len(v.i32)
	case parquet.Int64:
		v.ints = data.Int64()
		v.n = len(v.ints)
	case parquet.Float:
		v.f32 = data.Float()
		if v.f32 == nil {
			v.f32 = []float32{}
		}
		v.n = len(v.f32)
	case parquet.Double:
		v.floats = data.Double()
		v.n = len(v.floats)
	case parquet.ByteArray:
		vals, offs := data.ByteArray()
		if len(offs) == 0 {
			return 0, nil
		}
		for i := 1; i < len(offs); i++ {
			if offs[i-1] > offs[i] || int(offs[i]) > len(vals) {
				return 0, fmt.Errorf("column %q: string offsets out of range", col.name)
			}
		}
		v.data, v.offs = vals, offs
		v.n = len(offs) - 1
	default:
		return 0, fmt.Errorf("column %q: unexpected Parquet type %s", col.name, kind)
	}
	return v.n, nil
}

// matchPage evaluates column j's leaves on one page whose first row is
// row `from` of the row group, OR-ing their results into s.lb and the
// page's non-NULL rows into s.valid[j].
func (p *Program) matchPage(s *Scratch, j int, pg parquet.Page, from int) error {
	col := p.cols[j]
	mt := &s.ms[j]
	kind := pg.Type().Kind()
	if !kindFits(col.typ, kind) {
		return fmt.Errorf("column %q has Parquet type %s in this file, not %s as in the first file", col.name, kind, col.typ)
	}
	rows := int(pg.NumRows())
	if kind == parquet.Boolean {
		v := &mt.boolVec
		v.reset(typeBool, false, false)
		if err := s.decs[j].appendBoxed(v, col, pg); err != nil {
			return err
		}
		if v.n != rows {
			return fmt.Errorf("column %q: page has %d values for %d rows", col.name, v.n, rows)
		}
		nw := words(rows)
		mt.dense, mt.tmp = grow(mt.dense, nw), grow(mt.tmp, nw)
		for _, li := range p.colLeaves[j] {
			e := p.leaves[li]
			for h := range halves(e) {
				leafKernel(e, h, v, mt.dense, mt.tmp)
				orAt(s.lb[li][h], mt.dense, from, rows)
			}
		}
		v.valid(mt.dense)
		orAt(s.valid[j], mt.dense, from, rows)
		return nil
	}
	defs := pg.DefinitionLevels()
	if len(defs) != 0 && len(defs) != rows {
		return fmt.Errorf("column %q: page has %d definition levels for %d rows", col.name, len(defs), rows)
	}
	present := rows
	if len(defs) != 0 {
		present = 0
		for _, l := range defs {
			present += int(b2u(l != 0))
		}
	}
	data := pg.Data()
	var idx []int32
	var nvals int
	if dict := pg.Dictionary(); dict != nil {
		if dict != mt.dict {
			if err := p.evalDict(mt, j, dict); err != nil {
				return err
			}
		}
		idx = data.Int32()
		nvals = len(idx)
		for _, k := range idx {
			if uint32(k) >= uint32(mt.dictVec.n) {
				return fmt.Errorf("column %q: dictionary index %d out of range (dictionary of %d values)", col.name, k, mt.dictVec.n)
			}
		}
	} else {
		n, err := viewPage(&mt.view, col, &data, kind)
		if err != nil {
			return err
		}
		nvals = n
	}
	if nvals != present {
		return fmt.Errorf("column %q: page has %d values for %d non-NULL rows", col.name, nvals, present)
	}
	mt.dense, mt.tmp = grow(mt.dense, words(nvals)), grow(mt.tmp, words(nvals))
	if present < rows {
		mt.rowBits = grow(mt.rowBits, words(rows))
	}
	for k, li := range p.colLeaves[j] {
		e := p.leaves[li]
		for h := range halves(e) {
			if idx != nil {
				gather(mt.dense, mt.dictBits[k][h], idx)
			} else {
				leafKernel(e, h, &mt.view, mt.dense, mt.tmp)
			}
			src := mt.dense
			if present < rows {
				spread(mt.rowBits, mt.dense, defs)
				src = mt.rowBits
			}
			orAt(s.lb[li][h], src, from, rows)
		}
	}
	if present == rows {
		setRange(s.valid[j], from, from+rows)
	} else {
		for i, l := range defs {
			if l != 0 {
				s.valid[j][(from+i)>>6] |= 1 << (uint(from+i) & 63)
			}
		}
	}
	return nil
}

// evalDict evaluates column j's leaves over a new dictionary.
func (p *Program) evalDict(mt *matcher, j int, dict parquet.Dictionary) error {
	col := p.cols[j]
	mt.dict = nil
	mt.dictVec.reset(col.typ, dict.Page().Type().Kind() == parquet.Int32, col.unsigned)
	if err := appendDense(&mt.dictVec, col, dict.Page()); err != nil {
		return err
	}
	n := mt.dictVec.n
	for len(mt.dictBits) < len(p.colLeaves[j]) {
		mt.dictBits = append(mt.dictBits, leafBits{})
	}
	mt.tmp = grow(mt.tmp, words(n))
	for k, li := range p.colLeaves[j] {
		e := p.leaves[li]
		for h := range halves(e) {
			mt.dictBits[k][h] = grow(mt.dictBits[k][h], words(n))
			leafKernel(e, h, &mt.dictVec, mt.dictBits[k][h], mt.tmp)
		}
	}
	mt.dict = dict
	return nil
}

// gather sets dst bit k to bit idx[k] of src (indexes checked by the caller).
func gather(dst, src bitset, idx []int32) {
	for w := range dst {
		base := w << 6
		var m uint64
		for j, k := range idx[base:min(base+64, len(idx))] {
			m |= (src[uint32(k)>>6] >> (uint32(k) & 63) & 1) << uint(j&63)
		}
		dst[w] = m
	}
}

// spread sets dst (over a page's rows) from dense (over its non-NULL
// values): row i takes the next value's bit when defs[i] != 0, else 0.
func spread(dst, dense bitset, defs []byte) {
	clear(dst)
	k := 0
	for i, l := range defs {
		if l != 0 {
			dst[i>>6] |= (dense[k>>6] >> (uint(k) & 63) & 1) << (uint(i) & 63)
			k++
		}
	}
}

// orAt ORs the first n bits of src into dst starting at bit `from`.
func orAt(dst, src bitset, from, n int) {
	if n == 0 {
		return
	}
	nw := words(n)
	last := src[nw-1] & tailMask(n)
	w0, sh := from>>6, uint(from)&63
	if sh == 0 {
		d := dst[w0 : w0+nw]
		for w := range nw - 1 {
			d[w] |= src[w]
		}
		d[nw-1] |= last
		return
	}
	for w := range nw {
		x := src[w]
		if w == nw-1 {
			x = last
		}
		dst[w0+w] |= x << sh
		if hi := x >> (64 - sh); hi != 0 {
			dst[w0+w+1] |= hi
		}
	}
}

// matchChunk evaluates column j's leaves on the pages of the chunk that
// hold rows of segments to evaluate and, when alive is not nil, rows of
// alive (every page when the chunk has no page index). Rows of pages not
// read keep zero bits.
func (p *Program) matchChunk(ctx context.Context, s *Scratch, j int, cc parquet.ColumnChunk, px *pageIndex, segs []segment, alive bitset, rows int) (read, skipped int, err error) {
	col := p.cols[j]
	s.ms[j].dict = nil // dictionaries belong to their chunk
	pages := cc.Pages()
	defer pages.Close()
	if px == nil {
		at := 0
		for {
			if err := ctx.Err(); err != nil {
				return read, skipped, err
			}
			pg, err := pages.ReadPage()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return read, skipped, fmt.Errorf("column %q: %w", col.name, err)
			}
			n := int(pg.NumRows())
			if at+n > rows {
				parquet.Release(pg)
				return read, skipped, fmt.Errorf("column %q: pages hold more than the row group's %d rows", col.name, rows)
			}
			err = p.matchPage(s, j, pg, at)
			parquet.Release(pg)
			if err != nil {
				return read, skipped, err
			}
			at += n
			read++
		}
		if at != rows {
			return read, skipped, fmt.Errorf("column %q: %d values for %d rows", col.name, at, rows)
		}
		return read, skipped, nil
	}
	next := 0 // the page the reader is positioned at
	si := 0
	for i := 0; i+1 < len(px.first); i++ {
		from, to := int(px.first[i]), int(px.first[i+1])
		for si < len(segs) && segs[si].to <= from {
			si++
		}
		want := false
		for k := si; k < len(segs) && segs[k].from < to; k++ {
			want = want || segs[k].class == segEval
		}
		if want && alive != nil {
			want = anyInRange(alive, from, to)
		}
		if !want {
			skipped++
			continue
		}
		if err := ctx.Err(); err != nil {
			return read, skipped, err
		}
		if next != i {
			if err := pages.SeekToRow(int64(from)); err != nil {
				return read, skipped, fmt.Errorf("column %q: seek to row %d: %w", col.name, from, err)
			}
		}
		pg, err := pages.ReadPage()
		if err != nil {
			return read, skipped, fmt.Errorf("column %q: page %d: %w", col.name, i, err)
		}
		if int(pg.NumRows()) != to-from {
			parquet.Release(pg)
			return read, skipped, fmt.Errorf("column %q: page %d has %d rows; the offset index says %d", col.name, i, pg.NumRows(), to-from)
		}
		err = p.matchPage(s, j, pg, from)
		parquet.Release(pg)
		if err != nil {
			return read, skipped, err
		}
		next = i + 1
		read++
	}
	return read, skipped, nil
}

// anyInRange reports whether b has a bit set in [from, to).
func anyInRange(b bitset, from, to int) bool {
	for i := from; i < to; {
		w := i >> 6
		x := b[w] >> (uint(i) & 63)
		n := min(64-(i&63), to-i)
		if n < 64 {
			x &= 1<<uint(n) - 1
		}
		if x != 0 {
			return true
		}
		i += n
	}
	return false
}
