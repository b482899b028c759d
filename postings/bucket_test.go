package postings

import (
	"bytes"
	"fmt"
	"testing"
)

var allKeyTypes = []KeyType{
	{Name: "b", Kind: KindBool},
	{Name: "i", Kind: KindInt32},
	{Name: "l", Kind: KindInt64},
	{Name: "bin", Kind: KindBinary},
	{Name: "s", Kind: KindString},
	{Name: "f", Kind: KindFixed, FixedLen: 16},
	{Name: "d", Kind: KindDate},
}

func testSchemas() []Schema {
	var out []Schema
	for _, enc := range []string{EncodingSource, EncodingLVQ4, EncodingLVQ8} {
		for _, k := range allKeyTypes {
			if k.Kind == KindBool {
				continue // a single boolean key holds at most two rows; covered in multi-column keys
			}
			out = append(out, Schema{Encoding: enc, Dim: 7, Keys: []KeyType{k}})
		}
		out = append(out, Schema{Encoding: enc, Dim: 9, Keys: []KeyType{allKeyTypes[4], allKeyTypes[0], allKeyTypes[2]}})
		out = append(out, Schema{Encoding: enc, Dim: 8, Keys: allKeyTypes})
	}
	return out
}

func schemaName(s Schema) string {
	name := fmt.Sprintf("%s-d%d", s.Encoding, s.Dim)
	for _, k := range s.Keys {
		name += "-" + k.TypeName()
	}
	return name
}

// TestRoundTrip writes a bucket file for every encoding and key type and
// reads it back through the footer (ReadFile) and through the manifest
// ranges (DecodeRowGroup); both must return exactly the rows written, one
// CID per row group, no empty row group.
func TestRoundTrip(t *testing.T) {
	for _, s := range testSchemas() {
		t.Run(schemaName(s), func(t *testing.T) {
			counts := map[int32]int{3: 5, 4: 1, 9: 40, 10: 7}
			rows := testRows(t, s, counts, 1)
			data, fe := writeBucket(t, s, 0, rows, WriterOptions{MaxRowsPerRowGroup: 16})
			fe.Path = "indexes/00000000000000000000000000000001/1-00000000000000aa/ivf_postings/bucket-000000-000.parquet"
			// 40 rows at 16 per group → 3 groups for cid 9
			if fe.RowGroups != 1+1+3+1 || fe.Rows != 53 {
				t.Fatalf("row groups %d rows %d", fe.RowGroups, fe.Rows)
			}
			var got []Row
			footer, err := ReadFile(bytes.NewReader(data), int64(len(data)), s, func(g int, r Row) error {
				r.Key = bytes.Clone(r.Key)
				r.Code = bytes.Clone(r.Code)
				got = append(got, r)
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			var want []Row
			for _, c := range []int32{3, 4, 9, 10} {
				want = append(want, rows[c]...)
			}
			if len(got) != len(want) {
				t.Fatalf("read %d rows, wrote %d", len(got), len(want))
			}
			for i := range want {
				if !rowsEqual(got[i], want[i]) {
					t.Fatalf("row %d: got %+v want %+v", i, got[i], want[i])
				}
			}
			for g, r := range footer {
				w := fe.Ranges[g]
				if r.CID != w.CID || r.Offset != w.Offset || r.Length != w.Length || r.Rows != w.Rows {
					t.Fatalf("row group %d: footer %+v, writer %+v", g, r, w)
				}
			}
			m, err := NewManifest(s, 16, []FileEntry{fe})
			if err != nil {
				t.Fatal(err)
			}
			var b Batch
			for _, c := range []int32{3, 4, 9, 10} {
				b.Reset()
				for _, rg := range m.Ranges(c) {
					if err := DecodeRowGroup(s, data[rg.Offset:rg.Offset+rg.Length], rg, &b); err != nil {
						t.Fatal(err)
					}
				}
				if b.Len() != len(rows[c]) {
					t.Fatalf("cid %d: decoded %d rows, wrote %d", c, b.Len(), len(rows[c]))
				}
				for i, w := range rows[c] {
					if !rowsEqual(b.Row(i), w) {
						t.Fatalf("cid %d row %d: decoded %+v want %+v", c, i, b.Row(i), w)
					}
				}
			}
			if err := VerifyFile(bytes.NewReader(data), int64(len(data)), m, 0); err != nil {
				t.Fatal(err)
			}
		})
	}
}
