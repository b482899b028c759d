package pqnode_test

import (
	"bytes"
	"slices"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/parqdb/parqdb/internal/pqnode"
)

// TestGroupKeepsOrder: a schema of Group keeps the fields in the order
// given (parquet.Group would sort them by name), and a file written with
// it reads back with the columns in that order.
func TestGroupKeepsOrder(t *testing.T) {
	names := []string{"zeta", "alpha", "_distance"}
	schema := parquet.NewSchema("t", pqnode.Group(
		pqnode.Field(names[0], parquet.String()), pqnode.Field(names[1], parquet.Int(32)), pqnode.Field(names[2], parquet.Leaf(parquet.FloatType))))
	var buf bytes.Buffer
	w := parquet.NewGenericWriter[map[string]any](&buf, schema)
	if _, err := w.Write([]map[string]any{{"zeta": "z", "alpha": int32(7), "_distance": float32(0.5)}}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	f, err := parquet.OpenFile(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, fl := range f.Schema().Fields() {
		got = append(got, fl.Name())
	}
	if !slices.Equal(got, names) || f.NumRows() != 1 {
		t.Fatalf("fields %v (%d rows), want %v", got, f.NumRows(), names)
	}
}
