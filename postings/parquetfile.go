package postings

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"

	"github.com/parqdb/parqdb/internal/version"
)

// CreatedBy is the application recorded in the created_by field of every
// file written here: "parqdb version <v> (build profile-1)", <v> being the
// running build's version (internal/version).
const CreatedBy = "parqdb"

// Profile is the build field of created_by: the Parquet provider profile
// the files follow.
const Profile = "profile-1"

// maxRowsPerGroup is the largest row group written for ivf_centroids.
const maxRowsPerGroup = 1 << 16

// writerOptions are the writer settings shared by every table: no write
// buffer (so bytes reach the output at Flush, which BucketWriter relies on
// to checksum row groups), no page statistics, no bounds for code.
func writerOptions(s *parquet.Schema) []parquet.WriterOption {
	return []parquet.WriterOption{
		s,
		parquet.WriteBufferSize(0),
		parquet.DataPageStatistics(false),
		parquet.SkipPageBounds("code"),
		parquet.SkipPageBounds("centroid", "list", "element"),
		// parquet-go writes "<app> version <v>(build <b>)"; the space
		// after the version gives the conventional
		// "parqdb version v0.4.0 (build profile-1)" (version.CreatedBy).
		parquet.CreatedBy(CreatedBy, version.String()+" ", Profile),
		parquet.MaxRowsPerRowGroup(1 << 62),
	}
}

// leafSpec is what the profile requires of one leaf column.
type leafSpec struct {
	path     []string
	kind     parquet.Kind
	check    func(parquet.Type) bool // logical type; nil means "none"
	fixedLen int
	list     bool // the leaf is the element of a required 3-level list
}

func plainLeaf(name string, kind parquet.Kind) leafSpec {
	return leafSpec{path: []string{name}, kind: kind}
}

func int32Leaf(name string) leafSpec {
	return leafSpec{path: []string{name}, kind: parquet.Int32, check: isSignedInt(32)}
}

func isSignedInt(bits int) func(parquet.Type) bool {
	return func(t parquet.Type) bool {
		switch v := logical(t).(type) {
		case nil:
			return true
		case *format.IntType:
			return int(v.BitWidth) == bits && v.IsSigned
		}
		return false
	}
}

func keyLeaf(i int, k KeyType) leafSpec {
	name := KeyColumn(i)
	switch k.Kind {
	case KindBool:
		return plainLeaf(name, parquet.Boolean)
	case KindInt32:
		return int32Leaf(name)
	case KindInt64:
		return leafSpec{path: []string{name}, kind: parquet.Int64, check: isSignedInt(64)}
	case KindBinary:
		return plainLeaf(name, parquet.ByteArray)
	case KindString:
		return leafSpec{path: []string{name}, kind: parquet.ByteArray, check: func(t parquet.Type) bool {
			_, ok := logical(t).(*format.StringType)
			return ok
		}}
	case KindFixed:
		return leafSpec{path: []string{name}, kind: parquet.FixedLenByteArray, fixedLen: k.FixedLen}
	default:
		return leafSpec{path: []string{name}, kind: parquet.Int32, check: func(t parquet.Type) bool {
			_, ok := logical(t).(*format.DateType)
			return ok
		}}
	}
}

func postingsLeaves(s Schema) []leafSpec {
	leaves := []leafSpec{int32Leaf("cid")}
	for i, k := range s.Keys {
		leaves = append(leaves, keyLeaf(i, k))
	}
	if s.HasCodes() {
		leaves = append(leaves, plainLeaf("offset", parquet.Float), plainLeaf("scale", parquet.Float), plainLeaf("code", parquet.ByteArray))
	}
	return leaves
}

var centroidsLeaves = []leafSpec{
	int32Leaf("cid"), int32Leaf("cid_bucket"),
	plainLeaf("offset", parquet.Float), plainLeaf("scale", parquet.Float), plainLeaf("code", parquet.ByteArray),
}

var rootsLeaves = []leafSpec{
	int32Leaf("cid_bucket"), int32Leaf("cid_begin"), int32Leaf("cid_end"),
	{path: []string{"centroid", "list", "element"}, kind: parquet.Float, list: true},
}

// recordingReader remembers the first error other than io.EOF that its
// reader returned, so that a failed read (a dropped connection, a timeout,
// a full disk) is reported as itself, not as a corrupt table, even when
// parquet-go's own error loses the cause. It is safe for concurrent use.
type recordingReader struct {
	r    io.ReaderAt
	size int64
	mu   sync.Mutex
	err  error
}

func (rr *recordingReader) ReadAt(p []byte, off int64) (int, error) {
	n, err := rr.r.ReadAt(p, off)
	// A read outside the file is the parser following a corrupt offset,
	// not a failure of the storage.
	inside := off >= 0 && off+int64(len(p)) <= rr.size
	if err != nil && err != io.EOF && inside {
		rr.mu.Lock()
		if rr.err == nil {
			rr.err = err
		}
		rr.mu.Unlock()
	}
	return n, err
}

// readErr wraps the first recorded read error, or returns nil.
func (rr *recordingReader) readErr(table string) error {
	rr.mu.Lock()
	defer rr.mu.Unlock()
	if rr.err == nil {
		return nil
	}
	return fmt.Errorf("%s: read: %w", table, rr.err)
}

// openTable opens a Parquet file (footer only) and checks that its columns,
// types, codecs and encodings are exactly those the profile gives table.
// Reads go through rr, which callers also consult when reading rows fails.
func openTable(rr *recordingReader, size int64, table string, want []leafSpec) (*parquet.File, error) {
	f, err := parquet.OpenFile(rr, size, parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true))
	if err != nil {
		if rerr := rr.readErr(table); rerr != nil {
			return nil, rerr
		}
		if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) || !isIOError(err) {
			return nil, &Error{Where: table, Msg: "open: " + err.Error(), Err: ErrCorrupt}
		}
		return nil, fmt.Errorf("%s: open: %w", table, err)
	}
	cols := f.Schema().Columns()
	if len(cols) != len(want) {
		return nil, errorf(ErrCorrupt, table, "%d leaf columns, want %d", len(cols), len(want))
	}
	for i, w := range want {
		where := table + " column " + strings.Join(w.path, ".")
		if !slices.Equal(cols[i], w.path) {
			return nil, errorf(ErrCorrupt, table, "column %d is %q, want %q", i, strings.Join(cols[i], "."), strings.Join(w.path, "."))
		}
		leaf, _ := f.Schema().Lookup(w.path...)
		t := leaf.Node.Type()
		switch {
		case t.Kind() != w.kind:
			return nil, errorf(ErrCorrupt, where, "physical type %s, want %s", t.Kind(), w.kind)
		case w.kind == parquet.FixedLenByteArray && t.Length() != w.fixedLen:
			return nil, errorf(ErrCorrupt, where, "fixed length %d, want %d", t.Length(), w.fixedLen)
		case w.check == nil && logical(t) != nil:
			return nil, errorf(ErrCorrupt, where, "unexpected logical type %s", t)
		case w.check != nil && !w.check(t):
			return nil, errorf(ErrCorrupt, where, "logical type %s not allowed", t)
		case !leaf.Node.Required():
			return nil, errorf(ErrCorrupt, where, "not required")
		case !w.list && (leaf.MaxRepetitionLevel != 0 || leaf.MaxDefinitionLevel != 0):
			return nil, errorf(ErrCorrupt, where, "nested or optional")
		case w.list && (leaf.MaxRepetitionLevel != 1 || leaf.MaxDefinitionLevel != 1):
			return nil, errorf(ErrCorrupt, where, "not a required 3-level list of required elements")
		}
	}
	if w := want[len(want)-1]; w.list {
		// the list group and the centroid field must be required too.
		n := f.Schema().Fields()[len(f.Schema().Fields())-1]
		if !n.Required() || n.Fields()[0].Name() != "list" || !n.Fields()[0].Repeated() {
			return nil, errorf(ErrCorrupt, table+" column centroid", "not a required 3-level list")
		}
		if _, ok := logical(n.Type()).(*format.ListType); !ok {
			return nil, errorf(ErrCorrupt, table+" column centroid", "missing LIST annotation")
		}
	}
	for g, rg := range f.Metadata().RowGroups {
		if len(rg.Columns) != len(want) {
			return nil, errorf(ErrCorrupt, fmt.Sprintf("%s row group %d", table, g), "%d column chunks, want %d", len(rg.Columns), len(want))
		}
		for c := range rg.Columns {
			if err := checkChunk(&rg.Columns[c], fmt.Sprintf("%s row group %d column %s", table, g, strings.Join(want[c].path, "."))); err != nil {
				return nil, err
			}
		}
	}
	return f, nil
}

// checkChunk enforces uncompressed, PLAIN, no dictionary.
func checkChunk(cc *format.ColumnChunk, where string) error {
	md := &cc.MetaData
	if cc.FilePath != "" {
		return errorf(ErrCorrupt, where, "column chunk in another file %q", cc.FilePath)
	}
	if md.Codec != format.Uncompressed {
		return errorf(ErrCorrupt, where, "codec %s, want UNCOMPRESSED", md.Codec)
	}
	if md.DictionaryPageOffset != 0 {
		return errorf(ErrCorrupt, where, "has a dictionary page")
	}
	for _, e := range md.Encoding {
		if e != format.Plain && e != format.RLE && e != format.BitPacked {
			return errorf(ErrCorrupt, where, "encoding %s, want PLAIN", e)
		}
	}
	return nil
}

// isIOError reports whether err looks like a failure of the reader itself
// rather than of the bytes it returned. parquet-go does not separate the
// two, so anything else is treated as corruption.
func isIOError(err error) bool {
	var pe interface{ Timeout() bool }
	return errors.As(err, &pe)
}

// readRows calls fn for every row of f, in file order. The row is reused.
func readRows(f *parquet.File, rr *recordingReader, fn func(rowGroup int, row parquet.Row) error) error {
	buf := make([]parquet.Row, 64)
	for g, rg := range f.RowGroups() {
		rows := rg.Rows()
		for {
			n, err := rows.ReadRows(buf)
			for _, row := range buf[:n] {
				if ferr := fn(g, row); ferr != nil {
					rows.Close()
					return ferr
				}
			}
			if err == io.EOF {
				break
			}
			if err != nil {
				rows.Close()
				if rerr := rr.readErr(fmt.Sprintf("row group %d", g)); rerr != nil {
					return rerr
				}
				return errorf(ErrCorrupt, fmt.Sprintf("row group %d", g), "read rows: %v", err)
			}
		}
		if err := rows.Close(); err != nil {
			if rerr := rr.readErr(fmt.Sprintf("row group %d", g)); rerr != nil {
				return rerr
			}
			return errorf(ErrCorrupt, fmt.Sprintf("row group %d", g), "close rows: %v", err)
		}
	}
	return nil
}

// logical returns t's logical type annotation, or nil.
func logical(t parquet.Type) format.LogicalTypeValue {
	if lt := t.LogicalType(); lt != nil {
		return lt.Value
	}
	return nil
}
