package filter

import (
	"bytes"

	"github.com/parquet-go/parquet-go"
)

// Stats are the footer statistics of one column chunk, for MayMatch.
type Stats struct {
	Min, Max  parquet.Value // the chunk's smallest and largest non-null values
	HasMinMax bool          // Min and Max are set
	Nulls     int64         // null values in the chunk
	HasNulls  bool          // Nulls is set
	Rows      int64         // rows in the row group
}

// eval is a compiled node. The vectorised evaluator (vector.go, match.go)
// evaluates it over pages; may decides from column-chunk statistics.
type eval interface {
	// may reports whether some row of a chunk with these statistics could
	// make the node true, whether some could make it false, and whether
	// some could make it unknown (NULL); each answer errs towards true.
	may(st []Stats) (mayTrue, mayFalse, mayUnknown bool)
}

// MayMatch reports whether a row group whose column chunks have the given
// statistics (one per entry of Columns) can hold a row for which the
// predicate is true. False means no row can match, so the row group can be
// skipped; missing statistics always give true.
func (p *Program) MayMatch(st []Stats) bool {
	t, _, _ := p.root.may(st)
	return t
}

// mayNull reports whether the chunk may hold a NULL.
func mayNull(s Stats) bool { return !s.HasNulls || s.Nulls > 0 }

func (p *Program) compile(n node, index map[string]int) (eval, error) {
	switch n := n.(type) {
	case *andNode:
		l, err := p.compile(n.l, index)
		if err != nil {
			return nil, err
		}
		r, err := p.compile(n.r, index)
		if err != nil {
			return nil, err
		}
		return &andEval{l, r}, nil
	case *orNode:
		l, err := p.compile(n.l, index)
		if err != nil {
			return nil, err
		}
		r, err := p.compile(n.r, index)
		if err != nil {
			return nil, err
		}
		return &orEval{l, r}, nil
	case *notNode:
		x, err := p.compile(n.x, index)
		if err != nil {
			return nil, err
		}
		return &notEval{x}, nil
	case *nullNode:
		return &nullEval{c: index[n.col.name], not: n.not}, nil
	}
	var col colRef
	switch n := n.(type) {
	case *cmpNode:
		col = n.col
	case *inNode:
		col = n.col
	case *betweenNode:
		col = n.col
	case *likeNode:
		col = n.col
	}
	c := index[col.name]
	ct := p.cols[c]
	conv := func(l literal) (value, error) { return p.pred.convert(ct, l, col.off) }
	switch n := n.(type) {
	case *cmpNode:
		v, err := conv(n.lit)
		if err != nil {
			return nil, err
		}
		return newCmpEval(c, ct, n.op, v), nil
	case *inNode:
		e := &inEval{c: c, col: ct, not: n.not}
		for _, l := range n.lits {
			v, err := conv(l)
			if err != nil {
				return nil, err
			}
			if v.null {
				e.hasNull = true
				continue
			}
			e.vs = append(e.vs, v)
		}
		if ct.typ != typeString && ct.typ != typeFloat && len(e.vs) > 0 && len(e.vs) <= 16 {
			e.ints = []int64{}
			for _, v := range e.vs {
				if v.isF {
					e.ints = nil
					break
				}
				e.ints = append(e.ints, v.i)
			}
		}
		return e, nil
	case *betweenNode:
		lo, err := conv(n.lo)
		if err != nil {
			return nil, err
		}
		hi, err := conv(n.hi)
		if err != nil {
			return nil, err
		}
		return &betweenEval{c: c, col: ct, not: n.not, lo: lo, hi: hi}, nil
	case *likeNode:
		if ct.typ != typeString {
			return nil, errAt(p.pred.text, n.off, ErrType, "LIKE needs a string column; column %q is %s", ct.name, ct.typ)
		}
		return &likeEval{c: c, col: ct, not: n.not, prefix: []byte(n.prefix), exact: n.exact}, nil
	}
	return nil, errAt(p.pred.text, 0, ErrSyntax, "unsupported expression")
}

// rowValue reads a parquet value as col's type.
func rowValue(col column, pv parquet.Value) value {
	switch col.typ {
	case typeBool:
		if pv.Boolean() {
			return value{i: 1}
		}
		return value{}
	case typeFloat:
		if pv.Kind() == parquet.Float {
			return value{f: float64(pv.Float()), isF: true}
		}
		return value{f: pv.Double(), isF: true}
	case typeString:
		return value{s: pv.ByteArray()}
	}
	if pv.Kind() == parquet.Int32 {
		if col.unsigned {
			return value{i: int64(uint32(pv.Int32()))}
		}
		return value{i: int64(pv.Int32())}
	}
	return value{i: pv.Int64()}
}

type cmpEval struct {
	c   int
	li  int // the leaf's number (Program.leaves)
	col column
	op  string
	v   value
}

type opCode uint8

const (
	opNone opCode = iota
	opEq
	opNe
	opLt
	opLe
	opGt
	opGe
)

var opCodes = map[string]opCode{"=": opEq, "!=": opNe, "<": opLt, "<=": opLe, ">": opGt, ">=": opGe}

func newCmpEval(c int, col column, op string, v value) *cmpEval {
	return &cmpEval{c: c, col: col, op: op, v: v}
}

// minMax returns the chunk's bounds as values of col, when known.
func minMax(col column, st Stats) (lo, hi value, ok bool) {
	if !st.HasMinMax || st.Min.IsNull() || st.Max.IsNull() {
		return value{}, value{}, false
	}
	lo, hi = rowValue(col, st.Min), rowValue(col, st.Max)
	if col.typ == typeFloat && (lo.f != lo.f || hi.f != hi.f) { // NaN bounds say nothing
		return value{}, value{}, false
	}
	return lo, hi, true
}

// allNull reports whether statistics prove every value of the chunk null.
func allNull(st Stats) bool { return st.HasNulls && st.Rows > 0 && st.Nulls >= st.Rows }

// mayCmp reports whether some value in [lo, hi] satisfies `x op v`.
func mayCmp(t colType, op string, lo, hi, v value) bool {
	switch op {
	case "=":
		return compareTo(t, lo, v) <= 0 && compareTo(t, hi, v) >= 0
	case "!=":
		return !(compareTo(t, lo, v) == 0 && compareTo(t, hi, v) == 0)
	case "<":
		return compareTo(t, lo, v) < 0
	case "<=":
		return compareTo(t, lo, v) <= 0
	case ">":
		return compareTo(t, hi, v) > 0
	}
	return compareTo(t, hi, v) >= 0
}

var negOp = map[string]string{"=": "!=", "!=": "=", "<": ">=", "<=": ">", ">": "<=", ">=": "<"}

func (e *cmpEval) may(st []Stats) (bool, bool, bool) {
	s := st[e.c]
	if e.v.null || allNull(s) {
		return false, false, true
	}
	u := mayNull(s)
	lo, hi, ok := minMax(e.col, s)
	if !ok || (e.col.typ == typeFloat) {
		// Float chunks may hold NaN outside their min/max: only the true
		// side can be pruned.
		if ok && e.op != "!=" { // NaN != v is true
			return mayCmp(e.col.typ, e.op, lo, hi, e.v), true, u
		}
		return true, true, u
	}
	return mayCmp(e.col.typ, e.op, lo, hi, e.v), mayCmp(e.col.typ, negOp[e.op], lo, hi, e.v), u
}

type inEval struct {
	c       int
	li      int
	col     column
	not     bool
	vs      []value
	hasNull bool    // the list holds NULL
	ints    []int64 // vs as integers, when the column and every element are (for the vectorised one-pass test)
}

func (e *inEval) may(st []Stats) (bool, bool, bool) {
	s := st[e.c]
	if allNull(s) {
		return false, false, true
	}
	u := mayNull(s) || e.hasNull
	lo, hi, ok := minMax(e.col, s)
	if !ok {
		return true, true, u
	}
	any := false
	for _, v := range e.vs {
		if mayCmp(e.col.typ, "=", lo, hi, v) {
			any = true
			break
		}
	}
	if e.not {
		return !e.hasNull, any || e.hasNull, u
	}
	return any, true, u
}

type betweenEval struct {
	c      int
	li     int
	col    column
	not    bool
	lo, hi value
}

func (e *betweenEval) may(st []Stats) (bool, bool, bool) {
	s := st[e.c]
	if allNull(s) {
		return false, false, true
	}
	u := mayNull(s) || e.lo.null || e.hi.null
	lo, hi, ok := minMax(e.col, s)
	if !ok || e.lo.null || e.hi.null {
		return true, true, u
	}
	t := mayCmp(e.col.typ, ">=", lo, hi, e.lo) && mayCmp(e.col.typ, "<=", lo, hi, e.hi)
	// Some value outside [lo, hi] exists unless the chunk's range lies
	// within the bounds (floats may hold NaN, which is outside).
	f := e.col.typ == typeFloat || compareTo(e.col.typ, lo, e.lo) < 0 || compareTo(e.col.typ, hi, e.hi) > 0
	if e.not {
		return f, t, u
	}
	return t, f, u
}

type likeEval struct {
	c      int
	li     int
	col    column
	not    bool
	prefix []byte
	exact  bool
}

func (e *likeEval) may(st []Stats) (bool, bool, bool) {
	s := st[e.c]
	if allNull(s) {
		return false, false, true
	}
	u := mayNull(s)
	lo, hi, ok := minMax(e.col, s)
	if !ok || e.not {
		return true, true, u
	}
	// Strings with the prefix are ≥ prefix; they are ≤ hi only if hi is
	// ≥ prefix. And min ≤ some such string only if min ≤ prefix or min
	// itself has the prefix.
	t := bytes.Compare(hi.s, e.prefix) >= 0 && (bytes.Compare(lo.s, e.prefix) <= 0 || bytes.HasPrefix(lo.s, e.prefix))
	return t, true, u
}

type nullEval struct {
	c   int
	not bool
}

func (e *nullEval) may(st []Stats) (bool, bool, bool) {
	s := st[e.c]
	if !s.HasNulls {
		return true, true, false
	}
	someNull, someValue := s.Nulls > 0, s.Nulls < s.Rows
	if e.not {
		return someValue, someNull, false
	}
	return someNull, someValue, false
}

type andEval struct{ l, r eval }

func (e *andEval) may(st []Stats) (bool, bool, bool) {
	lt, lf, lu := e.l.may(st)
	rt, rf, ru := e.r.may(st)
	return lt && rt, lf || rf, lu || ru
}

type orEval struct{ l, r eval }

func (e *orEval) may(st []Stats) (bool, bool, bool) {
	lt, lf, lu := e.l.may(st)
	rt, rf, ru := e.r.may(st)
	return lt || rt, lf && rf, lu || ru
}

type notEval struct{ x eval }

func (e *notEval) may(st []Stats) (bool, bool, bool) {
	t, f, u := e.x.may(st)
	return f, t, u
}
