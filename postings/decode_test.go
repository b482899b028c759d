package postings

import (
	"bytes"
	"errors"
	"hash/crc32"
	"os"
	"testing"
)

// fixture writes a small lvq4 file with a string+long key and returns it.
func fixture(t testing.TB) (Schema, []byte, *Manifest) {
	s := Schema{Encoding: EncodingLVQ4, Dim: 5, Keys: []KeyType{{Name: "s", Kind: KindString}, {Name: "l", Kind: KindInt64}}}
	rows := testRows(t, s, map[int32]int{0: 3, 2: 20}, 7)
	data, fe := writeBucket(t, s, 0, rows, WriterOptions{MaxRowsPerRowGroup: 8})
	fe.Path = "indexes/00000000000000000000000000000001/1-00000000000000aa/ivf_postings/bucket-000000-000.parquet"
	m, err := NewManifest(s, 4, []FileEntry{fe})
	if err != nil {
		t.Fatal(err)
	}
	return s, data, m
}

// TestDecodeRowGroupRejects corrupts a valid range in each way the decoder
// must notice.
func TestDecodeRowGroupRejects(t *testing.T) {
	s, data, m := fixture(t)
	rg := m.Ranges(2)[1]
	good := data[rg.Offset : rg.Offset+rg.Length]
	recrc := func(b []byte, r Range) Range { r.CRC32C = crc32.Checksum(b, castagnoli); return r }
	cases := []struct {
		name   string
		data   func() []byte
		rg     func(Range) Range
		schema func(Schema) Schema
	}{
		{"short data", func() []byte { return good[:len(good)-1] }, nil, nil},
		{"crc mismatch", func() []byte { b := bytes.Clone(good); b[len(b)/2] ^= 1; return b }, nil, nil},
		{"wrong cid", nil, func(r Range) Range { r.CID = 3; return r }, nil},
		{"too many rows", nil, func(r Range) Range { r.Rows++; return r }, nil},
		{"too few rows", nil, func(r Range) Range { r.Rows--; return r }, nil},
		{"rows beyond bytes", nil, func(r Range) Range { r.Rows = 1 << 40; return r }, nil},
		{"other schema", nil, nil, func(s Schema) Schema { s.Encoding = EncodingLVQ8; return s }},
		{"other key type", nil, nil, func(s Schema) Schema {
			s.Keys = []KeyType{{Kind: KindInt64}, {Kind: KindInt64}}
			return s
		}},
		{"garbage header", func() []byte { b := bytes.Clone(good); b[0] = 0xFF; return b }, nil, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d, r, sc := good, rg, s
			if c.data != nil {
				d = c.data()
				if c.name != "crc mismatch" {
					r = recrc(d, r)
				}
				r.Length = int64(len(d))
				if c.name == "short data" {
					r.Length++
				}
			}
			if c.rg != nil {
				r = c.rg(r)
			}
			if c.schema != nil {
				sc = c.schema(s)
			}
			var b Batch
			b.CodeLen = s.CodeLen()
			before := len(b.CIDs)
			err := DecodeRowGroup(sc, d, r, &b)
			if err == nil {
				t.Fatal("decoded a corrupt range")
			}
			if !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrSchema) {
				t.Fatalf("error %v wraps no sentinel", err)
			}
			if len(b.CIDs) != before || len(b.Keys) != 0 || len(b.Codes) != 0 {
				t.Fatalf("batch changed on error: %d rows", len(b.CIDs))
			}
		})
	}
}

// TestDecodeAppends decodes two row groups into one batch.
func TestDecodeAppends(t *testing.T) {
	s, data, m := fixture(t)
	var b Batch
	total := 0
	for _, rg := range m.RowGroups {
		if err := DecodeRowGroup(s, data[rg.Offset:rg.Offset+rg.Length], rg, &b); err != nil {
			t.Fatal(err)
		}
		total += int(rg.Rows)
	}
	if b.Len() != total || len(b.Codes) != total*s.CodeLen() || len(b.KeyEnds) != total {
		t.Fatalf("batch of %d rows (codes %d), want %d", b.Len(), len(b.Codes), total)
	}
	keys := map[string]bool{}
	for i := range b.Len() {
		if _, err := s.DecodeKey(b.Key(i)); err != nil {
			t.Fatalf("row %d key: %v", i, err)
		}
		keys[string(b.Key(i))] = true
	}
	if len(keys) != total {
		t.Fatalf("%d distinct keys, want %d", len(keys), total)
	}
}

// FuzzDecodeRowGroup feeds arbitrary bytes (seeded with real row groups)
// to DecodeRowGroup; it must return an error or rows, never panic. The
// CRC is recomputed so that the page parser, not the checksum, is tested.
func FuzzDecodeRowGroup(f *testing.F) {
	s, data, m := fixture(f)
	for _, rg := range m.RowGroups {
		f.Add(data[rg.Offset:rg.Offset+rg.Length], uint16(rg.Rows), uint8(0))
	}
	seeds, _ := os.ReadFile("testdata/rowgroup-lvq8-long.bin")
	if len(seeds) > 0 {
		f.Add(seeds, uint16(3), uint8(1))
	}
	schemas := []Schema{s, {Encoding: EncodingLVQ8, Dim: 4, Keys: []KeyType{{Kind: KindInt64}}}, {Encoding: EncodingSource, Dim: 4, Keys: allKeyTypes}}
	f.Fuzz(func(t *testing.T, b []byte, rows uint16, which uint8) {
		sc := schemas[int(which)%len(schemas)]
		rg := Range{CID: 2, Length: int64(len(b)), Rows: int64(rows), CRC32C: crc32.Checksum(b, castagnoli)}
		if which >= 128 {
			rg.CID = 0
		}
		var bt Batch
		if err := DecodeRowGroup(sc, b, rg, &bt); err == nil && bt.Len() != int(rows) {
			t.Fatalf("decoded %d rows, range says %d", bt.Len(), rows)
		}
	})
}
