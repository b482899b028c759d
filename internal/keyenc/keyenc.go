// Package keyenc holds the byte encoding of source-key tuples shared by the
// postings tables and the source reader (profile §10): each field encoded
// in turn, so that equal tuples have equal encodings and bytes.Compare
// orders encodings like the tuples (integers signed, bytes byte-for-byte,
// a prefix before its extensions):
//
//	boolean      1 byte, 0 or 1
//	int, date    4 bytes big-endian with the sign bit flipped
//	long         8 bytes big-endian with the sign bit flipped
//	fixed(L)     the L bytes
//	binary,      the bytes with every 0x00 written as 0x00 0xFF,
//	string       then the terminator 0x00 0x01
//
// The two-byte terminator keeps the encoding unambiguous when a following
// field starts with 0xFF.
package keyenc

import (
	"bytes"
	"encoding/binary"
)

// AppendBool appends a boolean field.
func AppendBool(dst []byte, b bool) []byte {
	if b {
		return append(dst, 1)
	}
	return append(dst, 0)
}

// AppendInt32 appends an int or date field.
func AppendInt32(dst []byte, v int32) []byte {
	return binary.BigEndian.AppendUint32(dst, uint32(v)^1<<31)
}

// AppendInt64 appends a long field.
func AppendInt64(dst []byte, v int64) []byte {
	return binary.BigEndian.AppendUint64(dst, uint64(v)^1<<63)
}

// AppendBytes appends a binary or string field: escaped, then terminated.
func AppendBytes(dst, b []byte) []byte {
	for {
		i := bytes.IndexByte(b, 0)
		if i < 0 {
			break
		}
		dst = append(dst, b[:i+1]...)
		dst = append(dst, 0xFF)
		b = b[i+1:]
	}
	dst = append(dst, b...)
	return append(dst, 0, 1)
}

// Bool decodes a boolean field from the front of enc.
func Bool(enc []byte) (v bool, n int, ok bool) {
	if len(enc) < 1 || enc[0] > 1 {
		return false, 0, false
	}
	return enc[0] == 1, 1, true
}

// Int32 decodes an int or date field from the front of enc.
func Int32(enc []byte) (v int32, n int, ok bool) {
	if len(enc) < 4 {
		return 0, 0, false
	}
	return int32(binary.BigEndian.Uint32(enc) ^ 1<<31), 4, true
}

// Int64 decodes a long field from the front of enc.
func Int64(enc []byte) (v int64, n int, ok bool) {
	if len(enc) < 8 {
		return 0, 0, false
	}
	return int64(binary.BigEndian.Uint64(enc) ^ 1<<63), 8, true
}

// Bytes decodes one escaped byte string from the front of enc and returns
// it (aliasing enc unless an escape occurred) and the number of encoded
// bytes consumed. After a 0x00 comes 0xFF (an escaped zero byte) or 0x01
// (the end); anything else is malformed.
func Bytes(enc []byte) (out []byte, n int, ok bool) {
	i := bytes.IndexByte(enc, 0)
	if i < 0 || i+1 >= len(enc) {
		return nil, 0, false
	}
	if enc[i+1] == 1 {
		return enc[:i:i], i + 2, true
	}
	out = make([]byte, 0, len(enc))
	for {
		i = bytes.IndexByte(enc[n:], 0)
		if i < 0 || n+i+1 >= len(enc) {
			return nil, 0, false
		}
		out = append(out, enc[n:n+i]...)
		n += i + 1
		switch enc[n] {
		case 0xFF:
			out = append(out, 0)
			n++
		case 1:
			return out, n + 1, true
		default:
			return nil, 0, false
		}
	}
}
