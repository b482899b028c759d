package source

import (
	"bytes"
	"cmp"
	"context"
	"math/rand/v2"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/parqdb/parqdb/internal/source/sourcetest"
)

// TestKeyTypes reads every supported key type, in one composite key.
func TestKeyTypes(t *testing.T) {
	f := sourcetest.F
	fields := []sourcetest.Field{
		f("b", parquet.Leaf(parquet.BooleanType)),
		f("i32", parquet.Leaf(parquet.Int32Type)),
		f("i8", parquet.Int(8)),
		f("i16", parquet.Int(16)),
		f("i64", parquet.Leaf(parquet.Int64Type)),
		f("bin", parquet.Leaf(parquet.ByteArrayType)),
		f("str", parquet.Optional(parquet.String())),
		f("enum", parquet.Enum()),
		f("fix", parquet.Leaf(parquet.FixedLenByteArrayType(4))),
		f("day", parquet.Date()),
		f("vec", sourcetest.VectorNode(sourcetest.List3, false, false)),
	}
	wantKinds := []KeyKind{KindBool, KindInt32, KindInt32, KindInt32, KindInt64, KindBinary, KindString, KindString, KindFixed, KindDate}
	var names []string
	for _, fl := range fields[:len(fields)-1] {
		names = append(names, fl.Name)
	}
	rows := [][]any{
		{true, int32(-5), int8(-128), int16(300), int64(-1 << 62), []byte{0, 1, 0xff}, "héllo", "RED", []byte("abcd"), int32(19000), []float32{1, 2}},
		{false, int32(7), int8(127), int16(-300), int64(1 << 62), []byte{}, "", "", []byte{0, 0, 0, 0}, int32(-1), []float32{3, 4}},
	}
	b := newMem()
	writeTable(t, b, "k.parquet", &sourcetest.Table{Fields: fields, Rows: rows})
	st := mustOpen(t, b, "k.parquet")
	l, err := st.Check(context.Background(), l2("vec", names...))
	if err != nil {
		t.Fatal(err)
	}
	for i, k := range l.Keys {
		if k.Kind != wantKinds[i] || k.Name != names[i] {
			t.Errorf("key %d: %s %v, want %s %v", i, k.Name, k.Kind, names[i], wantKinds[i])
		}
	}
	if l.Keys[8].Len != 4 || l.Keys[8].TypeName() != "fixed[4]" {
		t.Errorf("fixed key type %+v", l.Keys[8])
	}
	got, err := scanAll(t, st, l, ScanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := [][]KeyValue{
		{{KindBool, 1, nil}, {KindInt32, -5, nil}, {KindInt32, -128, nil}, {KindInt32, 300, nil}, {KindInt64, -1 << 62, nil},
			{KindBinary, 0, []byte{0, 1, 0xff}}, {KindString, 0, []byte("héllo")}, {KindString, 0, []byte("RED")},
			{KindFixed, 0, []byte("abcd")}, {KindDate, 19000, nil}},
		{{KindBool, 0, nil}, {KindInt32, 7, nil}, {KindInt32, 127, nil}, {KindInt32, -300, nil}, {KindInt64, 1 << 62, nil},
			{KindBinary, 0, []byte{}}, {KindString, 0, []byte{}}, {KindString, 0, []byte{}},
			{KindFixed, 0, []byte{0, 0, 0, 0}}, {KindDate, -1, nil}},
	}
	for r := range want {
		for k := range want[r] {
			g, w := got.keys[r][k], want[r][k]
			if g.Kind != w.Kind || g.Int != w.Int || !bytes.Equal(g.Bytes, w.Bytes) {
				t.Errorf("row %d key %s = %+v, want %+v", r, names[k], g, w)
			}
		}
		enc := AppendKey(nil, got.keys[r])
		dec, err := DecodeKey(l.Keys, enc)
		if err != nil {
			t.Fatalf("DecodeKey: %v", err)
		}
		for k := range dec {
			if !dec[k].Equal(got.keys[r][k]) && !(len(dec[k].Bytes) == 0 && len(got.keys[r][k].Bytes) == 0) {
				t.Errorf("row %d: decoded key %d = %+v, want %+v", r, k, dec[k], got.keys[r][k])
			}
		}
	}
	if s := FormatKey(l.Keys[:2], got.keys[0][:2]); s != "b=true, i32=-5" {
		t.Errorf("FormatKey = %q", s)
	}
	if s := (KeyValue{Kind: KindDate, Int: 19000}).String(); s != "2022-01-08" {
		t.Errorf("date formats as %q", s)
	}
}

func compareTuples(a, b []KeyValue) int {
	for i := range a {
		var c int
		switch a[i].Kind {
		case KindBinary, KindString, KindFixed:
			c = bytes.Compare(a[i].Bytes, b[i].Bytes)
		default:
			c = cmp.Compare(a[i].Int, b[i].Int)
		}
		if c != 0 {
			return c
		}
	}
	return 0
}

// TestKeyEncodingOrder checks that the canonical encoding is injective,
// decodable and ordered like the tuples, including strings followed by a
// field whose first byte is 0xFF.
func TestKeyEncodingOrder(t *testing.T) {
	schemas := [][]KeyType{
		{{Kind: KindString}, {Kind: KindInt32}},
		{{Kind: KindBinary}, {Kind: KindFixed, Len: 2}, {Kind: KindBinary}},
		{{Kind: KindInt64}, {Kind: KindBool}, {Kind: KindString}},
		{{Kind: KindDate}, {Kind: KindBinary}},
	}
	r := rand.New(rand.NewPCG(3, 4))
	randBytes := func(n int) []byte {
		b := make([]byte, r.IntN(n+1))
		for i := range b {
			b[i] = []byte{0, 1, 0xff, 'a'}[r.IntN(4)]
		}
		return b
	}
	gen := func(types []KeyType) []KeyValue {
		out := make([]KeyValue, len(types))
		for i, kt := range types {
			v := KeyValue{Kind: kt.Kind}
			switch kt.Kind {
			case KindBool:
				v.Int = int64(r.IntN(2))
			case KindInt32, KindDate:
				v.Int = int64([]int32{-1 << 31, -1, 0, 1, 1<<31 - 1, 0x7F000000, int32(r.Uint32())}[r.IntN(7)])
			case KindInt64:
				v.Int = []int64{-1 << 63, -1, 0, 1, 1<<63 - 1, int64(r.Uint64())}[r.IntN(6)]
			case KindFixed:
				v.Bytes = randBytes(kt.Len)
				for len(v.Bytes) < kt.Len {
					v.Bytes = append(v.Bytes, 0xff)
				}
			default:
				v.Bytes = randBytes(4)
			}
			out[i] = v
		}
		return out
	}
	for si, types := range schemas {
		for range 3000 {
			a, b := gen(types), gen(types)
			ea, eb := AppendKey(nil, a), AppendKey(nil, b)
			if got, want := bytes.Compare(ea, eb), compareTuples(a, b); got != want {
				t.Fatalf("schema %d: compare(%v, %v) = %d on encodings %x %x, want %d", si, a, b, got, ea, eb, want)
			}
			da, err := DecodeKey(types, ea)
			if err != nil {
				t.Fatalf("schema %d: DecodeKey(%x): %v", si, ea, err)
			}
			if compareTuples(da, a) != 0 {
				t.Fatalf("schema %d: decoded %v, want %v", si, da, a)
			}
		}
	}
	// A string followed by an int whose encoding starts with 0xFF.
	types := schemas[0]
	k := []KeyValue{{Kind: KindString, Bytes: []byte("a")}, {Kind: KindInt32, Int: 0x7F000000}}
	enc := AppendKey(nil, k)
	if want := []byte{'a', 0, 1, 0xff, 0, 0, 0}; !bytes.Equal(enc, want) {
		t.Fatalf("encoding %x, want %x", enc, want)
	}
	if _, err := DecodeKey(types, enc[:len(enc)-1]); err == nil {
		t.Error("DecodeKey accepted a truncated key")
	}
	if _, err := DecodeKey(types, append(enc, 0)); err == nil {
		t.Error("DecodeKey accepted trailing bytes")
	}
}

func FuzzDecodeKey(f *testing.F) {
	types := []KeyType{{Kind: KindString}, {Kind: KindInt32}, {Kind: KindFixed, Len: 2}, {Kind: KindBool}}
	f.Add(AppendKey(nil, []KeyValue{{Kind: KindString, Bytes: []byte("a\x00b")}, {Kind: KindInt32, Int: 5}, {Kind: KindFixed, Bytes: []byte{0, 0xff}}, {Kind: KindBool, Int: 1}}))
	f.Add([]byte{0, 0xff, 0, 1})
	f.Fuzz(func(t *testing.T, enc []byte) {
		vals, err := DecodeKey(types, enc)
		if err != nil {
			return
		}
		if re := AppendKey(nil, vals); !bytes.Equal(re, enc) {
			t.Fatalf("DecodeKey(%x) re-encodes as %x", enc, re)
		}
	})
}
