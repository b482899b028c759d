package source

import (
	"context"
	"errors"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/parquet-go/parquet-go"

	"github.com/parqdb/parqdb/internal/source/sourcetest"
)

// TestApplyDeletes checks that after ApplyDeletes no reader returns,
// counts or checks a deleted row, and that every reader numbers the live
// rows the same way: the scans (sequential and parallel, keys only),
// ScanColumns, ReadRows, ReadVectors, BuildKeyIndex and CheckUniqueKeys.
// The deleted rows hold a duplicate key and a null vector, which would
// fail the contract if they were read.
func TestApplyDeletes(t *testing.T) {
	ctx := context.Background()
	r := rand.New(rand.NewPCG(3, 4))
	b := newMem()
	// a: 40 rows in row groups of 7; b: 10 rows, no deletes; c: every row deleted.
	aKeys, aVecs := seq(0, 40), randVectors(r, 40, 4)
	aKeys[39] = 3   // duplicate of row 3: deleted
	aVecs[20] = nil // null vector: deleted
	writeVectors(t, b, "d/a.parquet", aKeys, aVecs, sourcetest.Options{RowGroupRows: 7,
		Payload: []sourcetest.Payload{{Name: "n", Node: parquet.Leaf(parquet.Int64Type), Values: anyInts(aKeys)}}})
	bKeys, bVecs := seq(100, 10), randVectors(r, 10, 4)
	writeVectors(t, b, "d/b.parquet", bKeys, bVecs, sourcetest.Options{
		Payload: []sourcetest.Payload{{Name: "n", Node: parquet.Leaf(parquet.Int64Type), Values: anyInts(bKeys)}}})
	cKeys, cVecs := seq(200, 3), randVectors(r, 3, 4)
	writeVectors(t, b, "d/c.parquet", cKeys, cVecs, sourcetest.Options{
		Payload: []sourcetest.Payload{{Name: "n", Node: parquet.Leaf(parquet.Int64Type), Values: anyInts(cKeys)}}})
	tab := mustOpen(t, b, "d")
	// Deleted in a: a whole row group (7..13), scattered rows, the first row, the last rows.
	delA := roaring.BitmapOf(0, 5, 20, 21, 27, 38, 39)
	delA.AddRange(7, 14)
	del := map[string]*roaring.Bitmap{"d/a.parquet": delA, "d/c.parquet": roaring.BitmapOf(0, 1, 2)}
	if err := tab.ApplyDeletes(del); err != nil {
		t.Fatal(err)
	}
	// The expected live rows, in file order.
	var wantKeys []int64
	var wantVecs [][]float32
	for i, k := range aKeys {
		if !delA.Contains(uint32(i)) {
			wantKeys, wantVecs = append(wantKeys, k), append(wantVecs, aVecs[i])
		}
	}
	wantKeys, wantVecs = append(wantKeys, bKeys...), append(wantVecs, bVecs...)
	if got, want := tab.NumRows(), int64(len(wantKeys)); got != want {
		t.Fatalf("NumRows = %d, want %d", got, want)
	}
	for f, want := range map[int32]bool{0: true, 1: false, 2: true, -1: false, 3: false} {
		if got := tab.HasDeletes(f); got != want {
			t.Errorf("HasDeletes(%d) = %v, want %v", f, got, want)
		}
	}
	if got := tab.Deleted(); got != int64(delA.GetCardinality())+3 {
		t.Errorf("Deleted = %d", got)
	}
	if fs := tab.Files(); fs[0].Rows != 40-int64(delA.GetCardinality()) || fs[1].Rows != 10 || fs[2].Rows != 0 {
		t.Errorf("file rows %d %d %d", fs[0].Rows, fs[1].Rows, fs[2].Rows)
	}
	l, err := tab.Check(ctx, l2("embedding", "id"))
	if err != nil {
		t.Fatal(err)
	}
	for _, opt := range []ScanOptions{{}, {BatchRows: 3}, {BatchRows: 2, Workers: 3}} {
		s, err := scanAll(t, tab, l, opt)
		if err != nil {
			t.Fatalf("scan %+v: %v", opt, err)
		}
		if len(s.keys) != len(wantKeys) {
			t.Fatalf("scan %+v: %d rows, want %d", opt, len(s.keys), len(wantKeys))
		}
		for i := range s.keys {
			if s.keys[i][0].Int != wantKeys[i] || !slices.Equal(s.vecs[i], wantVecs[i]) {
				t.Fatalf("scan %+v: row %d is key %d, want %d", opt, i, s.keys[i][0].Int, wantKeys[i])
			}
		}
		// Locations number live rows: file a's live rows are 0..n-1, in order.
		next := map[int32]int64{}
		for i, loc := range s.locs {
			if loc.Row != next[loc.File] {
				t.Fatalf("scan %+v: row %d at %+v, want live row %d", opt, i, loc, next[loc.File])
			}
			next[loc.File]++
		}
		// Random access by the scan's locations reads the same rows.
		got := make([]float32, len(s.locs)*l.Dim)
		if err := tab.ReadVectors(ctx, l, s.locs, got); err != nil {
			t.Fatal(err)
		}
		for i := range s.locs {
			if !slices.Equal(got[i*l.Dim:(i+1)*l.Dim], wantVecs[i]) {
				t.Fatalf("ReadVectors row %d differs", i)
			}
		}
		rows, err := tab.ReadRows(ctx, s.locs, []string{"id", "n"})
		if err != nil {
			t.Fatal(err)
		}
		for i := range s.locs {
			if id := rows.Rows[i][0].Int64(); id != wantKeys[i] {
				t.Fatalf("ReadRows %+v is key %d, want %d", s.locs[i], id, wantKeys[i])
			}
		}
	}
	// A live row past the end of a file is outside the table.
	if _, err := tab.ReadRows(ctx, []RowLoc{{File: 0, Row: tab.Files()[0].Rows}}, nil); !errors.Is(err, ErrRowLoc) {
		t.Errorf("ReadRows past the live rows: %v, want ErrRowLoc", err)
	}
	// ScanColumns delivers the live values only, numbered like Scan.
	var mu sync.Mutex
	byOrd := map[RowLoc]int64{}
	err = tab.ScanColumns(ctx, []string{"n"}, nil, func(cb *ColumnBatch) error {
		mu.Lock()
		defer mu.Unlock()
		for i := 0; i < cb.N; i++ {
			byOrd[RowLoc{File: int32(cb.File), Row: cb.FirstRow + int64(i)}] = cb.Values[0][i].Int64()
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(byOrd) != len(wantKeys) {
		t.Fatalf("ScanColumns: %d rows, want %d", len(byOrd), len(wantKeys))
	}
	// ScanColumnChunks hands over whole row groups, deleted rows included;
	// LiveRows maps their positions to the same live numbering.
	chunkOrd := map[RowLoc]int64{}
	err = tab.ScanColumnChunks(ctx, []string{"n"}, nil, func(c *ColumnChunks) error {
		vals, err := readChunkValues(c.Chunks[0], c.N)
		if err != nil {
			return err
		}
		pos := make([]uint32, c.N)
		for i := range pos {
			pos[i] = uint32(i)
		}
		live := c.LiveRows(pos)
		mu.Lock()
		defer mu.Unlock()
		j := 0
		for i := range vals {
			if f := tab.files[c.File]; f.del != nil && f.del.Contains(uint32(c.FirstRow)+uint32(i)) {
				continue
			}
			chunkOrd[RowLoc{File: int32(c.File), Row: int64(live[j])}] = vals[i].Int64()
			j++
		}
		if j != len(live) {
			t.Errorf("file %d row group %d: LiveRows kept %d rows, %d are live", c.File, c.RowGroup, len(live), j)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !maps.Equal(chunkOrd, byOrd) {
		t.Errorf("LiveRows numbers rows unlike ScanColumns:\n%v\n%v", chunkOrd, byOrd)
	}
	ki, err := BuildKeyIndex(ctx, tab, l)
	if err != nil {
		t.Fatalf("BuildKeyIndex: %v (a deleted duplicate must not count)", err)
	}
	for _, k := range wantKeys {
		loc, ok := ki.Lookup(AppendKey(nil, []KeyValue{{Kind: l.Keys[0].Kind, Int: k}}))
		if !ok || byOrd[loc] != k {
			t.Fatalf("key %d: at %+v (found %v), where ScanColumns has %d", k, loc, ok, byOrd[loc])
		}
	}
	for _, k := range []int64{0, 8, 39} { // deleted keys (39 was written as 3)
		if k == 39 {
			continue
		}
		if loc, ok := ki.Lookup(AppendKey(nil, []KeyValue{{Kind: l.Keys[0].Kind, Int: k}})); ok {
			t.Errorf("deleted key %d found at %+v", k, loc)
		}
	}
	if err := CheckUniqueKeys(ctx, tab, l, nil, nil); err != nil {
		t.Errorf("CheckUniqueKeys: %v (the duplicate is deleted)", err)
	}
}

// TestApplyDeletesBad: deletes naming another file or a position outside
// the file are refused, naming the file, and leave the table unchanged.
func TestApplyDeletesBad(t *testing.T) {
	b := newMem()
	writeVectors(t, b, "d/a.parquet", seq(0, 5), randVectors(rand.New(rand.NewPCG(1, 1)), 5, 2), sourcetest.Options{})
	tab := mustOpen(t, b, "d")
	for _, tc := range []struct {
		del  map[string]*roaring.Bitmap
		want string
	}{
		{map[string]*roaring.Bitmap{"d/x.parquet": roaring.BitmapOf(1)}, `file "d/x.parquet"`},
		{map[string]*roaring.Bitmap{"d/a.parquet": roaring.BitmapOf(1, 5)}, "position 5 of a file of 5 rows"},
	} {
		err := tab.ApplyDeletes(tc.del)
		if !errors.Is(err, ErrRowLoc) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ApplyDeletes(%v) = %v, want ErrRowLoc with %q", tc.del, err, tc.want)
		}
		if tab.NumRows() != 5 || tab.Deleted() != 0 {
			t.Errorf("table changed: %d rows, %d deleted", tab.NumRows(), tab.Deleted())
		}
	}
}

func anyInts(v []int64) []any {
	out := make([]any, len(v))
	for i, x := range v {
		out[i] = x
	}
	return out
}
