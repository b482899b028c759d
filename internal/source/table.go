package source

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/parquet-go/parquet-go"
	"golang.org/x/sync/errgroup"

	"github.com/parqdb/parqdb/storage"
)

// File describes one Parquet file of a Table.
type File struct {
	Key       string    // object key in the bucket
	Size      int64     // bytes
	ETag      string    // backend version tag; may be empty
	ModTime   time.Time // last modification
	Rows      int64     // rows according to the footer, minus deleted rows (ApplyDeletes)
	RowGroups int       // row groups according to the footer
}

// Table is an opened source: one Parquet file or a folder of them over a
// storage.Bucket. It holds the files open; Close releases them. A Table is
// safe for concurrent use by many goroutines.
type Table struct {
	bucket   storage.Bucket
	prefix   string
	desc     string
	files    []*tableFile
	rows     int64
	identity string
	view     bool // made by Select: shares its parent's files
	// current are the current field names (BindFieldIDs).
	current []string
	// def is the source-table definition of a table opened by a provider
	// other than parquet (OpenFiles); nil for Open.
	def *Definition
}

type tableFile struct {
	File
	obj     storage.Object
	pf      *parquet.File
	rgStart []int64 // first row (within the file) of each row group, plus the total
	// del and live are the deleted and the live rows of the Parquet file
	// (ApplyDeletes); both nil when no row is deleted.
	del, live *roaring.Bitmap
	// names maps a field name of the table to the file's column name
	// where they differ (BindFieldIDs; "" when the file lacks the field).
	names map[string]string
}

// readBufferSize is the buffer of each page reader (and the optimistic
// footer read): large enough that a page header and a small page come in
// one request to an object store.
const readBufferSize = 64 << 10

// footerWorkers bounds concurrent footer reads in Open.
const footerWorkers = 8

// Open opens the source at prefix in b and reads the footer of every file
// (nothing else). prefix is:
//
//   - "" : every *.parquet object in the bucket;
//   - a folder ("data" or "data/"): every *.parquet object under it,
//     recursively, skipping any object whose path below the folder has a
//     segment starting with '_' or '.' (_SUCCESS, _delta_log/, .crc files);
//   - otherwise the key of a single Parquet object (any name).
//
// A folder wins over an object of the same name. Files are sorted by key
// (byte order). An empty folder fails with ErrEmpty; a missing object with
// an error wrapping storage.ErrNotExist; an unreadable footer with
// ErrCorrupt naming the file.
func Open(ctx context.Context, b storage.Bucket, prefix string) (*Table, error) {
	t := &Table{bucket: b, prefix: prefix, desc: describe(b, prefix)}
	infos, err := t.listFiles(ctx)
	if err != nil {
		return nil, err
	}
	if err := t.openAll(ctx, infos); err != nil {
		return nil, err
	}
	t.identity = identity(t.files)
	return t, nil
}

// openAll reads the footers of infos into t.files and sums the rows.
func (t *Table) openAll(ctx context.Context, infos []storage.Info) error {
	t.files = make([]*tableFile, len(infos))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(footerWorkers)
	for i, info := range infos {
		g.Go(func() error {
			f, err := t.openFile(gctx, info)
			if err != nil {
				return err
			}
			t.files[i] = f
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		_ = t.Close()
		return err
	}
	for _, f := range t.files {
		t.rows += f.Rows
	}
	return nil
}

func describe(b storage.Bucket, prefix string) string {
	s := "<nil bucket>"
	if b != nil {
		s = b.String()
	}
	if prefix != "" {
		s = strings.TrimSuffix(s, "/") + "/" + prefix
	}
	return strconv.Quote(s)
}

func (t *Table) listFiles(ctx context.Context) ([]storage.Info, error) {
	if t.bucket == nil {
		return nil, &Error{Source: t.desc, Row: -1, Rule: ErrBinding, Detail: "nil bucket"}
	}
	folder := t.prefix
	if folder != "" && !strings.HasSuffix(folder, "/") {
		folder += "/"
	}
	all, err := t.bucket.List(ctx, folder)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, &Error{Source: t.desc, Row: -1, Rule: ErrCorrupt, Detail: "list files", Err: err}
	}
	var infos []storage.Info
	for _, in := range all {
		if !strings.HasPrefix(in.Key, folder) {
			continue
		}
		if hidden(in.Key[len(folder):]) || !strings.HasSuffix(in.Key, ".parquet") {
			continue
		}
		infos = append(infos, in)
	}
	if len(infos) == 0 && t.prefix != "" && !strings.HasSuffix(t.prefix, "/") {
		in, err := t.bucket.Stat(ctx, t.prefix)
		if err != nil {
			return nil, &Error{Source: t.desc, Row: -1, Rule: ErrEmpty, Detail: "no such object or folder", Err: err}
		}
		if in.Key == "" {
			in.Key = t.prefix
		}
		return []storage.Info{in}, nil
	}
	if len(infos) == 0 {
		return nil, &Error{Source: t.desc, Row: -1, Rule: ErrEmpty, Detail: "no *.parquet files"}
	}
	sort.Slice(infos, func(i, j int) bool { return infos[i].Key < infos[j].Key })
	return infos, nil
}

// hidden reports whether a path below the folder has a segment that starts
// with '_' or '.'.
func hidden(rel string) bool {
	for _, seg := range strings.Split(rel, "/") {
		if strings.HasPrefix(seg, "_") || strings.HasPrefix(seg, ".") {
			return true
		}
	}
	return false
}

func (t *Table) openFile(ctx context.Context, info storage.Info) (*tableFile, error) {
	obj, err := t.bucket.Open(ctx, info.Key)
	if err != nil {
		return nil, &Error{Source: t.desc, File: info.Key, Row: -1, Rule: ErrCorrupt, Detail: "open", Err: err}
	}
	r, err := checkFooter(obj, obj.Size())
	if err != nil {
		_ = obj.Close()
		return nil, &Error{Source: t.desc, File: info.Key, Row: -1, Rule: ErrCorrupt, Detail: "read footer", Err: err}
	}
	pf, err := openParquet(r, obj.Size())
	if err != nil {
		_ = obj.Close()
		return nil, &Error{Source: t.desc, File: info.Key, Row: -1, Rule: ErrCorrupt, Detail: "read footer", Err: err}
	}
	f := &tableFile{
		File: File{Key: info.Key, Size: obj.Size(), ETag: info.ETag, ModTime: info.ModTime,
			RowGroups: len(pf.RowGroups())},
		obj: obj,
		pf:  pf,
	}
	if info.Size != 0 && info.Size != obj.Size() {
		_ = obj.Close()
		return nil, &Error{Source: t.desc, File: info.Key, Row: -1, Rule: ErrCorrupt,
			Detail: fmt.Sprintf("size changed from %d to %d while opening", info.Size, obj.Size())}
	}
	f.rgStart = make([]int64, 0, len(pf.RowGroups())+1)
	var n int64
	for _, rg := range pf.RowGroups() {
		f.rgStart = append(f.rgStart, n)
		r := rg.NumRows()
		if r < 0 || n+r < n {
			_ = obj.Close()
			return nil, &Error{Source: t.desc, File: info.Key, Row: -1, Rule: ErrCorrupt, Detail: "negative or overflowing row group row count"}
		}
		n += r
	}
	f.rgStart = append(f.rgStart, n)
	if n != pf.NumRows() {
		_ = obj.Close()
		return nil, &Error{Source: t.desc, File: info.Key, Row: -1, Rule: ErrCorrupt,
			Detail: fmt.Sprintf("footer says %d rows but its row groups hold %d", pf.NumRows(), n)}
	}
	f.Rows = n
	return f, nil
}

// tailReader serves reads of a file's tail from memory.
type tailReader struct {
	io.ReaderAt
	off  int64
	tail []byte
}

func (r *tailReader) ReadAt(p []byte, off int64) (int, error) {
	if off >= r.off && off+int64(len(p)) <= r.off+int64(len(r.tail)) {
		return copy(p, r.tail[off-r.off:]), nil
	}
	return r.ReaderAt.ReadAt(p, off)
}

// checkFooter reads the file's tail (which usually holds the whole footer)
// once and refuses a footer length that cannot fit in the file before the
// decoder allocates it.
func checkFooter(r io.ReaderAt, size int64) (io.ReaderAt, error) {
	if size < 12 {
		return nil, fmt.Errorf("%d bytes is too short for a Parquet file", size)
	}
	n := min(int64(readBufferSize), size)
	tail := make([]byte, n)
	if _, err := r.ReadAt(tail, size-n); err != nil && !(errors.Is(err, io.EOF)) {
		return nil, err
	}
	if m := string(tail[n-4:]); m != "PAR1" {
		return nil, fmt.Errorf("no Parquet magic at the end (found %q)", m)
	}
	if fl := int64(binary.LittleEndian.Uint32(tail[n-8:])); fl > size-12 {
		return nil, fmt.Errorf("footer length %d exceeds the file size %d", fl, size)
	}
	return &tailReader{ReaderAt: r, off: size - n, tail: tail}, nil
}

// openParquet reads a footer, turning decoder panics on corrupt input into
// errors.
func openParquet(r io.ReaderAt, size int64) (pf *parquet.File, err error) {
	defer func() {
		if p := recover(); p != nil {
			pf, err = nil, fmt.Errorf("parquet decoder panic: %v", p)
		}
	}()
	return parquet.OpenFile(r, size,
		parquet.SkipPageIndex(true),
		parquet.SkipBloomFilters(true),
		parquet.FileReadMode(parquet.ReadModeSync),
		parquet.OptimisticRead(true),
		parquet.ReadBufferSize(readBufferSize),
	)
}

// identity computes Identity; see there.
func identity(files []*tableFile) string {
	h := sha256.New()
	h.Write([]byte("parqdb-source-identity-v1\n"))
	for _, f := range files {
		fmt.Fprintf(h, "%d:%s %d %s\n", len(f.Key), f.Key, f.Size, fileVersion(f.File))
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// Version returns the file's version as Identity records it: "etag:" and
// the ETag when the bucket reports one, else "mtime:" and the modification
// time in Unix nanoseconds.
func (f File) Version() string { return fileVersion(f) }

func fileVersion(f File) string {
	if f.ETag != "" {
		return "etag:" + f.ETag
	}
	return "mtime:" + strconv.FormatInt(f.ModTime.UnixNano(), 10)
}

// Identity returns a digest of the exact source state: "sha256:" followed
// by the lowercase hex SHA-256 of the UTF-8 text
//
//	"parqdb-source-identity-v1\n"
//
// followed, for each file in ascending byte order of key, by the line
//
//	<len(key)> ":" <key> " " <size> " " <version> "\n"
//
// where len(key) is the key's length in bytes (decimal), key is the object
// key as listed by the bucket, size is the object size in bytes (decimal),
// and version is "etag:" + the ETag exactly as the bucket reports it when
// it reports one, else "mtime:" + the modification time in Unix
// nanoseconds (decimal). Any rewritten, added or removed file changes it.
func (t *Table) Identity() string { return t.identity }

// Files returns the table's files in key order. The slice is a copy.
func (t *Table) Files() []File {
	out := make([]File, len(t.files))
	for i, f := range t.files {
		out[i] = f.File
	}
	return out
}

// NumRows returns the total row count from the footers, minus the deleted
// rows (ApplyDeletes).
func (t *Table) NumRows() int64 { return t.rows }

// Schema returns the Parquet schema of the first file (after BindFieldIDs,
// of the first file whose column names are the table's).
func (t *Table) Schema() *parquet.Schema { return t.schemaFile().pf.Schema() }

// String describes the table for messages.
func (t *Table) String() string { return t.desc }

// Select returns a view of t holding only the files for which keep
// returns true, in the same order; its NumRows and Identity describe those
// files. The view shares t's open files: closing it does nothing, and it
// must not be used after t is closed. It is nil when no file is kept.
func (t *Table) Select(keep func(File) bool) *Table {
	v := &Table{bucket: t.bucket, prefix: t.prefix, desc: t.desc, view: true, def: t.def, current: t.current}
	for _, f := range t.files {
		if keep(f.File) {
			v.files = append(v.files, f)
			v.rows += f.Rows
		}
	}
	if len(v.files) == 0 {
		return nil
	}
	v.identity = identity(v.files)
	return v
}

// Close closes every file. The Table must not be used afterwards.
func (t *Table) Close() error {
	if t.view {
		return nil
	}
	var errs []error
	for _, f := range t.files {
		if f != nil && f.obj != nil {
			errs = append(errs, f.obj.Close())
		}
	}
	return errors.Join(errs...)
}

// RowGroupOf returns the row group holding loc and its rows within the
// file, [first, first+n). It fails with ErrRowLoc for a location outside
// the table.
//
// In a file with deleted rows (HasDeletes) live rows and row groups do not
// line up; callers must not use RowGroupOf there.
func (t *Table) RowGroupOf(loc RowLoc) (rg int, first, n int64, err error) {
	if loc.File < 0 || int(loc.File) >= len(t.files) || loc.Row < 0 || loc.Row >= t.files[loc.File].Rows {
		return 0, 0, 0, &Error{Source: t.desc, Row: -1, Rule: ErrRowLoc, Detail: fmt.Sprintf("{File: %d, Row: %d}", loc.File, loc.Row)}
	}
	f := t.files[loc.File]
	rg = f.locate(loc.Row)
	return rg, f.rgStart[rg], f.rgStart[rg+1] - f.rgStart[rg], nil
}

// locate returns the row group holding row (within file f).
func (f *tableFile) locate(row int64) int {
	return sort.Search(len(f.rgStart)-1, func(i int) bool { return f.rgStart[i+1] > row })
}
