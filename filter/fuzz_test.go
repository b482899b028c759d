package filter

import (
	"errors"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
)

// FuzzParse checks that no input panics, that every error is an *Error
// with a position inside the text (or just past it), and that a parsed
// predicate's canonical form parses to the same predicate and is its own
// canonical form (TestCanonicalParsesBack is the same property over
// generated predicates); checked predicates are
// evaluated on a NULL row and on empty statistics.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"price < 50 AND category IN ('shoes','boots')",
		`"in stock" = TRUE OR NOT (qty BETWEEN 1 AND 5)`,
		"day >= DATE '2024-01-01' AND ts < TIMESTAMP '2024-01-01 10:00:00.5+02:00'",
		"category LIKE 'bo%' AND price IS NOT NULL",
		"id NOT IN (1, NULL, -2e3) OR 3 >= id",
		"((((id = 1))))", "'", `"`, "1e", "-.5", "NOT NOT NOT id = 1",
		strings.Repeat("id = 1 OR ", 65) + "id = 2", // canonicalised 65 deep once
		strings.Repeat("(", 64) + "id = 1" + strings.Repeat(")", 64),
		strings.Repeat("NOT ", 64) + "id = 1",
		strings.Repeat("id IN(1E5,1E5) OR ", MaxLen/19-1) + "id=1", // longer written canonically
	} {
		f.Add(s)
	}
	schema := testSchema()
	f.Fuzz(func(t *testing.T, s string) {
		p, err := Parse(s)
		if err != nil {
			var fe *Error
			if !errors.As(err, &fe) || !errors.Is(err, ErrSyntax) {
				t.Fatalf("%q: error %v is not a syntax *Error", s, err)
			}
			if fe.Pos < 1 || fe.Pos > len([]rune(s))+1 {
				t.Fatalf("%q: position %d outside the text", s, fe.Pos)
			}
			return
		}
		q, err := Parse(p.String())
		if err != nil {
			t.Fatalf("%q: canonical form %q does not parse: %v", s, p, err)
		}
		if q.String() != p.String() || !sameNode(p.root, q.root) {
			t.Fatalf("%q: canonical form %q parses to %q", s, p, q)
		}
		prog, err := p.Check(schema)
		if err != nil {
			return
		}
		row := make([]parquet.Value, len(prog.Columns()))
		prog.Eval(row)
		prog.MayMatch(make([]Stats, len(prog.Columns())))
	})
}
