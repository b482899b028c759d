package filter

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"
)

func testSchema() *parquet.Schema {
	return parquet.NewSchema("row", parquet.Group{
		"id":         parquet.Leaf(parquet.Int64Type),
		"price":      parquet.Optional(parquet.Leaf(parquet.DoubleType)),
		"qty":        parquet.Optional(parquet.Int(32)),
		"small":      parquet.Uint(16),
		"category":   parquet.Optional(parquet.String()),
		"in stock":   parquet.Optional(parquet.Leaf(parquet.BooleanType)),
		"day":        parquet.Optional(parquet.Date()),
		"ts":         parquet.Optional(parquet.Timestamp(parquet.Millisecond)),
		"dec":        parquet.Decimal(2, 9, parquet.Int32Type),
		"embedding":  parquet.Repeated(parquet.Leaf(parquet.FloatType)),
		"Mixed_Case": parquet.Leaf(parquet.Int32Type),
	})
}

// row values by column name; absent names are NULL.
type row map[string]any

func (r row) values(p *Program) []parquet.Value {
	out := make([]parquet.Value, len(p.Columns()))
	for i, c := range p.Columns() {
		v, ok := r[c]
		if !ok || v == nil {
			out[i] = parquet.NullValue()
			continue
		}
		switch v := v.(type) {
		case int64:
			out[i] = parquet.Int64Value(v)
		case int32:
			out[i] = parquet.Int32Value(v)
		case float64:
			out[i] = parquet.DoubleValue(v)
		case string:
			out[i] = parquet.ByteArrayValue([]byte(v))
		case bool:
			out[i] = parquet.BooleanValue(v)
		case time.Time:
			if c == "day" {
				out[i] = parquet.Int32Value(int32(v.Unix() / 86400))
			} else {
				out[i] = parquet.Int64Value(v.UnixMilli())
			}
		}
	}
	return out
}

func day(s string) time.Time { t, _ := time.Parse(time.DateOnly, s); return t }

func TestEval(t *testing.T) {
	full := row{"id": int64(7), "price": 19.5, "qty": int32(3), "small": int32(65000), "category": "boots",
		"in stock": true, "day": day("2024-03-01"), "ts": time.Date(2024, 3, 1, 12, 30, 0, 0, time.UTC), "Mixed_Case": int32(1)}
	empty := row{"id": int64(1)} // every optional column NULL
	tests := []struct {
		where     string
		full, nul bool // result on full, on empty
	}{
		{"id = 7", true, false},
		{"id != 7", false, true},
		{"id <> 7", false, true},
		{"id < 8 AND id <= 7 AND id > 6 AND id >= 7", true, false},
		{"7 = id", true, false},
		{"8 > id", true, true},
		{"price < 20", true, false},
		{"price < 19.5", false, false},
		{"price <= 19.5", true, false},
		{"price = 19.5", true, false},
		{"price > 19", true, false},
		{"qty = 3.0", true, false},
		{"qty < 3.5", true, false},
		{"qty > 2.5 AND qty < 3", false, false},
		{"small = 65000", true, false}, // unsigned 16-bit
		{"price != 1", true, false},    // NULL != 1 is unknown
		{"NOT price != 1", false, false},
		{"price IS NULL", false, true},
		{"price IS NOT NULL", true, false},
		{"NOT (price IS NULL)", true, false},
		{"category = 'boots'", true, false},
		{"category > 'a' AND category < 'c'", true, false},
		{"category IN ('shoes', 'boots')", true, false},
		{"category NOT IN ('shoes', 'boots')", false, false},
		{"category NOT IN ('shoes')", true, false},
		{"category NOT IN ('shoes', NULL)", false, false}, // unknown: boots might be the NULL
		{"category IN ('boots', NULL)", true, false},
		{"category LIKE 'bo%'", true, false},
		{"category LIKE 'boots'", true, false},
		{"category LIKE 'boot'", false, false},
		{"category NOT LIKE 'sh%'", true, false},
		{"category LIKE '%'", true, false},
		{`"in stock" = TRUE`, true, false},
		{`"in stock" = false`, false, false},
		{`"in stock" != FALSE`, true, false},
		{"day = DATE '2024-03-01'", true, false},
		{"day = '2024-03-01'", true, false},
		{"day BETWEEN '2024-01-01' AND '2024-12-31'", true, false},
		{"day NOT BETWEEN '2024-01-01' AND '2024-12-31'", false, false},
		{"day < DATE '1969-12-31'", false, false},
		{"ts = TIMESTAMP '2024-03-01 12:30:00'", true, false},
		{"ts = '2024-03-01T12:30:00Z'", true, false},
		{"ts = '2024-03-01T14:30:00+02:00'", true, false},
		{"ts > '2024-03-01 12:29:59.9995'", true, false},
		{"ts < '2024-03-01 12:30:00.0005'", true, false},
		{"ts > '2024-03-01 12:30:00.0005'", false, false},
		{"ts >= DATE '2024-03-01'", true, false},
		{"id BETWEEN 1 AND 7", true, true},
		{"id BETWEEN 8 AND 1", false, false},
		{"id BETWEEN NULL AND 10", false, false},
		{"NOT id BETWEEN NULL AND 5", true, false}, // 7: unknown AND false = false; 1: unknown AND true = unknown
		{"id = NULL", false, false},
		{"NOT id = NULL", false, false},
		{"price < 20 OR category = 'x'", true, false},
		{"price IS NULL OR id = 7", true, true},
		{"price > 100 OR price IS NULL", false, true},
		{"NOT (price > 100 OR category = 'x')", true, false},
		{"(id = 7 OR id = 1) AND NOT (price IS NOT NULL AND price > 50)", true, true},
		{"Mixed_Case = 1", true, false},
	}
	s := testSchema()
	for _, tt := range tests {
		t.Run(tt.where, func(t *testing.T) {
			p, err := Parse(tt.where)
			if err != nil {
				t.Fatal(err)
			}
			prog, err := p.Check(s)
			if err != nil {
				t.Fatal(err)
			}
			if got := prog.Eval(full.values(prog)); got != tt.full {
				t.Errorf("full row: got %v, want %v", got, tt.full)
			}
			if got := prog.Eval(empty.values(prog)); got != tt.nul {
				t.Errorf("null row: got %v, want %v", got, tt.nul)
			}
		})
	}
}

func TestErrors(t *testing.T) {
	tests := []struct {
		where string
		err   error
		pos   int
		msg   []string // substrings of the message
	}{
		{"", ErrSyntax, 1, []string{"empty"}},
		{"price <", ErrSyntax, 8, []string{"ends early"}},
		{"price < 'a", ErrSyntax, 9, []string{"unterminated string"}},
		{`"price < 1`, ErrSyntax, 1, []string{"unterminated quoted identifier"}},
		{"price < 5 AND", ErrSyntax, 14, []string{"ends early"}},
		{"price < 5 category = 'a'", ErrSyntax, 11, []string{`"category"`, "AND, OR"}},
		{"(price < 5", ErrSyntax, 11, []string{"')'"}},
		{"price ! 5", ErrSyntax, 7, []string{"'!='"}},
		{"price @ 5", ErrSyntax, 7, []string{"'@'"}},
		{"price IN 5", ErrSyntax, 10, []string{"'(' after IN"}},
		{"price IN (1 2)", ErrSyntax, 13, []string{"',' or ')'"}},
		{"price IS 5", ErrSyntax, 10, []string{"NULL or NOT NULL"}},
		{"price NOT = 5", ErrSyntax, 11, []string{"IN, BETWEEN or LIKE after NOT"}},
		{"price BETWEEN 1 OR 2", ErrSyntax, 17, []string{"AND between"}},
		{"category LIKE '%boot'", ErrSyntax, 15, []string{"prefix patterns"}},
		{"category LIKE 'a_b%'", ErrSyntax, 15, []string{"prefix patterns"}},
		{"day = DATE '2024-13-01'", ErrSyntax, 12, []string{"not a date", "YYYY-MM-DD"}},
		{"ts = TIMESTAMP 'noon'", ErrSyntax, 16, []string{"not a timestamp"}},
		{"price < 1e999", ErrSyntax, 9, []string{"out of range"}},
		{"5 < 6", ErrSyntax, 5, []string{"column name"}},
		{"price", ErrSyntax, 6, []string{"ends early"}},
		{"AND", ErrSyntax, 1, []string{"expected a column"}},
		{strings.Repeat("(", 100) + "id = 1" + strings.Repeat(")", 100), ErrSyntax, 0, []string{"nested deeper"}},
		{"prce < 50", ErrUnknownColumn, 1, []string{`"prce"`, "category, day", "id, in stock, price"}},
		{"id = 1 AND \"Price\" > 2", ErrUnknownColumn, 12, []string{`did you mean "price"`}},
		{"mixed_case = 1", ErrUnknownColumn, 1, []string{`did you mean "Mixed_Case"`}},
		{"price = 'cheap'", ErrType, 9, []string{`column "price" is float`, "literal is string"}},
		{"category = 5", ErrType, 12, []string{`"category" is string`, "integer"}},
		{"category IN ('a', 5)", ErrType, 19, []string{"integer"}},
		{`"in stock" = 1`, ErrType, 14, []string{"boolean", "integer"}},
		{"day = 20240101", ErrType, 7, []string{"date", "integer"}},
		{"day = 'yesterday'", ErrType, 7, []string{"is a date", "YYYY-MM-DD"}},
		{"ts < 'soon'", ErrType, 6, []string{"is a timestamp"}},
		{"day = TIMESTAMP '2024-01-01'", ErrType, 7, []string{"date", "timestamp"}},
		{"id LIKE 'a%'", ErrType, 9, []string{"LIKE needs a string column", "integer"}},
		{"dec = 1", ErrType, 1, []string{"INT32 (DECIMAL", "not support"}},
		{"embedding = 1", ErrType, 1, []string{"list or group"}},
	}
	s := testSchema()
	for _, tt := range tests {
		t.Run(tt.where, func(t *testing.T) {
			p, err := Parse(tt.where)
			if err == nil {
				_, err = p.Check(s)
			}
			if !errors.Is(err, tt.err) {
				t.Fatalf("got %v, want %v", err, tt.err)
			}
			var fe *Error
			if !errors.As(err, &fe) {
				t.Fatalf("%v is not an *Error", err)
			}
			if tt.pos > 0 && fe.Pos != tt.pos {
				t.Errorf("position %d, want %d: %v", fe.Pos, tt.pos, err)
			}
			for _, m := range tt.msg {
				if !strings.Contains(err.Error(), m) {
					t.Errorf("%q does not say %q", err, m)
				}
			}
		})
	}
}

func TestCanonical(t *testing.T) {
	tests := []struct{ in, want string }{
		{"a = 1", `"a" = 1`},
		{"5 < a", `"a" > 5`},
		{"a <> 'it''s'", `"a" != 'it''s'`},
		{"a=1 and b=2 or not c is null", `"a" = 1 AND "b" = 2 OR NOT "c" IS NULL`},
		{"a = 1 or b = 2 and c = 3", `"a" = 1 OR "b" = 2 AND "c" = 3`},
		{"(a = 1 or b = 2) and c = 3", `("a" = 1 OR "b" = 2) AND "c" = 3`},
		{"a = 1 or (b = 2 or c = 3)", `"a" = 1 OR ("b" = 2 OR "c" = 3)`},
		{"((a = 1 or b = 2)) or c = 3", `"a" = 1 OR "b" = 2 OR "c" = 3`},
		{"a = 1 and (b = 2 and c = 3)", `"a" = 1 AND ("b" = 2 AND "c" = 3)`},
		{"not (a = 1 and b = 2) and not not c = 3", `NOT ("a" = 1 AND "b" = 2) AND NOT NOT "c" = 3`},
		{`"odd ""name""" in (1, 2.5, -3, 1e3)`, `"odd ""name""" IN (1, 2.5, -3, 1000.0)`},
		{"d between date '2024-01-01' and '2024-02-01'", `"d" BETWEEN DATE '2024-01-01' AND '2024-02-01'`},
		{"t >= timestamp '2024-01-01 10:00:00+01:00'", `"t" >= TIMESTAMP '2024-01-01 09:00:00Z'`},
		{"s not like 'ab%'", `"s" NOT LIKE 'ab%'`},
		{"b = true and x is not null", `"b" = TRUE AND "x" IS NOT NULL`},
		{"ünï = 1", `"ünï" = 1`},
	}
	for _, tt := range tests {
		p, err := Parse(tt.in)
		if err != nil {
			t.Fatalf("%s: %v", tt.in, err)
		}
		if p.String() != tt.want {
			t.Errorf("%s: got %s, want %s", tt.in, p, tt.want)
		}
		q, err := Parse(p.String())
		if err != nil || q.String() != p.String() {
			t.Errorf("%s: round trip gave %v, %v", tt.in, q, err)
		}
	}
}

func TestColumns(t *testing.T) {
	p, err := Parse(`b = 1 AND (a = 2 OR b = 3) AND "c d" IS NULL`)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(p.Columns(), ","); got != "b,a,c d" {
		t.Errorf("columns %s", got)
	}
}

func TestMayMatch(t *testing.T) {
	i64 := func(lo, hi int64, nulls, rows int64) Stats {
		return Stats{Min: parquet.Int64Value(lo), Max: parquet.Int64Value(hi), HasMinMax: true, Nulls: nulls, HasNulls: true, Rows: rows}
	}
	str := func(lo, hi string) Stats {
		return Stats{Min: parquet.ByteArrayValue([]byte(lo)), Max: parquet.ByteArrayValue([]byte(hi)), HasMinMax: true, Rows: 10}
	}
	tests := []struct {
		where string
		st    []Stats
		want  bool
	}{
		{"id = 5", []Stats{i64(1, 4, 0, 10)}, false},
		{"id = 5", []Stats{i64(1, 5, 0, 10)}, true},
		{"id > 5", []Stats{i64(1, 5, 0, 10)}, false},
		{"id >= 5", []Stats{i64(1, 5, 0, 10)}, true},
		{"id < 1", []Stats{i64(1, 5, 0, 10)}, false},
		{"id != 3", []Stats{i64(3, 3, 0, 10)}, false},
		{"NOT id != 3", []Stats{i64(3, 3, 0, 10)}, true},
		{"NOT id = 3", []Stats{i64(3, 3, 0, 10)}, false},
		{"NOT id = 3", []Stats{i64(3, 4, 0, 10)}, true},
		{"id IN (7, 9)", []Stats{i64(1, 5, 0, 10)}, false},
		{"id IN (7, 3)", []Stats{i64(1, 5, 0, 10)}, true},
		{"id NOT IN (3, NULL)", []Stats{i64(1, 5, 0, 10)}, false},
		{"id BETWEEN 6 AND 9", []Stats{i64(1, 5, 0, 10)}, false},
		{"id BETWEEN 5 AND 9", []Stats{i64(1, 5, 0, 10)}, true},
		{"id IS NULL", []Stats{i64(1, 5, 0, 10)}, false},
		{"id IS NULL", []Stats{i64(1, 5, 2, 10)}, true},
		{"id IS NULL", []Stats{{Rows: 10}}, true}, // null count unknown
		{"id IS NOT NULL", []Stats{{Nulls: 10, HasNulls: true, Rows: 10}}, false},
		{"id = 1", []Stats{{Nulls: 10, HasNulls: true, Rows: 10}}, false},
		{"id = 1", []Stats{{Rows: 10}}, true}, // no statistics
		{"id = 1 OR id = 9", []Stats{i64(5, 6, 0, 10)}, false},
		{"id = 5 OR id = 9", []Stats{i64(5, 6, 0, 10)}, true},
		{"id = 5 AND id = 9", []Stats{i64(5, 6, 0, 10)}, false},
		{"id = NULL", []Stats{i64(5, 6, 0, 10)}, false},
		{"category LIKE 'bo%'", []Stats{str("apple", "banana")}, false},
		{"category LIKE 'bo%'", []Stats{str("apple", "boa")}, true},
		{"category LIKE 'bo%'", []Stats{str("bob", "cat")}, true},
		{"category LIKE 'bo%'", []Stats{str("cat", "dog")}, false},
		{"category NOT LIKE 'bo%'", []Stats{str("cat", "dog")}, true},
		{"price != 2", []Stats{{Min: parquet.DoubleValue(2), Max: parquet.DoubleValue(2), HasMinMax: true, Rows: 10}}, true}, // NaN is not in the statistics
		{"price > 2", []Stats{{Min: parquet.DoubleValue(0), Max: parquet.DoubleValue(2), HasMinMax: true, Rows: 10}}, false},
	}
	s := testSchema()
	for _, tt := range tests {
		t.Run(tt.where, func(t *testing.T) {
			p, err := Parse(tt.where)
			if err != nil {
				t.Fatal(err)
			}
			prog, err := p.Check(s)
			if err != nil {
				t.Fatal(err)
			}
			if got := prog.MayMatch(tt.st); got != tt.want {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}
