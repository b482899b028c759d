package postings

import (
	"bytes"
	"cmp"
	"errors"
	"testing"

	"github.com/parquet-go/parquet-go"
)

// TestKeyOrder: encoded keys compare like the tuples (signed integers,
// bytes byte-for-byte with prefixes first) and decode back.
func TestKeyOrder(t *testing.T) {
	s := Schema{Encoding: EncodingSource, Dim: 1, Keys: []KeyType{
		{Kind: KindBinary}, {Kind: KindInt32}, {Kind: KindInt64}, {Kind: KindBool}, {Kind: KindFixed, FixedLen: 2},
	}}
	bins := [][]byte{{}, {0}, {0, 0}, {0, 1}, {0, 0xFF}, {1}, {0xFF}, {0xFF, 0}}
	ints := []int32{-1 << 31, -1, 0, 1, 1<<31 - 1}
	longs := []int64{-1 << 63, -2, 0, 3, 1<<63 - 1}
	type tuple struct {
		b  []byte
		i  int32
		l  int64
		t  bool
		fx []byte
	}
	var tuples []tuple
	for _, b := range bins {
		for _, i := range ints {
			for _, l := range longs[:3] {
				for _, tv := range []bool{false, true} {
					tuples = append(tuples, tuple{b, i, l, tv, []byte{byte(i), 0}})
				}
			}
		}
	}
	for _, l := range longs {
		tuples = append(tuples, tuple{nil, 0, l, false, []byte{0xAB, 0xCD}})
	}
	enc := func(tp tuple) []byte {
		k, err := s.AppendKey(nil, []parquet.Value{
			parquet.ByteArrayValue(tp.b), parquet.Int32Value(tp.i), parquet.Int64Value(tp.l),
			parquet.BooleanValue(tp.t), parquet.FixedLenByteArrayValue(tp.fx),
		})
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	compare := func(a, b tuple) int {
		boolInt := func(v bool) int {
			if v {
				return 1
			}
			return 0
		}
		return cmp.Or(bytes.Compare(a.b, b.b), cmp.Compare(a.i, b.i), cmp.Compare(a.l, b.l), cmp.Compare(boolInt(a.t), boolInt(b.t)), bytes.Compare(a.fx, b.fx))
	}
	for i, a := range tuples {
		ka := enc(a)
		vals, err := s.DecodeKey(ka)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(vals[0].ByteArray(), a.b) || vals[1].Int32() != a.i || vals[2].Int64() != a.l || vals[3].Boolean() != a.t || !bytes.Equal(vals[4].ByteArray(), a.fx) {
			t.Fatalf("tuple %d decodes to %v", i, vals)
		}
		for j := i; j < len(tuples); j += 7 {
			b := tuples[j]
			if got, want := bytes.Compare(ka, enc(b)), compare(a, b); got != want {
				t.Fatalf("tuples %d, %d: encoded compare %d, tuple compare %d", i, j, got, want)
			}
		}
	}
}

func TestKeyErrors(t *testing.T) {
	s := Schema{Encoding: EncodingSource, Dim: 1, Keys: []KeyType{{Kind: KindInt64}, {Kind: KindFixed, FixedLen: 4}}}
	cases := map[string][]parquet.Value{
		"too few values":  {parquet.Int64Value(1)},
		"wrong kind":      {parquet.Int32Value(1), parquet.FixedLenByteArrayValue([]byte{1, 2, 3, 4})},
		"wrong fixed len": {parquet.Int64Value(1), parquet.FixedLenByteArrayValue([]byte{1, 2, 3})},
		"null":            {parquet.Int64Value(1), parquet.NullValue()},
	}
	for name, vals := range cases {
		t.Run(name, func(t *testing.T) {
			if _, err := s.AppendKey(nil, vals); !errors.Is(err, ErrSchema) {
				t.Fatalf("got %v, want ErrSchema", err)
			}
		})
	}
	for name, k := range map[string][]byte{"short": {1, 2, 3}, "trailing": make([]byte, 13), "bad bool": {2}} {
		t.Run("decode "+name, func(t *testing.T) {
			sc := s
			if name == "bad bool" {
				sc.Keys = []KeyType{{Kind: KindBool}}
			}
			if _, err := sc.DecodeKey(k); !errors.Is(err, ErrSchema) {
				t.Fatalf("got %v, want ErrSchema", err)
			}
		})
	}
}

func TestKeyTypeNames(t *testing.T) {
	for _, k := range allKeyTypes {
		got, err := ParseKeyType(k.TypeName())
		if err != nil || got.Kind != k.Kind || got.FixedLen != k.FixedLen {
			t.Fatalf("%s: %+v %v", k.TypeName(), got, err)
		}
	}
	for _, bad := range []string{"fixed[0]", "fixed[01]", "fixed[]", "fixed[65537]", "int32", "uuid", ""} {
		if _, err := ParseKeyType(bad); err == nil {
			t.Fatalf("ParseKeyType(%q) succeeded", bad)
		}
	}
}

func FuzzDecodeKey(f *testing.F) {
	s := Schema{Encoding: EncodingSource, Dim: 1, Keys: []KeyType{{Kind: KindString}, {Kind: KindInt32}, {Kind: KindBinary}}}
	k, _ := s.AppendKey(nil, []parquet.Value{parquet.ByteArrayValue([]byte("a\x00b")), parquet.Int32Value(-5), parquet.ByteArrayValue(nil)})
	f.Add(k)
	f.Fuzz(func(t *testing.T, b []byte) {
		vals, err := s.DecodeKey(b)
		if err != nil {
			return
		}
		again, err := s.AppendKey(nil, vals)
		if err != nil || !bytes.Equal(again, b) {
			t.Fatalf("decode/encode not canonical: %x → %x (%v)", b, again, err)
		}
	})
}
