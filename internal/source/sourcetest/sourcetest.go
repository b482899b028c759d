package sourcetest

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"reflect"
	"slices"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress"
	"github.com/parquet-go/parquet-go/encoding"
	"github.com/parquet-go/parquet-go/encoding/thrift"
)

// Shape is a physical layout of a list<float|double> vector column.
type Shape int

// The vector shapes of the Parquet writers in the wild.
const (
	// List3 is the standard 3-level list with required elements:
	// optional group v (LIST) { repeated group list { required float element; } }
	List3 Shape = iota
	// List3Nullable has optional elements (pyarrow, Spark):
	// optional group v (LIST) { repeated group list { optional float element; } }
	List3Nullable
	// List3Item is pyarrow's legacy naming, also used for Arrow
	// FixedSizeList and DuckDB ARRAY columns:
	// optional group v (LIST) { repeated group list { optional float item; } }
	List3Item
	// List3Required has a required outer group:
	// required group v (LIST) { repeated group list { required float element; } }
	List3Required
	// List2 is the legacy 2-level list:
	// optional group v (LIST) { repeated float element; }
	List2
	// Repeated is a bare repeated primitive field: repeated float v;
	Repeated
)

// Shapes lists every Shape.
var Shapes = []Shape{List3, List3Nullable, List3Item, List3Required, List2, Repeated}

func (s Shape) String() string {
	return [...]string{"List3", "List3Nullable", "List3Item", "List3Required", "List2", "Repeated"}[s]
}

// VectorNode returns a vector column node of the given shape whose
// elements are FLOAT (or DOUBLE when double), dictionary encoded when dict.
func VectorNode(s Shape, double, dict bool) parquet.Node {
	elem := parquet.Leaf(parquet.FloatType)
	if double {
		elem = parquet.Leaf(parquet.DoubleType)
	}
	if dict {
		elem = parquet.Encoded(elem, &parquet.RLEDictionary)
	}
	switch s {
	case List3:
		return parquet.Optional(parquet.List(elem))
	case List3Nullable:
		return parquet.Optional(parquet.List(parquet.Optional(elem)))
	case List3Item:
		return Group(true, true, F("list", parquet.Repeated(Group(false, false, F("item", parquet.Optional(elem))))))
	case List3Required:
		return parquet.List(elem)
	case List2:
		return Group(true, true, F("element", parquet.Repeated(elem)))
	case Repeated:
		return parquet.Repeated(elem)
	}
	panic(fmt.Sprintf("sourcetest: unknown shape %d", s))
}

// Field is one named node.
type Field struct {
	Name string
	Node parquet.Node
}

// F is shorthand for Field{name, node}.
func F(name string, node parquet.Node) Field { return Field{name, node} }

// Group returns a group node whose fields keep the given order (unlike
// parquet.Group, which sorts them); list adds the LIST annotation.
func Group(optional, list bool, fields ...Field) parquet.Node {
	g := &group{list: list}
	for _, f := range fields {
		g.fields = append(g.fields, field{Node: f.Node, name: f.Name})
	}
	if optional {
		return parquet.Optional(g)
	}
	return g
}

type field struct {
	parquet.Node
	name string
}

func (f field) Name() string                           { return f.name }
func (f field) Value(base reflect.Value) reflect.Value { return reflect.Value{} }

type group struct {
	fields []parquet.Field
	list   bool
}

func (g *group) ID() int { return 0 }
func (g *group) String() string {
	return fmt.Sprintf("group(%d fields)", len(g.fields))
}
func (g *group) Type() parquet.Type {
	if g.list {
		return parquet.List(parquet.Leaf(parquet.FloatType)).Type()
	}
	return parquet.Group{}.Type()
}
func (g *group) Optional() bool              { return false }
func (g *group) Repeated() bool              { return false }
func (g *group) Required() bool              { return true }
func (g *group) Leaf() bool                  { return false }
func (g *group) Fields() []parquet.Field     { return g.fields }
func (g *group) Encoding() encoding.Encoding { return nil }
func (g *group) Compression() compress.Codec { return nil }
func (g *group) GoType() reflect.Type        { return reflect.TypeFor[map[string]any]() }

// Table is a source file to write.
type Table struct {
	Fields []Field // top-level fields, in order
	// Rows[i][j] is Fields[j]'s value in row i; nil is null. Leaves take
	// bool, int, int32, int64, float32, float64, string, []byte or a byte
	// array; repeated nodes take any slice; a list group takes the slice of
	// its elements; other groups take map[string]any.
	Rows [][]any
	// RowGroupRows is the number of rows per row group; 0 means one.
	RowGroupRows int
	// PageBufferSize bounds page size in bytes (0 = parquet-go default);
	// small values give many pages per column chunk.
	PageBufferSize int
	// DataPageV1 writes version 1 data pages (as pyarrow does by default)
	// instead of version 2.
	DataPageV1 bool
	// KeyValue is file key/value metadata.
	KeyValue map[string]string
	// Codec compresses every page (nil = SNAPPY).
	Codec compress.Codec
}

// Schema returns the table's Parquet schema.
func (t *Table) Schema() *parquet.Schema {
	return parquet.NewSchema("schema", Group(false, false, t.Fields...))
}

// Write writes the table as one Parquet file.
func (t *Table) Write(w io.Writer) error {
	schema := t.Schema()
	var codec compress.Codec = &parquet.Snappy
	if t.Codec != nil {
		codec = t.Codec
	}
	opts := []parquet.WriterOption{schema, parquet.Compression(codec)}
	if t.PageBufferSize > 0 {
		opts = append(opts, parquet.PageBufferSize(t.PageBufferSize))
	}
	if t.DataPageV1 {
		opts = append(opts, parquet.DataPageVersion(1))
	}
	for k, v := range t.KeyValue {
		opts = append(opts, parquet.KeyValueMetadata(k, v))
	}
	pw := parquet.NewWriter(w, opts...)
	per := t.RowGroupRows
	if per <= 0 {
		per = max(len(t.Rows), 1)
	}
	rows := make([]parquet.Row, 0, per)
	for i, r := range t.Rows {
		row, err := t.shred(r)
		if err != nil {
			return fmt.Errorf("sourcetest: row %d: %w", i, err)
		}
		rows = append(rows, row)
		if len(rows) == per || i == len(t.Rows)-1 {
			if _, err := pw.WriteRows(rows); err != nil {
				return err
			}
			if err := pw.Flush(); err != nil {
				return err
			}
			rows = rows[:0]
		}
	}
	return pw.Close()
}

// shred turns one row into Parquet leaf values with Dremel levels.
func (t *Table) shred(r []any) (parquet.Row, error) {
	if len(r) != len(t.Fields) {
		return nil, fmt.Errorf("%d values for %d fields", len(r), len(t.Fields))
	}
	var s shredder
	leaf := 0
	for j, f := range t.Fields {
		s.cols = append(s.cols, make([][]parquet.Value, leafCount(f.Node))...)
		if err := s.node(f.Node, r[j], leaf, 0, 0, 0); err != nil {
			return nil, fmt.Errorf("field %q: %w", f.Name, err)
		}
		leaf += leafCount(f.Node)
	}
	var row parquet.Row
	for _, c := range s.cols {
		row = append(row, c...)
	}
	return row, nil
}

func leafCount(n parquet.Node) int {
	if n.Leaf() {
		return 1
	}
	c := 0
	for _, f := range n.Fields() {
		c += leafCount(f)
	}
	return c
}

type shredder struct{ cols [][]parquet.Value }

func isNil(v any) bool {
	if v == nil {
		return true
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Slice, reflect.Map, reflect.Pointer, reflect.Interface:
		return rv.IsNil()
	}
	return false
}

func (s *shredder) nulls(n parquet.Node, leaf, rep, def int) {
	for i := range leafCount(n) {
		s.cols[leaf+i] = append(s.cols[leaf+i], parquet.Value{}.Level(rep, def, leaf+i))
	}
}

func (s *shredder) node(n parquet.Node, v any, leaf, rep, def, depth int) error {
	switch {
	case n.Repeated():
		if isNil(v) {
			s.nulls(n, leaf, rep, def)
			return nil
		}
		rv := reflect.ValueOf(v)
		if rv.Kind() != reflect.Slice && rv.Kind() != reflect.Array {
			return fmt.Errorf("repeated node needs a slice, got %T", v)
		}
		if rv.Len() == 0 {
			s.nulls(n, leaf, rep, def)
			return nil
		}
		for i := 0; i < rv.Len(); i++ {
			r := rep
			if i > 0 {
				r = depth + 1
			}
			if err := s.inner(n, rv.Index(i).Interface(), leaf, r, def+1, depth+1); err != nil {
				return err
			}
		}
		return nil
	case n.Optional():
		if isNil(v) {
			s.nulls(n, leaf, rep, def)
			return nil
		}
		return s.inner(n, v, leaf, rep, def+1, depth)
	default:
		if isNil(v) {
			return fmt.Errorf("nil for a required node")
		}
		return s.inner(n, v, leaf, rep, def, depth)
	}
}

func (s *shredder) inner(n parquet.Node, v any, leaf, rep, def, depth int) error {
	if n.Leaf() {
		val, err := leafValue(n.Type(), v)
		if err != nil {
			return err
		}
		s.cols[leaf] = append(s.cols[leaf], val.Level(rep, def, leaf))
		return nil
	}
	fields := n.Fields()
	m, isMap := v.(map[string]any)
	off := leaf
	for _, f := range fields {
		fv := v
		if isMap {
			fv = m[f.Name()]
		} else if len(fields) != 1 {
			return fmt.Errorf("group of %d fields needs map[string]any, got %T", len(fields), v)
		}
		if err := s.node(f, fv, off, rep, def, depth); err != nil {
			return err
		}
		off += leafCount(f)
	}
	return nil
}

func leafValue(t parquet.Type, v any) (parquet.Value, error) {
	rv := reflect.ValueOf(v)
	switch t.Kind() {
	case parquet.Boolean:
		if b, ok := v.(bool); ok {
			return parquet.BooleanValue(b), nil
		}
	case parquet.Int32:
		if rv.CanInt() {
			return parquet.Int32Value(int32(rv.Int())), nil
		}
	case parquet.Int64:
		if rv.CanInt() {
			return parquet.Int64Value(rv.Int()), nil
		}
	case parquet.Float:
		if rv.CanFloat() {
			return parquet.FloatValue(float32(rv.Float())), nil
		}
	case parquet.Double:
		if rv.CanFloat() {
			return parquet.DoubleValue(rv.Float()), nil
		}
	case parquet.ByteArray:
		switch x := v.(type) {
		case string:
			return parquet.ByteArrayValue([]byte(x)), nil
		case []byte:
			return parquet.ByteArrayValue(x), nil
		}
	case parquet.FixedLenByteArray:
		var b []byte
		switch {
		case rv.Kind() == reflect.Slice && rv.Type().Elem().Kind() == reflect.Uint8:
			b = rv.Bytes()
		case rv.Kind() == reflect.Array && rv.Type().Elem().Kind() == reflect.Uint8:
			b = make([]byte, rv.Len())
			reflect.Copy(reflect.ValueOf(b), rv)
		case rv.Kind() == reflect.String:
			b = []byte(rv.String())
		}
		if b != nil {
			if len(b) != t.Length() {
				return parquet.Value{}, fmt.Errorf("fixed value of %d bytes for FIXED_LEN_BYTE_ARRAY(%d)", len(b), t.Length())
			}
			return parquet.FixedLenByteArrayValue(b), nil
		}
	}
	return parquet.Value{}, fmt.Errorf("value %T for Parquet type %s", v, t.Kind())
}

// Options tunes WriteVectors.
type Options struct {
	KeyField     string // default "id"
	VectorField  string // default "embedding"
	Shape        Shape  // default List3
	Double       bool   // write list<double> (values converted from float32)
	RowGroupRows int    // 0: one row group
	Payload      []Payload
	// PageBufferSize and Codec are Table's (0 and nil: parquet-go's
	// default page size, SNAPPY).
	PageBufferSize int
	Codec          compress.Codec
}

// Payload is an extra column written after the key and the vector.
type Payload struct {
	Name   string
	Node   parquet.Node
	Values []any // one per row
}

// WriteVectors writes the usual source: a required long key field, a
// vector field (nil vectors are written as null), then the payload
// columns, in that order.
func WriteVectors(w io.Writer, keys []int64, vectors [][]float32, opt Options) error {
	if len(keys) != len(vectors) {
		return fmt.Errorf("sourcetest: %d keys for %d vectors", len(keys), len(vectors))
	}
	kf, vf := opt.KeyField, opt.VectorField
	if kf == "" {
		kf = "id"
	}
	if vf == "" {
		vf = "embedding"
	}
	t := Table{
		Fields:         []Field{F(kf, parquet.Leaf(parquet.Int64Type)), F(vf, VectorNode(opt.Shape, opt.Double, false))},
		RowGroupRows:   opt.RowGroupRows,
		PageBufferSize: opt.PageBufferSize,
		Codec:          opt.Codec,
	}
	for _, p := range opt.Payload {
		if len(p.Values) != len(keys) {
			return fmt.Errorf("sourcetest: payload %q has %d values for %d rows", p.Name, len(p.Values), len(keys))
		}
		t.Fields = append(t.Fields, F(p.Name, p.Node))
	}
	t.Rows = make([][]any, len(keys))
	for i := range keys {
		var vec any
		switch {
		case vectors[i] == nil:
		case opt.Double:
			d := make([]float64, len(vectors[i]))
			for j, x := range vectors[i] {
				d[j] = float64(x)
			}
			vec = d
		default:
			vec = vectors[i]
		}
		row := []any{keys[i], vec}
		for _, p := range opt.Payload {
			row = append(row, p.Values[i])
		}
		t.Rows[i] = row
	}
	return t.Write(w)
}

// StripPageIndex returns the Parquet file data with a footer that names
// no column or offset index, as pyarrow writes by default (parquet-go
// always writes them; the old indexes stay in the file, unreferenced).
func StripPageIndex(data []byte) ([]byte, error) {
	pf, err := parquet.OpenFile(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return nil, err
	}
	md := *pf.Metadata()
	md.RowGroups = slices.Clone(md.RowGroups)
	for i := range md.RowGroups {
		cols := slices.Clone(md.RowGroups[i].Columns)
		for j := range cols {
			c := &cols[j]
			c.OffsetIndexOffset, c.OffsetIndexLength, c.ColumnIndexOffset, c.ColumnIndexLength = 0, 0, 0, 0
		}
		md.RowGroups[i].Columns = cols
	}
	footer, err := thrift.Marshal(new(thrift.CompactProtocol), &md)
	if err != nil {
		return nil, err
	}
	n := int(binary.LittleEndian.Uint32(data[len(data)-8:]))
	out := append([]byte(nil), data[:len(data)-8-n]...)
	out = append(out, footer...)
	out = binary.LittleEndian.AppendUint32(out, uint32(len(footer)))
	return append(out, "PAR1"...), nil
}
