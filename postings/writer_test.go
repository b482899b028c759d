package postings

import (
	"bytes"
	"errors"
	"math"
	"testing"

	"github.com/parquet-go/parquet-go"
)

func TestBucketWriterRules(t *testing.T) {
	s := Schema{Encoding: EncodingLVQ8, Dim: 4, Keys: []KeyType{{Name: "id", Kind: KindInt64}}}
	key := func(i int64) []byte {
		k, err := s.AppendKey(nil, []parquet.Value{parquet.Int64Value(i)})
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	row := func(cid int32, i int64) Row {
		return Row{CID: cid, Key: key(i), Offset: -1, Scale: 0.5, Code: []byte{1, 2, 3, 255}}
	}
	cases := []struct {
		name string
		run  func(bw *BucketWriter) error
		want error
	}{
		{"descending cid", func(bw *BucketWriter) error {
			if err := bw.WriteCID(5, []Row{row(5, 1)}); err != nil {
				return err
			}
			return bw.WriteCID(4, []Row{row(4, 2)})
		}, ErrOrder},
		{"row of another cid", func(bw *BucketWriter) error { return bw.WriteCID(5, []Row{row(6, 1)}) }, ErrOrder},
		{"negative cid", func(bw *BucketWriter) error { return bw.WriteCID(-1, []Row{row(-1, 1)}) }, ErrOrder},
		{"short code", func(bw *BucketWriter) error {
			r := row(1, 1)
			r.Code = r.Code[:3]
			return bw.WriteCID(1, []Row{r})
		}, ErrSchema},
		{"nan offset", func(bw *BucketWriter) error {
			r := row(1, 1)
			r.Offset = float32(math.NaN())
			return bw.WriteCID(1, []Row{r})
		}, ErrSchema},
		{"negative scale", func(bw *BucketWriter) error {
			r := row(1, 1)
			r.Scale = -1
			return bw.WriteCID(1, []Row{r})
		}, ErrSchema},
		{"infinite reconstruction", func(bw *BucketWriter) error {
			r := row(1, 1)
			r.Offset, r.Scale = math.MaxFloat32, math.MaxFloat32
			return bw.WriteCID(1, []Row{r})
		}, ErrSchema},
		{"malformed key", func(bw *BucketWriter) error {
			r := row(1, 1)
			r.Key = r.Key[:7]
			return bw.WriteCID(1, []Row{r})
		}, ErrSchema},
		{"file full", func(bw *BucketWriter) error {
			rows := []Row{row(1, 1), row(1, 2), row(1, 3), row(1, 4), row(1, 5)}
			return bw.WriteCID(1, rows) // 5 rows at 2 per group = 3 groups > 2
		}, ErrFileFull},
		{"write after close", func(bw *BucketWriter) error {
			if err := bw.WriteCID(1, []Row{row(1, 1)}); err != nil {
				return err
			}
			if _, err := bw.Close(); err != nil {
				return err
			}
			return bw.WriteCID(2, []Row{row(2, 2)})
		}, ErrOrder},
		{"empty file", func(bw *BucketWriter) error {
			if err := bw.WriteCID(1, nil); err != nil {
				return err
			}
			_, err := bw.Close()
			return err
		}, ErrOrder},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			bw, err := NewBucketWriter(&bytes.Buffer{}, s, 0, WriterOptions{MaxRowsPerRowGroup: 2, MaxRowGroups: 2})
			if err != nil {
				t.Fatal(err)
			}
			if err := c.run(bw); !errors.Is(err, c.want) {
				t.Fatalf("error %v, want %v", err, c.want)
			}
		})
	}
}

// TestFileFullKeepsWriterUsable: after ErrFileFull the file closes with
// what it had, and nothing of the refused call was written.
func TestFileFullKeepsWriterUsable(t *testing.T) {
	s := Schema{Encoding: EncodingSource, Dim: 4, Keys: []KeyType{{Name: "id", Kind: KindInt32}}}
	rows := testRows(t, s, map[int32]int{1: 2, 2: 5}, 3)
	var buf bytes.Buffer
	bw, err := NewBucketWriter(&buf, s, 0, WriterOptions{MaxRowsPerRowGroup: 2, MaxRowGroups: 2})
	if err != nil {
		t.Fatal(err)
	}
	if err := bw.WriteCID(1, rows[1]); err != nil {
		t.Fatal(err)
	}
	if err := bw.WriteCID(2, rows[2]); !errors.Is(err, ErrFileFull) {
		t.Fatalf("got %v, want ErrFileFull", err)
	}
	fe, err := bw.Close()
	if err != nil {
		t.Fatal(err)
	}
	if fe.Rows != 2 || fe.RowGroups != 1 {
		t.Fatalf("entry %+v", fe)
	}
}

// TestOneCIDPerRowGroup streams one cid over several WriteCID calls and
// splits it; every row group holds one cid and none is empty.
func TestOneCIDPerRowGroup(t *testing.T) {
	s := Schema{Encoding: EncodingLVQ8, Dim: 3, Keys: []KeyType{{Name: "id", Kind: KindInt64}}}
	rows := testRows(t, s, map[int32]int{0: 1, 7: 10, 8: 3}, 9)
	var buf bytes.Buffer
	bw, err := NewBucketWriter(&buf, s, 0, WriterOptions{MaxRowsPerRowGroup: 4})
	if err != nil {
		t.Fatal(err)
	}
	for _, part := range []struct {
		cid      int32
		from, to int
	}{{0, 0, 1}, {7, 0, 6}, {7, 6, 10}, {8, 0, 3}} {
		if err := bw.WriteCID(part.cid, rows[part.cid][part.from:part.to]); err != nil {
			t.Fatal(err)
		}
	}
	fe, err := bw.Close()
	if err != nil {
		t.Fatal(err)
	}
	// cid 0: 1 group; cid 7: 6 → 4+2, 4 → 4; cid 8: 1.
	wantCIDs := []int32{0, 7, 7, 7, 8}
	wantRows := []int64{1, 4, 2, 4, 3}
	if len(fe.Ranges) != len(wantCIDs) {
		t.Fatalf("%d row groups, want %d", len(fe.Ranges), len(wantCIDs))
	}
	for i, r := range fe.Ranges {
		if r.CID != wantCIDs[i] || r.Rows != wantRows[i] || r.RowGroup != int32(i) {
			t.Fatalf("row group %d: %+v", i, r)
		}
	}
	data := buf.Bytes()
	f, err := parquet.OpenFile(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	for g, rg := range f.RowGroups() {
		if rg.NumRows() == 0 {
			t.Fatalf("row group %d empty", g)
		}
	}
	_, err = ReadFile(bytes.NewReader(data), int64(len(data)), s, func(g int, r Row) error {
		if r.CID != wantCIDs[g] {
			t.Fatalf("row group %d holds cid %d, want only %d", g, r.CID, wantCIDs[g])
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestColumnsAndEncodings checks the physical layout parquet-go produced:
// column order cid, key_1…key_K, offset, scale, code; every chunk PLAIN,
// uncompressed, no dictionary; code without statistics bounds.
func TestColumnsAndEncodings(t *testing.T) {
	s := Schema{Encoding: EncodingLVQ8, Dim: 8, Keys: []KeyType{{Name: "a", Kind: KindString}, {Name: "b", Kind: KindDate}}}
	rows := testRows(t, s, map[int32]int{1: 100}, 5)
	data, _ := writeBucket(t, s, 0, rows, WriterOptions{})
	f, err := parquet.OpenFile(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"cid", "key_1", "key_2", "offset", "scale", "code"}
	cols := f.Schema().Columns()
	if len(cols) != len(want) {
		t.Fatalf("columns %v", cols)
	}
	for i, c := range cols {
		if len(c) != 1 || c[0] != want[i] {
			t.Fatalf("column %d is %v, want %s", i, c, want[i])
		}
	}
	for _, cc := range f.Metadata().RowGroups[0].Columns {
		md := cc.MetaData
		if md.Codec != 0 || md.DictionaryPageOffset != 0 {
			t.Fatalf("column %v: codec %v dictionary at %d", md.PathInSchema, md.Codec, md.DictionaryPageOffset)
		}
		for _, e := range md.Encoding {
			if e != 0 && e != 3 { // PLAIN, RLE (levels)
				t.Fatalf("column %v encoding %v", md.PathInSchema, e)
			}
		}
		if md.PathInSchema[0] == "code" && (len(md.Statistics.MinValue) > 0 || len(md.Statistics.MaxValue) > 0) {
			t.Fatalf("code column has bounds")
		}
	}
}
