package filter

import (
	"strconv"
	"strings"
	"time"
)

// litKind is a literal's type.
type litKind uint8

const (
	litNull litKind = iota
	litBool
	litInt
	litFloat
	litString
	litDate      // i: days since 1970-01-01
	litTimestamp // t
)

func (k litKind) String() string {
	return [...]string{"NULL", "boolean", "integer", "float", "string", "date", "timestamp"}[k]
}

// literal is a constant of the predicate.
type literal struct {
	kind litKind
	b    bool
	i    int64
	f    float64
	s    string
	t    time.Time
	off  int // byte offset in the text
}

func (l literal) str(b *strings.Builder) {
	switch l.kind {
	case litNull:
		b.WriteString("NULL")
	case litBool:
		if l.b {
			b.WriteString("TRUE")
		} else {
			b.WriteString("FALSE")
		}
	case litInt:
		b.WriteString(strconv.FormatInt(l.i, 10))
	case litFloat:
		s := strconv.FormatFloat(l.f, 'g', -1, 64)
		if !strings.ContainsAny(s, ".eE") {
			s += ".0" // stays a float when parsed again
		}
		b.WriteString(s)
	case litString:
		quote(b, l.s, '\'')
	case litDate:
		b.WriteString("DATE '")
		b.WriteString(time.Unix(l.i*86400, 0).UTC().Format(time.DateOnly))
		b.WriteString("'")
	case litTimestamp:
		b.WriteString("TIMESTAMP '")
		b.WriteString(l.t.UTC().Format("2006-01-02 15:04:05.999999999Z"))
		b.WriteString("'")
	}
}

func quote(b *strings.Builder, s string, q byte) {
	b.WriteByte(q)
	for i := 0; i < len(s); i++ {
		if s[i] == q {
			b.WriteByte(q)
		}
		b.WriteByte(s[i])
	}
	b.WriteByte(q)
}

// colRef is a column named by the predicate.
type colRef struct {
	name string
	off  int
}

func (c colRef) str(b *strings.Builder) { quote(b, c.name, '"') }

// node is an expression of the predicate tree. Nodes are immutable.
type node interface {
	str(b *strings.Builder)
}

type cmpNode struct {
	col colRef
	op  string // = != < <= > >=
	lit literal
}

type inNode struct {
	col  colRef
	not  bool
	lits []literal
}

type betweenNode struct {
	col    colRef
	not    bool
	lo, hi literal
}

type nullNode struct {
	col colRef
	not bool // IS NOT NULL
}

type likeNode struct {
	col    colRef
	not    bool
	prefix string // the pattern without its trailing %
	exact  bool   // the pattern had no trailing %
	off    int
}

type andNode struct{ l, r node }
type orNode struct{ l, r node }
type notNode struct{ x node }

func (n *cmpNode) str(b *strings.Builder) {
	n.col.str(b)
	b.WriteString(" " + n.op + " ")
	n.lit.str(b)
}

func (n *inNode) str(b *strings.Builder) {
	n.col.str(b)
	if n.not {
		b.WriteString(" NOT")
	}
	b.WriteString(" IN (")
	for i, l := range n.lits {
		if i > 0 {
			b.WriteString(", ")
		}
		l.str(b)
	}
	b.WriteString(")")
}

func (n *betweenNode) str(b *strings.Builder) {
	n.col.str(b)
	if n.not {
		b.WriteString(" NOT")
	}
	b.WriteString(" BETWEEN ")
	n.lo.str(b)
	b.WriteString(" AND ")
	n.hi.str(b)
}

func (n *nullNode) str(b *strings.Builder) {
	n.col.str(b)
	if n.not {
		b.WriteString(" IS NOT NULL")
	} else {
		b.WriteString(" IS NULL")
	}
}

func (n *likeNode) str(b *strings.Builder) {
	n.col.str(b)
	if n.not {
		b.WriteString(" NOT")
	}
	b.WriteString(" LIKE ")
	p := n.prefix
	if !n.exact {
		p += "%"
	}
	quote(b, p, '\'')
}

// The canonical form writes parentheses only where the tree needs them:
// NOT binds tighter than AND, AND tighter than OR, and a chain of one
// operator groups from the left (a OR b OR c is (a OR b) OR c), as the
// parser reads them. Any text that parses to a tree has at least these
// parentheses around the same subtrees, so the canonical form is never
// nested deeper than the text it came from and always parses back within
// MaxDepth (fully parenthesised, 66 OR'ed terms nested 65 deep).

// Operator precedence levels, loosest first.
const (
	precOr = iota
	precAnd
	precNot
	precPrimary
)

// prec is the precedence level of n's top operator.
func prec(n node) int {
	switch n.(type) {
	case *orNode:
		return precOr
	case *andNode:
		return precAnd
	case *notNode:
		return precNot
	}
	return precPrimary
}

// operand writes n, parenthesised when its operator binds looser than min.
func operand(b *strings.Builder, n node, min int) {
	if prec(n) < min {
		b.WriteString("(")
		n.str(b)
		b.WriteString(")")
		return
	}
	n.str(b)
}

func (n *andNode) str(b *strings.Builder) {
	operand(b, n.l, precAnd)
	b.WriteString(" AND ")
	operand(b, n.r, precNot)
}

func (n *orNode) str(b *strings.Builder) {
	operand(b, n.l, precOr)
	b.WriteString(" OR ")
	operand(b, n.r, precAnd)
}

func (n *notNode) str(b *strings.Builder) {
	b.WriteString("NOT ")
	operand(b, n.x, precNot)
}
