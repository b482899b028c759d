package postings

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/parquet-go/parquet-go"
)

// The tests in this file read every table this package writes with the
// other Go Parquet implementation (Apache Arrow's), to show the files are
// standard Parquet with the types the profile promises.

func arrowOpen(t *testing.T, data []byte) (*file.Reader, *pqarrow.FileReader) {
	t.Helper()
	rdr, err := file.NewParquetReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	fr, err := pqarrow.NewFileReader(rdr, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	return rdr, fr
}

func arrowKeyType(k KeyType) arrow.DataType {
	switch k.Kind {
	case KindBool:
		return arrow.FixedWidthTypes.Boolean
	case KindInt32:
		return arrow.PrimitiveTypes.Int32
	case KindInt64:
		return arrow.PrimitiveTypes.Int64
	case KindBinary:
		return arrow.BinaryTypes.Binary
	case KindString:
		return arrow.BinaryTypes.String
	case KindFixed:
		return &arrow.FixedSizeBinaryType{ByteWidth: k.FixedLen}
	default:
		return arrow.FixedWidthTypes.Date32
	}
}

func checkArrowSchema(t *testing.T, sc *arrow.Schema, names []string, types []arrow.DataType) {
	t.Helper()
	if sc.NumFields() != len(names) {
		t.Fatalf("arrow sees %d fields: %s", sc.NumFields(), sc)
	}
	for i, f := range sc.Fields() {
		if f.Name != names[i] || !arrow.TypeEqual(f.Type, types[i]) || f.Nullable {
			t.Fatalf("field %d: arrow sees %s %s nullable=%v, want %s %s required", i, f.Name, f.Type, f.Nullable, names[i], types[i])
		}
	}
}

// arrowKeyValue converts column c row i to a parquet.Value for AppendKey.
func arrowKeyValue(col arrow.Array, i int) parquet.Value {
	switch a := col.(type) {
	case *array.Boolean:
		return parquet.BooleanValue(a.Value(i))
	case *array.Int32:
		return parquet.Int32Value(a.Value(i))
	case *array.Int64:
		return parquet.Int64Value(a.Value(i))
	case *array.Binary:
		return parquet.ByteArrayValue(a.Value(i))
	case *array.String:
		return parquet.ByteArrayValue([]byte(a.Value(i)))
	case *array.FixedSizeBinary:
		return parquet.FixedLenByteArrayValue(a.Value(i))
	case *array.Date32:
		return parquet.Int32Value(int32(a.Value(i)))
	}
	panic(fmt.Sprintf("unexpected arrow array %T", col))
}

func TestArrowReadsPostings(t *testing.T) {
	for _, s := range testSchemas() {
		t.Run(schemaName(s), func(t *testing.T) {
			rows := testRows(t, s, map[int32]int{1: 3, 2: 9, 5: 1}, 11)
			data, fe := writeBucket(t, s, 0, rows, WriterOptions{MaxRowsPerRowGroup: 4})
			rdr, fr := arrowOpen(t, data)
			names := s.Columns()
			types := []arrow.DataType{arrow.PrimitiveTypes.Int32}
			for _, k := range s.Keys {
				types = append(types, arrowKeyType(k))
			}
			if s.HasCodes() {
				types = append(types, arrow.PrimitiveTypes.Float32, arrow.PrimitiveTypes.Float32, arrow.BinaryTypes.Binary)
			}
			sc, err := fr.Schema()
			if err != nil {
				t.Fatal(err)
			}
			checkArrowSchema(t, sc, names, types)
			if rdr.NumRowGroups() != len(fe.Ranges) {
				t.Fatalf("arrow sees %d row groups, writer %d", rdr.NumRowGroups(), len(fe.Ranges))
			}
			next := map[int32]int{}
			for g, r := range fe.Ranges {
				all := make([]int, len(names))
				for c := range all {
					all[c] = c
				}
				tbl, err := fr.ReadRowGroups(context.Background(), all, []int{g})
				if err != nil {
					t.Fatal(err)
				}
				if tbl.NumRows() != r.Rows {
					t.Fatalf("row group %d: arrow reads %d rows, manifest %d", g, tbl.NumRows(), r.Rows)
				}
				cols := make([]arrow.Array, tbl.NumCols())
				for c := range cols {
					if tbl.Column(c).Data().Len() == 0 || len(tbl.Column(c).Data().Chunks()) != 1 {
						t.Fatalf("column %d: %d chunks", c, len(tbl.Column(c).Data().Chunks()))
					}
					cols[c] = tbl.Column(c).Data().Chunk(0)
				}
				for i := range int(r.Rows) {
					cid := cols[0].(*array.Int32).Value(i)
					if cid != r.CID {
						t.Fatalf("row group %d row %d: cid %d, manifest %d", g, i, cid, r.CID)
					}
					vals := make([]parquet.Value, len(s.Keys))
					for k := range s.Keys {
						vals[k] = arrowKeyValue(cols[1+k], i)
					}
					key, err := s.AppendKey(nil, vals)
					if err != nil {
						t.Fatal(err)
					}
					got := Row{CID: cid, Key: key}
					if s.HasCodes() {
						k := 1 + len(s.Keys)
						got.Offset = cols[k].(*array.Float32).Value(i)
						got.Scale = cols[k+1].(*array.Float32).Value(i)
						got.Code = cols[k+2].(*array.Binary).Value(i)
					}
					want := rows[cid][next[cid]]
					next[cid]++
					if !rowsEqual(got, want) {
						t.Fatalf("row group %d row %d: arrow %+v, wrote %+v", g, i, got, want)
					}
				}
				tbl.Release()
			}
		})
	}
}

func TestArrowReadsCentroidsAndRoots(t *testing.T) {
	const dim = 3
	buckets := []int32{0, 0, 1}
	offs, scales := []float32{-1, 0, 1}, []float32{0.5, 0, 2}
	codes := []byte{1, 2, 3, 4, 5, 6, 7, 8, 9}
	var buf bytes.Buffer
	if err := WriteCentroids(&buf, dim, buckets, offs, scales, codes); err != nil {
		t.Fatal(err)
	}
	_, fr := arrowOpen(t, buf.Bytes())
	sc, _ := fr.Schema()
	i32, f32 := arrow.PrimitiveTypes.Int32, arrow.PrimitiveTypes.Float32
	checkArrowSchema(t, sc, []string{"cid", "cid_bucket", "offset", "scale", "code"}, []arrow.DataType{i32, i32, f32, f32, arrow.BinaryTypes.Binary})
	tbl, err := fr.ReadTable(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Release()
	for i := range 3 {
		if tbl.Column(0).Data().Chunk(0).(*array.Int32).Value(i) != int32(i) ||
			tbl.Column(1).Data().Chunk(0).(*array.Int32).Value(i) != buckets[i] ||
			tbl.Column(3).Data().Chunk(0).(*array.Float32).Value(i) != scales[i] ||
			!bytes.Equal(tbl.Column(4).Data().Chunk(0).(*array.Binary).Value(i), codes[i*dim:(i+1)*dim]) {
			t.Fatalf("centroid row %d differs", i)
		}
	}

	buf.Reset()
	offsets, roots := []int32{0, 2, 3}, []float32{1, 2, 3, 4, 5, 6}
	if err := WriteRoots(&buf, dim, offsets, roots); err != nil {
		t.Fatal(err)
	}
	_, fr = arrowOpen(t, buf.Bytes())
	sc, _ = fr.Schema()
	listType := arrow.ListOfField(arrow.Field{Name: "element", Type: f32, Nullable: false})
	checkArrowSchema(t, sc, []string{"cid_bucket", "cid_begin", "cid_end", "centroid"}, []arrow.DataType{i32, i32, i32, listType})
	rt, err := fr.ReadTable(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Release()
	list := rt.Column(3).Data().Chunk(0).(*array.List)
	vals := list.ListValues().(*array.Float32)
	for r := range 2 {
		start, end := list.ValueOffsets(r)
		if end-start != dim || rt.Column(1).Data().Chunk(0).(*array.Int32).Value(r) != offsets[r] || rt.Column(2).Data().Chunk(0).(*array.Int32).Value(r) != offsets[r+1] {
			t.Fatalf("root %d: list [%d, %d)", r, start, end)
		}
		for j := range dim {
			if vals.Value(int(start)+j) != roots[r*dim+j] {
				t.Fatalf("root %d element %d differs", r, j)
			}
		}
	}
}
