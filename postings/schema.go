package postings

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress"
	"github.com/parquet-go/parquet-go/encoding"
)

// KeyKind is the canonical type of one source-key field (ivf-index-schema §4).
type KeyKind uint8

// The supported source-key kinds. Their Parquet forms are listed in the
// profile's "Parquet types" table.
const (
	KindBool   KeyKind = iota + 1 // boolean: BOOLEAN
	KindInt32                     // int: INT32, INT(32, signed)
	KindInt64                     // long: INT64, INT(64, signed)
	KindBinary                    // binary: BYTE_ARRAY, no annotation
	KindString                    // string: BYTE_ARRAY, STRING
	KindFixed                     // fixed(L): FIXED_LEN_BYTE_ARRAY(L)
	KindDate                      // date: INT32, DATE
)

// String returns the kind's canonical (Iceberg) type name without a length:
// boolean, int, long, binary, string, fixed, date.
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

// MaxFixedLen is the longest fixed(L) key accepted.
const MaxFixedLen = 1 << 16

// KeyType is one source-key field: its source name and canonical type.
type KeyType struct {
	// Name is the source field name (the postings column is key_i).
	Name string
	// Kind is the canonical type.
	Kind KeyKind
	// FixedLen is L for KindFixed and zero otherwise.
	FixedLen int
}

// TypeName returns the canonical type name used in the manifest:
// boolean, int, long, binary, string, date or fixed[L].
func (k KeyType) TypeName() string {
	if k.Kind == KindFixed {
		return "fixed[" + strconv.Itoa(k.FixedLen) + "]"
	}
	return k.Kind.String()
}

// ParseKeyType parses a TypeName result; name is left empty.
func ParseKeyType(s string) (KeyType, error) {
	for k := KindBool; k <= KindDate; k++ {
		if k != KindFixed && s == k.String() {
			return KeyType{Kind: k}, nil
		}
	}
	if rest, ok := strings.CutPrefix(s, "fixed["); ok {
		if num, ok := strings.CutSuffix(rest, "]"); ok && num != "" && num[0] != '0' && len(num) <= 6 {
			n, err := strconv.Atoi(num)
			if err == nil && n >= 1 && n <= MaxFixedLen {
				return KeyType{Kind: KindFixed, FixedLen: n}, nil
			}
		}
	}
	return KeyType{}, errorf(ErrSchema, "key type", "unknown key type %q", s)
}

// Posting encodings (ivf-index-schema §6).
const (
	EncodingSource = "source"
	EncodingLVQ4   = "lvq4"
	EncodingLVQ8   = "lvq8"
)

// MaxDim is the largest vector dimension accepted by the tables here.
const MaxDim = 1 << 20

// Schema describes one postings table.
type Schema struct {
	// Encoding is the posting encoding: "source", "lvq4" or "lvq8".
	Encoding string
	// Dim is the vector dimension D.
	Dim int
	// Keys are the source-key fields in source-key order (K ≥ 1).
	Keys []KeyType
}

// Validate reports the first rule s breaks.
func (s Schema) Validate() error {
	switch s.Encoding {
	case EncodingSource, EncodingLVQ4, EncodingLVQ8:
	default:
		return errorf(ErrSchema, "schema encoding", "unknown posting encoding %q", s.Encoding)
	}
	if s.Dim < 1 || s.Dim > MaxDim {
		return errorf(ErrSchema, "schema dim", "dimension %d out of range [1, %d]", s.Dim, MaxDim)
	}
	if len(s.Keys) == 0 {
		return errorf(ErrSchema, "schema keys", "no source-key field")
	}
	for i, k := range s.Keys {
		if k.Kind < KindBool || k.Kind > KindDate {
			return errorf(ErrSchema, fmt.Sprintf("schema keys[%d]", i), "unknown kind %d", k.Kind)
		}
		if (k.Kind == KindFixed) != (k.FixedLen != 0) {
			return errorf(ErrSchema, fmt.Sprintf("schema keys[%d]", i), "fixed length %d with kind %s", k.FixedLen, k.Kind)
		}
		if k.FixedLen < 0 || k.FixedLen > MaxFixedLen {
			return errorf(ErrSchema, fmt.Sprintf("schema keys[%d]", i), "fixed length %d out of range [1, %d]", k.FixedLen, MaxFixedLen)
		}
	}
	return nil
}

// HasCodes reports whether the encoding stores offset, scale and code.
func (s Schema) HasCodes() bool { return s.Encoding != EncodingSource }

// CodeLen is the length of one code in bytes: D for lvq8, ceil(D/2) for
// lvq4 and 0 for source.
func (s Schema) CodeLen() int { return CodeLen(s.Encoding, s.Dim) }

// CodeLen is the code length in bytes of encoding at dimension dim.
func CodeLen(encoding string, dim int) int {
	switch encoding {
	case EncodingLVQ8:
		return dim
	case EncodingLVQ4:
		return (dim + 1) / 2
	}
	return 0
}

// KeyColumn is the postings column name of source-key field i (0-based):
// key_1 … key_K (clarification 11).
func KeyColumn(i int) string { return "key_" + strconv.Itoa(i+1) }

// Columns lists the postings column names in file order.
func (s Schema) Columns() []string {
	cols := []string{"cid"}
	for i := range s.Keys {
		cols = append(cols, KeyColumn(i))
	}
	if s.HasCodes() {
		cols = append(cols, "offset", "scale", "code")
	}
	return cols
}

// ParquetSchema returns the postings table's Parquet schema: every column
// required, PLAIN, uncompressed, in the order of Columns.
func (s Schema) ParquetSchema() (*parquet.Schema, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	fields := orderedGroup{field("cid", parquet.Int(32))}
	for i, k := range s.Keys {
		fields = append(fields, field(KeyColumn(i), keyNode(k)))
	}
	if s.HasCodes() {
		fields = append(fields,
			field("offset", parquet.Leaf(parquet.FloatType)),
			field("scale", parquet.Leaf(parquet.FloatType)),
			field("code", parquet.Leaf(parquet.ByteArrayType)))
	}
	return parquet.NewSchema("ivf_postings", fields), nil
}

func keyNode(k KeyType) parquet.Node {
	switch k.Kind {
	case KindBool:
		return parquet.Leaf(parquet.BooleanType)
	case KindInt32:
		return parquet.Int(32)
	case KindInt64:
		return parquet.Int(64)
	case KindBinary:
		return parquet.Leaf(parquet.ByteArrayType)
	case KindString:
		return parquet.String()
	case KindFixed:
		return parquet.Leaf(parquet.FixedLenByteArrayType(k.FixedLen))
	default: // KindDate; Validate ran first
		return parquet.Date()
	}
}

// centroidsSchema and rootsSchema are the fixed schemas of ivf_centroids
// and ivf_roots.
var (
	centroidsSchema = parquet.NewSchema("ivf_centroids", orderedGroup{
		field("cid", parquet.Int(32)),
		field("cid_bucket", parquet.Int(32)),
		field("offset", parquet.Leaf(parquet.FloatType)),
		field("scale", parquet.Leaf(parquet.FloatType)),
		field("code", parquet.Leaf(parquet.ByteArrayType)),
	})
	rootsSchema = parquet.NewSchema("ivf_roots", orderedGroup{
		field("cid_bucket", parquet.Int(32)),
		field("cid_begin", parquet.Int(32)),
		field("cid_end", parquet.Int(32)),
		field("centroid", parquet.List(parquet.Leaf(parquet.FloatType))),
	})
)

// field makes a required, PLAIN, uncompressed leaf (or a list whose leaf is
// PLAIN and uncompressed).
func field(name string, n parquet.Node) parquet.Field {
	if n.Leaf() {
		n = parquet.Compressed(parquet.Encoded(n, &parquet.Plain), &parquet.Uncompressed)
	}
	return &namedField{Node: n, name: name}
}

// orderedGroup is a group node whose fields keep their declared order;
// parquet.Group sorts fields by name, which would put code before key_1.
type orderedGroup []parquet.Field

func (g orderedGroup) ID() int                          { return 0 }
func (g orderedGroup) String() string                   { return "group" }
func (g orderedGroup) Type() parquet.Type               { return parquet.Group{}.Type() }
func (g orderedGroup) Optional() bool                   { return false }
func (g orderedGroup) Repeated() bool                   { return false }
func (g orderedGroup) Required() bool                   { return true }
func (g orderedGroup) Leaf() bool                       { return false }
func (g orderedGroup) Fields() []parquet.Field          { return g }
func (g orderedGroup) Encoding() encoding.Encoding      { return nil }
func (g orderedGroup) Compression() compress.Codec      { return nil }
func (g orderedGroup) GoType() reflect.Type             { return reflect.TypeFor[map[string]any]() }
func (f *namedField) Name() string                      { return f.name }
func (f *namedField) Value(reflect.Value) reflect.Value { return reflect.Value{} }

type namedField struct {
	parquet.Node
	name string
}
