package source

import (
	"context"
	"fmt"
	"io"
	"math"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"

	"github.com/parqdb/parqdb/metadata"
)

// ReservedField is the result field name a source must not contain.
const ReservedField = "_distance"

// Binding names what an index reads from a source.
type Binding struct {
	VectorField string
	// Dim is the vector dimension; 0 means infer it from the first row of
	// the first non-empty file.
	Dim       int
	KeyFields []string // ordered, non-empty, unique
	Metric    string   // metadata.MetricL2Squared or metadata.MetricCosine
}

// Layout is a checked Binding over one Table: where the vector and key
// columns are in every file. It is immutable and safe for concurrent use.
type Layout struct {
	Binding           // Dim is resolved (never 0)
	Keys    []KeyType // one per key field, in order
	files   []fileLayout
	cosine  bool
}

type fileLayout struct {
	vec  vecShape
	keys []int // leaf column index per key field
}

// Shape returns the vector shape of file i ("3-level list", "2-level list"
// or "repeated") and whether its elements are doubles.
func (l *Layout) Shape(file int) (shape string, double bool) {
	return l.files[file].vec.shape, l.files[file].vec.double
}

// Check verifies the schema rules of b against every file of t and returns
// the Layout for Scan and the readers: metric known; vector field present
// with a supported shape of float or double; key fields present, non-empty,
// unique, not the vector field, of a supported, non-repeated type, and of
// the same type in every file; no field named _distance; at least one row.
// When b.Dim is 0 it reads the first row's vector to learn the dimension
// (a null or empty first vector is then an error). Each failure is an
// *Error naming the file and field.
func (t *Table) Check(ctx context.Context, b Binding) (*Layout, error) {
	bad := func(file, field string, rule error, format string, args ...any) error {
		return &Error{Source: t.desc, File: file, Row: -1, Field: field, Rule: rule, Detail: fmt.Sprintf(format, args...)}
	}
	switch b.Metric {
	case metadata.MetricL2Squared, metadata.MetricCosine:
	default:
		return nil, bad("", "", ErrBinding, "unknown metric %q (want %q or %q)", b.Metric, metadata.MetricL2Squared, metadata.MetricCosine)
	}
	if b.Dim < 0 || b.Dim > math.MaxInt32 {
		return nil, bad("", b.VectorField, ErrBinding, "dimension %d out of range", b.Dim)
	}
	if b.VectorField == "" {
		return nil, bad("", "", ErrMissingField, "empty vector field name")
	}
	if len(b.KeyFields) == 0 {
		return nil, bad("", "", ErrKeyFields, "no key fields")
	}
	seen := map[string]bool{}
	for _, k := range b.KeyFields {
		switch {
		case k == b.VectorField:
			return nil, bad("", k, ErrVectorKey, "the vector field cannot be a key field")
		case seen[k]:
			return nil, bad("", k, ErrKeyFields, "key field listed twice")
		case k == "":
			return nil, bad("", "", ErrKeyFields, "empty key field name")
		}
		seen[k] = true
	}
	l := &Layout{Binding: b, cosine: b.Metric == metadata.MetricCosine, files: make([]fileLayout, len(t.files))}
	l.KeyFields = append([]string(nil), b.KeyFields...)
	for fi, f := range t.files {
		var ferr error
		if err := safely(func() error { ferr = t.checkFile(l, fi, bad); return nil }); err != nil {
			return nil, &Error{Source: t.desc, File: f.Key, Row: -1, Rule: ErrCorrupt, Detail: "schema", Err: err}
		}
		if ferr != nil {
			return nil, ferr
		}
	}
	if t.rows == 0 {
		return nil, bad("", "", ErrEmpty, "no rows in %d file(s)", len(t.files))
	}
	if l.Dim == 0 {
		d, err := t.inferDim(ctx, l)
		if err != nil {
			return nil, err
		}
		l.Dim = d
	}
	return l, nil
}

// checkFile checks one file's schema and fills l.files[fi] (and l.Keys
// from the first file).
func (t *Table) checkFile(l *Layout, fi int, bad func(file, field string, rule error, format string, args ...any) error) error {
	b := l.Binding
	f := t.files[fi]
	{
		root := f.pf.Root()
		for _, c := range root.Columns() {
			if c.Name() == ReservedField {
				return bad(f.Key, ReservedField, ErrReservedField, "")
			}
		}
		vc := f.column(b.VectorField)
		if vc == nil {
			return bad(f.Key, b.VectorField, ErrMissingField, "%s", f.missingField())
		}
		vs, why := vectorShape(vc)
		if why != "" {
			return bad(f.Key, b.VectorField, ErrFieldType, "want list<float> or list<double>: %s", why)
		}
		fl := fileLayout{vec: vs, keys: make([]int, len(b.KeyFields))}
		for ki, name := range b.KeyFields {
			kc := f.column(name)
			if kc == nil {
				return bad(f.Key, name, ErrMissingField, "%s", f.missingField())
			}
			if !kc.Leaf() || kc.Repeated() {
				return bad(f.Key, name, ErrUnsupportedKey, "key fields must be non-repeated primitive columns")
			}
			kind, n, why := classifyKey(kc.Type())
			if why != "" {
				return bad(f.Key, name, ErrUnsupportedKey, "%s (supported: boolean, int, long, binary, fixed, string, date)", why)
			}
			kt := KeyType{Name: name, Kind: kind, Len: n, Node: kc}
			if fi == 0 {
				l.Keys = append(l.Keys, kt)
			} else if p := l.Keys[ki]; p.Kind != kt.Kind || p.Len != kt.Len {
				return bad(f.Key, name, ErrFieldType, "key type %s differs from %s in %q", kt.TypeName(), p.TypeName(), t.files[0].Key)
			}
			fl.keys[ki] = kc.Index()
		}
		l.files[fi] = fl
	}
	return nil
}

// vectorShape recognises the accepted vector shapes (see the package doc).
func vectorShape(c *parquet.Column) (vecShape, string) {
	var s vecShape
	var leaf *parquet.Column
	def := 0
	switch {
	case c.Leaf():
		if !c.Repeated() {
			return s, "a non-repeated primitive column"
		}
		leaf, s.shape = c, "repeated"
		s.nullDef, s.listDef = 0, 1
	default:
		if c.Repeated() {
			return s, "a repeated group"
		}
		if lt := c.Type().LogicalType(); lt != nil && lt.Value != nil {
			if _, ok := lt.Value.(*format.ListType); !ok {
				return s, "a group annotated " + lt.Value.String()
			}
		}
		if c.Optional() {
			def++
		}
		kids := c.Columns()
		if len(kids) != 1 || !kids[0].Repeated() {
			return s, "a group that is not a list (want exactly one repeated child)"
		}
		s.nullDef = byte(def)
		def++
		s.listDef = byte(def)
		r := kids[0]
		if r.Leaf() {
			leaf, s.shape = r, "2-level list"
		} else {
			gk := r.Columns()
			if len(gk) != 1 || !gk[0].Leaf() || gk[0].Repeated() {
				return s, "a list whose element is not a float or double"
			}
			leaf, s.shape = gk[0], "3-level list"
		}
	}
	if leaf.MaxRepetitionLevel() != 1 {
		return s, "nested lists"
	}
	if lt := leaf.Type().LogicalType(); lt != nil && lt.Value != nil {
		return s, "elements of " + typeString(leaf.Type())
	}
	switch leaf.Type().Kind() {
	case parquet.Float:
	case parquet.Double:
		s.double = true
	default:
		return s, "elements of Parquet type " + typeString(leaf.Type())
	}
	s.col = leaf.Index()
	s.maxDef = byte(leaf.MaxDefinitionLevel())
	return s, ""
}

// inferDim reads the vector of the first row of the first non-empty file.
func (t *Table) inferDim(ctx context.Context, l *Layout) (int, error) {
	for fi, f := range t.files {
		for rgi, rg := range f.pf.RowGroups() {
			if rg.NumRows() == 0 {
				continue
			}
			if err := ctx.Err(); err != nil {
				return 0, err
			}
			// The first live row of the row group (deleted rows are skipped).
			first, end := f.rgStart[rgi], f.rgStart[rgi+1]
			if deleted, runEnd := f.liveRun(first, end); deleted {
				if runEnd == end {
					continue
				}
				first = runEnd
			}
			var c vecCursor
			c.reset(&l.files[fi].vec, rg.ColumnChunks()[l.files[fi].vec.col].Pages())
			var rs rowStatus
			var err error
			for p := f.rgStart[rgi]; p <= first && err == nil; p++ {
				rs, err = c.readRow(nil)
			}
			c.close()
			fe := func(rule error, detail string, cause error) error {
				return &Error{Source: t.desc, File: f.Key, Row: first, Field: l.VectorField,
					Rule: rule, Detail: detail, Err: cause}
			}
			switch {
			case err == io.EOF:
				return 0, fe(ErrCorrupt, "row group has no values", nil)
			case err != nil:
				return 0, fe(ErrCorrupt, "read vector column", err)
			case rs.null:
				return 0, fe(ErrNullVector, "cannot infer the dimension", nil)
			case rs.count == 0:
				return 0, fe(ErrDimension, "empty first vector: cannot infer the dimension", nil)
			}
			return rs.count, nil
		}
	}
	return 0, &Error{Source: t.desc, Row: -1, Rule: ErrEmpty}
}
