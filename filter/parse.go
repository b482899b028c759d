package filter

import (
	"math"
	"strconv"
	"strings"
	"time"
)

// MaxDepth bounds the nesting of parentheses and NOT, so that no input can
// exhaust the stack.
const MaxDepth = 64

// MaxLen bounds the predicate text in bytes, as given and in its
// canonical form.
const MaxLen = 64 << 10

// Predicate is a parsed filter. It is immutable and safe for concurrent
// use; parse it once and reuse it across queries.
type Predicate struct {
	text  string
	root  node
	canon string
	cols  []string
}

// Parse parses text as a predicate. Errors are *Error values wrapping
// ErrSyntax, with the position of the offending token.
func Parse(text string) (*Predicate, error) {
	if len(text) > MaxLen {
		return nil, errAt(text, 0, ErrSyntax, "the predicate is %d bytes; the limit is %d", len(text), MaxLen)
	}
	if strings.TrimSpace(text) == "" {
		return nil, errAt(text, 0, ErrSyntax, "the predicate is empty")
	}
	toks, err := lex(text)
	if err != nil {
		return nil, err
	}
	p := &parser{text: text, toks: toks}
	root, err := p.or(0)
	if err != nil {
		return nil, err
	}
	if t := p.peek(); t.kind != tokEOF {
		return nil, p.unexpected(t, "AND, OR or the end of the predicate")
	}
	var b strings.Builder
	root.str(&b)
	if b.Len() > MaxLen {
		// The canonical form (quoted columns, spaced operators, one
		// spelling per literal) can be longer than the text: bounding it
		// too keeps it a predicate that parses back.
		return nil, errAt(text, 0, ErrSyntax, "the predicate is %d bytes written canonically (%d as given); the limit is %d", b.Len(), len(text), MaxLen)
	}
	pr := &Predicate{text: text, root: root, canon: b.String()}
	seen := map[string]bool{}
	walk(root, func(c colRef) {
		if !seen[c.name] {
			seen[c.name] = true
			pr.cols = append(pr.cols, c.name)
		}
	})
	return pr, nil
}

// String returns the canonical form: every column double-quoted, keywords
// in upper case, literals in one spelling, and parentheses only where the
// predicate needs them (NOT binds tighter than AND, AND than OR; chains
// group from the left). Parsing it gives an equal Predicate, always within
// MaxDepth; equal canonical forms mean equal predicates.
func (p *Predicate) String() string { return p.canon }

// Text returns the text the predicate was parsed from.
func (p *Predicate) Text() string { return p.text }

// Columns returns the columns the predicate reads, in order of first use.
// The slice must not be modified.
func (p *Predicate) Columns() []string { return p.cols }

// walk calls fn for every column reference of n, left to right.
func walk(n node, fn func(colRef)) {
	switch n := n.(type) {
	case *cmpNode:
		fn(n.col)
	case *inNode:
		fn(n.col)
	case *betweenNode:
		fn(n.col)
	case *nullNode:
		fn(n.col)
	case *likeNode:
		fn(n.col)
	case *andNode:
		walk(n.l, fn)
		walk(n.r, fn)
	case *orNode:
		walk(n.l, fn)
		walk(n.r, fn)
	case *notNode:
		walk(n.x, fn)
	}
}

type parser struct {
	text string
	toks []token
	pos  int
}

func (p *parser) peek() token { return p.toks[p.pos] }

func (p *parser) next() token {
	t := p.toks[p.pos]
	if t.kind != tokEOF {
		p.pos++
	}
	return t
}

func (p *parser) unexpected(t token, want string) error {
	if t.kind == tokEOF {
		return errAt(p.text, t.off, ErrSyntax, "the predicate ends early; expected %s", want)
	}
	return errAt(p.text, t.off, ErrSyntax, "unexpected %s; expected %s", describe(t), want)
}

func describe(t token) string {
	switch t.kind {
	case tokString:
		return "string '" + t.text + "'"
	case tokQIdent:
		return "column \"" + t.text + "\""
	default:
		return strconv.Quote(t.text)
	}
}

func (p *parser) or(depth int) (node, error) {
	l, err := p.and(depth)
	if err != nil {
		return nil, err
	}
	for p.peek().keyword("OR") {
		p.next()
		r, err := p.and(depth)
		if err != nil {
			return nil, err
		}
		l = &orNode{l, r}
	}
	return l, nil
}

func (p *parser) and(depth int) (node, error) {
	l, err := p.not(depth)
	if err != nil {
		return nil, err
	}
	for p.peek().keyword("AND") {
		p.next()
		r, err := p.not(depth)
		if err != nil {
			return nil, err
		}
		l = &andNode{l, r}
	}
	return l, nil
}

func (p *parser) not(depth int) (node, error) {
	if depth > MaxDepth {
		return nil, errAt(p.text, p.peek().off, ErrSyntax, "nested deeper than %d levels", MaxDepth)
	}
	if p.peek().keyword("NOT") {
		p.next()
		x, err := p.not(depth + 1)
		if err != nil {
			return nil, err
		}
		return &notNode{x}, nil
	}
	return p.primary(depth)
}

var reserved = map[string]bool{
	"AND": true, "OR": true, "NOT": true, "IN": true, "BETWEEN": true, "IS": true,
	"NULL": true, "LIKE": true, "TRUE": true, "FALSE": true, "DATE": true, "TIMESTAMP": true,
}

func (p *parser) primary(depth int) (node, error) {
	t := p.peek()
	if t.kind == tokLParen {
		p.next()
		x, err := p.or(depth + 1)
		if err != nil {
			return nil, err
		}
		if c := p.next(); c.kind != tokRParen {
			return nil, p.unexpected(c, "')'")
		}
		return x, nil
	}
	if col, ok := p.column(); ok {
		return p.rest(col)
	}
	// literal op column
	lit, err := p.literal()
	if err != nil {
		return nil, p.unexpected(t, "a column, a literal compared with a column, NOT or '('")
	}
	op := p.next()
	if op.kind != tokOp {
		return nil, p.unexpected(op, "a comparison operator (=, !=, <>, <, <=, >, >=)")
	}
	col, ok := p.column()
	if !ok {
		return nil, p.unexpected(p.peek(), "a column name (quote odd names with double quotes)")
	}
	return &cmpNode{col: col, op: flip(op.text), lit: lit}, nil
}

// flip mirrors a comparison: 5 < x is x > 5.
func flip(op string) string {
	switch op {
	case "<":
		return ">"
	case "<=":
		return ">="
	case ">":
		return "<"
	case ">=":
		return "<="
	}
	return op
}

// column consumes a column name if one is next.
func (p *parser) column() (colRef, bool) {
	t := p.peek()
	switch {
	case t.kind == tokQIdent:
	case t.kind == tokIdent && !reserved[strings.ToUpper(t.text)]:
	default:
		return colRef{}, false
	}
	p.next()
	return colRef{name: t.text, off: t.off}, true
}

// rest parses what follows a column.
func (p *parser) rest(col colRef) (node, error) {
	t := p.next()
	if t.kind == tokOp {
		lit, err := p.literal()
		if err != nil {
			return nil, err
		}
		return &cmpNode{col: col, op: t.text, lit: lit}, nil
	}
	not := false
	if t.keyword("NOT") {
		not = true
		t = p.next()
		if !t.keyword("IN") && !t.keyword("BETWEEN") && !t.keyword("LIKE") {
			return nil, p.unexpected(t, "IN, BETWEEN or LIKE after NOT")
		}
	}
	switch {
	case t.keyword("IS"):
		n := &nullNode{col: col}
		if p.peek().keyword("NOT") {
			p.next()
			n.not = true
		}
		if u := p.next(); !u.keyword("NULL") {
			return nil, p.unexpected(u, "NULL or NOT NULL after IS")
		}
		return n, nil
	case t.keyword("IN"):
		if u := p.next(); u.kind != tokLParen {
			return nil, p.unexpected(u, "'(' after IN")
		}
		n := &inNode{col: col, not: not}
		for {
			lit, err := p.literal()
			if err != nil {
				return nil, err
			}
			n.lits = append(n.lits, lit)
			u := p.next()
			if u.kind == tokRParen {
				return n, nil
			}
			if u.kind != tokComma {
				return nil, p.unexpected(u, "',' or ')' in the IN list")
			}
		}
	case t.keyword("BETWEEN"):
		lo, err := p.literal()
		if err != nil {
			return nil, err
		}
		if u := p.next(); !u.keyword("AND") {
			return nil, p.unexpected(u, "AND between the bounds of BETWEEN")
		}
		hi, err := p.literal()
		if err != nil {
			return nil, err
		}
		return &betweenNode{col: col, not: not, lo: lo, hi: hi}, nil
	case t.keyword("LIKE"):
		u := p.next()
		if u.kind != tokString {
			return nil, p.unexpected(u, "a pattern string after LIKE, such as 'abc%'")
		}
		pat, exact := u.text, true
		if strings.HasSuffix(pat, "%") {
			pat, exact = pat[:len(pat)-1], false
		}
		if i := strings.IndexAny(pat, "%_"); i >= 0 {
			return nil, errAt(p.text, u.off, ErrSyntax, "LIKE supports only prefix patterns such as 'abc%%' (%% last, no _)")
		}
		return &likeNode{col: col, not: not, prefix: pat, exact: exact, off: u.off}, nil
	}
	return nil, p.unexpected(t, "a comparison operator, IN, BETWEEN, LIKE or IS after column \""+col.name+"\"")
}

// literal parses a constant.
func (p *parser) literal() (literal, error) {
	t := p.next()
	l := literal{off: t.off}
	switch {
	case t.kind == tokString:
		l.kind, l.s = litString, t.text
	case t.kind == tokNumber:
		if !strings.ContainsAny(t.text, ".eE") {
			if i, err := strconv.ParseInt(t.text, 10, 64); err == nil {
				l.kind, l.i = litInt, i
				return l, nil
			}
		}
		f, err := strconv.ParseFloat(t.text, 64)
		if err != nil || math.IsInf(f, 0) {
			return l, errAt(p.text, t.off, ErrSyntax, "number %s is out of range", t.text)
		}
		l.kind, l.f = litFloat, f
	case t.keyword("NULL"):
		l.kind = litNull
	case t.keyword("TRUE"), t.keyword("FALSE"):
		l.kind, l.b = litBool, t.keyword("TRUE")
	case t.keyword("DATE"), t.keyword("TIMESTAMP"):
		u := p.next()
		if u.kind != tokString {
			return l, p.unexpected(u, "a quoted value after "+strings.ToUpper(t.text)+", such as '2024-01-31'")
		}
		var err error
		if t.keyword("DATE") {
			l.kind = litDate
			l.i, err = parseDate(u.text)
		} else {
			l.kind = litTimestamp
			l.t, err = parseTimestamp(u.text)
		}
		if err != nil {
			return l, errAt(p.text, u.off, ErrSyntax, "%v", err)
		}
	default:
		return l, p.unexpected(t, "a literal (number, 'string', TRUE, FALSE, NULL, DATE '…' or TIMESTAMP '…')")
	}
	return l, nil
}

// parseDate reads YYYY-MM-DD as days since 1970-01-01.
func parseDate(s string) (int64, error) {
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		return 0, errDateFormat(s, "date", "YYYY-MM-DD")
	}
	return floorDiv(t.Unix(), 86400), nil
}

// parseTimestamp reads a date, or a date and time (space or T, optional
// fraction and zone; UTC without one).
func parseTimestamp(s string) (time.Time, error) {
	v := s
	if len(v) > 10 && v[10] == ' ' {
		v = v[:10] + "T" + v[11:]
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999", "2006-01-02T15:04:05.999999999Z0700", "2006-01-02T15:04Z07:00", "2006-01-02T15:04", time.DateOnly} {
		if t, err := time.Parse(layout, v); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, errDateFormat(s, "timestamp", "YYYY-MM-DD[ HH:MM:SS[.fff]][Z|±HH:MM]")
}

type formatError struct{ s, what, layout string }

func (e formatError) Error() string {
	return "'" + e.s + "' is not a " + e.what + "; write " + e.layout
}

func errDateFormat(s, what, layout string) error { return formatError{s, what, layout} }

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}
