package filter

import (
	"bytes"

	"github.com/parquet-go/parquet-go"
)

// The row-at-a-time evaluator: the reference the tests hold the vectorised
// evaluator (MatchRowGroup, DecodeRowGroup: vector.go, match.go) to. It
// reads boxed parquet.Values one row at a time, in SQL's three-valued logic,
// and production never runs it.

// tri is a three-valued truth value.
type tri uint8

const (
	unknown tri = iota
	isFalse
	isTrue
)

func (t tri) not() tri {
	switch t {
	case isTrue:
		return isFalse
	case isFalse:
		return isTrue
	}
	return unknown
}

func truth(b bool) tri {
	if b {
		return isTrue
	}
	return isFalse
}

func and3(a, b tri) tri {
	switch {
	case a == isFalse || b == isFalse:
		return isFalse
	case a == isTrue && b == isTrue:
		return isTrue
	}
	return unknown
}

func or3(a, b tri) tri {
	switch {
	case a == isTrue || b == isTrue:
		return isTrue
	case a == isFalse && b == isFalse:
		return isFalse
	}
	return unknown
}

// rowEval is implemented by every compiled node.
type rowEval interface {
	// evalRow returns the truth of the node for row i of cols (one slice
	// of values per program column).
	evalRow(cols [][]parquet.Value, i int) tri
}

func evalRow(e eval, cols [][]parquet.Value, i int) tri { return e.(rowEval).evalRow(cols, i) }

// Eval reports whether the predicate is true for the row whose values (one
// per entry of Columns, NULL as a null parquet.Value) are given.
func (p *Program) Eval(row []parquet.Value) bool {
	cols := make([][]parquet.Value, len(row))
	for i := range row {
		cols[i] = row[i : i+1]
	}
	return evalRow(p.root, cols, 0) == isTrue
}

// EvalColumns reports whether the predicate is true for row i, given one
// slice of values per entry of Columns.
func (p *Program) EvalColumns(cols [][]parquet.Value, i int) bool {
	return evalRow(p.root, cols, i) == isTrue
}

func cmpResult(op string, c int) bool {
	if c == 2 { // NaN
		return op == "!="
	}
	switch op {
	case "=":
		return c == 0
	case "!=":
		return c != 0
	case "<":
		return c < 0
	case "<=":
		return c <= 0
	case ">":
		return c > 0
	}
	return c >= 0 // >=
}

func (e *cmpEval) evalRow(cols [][]parquet.Value, i int) tri {
	pv := cols[e.c][i]
	if pv.IsNull() || e.v.null {
		return unknown
	}
	return truth(cmpResult(e.op, compareTo(e.col.typ, rowValue(e.col, pv), e.v)))
}

func (e *inEval) evalRow(cols [][]parquet.Value, i int) tri {
	pv := cols[e.c][i]
	if pv.IsNull() {
		return unknown
	}
	x := rowValue(e.col, pv)
	r := isFalse
	for _, v := range e.vs {
		if compareTo(e.col.typ, x, v) == 0 {
			r = isTrue
			break
		}
	}
	if r == isFalse && e.hasNull {
		r = unknown // x IN (…, NULL) is unknown when no element equals x
	}
	if e.not {
		return r.not()
	}
	return r
}

func (e *betweenEval) evalRow(cols [][]parquet.Value, i int) tri {
	pv := cols[e.c][i]
	if pv.IsNull() {
		return unknown
	}
	x := rowValue(e.col, pv)
	// x BETWEEN a AND b is x >= a AND x <= b, with NULL bounds unknown.
	var ge, le tri = unknown, unknown
	if !e.lo.null {
		ge = truth(cmpResult(">=", compareTo(e.col.typ, x, e.lo)))
	}
	if !e.hi.null {
		le = truth(cmpResult("<=", compareTo(e.col.typ, x, e.hi)))
	}
	r := and3(ge, le)
	if e.not {
		return r.not()
	}
	return r
}

func (e *likeEval) evalRow(cols [][]parquet.Value, i int) tri {
	pv := cols[e.c][i]
	if pv.IsNull() {
		return unknown
	}
	b := pv.ByteArray()
	var r bool
	if e.exact {
		r = bytes.Equal(b, e.prefix)
	} else {
		r = bytes.HasPrefix(b, e.prefix)
	}
	if e.not {
		r = !r
	}
	return truth(r)
}

func (e *nullEval) evalRow(cols [][]parquet.Value, i int) tri {
	return truth(cols[e.c][i].IsNull() != e.not)
}

func (e *andEval) evalRow(cols [][]parquet.Value, i int) tri {
	a := evalRow(e.l, cols, i)
	if a == isFalse {
		return isFalse
	}
	return and3(a, evalRow(e.r, cols, i))
}

func (e *orEval) evalRow(cols [][]parquet.Value, i int) tri {
	a := evalRow(e.l, cols, i)
	if a == isTrue {
		return isTrue
	}
	return or3(a, evalRow(e.r, cols, i))
}

func (e *notEval) evalRow(cols [][]parquet.Value, i int) tri { return evalRow(e.x, cols, i).not() }
