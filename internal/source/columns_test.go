package source

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/parqdb/parqdb/internal/source/sourcetest"
)

func TestScanColumns(t *testing.T) {
	b := newMem()
	tab := &sourcetest.Table{
		Fields: []sourcetest.Field{
			sourcetest.F("id", parquet.Leaf(parquet.Int64Type)),
			sourcetest.F("name", parquet.Optional(parquet.String())),
			sourcetest.F("tags", parquet.Repeated(parquet.String())),
		},
		RowGroupRows:   4,
		PageBufferSize: 64, // several pages per chunk
	}
	for i := range 10 {
		var name any = string(rune('a' + i))
		if i%3 == 0 {
			name = nil
		}
		tab.Rows = append(tab.Rows, []any{int64(i), name, []string{"x"}})
	}
	writeTable(t, b, "a.parquet", tab)
	src := mustOpen(t, b, "")

	type seen struct {
		rg       int
		first    int64
		ids      []int64
		nullName []bool
	}
	var mu sync.Mutex
	var got []seen
	var stats [][]ChunkStats
	err := src.ScanColumns(context.Background(), []string{"id", "name"}, func(file, rg int, st []ChunkStats) bool {
		mu.Lock()
		stats = append(stats, st)
		mu.Unlock()
		return rg != 1 // skip the middle row group
	}, func(cb *ColumnBatch) error {
		s := seen{rg: cb.RowGroup, first: cb.FirstRow}
		for i := range cb.N {
			s.ids = append(s.ids, cb.Values[0][i].Int64())
			s.nullName = append(s.nullName, cb.Values[1][i].IsNull())
		}
		mu.Lock()
		got = append(got, s)
		mu.Unlock()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(got, func(a, b seen) int { return a.rg - b.rg })
	if len(got) != 2 || got[0].rg != 0 || got[1].rg != 2 || got[1].first != 8 {
		t.Fatalf("row groups %+v, want 0 and 2", got)
	}
	if !slices.Equal(got[0].ids, []int64{0, 1, 2, 3}) || !slices.Equal(got[1].ids, []int64{8, 9}) {
		t.Errorf("ids %v %v", got[0].ids, got[1].ids)
	}
	if !slices.Equal(got[0].nullName, []bool{true, false, false, true}) || !slices.Equal(got[1].nullName, []bool{false, true}) {
		t.Errorf("nulls %v %v", got[0].nullName, got[1].nullName)
	}
	if len(stats) != 3 {
		t.Fatalf("%d stats, want 3", len(stats))
	}
	st := stats[0]
	if !st[0].HasMinMax || st[0].Min.Int64() != 0 || st[0].Max.Int64() != 3 || !st[0].HasNulls || st[0].Nulls != 0 || st[0].Rows != 4 {
		t.Errorf("id stats %+v", st[0])
	}
	if !st[1].HasMinMax || string(st[1].Min.ByteArray()) != "b" || string(st[1].Max.ByteArray()) != "c" || !st[1].HasNulls || st[1].Nulls != 2 {
		t.Errorf("name stats %+v", st[1])
	}

	err = src.ScanColumns(context.Background(), []string{"nope"}, nil, func(*ColumnBatch) error { return nil })
	if !errors.Is(err, ErrMissingField) {
		t.Errorf("missing column: %v", err)
	}
	err = src.ScanColumns(context.Background(), []string{"tags"}, nil, func(*ColumnBatch) error { return nil })
	if !errors.Is(err, ErrFieldType) {
		t.Errorf("list column: %v", err)
	}
}
