package icesource

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"sync"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/apache/iceberg-go/table/dv"
	"github.com/parquet-go/parquet-go"

	"github.com/parqdb/parqdb/storage"
)

// Row-level deletes (docs/iceberg.md §3.5). Scan planning (iceberg-go)
// decides which delete files apply to which data file — sequence numbers
// (a position delete or deletion vector applies to data files with a data
// sequence number <= its own, an equality delete to data files with a
// strictly lower one) and partitions. This file turns the delete files a
// data file's task carries into the positions of its deleted rows:
//
//   - position deletes: the rows of the delete file whose file_path is the
//     data file's path (field ids 2147483546 file_path, 2147483545 pos);
//   - equality deletes: the rows of the data file whose values of the
//     delete file's equality field ids (matched in the data file by Iceberg
//     field id, so renamed columns still match; a column the data file
//     lacks reads as null) equal a row of the delete file; null equals null;
//   - deletion vectors (v3): the Puffin blob, read with iceberg-go's dv
//     package.

// Field ids of the position delete file schema (Iceberg spec, "Position
// Delete Files").
const (
	posFieldFilePath = 2147483546
	posFieldPos      = 2147483545
)

// deleteCache keeps the resolved deletes of the last snapshots opened in
// this process, keyed by table UUID and snapshot id (a snapshot never
// changes, so neither do its deletes): repeated opens of an index (serve,
// sql, bench) read the delete files once.
var deleteCache = struct {
	sync.Mutex
	order []string
	m     map[string]map[string]*roaring.Bitmap
}{m: map[string]map[string]*roaring.Bitmap{}}

const deleteCacheEntries = 16

// resolveDeletes returns the deleted positions of each data file of tasks
// that has any, by key relative to the table location loc.
func resolveDeletes(ctx context.Context, ref Ref, tbl *table.Table, snapID int64, loc string, b storage.Bucket, tasks []table.FileScanTask) (map[string]*roaring.Bitmap, error) {
	n := 0
	for _, t := range tasks {
		n += len(t.DeleteFiles) + len(t.EqualityDeleteFiles) + len(t.DeletionVectorFiles)
	}
	if n == 0 {
		return nil, nil
	}
	cacheKey := tbl.Metadata().TableUUID().String() + "@" + fmt.Sprint(snapID)
	deleteCache.Lock()
	if m, ok := deleteCache.m[cacheKey]; ok {
		deleteCache.Unlock()
		return m, nil
	}
	deleteCache.Unlock()
	r := &delResolver{ctx: ctx, ref: ref, snapID: snapID, loc: loc, b: b, tbl: tbl,
		pos: map[string]map[string][]int64{}, eq: map[string]map[string]bool{}}
	out := map[string]*roaring.Bitmap{}
	for _, t := range tasks {
		key, ok := relKey(loc, t.File.FilePath())
		if !ok {
			continue // refused by the caller
		}
		bm := out[key]
		if bm == nil {
			bm = roaring.New()
		}
		if err := r.apply(t, bm); err != nil {
			return nil, err
		}
		if !bm.IsEmpty() {
			out[key] = bm
		}
	}
	deleteCache.Lock()
	if _, ok := deleteCache.m[cacheKey]; !ok {
		deleteCache.m[cacheKey] = out
		deleteCache.order = append(deleteCache.order, cacheKey)
		if len(deleteCache.order) > deleteCacheEntries {
			delete(deleteCache.m, deleteCache.order[0])
			deleteCache.order = deleteCache.order[1:]
		}
	}
	deleteCache.Unlock()
	return out, nil
}

type delResolver struct {
	ctx    context.Context
	ref    Ref
	snapID int64
	loc    string
	b      storage.Bucket
	tbl    *table.Table
	pos    map[string]map[string][]int64 // position delete file → data file path → positions
	eq     map[string]map[string]bool    // equality delete file → encoded rows
}

func (r *delResolver) errf(path string, format string, args ...any) error {
	return fmt.Errorf("source %s snapshot %d: delete file %s: %s", r.ref, r.snapID, path, fmt.Sprintf(format, args...))
}

func (r *delResolver) unsupported(path string, format string, args ...any) error {
	return fmt.Errorf("source %s snapshot %d: %w: delete file %s: %s", r.ref, r.snapID, ErrUnsupported, path, fmt.Sprintf(format, args...))
}

// apply adds the deleted positions of task t's data file to bm.
func (r *delResolver) apply(t table.FileScanTask, bm *roaring.Bitmap) error {
	df := t.File
	rows := df.Count()
	if rows > math.MaxUint32 {
		return fmt.Errorf("source %s snapshot %d: %w: data file %s has %d rows and delete files; deletes apply to data files of at most %d rows",
			r.ref, r.snapID, ErrUnsupported, df.FilePath(), rows, uint32(math.MaxUint32))
	}
	add := func(path string, p int64) error {
		if p < 0 || p >= rows {
			return r.errf(path, "deletes position %d of data file %s, which has %d rows", p, df.FilePath(), rows)
		}
		bm.Add(uint32(p))
		return nil
	}
	for _, d := range t.DeleteFiles {
		m, err := r.positions(d)
		if err != nil {
			return err
		}
		for _, p := range m[df.FilePath()] {
			if err := add(d.FilePath(), p); err != nil {
				return err
			}
		}
	}
	if len(t.DeletionVectorFiles) > 0 {
		fs, err := r.tbl.FS(r.ctx)
		if err != nil {
			return fmt.Errorf("source %s snapshot %d: deletion vectors of data file %s: %w", r.ref, r.snapID, df.FilePath(), err)
		}
		for _, d := range t.DeletionVectorFiles {
			v, err := dv.ReadDV(fs, d)
			if err != nil {
				return r.unsupported(d.FilePath(), "deletion vector of data file %s cannot be read: %v", df.FilePath(), err)
			}
			for p := range v.Positions() {
				if err := add(d.FilePath(), int64(p)); err != nil {
					return err
				}
			}
		}
	}
	if len(t.EqualityDeleteFiles) > 0 {
		return r.applyEquality(t, bm)
	}
	return nil
}

// openParquet opens an Iceberg file (a delete or data file) of the table.
func (r *delResolver) openParquet(path string, format iceberg.FileFormat) (*parquet.File, func(), error) {
	if format != iceberg.ParquetFile {
		return nil, nil, r.unsupported(path, "is %s; only Parquet delete files are read: compact the table (rewrite_data_files applies the deletes) or write Parquet deletes", format)
	}
	key, ok := relKey(r.loc, path)
	if !ok {
		return nil, nil, r.unsupported(path, "is outside the table location %s", r.loc)
	}
	obj, err := r.b.Open(r.ctx, key)
	if err != nil {
		return nil, nil, r.errf(path, "open: %v", err)
	}
	var pf *parquet.File
	err = safely(func() error {
		var err error
		pf, err = parquet.OpenFile(obj, obj.Size(), parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true),
			parquet.FileReadMode(parquet.ReadModeSync), parquet.OptimisticRead(true), parquet.ReadBufferSize(64<<10))
		return err
	})
	if err != nil {
		_ = obj.Close()
		return nil, nil, r.errf(path, "read Parquet footer: %v", err)
	}
	return pf, func() { _ = obj.Close() }, nil
}

// positions reads position delete file d: data file path → positions.
func (r *delResolver) positions(d iceberg.DataFile) (map[string][]int64, error) {
	if m, ok := r.pos[d.FilePath()]; ok {
		return m, nil
	}
	pf, done, err := r.openParquet(d.FilePath(), d.FileFormat())
	if err != nil {
		return nil, err
	}
	defer done()
	pc, pn := columnByID(pf, posFieldFilePath, "file_path"), columnByID(pf, posFieldPos, "pos")
	if pc == nil || pn == nil {
		return nil, r.unsupported(d.FilePath(), "a position delete file needs the columns file_path (field id %d) and pos (field id %d)", posFieldFilePath, posFieldPos)
	}
	paths, err := readColumn(pc)
	if err != nil {
		return nil, r.errf(d.FilePath(), "column file_path: %v", err)
	}
	poss, err := readColumn(pn)
	if err != nil {
		return nil, r.errf(d.FilePath(), "column pos: %v", err)
	}
	if len(paths) != len(poss) {
		return nil, r.errf(d.FilePath(), "%d file_path values for %d pos values", len(paths), len(poss))
	}
	m := map[string][]int64{}
	for i := range paths {
		if paths[i].IsNull() || poss[i].IsNull() {
			return nil, r.errf(d.FilePath(), "row %d: null file_path or pos", i)
		}
		p := string(paths[i].ByteArray())
		m[p] = append(m[p], poss[i].Int64())
	}
	r.pos[d.FilePath()] = m
	return m, nil
}

// applyEquality adds to bm the rows of t's data file that an equality
// delete file of t matches.
func (r *delResolver) applyEquality(t table.FileScanTask, bm *roaring.Bitmap) error {
	df := t.File
	// Group the delete files by their equality field ids.
	byIDs := map[string][]iceberg.DataFile{}
	var idLists [][]int
	for _, d := range t.EqualityDeleteFiles {
		ids := slices.Clone(d.EqualityFieldIDs())
		if len(ids) == 0 {
			return r.unsupported(d.FilePath(), "an equality delete file without equality field ids")
		}
		sort.Ints(ids)
		k := fmt.Sprint(ids)
		if _, ok := byIDs[k]; !ok {
			idLists = append(idLists, ids)
		}
		byIDs[k] = append(byIDs[k], d)
	}
	pf, done, err := r.openParquet(df.FilePath(), df.FileFormat())
	if err != nil {
		return fmt.Errorf("data file %s: %w", df.FilePath(), err)
	}
	defer done()
	n := int(pf.NumRows())
	for _, ids := range idLists {
		sets := make([]map[string]bool, 0)
		for _, d := range byIDs[fmt.Sprint(ids)] {
			s, err := r.equalityRows(d, ids)
			if err != nil {
				return err
			}
			sets = append(sets, s)
		}
		cols := make([][]parquet.Value, len(ids))
		for j, id := range ids {
			c := columnByID(pf, id, r.nameOf(id))
			if c == nil {
				continue // a column added after the file was written: null
			}
			if !c.Leaf() {
				return r.unsupported(byIDs[fmt.Sprint(ids)][0].FilePath(), "equality field id %d is not a primitive column of data file %s", id, df.FilePath())
			}
			if cols[j], err = readColumn(c); err != nil {
				return fmt.Errorf("source %s snapshot %d: data file %s: column %s: %w", r.ref, r.snapID, df.FilePath(), c.Name(), err)
			}
			if len(cols[j]) != n {
				return fmt.Errorf("source %s snapshot %d: data file %s: column %s has %d values for %d rows", r.ref, r.snapID, df.FilePath(), c.Name(), len(cols[j]), n)
			}
		}
		var buf []byte
		for i := 0; i < n; i++ {
			buf = buf[:0]
			for j := range ids {
				var v parquet.Value
				if cols[j] != nil {
					v = cols[j][i]
				}
				buf = appendEqValue(buf, v)
			}
			for _, s := range sets {
				if s[string(buf)] {
					bm.Add(uint32(i))
					break
				}
			}
		}
	}
	return nil
}

// nameOf is the current schema's name of top-level field id (for data
// files written without field ids).
func (r *delResolver) nameOf(id int) string {
	if f, ok := r.tbl.Schema().FindFieldByID(id); ok {
		return f.Name
	}
	return ""
}

// equalityRows reads equality delete file d: the set of its rows' values
// of ids (sorted), encoded by appendEqValue.
func (r *delResolver) equalityRows(d iceberg.DataFile, ids []int) (map[string]bool, error) {
	if s, ok := r.eq[d.FilePath()]; ok {
		return s, nil
	}
	pf, done, err := r.openParquet(d.FilePath(), d.FileFormat())
	if err != nil {
		return nil, err
	}
	defer done()
	n := int(pf.NumRows())
	cols := make([][]parquet.Value, len(ids))
	for j, id := range ids {
		c := columnByID(pf, id, r.nameOf(id))
		if c == nil || !c.Leaf() {
			return nil, r.unsupported(d.FilePath(), "has no primitive column for its equality field id %d", id)
		}
		if cols[j], err = readColumn(c); err != nil {
			return nil, r.errf(d.FilePath(), "column %s: %v", c.Name(), err)
		}
		if len(cols[j]) != n {
			return nil, r.errf(d.FilePath(), "column %s has %d values for %d rows", c.Name(), len(cols[j]), n)
		}
	}
	s := make(map[string]bool, n)
	var buf []byte
	for i := 0; i < n; i++ {
		buf = buf[:0]
		for j := range ids {
			buf = appendEqValue(buf, cols[j][i])
		}
		s[string(buf)] = true
	}
	r.eq[d.FilePath()] = s
	return s, nil
}

// columnByID returns the top-level column of pf with Iceberg field id id,
// else (a file written without field ids) the one named name.
func columnByID(pf *parquet.File, id int, name string) *parquet.Column {
	cols := pf.Root().Columns()
	for _, c := range cols {
		if c.ID() == id {
			return c
		}
	}
	if name == "" {
		return nil
	}
	for _, c := range cols {
		if c.ID() == 0 && c.Name() == name {
			return c
		}
	}
	return nil
}

// readColumn reads every value of a top-level primitive column, across row
// groups; values own their bytes.
func readColumn(c *parquet.Column) (out []parquet.Value, err error) {
	err = safely(func() error {
		pages := c.Pages()
		defer pages.Close()
		buf := make([]parquet.Value, 1024)
		for {
			p, err := pages.ReadPage()
			if err == io.EOF {
				return nil
			}
			if err != nil {
				return err
			}
			vr := p.Values()
			for {
				k, err := vr.ReadValues(buf)
				for _, v := range buf[:k] {
					out = append(out, v.Clone())
				}
				if err == io.EOF {
					break
				}
				if err != nil {
					parquet.Release(p)
					return err
				}
				if k == 0 {
					parquet.Release(p)
					return fmt.Errorf("page reader made no progress")
				}
			}
			parquet.Release(p)
		}
	})
	return out, err
}

// appendEqValue appends a canonical encoding of v for equality matching:
// null equals null (Iceberg equality deletes), int and long compare as
// integers (a promoted column), float and double as doubles, byte arrays
// by bytes.
func appendEqValue(dst []byte, v parquet.Value) []byte {
	if v.IsNull() {
		return append(dst, 'n')
	}
	switch v.Kind() {
	case parquet.Boolean:
		if v.Boolean() {
			return append(dst, 'b', 1)
		}
		return append(dst, 'b', 0)
	case parquet.Int32:
		return binary.BigEndian.AppendUint64(append(dst, 'i'), uint64(int64(v.Int32())))
	case parquet.Int64:
		return binary.BigEndian.AppendUint64(append(dst, 'i'), uint64(v.Int64()))
	case parquet.Float:
		return binary.BigEndian.AppendUint64(append(dst, 'f'), math.Float64bits(float64(v.Float())))
	case parquet.Double:
		return binary.BigEndian.AppendUint64(append(dst, 'f'), math.Float64bits(v.Double()))
	default:
		b := v.Bytes()
		dst = binary.AppendUvarint(append(dst, 's'), uint64(len(b)))
		return append(dst, b...)
	}
}

// deleteVersion is the version ParqDB records for a data file with deleted
// rows (source-files.json, as an ETag): "deletes-" and the hex SHA-256 of
// the deleted positions in ascending order, so that a refresh sees a data
// file whose deletes changed as rewritten.
func deleteVersion(bm *roaring.Bitmap) string {
	h := sha256.New()
	var b [4]byte
	it := bm.Iterator()
	for it.HasNext() {
		binary.BigEndian.PutUint32(b[:], it.Next())
		h.Write(b[:])
	}
	return "deletes-" + hex.EncodeToString(h.Sum(nil))
}

// safely runs f, turning a decoder panic on corrupt input into an error.
func safely(f func() error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("parquet decoder panic: %v", p)
		}
	}()
	return f()
}
