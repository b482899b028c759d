package source

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"github.com/parqdb/parqdb/internal/keyenc"
	"strconv"
	"strings"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"
)

// KeyKind is the canonical type of a source-key field (ivf-index-schema §4).
type KeyKind uint8

// The supported key kinds and the Parquet columns that map to them:
//
//	KindBool    BOOLEAN, no annotation
//	KindInt32   INT32 with no annotation or INT(8|16|32, signed)
//	KindInt64   INT64 with no annotation or INT(64, signed)
//	KindBinary  BYTE_ARRAY, no annotation
//	KindString  BYTE_ARRAY with STRING (UTF8) or ENUM
//	KindFixed   FIXED_LEN_BYTE_ARRAY(L), no annotation
//	KindDate    INT32 with DATE
//
// Anything else (unsigned integers, decimals, timestamps, times, UUID,
// JSON, BSON, INT96, FLOAT, DOUBLE, nested or repeated fields) is refused
// with ErrUnsupportedKey.
const (
	KindBool KeyKind = iota + 1
	KindInt32
	KindInt64
	KindBinary
	KindString
	KindFixed
	KindDate
)

// String returns the canonical type name: boolean, int, long, binary,
// string, fixed or date.
func (k KeyKind) String() string {
	switch k {
	case KindBool:
		return "boolean"
	case KindInt32:
		return "int"
	case KindInt64:
		return "long"
	case KindBinary:
		return "binary"
	case KindString:
		return "string"
	case KindFixed:
		return "fixed"
	case KindDate:
		return "date"
	}
	return "KeyKind(" + strconv.Itoa(int(k)) + ")"
}

// KeyType describes one source-key field.
type KeyType struct {
	Name string  // source field name
	Kind KeyKind // canonical type
	Len  int     // L for KindFixed, else 0
	// Node is the field's Parquet node in the first file, so that writers
	// can reproduce the exact Parquet type (e.g. INT(16, signed)).
	Node parquet.Node
}

// TypeName returns the canonical type name, "fixed[L]" for fixed.
func (t KeyType) TypeName() string {
	if t.Kind == KindFixed {
		return "fixed[" + strconv.Itoa(t.Len) + "]"
	}
	return t.Kind.String()
}

// KeyValue is one non-null key field value.
type KeyValue struct {
	Kind KeyKind
	// Int holds Bool (0 or 1), Int32, Int64 and Date (days since
	// 1970-01-01) values.
	Int int64
	// Bytes holds Binary, String and Fixed values. In a Batch it aliases
	// memory owned by the batch.
	Bytes []byte
}

// String formats v for messages: true, 42, "text" (Go-quoted),
// 0x0a0b (binary and fixed, hex), 2024-01-31 (date).
func (v KeyValue) String() string {
	switch v.Kind {
	case KindBool:
		return strconv.FormatBool(v.Int != 0)
	case KindInt32, KindInt64:
		return strconv.FormatInt(v.Int, 10)
	case KindDate:
		return time.Unix(v.Int*86400, 0).UTC().Format("2006-01-02")
	case KindString:
		return strconv.Quote(string(v.Bytes))
	case KindBinary, KindFixed:
		const max = 64
		if len(v.Bytes) > max {
			return "0x" + hex.EncodeToString(v.Bytes[:max]) + "…"
		}
		return "0x" + hex.EncodeToString(v.Bytes)
	}
	return "?"
}

// ParquetValue returns v as a Parquet value of the kind's physical type
// (column index 0, no levels). Byte values alias v.Bytes.
func (v KeyValue) ParquetValue() parquet.Value {
	switch v.Kind {
	case KindBool:
		return parquet.BooleanValue(v.Int != 0)
	case KindInt32, KindDate:
		return parquet.Int32Value(int32(v.Int))
	case KindInt64:
		return parquet.Int64Value(v.Int)
	case KindBinary, KindString:
		return parquet.ByteArrayValue(v.Bytes)
	case KindFixed:
		return parquet.FixedLenByteArrayValue(v.Bytes)
	}
	return parquet.Value{}
}

// Equal reports whether two key values are identical.
func (v KeyValue) Equal(w KeyValue) bool {
	return v.Kind == w.Kind && v.Int == w.Int && bytes.Equal(v.Bytes, w.Bytes)
}

// KeyValueOf converts a Parquet value of a key column of type t. It fails
// for nulls and values of the wrong physical kind (or fixed length).
func KeyValueOf(t KeyType, v parquet.Value) (KeyValue, error) {
	if v.IsNull() {
		return KeyValue{}, &Error{Row: -1, Field: t.Name, Rule: ErrNullKey}
	}
	bad := func() (KeyValue, error) {
		return KeyValue{}, &Error{Row: -1, Field: t.Name, Rule: ErrFieldType,
			Detail: fmt.Sprintf("value of Parquet kind %s for key type %s", v.Kind(), t.TypeName())}
	}
	switch t.Kind {
	case KindBool:
		if v.Kind() != parquet.Boolean {
			return bad()
		}
		if v.Boolean() {
			return KeyValue{Kind: KindBool, Int: 1}, nil
		}
		return KeyValue{Kind: KindBool}, nil
	case KindInt32, KindDate:
		if v.Kind() != parquet.Int32 {
			return bad()
		}
		return KeyValue{Kind: t.Kind, Int: int64(v.Int32())}, nil
	case KindInt64:
		if v.Kind() != parquet.Int64 {
			return bad()
		}
		return KeyValue{Kind: KindInt64, Int: v.Int64()}, nil
	case KindBinary, KindString:
		if v.Kind() != parquet.ByteArray {
			return bad()
		}
		return KeyValue{Kind: t.Kind, Bytes: v.ByteArray()}, nil
	case KindFixed:
		if v.Kind() != parquet.FixedLenByteArray || len(v.ByteArray()) != t.Len {
			return bad()
		}
		return KeyValue{Kind: KindFixed, Bytes: v.ByteArray()}, nil
	}
	return bad()
}

// AppendKey appends the canonical encoding of a key tuple to dst. The
// encoding is the concatenation, in key-field order, of:
//
//	boolean   1 byte: 0x00 false, 0x01 true
//	int, date 4 bytes big-endian of the value with the sign bit flipped
//	long      8 bytes big-endian of the value with the sign bit flipped
//	fixed(L)  the L bytes
//	binary,   the bytes with every 0x00 written as 0x00 0xFF,
//	string    then the terminator 0x00 0x01
//
// Equal tuples have equal encodings, different tuples different ones, and
// bytes.Compare on encodings orders tuples field by field (integers
// signed, strings and bytes byte-for-byte, a prefix before its
// extensions). The two-byte terminator keeps the encoding unambiguous when
// a following field starts with 0xFF.
func AppendKey(dst []byte, vals []KeyValue) []byte {
	for _, v := range vals {
		dst = appendKeyValue(dst, v)
	}
	return dst
}

func appendKeyValue(dst []byte, v KeyValue) []byte {
	switch v.Kind {
	case KindBool:
		return keyenc.AppendBool(dst, v.Int != 0)
	case KindInt32, KindDate:
		return keyenc.AppendInt32(dst, int32(v.Int))
	case KindInt64:
		return keyenc.AppendInt64(dst, v.Int)
	case KindFixed:
		return append(dst, v.Bytes...)
	case KindBinary, KindString:
		return keyenc.AppendBytes(dst, v.Bytes)
	}
	return dst
}

// DecodeKey decodes a canonical key encoding made by AppendKey for the
// given key types. Byte values are fresh copies.
func DecodeKey(types []KeyType, enc []byte) ([]KeyValue, error) {
	vals := make([]KeyValue, len(types))
	rest := enc
	for i, t := range types {
		v := KeyValue{Kind: t.Kind}
		n := 0
		ok := true
		switch t.Kind {
		case KindBool:
			var b bool
			if b, n, ok = keyenc.Bool(rest); b {
				v.Int = 1
			}
		case KindInt32, KindDate:
			var x int32
			x, n, ok = keyenc.Int32(rest)
			v.Int = int64(x)
		case KindInt64:
			v.Int, n, ok = keyenc.Int64(rest)
		case KindFixed:
			ok = len(rest) >= t.Len
			if ok {
				v.Bytes, n = bytes.Clone(rest[:t.Len]), t.Len
			}
		case KindBinary, KindString:
			var b []byte
			b, n, ok = keyenc.Bytes(rest)
			v.Bytes = bytes.Clone(b)
		default:
			ok = false
		}
		if !ok {
			return nil, &Error{Row: -1, Field: t.Name, Rule: ErrBinding,
				Detail: fmt.Sprintf("malformed encoded key: field %d (%s) truncated or invalid", i+1, t.TypeName())}
		}
		vals[i] = v
		rest = rest[n:]
	}
	if len(rest) != 0 {
		return nil, &Error{Row: -1, Rule: ErrBinding, Detail: fmt.Sprintf("malformed encoded key: %d trailing bytes", len(rest))}
	}
	return vals, nil
}

// FormatKey formats a key tuple for messages as "name=value, ...".
func FormatKey(types []KeyType, vals []KeyValue) string {
	var b strings.Builder
	for i, v := range vals {
		if i > 0 {
			b.WriteString(", ")
		}
		if i < len(types) {
			b.WriteString(types[i].Name)
			b.WriteByte('=')
		}
		if v.Kind == 0 {
			b.WriteString("null")
		} else {
			b.WriteString(v.String())
		}
	}
	return b.String()
}

// classifyKey maps a leaf column type to a key kind; on failure it
// returns a description of the refused type.
func classifyKey(t parquet.Type) (KeyKind, int, string) {
	var lv format.LogicalTypeValue
	if lt := t.LogicalType(); lt != nil {
		lv = lt.Value
	}
	switch t.Kind() {
	case parquet.Boolean:
		if lv == nil {
			return KindBool, 0, ""
		}
	case parquet.Int32:
		switch v := lv.(type) {
		case nil:
			return KindInt32, 0, ""
		case *format.IntType:
			if v.IsSigned && v.BitWidth <= 32 {
				return KindInt32, 0, ""
			}
		case *format.DateType:
			return KindDate, 0, ""
		}
	case parquet.Int64:
		switch v := lv.(type) {
		case nil:
			return KindInt64, 0, ""
		case *format.IntType:
			if v.IsSigned && v.BitWidth == 64 {
				return KindInt64, 0, ""
			}
		}
	case parquet.ByteArray:
		switch lv.(type) {
		case nil:
			return KindBinary, 0, ""
		case *format.StringType, *format.EnumType:
			return KindString, 0, ""
		}
	case parquet.FixedLenByteArray:
		if lv == nil {
			return KindFixed, t.Length(), ""
		}
	}
	return 0, 0, "Parquet type " + typeString(t)
}

func typeString(t parquet.Type) (s string) {
	defer func() {
		if recover() != nil {
			s = "?"
		}
	}()
	s = t.Kind().String()
	if lt := t.LogicalType(); lt != nil && lt.Value != nil {
		s += " (" + lt.Value.String() + ")"
	}
	return s
}
