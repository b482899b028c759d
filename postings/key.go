package postings

import (
	"fmt"
	"github.com/parqdb/parqdb/internal/keyenc"

	"github.com/parquet-go/parquet-go"
)

// Encoded keys.
//
// An encoded key is the concatenation, in source-key order, of one encoding
// per field:
//
//	boolean      1 byte, 0 or 1
//	int, date    4 bytes big-endian with the sign bit flipped
//	long         8 bytes big-endian with the sign bit flipped
//	fixed(L)     the L bytes
//	binary,      the bytes with every 0x00 written as 0x00 0xFF,
//	string       then the terminator 0x00 0x01
//
// Equal tuples have equal encodings, and bytes.Compare of two encodings
// orders the tuples field by field (integers signed, bytes byte-for-byte,
// a prefix before its extensions), so encoded keys can be map keys, sorted,
// and compared with a source row's key encoded the same way.

// AppendKey appends the encoded key of vals (one value per key field, in
// source-key order) to dst. Each value must have the field's Parquet kind
// (BOOLEAN, INT32, INT64, BYTE_ARRAY, FIXED_LEN_BYTE_ARRAY of length L) and
// must not be null.
func (s Schema) AppendKey(dst []byte, vals []parquet.Value) ([]byte, error) {
	if len(vals) != len(s.Keys) {
		return dst, errorf(ErrSchema, "key", "%d values for %d key fields", len(vals), len(s.Keys))
	}
	for i, v := range vals {
		k := s.Keys[i]
		where := KeyColumn(i)
		if v.IsNull() {
			return dst, errorf(ErrSchema, where, "null key value")
		}
		switch k.Kind {
		case KindBool:
			if v.Kind() != parquet.Boolean {
				return dst, kindErr(where, k, v)
			}
			dst = keyenc.AppendBool(dst, v.Boolean())
		case KindInt32, KindDate:
			if v.Kind() != parquet.Int32 {
				return dst, kindErr(where, k, v)
			}
			dst = keyenc.AppendInt32(dst, v.Int32())
		case KindInt64:
			if v.Kind() != parquet.Int64 {
				return dst, kindErr(where, k, v)
			}
			dst = keyenc.AppendInt64(dst, v.Int64())
		case KindBinary, KindString:
			if v.Kind() != parquet.ByteArray {
				return dst, kindErr(where, k, v)
			}
			dst = keyenc.AppendBytes(dst, v.ByteArray())
		case KindFixed:
			if v.Kind() != parquet.FixedLenByteArray || len(v.ByteArray()) != k.FixedLen {
				return dst, kindErr(where, k, v)
			}
			dst = append(dst, v.ByteArray()...)
		default:
			return dst, errorf(ErrSchema, where, "unknown kind %d", k.Kind)
		}
	}
	return dst, nil
}

func kindErr(where string, k KeyType, v parquet.Value) error {
	if v.Kind() == parquet.ByteArray || v.Kind() == parquet.FixedLenByteArray {
		return errorf(ErrSchema, where, "value of kind %s (length %d) for key type %s", v.Kind(), len(v.ByteArray()), k.TypeName())
	}
	return errorf(ErrSchema, where, "value of kind %s for key type %s", v.Kind(), k.TypeName())
}

// DecodeKey decodes an encoded key into one Parquet value per key field,
// with the kinds AppendKey accepts and column indexes 1…K (the postings
// columns key_1…key_K). Byte values alias key.
func (s Schema) DecodeKey(key []byte) ([]parquet.Value, error) {
	return s.appendKeyValues(make([]parquet.Value, 0, len(s.Keys)), key)
}

// checkKey reports whether key is a well-formed encoded key of s.
func (s Schema) checkKey(key []byte) error {
	var scratch [4]parquet.Value
	_, err := s.appendKeyValues(scratch[:0], key)
	return err
}

// appendKeyValues decodes key and appends its values to vals with column
// indexes 1…K.
func (s Schema) appendKeyValues(vals []parquet.Value, key []byte) ([]parquet.Value, error) {
	rest := key
	for i, k := range s.Keys {
		var v parquet.Value
		var n int
		var ok bool
		switch k.Kind {
		case KindBool:
			var b bool
			b, n, ok = keyenc.Bool(rest)
			v = parquet.BooleanValue(b)
		case KindInt32, KindDate:
			var x int32
			x, n, ok = keyenc.Int32(rest)
			v = parquet.Int32Value(x)
		case KindInt64:
			var x int64
			x, n, ok = keyenc.Int64(rest)
			v = parquet.Int64Value(x)
		case KindFixed:
			if ok = len(rest) >= k.FixedLen; ok {
				v, n = parquet.FixedLenByteArrayValue(rest[:k.FixedLen:k.FixedLen]), k.FixedLen
			}
		case KindBinary, KindString:
			var b []byte
			b, n, ok = keyenc.Bytes(rest)
			v = parquet.ByteArrayValue(b)
		}
		if !ok {
			return vals, errorf(ErrSchema, fmt.Sprintf("encoded key field %d", i+1), "truncated or malformed %s", k.TypeName())
		}
		vals = append(vals, v.Level(0, 0, i+1))
		rest = rest[n:]
	}
	if len(rest) != 0 {
		return vals, errorf(ErrSchema, "encoded key", "%d trailing bytes", len(rest))
	}
	return vals, nil
}
