package source

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"

	"github.com/parqdb/parqdb/storage"
)

// Recorded is a source data file as a snapshot recorded it (the
// source-files.json list, provider profile §4): its key, its size in bytes
// and its version as File.Version gives it.
type Recorded struct {
	Key     string
	Size    int64
	Version string
}

// Drift is how the source's files differ now from a recorded list.
// Added files do not touch what the recorded files hold: a reader of the
// recorded files still reads the exact state the snapshot indexed. A
// removed or changed file does.
type Drift struct {
	// Added are the files listed now that the list does not record, in
	// key order (Size, ETag and ModTime as listed).
	Added []storage.Info
	// Removed are the recorded files that are not listed any more.
	Removed []string
	// Changed are the recorded files listed with another size or version,
	// each as `"key" was rewritten (size S, version V; recorded size S',
	// version V')`.
	Changed []string
}

// Moved reports whether a recorded file was removed or changed.
func (d *Drift) Moved() bool { return len(d.Removed)+len(d.Changed) > 0 }

// DiffRecorded lists the source at prefix in b, selecting files as Open
// does, and compares the listing with rec. It reads no file: one listing
// (a folder) or one stat (a single object). A source with no file left
// is a Drift that removes every recorded file, not an error.
func DiffRecorded(ctx context.Context, b storage.Bucket, prefix string, rec []Recorded) (*Drift, error) {
	t := &Table{bucket: b, prefix: prefix, desc: describe(b, prefix)}
	infos, err := t.listRecorded(ctx)
	if err != nil {
		return nil, err
	}
	d, _ := diffRecorded(infos, rec)
	return d, nil
}

// OpenRecorded opens the recorded files rec of the source at prefix in b
// and nothing else: it lists the source (as DiffRecorded), and when no
// recorded file was removed or changed it reads the footers of the
// recorded files only, so that the Table reads the exact state the
// snapshot indexed whatever files were added since. It returns the Drift
// in every case; when d.Moved() the Table is nil and nothing is opened.
// The Table's Identity is computed from the files it opened.
func OpenRecorded(ctx context.Context, b storage.Bucket, prefix string, rec []Recorded) (*Table, *Drift, error) {
	t := &Table{bucket: b, prefix: prefix, desc: describe(b, prefix)}
	infos, err := t.listRecorded(ctx)
	if err != nil {
		return nil, nil, err
	}
	d, kept := diffRecorded(infos, rec)
	if d.Moved() {
		return nil, d, nil
	}
	if err := t.openAll(ctx, kept); err != nil {
		return nil, d, err
	}
	t.identity = identity(t.files)
	return t, d, nil
}

// listRecorded lists the source as Open does, taking a source with no
// file left for an empty listing.
func (t *Table) listRecorded(ctx context.Context) ([]storage.Info, error) {
	infos, err := t.listFiles(ctx)
	var se *Error
	if errors.As(err, &se) && se.Rule == ErrEmpty && (se.Err == nil || errors.Is(se.Err, fs.ErrNotExist) || errors.Is(se.Err, storage.ErrNotExist)) {
		return nil, nil
	}
	return infos, err
}

// diffRecorded compares a listing (in key order) with rec and returns the
// drift and the listed infos of the recorded files.
func diffRecorded(infos []storage.Info, rec []Recorded) (*Drift, []storage.Info) {
	d := &Drift{}
	byKey := make(map[string]Recorded, len(rec))
	for _, r := range rec {
		byKey[r.Key] = r
	}
	listed := make(map[string]bool, len(infos))
	var kept []storage.Info
	for _, in := range infos {
		listed[in.Key] = true
		r, ok := byKey[in.Key]
		if !ok {
			d.Added = append(d.Added, in)
			continue
		}
		v := fileVersion(File{ETag: in.ETag, ModTime: in.ModTime})
		if in.Size != r.Size || v != r.Version {
			d.Changed = append(d.Changed, fmt.Sprintf("%q was rewritten (size %d, version %s; recorded size %d, version %s)", in.Key, in.Size, v, r.Size, r.Version))
			continue
		}
		kept = append(kept, in)
	}
	for _, r := range rec {
		if !listed[r.Key] {
			d.Removed = append(d.Removed, r.Key)
		}
	}
	return d, kept
}

// OpenAdded opens files of t's bucket that t does not hold (the Added of a
// Drift) as a new Table, reading their footers. The caller closes it.
func (t *Table) OpenAdded(ctx context.Context, infos []storage.Info) (*Table, error) {
	if len(infos) == 0 {
		return nil, &Error{Source: t.desc, Row: -1, Rule: ErrEmpty, Detail: "no added files"}
	}
	a := &Table{bucket: t.bucket, prefix: t.prefix, desc: t.desc}
	if err := a.openAll(ctx, infos); err != nil {
		return nil, err
	}
	a.identity = identity(a.files)
	return a, nil
}

// FileChanged stats file key of t and reports how it differs from the
// state t opened: "" when it has the same size and version (or t does not
// hold key), else a phrase naming the file (`"key" was removed`, `"key"
// was rewritten (size …)`). It is how a
// reader tells a file rewritten in place after Open (its pages no longer
// decode) from a damaged one.
func (t *Table) FileChanged(ctx context.Context, key string) (string, error) {
	var f *tableFile
	for _, tf := range t.files {
		if tf.Key == key {
			f = tf
			break
		}
	}
	if f == nil || t.bucket == nil {
		return "", nil
	}
	in, err := t.bucket.Stat(ctx, key)
	switch {
	case errors.Is(err, storage.ErrNotExist) || errors.Is(err, fs.ErrNotExist):
		return fmt.Sprintf("%q was removed", key), nil
	case err != nil:
		return "", err
	}
	v := fileVersion(File{ETag: in.ETag, ModTime: in.ModTime})
	if in.Size == f.Size && v == f.Version() {
		return "", nil
	}
	return fmt.Sprintf("%q was rewritten (size %d, version %s; opened at size %d, version %s)", key, in.Size, v, f.Size, f.Version()), nil
}

// FieldType describes a Parquet field's type for people: the logical type
// when it has one ("string", "date"), else the physical type ("int64",
// "float"), "list<…>" for a list, "struct<name type, …>" for another group,
// with "repeated " before a repeated field.
func FieldType(f parquet.Field) (s string) {
	defer func() {
		if recover() != nil {
			s = "?"
		}
	}()
	var t string
	switch {
	case f.Leaf():
		t = strings.ToLower(f.Type().Kind().String())
		if lt := f.Type().LogicalType(); lt != nil && lt.Value != nil {
			t = strings.ToLower(lt.Value.String())
			if it, ok := lt.Value.(*format.IntType); ok {
				t = fmt.Sprintf("int%d", it.BitWidth)
				if !it.IsSigned {
					t = "u" + t
				}
			}
		}
	case isList(f):
		elem := f.Fields()[0]
		if !elem.Leaf() && len(elem.Fields()) == 1 {
			elem = elem.Fields()[0]
		}
		t = "list<" + strings.TrimPrefix(FieldType(elem), "repeated ") + ">"
	default:
		parts := make([]string, 0, len(f.Fields()))
		for _, c := range f.Fields() {
			parts = append(parts, c.Name()+" "+FieldType(c))
		}
		t = "struct<" + strings.Join(parts, ", ") + ">"
	}
	if f.Repeated() {
		t = "repeated " + t
	}
	return t
}

func isList(f parquet.Field) bool {
	lt := f.Type().LogicalType()
	if lt == nil || lt.Value == nil {
		return false
	}
	_, ok := lt.Value.(*format.ListType)
	return ok && len(f.Fields()) == 1
}
