package filter

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// sameNode reports whether a and b are the same predicate tree, ignoring
// text offsets (and a timestamp's zone: the instant is what compares).
func sameNode(a, b node) bool {
	sameLit := func(x, y literal) bool {
		return x.kind == y.kind && x.b == y.b && x.i == y.i && x.s == y.s && x.t.Equal(y.t) &&
			(x.f == y.f || x.f != x.f && y.f != y.f)
	}
	switch x := a.(type) {
	case *cmpNode:
		y, ok := b.(*cmpNode)
		return ok && x.col.name == y.col.name && x.op == y.op && sameLit(x.lit, y.lit)
	case *inNode:
		y, ok := b.(*inNode)
		if !ok || x.col.name != y.col.name || x.not != y.not || len(x.lits) != len(y.lits) {
			return false
		}
		for i := range x.lits {
			if !sameLit(x.lits[i], y.lits[i]) {
				return false
			}
		}
		return true
	case *betweenNode:
		y, ok := b.(*betweenNode)
		return ok && x.col.name == y.col.name && x.not == y.not && sameLit(x.lo, y.lo) && sameLit(x.hi, y.hi)
	case *nullNode:
		y, ok := b.(*nullNode)
		return ok && x.col.name == y.col.name && x.not == y.not
	case *likeNode:
		y, ok := b.(*likeNode)
		return ok && x.col.name == y.col.name && x.not == y.not && x.prefix == y.prefix && x.exact == y.exact
	case *andNode:
		y, ok := b.(*andNode)
		return ok && sameNode(x.l, y.l) && sameNode(x.r, y.r)
	case *orNode:
		y, ok := b.(*orNode)
		return ok && sameNode(x.l, y.l) && sameNode(x.r, y.r)
	case *notNode:
		y, ok := b.(*notNode)
		return ok && sameNode(x.x, y.x)
	}
	return false
}

// predGen writes random predicate texts the way people write them: any
// case, optional and redundant parentheses, literal-first comparisons,
// long chains of one operator, nesting up to and past MaxDepth.
type predGen struct{ r *rand.Rand }

func (g predGen) pick(xs ...string) string { return xs[g.r.IntN(len(xs))] }

func (g predGen) kw(k string) string {
	switch g.r.IntN(3) {
	case 0:
		return strings.ToLower(k)
	case 1:
		return k
	}
	return strings.ToUpper(k[:1]) + strings.ToLower(k[1:])
}

func (g predGen) col() string {
	return g.pick("a", "b", "price", `"odd ""name"""`, `"in stock"`, "ünï", "c_1")
}

func (g predGen) lit() string {
	return g.pick("1", "-3", "2.5", "1e3", "1E5", ".5", "0", "9223372036854775808", "'x'", "'it''s'", "''",
		g.kw("TRUE"), g.kw("false"), g.kw("DATE")+" '2024-01-01'", g.kw("TIMESTAMP")+" '2024-01-01 10:00:00+01:00'")
}

func (g predGen) primary() string {
	switch g.r.IntN(7) {
	case 0:
		return g.lit() + " " + g.pick("=", "<", ">=", "<>") + " " + g.col()
	case 1:
		n := 1 + g.r.IntN(4)
		lits := make([]string, n)
		for i := range lits {
			lits[i] = g.lit()
		}
		return g.col() + " " + g.pick("", g.kw("NOT")+" ") + g.kw("IN") + " (" + strings.Join(lits, g.pick(",", ", ")) + ")"
	case 2:
		return g.col() + " " + g.pick("", g.kw("NOT")+" ") + g.kw("BETWEEN") + " " + g.lit() + " " + g.kw("AND") + " " + g.lit()
	case 3:
		return g.col() + " " + g.kw("IS") + g.pick(" ", " "+g.kw("NOT")+" ") + g.kw("NULL")
	case 4:
		return g.col() + " " + g.pick("", g.kw("NOT")+" ") + g.kw("LIKE") + " " + g.pick("'ab%'", "'x'", "''", "'%'")
	}
	return g.col() + g.pick("=", " = ", "!=", "<", "<=", ">", ">=") + g.lit()
}

// expr writes an expression of about size terms.
func (g predGen) expr(size int) string {
	if size <= 1 {
		switch g.r.IntN(8) {
		case 0:
			return g.kw("NOT") + " " + g.expr(1)
		case 1:
			return "(" + g.expr(1) + ")"
		}
		return g.primary()
	}
	switch g.r.IntN(6) {
	case 0:
		return "(" + g.expr(size) + ")"
	case 1:
		return g.kw("NOT") + " (" + g.expr(size) + ")"
	case 2: // a long chain of one operator
		op := g.kw(g.pick("OR", "AND"))
		terms := make([]string, size)
		for i := range terms {
			terms[i] = g.expr(1)
		}
		return strings.Join(terms, " "+op+" ")
	}
	l := 1 + g.r.IntN(size-1)
	return g.expr(l) + " " + g.kw(g.pick("AND", "OR")) + " " + g.expr(size-l)
}

// wrap nests s in n levels of parentheses or NOTs.
func (g predGen) wrap(s string, n int) string {
	for range n {
		if g.r.IntN(2) == 0 {
			s = "(" + s + ")"
		} else {
			s = g.kw("NOT") + " " + s
		}
	}
	return s
}

// TestCanonicalParsesBack is the property of String: the canonical form
// of every accepted predicate parses, to the same tree, and is its own
// canonical form. Inputs are random predicates of up to 150 terms, chains
// of up to 150 terms (66 OR'ed terms used to canonicalise 65 parentheses
// deep, past MaxDepth), nested near MaxDepth, and texts near MaxLen.
func TestCanonicalParsesBack(t *testing.T) {
	g := predGen{rand.New(rand.NewPCG(7, 28))}
	var inputs []string
	for i := range 3000 {
		size := 1 + g.r.IntN(12)
		if i%10 == 0 {
			size = 60 + g.r.IntN(90)
		}
		inputs = append(inputs, g.wrap(g.expr(size), g.r.IntN(4)))
	}
	for n := range 30 {
		inputs = append(inputs, g.wrap(g.expr(1+g.r.IntN(4)), MaxDepth-5+n%8))
	}
	terms := make([]string, 200)
	for i := range terms {
		terms[i] = fmt.Sprintf("a = %d", i)
	}
	for _, n := range []int{65, 66, 67, 200} {
		inputs = append(inputs, strings.Join(terms[:n], " OR "), strings.Join(terms[:n], " and "),
			"("+strings.Join(terms[:n], " OR ")+") AND b = 1")
	}
	// Texts near MaxLen whose canonical form is longer (quoted columns,
	// spaced operators, 1E5 as 100000.0).
	for _, term := range []string{"a=1", "a IN(1E5,1E5,1E5)", "x<>.5"} {
		k := MaxLen / (len(term) + 4)
		inputs = append(inputs, strings.Repeat(term+" OR ", k-1)+term)
	}
	accepted, refused := 0, 0
	for _, in := range inputs {
		p, err := Parse(in)
		if err != nil {
			if !errors.Is(err, ErrSyntax) {
				t.Fatalf("%.100q: %v", in, err)
			}
			if msg := err.Error(); !strings.Contains(msg, "nested deeper") && !strings.Contains(msg, "bytes") {
				t.Fatalf("generated %.200q refused: %v", in, err)
			}
			refused++
			continue
		}
		accepted++
		q, err := Parse(p.String())
		if err != nil {
			t.Fatalf("%.100q: canonical form %.200q does not parse: %v", in, p, err)
		}
		if !sameNode(p.root, q.root) {
			t.Fatalf("%.100q: canonical form %.200q parses to another predicate, %.200q", in, p, q)
		}
		if q.String() != p.String() {
			t.Fatalf("%.100q: canonical form %.200q is not its own: %.200q", in, p, q)
		}
	}
	t.Logf("%d predicates accepted and parsed back, %d refused (depth or length)", accepted, refused)
	if accepted < 3000 {
		t.Errorf("only %d of %d predicates accepted", accepted, len(inputs))
	}
}
