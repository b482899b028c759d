package source

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/parqdb/parqdb/internal/source/sourcetest"
)

// TestBindFieldIDs: two files of one table written before and after its
// vector, key and payload columns were renamed (same Parquet field ids,
// other names). Bound by field id, every reader finds the fields in both
// files under the current names and under the former ones; without the
// binding the old file lacks them.
func TestBindFieldIDs(t *testing.T) {
	ctx := context.Background()
	mem := newMem()
	file := func(key, id, vec, title string, first int64) {
		tab := &sourcetest.Table{Fields: []sourcetest.Field{
			sourcetest.F(id, parquet.FieldID(parquet.Leaf(parquet.Int64Type), 1)),
			sourcetest.F(title, parquet.FieldID(parquet.Optional(parquet.String()), 2)),
			sourcetest.F(vec, parquet.FieldID(sourcetest.VectorNode(sourcetest.List3, false, false), 3)),
		}}
		for i := first; i < first+5; i++ {
			tab.Rows = append(tab.Rows, []any{i, "t" + string(rune('a'+i)), []float32{float32(i), 1}})
		}
		writeTable(t, mem, key, tab)
	}
	file("d/a.parquet", "id", "embedding", "title", 0) // before the renames
	file("d/b.parquet", "doc_id", "vec", "name", 5)    // after
	ids := map[string]int{"doc_id": 1, "name": 2, "vec": 3, "id": 1, "title": 2, "embedding": 3}

	unbound := mustOpen(t, mem, "d")
	if _, err := unbound.Check(ctx, l2("vec", "doc_id")); !errors.Is(err, ErrMissingField) {
		t.Fatalf("by name, the old file lacks the renamed fields: %v", err)
	}
	tab := mustOpen(t, mem, "d")
	tab.BindFieldIDs(ids, []string{"doc_id", "name", "vec"})
	if got := tab.Schema().Fields()[0].Name(); got != "doc_id" {
		t.Errorf("Schema's first field %q, want the current name doc_id", got)
	}
	for _, b := range []Binding{l2("vec", "doc_id"), l2("embedding", "id")} {
		l, err := tab.Check(ctx, b)
		if err != nil {
			t.Fatalf("Check(%s, %s): %v", b.VectorField, b.KeyFields[0], err)
		}
		s, err := scanAll(t, tab, l, ScanOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(s.keys) != 10 {
			t.Fatalf("scan: %d rows", len(s.keys))
		}
		for i := range s.keys {
			if s.keys[i][0].Int != int64(i) || s.vecs[i][0] != float32(i) {
				t.Fatalf("row %d: key %d vector %v", i, s.keys[i][0].Int, s.vecs[i])
			}
		}
		rows, err := tab.ReadRows(ctx, s.locs, []string{"name", b.KeyFields[0]})
		if err != nil {
			t.Fatal(err)
		}
		for i := range s.locs {
			m, err := rows.Map(i)
			if err != nil {
				t.Fatal(err)
			}
			if m["name"] != "t"+string(rune('a'+i)) || m[b.KeyFields[0]] != int64(i) {
				t.Fatalf("ReadRows row %d: %v", i, m)
			}
		}
	}
	var mu sync.Mutex
	n := 0
	err := tab.ScanColumns(ctx, []string{"name"}, nil, func(cb *ColumnBatch) error {
		mu.Lock()
		defer mu.Unlock()
		for i := 0; i < cb.N; i++ {
			if v := cb.Values[0][i]; v.IsNull() {
				t.Errorf("file %d row %d: null name", cb.File, cb.FirstRow+int64(i))
			}
			n++
		}
		return nil
	})
	if err != nil || n != 10 {
		t.Fatalf("ScanColumns(name): %d values, %v", n, err)
	}
}
