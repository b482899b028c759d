package filter

import (
	"errors"
	"fmt"
	"io"

	"github.com/parquet-go/parquet-go"
)

// decoder appends the rows of a column's pages to a vector, reading the
// pages' typed values (parquet-go's page Data: []int32, []int64, []float32,
// []float64 or bytes and offsets) rather than boxed parquet.Values. Boolean
// pages, the rare kind, go through the page's value reader.
type decoder struct {
	dense   vector             // a page's non-NULL values, before NULLs are spread in
	dict    parquet.Dictionary // the dictionary dictVec holds
	dictVec vector
	boxed   []parquet.Value
}

// kindFits reports whether a Parquet physical kind holds values of t.
func kindFits(t colType, k parquet.Kind) bool {
	switch t {
	case typeBool:
		return k == parquet.Boolean
	case typeFloat:
		return k == parquet.Float || k == parquet.Double
	case typeString:
		return k == parquet.ByteArray
	}
	return k == parquet.Int32 || k == parquet.Int64
}

// appendPage appends the page's rows to v.
func (d *decoder) appendPage(v *vector, col column, page parquet.Page) error {
	kind := page.Type().Kind()
	if !kindFits(col.typ, kind) {
		return fmt.Errorf("column %q has Parquet type %s in this file, not %s as in the first file", col.name, kind, col.typ)
	}
	if kind == parquet.Boolean {
		return d.appendBoxed(v, col, page)
	}
	rows := int(page.NumRows())
	defs := page.DefinitionLevels()
	if len(defs) != 0 && len(defs) != rows {
		return fmt.Errorf("column %q: page has %d definition levels for %d rows", col.name, len(defs), rows)
	}
	var src *vector
	var idx []int32
	if dict := page.Dictionary(); dict != nil {
		if dict != d.dict {
			d.dict = nil
			d.dictVec.reset(col.typ, v.is32, v.uns)
			if err := appendDense(&d.dictVec, col, dict.Page()); err != nil {
				return err
			}
			d.dict = dict
		}
		src = &d.dictVec
		data := page.Data()
		idx = data.Int32()
		for _, j := range idx {
			if j < 0 || int(j) >= src.n {
				return fmt.Errorf("column %q: dictionary index %d out of range (dictionary of %d values)", col.name, j, src.n)
			}
		}
	} else {
		if len(defs) == 0 {
			n0 := v.n
			if err := appendDense(v, col, page); err != nil {
				return err
			}
			if v.n-n0 != rows {
				return fmt.Errorf("column %q: page has %d values for %d rows", col.name, v.n-n0, rows)
			}
			return nil
		}
		d.dense.reset(col.typ, v.is32, v.uns)
		if err := appendDense(&d.dense, col, page); err != nil {
			return err
		}
		src = &d.dense
	}
	nvals := src.n
	if idx != nil {
		nvals = len(idx)
	}
	present := rows
	if len(defs) != 0 {
		present = 0
		for _, l := range defs {
			if l != 0 {
				present++
			}
		}
	}
	if present != nvals {
		return fmt.Errorf("column %q: page has %d values for %d non-NULL rows", col.name, nvals, present)
	}
	at := func(k int) int {
		if idx != nil {
			return int(idx[k])
		}
		return k
	}
	k := 0
	for i := 0; i < rows; i++ {
		if len(defs) != 0 && defs[i] == 0 {
			v.setNull(v.n)
			switch col.typ {
			case typeFloat:
				v.floats = append(v.floats, 0)
			case typeString:
				v.offs = append(v.offs, uint32(len(v.data)))
			default:
				v.appendInt(0)
			}
			v.n++
			continue
		}
		j := at(k)
		k++
		switch col.typ {
		case typeFloat:
			v.floats = append(v.floats, src.floats[j])
		case typeString:
			v.data = append(v.data, src.str(j)...)
			v.offs = append(v.offs, uint32(len(v.data)))
		default:
			v.appendInt(src.intAt(j))
		}
		v.n++
	}
	return nil
}

// appendDense appends the values of a page without NULLs (or the non-NULL
// values of a page with them) to v.
func appendDense(v *vector, col column, page parquet.Page) error {
	data := page.Data()
	switch page.Type().Kind() {
	case parquet.Int32:
		xs := data.Int32()
		if v.is32 {
			v.i32 = append(v.i32, xs...)
		} else if col.unsigned {
			for _, x := range xs {
				v.ints = append(v.ints, int64(uint32(x)))
			}
		} else {
			for _, x := range xs {
				v.ints = append(v.ints, int64(x))
			}
		}
		v.n += len(xs)
	case parquet.Int64:
		xs := data.Int64()
		v.ints = append(v.ints, xs...)
		v.n += len(xs)
	case parquet.Float:
		xs := data.Float()
		for _, x := range xs {
			v.floats = append(v.floats, float64(x))
		}
		v.n += len(xs)
	case parquet.Double:
		xs := data.Double()
		v.floats = append(v.floats, xs...)
		v.n += len(xs)
	case parquet.ByteArray:
		vals, offs := data.ByteArray()
		if len(offs) == 0 {
			return nil
		}
		for i := 1; i < len(offs); i++ {
			a, b := offs[i-1], offs[i]
			if a > b || int(b) > len(vals) {
				return fmt.Errorf("column %q: string offsets out of range", col.name)
			}
		}
		base := uint32(len(v.data))
		v.data = append(v.data, vals[offs[0]:offs[len(offs)-1]]...)
		for _, o := range offs[1:] {
			v.offs = append(v.offs, base+o-offs[0])
		}
		v.n += len(offs) - 1
	default:
		return fmt.Errorf("column %q: unexpected Parquet type %s", col.name, page.Type().Kind())
	}
	return nil
}

// appendBoxed appends a page's rows through its value reader.
func (d *decoder) appendBoxed(v *vector, col column, page parquet.Page) error {
	if d.boxed == nil {
		d.boxed = make([]parquet.Value, 1024)
	}
	r := page.Values()
	for {
		k, err := r.ReadValues(d.boxed)
		for _, pv := range d.boxed[:k] {
			if pv.IsNull() {
				v.setNull(v.n)
				v.appendInt(0)
			} else {
				v.appendInt(rowValue(col, pv).i)
			}
			v.n++
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("column %q: %w", col.name, err)
		}
		if k == 0 {
			return fmt.Errorf("column %q: page reader made no progress", col.name)
		}
	}
}
