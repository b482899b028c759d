package filter

import (
	"bytes"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"
)

// colType is the filter type of a source column.
type colType uint8

const (
	typeBool colType = iota + 1
	typeInt
	typeFloat
	typeString
	typeDate
	typeTimestamp
)

func (t colType) String() string {
	return [...]string{"", "boolean", "integer", "float", "string", "date", "timestamp"}[t]
}

// column is a bound source column.
type column struct {
	name     string
	typ      colType
	unsigned bool          // INT32 holding an unsigned value
	unit     time.Duration // timestamp unit
}

// Program is a Predicate bound to a source schema: columns resolved and
// literals converted to the columns' types. It is immutable and safe for
// concurrent use.
type Program struct {
	pred *Predicate
	cols []column
	root eval

	leaves    []eval  // the comparisons, IN, BETWEEN and LIKE nodes, numbered by their li
	colLeaves [][]int // per column, the leaves on it
	conjuncts []eval  // the root's AND operands (the root alone when it is no AND)
	conjCols  [][]int // per conjunct, the columns it reads
}

// Columns returns the source columns the program reads, in the order Eval
// expects their values. The slice must not be modified.
func (p *Program) Columns() []string { return p.pred.cols }

// Predicate returns the predicate the program was checked from.
func (p *Program) Predicate() *Predicate { return p.pred }

// Check binds p to schema: every column must be a top-level, non-repeated
// column of a supported type, and every literal must fit its column's
// type. Errors are *Error values wrapping ErrUnknownColumn (listing the
// available columns) or ErrType (naming both types).
func (p *Predicate) Check(schema *parquet.Schema) (*Program, error) {
	prog := &Program{pred: p}
	index := map[string]int{}
	for i, name := range p.cols {
		index[name] = i
		prog.cols = append(prog.cols, column{name: name})
	}
	var firstErr error
	walk(p.root, func(c colRef) {
		if firstErr != nil {
			return
		}
		col := &prog.cols[index[c.name]]
		if col.typ != 0 {
			return
		}
		if err := p.bindColumn(schema, c, col); err != nil {
			firstErr = err
		}
	})
	if firstErr != nil {
		return nil, firstErr
	}
	root, err := prog.compile(p.root, index)
	if err != nil {
		return nil, err
	}
	prog.root = root
	prog.indexLeaves()
	return prog, nil
}

func (p *Predicate) bindColumn(schema *parquet.Schema, c colRef, col *column) error {
	var field parquet.Field
	for _, f := range schema.Fields() {
		if f.Name() == c.name {
			field = f
			break
		}
	}
	if field == nil {
		var names []string
		for _, f := range schema.Fields() {
			names = append(names, f.Name())
		}
		hint := ""
		for _, n := range names {
			if strings.EqualFold(n, c.name) {
				hint = fmt.Sprintf(" (column names are case-sensitive: did you mean %q?)", n)
			}
		}
		return errAt(p.text, c.off, ErrUnknownColumn, "no source column %q%s; the columns are: %s", c.name, hint, strings.Join(names, ", "))
	}
	if !field.Leaf() || field.Repeated() {
		return errAt(p.text, c.off, ErrType, "column %q is a list or group; filters compare top-level scalar columns only", c.name)
	}
	t := field.Type()
	var lv format.LogicalTypeValue
	if lt := t.LogicalType(); lt != nil {
		lv = lt.Value
	}
	switch t.Kind() {
	case parquet.Boolean:
		col.typ = typeBool
	case parquet.Int32:
		switch v := lv.(type) {
		case nil:
			col.typ = typeInt
		case *format.IntType:
			col.typ, col.unsigned = typeInt, !v.IsSigned
		case *format.DateType:
			col.typ = typeDate
		}
	case parquet.Int64:
		switch v := lv.(type) {
		case nil:
			col.typ = typeInt
		case *format.IntType:
			if v.IsSigned {
				col.typ = typeInt
			}
		case *format.TimestampType:
			if v.Unit.Value != nil {
				col.typ, col.unit = typeTimestamp, v.Unit.Value.Duration()
			}
		}
	case parquet.Float, parquet.Double:
		col.typ = typeFloat
	case parquet.ByteArray:
		switch lv.(type) {
		case nil, *format.StringType, *format.EnumType:
			col.typ = typeString
		}
	}
	if col.typ == 0 {
		return errAt(p.text, c.off, ErrType, "column %q has Parquet type %s, which filters do not support (supported: boolean, integers, float, double, string, date, timestamp)", c.name, typeName(t))
	}
	return nil
}

func typeName(t parquet.Type) (s string) {
	defer func() {
		if recover() != nil {
			s = "?"
		}
	}()
	s = t.Kind().String()
	if lt := t.LogicalType(); lt != nil && lt.Value != nil {
		s += " (" + lt.Value.String() + ")"
	}
	return s
}

// value is a literal converted to a column's type.
type value struct {
	null bool
	i    int64   // integer, date (days), timestamp (column units), bool (0/1)
	f    float64 // float, or an integer column compared with a fractional literal
	isF  bool    // compare as float
	s    []byte
}

// convert converts l to col's type.
func (p *Predicate) convert(col column, l literal, colOff int) (value, error) {
	mismatch := func() (value, error) {
		return value{}, errAt(p.text, l.off, ErrType, "column %q is %s but the literal is %s", col.name, col.typ, l.kind)
	}
	if l.kind == litNull {
		return value{null: true}, nil
	}
	switch col.typ {
	case typeBool:
		if l.kind != litBool {
			return mismatch()
		}
		if l.b {
			return value{i: 1}, nil
		}
		return value{}, nil
	case typeInt:
		switch l.kind {
		case litInt:
			return value{i: l.i}, nil
		case litFloat:
			return value{f: l.f, isF: true}, nil
		}
	case typeFloat:
		switch l.kind {
		case litInt:
			return value{f: float64(l.i), isF: true}, nil
		case litFloat:
			return value{f: l.f, isF: true}, nil
		}
	case typeString:
		if l.kind == litString {
			return value{s: []byte(l.s)}, nil
		}
	case typeDate:
		switch l.kind {
		case litDate:
			return value{i: l.i}, nil
		case litString:
			d, err := parseDate(l.s)
			if err != nil {
				return value{}, errAt(p.text, l.off, ErrType, "column %q is a date: %v", col.name, err)
			}
			return value{i: d}, nil
		}
	case typeTimestamp:
		t := l.t
		switch l.kind {
		case litTimestamp:
		case litDate:
			t = time.Unix(l.i*86400, 0).UTC()
		case litString:
			var err error
			if t, err = parseTimestamp(l.s); err != nil {
				return value{}, errAt(p.text, l.off, ErrType, "column %q is a timestamp: %v", col.name, err)
			}
		default:
			return mismatch()
		}
		return timestampValue(t, col.unit), nil
	}
	return mismatch()
}

// timestampValue converts t to a count of unit since the epoch. Instants
// that do not fit int64 nanoseconds are compared as floats (exactly
// ordered against every stored value, which fits int64).
func timestampValue(t time.Time, unit time.Duration) value {
	secs, nanos := t.Unix(), int64(t.Nanosecond())
	per := int64(time.Second / unit)
	if secs > math.MaxInt64/per-1 || secs < math.MinInt64/per+1 {
		return value{f: float64(secs) * float64(per), isF: true}
	}
	v := secs*per + nanos/int64(unit)
	if nanos%int64(unit) != 0 {
		// Between two representable instants: compare as a float so that
		// `<` and `>` stay exact.
		return value{f: float64(v) + 0.5, isF: true}
	}
	return value{i: v}
}

// compareTo compares a row value x of column type t with literal v.
func compareTo(t colType, x value, v value) int {
	if t == typeString {
		return bytes.Compare(x.s, v.s)
	}
	if x.isF || v.isF {
		xf, vf := x.f, v.f
		if !x.isF {
			xf = float64(x.i)
		}
		if !v.isF {
			vf = float64(v.i)
		}
		switch {
		case xf < vf:
			return -1
		case xf > vf:
			return 1
		case xf == vf:
			return 0
		}
		return 2 // NaN: unordered
	}
	switch {
	case x.i < v.i:
		return -1
	case x.i > v.i:
		return 1
	}
	return 0
}
