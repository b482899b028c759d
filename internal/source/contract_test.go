package source

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/parqdb/parqdb/internal/source/sourcetest"
	"github.com/parqdb/parqdb/metadata"
)

// TestContractRows covers every per-row rule: each case writes a source
// whose row `row` of file "data/f1.parquet" (the second file; three row
// groups) breaks one rule and checks the error's rule, file, row, key and
// field, and that nothing before it is reported.
func TestContractRows(t *testing.T) {
	f32 := func(v ...float32) []any {
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = x
		}
		return out
	}
	good := f32(1, 2, 3)
	type tc struct {
		name    string
		shape   sourcetest.Shape
		double  bool
		metric  string
		bad     any  // the vector at the bad row
		nullKey bool // the key at the bad row is null instead
		rule    error
		detail  string
	}
	cases := []tc{
		{name: "NaN", bad: f32(1, float32(math.NaN()), 3), rule: ErrNaN, detail: "element 1"},
		{name: "NaN double", double: true, bad: []any{1.0, 2.0, math.NaN()}, rule: ErrNaN, detail: "element 2"},
		{name: "+Inf float", bad: f32(float32(math.Inf(1)), 2, 3), rule: ErrInf, detail: "element 0 is +Inf"},
		{name: "-Inf double", double: true, bad: []any{1.0, math.Inf(-1), 3.0}, rule: ErrInf, detail: "element 1 is -Inf"},
		{name: "double overflows float32", double: true, bad: []any{1.0, 2.0, 1e39}, rule: ErrInf, detail: "element 2 is +Inf"},
		{name: "double rounds to -Inf", double: true, bad: []any{-3.4028235677973366e38, 2.0, 3.0}, rule: ErrInf, detail: "element 0 is -Inf"},
		{name: "too short", bad: f32(1, 2), rule: ErrDimension, detail: "2 elements, want 3"},
		{name: "too long", bad: f32(1, 2, 3, 4), rule: ErrDimension, detail: "4 elements, want 3"},
		{name: "empty list", bad: []any{}, rule: ErrDimension, detail: "0 elements, want 3"},
		{name: "empty repeated", shape: sourcetest.Repeated, bad: []float32{}, rule: ErrDimension, detail: "0 elements, want 3"},
		{name: "null vector", bad: nil, rule: ErrNullVector},
		{name: "null element", shape: sourcetest.List3Nullable, bad: []any{float32(1), nil, float32(3)}, rule: ErrNullElement, detail: "element 1"},
		{name: "null item (FixedSizeList shape)", shape: sourcetest.List3Item, bad: []any{nil, float32(2), float32(3)}, rule: ErrNullElement, detail: "element 0"},
		{name: "null key", nullKey: true, bad: good, rule: ErrNullKey},
		{name: "zero norm cosine", metric: metadata.MetricCosine, bad: f32(0, 0, 0), rule: ErrZeroNorm},
		{name: "negative zero norm cosine", metric: metadata.MetricCosine, bad: f32(float32(math.Copysign(0, -1)), 0, 0), rule: ErrZeroNorm},
	}
	const badRow = 13 // in the third row group of f1 (row groups of 5)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := newMem()
			for fi, name := range []string{"data/f0.parquet", "data/f1.parquet"} {
				tab := &sourcetest.Table{
					Fields: []sourcetest.Field{
						sourcetest.F("id", parquet.Optional(parquet.Leaf(parquet.Int64Type))),
						sourcetest.F("vec", sourcetest.VectorNode(c.shape, c.double, false)),
					},
					RowGroupRows: 5,
				}
				for i := range 20 {
					var v any = good
					if c.shape == sourcetest.Repeated {
						v = []float32{1, 2, 3}
					}
					if c.double {
						v = []any{1.0, 2.0, 3.0}
					}
					var key any = int64(fi*100 + i)
					if fi == 1 && i == badRow {
						if c.nullKey {
							key = nil
						} else {
							v = c.bad
						}
					}
					// A later row breaks another rule: it must not be the one reported.
					if fi == 1 && i == badRow+2 {
						key = nil
					}
					tab.Rows = append(tab.Rows, []any{key, v})
				}
				writeTable(t, b, name, tab)
			}
			st := mustOpen(t, b, "data")
			bind := l2("vec", "id")
			if c.metric != "" {
				bind.Metric = c.metric
			}
			bind.Dim = 3
			l, err := st.Check(context.Background(), bind)
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range []int{1, 4} {
				var rows int
				_, err = scanAll(t, st, l, ScanOptions{BatchRows: 4, Workers: w})
				_ = rows
				checkRowErr(t, err, c.rule, "data/f1.parquet", badRow, c.nullKey, c.detail)
			}
			// ReadVectors reports vector rules for the row too.
			if !c.nullKey {
				dst := make([]float32, 3)
				err := st.ReadVectors(context.Background(), l, []RowLoc{{1, badRow}}, dst)
				if !errors.Is(err, c.rule) || !strings.Contains(err.Error(), `"data/f1.parquet": row 13`) {
					t.Errorf("ReadVectors: %v, want %v", err, c.rule)
				}
			}
		})
	}
}

func checkRowErr(t *testing.T, err error, rule error, file string, row int64, nullKey bool, detail string) {
	t.Helper()
	if !errors.Is(err, rule) || !errors.Is(err, ErrContract) {
		t.Fatalf("error %v, want %v (a contract violation)", err, rule)
	}
	var se *Error
	if !errors.As(err, &se) {
		t.Fatalf("error %T is not *Error", err)
	}
	wantKey := "id=113"
	field := "vec"
	if nullKey {
		wantKey = "id=null"
		field = "id"
	}
	if se.File != file || se.Row != row || se.Key != wantKey || se.Field != field {
		t.Fatalf("error names file %q row %d key %q field %q; want %q %d %q %q (%v)", se.File, se.Row, se.Key, se.Field, file, row, wantKey, field, err)
	}
	msg := err.Error()
	for _, want := range []string{`file "` + file + `"`, "row 13", "(key " + wantKey + ")", `field "` + field + `"`, rule.Error(), detail} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q lacks %q", msg, want)
		}
	}
}

// TestContractSchema covers every schema rule that Check enforces.
func TestContractSchema(t *testing.T) {
	vec := sourcetest.VectorNode(sourcetest.List3, false, false)
	id := parquet.Leaf(parquet.Int64Type)
	row := []any{int64(1), []float32{1, 2}}
	type tc struct {
		name   string
		fields []sourcetest.Field
		rows   [][]any
		bind   Binding
		rule   error
		want   string // in the message
	}
	f := sourcetest.F
	cases := []tc{
		{name: "_distance column", fields: []sourcetest.Field{f("id", id), f("vec", vec), f("_distance", parquet.Leaf(parquet.FloatType))},
			rows: [][]any{{int64(1), []float32{1, 2}, float32(0)}}, bind: l2("vec", "id"), rule: ErrReservedField, want: `field "_distance"`},
		{name: "missing vector", fields: []sourcetest.Field{f("id", id), f("vec", vec)}, rows: [][]any{row},
			bind: l2("embedding", "id"), rule: ErrMissingField, want: `field "embedding"`},
		{name: "missing key", fields: []sourcetest.Field{f("id", id), f("vec", vec)}, rows: [][]any{row},
			bind: l2("vec", "doc"), rule: ErrMissingField, want: `field "doc"`},
		{name: "vector of int", fields: []sourcetest.Field{f("id", id), f("vec", parquet.List(parquet.Leaf(parquet.Int32Type)))},
			rows: [][]any{{int64(1), []int32{1, 2}}}, bind: l2("vec", "id"), rule: ErrFieldType, want: "elements of INT32"},
		{name: "vector is a string", fields: []sourcetest.Field{f("id", id), f("vec", parquet.String())},
			rows: [][]any{{int64(1), "x"}}, bind: l2("vec", "id"), rule: ErrFieldType, want: "non-repeated primitive"},
		{name: "vector is a scalar float", fields: []sourcetest.Field{f("id", id), f("vec", parquet.Leaf(parquet.FloatType))},
			rows: [][]any{{int64(1), float32(1)}}, bind: l2("vec", "id"), rule: ErrFieldType, want: "non-repeated primitive"},
		{name: "vector of lists", fields: []sourcetest.Field{f("id", id), f("vec", parquet.List(parquet.List(parquet.Leaf(parquet.FloatType))))},
			rows: [][]any{{int64(1), [][]float32{{1}}}}, bind: l2("vec", "id"), rule: ErrFieldType, want: "not a float or double"},
		{name: "vector is a map", fields: []sourcetest.Field{f("id", id), f("vec", parquet.Optional(parquet.Map(parquet.String(), parquet.Leaf(parquet.FloatType))))},
			rows: [][]any{{int64(1), nil}}, bind: l2("vec", "id"), rule: ErrFieldType, want: "vec"},
		{name: "vector of float16", fields: []sourcetest.Field{f("id", id), f("vec", parquet.List(parquet.Leaf(parquet.FixedLenByteArrayType(2))))},
			rows: [][]any{{int64(1), [][]byte{{0, 0}}}}, bind: l2("vec", "id"), rule: ErrFieldType, want: "FIXED_LEN_BYTE_ARRAY"},
		{name: "float key", fields: []sourcetest.Field{f("id", parquet.Leaf(parquet.FloatType)), f("vec", vec)},
			rows: [][]any{{float32(1), []float32{1, 2}}}, bind: l2("vec", "id"), rule: ErrUnsupportedKey, want: "FLOAT"},
		{name: "unsigned key", fields: []sourcetest.Field{f("id", parquet.Uint(32)), f("vec", vec)},
			rows: [][]any{{int32(1), []float32{1, 2}}}, bind: l2("vec", "id"), rule: ErrUnsupportedKey, want: "INT(32,false)"},
		{name: "timestamp key", fields: []sourcetest.Field{f("id", parquet.Timestamp(parquet.Millisecond)), f("vec", vec)},
			rows: [][]any{{int64(1), []float32{1, 2}}}, bind: l2("vec", "id"), rule: ErrUnsupportedKey, want: "TIMESTAMP"},
		{name: "decimal key", fields: []sourcetest.Field{f("id", parquet.Decimal(0, 9, parquet.Int32Type)), f("vec", vec)},
			rows: [][]any{{int32(1), []float32{1, 2}}}, bind: l2("vec", "id"), rule: ErrUnsupportedKey, want: "DECIMAL"},
		{name: "uuid key", fields: []sourcetest.Field{f("id", parquet.UUID()), f("vec", vec)},
			rows: [][]any{{make([]byte, 16), []float32{1, 2}}}, bind: l2("vec", "id"), rule: ErrUnsupportedKey, want: "UUID"},
		{name: "json key", fields: []sourcetest.Field{f("id", parquet.JSON()), f("vec", vec)},
			rows: [][]any{{"{}", []float32{1, 2}}}, bind: l2("vec", "id"), rule: ErrUnsupportedKey, want: "JSON"},
		{name: "repeated key", fields: []sourcetest.Field{f("id", parquet.Repeated(id)), f("vec", vec)},
			rows: [][]any{{[]int64{1}, []float32{1, 2}}}, bind: l2("vec", "id"), rule: ErrUnsupportedKey, want: "non-repeated"},
		{name: "group key", fields: []sourcetest.Field{f("id", sourcetest.Group(false, false, f("a", id))), f("vec", vec)},
			rows: [][]any{{map[string]any{"a": int64(1)}, []float32{1, 2}}}, bind: l2("vec", "id"), rule: ErrUnsupportedKey, want: `field "id"`},
		{name: "vector as key", fields: []sourcetest.Field{f("id", id), f("vec", vec)}, rows: [][]any{row},
			bind: l2("vec", "id", "vec"), rule: ErrVectorKey, want: `field "vec"`},
		{name: "duplicate key field", fields: []sourcetest.Field{f("id", id), f("vec", vec)}, rows: [][]any{row},
			bind: l2("vec", "id", "id"), rule: ErrKeyFields, want: "listed twice"},
		{name: "no key fields", fields: []sourcetest.Field{f("id", id), f("vec", vec)}, rows: [][]any{row},
			bind: l2("vec"), rule: ErrKeyFields, want: "no key fields"},
		{name: "empty source", fields: []sourcetest.Field{f("id", id), f("vec", vec)}, rows: nil,
			bind: l2("vec", "id"), rule: ErrEmpty, want: "no rows"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := newMem()
			writeTable(t, b, "s.parquet", &sourcetest.Table{Fields: c.fields, Rows: c.rows})
			st := mustOpen(t, b, "s.parquet")
			_, err := st.Check(context.Background(), c.bind)
			if !errors.Is(err, c.rule) || !errors.Is(err, ErrContract) {
				t.Fatalf("Check: %v, want %v", err, c.rule)
			}
			msg := err.Error()
			for _, want := range []string{c.want, c.rule.Error()} {
				if !strings.Contains(msg, want) {
					t.Errorf("message %q lacks %q", msg, want)
				}
			}
			if c.rule != ErrVectorKey && c.rule != ErrKeyFields && c.rule != ErrEmpty && !strings.Contains(msg, `file "s.parquet"`) {
				t.Errorf("message %q does not name the file", msg)
			}
		})
	}
	t.Run("unknown metric", func(t *testing.T) {
		b := newMem()
		writeTable(t, b, "s.parquet", &sourcetest.Table{Fields: []sourcetest.Field{f("id", id), f("vec", vec)}, Rows: [][]any{row}})
		st := mustOpen(t, b, "s.parquet")
		bind := l2("vec", "id")
		bind.Metric = "dot"
		if _, err := st.Check(context.Background(), bind); !errors.Is(err, ErrBinding) {
			t.Fatalf("Check: %v, want ErrBinding", err)
		}
	})
	t.Run("key type differs between files", func(t *testing.T) {
		b := newMem()
		writeTable(t, b, "d/a.parquet", &sourcetest.Table{Fields: []sourcetest.Field{f("id", id), f("vec", vec)}, Rows: [][]any{row}})
		writeTable(t, b, "d/b.parquet", &sourcetest.Table{Fields: []sourcetest.Field{f("id", parquet.String()), f("vec", vec)}, Rows: [][]any{{"k", []float32{1, 2}}}})
		st := mustOpen(t, b, "d/")
		_, err := st.Check(context.Background(), l2("vec", "id"))
		if !errors.Is(err, ErrFieldType) || !strings.Contains(err.Error(), `file "d/b.parquet"`) {
			t.Fatalf("Check: %v", err)
		}
	})
	t.Run("null first vector with inferred dimension", func(t *testing.T) {
		b := newMem()
		writeTable(t, b, "s.parquet", &sourcetest.Table{Fields: []sourcetest.Field{f("id", id), f("vec", vec)}, Rows: [][]any{{int64(1), nil}}})
		st := mustOpen(t, b, "s.parquet")
		_, err := st.Check(context.Background(), l2("vec", "id"))
		if !errors.Is(err, ErrNullVector) || !strings.Contains(err.Error(), "row 0") {
			t.Fatalf("Check: %v", err)
		}
	})
}

// TestFloat32Conversion pins clarification 5 at the float32 boundary.
func TestFloat32Conversion(t *testing.T) {
	const below = 3.4028235677973362e38 // just below the halfway point to 2^128: rounds to MaxFloat32
	b := newMem()
	writeTable(t, b, "s.parquet", &sourcetest.Table{
		Fields: []sourcetest.Field{sourcetest.F("id", parquet.Leaf(parquet.Int64Type)), sourcetest.F("vec", sourcetest.VectorNode(sourcetest.List3, true, false))},
		Rows:   [][]any{{int64(1), []float64{below, -below, 1.0000000596046448, 1e-46, 0.1}}},
	})
	st := mustOpen(t, b, "s.parquet")
	l, err := st.Check(context.Background(), l2("vec", "id"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := scanAll(t, st, l, ScanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := []float32{math.MaxFloat32, -math.MaxFloat32, 1, 0, 0.1}
	for i, w := range want {
		if got.vecs[0][i] != w || math.Signbit(float64(got.vecs[0][i])) != math.Signbit(float64(w)) {
			t.Errorf("element %d = %g, want %g", i, got.vecs[0][i], w)
		}
	}
}
