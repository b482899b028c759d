package icesource

import (
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/parquet-go/parquet-go"
)

// TestEqualityValues: the equality-delete match encoding. Null equals null
// (Iceberg spec, "Equality Delete Files") and nothing else; an int column
// matches a long delete value (type promotion); floats compare as doubles;
// strings and binaries by bytes, never across lengths.
func TestEqualityValues(t *testing.T) {
	enc := func(vs ...parquet.Value) string {
		var b []byte
		for _, v := range vs {
			b = appendEqValue(b, v)
		}
		return string(b)
	}
	for _, c := range []struct {
		name string
		a, b []parquet.Value
		eq   bool
	}{
		{"null = null", []parquet.Value{parquet.NullValue()}, []parquet.Value{parquet.NullValue()}, true},
		{"null != 0", []parquet.Value{parquet.NullValue()}, []parquet.Value{parquet.Int64Value(0)}, false},
		{"null != empty string", []parquet.Value{parquet.NullValue()}, []parquet.Value{parquet.ByteArrayValue(nil)}, false},
		{"int = long", []parquet.Value{parquet.Int32Value(-7)}, []parquet.Value{parquet.Int64Value(-7)}, true},
		{"long != other long", []parquet.Value{parquet.Int64Value(7)}, []parquet.Value{parquet.Int64Value(8)}, false},
		{"float = double", []parquet.Value{parquet.FloatValue(1.5)}, []parquet.Value{parquet.DoubleValue(1.5)}, true},
		{"string", []parquet.Value{parquet.ByteArrayValue([]byte("ab"))}, []parquet.Value{parquet.ByteArrayValue([]byte("ab"))}, true},
		{"tuple boundaries", []parquet.Value{parquet.ByteArrayValue([]byte("a")), parquet.ByteArrayValue([]byte("bc"))},
			[]parquet.Value{parquet.ByteArrayValue([]byte("ab")), parquet.ByteArrayValue([]byte("c"))}, false},
		{"tuple with null", []parquet.Value{parquet.Int64Value(1), parquet.NullValue()}, []parquet.Value{parquet.Int64Value(1), parquet.NullValue()}, true},
		{"bool", []parquet.Value{parquet.BooleanValue(true)}, []parquet.Value{parquet.BooleanValue(false)}, false},
	} {
		if got := enc(c.a...) == enc(c.b...); got != c.eq {
			t.Errorf("%s: equal = %v, want %v", c.name, got, c.eq)
		}
	}
}

// TestFieldIDs: the names a snapshot binds by field id are its schema's
// names, then former names of other schemas that no current field took
// (newest schema first).
func TestFieldIDs(t *testing.T) {
	f := func(id int, name string) iceberg.NestedField {
		return iceberg.NestedField{ID: id, Name: name, Type: iceberg.PrimitiveTypes.Int64}
	}
	s0 := iceberg.NewSchema(0, f(1, "id"), f(2, "a"), f(3, "b"))
	s1 := iceberg.NewSchema(1, f(1, "key"), f(2, "b"), f(3, "old_b")) // a→b, b→old_b
	s2 := iceberg.NewSchema(2, f(1, "doc_id"), f(2, "c"), f(3, "old_b"))
	got := fieldIDs(s2, []*iceberg.Schema{s0, s1, s2})
	want := map[string]int{"doc_id": 1, "c": 2, "old_b": 3, "key": 1, "b": 2, "id": 1, "a": 2}
	if len(got) != len(want) {
		t.Fatalf("fieldIDs = %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Fatalf("fieldIDs = %v, want %v", got, want)
		}
	}
}
